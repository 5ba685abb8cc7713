"""The gate's outcome at one configuration: FNIR (rejected + wrong accepts) and FPIR per
negative set, for each active condition alone and for their AND.

Acceptance is ``present & (t >= floor) & conditions``; a positive is correct iff accepted with a
relevant top hit (1:N identification), FNIR = (rejected + wrong_accept) / positives,
FPIR = accepted negatives / negatives.

References
----------
- Grother, P., Ngan, M. & Hanaoka, K. (2019). Face Recognition Vendor Test (FRVT) Part
  2: Identification. NISTIR 8271. (FNIR and FPIR of 1:N identification, a threshold on
  the top candidate's score)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..settings import DEFAULT_CONFIDENCE
from .mutual import MutualNN
from .rates import Rate, _put
from .scores import TopScores, _mask, _neg_sets


@dataclass(frozen=True)
class Outcome:
    """FNIR (with its parts) and FPIR per negative set for one acceptance rule."""

    condition: str
    positives: int
    correct: int
    rejected: int
    wrong_accept: int
    fpir: dict[str, Rate]
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def fnir(self) -> Rate:
        return Rate(self.rejected + self.wrong_accept, self.positives, self.confidence)

    def as_dict(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "positives": self.positives,
            "correct": self.correct,
            "rejected": self.rejected,
            "wrong_accept": self.wrong_accept,
            "fnir": self.fnir.as_dict(),
            "rejected_rate": Rate(self.rejected, self.positives, self.confidence).as_dict(),
            "wrong_accept_rate": Rate(self.wrong_accept, self.positives, self.confidence).as_dict(),
            "fpir": {k: r.as_dict() for k, r in self.fpir.items()},
        }


def _outcome(name: str, accept: np.ndarray, top: TopScores, pos: np.ndarray, negs: dict[str, np.ndarray], confidence: float) -> Outcome:
    n_pos = int(np.count_nonzero(pos))
    acc_pos = accept & pos
    correct = int(np.count_nonzero(acc_pos & top.top_relevant))
    wrong = int(np.count_nonzero(acc_pos & ~top.top_relevant))
    fpir = {k: Rate(int(np.count_nonzero(accept & m)), int(np.count_nonzero(m)), confidence) for k, m in negs.items()}
    return Outcome(name, n_pos, correct, n_pos - correct - wrong, wrong, fpir, confidence)


@dataclass(frozen=True)
class GateOutcome:
    """Each active condition alone, and their AND (``combined``)."""

    floor: float | None
    margin: float | None
    mutual_r: int | None
    alone: dict[str, Outcome]
    combined: Outcome

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.floor is None:
            d["floor"] = None
            d["floor_reason"] = "no floor condition"
        else:
            _put(d, "floor", self.floor, "+inf: reject all" if self.floor > 0 else "-inf: accept every retrieved query")
        if self.margin is None:
            d["margin"] = None
            d["margin_reason"] = "no margin condition"
        else:
            _put(d, "margin", self.margin, "+inf: only lone hits pass")
        d["mutual_r"] = self.mutual_r
        d["alone"] = {k: o.as_dict() for k, o in self.alone.items()}
        d["combined"] = self.combined.as_dict()
        return d


def gate_outcome(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    floor: float | None = None,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> GateOutcome:
    """Outcome of the gate ``t >= floor AND margin >= m AND position <= r`` (inactive
    conditions are None). Absent queries are rejected by every condition."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    conds: dict[str, np.ndarray] = {}
    if floor is not None:
        conds["floor"] = top.present & (top.top >= floor)
    if margin is not None:
        conds["margin"] = top.present & (top.margin >= margin)
    if r is not None:
        if mutual is None:
            raise ValueError("mutual r needs a MutualNN (see mutual_nn)")
        conds["mutual"] = top.present & mutual.passes(r)
    combined = top.present.copy()
    for c in conds.values():
        combined &= c
    alone = {k: _outcome(k, c, top, pos, negs, confidence) for k, c in conds.items()}
    name = " AND ".join(conds) if conds else "none (every retrieved query accepted)"
    return GateOutcome(floor, margin, r, alone, _outcome(name, combined, top, pos, negs, confidence))



def condition_outcomes(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    floor: float,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Outcome]:
    """The outcome of the floor alone and of the floor ANDed with each active condition:
    ``floor``, ``floor AND margin``, ``floor AND mutual`` and, with both, ``floor AND margin
    AND mutual`` (the same acceptance as :func:`gate_outcome`'s ``combined``). This says
    what each condition adds on top of the floor, where ``gate_outcome``'s ``alone`` says
    what it does by itself."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    at_floor = top.present & (top.top >= floor)
    extra: dict[str, np.ndarray] = {}
    if margin is not None:
        extra["margin"] = top.margin >= margin
    if r is not None:
        if mutual is None:
            raise ValueError("mutual r needs a MutualNN (see mutual_nn)")
        extra["mutual"] = mutual.passes(r)
    rules = {"floor": at_floor}
    for k, c in extra.items():
        rules[f"floor AND {k}"] = at_floor & c
    if len(extra) > 1:
        both = at_floor.copy()
        for c in extra.values():
            both &= c
        rules["floor AND " + " AND ".join(extra)] = both
    return {k: _outcome(k, a, top, pos, negs, confidence) for k, a in rules.items()}
