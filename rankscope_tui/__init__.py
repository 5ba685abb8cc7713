"""rankscope: an instrument for looking inside retrieval rankings."""

__version__ = "0.1.0"
