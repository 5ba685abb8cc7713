"""Pre-bucketed inputs: a Hive-partitioned Parquet dataset whose query buckets are taken as given.

Where runs are made in Spark, DuckDB or a warehouse, the rows can be written already
split by query: ``DATASET/bucket=K/*.parquet`` with ``K = bucket.bucket_of(qid, N)``
(spelled :data:`bucket.SQL_BUCKET` in DuckDB, :data:`bucket.SPARK_SQL_BUCKET` in Spark
SQL, :func:`bucket.buckets_of` or :func:`write_buckets` in Python). A lane, the qrels or
the out-of-domain negatives given as such a directory (with ``--buckets`` or another
bucket option) is not read or re-partitioned by the driver: bucket K of the run is the
directory ``bucket=K`` as it stands, read by the worker that evaluates bucket K.

Conventions:

- **a dataset** is a directory holding at least one ``bucket=K`` directory (K a decimal
  integer); every ``*.parquet`` file under ``bucket=K`` (names starting ``.`` or ``_``
  left out, as Spark's and Hive's bookkeeping files are) holds rows of bucket K, read in
  name order. A bucket without a directory has no rows there.
- **columns**: ``qid``, ``doc`` and ``score`` (a run) or ``grade`` (qrels), the bucket
  tables' names; else as a Parquet run or qrels file is read (``--run-columns`` /
  ``--qrels-columns``, or the readers' conventions: ``formats.resolve_columns``); the bucket column lives in the directory names and is not read
  from the files. An optional int64 ``line`` column gives each row the source line that
  warnings and errors name; without it a row's line is its row number within its bucket
  (part files in name order), and messages name the bucket directory.
- **the bucket count** N is ``--buckets`` when given (a ``bucket=K`` with K >= N is
  refused: the dataset was written with more buckets); otherwise the largest K plus one.
  Every pre-bucketed input and every file the driver partitions use the same N.
- **the check**: before any bucket runs, up to :data:`SAMPLE_QIDS` distinct qids (the
  first of each bucket's first part file, spread evenly over the buckets) are hashed with
  :func:`bucket.bucket_of`; any qid in another bucket than the function gives refuses the
  dataset with the counts, naming the first file where one was found. The sample is a
  fast refusal, not the guarantee: a query's rows in two buckets (a lane and the qrels
  that disagree) are refused when the buckets are merged (``bucket.merge``), and a query
  whose rows all sit together in one bucket is evaluated correctly whichever bucket it is.
- **fingerprint**: sha256 over every part file (relative path, a NUL byte, its bytes, a
  NUL byte, in path order), computed while the buckets run; the format is ``parquet``.
- **said**: each such input's warnings carry one ``buckets_given`` entry saying the
  buckets were taken as given, how many directories and the sample checked.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, InputWarning

if TYPE_CHECKING:
    import pyarrow as pa

    from ..inputs.formats import ColumnMapping

__all__ = ["Dataset", "is_dataset", "read_dataset", "given_count", "check_sample", "dataset_sha256", "given_note",
           "dataset_columns", "read_given", "write_buckets", "SAMPLE_QIDS", "KIND"]

#: At most this many distinct qids are checked against ``bucket_of`` per dataset.
SAMPLE_QIDS = 10_000
#: The warning kind that says an input's buckets were taken as given.
KIND = "buckets_given"
_BUCKET_DIR = re.compile(r"bucket=([0-9]+)\Z")
#: Rows read from the front of a bucket's first part file when sampling its qids.
_SAMPLE_ROWS = 1 << 16


@dataclass(frozen=True)
class Dataset:
    """A pre-bucketed input: its directory and ((K, directory of bucket K), ...) by K."""

    path: str
    buckets: tuple[tuple[int, str], ...]

    @property
    def top(self) -> int:
        """The largest bucket number present."""
        return max(k for k, _ in self.buckets)


def is_dataset(path: str | None) -> bool:
    """Whether ``path`` is a directory with a ``bucket=...`` directory in it."""
    if path is None or not os.path.isdir(path):
        return False
    try:
        return any(e.name.startswith("bucket=") and e.is_dir() for e in os.scandir(path))
    except OSError:
        return False


def parts_of(directory: str) -> list[str]:
    """The Parquet part files of one bucket directory, in name order (``.``/``_`` names left out)."""
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", directory) from None
    return [os.path.join(directory, f) for f in sorted(names)
            if f.endswith(".parquet") and not f.startswith((".", "_")) and os.path.isfile(os.path.join(directory, f))]


def read_dataset(path: str) -> Dataset:
    """The bucket directories of ``path``; a ``bucket=`` name that is not a decimal integer,
    or one bucket number written twice (``bucket=3`` and ``bucket=03``), is refused."""
    found: dict[int, str] = {}
    for e in sorted(os.scandir(path), key=lambda e: e.name):
        if not e.name.startswith("bucket=") or not e.is_dir():
            continue
        m = _BUCKET_DIR.match(e.name)
        if m is None:
            raise InputError(f"{e.name!r} is not a bucket directory (bucket=K, K a whole number from 0)", path)
        k = int(m.group(1))
        if k in found:
            raise InputError(f"bucket {k} is written twice ({os.path.basename(found[k])} and {e.name})", path)
        found[k] = e.path
    if not found:
        raise InputError("no bucket=K directories here", path)
    return Dataset(path, tuple(sorted(found.items())))


def given_count(datasets: list[Dataset], buckets: int | None, most: int) -> int:
    """N for pre-bucketed inputs: ``buckets`` (``--buckets``) when given, refusing a
    dataset with a bucket numbered N or more; else the largest bucket number plus one
    (at most ``most``)."""
    top = max(datasets, key=lambda d: d.top)
    if buckets is not None:
        if top.top >= buckets:
            raise InputError(f"has bucket={top.top}: it was written with more than {buckets} buckets, and buckets "
                             f"taken as given are not split again; give --buckets {top.top + 1} or leave "
                             "--buckets out", top.path)
        return buckets
    if top.top + 1 > most:
        raise InputError(f"has bucket={top.top}: at most {most} buckets are evaluated", top.path)
    return top.top + 1


def _mapping(names: list[str], columns: ColumnMapping | None, what: str) -> ColumnMapping | None:
    """``columns`` when given; else the bucket tables' own names (``qid``, ``doc`` and
    ``score`` or ``grade``, as ``bucket`` documents them) when the table has them; else
    None (the readers' conventions)."""
    from ..inputs.formats import ColumnMapping

    if columns is not None:
        return columns
    value = "score" if what == "run" else "grade"
    if {"qid", "doc", value} <= set(names):
        return ColumnMapping(query="qid", doc="doc", score="score") if what == "run" else \
            ColumnMapping(query="qid", doc="doc", relevance="grade")
    return None


def _qid_column(names: list[str], columns: ColumnMapping | None, what: str, source: str) -> str:
    from ..inputs.formats import resolve_columns

    return resolve_columns(names, _mapping(names, columns, what), what, source).query


def check_sample(ds: Dataset, n: int, columns: ColumnMapping | None, what: str, sample: int | None = None) -> int:
    """Check up to ``sample`` (default :data:`SAMPLE_QIDS`) distinct qids of ``ds`` against
    ``bucket_of(qid, n)`` (see the module docstring); returns how many were checked, or
    refuses the dataset."""
    # bucket_of here, not at the top: `is_dataset` is asked on every evaluate, and the
    # bucket module (its dataclasses and hashing) is needed only when a dataset is read
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ..inputs.columns import id_column
    from .bucket import bucket_of

    sample = SAMPLE_QIDS if sample is None else sample
    per = max(1, math.ceil(sample / len(ds.buckets)))
    checked = wrong = 0
    first: tuple[str, str, int, int] | None = None  # file, qid, its bucket, bucket_of's
    for k, d in ds.buckets:
        if checked >= sample:
            break
        parts = parts_of(d)
        if not parts:
            continue
        try:
            pf = pq.ParquetFile(parts[0])
            col = _qid_column(pf.schema_arrow.names, columns, what, parts[0])
            batch = next(pf.iter_batches(batch_size=_SAMPLE_ROWS, columns=[col]), None)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())[:200]}", parts[0]) from None
        if batch is None or batch.num_rows == 0:
            continue
        qids = id_column(batch.column(0), parts[0], col, "query")
        distinct = pc.unique(qids).to_pylist()[:min(per, sample - checked)]
        for q in distinct:
            b = bucket_of(q, n)
            if b != k:
                wrong += 1
                if first is None:
                    first = (parts[0], q, k, b)
        checked += len(distinct)
    if first is not None:
        path, q, k, b = first
        raise InputError(f"{wrong:,} of {checked:,} sampled qids are not in the bucket rankscope's bucket function "
                         f"gives them among {n} (qid {q[:80]!r} is in bucket={k}, bucket_of gives {b}): write the "
                         "bucket column with bucket.SQL_BUCKET, bucket.SPARK_SQL_BUCKET or bucket.buckets_of, "
                         "with this bucket count", path)
    return checked


def dataset_columns(ds: Dataset, columns: ColumnMapping | None, what: str) -> dict[str, str] | None:
    """The columns a dataset's rows are read from (``formats.Resolved.as_dict``), as the
    first part file's schema names them; None without any part file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..inputs.formats import resolve_columns

    for _, d in ds.buckets:
        for p in parts_of(d):
            try:
                names = pq.ParquetFile(p).schema_arrow.names
            except (pa.ArrowException, OSError) as exc:
                raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())[:200]}", p) from None
            found: dict[str, str] = resolve_columns(names, _mapping(names, columns, what), what, p).as_dict()
            return found
    return None


def dataset_sha256(ds: Dataset, stop: threading.Event | None = None) -> str:
    """sha256 over every part file of ``ds`` (relative path, NUL, bytes, NUL; path order).
    ``stop``, once set, ends the reading (the run failed: the digest is not wanted, and an
    exiting interpreter waits for its threads)."""
    h = hashlib.sha256()
    for _, d in ds.buckets:
        for p in parts_of(d):
            h.update(os.path.relpath(p, ds.path).replace(os.sep, "/").encode("utf-8") + b"\0")
            try:
                with open(p, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 22), b""):
                        if stop is not None and stop.is_set():
                            return ""
                        h.update(block)
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror or exc}", p) from None
            h.update(b"\0")
    return h.hexdigest()


def given_note(ds: Dataset, n: int, checked: int) -> InputWarning:
    """What a report says of a pre-bucketed input: taken as given, and what was checked."""
    return InputWarning(KIND, 1, f"query buckets taken as given ({len(ds.buckets)} bucket directories of {n}; "
                                 "the driver did not partition these rows): "
                                 f"{checked:,} sampled qids checked against rankscope's bucket function, all in "
                                 "their bucket", ds.path)


def read_given(directory: str, what: str, columns: ColumnMapping | None, name: str | None = None) -> pa.Table | None:
    """One bucket of a dataset as a bucket table (``bucket`` module: lane ``qid, doc, score,
    line`` for ``what`` = "run", qrels ``qid, doc, grade, line`` for "qrels"), its rows
    checked and converted as a Parquet run or qrels file is (``columns.run_table`` /
    ``qrels_table``; errors name the bucket directory and the row's line). None: no rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..inputs.columns import int_column, qrels_table, run_table
    from .bucket import _no_digest

    parts = parts_of(directory) if os.path.isdir(directory) else []
    tables = []
    for p in parts:
        try:
            t = pq.read_table(p, partitioning=None)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())[:200]}", p) from None
        if t.num_rows:
            tables.append(t)
    if not tables:
        return None
    try:
        table = pa.concat_tables(tables, promote_options="default")
    except pa.ArrowException as exc:
        raise InputError(f"its part files do not share one schema: {' '.join(str(exc).split())[:200]}",
                         directory) from None
    line = (int_column(table.column("line"), directory, "line", "line") if "line" in table.column_names
            else np.arange(1, table.num_rows + 1, dtype=np.int64))
    columns = _mapping(table.column_names, columns, what)
    if what == "run":
        raw = run_table(table, directory, columns, name=name, digest=_no_digest(), rows=line)
        return pa.table({"qid": _plain(raw.qid), "doc": _plain(raw.doc),
                         "score": pa.array(np.asarray(raw.score, dtype=np.float64)), "line": pa.array(line)})
    q = qrels_table(table, directory, columns, digest=_no_digest(), rows=line)
    return pa.table({"qid": _plain(q.qid), "doc": _plain(q.doc),
                     "grade": pa.array(np.asarray(q.grade, dtype=np.int64)), "line": pa.array(line)})


def _plain(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    import pyarrow as pa

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    out: pa.Array = col.cast(pa.string())
    return out


def write_buckets(table: pa.Table, n: int, out_dir: str) -> None:
    """``table`` (a ``qid`` string column and any others) as a dataset of ``n`` buckets under
    ``out_dir`` (``bucket=K/part-0.parquet``, rows in table order), K by
    :func:`bucket.buckets_of`: the pyarrow spelling of what DuckDB or Spark would write."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..ranking.ranks import distinct
    from .bucket import buckets_of

    b = buckets_of(table.column("qid"), n)
    for k in distinct(b):  # (np.unique's hash path took seconds on a few million ints)
        d = os.path.join(out_dir, f"bucket={int(k)}")
        os.makedirs(d, exist_ok=True)
        pq.write_table(table.take(pa.array(np.flatnonzero(b == k))), os.path.join(d, "part-0.parquet"))
