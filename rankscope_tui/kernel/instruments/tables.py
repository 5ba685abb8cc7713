"""What ``evaluate --per-query-in`` computes over per-query tables: report.json without rankings.

The interval tables per run, level and stratum run the same ``report.lanes_block`` /
``strata_block`` as on runs (through :class:`~..workspace.contract.PerQuery`); the
blocks that need rankings are replaced by ``not_available``
(``per_query_tables.NOT_AVAILABLE``). ``diff`` and ``verdict`` read the result like any
report.
"""

from __future__ import annotations

from typing import Any

from ..report import payload as R
from ..workspace.per_query_tables import NOT_AVAILABLE, TableWorkspace


def table_report(ws: TableWorkspace) -> dict[str, Any]:
    """report.json over per-query tables (schema ``rankscope.report/1``): the interval tables
    per run, level and stratum (the same ``report.lanes_block``/``strata_block`` as on
    runs), the per-query values, and ``not_available`` in place of what needs rankings.
    ``diff`` and ``verdict`` read it like any report."""
    s = ws.settings
    definitions = {m.key: m.definition(s.relevant) for m in ws.measures}
    definitions["means"] = (f"means over the {ws.n_queries} queries the tables give"
                            + (" that are positive in the qrels" if ws.qrels_sha256 else "")
                            + ("" if ws.qrels_sha256 else "; every run holds a value for each"))
    definitions["intervals"] = (
        f"hit@k: Wilson score interval; other means: percentile bootstrap over queries, B={s.resamples}, seed {s.seed}, "
        f"numpy linear quantiles; level {s.confidence:g}; intervals describe variation over queries for these fixed "
        "runs, not over training seeds")
    definitions["sd"] = "sample standard deviation (ddof = 1) wherever an sd is quoted"
    tables = [f for f in ws.inputs if f.role == "per_query_table"]
    qrels = next((f.as_dict() for f in ws.inputs if f.role == "qrels"), None)
    settings = s.as_dict()  # depth, group_sep, ... are their defaults: a table has no ranking to cut or group
    inputs = {
        "per_query_tables": [{**f.as_dict(), "format": t.format, "runs": list(t.runs)} for f, t in zip(tables, ws.tables)],
        "lanes": {name: {"path": ws.lanes[name].path, "rows": ws.lanes[name].n_rows} for name in ws.input_lanes},
        "qrels": qrels or {"path": None, "path_reason": "no qrels given: the tables' queries are compared",
                           "sha256": None, "sha256_reason": "no qrels given"},
        "settings": settings,
    }
    strata_files = [f.as_dict() for f in ws.inputs if f.role == "strata"]
    if strata_files:
        inputs["strata"] = strata_files
    # with qrels, its query classes (as on runs); without, every query of the tables is compared
    classes = ws.qrels_counts or {"positives": ws.n_queries, "negatives": 0, "partial": 0, "unjudged": 0}
    summary = {
        **classes, "ood_negatives": 0,
        "averaged_over": f"{ws.n_queries} queries of the per-query tables",
        "source": "per-query tables",
        "not_available": NOT_AVAILABLE,
        "notes": list(ws.notes),
        "warnings": [w.as_dict() for w in ws.warnings],
    }
    per_query: dict[str, Any] = {}
    qids = ws.qids.tolist()
    for lane in ws.input_lanes:
        per_query[lane] = {}
        for level in ws.levels():
            pq = ws.per_query(lane, level)
            cols = [pq[m.key].tolist() for m in ws.measures]
            per_query[lane][level] = {q: {m.key: col[i] for m, col in zip(ws.measures, cols)} for i, q in enumerate(qids)}
    return {
        "schema": R.SCHEMA,
        "inputs": inputs,
        "definitions": definitions,
        "summary": summary,
        "lanes": R.lanes_block(ws),
        "strata": R.strata_block(ws),
        "per_query": per_query,
    }
