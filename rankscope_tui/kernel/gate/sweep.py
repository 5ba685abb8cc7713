"""The floor sweep (and the margin sweep) over candidate thresholds, and the operating
point / operating margin picked on it at a target FPIR.

Candidates are the distinct finite keys (top scores or margins) of the evaluated queries
plus +inf; each outcome class is sorted once and each candidate is one ``searchsorted``.

References
----------
- Grother, P., Ngan, M. & Hanaoka, K. (2019). Face Recognition Vendor Test (FRVT) Part
  2: Identification. NISTIR 8271. (FNIR and FPIR of 1:N identification, a threshold on
  the top candidate's score)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..ranking.ranks import distinct
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_FPIR
from .mutual import MutualNN
from .rates import INF, Rate, _num_list, _put, _wilson_arrays, negatives_needed
from .scores import TopScores, _mask, _neg_sets


@dataclass(frozen=True, eq=False)
class Sweep:
    """A sweep over candidate thresholds of one ``variable`` ("floor" or "margin").

    ``threshold`` is ascending and ends with +inf. At threshold x a query is accepted
    iff present, its key (top score or margin) is >= x, and the fixed ``conditions``
    pass. ``accepted[name]`` / ``n_negatives[name]`` per negative set. Wilson
    intervals at ``confidence``.
    """

    variable: str
    conditions: str
    threshold: NDArray[np.float64]
    positives: int
    correct: NDArray[np.int64]
    wrong_accept: NDArray[np.int64]
    rejected: NDArray[np.int64]
    accepted: dict[str, NDArray[np.int64]]
    n_negatives: dict[str, int]
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def floor(self) -> np.ndarray:
        return self.threshold

    @property
    def fnir(self) -> np.ndarray:
        return _wilson_arrays(self.rejected + self.wrong_accept, self.positives, self.confidence)[0]

    def fnir_interval(self) -> tuple[np.ndarray, np.ndarray]:
        _, lo, hi = _wilson_arrays(self.rejected + self.wrong_accept, self.positives, self.confidence)
        return lo, hi

    def fpir(self, negative_set: str | None = None) -> np.ndarray:
        name = negative_set or self.default_set
        return _wilson_arrays(self.accepted[name], self.n_negatives[name], self.confidence)[0]

    def fpir_interval(self, negative_set: str | None = None, confidence: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        name = negative_set or self.default_set
        _, lo, hi = _wilson_arrays(self.accepted[name], self.n_negatives[name], confidence or self.confidence)
        return lo, hi

    @property
    def default_set(self) -> str:
        if not self.accepted:
            raise ValueError("the sweep has no negative set")
        return next(iter(self.accepted))

    def __len__(self) -> int:
        return int(self.threshold.shape[0])

    def as_dict(self, max_points: int | None = None) -> dict[str, Any]:
        """Strict-JSON arrays. ``max_points`` thins the curve evenly (always keeping the
        first and last candidates) for report.json; None keeps every candidate."""
        n = len(self)
        idx = np.arange(n)
        if max_points is not None and n > max_points >= 2:
            idx = distinct(np.round(np.linspace(0, n - 1, max_points)).astype(np.int64))
        fnir = self.fnir
        lo, hi = self.fnir_interval()
        d: dict[str, Any] = {
            "variable": self.variable,
            "conditions": self.conditions,
            "candidates": n,
            "points": int(idx.size),
            "confidence": self.confidence,
            "positives": self.positives,
            "threshold": _num_list(self.threshold[idx]),
            "threshold_reason": "the last candidate is +inf, written as null"
            + (" (reject all)" if self.variable == "floor" else " (only lone hits pass)"),
            "correct": self.correct[idx].tolist(),
            "rejected": self.rejected[idx].tolist(),
            "wrong_accept": self.wrong_accept[idx].tolist(),
            "fnir": _num_list(fnir[idx]),
            "fnir_low": _num_list(lo[idx]),
            "fnir_high": _num_list(hi[idx]),
            "negatives": {},
        }
        if not self.positives:
            d["fnir_reason"] = "no positives"
        for name, acc in self.accepted.items():
            f = self.fpir(name)
            flo, fhi = self.fpir_interval(name)
            nd = {"n": self.n_negatives[name], "accepted": acc[idx].tolist(), "fpir": _num_list(f[idx]),
                  "fpir_low": _num_list(flo[idx]), "fpir_high": _num_list(fhi[idx])}
            if not self.n_negatives[name]:
                nd["fpir_reason"] = "no negatives"
            d["negatives"][name] = nd
        return d


def _candidates(key: np.ndarray, evaluated: np.ndarray) -> np.ndarray:
    vals = key[evaluated]
    vals = vals[np.isfinite(vals)]
    return np.concatenate([distinct(vals), [INF]])


def _at_least(sorted_vals: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """#{v >= x} for each x: one bisection per threshold on a sorted array."""
    return sorted_vals.size - np.searchsorted(sorted_vals, thresholds, side="left")


def _sweep(variable: str, key: np.ndarray, ok: np.ndarray, cond_name: str, top: TopScores, pos: NDArray[np.bool_],
           negs: dict[str, NDArray[np.bool_]], confidence: float, candidates: ArrayLike | None = None) -> Sweep:
    evaluated = pos.copy()
    for m in negs.values():
        evaluated |= m
    cand = _candidates(key, evaluated & top.present) if candidates is None else np.asarray(candidates, dtype=np.float64)
    live = ok & top.present  # absent queries are never accepted
    n_pos = int(np.count_nonzero(pos))
    correct = _at_least(np.sort(key[live & pos & top.top_relevant]), cand).astype(np.int64)
    wrong = _at_least(np.sort(key[live & pos & ~top.top_relevant]), cand).astype(np.int64)
    accepted = {k: _at_least(np.sort(key[live & m]), cand).astype(np.int64) for k, m in negs.items()}
    n_neg = {k: int(np.count_nonzero(m)) for k, m in negs.items()}
    return Sweep(variable, cond_name, cand, n_pos, correct, wrong, n_pos - correct - wrong, accepted, n_neg, confidence)


def _fixed_conditions(top: TopScores, margin: float | None, mutual: MutualNN | None,
                      r: int | None) -> tuple[np.ndarray, str]:
    ok = np.ones(top.n_queries, dtype=bool)
    names = []
    if margin is not None:
        ok &= top.margin >= margin
        names.append(f"margin >= {margin}")
    if r is not None:
        if mutual is None:
            raise ValueError("mutual r needs a MutualNN (see mutual_nn)")
        ok &= mutual.passes(r)
        names.append(f"mutual position <= {r}")
    return ok, " AND ".join(names) if names else "none"


def sweep(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Sweep:
    """Floor sweep. Candidates: the distinct finite top scores of every evaluated query
    (positives and every negative set) plus +inf. Optional margin / mutual conditions are
    ANDed at every floor. O((n + m) log(n + m)): each outcome class is sorted once and
    each candidate is one ``searchsorted``."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    ok, name = _fixed_conditions(top, margin, mutual, r)
    return _sweep("floor", top.top, ok, name, top, pos, negs, confidence)


def margin_sweep(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Sweep:
    """Sweep of the margin **alone** (no floor): candidates are the distinct finite
    margins of the evaluated queries plus +inf; accept iff present and margin >= m.
    Lone hits (margin +inf) are accepted at every candidate, +inf included."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    return _sweep("margin", top.margin, np.ones(n_q, dtype=bool), "none", top, pos, negs, confidence)


def _rates_at(sw: Sweep, i: int) -> tuple[Rate, dict[str, Rate]]:
    fnir = Rate(int(sw.rejected[i] + sw.wrong_accept[i]), sw.positives, sw.confidence)
    fpir = {k: Rate(int(a[i]), sw.n_negatives[k], sw.confidence) for k, a in sw.accepted.items()}
    return fnir, fpir


def _qualifying(sw: Sweep, name: str, target: float, conservative: bool, confidence: float) -> np.ndarray:
    acc = sw.accepted[name]
    n = sw.n_negatives[name]
    if conservative:
        _, _, hi = _wilson_arrays(acc, n, confidence)
        return hi <= target
    # The same float as the reported FPIR; rounding is monotone, so a k/n equal to the
    # decimal target (1/20 vs 0.05) rounds to the same double and qualifies.
    return acc / n <= target


@dataclass(frozen=True)
class OperatingPoint:
    """The smallest candidate floor meeting the FPIR target on one negative set.

    ``floor`` is +inf (reject all) when no finite candidate qualifies; then
    ``attainable`` is False and ``reason`` says so. ``index`` points into the sweep.
    """

    floor: float
    index: int
    negative_set: str
    n_negatives: int
    target_fpir: float
    conservative: bool
    confidence: float
    attainable: bool
    reason: str | None
    positives: int
    rejected: int
    wrong_accept: int
    fnir: Rate
    fpir: dict[str, Rate]

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        _put(d, "floor", self.floor, "+inf: reject all")
        d.update(
            {
                "negative_set": self.negative_set,
                "n_negatives": self.n_negatives,
                "target_fpir": self.target_fpir,
                "basis": f"Wilson upper bound at {self.confidence:g}" if self.conservative else "point estimate",
                "attainable": self.attainable,
                "positives": self.positives,
                "rejected": self.rejected,
                "wrong_accept": self.wrong_accept,
                "fnir": self.fnir.as_dict(),
                "fpir": {k: r.as_dict() for k, r in self.fpir.items()},
            }
        )
        if self.reason:
            d["reason"] = self.reason
        return d


def operating_point(
    sw: Sweep,
    target_fpir: float = DEFAULT_FPIR,
    conservative: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    negative_set: str | None = None,
) -> OperatingPoint:
    """Smallest candidate floor whose FPIR on ``negative_set`` (default: the first set,
    by convention in-domain) is <= target: on the point estimate, or with
    ``conservative`` on the Wilson upper bound at ``confidence``. FPIR is non-increasing
    in the floor, so the first qualifying candidate is the answer. Whether it is a
    threshold (picked on calibration negatives) or tuning (picked on the negatives you
    report) is for the caller to label."""
    if sw.variable != "floor":
        raise ValueError("operating_point needs a floor sweep (use operating_margin for margins)")
    if not 0 < target_fpir < 1:
        raise InputError(f"target FPIR must be in (0, 1), got {target_fpir!r}")
    name = negative_set or sw.default_set
    n = sw.n_negatives[name]
    need = negatives_needed(target_fpir, confidence)
    last = len(sw) - 1
    q = _qualifying(sw, name, target_fpir, conservative, confidence) if n else np.zeros(len(sw), dtype=bool)
    finite_q = np.flatnonzero(q[:last])
    if finite_q.size:
        i, attainable, reason = int(finite_q[0]), True, None
    else:
        i, attainable = last, False
        if n == 0:
            reason = "no negatives: FPIR is undefined; reject all"
        else:
            basis = f"Wilson upper bound at {confidence:g}" if conservative else "point estimate"
            reason = (
                f"unattainable with {n} negatives; zero false accepts needs n >= {need} "
                f"(ceil(z^2(1-t)/t) at t = {target_fpir:g}); no finite floor has FPIR <= {target_fpir:g} "
                f"on the {basis}; the floor is +inf (reject all)"
            )
    fnir, fpir = _rates_at(sw, i)
    fpir = {k: Rate(r.k, r.n, confidence) for k, r in fpir.items()}
    return OperatingPoint(
        float(sw.threshold[i]), i, name, n, float(target_fpir), conservative, confidence, attainable, reason,
        sw.positives, int(sw.rejected[i]), int(sw.wrong_accept[i]), Rate(fnir.k, fnir.n, confidence), fpir,
    )


@dataclass(frozen=True)
class OperatingMargin:
    """Smallest candidate margin meeting the FPIR target from the margin alone.

    ``margin`` is None when even +inf fails (lone hits among negatives exceed the
    target, or too few negatives for the Wilson bound); +inf means only lone hits pass.
    """

    margin: float | None
    index: int | None
    negative_set: str
    n_negatives: int
    lone_negatives: int
    target_fpir: float
    conservative: bool
    confidence: float
    reason: str | None
    fnir: Rate | None
    fpir: dict[str, Rate]

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.margin is None:
            d["margin"] = None
            d["margin_reason"] = self.reason or "unattainable"
        else:
            _put(d, "margin", self.margin, "+inf: only lone hits pass")
        d.update(
            {
                "negative_set": self.negative_set,
                "n_negatives": self.n_negatives,
                "lone_negatives": self.lone_negatives,
                "target_fpir": self.target_fpir,
                "basis": f"Wilson upper bound at {self.confidence:g}" if self.conservative else "point estimate",
                "fnir": self.fnir.as_dict() if self.fnir else None,
                "fpir": {k: r.as_dict() for k, r in self.fpir.items()},
            }
        )
        if self.fnir is None:
            d["fnir_reason"] = "no operating margin"
        if self.reason:
            d["reason"] = self.reason
        return d


def operating_margin(
    msw: Sweep,
    target_fpir: float = DEFAULT_FPIR,
    conservative: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    negative_set: str | None = None,
) -> OperatingMargin:
    """Operating margin from a :func:`margin_sweep`. At m = +inf the accepted negatives
    are exactly the lone hits, the least a margin can do; when that already exceeds the
    target the answer is None ("unattainable: lone candidates")."""
    if msw.variable != "margin":
        raise ValueError("operating_margin needs a margin sweep")
    name = negative_set or msw.default_set
    n = msw.n_negatives[name]
    lone = int(msw.accepted[name][-1])
    q = _qualifying(msw, name, target_fpir, conservative, confidence) if n else np.zeros(len(msw), dtype=bool)
    hit = np.flatnonzero(q)
    reason: str | None
    if not hit.size:
        if n == 0:
            reason = "no negatives: FPIR is undefined"
        elif conservative and n < negatives_needed(target_fpir, confidence):
            reason = f"unattainable with {n} negatives; zero false accepts needs n >= {negatives_needed(target_fpir, confidence)}"
            if lone:
                reason += f"; and {lone} lone candidates pass every margin"
        else:
            # At m = +inf only lone hits pass; they already break the target.
            reason = f"unattainable: lone candidates ({lone} of {n} negatives have a single hit, and a lone hit passes every margin)"
        return OperatingMargin(None, None, name, n, lone, float(target_fpir), conservative, confidence, reason, None, {})
    i = int(hit[0])
    fnir, fpir = _rates_at(msw, i)
    fpir = {k: Rate(r.k, r.n, confidence) for k, r in fpir.items()}
    m = float(msw.threshold[i])
    reason = "only lone hits pass (+inf margin)" if not math.isfinite(m) else None
    return OperatingMargin(m, i, name, n, lone, float(target_fpir), conservative, confidence, reason, Rate(fnir.k, fnir.n, confidence), fpir)
