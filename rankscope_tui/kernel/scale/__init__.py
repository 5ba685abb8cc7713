"""Scale: query-id buckets, partitioned on disk, evaluated by local or Dask workers.

``bucket`` (the bucket function and the per-bucket work), ``partition`` (inputs split
into Parquet buckets), ``given`` (inputs already split: Hive-partitioned Parquet
datasets taken as given), ``engine`` (the local worker pool) and ``dask_engine``.
"""
