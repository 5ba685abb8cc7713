"""Inputs: bytes, compression, format detection and one reader per format.

Owns everything between a path (or a DataFrame) and a loaded table: the file checks
and digests (``files``), which format a file holds, told by content (``formats``), the
readers of runs and qrels in every format (``readers``, ``columns`` for tables,
``json_pairs`` and ``json_lines`` for JSON), the small side tables (``tables``: strata,
corpus, texts), the pyarrow glue (``arrow``) and the demo marker (``provenance``).
Nothing here knows a measure, a statistic or a report.
"""
