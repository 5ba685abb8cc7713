"""The workspace: loaded rows and the per-query values derived from them, cached.

``loaded`` reads the inputs once into a :class:`~.loaded.Workspace`;
``per_query_tables`` builds the same contract from per-query tables computed
elsewhere. Every instrument above this room asks a workspace, never a file.
"""
