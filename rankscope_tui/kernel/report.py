"""report.json as a plain dict (SPEC §9), and the human renderings of its tables.

Every number here is read from the workspace; this module only arranges them.
Strict JSON: ±∞ and undefined values become ``null`` with a sibling ``*_reason``.
"""

from __future__ import annotations

import numpy as np

from . import judgments as J
from .workspace import NONE_LABEL, Workspace

SCHEMA = "rankscope.report/1"


def metric_block(ws: Workspace, lanes: list[str], level: str, queries: np.ndarray) -> dict:
    """``{lane: {metric: cell}}`` for one level over one query set (codes in byte order).

    hit@k gets a Wilson interval; every other mean a percentile bootstrap over the
    queries, one set of resamples shared by all lanes and metrics (SPEC §3 protocol).
    A cell is the interval's strict-JSON dict: value, low, high, method, n, level, note.
    """
    from . import intervals as I

    s = ws.settings
    n = int(queries.size)
    out: dict = {lane: {} for lane in lanes}
    boot_cols, boot_where = [], []
    for lane in lanes:
        pq = ws.per_query(lane, level)
        for m in s.metrics:
            v = pq[m.key][queries]
            if n == 0:
                out[lane][m.key] = I.Interval(None, None, None, "none", 0, s.confidence, reason="no queries").as_dict()
            elif m.is_proportion:
                out[lane][m.key] = I.wilson(int(v.sum()), n, s.confidence).as_dict()
            else:
                boot_cols.append(v)
                boot_where.append((lane, m.key))
    if boot_cols and n:
        resamples = s.resamples if n >= 2 else 0
        cells = I.bootstrap_intervals(np.column_stack(boot_cols), resamples=resamples, seed=s.seed, confidence=s.confidence)
        for (lane, key), cell in zip(boot_where, cells):
            out[lane][key] = cell.as_dict()
    return out


def lanes_block(ws: Workspace, queries: np.ndarray | None = None) -> dict:
    """``{lane: {level: {metric: cell}}}``."""
    q = ws.positives if queries is None else queries
    lanes = list(ws.lanes)
    per_level = {level: metric_block(ws, lanes, level, q) for level in ws.levels()}
    return {lane: {level: per_level[level][lane] for level in ws.levels()} for lane in lanes}


def strata_block(ws: Workspace) -> dict:
    out: dict = {}
    pos = ws.positives
    for name, labels in ws.strata.items():
        out[name] = {}
        lab = labels[pos]
        for label in sorted(set(lab.tolist()), key=lambda x: (x == NONE_LABEL, x.encode())):
            out[name][label] = lanes_block(ws, pos[lab == label])
    return out


def definitions(ws: Workspace) -> dict:
    s = ws.settings
    d = {m.key: m.definition(s.relevant) for m in s.metrics}
    d["relevant"] = f"a doc is relevant when its grade >= {s.relevant}; negative grades mean in the pool but unjudged"
    d["order"] = "hits ordered by score descending, ties by doc id descending as bytes (trec_eval); the rank column is ignored"
    d["means"] = "means over positive queries (at least one relevant doc); a positive missing from a lane scores 0 there"
    d["intervals"] = (f"hit@k: Wilson score interval; other means: percentile bootstrap over queries, B={s.resamples}, "
                      f"seed {s.seed}, numpy linear quantiles; level {s.confidence:g}; intervals describe variation over "
                      "queries for these fixed runs, not over training seeds")
    d["sd"] = "sample standard deviation (ddof = 1) wherever an sd is quoted"
    if s.group_sep:
        d["group"] = (f"group = doc id up to the first {s.group_sep!r}; a group's grade is its best judged grade; a group counts "
                      "at its first occurrence, later occurrences are non-relevant")
    return d


def counts(ws: Workspace) -> dict:
    c = ws.classes
    return {
        "positives": int((c == J.POSITIVE).sum()),
        "negatives": int((c == J.NEGATIVE).sum()),
        "partial": int((c == J.PARTIAL).sum()),
        "unjudged": int((c == J.UNJUDGED).sum()),
        "ood_negatives": int(ws.ood_negatives.size) if ws.ood_negatives is not None else 0,
    }


def per_query_block(ws: Workspace) -> dict:
    keys = ["rank"] + [m.key for m in ws.settings.metrics]
    pos = ws.positives
    qids = ws.qids[pos].tolist()
    out: dict = {}
    for lane in ws.lanes:
        out[lane] = {}
        for level in ws.levels():
            pq = ws.per_query(lane, level)
            cols = [pq[k][pos].tolist() for k in keys]
            out[lane][level] = {q: {k: (int(col[i]) if k == "rank" else float(col[i])) for k, col in zip(keys, cols)} for i, q in enumerate(qids)}
    return out


def build(ws: Workspace, extra: dict | None = None) -> dict:
    """The whole report as a plain dict; ``extra`` blocks (attribution, gate, fusion) are merged in."""
    s = ws.settings
    lanes_in = [f for f in ws.inputs if f.role == "lane"]
    inputs = {
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
    extra = extra or {}
    att = extra.get("attribution", {}).get("doc")
    summary = {
        **({"unique_share": att["unique_share"], "judged_queries_missing_from_any_lane": att["missing_from_lanes"]} if att else {}),
        **counts(ws),
        "averaged_over": f"{int(ws.positives.size)} positive queries",
        "warnings": [w.as_dict() for w in ws.warnings],
    }
    report = {"schema": SCHEMA}
    if ws.synthetic:
        report["synthetic"] = True
    report.update({
        "inputs": inputs,
        "definitions": definitions(ws),
        "summary": summary,
        "lanes": lanes_block(ws),
        "ceilings": {level: {k: float(v[ws.positives].mean()) if ws.positives.size else None for k, v in ws.ceilings(level).items()} for level in ws.levels()},
        "strata": strata_block(ws),
    })
    for key in ("attribution", "fusion", "gate"):
        if key in extra:
            report[key] = extra[key]
    report["per_query"] = per_query_block(ws)
    return report


# ---------------------------------------------------------------------------
# human renderings


LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def escape_latex(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def escape_markdown(text: str) -> str:
    out = []
    for ch in str(text):
        if ch in "\\`*_{}[]()#+-.!|<>$%&~":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _fmt_cell(cell: dict) -> str:
    v = cell.get("value")
    if v is None:
        return "n/a"
    lo, hi = cell.get("low"), cell.get("high")
    if lo is None or hi is None:
        return f"{v:.4f}"
    if lo == hi:
        return f"{v:.4f} (not informative: no variation)"
    return f"{v:.4f} [{lo:.4f}, {hi:.4f}]"


def table_rows(report: dict, lanes_block: dict | None = None) -> tuple[list[str], list[list[str]]]:
    lanes = lanes_block if lanes_block is not None else report["lanes"]
    metrics = report["inputs"]["settings"]["metrics"]
    header = ["lane", "level"] + metrics
    rows = []
    for lane, levels in lanes.items():
        for level, cells in levels.items():
            rows.append([lane, level] + [_fmt_cell(cells[m]) for m in metrics])
    return header, rows


def caption(report: dict, block: dict | None = None) -> str:
    """Definitions for a table; with ``block`` (one section's lanes) the query count is that section's."""
    d = report["definitions"]
    s = report["summary"]
    over = s["averaged_over"]
    if block:
        cell = next(iter(next(iter(block.values())).values()))
        n = next(iter(cell.values()))["n"]
        over = f"{n} positive queries"
    parts = [over + "."] + [d[m] + "." for m in report["inputs"]["settings"]["metrics"]] + [d["intervals"] + "."]
    if report.get("synthetic"):
        parts.insert(0, "Synthetic demo data.")
    return " ".join(parts)


def _sections(report: dict):
    yield "Overall", report["lanes"]
    for strat, labels in report.get("strata", {}).items():
        for label, block in labels.items():
            yield f"Stratum {strat} = {label}", block


def render_text(report: dict) -> str:
    out = []
    if report.get("synthetic"):
        out.append("SYNTHETIC DEMO DATA")
    s = report["summary"]
    if "unique_share" in s:
        shares = ", ".join(f"{lane} {v['share']:.3f} ({v['count']})" for lane, v in s["unique_share"].items())
        out.append(f"unique share (positives only this lane surfaces): {shares}")
    m = s.get("judged_queries_missing_from_any_lane")
    if m:
        out.append(f"judged queries missing from any lane: {m['missing_from_any']} of {m['judged_queries']} "
                   + "(" + ", ".join(f"{k} {v}" for k, v in m["per_lane"].items()) + ")")
    out.append(f"positives {s['positives']}, negatives {s['negatives']}, partial {s['partial']}, unjudged {s['unjudged']}; means over {s['averaged_over']}")
    for title, block in _sections(report):
        header, rows = table_rows(report, block)
        widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
        out.append("")
        out.append(title)
        out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for r in rows:
            out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    out += _attribution_lines(report) + _fusion_lines(report) + _gate_lines(report)
    for w in s["warnings"]:
        out.append(f"warning: {w['where']}: {w['message']} ({w['count']})")
    out.append("")
    out.append(caption(report))
    return "\n".join(out) + "\n"


def _attribution_lines(report: dict) -> list[str]:
    out = []
    for level, a in report.get("attribution", {}).items():
        labels = ", ".join(f"{k} {v}" for k, v in a["labels"].items() if not k.endswith("_reason") and v is not None)
        out += ["", f"Attribution ({level} level, window {a['window']}): {labels}"]
        cov = a["coverage"]
        out.append(f"  coverage: {cov['not_in_corpus']} of {cov['relevant_pairs']} relevant (query, doc) pairs not in the corpus"
                   if cov.get("assessed") else "  coverage not assessed (no --corpus)")
        b = a.get("blind")
        if b:
            out.append(f"  blind stratum {b['stratification']}={b['label']} ({b['size']} positives): "
                       + ", ".join(f"{lane} misses {v['misses_in_stratum']}" for lane, v in b["lanes"].items()))
    return out


def _fusion_lines(report: dict) -> list[str]:
    f = report.get("fusion")
    if not f:
        return []
    r = f["rrf"]
    out = ["", f"RRF k = {r['k']:g} ({r['k_source']}); dilution (a lane's relevant rank-1 hit lost by rrf): "
           + ", ".join(f"{lane} {v['count']}" for lane, v in r["dilution"]["lanes"].items())]
    if "convex" in f:
        c = f["convex"]
        out.append("convex weights " + ", ".join(f"{k} {v:g}" for k, v in c["weights"].items()) + f" ({c['label']})")
    return out


def _gate_lines(report: dict) -> list[str]:
    g = report.get("gate")
    if not g:
        return []
    if g.get("skipped"):
        return ["", f"Gate: {g['skipped_reason']}"]
    out = ["", f"Gate on {g['lane']}: " + ", ".join(f"{k} negatives {v}" for k, v in g["negatives"].items()) + f", positives {g['positives']}"]
    for name, nf in g["null_floor"].items():
        fl = "null" if nf.get("floor") is None else f"{nf['floor']:.6g}"
        out.append(f"  null floor ({name} negatives): {fl}")
    cf = g["conformal_floor"]
    out.append(f"  conformal floor: {'-inf' if cf.get('floor') is None else format(cf['floor'], '.6g')}"
               + (f" ({cf['label']})" if cf.get("label") else ""))
    for name, op in (g.get("operating_point") or {}).items():
        fl = "+inf" if op.get("floor") is None else f"{op['floor']:.6g}"
        out.append(f"  operating floor at FPIR <= {op['target_fpir']:g} on {name} negatives: {fl} [{op.get('label', '')}]")
    if "applied" in g:
        a = g["applied"]
        out.append(f"  applied from {a['from']}: floor {a['floor']}, margin {a['margin']} [{a['label']}]")
    o = g.get("outcome", {}).get("combined")
    if o:
        fpir = ", ".join(f"{k} {v['value']:.3f} [{v['low']:.3f}, {v['high']:.3f}]" for k, v in o["fpir"].items())
        out.append(f"  FNIR {o['fnir']['value']:.3f} [{o['fnir']['low']:.3f}, {o['fnir']['high']:.3f}] "
                   f"(rejected {o['rejected']}, wrong accept {o['wrong_accept']}); FPIR {fpir}")
    return out


def render_markdown(report: dict) -> str:
    out = []
    for title, block in _sections(report):
        header, rows = table_rows(report, block)
        out.append(f"### {escape_markdown(title)}")
        out.append("")
        out.append("| " + " | ".join(escape_markdown(h) for h in header) + " |")
        out.append("|" + "|".join("---" for _ in header) + "|")
        for r in rows:
            out.append("| " + " | ".join(escape_markdown(c) for c in r) + " |")
        out.append("")
    out.append("*" + escape_markdown(caption(report)) + "*")
    return "\n".join(out) + "\n"


def render_latex(report: dict) -> str:
    out = []
    for title, block in _sections(report):
        header, rows = table_rows(report, block)
        out.append(r"\begin{table}[t]")
        out.append(r"\centering")
        out.append(r"\begin{tabular}{" + "ll" + "r" * (len(header) - 2) + "}")
        out.append(r"\toprule")
        out.append(" & ".join(escape_latex(h) for h in header) + r" \\")
        out.append(r"\midrule")
        for r in rows:
            out.append(" & ".join(escape_latex(c) for c in r) + r" \\")
        out.append(r"\bottomrule")
        out.append(r"\end{tabular}")
        out.append(r"\caption{" + escape_latex(title + ". " + caption(report, block)) + "}")
        out.append(r"\end{table}")
        out.append("")
    return "\n".join(out)


RENDERERS = {"text": render_text, "markdown": render_markdown, "latex": render_latex}


def per_query_csv(report: dict) -> str:
    """``lane,level,qid`` then one column per metric key; one row per (lane, level, positive qid)."""
    import csv
    import io

    metrics = report["inputs"]["settings"]["metrics"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["lane", "level", "qid"] + metrics)
    for lane, levels in report["per_query"].items():
        for level, rows in levels.items():
            for qid, vals in rows.items():
                w.writerow([lane, level, qid] + [repr(vals[m]) for m in metrics])
    return buf.getvalue()
