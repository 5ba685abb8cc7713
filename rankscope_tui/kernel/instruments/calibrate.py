"""The ``calibrate`` instrument: what thresholds.json holds, fitted on calibration queries.

Calibration queries are the positives and in-domain negatives of the calibration qrels.
On them it fits the convex fusion weights (a grid search maximising the objective's mean
over the positives, ``fusion.calibration.fit_convex``), records the RRF k in force, and,
when a gate is requested, the gate's floors and operating point (``gate.analysis``). The
file's schema and reader are ``gate.thresholds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..fusion.calibration import fit_convex
from ..gate.analysis import analyse_gate, gate_requested
from ..gate.thresholds import THRESHOLDS_SCHEMA
from ..settings import CalibrationSettings, GateSettings
from .evaluate import add_derived_lanes

if TYPE_CHECKING:
    from ..gate.analysis import GateAnalysis
    from ..workspace.loaded import Workspace


def calibrate(ws: Workspace, gate: GateSettings, calibration: CalibrationSettings = CalibrationSettings(),
              held_out: Workspace | None = None) -> dict[str, Any]:
    """thresholds.json content: fusion weights and RRF k, operating floor and margin,
    conformal floor, mutual r, every setting, the calibration qids, input fingerprints.
    With ``settings.fuse``, the methods side by side (``fusion.calibration.compare_methods``,
    scored on ``held_out`` too when given)."""
    s = ws.settings
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
    if s.fuse and len(ws.input_lanes) >= 2 and ws.positives.size:
        from ..fusion.calibration import compare_methods

        fusion["methods"] = compare_methods(ws, s.fuse, held_out, calibration).as_dict()
    out["fusion"] = fusion
    if gate_requested(ws, gate):
        add_derived_lanes(ws)
        out["gate"] = gate_thresholds(analyse_gate(ws, gate, calibrating=True))
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
