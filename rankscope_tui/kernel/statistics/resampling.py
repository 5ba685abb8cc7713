"""The resampling stream engine: the draws of a fresh ``default_rng(seed)``, read fast.

Pure numpy; never imports Textual. The protocol (SPEC §3):

* every resampling procedure starts a fresh ``numpy.random.default_rng(seed)``
  over the n queries, already sorted by qid as bytes (the caller's job);
* bootstrap indices are ``rng.integers(0, n, size=(B, n))``;
* sign flips are ``1 - 2 * rng.integers(0, 2, size=(B, n))``.

This module draws those numbers in chunks (memory flat in B), on a second thread
when asked (a pipeline: the numbers cannot change), and turns index rows into
bootstrap replicates of means. :mod:`.intervals` reads intervals off the replicates.

How the stream is drawn (measured with numpy 2.4 / scipy 1.17, pinned by tests)
--------------------------------------------------------------------------
``Generator.integers`` with the default int64 dtype and a range below 2**32
uses Lemire's multiply-shift method on 32-bit draws. Those 32-bit draws come
from PCG64's ``next_uint32``, which splits each 64-bit output into its low
half, then its high half, and parks the unused half *inside the bit
generator's state*. So the buffered half survives between calls, and drawing
the (B, n) index matrix in row chunks reproduces the single big draw bit for
bit, whatever the chunk size (n odd included). scipy's ``bootstrap`` draws
``rng.integers(0, n, (batch, n))`` per batch, so its ``batch`` argument does
not change the stream either, and our replicates equal
``scipy.stats.bootstrap(..., rng=default_rng(seed)).bootstrap_distribution``
exactly (not just to 1e-12): each replicate is ``np.mean`` of one gathered row,
the same reduction scipy performs.

Rather than call ``integers`` (about 3 ns a draw), the engine reads the raw
64-bit outputs with ``bit_generator.random_raw``, splits them into halves in
the same low-then-high order, and applies Lemire's rule vectorised:
``index = (x * n) >> 32``, rejecting a draw when ``(x * n) mod 2**32`` is below
``(2**32 - n) mod n`` and taking the next one. A sign flip from
``integers(0, 2)`` is Lemire with n = 2, which never rejects and returns the top
bit of the 32-bit draw. Both are the same numbers the stated protocol gives;
the tests compare them with ``rng.integers`` directly.

Because every procedure starts from the same seed, the paired bootstrap, the
sign flips and the first half (I) of the unpaired resample all read the same
32-bit stream; ``compare`` walks it once.

Two readings of the index rows. ``bootstrap_means`` gathers each drawn row and takes
numpy's mean (scipy's reduction: its replicates equal scipy's bit for bit; ``compare``,
Tukey and BCa read these). ``bootstrap_means_counted`` turns each row into counts (how
often each query was drawn) and multiplies them by every column at once, exactly, on
the ``ExactGrid`` (evaluate's intervals read these: one product serves every lane,
measure and level: 1.1 s of CPU where gathering 18 columns took 2.5 s). Same draws; the two
replicates differ by rounding.

References
----------
- Efron, B. (1979). Bootstrap methods: another look at the jackknife. *Annals of
  Statistics* 7(1), 1-26. (the percentile bootstrap)
- O'Neill, M. E. (2014). PCG: a family of simple fast space-efficient statistically good
  algorithms for random number generation. Technical report HMC-CS-2014-0905, Harvey
  Mudd College. (PCG64, numpy's default bit generator)
- Lemire, D. (2019). Fast random integer generation in an interval. *ACM Transactions on
  Modeling and Computer Simulation* 29(1), article 3. (the multiply-shift rule numpy's
  ``integers`` uses)
"""

from __future__ import annotations

import queue
import sys
import threading
from typing import Callable, Final, Iterator, Sequence, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..settings import DEFAULT_RESAMPLES, DEFAULT_SEED, MAX_RESAMPLES, MAX_SEED, too_many_resamples  # the limits, written once with the settings

_LITTLE = sys.byteorder == "little"
#: Indices are always in [0, n), so "wrap" changes nothing; it spares numpy's bounds
#: check and, with ``out=``, the buffered copy that mode="raise" always makes (3× faster).
GATHER_MODE: Final = "wrap"
_QUEUE_BLOCKS = 4
FLIP_BLOCK_ELEMENTS = 1 << 18  # a flip block is 1 byte per draw after unpacking
# Draws per resampling block: 512 kB of int64 indices stays in L2 cache, and memory stays flat in B.
_BLOCK_ELEMENTS = 1 << 16
#: Draws per block when the bootstrap runs as a pipeline (threads >= 2): each block crosses
#: threads once, and with 2**16 draws the two threads switched some 6,000 times for
#: B = 9,999 over 9,900 queries (0.1 s of system time, little overlap). 2**18 draws cut
#: the switches 10x: wall 0.60-0.70 s instead of 0.75-1.0 s, and less CPU
#: (benchmarks/results/profile_small.md). The numbers do not depend on the block size.
PIPELINE_BLOCK_ELEMENTS = 1 << 18


_NO_HALVES = np.empty(0, dtype=np.uint32)

#: The stream every resampled number is defined on, as numpy 2.4.6 draws it (numpy 1.26.4
#: draws the same): a fresh ``default_rng(12345)``'s first two 64-bit PCG64 outputs, and
#: from another fresh one ``integers(0, 7, 3)``, ``integers(0, 7, 2)`` and
#: ``integers(0, 2**31 - 1, 2)``: Lemire's rule on 32-bit halves, low half first, with the
#: half left over by one call used first by the next (what ``HalfStream`` reproduces).
_KNOWN_SEED = 12345
_KNOWN_RAW = (4193609425186963869, 5843160025838961886)
_KNOWN_CALLS = ((7, 3), (7, 2), (2**31 - 1, 2))
_KNOWN_INTEGERS = ((4, 1, 5), (2, 1), (1712329280, 1380152455))
_stream_checked = False


class NumpyStreamError(RuntimeError):
    """numpy's ``default_rng(seed)`` draws a stream other than the one rankscope's
    bootstrap intervals and p-values are defined on."""


def check_numpy_stream() -> None:
    """Compare a few draws of a fresh ``default_rng(12345)`` with the known stream, once per
    process (about a hundred microseconds); raise ``NumpyStreamError`` naming numpy's version on a
    mismatch. The engine reads PCG64's raw outputs and applies numpy's Lemire rule itself, so a
    numpy that changed its generator or its ``integers`` would change every resampled number
    silently; pyproject holds numpy below 3 for the same reason."""
    global _stream_checked
    if _stream_checked:
        return
    rng = np.random.default_rng(_KNOWN_SEED)
    fresh = rng.bit_generator.state  # read the raw words, then start the integers from the same fresh state
    raw = tuple(int(v) for v in rng.bit_generator.random_raw(len(_KNOWN_RAW)))
    rng.bit_generator.state = fresh
    drawn = tuple(tuple(int(v) for v in rng.integers(0, high, size=k)) for high, k in _KNOWN_CALLS)
    if raw != _KNOWN_RAW or drawn != _KNOWN_INTEGERS:
        raise NumpyStreamError(
            f"numpy {np.__version__} draws a different stream from default_rng({_KNOWN_SEED}) than the one "
            f"rankscope's resampling reproduces (numpy 1.26 to 2.x: PCG64, Lemire's rule on 32-bit halves); "
            f"bootstrap intervals and p-values would not be rankscope's: install numpy>=1.26,<3")
    _stream_checked = True


def check_seed(seed: object) -> int:
    """``seed`` as an int, or an ``InputError`` unless 0 <= seed <= 2^64 - 1."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise InputError(f"seed must be an integer from 0 to 2^64 - 1, got {seed!r}"[:200])
    return int(seed)


class HalfStream:
    """The 32-bit draws ``next_uint32`` would return, in order, from a fresh ``default_rng(seed)``.

    Each 64-bit PCG64 output yields its low half, then its high half; a half
    left over at the end of one ``take`` is handed out first by the next.
    ``start`` skips that many 32-bit draws (PCG64 ``advance``: O(log) work), so
    a thread can read its own stretch of the same stream.
    """

    def __init__(self, seed: int, start: int = 0):
        check_numpy_stream()
        # default_rng's bit generator is a PCG64 (the stubs say BitGenerator, which has no advance)
        self._bitgen = cast(np.random.PCG64, np.random.default_rng(check_seed(seed)).bit_generator)
        self._spare = np.empty(0, dtype=np.uint32)
        if start:
            self._bitgen.advance(start // 2)
            if start % 2:
                self._spare = self._split(self._bitgen.random_raw(1))[1:].copy()

    @staticmethod
    def _split(words: np.ndarray) -> np.ndarray:
        if _LITTLE:
            return words.view(np.uint32)
        halves = np.empty(2 * words.size, dtype=np.uint32)  # pragma: no cover - big-endian hosts
        halves[0::2] = words & 0xFFFFFFFF  # pragma: no cover
        halves[1::2] = words >> np.uint64(32)  # pragma: no cover
        return halves  # pragma: no cover

    def take(self, k: int) -> np.ndarray:
        """The next k draws as a fresh uint32 array (safe to hand to another thread)."""
        if k <= 0:
            return np.empty(0, dtype=np.uint32)
        have = self._spare.size
        halves = self._split(self._bitgen.random_raw((k - have + 1) // 2))
        if have:
            halves = np.concatenate((self._spare, halves))
        self._spare = halves[k:].copy() if halves.size > k else _NO_HALVES
        return halves[:k]


def flipped_rows(x: np.ndarray, rows: int, n: int) -> np.ndarray:
    """Booleans, True where ``rng.integers(0, 2)`` drew 1 (sign −1): the top bit of each 32-bit draw."""
    return (x[: rows * n].view(np.int32) < 0).reshape(rows, n)


def _low_halves(m: np.ndarray) -> np.ndarray:
    """The low 32 bits of non-negative int64 values (a strided view when possible)."""
    if _LITTLE:
        return m.view(np.uint32)[0::2]
    return (m & 0xFFFFFFFF).astype(np.uint32)  # pragma: no cover


class LemireRows:
    """Turns 32-bit draws into rows of ``rng.integers(0, n, size=(rows, n))``.

    index = (x·n) >> 32, and a draw is rejected when (x·n) mod 2**32 <
    (2**32 − n) mod n (numpy's ``buffered_bounded_lemire_uint32``). Accepted
    values form one stream; rows are consecutive blocks of n, so a rejection
    shifts later rows by one draw, exactly as numpy does. (n = 1 is handled by
    the caller: numpy returns zeros without touching the generator.)

    ``feed`` returns the products x·n of whole rows; the index is their top
    half (``finish_rows`` shifts in place, possibly on another thread). The
    products live in a ring of ``ring`` reused buffers: a returned block stays
    valid until ``ring − 1`` further feeds.
    """

    def __init__(self, n: int, block_rows: int, ring: int = 1):
        if n < 2 or n >= 2**31:
            raise InputError(f"cannot draw bootstrap indices for {n} queries")
        self.n = n
        self.threshold = (2**32 - n) % n
        self._size = (block_rows + 1) * n
        self._ring = [np.empty(self._size, dtype=np.int64) for _ in range(ring)]
        self._at = 0
        self._tail = (0, 0)  # (start, length) of the incomplete row in the current buffer

    def feed(self, x: np.ndarray) -> np.ndarray:
        n = self.n
        old = self._ring[self._at]
        self._at = (self._at + 1) % len(self._ring)
        buf = self._ring[self._at]
        start, c = self._tail
        if c and (buf is not old or start):
            buf[:c] = old[start : start + c]  # carry the incomplete row (no overlap: start >= n > c)
        k = x.size
        if c + k > buf.size:
            buf = np.empty(c + k, dtype=np.int64)
            buf[:c] = old[start : start + c] if c else buf[:0]
            self._ring[self._at] = buf
        seg = buf[c : c + k]
        np.multiply(x, n, out=seg, dtype=np.int64)  # exact: x < 2**32 and n < 2**31
        if self.threshold and k:
            low = _low_halves(seg)
            if int(low.min()) < self.threshold:  # rare: about n / 2**32 per draw
                kept = seg[low >= self.threshold]
                seg[: kept.size] = kept
                k = kept.size
        total = c + k
        rows = total // n
        self._tail = (rows * n, total - rows * n)
        return buf[: rows * n].reshape(rows, n)

    @staticmethod
    def finish_rows(products: np.ndarray) -> np.ndarray:
        np.right_shift(products, 32, out=products)
        return products


def block_rows(n: int, chunk: int | None = None, elements: int | None = None) -> int:
    """Replicate rows per block: ``chunk`` if given, else about ``elements`` draws
    (2**16 for index walks, whose int64 blocks should stay in L2; flip-only walks
    use 2**18); even when n is odd."""
    if chunk is not None:
        if int(chunk) != chunk or chunk < 1:
            raise InputError(f"chunk must be a positive integer, got {chunk!r}")
        return int(chunk)
    rows = max(1, (elements or _BLOCK_ELEMENTS) // max(n, 1))
    if n % 2 and rows > 1:
        rows -= rows % 2  # keeps every block a whole number of 64-bit words
    return rows


def resolve_threads(threads: int | None) -> int:
    """``threads`` if given (≥ 1), else ``parallel.default_threads()`` (the available
    CPUs, at most 4; ``RANKSCOPE_THREADS`` overrides). Results never depend on it:
    each thread reads its own stretch of the one stream (``random_raw`` and the numpy
    kernels release the GIL)."""
    if threads is None:
        from ..parallel import default_threads

        return default_threads()
    if int(threads) != threads or threads < 1:
        raise InputError(f"threads must be a positive integer, got {threads!r}")
    return int(threads)


Progress = Callable[[float], None]


class ProgressTicker:
    """Calls ``progress(fraction)`` at most about a hundred times per walk."""

    def __init__(self, progress: Progress | None, total: int):
        self.fn, self.total, self.next = progress, max(total, 1), 0.0

    def __call__(self, done: int) -> None:
        if self.fn is not None:
            f = min(1.0, done / self.total)
            if f >= self.next or f == 1.0:
                self.fn(f)
                self.next = f + 0.01


def walk_stream(
    seed: int,
    n: int,
    *,
    flip_rows: int = 0,
    index_rows: int = 0,
    on_flips: Callable[[int, np.ndarray], None] | None = None,
    on_indices: Callable[[int, np.ndarray], None] | None = None,
    chunk: int | None = None,
    threads: int | None = 1,
    progress: Progress | None = None,
    on_indices_drawn: Callable[[int, np.ndarray], None] | None = None,
    drawn_rows: int | None = None,
) -> None:
    """One pass over the 32-bit stream of a fresh ``default_rng(seed)``.

    ``on_flips(start, flipped)`` gets rows ``start..`` of the sign-flip matrix as
    booleans, True where ``rng.integers(0, 2)`` drew 1 (sign −1): the first
    ``flip_rows``·n draws. ``on_indices(start, idx)`` gets rows ``start..`` of
    ``rng.integers(0, n, size=(index_rows, n))`` read from the *same* draws.
    Both equal what separate fresh generators would give, so one walk serves
    the randomization test, the paired bootstrap and the unpaired resample.

    Callbacks run in stream order on one thread. With ``threads`` ≥ 2 the
    calling thread draws (random bits, Lemire products) while a second thread
    runs the callbacks: a pipeline, so the numbers cannot change.
    ``on_indices_drawn(start, idx)``, when given, gets every index block first, on
    the drawing thread, before ``on_indices`` gets the same block (read-only for
    both): a share of the per-block work that runs beside the other thread's. Such a
    block's indices are finished (shifted) on the drawing thread too. ``drawn_rows``
    limits that to the blocks starting before that row (None: every block); later
    blocks go to ``on_indices`` alone and are finished on the thread running it.
    """
    r = block_rows(n, chunk)
    tick = ProgressTicker(progress, flip_rows + index_rows)
    if index_rows and n == 1:
        assert on_indices is not None  # index rows are asked for, so is their callback
        # numpy returns zeros for a one-value range without touching the generator
        for start in range(0, index_rows, r):
            zeros = np.zeros((min(r, index_rows - start), 1), dtype=np.int64)
            if on_indices_drawn is not None and (drawn_rows is None or start < drawn_rows):
                on_indices_drawn(start, zeros)
            on_indices(start, zeros)
        index_rows = 0
    if not (flip_rows or index_rows):
        return
    single = resolve_threads(threads) < 2

    def draws() -> Iterator[tuple[str, int, np.ndarray]]:
        stream = HalfStream(seed)
        # the pipeline holds at most queue size + 2 blocks; single-threaded, one buffer is reused
        lemire = LemireRows(n, r, ring=1 if single else _QUEUE_BLOCKS + 3) if index_rows else None
        flips_done = idx_done = 0
        while flips_done < flip_rows or idx_done < index_rows:
            x = stream.take(r * n)
            if flips_done < flip_rows:
                rf = min(r, flip_rows - flips_done)
                yield "flips", flips_done, x[: rf * n]
                flips_done += rf
            if lemire is not None and idx_done < index_rows:
                rows = lemire.feed(x)
                use = min(rows.shape[0], index_rows - idx_done)
                if use:
                    if on_indices_drawn is None or (drawn_rows is not None and idx_done >= drawn_rows):
                        yield "indices", idx_done, rows[:use]
                    else:  # finished here, so the drawing thread can read the indices too
                        idx = LemireRows.finish_rows(rows[:use])
                        on_indices_drawn(idx_done, idx)
                        yield "finished", idx_done, idx
                    idx_done += use
            tick(flips_done + idx_done)

    def consume(kind: str, start: int, arr: np.ndarray) -> None:
        # each kind of block is drawn only when its rows, and so its callback, are asked for
        if kind == "flips":
            assert on_flips is not None

            rows = arr.size // n
            on_flips(start, flipped_rows(arr, rows, n))
        elif kind == "finished":
            assert on_indices is not None
            on_indices(start, arr)
        else:
            assert on_indices is not None
            on_indices(start, LemireRows.finish_rows(arr))


    if single:
        for item in draws():
            consume(*item)
        return

    work: queue.Queue[tuple[str, int, np.ndarray] | None] = queue.Queue(maxsize=_QUEUE_BLOCKS)  # bounds memory: a few blocks in flight
    failure: list[BaseException] = []

    def worker() -> None:
        while True:
            item = work.get()
            if item is None:
                return
            if not failure:
                try:
                    consume(*item)
                except BaseException as exc:  # re-raised on the calling thread
                    failure.append(exc)

    helper = threading.Thread(target=worker, name="rankscope-resample", daemon=True)
    helper.start()
    try:
        for item in draws():
            if failure:
                break
            work.put(item)
    finally:
        work.put(None)
        helper.join()
    if failure:
        raise failure[0]


def row_means(rows: np.ndarray) -> np.ndarray:
    """``rows.mean(axis=1)`` bit for bit (numpy's mean is this reduction divided by the count)."""
    means: NDArray[np.float64] = np.add.reduce(rows, axis=1) / rows.shape[1]
    return means


def as_matrix(values: np.ndarray | Sequence[float]) -> tuple[np.ndarray, bool]:
    a = np.asarray(values, dtype=np.float64)
    one_d = a.ndim == 1
    if one_d:
        a = a[:, None]
    if a.ndim != 2:
        raise InputError(f"values must be a 1-D or 2-D array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError("values must be finite (no nan or inf)")
    return a, one_d


def bootstrap_means(
    values: np.ndarray | Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    chunk: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
) -> np.ndarray:
    """Bootstrap replicates of the column means: a (B, m) array (B for 1-D input).

    Replicate b of column j is ``np.mean(values[idx[b], j])`` with ``idx`` the
    protocol's index matrix — the same reduction scipy applies, so the result
    equals ``scipy.stats.bootstrap(...).bootstrap_distribution`` bit for bit.
    One index draw serves every column. Memory is O(chunk·n), not O(B·n).
    ``threads`` ≥ 2 pipelines drawing and gathering; the numbers do not change.
    """
    a, one_d = as_matrix(values)
    n, m = a.shape
    B = check_resamples(resamples)
    if n == 0:
        raise InputError("cannot resample an empty set of queries")
    cols = [np.ascontiguousarray(a[:, j]) for j in range(m)]
    reps = np.empty((B, m), dtype=np.float64)
    pipelined = bool(B) and n > 1 and resolve_threads(threads) >= 2
    if chunk is None and pipelined:
        chunk = block_rows(n, None, PIPELINE_BLOCK_ELEMENTS)
    size = block_rows(n, chunk) * n
    # Pipelined, the drawing thread gathers the first columns itself (each column is
    # gathered and reduced the same way wherever it runs): drawing costs about two
    # columns' gathers, so this share balances the two threads.
    here = (m - 2) // 2 if pipelined else 0

    def gatherer(first: int, last: int) -> Callable[[int, np.ndarray], None]:
        gathered = np.empty(size, dtype=np.float64)

        def on_indices(start: int, idx: np.ndarray) -> None:
            rows = idx.shape[0]
            g = gathered[: rows * n].reshape(rows, n)
            for j in range(first, last):
                np.take(cols[j], idx, out=g, mode=GATHER_MODE)
                reps[start : start + rows, j] = row_means(g)

        return on_indices

    if B:
        walk_stream(seed, n, index_rows=B, on_indices=gatherer(here, m), chunk=chunk, threads=threads,
                    progress=progress, on_indices_drawn=gatherer(0, here) if here else None)
    return reps[:, 0] if one_d else reps


#: Draws per block of the counted bootstrap: 2**18 draws (26 rows at n = 9,900) keep a
#: block's counts (2 MB) near the cache and give each product enough rows. CPU for
#: B = 9,999 × 9,900 queries × 18 columns, one thread: 1.08 s at 2**18 draws, 1.23 s
#: at 2**17, 1.37 s at 2**16, 1.22-1.25 s at 2**19-2**20. The numbers do not depend on it.
COUNT_BLOCK_ELEMENTS = 1 << 18
#: M·N·K of one counted product: OpenBLAS runs a dgemm at most 65,536 × 4 on one thread
SINGLE_THREAD_PRODUCT = 1 << 18


class ExactGrid:
    """The column values on a fixed binary grid, split so a count-weighted sum is exact.

    Column j with max |v| < 2**e_j is written as integers q_ij = rint(v_ij · 2**(2b − e_j))
    (|q| ≤ 2**(2b)), and q = hi·2**b + lo with hi = ⌊q / 2**b⌋ and 0 ≤ lo < 2**b, where
    b = 53 − bitlen(n). A bootstrap row's counts c_i (Σ c_i = n) then give
    Σ c_i·hi_ij and Σ c_i·lo_ij as integers below n·2**b < 2**53: every product and every
    partial sum is an exact float64 in any order, so a BLAS product returns the same
    bits on every machine, block size and thread count. The mean is
    ((S_hi·2**b + S_lo) / n) · 2**(e_j − 2b): two roundings, so it is within about an ulp
    of the exact mean of the gridded values, and the grid moves a value by at most
    2**(e_j − 2b − 1) (at most 2**-78 of the column's largest |v| at n = 9,900).
    """

    def __init__(self, a: np.ndarray):
        n, m = a.shape
        self.n, self.m = n, m
        self.b = 53 - n.bit_length()
        peak = np.max(np.abs(a), axis=0) if n else np.zeros(m)
        self.e = np.where(peak > 0.0, np.frexp(peak)[1], 0).astype(np.int32)  # peak < 2**e
        q = np.rint(np.ldexp(a, (2 * self.b - self.e)[None, :]))
        hi = np.floor(np.ldexp(q, -self.b))
        lo = q - np.ldexp(hi, self.b)  # exact: the true difference is an integer below 2**b
        #: (n, 2m): the high parts, then the low parts; one product serves both
        self.weights = np.ascontiguousarray(np.concatenate((hi, lo), axis=1))

    def means(self, sums: np.ndarray) -> np.ndarray:
        """Row means from ``counts @ weights`` (rows, 2m)."""
        m, b = self.m, self.b
        total = np.ldexp(sums[:, :m], b)
        total += sums[:, m:]
        total /= self.n
        out: NDArray[np.float64] = np.ldexp(total, (self.e - 2 * b)[None, :])
        return out


def bootstrap_means_counted(
    values: np.ndarray | Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    chunk: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
) -> np.ndarray:
    """Bootstrap replicates of the column means from the protocol's index draws, read as
    counts: a (B, m) array (B for 1-D input).

    Row b of ``rng.integers(0, n, size=(B, n))`` becomes counts c_bi (how often query i
    was drawn), and every column's replicate is Σ c_bi·v_ij / n, computed exactly on the
    :class:`ExactGrid` and rounded twice, so one matrix product per block of rows serves
    every column (lanes × measures) and one walk of the stream serves them all. The
    draws are :func:`bootstrap_means`' (and ``scipy.stats.bootstrap``'s); the replicates
    differ from that gathered-row mean only by rounding (a few ulps: numpy's pairwise sum
    of the gathered row rounds at each step). The result does not depend on ``chunk``,
    ``threads``, the BLAS or the machine. Memory: one block of counts, about
    ``COUNT_BLOCK_ELEMENTS`` floats, plus the (n, 2m) grid.
    """
    a, one_d = as_matrix(values)
    n, m = a.shape
    B = check_resamples(resamples)
    if n == 0:
        raise InputError("cannot resample an empty set of queries")
    reps = np.empty((B, m), dtype=np.float64)
    if B:
        grid = ExactGrid(a)
        rows_max = block_rows(n, chunk, COUNT_BLOCK_ELEMENTS)
        offsets = (np.arange(rows_max, dtype=np.int64) * n)[:, None]
        flat = np.empty(rows_max * n, dtype=np.int64)
        ones = np.ones(rows_max * n, dtype=np.float64)
        weights = grid.weights
        # each product small enough that BLAS runs it on the calling thread (below
        # OpenBLAS's M·N·K threshold for threads): threaded BLAS on a busy machine waited
        # for descheduled workers, 20 s of CPU where one thread took 1 s
        span = max(16, SINGLE_THREAD_PRODUCT // max(1, rows_max * weights.shape[1]))
        total = np.empty((rows_max, weights.shape[1]), dtype=np.float64)
        piece = np.empty_like(total)

        def on_indices(start: int, idx: np.ndarray) -> None:
            rows = idx.shape[0]
            cells = flat[: rows * n]
            np.add(idx, offsets[:rows], out=cells.reshape(rows, n))  # row r's draws land in bins r·n .. r·n + n − 1
            # float counts straight from bincount (weights of one): an int64 bincount and a cast cost 5x more
            counts = np.bincount(cells, weights=ones[: rows * n], minlength=rows * n).reshape(rows, n)
            sums, part = total[:rows], piece[:rows]
            np.matmul(counts[:, :span], weights[:span], out=sums)
            for k in range(span, n, span):  # exact integers: the pieces add up in any order
                np.matmul(counts[:, k : k + span], weights[k : k + span], out=part)
                sums += part
            reps[start : start + rows] = grid.means(sums)

        walk_stream(seed, n, index_rows=B, on_indices=on_indices, chunk=rows_max, threads=threads, progress=progress)
    return reps[:, 0] if one_d else reps


def check_resamples(resamples: int) -> int:
    """B as an int: a non-negative integer of at most :data:`MAX_RESAMPLES`."""
    try:
        B = int(resamples)
    except (TypeError, ValueError, OverflowError):
        B = None
    if B is None or B != resamples or B < 0:
        raise InputError(f"resamples must be a non-negative integer, got {resamples!r}"[:200])
    if B > MAX_RESAMPLES:
        raise InputError(too_many_resamples(B))
    return B
