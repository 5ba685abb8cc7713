"""Reading lanes (runs) and qrels (SPEC §2) in every format of ``formats``: TREC text,
JSON ``{qid: {docid: value}}``, MS MARCO runs and BEIR qrels (three fields), tables
under a header line, and -- through ``columns`` and ``json_lines`` -- Parquet, JSON
Lines and MTEB predictions. The format is told from the content (``formats.detect``,
after decompression) unless given; the text formats are read here.

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

import os
from dataclasses import dataclass, field

import numpy as np

# pyarrow and its CSV reader are imported with the module, not on first use, so the
# first call in a fresh process costs what later calls cost. pyarrow.compute (~30 ms
# of wrappers built at import) is not: clean runs and qrels are read, encoded and
# ordered without it; the general reader and rarer paths import it when they run.
import pyarrow as pa
import pyarrow.csv as pcsv

from ..errors import InputError, InputWarning
from .arrow import arrow_ints, arrow_mask, arrow_strings, string_lengths, to_numpy
from .files import Digest, check_file, compression_of, decode_text, read_bytes, strip_compressed_suffix
from .json_pairs import INT32_MAX, INT32_MIN, json_pairs


def _pa():
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


def looks_like_json(text: str) -> bool:
    """JSON starts with '{' then '"' or '}' (an object), or '[' then a JSON value; a TREC
    file whose first qid merely starts with '{' or '[' (``{q}1 Q0 ...``) does not."""
    t = text.lstrip()
    if t[:1] not in ("{", "["):
        return False
    nxt = t[1:].lstrip()[:1]
    if t[0] == "{":
        return nxt in ('"', "}", "")
    return nxt == "" or nxt in '[]{}"-0123456789tfn'


# ---------------------------------------------------------------------------
# lanes and qrels


class RowLines:
    """Source lines of a file whose row i is line i + ``first`` (a clean run file, or
    one under a header line): indexes like the int64 array ``arange(first, first + n)``
    without holding it."""

    dtype = np.dtype(np.int64)

    def __init__(self, n: int, first: int = 1):
        self.n = int(n)
        self.first = int(first)

    def __len__(self) -> int:
        return self.n

    @property
    def shape(self) -> tuple[int]:
        return (self.n,)

    @property
    def size(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            j = int(i) + self.n if int(i) < 0 else int(i)
            if not 0 <= j < self.n:
                raise IndexError(i)
            return np.int64(j + self.first)
        return np.asarray(self)[i]

    def __array__(self, dtype=None, copy=None):
        return np.arange(self.first, self.first + self.n, dtype=dtype or np.int64)


@dataclass
class RawLane:
    """A lane as read: string qid and doc columns, float scores, source lines."""

    name: str
    path: str
    qid: object  # pyarrow string array
    doc: object  # pyarrow string array
    score: np.ndarray
    line: np.ndarray  # int64 source line per row (a RowLines when row i is line i + 1)
    warnings: list[InputWarning] = field(default_factory=list)
    tag: str = ""
    digest: Digest | None = None  # sha256 of the file as stored (see Digest)
    shards: tuple = ()  # ((path, rows), ...) of a lane read from several files (formats.merge_shards)
    format: str = ""  # the format it was read as (formats.RUN_FORMATS)
    columns: dict | None = None  # a table's columns read: {"query": .., "doc": .., "score"|"rank": ..}

    def sha256(self) -> str:
        return (self.digest or Digest(path=self.path)).hexdigest()


def lane_name_from_path(path: str) -> str:
    """``bm25.run.gz`` → ``bm25``: drop a compression suffix (``.gz``, ``.bz2``, ``.xz``,
    ``.zst``, ``.lz4``) and then one suffix."""
    base = strip_compressed_suffix(os.path.basename(path))
    stem, dot, _ = base.rpartition(".")
    return stem if dot and stem else base


def check_lane_name(name: str, where: str) -> None:
    """A lane name is non-empty, without '.', '=', whitespace or control characters, and
    without '+': ``NAME+capN`` / ``NAME+docfirst`` are the variant lanes' names, so a lane
    called ``bm25+cap2`` would shadow one."""
    if not name or any(c in name for c in ".=") or any(c.isspace() for c in name):
        raise InputError(f"lane name {name!r} must be non-empty and contain no '.', '=' or whitespace", where)
    if "+" in name:
        raise InputError(f"lane name {name!r} must not contain '+' (reserved for variant lanes such as "
                         f"NAME+cap2); name it with NAME=PATH", where)
    if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in name):
        raise InputError(f"lane name {name!r} must not contain control characters", where)


@dataclass
class RawQrels:
    path: str
    qid: object
    doc: object
    grade: np.ndarray
    line: np.ndarray
    warnings: list[InputWarning] = field(default_factory=list)
    digest: Digest | None = None
    format: str = ""  # the format it was read as (formats.QRELS_FORMATS)
    columns: dict | None = None  # a table's columns read: {"query": .., "doc": .., "relevance": ..}

    def sha256(self) -> str:
        return (self.digest or Digest(path=self.path)).hexdigest()


def _options(options):
    if options is None:
        from .formats import InputOptions

        return InputOptions()
    return options


def _plain_head(path: str) -> bytes | None:
    """The first bytes of a regular, uncompressed file (None for a pipe or compressed content)."""
    if check_file(path) != "regular":
        return None
    from .formats import HEAD_BYTES

    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
    return None if compression_of(head[:6]) is not None else head


def read_lane(path: str, name: str | None = None, options=None) -> RawLane:
    """Read a run in any format of ``formats`` (``options.run_format``; ``auto``: told
    by content): TREC ``qid Q0 docid rank score tag``, JSON ``{qid: {docid: score}}``,
    an MS MARCO run, a header-named table, JSON Lines, MTEB predictions or Parquet.
    ``format`` on the lane says which it was read as."""
    from .formats import detect

    opts = _options(options)
    lane_name = name if name is not None else lane_name_from_path(path)
    check_lane_name(lane_name, path)
    fmt = opts.run_format
    # a pipe (``<(zcat x.gz)``, a FIFO) is read once, into memory, like compressed content
    head = _plain_head(path)
    if head is not None:
        if fmt == "auto":
            fmt = detect(head, "run", path)
        if fmt == "parquet":
            from .columns import read_parquet

            return _as(read_parquet(path, path, "run", opts.run_columns, Digest(path=path), name=lane_name), fmt)
        if fmt in ("trec", "msmarco"):
            fast = _lane_fast_plain(path, lane_name, fmt)
            if fast is not None:
                return _as(fast, fmt)
        raw = read_bytes(path)[1]
        digest = Digest(path=path)
    else:
        stored, raw = read_bytes(path)
        digest = Digest(stored)
        del stored
        if fmt == "auto":
            from .formats import HEAD_BYTES

            fmt = detect(bytes(raw[:HEAD_BYTES]), "run", path)
    lane = _lane_from_content(raw, path, lane_name, fmt, opts, digest)
    return _as(lane, "mteb" if lane.format == "mteb" else fmt)


def _as(raw, fmt: str):
    raw.format = fmt
    return raw


def _lane_fast_plain(path: str, lane_name: str, fmt: str) -> RawLane | None:
    """The fast path over an uncompressed file: one streaming pass of byte checks, then
    pyarrow reads the file itself; None whenever the general reader must read it."""
    scan = _scan_plain(path)
    if scan is None or scan.clean is False:
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


def _lane_from_content(raw, path: str, lane_name: str, fmt: str, opts, digest) -> RawLane:
    if fmt == "parquet":
        from .columns import read_parquet

        return read_parquet(raw, path, "run", opts.run_columns, digest, name=lane_name)
    if fmt == "trec":
        fast = _read_run_fast(raw)
        if fast is not None:
            qid, doc, score, tag = fast
            return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], tag, digest)
    if fmt == "msmarco":
        layout = _clean_layout(raw)
        fast = _parse_msmarco(pa.BufferReader(pa.py_buffer(raw)), *layout, path) if layout is not None else None
        if fast is not None:
            qid, doc, score = fast
            return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], "", digest)
    text = decode_text(raw, path)
    del raw
    if fmt in ("json", "mteb"):
        from .json_pairs import mteb_pairs, top_level_has

        if fmt == "json" and opts.run_format == "auto" and top_level_has(text, "mteb_model_meta"):
            fmt = "mteb"
        if fmt == "mteb":
            qid, doc, score, line = mteb_pairs(text, path, opts.mteb_subset, opts.mteb_split)
            return RawLane(lane_name, path, arrow_strings(qid), arrow_strings(doc), np.asarray(score, dtype=np.float64),
                           np.asarray(line, dtype=np.int64), digest=digest, format="mteb")
        else:
            if top_level_has(text, "mteb_model_meta"):
                raise InputError("this is an MTEB predictions file (a key 'mteb_model_meta'): give --run-format "
                                 "mteb (or auto)", path)
            qid, doc, score, line = json_pairs(text, path, "score")
        return RawLane(lane_name, path, arrow_strings(qid), arrow_strings(doc),
                       np.asarray(score, dtype=np.float64), np.asarray(line, dtype=np.int64), digest=digest)
    if fmt == "jsonl":
        from .json_lines import read_json_lines

        return read_json_lines(text, path, "run", opts.run_columns, digest, name=lane_name)
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    if fmt == "tsv":
        from .columns import run_table

        table, rows = _header_table(fields, path, "run", opts.run_columns)
        return run_table(table, path, opts.run_columns, name=lane_name, digest=digest, rows=rows)
    if fmt == "msmarco":
        qid, doc, score = _msmarco_general(fields, path)
        return RawLane(lane_name, path, qid, doc, score, fields.line, [], "", digest)
    short = fields.n_tokens < 6
    if short.any():
        i = int(np.flatnonzero(short)[0])
        if i:  # a bad score on an earlier line is the first error in the file
            head = Fields(fields.tokens.slice(0, i), fields.n_tokens[:i], fields.line[:i])
            _parse_float_col(_column(head, 4), head.line, path, "score")
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
    score = _parse_float_col(_column(fields, 4), fields.line, path, "score")
    tag = _column(fields, 5)[-1].as_py() if fields.line.size else ""
    return RawLane(lane_name, path, _column(fields, 0), _column(fields, 2), score, fields.line, warnings, tag, digest)


def read_qrels(path: str, options=None) -> RawQrels:
    """Read qrels in any format of ``formats`` (``options.qrels_format``; ``auto``: told
    by content): TREC ``qid 0 docid grade``, JSON ``{qid: {docid: grade}}``, BEIR/MTEB
    ``query-id corpus-id score`` (with or without its header), a header-named table,
    JSON Lines or Parquet. ``format`` on the qrels says which it was read as."""
    opts = _options(options)
    told = [opts.qrels_format]
    q = _read_qrels(path, opts, told)
    return _as(q, told[0])


def _read_qrels(path: str, opts, told: list) -> RawQrels:
    from .formats import HEAD_BYTES, detect

    fmt = opts.qrels_format
    head = _plain_head(path)
    if head is not None and (fmt == "parquet" or (fmt == "auto" and head[:4] == b"PAR1")):
        from .columns import read_parquet

        told[0] = "parquet"
        return read_parquet(path, path, "qrels", opts.qrels_columns, Digest(path=path))
    stored, raw = read_bytes(path)
    digest = Digest(stored)
    del stored
    if fmt == "auto":
        fmt = detect(bytes(raw[:HEAD_BYTES]), "qrels", path)
    told[0] = fmt
    if fmt == "parquet":
        from .columns import read_parquet

        return read_parquet(raw, path, "qrels", opts.qrels_columns, digest)
    if fmt == "trec":
        fast = _read_qrels_fast(raw)
        if fast is not None:
            qid, doc, grade = fast
            return RawQrels(path, qid, doc, grade, RowLines(len(grade)), digest=digest)
    if fmt == "beir":
        fast = _read_beir_fast(raw, path)
        if fast is not None:
            qid, doc, grade, first = fast
            return RawQrels(path, qid, doc, grade, RowLines(len(grade), first), digest=digest)
    text = decode_text(raw, path)
    del raw
    if fmt == "json":
        qid, doc, grade, line = json_pairs(text, path, "grade")
        return RawQrels(path, arrow_strings(qid), arrow_strings(doc),
                        np.asarray(grade, dtype=np.int64), np.asarray(line, dtype=np.int64), digest=digest)
    if fmt == "jsonl":
        from .json_lines import read_json_lines

        return read_json_lines(text, path, "qrels", opts.qrels_columns, digest)
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    if fmt == "beir":
        from .formats import header_columns

        first = [t.as_py() for t in fields.tokens[0].values]
        if header_columns(first, "qrels", path, opts.qrels_columns) is not None:
            fmt = "tsv"
        else:
            wrong = fields.n_tokens != 3
            if wrong.any():
                i = int(np.flatnonzero(wrong)[0])
                raise InputError(f"expected 3 fields 'query-id corpus-id score' (BEIR qrels), found "
                                 f"{int(fields.n_tokens[i])}", path, int(fields.line[i]))
            grade = _parse_int_col(_column(fields, 2), fields.line, path, "grade")
            return RawQrels(path, _column(fields, 0), _column(fields, 1), grade, fields.line, digest=digest)
    if fmt == "tsv":
        from .columns import qrels_table

        table, rows = _header_table(fields, path, "qrels", opts.qrels_columns)
        return qrels_table(table, path, opts.qrels_columns, digest=digest, rows=rows)
    wrong = fields.n_tokens != 4
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected 4 fields 'qid 0 docid grade', found {int(fields.n_tokens[i])}", path, int(fields.line[i]))
    grade = _parse_int_col(_column(fields, 3), fields.line, path, "grade")
    return RawQrels(path, _column(fields, 0), _column(fields, 2), grade, fields.line, digest=digest)


# ---------------------------------------------------------------------------
# three-field text (MS MARCO runs, BEIR qrels) and header-named tables


def _parse_msmarco(source, delim: bytes, clean: bool | None, path: str):
    """(qid, doc, score) of a clean ``qid docid rank`` file, score = -rank; None when it
    does not parse as 3 fields with ranks of 1 to 9 digits."""
    from .columns import check_ranks, score_from_rank

    tab = _read_columns(source, delim, clean, ["qid", "doc", "rank"], {"qid": "str", "doc": "str", "rank": pa.binary()})
    if tab is None:
        return None
    rank = _small_ints(tab.column("rank"))
    if rank is None:
        return None
    qid, doc = _id_columns(tab, clean, ("qid", "doc"))
    check_ranks(qid, rank, path)
    return qid, doc, score_from_rank(rank)


def _msmarco_general(fields: Fields, path: str):
    from .columns import check_ranks, score_from_rank

    wrong = fields.n_tokens != 3
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected 3 fields 'qid docid rank' (an MS MARCO run), found {int(fields.n_tokens[i])}",
                         path, int(fields.line[i]))
    rank = _parse_int_col(_column(fields, 2), fields.line, path, "rank")
    qid = _column(fields, 0)
    check_ranks(qid, rank, path, fields.line)
    return qid, _column(fields, 1), score_from_rank(rank)


def _read_beir_fast(raw, path: str):
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


def _header_table(fields: Fields, path: str, what: str, columns):
    """The lines under a header line as a table of text columns named by the header, and
    the source line of each row (every line as many fields as the header)."""
    from .formats import header_columns

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


def _delimiter(first_line: bytes) -> bytes | None:
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

    def __init__(self, delim: int):
        self.delim = delim
        self.ok = True
        self.ascii = True
        self.utf8 = None  # incremental decoder, once a non-ASCII byte was seen
        self.last = None
        self._s = self._t = None

    def feed(self, c: np.ndarray, overlap: bool, has_hash: bool = True) -> None:
        """``c`` holds the new bytes, preceded by one byte of the previous slice if ``overlap``;
        ``has_hash`` False: the caller knows ``c`` holds no ``#`` (the comment check is skipped)."""
        if not self.ok or c.shape[0] == 0:
            return
        k = c.shape[0]
        if self._s is None or self._s.shape[0] < k:
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
                import codecs

                self.utf8 = codecs.getincrementaldecoder("utf-8")()
            try:
                if "\ufeff" in self.utf8.decode(c[lo:].tobytes()):  # a BOM past the start
                    self.ok = False
                    return
            except UnicodeDecodeError:
                self.ok = False
                return
        self.last = int(c[-1])

    def result(self):
        if not self.ok or self.last is None or self.last == self.delim:
            return False
        if self.utf8 is not None:
            try:
                self.utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                return False
            return None
        return True


def _bytes_clean(raw, delim: int) -> bool | None:
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
    view = memoryview(buf)
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
            from ..parallel import run_all

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


def _read_columns(source, delim: bytes, clean: bool | None, names: list[str], types: dict, skip: int = 0):
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


def _id_columns(tab, clean: bool | None, names: tuple[str, ...]):
    """The id columns as pyarrow strings (ASCII read as binary is viewed as string)."""
    cols = [tab.column(n) for n in names]
    if clean is True:
        cols = [pa.chunked_array([c.view(pa.string()) for c in col.chunks], pa.string()) for col in cols]
    return cols


def _clean_layout(raw) -> tuple[bytes, bool | None] | None:
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


def _parse_run(source, delim: bytes, clean: bool | None):
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


def _read_run_fast(raw):
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


def _read_qrels_fast(raw) -> tuple | None:
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


def _small_ints(col) -> np.ndarray | None:
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

    tokens: object  # pyarrow ListArray of strings, one list per kept line
    n_tokens: np.ndarray  # int64 per kept line
    line: np.ndarray  # int64 1-based source line per kept line


def split_fields(text: str) -> Fields:
    """Split text into lines and ASCII-whitespace fields; drop blank and ``#`` lines.

    Line numbers count every ``\n`` (CRLF is fine: ``\r`` is whitespace; a lone CR was
    made a line end by ``files.decode_text``).
    """
    pa, pc = _pa()
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


def _column(fields: Fields, i: int):
    """Field ``i`` of every line (each line has more than ``i`` fields)."""
    tokens = fields.tokens
    values = tokens.flatten()  # the fields of all lines, in order
    start = to_numpy(tokens.offsets)[:-1].astype(np.int64) - int(to_numpy(tokens.offsets)[0])
    return values.take(arrow_ints(start + i))


def _first_failing(col, convert) -> int:
    """Index of the first element of ``col`` that ``convert`` (a pyarrow cast) refuses,
    found by bisection with that same cast (so exactly what pyarrow refuses, not what
    Python's float()/int() happen to refuse). ``convert(col)`` is known to fail."""
    import pyarrow as pa

    lo, hi = 0, len(col)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            convert(col.slice(lo, mid - lo))
            lo = mid
        except pa.ArrowException:  # invalid value or an unsupported conversion
            hi = mid
    return lo


def _parse_float_col(col, line: np.ndarray, path: str, what: str) -> np.ndarray:
    pa, pc = _pa()

    def convert(c):
        return pc.cast(c, pa.float64())

    try:
        out = to_numpy(convert(col))
    except pa.ArrowException:  # invalid value or an unsupported conversion
        i = _first_failing(col, convert)
        raise InputError(f"{what} is not a number: {col[i].as_py()!r}", path, int(line[i])) from None
    finite = np.isfinite(out)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(f"{what} is not finite: {col[i].as_py()!r}", path, int(line[i]))
    return out


def _parse_int_col(col, line: np.ndarray, path: str, what: str) -> np.ndarray:
    """Decimal integers as trec_eval's atoi reads a well-formed one: optional sign, ASCII
    digits. pyarrow's cast alone would read '0x1' as hexadecimal and refuse '+1'."""
    pa, pc = _pa()
    decimal = to_numpy(pc.match_substring_regex(col, r"^[+-]?[0-9]+$"))
    if not decimal.all():
        i = int(np.flatnonzero(~decimal)[0])
        raise InputError(f"{what} is not an integer: {col[i].as_py()!r}", path, int(line[i]))
    unsigned = pc.replace_substring_regex(col, r"^\+", "")

    def convert(c):
        return pc.cast(c, pa.int64())

    try:
        out = to_numpy(convert(unsigned))
    except pa.ArrowException:  # invalid value, or beyond int64
        i = _first_failing(unsigned, convert)
        raise InputError(f"{what} out of range (must fit a 32-bit integer): {col[i].as_py()!r}", path,
                         int(line[i])) from None
    bad = (out < INT32_MIN) | (out > INT32_MAX)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what} out of range (must fit a 32-bit integer): {col[i].as_py()!r}", path, int(line[i]))
    return out
