"""Input files split into query-id buckets on disk: Parquet files a bucket reads alone.

:func:`partition_files` writes every lane, the qrels and the out-of-domain negatives as
``n`` buckets by ``bucket.SQL_BUCKET`` (the md5 prefix of ``bucket.bucket_of``), with
DuckDB (the optional extra ``rankscope[scale]``) writing the Parquet files:

- a *plain TREC run* that passes the readers' fast-path byte checks (``readers._scan_plain``:
  one delimiter byte, six fields, no comment, blank or CR lines, valid UTF-8) is streamed
  through pyarrow's CSV reader with the readers' own options, a block at a time, row i
  being line i + 1 -- exactly the rows the readers' fast path reads, never the whole
  file in memory. A block that would make the fast path decline (a score that is null or
  not finite, a line that does not parse as six fields) stops the stream and the file
  goes the second road;
- *every other file* (compressed, JSON, MS MARCO, a header-named table, Parquet, JSON
  Lines, the qrels) is read whole by ``readers.read_lane`` / ``read_qrels``, one file at a
  time, and its rows are handed to DuckDB as an Arrow table.

So every row, line number, warning and error is the readers' own: a malformed file
raises the same one-line ``FILE:LINE: what is wrong`` as in memory.

On disk: ``WORKDIR/<input>/bucket=K/*.parquet`` (DuckDB's ``PARTITION_BY`` layout; a bucket
without rows of an input has no directory). Columns as ``bucket`` documents them: lanes
``qid, doc, score float64, line int64``, qrels ``qid, doc, grade int64, line int64``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .bucket import SQL_BUCKET, BucketPlan, FileFacts, file_facts, run_bucket
from .errors import InputError

__all__ = ["BucketFiles", "partition_files", "read_bucket", "bucket_task", "duckdb_module"]

#: Bytes per block of the streamed CSV reading (the readers' ``_read_columns`` block size).
BLOCK_BYTES = 1 << 22


@dataclass(frozen=True)
class BucketFiles:
    """Where one bucket's rows are: per lane (name, path) in the plan's lane order, the
    qrels' path and the negatives' (None without ``--ood-negatives``). A path is a Parquet
    file or a directory of them; a path that does not exist holds no rows."""

    index: int
    lanes: tuple  # ((name, parquet_path), ...)
    qrels: str
    ood: str | None = None


def duckdb_module():
    """``duckdb``, or an InputError saying how to install it (an optional dependency)."""
    try:
        import duckdb
    except ImportError:
        raise InputError("query buckets need DuckDB: pip install 'rankscope[scale]'", "--buckets") from None
    return duckdb


# --------------------------------------------------------------------------- writing


def _connect(workdir: str, memory_limit: str | None):
    duckdb = duckdb_module()
    con = duckdb.connect(":memory:")
    spill = os.path.join(workdir, "spill")
    os.makedirs(spill, exist_ok=True)
    con.execute(f"SET temp_directory = '{_sql_text(spill)}'")
    con.execute("SET preserve_insertion_order = false")  # bucket rows are put back in line order (``line``)
    if memory_limit:
        con.execute(f"SET memory_limit = '{_sql_text(memory_limit)}'")
    return con


def _sql_text(s: str) -> str:
    return str(s).replace("'", "''")


def _write_buckets(con, source, columns: tuple, n: int, out_dir: str) -> None:
    """``COPY`` the rows of ``source`` (an Arrow table or record batch reader) into ``n``
    bucket directories under ``out_dir``, by :data:`bucket.SQL_BUCKET` of the qid."""
    view = "rankscope_rows"
    con.register(view, source)
    try:
        bucket = SQL_BUCKET.format(qid="qid", n=n)
        cols = ", ".join(columns)
        con.execute(f"COPY (SELECT {cols}, {bucket} AS bucket FROM {view}) TO '{_sql_text(out_dir)}' "
                    "(FORMAT parquet, PARTITION_BY (bucket), OVERWRITE_OR_IGNORE true)")
    except Exception as exc:  # duckdb.Error: a full disk, the memory limit
        if _is_interrupt(exc):
            raise KeyboardInterrupt from None
        raise InputError(f"cannot write the bucket files: {' '.join(str(exc).split())}"[:400], out_dir) from None
    finally:
        con.unregister(view)


def _is_interrupt(exc: Exception) -> bool:
    return type(exc).__name__ == "InterruptException"


def _lane_table(raw):
    import pyarrow as pa

    return pa.table({"qid": raw.qid, "doc": raw.doc, "score": pa.array(np.asarray(raw.score, dtype=np.float64)),
                     "line": pa.array(np.asarray(raw.line, dtype=np.int64))})


def _qrels_table(raw):
    import pyarrow as pa

    return pa.table({"qid": raw.qid, "doc": raw.doc, "grade": pa.array(np.asarray(raw.grade, dtype=np.int64)),
                     "line": pa.array(np.asarray(raw.line, dtype=np.int64))})


# --------------------------------------------------------------------------- the streamed road


class _Stream:
    """The rows of a clean plain TREC run, block by block, as the readers' fast path reads
    them (``readers._read_columns`` options; ids of an ASCII file read as binary and viewed
    as strings); ``declined`` is set, and the stream ends, where the fast path would
    decline the whole file."""

    def __init__(self, path: str, scan):
        self.path, self.scan = path, scan
        self.declined = False
        self.rows = 0

    def schema(self):
        import pyarrow as pa

        return pa.schema([("qid", pa.string()), ("doc", pa.string()), ("score", pa.float64()), ("line", pa.int64())])

    def batches(self):
        import pyarrow as pa
        import pyarrow.csv as pcsv

        str_t = pa.binary() if self.scan.clean is True else pa.string()
        try:
            reader = pcsv.open_csv(
                self.path,
                read_options=pcsv.ReadOptions(column_names=["qid", "q0", "doc", "rank", "score", "tag"],
                                              block_size=BLOCK_BYTES),
                parse_options=pcsv.ParseOptions(delimiter=self.scan.delim.decode(), quote_char=False,
                                                double_quote=False, escape_char=False, newlines_in_values=False,
                                                ignore_empty_lines=False),
                convert_options=pcsv.ConvertOptions(
                    column_types={"qid": str_t, "doc": str_t, "score": pa.float64()},
                    include_columns=["qid", "doc", "score"], null_values=[], strings_can_be_null=False,
                    quoted_strings_can_be_null=False),
                memory_pool=pa.system_memory_pool(),
            )
            for batch in reader:
                score = batch.column(2)
                values = np.asarray(score.to_numpy(zero_copy_only=False), dtype=np.float64)
                if score.null_count or not np.isfinite(values).all():
                    self.declined = True
                    return
                qid, doc = batch.column(0), batch.column(1)
                if self.scan.clean is True:
                    qid, doc = qid.view(pa.string()), doc.view(pa.string())
                line = np.arange(self.rows + 1, self.rows + 1 + batch.num_rows, dtype=np.int64)
                self.rows += batch.num_rows
                yield pa.record_batch([qid, doc, score, pa.array(line)], schema=self.schema())
        except (pa.ArrowException, UnicodeDecodeError, OSError):
            self.declined = True
        if self.rows == 0:
            self.declined = True

    def reader(self):
        import pyarrow as pa

        return pa.RecordBatchReader.from_batches(self.schema(), self.batches())


def _streamable_run(path: str, options) -> tuple[str | None, object]:
    """(format, scan) of a lane file the streamed road can read: a regular uncompressed TREC
    file passing the fast path's byte checks; (format or None, None) otherwise."""
    from .files import check_file, compression_of
    from .formats import HEAD_BYTES, detect
    from .readers import _scan_plain

    try:
        if check_file(path) != "regular":
            return None, None
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except (InputError, OSError):
        return None, None  # the readers say what is wrong
    if compression_of(head[:6]) is not None:
        return None, None
    fmt = options.run_format if options.run_format != "auto" else detect(head, "run", path)
    if fmt != "trec":
        return fmt, None
    scan = _scan_plain(path)
    if scan is None or scan.clean is False or scan.delim is None:
        return fmt, None
    return fmt, scan


# --------------------------------------------------------------------------- partition


def _check_paths_once(plan: BucketPlan) -> None:
    """A path given twice is an error, as ``workspace.read_inputs`` says it (before reading)."""
    seen: dict[str, str] = {}
    roles = [("lane", p) for _, p in plan.lanes] + [("qrels", plan.qrels), ("ood negatives", plan.ood_negatives)]
    for role, p in roles:
        if p is None:
            continue
        real = os.path.realpath(p)
        if real in seen:
            raise InputError(f"file given twice (as {seen[real]} and as {role})", p)
        seen[real] = role


def partition_files(plan: BucketPlan, n: int, workdir: str,
                    memory_limit: str | None = None) -> tuple[list[BucketFiles], dict]:
    """Write every input of ``plan`` as ``n`` query-id buckets of Parquet files under
    ``workdir`` (which must exist); returns one :class:`BucketFiles` per bucket and the
    :class:`bucket.FileFacts` of every input by path. ``memory_limit`` (DuckDB's
    ``SET memory_limit``, e.g. ``2GB``) bounds DuckDB's own buffers; beyond it it spills
    under ``workdir``. Files are read in the order ``workspace.read_inputs`` reads them,
    so the first error is the one the in-memory path raises."""
    from concurrent.futures import ThreadPoolExecutor

    from .files import sha256_of
    from .formats import check_options_used
    from .readers import read_lane, read_qrels

    if n < 1:
        raise InputError(f"must be at least 1, got {n}", "--buckets")
    _check_paths_once(plan)
    opts = plan.settings.inputs
    con = _connect(workdir, memory_limit)
    facts: dict = {}
    lane_dirs, formats = [], []
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankscope-sha256") as hasher:
            for i, (name, path) in enumerate(plan.lanes):
                out = os.path.join(workdir, f"lane{i}")
                lane_dirs.append((name, out))
                fmt, scan = _streamable_run(path, opts)
                if scan is not None:
                    digest = hasher.submit(sha256_of, path)  # streamed over the file while it is partitioned
                    stream = _Stream(path, scan)
                    _write_buckets(con, stream.reader(), ("qid", "doc", "score", "line"), n, out)
                    if not stream.declined:
                        try:
                            sha = digest.result()
                        except OSError as exc:
                            raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
                        facts[path] = FileFacts(path, sha, "trec", None, ())
                        formats.append(SimpleNamespace(format="trec"))
                        continue
                    _remove_tree(out)  # the readers read it whole
                raw = read_lane(path, name, opts)
                _write_buckets(con, _lane_table(raw), ("qid", "doc", "score", "line"), n, out)
                facts[path] = file_facts(raw)
                formats.append(SimpleNamespace(format=raw.format))
                del raw
        judged = []
        for what, path in (("qrels", plan.qrels), ("ood", plan.ood_negatives)):
            if path is None:
                continue
            raw = read_qrels(path, opts)
            _write_buckets(con, _qrels_table(raw), ("qid", "doc", "grade", "line"), n, os.path.join(workdir, what))
            facts[path] = file_facts(raw)
            judged.append(SimpleNamespace(format=raw.format))
            del raw
        check_options_used(opts, formats, judged)
    finally:
        con.close()

    def at(d: str, k: int) -> str:
        return os.path.join(d, f"bucket={k}")

    files = [BucketFiles(k, tuple((name, at(d, k)) for name, d in lane_dirs), at(os.path.join(workdir, "qrels"), k),
                         at(os.path.join(workdir, "ood"), k) if plan.ood_negatives is not None else None)
             for k in range(n)]
    return files, facts


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------- reading a bucket


def _read_parquet(path: str | None):
    """The rows at ``path`` (a Parquet file, or every ``*.parquet`` of a directory, in name
    order); None when nothing is there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path is None or not os.path.exists(path):
        return None
    if os.path.isdir(path):
        parts = sorted(f for f in os.listdir(path) if f.endswith(".parquet"))
        if not parts:
            return None
        return pa.concat_tables([pq.read_table(os.path.join(path, f)) for f in parts])
    return pq.read_table(path)


def read_bucket(files: BucketFiles) -> tuple[dict, object, object]:
    """(lane name -> rows, qrels rows, negatives rows or None) of one bucket, as Arrow
    tables; a lane without rows in this bucket is left out, absent qrels are None."""
    lanes = {}
    for name, path in files.lanes:
        t = _read_parquet(path)
        if t is not None:
            lanes[name] = t
    return lanes, _read_parquet(files.qrels), _read_parquet(files.ood)


def bucket_task(files: BucketFiles, plan: BucketPlan):
    """``bucket.run_bucket`` of one bucket on disk (what a worker process runs)."""
    lanes, qrels, ood = read_bucket(files)
    return run_bucket(lanes, qrels, plan, ood)
