"""The ``calibrate`` instrument: what thresholds.json holds, fitted on calibration queries.

Calibration queries are the positives and in-domain negatives of the calibration qrels.
On them it fits the convex fusion weights (a grid search maximising the objective's mean
over the positives, ``fusion.calibration.fit_convex``), records the RRF k in force, and,
when a gate is requested, the gate's floors and operating point (``gate.analysis``). The
file's schema and reader are ``gate.thresholds``. With ``CalibrationSettings.folds`` K it
also cross-validates every fitted value over K folds of the calibration queries
(:func:`cross_validate`) and writes the fold report beside the values fitted on all of them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..errors import SettingError
from ..fusion.calibration import fit_convex
from ..gate.analysis import analyse_gate, gate_requested
from ..gate.rates import _put
from ..gate.thresholds import THRESHOLDS_SCHEMA
from ..settings import CalibrationSettings, GateSettings
from .evaluate import add_derived_lanes

if TYPE_CHECKING:
    from ..gate.analysis import GateAnalysis
    from ..workspace.loaded import Workspace


def calibrate(ws: Workspace, gate: GateSettings, calibration: CalibrationSettings = CalibrationSettings()) -> dict[str, Any]:
    """thresholds.json content: fusion weights and RRF k, operating floor and margin,
    conformal floor, mutual r, every setting, the calibration qids, input fingerprints."""
    s = ws.settings
    if calibration.folds is not None:  # refused before anything is fitted
        check_folds(ws, calibration.folds)
    cal_queries = np.sort(np.concatenate([ws.positives, ws.negatives]))
    out: dict[str, Any] = {"schema": THRESHOLDS_SCHEMA, "settings": s.as_dict(),
                 "fingerprints": {f.path: f.sha256 for f in ws.inputs},
                 "calibration": {"qrels": next(f.path for f in ws.inputs if f.role == "qrels"),
                                 "qids": [str(q) for q in ws.qids[cal_queries].tolist()],
                                 "positives": int(ws.positives.size), "negatives": int(ws.negatives.size)}}
    fusion: dict[str, Any] = {"rrf_k": s.rrf_k, "rrf_k_source": s.rrf_k_source}
    if len(ws.input_lanes) >= 2 and ws.positives.size == 0:
        # every grid point would score 0 and the tie rule would pick the first: weights
        # that carry no information are not written (evaluate then has no convex lane)
        fusion["convex_reason"] = ("not fitted: no calibration query has a relevant document, so every weight "
                                   "would score 0")
    elif len(ws.input_lanes) >= 2:
        fit = fit_convex(ws, calibration.step, calibration.objective)
        fusion["convex"] = fit.as_dict()
        # the fit's own count is over every query of the lanes; thresholds.json counts
        # the calibration queries (positives and in-domain negatives) with a fused hit
        fusion["convex"]["fused_queries"] = fused_calibration_queries(ws, cal_queries)
        if len({v for _, v in fit.points}) == 1:
            fusion["convex"]["tie"] = (f"every grid point scores {fit.objective:.4f}: the weights are the first point "
                                       "by the tie rule and carry no information")
    out["fusion"] = fusion
    if gate_requested(ws, gate):
        add_derived_lanes(ws)
        out["gate"] = gate_thresholds(analyse_gate(ws, gate, calibrating=True))
    if calibration.folds is not None:  # beside what was fitted on every calibration query, never instead
        out["folds"] = cross_validate(ws, gate, calibration)
    return out


def fused_calibration_queries(ws: Workspace, queries: np.ndarray) -> int:
    """How many of ``queries`` have a hit in at least one input lane (so a fused list)."""
    has = np.zeros(ws.n_queries, dtype=bool)
    for name in ws.input_lanes:
        has |= ws.present(name)
    return int(np.count_nonzero(has[queries]))


def gate_thresholds(a: GateAnalysis) -> dict[str, Any]:
    """thresholds.json's ``gate`` block from a calibrating :class:`GateAnalysis`: the floor
    is the operating point on the in-domain negatives (else the first non-empty set)."""
    negs = a.negatives
    st = a.settings
    assert a.conformal is not None, "a gate analysis always fits its conformal floor"  # (narrows the type)
    pick_on = "in_domain" if negs["in_domain"].size else next((k for k, v in negs.items() if v.size), None)
    op = a.operating.get(pick_on) if pick_on else None
    gate: dict[str, Any] = {"lane": a.lane, "target_fpir": st.fpir, "conservative": st.conservative,
                            "miss_rate": st.miss_rate, "picked_on": pick_on, "mutual_r": st.mutual,
                            "null_floor": {k: v.as_dict() for k, v in a.null.items()},
                            "conformal_floor": a.conformal.as_dict()}
    if op is not None:
        d = op.as_dict()
        gate["operating_point"] = d
        gate["floor"] = d.get("floor")
        if d.get("floor") is None:  # +inf (reject all): the operating point says why
            gate["floor_reason"] = op.reason or "+inf (reject all): no finite floor meets the target"
    else:
        gate["floor"], gate["floor_reason"] = None, "no negatives to pick a floor on: +inf (reject all)"
    if a.mutual_summary is not None:  # the calibration batch the lists were built from
        gate["mutual"] = a.mutual_summary
    if a.operating_margin is not None:
        m = a.operating_margin.as_dict()
        gate["operating_margin"] = m
        gate["margin"] = m.get("margin")
    return gate


# --------------------------------------------------------------------------- cross-validation

#: What the fold report says about how the folds were dealt (README, `calibrate --folds`).
FOLD_RULE = ("cells: query class (positive, in-domain negative) x the label of every --strata file; each cell's "
             "queries (ids sorted as bytes) shuffled with numpy's default_rng(--seed) and dealt in turn to folds "
             "1..K, the deal continuing from cell to cell (cells in sorted order), so fold sizes differ by at most "
             "one and each cell is spread as evenly as it can be")


def assign_folds(cells: Sequence[str], k: int, seed: int) -> np.ndarray:
    """Fold index (0..k-1) per query, ``cells`` naming each query's stratum cell.

    One ``numpy.random.default_rng(seed)`` stream; cells are visited in sorted order, each
    cell's queries (in the given order) are permuted by the stream and dealt round-robin,
    the deal continuing from the previous cell: fold sizes differ by at most one and a
    cell of m queries puts floor(m/k) or ceil(m/k) of them in each fold. Same cells, k
    and seed, same folds."""
    labels = np.asarray(list(cells), dtype=object)
    rng = np.random.default_rng(seed)
    fold = np.empty(labels.size, dtype=np.int64)
    dealt = 0
    for cell in sorted(set(labels.tolist())):
        idx = np.flatnonzero(labels == cell)
        idx = idx[rng.permutation(idx.size)]
        fold[idx] = (dealt + np.arange(idx.size)) % k
        dealt += idx.size
    return fold


def _spread(values: Sequence[float | None]) -> dict[str, Any]:
    """min / median / max over the folds' finite values, and how many folds had +inf, -inf
    or no value at all (strict JSON: no inf, no nan)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    d: dict[str, Any] = {}
    why = "no fold has a finite value"
    _put(d, "min", min(finite) if finite else None, why)
    _put(d, "median", float(np.median(finite)) if finite else None, why)
    _put(d, "max", max(finite) if finite else None, why)
    d["folds_finite"] = len(finite)
    d["folds_plus_inf"] = sum(1 for v in values if v is not None and v == math.inf)
    d["folds_minus_inf"] = sum(1 for v in values if v is not None and v == -math.inf)
    d["folds_undefined"] = sum(1 for v in values if v is None or math.isnan(v))
    return d


def _fold_sets(ws: Workspace, k: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(calibration query codes ascending, fold per query, the strata names stratified by)."""
    cal = np.sort(np.concatenate([ws.positives, ws.negatives]))
    is_pos = np.zeros(ws.n_queries, dtype=bool)
    is_pos[ws.positives] = True
    names = list(ws.strata)
    cells = ["\t".join(["positive" if is_pos[q] else "negative"] + [str(ws.strata[n][q]) for n in names])
             for q in cal.tolist()]
    return cal, assign_folds(cells, k, ws.settings.seed), names


def check_folds(ws: Workspace, k: int) -> None:
    """K must leave every held-out fold a query, and a positive to score the fit on."""
    n_cal, n_pos = int(ws.positives.size + ws.negatives.size), int(ws.positives.size)
    if k > n_cal:
        raise SettingError("folds", f"K = {k} is more than the {n_cal} calibration queries (positives and in-domain "
                           f"negatives): K must be from 2 to {min(n_cal, n_pos)}")
    if k > n_pos:
        raise SettingError("folds", f"K = {k} is more than the {n_pos} calibration positives, so a held-out fold "
                           f"would have no positive to score the fit on: K must be from 2 to {n_pos}")


def cross_validate(ws: Workspace, gate: GateSettings, calibration: CalibrationSettings) -> dict[str, Any]:
    """K-fold cross-validation of what ``calibrate`` fits (the fold report).

    The calibration queries (positives and in-domain negatives) are dealt into K folds
    (:data:`FOLD_RULE`, :func:`assign_folds`). For each fold f the values are fitted on the
    other K-1 folds exactly as ``calibrate`` fits them on all queries, and scored on fold f
    only:

    - convex weights: the grid's first maximum of the objective's mean over the training
      positives (``fusion.calibration``); scored as the objective's mean over the held-out
      positives at those weights;
    - RRF k: the k of :data:`report.figures.RRF_CURVE_KS` with the highest mean objective
      over the training positives (ties: the smallest k); scored likewise. ``calibrate``
      records k rather than fitting it, so this shows how a fitted k would vary;
    - gate (when requested): the operating floor picked on the training in-domain negatives
      at the target FPIR (``gate.operating_point``), the null floor, the conformal floor
      and the operating margin; the floor is scored by FNIR and FPIR on the held-out
      positives and negatives (the floor alone; a wrong accept counts as a miss).

    Pooled held-out scores: the objective's mean over every positive, each scored with the
    fit of the fold that held it out (the K-fold estimate, Stone 1974); FNIR and FPIR as
    held-out counts summed over the folds, with Wilson intervals. ``optimism`` is the
    in-sample objective of the fit on all calibration queries minus the pooled held-out
    objective (Efron 1986).

    References: Stone, M. (1974). Cross-validatory choice and assessment of statistical
    predictions. *JRSS B* 36(2), 111-147. Efron, B. (1986). How biased is the apparent
    error rate of a prediction rule? *JASA* 81(394), 461-470.
    """
    k = calibration.folds
    assert k is not None, "cross_validate needs calibration.folds"
    check_folds(ws, k)
    cal, fold, strata_names = _fold_sets(ws, k)
    is_pos = np.zeros(ws.n_queries, dtype=bool)
    is_pos[ws.positives] = True
    held = [cal[fold == f] for f in range(k)]
    per_fold: list[dict[str, Any]] = [
        {"fold": f + 1, "held_out": {"queries": int(h.size), "positives": int(np.count_nonzero(is_pos[h])),
                                     "negatives": int(np.count_nonzero(~is_pos[h])),
                                     "qids": [str(q) for q in ws.qids[h].tolist()]}}
        for f, h in enumerate(held)]
    out: dict[str, Any] = {"k": k, "seed": ws.settings.seed, "rule": FOLD_RULE, "stratified_by": strata_names,
                           "queries": int(cal.size), "per_fold": per_fold}
    pos_of = [h[is_pos[h]] for h in held]
    train_pos = [np.sort(np.concatenate([p for g, p in enumerate(pos_of) if g != f])) for f in range(k)]
    if len(ws.input_lanes) >= 2:
        out["convex"] = _cv_convex(ws, calibration, pos_of, train_pos, per_fold)
        out["rrf"] = _cv_rrf(ws, calibration, pos_of, train_pos, per_fold)
    if gate_requested(ws, gate):
        neg_of = [h[~is_pos[h]] for h in held]
        out["gate"] = _cv_gate(ws, gate, pos_of, neg_of, per_fold)
    if not any(key in out for key in ("convex", "rrf", "gate")):
        out["reason"] = "nothing is fitted here (one lane and no gate), so there is nothing to score"
    return out


def _cv_convex(ws: Workspace, calibration: CalibrationSettings, pos_of: list[np.ndarray], train_pos: list[np.ndarray],
               per_fold: list[dict[str, Any]]) -> dict[str, Any]:
    from ..fusion import methods as F
    from ..fusion.calibration import grid_values, mean_over
    from ..measures import parse_metrics

    step, metric = calibration.step, calibration.objective
    key = parse_metrics(metric)[0].key
    grid_of = getattr(ws, "convex_grid", None)
    lanes, values, fused = grid_of(step, metric) if grid_of is not None else grid_values(ws, step, metric)
    grid = F.grid_weights(len(lanes), step)
    index = {comp: i for i, (comp, _) in enumerate(grid)}
    pooled = np.zeros(ws.n_queries)

    def fit_on(q: np.ndarray) -> tuple[F.ConvexFit, int]:
        fit = F.fit_of_values(lanes, step, grid, (mean_over(v, q) for v in values), fused, key)
        return fit, index[fit.composition]

    weights: list[tuple[float, ...]] = []
    for f, (held, train) in enumerate(zip(pos_of, train_pos)):
        fit, i = fit_on(train)
        pooled[held] = values[i][held]
        weights.append(fit.weights)
        per_fold[f]["convex"] = {"weights": dict(zip(lanes, fit.weights)), "train_objective": fit.objective,
                                 "held_out_objective": mean_over(values[i], held), "held_out_positives": int(held.size)}
    all_fit, _ = fit_on(ws.positives)
    cv = mean_over(pooled, ws.positives)
    return {"objective": key, "lanes": list(lanes), "step": step,
            "spread": {lane: _spread([w[j] for w in weights]) for j, lane in enumerate(lanes)},
            "held_out_per_fold": _spread([d["convex"]["held_out_objective"] for d in per_fold]),
            "held_out_pooled": cv, "all": {"weights": dict(zip(lanes, all_fit.weights)), "in_sample": all_fit.objective},
            "optimism": all_fit.objective - cv}


def _cv_rrf(ws: Workspace, calibration: CalibrationSettings, pos_of: list[np.ndarray], train_pos: list[np.ndarray],
            per_fold: list[dict[str, Any]]) -> dict[str, Any]:
    from ..fusion.calibration import mean_over, per_query_objective
    from ..fusion.rrf_at_k import rrf_lane
    from ..report.figures import RRF_CURVE_KS

    g, key = per_query_objective(ws, calibration.objective)
    ks = tuple(sorted(RRF_CURVE_KS))
    values = [g(rrf_lane(ws, k, name=f"rrf@{k:g}")) for k in ks]
    pooled = np.zeros(ws.n_queries)

    def fit_on(q: np.ndarray) -> tuple[int, float]:
        best_i, best_v = 0, -math.inf
        for i, v in enumerate(values):  # ascending k: strict > keeps the smallest k of a tie
            m = mean_over(v, q)
            if m > best_v:
                best_i, best_v = i, m
        return best_i, best_v

    for f, (held, train) in enumerate(zip(pos_of, train_pos)):
        i, v = fit_on(train)
        pooled[held] = values[i][held]
        per_fold[f]["rrf"] = {"k": ks[i], "train_objective": v, "held_out_objective": mean_over(values[i], held)}
    i_all, v_all = fit_on(ws.positives)
    cv = mean_over(pooled, ws.positives)
    return {"objective": key.key, "grid": list(ks), "recorded_k": ws.settings.rrf_k,
            "spread": _spread([d["rrf"]["k"] for d in per_fold]),
            "held_out_per_fold": _spread([d["rrf"]["held_out_objective"] for d in per_fold]),
            "held_out_pooled": cv, "all": {"k": ks[i_all], "in_sample": v_all}, "optimism": v_all - cv,
            "note": f"thresholds.json keeps RRF k {ws.settings.rrf_k:g} ({ws.settings.rrf_k_source}): calibrate "
                    "records the k it was run with and does not fit it; the k fitted here shows how a fitted k would "
                    "vary across folds"}


def _cv_gate(ws: Workspace, gate: GateSettings, pos_of: list[np.ndarray], neg_of: list[np.ndarray],
             per_fold: list[dict[str, Any]]) -> dict[str, Any]:
    from .. import gate as G
    from ..gate.analysis import gate_lane_name

    lane = gate_lane_name(ws, gate.gate_on, required=True)
    assert lane is not None  # required=True raises instead
    top = ws.top_scores(lane)
    c = ws.settings.confidence
    k = len(pos_of)
    fitted: dict[str, list[float | None]] = {"floor": [], "null_floor": [], "conformal_floor": [], "margin": []}
    misses = accepts = 0
    for f in range(k):
        tp = np.sort(np.concatenate([p for g, p in enumerate(pos_of) if g != f]))
        tn = np.sort(np.concatenate([n for g, n in enumerate(neg_of) if g != f]))
        negs = {"in_domain": tn}
        d: dict[str, Any] = {}
        if tn.size:
            op = G.operating_point(G.sweep(top, tp, negs, confidence=c), gate.fpir, gate.conservative, c, "in_domain")
            floor, reason = op.floor, op.reason
            om = G.operating_margin(G.margin_sweep(top, tp, negs, confidence=c), gate.fpir, gate.conservative, c)
            margin, margin_reason = om.margin, om.reason
        else:
            floor, reason = math.inf, "no negatives to pick a floor on: +inf (reject all)"
            margin, margin_reason = None, "no negatives to fit a margin on"
        if floor == math.inf:  # the reason opens with the value, as every infinite number's reason does
            reason = "+inf (reject all)" + (f": {reason}" if reason else "")
        _put(d, "floor", floor, reason)
        null = G.null_floors(top, negs, c)["in_domain"]
        _put(d, "null_floor", null.floor, null.reason)
        conf = G.conformal_floor(top, tp, gate.miss_rate, in_sample=False)
        _put(d, "conformal_floor", conf.floor, "-inf: accept every retrieved query" if conf.floor == -math.inf else None)
        _put(d, "margin", margin, "+inf: only lone hits pass" if margin == math.inf else margin_reason)
        for name, v in (("floor", floor), ("null_floor", null.floor), ("conformal_floor", conf.floor),
                        ("margin", margin)):
            fitted[name].append(v)
        # scored on the held-out fold only: the floor alone, as calibrate's operating point is
        accepted = top.present & (top.top >= floor)
        hp, hn = pos_of[f], neg_of[f]
        miss = int(np.count_nonzero(~(accepted[hp] & top.top_relevant[hp])))
        acc = int(np.count_nonzero(accepted[hn]))
        misses += miss
        accepts += acc
        d["held_out"] = {"fnir": G.Rate(miss, int(hp.size), c).as_dict(), "fpir": G.Rate(acc, int(hn.size), c).as_dict()}
        per_fold[f]["gate"] = d
    n_pos = int(sum(p.size for p in pos_of))
    n_neg = int(sum(n.size for n in neg_of))
    return {"lane": lane, "target_fpir": gate.fpir, "conservative": gate.conservative, "miss_rate": gate.miss_rate,
            "picked_on": "in_domain", "spread": {name: _spread(v) for name, v in fitted.items()},
            "held_out_pooled": {"fnir": G.Rate(misses, n_pos, c).as_dict(), "fpir": G.Rate(accepts, n_neg, c).as_dict()},
            "note": "the floor is picked on the training folds' in-domain negatives (out-of-domain negatives are not "
                    "folded) and scored alone (no margin, no mutual condition); mutual r is a setting, not refitted"}
