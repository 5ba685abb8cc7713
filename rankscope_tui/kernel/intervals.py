"""Intervals for proportions and means, and the resampling engine they share with ``compare``.

Pure numpy/scipy; never imports Textual.

Proportions (``hit@k``, FPIR, FNIR) get the Wilson score interval. Means get a
percentile bootstrap over queries under the resampling protocol of SPEC §3:

* every resampling procedure starts a fresh ``numpy.random.default_rng(seed)``
  over the n queries, already sorted by qid as bytes (the caller's job);
* bootstrap indices are ``rng.integers(0, n, size=(B, n))``;
* sign flips are ``1 - 2 * rng.integers(0, 2, size=(B, n))``;
* quantiles are numpy's default (linear, type 7) at (1-c)/2 and (1+c)/2.

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
"""

from __future__ import annotations

import math
import queue
import sys
import threading
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterator, Literal, Sequence

import numpy as np

from .errors import InputError

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")

#: A bootstrapped interval on fewer queries than this is flagged (seed 000's coverage check).
MIN_QUERIES_FOR_COVERAGE = 30
NOTE_COVERAGE = "coverage below nominal (fewer than 30 queries)"
NOTE_NO_VARIATION = "not informative (no variation)"

_LITTLE = sys.byteorder == "little"
#: Indices are always in [0, n), so "wrap" changes nothing; it spares numpy's bounds
#: check and, with ``out=``, the buffered copy that mode="raise" always makes (3× faster).
GATHER_MODE = "wrap"
_QUEUE_BLOCKS = 4
FLIP_BLOCK_ELEMENTS = 1 << 18  # a flip block is 1 byte per draw after unpacking
# Draws per resampling block: 512 kB of int64 indices stays in L2 cache, and memory stays flat in B.
_BLOCK_ELEMENTS = 1 << 16


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` as a float, or raise ``InputError`` unless 0 < c < 1."""
    c = float(confidence)
    if not (0.0 < c < 1.0) or math.isnan(c):
        raise InputError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return c


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise InputError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    return alternative


def z_value(confidence: float) -> float:
    """Two-sided normal quantile z = Φ⁻¹(1 − (1 − c)/2); 1.9599639845400536 at c = 0.95 (stdlib NormalDist)."""
    from statistics import NormalDist  # stdlib: keeps scipy out of a plain evaluate's start-up

    c = check_confidence(confidence)
    return float(NormalDist().inv_cdf(1.0 - (1.0 - c) / 2.0))


def finite_or_none(x: float | None) -> float | None:
    """A float for strict JSON: None for None, nan and ±inf."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def null_reason(x: float | None, default: str) -> str | None:
    """Why a value became null in JSON (None when it did not)."""
    if x is None:
        return default
    x = float(x)
    if math.isnan(x):
        return default
    if x == math.inf:
        return "unbounded above (one-sided interval)"
    if x == -math.inf:
        return "unbounded below (one-sided interval)"
    return None


# ---------------------------------------------------------------------------
# result type
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A point estimate with an interval and the method that produced it.

    ``low``/``high`` may be ``±inf`` (a one-sided interval) or ``None`` (not
    computed; ``reason`` says why). ``level`` is the coverage the method aims at
    (for a one-sided bound, its one-sided level). ``note`` carries the flags a
    reader must see: "coverage below nominal …", "not informative (no variation)".
    """

    value: float | None
    low: float | None
    high: float | None
    method: str
    n: int
    level: float | None
    note: str | None = None
    reason: str | None = None

    @property
    def width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return float(self.high) - float(self.low)

    @property
    def informative(self) -> bool:
        """False for a zero-width interval (shown as "not informative", never as [x, x])."""
        w = self.width
        return w is None or w > 0.0

    def as_dict(self) -> dict:
        """Strict-JSON-safe: nan/±inf become None with a sibling ``<key>_reason``."""
        out: dict = {}
        default = self.reason or "not computed"
        for key in ("value", "low", "high"):
            raw = getattr(self, key)
            out[key] = finite_or_none(raw)
            why = null_reason(raw, default)
            if why is not None:
                out[f"{key}_reason"] = why
        out["method"] = self.method
        out["n"] = int(self.n)
        out["level"] = finite_or_none(self.level)
        out["note"] = self.note
        return out

    def describe(self, digits: int = 3) -> str:
        """Human text: ``0.667 [0.391, 0.862] (wilson, 95 %)``; never ``[x, x]``."""
        fmt = f"{{:.{digits}f}}"
        value = "n/a" if self.value is None or not math.isfinite(self.value) else fmt.format(self.value)
        if self.low is None or self.high is None:
            span = f"(no interval: {self.reason or 'not computed'})"
        elif not self.informative:
            span = f"({NOTE_NO_VARIATION})"
        else:
            lo = "-inf" if self.low == -math.inf else fmt.format(self.low)
            hi = "+inf" if self.high == math.inf else fmt.format(self.high)
            level = "" if self.level is None else f", {self.level * 100:g} %"
            span = f"[{lo}, {hi}] ({self.method}{level})"
        note = f"; {self.note}" if self.note and self.note != NOTE_NO_VARIATION else ""
        return f"{value} {span}{note}"


# ---------------------------------------------------------------------------
# proportions: Wilson, Wald, rule of three (lesson 04)
# ---------------------------------------------------------------------------


def _check_counts(k: int, n: int) -> tuple[int, int]:
    if int(k) != k or int(n) != n:
        raise InputError(f"counts must be integers, got k={k!r}, n={n!r}")
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise InputError(f"need 0 <= k <= n, got k={k}, n={n}")
    return k, n


def wilson(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for k events in n trials.

    centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n),
    z = Φ⁻¹(1 − (1−c)/2). At k = 0 the lower limit is exactly 0 and the upper
    limit is z²/(n + z²) (a one-sided (1+c)/2 bound). 8/12 at 95 % → [0.391, 0.862].
    n = 0 gives no interval.
    """
    k, n = _check_counts(k, n)
    c = check_confidence(confidence)
    if n == 0:
        return Interval(None, None, None, "wilson", 0, c, reason="no trials (n = 0)")
    z = z_value(c)
    z2 = z * z
    p = k / n
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Interval(p, low, high, "wilson", n, c)


def wald(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Normal-approximation (Wald) interval p̂ ± z·√(p̂(1−p̂)/n), clipped to [0, 1].

    Shown only beside Wilson: at k = 0 (or k = n) its width is zero, which
    claims certainty from a handful of trials — the lesson's point.
    """
    k, n = _check_counts(k, n)
    c = check_confidence(confidence)
    if n == 0:
        return Interval(None, None, None, "wald", 0, c, reason="no trials (n = 0)")
    p = k / n
    half = z_value(c) * math.sqrt(p * (1.0 - p) / n)
    low, high = max(0.0, p - half), min(1.0, p + half)
    note = "collapsed to zero width: the normal approximation fails at 0/n and n/n" if high == low else None
    return Interval(p, low, high, "wald", n, c, note=note)


def rule_of_three(n: int) -> float:
    """3/n: a one-sided 95 % upper bound on a rate after 0 events in n trials."""
    _, n = _check_counts(0, n)
    if n == 0:
        raise InputError("the rule of three needs n >= 1")
    return 3.0 / n


def wilson_upper_zero(n: int, confidence: float = 0.95) -> float:
    """Wilson upper limit after 0 events: z²/(n + z²), a one-sided (1+c)/2 bound (97.5 % at c = 0.95)."""
    _, n = _check_counts(0, n)
    z2 = z_value(confidence) ** 2
    return z2 / (n + z2)


def zero_event_bounds(n: int, confidence: float = 0.95) -> tuple[Interval, Interval, Interval]:
    """The lesson-04 row for 0 events in n trials: Wilson, rule of three and Wald, each labelled with its level."""
    c = check_confidence(confidence)
    w = wilson(0, n, c)
    w1 = Interval(0.0, 0.0, w.high, "wilson upper bound (one-sided)", n, (1.0 + c) / 2.0)
    r3 = Interval(0.0, 0.0, rule_of_three(n), "rule of three (one-sided)", n, 0.95)
    return w1, r3, wald(0, n, c)


def negatives_needed(t: float, confidence: float = 0.95) -> tuple[int, int]:
    """Negatives needed to bound a false-accept rate by t after zero false accepts.

    Returns (⌈z²(1−t)/t⌉, ⌈3/t⌉): the smallest n whose Wilson upper limit
    z²/(n+z²) is ≤ t, and the rule-of-three count. (73, 60) at t = 0.05, c = 0.95.
    The rule-of-three count is computed on the exact decimal t (``Fraction(str(t))``),
    so 3/0.05 is 60, not a float a hair above it.
    """
    t = float(t)
    if not (0.0 < t < 1.0):
        raise InputError(f"target rate must be strictly between 0 and 1, got {t!r}")
    z2 = z_value(confidence) ** 2
    wilson_n = max(0, math.ceil(z2 * (1.0 - t) / t))
    # guard the float ceiling with the defining inequality z²/(n+z²) ≤ t
    while wilson_n > 0 and z2 / (wilson_n - 1 + z2) <= t:
        wilson_n -= 1
    while z2 / (wilson_n + z2) > t:
        wilson_n += 1
    three_n = math.ceil(Fraction(3) / Fraction(str(t)))
    return wilson_n, int(three_n)


# ---------------------------------------------------------------------------
# the resampling engine
# ---------------------------------------------------------------------------


_NO_HALVES = np.empty(0, dtype=np.uint32)


class HalfStream:
    """The 32-bit draws ``next_uint32`` would return, in order, from a fresh ``default_rng(seed)``.

    Each 64-bit PCG64 output yields its low half, then its high half; a half
    left over at the end of one ``take`` is handed out first by the next.
    ``start`` skips that many 32-bit draws (PCG64 ``advance``: O(log) work), so
    a thread can read its own stretch of the same stream.
    """

    def __init__(self, seed: int, start: int = 0):
        self._bitgen = np.random.default_rng(seed).bit_generator
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
        from .parallel import default_threads

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
    """
    r = block_rows(n, chunk)
    tick = ProgressTicker(progress, flip_rows + index_rows)
    if index_rows and n == 1:
        # numpy returns zeros for a one-value range without touching the generator
        for start in range(0, index_rows, r):
            on_indices(start, np.zeros((min(r, index_rows - start), 1), dtype=np.int64))
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
                    yield "indices", idx_done, rows[:use]
                    idx_done += use
            tick(flips_done + idx_done)

    def consume(kind: str, start: int, arr: np.ndarray) -> None:
        if kind == "flips":
            rows = arr.size // n
            on_flips(start, flipped_rows(arr, rows, n))
        else:
            on_indices(start, LemireRows.finish_rows(arr))

    if single:
        for item in draws():
            consume(*item)
        return

    work: queue.Queue = queue.Queue(maxsize=_QUEUE_BLOCKS)  # bounds memory: a few blocks in flight
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


def bootstrap_indices(
    n: int, resamples: int, seed: int = 0, chunk: int | None = None, threads: int | None = 1
) -> np.ndarray:
    """The whole index matrix ``default_rng(seed).integers(0, n, size=(B, n))``.

    O(B·n) memory: for tests and goldens, not for the kernel's own work.
    """
    out = np.empty((resamples, n), dtype=np.int64)

    def keep(start: int, idx: np.ndarray) -> None:
        out[start : start + idx.shape[0]] = idx

    walk_stream(seed, n, index_rows=resamples, on_indices=keep, chunk=chunk, threads=threads)
    return out


def sign_flips(n: int, resamples: int, seed: int = 0, chunk: int | None = None, threads: int | None = 1) -> np.ndarray:
    """The whole sign matrix ``1 - 2 * default_rng(seed).integers(0, 2, size=(B, n))`` as int8 (tests, goldens)."""
    out = np.empty((resamples, n), dtype=np.int8)

    def keep(start: int, flipped: np.ndarray) -> None:
        out[start : start + flipped.shape[0]] = 1 - 2 * flipped.astype(np.int8)

    walk_stream(seed, n, flip_rows=resamples, on_flips=keep, chunk=chunk, threads=threads)
    return out


def row_means(rows: np.ndarray) -> np.ndarray:
    """``rows.mean(axis=1)`` bit for bit (numpy's mean is this reduction divided by the count)."""
    return np.add.reduce(rows, axis=1) / rows.shape[1]


def _as_matrix(values: np.ndarray | Sequence[float]) -> tuple[np.ndarray, bool]:
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
    resamples: int = 9999,
    seed: int = 0,
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
    a, one_d = _as_matrix(values)
    n, m = a.shape
    B = _check_resamples(resamples)
    if n == 0:
        raise InputError("cannot resample an empty set of queries")
    cols = [np.ascontiguousarray(a[:, j]) for j in range(m)]
    reps = np.empty((B, m), dtype=np.float64)
    gathered = np.empty(block_rows(n, chunk) * n, dtype=np.float64)

    def on_indices(start: int, idx: np.ndarray) -> None:
        rows = idx.shape[0]
        g = gathered[: rows * n].reshape(rows, n)
        for j, col in enumerate(cols):
            np.take(col, idx, out=g, mode=GATHER_MODE)
            reps[start : start + rows, j] = row_means(g)

    if B:
        walk_stream(seed, n, index_rows=B, on_indices=on_indices, chunk=chunk, threads=threads, progress=progress)
    return reps[:, 0] if one_d else reps


def _check_resamples(resamples: int) -> int:
    if int(resamples) != resamples or resamples < 0:
        raise InputError(f"resamples must be a non-negative integer, got {resamples!r}")
    return int(resamples)


def percentile_bounds(
    replicates: np.ndarray, confidence: float, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Percentile interval from replicates: numpy's default (linear) quantiles.

    Two-sided: quantiles at (1−c)/2 and (1+c)/2. ``greater``: [q(1−c), +inf);
    ``less``: (−inf, q(c)] — the interval follows a one-sided alternative.
    """
    c = check_confidence(confidence)
    check_alternative(alternative)
    reps = np.asarray(replicates, dtype=np.float64)
    if alternative == "two-sided":
        lo, hi = np.quantile(reps, [(1.0 - c) / 2.0, (1.0 + c) / 2.0])
        return float(lo), float(hi)
    a = 1.0 - c
    lo, hi = np.quantile(reps, [a, 1.0 - a])
    return (float(lo), math.inf) if alternative == "greater" else (-math.inf, float(hi))


@dataclass(frozen=True)
class BcaParts:
    """The two BCa constants (scipy's formula), so the interval can be read at any level later.

    z0 = Φ⁻¹((#{θ* < θ̂} + #{θ* ≤ θ̂}) / 2B) (bias: share of replicates below the
    estimate, ties counted half); a = Σu³ / (6 (Σu²)^{3/2}) with u_i the
    leave-one-out jackknife influence. For the mean u_i = x_i − x̄ exactly, which
    is scipy's ``(n−1)(θ̄₍.₎ − θ̂₍ᵢ₎)`` without its O(n²) jackknife loop.
    """

    z0: float
    acceleration: float

    @property
    def degenerate(self) -> bool:
        return not (math.isfinite(self.z0) and math.isfinite(self.acceleration))


def bca_parts(replicates: np.ndarray, values: np.ndarray, estimate: float | None = None) -> BcaParts:
    """BCa constants for the mean of ``values`` given its bootstrap ``replicates``."""
    x = np.asarray(values, dtype=np.float64)
    reps = np.asarray(replicates, dtype=np.float64)
    theta = float(np.mean(x)) if estimate is None else float(estimate)
    B = reps.size
    share = (np.count_nonzero(reps < theta) + np.count_nonzero(reps <= theta)) / (2.0 * B)
    from scipy.special import ndtri

    z0 = float(ndtri(share))
    u = x - theta
    s2 = float(np.sum(u * u))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = float(np.sum(u * u * u)) / (6.0 * s2**1.5) if s2 > 0.0 else math.nan
    return BcaParts(z0, acc)


def bca_bounds(
    replicates: np.ndarray, parts: BcaParts, level: float, alternative: str = "two-sided"
) -> tuple[float, float] | None:
    """BCa interval at ``level`` from replicates and their constants (None when degenerate).

    α = (1−level)/2 two-sided, 1−level one-sided; the levels read off the
    replicates are Φ(z0 + (z0 ± z_α)/(1 − a(z0 ± z_α))) (scipy's ``_bca_interval``),
    and the quantiles are numpy's linear ones.
    """
    check_alternative(alternative)
    level = check_confidence(level)
    if parts.degenerate:
        return None
    alpha = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    from scipy.special import ndtr, ndtri

    z_a = float(ndtri(alpha))
    z0, acc = parts.z0, parts.acceleration
    n1 = z0 + z_a
    n2 = z0 - z_a
    a1 = float(ndtr(z0 + n1 / (1.0 - acc * n1)))
    a2 = float(ndtr(z0 + n2 / (1.0 - acc * n2)))
    if not (math.isfinite(a1) and math.isfinite(a2)):
        return None
    lo, hi = np.quantile(np.asarray(replicates, dtype=np.float64), [a1, a2])
    lo, hi = float(lo), float(hi)
    if alternative == "greater":
        hi = math.inf
    elif alternative == "less":
        lo = -math.inf
    return lo, hi


def bootstrap_intervals(
    values: np.ndarray | Sequence[float],
    resamples: int = 9999,
    seed: int = 0,
    confidence: float = 0.95,
    chunk: int | None = None,
    alternative: str = "two-sided",
    method_name: str = "percentile bootstrap",
    threads: int | None = None,
    progress: Progress | None = None,
) -> tuple[Interval, ...]:
    """Percentile bootstrap intervals for the mean of each column of ``values``.

    ``values``: (n,) or (n, m) floats, rows = queries sorted by qid as bytes (the
    caller sorts). All m columns share one draw of indices (one query set, one
    set of replicates). Returns one ``Interval`` per column (a 1-tuple for 1-D
    input); ``value`` is the column mean. ``resamples=0`` returns the means with
    no interval. Flags: n < 30 → "coverage below nominal (fewer than 30
    queries)"; zero width → "not informative (no variation)".
    """
    a, _ = _as_matrix(values)
    n, m = a.shape
    c = check_confidence(confidence)
    check_alternative(alternative)
    B = _check_resamples(resamples)
    if n == 0:
        raise InputError("cannot bootstrap an empty set of queries")
    means = [float(np.mean(a[:, j])) for j in range(m)]
    level = c
    if B == 0:
        return tuple(
            Interval(mu, None, None, method_name, n, level, reason="resampling skipped (resamples = 0)") for mu in means
        )
    reps = bootstrap_means(a, B, seed, chunk, threads, progress)
    out = []
    for j in range(m):
        lo, hi = percentile_bounds(reps[:, j], c, alternative)
        notes = []
        if n < MIN_QUERIES_FOR_COVERAGE:
            notes.append(NOTE_COVERAGE)
        if hi - lo == 0.0:
            notes.append(NOTE_NO_VARIATION)
        out.append(Interval(means[j], lo, hi, method_name, n, level, note="; ".join(notes) or None))
    return tuple(out)
