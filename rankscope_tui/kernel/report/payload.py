"""report.json as a plain dict (SPEC §9), and reading one back.

Every number here is read from the workspace; this module only arranges them.
Strict JSON: ±∞ and undefined values become ``null`` with a sibling ``*_reason``.
The human renderings live in ``rankscope_tui.render.report``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..inputs.tables import NONE_LABEL
from ..ranking import judgments as J

if TYPE_CHECKING:  # the contract a workspace keeps; the report reads no workspace class
    from ..workspace.contract import PerQuery, RankedPerQuery

SCHEMA = "rankscope.report/1"


def metric_blocks(ws: PerQuery, lanes: list[str], levels: list[str], queries: np.ndarray) -> dict[str, dict[str, Any]]:
    """``{level: {lane: {metric: cell}}}`` over one query set (codes in byte order).

    hit@k gets a Wilson interval; every other mean a percentile bootstrap over the
    queries, one set of resamples shared by all levels, lanes and metrics (SPEC §3
    protocol): one walk of the stream, read as counts, serves every column, and a
    column's interval does not depend on which columns share the walk.
    A cell is the interval's strict-JSON dict: value, low, high, method, n, level, note.
    """
    from ..statistics import intervals as I

    s = ws.settings
    n = int(queries.size)
    out: dict[str, dict[str, dict[str, Any]]] = {level: {lane: {} for lane in lanes} for level in levels}
    boot_cols, boot_where = [], []
    for level in levels:
        for lane in lanes:
            pq = ws.per_query(lane, level)
            for m in s.metrics:
                v = pq[m.key][queries]
                if n == 0:
                    out[level][lane][m.key] = I.Interval(None, None, None, "none", 0, s.confidence, reason="no queries").as_dict()
                elif m.is_proportion:
                    out[level][lane][m.key] = I.wilson(int(v.sum()), n, s.confidence).as_dict()
                else:
                    boot_cols.append(v)
                    boot_where.append((level, lane, m.key))
    if boot_cols and n:
        resamples = s.resamples if n >= 2 else 0
        cells = I.bootstrap_intervals(np.column_stack(boot_cols), resamples=resamples, seed=s.seed, confidence=s.confidence)
        if n < 2:  # not the user's --resamples 0: one query has nothing to resample
            from dataclasses import replace

            cells = tuple(replace(c, reason="one query: no bootstrap interval") for c in cells)
        for (level, lane, key), cell in zip(boot_where, cells):
            out[level][lane][key] = cell.as_dict()
    return out


def metric_block(ws: PerQuery, lanes: list[str], level: str, queries: np.ndarray) -> dict[str, Any]:
    """``{lane: {metric: cell}}`` for one level over one query set (:func:`metric_blocks`)."""
    return metric_blocks(ws, lanes, [level], queries)[level]


def lanes_block(ws: PerQuery, queries: np.ndarray | None = None) -> dict[str, Any]:
    """``{lane: {level: {metric: cell}}}``: every level's intervals from one walk."""
    q = ws.positives if queries is None else queries
    lanes = list(ws.lanes)
    levels = list(ws.levels())
    per_level = metric_blocks(ws, lanes, levels, q)
    return {lane: {level: per_level[level][lane] for level in levels} for lane in lanes}


def strata_block(ws: PerQuery) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pos = ws.positives
    for name, labels in ws.strata.items():
        out[name] = {}
        lab = labels[pos]
        for label in sorted(set(lab.tolist()), key=lambda x: (x == NONE_LABEL, x.encode())):
            out[name][label] = lanes_block(ws, pos[lab == label])
    return out


def judged_queries(ws: PerQuery) -> np.ndarray:
    """int32 codes of every query the qrels name (positive, negative, partial or unjudged),
    ascending: the queries trec_eval ``-c``, ir_measures, pytrec_eval and ranx average over."""
    return np.flatnonzero(ws.classes != J.NOT_IN_QRELS).astype(np.int32)


#: what the judged means are, said once (the report's definitions carry it; every face quotes it)
JUDGED_MEANS = ("means over every judged query (each query in the qrels; one without a relevant doc scores 0 on "
                "most measures, a query missing from a lane scores 0 there): the figure trec_eval -c prints, and "
                "ir_measures, pytrec_eval and ranx print when every judged query is in the run; a point figure "
                "for comparison with those tools, without an interval (the means with intervals are over "
                "positive queries)")


def judged_means_block(ws: RankedPerQuery) -> dict[str, Any]:
    """``{"queries": n, "lanes": {lane: {level: {metric: mean}}}}``: each lane's mean of
    each metric over :func:`judged_queries` (``WorkspaceBase.means_of`` over that set; the
    per-query values are the same as for positives). ``null`` with ``"reason"`` when no
    query is judged."""
    q = judged_queries(ws)
    lanes: dict[str, Any] = {}
    for lane in ws.lanes:
        lanes[lane] = {}
        for level in ws.levels():
            means = ws.means_of(ws.per_query(lane, level), None, q)
            lanes[lane][level] = {m: (float(v) if q.size else None) for m, v in means.items()}
    out: dict[str, Any] = {"queries": int(q.size), "lanes": lanes}
    if not q.size:
        out["reason"] = "no judged query"
    return out


def definitions(ws: RankedPerQuery) -> dict[str, Any]:
    s = ws.settings
    d = {m.key: m.definition(s.relevant) for m in s.metrics}
    d["relevant"] = f"a doc is relevant when its grade >= {s.relevant}; negative grades mean in the pool but unjudged"
    d["order"] = "hits ordered by score descending, ties by doc id descending as bytes (trec_eval); the rank column is ignored"
    d["means"] = "means over positive queries (at least one relevant doc); a positive missing from a lane scores 0 there"
    d["judged_means"] = JUDGED_MEANS
    # a user-defined proportion (0/1 per query) gets Wilson's interval as hit@k does: say so by name
    props = "".join(f", {m.key}" for m in s.metrics if m.is_proportion and m.measure.defined_in is not None)
    d["intervals"] = (f"hit@k{props}: Wilson score interval; other means: percentile bootstrap over queries, B={s.resamples}, "
                      f"seed {s.seed}, numpy linear quantiles; level {s.confidence:g}; intervals describe variation over "
                      "queries for these fixed runs, not over training seeds")
    d["sd"] = "sample standard deviation (ddof = 1) wherever an sd is quoted"
    if s.group_sep:
        d["group"] = (f"group = doc id up to the first {s.group_sep!r}; a group's grade is its best judged grade; a group counts "
                      "at its first occurrence, later occurrences are non-relevant")
    return d


def counts(ws: RankedPerQuery) -> dict[str, Any]:
    c = ws.classes
    return {
        "positives": int((c == J.POSITIVE).sum()),
        "negatives": int((c == J.NEGATIVE).sum()),
        "partial": int((c == J.PARTIAL).sum()),
        "unjudged": int((c == J.UNJUDGED).sum()),
        "ood_negatives": int(ws.ood_negatives.size) if ws.ood_negatives is not None else 0,
    }


def per_query_block(ws: RankedPerQuery) -> dict[str, Any]:
    """``{lane: {level: {qid: {"rank": int, metric: float, ...}}}}`` over the positives."""
    keys = ["rank"] + [m.key for m in ws.settings.metrics]
    pos = ws.positives
    qids = ws.qids[pos].tolist()
    out: dict[str, Any] = {}
    for lane in ws.lanes:
        out[lane] = {}
        for level in ws.levels():
            pq = ws.per_query(lane, level)
            cols = [_python_column(pq[k][pos], int if k == "rank" else float) for k in keys]
            # the rows built column-wise: one dict per query, keys in the metric order
            out[lane][level] = dict(zip(qids, _row_dicts(keys)(zip(*cols))))
    return out


def _row_dicts(keys: list[str]) -> Callable[[Iterable[tuple[Any, ...]]], list[dict[str, Any]]]:
    """A function of an iterable of value tuples giving ``[dict(zip(keys, row)) for row in rows]``,
    written as one dict display per row (``{k0: v0, k1: v1, ...}``): the same dicts, keys in
    the same order, at half the cost of ``dict(zip(...))`` per row. Only the parameter names
    of the generated code are made here; the keys are passed in as values."""
    n = len(keys)
    if not n:
        return lambda rows: [{} for _ in rows]
    names = [f"k{i}" for i in range(n)]
    values = [f"v{i}" for i in range(n)]
    display = ", ".join(f"{k}: {v}" for k, v in zip(names, values))
    target = ", ".join(values) + ("," if n == 1 else "")
    make = eval(f"lambda {', '.join(names)}: lambda rows: [{{{display}}} for {target} in rows]", {"__builtins__": {}})
    return cast("Callable[[Iterable[tuple[Any, ...]]], list[dict[str, Any]]]", make(*keys))


def _python_column(values: np.ndarray, kind: type) -> list[Any]:
    """``[kind(v) for v in values]``, straight from ``tolist`` when that already gives ``kind``."""
    if (kind is int and values.dtype.kind in "iu") or (kind is float and values.dtype == np.float64):
        return cast("list[Any]", values.tolist())
    return list(map(kind, values.tolist()))


def build(ws: RankedPerQuery, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole report as a plain dict; ``extra`` blocks (attribution, gate, fusion) are merged in."""
    s = ws.settings
    lanes_in = [f for f in ws.inputs if f.role == "lane"]
    inputs: dict[str, Any] = {
        "lanes": {name: f.as_dict() for name, f in zip(ws.input_lanes, lanes_in)},
        "qrels": next(f.as_dict() for f in ws.inputs if f.role == "qrels"),
        "settings": s.as_dict(),
    }
    for role in ("ood_negatives", "corpus"):
        f = next((f for f in ws.inputs if f.role == role), None)
        if f:
            inputs[role] = f.as_dict()
    strata_files = [f.as_dict() for f in ws.inputs if f.role == "strata"]
    if strata_files:
        inputs["strata"] = strata_files
    for role in ("queries", "docs"):  # only texts read by dataset id are recorded (inputs.irds)
        texts = [f.as_dict() for f in ws.inputs if f.role == role]
        if texts:
            inputs[role] = texts
    extra = extra or {}
    att = extra.get("attribution", {}).get("doc")
    from .short_lists import short_list_summary, short_list_warnings, short_lists

    short = short_lists(ws)
    summary = {
        **({"unique_share": att["unique_share"], "judged_queries_missing_from_any_lane": att["missing_from_lanes"]} if att else {}),
        **counts(ws),
        "averaged_over": f"{int(ws.positives.size)} positive queries",
        "judged_means": judged_means_block(ws),
        "short_lists": short_list_summary(short, int(ws.positives.size)),
        # the short-list warnings join the input warnings before the unreached relevance
        # levels, which stay last (workspace.loaded.unreached_levels)
        "warnings": [w.as_dict() for w in [*(w for w in ws.warnings if w.kind != "relevance_level_unreached"),
                                             *short_list_warnings(ws, short),
                                             *(w for w in ws.warnings if w.kind == "relevance_level_unreached")]],
    }
    report: dict[str, Any] = {"schema": SCHEMA}
    if ws.synthetic:
        report["synthetic"] = True
    report.update({
        "inputs": inputs,
        "definitions": definitions(ws),
        "summary": summary,
        "lanes": lanes_block(ws),
        "ceilings": {level: {k: float(v[ws.positives].mean()) if ws.positives.size else None for k, v in ws.ceilings(level).items()} for level in ws.levels()},
        "short_lists": short,
        "strata": strata_block(ws),
    })
    for key in ("attribution", "fusion", "gate", "ties", "coverage", "latency"):
        if key in extra:
            report[key] = extra[key]
    report["per_query"] = per_query_block(ws)
    return report


def read_report(path: str) -> dict[str, Any]:
    """A report.json written by ``evaluate`` (its schema checked), for ``diff`` and ``verdict``."""
    from ..errors import InputError
    from ..inputs.files import load_json, read_text

    report = load_json(read_text(path), path)
    if not isinstance(report, dict) or not str(report.get("schema", "")).startswith("rankscope.report/"):
        raise InputError("not a rankscope report (no 'schema': 'rankscope.report/1')", path, 1)
    if report["schema"] != SCHEMA:
        raise InputError(f"report schema {str(report['schema'])[:60]!r} is not the one this version reads "
                         f"({SCHEMA!r})", path, 1)
    check_report_values(report, path)
    return report


def check_report_values(report: dict[str, Any], path: str) -> None:
    """What ``diff`` and ``verdict`` read must be possible: every metric value (per query, and
    the lanes' cells with their intervals) a finite number in [0, 1] (a proportion; the count
    measures num_ret, num_rel, num_rel_ret: a finite number >= 0), an interval's low <= high,
    a per-query rank an integer >= 0; a user-defined measure (``settings.user_measures``) any
    finite number."""
    import math

    from ..errors import InputError

    def bad(where: str, what: str) -> InputError:
        return InputError(f"not a rankscope report: {where} {what}"[:300], path, 1)

    def counts(metric: str) -> bool:
        """A measure whose values are counts (num_ret, num_rel, num_rel_ret), not proportions."""
        from ..errors import InputError as NameError_
        from ..measures import parse_name

        try:
            return not parse_name(metric).measure.unit_interval
        except NameError_:
            return False

    # a user-defined measure (listed in the settings' user_measures) may take any finite value
    settings = report.get("inputs", {}).get("settings", {}) if isinstance(report.get("inputs"), dict) else {}
    defined = settings.get("user_measures") if isinstance(settings, dict) else None
    from ..measures import REGISTRY

    # (never a built-in kind: a report cannot declare rr free of its range)
    user_kinds = {k for k in defined if k not in REGISTRY or REGISTRY[k].defined_in is not None} \
        if isinstance(defined, dict) else set()

    def unit(v: object, where: str, metric: str = "") -> None:
        if v is None:
            return
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
            raise bad(where, "is not a finite number")
        if metric and user_kinds and metric.split("(", 1)[0].split("@", 1)[0] in user_kinds:
            return
        if metric and counts(metric):
            if v < 0:
                raise bad(where, f"is {v!r}, below 0 (a count)")
            return
        if not 0 <= v <= 1:  # compared as they are: an integer literal may be too large for a float
            shown = repr(v) if not isinstance(v, int) or abs(v) < 10**15 else f"an integer of {len(str(abs(v)))} digits"
            raise bad(where, f"is {shown}, outside [0, 1] (metrics are proportions)")

    lanes = report.get("lanes")
    if isinstance(lanes, dict):
        for lane, levels in lanes.items():
            for level, cells in (levels.items() if isinstance(levels, dict) else ()):
                for m, c in (cells.items() if isinstance(cells, dict) else ()):
                    if not isinstance(c, dict):
                        continue
                    where = f"lanes.{lane}.{level}.{m}"
                    for k in ("value", "low", "high"):
                        unit(c.get(k), f"{where}.{k}", m)
                    lo, hi = c.get("low"), c.get("high")
                    if lo is not None and hi is not None and lo > hi:
                        raise bad(where, f"has low {lo!r} above high {hi!r}")
    pq = report.get("per_query")
    if isinstance(pq, dict):
        for lane, levels in pq.items():
            for level, rows in (levels.items() if isinstance(levels, dict) else ()):
                for qid, vals in (rows.items() if isinstance(rows, dict) else ()):
                    for m, v in (vals.items() if isinstance(vals, dict) else ()):
                        where = f"per_query.{lane}.{level}.{qid}.{m}"
                        if m == "rank":
                            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                                raise bad(where, "is not an integer >= 0 (0: no relevant hit)")
                        else:
                            unit(v, where, m)
