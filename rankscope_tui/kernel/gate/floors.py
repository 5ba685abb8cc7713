"""Score floors fitted on calibration queries: the null floor (mean + 3·sd of negative top
scores, lesson 09) and the split-conformal floor on the first relevant hit (lesson 10).

References
----------
- Vovk, V., Gammerman, A. & Shafer, G. (2005). *Algorithmic Learning in a Random World*.
  Springer. (conformal prediction)
- Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J. & Wasserman, L. (2018).
  Distribution-free predictive inference for regression. *JASA* 113(523), 1094-1111.
  (split conformal: the finite-sample quantile rank)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_MISS_RATE
from .rates import Rate, _put
from .scores import TopScores, _mask, _neg_sets

INF = math.inf


@dataclass(frozen=True, eq=False)
class NullFloor:
    """mean + 3·sd (ddof = 1) of the top scores of one negative set's present queries.

    ``floor`` is None when fewer than 2 negatives are present (``reason`` says so).
    ``fpir`` is its empirical FPIR on every negative set given, with Wilson intervals.
    """

    negative_set: str
    n: int  # negatives present in the gate lane (the sample the floor is fitted on)
    n_absent: int  # negatives of the set missing from the gate lane (never accepted)
    mean: float | None
    sd: float | None
    floor: float | None
    reason: str | None
    fpir: dict[str, Rate] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"negative_set": self.negative_set, "n": self.n, "n_absent": self.n_absent,
                   "method": "mean + 3*sd of negative top scores (sample sd, ddof=1)"}
        _put(d, "mean", self.mean, self.reason)
        _put(d, "sd", self.sd, self.reason)
        _put(d, "floor", self.floor, self.reason)
        d["fpir"] = {k: r.as_dict() for k, r in self.fpir.items()}
        d["note"] = (
            "a top score below the floor is relative evidence only; the floor is a property of the "
            "negatives it was fitted on (negatives from another domain give a floor that looks safe and is not)"
        )
        return d


def null_floor(
    top: TopScores,
    negatives: np.ndarray,
    name: str = "in_domain",
    evaluate_on: Mapping[str, np.ndarray] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> NullFloor:
    """Null floor fitted on one negative set, with its FPIR on each set in ``evaluate_on``
    (default: the fitting set itself)."""
    n_q = top.n_queries
    neg = _mask(negatives, n_q, "negatives")
    here = neg & top.present
    vals = top.top[here]
    n = int(vals.size)
    n_absent = int(np.count_nonzero(neg & ~top.present))
    sets = _neg_sets(evaluate_on, n_q) if evaluate_on is not None else {name: neg}
    if n < 2:
        reason = f"needs at least 2 negatives present in the gate lane, have {n}"
        fpir: dict[str, Rate] = {}
        return NullFloor(name, n, n_absent, None, None, None, reason, fpir)
    mean = float(vals.mean())
    with np.errstate(over="ignore"):  # absurd scores (~1e300) give an infinite sd, reported as such
        sd = float(vals.std(ddof=1))
    floor = mean + 3.0 * sd
    fpir = {k: Rate(int(np.count_nonzero(m & top.present & (top.top >= floor))), int(np.count_nonzero(m)), confidence) for k, m in sets.items()}
    return NullFloor(name, n, n_absent, mean, sd, floor, None, fpir)


def null_floors(top: TopScores, negatives: Mapping[str, np.ndarray], confidence: float = DEFAULT_CONFIDENCE) -> dict[str, NullFloor]:
    """One null floor per negative set, each evaluated on every set (the lesson-09 table:
    an out-of-domain floor quoted on in-domain negatives, and vice versa)."""
    sets = _neg_sets(negatives, top.n_queries)
    return {k: null_floor(top, m, k, sets, confidence) for k, m in sets.items()}


# ---------------------------------------------------------------------------
# Conformal floor (lesson 10)
# ---------------------------------------------------------------------------

def _alpha(alpha: float | Fraction | str) -> Fraction:
    try:
        a = Fraction(str(alpha))
    except (ValueError, ZeroDivisionError) as exc:
        raise InputError(f"miss rate must be a number in (0, 1), got {alpha!r}") from exc
    if not 0 < a < 1:
        raise InputError(f"miss rate must be in (0, 1), got {alpha!r}")
    return a


def conformal_k(n: int, alpha: float | Fraction | str) -> int:
    """k = ⌈(1 − α)(n + 1)⌉ in exact rational arithmetic (α read via ``str``: 0.18 is 18/100)."""
    a = _alpha(alpha)
    return math.ceil((1 - a) * (n + 1))


def conformal_min_n(alpha: float | Fraction | str) -> int:
    """Smallest n with k ≤ n, i.e. n ≥ 1/α − 1 (19 at α = 0.05)."""
    a = _alpha(alpha)
    return max(1, math.ceil(1 / a - 1))


@dataclass(frozen=True)
class ConformalFloor:
    """Split-conformal floor on the score of the first relevant hit.

    ``floor`` = −s_(k) with s_i = −(first relevant score of calibration positive i), or
    ``-inf`` (accept everything, decide nothing) when k > n or s_(k) = +inf.
    """

    alpha: str
    n: int  # calibration positives (all of them, absent ones included)
    n_unretrieved: int  # positives with no relevant hit within depth (s = +inf)
    k: int
    floor: float  # may be -inf
    reason: str | None
    min_n: int
    in_sample: bool = False

    BOUNDS = (
        "on average over calibration draws, the share of new in-distribution positives whose first "
        "relevant hit is missing or scores below the floor (rejected positives) is at most alpha; it "
        "bounds neither wrong top hits (wrong accepts) nor false accepts of negatives"
    )

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "method": "split conformal, k = ceil((1 - alpha)(n + 1)) exact, floor = -s_(k)",
            "alpha": float(self.alpha),  # a number (the exact rational is read back through str)
            "n": self.n,
            "n_unretrieved": self.n_unretrieved,
            "k": self.k,
            "min_n": self.min_n,
        }
        _put(d, "floor", self.floor, self.reason or "-inf")
        if self.reason:
            d["reason"] = self.reason
        d["bounds"] = self.BOUNDS
        if self.in_sample:
            d["label"] = "in-sample, no guarantee"
        return d


def conformal_floor(top: TopScores, positives: ArrayLike, miss_rate: float | Fraction | str = DEFAULT_MISS_RATE,
                    in_sample: bool = False) -> ConformalFloor:
    """Conformal floor over **every** calibration positive (SPEC §6).

    Never falls back to the sample minimum (coverage n/(n+1) only): when the order
    statistic does not exist or is +inf the floor is -inf and ``reason`` says why.
    """
    a = _alpha(miss_rate)
    pos = _mask(positives, top.n_queries, "positives")
    # s = -(first relevant score); +inf for an unretrieved or absent positive.
    s = -top.first_relevant_score[pos]
    n = int(s.size)
    n_unret = int(np.count_nonzero(~np.isfinite(s)))
    k = math.ceil((1 - a) * (n + 1))
    min_n = max(1, math.ceil(1 / a - 1))
    if k > n:
        reason = (
            f"k = {k} > n = {n}: no finite floor carries the guarantee at alpha = {a} "
            f"(the sample minimum would cover only n/(n+1)); needs n >= 1/alpha - 1 = {min_n} positives"
        )
        return ConformalFloor(str(miss_rate), n, n_unret, k, -INF, reason, min_n, in_sample)
    s_k = float(np.partition(s, k - 1)[k - 1])
    if not math.isfinite(s_k):
        reason = (
            f"s_(k) = +inf: {n_unret} of {n} positives have no relevant hit within depth, more than "
            f"n - k = {n - k}; no finite floor carries the guarantee (more positives do not help; "
            f"retrieval depth or recall must)"
        )
        return ConformalFloor(str(miss_rate), n, n_unret, k, -INF, reason, min_n, in_sample)
    return ConformalFloor(str(miss_rate), n, n_unret, k, -s_k, None, min_n, in_sample)

