"""Encoding string columns as integer codes, without hashing strings in Python.

A string column becomes *words* (``StringWords``): ``words[j]`` holds bytes
``8j .. 8j+7`` of each string, big-endian and zero-padded, read straight from
pyarrow's buffers. Equal strings have equal (length, words); comparing the words in
turn compares the strings as bytes. On words:

- doc ids get dense codes by ``factorize_words`` (one sort of packed (hash, row)
  keys per partition, then an exact comparison of neighbours: no string hash table,
  exact by construction) -- ``encode_docs``;
- query ids get codes into a vocabulary sorted as bytes (the resampling protocol
  sorts queries as bytes): only the first row of each run of equal ids is looked
  at, and the heads are sorted by ``byte_order`` -- ``encode_sorted``.

Ids too long for the words (or more rows than the packed keys hold) go through
pyarrow's hash encoder instead; the codes mean the same.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from ..inputs.arrow import arrow_ints, to_numpy
from .runs import gather_index, running_count, spread_runs

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

    length: NDArray[Any]  # per row: uint8 when every string is shorter than 256 bytes, else int64
    words: list[NDArray[np.uint64]]  # one per 8-byte slice
    bounds: list[tuple[int, int]]  # (start, stop) rows of each input column
    has_nul: bool = True  # some string holds a NUL byte (then words alone do not fix the length)

    @property
    def n(self) -> int:
        return int(self.length.shape[0])

    def hash64(self, length_bits: int = 0, row_bits: int = 0) -> NDArray[np.uint64]:
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

    def equal(self, a: NDArray[np.integer[Any]], b: NDArray[np.integer[Any]]) -> NDArray[np.bool_]:
        """Row a[i] holds the same string as row b[i]."""
        eq: NDArray[np.bool_] | None = None
        if self.has_nul:  # without NUL bytes the zero padding fixes the length
            eq = self.length[a] == self.length[b]
        for w in self.words:
            e = w[a] == w[b]
            eq = e if eq is None else (eq & e)
        assert eq is not None  # every StringWords holds at least one word
        return eq

    def strings(self, rows: NDArray[np.integer[Any]]) -> pa.Array:
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


# one chunk of a string column: (offsets, data buffer, the chunk)
_Chunk = tuple[NDArray[Any], "pa.Buffer", "pa.Array"]  # offsets: int32 or int64 as the column's type says


def _chunks_of(columns: Sequence[pa.Array | pa.ChunkedArray]) -> Iterator[list[_Chunk]]:
    import pyarrow as pa

    for col in columns:
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        out: list[_Chunk] = []
        for ch in chunks:
            if len(ch) == 0:
                continue
            if ch.null_count:
                raise ValueError("string column with nulls")
            t = ch.type
            odt: type[np.signedinteger[Any]]
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


def _layout(per_col: list[list[_Chunk]], max_words: int | None) -> tuple[list[tuple[int, int]], int, int, int] | None:
    """(rows of each column, total rows, words per string, longest string in bytes);
    None when the longest string needs more than ``max_words`` words."""
    bounds: list[tuple[int, int]] = []
    row, maxlen = 0, 0
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


def _chunk_words(off: NDArray[Any], db: pa.Buffer | bytes | NDArray[np.uint8], m: int, ln: NDArray[Any],
                 words: list[NDArray[np.uint64]]) -> bool:
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


def string_words(columns: Sequence[pa.Array | pa.ChunkedArray], max_words: int | None = None) -> StringWords | None:
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


def string_runs(columns: Sequence[pa.Array | pa.ChunkedArray],
                max_words: int | None = None) -> tuple[NDArray[np.int64], StringWords, int] | None:
    """(rows where a run of equal strings begins, the run heads as ``StringWords``,
    total rows) over the concatenated columns, chunk by chunk (no full-length
    temporaries); None when some string needs more than ``max_words`` words."""
    per_col = list(_chunks_of(columns))
    lay = _layout(per_col, max_words)
    if lay is None:
        return None
    _, n, m, maxlen = lay
    starts: list[NDArray[np.int64]] = []
    h_len: list[NDArray[np.int64]] = []
    h_words: list[list[NDArray[np.uint64]]] = [[] for _ in range(m)]
    prev: tuple[int, ...] | None = None
    pos, has_nul = 0, False
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
            st = np.flatnonzero(new).astype(np.int64, copy=False)
            h_len.append(ln[st])
            for j, w in enumerate(words):
                h_words[j].append(w[st])
            st += pos
            starts.append(st)
            pos += k
    start = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
    def cat(xs: Sequence[NDArray[Any]], dt: type[np.generic]) -> NDArray[Any]:
        return np.concatenate(xs) if xs else np.zeros(0, dtype=dt)

    heads = StringWords(cat(h_len, np.int64), [cat(w, np.uint64) for w in h_words], [(0, start.shape[0])], has_nul)
    return start, heads, n


class CodeWords:
    """Doc ids by code, as words: ``first_row[code]`` is a row of ``sw`` holding that
    id. Answers the tie rule (``ranking.tie_key``) before the dictionary strings exist."""

    def __init__(self, sw: StringWords, first_row: NDArray[np.integer[Any]]):
        self.sw, self.first_row = sw, first_row

    def __len__(self) -> int:
        return int(self.first_row.shape[0])

    def words_of(self, codes: NDArray[np.integer[Any]]) -> StringWords:
        r = self.first_row[np.asarray(codes, dtype=np.int64)]
        return StringWords(self.sw.length[r], [w[r] for w in self.sw.words], [(0, r.shape[0])], self.sw.has_nul)


def byte_order(sw: StringWords) -> NDArray[np.intp]:
    """Permutation sorting the rows of ``sw`` as byte strings (equal strings keep row
    order). Words are big-endian and zero-padded, so comparing them in turn compares
    the bytes; the length settles a string against itself followed by NUL bytes."""
    return np.lexsort([sw.length] + sw.words[::-1])


def words_of_rows(arr: pa.Array, rows: NDArray[np.integer[Any]], max_words: int | None = None) -> StringWords | None:
    """``StringWords`` of the given rows of one pyarrow string array, gathered straight
    from its buffers (no pyarrow compute call); None beyond ``max_words``."""
    rows = np.asarray(rows, dtype=np.int64)
    _, ob, db = arr.buffers()
    odt: type[np.signedinteger[Any]] = (
        np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) else np.int32)
    off = np.frombuffer(ob, dtype=odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    start = off[rows].astype(np.int64)
    ln = off[rows + 1].astype(np.int64) - start
    new_off = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(ln, out=new_off[1:])
    total = int(new_off[-1])
    data = np.frombuffer(db, dtype=np.uint8) if db is not None and total else np.zeros(0, np.uint8)
    idx = gather_index(start, ln, new_off, total)
    compact = data[idx]
    m = max(1, -(-int(ln.max(initial=0)) // 8))
    if max_words is not None and m > max_words:
        return None
    length = np.empty(rows.shape[0], dtype=np.int64)
    words = [np.empty(rows.shape[0], dtype=np.uint64) for _ in range(m)]
    if total:
        has_nul = _chunk_words(new_off, compact, m, length, words)  # (the array's buffer: no copy)
    else:  # no rows, or only empty strings
        length[...] = 0
        for w in words:
            w[...] = 0
        has_nul = False
    return StringWords(length, words, [(0, rows.shape[0])], has_nul)


_PARTITION_MIN_ROWS = 1 << 18  # below this one partition: threads cost more than they save


# the rows each partition factorizes (None: every row), and what factorizing one gives
_Parts = list["NDArray[np.intp] | None"]
_Factorized = tuple[NDArray[np.int64], NDArray[np.bool_], tuple[NDArray[np.int64], NDArray[np.int64]]]


def _factorize_part(sw: StringWords, h: NDArray[np.uint64], parts: _Parts, k: int) -> _Factorized:
    """Factorize the rows ``parts[k]`` (ascending; None = every row) of ``sw`` given their
    hash ``h`` (length bits on top): one sort of (hash, row) packed into uint64 -- the
    row itself in the low bits, so the sorted keys give the rows without a gather --
    then an exact comparison of neighbours. ``parts[k]`` is dropped once packed into
    the keys (less memory held at the peak). Returns (rows in sorted order, new: True
    where a sorted row starts a new string, pairs (earlier, later))."""
    rows, parts[k] = parts[k], None
    n_all = h.shape[0]
    n = n_all if rows is None else rows.shape[0]
    rb = max(1, (n_all - 1).bit_length())
    mask = np.uint64((1 << rb) - 1)
    key = h.copy() if rows is None else h[rows]
    key &= np.uint64(((1 << 64) - 1) ^ int(mask))
    if rows is None:
        key |= np.arange(n, dtype=np.uint64)
    else:
        key |= rows.view(np.uint64)
    del rows
    key.sort()
    srt = np.empty(n, dtype=np.int64)  # rows in key order (ascending within a key)
    np.bitwise_and(key, mask, out=srt.view(np.uint64))
    key >>= np.uint64(rb)
    p = np.flatnonzero(key[1:] == key[:-1])
    p += 1
    r_later, r_earlier = srt[p], srt[p - 1]
    eq = sw.equal(r_later, r_earlier)
    if not eq.all():
        # Truncated-hash collisions (a handful per ten million rows): within each run of
        # equal keys that holds more than one string, put equal strings next to each
        # other (rows ascending within each), then compare those neighbours again.
        spans: list[tuple[int, int]] = []
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


def factorize_words(
    sw: StringWords, threads: int | None = None,
) -> tuple[NDArray[np.int64], list[NDArray[np.int64]], tuple[NDArray[np.int64], NDArray[np.int64]]] | None:
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
    from ..parallel import run_all

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
    parts: _Parts
    if n < _PARTITION_MIN_ROWS:
        parts = [None]
    else:
        if sys.byteorder == "little":  # the low byte of each hash, read in place (no 8-byte temporary)
            low = np.bitwise_and(h.view(np.uint8)[::8], 1).view(bool)
        else:
            low = (h & np.uint64(1)).astype(bool)
        parts = [np.flatnonzero(~low), np.flatnonzero(low)]
        del low
    done = run_all([partial(_factorize_part, sw, h, parts, k) for k in range(len(parts))], threads)
    del h
    codes = np.empty(n, dtype=np.int64)
    offsets = np.cumsum([0] + [int(np.count_nonzero(new)) for _, new, _ in done])

    def scatter(k: int) -> NDArray[np.int64]:
        srt, new, _ = done[k]
        code_sorted = running_count(new)
        code_sorted += int(offsets[k]) - 1
        codes[srt] = code_sorted
        return srt[new]

    firsts = run_all([partial(scatter, k) for k in range(len(done))], threads)
    earlier = np.concatenate([d[2][0] for d in done])
    later = np.concatenate([d[2][1] for d in done])
    return codes, firsts, (earlier, later)


# ---------------------------------------------------------------------------
# query and doc columns as codes (the workspace's encoders)


def concat_strings(columns: Sequence[pa.Array | pa.ChunkedArray]) -> pa.ChunkedArray:
    import pyarrow as pa

    chunks: list[pa.Array] = []
    for c in columns:
        c = c.cast(pa.string())
        chunks.extend(c.chunks if isinstance(c, pa.ChunkedArray) else [c])
    return pa.chunked_array(chunks, pa.string())


class LazyDictionary:
    """The doc dictionary (code -> id, a pyarrow string array) built on first use: an
    evaluation reads no doc id, so the strings are only rebuilt from the words when a
    caller asks (a message naming a doc, the dashboard, a corpus or group lookup).
    ``len`` is known without building; building happens once (a lock guards it)."""

    def __init__(self, build: Callable[[], pa.Array], n: int):
        import threading

        self._build: Callable[[], pa.Array] | None = build
        self._n = int(n)
        self._value: pa.Array | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    @property
    def built(self) -> bool:
        return self._value is not None

    def get(self) -> pa.Array:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    assert self._build is not None  # cleared only once _value is set
                    self._value = self._build()
                    self._build = None  # drop the words it was rebuilt from
        return self._value


@dataclass
class DocEncoding:
    """A shared doc vocabulary and what the duplicate check needs from building it."""

    build: Callable[[], pa.Array]  # () -> pyarrow string array: code -> doc id
    n_codes: int
    codes: list[NDArray[np.int64]]  # int64 codes per input column
    bounds: list[tuple[int, int]]  # (start, stop) rows of each column in the concatenation
    pairs: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None  # (earlier, later) rows holding one doc, neighbours in row order
    words: CodeWords | None = None  # while ``build`` is still to run (else None)


def encode_docs(columns: list[pa.Array | pa.ChunkedArray], release: bool = False) -> DocEncoding:
    """Dense codes over the union of several string columns (SPEC §12: no Python loop,
    no string hash table: a sort of packed (hash, row) keys, exact by construction).
    With ``release`` the caller gives up ``columns`` (the list): it is emptied once the
    words hold every id (at most 4 words, rows that pack), so the string columns are
    freed before the factorization rather than after."""
    sw = string_words(columns, max_words=8)
    if release and sw is not None and len(sw.words) <= 4 and max(1, (sw.n - 1).bit_length()) <= 40:
        columns.clear()  # nothing below reads them on this road (factorize_words packs these rows)
    fact = factorize_words(sw) if sw is not None else None
    if fact is None:  # very long ids or > 2**40 rows: pyarrow's hash encoder
        dictionary, by_column = dictionary_arrow(columns)
        bounds: list[tuple[int, int]] = []
        a = 0
        for c in by_column:
            bounds.append((a, a + c.shape[0]))
            a += c.shape[0]
        return DocEncoding(lambda: dictionary, len(dictionary), by_column, bounds)
    assert sw is not None  # factorize_words ran on it
    codes, firsts, pairs = fact
    n_codes = sum(f.shape[0] for f in firsts)
    split = [codes[a:b] for a, b in sw.bounds]
    if len(sw.words) <= 4:
        # Rebuilt from the words by the caller (``build``), possibly while it orders the
        # lanes: ``words`` answers the tie rule in the meantime.
        def build() -> pa.Array:
            import pyarrow as pa

            from ..parallel import run_all

            parts = run_all([partial(sw.strings, f) for f in firsts])
            return parts[0] if len(parts) == 1 else pa.concat_arrays(parts)

        return DocEncoding(build, n_codes, split, sw.bounds, pairs, CodeWords(sw, np.concatenate(firsts)))
    dictionary = concat_strings(columns).take(arrow_ints(np.concatenate(firsts))).combine_chunks()
    return DocEncoding(lambda: dictionary, n_codes, split, sw.bounds, pairs)


def dictionary_arrow(columns: Sequence[pa.Array | pa.ChunkedArray]) -> tuple[pa.Array, list[NDArray[np.int64]]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    whole = concat_strings(columns)
    if len(whole) == 0:
        return pa.array([], pa.string()), [np.zeros(0, dtype=np.int64) for _ in columns]
    enc = pc.dictionary_encode(whole.combine_chunks())
    idx = to_numpy(enc.indices).astype(np.int64)
    out: list[NDArray[np.int64]] = []
    a = 0
    for c in columns:
        out.append(idx[a:a + len(c)])
        a += len(c)
    return enc.dictionary, out


def encode_sorted(columns: Sequence[pa.Array | pa.ChunkedArray]) -> tuple[NDArray[np.object_], list[NDArray[np.int32]]]:
    """Vocabulary of the union of string columns, sorted as bytes, and each column's codes.

    Query columns come in runs (a run file lists each query's hits together), so only
    the first row of each run of equal strings is looked at: the heads' words are
    sorted (``byte_order``), equal neighbours share a code, and the codes are
    repeated over the runs.
    """
    vocab, codes, _ = encode_sorted_runs(columns)
    return vocab, codes


def encode_sorted_runs(
    columns: Sequence[pa.Array | pa.ChunkedArray],
) -> tuple[NDArray[np.object_], list[NDArray[np.int32]], list[NDArray[np.int64] | None]]:
    """``encode_sorted`` and, per column, the rows (int64, ascending, 0 first when the
    column has rows) where a run of equal codes begins -- ``flatnonzero(c[1:] !=
    c[:-1]) + 1`` after a 0, known here without another pass -- or None for a column
    whose runs were not looked at (very long ids)."""
    runs = string_runs(columns, max_words=16)
    if runs is None:  # ids longer than 128 bytes
        vocab, by_column = encode_sorted_arrow(columns)
        return vocab, by_column, [None] * len(columns)
    start, heads, n = runs
    if heads.n == 0:
        return (np.zeros(0, dtype=object), [np.zeros(0, dtype=np.int32) for _ in columns],
                [np.zeros(0, dtype=np.int64) for _ in columns])
    order = byte_order(heads)
    differs = np.ones(heads.n, dtype=bool)
    differs[1:] = ~heads.equal(order[1:], order[:-1])
    code_sorted = running_count(differs) - 1
    head_codes = np.empty(heads.n, dtype=np.int32)
    head_codes[order] = code_sorted
    vocab = np.asarray(heads.strings(order[differs]).to_pylist(), dtype=object)
    codes = spread_runs(head_codes, np.asarray(start, dtype=np.int64), n)
    out: list[NDArray[np.int32]] = []
    col_starts: list[NDArray[np.int64] | None] = []
    a = 0
    for c in columns:
        b = a + len(c)
        out.append(codes[a:b])
        lo, hi = np.searchsorted(start, [a, b])
        st = start[lo:hi] - a
        if b > a and (st.shape[0] == 0 or st[0] != 0):  # a run going on from the previous column
            st = np.r_[np.int64(0), st]
        col_starts.append(st)
        a = b
    return vocab, out, col_starts


def encode_sorted_arrow(columns: Sequence[pa.Array | pa.ChunkedArray]) -> tuple[NDArray[np.object_], list[NDArray[np.int32]]]:
    """``encode_sorted`` for very long ids: pyarrow's hash encoder and sort."""
    import pyarrow.compute as pc

    heads = concat_strings(columns).combine_chunks()
    if len(heads) == 0:
        return np.zeros(0, dtype=object), [np.zeros(0, dtype=np.int32) for _ in columns]
    enc = pc.dictionary_encode(heads)
    dictionary = enc.dictionary
    order = to_numpy(pc.array_sort_indices(dictionary))
    remap = np.empty(len(order), dtype=np.int64)
    remap[order] = np.arange(len(order))
    vocab = np.asarray(dictionary.take(arrow_ints(order)).to_pylist(), dtype=object)
    codes = remap[to_numpy(enc.indices)].astype(np.int32)
    out: list[NDArray[np.int32]] = []
    a = 0
    for c in columns:
        out.append(codes[a:a + len(c)])
        a += len(c)
    return vocab, out

