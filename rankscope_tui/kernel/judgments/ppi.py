"""A prediction-powered mean: cheap labels on every query, corrected on a random subset.

The cheap labels (B) judge every query; the reference labels (A) judge a random subset
of them, the labelled queries L (n of them). The other N queries U carry B's labels
only. With m_A(q), m_B(q) a system's measure on query q under A and under B,

    θ̂_PP = mean_{q∈U} m_B(q) + mean_{q∈L} (m_A(q) − m_B(q)),

the B-based mean corrected by the mean A − B difference (the rectifier) on the labelled
queries (Angelopoulos et al. 2023, the mean estimator), with standard error

    se = √(σ̂²_B / N + σ̂²_Δ / n),

σ̂²_B the variance (ddof 1) of m_B over U and σ̂²_Δ that of Δ = m_A − m_B over L.
It estimates the mean under A over the population the queries come from, with no
assumption on how good B is: a biased B costs width, never coverage. The assumption it
does need: L is a random sample of the queries, drawn independently of the labels and
the systems; a subset chosen for being hard, recent or disputed breaks the correction.

The interval. The paper's is the normal one, θ̂_PP ± z_{1−α/2}·se. With few labelled
queries it falls short: Δ is skewed (B misjudges a topic now and then, so a few queries
carry large differences) and the sample mean and variance of a skewed variable move
together. In ``benchmarks/ppi_coverage_study.py`` (n = 50 labelled queries, nDCG@10) the
normal interval covered 0.924 of 0.95, and a Student t with Welch–Satterthwaite degrees
of freedom only 0.929. So with resamples B > 0 the interval is the studentized
bootstrap (bootstrap-t, equal-tailed; Efron & Tibshirani 1993 §12.5, Hall 1988), which
corrects for skewness to second order: resample L and U independently, each with
replacement at its own size, and for each replicate b

    t*_b = (θ̂*_b − θ̂_PP) / se*_b,

θ̂*_b and se*_b the two formulas above on the replicate. The interval is

    [θ̂_PP − t*_{(1+c)/2}·se,  θ̂_PP − t*_{(1−c)/2}·se],

the t* quantiles by numpy's default (linear) rule; replicates with se*_b = 0 and
θ̂*_b = θ̂_PP (0/0) are left out, one with se*_b = 0 otherwise counts as ±∞. The draws
follow the one-stream rule: a fresh ``default_rng(seed)`` gives the labelled queries'
indices ``integers(0, n, (B, n))``, then the unlabelled ones' ``integers(0, N, (B, N))``
(both in row blocks, which read the same stream). With B = 0 (``--resamples 0``) the
interval is the normal one. Beside it, the classical interval from A alone (the mean of
m_A over L) is computed the same way (bootstrap-t on L's replicates, or ± z·s/√n), so
the two widths compare like with like and show what B's labels buy.

References
----------
- Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023).
  Prediction-powered inference. *Science* 382(6671), 669-674.
- Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman &
  Hall, §12.5 (the bootstrap-t interval).
- Hall, P. (1988). Theoretical comparison of bootstrap confidence intervals. *Annals of
  Statistics* 16(3), 927-953.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..statistics.intervals import finite_or_none, percentile_bounds, z_value

NORMAL = "normal approximation, z quantile"
REFERENCE = ("Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). "
             "Prediction-powered inference. Science 382(6671), 669-674.")
# index draws per block: memory flat in B and in the number of queries
_BLOCK_ELEMENTS = 1 << 22


def method_words(resamples: int, seed: int) -> str:
    """How the PPI intervals were made, in the words every face shows."""
    if resamples == 0:
        return NORMAL
    return f"studentized bootstrap (bootstrap-t, equal-tailed), {resamples:,} resamples, seed {seed}"


@dataclass(frozen=True)
class PPIMean:
    """One prediction-powered mean and the classical mean from A alone."""

    estimate: float
    se: float
    low: float
    high: float
    labelled: int  # n: queries labelled by A (and B)
    unlabelled: int  # N: queries labelled by B only
    b_mean: float  # mean of m_B over the unlabelled queries
    rectifier: float  # mean of m_A - m_B over the labelled queries
    classical: float  # mean of m_A over the labelled queries
    classical_low: float
    classical_high: float

    def as_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def _moments(x: NDArray[np.float64], rng: np.random.Generator, resamples: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per replicate: the mean of x and the variance of that mean (ddof 1 over the
    replicate's size), from ``rng.integers(0, x.size, (resamples, x.size))`` in row blocks."""
    n = x.size
    means = np.empty(resamples)
    var_of_mean = np.empty(resamples)
    rows = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, resamples, rows):
        m = min(rows, resamples - start)
        drawn = x[rng.integers(0, n, size=(m, n))]
        means[start:start + m] = drawn.mean(axis=1)
        var_of_mean[start:start + m] = drawn.var(axis=1, ddof=1) / n
    return means, var_of_mean


def _bootstrap_t(estimate: float, se: float, reps: NDArray[np.float64], rep_se: NDArray[np.float64],
                 confidence: float) -> tuple[float, float]:
    """The equal-tailed bootstrap-t interval of the module docstring."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (reps - estimate) / rep_se
    t = t[~np.isnan(t)]
    if t.size == 0:  # every replicate 0/0: nothing varies
        return estimate, estimate
    t_lo, t_hi = percentile_bounds(t, confidence)
    return estimate - t_hi * se, estimate - t_lo * se


def ppi_mean(a_labelled: ArrayLike, b_labelled: ArrayLike, b_unlabelled: ArrayLike,
             confidence: float, resamples: int = 0, seed: int = 0) -> PPIMean:
    """The prediction-powered mean and interval of the module docstring. ``a_labelled``,
    ``b_labelled``: per-query values on L (same order, L sorted by qid); ``b_unlabelled``:
    on U (sorted by qid). ``resamples`` 0: the normal interval; otherwise bootstrap-t."""
    a = np.asarray(a_labelled, dtype=np.float64)
    bl = np.asarray(b_labelled, dtype=np.float64)
    bu = np.asarray(b_unlabelled, dtype=np.float64)
    if a.shape != bl.shape:
        raise ValueError("a_labelled and b_labelled must be paired per query")
    if a.size < 2 or bu.size < 2:
        raise InputError(f"a prediction-powered interval needs at least 2 queries labelled by both and 2 by the "
                         f"cheap labels only; got {a.size} and {bu.size}")
    if resamples < 0:
        raise ValueError("resamples must be >= 0")
    delta = a - bl
    b_mean, rect = float(bu.mean()), float(delta.mean())
    se = math.sqrt(float(bu.var(ddof=1)) / bu.size + float(delta.var(ddof=1)) / a.size)
    est = b_mean + rect
    classical = float(a.mean())
    cse = math.sqrt(float(a.var(ddof=1)) / a.size)
    if resamples == 0:
        z = z_value(confidence)
        low, high, c_low, c_high = est - z * se, est + z * se, classical - z * cse, classical + z * cse
    else:
        rng = np.random.default_rng(seed)
        # one index draw over L serves both Δ and m_A: gather the pair as two columns
        n = a.size
        d_means, d_var = np.empty(resamples), np.empty(resamples)
        a_means, a_var = np.empty(resamples), np.empty(resamples)
        rows = max(1, _BLOCK_ELEMENTS // n)
        for start in range(0, resamples, rows):
            m = min(rows, resamples - start)
            idx = rng.integers(0, n, size=(m, n))
            for x, mean_out, var_out in ((delta, d_means, d_var), (a, a_means, a_var)):
                drawn = x[idx]
                mean_out[start:start + m] = drawn.mean(axis=1)
                var_out[start:start + m] = drawn.var(axis=1, ddof=1) / n
        u_means, u_var = _moments(bu, rng, resamples)
        low, high = _bootstrap_t(est, se, u_means + d_means, np.sqrt(u_var + d_var), confidence)
        c_low, c_high = _bootstrap_t(classical, cse, a_means, np.sqrt(a_var), confidence)
    return PPIMean(est, se, low, high, int(a.size), int(bu.size), b_mean, rect, classical, c_low, c_high)
