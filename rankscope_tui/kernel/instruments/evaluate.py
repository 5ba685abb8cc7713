"""What `evaluate` computes, in order, over one workspace.

Derived lanes first (``rrf`` whenever two or more lanes are loaded, ``convex`` with
calibrated weights, then the cap / document-first variants of every lane), then
every block of the report (the gate's from :func:`gate.analysis.analyse_gate`). The
dashboard asks the same functions; `calibrate` writes thresholds.json through
:func:`thresholds.calibrate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..report import payload as R
from ..settings import GateSettings

if TYPE_CHECKING:  # thresholds, fusion and rrf_at_k load only when a run uses them (start-up time)
    from ..fusion.methods import Dilution
    from ..gate.thresholds import Thresholds
    from ..workspace.contract import RankedPerQuery
    from ..workspace.loaded import Workspace


# --------------------------------------------------------------------------- derived lanes


def add_derived_lanes(ws: Workspace, th: Thresholds | None = None) -> None:
    """Add ``rrf`` (2+ input lanes, at the workspace's k), ``convex`` (with calibrated
    weights) and the cap / document-first variants. Idempotent."""
    inputs = [ws.lanes[n] for n in ws.input_lanes]
    s = ws.settings
    if len(inputs) >= 2 and "rrf" not in ws.lanes:
        from ..fusion.rrf_at_k import rrf_lane

        ws.add_lane(rrf_lane(ws, s.rrf_k), "fused")
    if th is not None and th.convex_weights and "convex" not in ws.lanes:
        from ..fusion import methods as F

        weights = th.convex_weights
        missing = [n for n in ws.input_lanes if n not in weights]
        if missing or set(weights) - set(ws.input_lanes):
            raise InputError(f"calibrated weights are for lanes {sorted(weights)}, but the loaded lanes are {ws.input_lanes}", th.path)
        w = [float(weights[n]) for n in ws.input_lanes]
        ws.add_lane(F.convex(inputs, w, n_queries=ws.n_queries, depth=s.depth, doc_ids=ws.doc_order), "fused")
    if s.fuse:
        add_fused_lanes(ws, th)
    if ws.group_of is not None and (s.cap is not None or s.document_first):
        from ..fusion import methods as F

        for name in [n for n, o in ws.lane_origin.items() if o in ("input", "fused")]:
            lane = ws.lanes[name]
            if s.cap is not None and F.variant_name(name, s.cap) not in ws.lanes:
                ws.add_lane(F.cap(lane, ws.group_of, s.cap), "variant")
            if s.document_first and F.variant_name(name, s.cap, True) not in ws.lanes:
                ws.add_lane(F.document_first(lane, ws.group_of, cap=s.cap), "variant")
    _order_lanes(ws)


def method_weights(ws: RankedPerQuery, name: str, th: Thresholds | None) -> tuple[list[float], str]:
    """A weighted ``--fuse`` method's weights in input-lane order, and where they come from:
    ``calibrate --fuse``'s (in thresholds.json) when it fitted this method, else ``1/L`` each."""
    fitted = th.fusion.method_weights.get(name) if th is not None else None
    if fitted is None:
        return [1.0 / len(ws.input_lanes)] * len(ws.input_lanes), "equal (1/L each)"
    assert th is not None
    if set(fitted) != set(ws.input_lanes):
        raise InputError(f"calibrated {name} weights are for lanes {sorted(fitted)}, but the loaded lanes are "
                         f"{ws.input_lanes}", th.path)
    return [float(fitted[n]) for n in ws.input_lanes], f"calibration ({th.path})"


def add_fused_lanes(ws: Workspace, th: Thresholds | None = None) -> None:
    """The lanes of ``settings.fuse`` (``fusion.combine``; named ``METHOD[:NORM]``) over the
    input lanes, at the workspace's depth and RRF k; a weighted method takes its calibrated
    weights (:func:`method_weights`). Needs two or more input lanes; a name taken by an
    input lane is refused."""
    from ..fusion import methods as F
    from ..fusion.combine import parse_fuse

    inputs = [ws.lanes[n] for n in ws.input_lanes]
    s = ws.settings
    if len(inputs) < 2:
        raise InputError(f"--fuse needs two or more lanes ({len(inputs)} loaded)", "--fuse")
    for text in s.fuse:
        spec = parse_fuse(text)
        if spec.name in ws.lanes:
            if ws.lane_origin.get(spec.name) == "input":
                raise InputError(f"lane name {spec.name!r} is the name of the fused lane --fuse {spec.name} adds; "
                                 "rename the input lane", "--fuse")
            continue
        weights = method_weights(ws, spec.name, th)[0] if spec.weighted else None
        ws.add_lane(F.fuse(inputs, spec, weights, k=s.rrf_k, n_queries=ws.n_queries, depth=s.depth,
                           doc_ids=ws.doc_order), "fused")


def fused_lanes_block(ws: RankedPerQuery, th: Thresholds | None = None) -> dict[str, Any]:
    """``{name: {method, normalisation, weights?, definition}}`` of the ``--fuse`` lanes;
    calibrated weights are labelled in-sample or held-out as the convex lane's are."""
    from ..fusion.combine import parse_fuse

    out: dict[str, Any] = {}
    for text in ws.settings.fuse:
        spec = parse_fuse(text)
        entry: dict[str, Any] = {"method": spec.method, "definition": spec.definition}
        if spec.norm is not None:  # a rank method has none
            entry["normalisation"] = spec.norm
        if spec.weighted:
            w, source = method_weights(ws, spec.name, th)
            entry["weights"] = dict(zip(ws.input_lanes, w))
            entry["weights_source"] = source
            if th is not None and spec.name in th.fusion.method_weights:
                from ..gate.thresholds import in_sample_overlap

                overlap = in_sample_overlap(ws, th, ws.positives)
                entry["label"], entry["overlap_queries"] = ("in-sample" if overlap else "held-out"), overlap
        if spec.method == "wrrf":
            entry["k"] = ws.settings.rrf_k
        out[spec.name] = entry
    return out


def _order_lanes(ws: Workspace) -> None:
    """Variants sit right after the lane they came from."""
    base = [n for n, o in ws.lane_origin.items() if o in ("input", "fused")]
    order = []
    for b in base:
        order.append(b)
        order += [n for n, o in ws.lane_origin.items() if o == "variant" and n.split("+", 1)[0] == b]
    ws.lanes = {n: ws.lanes[n] for n in order}


def fusion_block(ws: RankedPerQuery, th: Thresholds | None) -> dict[str, Any] | None:
    """The report's fusion block: RRF at the workspace's k (``rrf_at_k``, what the RRF view
    shows at that k) and the calibrated convex lane."""
    if "rrf" not in ws.lanes:
        return None
    s = ws.settings
    out: dict[str, Any] = {"rrf": {"k": s.rrf_k, "k_source": s.rrf_k_source}}
    out["rrf"]["dilution"] = _dilution(ws, "rrf").as_dict(ws.qids)  # what rrf_at_k(ws) says at the workspace's k
    if "convex" in ws.lanes and th is not None:
        from ..gate.thresholds import in_sample_overlap

        overlap = in_sample_overlap(ws, th, ws.positives)
        out["convex"] = {"weights": th.convex_weights, "calibrated_on": th.path,
                         "label": "in-sample" if overlap else "held-out", "overlap_queries": overlap}
        out["convex"]["dilution"] = _dilution(ws, "convex").as_dict(ws.qids)
    if s.fuse:
        out["methods"] = fused_lanes_block(ws, th)
        for name in out["methods"]:
            if name in ws.lanes:
                out["methods"][name]["dilution"] = _dilution(ws, name).as_dict(ws.qids)
    return out


def _dilution(ws: RankedPerQuery, fused: str) -> Dilution:
    """``fusion.dilution`` of a loaded fused lane over the positives, from each lane's
    per-query top-hit relevance (``Workspace.top_relevant``)."""
    from ..fusion import methods as F

    return F.dilution_of(fused, ws.settings.relevant, ws.input_lanes,
                         [ws.top_relevant(n) for n in ws.input_lanes], ws.top_relevant(fused),
                         queries=ws.positives)


# --------------------------------------------------------------------------- evaluate


def prepare(ws: Workspace, thresholds_path: str | None = None) -> tuple[Workspace, Thresholds | None]:
    """Read thresholds (if any) and return the workspace to report on, with its derived
    lanes: ``ws`` itself, or -- when the thresholds carry a calibrated RRF k and none was
    chosen on the command line -- a new workspace with that k (``with_settings``; ``ws``
    is left as it was). Idempotent: preparing the result again returns it unchanged."""
    th = None
    if thresholds_path:
        from ..gate.thresholds import read_thresholds

        th = read_thresholds(thresholds_path)
    if th is not None and th.rrf_k is not None and ws.settings.rrf_k_source == "default":
        ws = ws.with_settings(rrf_k=th.rrf_k, rrf_k_source="calibration")
    add_derived_lanes(ws, th)
    return ws, th


def evaluate_report(ws: Workspace, gate: GateSettings | None = None, thresholds_path: str | None = None) -> dict[str, Any]:
    """The full report dict for ``rankscope evaluate`` (and the dashboard's export), on
    ``prepare(ws, thresholds_path)``'s workspace."""
    ws, th = prepare(ws, thresholds_path)
    return report_of(ws, gate, th)


def report_of(ws: RankedPerQuery, gate: GateSettings | None = None, th: Thresholds | None = None) -> dict[str, Any]:
    """The report dict of a prepared workspace (``prepare``'s result and thresholds). Every
    block reads per-query values only (``per_query``, ``ceilings``, ``top_scores``,
    ``present``, ``coverage``), so a workspace of merged query buckets
    (``bucket.QueryWorkspace``) gets the same report from here."""
    from ..gate.analysis import analyse_gate, gate_requested

    gate = gate or GateSettings()
    extra: dict[str, Any] = {}
    extra["attribution"] = attribution_block(ws)
    fb = fusion_block(ws, th)
    if fb is not None:
        extra["fusion"] = fb
    analysis = analyse_gate(ws, gate, th) if gate_requested(ws, gate) else None
    if analysis is not None:
        extra["gate"] = analysis.as_dict()
    tb = ties_block(ws)
    if tb is not None:
        extra["ties"] = tb
    cb = coverage_block(ws)
    if cb is not None:
        extra["coverage"] = cb
    lb = latency_block(ws)
    if lb is not None:  # only a run that carries per-query seconds: every other report is unchanged
        extra["latency"] = lb
    report = R.build(ws, extra)
    report["inputs"]["settings"]["gate"] = gate.as_dict()
    if analysis is not None:  # the gate's warnings join the input warnings (and print with them)
        report["summary"]["warnings"] += [w.as_dict() for w in analysis.warnings]
    if th is not None:  # thresholds applied under other settings than they were fitted with
        from ..gate.thresholds import settings_warnings

        report["summary"]["warnings"] += [w.as_dict() for w in settings_warnings(ws.settings, th)]
        report["inputs"]["thresholds"] = {"path": th.path, "sha256": _sha(th.path)}
    return report


def _sha(path: str) -> str:
    from ..inputs.files import sha256_of

    return sha256_of(path)


def attribution_block(ws: RankedPerQuery) -> dict[str, Any]:
    """Miss attribution at doc level (and group level with --group-sep); it leads the report."""
    return {level: ws.attribution(level).as_dict(ws.qids) for level in ws.levels()}  # attribute_workspace's value, kept per workspace


# --------------------------------------------------------------------------- calibrate




# --------------------------------------------------------------------------- tie exposure

TIES_METHOD = ("worst / best: the value with every group of equal scores ordered by grade ascending / descending "
               "(the extremes over all orders of the tied hits); expected: the mean over uniformly random orders of "
               "every tie group, in closed form (McSherry & Najork 2008, ECIR), not computed for ap; dependent: "
               "positive queries whose worst and best differ; straddling: positive queries with a tie group across "
               "the measure's cutoff; means over the positive queries")


def ties_block(ws: RankedPerQuery) -> dict[str, Any] | None:
    """``{"method", "queries", "not_covered", "lanes": {lane: {"tied_queries": n, "metrics":
    {key: {dependent, straddling, worst, best, expected}}}}}``: how much each lane's numbers
    depend on the tie rule (``measures.ties``), over the positive queries. None for a
    workspace read from per-query tables (no rows)."""
    from ..measures.ties import SUPPORTED

    ties_of = getattr(ws, "ties", None)
    if ties_of is None:  # per-query tables alone: no rows, no ties to look at
        return None
    pos = ws.positives
    keys = [m.key for m in ws.settings.metrics if m.kind in SUPPORTED]
    lanes: dict[str, Any] = {}
    for lane in ws.lanes:
        t = ties_of(lane)
        tied = t.tied
        cells: dict[str, Any] = {}
        for k in keys:
            cell: dict[str, Any] = {
                "dependent": int(t.depends[k][pos].sum()), "straddling": int(t.straddles[k][pos].sum()),
                "worst": float(t.worst[k][pos].mean()) if pos.size else None,
                "best": float(t.best[k][pos].mean()) if pos.size else None,
            }
            e = t.expected[k][pos]
            cell["expected"] = float(e.mean()) if pos.size and not np.isnan(e).any() else None
            if cell["expected"] is None:
                cell["expected_reason"] = "no positive query" if not pos.size else "no closed form computed for this measure"
            if not pos.size:
                cell["worst_reason"] = cell["best_reason"] = "no positive query"
            cells[k] = cell
        lanes[lane] = {"tied_queries": int(tied[pos].sum()), "metrics": cells}
    return {"method": TIES_METHOD, "queries": int(pos.size),
            "not_covered": [m.key for m in ws.settings.metrics if m.kind not in SUPPORTED], "lanes": lanes}


# --------------------------------------------------------------------------- judgment coverage

COVERAGE_METHOD = ("holes: unjudged hits (no grade >= 0) within the measure's cutoff (the whole list for an uncut "
                   "measure); as_relevant / as_nonrelevant: the measure on the qrels with the lane's holes added with "
                   "the measure's relevance level / with grade 0 (a hole counted relevant also adds to R and to the "
                   "ideal DCG); gap: as_relevant - as_nonrelevant; means over the positive queries")


def _mean(x: Any, pos: Any) -> float | None:
    return float(x[pos].mean()) if pos.size else None


def latency_block(ws: Any) -> dict[str, Any] | None:
    """``{"measure", "unit", "definition", "interval", "lanes": {lane: {queries, mean, median,
    p95}}}`` for the input lanes that carry per-query seconds (a run made by asking a
    retriever, ``inputs.retrieve``); None when none does. Over every query the run was made
    for (judged or not); p95 is numpy's default percentile (linear interpolation between
    order statistics, Hyndman & Fan's type 7). No interval: see ``RESPONSE_TIME_DEFINITION``."""
    from ..measures.names import RESPONSE_TIME, RESPONSE_TIME_DEFINITION

    latency = getattr(ws, "latency", None) or {}  # a workspace of per-query tables has none
    lanes: dict[str, Any] = {}
    for lane in ws.lanes:
        seconds = latency.get(lane)
        if not seconds:
            continue
        v = np.asarray(list(seconds.values()), dtype=np.float64)
        lanes[lane] = {"queries": int(v.size), "mean": float(v.mean()), "median": float(np.median(v)),
                       "p95": float(np.percentile(v, 95))}
    if not lanes:
        return None
    return {"measure": RESPONSE_TIME, "unit": "seconds", "relevance_measure": False, "interval": "none",
            "definition": RESPONSE_TIME_DEFINITION, "lanes": lanes}


def coverage_block(ws: RankedPerQuery) -> dict[str, Any] | None:
    """``{"method", "condensed", "queries", "lanes": {lane: {key: {cutoff, holes, max_holes,
    queries_with_holes, holes_by_query, observed, as_nonrelevant, as_relevant, gap}}}}``:
    how much of each lane's numbers rests on unjudged hits (``measures.coverage``), over the
    positive queries (``holes_by_query`` lists only the positives with a hole). None for a
    workspace read from per-query tables (no rows)."""
    cov_of = getattr(ws, "judgment_coverage", None)
    if cov_of is None:
        return None
    pos = ws.positives
    qids = ws.qids[pos].tolist()
    lanes: dict[str, Any] = {}
    for lane in ws.lanes:
        c = cov_of(lane)
        pq = ws.per_query(lane, "doc")
        cells: dict[str, Any] = {}
        for m in ws.settings.metrics:
            k = m.key
            holes = c.holes[k][pos]
            cell: dict[str, Any] = {
                "cutoff": m.k if m.k is not None else "list",
                "holes": _mean(c.holes[k], pos), "max_holes": int(holes.max()) if pos.size else 0,
                "queries_with_holes": int((holes > 0).sum()),
                "holes_by_query": {q: int(h) for q, h in zip(qids, holes.tolist()) if h},
                "observed": _mean(pq[k], pos), "as_nonrelevant": _mean(c.as_nonrelevant[k], pos),
                "as_relevant": _mean(c.as_relevant[k], pos),
                "gap": _mean(c.as_relevant[k] - c.as_nonrelevant[k], pos),
            }
            if not pos.size:
                for name in ("holes", "observed", "as_nonrelevant", "as_relevant", "gap"):
                    cell[f"{name}_reason"] = "no positive query"
            cells[k] = cell
        lanes[lane] = cells
    return {"method": COVERAGE_METHOD, "condensed": bool(ws.settings.condensed), "queries": int(pos.size),
            "lanes": lanes}
