"""What `evaluate` and `calibrate` compute, in order, over one workspace.

Derived lanes first (``rrf`` whenever two or more lanes are loaded, ``convex`` with
calibrated weights, then the cap / document-first variants of every lane), then
every block of the report. The dashboard asks the same functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import judgments as J
from . import report as R
from .errors import InputError
from .workspace import Workspace

THRESHOLDS_SCHEMA = "rankscope.thresholds/1"


# --------------------------------------------------------------------------- thresholds.json


@dataclass(frozen=True)
class Thresholds:
    """What `calibrate` fitted, as read back from thresholds.json."""

    path: str
    data: dict
    calibration_qids: frozenset = field(default_factory=frozenset)

    @property
    def convex_weights(self) -> dict | None:
        fusion = self.data.get("fusion") or {}
        conv = fusion.get("convex")
        return conv.get("weights") if conv else None

    @property
    def rrf_k(self) -> float | None:
        """The RRF k calibration settled on; None when it merely recorded the default."""
        fusion = self.data.get("fusion") or {}
        return None if fusion.get("rrf_k_source") == "default" else fusion.get("rrf_k")


def read_thresholds(path: str) -> Thresholds:
    """Read and validate thresholds.json; every block used later is checked here."""
    from .io import as_finite_number, load_json, read_text

    data = load_json(read_text(path), path)
    if not isinstance(data, dict) or data.get("schema") != THRESHOLDS_SCHEMA:
        raise InputError(f"not a thresholds file (expected 'schema': '{THRESHOLDS_SCHEMA}')", path, 1)

    def block(name: str) -> dict:
        b = data.get(name)
        if b is None:
            return {}
        if not isinstance(b, dict):
            raise InputError(f"'{name}' must be an object", path, 1)
        return b

    cal = block("calibration")
    qids = cal.get("qids", [])
    if not isinstance(qids, list) or not all(isinstance(q, str) for q in qids):
        raise InputError("'calibration.qids' must be a list of strings", path, 1)
    fusion = block("fusion")
    if fusion.get("rrf_k") is not None:
        k = as_finite_number(fusion["rrf_k"], "'fusion.rrf_k'", path, 1)
        if not 0 <= k <= 1e6:
            raise InputError("'fusion.rrf_k' must be between 0 and 1e6", path, 1)
    conv = fusion.get("convex")
    if conv is not None:
        if not isinstance(conv, dict) or not isinstance(conv.get("weights"), dict):
            raise InputError("'fusion.convex.weights' must be an object {lane: weight}", path, 1)
        total = 0.0
        for lane, w in conv["weights"].items():
            x = as_finite_number(w, f"convex weight of {lane}", path, 1)
            if x < 0:
                raise InputError(f"convex weight of {lane} must be >= 0", path, 1)
            total += x
        if conv["weights"] and total <= 0:
            raise InputError("convex weights must not all be zero", path, 1)
    gate = block("gate")
    for key in ("floor", "margin"):
        if gate.get(key) is not None:
            as_finite_number(gate[key], f"'gate.{key}'", path, 1)
    r = gate.get("mutual_r")
    if r is not None and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
        raise InputError("'gate.mutual_r' must be a positive integer", path, 1)
    return Thresholds(path, data, frozenset(qids))


def in_sample_overlap(ws: Workspace, th: Thresholds, queries: np.ndarray) -> int:
    """How many evaluated queries were also calibration queries."""
    return sum(1 for q in ws.qids[queries].tolist() if q in th.calibration_qids)


# --------------------------------------------------------------------------- derived lanes


def add_derived_lanes(ws: Workspace, th: Thresholds | None = None) -> None:
    """Add ``rrf`` (2+ input lanes), ``convex`` (with calibrated weights) and the cap /
    document-first variants. Idempotent."""
    from . import fusion as F

    inputs = [ws.lanes[n] for n in ws.input_lanes]
    s = ws.settings
    if len(inputs) >= 2 and "rrf" not in ws.lanes:
        ws.add_lane(F.rrf(inputs, k=s.rrf_k, n_queries=ws.n_queries, depth=s.depth, doc_ids=ws.doc_order), "fused")
    if th is not None and th.convex_weights and "convex" not in ws.lanes:
        weights = th.convex_weights
        missing = [n for n in ws.input_lanes if n not in weights]
        if missing or set(weights) - set(ws.input_lanes):
            raise InputError(f"calibrated weights are for lanes {sorted(weights)}, but the loaded lanes are {ws.input_lanes}", th.path)
        w = [float(weights[n]) for n in ws.input_lanes]
        ws.add_lane(F.convex(inputs, w, n_queries=ws.n_queries, depth=s.depth, doc_ids=ws.doc_order), "fused")
    if ws.group_of is not None and (s.cap is not None or s.document_first):
        for name in [n for n, o in ws.lane_origin.items() if o in ("input", "fused")]:
            lane = ws.lanes[name]
            if s.cap is not None and F.variant_name(name, s.cap) not in ws.lanes:
                ws.add_lane(F.cap(lane, ws.group_of, s.cap), "variant")
            if s.document_first and F.variant_name(name, s.cap, True) not in ws.lanes:
                ws.add_lane(F.document_first(lane, ws.group_of, cap=s.cap), "variant")
    _order_lanes(ws)


def _order_lanes(ws: Workspace) -> None:
    """Variants sit right after the lane they came from."""
    base = [n for n, o in ws.lane_origin.items() if o in ("input", "fused")]
    order = []
    for b in base:
        order.append(b)
        order += [n for n, o in ws.lane_origin.items() if o == "variant" and n.split("+", 1)[0] == b]
    ws.lanes = {n: ws.lanes[n] for n in order}


def fusion_block(ws: Workspace, th: Thresholds | None) -> dict | None:
    from . import fusion as F

    if "rrf" not in ws.lanes:
        return None
    s = ws.settings
    inputs = [ws.lanes[n] for n in ws.input_lanes]
    out: dict = {"rrf": {"k": s.rrf_k, "k_source": s.rrf_k_source}}
    if s.rrf_k_source == "chosen on these queries":
        out["rrf"]["label"] = "in-sample"
    dil = F.dilution(inputs, ws.lanes["rrf"], ws.judgments, s.relevant, queries=ws.positives)
    out["rrf"]["dilution"] = dil.as_dict(ws.qids)
    if "convex" in ws.lanes and th is not None:
        overlap = in_sample_overlap(ws, th, ws.positives)
        out["convex"] = {"weights": th.convex_weights, "calibrated_on": th.path,
                         "label": "in-sample" if overlap else "held-out", "overlap_queries": overlap}
        out["convex"]["dilution"] = F.dilution(inputs, ws.lanes["convex"], ws.judgments, s.relevant, queries=ws.positives).as_dict(ws.qids)
    return out


# --------------------------------------------------------------------------- gate


def gate_lane_name(ws: Workspace, gate_on: str | None, required: bool) -> str | None:
    if gate_on:
        if gate_on not in ws.lanes:
            raise InputError(f"--gate-on {gate_on!r} is not a loaded lane ({', '.join(ws.lanes)})", "--gate-on")
        return gate_on
    if len(ws.input_lanes) == 1:
        return ws.input_lanes[0]
    if required:
        raise InputError("--gate-on LANE is required when more than one lane is loaded", "--gate-on")
    return None


def negative_sets(ws: Workspace) -> dict[str, np.ndarray]:
    sets = {"in_domain": ws.negatives}
    if ws.ood_negatives is not None and ws.ood_negatives.size:
        sets["out_of_domain"] = ws.ood_negatives
    return sets


@dataclass
class GateView:
    """Everything the gate block and the Gate screen show, computed once."""

    lane: str
    top: object
    positives: np.ndarray
    negatives: dict
    null: dict
    conformal: object
    sweep: object
    margin_sweep: object
    operating: dict  # negative set -> OperatingPoint
    operating_margin: object | None
    mutual: object | None


def gate_view(ws: Workspace, lane: str, fpir: float, conservative: bool, miss_rate: float,
              mutual_r: int | None = None, in_sample_conformal: bool = True) -> GateView:
    from . import gate as G

    s = ws.settings
    key = ("gate", lane, fpir, conservative, miss_rate, mutual_r, in_sample_conformal)
    if key in ws._cache:
        return ws._cache[key]
    L = ws.lanes[lane]
    hits, _ = ws.hits(lane, "doc")  # grades already joined for the metrics: reuse them
    top = G.top_scores(L, ws.judgments, s.relevant, hit_relevant=hits.grade >= s.relevant)
    pos = ws.positives
    negs = negative_sets(ws)
    null = G.null_floors(top, negs, s.confidence)
    conf = G.conformal_floor(top, pos, miss_rate, in_sample=in_sample_conformal)
    mutual = None
    if mutual_r is not None:
        among = np.concatenate([pos] + list(negs.values()))
        mutual = G.mutual_nn(L, np.sort(among), tie_rule="count")
    sw = G.sweep(top, pos, negs, confidence=s.confidence)
    msw = G.margin_sweep(top, pos, negs, confidence=s.confidence)
    ops = {name: G.operating_point(sw, fpir, conservative, s.confidence, negative_set=name) for name in negs if negs[name].size}
    opm = G.operating_margin(msw, fpir, conservative, s.confidence) if negs["in_domain"].size else None
    view = GateView(lane, top, pos, negs, null, conf, sw, msw, ops, opm, mutual)
    ws._cache[key] = view
    return view


def gate_block(ws: Workspace, opts: dict, th: Thresholds | None) -> dict | None:
    from . import gate as G

    negs = negative_sets(ws)
    if not any(v.size for v in negs.values()) and not opts.get("gate_on"):
        return None
    lane = gate_lane_name(ws, opts.get("gate_on"), required=False)
    if lane is None:
        return {"skipped": True, "skipped_reason": "several lanes are loaded: name the gate lane with --gate-on"}
    s = ws.settings
    fpir, cons, alpha = opts.get("fpir", 0.05), opts.get("conservative", False), opts.get("miss_rate", 0.05)
    mutual_r = opts.get("mutual")
    if th is not None and th.data.get("gate"):
        mutual_r = th.data["gate"].get("mutual_r", mutual_r)
    view = gate_view(ws, lane, fpir, cons, alpha, mutual_r, in_sample_conformal=th is None)
    out: dict = {
        "lane": lane,
        "level": "doc",
        "definitions": {
            "top_score": "score at position 1 of the gate lane after ordering and depth; absent queries are always rejected",
            "fpir": "accepted negatives / negatives",
            "fnir": "(rejected + wrong_accept) / positives; a wrong accept (accepted with a non-relevant top hit) counts as a miss",
        },
        "negatives": {name: int(v.size) for name, v in negs.items()},
        "positives": int(view.positives.size),
        "null_floor": {name: nf.as_dict() for name, nf in view.null.items()},
        "conformal_floor": view.conformal.as_dict(),
        "sweep": view.sweep.as_dict(max_points=200),
        "rule_of_three": G.rule_of_three_table(confidence=s.confidence),
    }
    margin = opts.get("margin")
    if th is None:
        out["operating_point"] = {name: {**op.as_dict(), "label": "tuning (picked on the reported negatives)"} for name, op in view.operating.items()}
        if view.operating_margin is not None:
            out["operating_margin"] = {**view.operating_margin.as_dict(), "label": "tuning (picked on the reported negatives)"}
        floor = view.operating.get("in_domain").floor if "in_domain" in view.operating else None
    else:
        g = th.data.get("gate") or {}
        floor = _num_or_inf(g.get("floor"), g.get("floor_reason"))
        margin = g.get("margin") if margin is None else margin
        overlap = in_sample_overlap(ws, th, np.concatenate(list(negs.values()) + [view.positives]))
        out["applied"] = {"floor": g.get("floor"), "floor_reason": g.get("floor_reason"), "margin": margin, "mutual_r": mutual_r,
                          "from": th.path,
                          "label": "in-sample (evaluated queries overlap the calibration queries)" if overlap else "threshold (picked on other negatives)",
                          "overlap_queries": overlap}
    if floor is not None:
        outcome = G.gate_outcome(view.top, view.positives, negs, floor=floor, margin=margin,
                                 mutual=view.mutual, r=mutual_r, confidence=s.confidence)
        out["outcome"] = outcome.as_dict()
        out["outcome_by_stratum"] = _outcome_by_stratum(ws, view, negs, floor, margin, mutual_r)
    if view.mutual is not None:
        out["mutual"] = view.mutual.summary(mutual_r)
    return out


def _num_or_inf(x, reason):
    if x is not None:
        return float(x)
    if reason and "-inf" in str(reason):
        return float("-inf")
    return float("inf")


def _outcome_by_stratum(ws: Workspace, view: GateView, negs: dict, floor, margin, mutual_r) -> dict:
    from . import gate as G

    out: dict = {}
    for name, labels in ws.strata.items():
        out[name] = {}
        for label in sorted(set(labels[view.positives].tolist()) | set(np.concatenate([labels[v] for v in negs.values()]).tolist())):
            pos = view.positives[labels[view.positives] == label]
            sub = {k: v[labels[v] == label] for k, v in negs.items()}
            o = G.gate_outcome(view.top, pos, sub, floor=floor, margin=margin, mutual=view.mutual, r=mutual_r,
                               confidence=ws.settings.confidence)
            out[name][label] = o.as_dict()["combined"]
    return out


# --------------------------------------------------------------------------- evaluate


def prepare(ws: Workspace, thresholds_path: str | None = None) -> Thresholds | None:
    """Read thresholds (if any), adopt a calibrated RRF k, add derived lanes."""
    th = read_thresholds(thresholds_path) if thresholds_path else None
    if th is not None and th.rrf_k is not None and ws.settings.rrf_k_source == "default":
        ws.settings = replace(ws.settings, rrf_k=th.rrf_k, rrf_k_source="calibration")
        ws._cache.clear()
    add_derived_lanes(ws, th)
    return th


def evaluate_report(ws: Workspace, gate_options: dict | None = None, thresholds_path: str | None = None) -> dict:
    """The full report dict for ``rankscope evaluate`` (and the dashboard's export)."""
    th = prepare(ws, thresholds_path)
    extra: dict = {}
    extra["attribution"] = attribution_block(ws)
    fb = fusion_block(ws, th)
    if fb is not None:
        extra["fusion"] = fb
    gb = gate_block(ws, gate_options or {}, th)
    if gb is not None:
        extra["gate"] = gb
    report = R.build(ws, extra)
    if th is not None:
        report["inputs"]["thresholds"] = {"path": th.path, "sha256": _sha(th.path)}
    return report


def _sha(path: str) -> str:
    from .io import sha256_of

    return sha256_of(path)


def attribution_block(ws: Workspace) -> dict:
    """Miss attribution at doc level (and group level with --group-sep); it leads the report."""
    from . import attribution as A

    return {level: A.attribute_workspace(ws, level).as_dict(ws.qids) for level in ws.levels()}


# --------------------------------------------------------------------------- calibrate


def objective(ws: Workspace, metric: str, queries: np.ndarray | None = None):
    """``f(lane) -> mean metric over the queries`` (positives by default), via the metrics kernel."""
    from . import metrics as M

    key = M.parse_metrics(metric)[0]
    q = ws.positives if queries is None else queries
    j, s = ws.judgments, ws.settings

    def f(lane) -> float:
        hits, ideal = M.doc_level(lane.qid, lane.doc, lane.rank, j.qid, j.doc, j.grade, ws.n_docs)
        return float(M.compute(hits, ideal, ws.n_queries, [key], s.relevant)[key.key][q].mean()) if q.size else 0.0

    return f, key


def fit_convex(ws: Workspace, step: float, metric: str, queries: np.ndarray | None = None):
    """Convex fusion weights fitted on ``queries`` (positives by default) of this workspace."""
    from . import fusion as F

    f, key = objective(ws, metric, queries)
    return F.calibrate_convex([ws.lanes[n] for n in ws.input_lanes], f, n_queries=ws.n_queries, step=step,
                              depth=ws.settings.depth, objective_depth=key.k, doc_ids=ws.doc_order, objective_name=key.key)


def calibrate(ws: Workspace, opts: dict, step: float = 0.1, metric: str = "ndcg@10") -> dict:
    """thresholds.json content: fusion weights and RRF k, operating floor and margin,
    conformal floor, mutual r, every setting, the calibration qids, input fingerprints."""
    from .io import sha256_of

    s = ws.settings
    out: dict = {"schema": THRESHOLDS_SCHEMA, "settings": s.as_dict(),
                 "fingerprints": {f.path: f.sha256 for f in ws.inputs},
                 "calibration": {"qrels": next(f.path for f in ws.inputs if f.role == "qrels"),
                                 "qids": [str(q) for q in ws.qids[np.sort(np.concatenate([ws.positives, ws.negatives]))].tolist()],
                                 "positives": int(ws.positives.size), "negatives": int(ws.negatives.size)}}
    fusion: dict = {"rrf_k": s.rrf_k, "rrf_k_source": s.rrf_k_source}
    if len(ws.input_lanes) >= 2:
        fit = fit_convex(ws, step, metric)
        fusion["convex"] = fit.as_dict()
    out["fusion"] = fusion
    negs = negative_sets(ws)
    need_gate = opts.get("gate_on") or any(v.size for v in negs.values())
    if need_gate:
        add_derived_lanes(ws)
        lane = gate_lane_name(ws, opts.get("gate_on"), required=True)
        fpir, cons, alpha = opts.get("fpir", 0.05), opts.get("conservative", False), opts.get("miss_rate", 0.05)
        view = gate_view(ws, lane, fpir, cons, alpha, opts.get("mutual"), in_sample_conformal=False)
        pick_on = "in_domain" if negs["in_domain"].size else next((k for k, v in negs.items() if v.size), None)
        op = view.operating.get(pick_on) if pick_on else None
        gate = {"lane": lane, "target_fpir": fpir, "conservative": cons, "miss_rate": alpha,
                "picked_on": pick_on, "mutual_r": opts.get("mutual"),
                "null_floor": {k: v.as_dict() for k, v in view.null.items()},
                "conformal_floor": view.conformal.as_dict()}
        if op is not None:
            d = op.as_dict()
            gate["operating_point"] = d
            gate["floor"] = d.get("floor")
            gate["floor_reason"] = d.get("floor_reason") or (None if d.get("floor") is not None else "+inf: reject all (unattainable)")
        else:
            gate["floor"], gate["floor_reason"] = None, "no negatives to pick a floor on"
        if view.operating_margin is not None:
            m = view.operating_margin.as_dict()
            gate["operating_margin"] = m
            gate["margin"] = m.get("margin")
        out["gate"] = gate
    return out
