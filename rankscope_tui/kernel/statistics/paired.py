"""Paired statistics of one (baseline, candidate, metric) pair: everything SPEC §7 reports
about the pair that does not depend on the family of comparisons it is tested in.

Pure numpy/scipy; the resampling protocol is SPEC §3 (see ``intervals``).

Conventions:

* Δ = candidate − baseline, per query; the queries are the same positives for
  both lanes, sorted by qid as bytes (the caller aligns and sorts).
* sd(Δ) is the sample standard deviation (ddof = 1); effect size = Δ̄ / sd(Δ)
  (paired; not Cohen's d), None when sd = 0.
* wins / losses / ties count Δ > 0 / Δ < 0 / Δ = 0; ``n_nonzero`` = wins + losses.
  "Δ = 0" is decided within :data:`TIE_TOLERANCE`: |Δ| ≤ 1e-12 · max(1, |baseline|,
  |candidate|) is a tie (the subtraction's rounding: (0.3 − 0.2) + (0.1 − 0.2) is
  −2.8e-17, not 0), and the median is taken with those Δ as 0. The measures' values are
  rationals (counts over counts) or sums of logarithmic gains, whose distinct values lie
  many orders of magnitude further apart than that.
* sd(Δ) is 0 when every Δ lies within that tolerance of every other (the same gain on
  every query): the effect size, the t-test p and the BCa interval are then None
  (SPEC §7), not the quotients of rounding noise.
* relative gain = Δ̄ / baseline mean (None when the baseline mean is 0).
* One walk over the seed's 32-bit stream gives the sign flips (the randomization
  test), the paired bootstrap indices I and the unpaired J (see ``paired_statistics``).
* With ``units`` (``--unit FILE``, see ``units``) each unit's rows are first reduced to
  their means — Δ̄_u = mean of the unit's Δ, and the baseline and candidate unit means —
  and every number above runs on the U unit means (units sorted by label as bytes):
  W/L/T, ``n_nonzero`` and the tie rate count units; ``n`` stays the number of rows
  (queries) and ``n_units`` = U (= n without units). The largest losses and gains
  stay per query (they point at rows to read).

References
----------
- Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical
  significance tests for information retrieval evaluation. *CIKM 2007*, 623-632. (the
  paired randomization test)
- Student (1908). The probable error of a mean. *Biometrika* 6(1), 1-25. (the paired
  t-test)
- Efron, B. (1979). Bootstrap methods: another look at the jackknife. *Annals of
  Statistics* 7(1), 1-26. (the percentile bootstrap)
- Efron, B. (1987). Better bootstrap confidence intervals. *JASA* 82(397), 171-185.
  (BCa)
- Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman &
  Hall, §16.4 (the bootstrap test of a mean from shifted, null-centred data).
- McGraw, K. O. & Wong, S. P. (1992). A common language effect size statistic.
  *Psychological Bulletin* 111(2), 361-365. (the probability of superiority)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from .intervals import BcaParts, bca_bounds, bca_parts, check_alternative, check_confidence, finite_or_none, percentile_bounds
from .randomization import FlipCounter, check_resamples
from .resampling import GATHER_MODE, PIPELINE_BLOCK_ELEMENTS, Progress, block_rows, resolve_threads, row_means, walk_stream

#: How many largest losses and largest gains a pair lists.
LARGEST = 5

#: Draws per block of the pipelined walk (threads >= 2): 2**17, 13 rows at 10,000 queries.
#: With the default 2**16 (6 rows) the two threads handed over some 3,300 blocks for B =
#: 9,999 (about 11,000 voluntary context switches; wall no better than one thread). Half of
#: bootstrap_means' PIPELINE_BLOCK_ELEMENTS: this walk keeps a ring of seven product blocks
#: in flight plus the flips' draws, about 1 MB per row at 10,000 queries (15 MB at 13 rows,
#: 26 MB at 26).
PAIRED_PIPELINE_BLOCK_ELEMENTS = PIPELINE_BLOCK_ELEMENTS // 2

#: Metadata of a field that is kept for the printed tables and the BCa interval but is
#: not a key of a ``compare --out`` row (see ``verdict.ROW_KEYS``).
NOT_IN_ROW = {"row": False}


def aligned(baseline: np.ndarray | Sequence[float], candidate: np.ndarray | Sequence[float],
            qids: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64], list[str]]:
    """Two per-query arrays and their qids, checked: 1-D, one length ≥ 2, finite, qids unique
    and sorted as bytes (the resampling protocol depends on that order)."""
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
    # The highest power the statistics take is the BCa acceleration's (Σu²)^1.5 over the
    # jackknife deviations (|u| ≤ |Δ| ≤ 2·max|x|): 8·n^1.5·max|x|³ must stay a float, else
    # the means, sd and intervals overflow into inf/nan with numpy warnings.
    bound = (float(np.finfo(np.float64).max) / (8.0 * b.size ** 1.5)) ** (1.0 / 3.0)
    largest = max(float(np.max(np.abs(b))), float(np.max(np.abs(c))))
    if largest > bound:
        raise InputError(f"per-query values up to {largest:.4g} in magnitude overflow the statistics over {b.size:,} "
                         f"queries (at most {bound:.4g}): rescale them")
    keys = [x.encode("utf-8") for x in q]
    if any(keys[i] >= keys[i + 1] for i in range(len(keys) - 1)):
        raise InputError("qids must be unique and sorted as bytes (the resampling protocol depends on it)")
    return b, c, q


def paired_t_test(deltas: np.ndarray, alternative: str = "two-sided", band: float = 0.0) -> float | None:
    """Paired t-test p on Δ, as ``scipy.stats.ttest_rel(candidate, baseline)``.

    t = Δ̄ / (sd(Δ, ddof=1)/√n), df = n − 1; two-sided p = 2·F_t(−|t|). None when sd = 0,
    or when every Δ lies within ``band`` of every other (a constant Δ up to rounding).
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = d.size
    if n < 2:
        return None
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    if sd == 0.0 or not math.isfinite(sd) or float(np.max(d) - np.min(d)) <= band:
        return None
    # on first use: the t distribution is the one function a compare takes from SciPy, and
    # an evaluate (which imports this module through the verdict words) never needs it
    from scipy.special import stdtr

    t = mean / (sd / math.sqrt(n))
    df = n - 1
    if alternative == "two-sided":
        p = 2.0 * float(stdtr(df, -abs(t)))
    elif alternative == "greater":
        p = float(stdtr(df, -t))
    else:
        p = float(stdtr(df, t))
    return min(1.0, p)


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

    def as_dict(self) -> dict[str, Any]:
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

    The fields are declared in the order a ``compare --out`` row lists them (SPEC §7);
    the ones marked ``NOT_IN_ROW`` are not row keys. The bootstrap replicates are kept
    (B floats) so the BCa interval can be read at the family-dependent ``bca_level``
    without resampling again.
    """

    n: int
    n_nonzero: int
    n_units: int
    tie_rate: float
    baseline_mean: float
    candidate_mean: float
    difference: float
    median_difference: float
    relative_gain: float | None  # difference / baseline_mean; None when the baseline mean is 0
    wins: int
    losses: int
    ties: int
    ci_low: float | None
    ci_high: float | None
    p_superiority: float | None
    randomization_p: float | None
    t_p: float | None
    effect_size: float | None
    unpaired_ci_low: float | None
    unpaired_ci_high: float | None
    confidence: float
    resamples: int
    seed: int
    largest_losses: tuple[QueryDelta, ...]
    largest_gains: tuple[QueryDelta, ...]
    sd: float = field(metadata=NOT_IN_ROW)
    exceedances: int | None = field(metadata=NOT_IN_ROW)
    alternative: str = field(metadata=NOT_IN_ROW)
    bca: BcaParts | None = field(metadata=NOT_IN_ROW)
    replicates: NDArray[np.float64] | None = field(default=None, repr=False, metadata=NOT_IN_ROW)
    sampling_unit: str = field(default="query", metadata=NOT_IN_ROW)  # "query", or "unit" with --unit

    @property
    def sampled(self) -> str:
        """What the statistics were sampled over, for a sentence: "queries" or "units"."""
        return "units" if self.sampling_unit == "unit" else "queries"

    @property
    def bootstrap_se(self) -> float | None:
        """The bootstrap standard error of the mean difference: the sd (ddof = 1) of the B
        paired replicates, as ``scipy.stats.bootstrap(...).standard_error``; None when B = 0."""
        if self.replicates is None or self.replicates.size < 2:
            return None
        return float(np.std(self.replicates, ddof=1))

    @property
    def bootstrap_p(self) -> float | None:
        """The null-centred paired bootstrap test's p (``--test bootstrap``; Efron &
        Tibshirani 1993, §16.4): shift the differences to mean 0 (Δ'_i = Δ_i − Δ̄), resample
        them with replacement B times and count the resampled means at least as extreme as
        the observed one, p = (1 + #{b: |mean(Δ'[I_b])| ≥ |Δ̄|}) / (B + 1) two-sided
        (one-sided: mean(Δ'[I_b]) ≥ Δ̄ for ``greater``, ≤ Δ̄ for ``less``). The resamples
        are the paired bootstrap's own index rows I (the seed's stream, SPEC §3), and
        mean(Δ'[I_b]) = mean(Δ[I_b]) − Δ̄ exactly, so no further draws are made. "At least
        as extreme" holds within the rounding of a mean of n values (a resampled mean
        equal to the observed one up to that band counts). None when B = 0."""
        if self.replicates is None or self.replicates.size == 0:
            return None
        centred = self.replicates - self.difference
        obs = self.difference
        band = 4 * max(self.n_units, 1) * np.finfo(np.float64).eps * max(1.0, abs(obs), float(np.max(np.abs(self.replicates))))
        if self.alternative == "greater":
            hits = np.count_nonzero(centred >= obs - band)
        elif self.alternative == "less":
            hits = np.count_nonzero(centred <= obs + band)
        else:
            hits = np.count_nonzero(np.abs(centred) >= abs(obs) - band)
        return (1 + int(hits)) / (self.replicates.size + 1)

    @property
    def interval_method(self) -> str:
        """How ``ci_low``/``ci_high`` were made (the unpaired interval resamples each lane
        on its own; the BCa interval reads the same paired replicates)."""
        if not self.resamples:
            return "none (resamples = 0)"
        return f"paired percentile bootstrap over {self.sampled} (B = {self.resamples}, seed {self.seed})"

    def bca_interval(self, level: float) -> tuple[float, float] | None:
        """BCa bounds at ``level`` (following the alternative); None if degenerate or B = 0."""
        if self.replicates is None or self.bca is None:
            return None
        return bca_bounds(self.replicates, self.bca, level, self.alternative)

    @property
    def bca_degenerate(self) -> bool:
        return self.bca is None or self.bca.degenerate


# ---------------------------------------------------------------------------
# the steps of paired_statistics
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Counts:
    """Wins, losses and ties of Δ, and the moments every row quotes."""

    wins: int
    losses: int
    ties: int
    mean: float
    sd: float


#: Two per-query values closer than this, relative to max(1, |baseline|, |candidate|),
#: are one value (module doc): what decides a tie and a constant Δ.
TIE_TOLERANCE = 1e-12


def zero_band(baseline: np.ndarray, candidate: np.ndarray) -> NDArray[np.float64]:
    """Per row, the largest |Δ| that is rounding rather than a difference."""
    band: NDArray[np.float64] = TIE_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(baseline), np.abs(candidate)))
    return band


def _constant(d: np.ndarray, band: np.ndarray) -> bool:
    """Every Δ within the band of every other: sd(Δ) is 0."""
    return d.size > 0 and float(np.max(d) - np.min(d)) <= float(np.max(band))


def _counts(d: np.ndarray, band: np.ndarray) -> _Counts:
    """W/L/T = #{Δ > band}/#{Δ < −band}/the rest; Δ̄ = np.mean(Δ); sd with ddof = 1, 0 when
    Δ is constant within the band."""
    wins = int(np.count_nonzero(d > band))
    losses = int(np.count_nonzero(d < -band))
    sd = 0.0 if _constant(d, band) else float(np.std(d, ddof=1))
    return _Counts(wins, losses, d.size - wins - losses, float(np.mean(d)), sd)


@dataclass(frozen=True)
class _Resampled:
    """What the walk over the seed's stream yields: the sign-flip exceedance count and
    the paired, baseline (I) and candidate (J) bootstrap replicate means."""

    exceedances: int
    paired: NDArray[np.float64]
    baseline: NDArray[np.float64]
    candidate: NDArray[np.float64]


def _finish_only(_start: int, _idx: np.ndarray) -> None:
    """An ``on_indices_drawn`` that adds no work: its blocks are finished (shifted) on the drawing thread."""


def _resample(
    b: np.ndarray, c: np.ndarray, d: np.ndarray, *, B: int, seed: int, alternative: str,
    chunk: int | None, threads: int | None, progress: Progress | None,
) -> _Resampled:
    """One walk of the protocol: the first B·n draws are the sign flips; then the first B
    rows of ``integers(0, n)`` are I and the next B rows are J. Paired replicate b is
    mean(Δ[I_b]); the unpaired one is mean(candidate[J_b]) − mean(baseline[I_b]) (I and J
    drawn independently), exactly as separate fresh generators would draw them."""
    n = d.size
    counter = FlipCounter(d, alternative)
    reps = np.empty(B, dtype=np.float64)
    base_reps = np.empty(B, dtype=np.float64)
    cand_reps = np.empty(B, dtype=np.float64)
    pipelined = resolve_threads(threads) >= 2
    if chunk is None and pipelined:
        # pipelined: larger blocks than a single thread's (the numbers do not depend on the
        # block size; each block crosses threads once), as bootstrap_means takes
        chunk = block_rows(n, None, PAIRED_PIPELINE_BLOCK_ELEMENTS)
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
        # Pipelined, the rows of I (the first B, which also carry the sign flips and two
        # gathers) are shifted on the drawing thread, the rows of J (one gather) on the
        # other: drawing costs about as much as the flips, the shift and two gathers, so
        # this evens the threads out while the flips last (benchmarks/results/profile_small.md).
        on_indices_drawn=_finish_only if pipelined else None, drawn_rows=B,
    )
    return _Resampled(counter.count_total, reps, base_reps, cand_reps)


@dataclass(frozen=True)
class _ResampledNumbers:
    """The resampled numbers of a row; all None when B = 0."""

    ci_low: float | None = None
    ci_high: float | None = None
    p_superiority: float | None = None
    randomization_p: float | None = None
    exceedances: int | None = None
    unpaired_ci_low: float | None = None
    unpaired_ci_high: float | None = None
    bca: BcaParts | None = None
    replicates: NDArray[np.float64] | None = None


def _resampled_numbers(r: _Resampled, d: np.ndarray, mean_d: float, B: int, conf: float, alternative: str,
                       constant: bool = False) -> _ResampledNumbers:
    """p = (1 + e)/(B + 1); percentile intervals (paired and unpaired) at ``conf`` following
    the alternative; p_superiority = #{paired replicates > 0}/B; the BCa parts (z0, a)."""
    ci_low, ci_high = percentile_bounds(r.paired, conf, alternative)
    u_low, u_high = percentile_bounds(r.candidate - r.baseline, conf, alternative)
    return _ResampledNumbers(
        ci_low=ci_low, ci_high=ci_high,
        p_superiority=int(np.count_nonzero(r.paired > 0.0)) / B,
        randomization_p=(1 + r.exceedances) / (B + 1), exceedances=r.exceedances,
        unpaired_ci_low=u_low, unpaired_ci_high=u_high,
        bca=None if constant else bca_parts(r.paired, d, mean_d), replicates=r.paired,
    )


def _largest(
    b: np.ndarray, c: np.ndarray, d: np.ndarray, q: list[str], sign: int, judged: tuple[np.ndarray, np.ndarray] | None
) -> tuple[QueryDelta, ...]:
    """The LARGEST most negative (sign < 0) or most positive Δ, only Δ < 0 / Δ > 0."""
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


def _judged_arrays(judged: Sequence[np.ndarray | Sequence[float]] | None, like: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Both lanes' judged@k per query as float arrays aligned with ``like`` (or None)."""
    if judged is None:
        return None
    arrays = tuple(np.asarray(j, dtype=np.float64) for j in judged)
    if len(arrays) != 2 or any(j.shape != like.shape for j in arrays):
        raise InputError("judged must be two arrays aligned with the per-query values")
    return arrays


def paired_statistics(
    baseline: np.ndarray | Sequence[float],
    candidate: np.ndarray | Sequence[float],
    qids: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    alternative: str = "two-sided",
    chunk: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
    judged: tuple[np.ndarray, np.ndarray] | None = None,
    units: Sequence[str] | None = None,
) -> PairedStats:
    """All per-pair numbers of SPEC §7 from two aligned per-query arrays.

    Counts and moments of Δ, the paired t-test, then (B > 0) one walk of the
    resampling protocol (``_resample``) for the randomization p, the paired and
    unpaired percentile intervals, p_superiority and the BCa parts, then the largest
    losses and gains. ``threads`` ≥ 2 pipelines drawing and gathering (same numbers);
    ``progress(fraction)`` is called as the walk advances. ``judged`` = (baseline
    judged@k, candidate judged@k) per query, aligned like the values, is copied into
    the largest losses/gains. ``units`` (one label per qid) reduces every statistic to
    unit means first (module doc).
    """
    b, c, q = aligned(baseline, candidate, qids)
    conf = check_confidence(confidence)
    check_alternative(alternative)
    B = check_resamples(resamples)
    judged_arrays = _judged_arrays(judged, b)
    d = c - b
    n = d.size
    # the sampled values: the rows themselves, or each unit's mean (Δ̄_u is the mean of
    # the unit's Δ, not the difference of its two means: the same up to rounding)
    sb, sc, sd = b, c, d
    if units is not None:
        from .units import unit_means

        if len(units) != n:
            raise InputError(f"units must be aligned with the qids ({len(units)} units for {n} queries)")
        um = unit_means(units, b, c, d)
        sb, sc, sd = um.columns
    u = sd.size
    band = zero_band(sb, sc)
    k = _counts(sd, band)
    resampled = _ResampledNumbers()
    if B:
        walk = _resample(sb, sc, sd, B=B, seed=seed, alternative=alternative, chunk=chunk, threads=threads,
                         progress=progress)
        resampled = _resampled_numbers(walk, sd, k.mean, B, conf, alternative, constant=k.sd == 0.0)
    return PairedStats(
        n=n,
        n_nonzero=k.wins + k.losses,
        n_units=u,
        tie_rate=k.ties / u,
        baseline_mean=float(np.mean(sb)),
        candidate_mean=float(np.mean(sc)),
        difference=k.mean,
        median_difference=float(np.median(np.where(np.abs(sd) <= band, 0.0, sd))),
        relative_gain=k.mean / float(np.mean(sb)) if float(np.mean(sb)) != 0.0 else None,
        wins=k.wins,
        losses=k.losses,
        ties=k.ties,
        ci_low=resampled.ci_low,
        ci_high=resampled.ci_high,
        p_superiority=resampled.p_superiority,
        randomization_p=resampled.randomization_p,
        t_p=paired_t_test(sd, alternative, float(np.max(band)) if u else 0.0),
        effect_size=k.mean / k.sd if k.sd > 0.0 else None,
        unpaired_ci_low=resampled.unpaired_ci_low,
        unpaired_ci_high=resampled.unpaired_ci_high,
        confidence=conf,
        resamples=B,
        seed=int(seed),
        largest_losses=_largest(b, c, d, q, -1, judged_arrays),
        largest_gains=_largest(b, c, d, q, +1, judged_arrays),
        sd=k.sd,
        exceedances=resampled.exceedances,
        alternative=alternative,
        bca=resampled.bca,
        replicates=resampled.replicates,
        sampling_unit="query" if units is None else "unit",
    )
