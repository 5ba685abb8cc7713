"""TREC-style text: runs (``qid Q0 docid rank score tag``), qrels (``qid 0 docid
grade``), MS MARCO runs and BEIR qrels (three fields) and tables under a header line
naming their columns (``formats.header_columns``, read through ``columns``).

Every reader returns string columns plus the 1-based source line of each row, so
that later checks (duplicates, conflicting grades) can still name a line. Every
malformed input raises :class:`InputError` as ``FILE:LINE: what is wrong``.

Two roads read a TREC file, and they must give the same rows. The *fast path* takes
a clean file: byte checks (``_ChunkCheck``), streamed over an uncompressed run or
over the bytes in memory (gzip, qrels), then pyarrow's CSV reader. Whenever
anything is unusual it returns None and the *general reader* reads the file: it
decodes the text, splits lines and whitespace-separated fields with
pyarrow compute kernels, and names the line of the first problem. So the fast path
only ever declines; every error message comes from the general reader (or from
``files``, for bytes that are not text). The invariants that keep them identical:

=====================  =====================================  ========================================
                       fast path (clean files only)           general reader (everything else)
=====================  =====================================  ========================================
encoding               UTF-8 (incremental check; pure ASCII   UTF-8 strict (``files.decode_text``);
                       ids read as binary, viewed as string)  not UTF-8 or a NUL byte: error, line
BOM                    declines (at the start, and anywhere   dropped at the start; anywhere else an
                       else: U+FEFF seen while decoding)      error naming the line
field separator        one byte, from the first line: a tab   any run of ASCII whitespace
                       (no space there) or a space (no tab);
                       any other byte below 0x21 declines
empty fields           declines (two separators touching,     impossible (runs of whitespace split)
                       a line starting with one)
CR                     declines                               CRLF: the CR is stripped (whitespace);
                                                              a lone CR is a line end
                                                              (``files.decode_text`` makes it LF)
blank lines            declines (two newlines touching)       skipped, still counted
comments (``#...``)    declines (``#`` first on a line)       skipped, still counted
line numbers           row i is line i + 1 (``RowLines``),    each ``\\n`` counts, 1-based, kept rows
                       true because nothing is skipped        carry their line
fields, run            exactly 6, else declines               fewer than 6: error; more: the extras
                                                              ignored with one ``extra_columns``
                                                              warning (as trec_eval)
fields, qrels          exactly 4, else declines               exactly 4, else error
fields, 3-field        exactly 3, else declines               exactly 3, else error
read columns           run: qid, doc, score (Q0 and rank      the same; Q0, rank and iteration are
                       unread); qrels: qid, doc, grade        never checked
score                  pyarrow CSV float64, finite, else      ``pc.cast`` to float64 (the first
                       declines                               refused value named by bisection with
                                                              that cast); not finite: error
grade                  ``-?[0-9]{1,9}`` (fits 32 bits), else  ``[+-]?[0-9]+`` (trec_eval's atoi on a
                       declines                               well-formed one), must fit 32 bits
tag                    the 6th field of the last line         the same
empty content          declines                               error (``empty file``, or ``only blank
                                                              or comment lines``)
JSON                   told before (``formats.detect``)       the same; then ``json_pairs``: every
                                                              pair with the line of its doc key; a
                                                              repeated qid key, or doc key in one
                                                              query, is an error naming both lines
compression            by magic bytes (gzip, bzip2, xz, zstd, the same (``files.read_bytes``)
                       lz4), content in memory, at most
                       ``files.input_size_limit()`` bytes
pipes, FIFOs           read whole into memory (bounded as     the same
                       compressed content), then as gzip
digest                 sha256 of the stored bytes (from       the same
                       memory, or hashed later from the file
                       for a plain run: ``files.Digest``)
=====================  =====================================  ========================================

The format is told before either road runs (``formats.detect`` on the first 64 KiB
of content), so a JSON run written on one line with 6 single-space fields
(``{"q": {"d": 1, "e": 2 }}``) is read as JSON, never as a TREC row. MS MARCO runs
(``qid docid rank``) and BEIR qrels (``query-id corpus-id score``, the header line
skipped) have the same two roads with 3 fields: the fast path reads the rank or
grade as ``-?[0-9]{1,9}``, the general reader as a decimal integer (as a grade), and
a rank must be at least 1 and unique within its query (score = -rank; these two
checks run on the columns either road read, with the same messages).
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# pyarrow and its CSV reader are imported with the module, not on first use, so the
# first call in a fresh process costs what later calls cost. pyarrow.compute (~30 ms
# of wrappers built at import) is not: clean runs and qrels are read, encoded and
# ordered without it; the general reader and rarer paths import it when they run.
import pyarrow as pa
import pyarrow.csv as pcsv

from ..errors import InputError, InputWarning
from ..parallel import run_all
from .arrow import arrow_ints, arrow_mask, string_lengths, to_numpy
from .columns import check_ranks, qrels_table, run_table, score_from_rank
from .files import Digest, compression_of, read_bytes
from .formats import ColumnMapping, header_columns
from .rows import RawLane, RawQrels, RowLines, parse_float_col, parse_int_col

#: bytes held in memory: the content of a compressed file or a pipe, or a file read whole
Content = bytes | bytearray


# ---------------------------------------------------------------------------
# the readers: the fast path first where it may run, the general reader otherwise


def run_from_plain_file(path: str, lane_name: str, fmt: str) -> RawLane | None:
    """The fast path over an uncompressed file (``fmt`` "trec" or "msmarco"): one
    streaming pass of byte checks, then pyarrow reads the file itself; None whenever
    the general reader must read it."""
    scan = _scan_plain(path)
    if scan is None or scan.clean is False or scan.delim is None:
        return None
    if fmt == "trec":
        fast = _parse_run(path, scan.delim, scan.clean)
        if fast is None:
            return None
        qid, doc, score = fast
        return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], scan.tag, Digest(path=path))
    fast = _parse_msmarco(path, scan.delim, scan.clean, path)
    if fast is None:
        return None
    qid, doc, score = fast
    return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], "", Digest(path=path))


def run_from_bytes(raw: Content, path: str, lane_name: str, fmt: str, digest: Digest) -> RawLane | None:
    """The fast path over a run held in memory (``fmt`` "trec" or "msmarco"); None
    whenever the general reader must read it (or the format is another)."""
    if fmt == "trec":
        fast = _read_run_fast(raw)
        if fast is not None:
            qid, doc, score, tag = fast
            return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], tag, digest)
    if fmt == "msmarco":
        layout = _clean_layout(raw)
        fast3 = _parse_msmarco(pa.BufferReader(pa.py_buffer(raw)), *layout, path) if layout is not None else None
        if fast3 is not None:
            qid, doc, score = fast3
            return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], "", digest)
    return None


def run_from_text(text: str, path: str, lane_name: str, fmt: str, columns: ColumnMapping | None,
                  digest: Digest) -> RawLane:
    """The general reader of a run (``fmt`` "trec", "msmarco" or "tsv"): every problem
    named by its line."""
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    if fmt == "tsv":
        table, rows = _header_table(fields, path, "run", columns)
        return run_table(table, path, columns, name=lane_name, digest=digest, rows=rows)
    if fmt == "msmarco":
        qid, doc, score = _msmarco_general(fields, path)
        return RawLane(lane_name, path, qid, doc, score, fields.line, [], "", digest)
    short = fields.n_tokens < 6
    if short.any():
        i = int(np.flatnonzero(short)[0])
        if i:  # a bad score on an earlier line is the first error in the file
            head = Fields(fields.tokens.slice(0, i), fields.n_tokens[:i], fields.line[:i])
            parse_float_col(_column(head, 4), head.line, path, "score")
        raise InputError(
            f"expected 6 fields 'qid Q0 docid rank score tag', found {int(fields.n_tokens[i])}", path, int(fields.line[i])
        )
    warnings: list[InputWarning] = []
    extra = fields.n_tokens > 6
    if extra.any():
        i = int(np.flatnonzero(extra)[0])
        warnings.append(InputWarning("extra_columns", int(extra.sum()),
                                     "lines with fields after the 6th (ignored, as trec_eval does)",
                                     f"{path}:{int(fields.line[i])}"))
    score = parse_float_col(_column(fields, 4), fields.line, path, "score")
    tag = _column(fields, 5)[-1].as_py() if fields.line.size else ""
    return RawLane(lane_name, path, _column(fields, 0), _column(fields, 2), score, fields.line, warnings, tag, digest)


def qrels_from_bytes(raw: Content, path: str, fmt: str, digest: Digest) -> RawQrels | None:
    """The fast path over qrels held in memory (``fmt`` "trec" or "beir"); None whenever
    the general reader must read them (or the format is another)."""
    if fmt == "trec":
        fast = _read_qrels_fast(raw)
        if fast is not None:
            qid, doc, grade = fast
            return RawQrels(path, qid, doc, grade, RowLines(len(grade)), digest=digest)
    if fmt == "beir":
        beir = _read_beir_fast(raw, path)
        if beir is not None:
            qid, doc, grade, first = beir
            return RawQrels(path, qid, doc, grade, RowLines(len(grade), first), digest=digest)
    return None


def qrels_from_text(text: str, path: str, fmt: str, columns: ColumnMapping | None, digest: Digest) -> RawQrels:
    """The general reader of qrels (``fmt`` "trec", "beir" or "tsv"): every problem named
    by its line. BEIR qrels under a header line naming other known columns are read as
    a header-named table."""
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    if fmt == "beir":
        first = [t.as_py() for t in fields.tokens[0].values]
        if header_columns(first, "qrels", path, columns) is not None:
            fmt = "tsv"
        else:
            wrong = fields.n_tokens != 3
            if wrong.any():
                i = int(np.flatnonzero(wrong)[0])
                raise InputError(f"expected 3 fields 'query-id corpus-id score' (BEIR qrels), found "
                                 f"{int(fields.n_tokens[i])}", path, int(fields.line[i]))
            grade = parse_int_col(_column(fields, 2), fields.line, path, "grade")
            return RawQrels(path, _column(fields, 0), _column(fields, 1), grade, fields.line, digest=digest)
    if fmt == "tsv":
        table, rows = _header_table(fields, path, "qrels", columns)
        return qrels_table(table, path, columns, digest=digest, rows=rows)
    wrong = fields.n_tokens != 4
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected 4 fields 'qid 0 docid grade', found {int(fields.n_tokens[i])}", path, int(fields.line[i]))
    grade = parse_int_col(_column(fields, 3), fields.line, path, "grade")
    return RawQrels(path, _column(fields, 0), _column(fields, 2), grade, fields.line, digest=digest)


# ---------------------------------------------------------------------------
# three-field text (MS MARCO runs, BEIR qrels) and header-named tables


#: (qid, doc, value) columns read by the fast path
Read3 = tuple[pa.ChunkedArray, pa.ChunkedArray, npt.NDArray[Any]]


def _parse_msmarco(source: Any, delim: bytes, clean: bool | None, path: str) -> Read3 | None:
    """(qid, doc, score) of a clean ``qid docid rank`` file, score = -rank; None when it
    does not parse as 3 fields with ranks of 1 to 9 digits."""
    tab = _read_columns(source, delim, clean, ["qid", "doc", "rank"], {"qid": "str", "doc": "str", "rank": pa.binary()})
    if tab is None:
        return None
    rank = _small_ints(tab.column("rank"))
    if rank is None:
        return None
    qid, doc = _id_columns(tab, clean, ("qid", "doc"))
    check_ranks(qid, rank, path)
    return qid, doc, score_from_rank(rank)


def _msmarco_general(fields: Fields, path: str) -> tuple[pa.Array, pa.Array, npt.NDArray[np.float64]]:
    """(qid, doc, score) of a ``qid docid rank`` file read by the general reader, score = -rank."""
    wrong = fields.n_tokens != 3
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected 3 fields 'qid docid rank' (an MS MARCO run), found {int(fields.n_tokens[i])}",
                         path, int(fields.line[i]))
    rank = parse_int_col(_column(fields, 2), fields.line, path, "rank")
    qid = _column(fields, 0)
    check_ranks(qid, rank, path, fields.line)
    return qid, _column(fields, 1), score_from_rank(rank)


def _read_beir_fast(raw: Content, path: str) -> tuple[pa.ChunkedArray, pa.ChunkedArray, npt.NDArray[np.int64], int] | None:
    """(qid, doc, grade, first line) of clean BEIR qrels -- 3 fields, the header line
    ``query-id corpus-id score`` optional -- or None for the general reader."""
    layout = _clean_layout(raw)
    if layout is None:
        return None
    delim, clean = layout
    nl = raw.find(b"\n")
    first = bytes(raw[:nl if nl >= 0 else len(raw)]).split(delim)
    skip = 1 if [f.decode("utf-8", "replace") for f in first] == ["query-id", "corpus-id", "score"] else 0
    tab = _read_columns(pa.BufferReader(pa.py_buffer(raw)), delim, clean, ["qid", "doc", "grade"],
                        {"qid": "str", "doc": "str", "grade": pa.binary()}, skip=skip)
    if tab is None:
        return None
    grade = _small_ints(tab.column("grade"))
    if grade is None:
        return None
    qid, doc = _id_columns(tab, clean, ("qid", "doc"))
    return qid, doc, grade, 1 + skip


def _header_table(fields: Fields, path: str, what: str, columns: ColumnMapping | None) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """The lines under a header line as a table of text columns named by the header, and
    the source line of each row (every line as many fields as the header)."""
    names = [t.as_py() for t in fields.tokens[0].values]
    if header_columns(names, what, path, columns) is None:
        raise InputError(f"the first line {' '.join(names)!r} does not name known {what} columns"[:300], path,
                         int(fields.line[0]))
    if len(set(names)) != len(names):
        raise InputError("a column is named twice in the header line", path, int(fields.line[0]))
    body = Fields(fields.tokens.slice(1), fields.n_tokens[1:], fields.line[1:])
    if body.line.size == 0:
        raise InputError("no rows under the header line", path, int(fields.line[0]))
    wrong = body.n_tokens != len(names)
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected {len(names)} fields as in the header line, found {int(body.n_tokens[i])}", path,
                         int(body.line[i]))
    table = pa.table({n: _column(body, k) for k, n in enumerate(names)})
    return table, body.line


# ---------------------------------------------------------------------------
# the fast path: clean files, byte checks then pyarrow's CSV reader


_SCAN_STEP = 1 << 20  # bytes per slice of the byte checks (fits L2)


def _delimiter(first_line: Content) -> bytes | None:
    if b"\t" in first_line and b" " not in first_line:
        return b"\t"
    if b" " in first_line and b"\t" not in first_line:
        return b" "
    return None


class _ChunkCheck:
    """The fast path's byte checks, fed slice by slice (each slice starting with the last
    byte of the previous one): no two separators (``delim`` or newline) touch, the
    content does not start with a separator or end with ``delim``, no byte below 0x21
    other than the separators (so no CR, NUL, other whitespace), no line starts with
    ``#``, and the bytes are UTF-8 with no BOM (U+FEFF). ``result``: True (all ASCII), None (clean, some
    UTF-8 beyond ASCII), False (leave the file to the general reader)."""

    def __init__(self, delim: int) -> None:
        self.delim = delim
        self.ok = True
        self.ascii = True
        self.utf8: codecs.IncrementalDecoder | None = None  # once a non-ASCII byte was seen
        self.last: int | None = None
        self._s: npt.NDArray[np.bool_] | None = None
        self._t: npt.NDArray[np.bool_] | None = None

    def feed(self, c: npt.NDArray[np.uint8], overlap: bool, has_hash: bool = True) -> None:
        """``c`` holds the new bytes, preceded by one byte of the previous slice if ``overlap``;
        ``has_hash`` False: the caller knows ``c`` holds no ``#`` (the comment check is skipped)."""
        if not self.ok or c.shape[0] == 0:
            return
        k = c.shape[0]
        if self._s is None or self._t is None or self._s.shape[0] < k:
            self._s, self._t = np.empty(k, dtype=bool), np.empty(k, dtype=bool)
        sk, tk = self._s[:k], self._t[:k]
        if not overlap and c[0] in (self.delim, 10, 35):
            self.ok = False
            return
        np.equal(c, 10, out=tk)
        if has_hash and np.any(tk[:-1] & (c[1:] == 35)):  # '#' after a newline: a comment line
            self.ok = False
            return
        np.equal(c, self.delim, out=sk)
        sk |= tk
        lo = 1 if overlap else 0  # the overlap byte was counted with its own slice
        if np.count_nonzero(c[lo:] < 0x21) != np.count_nonzero(sk[lo:]):
            self.ok = False
            return
        np.logical_and(sk[1:], sk[:-1], out=tk[:-1])
        if tk[:-1].any():
            self.ok = False
            return
        if int(c[lo:].max()) >= 0x80 or self.utf8 is not None:
            if self.utf8 is None:
                self.utf8 = codecs.getincrementaldecoder("utf-8")()
            try:
                if "\ufeff" in self.utf8.decode(c[lo:].tobytes()):  # a BOM past the start
                    self.ok = False
                    return
            except UnicodeDecodeError:
                self.ok = False
                return
        self.last = int(c[-1])

    def result(self) -> bool | None:
        """True: clean, all ASCII; None: clean, some UTF-8 beyond ASCII; False: not clean."""
        if not self.ok or self.last is None or self.last == self.delim:
            return False
        if self.utf8 is not None:
            try:
                self.utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                return False
            return None
        return True


def _bytes_clean(raw: Content | memoryview, delim: int) -> bool | None:
    """The fast path's byte checks over content held in memory (see ``_ChunkCheck``)."""
    b = np.frombuffer(raw, dtype=np.uint8)
    chk = _ChunkCheck(delim)
    step = _SCAN_STEP
    find = getattr(raw, "find", None)  # bytes, bytearray: memchr instead of a numpy pass
    for i in range(0, b.shape[0], step):
        lo = max(0, i - 1)
        chk.feed(b[lo:i + step], overlap=i > 0, has_hash=find is None or find(b"#", lo, i + step) >= 0)
        if not chk.ok:
            return False
    return chk.result()


@dataclass
class _Scan:
    delim: bytes | None
    clean: bool | None  # as _ChunkCheck.result; False when no delimiter was found
    tag: str


_PARALLEL_SCAN_BYTES = 16 << 20  # from this size the two halves of a file are checked side by side


def _check_range(path: str, lo: int, hi: int, delim: int) -> tuple[_ChunkCheck, bytes]:
    """Byte checks of ``path[lo:hi]`` read through a reused 1 MiB buffer; ``lo`` is the
    start of the file or of a line. Returns the check and the range's last 4 KiB."""
    step = _SCAN_STEP
    chk = _ChunkCheck(delim)
    raw = bytearray(step + 1)  # its find (memchr) tells whether a slice holds a '#' at all
    buf = np.frombuffer(raw, dtype=np.uint8)
    view = memoryview(raw)  # the same bytes as ``buf``
    tail = b""
    with open(path, "rb") as fh:
        fh.seek(lo)
        pos, first = lo, True
        while pos < hi and chk.ok:  # a failed check leaves the file to the general reader
            want = min(step, hi - pos)
            n = fh.readinto(view[1:1 + want])
            if not n:
                break
            if first:
                chk.feed(buf[1:1 + n], overlap=False, has_hash=raw.find(b"#", 1, 1 + n) >= 0)
                first = False
            else:
                chk.feed(buf[:1 + n], overlap=True, has_hash=raw.find(b"#", 0, 1 + n) >= 0)
            tail = (tail + bytes(view[max(1, 1 + n - 4096):1 + n]))[-4096:]
            buf[0] = buf[n]
            pos += n
    return chk, tail


def _scan_plain(path: str) -> _Scan | None:
    """One streaming pass over an uncompressed file through reused 1 MiB buffers: the
    fast path's byte checks and the tag of its last line -- without holding or
    mapping the whole file (pyarrow then reads it itself). A large file is checked
    as two halves split after a newline, on two threads; the verdict is the same.
    None for compressed content."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(_SCAN_STEP)
            if compression_of(head[:6]) is not None:
                return None
            nl = head.find(b"\n")
            delim = None if head[:3] == b"\xef\xbb\xbf" else _delimiter(head[:nl] if nl >= 0 else head)
            if delim is None:
                return _Scan(None, False, "")
            split = None
            if size >= _PARALLEL_SCAN_BYTES:
                fh.seek(size // 2)
                probe = fh.read(1 << 16)
                k = probe.find(b"\n")
                if k >= 0 and size // 2 + k + 1 < size:
                    split = size // 2 + k + 1
        if split is None:
            checks = [_check_range(path, 0, size, delim[0])]
        else:
            checks = run_all([lambda: _check_range(path, 0, split, delim[0]),
                              lambda: _check_range(path, split, size, delim[0])])
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
    results = [chk.result() for chk, _ in checks]
    clean = False if False in results else (None if None in results else True)
    tag = ""
    if clean is not False:
        tail = checks[-1][1]
        end = tail.rstrip(b"\n")
        last = end[end.rfind(b"\n") + 1:].split(delim)
        tag = last[5].decode("utf-8", "replace") if len(last) > 5 else ""
    return _Scan(delim, clean, tag)


def _read_columns(source: Any, delim: bytes, clean: bool | None, names: list[str], types: dict[str, Any],
                  skip: int = 0) -> pa.Table | None:
    """pyarrow's CSV reader over a file (path) or buffer whose bytes passed the checks,
    reading only the columns in ``types`` (``"str"`` for an id column): a table, or
    None when the content does not parse as ``len(names)`` fields per line."""
    str_t = pa.binary() if clean is True else pa.string()  # ASCII needs no UTF-8 validation
    try:
        tab = pcsv.read_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 22, skip_rows=skip),
            parse_options=pcsv.ParseOptions(delimiter=delim.decode(), quote_char=False, double_quote=False,
                                            escape_char=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={k: str_t if t == "str" else t for k, t in types.items()},
                include_columns=list(types), null_values=[], strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
            memory_pool=pa.system_memory_pool(),  # see cli.process_setup (ARROW_DEFAULT_MEMORY_POOL)
        )
    except (pa.ArrowException, UnicodeDecodeError, OSError):
        return None
    return tab if tab.num_rows else None


def _id_columns(tab: pa.Table, clean: bool | None, names: tuple[str, ...]) -> list[pa.ChunkedArray]:
    """The id columns as pyarrow strings (ASCII read as binary is viewed as string)."""
    cols = [tab.column(n) for n in names]
    if clean is True:
        cols = [pa.chunked_array([c.view(pa.string()) for c in col.chunks], pa.string()) for col in cols]
    return cols


def _clean_layout(raw: Content) -> tuple[bytes, bool | None] | None:
    """(delimiter, ``_ChunkCheck`` verdict) for content held in memory that passes the
    fast path's byte checks; None when it does not."""
    if not len(raw) or raw[:3] == b"\xef\xbb\xbf":
        return None
    nl = raw.find(b"\n")
    delim = _delimiter(raw[: nl if nl >= 0 else len(raw)])
    if delim is None:
        return None
    clean = _bytes_clean(raw, delim[0])
    return None if clean is False else (delim, clean)


def _parse_run(source: Any, delim: bytes, clean: bool | None) -> Read3 | None:
    """(qid, doc, score) of a run whose bytes passed the checks, or None when it does
    not parse as 6 fields with finite scores."""
    tab = _read_columns(source, delim, clean, ["qid", "q0", "doc", "rank", "score", "tag"],
                        {"qid": "str", "doc": "str", "score": pa.float64()})
    if tab is None:
        return None
    score_col = tab.column("score")
    if score_col.null_count:
        return None
    score = to_numpy(score_col)
    if not np.isfinite(score).all():
        return None
    qid, doc = _id_columns(tab, clean, ("qid", "doc"))
    return qid, doc, score


def _read_run_fast(raw: Content | str) -> tuple[pa.ChunkedArray, pa.ChunkedArray, npt.NDArray[np.float64], str] | None:
    """Columnar fast path for a clean run held in memory (bytes): every line exactly 6
    non-empty fields joined by one delimiter (a single space, or a single tab), no
    comment, blank or CR lines, no other whitespace or control bytes, valid UTF-8,
    finite scores. Returns (qid, doc, score, tag) or None whenever anything is unusual;
    the general reader (which names lines) takes over. A path is read first."""
    if not isinstance(raw, (bytes, bytearray)):
        raw = read_bytes(str(raw))[1]
    layout = _clean_layout(raw)
    if layout is None:
        return None
    delim, clean = layout
    parsed = _parse_run(pa.BufferReader(pa.py_buffer(raw)), delim, clean)
    if parsed is None:
        return None
    end = len(raw)
    while end and raw[end - 1:end] == b"\n":
        end -= 1
    last = raw[raw.rfind(b"\n", 0, end) + 1:end].split(delim)
    return (*parsed, last[5].decode("utf-8") if len(last) > 5 else "")


def _read_qrels_fast(raw: Content) -> Read3 | None:
    """Columnar fast path for clean qrels held in memory: the run fast path's byte
    checks (see ``_ChunkCheck``), exactly 4 fields per line, and every grade an
    optional ``-`` and 1 to 9 ASCII digits (so it fits 32 bits). Returns (qid, doc,
    grade) or None whenever anything is unusual; the general reader (which names
    lines) takes over."""
    layout = _clean_layout(raw)
    if layout is None:
        return None
    delim, clean = layout
    tab = _read_columns(pa.BufferReader(pa.py_buffer(raw)), delim, clean, ["qid", "iter", "doc", "grade"],
                        {"qid": "str", "doc": "str", "grade": pa.binary()})
    if tab is None:
        return None
    grade = _small_ints(tab.column("grade"))
    if grade is None:
        return None
    qid, doc = _id_columns(tab, clean, ("qid", "doc"))
    return qid, doc, grade


def _small_ints(col: pa.ChunkedArray) -> npt.NDArray[np.int64] | None:
    """int64 values of a binary column whose every value is ``-?[0-9]{1,9}``; else None."""
    out = []
    for ch in col.chunks:
        _, ob, db = ch.buffers()
        off = np.frombuffer(ob, dtype=np.int32, count=len(ch) + 1, offset=ch.offset * 4).astype(np.int64)
        data = np.frombuffer(db, dtype=np.uint8, count=int(off[-1] - off[0]), offset=int(off[0])) if db else np.zeros(0, np.uint8)
        off -= off[0]
        start, end = off[:-1], off[1:]
        neg = np.zeros(start.shape[0], dtype=bool)
        has = end > start
        neg[has] = data[start[has]] == 45  # '-'
        first = start + neg
        n_dig = end - first
        if n_dig.min(initial=1) < 1 or n_dig.max(initial=1) > 9:
            return None
        digit = data - 48
        if data.size:
            is_digit = digit <= 9  # uint8: bytes below '0' wrap above 9
            is_digit[start[neg]] = True  # the sign
            if not is_digit.all():
                return None
        value = np.zeros(start.shape[0], dtype=np.int64)
        for k in range(int(n_dig.max(initial=0))):  # k-th digit from the right
            pos = end - 1 - k
            ok = pos >= first
            value[ok] += digit[pos[ok]].astype(np.int64) * 10**k
        value[neg] = -value[neg]
        out.append(value)
    return np.concatenate(out) if out else np.zeros(0, np.int64)


# ---------------------------------------------------------------------------
# the general reader: whitespace-separated fields, every problem named by its line


@dataclass
class Fields:
    """Kept (non-blank, non-comment) lines of a whitespace-separated file."""

    tokens: pa.ListArray  # of strings, one list per kept line
    n_tokens: npt.NDArray[np.int64]  # per kept line
    line: npt.NDArray[np.int64]  # 1-based source line per kept line


def split_fields(text: str) -> Fields:
    """Split text into lines and ASCII-whitespace fields; drop blank and ``#`` lines.

    Line numbers count every ``\n`` (CRLF is fine: ``\r`` is whitespace; a lone CR was
    made a line end by ``files.decode_text``).
    """
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

    data = text.encode("utf-8")
    whole = pa.Array.from_buffers(pa.large_string(), 1, [None, pa.py_buffer(np.array([0, len(data)], dtype=np.int64)),
                                                         pa.py_buffer(data)])
    lines = pc.ascii_trim_whitespace(pc.split_pattern(whole, "\n").flatten())
    blank = string_lengths(lines) == 0
    comment = to_numpy(pc.starts_with(lines, "#"))
    keep = ~blank & ~comment
    if not keep.all():
        lines = lines.filter(arrow_mask(keep))
    tokens = pc.ascii_split_whitespace(lines)
    n_tok = to_numpy(pc.list_value_length(tokens)).astype(np.int64)
    line_no = np.flatnonzero(keep).astype(np.int64) + 1
    return Fields(tokens, n_tok, line_no)


def _column(fields: Fields, i: int) -> pa.Array:
    """Field ``i`` of every line (each line has more than ``i`` fields)."""
    tokens = fields.tokens
    values = tokens.flatten()  # the fields of all lines, in order
    start = to_numpy(tokens.offsets)[:-1].astype(np.int64) - int(to_numpy(tokens.offsets)[0])
    return values.take(arrow_ints(start + i))
