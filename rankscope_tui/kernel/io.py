"""Readers for lanes, qrels, strata, corpus and text files (SPEC §2), and atomic writers.

Every reader returns string columns plus the 1-based source line of each row, so
that later checks (duplicates, conflicting grades) can still name a line. Every
malformed input raises :class:`InputError` as ``FILE:LINE: what is wrong``.

Parsing is columnar: the whole file is decoded once and split into lines and
whitespace-separated fields by pyarrow compute kernels (no Python loop per line on
the hot path). A slow, line-by-line pass runs only after a problem was detected, to
name the line.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np



def tune_allocator() -> None:
    """Keep freed large blocks in the process for reuse (Linux, glibc). Called by the
    ``rankscope`` process at start-up, never on import: a notebook that imports the
    kernel keeps its own allocator settings.

    The kernel allocates and frees many arrays of tens of megabytes. glibc serves each
    from a fresh ``mmap`` and unmaps it on free, so every array is paid for again in
    page faults -- a large share of the time on a virtual machine (benchmarks/README.md).
    With mmap off for malloc and a high trim threshold, freed memory is reused; with
    one arena, memory freed by pyarrow's or the kernel's worker threads is reused by the
    main thread too (several arenas measured ~200 MB more peak at 7M rows). Opt out
    with RANKSCOPE_MALLOC=default; glibc's own MALLOC_* environment settings are left
    alone.
    """
    if os.environ.get("RANKSCOPE_MALLOC", "") == "default" or not os.uname().sysname == "Linux":
        return
    if any(k.startswith("MALLOC_") for k in os.environ) or "GLIBC_TUNABLES" in os.environ:
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_top_pad, m_mmap_max, m_arena_max = -1, -2, -4, -8
        libc.mallopt(m_mmap_max, 0)
        libc.mallopt(m_trim_threshold, 1 << 30)
        libc.mallopt(m_top_pad, 64 << 20)
        libc.mallopt(m_arena_max, 1)  # threads share one heap, so memory freed on one is reused on another
    except (OSError, AttributeError):
        pass


# pyarrow and its CSV reader are imported with the module, not on first use, so the
# first call in a fresh process costs what later calls cost. pyarrow.compute (~30 ms
# of wrappers built at import) is not: clean runs and qrels are read, encoded and
# ordered without it; the general reader and rarer paths import it when they run.
import pyarrow as pa  # noqa: E402, F401
import pyarrow.csv as pcsv  # noqa: E402, F401

from .errors import InputError, InputWarning

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def _pa():
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


def to_numpy(arr) -> np.ndarray:
    """A null-free pyarrow numeric or boolean (chunked) array as a numpy array.

    pyarrow's own ``to_numpy`` imports pandas (a third of a second) whenever pandas is
    installed; reading the buffers does not.
    """
    import pyarrow as pa

    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = []
    for c in chunks:
        if c.null_count:
            raise ValueError("array with nulls")
        t = c.type
        if pa.types.is_boolean(t):
            bits = np.frombuffer(c.buffers()[1], dtype=np.uint8)
            parts.append(np.unpackbits(bits, bitorder="little", count=c.offset + len(c))[c.offset:].astype(bool))
        elif pa.types.is_dictionary(t):
            parts.append(to_numpy(c.indices))
        else:
            dt = _numpy_dtype(t)
            parts.append(np.frombuffer(c.buffers()[1], dtype=dt, count=len(c), offset=c.offset * dt.itemsize))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        t = arr.type
        return np.zeros(0, dtype=bool if pa.types.is_boolean(t) else _numpy_dtype(t))
    return np.concatenate(parts)


def _numpy_dtype(t) -> np.dtype:
    import pyarrow as pa

    if pa.types.is_floating(t):
        return np.dtype(f"float{t.bit_width}")
    if pa.types.is_signed_integer(t):
        return np.dtype(f"int{t.bit_width}")
    if pa.types.is_unsigned_integer(t):
        return np.dtype(f"uint{t.bit_width}")
    raise TypeError(f"no numpy dtype for {t}")


# ---------------------------------------------------------------------------
# raw text


def _check_file(p: str) -> None:
    if not os.path.exists(p):
        raise InputError("no such file", p)
    if os.path.isdir(p):
        raise InputError("is a directory, not a file", p)


def _read_bytes(p: str) -> tuple[bytes, bytes]:
    """(bytes of the file as stored, content bytes): gzip by magic bytes, decompressed."""
    _check_file(p)
    try:
        with open(p, "rb") as fh:
            stored = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", p) from None
    raw = stored
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"truncated or corrupt gzip ({exc})", p) from None
    return stored, raw


def _decode(raw: bytes, p: str) -> str:
    """Content bytes as text: UTF-8 strict, BOM dropped; refuses empty, binary and non-UTF-8 input."""
    if not raw.strip():
        raise InputError("empty file", p)
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise InputError("binary file (NUL byte)", p, raw.count(b"\n", 0, nul) + 1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", p, line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def read_text(path: str | os.PathLike) -> str:
    """Whole file as text: gzip by magic bytes, UTF-8 strict, BOM dropped.

    Refuses a missing path, a directory, an empty file, a truncated or corrupt
    gzip, a binary file (NUL bytes) and non-UTF-8 bytes (naming the line).
    """
    p = str(path)
    return _decode(_read_bytes(p)[1], p)


class Digest:
    """sha256 of a file's stored bytes: taken from bytes already in memory when the file
    was read whole (gzip, the general reader), else computed from the file on first
    ``hexdigest()`` -- which ``Workspace.from_raw`` asks for on a background thread
    while it encodes (``parallel.in_background``, joined before it returns), so a large
    plain run's hash overlaps the sorting instead of preceding it.

    Thread-safe: a second caller waits for the first caller's result."""

    def __init__(self, data=None, path: str | None = None, hexdigest: str | None = None):
        import threading

        self._path = path
        self._hex: str | None = hexdigest
        self._lock = threading.Lock()
        if data is not None:
            self._hex = hashlib.sha256(data).hexdigest()

    @property
    def pending(self) -> bool:
        return self._hex is None

    def hexdigest(self) -> str:
        with self._lock:
            if self._hex is None:
                try:
                    self._hex = sha256_of(self._path)
                except OSError as exc:  # e.g. removed between parsing and hashing
                    raise InputError(f"cannot read: {exc.strerror or exc}", self._path) from None
            return self._hex


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
# whitespace-separated tables


@dataclass
class Fields:
    """Kept (non-blank, non-comment) lines of a whitespace-separated file."""

    tokens: object  # pyarrow ListArray of strings, one list per kept line
    n_tokens: np.ndarray  # int64 per kept line
    line: np.ndarray  # int64 1-based source line per kept line


def arrow_ints(values: np.ndarray):
    """A numpy integer array as a pyarrow int64 array (``pa.array`` would import pandas)."""
    import pyarrow as pa

    v = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), v.shape[0], [None, pa.py_buffer(v)])


def arrow_strings(items) -> object:
    """A list of str as a pyarrow string array (``pa.array`` would import pandas)."""
    import pyarrow as pa

    enc = [x.encode("utf-8") for x in items]
    off = np.zeros(len(enc) + 1, dtype=np.int64)
    if enc:
        np.cumsum(np.fromiter((len(b) for b in enc), dtype=np.int64, count=len(enc)), out=off[1:])
    arr = pa.Array.from_buffers(pa.large_string(), len(enc), [None, pa.py_buffer(off), pa.py_buffer(b"".join(enc))])
    return arr.cast(pa.string()) if off[-1] < 2**31 else arr


def _arrow_mask(mask: np.ndarray):
    import pyarrow as pa

    bits = np.packbits(np.ascontiguousarray(mask, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), mask.shape[0], [None, pa.py_buffer(bits)])


def _string_lengths(arr) -> np.ndarray:
    """Byte length of every string of a pyarrow (large_)string array, from its offsets."""
    import pyarrow as pa

    odt = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) else np.int32
    off = np.frombuffer(arr.buffers()[1], dtype=odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    return np.diff(off).astype(np.int64)


def split_fields(text: str) -> Fields:
    """Split text into lines and ASCII-whitespace fields; drop blank and ``#`` lines.

    Line numbers count every ``\n`` (CRLF is fine: ``\r`` is whitespace).
    """
    pa, pc = _pa()
    data = text.encode("utf-8")
    whole = pa.Array.from_buffers(pa.large_string(), 1, [None, pa.py_buffer(np.array([0, len(data)], dtype=np.int64)),
                                                         pa.py_buffer(data)])
    lines = pc.ascii_trim_whitespace(pc.split_pattern(whole, "\n").flatten())
    blank = _string_lengths(lines) == 0
    comment = to_numpy(pc.starts_with(lines, "#"))
    keep = ~blank & ~comment
    if not keep.all():
        lines = lines.filter(_arrow_mask(keep))
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


# ---------------------------------------------------------------------------
# lanes


class RowLines:
    """Source lines of a file whose row i is line i + 1 (a clean run file): indexes like
    the int64 array ``arange(1, n + 1)`` without holding it."""

    dtype = np.dtype(np.int64)

    def __init__(self, n: int):
        self.n = int(n)

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
            return np.int64(j + 1)
        return np.asarray(self)[i]

    def __array__(self, dtype=None, copy=None):
        return np.arange(1, self.n + 1, dtype=dtype or np.int64)


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

    def sha256(self) -> str:
        return (self.digest or Digest(path=self.path)).hexdigest()


def lane_name_from_path(path: str) -> str:
    """``bm25.run.gz`` → ``bm25``: drop ``.gz`` and then one suffix."""
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    stem, dot, _ = base.rpartition(".")
    return stem if dot and stem else base


def check_lane_name(name: str, where: str) -> None:
    if not name or any(c in name for c in ".=") or any(c.isspace() for c in name):
        raise InputError(f"lane name {name!r} must be non-empty and contain no '.', '=' or whitespace", where)


def read_lane(path: str, name: str | None = None) -> RawLane:
    """Read a TREC run (``qid Q0 docid rank score tag``) or JSON ``{qid: {docid: score}}``."""
    lane_name = name if name is not None else lane_name_from_path(path)
    check_lane_name(lane_name, path)
    scan = _scan_plain(path)
    if scan is not None:  # not compressed: one streaming pass of checks, then pyarrow reads the file
        digest = Digest(path=path)
        fast = _parse_run(path, scan.delim, scan.clean) if scan.clean is not False else None
        if fast is not None:
            qid, doc, score = fast
            return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], scan.tag, digest)
        raw = _read_bytes(path)[1]
    else:
        stored, raw = _read_bytes(path)
        digest = Digest(stored)
        del stored
        fast = _read_run_fast(raw)
        if fast is not None:
            qid, doc, score, tag = fast
            return RawLane(lane_name, path, qid, doc, score, RowLines(len(score)), [], tag, digest)
    text = _decode(raw, path)
    del raw
    if looks_like_json(text):
        qid, doc, score, line = _json_pairs(text, path, "score")
        return RawLane(lane_name, path, arrow_strings(qid), arrow_strings(doc),
                       np.asarray(score, dtype=np.float64), np.asarray(line, dtype=np.int64), digest=digest)
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
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
    ``#``, and the bytes are UTF-8. ``result``: True (all ASCII), None (clean, some
    UTF-8 beyond ASCII), False (leave the file to the general reader)."""

    def __init__(self, delim: int):
        self.delim = delim
        self.ok = True
        self.ascii = True
        self.utf8 = None  # incremental decoder, once a non-ASCII byte was seen
        self.last = None
        self._s = self._t = None

    def feed(self, c: np.ndarray, overlap: bool) -> None:
        """``c`` holds the new bytes, preceded by one byte of the previous slice if ``overlap``."""
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
        if np.any(tk[:-1] & (c[1:] == 35)):  # '#' after a newline: a comment line
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
                self.utf8.decode(c[lo:].tobytes())
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
    for i in range(0, b.shape[0], step):
        chk.feed(b[max(0, i - 1):i + step], overlap=i > 0)
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
    buf = np.empty(step + 1, dtype=np.uint8)
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
                chk.feed(buf[1:1 + n], overlap=False)
                first = False
            else:
                chk.feed(buf[:1 + n], overlap=True)
            tail = (tail + bytes(view[max(1, 1 + n - 4096):1 + n]))[-4096:]
            buf[0] = buf[n]
            pos += n
    return chk, tail


def _scan_plain(path: str) -> _Scan | None:
    """One streaming pass over an uncompressed file through reused 1 MiB buffers: the
    fast path's byte checks and the tag of its last line -- without holding or
    mapping the whole file (pyarrow then reads it itself). A large file is checked
    as two halves split after a newline, on two threads; the verdict is the same.
    None for gzip."""
    _check_file(path)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(_SCAN_STEP)
            if head[:2] == b"\x1f\x8b":
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
            from .parallel import run_all

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


def _read_columns(source, delim: bytes, clean: bool | None, names: list[str], types: dict):
    """pyarrow's CSV reader over a file (path) or buffer whose bytes passed the checks,
    reading only the columns in ``types`` (``"str"`` for an id column): a table, or
    None when the content does not parse as ``len(names)`` fields per line."""
    str_t = pa.binary() if clean is True else pa.string()  # ASCII needs no UTF-8 validation
    try:
        tab = pcsv.read_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pcsv.ParseOptions(delimiter=delim.decode(), quote_char=False, double_quote=False,
                                            escape_char=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={k: str_t if t == "str" else t for k, t in types.items()},
                include_columns=list(types), null_values=[], strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
            memory_pool=pa.system_memory_pool(),  # see ARROW_DEFAULT_MEMORY_POOL above
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
        raw = _read_bytes(str(raw))[1]
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


class _JsonPairs:
    """A scanner for ``{qid: {docid: value}}`` that keeps every pair, repeats included
    (``json.loads`` keeps only the last of two equal keys), with the line of each.

    Values are decoded by the standard decoder (``raw_decode``), so numbers, NaN and
    Infinity read exactly as ``json.loads`` reads them."""

    _WS = " \t\n\r"

    def __init__(self, text: str, path: str, what: str):
        self.text, self.path, self.what = text, path, what
        self.dec = json.JSONDecoder()
        self._nl = None

    def line(self, pos: int) -> int:
        if self._nl is None:
            import re

            self._nl = [m.start() for m in re.finditer("\n", self.text)]
        import bisect

        return bisect.bisect_left(self._nl, pos) + 1

    def fail(self, msg: str, pos: int):
        raise InputError(msg, self.path, self.line(pos))

    def ws(self, i: int) -> int:
        t, n = self.text, len(self.text)
        while i < n and t[i] in self._WS:
            i += 1
        return i

    def value(self, i: int):
        try:
            return self.dec.raw_decode(self.text, i)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", self.path, exc.lineno) from None
        except RecursionError:
            self.fail("invalid JSON: nested too deeply", i)
        except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
            self.fail(f"invalid JSON: {exc}", i)

    def expect(self, i: int, ch: str) -> int:
        i = self.ws(i)
        if self.text[i:i + 1] != ch:
            if i >= len(self.text):
                self.fail(f"invalid JSON: expected {ch!r}, found the end of the file", i)
            self.fail(f"invalid JSON: expected {ch!r}", i)
        return i + 1

    def key(self, i: int) -> tuple[str, int, int]:
        i = self.ws(i)
        if self.text[i:i + 1] != '"':
            self.fail("invalid JSON: expecting a property name in double quotes", i)
        k, end = self.value(i)
        try:
            k.encode("utf-8")
        except UnicodeEncodeError:
            self.fail(f"invalid JSON: the key {k!r} is not valid Unicode (a lone surrogate escape)", i)
        return k, i, end

    def members(self, i: int):
        """Yield (key, key position, position after the colon) of an object opened before i;
        the caller consumes each value and returns its end position via ``send``."""
        i = self.ws(i)
        if self.text[i:i + 1] == "}":
            return i + 1
        while True:
            k, kpos, i = self.key(i)
            i = self.expect(i, ":")
            i = yield k, kpos, i
            i = self.ws(i)
            c = self.text[i:i + 1]
            if c == ",":
                i += 1
            elif c == "}":
                return i + 1
            else:
                self.fail("invalid JSON: expecting ',' delimiter", i)

    def parse(self):
        what, t = self.what, self.text
        qids, docs, vals, lines = [], [], [], []
        i = self.ws(0)
        if t[i:i + 1] != "{":
            if t[i:i + 1] == "[":
                self.value(i)  # a syntax error inside still reads as one
            self.fail("JSON must be an object {qid: {docid: " + what + "}}", i)
        outer = self.members(i + 1)
        try:
            q, _, j = next(outer)
            while True:
                j = self.ws(j)
                if t[j:j + 1] != "{":
                    self.value(j)
                    self.fail(f"JSON value for query {q!r} must be an object {{docid: {what}}}", j)
                inner = self.members(j + 1)
                try:
                    d, dpos, k = next(inner)
                    while True:
                        k = self.ws(k)
                        v, end = self.value(k)
                        self._check(q, d, v, k)
                        qids.append(q)
                        docs.append(d)
                        vals.append(float(v) if what == "score" else int(v))
                        lines.append(self.line(dpos))
                        d, dpos, k = inner.send(end)
                except StopIteration as stop:
                    j = stop.value
                q, _, j = outer.send(j)
        except StopIteration as stop:
            i = stop.value
        i = self.ws(i)
        if i < len(t):
            self.fail("invalid JSON: extra data after the object", i)
        if not qids:
            raise InputError("empty file (no query holds any doc)", self.path)
        return qids, docs, vals, lines

    def _check(self, q: str, d: str, v, pos: int) -> None:
        what = self.what
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(f"{what} for query {q!r}, doc {d!r} is not a number: {v!r}", pos)
        if what == "score":
            try:
                finite = math.isfinite(v) and math.isfinite(float(v))
            except OverflowError:  # an integer literal beyond the float range
                finite = False
            if not finite:
                self.fail(f"score for query {q!r}, doc {d!r} is not finite", pos)
        else:
            if isinstance(v, float) and not v.is_integer():
                self.fail(f"grade for query {q!r}, doc {d!r} is not an integer: {v!r}", pos)
            if not INT32_MIN <= int(v) <= INT32_MAX:
                self.fail(f"grade for query {q!r}, doc {d!r} out of range (must fit a 32-bit integer)", pos)


def _json_pairs(text: str, path: str, what: str):
    """Flatten ``{qid: {docid: value}}``; ``what`` is 'score' (finite number) or 'grade' (integer).

    Every pair is kept with the line of its doc key, repeated keys included, so the
    same doc twice in one query (or conflicting grades) is reported like in a TREC file.
    """
    return _JsonPairs(text, path, what).parse()


# ---------------------------------------------------------------------------
# qrels


@dataclass
class RawQrels:
    path: str
    qid: object
    doc: object
    grade: np.ndarray
    line: np.ndarray
    warnings: list[InputWarning] = field(default_factory=list)
    digest: Digest | None = None

    def sha256(self) -> str:
        return (self.digest or Digest(path=self.path)).hexdigest()


def read_qrels(path: str) -> RawQrels:
    """Read TREC qrels ``qid 0 docid grade`` or JSON ``{qid: {docid: grade}}``."""
    stored, raw = _read_bytes(path)
    digest = Digest(stored)
    del stored
    fast = _read_qrels_fast(raw)
    if fast is not None:
        qid, doc, grade = fast
        return RawQrels(path, qid, doc, grade, RowLines(len(grade)), digest=digest)
    text = _decode(raw, path)
    del raw
    if looks_like_json(text):
        qid, doc, grade, line = _json_pairs(text, path, "grade")
        return RawQrels(path, arrow_strings(qid), arrow_strings(doc),
                        np.asarray(grade, dtype=np.int64), np.asarray(line, dtype=np.int64), digest=digest)
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    wrong = fields.n_tokens != 4
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected 4 fields 'qid 0 docid grade', found {int(fields.n_tokens[i])}", path, int(fields.line[i]))
    grade = _parse_int_col(_column(fields, 3), fields.line, path, "grade")
    return RawQrels(path, _column(fields, 0), _column(fields, 2), grade, fields.line, digest=digest)


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
# strata, corpus, texts


def _tab_lines(path: str):
    text = read_text(path)
    for i, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        yield i, line


def read_strata(path: str) -> dict[str, str]:
    """``qid<TAB>label`` per line; a line without a tab, or a qid given two labels, is an error."""
    out: dict[str, str] = {}
    for i, line in _tab_lines(path):
        if line.lstrip().startswith("#"):  # a comment, as in runs and qrels
            continue
        if "\t" not in line:
            raise InputError("expected 'qid<TAB>label' (no tab on this line)", path, i)
        q, label = line.split("\t", 1)
        q, label = q.strip(), label.strip()
        if not q or not label:
            raise InputError("empty qid or label", path, i)
        if out.get(q, label) != label:
            raise InputError(f"query {q!r} has two labels: {out[q]!r} and {label!r}", path, i)
        out[q] = label
    if not out:
        raise InputError("empty file", path)
    return out


def stratification_name(path: str) -> str:
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    return base.rsplit(".", 1)[0] if "." in base else base


def read_corpus(path: str) -> set[str]:
    """Doc ids: one per line, or the first column of a TSV."""
    ids = {line.split("\t", 1)[0].strip() for _, line in _tab_lines(path)}
    ids.discard("")
    if not ids:
        raise InputError("empty file", path)
    return ids


def read_texts(path: str) -> dict[str, str]:
    """``id<TAB>text`` per line."""
    out: dict[str, str] = {}
    for i, line in _tab_lines(path):
        if "\t" not in line:
            raise InputError("expected 'id<TAB>text' (no tab on this line)", path, i)
        k, v = line.split("\t", 1)
        out[k.strip()] = v.strip()
    return out


# ---------------------------------------------------------------------------
# fingerprints and atomic output


def sha256_of(path: str) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_output_path(out: str, inputs: list[str]) -> None:
    """Refuse an output whose directory is missing or cannot be written, or which would
    overwrite an input -- before any work is done."""
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise InputError("output directory does not exist", out)
    if os.path.isdir(out):
        raise InputError("output path is a directory", out)
    real = os.path.realpath(out)
    for p in inputs:
        if p and os.path.exists(p) and os.path.realpath(p) == real:
            raise InputError("output path is an input file; refusing to overwrite an input", out)
    try:  # the same temporary file write_atomic will make, made and removed now
        fd, tmp = tempfile.mkstemp(prefix=".rankscope-", suffix=".tmp", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise InputError(f"output directory is not writable: {exc.strerror or exc}", out) from None


def write_atomic(path: str, data: str | bytes) -> None:
    """Write to a temporary file in the same directory, fsync, then rename into place."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankscope-", suffix=".tmp", dir=d)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path) from None
    try:
        # mkstemp creates 0600; give the file the mode an ordinary open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(f"cannot write: {exc.strerror or exc}", path) from None
        raise


def dumps_strict(obj) -> str:
    """Strict JSON (no NaN/Infinity), sorted keys off: key order is the report's order."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def path_exists(p: str | None) -> bool:
    return bool(p) and Path(p).exists()


# ---------------------------------------------------------------------------
# string columns as integer words (for encoding without hashing strings in Python)

_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_MIX3 = np.uint64(0x94D049BB133111EB)
# _KEEP_MASK[k]: the first k bytes of a big-endian word
_KEEP_MASK = np.array([0] + [((1 << (8 * k)) - 1) << (64 - 8 * k) for k in range(1, 9)], dtype=np.uint64)


@dataclass
class StringWords:
    """Rows of one or more pyarrow string columns (concatenated in order) as words:
    ``words[j]`` holds bytes ``8j .. 8j+7`` of each string, big-endian, zero-padded,
    so equal strings have equal (length, words) and vice versa, and comparing words
    in order compares the strings as bytes."""

    length: np.ndarray  # per row (uint8 when every string is shorter than 256 bytes)
    words: list  # of uint64 arrays, one per 8-byte slice
    bounds: list  # (start, stop) rows of each input column
    has_nul: bool = True  # some string holds a NUL byte (then words alone do not fix the length)

    @property
    def n(self) -> int:
        return int(self.length.shape[0])

    def hash64(self, length_bits: int = 0, row_bits: int = 0) -> np.ndarray:
        """A 64-bit mix of (length, words) per row, computed in cache-sized blocks.

        With ``length_bits`` the top bits hold the string's length instead of hash
        bits; with ``row_bits`` the low bits hold the row number: a sort key whose
        order groups equal strings, by length, with their rows ascending."""
        n = self.n
        h = self.length.astype(np.uint64)
        step = 1 << 16
        t = np.empty(min(n, step), dtype=np.uint64)
        ln = np.empty(min(n, step), dtype=np.uint64)
        clear_rows = np.uint64(((1 << 64) - 1) ^ ((1 << row_bits) - 1))
        for a in range(0, n, step):
            hb = h[a:a + step]
            k = hb.shape[0]
            tb, lb = t[:k], ln[:k]
            lb[...] = hb
            hb *= _MIX3
            for w in self.words:
                hb ^= w[a:a + step]
                hb *= _MIX1
                np.right_shift(hb, np.uint64(29), out=tb)
                hb ^= tb
            hb *= _MIX2
            np.right_shift(hb, np.uint64(32), out=tb)
            hb ^= tb
            if length_bits:
                hb >>= np.uint64(length_bits)
                lb <<= np.uint64(64 - length_bits)
                hb |= lb
            if row_bits:
                hb &= clear_rows
                tb[...] = np.arange(a, a + k, dtype=np.uint64)
                hb |= tb
        return h

    def equal(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Row a[i] holds the same string as row b[i]."""
        eq = None
        if self.has_nul:  # without NUL bytes the zero padding fixes the length
            eq = self.length[a] == self.length[b]
        for w in self.words:
            e = w[a] == w[b]
            eq = e if eq is None else (eq & e)
        return eq

    def differs_from_previous(self) -> np.ndarray:
        """Boolean per row: not the same string as the row before (True for row 0)."""
        out = np.empty(self.n, dtype=bool)
        if self.n:
            out[0] = True
            np.not_equal(self.length[1:], self.length[:-1], out=out[1:])
            for w in self.words:
                out[1:] |= w[1:] != w[:-1]
        return out

    def strings(self, rows: np.ndarray):
        """The strings of ``rows`` as a pyarrow string array, rebuilt from the words."""
        import pyarrow as pa

        rows = np.asarray(rows, dtype=np.int64)
        u, m = rows.shape[0], len(self.words)
        ln = self.length[rows].astype(np.int64)
        big = int(ln.sum()) >= 2**31
        off = np.zeros(u + 1, dtype=np.int64 if big else np.int32)
        np.cumsum(ln, out=off[1:])
        data = np.empty(int(off[-1]), dtype=np.uint8)
        col = np.arange(8 * m)[None, :]
        step = 1 << 16
        mat = np.empty((min(u, step), 8 * m), dtype=np.uint8)
        if u > 1 and bool(np.all(ln[1:] >= ln[:-1])):
            # lengths ascending (factorize_words orders codes so): each length's strings
            # are the first L bytes of consecutive rows, a plain slice
            cut = np.flatnonzero(np.r_[True, ln[1:] != ln[:-1], True])
            for g0, g1 in zip(cut[:-1].tolist(), cut[1:].tolist()):
                L = int(ln[g0])
                for a in range(g0, g1, step):
                    r = rows[a:min(g1, a + step)]
                    k = r.shape[0]
                    for j in range(-(-L // 8)):
                        mat[:k, 8 * j:8 * j + 8] = self.words[j][r].astype(">u8").view(np.uint8).reshape(-1, 8)
                    data[int(off[a]):int(off[a]) + k * L] = mat[:k, :L].ravel()
        else:
            for a in range(0, u, step):
                r = rows[a:a + step]
                k = r.shape[0]
                for j, w in enumerate(self.words):
                    mat[:k, 8 * j:8 * j + 8] = w[r].astype(">u8").view(np.uint8).reshape(-1, 8)
                data[int(off[a]):int(off[a + k])] = mat[:k][col < ln[a:a + k, None]]
        return pa.Array.from_buffers(pa.large_string() if big else pa.string(), u,
                                     [None, pa.py_buffer(off), pa.py_buffer(data)])


def _chunks_of(columns: list):
    import pyarrow as pa

    for col in columns:
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        out = []
        for ch in chunks:
            if len(ch) == 0:
                continue
            if ch.null_count:
                raise ValueError("string column with nulls")
            t = ch.type
            if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
                odt = np.int64
            elif pa.types.is_string(t) or pa.types.is_binary(t):
                odt = np.int32
            else:
                ch, odt = ch.cast(pa.string()), np.int32
            _, ob, db = ch.buffers()
            off = np.frombuffer(ob, dtype=odt, count=len(ch) + 1, offset=ch.offset * np.dtype(odt).itemsize)
            out.append((off, db, ch))
        yield out


def _layout(per_col: list, max_words: int | None):
    bounds, row, maxlen = [], 0, 0
    for chunks in per_col:
        first = row
        for off, _, _ in chunks:
            row += off.shape[0] - 1
            if off.shape[0] > 1:
                maxlen = max(maxlen, int(np.diff(off).max()))
        bounds.append((first, row))
    m = max(1, -(-maxlen // 8))
    if max_words is not None and m > max_words:
        return None
    return bounds, row, m, maxlen


def _chunk_words(off: np.ndarray, db, m: int, ln: np.ndarray, words: list) -> bool:
    """Fill ``ln`` and ``words[j]`` (preallocated, one slot per string of the chunk);
    True when some string holds a NUL byte."""
    lo, hi = int(off[0]), int(off[-1])
    np.subtract(off[1:], off[:-1], out=ln, casting="unsafe")
    start = off[:-1].astype(np.int64)
    start -= lo
    # Bytes lo..hi of the data buffer, plus zero padding for loads past the end.
    data = np.frombuffer(db, dtype=np.uint8, count=hi - lo, offset=lo)
    pad = np.zeros(hi - lo + 8 * m, dtype=np.uint8)
    pad[:hi - lo] = data
    view = np.ndarray(shape=(pad.shape[0] - 7,), dtype=">u8", buffer=pad, strides=(1,))
    shortest = int(ln.min())
    sl = ln.astype(np.int64) if m > 1 else ln
    for j in range(m):
        w = words[j]
        w[...] = view[start + 8 * j] if j else view[start]  # byte-swapping copy
        if shortest < 8 * (j + 1):  # clear the bytes past each string's end
            w &= _KEEP_MASK[np.clip(sl - 8 * j, 0, 8) if j else np.minimum(sl, 8)]
    return not data.all()


def string_words(columns: list, max_words: int | None = None) -> StringWords | None:
    """Words of every row of the string columns (pyarrow arrays or chunked arrays, no
    nulls). None when the longest string needs more than ``max_words`` words.

    Works chunk by chunk on pyarrow's own buffers: a big-endian 8-byte load at each
    string's start (a strided view), with the bytes past the string's end cleared.
    """
    per_col = list(_chunks_of(columns))
    lay = _layout(per_col, max_words)
    if lay is None:
        return None
    bounds, n, m, maxlen = lay
    length = np.empty(n, dtype=np.uint8 if maxlen < 256 else np.int64)
    words = [np.empty(n, dtype=np.uint64) for _ in range(m)]
    pos, has_nul = 0, False
    for chunks in per_col:
        for off, db, _ in chunks:
            k = off.shape[0] - 1
            has_nul |= _chunk_words(off, db, m, length[pos:pos + k], [w[pos:pos + k] for w in words])
            pos += k
    return StringWords(length, words, bounds, has_nul)


def string_runs(columns: list, max_words: int | None = None):
    """(rows where a run of equal strings begins, the run heads as ``StringWords``,
    total rows) over the concatenated columns, chunk by chunk (no full-length
    temporaries); None when some string needs more than ``max_words`` words."""
    per_col = list(_chunks_of(columns))
    lay = _layout(per_col, max_words)
    if lay is None:
        return None
    _, n, m, maxlen = lay
    starts, h_len, h_words, pos, prev, has_nul = [], [], [[] for _ in range(m)], 0, None, False
    for chunks in per_col:
        for off, db, ch in chunks:
            k = off.shape[0] - 1
            ln = np.empty(k, dtype=np.int64)
            words = [np.empty(k, dtype=np.uint64) for _ in range(m)]
            has_nul |= _chunk_words(off, db, m, ln, words)
            new = np.empty(k, dtype=bool)
            np.not_equal(ln[1:], ln[:-1], out=new[1:])
            for w in words:
                new[1:] |= w[1:] != w[:-1]
            new[0] = prev is None or prev != (int(ln[0]), *[int(w[0]) for w in words])
            prev = (int(ln[-1]), *[int(w[-1]) for w in words])
            st = np.flatnonzero(new)
            h_len.append(ln[st])
            for j, w in enumerate(words):
                h_words[j].append(w[st])
            st += pos
            starts.append(st)
            pos += k
    start = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dtype=dt))
    heads = StringWords(cat(h_len, np.int64), [cat(w, np.uint64) for w in h_words], [(0, start.shape[0])], has_nul)
    return start, heads, n


class CodeWords:
    """Doc ids by code, as words: ``first_row[code]`` is a row of ``sw`` holding that
    id. Answers the tie rule (``ranking.tie_key``) before the dictionary strings exist."""

    def __init__(self, sw: StringWords, first_row: np.ndarray):
        self.sw, self.first_row = sw, first_row

    def __len__(self) -> int:
        return int(self.first_row.shape[0])

    def words_of(self, codes: np.ndarray) -> StringWords:
        r = self.first_row[np.asarray(codes, dtype=np.int64)]
        return StringWords(self.sw.length[r], [w[r] for w in self.sw.words], [(0, r.shape[0])], self.sw.has_nul)


def byte_order(sw: StringWords) -> np.ndarray:
    """Permutation sorting the rows of ``sw`` as byte strings (equal strings keep row
    order). Words are big-endian and zero-padded, so comparing them in turn compares
    the bytes; the length settles a string against itself followed by NUL bytes."""
    return np.lexsort([sw.length] + sw.words[::-1])


def words_of_rows(arr, rows: np.ndarray, max_words: int | None = None) -> StringWords | None:
    """``StringWords`` of the given rows of one pyarrow string array, gathered straight
    from its buffers (no pyarrow compute call); None beyond ``max_words``."""
    rows = np.asarray(rows, dtype=np.int64)
    _, ob, db = arr.buffers()
    odt = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) else np.int32
    off = np.frombuffer(ob, dtype=odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    start = off[rows].astype(np.int64)
    ln = off[rows + 1].astype(np.int64) - start
    new_off = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(ln, out=new_off[1:])
    total = int(new_off[-1])
    data = np.frombuffer(db, dtype=np.uint8) if db is not None and total else np.zeros(0, np.uint8)
    idx = np.repeat(start - new_off[:-1], ln) + np.arange(total, dtype=np.int64)
    compact = data[idx]
    m = max(1, -(-int(ln.max(initial=0)) // 8))
    if max_words is not None and m > max_words:
        return None
    length = np.empty(rows.shape[0], dtype=np.int64)
    words = [np.empty(rows.shape[0], dtype=np.uint64) for _ in range(m)]
    if total:
        has_nul = _chunk_words(new_off, compact.tobytes(), m, length, words)
    else:  # no rows, or only empty strings
        length[...] = 0
        for w in words:
            w[...] = 0
        has_nul = False
    return StringWords(length, words, [(0, rows.shape[0])], has_nul)


_PARTITION_MIN_ROWS = 1 << 18  # below this one partition: threads cost more than they save


def _factorize_part(sw: StringWords, h: np.ndarray, rows: np.ndarray | None):
    """Factorize the rows ``rows`` (ascending; None = every row) of ``sw`` given their
    hash ``h`` (length bits on top): one sort of (hash, position) packed into uint64,
    then an exact comparison of neighbours. Returns (rows in sorted order, new: True
    where a sorted row starts a new string, pairs (earlier, later))."""
    n = h.shape[0] if rows is None else rows.shape[0]
    rb = max(1, (n - 1).bit_length())
    mask = np.uint64((1 << rb) - 1)
    key = h.copy() if rows is None else h[rows]
    key &= np.uint64(((1 << 64) - 1) ^ int(mask))
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    pos = np.empty(n, dtype=np.int64)
    np.bitwise_and(key, mask, out=pos.view(np.uint64))
    srt = pos if rows is None else rows[pos]  # rows in key order (ascending within a key)
    del pos
    key >>= np.uint64(rb)
    p = np.flatnonzero(key[1:] == key[:-1])
    p += 1
    r_later, r_earlier = srt[p], srt[p - 1]
    eq = sw.equal(r_later, r_earlier)
    if not eq.all():
        # Truncated-hash collisions (a handful per ten million rows): within each run of
        # equal keys that holds more than one string, put equal strings next to each
        # other (rows ascending within each), then compare those neighbours again.
        spans = []
        for b in p[~eq].tolist():
            a, e = b - 1, b + 1
            while a > 0 and key[a - 1] == key[b]:
                a -= 1
            while e < n and key[e] == key[b]:
                e += 1
            if not spans or a >= spans[-1][1]:
                spans.append((a, e))
        sel = np.concatenate([np.arange(a, e) for a, e in spans])
        run = np.repeat(np.arange(len(spans)), [e - a for a, e in spans])
        r = srt[sel]
        keys = [r] + [w[r] for w in reversed(sw.words)] + [sw.length[r], run]
        srt[sel] = r[np.lexsort(keys)]
        touched = np.concatenate([np.arange(np.searchsorted(p, a), np.searchsorted(p, e)) for a, e in spans])
        r_later[touched], r_earlier[touched] = srt[p[touched]], srt[p[touched] - 1]
        eq[touched] = sw.equal(r_later[touched], r_earlier[touched])
    del key
    new = np.ones(n, dtype=bool)
    new[p[eq]] = False
    return srt, new, (r_earlier[eq], r_later[eq])


def factorize_words(sw: StringWords, threads: int | None = None):
    """Dense codes for the distinct strings of ``sw``, without a hash table: rows are
    split into two partitions by one hash bit (equal strings share it), each
    partition is factorized by one sort of (hash, position) packed into uint64 and an
    exact comparison of neighbours (hash collisions are found and regrouped, so the
    result is exact); the partitions run on separate threads. The codes do not depend
    on ``threads``.

    Returns (codes: int64 per row, the first row of each code as one array per
    partition, and the pairs (earlier, later) of rows that hold the same string with
    no row between them holding it) -- or None when there are too many rows to pack.
    Codes are partition by partition, each ordered by string length, then by hash (no
    meaningful order; the length first makes rebuilding a partition's strings a slice
    per length). When the rows of each query are contiguous, a doc repeated within
    one query always shows up as such a pair inside that query.
    """
    from .parallel import run_all

    n = sw.n
    if n == 0:
        z = np.zeros(0, np.int64)
        return z, [z], (z, z)
    rb = max(1, (n - 1).bit_length())
    if rb > 40:
        return None
    lb = int(sw.length.max()).bit_length()
    if 64 - lb - rb < 21:  # no room for the length on top, 20+ hash bits and the partition bit
        lb = 0
    h = sw.hash64(length_bits=lb)
    if n < _PARTITION_MIN_ROWS:
        parts = [None]
    else:
        low = (h & np.uint64(1)).astype(bool)
        parts = [np.flatnonzero(~low), np.flatnonzero(low)]
        del low
    done = run_all([lambda r=r: _factorize_part(sw, h, r) for r in parts], threads)
    del h
    codes = np.empty(n, dtype=np.int64)
    offsets = np.cumsum([0] + [int(np.count_nonzero(new)) for _, new, _ in done])

    def scatter(k: int):
        srt, new, _ = done[k]
        code_sorted = np.cumsum(new, dtype=np.int64)
        code_sorted += int(offsets[k]) - 1
        codes[srt] = code_sorted
        return srt[new]

    firsts = run_all([lambda k=k: scatter(k) for k in range(len(done))], threads)
    earlier = np.concatenate([d[2][0] for d in done])
    later = np.concatenate([d[2][1] for d in done])
    return codes, firsts, (earlier, later)


def load_json(text: str, path: str):
    """``json.loads`` whose every failure is an ``InputError`` naming the file and line:
    syntax errors, integer literals past Python's digit limit, nesting too deep, and
    NaN/Infinity literals (not JSON)."""
    def no_constants(name: str):
        raise InputError(f"{name} is not a JSON number", path, 1)

    try:
        return json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path, 1) from None
    except ValueError as exc:  # e.g. an integer literal with more than 4300 digits
        raise InputError(f"invalid JSON: {exc}", path, 1) from None


def as_finite_number(value, what: str, path: str, line: int) -> float:
    """A JSON number as a finite float, or an InputError (bools, strings, huge integers refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, not {value!r}"[:200], path, line)
    try:
        x = float(value)
    except OverflowError:
        raise InputError(f"{what} is too large", path, line) from None
    if not math.isfinite(x):
        raise InputError(f"{what} must be finite", path, line)
    return x
