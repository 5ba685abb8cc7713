"""The gate analysis of one workspace (SPEC §6): the one road from a workspace, the gate
settings and (optionally) calibrated thresholds to every number the gate shows.

``analyse_gate`` computes, once: the per-query top scores of the gate lane, the null floor
per negative set and the conformal floor, the floor sweep (and the margin sweep), the
operating point per negative set and the operating margin, the mutual-nearest-neighbour
lists and their summary, and the outcome at the gate's floor of the floor alone, of the
floor ANDed with each active condition, and of their combination, overall and per stratum.
``GateAnalysis.as_dict()`` is report.json's ``gate`` block; ``calibrate``, the report and
the Gate screen all read the same object.

Which floor is "the" floor: without thresholds it is the operating point picked on the
in-domain negatives being reported (**tuning**); with thresholds it is the floor
``calibrate`` fitted (a **threshold**, or **in-sample** when the evaluated queries overlap
the calibration queries). A margin given in the settings overrides the calibrated margin;
the calibrated mutual r overrides the settings' (calibration fixed the lists' r).

References
----------
- Grother, P., Ngan, M. & Hanaoka, K. (2019). Face Recognition Vendor Test (FRVT) Part
  2: Identification. NISTIR 8271. (FNIR and FPIR of 1:N identification, a threshold on
  the top candidate's score)
- Vovk, V., Gammerman, A. & Shafer, G. (2005). *Algorithmic Learning in a Random World*.
  Springer. (conformal prediction)
- Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
  inference. *JASA* 22(158), 209-212.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np

from .. import gate as G
from ..errors import InputError, InputWarning
from ..settings import DEFAULT_CONFIDENCE, GateSettings
from ..statistics import intervals as I

if TYPE_CHECKING:  # thresholds.py loads when thresholds are applied (start-up time); the contract is for types only
    from ..workspace.contract import RankedPerQuery
    from .thresholds import Thresholds

#: report.json's gate definitions (kept word for word: the report is compared byte for byte).
DEFINITIONS = {
    "top_score": "score at position 1 of the gate lane after ordering and depth; absent queries are always rejected",
    "fpir": "accepted negatives / negatives",
    "fnir": "(rejected + wrong_accept) / positives; a wrong accept (accepted with a non-relevant top hit) counts as a miss",
}
#: Sweeps in report.json are thinned to this many points (first and last always kept).
SWEEP_POINTS = 200


class GateLabel(Enum):
    """Where the gate's floor was picked, and the words the report prints for it."""

    TUNING = "tuning (picked on the reported negatives)"
    THRESHOLD = "threshold (picked on other negatives)"
    IN_SAMPLE = "in-sample (evaluated queries overlap the calibration queries)"

    @property
    def kind(self) -> str:
        return {"TUNING": "tuning", "THRESHOLD": "threshold", "IN_SAMPLE": "in-sample"}[self.name]


@dataclass(frozen=True)
class AppliedThresholds:
    """The floor and conditions read from thresholds.json and applied to these queries."""

    floor: float  # ±inf when calibration wrote null (its reason says which)
    stored_floor: float | None  # as thresholds.json has it
    floor_reason: str | None
    margin: float | None  # the settings' margin, else the calibrated one
    calibrated_margin: float | None
    mutual_r: int | None
    source: str
    label: GateLabel
    overlap_queries: int

    def as_dict(self) -> dict[str, Any]:
        return {"floor": self.stored_floor, "floor_reason": self.floor_reason, "margin": self.margin,
                "mutual_r": self.mutual_r, "from": self.source, "label": self.label.value,
                "overlap_queries": self.overlap_queries}


@dataclass(frozen=True, eq=False)
class GateAnalysis:
    """Everything the gate shows for one workspace and one ``GateSettings``."""

    settings: GateSettings
    lane: str | None
    skipped_reason: str | None = None
    confidence: float = DEFAULT_CONFIDENCE
    top: G.TopScores | None = None
    positives: np.ndarray | None = None
    negatives: dict[str, np.ndarray] = field(default_factory=dict)  # name -> query codes
    null: dict[str, G.NullFloor] = field(default_factory=dict)  # name -> NullFloor
    conformal: G.ConformalFloor | None = None
    sweep: G.Sweep | None = None  # the floor alone
    margin_sweep: G.Sweep | None = None  # the margin alone
    operating: dict[str, G.OperatingPoint] = field(default_factory=dict)  # negative set -> OperatingPoint (floor alone)
    operating_margin: G.OperatingMargin | None = None
    mutual: G.MutualNN | None = None
    mutual_r: int | None = None
    margin: float | None = None  # the margin condition applied (None = off)
    floor: float | None = None  # the floor applied (None = no floor to apply)
    label: GateLabel = GateLabel.TUNING
    applied: AppliedThresholds | None = None
    calibrated: dict[str, Any] | None = None  # thresholds.json's gate block, as written
    outcome: G.GateOutcome | None = None  # each condition alone and the combination
    by_condition: dict[str, G.Outcome] = field(default_factory=dict)  # floor, floor AND margin, floor AND mutual, all
    outcome_by_stratum: dict[str, dict[str, G.GateOutcome]] = field(default_factory=dict)  # stratum -> label -> GateOutcome
    by_condition_by_stratum: dict[str, dict[str, dict[str, G.Outcome]]] = field(default_factory=dict)  # stratum -> label -> condition -> Outcome
    sweep_under_conditions: G.Sweep | None = None  # the floor swept with margin / mutual ANDed
    operating_under_conditions: G.OperatingPoint | None = None  # its operating point on in-domain negatives
    at_null: dict[str, G.GateOutcome] = field(default_factory=dict)  # negative set -> GateOutcome at that null floor
    at_conformal: G.GateOutcome | None = None
    rule_of_three: list[dict[str, Any]] = field(default_factory=list)
    zero_event: tuple[I.Interval, I.Interval, I.Interval] | None = None  # intervals.zero_event_bounds on the in-domain negatives
    warnings: tuple[InputWarning, ...] = ()

    @property
    def skipped(self) -> bool:
        return self.lane is None

    @property
    def in_domain_operating(self) -> G.OperatingPoint | None:
        return self.operating.get("in_domain")

    @property
    def mutual_summary(self) -> dict[str, Any] | None:
        return self.mutual.summary(self.mutual_r) if self.mutual is not None and self.mutual_r is not None else None

    @property
    def vacuous_share(self) -> float | None:
        s = self.mutual_summary
        return None if s is None else s.get("vacuous_share")

    @property
    def unattainable_reason(self) -> str | None:
        """Why the floor applied is +inf (reject all), in words; None when it is finite."""
        if self.floor is None or math.isfinite(self.floor) or self.floor < 0:
            return None
        if self.applied is not None:
            op = (self.calibrated or {}).get("operating_point") or {}
            return op.get("reason") or self.applied.floor_reason
        op = self.in_domain_operating
        return op.reason if op is not None else None

    def decision(self, q: int) -> "QueryGateDecision | None":
        """The gate's decision for query code ``q`` under the applied floor and conditions
        (None when the gate is skipped or there is no floor to apply)."""
        if self.lane is None or self.top is None or self.floor is None:
            return None
        t = self.top
        present = bool(t.present[q])
        top = float(t.top[q]) if present else None  # None exactly when absent
        checks: list[tuple[str, bool, str]] = []
        checks.append(("floor", top is not None and top >= self.floor,
                       f"top score {_num(top)} {'≥' if top is not None and top >= self.floor else '<'} floor {_num(self.floor)}"
                       if present else "absent from the gate lane: rejected"))
        if self.margin is not None:
            m = float(t.margin[q]) if present else None  # None exactly when absent
            ok = m is not None and m >= self.margin
            what = "lone hit (margin +inf)" if m is not None and math.isinf(m) and m > 0 else f"margin {_num(m)}"
            checks.append(("margin", ok, f"{what} {'≥' if ok else '<'} {_num(self.margin)}" if present else "absent"))
        if self.mutual_r is not None and self.mutual is not None:
            pos = int(self.mutual.position[q])
            ok = present and 1 <= pos <= self.mutual_r
            checks.append(("mutual", ok, (f"position {pos} in its top doc's reverse list {'≤' if ok else '>'} r = "
                                          f"{self.mutual_r}") if pos >= 1 else "outside the mutual lists: rejected"))
        accepted = present and all(ok for _, ok, _ in checks)
        is_pos = bool(np.isin(q, self.positives)) if self.positives is not None else False
        top_rel = bool(t.top_relevant[q]) if present else False
        if accepted:
            verdict = ("accepted, top hit relevant (correct)" if top_rel else "accepted, top hit not relevant (wrong accept: a miss)") \
                if is_pos else "accepted (a false accept: the corpus holds no answer)"
        else:
            verdict = "rejected (a miss: the query has an answer)" if is_pos else "rejected (correct: no answer in the corpus)"
        return QueryGateDecision(self.lane, self.label.kind, top, accepted, tuple(checks), verdict)


    def as_dict(self) -> dict[str, Any]:
        """report.json's ``gate`` block."""
        if self.skipped:
            return {"skipped": True, "skipped_reason": self.skipped_reason}
        assert self.positives is not None and self.conformal is not None and self.sweep is not None \
            and self.at_conformal is not None  # _analyse_gate sets them whenever a lane is gated
        out: dict[str, Any] = {
            "lane": self.lane,
            "level": "doc",
            "definitions": dict(DEFINITIONS),
            "negatives": {name: int(v.size) for name, v in self.negatives.items()},
            "positives": int(self.positives.size),
            "null_floor": {name: nf.as_dict() for name, nf in self.null.items()},
            "conformal_floor": self.conformal.as_dict(),
            "sweep": self.sweep.as_dict(max_points=SWEEP_POINTS),
            "rule_of_three": self.rule_of_three,
        }
        if self.applied is None:
            tag = {"label": self.label.value}
            out["operating_point"] = {name: {**op.as_dict(), **tag} for name, op in self.operating.items()}
            if self.operating_margin is not None:
                out["operating_margin"] = {**self.operating_margin.as_dict(), **tag}
        else:
            out["applied"] = self.applied.as_dict()
        if self.outcome is not None:
            out["outcome"] = self.outcome.as_dict()
            out["outcome_by_stratum"] = {s: {lab: o.as_dict()["combined"] for lab, o in by.items()}
                                         for s, by in self.outcome_by_stratum.items()}
        if self.mutual is not None:
            out["mutual"] = self.mutual_summary
        # added after the blocks above (which are kept byte for byte)
        out["floor_label"] = self.label.kind
        if self.by_condition:
            out["outcome_by_condition"] = {k: o.as_dict() for k, o in self.by_condition.items()}
            out["outcome_by_condition_by_stratum"] = {
                s: {lab: {k: o.as_dict() for k, o in conds.items()} for lab, conds in by.items()}
                for s, by in self.by_condition_by_stratum.items()}
        if self.unattainable_reason:
            out["unattainable_reason"] = self.unattainable_reason
        if self.sweep_under_conditions is not None:
            out["sweep_under_conditions"] = self.sweep_under_conditions.as_dict(max_points=SWEEP_POINTS)
        if self.operating_under_conditions is not None:
            out["operating_point_under_conditions"] = {**self.operating_under_conditions.as_dict(),
                                                       "label": GateLabel.TUNING.value}
        out["outcome_at_null_floor"] = {k: o.as_dict()["combined"] for k, o in self.at_null.items()}
        out["outcome_at_conformal_floor"] = self.at_conformal.as_dict()["combined"]
        return out


# --------------------------------------------------------------------------- helpers


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:.4g}"


@dataclass(frozen=True)
class QueryGateDecision:
    """One query through the gate: each active condition (name, passed, in words) and the
    outcome (accepted or rejected, and what that means for this query's class)."""

    lane: str
    label: str  # tuning / threshold / in-sample
    top_score: float | None  # None: absent from the gate lane
    accepted: bool
    checks: tuple[tuple[str, bool, str], ...]  # (condition, passed, words)
    verdict: str


def negative_sets(ws: RankedPerQuery) -> dict[str, np.ndarray]:
    """In-domain negatives always (possibly empty), out-of-domain ones when loaded."""
    sets = {"in_domain": ws.negatives}
    if ws.ood_negatives is not None and ws.ood_negatives.size:
        sets["out_of_domain"] = ws.ood_negatives
    return sets


def gate_lane_name(ws: RankedPerQuery, gate_on: str | None, required: bool) -> str | None:
    """The gated lane: ``gate_on``, or the only input lane; None (or an error when
    ``required``) when several lanes are loaded and none is named."""
    if gate_on:
        if gate_on not in ws.lanes:
            raise InputError(f"--gate-on {gate_on!r} is not a loaded lane ({', '.join(ws.lanes)})", "--gate-on")
        return gate_on
    if len(ws.input_lanes) == 1:
        return ws.input_lanes[0]
    if required:
        raise InputError("--gate-on LANE is required when more than one lane is loaded", "--gate-on")
    return None


def calibrated_lane(th: Thresholds | None) -> str | None:
    """The gate lane `calibrate` recorded in thresholds.json (None without a gate block)."""
    return th.gate.lane if th is not None and th.gate is not None else None


def gate_settings_with_thresholds(settings: GateSettings, th: Thresholds | None) -> GateSettings:
    """``settings`` with the gate lane `calibrate` recorded in ``th`` when none is named;
    an error (naming both lanes and the file) when the named lane is another one: the
    floor was fitted on that lane's scores and means nothing on another's."""
    lane = calibrated_lane(th)
    if lane is None or th is None:  # a lane is recorded only in a thresholds file
        return settings
    if settings.gate_on is None:
        return replace(settings, gate_on=lane)
    if settings.gate_on != lane:
        raise InputError(f"--gate-on {settings.gate_on} disagrees with the gate lane {lane!r} that calibrate recorded "
                         f"(the floor was fitted on {lane}'s scores); drop --gate-on or calibrate on {settings.gate_on}", th.path)
    return settings


def gate_requested(ws: RankedPerQuery, settings: GateSettings) -> bool:
    """A gate block belongs in the report when a lane is named or any negatives are loaded."""
    return bool(settings.gate_on) or any(v.size for v in negative_sets(ws).values())


def _floor_of(stored: float | None, reason: object) -> float:
    """thresholds.json writes an infinite floor as null plus a reason: ``-inf`` when the reason
    says so (accept every retrieved query), else ``+inf`` (reject all)."""
    if stored is not None:
        return float(stored)
    if reason and "-inf" in str(reason):
        return -math.inf
    return math.inf


def _strata(ws: RankedPerQuery, pos: np.ndarray, negs: dict[str, np.ndarray]
            ) -> dict[str, dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]]:
    """stratum -> label -> (positives, {negative set: queries}) over the evaluated queries."""
    out: dict[str, dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]] = {}
    for name, labels in ws.strata.items():
        out[name] = {}
        for label in sorted(set(labels[pos].tolist()) | set(np.concatenate([labels[v] for v in negs.values()]).tolist())):
            out[name][label] = (pos[labels[pos] == label], {k: v[labels[v] == label] for k, v in negs.items()})
    return out


def _batch_warning(th: Thresholds, mutual: G.MutualNN) -> InputWarning | None:
    """SPEC §6: list positions grow with the batch, so r fitted on one batch size does not
    transfer to another more than 2x apart. Calibration's batch is its recorded query list
    (positives and in-domain negatives); evaluation's is the queries the lists were built from."""
    cal = len(th.calibration_qids)
    msg = G.batch_size_warning(cal, int(np.count_nonzero(mutual.among)))
    return InputWarning("mutual_batch_size", 1, msg, th.path) if msg else None


class _Rule(TypedDict):
    """The gate's floor and conditions, as keywords of ``gate_outcome`` and ``condition_outcomes``."""

    floor: float
    margin: float | None
    mutual: G.MutualNN | None
    r: int | None
    confidence: float


# --------------------------------------------------------------------------- the entry point


def analyse_gate(ws: RankedPerQuery, settings: GateSettings, thresholds: Thresholds | None = None, *,
                 calibrating: bool = False) -> GateAnalysis:
    """The whole gate analysis of ``ws`` under ``settings``.

    ``thresholds``: apply what ``calibrate`` fitted (floor, margin, mutual r). ``calibrating``:
    the analysis ``calibrate`` writes thresholds from (the lane must be named when several
    are loaded; the conformal floor is fitted, not in-sample). Without a lane to gate (several
    lanes, none named) the analysis is skipped and says why. Computed once per workspace
    (and its snapshots) for the same settings and thresholds file.
    """
    key = (settings, thresholds.path if thresholds is not None else None, calibrating)
    return ws.derived("gate", key, lambda: _analyse_gate(ws, settings, thresholds, calibrating))


def _analyse_gate(ws: RankedPerQuery, settings: GateSettings, thresholds: Thresholds | None, calibrating: bool) -> GateAnalysis:
    recorded = calibrated_lane(thresholds)
    if thresholds is not None and recorded is not None and settings.gate_on in (None, recorded) and recorded not in ws.lanes:
        raise InputError(f"the gate lane {recorded!r} that calibrate recorded is not a loaded lane ({', '.join(ws.lanes)})",
                         thresholds.path)
    lane = gate_lane_name(ws, settings.gate_on or recorded, required=calibrating)
    if lane is None:
        return GateAnalysis(settings, None, "several lanes are loaded: name the gate lane with --gate-on")
    s = ws.settings
    c = s.confidence
    fpir, cons = settings.fpir, settings.conservative
    g = thresholds.gate if thresholds is not None else None
    mutual_r = g.mutual_r_or(settings.mutual) if g is not None else settings.mutual

    top = ws.top_scores(lane)
    pos = ws.positives
    negs = negative_sets(ws)
    null = G.null_floors(top, negs, c)
    conf = G.conformal_floor(top, pos, settings.miss_rate, in_sample=thresholds is None and not calibrating)
    mutual = None
    if mutual_r is not None:
        among = np.concatenate([pos] + list(negs.values()))
        mutual = ws.mutual(lane, np.sort(among))
    sw = G.sweep(top, pos, negs, confidence=c)
    msw = G.margin_sweep(top, pos, negs, confidence=c)
    ops = {name: G.operating_point(sw, fpir, cons, c, negative_set=name) for name in negs if negs[name].size}
    opm = G.operating_margin(msw, fpir, cons, c) if negs["in_domain"].size else None

    margin = settings.margin
    applied = None
    warnings: list[InputWarning] = []
    if thresholds is None:
        label = GateLabel.TUNING
        floor = ops["in_domain"].floor if "in_domain" in ops else None
    else:
        # a file without a gate block records no floor, reason or margin
        stored_floor, reason, stored_margin = (g.floor, g.floor_reason, g.margin) if g is not None else (None, None, None)
        floor = _floor_of(stored_floor, reason)
        margin = stored_margin if margin is None else margin
        from .thresholds import in_sample_overlap

        overlap = in_sample_overlap(ws, thresholds, np.concatenate(list(negs.values()) + [pos]))
        label = GateLabel.IN_SAMPLE if overlap else GateLabel.THRESHOLD
        applied = AppliedThresholds(floor, stored_floor, cast("str | None", reason), margin, stored_margin, mutual_r,  # calibrate writes a string or null
                                    thresholds.path, label, overlap)
        if mutual is not None:
            w = _batch_warning(thresholds, mutual)
            if w is not None:
                warnings.append(w)

    outcome = by_cond = None
    by_stratum: dict[str, dict[str, G.GateOutcome]] = {}
    by_cond_stratum: dict[str, dict[str, dict[str, G.Outcome]]] = {}
    if floor is not None:
        rule = _Rule(floor=floor, margin=margin, mutual=mutual, r=mutual_r, confidence=c)
        outcome = G.gate_outcome(top, pos, negs, **rule)
        by_cond = G.condition_outcomes(top, pos, negs, **rule)
        for name, labels in _strata(ws, pos, negs).items():
            by_stratum[name] = {lab: G.gate_outcome(top, p, n, **rule) for lab, (p, n) in labels.items()}
            by_cond_stratum[name] = {lab: G.condition_outcomes(top, p, n, **rule) for lab, (p, n) in labels.items()}

    sw_cond = op_cond = None
    if margin is not None or mutual_r is not None:
        sw_cond = G.sweep(top, pos, negs, margin, mutual, mutual_r, c)
        if negs["in_domain"].size:
            op_cond = G.operating_point(sw_cond, fpir, cons, c, negative_set="in_domain")

    at_null = {k: G.gate_outcome(top, pos, negs, floor=nf.floor, confidence=c) for k, nf in null.items() if nf.floor is not None}
    at_conf = G.gate_outcome(top, pos, negs, floor=conf.floor, confidence=c)
    n_in = int(negs["in_domain"].size)
    zero = I.zero_event_bounds(n_in, c) if n_in else None
    return GateAnalysis(
        settings=settings, lane=lane, confidence=c, top=top, positives=pos, negatives=negs, null=null,
        conformal=conf, sweep=sw, margin_sweep=msw, operating=ops, operating_margin=opm, mutual=mutual,
        mutual_r=mutual_r, margin=margin, floor=floor, label=label, applied=applied, calibrated=g.recorded if g is not None else None,
        outcome=outcome, by_condition=by_cond or {}, outcome_by_stratum=by_stratum,
        by_condition_by_stratum=by_cond_stratum, sweep_under_conditions=sw_cond,
        operating_under_conditions=op_cond, at_null=at_null, at_conformal=at_conf,
        rule_of_three=G.rule_of_three_table(confidence=c), zero_event=zero, warnings=tuple(warnings),
    )
