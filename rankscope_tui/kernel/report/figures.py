"""The numbers behind each figure, from the entry points the dashboard's plots use.

Each function returns a :class:`Figure`: a kind, a title, axis names and rows of plain
values (``list[dict]``, the data a Vega-Lite spec inlines and a matplotlib drawing
reads). Nothing here draws.

- ``rrf-k``: mean of a metric against RRF k (``rrf_at_k.RRFExplorer`` at
  :data:`RRF_CURVE_KS`, the RRF view's points) with each input lane's mean as a
  reference; the best k on the curve (``rrf_at_k.best_k``, an in-sample choice).
- ``convex-grid``: the mean objective at every point of the convex weight grid
  (``calibration.fit_convex``, what the Calibrate view draws), fitted on the report's
  own queries (in-sample: the title says so). Two lanes: a curve over the first lane's
  weight; three or more: the first two weights as a heat map (the rest is 1 − both).
- ``gate``: FNIR against FPIR per negative set over the floor sweep, with the operating
  point, or on a report evaluated with ``--thresholds`` the applied floor (report.json's
  ``gate`` block: ``gate.analysis.analyse_gate``'s numbers).
- ``compare-intervals``: per comparison row the paired, unpaired and BCa intervals of
  the mean difference (compare.json's rows: ``instruments.compare.compare``'s numbers).
- ``per-query-delta``: candidate − baseline per positive query, sorted, the largest
  losses labelled (report.json's ``per_query``).
- ``forest``: the mean with its interval per lane × stratum (report.json's cells); a
  cell with the small-sample flag carries the dagger (``caveats``) and the notes say why.
- ``pr-curve``: every lane's interpolated precision at the 11 recall levels 0.0, 0.1, …,
  1.0 (``measures.iprec``: trec_eval's ``iprec_at_recall``), each point the mean over the
  positive queries of the per-query values the measure registry computes (the numbers
  report.json's ``iprec_at_recall_*`` cells hold); optionally one curve per label of a
  stratification (the same query sets as report.json's strata blocks).

Every figure's ``notes`` are its subtitle in every format (Vega-Lite and matplotlib alike).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .caveats import SMALL_SAMPLE_FOOTNOTE, SMALL_SAMPLE_MARK, cell_note, small_sample

if TYPE_CHECKING:
    from ..workspace.loaded import Workspace

#: The k of the RRF view's curve (screens/rrf.py draws the same points).
RRF_CURVE_KS = (1, 2, 3, 5, 8, 10, 15, 20, 30, 40, 50, 60, 70, 80, 100, 120, 140, 160, 180, 200)
#: Losses labelled on the per-query difference bars.
LABELLED_LOSSES = 5
KINDS = ("rrf-k", "convex-grid", "gate", "compare-intervals", "per-query-delta", "forest", "pr-curve")
#: Which kinds need the inputs named in report.json reloaded (the others read the payloads).
NEEDS_WORKSPACE = {"rrf-k", "convex-grid", "pr-curve"}
#: The recall levels of the P–R curve, lowest first (``11pt_avg``'s levels).
PR_LEVELS = tuple(i / 10 for i in range(11))
#: The metric key of each point of the P–R curve (``iprec_at_recall_0.00`` … ``_1.00``).
PR_METRICS = tuple(f"iprec_at_recall_{x:.2f}" for x in PR_LEVELS)
#: What a P–R curve's point is, said once (every face quotes it).
PR_NOTE = ("each point: interpolated precision at the recall level, the highest precision at or below the rank of "
           "the c-th relevant hit, c = round(level · R) (trec_eval's iprec_at_recall), averaged over the positive "
           "queries; a query retrieving fewer than c relevant docs counts 0")
NEEDS_COMPARE = {"compare-intervals"}
NEG_WORDS = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}


@dataclass(frozen=True)
class Figure:
    kind: str
    title: str
    x: str  # the x field's title
    y: str  # the y field's title
    rows: list[dict[str, Any]] = field(default_factory=list)  # the plotted values
    notes: tuple[str, ...] = ()  # what the figure's caption says (in-sample, what was left out)


def _finite(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(float(v)) else float(v)


# --------------------------------------------------------------------------- from a workspace


def rrf_k_figure(ws: Workspace, metric: str, ks: tuple[float, ...] = RRF_CURVE_KS) -> Figure:
    from ..fusion.rrf_at_k import RRFExplorer, best_k

    ex = RRFExplorer(ws)
    curve: dict[float, dict[str, Any]] = {k: ex.at(k).means for k in ks}
    rows = [{"series": "rrf", "k": k, "value": _finite(curve[k][metric])} for k in ks]
    for lane in ws.input_lanes:
        v = _finite(ws.mean(lane, "doc", metric))
        rows += [{"series": lane, "k": ks[0], "value": v}, {"series": lane, "k": ks[-1], "value": v}]
    best = best_k(curve, metric)
    notes = (f"best k on these queries (in-sample): {best[0]:g}, {best[1]:.4f}",) if best else ()
    if best:
        rows.append({"series": "best k", "k": best[0], "value": best[1]})
    return Figure("rrf-k", f"{metric} (mean over {ws.positives.size} positives) against RRF k", "k", metric, rows, notes)


def convex_grid_figure(ws: Workspace, metric: str, step: float = 0.1) -> Figure:
    from ..fusion.calibration import fit_convex

    fit = fit_convex(ws, step, metric)
    n = round(1 / step)
    lanes = list(fit.lanes)
    rows: list[dict[str, Any]] = []
    for comp, value in fit.points:
        row: dict[str, Any] = {f"w_{i}": c / n for i, c in enumerate(comp)}
        row["value"] = _finite(value)
        row["best"] = tuple(comp) == tuple(fit.composition)
        rows.append(row)
    weights = ", ".join(f"{lane} {w:g}" for lane, w in zip(lanes, fit.weights))
    notes = ("lanes w_i: " + ", ".join(f"w_{i} = {lane}" for i, lane in enumerate(lanes)),
             f"fitted on the report's own {ws.positives.size} positives (in-sample): best {weights}, {fit.objective:.4f}")
    return Figure("convex-grid", f"mean {metric} over the convex weight grid (step {step:g})",
                  f"weight of {lanes[0]}", f"weight of {lanes[1]}" if len(lanes) > 2 else metric, rows, notes)


def pr_curve_rows(ws: Workspace, level: str = "doc", stratification: str | None = None) -> list[dict[str, Any]]:
    """The P–R curve's points: ``{"stratum", "lane", "recall", "precision", "n"}`` per lane
    (every lane of the workspace, in its order) × recall level (:data:`PR_LEVELS`) ×
    section ("overall", or each label of ``stratification`` over the positives, ordered as
    report.json's strata blocks). ``precision`` is ``WorkspaceBase.means_of`` over the
    section's positives of the registry's ``iprec_at_recall_X`` per-query values."""
    from ..inputs.tables import NONE_LABEL
    from ..measures.names import parse_metrics

    keys = tuple(parse_metrics(",".join(PR_METRICS)))
    pos = ws.positives
    sections: list[tuple[str, Any]] = [("overall", pos)]
    if stratification is not None:
        if stratification not in ws.strata:
            have = ", ".join(ws.strata) or "none"
            raise ValueError(f"no stratification {stratification!r} in the report (it has: {have})")
        lab = ws.strata[stratification][pos]
        for label in sorted(set(lab.tolist()), key=lambda x: (x == NONE_LABEL, x.encode())):
            sections.append((str(label), pos[lab == label]))
    rows: list[dict[str, Any]] = []
    for name, queries in sections:
        for lane in ws.lanes:
            means = ws.means_of(ws.per_query(lane, level, keys), [k.key for k in keys], queries)
            for x, key in zip(PR_LEVELS, keys):
                rows.append({"stratum": name, "lane": lane, "recall": x, "precision": _finite(means[key.key]),
                             "n": int(queries.size)})
    return rows


def pr_curve_figure(ws: Workspace, level: str = "doc", stratification: str | None = None) -> Figure:
    rows = pr_curve_rows(ws, level, stratification)
    by = f", by {stratification}" if stratification else ""
    notes = (PR_NOTE, f"{ws.positives.size} positive queries overall; relevant = grade >= {ws.settings.relevant}")
    return Figure("pr-curve", f"interpolated precision against recall ({level}){by}", "recall",
                  "interpolated precision (mean)", rows, notes)


# --------------------------------------------------------------------------- from report.json


def gate_figure(report: dict[str, Any]) -> Figure:
    g = report.get("gate")
    if not g or g.get("skipped") or "sweep" not in g:
        raise ValueError("the report has no gate sweep (evaluate with --gate-on LANE and negative queries)")
    sw = g["sweep"]
    rows: list[dict[str, Any]] = []
    for name, neg in sw["negatives"].items():
        for i, thr in enumerate(sw["threshold"]):
            fnir = sw["fnir"][i]
            fpir = neg["fpir"][i]
            # as the Gate view: an undefined FNIR (no positive) reads 1, an undefined FPIR 0
            rows.append({"series": f"{NEG_WORDS.get(name, name)} negatives", "fpir": 0.0 if fpir is None else fpir,
                         "fnir": 1.0 if fnir is None else fnir, "floor": thr, "point": False})
    target = report["inputs"]["settings"].get("gate", {}).get("fpir")
    if target is not None:  # a vertical line at the target (two points of its own series)
        rows += [{"series": "target FPIR", "fpir": target, "fnir": 0.0, "floor": None, "point": False},
                 {"series": "target FPIR", "fpir": target, "fnir": 1.0, "floor": None, "point": False}]
    for name, op in (g.get("operating_point") or {}).items():
        f = (op.get("fpir") or {}).get(name) or {}
        fn = op.get("fnir") or {}
        if f.get("value") is not None and fn.get("value") is not None:
            rows.append({"series": f"operating point ({NEG_WORDS.get(name, name)})", "fpir": f["value"], "fnir": fn["value"],
                         "floor": op.get("floor"), "point": True})
    notes = [f"target FPIR {target:g}"] if target is not None else []
    applied = g.get("applied")
    if applied and not g.get("operating_point"):
        # evaluated with --thresholds: the floor in force is the one thresholds.json brings,
        # drawn where the floor alone lands (the curve is the floor alone too)
        alone = ((g.get("outcome") or {}).get("alone") or {}).get("floor") or {}
        fn = alone.get("fnir") or {}
        for name, f in (alone.get("fpir") or {}).items():
            if f.get("value") is not None and fn.get("value") is not None:
                rows.append({"series": f"applied floor ({NEG_WORDS.get(name, name)})", "fpir": f["value"],
                             "fnir": fn["value"], "floor": applied.get("floor"), "point": True})
        floor = "+inf (reject all)" if applied.get("floor") is None else f"{applied['floor']:.6g}"
        notes.append(f"applied floor {floor} from {os.path.basename(str(applied.get('from', '')))} "
                     f"[{applied.get('label', '')}]")
    return Figure("gate", f"gate lane {g['lane']}: FNIR against FPIR", "FPIR (accepted negatives)", "FNIR", rows,
                  tuple(notes))


def compare_intervals_figure(compare: dict[str, Any]) -> Figure:
    rows: list[dict[str, Any]] = []
    for r in compare["comparisons"]:
        label = f"{r['candidate']} − {r['baseline']}, {r['metric']}"
        for kind, lo, hi in (("paired", r.get("ci_low"), r.get("ci_high")),
                             ("unpaired", r.get("unpaired_ci_low"), r.get("unpaired_ci_high")),
                             (f"BCa ({r['bca_level']:.4g})", r.get("bca_low"), r.get("bca_high"))):
            if lo is not None and hi is not None:
                rows.append({"row": label, "interval": kind, "low": lo, "high": hi, "difference": r["difference"]})
    return Figure("compare-intervals", "mean difference with its intervals (0 = no difference)", "difference",
                  "comparison", rows, (compare.get("caption", ""),))


def per_query_delta_figure(report: dict[str, Any], baseline: str, candidate: str, metric: str, level: str = "doc") -> Figure:
    pq = report["per_query"]
    for lane in (baseline, candidate):
        if lane not in pq or level not in pq[lane]:
            raise ValueError(f"no per-query values of lane {lane!r} at level {level!r} in the report")
    b, c = pq[baseline][level], pq[candidate][level]
    if metric not in report["inputs"]["settings"]["metrics"]:
        raise ValueError(f"metric {metric!r} is not in the report")
    deltas = sorted(((c[q][metric] - b[q][metric], q) for q in b if q in c), key=lambda t: (t[0], t[1]))
    losses = {q for d, q in deltas[:LABELLED_LOSSES] if d < 0}
    rows = [{"query_id": q, "order": i, "delta": d, "label": q if q in losses else ""} for i, (d, q) in enumerate(deltas)]
    return Figure("per-query-delta", f"{candidate} − {baseline} per query on {metric} ({level}), sorted",
                  "query (sorted by difference)", f"Δ {metric}", rows,
                  (f"the {len(losses)} largest losses labelled",))


def forest_figure(report: dict[str, Any], metric: str, level: str = "doc") -> Figure:
    if metric not in report["inputs"]["settings"]["metrics"]:
        raise ValueError(f"metric {metric!r} is not in the report")
    sections = [("overall", report["lanes"])]
    sections += [(f"{s} = {lab}", b) for s, labs in report.get("strata", {}).items() for lab, b in labs.items()]
    rows: list[dict[str, Any]] = []
    for name, block in sections:
        for lane, levels in block.items():
            c = levels.get(level, {}).get(metric)
            if c is None or c.get("value") is None:
                continue
            mark = f" {SMALL_SAMPLE_MARK}" if small_sample(c) else ""
            rows.append({"section": name, "lane": lane, "row": f"{name} (n {c.get('n')}): {lane}{mark}", "mean": c["value"],
                         "low": c.get("low"), "high": c.get("high"), "n": c.get("n"), "note": cell_note(c)})
    notes = [report["definitions"].get("intervals", "")]
    if any(r["note"] and small_sample(r) for r in rows):
        notes.append(f"{SMALL_SAMPLE_MARK} {SMALL_SAMPLE_FOOTNOTE}")
    return Figure("forest", f"mean {metric} ({level}) with its interval, per lane and stratum", metric, "lane × stratum",
                  rows, tuple(notes))
