"""The paired randomization (sign-flip) test of mean Δ = 0, and how its p is printed.

Pure numpy; SPEC §7, with the resampling protocol of SPEC §3 (see ``intervals``).

Conventions:

* Signs are ``1 − 2·rng.integers(0, 2, size=(B, n))`` from a fresh
  ``default_rng(seed)``; a flipped mean is ``np.mean(signs * Δ)`` of one row.
* p = (1 + e) / (B + 1), never 0; its floor is 1/(B + 1).
  Two-sided e = #{|Δ̄*| ≥ |Δ̄| − 100·ε·|Δ̄|}; ``greater`` e = #{Δ̄* ≥ Δ̄ − 100·ε·|Δ̄|};
  ``less`` e = #{Δ̄* ≤ Δ̄ + 100·ε·|Δ̄|} (scipy's float-tie tolerance, ε = machine epsilon).
* B is 0 (no test) or at least 999, so the floor cannot swamp a correction.

References
----------
- Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical
  significance tests for information retrieval evaluation. *CIKM 2007*, 623-632. (the
  paired randomization test)
- Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero:
  calculating exact p-values when permutations are randomly drawn. *Statistical
  Applications in Genetics and Molecular Biology* 9(1), article 39.
  (p = (1 + e)/(B + 1))
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..settings import DEFAULT_RESAMPLES, DEFAULT_SEED, MIN_RESAMPLES  # written once with the settings
from .intervals import check_alternative
from .resampling import FLIP_BLOCK_ELEMENTS, GATHER_MODE, HalfStream, Progress, ProgressTicker, block_rows, flipped_rows, resolve_threads, row_means
from .resampling import check_resamples as resampling_count

_TIE_TOL = 100.0 * float(np.finfo(np.float64).eps)


def check_resamples(resamples: int) -> int:
    """B for ``compare``/``diff``: 0 (skip resampling) or 999 (SPEC §3) to :data:`MAX_RESAMPLES`."""
    B = resampling_count(resamples)
    if 0 < B < MIN_RESAMPLES:
        raise InputError(
            f"resamples = {B} is too few for a comparison: use at least {MIN_RESAMPLES} "
            f"(the p floor 1/(B+1) = {1 / (B + 1):.4g} would swamp any correction)"
        )
    return B


class FlipSums:
    """Σ of the values whose sign a row of flips negates, by 8-bit lookup.

    Values are grouped by 8 consecutive queries; table[g, v] is the sum of the
    group's values selected by the bits of v, built bit by bit (deterministic,
    no BLAS). A row of flips packs into n/8 bytes, and its sum is n/8 lookups.
    """

    def __init__(self, values: np.ndarray):
        n = values.size
        groups = -(-n // 8)
        padded = np.zeros(groups * 8, dtype=np.float64)
        padded[:n] = values
        per_bit = padded.reshape(groups, 8)
        table = np.zeros((groups, 256), dtype=np.float64)
        for j in range(8):
            width = 1 << j
            table[:, width : 2 * width] = table[:, :width] + per_bit[:, j : j + 1]
        self._flat = table.ravel()
        self._offsets = np.arange(groups, dtype=np.intp) * 256

    def __call__(self, flipped: np.ndarray) -> np.ndarray:
        packed = np.packbits(flipped, axis=1, bitorder="little")
        index = packed.astype(np.intp)
        index += self._offsets
        sums: NDArray[np.float64] = np.take(self._flat, index, mode=GATHER_MODE).sum(axis=1)
        return sums


@dataclass(frozen=True)
class RandomizationResult:
    """A sign-flip test: p = (1 + exceedances)/(B + 1)."""

    p: float | None
    exceedances: int | None
    resamples: int
    observed: float
    alternative: str
    n_nonzero: int
    exact_rows: int = 0  # rows recomputed the plain way because they sat on the rounding band

    @property
    def at_floor(self) -> bool:
        return self.exceedances == 0


class FlipCounter:
    """Counts flipped means at least as extreme as the observed one (see module doc).

    The statistic of the protocol is the plain ``np.mean(signs * d)`` of each
    row. The lookup-table sum gives each flipped mean to within a rigorous
    rounding bound δ = (2n + G + 64)·ε·Σ|d|/n of it (any order of n − 1 float
    additions errs by at most (n − 1)·u·Σ|d|, u = ε/2; the table adds G + 8 more
    roundings). A row whose table mean is farther than δ from the decision
    threshold is decided by it; the rare rows inside the band (exact ties on a
    lattice of values, e.g. hit@k or rr differences) are recomputed the plain
    way. So the count — and p — equal the plain protocol's exactly.
    """

    def __init__(self, deltas: np.ndarray, alternative: str):
        self.d = np.ascontiguousarray(deltas, dtype=np.float64)
        self.neg = -self.d
        self.n = n = self.d.size
        self.total = float(np.sum(self.d))
        self.observed = self.total / n  # == np.mean(deltas)
        self.alternative = alternative
        gamma = _TIE_TOL * abs(self.observed)
        if alternative == "two-sided":
            self.threshold = abs(self.observed) - gamma
        elif alternative == "greater":
            self.threshold = self.observed - gamma
        else:
            self.threshold = self.observed + gamma
        groups = -(-n // 8)
        eps = float(np.finfo(np.float64).eps)
        self.band = (2 * n + groups + 64) * eps * float(np.sum(np.abs(self.d))) / n
        self.sums = FlipSums(self.d)
        self.count_total = 0
        self.exact_rows = 0

    def _hits(self, means: NDArray[np.float64]) -> NDArray[np.bool_]:
        if self.alternative == "two-sided":
            return np.abs(means) >= self.threshold
        if self.alternative == "greater":
            return means >= self.threshold
        return means <= self.threshold

    def count(self, flipped: np.ndarray) -> tuple[int, int]:
        """(extreme rows, rows recomputed exactly) for a block of flip rows; read-only, thread-safe."""
        approx = (self.total - 2.0 * self.sums(flipped)) / self.n
        stat = np.abs(approx) if self.alternative == "two-sided" else approx
        unsure = np.abs(stat - self.threshold) <= self.band
        if not unsure.any():
            return int(np.count_nonzero(self._hits(approx))), 0
        hits = int(np.count_nonzero(self._hits(approx[~unsure])))
        rows = flipped[unsure]
        exact = row_means(np.where(rows, self.neg, self.d))  # the plain protocol, bit for bit
        return hits + int(np.count_nonzero(self._hits(exact))), rows.shape[0]

    def __call__(self, _start: int, flipped: np.ndarray) -> None:
        hits, exact = self.count(flipped)
        self.count_total += hits
        self.exact_rows += exact


def _parallel_flip_count(
    counter: FlipCounter, seed: int, B: int, chunk: int | None, threads: int, progress: Progress | None
) -> tuple[int, int]:
    """Split the B flip rows into contiguous ranges, one per thread, each reading its own
    stretch of the seed's stream (``HalfStream(seed, start=row·n)``); counts add up, so the
    result is the single-pass result."""
    n = counter.n
    r = block_rows(n, chunk, FLIP_BLOCK_ELEMENTS)
    blocks = -(-B // r)
    parts = min(threads, blocks)
    cuts = [B * k // parts for k in range(parts + 1)]
    tick = ProgressTicker(progress, B)
    done = [0]
    lock = threading.Lock()

    def run(lo: int, hi: int) -> tuple[int, int]:
        stream = HalfStream(seed, start=lo * n)
        hits = exact = 0
        for s in range(lo, hi, r):
            rows = min(r, hi - s)
            h, e = counter.count(flipped_rows(stream.take(rows * n), rows, n))
            hits += h
            exact += e
            if progress is not None:
                with lock:
                    done[0] += rows
                    tick(done[0])
        return hits, exact

    if parts == 1:
        return run(0, B)
    with ThreadPoolExecutor(max_workers=parts, thread_name_prefix="rankscope-flips") as pool:
        results = list(pool.map(lambda k: run(cuts[k], cuts[k + 1]), range(parts)))
    return sum(h for h, _ in results), sum(e for _, e in results)


def randomization_test(
    deltas: np.ndarray | Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    alternative: str = "two-sided",
    chunk: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
) -> RandomizationResult:
    """Paired sign-flip (randomization) test of mean Δ = 0.

    Signs are ``1 − 2·rng.integers(0, 2, size=(B, n))`` from a fresh
    ``default_rng(seed)``, read as packed bits (the same numbers); flipped sums
    use 8-bit lookup tables, so memory is O(chunk·n) bytes and never a B × n
    float matrix. p = (1 + e)/(B + 1) with e counted as in the module doc,
    equal to the plain computation's count. ``threads`` splits the rows; the
    result does not depend on it.
    """
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 1 or d.size < 1:
        raise InputError("randomization_test needs a non-empty 1-D array of differences")
    if not np.all(np.isfinite(d)):
        raise InputError("differences must be finite")
    check_alternative(alternative)
    B = check_resamples(resamples)
    counter = FlipCounter(d, alternative)
    n_nonzero = int(np.count_nonzero(d))
    if B == 0:
        return RandomizationResult(None, None, 0, counter.observed, alternative, n_nonzero)
    hits, exact = _parallel_flip_count(counter, seed, B, chunk, resolve_threads(threads), progress)
    return RandomizationResult((1 + hits) / (B + 1), hits, B, counter.observed, alternative, n_nonzero, exact)


def format_p(p: float | None, resamples: int | None = None, hypotheses: int = 1) -> str:
    """Text for a p-value; never "p < …".

    A resampled p at its floor (hypotheses/(B + 1), i.e. 1/(B + 1) raw, J/(B + 1)
    after Holm or Bonferroni) reads "p = 0.0001, the minimum attainable with
    B = 9,999". Resampled p use enough decimals to show the floor; a p without a
    floor (t-test) uses three significant digits.
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "p = n/a"
    if resamples:
        decimals = max(4, math.ceil(math.log10(resamples + 1)))
        floor = min(1.0, hypotheses / (resamples + 1))
        text = f"p = {p:.{decimals}f}"
        if math.isclose(p, floor, rel_tol=1e-9, abs_tol=0.0):
            extra = "" if hypotheses == 1 else f" and {hypotheses} hypotheses"
            text += f", the minimum attainable with B = {resamples:,}{extra}"
        return text
    if p >= 0.001:
        return f"p = {p:.3f}"
    return f"p = {p:.3g}" if p > 0 else "p = 0 (below floating-point resolution)"

