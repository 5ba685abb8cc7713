"""The workspace: loaded rows and the per-query values derived from them, cached.

``contract`` declares what every instrument asks of a workspace (``PerQuery``, and
``RankedPerQuery`` where rankings are needed); ``base`` holds the answers every workspace
shares, once. ``loaded`` reads the inputs once into a :class:`~.loaded.Loaded` record held
by a :class:`~.loaded.Workspace`, which derives and caches the rest; ``per_query_tables``
builds the same contract from per-query tables computed elsewhere. Every instrument above
this room asks a workspace, never a file.
"""
