"""The evaluate report (report.json as a dict) as text, markdown, LaTeX and the per-query CSV."""

from __future__ import annotations

from .escaping import escape_latex, escape_markdown, terminal_safe


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
    """Header (lane, level, metrics) and one row per (lane, level) of ``lanes_block`` (the overall one by default)."""
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
    """(title, lanes block): overall, then every stratum label."""
    yield "Overall", report["lanes"]
    for strat, labels in report.get("strata", {}).items():
        for label, block in labels.items():
            yield f"Stratum {strat} = {label}", block


def render_text(report: dict) -> str:
    """What ``evaluate`` prints: the summary, a table per section, attribution, fusion, gate, warnings."""
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
    """One markdown table per section (overall, each stratum label), names escaped, the caption last."""
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
    """One booktabs table per section, names escaped, each with its caption."""
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


#: ``evaluate --format`` → renderer
RENDERERS = {k: (lambda report, f=f: terminal_safe(f(report)))  # every format: no control sequence reaches a terminal
             for k, f in {"text": render_text, "markdown": render_markdown, "latex": render_latex}.items()}


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
