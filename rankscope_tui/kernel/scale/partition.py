"""Input files split into query-id buckets on disk: Parquet files a bucket reads alone.

:func:`partition_files` writes every lane, the qrels and the out-of-domain negatives as
``n`` buckets by ``bucket.SQL_BUCKET`` (the md5 prefix of ``bucket.bucket_of``), computed
by DuckDB (the optional extra ``rankscope[scale]``) on each batch of rows, the rows split
and written by pyarrow into Parquet part files within a fixed buffer budget
(:class:`_BucketWriter`):

- a *TREC run* that passes the readers' fast-path byte checks (one delimiter byte, six
  fields, no comment, blank or CR lines, valid UTF-8, no BOM) is streamed through pyarrow's
  CSV reader with the readers' own options, a block at a time, row i being line i + 1 --
  exactly the rows the readers' fast path reads, never the whole file in memory. A plain
  file is checked first (``trec._scan_plain``); compressed content (gzip, bzip2, xz,
  zstd, lz4, decompressed by the readers' codecs) is checked as it is read. Where the
  fast path would decline (a check fails, a score is null or not finite, a line does not
  parse as six fields) the stream's buckets are dropped and the file goes the second
  road. (A file read whole is bounded by ``files.input_size_limit``; a streamed one is not.)
  On the local engine a plain file of at least ``SPAN_MIN_BYTES`` is cut at line ends into
  one span per pool worker (:func:`spans_of`); the workers stream their spans side by
  side (:func:`partition_span`, each numbering its rows from the lines before it) while
  this process reads the qrels.
- a *Parquet run* with a score column is read a batch of row groups at a time, each batch
  checked and converted by the readers' ``columns.run_table`` (any error: the readers
  read the file whole and raise theirs);
- *every other file* (JSON, MS MARCO, a header-named table, a Parquet run with a rank
  column, JSON Lines, a run with comment lines, the qrels) is read whole by
  ``readers.read_lane`` / ``read_qrels``, one file at a time, and its rows split the same way.

So every row, line number, warning and error is the readers' own: a malformed file
raises the same one-line ``FILE:LINE: what is wrong`` as in memory.

On disk: ``WORKDIR/<input>/bucket=K/part-NNNNNN.parquet`` (a bucket without rows of an
input has no directory). Columns as ``bucket`` documents them: lanes
``qid, doc, score float64, line int64``, qrels ``qid, doc, grade int64, line int64``.
"""

from __future__ import annotations

import os
from concurrent.futures import Future
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Union

import numpy as np

from ..errors import InputError
from .bucket import SQL_BUCKET, BucketPlan, BucketResult, FileFacts, file_facts, run_bucket

if TYPE_CHECKING:
    from concurrent.futures import Executor

    import duckdb
    import pyarrow as pa
    from typing_extensions import TypeAlias

    from ..inputs.files import Digest
    from ..inputs.formats import InputOptions
    from ..inputs.readers import RawLane, RawQrels
    from ..inputs.trec import _Scan

    # the fast path's verdict on a run (``readers._Scan``), or the same fields made here
    # (``delim``, ``clean`` and, for compressed content, ``checked``: a ``_Checked`` stream)
    Scan: TypeAlias = Union[_Scan, SimpleNamespace]

__all__ = ["BucketFiles", "partition_files", "read_bucket", "bucket_task", "duckdb_module"]

#: Bytes per block of the streamed CSV reading (the readers' ``_read_columns`` block size).
BLOCK_BYTES = 1 << 20
#: Rows per batch of a streamed Parquet run.
PARQUET_BATCH_ROWS = 1 << 20


@dataclass(frozen=True)
class BucketFiles:
    """Where one bucket's rows are: per lane (name, path) in the plan's lane order, the
    qrels' path and the negatives' (None without ``--ood-negatives``). A path is a Parquet
    file or a directory of them; a path that does not exist holds no rows. ``given``: the
    inputs whose bucket is a directory of a pre-bucketed dataset (``given`` module), by
    role: ``lane0``, ``lane1``, ..., ``qrels``, ``ood``; their rows are checked and
    converted as they are read."""

    index: int
    lanes: tuple[tuple[str, str], ...]  # ((name, parquet_path), ...)
    qrels: str
    ood: str | None = None
    given: tuple[str, ...] = ()


def duckdb_module() -> ModuleType:
    """``duckdb``, or an InputError saying how to install it (an optional dependency)."""
    try:
        import duckdb
    except ImportError:
        raise InputError("query buckets need DuckDB: pip install 'rankscope[scale]'", "--buckets") from None
    return duckdb


# --------------------------------------------------------------------------- writing


def _connect(threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection for hashing qids (nothing is stored in it)."""
    module = duckdb_module()
    con: duckdb.DuckDBPyConnection = module.connect(":memory:")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


class _BucketWriter:
    """Rows of one input into ``n`` bucket directories ``out_dir/bucket=K/``, a batch at a
    time: DuckDB computes :data:`bucket.SQL_BUCKET` of each batch's qids, pyarrow splits the
    batch and buffers each bucket's rows; when the buffers hold ``budget`` bytes every
    non-empty one is written as the bucket's next Parquet part file (``part-NNNNNN.parquet``,
    in write order) and emptied. Memory is bounded by the budget plus one batch, whatever
    the input's size or the bucket count. (DuckDB's own ``PARTITION_BY`` writer was measured
    holding memory growing with the input: 1.6 GB for a 20M-line run into 64 buckets.)"""

    HASH_ROWS = 1 << 17  # rows hashed per DuckDB query (batches are gathered up to this)

    def __init__(self, con: duckdb.DuckDBPyConnection, n: int, out_dir: str, schema: pa.Schema, budget: int,
                 prefix: str = "part-"):
        self.con, self.n, self.out_dir, self.schema, self.budget = con, n, out_dir, schema, budget
        self.prefix = prefix
        self.buffers: list[list[pa.Table]] = [[] for _ in range(n)]
        self.buffered = 0
        self.parts = 0
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        if self.pending_rows >= self.HASH_ROWS:
            self._split()

    def _split(self) -> None:
        import pyarrow as pa

        if not self.pending:
            return
        table = pa.Table.from_batches(self.pending, schema=self.schema).combine_chunks()
        self.pending, self.pending_rows = [], 0
        b = self._buckets(table)
        order = np.argsort(b, kind="stable")
        cuts = np.searchsorted(b[order], np.arange(self.n + 1))
        table = table.take(pa.array(order))  # one gather; each bucket's rows are then a slice
        for k in np.flatnonzero(np.diff(cuts)):
            part = table.slice(int(cuts[k]), int(cuts[k + 1] - cuts[k]))
            self.buffers[k].append(part)
            self.buffered += part.nbytes
        if self.buffered >= self.budget:
            self._flush()

    def _buckets(self, table: pa.Table) -> np.ndarray:
        """The bucket of every row: each distinct qid of the batch hashed once, by DuckDB."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.n == 1:
            return np.zeros(table.num_rows, dtype=np.int64)
        enc = pc.dictionary_encode(table.column("qid")).combine_chunks()
        view = "rankscope_qids"
        distinct = len(enc.dictionary)
        self.con.register(view, pa.table({"i": pa.array(np.arange(distinct, dtype=np.int64)), "qid": enc.dictionary}))
        try:
            got = self.con.execute(f"SELECT i, {SQL_BUCKET.format(qid='qid', n=self.n)} AS b FROM {view}").fetchnumpy()
        except Exception as exc:  # duckdb.Error
            if type(exc).__name__ == "InterruptException":
                raise KeyboardInterrupt from None
            raise
        finally:
            self.con.unregister(view)
        per = np.empty(distinct, dtype=np.int64)
        per[np.asarray(got["i"], dtype=np.int64)] = np.asarray(got["b"], dtype=np.int64)  # in any order DuckDB gives
        return per[np.asarray(enc.indices, dtype=np.int64)]

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = f"{self.prefix}{self.parts:06d}.parquet"
        for k, parts in enumerate(self.buffers):
            if not parts:
                continue
            d = os.path.join(self.out_dir, f"bucket={k}")
            os.makedirs(d, exist_ok=True)
            try:
                # read once, soon: no compression or statistics; the repetitive qids as a dictionary
                pq.write_table(pa.concat_tables(parts), os.path.join(d, name), compression="none",
                               use_dictionary=["qid"], write_statistics=False)
            except OSError as exc:
                raise InputError(f"cannot write the bucket files: {exc.strerror or exc}", self.out_dir) from None
            self.buffers[k] = []
        self.buffered = 0
        self.parts += 1

    def close(self) -> None:
        self._split()
        self._flush()


LANE_SCHEMA_FIELDS = (("qid", "string"), ("doc", "string"), ("score", "float64"), ("line", "int64"))
QRELS_SCHEMA_FIELDS = (("qid", "string"), ("doc", "string"), ("grade", "int64"), ("line", "int64"))


def _schema(fields: Iterable[tuple[str, str]]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(name, getattr(pa, t)()) for name, t in fields])


def _write_buckets(con: duckdb.DuckDBPyConnection, batches: Iterable[pa.RecordBatch], fields: tuple[tuple[str, str], ...],
                   n: int, out_dir: str, budget: int, prefix: str = "part-") -> None:
    """Every batch of ``batches`` (record batches of ``fields``' columns) into ``n`` buckets
    under ``out_dir`` (see :class:`_BucketWriter`)."""
    w = _BucketWriter(con, n, out_dir, _schema(fields), budget, prefix)
    for batch in batches:
        w.add(batch)
    w.close()


def _table_batches(table: pa.Table, fields: tuple[tuple[str, str], ...]) -> list[pa.RecordBatch]:
    """A table read whole by the readers, as record batches of ``fields``' types."""
    schema = _schema(fields)
    table = table.select([f for f, _ in fields]).cast(schema)
    batches: list[pa.RecordBatch] = table.to_batches(max_chunksize=1 << 17)
    return batches


def _lane_table(raw: RawLane) -> pa.Table:
    import pyarrow as pa

    return pa.table({"qid": raw.qid, "doc": raw.doc, "score": pa.array(np.asarray(raw.score, dtype=np.float64)),
                     "line": pa.array(np.asarray(raw.line, dtype=np.int64))})


def _qrels_table(raw: RawQrels) -> pa.Table:
    import pyarrow as pa

    return pa.table({"qid": raw.qid, "doc": raw.doc, "grade": pa.array(np.asarray(raw.grade, dtype=np.int64)),
                     "line": pa.array(np.asarray(raw.line, dtype=np.int64))})


# --------------------------------------------------------------------------- the streamed road


class _ReadOnly:
    """A stream pyarrow reads from the front (``pa.PythonFile``): readable, not seekable."""

    closed = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


class _Checked(_ReadOnly):
    """Decompressed content read through the fast path's byte checks (``trec._ChunkCheck``,
    fed as ``trec._check_range`` feeds it: each slice after the first preceded by the
    previous slice's last byte); pyarrow's CSV reader reads it (``pa.PythonFile``)."""

    def __init__(self, stream: Any, first: bytes, delim: bytes):  # any binary stream with read and close
        from ..inputs.trec import _ChunkCheck

        self.stream, self.pending = stream, first
        self.check = _ChunkCheck(delim[0])
        self.prev: int | None = None

    def read(self, n: int = -1) -> bytes:
        if self.pending:
            data, self.pending = self.pending, b""
        else:
            data = self.stream.read(n if n is not None and n >= 0 else 1 << 22)
        if data:
            b = np.frombuffer(data, dtype=np.uint8)
            if self.prev is None:
                self.check.feed(b, overlap=False)
            else:
                self.check.feed(np.concatenate([np.array([self.prev], dtype=np.uint8), b]), overlap=True)
            self.prev = int(b[-1])
        return data

    def close(self) -> None:
        self.closed = True
        self.stream.close()

    def clean(self) -> bool:
        """Whether every byte read passed (``_ChunkCheck.result`` not False)."""
        result: Callable[[], bool | None] = self.check.result  # _ChunkCheck's verdict so far
        return self.check.ok and result() is not False


def _decompressed(path: str, name: str) -> Any:  # a binary stream with read and close; None without the codec
    """A stream of the content of ``path`` compressed as ``name`` (the codecs the readers use)."""
    import gzip

    if name == "gzip":
        return gzip.GzipFile(path, "rb")
    if name in ("bzip2", "xz"):
        from ..inputs.files import Streams

        return Streams(name, open(path, "rb"))
    if name not in ("zstd", "lz4"):
        return None  # lz4's legacy format: the readers refuse it by name
    import pyarrow as pa

    codec = "zstd" if name == "zstd" else "lz4"
    if not pa.Codec.is_available(codec):
        return None
    return pa.CompressedInputStream(pa.OSFile(path), codec)


class _Stream:
    """The rows of a clean TREC run, block by block, as the readers' fast path reads them
    (``trec._read_columns`` options; ids of an ASCII file read as binary and viewed as
    strings); ``declined`` is set, and the stream ends, where the fast path would decline
    the whole file. ``scan``: the verdict of ``trec._scan_plain`` on a plain file; for
    compressed content (``scan.checked``, a :class:`_Checked`) the checks run as the
    content is read, and the verdict is known at its end."""

    def __init__(self, path: str, scan: Scan, span: tuple[int, int] | None = None, first_line: int = 1):
        self.path, self.scan, self.span = path, scan, span
        self.declined = False
        self.rows = first_line - 1  # rows are numbered from first_line: a span starts within the file

    def schema(self) -> pa.Schema:
        return _run_schema()

    def batches(self) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        from ..inputs.arrow import to_numpy

        checked = getattr(self.scan, "checked", None)
        str_t = pa.binary() if self.scan.clean is True else pa.string()
        span = _Span(self.path, *self.span) if self.span is not None else None
        stream = span if span is not None else checked  # (a span is of a plain file: never checked as read)
        assert self.scan.delim is not None  # a scan with no delimiter does not stream (_streamable_run)
        source = self.path if stream is None else pa.PythonFile(stream, mode="r")
        try:
            reader = pcsv.open_csv(
                source,
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
                if score.null_count or (checked is not None and not checked.check.ok) \
                        or not np.isfinite(to_numpy(score)).all():  # (not Array.to_numpy: it imports pandas)
                    self.declined = True
                    return
                qid, doc = batch.column(0), batch.column(1)
                if self.scan.clean is True:
                    qid, doc = qid.view(pa.string()), doc.view(pa.string())
                line = np.arange(self.rows + 1, self.rows + 1 + batch.num_rows, dtype=np.int64)
                self.rows += batch.num_rows
                yield pa.record_batch([qid, doc, score, pa.array(line)], schema=self.schema())
        except (pa.ArrowException, UnicodeDecodeError, OSError, EOFError, ValueError):  # (corrupt compressed content)
            self.declined = True
        finally:
            if span is not None:
                span.close()
        if (self.rows == 0 and self.span is None) or (checked is not None and not checked.clean()):
            self.declined = True


def _run_schema() -> pa.Schema:
    """The columns of a streamed run's batches."""
    import pyarrow as pa

    return pa.schema([("qid", pa.string()), ("doc", pa.string()), ("score", pa.float64()), ("line", pa.int64())])


class _Span(_ReadOnly):
    """Bytes ``start`` to ``end`` of a file, read as a stream (what pyarrow's CSV reader reads)."""

    def __init__(self, path: str, start: int, end: int):
        self.fh = open(path, "rb")
        self.fh.seek(start)
        self.left = end - start

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(n) if n > 0 else b""
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.closed = True
        self.fh.close()


#: A plain TREC run at least this large is partitioned in spans, one per pool worker.
SPAN_MIN_BYTES = 64 << 20
#: Bytes read at a time while counting the lines before a span.
_COUNT_BYTES = 16 << 20


def spans_of(path: str, pieces: int) -> list[tuple[int, int]]:
    """``pieces`` byte ranges (start, end) covering ``path``: cut j at the first line start
    at or after ``j * size / pieces`` (a range may be empty: a line longer than a range)."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as fh:
        for j in range(1, pieces):
            at = size * j // pieces
            if at <= cuts[-1]:
                cuts.append(cuts[-1])
                continue
            at -= 1  # the byte before: a newline there makes ``at`` a line start
            fh.seek(at)
            while True:
                block = fh.read(1 << 16)
                if not block:
                    at = size
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    at += nl + 1
                    break
                at += len(block)
            cuts.append(max(cuts[-1], min(at, size)))
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


def _lines_before(path: str, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of ``path`` (the line a span starting there
    begins on, less one)."""
    count = 0
    with open(path, "rb") as fh:
        left = offset
        while left > 0:
            block = fh.read(min(_COUNT_BYTES, left))
            if not block:
                break
            count += block.count(b"\n")
            left -= len(block)
    return count


def partition_span(path: str, delim: bytes, clean: bool | None, span: tuple[int, int], index: int, n: int, out_dir: str,
                   budget: int) -> tuple[int, bool]:
    """One span of a plain TREC run (checked clean by ``trec._scan_plain``: ``delim``,
    ``clean``) into ``n`` buckets under ``out_dir``, as part files ``part-sJJJ-NNNNNN.parquet``
    (JJJ = ``index``, so the parts of earlier spans sort first); rows numbered by their line
    in the whole file (the newlines before the span are counted first). What a pool worker
    runs while the driver reads the other inputs. Returns (rows, declined): declined where
    the fast path would decline the file (then its buckets are dropped)."""
    if span[0] == span[1]:
        return 0, False  # (a line longer than a span: the span before holds it)
    stream = _Stream(path, SimpleNamespace(delim=delim, clean=clean), span, _lines_before(path, span[0]) + 1)
    first = stream.rows
    con = _connect()
    try:
        _write_buckets(con, stream.batches(), LANE_SCHEMA_FIELDS, n, out_dir, budget, f"part-s{index:03d}-")
    finally:
        con.close()
    return stream.rows - first, stream.declined


class _ParquetStream:
    """The rows of a Parquet run with a score column, a batch at a time, each batch checked
    and converted by the readers' own ``columns.run_table`` (row numbers as the readers
    number them: from 1 in file order). ``declined`` where the readers must read the file
    whole: a rank column (its ranks are checked per query, across batches), no rows, or any
    error -- which the readers then raise for the whole file, as in memory."""

    def __init__(self, path: str, name: str, options: InputOptions):
        self.path, self.name, self.options = path, name, options
        self.declined = False
        self.rows = 0
        self.columns: dict[str, str] | None = None

    def schema(self) -> pa.Schema:
        return _run_schema()

    def batches(self) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ..inputs.columns import run_table
        from ..inputs.formats import ColumnMapping, resolve_columns
        from .bucket import _no_digest

        no_digest: Callable[[], Digest] = _no_digest  # a digest that never reads the file
        try:
            pf = pq.ParquetFile(self.path)
            r = resolve_columns(pf.schema_arrow.names, self.options.run_columns, "run", self.path)
            if r.kind == "rank":
                self.declined = True
                return
            mapping = ColumnMapping(query=r.query, doc=r.doc, **{r.kind: r.value})
            for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(dict.fromkeys((r.query, r.doc, r.value)))):
                if batch.num_rows == 0:
                    continue
                line = np.arange(self.rows + 1, self.rows + 1 + batch.num_rows, dtype=np.int64)
                raw = run_table(pa.Table.from_batches([batch]), self.path, mapping, name=self.name,
                                digest=no_digest(), rows=line)
                self.rows += batch.num_rows
                self.columns = raw.columns
                qid = raw.qid.combine_chunks() if isinstance(raw.qid, pa.ChunkedArray) else raw.qid
                doc = raw.doc.combine_chunks() if isinstance(raw.doc, pa.ChunkedArray) else raw.doc
                yield pa.record_batch([qid.cast(pa.string()), doc.cast(pa.string()),
                                       pa.array(np.asarray(raw.score, dtype=np.float64)), pa.array(line)],
                                      schema=self.schema())
        except (InputError, pa.ArrowException, OSError, ValueError):
            self.declined = True
        if self.rows == 0:
            self.declined = True


def _streamable_run(path: str, options: InputOptions) -> tuple[str | None, Scan | None]:
    """(format, scan) of a lane file the streamed road can read: a regular uncompressed TREC
    file passing the fast path's byte checks; (format or None, None) otherwise."""
    from ..inputs.files import check_file, compression_of
    from ..inputs.formats import HEAD_BYTES, detect
    from ..inputs.trec import _scan_plain

    try:
        if check_file(path) != "regular":
            return None, None
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except (InputError, OSError):
        return None, None  # the readers say what is wrong
    name = compression_of(head[:6])
    if name is not None:
        return _streamable_compressed(path, name, options)
    fmt = options.run_format if options.run_format != "auto" else detect(head, "run", path, options.run_columns)
    if fmt != "trec":
        return fmt, None
    scan = _scan_plain(path)
    if scan is None or scan.clean is False or scan.delim is None:
        return fmt, None
    return fmt, scan


def _streamable_compressed(path: str, name: str, options: InputOptions) -> tuple[str | None, Scan | None]:
    """(format, scan) of compressed TREC content the streamed road reads, checking its bytes
    as it goes (a :class:`_Checked` stream, opened on its first 1 MiB); (None, None) when the
    readers must read it (another format, no delimiter on the first line, a BOM, corrupt)."""
    from ..inputs.formats import HEAD_BYTES, detect
    from ..inputs.trec import _SCAN_STEP, _delimiter

    if options.run_format not in ("auto", "trec"):
        return None, None
    try:
        stream = _decompressed(path, name)
        if stream is None:
            return None, None
        first = stream.read(_SCAN_STEP)
    except Exception:  # noqa: BLE001 - a corrupt file: the readers name the problem
        return None, None
    fmt = options.run_format if options.run_format != "auto" else _detect_or_none(detect, first[:HEAD_BYTES], path, options)
    nl = first.find(b"\n")
    delim = None if first[:3] == b"\xef\xbb\xbf" else _delimiter(first[:nl] if nl >= 0 else first)
    if fmt != "trec" or delim is None or not first:
        stream.close()
        return None, None
    return fmt, SimpleNamespace(delim=delim, clean=None, checked=_Checked(stream, first, delim))


def _detect_or_none(detect: Callable[..., str], head: bytes, path: str, options: InputOptions) -> str | None:
    try:
        return detect(head, "run", path, options.run_columns)
    except InputError:
        return None  # the readers say it


# --------------------------------------------------------------------------- partition


def _check_paths_once(plan: BucketPlan) -> None:
    """A path given twice is an error, as ``workspace.read_inputs`` says it (before reading)."""
    from ..workspace.loaded import check_read_once

    check_read_once([("lane", p) for _, p in plan.lanes] + [("qrels", plan.qrels), ("ood negatives", plan.ood_negatives)])


def partition_files(plan: BucketPlan, n: int, workdir: str, memory_limit: str | None = None,
                    pool: Executor | None = None, workers: int = 1,
                    given: frozenset[str] = frozenset()) -> tuple[list[BucketFiles], dict[str, FileFacts]]:
    """Write every input of ``plan`` as ``n`` query-id buckets of Parquet files under
    ``workdir`` (which must exist); returns one :class:`BucketFiles` per bucket and the
    :class:`bucket.FileFacts` of every input by path. ``memory_limit`` (e.g. ``2GB``: this
    process's share) bounds the bucket writer's buffers to an eighth of it (at most
    ``BUFFER_BYTES``). Files are read in the order ``workspace.read_inputs`` reads them,
    so the first error is the one the in-memory path raises. With ``pool`` (a process
    pool of ``workers``), a plain TREC run of at least ``SPAN_MIN_BYTES`` is cut into
    ``workers`` spans at line ends, partitioned side by side (:func:`partition_span`).
    ``given``: paths of pre-bucketed datasets (``given`` module), neither read nor
    written here: their buckets are their ``bucket=K`` directories, and their facts are
    the caller's."""
    from concurrent.futures import ThreadPoolExecutor

    from ..inputs.files import sha256_of
    from ..inputs.formats import InputOptions, check_options_used
    from ..inputs.readers import read_qrels

    if n < 1:
        raise InputError(f"must be at least 1, got {n}", "--buckets")
    _check_paths_once(plan)
    opts = plan.settings.inputs
    assert isinstance(opts, InputOptions)  # what LoadSettings.inputs holds
    budget = _buffer_budget(memory_limit)
    con = _connect()
    facts: dict[str, FileFacts] = {}
    lane_dirs: list[tuple[str, str]] = []
    formats: list[SimpleNamespace | None] = []  # None: known once the lane's spans are done
    # lane index -> (name, path, out dir, span futures, digest)
    pending: dict[int, tuple[str, str, str, list[Future[tuple[int, bool]]], Future[str]]] = {}
    hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankscope-sha256")
    try:
        for i, (name, path) in enumerate(plan.lanes):
            if path in given:
                lane_dirs.append((name, path))  # its bucket=K directories, as they are
                formats.append(SimpleNamespace(format="parquet"))
                continue
            out = os.path.join(workdir, f"lane{i}")
            lane_dirs.append((name, out))
            fmt, scan = _streamable_run(path, opts)
            if fmt == "parquet":
                digest = hasher.submit(sha256_of, path)
                pstream = _ParquetStream(path, name, opts)
                _write_buckets(con, pstream.batches(), LANE_SCHEMA_FIELDS, n, out, budget)
                if not pstream.declined:
                    facts[path] = FileFacts(path, _sha(digest, path), "parquet", pstream.columns, ())
                    formats.append(SimpleNamespace(format="parquet"))
                    continue
                _remove_tree(out)  # the readers read it whole
            elif scan is not None and pool is not None and _spans_apply(path, scan, pool, workers):
                # the workers partition its spans while this process reads the other inputs
                pending[i] = (name, path, out, _submit_spans(pool, path, scan, workers, n, out, budget),
                              hasher.submit(sha256_of, path))
                formats.append(None)  # known once the spans are done
                continue
            elif scan is not None:
                digest = hasher.submit(sha256_of, path)  # streamed over the file while it is partitioned
                stream = _Stream(path, scan)
                try:
                    _write_buckets(con, stream.batches(), LANE_SCHEMA_FIELDS, n, out, budget)
                finally:
                    checked = getattr(scan, "checked", None)
                    if checked is not None:
                        checked.close()
                if not stream.declined:
                    facts[path] = FileFacts(path, _sha(digest, path), "trec", None, ())
                    formats.append(SimpleNamespace(format="trec"))
                    continue
                _remove_tree(out)  # the readers read it whole
            formats.append(_lane_read_whole(con, name, path, opts, n, out, budget, facts))
        judged: list[SimpleNamespace] = []
        judged_error = None
        try:
            for what, judged_path in (("qrels", plan.qrels), ("ood", plan.ood_negatives)):
                if judged_path is None:
                    continue
                if judged_path in given:
                    judged.append(SimpleNamespace(format="parquet"))
                    continue
                raw = read_qrels(judged_path, opts)
                _write_buckets(con, _table_batches(_qrels_table(raw), QRELS_SCHEMA_FIELDS), QRELS_SCHEMA_FIELDS, n,
                               os.path.join(workdir, what), budget)
                facts[judged_path] = file_facts(raw)
                judged.append(SimpleNamespace(format=raw.format))
                del raw
        except InputError as exc:
            if not pending:
                raise
            judged_error = exc  # raised after the lanes: a lane's error comes first, as in memory
        for i, (name, path, out, futures, digest) in pending.items():
            if not _spans_declined(futures, path):
                facts[path] = FileFacts(path, _sha(digest, path), "trec", None, ())
                formats[i] = SimpleNamespace(format="trec")
                continue
            _remove_tree(out)  # the readers read it whole
            formats[i] = _lane_read_whole(con, name, path, opts, n, out, budget, facts)
        if judged_error is not None:
            raise judged_error
        check_options_used(opts, [f for f in formats if f is not None], judged)  # every lane's is known by now
    finally:
        hasher.shutdown(wait=False)  # (every digest used was waited for; the qrels are read while one is made)
        con.close()

    def at(d: str, k: int) -> str:
        return os.path.join(d, f"bucket={k}")

    def judged_dir(what: str, path: str) -> str:
        return path if path in given else os.path.join(workdir, what)

    roles = tuple([f"lane{i}" for i, (_, p) in enumerate(plan.lanes) if p in given]
                  + [what for what, p in (("qrels", plan.qrels), ("ood", plan.ood_negatives)) if p in given])
    files = [BucketFiles(k, tuple((name, at(d, k)) for name, d in lane_dirs), at(judged_dir("qrels", plan.qrels), k),
                         at(judged_dir("ood", plan.ood_negatives), k) if plan.ood_negatives is not None else None,
                         roles)
             for k in range(n)]
    return files, facts


def _lane_read_whole(con: duckdb.DuckDBPyConnection, name: str, path: str, opts: InputOptions, n: int, out: str,
                     budget: int, facts: dict[str, FileFacts]) -> SimpleNamespace:
    """A lane read whole by the readers (``readers.read_lane``), its rows into ``n`` buckets
    under ``out``, its facts into ``facts``; what ``formats.check_options_used`` reads of it."""
    from ..inputs.readers import read_lane

    raw = read_lane(path, name, opts)
    _write_buckets(con, _table_batches(_lane_table(raw), LANE_SCHEMA_FIELDS), LANE_SCHEMA_FIELDS, n, out, budget)
    facts[path] = file_facts(raw)
    return SimpleNamespace(format=raw.format)


def _spans_apply(path: str, scan: Scan, pool: Executor | None, workers: int) -> bool:
    return (pool is not None and workers > 1 and getattr(scan, "checked", None) is None
            and os.path.getsize(path) >= SPAN_MIN_BYTES)


def _submit_spans(pool: Executor, path: str, scan: Scan, workers: int, n: int, out: str,
                  budget: int) -> list[Future[tuple[int, bool]]]:
    """:func:`partition_span` of each of ``workers`` spans of ``path``, submitted to ``pool``."""
    from concurrent.futures.process import BrokenProcessPool

    assert scan.delim is not None  # a scan without a delimiter is not streamed (_streamable_run)
    try:
        return [pool.submit(partition_span, path, scan.delim, scan.clean, span, j, n, out, budget)
                for j, span in enumerate(spans_of(path, workers))]
    except BrokenProcessPool:  # a worker died before the spans went out
        from .budget import BucketFailed

        raise BucketFailed(f"partitioning {path} failed: a worker process ended unexpectedly (killed, or out of "
                           "memory); nothing was written") from None


def _spans_declined(futures: list[Future[tuple[int, bool]]], path: str) -> bool:
    """Whether the spans' file was declined (no rows at all, or a span the fast path would
    decline), once every span is done. A worker that dies fails the command
    (``engine.BucketFailed``)."""
    from concurrent.futures import wait
    from concurrent.futures.process import BrokenProcessPool

    from .budget import WAIT_S

    try:
        while wait(futures, timeout=WAIT_S)[1]:  # (see engine.WAIT_S: a signal is handled meanwhile)
            pass
        done = [f.result() for f in futures]
    except BrokenProcessPool:
        from .budget import BucketFailed

        raise BucketFailed(f"partitioning {path} failed: a worker process ended unexpectedly (killed, or out of "
                           "memory); nothing was written") from None
    finally:
        for f in futures:
            f.cancel()
    return sum(rows for rows, _ in done) == 0 or any(declined for _, declined in done)


#: The bucket writer's buffers (``_BucketWriter``): at most this, or an eighth of the
#: memory limit given.
BUFFER_BYTES = 256 * 10**6


def _buffer_budget(memory_limit: str | None) -> int:
    if memory_limit is None:
        return BUFFER_BYTES
    from .budget import parse_size

    return max(16 * 10**6, min(BUFFER_BYTES, parse_size(memory_limit) // 8))


def _sha(digest: Future[str], path: str) -> str:
    try:
        return digest.result()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------- reading a bucket


def _read_parquet(path: str | None) -> pa.Table | None:
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


def read_bucket(files: BucketFiles, options: InputOptions | None = None
                ) -> tuple[dict[str, pa.Table], pa.Table | None, pa.Table | None]:
    """(lane name -> rows, qrels rows, negatives rows or None) of one bucket, as Arrow
    tables; a lane without rows in this bucket is left out, absent qrels are None. A
    pre-bucketed input's bucket (``files.given``) is read by ``given.read_given`` with the
    column mappings of ``options`` (the plan's ``InputOptions``)."""
    from .given import read_given

    def read(role: str, path: str | None, what: str, name: str | None = None) -> pa.Table | None:
        if path is not None and role in files.given:
            columns = None if options is None else options.run_columns if what == "run" else options.qrels_columns
            return read_given(path, what, columns, name)
        return _read_parquet(path)

    lanes: dict[str, pa.Table] = {}
    for i, (name, path) in enumerate(files.lanes):
        t = read(f"lane{i}", path, "run", name)
        if t is not None:
            lanes[name] = t
    return lanes, read("qrels", files.qrels, "qrels"), read("ood", files.ood, "qrels")


def bucket_task(files: BucketFiles, plan: BucketPlan) -> BucketResult:
    """``bucket.run_bucket`` of one bucket on disk (what a worker process runs)."""
    from ..inputs.formats import InputOptions

    if plan.measure_files:  # a fresh worker has only the built-in measures
        from ..measures.user import ensure_loaded

        ensure_loaded(plan.measure_files)
    opts = plan.settings.inputs
    lanes, qrels, ood = read_bucket(files, opts if isinstance(opts, InputOptions) else None)
    return run_bucket(lanes, qrels, plan, ood)
