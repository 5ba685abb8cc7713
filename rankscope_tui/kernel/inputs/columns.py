"""Runs and qrels held as tables (Parquet files, pandas DataFrames via pyarrow, JSON
Lines rows, header-named text): the chosen columns (``formats.resolve_columns``, by
the conventions listed in ``formats``) turned into the readers' ``RawLane`` /
``RawQrels`` -- the same representation a TREC file is read into, so the same data
gives the same bytes downstream.

A run table with a rank column and no score column (``qid, docno, rank``) is read as
an MS MARCO run is: score = -rank (:func:`score_from_rank`).

Values as the TREC readers read them: ids are text (integer ids are written in
decimal, as in a TREC file; floating-point ids are refused: ``1.0`` is not ``1``);
an id may not be null, contain a line break or a NUL byte; a score is a finite
number (numeric columns, or text parsed as the TREC reader parses it); a grade an
integer that fits 32 bits (an integral float is accepted). Errors name the source
and the 1-based row (``SOURCE:ROW: what``), the row being the line of a TREC file.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal, TypeAlias, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..errors import InputError
from .arrow import first_repeat, to_numpy
from .files import Digest
from .formats import ColumnMapping, resolve_columns
from .rows import INT32_MAX, INT32_MIN, Lines, RawLane, RawQrels, RowLines, check_lane_name, lane_name_from_path, parse_float_col, parse_int_col

#: a column of a pyarrow table (pyarrow ships no types: both are ``Any`` to a checker)
Column: TypeAlias = "pa.Array | pa.ChunkedArray"
#: the source row of each table row, when it is not row + 1 (JSON Lines, header-named text)
Rows = Lines | None

# ---------------------------------------------------------------------------
# columns to the readers' representation


def _first_null(col: Column) -> int:
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

    return int(np.flatnonzero(to_numpy(pc.is_null(col)))[0])


def _as_plain(col: Column) -> pa.ChunkedArray:
    """A chunked array with dictionary chunks decoded (Parquet and pandas categoricals) and
    view columns (``string_view``, ``binary_view``: Polars writes them) as large offsets
    columns, which every reader here takes (a view column may exceed 2 GiB)."""
    if isinstance(col, pa.Array):
        col = pa.chunked_array([col], col.type)
    if pa.types.is_dictionary(col.type):
        decoded = _decode_runs(col)
        col = decoded if decoded is not None else col.cast(col.type.value_type)
    if pa.types.is_string_view(col.type):
        col = col.cast(pa.large_string())
    elif pa.types.is_binary_view(col.type):
        col = col.cast(pa.large_binary())
    return col


def _decode_runs(col: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """A dictionary-encoded string column whose rows come in runs of one value (a run
    file's query column: every hit of a query together), decoded by repeating each
    run's value: a few steps per run, not per row (for the 7M-row benchmark run,
    reading the query column as a dictionary and decoding it so took 0.19 s of CPU
    against 0.31 s for pyarrow's decoding of its pages to strings). None when the
    column is not such a column (other value types, nulls, runs shorter than 64 rows
    on average): the caller decodes it with pyarrow."""
    vt = col.type.value_type
    if not (pa.types.is_string(vt) or pa.types.is_large_string(vt)) or col.null_count:
        return None
    it = col.type.index_type
    if not pa.types.is_integer(it):
        return None
    runs: list[tuple[list[npt.NDArray[np.uint8]], npt.NDArray[np.int64]]] = []  # per chunk: (value bytes of each run, run lengths)
    for ch in col.chunks:
        if len(ch) == 0:
            continue
        idx = to_numpy(ch.indices)
        start = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
        if start.shape[0] * 64 > idx.shape[0]:  # runs shorter than 64 rows: not worth it
            return None
        d = ch.dictionary
        if d.null_count or len(d) == 0:
            return None
        dodt: type[np.signedinteger[Any]] = np.int64 if pa.types.is_large_string(d.type) else np.int32
        _, ob, db = d.buffers()
        doff = np.frombuffer(ob, dtype=dodt, count=len(d) + 1, offset=d.offset * np.dtype(dodt).itemsize)
        head = idx[start]
        if int(head.min()) < 0 or int(head.max()) >= len(d):
            return None
        data = np.frombuffer(db, dtype=np.uint8) if db is not None else np.zeros(0, dtype=np.uint8)
        runs.append(([data[a:b] for a, b in zip(doff[head].tolist(), doff[head + 1].tolist())],
                     np.diff(np.r_[start, idx.shape[0]])))
    if not runs:
        return pa.chunked_array([], pa.string())
    values = [v for vs, _ in runs for v in vs]
    run_len = np.concatenate([r for _, r in runs])
    value_len = np.fromiter((v.shape[0] for v in values), dtype=np.int64, count=len(values))
    total = int(value_len @ run_len)
    big = total >= 2**31
    odt: type[np.signedinteger[Any]] = np.int64 if big else np.int32
    off = np.zeros(int(run_len.sum()) + 1, dtype=odt)
    np.cumsum(np.repeat(value_len.astype(odt), run_len), out=off[1:])
    out = np.empty(total, dtype=np.uint8)
    pos = 0
    for v, n in zip(values, run_len.tolist()):  # each run: its value n times
        k = v.shape[0] * n
        out[pos:pos + k].reshape(n, v.shape[0])[...] = v
        pos += k
    arr = pa.Array.from_buffers(pa.large_string() if big else pa.string(), off.shape[0] - 1,
                                [None, pa.py_buffer(off), pa.py_buffer(out)])
    return pa.chunked_array([arr], arr.type)


def id_column(col: Column, source: str, name: str, role: str, rows: Rows = None) -> pa.ChunkedArray:
    """An id column as a pyarrow ``string`` chunked array: text as is, integers in
    decimal; nulls, floats, other types, line breaks and NUL bytes refused naming the row."""
    col = _as_plain(col)
    t = col.type

    def row(i: int) -> int:
        return int(rows[i]) if rows is not None else i + 1

    if col.null_count:
        i = _first_null(col)
        raise InputError(f"{role} id (column {name!r}) is missing (null)", source, row(i))
    if pa.types.is_integer(t):
        import pyarrow.compute as pc  # lazy: importing it costs a clean read a tenth of a second or more

        col = pc.cast(col, pa.string())
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        pass
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            col = col.cast(pa.large_string() if pa.types.is_large_binary(t) else pa.string())
            col.validate(full=True)
        except (pa.ArrowInvalid, UnicodeDecodeError):
            ok = [i for i, ch in enumerate(col.to_pylist()) if _not_utf8(ch)]
            raise InputError(f"{role} id (column {name!r}) is not UTF-8", source, row(ok[0] if ok else 0)) from None
    elif pa.types.is_floating(t) or pa.types.is_decimal(t):
        raise InputError(f"{role} ids (column {name!r}) are floating-point numbers ({t}); "
                         f"write them as text or integers (1.0 is not the id 1)", source)
    else:
        raise InputError(f"{role} ids (column {name!r}) must be text or integers, not {t}"[:300], source)
    empty = _first_empty_row(col)
    if empty is not None:  # a TREC line cannot hold one, and a CSV row would show an empty cell
        raise InputError(f"{role} id (column {name!r}) is empty", source, row(empty))
    brk = _first_row_with_break(col)
    if brk is not None:
        raise InputError(f"{role} id {col[brk].as_py()!r} (column {name!r}) contains a line break or a NUL byte"[:300],
                         source, row(brk))
    if pa.types.is_large_string(col.type):
        if sum(c.nbytes for c in col.chunks) < 2**31 - 1:
            col = col.cast(pa.string())
        else:  # each chunk on its own (an encoder reads string chunks)
            col = pa.chunked_array([c.cast(pa.string()) for c in col.chunks], pa.string())
    return col


def _first_empty_row(col: pa.ChunkedArray) -> int | None:
    """The first row of a string column holding the empty string (equal neighbouring
    offsets), or None."""
    base = 0
    for ch in col.chunks:
        n = len(ch)
        if n:
            odt: type[np.signedinteger[Any]] = np.int64 if pa.types.is_large_string(ch.type) else np.int32
            off = np.frombuffer(ch.buffers()[1], dtype=odt, count=n + 1, offset=ch.offset * np.dtype(odt).itemsize)
            hit = np.flatnonzero(off[1:] == off[:-1])
            if hit.size:
                return base + int(hit[0])
        base += n
    return None


def _first_row_with_break(col: pa.ChunkedArray) -> int | None:
    """The first row of a string column holding LF, CR or NUL (a byte scan of the data
    buffers, not a regular expression per row), or None."""
    base = 0
    for ch in col.chunks:
        n = len(ch)
        if n == 0:
            continue
        odt: type[np.signedinteger[Any]] = np.int64 if pa.types.is_large_string(ch.type) else np.int32
        _, ob, db = ch.buffers()
        off = np.frombuffer(ob, dtype=odt, count=n + 1, offset=ch.offset * np.dtype(odt).itemsize)
        if db is not None and off[-1] > off[0]:
            data = np.frombuffer(db, dtype=np.uint8, count=int(off[-1] - off[0]), offset=int(off[0]))
            low = np.flatnonzero(data < 14)  # few: ids rarely hold control bytes
            if low.size:
                hit = low[(data[low] == 10) | (data[low] == 13) | (data[low] == 0)]
                if hit.size:
                    return base + int(np.searchsorted(off - off[0], hit[0], side="right")) - 1
        base += n
    return None


def _not_utf8(b: bytes) -> bool:
    try:
        bytes(b).decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def score_column(col: Column, source: str, name: str, rows: Rows = None) -> npt.NDArray[np.float64]:
    """A score column as finite float64; text parsed as the TREC reader parses scores."""
    col = _as_plain(col)
    t = col.type

    def row(i: int) -> int:
        return int(rows[i]) if rows is not None else i + 1

    if col.null_count:
        raise InputError(f"score (column {name!r}) is missing (null)", source, row(_first_null(col)))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        lines = np.asarray(rows, dtype=np.int64) if rows is not None else np.arange(1, len(col) + 1)
        return parse_float_col(col, lines, source, "score")
    if pa.types.is_boolean(t) or not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)):
        raise InputError(f"score column {name!r} must hold numbers, not {t}"[:300], source)
    try:
        if t == pa.float64():
            out = to_numpy(col)
        else:
            import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

            out = to_numpy(pc.cast(col, pa.float64()))
    except pa.ArrowInvalid as exc:
        if pa.types.is_integer(t):  # pyarrow's safe cast: an integer a float cannot hold exactly
            ints = col.to_pylist()  # the error's road only: Python ints hold uint64 and int64 alike
            i = next(k for k, v in enumerate(ints) if abs(v) > 2**53)
            raise InputError(f"score {ints[i]} is beyond ±2^53, where a float cannot hold every integer "
                             f"(column {name!r})", source, row(i)) from None
        raise InputError(f"score column {name!r}: {exc}"[:300], source) from None
    finite = np.isfinite(out)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(f"score is not finite: {float(out[i])!r}", source, row(i))
    return np.ascontiguousarray(out, dtype=np.float64)


def int_column(col: Column, source: str, name: str, what: str, rows: Rows = None) -> npt.NDArray[np.int64]:
    """An integer column (a grade, a rank) as int64 fitting 32 bits; an integral float
    is accepted, text is parsed as the TREC reader parses grades."""
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

    col = _as_plain(col)
    t = col.type

    def row(i: int) -> int:
        return int(rows[i]) if rows is not None else i + 1

    if col.null_count:
        raise InputError(f"{what} (column {name!r}) is missing (null)", source, row(_first_null(col)))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        lines = np.asarray(rows, dtype=np.int64) if rows is not None else np.arange(1, len(col) + 1)
        return parse_int_col(col, lines, source, what)
    if pa.types.is_integer(t):
        out = to_numpy(col).astype(np.int64) if not pa.types.is_uint64(t) else to_numpy(col)
        if pa.types.is_uint64(t):
            big = out > INT32_MAX
            if big.any():
                i = int(np.flatnonzero(big)[0])
                raise InputError(f"{what} out of range (must fit a 32-bit integer): {int(out[i])}", source, row(i))
            out = out.astype(np.int64)
    elif pa.types.is_floating(t):
        f = to_numpy(pc.cast(col, pa.float64()))
        bad = ~np.isfinite(f) | (f != np.round(f))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{what} is not an integer: {float(f[i])!r}", source, row(i))
        rng = (f < INT32_MIN) | (f > INT32_MAX)
        if rng.any():
            i = int(np.flatnonzero(rng)[0])
            raise InputError(f"{what} out of range (must fit a 32-bit integer): {float(f[i])!r}", source, row(i))
        out = f.astype(np.int64)
    else:
        raise InputError(f"{what} column {name!r} must hold integers, not {t}"[:300], source)
    rng = (out < INT32_MIN) | (out > INT32_MAX)
    if rng.any():
        i = int(np.flatnonzero(rng)[0])
        raise InputError(f"{what} out of range (must fit a 32-bit integer): {int(out[i])}", source, row(i))
    return np.ascontiguousarray(out, dtype=np.int64)


def table_digest(*arrays: Column | npt.NDArray[Any]) -> Digest:
    """A content digest for a table that is not a file (a DataFrame, a pyarrow Table):
    sha256 over the chosen columns' values (ids as length-prefixed UTF-8, values as
    little-endian float64 / int64), independent of how the table is chunked."""
    h = hashlib.sha256()
    for arr in arrays:
        if isinstance(arr, np.ndarray):
            h.update(b"n" + str(arr.dtype).encode() + np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes())
            continue
        lengths, data = hashlib.sha256(), hashlib.sha256()  # two streams: chunk borders do not show
        for ch in (arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]):
            if len(ch) == 0:
                continue
            _, ob, db = ch.buffers()
            off = np.frombuffer(ob, dtype=np.int32, count=len(ch) + 1, offset=ch.offset * 4)
            lengths.update(np.diff(off).astype("<i8").tobytes())
            if db is not None:
                data.update(memoryview(db)[int(off[0]):int(off[-1])])
        h.update(b"s" + lengths.digest() + data.digest())
    return Digest(hexdigest=h.hexdigest())


def score_from_rank(rank: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The score of a ranks-only run (MS MARCO's ``qid docid rank``): ``-rank`` as float64,
    so score-descending order is rank-ascending order and no two ranks of a query tie
    (a rank repeated in one query is refused before)."""
    return -np.asarray(rank, dtype=np.float64)


def check_ranks(qid: Column, rank: npt.NDArray[np.int64], source: str, rows: Rows = None) -> None:
    """Ranks are integers >= 1 and no rank repeats within a query (so the derived
    scores never tie); each refusal names the row (and the first row of a repeat)."""
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

    def row(i: int) -> int:
        return int(rows[i]) if rows is not None else i + 1

    low = rank < 1
    if low.any():
        i = int(np.flatnonzero(low)[0])
        raise InputError(f"rank must be at least 1, not {int(rank[i])}", source, row(i))
    if rank.size < 2:
        return
    codes = to_numpy(pc.dictionary_encode(qid.combine_chunks() if hasattr(qid, "combine_chunks") else qid).indices)
    codes = codes.astype(np.int64)
    repeat = first_repeat(codes * (int(rank.max()) + 1) + rank)
    if repeat is not None:
        a, b = repeat
        raise InputError(f"rank {int(rank[b])} appears twice in query {qid[b].as_py()!r} (first at line {row(a)}); "
                         "a ranks-only run cannot hold ties", source, row(b))


def run_table(table: pa.Table, source: str, columns: ColumnMapping | None = None, *, name: str | None = None,
              digest: Digest | None = None, rows: Rows = None) -> RawLane:
    """A run held as a pyarrow Table, as a :class:`rows.RawLane` -- exactly what
    ``readers.read_lane`` gives for the same data as a TREC file.

    ``source`` names the table in errors and in report.json's inputs (a path, or a
    label such as ``<DataFrame bm25>``); ``name`` is the lane name (default: from
    ``source`` as for a path). ``digest``: the file's (``files.Digest``); default a
    digest of the table's content (:func:`table_digest`). ``rows``: the source line of
    each row when it is not row + 1 (JSON Lines)."""
    lane_name = name if name is not None else lane_name_from_path(source)
    check_lane_name(lane_name, source)
    r = resolve_columns(table.column_names, columns, "run", source)
    if table.num_rows == 0:
        raise InputError("empty table (no rows)", source)
    qid = id_column(table.column(r.query), source, r.query, "query", rows)
    doc = id_column(table.column(r.doc), source, r.doc, "doc", rows)
    if r.kind == "rank":
        rank = int_column(table.column(r.value), source, r.value, "rank", rows)
        check_ranks(qid, rank, source, rows)
        score = score_from_rank(rank)
    else:
        score = score_column(table.column(r.value), source, r.value, rows)
    line: Lines = RowLines(len(score)) if rows is None else np.asarray(rows, dtype=np.int64)
    if digest is None:
        digest = table_digest(qid, doc, score)
    return RawLane(lane_name, source, qid, doc, score, line, [], "", digest, format="table", columns=r.as_dict())


def qrels_table(table: pa.Table, source: str, columns: ColumnMapping | None = None, *, digest: Digest | None = None,
                rows: Rows = None) -> RawQrels:
    """Qrels held as a pyarrow Table, as a :class:`rows.RawQrels` -- exactly what
    ``readers.read_qrels`` gives for the same data as a TREC file (see :func:`run_table`)."""
    r = resolve_columns(table.column_names, columns, "qrels", source)
    if table.num_rows == 0:
        raise InputError("empty table (no rows)", source)
    qid = id_column(table.column(r.query), source, r.query, "query", rows)
    doc = id_column(table.column(r.doc), source, r.doc, "doc", rows)
    grade = int_column(table.column(r.value), source, r.value, "grade", rows)
    line: Lines = RowLines(len(grade)) if rows is None else np.asarray(rows, dtype=np.int64)
    if digest is None:
        digest = table_digest(qid, doc, grade)
    return RawQrels(source, qid, doc, grade, line, digest=digest, format="table", columns=r.as_dict())


@overload
def read_parquet(source: str | bytes | bytearray, path: str, what: Literal["run"], columns: ColumnMapping | None,
                 digest: Digest, name: str | None = None) -> RawLane: ...


@overload
def read_parquet(source: str | bytes | bytearray, path: str, what: Literal["qrels"], columns: ColumnMapping | None,
                 digest: Digest, name: str | None = None) -> RawQrels: ...


def read_parquet(source: str | bytes | bytearray, path: str, what: str, columns: ColumnMapping | None, digest: Digest,
                 name: str | None = None) -> RawLane | RawQrels:
    """A run or qrels Parquet file (``source``: its path, or its decompressed bytes),
    reading only the three chosen columns, on pyarrow's threads. Rows are numbered from
    1 in file order.

    A query column stored as a dictionary in every row group (pyarrow's writer does so
    for ids that repeat) is read as one and decoded run by run (:func:`_decode_runs`);
    the values are the same."""
    def open_at(**kw: Any) -> Any:
        src = source if isinstance(source, str) else pa.BufferReader(pa.py_buffer(source))
        return _parquet_reader(src, **kw)

    try:
        reader = open_at()
        names = reader.schema_arrow.names
        r = resolve_columns(names, columns, what, path)
        wanted = list(dict.fromkeys((r.query, r.doc, r.value)))
        paths = [".".join(p) if isinstance(p, (list, tuple)) else str(p) for p in reader.column_paths]
        if all(paths.count(c) == 1 for c in wanted) and len(set(names)) == len(names):
            if _dictionary_pages(reader, paths.index(r.query), r.query):
                reader = open_at(read_dictionary=[paths.index(r.query)], metadata=reader.metadata)
            table = reader.read_all(column_indices=[paths.index(c) for c in wanted], use_threads=True)
        else:  # nested or repeated names: pyarrow.parquet maps them to leaf columns
            import pyarrow.parquet as pq  # lazy: it imports pyarrow's filesystem layer (see _parquet_reader)

            table = pq.ParquetFile(source if isinstance(source, str) else pa.BufferReader(pa.py_buffer(source))
                                   ).read(columns=wanted, use_threads=True)
    except InputError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not a readable Parquet file ({exc})"[:300], path) from None
    mapping = ColumnMapping(query=r.query, doc=r.doc, **{r.kind: r.value})
    if what == "run":
        return run_table(table, path, mapping, name=name, digest=digest)
    return qrels_table(table, path, mapping, digest=digest)


def _parquet_reader(src: Any, **kw: Any) -> Any:
    """pyarrow's Parquet file reader over ``src``. Taken from ``pyarrow._parquet``, which
    ``pyarrow.parquet`` wraps: importing the wrapper also imports pyarrow's filesystem
    layer (ssl, the cloud clients), a tenth of a second or more of every process that
    reads a Parquet file; the wrapper is the fallback where the module is not there."""
    try:
        from pyarrow._parquet import ParquetReader  # lazy: only a Parquet input needs the reader
    except ImportError:  # pragma: no cover - every pyarrow this package supports (>= 14) has it
        import pyarrow.parquet as pq  # lazy: see above

        return pq.ParquetFile(src, **kw).reader
    reader = ParquetReader()
    reader.open(src, **kw)
    return reader


def _dictionary_pages(reader: Any, col: int, name: str) -> bool:
    """Whether leaf column ``col`` (the top-level column ``name``) is a string column
    stored as a dictionary in every row group: a dictionary page, and at most 4 bytes
    a value in all (so the writer did not fall back to plain pages, which pyarrow
    would have to encode as a dictionary again: 7x the time of reading them plain)."""
    meta = reader.metadata
    if meta.num_row_groups == 0 or meta.num_rows == 0:
        return False
    t = reader.schema_arrow.field(name).type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return False
    for g in range(meta.num_row_groups):
        c = meta.row_group(g).column(col)
        if not c.has_dictionary_page or c.total_uncompressed_size > 4 * max(1, c.num_values):
            return False
    return True
