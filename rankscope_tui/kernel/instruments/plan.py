"""The planning instrument: how many queries a study needs, from a pilot (``rankscope plan``).

Topic set size design (Sakai 2016): from a pilot pair of systems take the standard
deviation σ of the per-query differences Δ = candidate − baseline (ddof = 1, over the
positives; over unit means with ``units``). For each target difference δ and power π,
the planned study needs the smallest n ≥ 2 with

    power(δ/σ, n, α/J) ≥ π,

power being the paired t-test's through the noncentral t (df = n − 1, λ = (δ/σ)·√n;
``statistics.power`` writes it out), α = 1 − confidence and J the number of tests the
study's family will hold. α/J is Bonferroni: planned so, the study keeps its power under
Holm too, whose first step is α/J and later steps are less strict. With units, n counts
units; the queries are n times the pilot's mean queries per unit (assuming the study's
units look like the pilot's).

The pilot's σ is an estimate: a pilot of a few dozen queries can be off by a fifth, so
the plan prints the pilot's n beside σ.

References
----------
- Sakai, T. (2016). Topic set size design. *Information Retrieval Journal* 19(3),
  256-283.
- Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..settings import PlanSettings
from ..statistics.power import APPROXIMATION, MAX_QUERIES, detectable_effect, family_false_positive, queries_needed

if TYPE_CHECKING:
    from ..workspace.contract import PerQuery

SCHEMA = "rankscope.plan/1"
REFERENCE = "Sakai, T. (2016). Topic set size design. Information Retrieval Journal 19(3), 256-283."


@dataclass(frozen=True)
class PlanCell:
    """One (δ, π) cell: the sample needed (None past ``MAX_QUERIES``) and, with units, the queries."""

    delta: float
    power: float
    needed: int | None
    queries: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"delta": self.delta, "power": self.power, "needed": self.needed, "queries": self.queries}


@dataclass(frozen=True)
class QueryPlan:
    """A ``plan`` call: the pilot's numbers and the table over δ × π."""

    settings: PlanSettings
    baseline: str
    candidate: str
    pilot_queries: int
    pilot_n: int  # queries, or units with units
    sampled: str  # "queries" or "units"
    sd: float
    observed: float  # the pilot's Δ̄
    deltas: tuple[float, ...]
    cells: tuple[PlanCell, ...]
    pilot_mde: dict[float, float]  # power -> the δ the pilot's own n would establish

    @property
    def alpha(self) -> float:
        return self.settings.alpha

    def as_dict(self) -> dict[str, Any]:
        s = self.settings
        return {
            "schema": SCHEMA,
            "pilot": {"baseline": self.baseline, "candidate": self.candidate, "metric": s.metric, "level": s.level,
                      "queries": self.pilot_queries, "n": self.pilot_n, "sampled": self.sampled, "sd": self.sd,
                      "observed_delta": self.observed,
                      "mde": [{"power": p, "delta": d} for p, d in self.pilot_mde.items()]},
            "settings": {"confidence": s.confidence, "family_size": s.family_size, "alpha": 1.0 - s.confidence,
                         "alpha_per_test": self.alpha, "correction": "bonferroni (α/J, for planning)",
                         "alternative": s.alternative, "units": s.units,
                         "deltas_from": "given" if s.deltas else "observed",
                         # the family's chance of a false "established": 1 − (1 − α)^J uncorrected, α corrected
                         "family_false_positive": family_false_positive(1.0 - s.confidence, s.family_size,
                                                                        "bonferroni")},
            "approximation": APPROXIMATION,
            "formula": "smallest n >= 2 with power(delta/sd, n, alpha/J) >= power; power of the paired t-test "
                       "through the noncentral t, df = n - 1, noncentrality (delta/sd)*sqrt(n)",
            "reference": REFERENCE,
            "table": [c.as_dict() for c in self.cells],
            "limit": MAX_QUERIES,
        }


def plan_queries(ws: PerQuery, settings: PlanSettings) -> QueryPlan:
    """The plan over the pilot workspace ``ws`` (runs with qrels, or per-query tables)."""
    lanes = [n for n in ws.lanes if ws.lane_origin.get(n) != "variant"]
    base = settings.baseline or ws.input_lanes[0]
    cand = settings.candidate or next((n for n in ws.input_lanes if n != base), None)
    if cand is None:
        raise InputError("a plan needs a pilot pair: give two --lane (or two --per-query-in)", "--lane")
    for name in (base, cand):
        if name not in ws.lanes:
            raise InputError(f"unknown lane {name!r}; loaded: {', '.join(lanes)}", "--candidate")
    if base == cand:
        raise InputError("the baseline and the candidate are the same lane", "--candidate")
    if settings.level not in ws.levels():
        raise InputError(ws.missing_level(settings.level), "--level")
    key = ws.metric_key(settings.metric)
    needed_metrics = ws.metric_set([key])
    q = ws.positives
    b = ws.per_query(base, settings.level, needed_metrics)[key][q]
    c = ws.per_query(cand, settings.level, needed_metrics)[key][q]
    d = np.asarray(c - b, dtype=np.float64)
    sampled, per_unit = "queries", 1.0
    if settings.units is not None:
        from ..statistics.units import read_units, unit_means

        units = read_units(settings.units).units_of(ws.qids[q].tolist())
        d = unit_means(units, d).columns[0]
        sampled, per_unit = "units", q.size / d.size
    if d.size < 2:
        raise InputError(f"the pilot has {d.size} {sampled}: a plan needs at least 2", "--lane")
    sd = float(np.std(d, ddof=1))
    if not (sd > 0 and math.isfinite(sd)):
        raise InputError("the pilot's differences are all equal (sd = 0): no spread to plan from", "--candidate")
    observed = float(np.mean(d))
    deltas = settings.deltas or (abs(observed),)
    if not all(x > 0 for x in deltas):
        raise InputError("the pilot's observed difference is 0: give --delta", "--delta")
    cells = []
    for delta in deltas:
        for power in settings.powers:
            n = queries_needed(delta / sd, settings.alpha, power, settings.alternative)
            queries = None if n is None else math.ceil(n * per_unit - 1e-9)
            cells.append(PlanCell(delta, power, n, queries))
    mde = {p: sd * detectable_effect(int(d.size), settings.alpha, p, settings.alternative) for p in settings.powers}
    return QueryPlan(settings, base, cand, int(q.size), int(d.size), sampled, sd, observed, tuple(deltas),
                     tuple(cells), mde)
