"""Inputs: bytes, compression, format detection and one reader per format.

Owns everything between a path (or a DataFrame) and a loaded table. A file passes the
modules in one direction (each imports only those before it; ``tests/test_inputs_direction.py``
holds it): detect → open → parse → validate → a loaded table.

- ``files``: file checks, bytes, compression, digests, strict JSON (and ``TEMP_PREFIX``);
  ``arrow``: the pyarrow glue.
- ``rows``: the loaded table (``RawLane``, ``RawQrels``, ``RowLines``), the lane-name
  rules and the numeric column parsers every reader shares.
- ``formats``: which format a file holds, told by content; ``InputOptions``; the column
  conventions of tables and header lines; the shard files of a lane.
- one reader per format family: ``json_pairs`` (``{qid: {docid: value}}``, MTEB),
  ``columns`` (tables: Parquet, DataFrames), ``json_lines``, ``trec`` (TREC-style text:
  the fast path and the general reader).
- ``irds``: qrels and texts by ir_datasets id (``irds:DATASET``), from its local cache,
  never downloading; ``readers`` and ``tables`` send such a path there.
- ``readers``: the dispatch on top (``read_lane``, ``read_qrels``, ``read_lanes``).

Beside them: the small side tables (``tables``: strata, corpus, texts), the demo
marker (``provenance``), and runs made by asking a retriever per query (``retrieve``;
their provenance and per-query seconds in a ``sidecar`` file the TREC reader picks up). Nothing here knows a measure, a statistic or a report.
"""
