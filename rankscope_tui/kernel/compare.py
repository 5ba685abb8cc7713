"""Paired comparison of two lanes on one metric, the verdict algorithm, and diff rows.

Pure numpy/scipy; never imports Textual. SPEC §7 (compare) and §8 (diff); the
resampling protocol is SPEC §3 (see ``resampling``).

Conventions used throughout:

* Δ = candidate − baseline, per query; the queries are the same positives for
  both lanes, sorted by qid as bytes (the caller aligns and sorts).
* sd(Δ) is the sample standard deviation (ddof = 1).
* Randomization p = (1 + e) / (B + 1), never 0; its floor is 1/(B + 1).
  Two-sided e = #{|Δ̄*| ≥ |Δ̄| − 100·ε·|Δ̄|}; ``greater`` e = #{Δ̄* ≥ Δ̄ − 100·ε·|Δ̄|};
  ``less`` e = #{Δ̄* ≤ Δ̄ + 100·ε·|Δ̄|} (scipy's float-tie tolerance, ε = machine epsilon).
* Holm positions rank raw p ascending; ties keep call order.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.special import stdtr

from .errors import InputError
from .intervals import (
    MIN_QUERIES_FOR_COVERAGE,
    BcaParts,
    bca_bounds,
    bca_parts,
    check_alternative,
    check_confidence,
    finite_or_none,
    null_reason,
    percentile_bounds,
)
from .resampling import (
    FLIP_BLOCK_ELEMENTS,
    GATHER_MODE,
    HalfStream,
    Progress,
    ProgressTicker,
    block_rows,
    flipped_rows,
    resolve_threads,
    row_means,
    walk_stream,
)

CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "none")
VERDICTS: tuple[str, ...] = ("better", "worse", "inconclusive", "exploratory", "descriptive")
#: How each verdict is printed: an inconclusive row is never shown as a loss.
VERDICT_TEXT: dict[str, str] = {
    "better": "better",
    "worse": "worse",
    "inconclusive": "no improvement shown",
    "exploratory": "exploratory (not a test)",
    "descriptive": "descriptive (outside the primary family)",
}
#: Printed under every comparison table.
CAPTION = (
    "Intervals are per comparison, not simultaneous. They describe variation over queries "
    "for these fixed runs, not over training seeds."
)
MIN_RESAMPLES = 999
LARGEST = 5
_TIE_TOL = 100.0 * float(np.finfo(np.float64).eps)

#: the keys of one ``compare --out`` row, in order (SPEC §7)
ROW_KEYS: tuple[str, ...] = (
    "baseline", "candidate", "metric", "n", "n_nonzero", "tie_rate", "baseline_mean",
    "candidate_mean", "difference", "median_difference", "wins", "losses", "ties", "ci_low",
    "ci_high", "p_superiority", "randomization_p", "adjusted_p", "t_p", "bca_level", "bca_low",
    "bca_high", "effect_size", "unpaired_ci_low", "unpaired_ci_high", "confidence", "resamples",
    "seed", "correction", "exploratory", "verdict", "t_agrees", "interval_agrees",
    "bootstrap_agrees", "largest_losses", "largest_gains",
)  # fmt: skip


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def check_resamples(resamples: int) -> int:
    """B for ``compare``/``diff``: 0 (skip resampling) or at least 999 (SPEC §3)."""
    if int(resamples) != resamples or resamples < 0:
        raise InputError(f"resamples must be a non-negative integer, got {resamples!r}")
    B = int(resamples)
    if 0 < B < MIN_RESAMPLES:
        raise InputError(
            f"resamples = {B} is too few for a comparison: use at least {MIN_RESAMPLES} "
            f"(the p floor 1/(B+1) = {1 / (B + 1):.4g} would swamp any correction)"
        )
    return B


def _aligned(baseline, candidate, qids) -> tuple[np.ndarray, np.ndarray, list[str]]:
    b = np.asarray(baseline, dtype=np.float64)
    c = np.asarray(candidate, dtype=np.float64)
    q = [str(x) for x in qids]
    if b.ndim != 1 or c.ndim != 1 or b.shape != c.shape or len(q) != b.size:
        raise InputError(
            f"baseline, candidate and qids must be aligned 1-D arrays of one length "
            f"(got {b.shape}, {c.shape}, {len(q)})"
        )
    if b.size < 2:
        raise InputError(f"a paired comparison needs at least 2 queries, got {b.size}")
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(c))):
        raise InputError("per-query values must be finite")
    keys = [x.encode("utf-8") for x in q]
    if any(keys[i] >= keys[i + 1] for i in range(len(keys) - 1)):
        raise InputError("qids must be unique and sorted as bytes (the resampling protocol depends on it)")
    return b, c, q


# ---------------------------------------------------------------------------
# single tests
# ---------------------------------------------------------------------------


def paired_t_test(deltas: np.ndarray, alternative: str = "two-sided") -> float | None:
    """Paired t-test p on Δ, as ``scipy.stats.ttest_rel(candidate, baseline)``.

    t = Δ̄ / (sd(Δ, ddof=1)/√n), df = n − 1; two-sided p = 2·F_t(−|t|). None when sd = 0.
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = d.size
    if n < 2:
        return None
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    if sd == 0.0 or not math.isfinite(sd):
        return None
    t = mean / (sd / math.sqrt(n))
    df = n - 1
    if alternative == "two-sided":
        p = 2.0 * float(stdtr(df, -abs(t)))
    elif alternative == "greater":
        p = float(stdtr(df, -t))
    else:
        p = float(stdtr(df, t))
    return min(1.0, p)


class _FlipSums:
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
        return np.take(self._flat, index, mode=GATHER_MODE).sum(axis=1)


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


class _FlipCounter:
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
        self.sums = _FlipSums(self.d)
        self.count_total = 0
        self.exact_rows = 0

    def _hits(self, means: np.ndarray) -> np.ndarray:
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
    counter: _FlipCounter, seed: int, B: int, chunk: int | None, threads: int, progress: Progress | None
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
    resamples: int = 9999,
    seed: int = 0,
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
    counter = _FlipCounter(d, alternative)
    n_nonzero = int(np.count_nonzero(d))
    if B == 0:
        return RandomizationResult(None, None, 0, counter.observed, alternative, n_nonzero)
    hits, exact = _parallel_flip_count(counter, seed, B, chunk, resolve_threads(threads), progress)
    return RandomizationResult((1 + hits) / (B + 1), hits, B, counter.observed, alternative, n_nonzero, exact)


# ---------------------------------------------------------------------------
# one (baseline, candidate, metric) pair
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryDelta:
    """One query in the largest-losses/gains lists.

    ``share`` is its part of the total loss (Δ_i / Σ_{Δ<0} Δ) or total gain
    (Δ_i / Σ_{Δ>0} Δ). ``baseline_judged``/``candidate_judged`` carry both lanes'
    judged@k for the query when the caller passes them (SPEC §7), else None.
    """

    qid: str
    baseline: float
    candidate: float
    difference: float
    share: float
    baseline_judged: float | None = None
    candidate_judged: float | None = None

    def as_dict(self) -> dict:
        return {
            "qid": self.qid,
            "baseline": float(self.baseline),
            "candidate": float(self.candidate),
            "difference": float(self.difference),
            "share": float(self.share),
            "baseline_judged": finite_or_none(self.baseline_judged),
            "candidate_judged": finite_or_none(self.candidate_judged),
        }


@dataclass(frozen=True, eq=False)
class PairedStats:
    """Everything about one pair that does not depend on the family.

    The bootstrap replicates are kept (B floats) so the BCa interval can be read
    at the family-dependent ``bca_level`` without resampling again.
    """

    n: int
    n_nonzero: int
    tie_rate: float
    baseline_mean: float
    candidate_mean: float
    difference: float
    median_difference: float
    wins: int
    losses: int
    ties: int
    sd: float
    effect_size: float | None
    t_p: float | None
    ci_low: float | None
    ci_high: float | None
    p_superiority: float | None
    randomization_p: float | None
    exceedances: int | None
    unpaired_ci_low: float | None
    unpaired_ci_high: float | None
    largest_losses: tuple[QueryDelta, ...]
    largest_gains: tuple[QueryDelta, ...]
    confidence: float
    resamples: int
    seed: int
    alternative: str
    bca: BcaParts | None
    replicates: np.ndarray | None = field(default=None, repr=False)

    def bca_interval(self, level: float) -> tuple[float, float] | None:
        """BCa bounds at ``level`` (following the alternative); None if degenerate or B = 0."""
        if self.replicates is None or self.bca is None:
            return None
        return bca_bounds(self.replicates, self.bca, level, self.alternative)

    @property
    def bca_degenerate(self) -> bool:
        return self.bca is None or self.bca.degenerate


def _largest(
    b: np.ndarray, c: np.ndarray, d: np.ndarray, q: list[str], sign: int, judged: tuple | None
) -> tuple[QueryDelta, ...]:
    # qids are sorted as bytes, so a stable sort on Δ (or −Δ) breaks ties by qid bytes
    keys = d if sign < 0 else -d
    order = np.argsort(keys, kind="stable")[:LARGEST]
    picked = [i for i in order if (d[i] < 0 if sign < 0 else d[i] > 0)]
    total = float(np.sum(d[d < 0])) if sign < 0 else float(np.sum(d[d > 0]))
    return tuple(
        QueryDelta(
            q[i], float(b[i]), float(c[i]), float(d[i]), float(d[i]) / total,
            None if judged is None else float(judged[0][i]),
            None if judged is None else float(judged[1][i]),
        )
        for i in picked
    )


def paired_statistics(
    baseline: np.ndarray | Sequence[float],
    candidate: np.ndarray | Sequence[float],
    qids: Sequence[str],
    *,
    resamples: int = 9999,
    seed: int = 0,
    confidence: float = 0.95,
    alternative: str = "two-sided",
    chunk: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
    judged: tuple[np.ndarray, np.ndarray] | None = None,
) -> PairedStats:
    """All per-pair numbers of SPEC §7 from two aligned per-query arrays.

    One walk over the seed's 32-bit stream gives, by the protocol, the sign
    flips (first B·n draws), the paired bootstrap indices I (the first B rows of
    ``integers(0, n)``) and the unpaired J (the next B rows): separate fresh
    generators would draw exactly these. Paired replicate b is mean(Δ[I_b]);
    unpaired replicate b is mean(candidate[J_b]) − mean(baseline[I_b]).
    ``p_superiority`` = #{replicates > 0}/B. The percentile intervals (paired
    and unpaired) are at ``confidence`` and follow ``alternative``.
    ``threads`` ≥ 2 pipelines drawing and gathering (same numbers);
    ``progress(fraction)`` is called as the walk advances. ``judged`` =
    (baseline judged@k, candidate judged@k) per query, aligned like the values,
    is copied into the largest losses/gains.
    """
    b, c, q = _aligned(baseline, candidate, qids)
    conf = check_confidence(confidence)
    check_alternative(alternative)
    B = check_resamples(resamples)
    judged_arrays = None
    if judged is not None:
        judged_arrays = tuple(np.asarray(j, dtype=np.float64) for j in judged)
        if len(judged_arrays) != 2 or any(j.shape != b.shape for j in judged_arrays):
            raise InputError("judged must be two arrays aligned with the per-query values")
    d = c - b
    n = d.size
    wins = int(np.count_nonzero(d > 0))
    losses = int(np.count_nonzero(d < 0))
    ties = n - wins - losses
    mean_d = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    effect = mean_d / sd if sd > 0.0 else None
    t_p = paired_t_test(d, alternative)

    ci_low = ci_high = p_sup = rand_p = u_low = u_high = None
    exceed = None
    parts = None
    reps = None
    if B:
        counter = _FlipCounter(d, alternative)
        reps = np.empty(B, dtype=np.float64)
        base_reps = np.empty(B, dtype=np.float64)
        cand_reps = np.empty(B, dtype=np.float64)
        rows = block_rows(n, chunk)
        gathered = np.empty(rows * n, dtype=np.float64)

        def on_indices(start: int, idx: np.ndarray) -> None:
            r = idx.shape[0]
            g = gathered[: r * n].reshape(r, n)
            # rows [0, B) are I (paired and unpaired baseline); [B, 2B) are J
            lo, hi = start, start + r
            if lo < B:
                k = min(hi, B) - lo
                np.take(d, idx[:k], out=g[:k], mode=GATHER_MODE)
                reps[lo : lo + k] = row_means(g[:k])
                np.take(b, idx[:k], out=g[:k], mode=GATHER_MODE)
                base_reps[lo : lo + k] = row_means(g[:k])
            if hi > B:
                k0 = max(lo, B) - lo
                k = hi - max(lo, B)
                np.take(c, idx[k0:], out=g[:k], mode=GATHER_MODE)
                cand_reps[max(lo, B) - B : max(lo, B) - B + k] = row_means(g[:k])

        walk_stream(
            seed, n, flip_rows=B, index_rows=2 * B, on_flips=counter, on_indices=on_indices,
            chunk=chunk, threads=threads, progress=progress,
        )
        exceed = counter.count_total
        rand_p = (1 + exceed) / (B + 1)
        ci_low, ci_high = percentile_bounds(reps, conf, alternative)
        p_sup = int(np.count_nonzero(reps > 0.0)) / B
        u_low, u_high = percentile_bounds(cand_reps - base_reps, conf, alternative)
        parts = bca_parts(reps, d, mean_d)

    return PairedStats(
        n=n,
        n_nonzero=wins + losses,
        tie_rate=ties / n,
        baseline_mean=float(np.mean(b)),
        candidate_mean=float(np.mean(c)),
        difference=mean_d,
        median_difference=float(np.median(d)),
        wins=wins,
        losses=losses,
        ties=ties,
        sd=sd,
        effect_size=effect,
        t_p=t_p,
        ci_low=ci_low,
        ci_high=ci_high,
        p_superiority=p_sup,
        randomization_p=rand_p,
        exceedances=exceed,
        unpaired_ci_low=u_low,
        unpaired_ci_high=u_high,
        largest_losses=_largest(b, c, d, q, -1, judged_arrays),
        largest_gains=_largest(b, c, d, q, +1, judged_arrays),
        confidence=conf,
        resamples=B,
        seed=int(seed),
        alternative=alternative,
        bca=parts,
        replicates=reps,
    )


# ---------------------------------------------------------------------------
# multiplicity
# ---------------------------------------------------------------------------


def _check_correction(method: str) -> str:
    if method not in CORRECTIONS:
        raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    return method


def adjust_p(pvals: Sequence[float], method: str = "holm") -> np.ndarray:
    """Adjusted p-values, equal to ``statsmodels.stats.multitest.multipletests``.

    Bonferroni: min(1, J·p). Holm: sort ascending, p_(j)·(J − j + 1), running
    maximum, min(1, ·), restored to call order. ``none``: unchanged.
    """
    _check_correction(method)
    p = np.asarray(pvals, dtype=np.float64)
    if p.ndim != 1:
        raise InputError("adjust_p needs a 1-D sequence of p-values")
    J = p.size
    if J == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        out = p * J
        out[out > 1] = 1.0
        return out
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * np.arange(J, 0, -1))
    stepped[stepped > 1] = 1.0
    out = np.empty_like(stepped)
    out[order] = stepped
    return out


def thresholds(pvals: Sequence[float], alpha: float = 0.05, method: str = "holm") -> np.ndarray:
    """Per-row raw-p thresholds: α/J (Bonferroni), α/(J − j + 1) (Holm), α (none).

    j is the row's 1-based position in ascending raw p, ties in call order.
    """
    _check_correction(method)
    p = np.asarray(pvals, dtype=np.float64)
    J = p.size
    if method == "none":
        return np.full(J, alpha)
    if method == "bonferroni":
        return np.full(J, alpha / J) if J else np.empty(0)
    order = np.argsort(p, kind="stable")
    out = np.empty(J, dtype=np.float64)
    out[order] = alpha / (J - np.arange(J))
    return out


# ---------------------------------------------------------------------------
# p formatting
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# the verdict
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RowInput:
    """One requested comparison: names, its paired statistics, and whether it is exploratory."""

    baseline: str
    candidate: str
    metric: str
    stats: PairedStats
    exploratory: bool = False


@dataclass(frozen=True)
class ComparisonRow:
    """One row of ``compare`` with its verdict; ``as_dict`` gives exactly the SPEC §7 keys."""

    baseline: str
    candidate: str
    metric: str
    n: int
    n_nonzero: int
    tie_rate: float
    baseline_mean: float
    candidate_mean: float
    difference: float
    median_difference: float
    wins: int
    losses: int
    ties: int
    ci_low: float | None
    ci_high: float | None
    p_superiority: float | None
    randomization_p: float | None
    adjusted_p: float | None
    t_p: float | None
    bca_level: float
    bca_low: float | None
    bca_high: float | None
    effect_size: float | None
    unpaired_ci_low: float | None
    unpaired_ci_high: float | None
    confidence: float
    resamples: int
    seed: int
    correction: str
    exploratory: bool
    verdict: str
    t_agrees: bool | None
    interval_agrees: bool | None
    bootstrap_agrees: bool | None
    largest_losses: tuple[QueryDelta, ...]
    largest_gains: tuple[QueryDelta, ...]
    # not in the --out keys, but every printed table needs them
    alternative: str = "two-sided"
    threshold: float | None = None
    in_family: bool = False
    disagreements: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    reasons: tuple[tuple[str, str], ...] = ()

    @property
    def verdict_text(self) -> str:
        return VERDICT_TEXT[self.verdict]

    def as_dict(self, reasons: bool = False) -> dict:
        """Exactly ``ROW_KEYS``, strict-JSON (nan/±inf → None).

        ``reasons=True`` adds a sibling ``<key>_reason`` for every null value.
        """
        out: dict = {}
        why = dict(self.reasons)
        for key in ROW_KEYS:
            value = getattr(self, key)
            if key in ("largest_losses", "largest_gains"):
                out[key] = [x.as_dict() for x in value]
            elif isinstance(value, (bool, np.bool_)):
                out[key] = bool(value)
            elif isinstance(value, str):
                out[key] = value
            elif isinstance(value, (int, np.integer)):
                out[key] = int(value)
            else:
                out[key] = finite_or_none(value)
            if reasons and out[key] is None:
                out[f"{key}_reason"] = null_reason(value, why.get(key, "not computed"))
        return out


@dataclass(frozen=True)
class CompareResult:
    """All rows of one ``compare`` call, the family size and call-level warnings."""

    rows: tuple[ComparisonRow, ...]
    family_size: int
    alpha: float
    correction: str
    primary: str | None
    min_delta: float
    warnings: tuple[str, ...]
    caption: str = CAPTION

    def as_dict(self, reasons: bool = False) -> dict:
        return {
            "comparisons": [r.as_dict(reasons) for r in self.rows],
            "settings": {
                "alpha": self.alpha,
                "confidence": 1.0 - self.alpha,
                "correction": self.correction,
                "primary": self.primary,
                "min_delta": self.min_delta,
                "family_size": self.family_size,
            },
            "warnings": list(self.warnings),
            "caption": self.caption,
        }


def _decision_words(flag: bool) -> str:
    return "established" if flag else "not established"


def decide(
    inputs: Sequence[RowInput],
    *,
    correction: str = "holm",
    primary: str | None = None,
    min_delta: float = 0.0,
) -> CompareResult:
    """The verdict algorithm of SPEC §7 over the rows of one ``compare`` call.

    α = 1 − confidence (shared by all rows). Family = the non-exploratory rows
    (only the ``primary`` metric's rows when given; the others are
    ``descriptive`` with ``adjusted_p`` null). J = family size; raw
    randomization p are adjusted by ``correction``; threshold_i = α/J or
    α/(J − j_i + 1); ``bca_level`` = 1 − threshold_i (1 − α outside the family).
    ``better`` iff in the family, adjusted p ≤ α, Δ̄ > 0 and Δ̄ ≥ min_delta;
    ``worse`` iff adjusted p ≤ α, Δ̄ < 0 and −Δ̄ ≥ min_delta; else ``inconclusive``.

    Agreement flags compare each check's decision with the randomization
    decision (adjusted p ≤ α in the family, raw p ≤ α outside it):
    ``t_agrees`` — the t p adjusted the same way over the family (a null t p
    counts as 1 when adjusting the others) is ≤ α; ``interval_agrees`` — the
    BCa interval at ``bca_level`` excludes 0; ``bootstrap_agrees`` —
    p_superiority ≥ confidence or ≤ 1 − confidence. A flag is None when its
    check is undefined (sd = 0, degenerate BCa, B = 0).
    """
    _check_correction(correction)
    if not inputs:
        return CompareResult((), 0, 0.05, correction, primary, float(min_delta), ())
    first = inputs[0].stats
    for r in inputs:
        s = r.stats
        if (s.confidence, s.resamples, s.seed, s.alternative) != (
            first.confidence,
            first.resamples,
            first.seed,
            first.alternative,
        ):
            raise InputError("all rows of one compare call must share confidence, resamples, seed and alternative")
    if primary is not None and not any(r.metric == primary for r in inputs):
        raise InputError(f"--primary {primary!r} is not among the compared metrics")
    conf = first.confidence
    alpha = 1.0 - conf
    B = first.resamples
    min_delta = float(min_delta)

    family = [i for i, r in enumerate(inputs) if not r.exploratory and (primary is None or r.metric == primary)]
    J = len(family)
    fam_pos = {i: k for k, i in enumerate(family)}
    raw = [inputs[i].stats.randomization_p for i in family]
    have_p = B > 0 and J > 0
    adj = adjust_p(raw, correction) if have_p else np.full(J, np.nan)
    thr = thresholds(raw, alpha, correction) if have_p else np.full(J, alpha / max(J, 1))
    t_raw = [1.0 if inputs[i].stats.t_p is None else inputs[i].stats.t_p for i in family]
    t_adj = adjust_p(t_raw, correction) if J else np.empty(0)

    call_warnings: list[str] = []
    if B == 0:
        call_warnings.append("no randomization test was run (resamples = 0): nothing can be established")
    elif J and J / (B + 1) > alpha:
        call_warnings.append(
            f"with B = {B:,} and {J} hypotheses the smallest attainable adjusted p is "
            f"{J / (B + 1):.4g} > α = {alpha:.4g}: nothing can be established"
        )

    rows = []
    for i, r in enumerate(inputs):
        s = r.stats
        in_family = i in fam_pos
        reasons: dict[str, str] = {}
        warnings: list[str] = []
        if in_family:
            k = fam_pos[i]
            threshold = float(thr[k])
            adjusted = None if not have_p else float(adj[k])
            level = 1.0 - threshold
            decision = None if adjusted is None else adjusted <= alpha
            t_decision = None if s.t_p is None else bool(t_adj[k] <= alpha)
            if adjusted is None:
                verdict = "inconclusive"
                reasons["adjusted_p"] = "no randomization test (resamples = 0)"
            elif adjusted <= alpha and s.difference > 0 and s.difference >= min_delta:
                verdict = "better"
            elif adjusted <= alpha and s.difference < 0 and -s.difference >= min_delta:
                verdict = "worse"
            else:
                verdict = "inconclusive"
        else:
            threshold = None
            adjusted = None
            level = conf
            decision = None if s.randomization_p is None else s.randomization_p <= alpha
            t_decision = None if s.t_p is None else s.t_p <= alpha
            verdict = "exploratory" if r.exploratory else "descriptive"
            reasons["adjusted_p"] = (
                "exploratory: raw p only, never adjusted or established"
                if r.exploratory
                else f"outside the primary family (--primary {primary})"
            )

        bca = s.bca_interval(level) if B else None
        bca_low, bca_high = (None, None) if bca is None else bca
        if bca is None:
            reasons["bca_low"] = reasons["bca_high"] = (
                "no resampling (resamples = 0)" if not B else "degenerate: every difference is equal"
            )
        if s.t_p is None:
            reasons["t_p"] = "undefined: sd of the differences is 0"
        if s.effect_size is None:
            reasons["effect_size"] = "undefined: sd of the differences is 0"
        for key in ("ci_low", "ci_high", "p_superiority", "randomization_p", "unpaired_ci_low", "unpaired_ci_high"):
            if getattr(s, key) is None:
                reasons[key] = "no resampling (resamples = 0)"

        disagreements: list[str] = []
        t_agrees = interval_agrees = boot_agrees = None
        if decision is None:
            reasons["t_agrees"] = reasons["interval_agrees"] = reasons["bootstrap_agrees"] = (
                "no randomization decision to agree with (resamples = 0)"
            )
        else:
            if t_decision is None:
                reasons["t_agrees"] = "t-test undefined: sd of the differences is 0"
            if bca is None:
                reasons["interval_agrees"] = "BCa interval undefined (degenerate)"
        if decision is not None:
            what = "the randomization test" + (" (adjusted)" if in_family else "")
            if t_decision is not None:
                t_agrees = t_decision == decision
                if not t_agrees:
                    disagreements.append(
                        f"the paired t-test disagrees: t p = {s.t_p:.4g}"
                        + (f" (adjusted {float(t_adj[fam_pos[i]]):.4g})" if in_family else "")
                        + f" is {_decision_words(t_decision)} at α = {alpha:.4g}, {what} is {_decision_words(decision)}"
                    )
            if bca is not None:
                excludes = bca_low > 0.0 or bca_high < 0.0
                interval_agrees = excludes == decision
                if not interval_agrees:
                    disagreements.append(
                        f"the BCa interval at level {level:.4f} {'excludes' if excludes else 'includes'} 0 "
                        f"while {what} is {_decision_words(decision)}"
                    )
            if s.p_superiority is not None:
                crossed = s.p_superiority >= conf or s.p_superiority <= 1.0 - conf
                boot_agrees = crossed == decision
                if not boot_agrees:
                    disagreements.append(
                        f"p_superiority = {s.p_superiority:.4f} {'crosses' if crossed else 'does not cross'} "
                        f"the {conf:g} bar while {what} is {_decision_words(decision)}"
                    )

        if s.n_nonzero < MIN_QUERIES_FOR_COVERAGE:
            warnings.append(
                f"only {s.n_nonzero} of {s.n} queries differ: the randomization null distribution is coarse"
            )
        if B and in_family and 1.0 / (B + 1) > threshold:
            warnings.append(
                f"the smallest attainable p with B = {B:,} is {1 / (B + 1):.4g}, above this row's "
                f"threshold {threshold:.4g}: it cannot be established"
            )
        if s.n < MIN_QUERIES_FOR_COVERAGE:
            warnings.append(f"bootstrap intervals on {s.n} queries cover less often than their level")

        rows.append(
            ComparisonRow(
                baseline=r.baseline,
                candidate=r.candidate,
                metric=r.metric,
                n=s.n,
                n_nonzero=s.n_nonzero,
                tie_rate=s.tie_rate,
                baseline_mean=s.baseline_mean,
                candidate_mean=s.candidate_mean,
                difference=s.difference,
                median_difference=s.median_difference,
                wins=s.wins,
                losses=s.losses,
                ties=s.ties,
                ci_low=s.ci_low,
                ci_high=s.ci_high,
                p_superiority=s.p_superiority,
                randomization_p=s.randomization_p,
                adjusted_p=adjusted,
                t_p=s.t_p,
                bca_level=level,
                bca_low=bca_low,
                bca_high=bca_high,
                effect_size=s.effect_size,
                unpaired_ci_low=s.unpaired_ci_low,
                unpaired_ci_high=s.unpaired_ci_high,
                confidence=conf,
                resamples=B,
                seed=s.seed,
                correction=correction,
                exploratory=r.exploratory,
                verdict=verdict,
                t_agrees=t_agrees,
                interval_agrees=interval_agrees,
                bootstrap_agrees=boot_agrees,
                largest_losses=s.largest_losses,
                largest_gains=s.largest_gains,
                alternative=s.alternative,
                threshold=threshold,
                in_family=in_family,
                disagreements=tuple(disagreements),
                warnings=tuple(warnings),
                reasons=tuple(sorted(reasons.items())),
            )
        )
    return CompareResult(tuple(rows), J, alpha, correction, primary, min_delta, tuple(call_warnings))


# ---------------------------------------------------------------------------
# diff (SPEC §8)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffInput:
    """One (lane, level, metric) matched between two reports, on the qids present in both (sorted as bytes)."""

    lane: str
    level: str
    metric: str
    qids: tuple[str, ...]
    before: np.ndarray
    after: np.ndarray


@dataclass(frozen=True)
class DiffRow:
    lane: str
    level: str
    metric: str
    n: int
    before_mean: float
    after_mean: float
    difference: float
    randomization_p: float | None
    adjusted_p: float | None
    regression: bool
    improvement: bool

    def as_dict(self) -> dict:
        return {
            "lane": self.lane,
            "level": self.level,
            "metric": self.metric,
            "n": self.n,
            "before_mean": self.before_mean,
            "after_mean": self.after_mean,
            "difference": self.difference,
            "randomization_p": finite_or_none(self.randomization_p),
            "adjusted_p": finite_or_none(self.adjusted_p),
            "regression": self.regression,
            "improvement": self.improvement,
        }


def diff_rows(
    items: Sequence[DiffInput],
    *,
    resamples: int = 9999,
    seed: int = 0,
    confidence: float = 0.95,
    min_delta: float = 0.0,
    chunk: int | None = None,
    threads: int | None = None,
) -> tuple[DiffRow, ...]:
    """Δ = after − before per (lane, level, metric), the compare randomization test, Holm over the rows.

    A regression is adjusted p ≤ α, Δ̄ < 0 and −Δ̄ ≥ min_delta (an improvement
    symmetrically). Rows with fewer than 2 shared queries raise ``InputError``.
    """
    alpha = 1.0 - check_confidence(confidence)
    B = check_resamples(resamples)
    results = []
    for it in items:
        before, after, _ = _aligned(it.before, it.after, it.qids)
        d = after - before
        results.append((it, before, after, d, randomization_test(d, B, seed, "two-sided", chunk, threads) if B else None))
    raw = [r[4].p for r in results if r[4] is not None]
    adj = adjust_p(raw, "holm") if raw else np.empty(0)
    rows = []
    for k, (it, before, after, d, test) in enumerate(results):
        mean_d = float(np.mean(d))
        a = float(adj[k]) if test is not None else None
        sig = a is not None and a <= alpha
        rows.append(
            DiffRow(
                lane=it.lane,
                level=it.level,
                metric=it.metric,
                n=int(d.size),
                before_mean=float(np.mean(before)),
                after_mean=float(np.mean(after)),
                difference=mean_d,
                randomization_p=None if test is None else test.p,
                adjusted_p=a,
                regression=bool(sig and mean_d < 0 and -mean_d >= min_delta),
                improvement=bool(sig and mean_d > 0 and mean_d >= min_delta),
            )
        )
    return tuple(rows)
