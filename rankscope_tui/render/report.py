"""The evaluate report (report.json as a dict) as text, markdown, LaTeX and the per-query CSV."""

from __future__ import annotations

from ..kernel.report.caveats import SMALL_SAMPLE_FOOTNOTE, SMALL_SAMPLE_MARK, small_sample
from .escaping import escape_latex


def _fmt_cell(cell: dict) -> str:
    v = cell.get("value")
    if v is None:
        return "n/a"
    lo, hi = cell.get("low"), cell.get("high")
    if lo is None or hi is None:
        text = f"{v:.4f}"
    elif lo == hi:
        text = f"{v:.4f} (not informative: no variation)"
    else:
        text = f"{v:.4f} [{lo:.4f}, {hi:.4f}]"
    return text + (f" {SMALL_SAMPLE_MARK}" if small_sample(cell) else "")


def section_footnotes(report: dict, block: dict) -> list[str]:
    """The footnotes under one section's table: the small-sample mark's meaning when a cell
    of the section carries it (the kernel's flag, ``kernel.report.caveats``)."""
    metrics = report["inputs"]["settings"]["metrics"]
    marked = [cells[m] for levels in block.values() for cells in levels.values() for m in metrics
              if small_sample(cells.get(m))]
    if not marked:
        return []
    n = sorted({c.get("n") for c in marked if c.get("n") is not None})
    return [f"{SMALL_SAMPLE_MARK} {SMALL_SAMPLE_FOOTNOTE}" + (f" (n = {', '.join(map(str, n))})" if n else "")]


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
    if report.get("latency") and block is None:
        parts.append(report["latency"]["definition"] + ".")
    if report.get("synthetic"):
        parts.insert(0, "Synthetic demo data.")
    return " ".join(parts)


def _sections(report: dict):
    """(title, lanes block): overall, then every stratum label."""
    yield "Overall", report["lanes"]
    for strat, labels in report.get("strata", {}).items():
        for label, block in labels.items():
            yield f"Stratum {strat} = {label}", block


#: the width of ``evaluate``'s text when stdout is not a terminal (a file, a pipe, an export)
TEXT_WIDTH = 80


def _cell_lines(cell: dict) -> tuple[str, str]:
    """A cell as two lines of the narrow layout: the mean (with the small-sample mark when
    the kernel flags the cell), then its interval below it."""
    v = cell.get("value")
    if v is None:
        return "n/a", ""
    mean = f"{v:.4f}" + (f" {SMALL_SAMPLE_MARK}" if small_sample(cell) else "")
    lo, hi = cell.get("low"), cell.get("high")
    if lo is None or hi is None:
        return mean, ""
    if lo == hi:
        return mean, "no variation"
    return mean, f"[{lo:.4f}, {hi:.4f}]"


def grid_lines(left_header: list[str], names: list[str], rows: list[tuple[list[str], list[tuple[str, ...]]]],
               width: int) -> list[str]:
    """A table that fits ``width`` columns: the left columns (lane, level) repeat in every
    block and the metric columns are cut into blocks, as many per block as fit (at least
    one); a cell of several lines (a mean and its interval) takes that many lines, the left
    columns on the first only. Columns are two spaces apart, no trailing spaces."""
    heads: list[list[str]] = [left_header] + [lefts for lefts, _ in rows]
    left_w = [max(len(str(h[i])) for h in heads) for i in range(len(left_header))]
    col_w = [max([len(n)] + [len(line) for _, cells in rows for line in cells[j]]) for j, n in enumerate(names)]
    left = sum(left_w) + 2 * len(left_w)
    blocks: list[list[int]] = [[]]
    used = left
    for j, w in enumerate(col_w):
        if blocks[-1] and used + w > width:
            blocks.append([])
            used = left
        blocks[-1].append(j)
        used += w + 2
    out: list[str] = []
    for b, cols in enumerate(blocks):
        if b:
            out.append("")
        out.append("  ".join([h.ljust(w) for h, w in zip(left_header, left_w)] + [names[j].ljust(col_w[j]) for j in cols]).rstrip())
        for lefts, cells in rows:
            depth = max((len(cells[j]) for j in cols), default=1)
            for i in range(depth):
                head = [str(c).ljust(w) if i == 0 else " " * w for c, w in zip(lefts, left_w)]
                body = [(cells[j][i] if i < len(cells[j]) else "").ljust(col_w[j]) for j in cols]
                line = "  ".join(head + body).rstrip()
                if line:
                    out.append(line)
    return out


def judged_means_rows(report: dict) -> tuple[int, list[str], list[list[str]]] | None:
    """(number of judged queries, metric names, one row per lane and level of the means over
    every judged query, 4 decimals; n/a where undefined), or None when the report holds no
    such block (a report of per-query tables)."""
    jm = report.get("summary", {}).get("judged_means")
    if not jm:
        return None
    metrics = report["inputs"]["settings"]["metrics"]
    rows = [[lane, level] + [("n/a" if cells.get(m) is None else f"{cells[m]:.4f}") for m in metrics]
            for lane, levels in jm["lanes"].items() for level, cells in levels.items()]
    return int(jm["queries"]), metrics, rows


def judged_means_title(report: dict, n: int) -> str:
    """The heading of the judged means, naming both query sets."""
    return (f"Means over all {n} judged queries (as trec_eval -c, ir_measures, pytrec_eval, ranx average; "
            f"the tables above: over {report['summary']['averaged_over']}), no intervals")


def _wrap(line: str, width: int) -> list[str]:
    """A line of prose cut at spaces to ``width`` (continuations indented two spaces); a
    word longer than the width (a path) stays whole."""
    import textwrap

    if len(line) <= width:
        return [line]
    return textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False) or [line]


def render_text(report: dict, width: int | None = TEXT_WIDTH) -> str:
    """What ``evaluate`` prints: the summary, a table per section, the means over every
    judged query, attribution, fusion, gate, warnings. ``width`` columns: each table shows
    the means with their intervals on the line below, as many metrics side by side as fit
    (the rest in further blocks), and prose wraps; ``width=None``: the wide layout, one line
    per lane and level (``evaluate --wide``). The same report and width give the same text."""
    out = []
    if report.get("synthetic"):
        out.append("SYNTHETIC DEMO DATA")
    s = report["summary"]
    out += summary_lines(report)
    for i, (title, block) in enumerate(_sections(report)):
        header, rows = table_rows(report, block)
        out.append("")
        out.append(title)
        if width is None:
            widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
            out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
            for r in rows:
                out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
        else:
            metrics = header[2:]
            lanes = block if block is not None else report["lanes"]
            grid: list[tuple[list[str], list[tuple[str, ...]]]] = [([lane, level], [_cell_lines(cells[m]) for m in metrics])
                    for lane, levels in lanes.items() for level, cells in levels.items()]
            out += grid_lines(header[:2], metrics, grid, width)
        out += section_footnotes(report, block)
        if i == 0:
            judged = judged_means_rows(report)
            if judged is not None:
                n, metrics, jrows = judged
                out.append("")
                title = judged_means_title(report, n)
                out += _wrap(title, width) if width is not None else [title]
                if width is None:
                    jh = ["lane", "level", *metrics]
                    widths = [max(len(str(r[i])) for r in [jh] + jrows) for i in range(len(jh))]
                    out.append("  ".join(h.ljust(w) for h, w in zip(jh, widths)))
                    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in jrows]
                else:
                    out += grid_lines(["lane", "level"], metrics, [(r[:2], [(c,) for c in r[2:]]) for r in jrows], width)
    out += _attribution_lines(report) + _fusion_lines(report) + _gate_lines(report) + ties_lines(report) + coverage_lines(report)
    out += latency_lines(report)
    for w in s["warnings"]:
        out.append(warning_line(w))
    out.append("")
    # the definitions paragraph wraps at the width; the one-line statements above it (the
    # summary, attribution, warnings) stay whole: each is a line to search for
    out += _wrap(caption(report), width) if width is not None else [caption(report)]
    return "\n".join(out) + "\n"


def summary_lines(report: dict) -> list[str]:
    """The first numbers to read: unique share, judged queries missing from a lane, the query classes."""
    out = []
    s = report["summary"]
    if "unique_share" in s:
        out.append(f"unique share (positives only this lane surfaces): {unique_shares(s['unique_share'])}")
    m = s.get("judged_queries_missing_from_any_lane")
    if m:
        out.append(f"judged queries missing from any lane: {m['missing_from_any']} of {m['judged_queries']} "
                   + "(" + ", ".join(f"{k} {v}" for k, v in m["per_lane"].items()) + ")")
    out.append(f"positives {s['positives']}, negatives {s['negatives']}, partial {s['partial']}, unjudged {s['unjudged']}; means over {s['averaged_over']}")
    if s.get("short_lists"):
        from ..kernel.report.short_lists import short_list_lines

        out += short_list_lines(s["short_lists"])
    if s["positives"] == 0:
        out.append("no positive query: means, their intervals and attribution shares are undefined (cells read n/a)")
    elif s["positives"] == 1:
        out.append("one positive query: bootstrap intervals need two (those cells show the value alone)")
    return out


def unique_shares(shares: dict) -> str:
    """``bm25 0.120 (14), dense 0.080 (9)``; a share that means nothing (one lane, no
    positives) is said in words, never printed as a number."""
    if len(shares) == 1:
        lane, v = next(iter(shares.items()))
        if v.get("share") is None or v.get("share_reason"):
            return f"{lane} — ({v.get('share_reason') or 'not meaningful'})"
    parts = []
    for lane, v in shares.items():
        if v.get("share") is None:
            parts.append(f"{lane} — ({v.get('share_reason') or 'undefined'})")
        else:
            parts.append(f"{lane} {v['share']:.3f} ({v['count']})")
    return ", ".join(parts)


def ties_lines(report: dict) -> list[str]:
    """One line: per lane, the positive queries whose value depends on the tie order, per
    measure (only the measures where some do); ``none`` for a lane where no value does."""
    t = report.get("ties")
    if not t:
        return []
    parts = []
    for lane, v in t["lanes"].items():
        dep = [f"{k} {c['dependent']}" for k, c in v["metrics"].items() if c["dependent"]]
        parts.append(f"{lane} " + (", ".join(dep) if dep else "none"))
    return ["", f"Ties (of {t['queries']} positives, how many change value with the order of tied scores): " + "; ".join(parts)]


def coverage_lines(report: dict) -> list[str]:
    """Judgment coverage: a header, then per lane, per measure, the mean holes and the mean
    value with unjudged hits counted non-relevant .. relevant (report.json's ``coverage``)."""
    c = report.get("coverage")
    if not c or not c["queries"]:
        return []
    if c["condensed"]:
        return ["", f"Judgment coverage: condensed lists (trec_eval -J), unjudged hits removed before every cutoff, "
                    f"so no measure reads a hole ({c['queries']} positives)"]
    out = ["", f"Judgment coverage (means over {c['queries']} positives: unjudged hits within each cutoff, and the "
               "value with them counted non-relevant .. relevant):"]
    for lane, cells in c["lanes"].items():
        parts = [f"{k} {v['holes']:.2f} holes, {v['as_nonrelevant']:.4f}..{v['as_relevant']:.4f}" for k, v in cells.items()]
        out.append(f"  {lane}: " + "; ".join(parts))
    return out


#: the response-time table's header (report.json's ``latency`` block holds seconds; shown in milliseconds)
LATENCY_HEADER = ["lane", "queries", "mean ms", "median ms", "p95 ms"]


def latency_title(report: dict) -> str:
    """The response-time table's title: the measure's name (the kernel's) and what it is not."""
    lat = report["latency"]
    return f"Response time ({lat['measure']}, milliseconds per query; not a relevance measure, no interval)"


def latency_rows(report: dict) -> list[list[str]]:
    """One row per lane that carries per-query seconds: the queries, mean, median, p95."""
    return [[lane, str(c["queries"]), f"{c['mean'] * 1000:.3f}", f"{c['median'] * 1000:.3f}", f"{c['p95'] * 1000:.3f}"]
            for lane, c in report["latency"]["lanes"].items()]


def latency_lines(report: dict) -> list[str]:
    """The response-time table as text (only when a lane carries latency: other reports are unchanged)."""
    if not report.get("latency"):
        return []
    rows = latency_rows(report)
    widths = [max(len(r[i]) for r in [LATENCY_HEADER, *rows]) for i in range(len(LATENCY_HEADER))]
    return ["", latency_title(report)] + ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                                           for r in [LATENCY_HEADER, *rows]]


def warning_line(w: dict) -> str:
    """``warning: FILE:LINE: what (count)``; without a known place, ``warning: what (count)``."""
    where = f"{w['where']}: " if w.get("where") else ""
    return f"warning: {where}{w['message']} ({w['count']})"


#: the subtotal of two partition labels (printed beside the partition, not inside it)
_SUBTOTALS = {"not_surfaced": "beyond_window + not_retrieved"}


def _attribution_lines(report: dict) -> list[str]:
    out = []
    for level, a in report.get("attribution", {}).items():
        parts = {k: v for k, v in a["labels"].items() if not k.endswith("_reason") and k not in _SUBTOTALS}
        labels = ", ".join(f"{k} {v}" for k, v in parts.items() if v is not None)
        subtotals = "; ".join(f"{k} {a['labels'][k]} (= {what})" for k, what in _SUBTOTALS.items()
                              if a["labels"].get(k) is not None)
        out += ["", f"Attribution ({level} level, window {a['window']}, {a['positives']} positives): {labels}"
                + (f"; {subtotals}" if subtotals else "")]
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
    for name, m in f.get("methods", {}).items():  # the --fuse lanes
        line = f"{name}: {m['definition']}"
        if "weights" in m:
            line += "; weights " + ", ".join(f"{k} {v:.4g}" for k, v in m["weights"].items()) + f" ({m['weights_source']}"
            line += f", {m['label']})" if "label" in m else ")"
        out.append(line)
    return out


# --------------------------------------------------------------------------- the gate
# Formatting only: every number is the gate block's (``GateAnalysis.as_dict()``) or
# thresholds.json's; an infinite floor (null in strict JSON) is printed in words.

NEG_WORDS = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}
CONDITION_WORDS = {"floor": "floor alone"}


def gate_score(x, infinity: str = "+inf") -> str:
    """A floor or margin, rounded to 6 significant digits; null (strict JSON's infinity) as
    ``+inf (reject all)`` or, with ``infinity="-inf"``, ``-inf (accept every retrieved query)``."""
    if x is None:
        return "-inf (accept every retrieved query)" if infinity == "-inf" else "+inf (reject all)"
    return f"{float(x):.6g}"


def _infinity_of(reason) -> str:
    """The sign a null floor stands for, from the ``floor_reason`` the kernel wrote beside it."""
    return "-inf" if str(reason or "").startswith("-inf") else "+inf"


def gate_rate(r: dict | None) -> str:
    """A rate dict (k, n, value, low, high) as ``k/n = v [lo, hi]``."""
    if not r:
        return "—"
    if not r.get("n"):
        return f"{r.get('k', 0)}/0 (no queries)"
    return f"{r['k']}/{r['n']} = {r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"


def _neg(name: str) -> str:
    return NEG_WORDS.get(name, name)


def null_floor_line(name: str, nf: dict) -> str:
    head = f"null floor ({_neg(name)} negatives, n {nf['n']}): "
    if nf.get("floor") is None:
        return head + f"none: {nf.get('floor_reason', 'undefined')}"
    fp = ", ".join(f"{_neg(k)} {gate_rate(v)}" for k, v in nf.get("fpir", {}).items())
    return head + f"{gate_score(nf['floor'])} = {gate_score(nf['mean'])} + 3 x {gate_score(nf['sd'])}; FPIR {fp}"


def conformal_floor_line(cf: dict) -> str:
    out = (f"conformal floor (miss rate {cf['alpha']:g}, n {cf['n']}, k {cf['k']}): "
           f"{gate_score(cf.get('floor'), '-inf')}")
    if cf.get("label"):
        out += f" ({cf['label']})"
    if cf.get("reason"):
        out += f": {cf['reason']}"
    return out


def outcome_line(name: str, o: dict) -> str:
    """One condition's FNIR [Wilson] (with its parts) and FPIR per negative set."""
    fpir = ", ".join(f"{_neg(k)} {gate_rate(v)}" for k, v in o["fpir"].items()) or "no negatives"
    fnir = gate_rate(o["fnir"]) if o["positives"] else "no positives"
    return (f"{CONDITION_WORDS.get(name, name)}: FNIR {fnir} (rejected {o['rejected']}, wrong accept {o['wrong_accept']}); "
            f"FPIR {fpir}")


def mutual_line(ms: dict) -> str:
    share = "—" if ms.get("vacuous_share") is None else f"{100 * ms['vacuous_share']:.1f} %"
    return (f"mutual r = {ms['r']} (tie rule {ms['tie_rule']}): lists built from a batch of {ms['built_from']} queries; "
            f"vacuous for {ms['vacuous_queries']} ({share}): their top doc was retrieved by at most r of these "
            "queries, so the condition cannot reject them")


def gate_lines(report: dict) -> list[str]:
    """The gate section, unindented (text indents it, markdown and LaTeX list it)."""
    g = report.get("gate")
    if not g:
        return []
    if g.get("skipped"):
        return [f"Gate: {g['skipped_reason']}"]
    asked = (report.get("inputs", {}).get("settings", {}).get("gate") or {})
    out = [f"Gate on {g['lane']}: " + ", ".join(f"{_neg(k)} negatives {v}" for k, v in g["negatives"].items())
           + f", positives {g['positives']}"]
    sub: list[str] = []
    for name, nf in g["null_floor"].items():
        sub.append(null_floor_line(name, nf))
    sub.append(conformal_floor_line(g["conformal_floor"]))
    for name, op in (g.get("operating_point") or {}).items():
        basis = op.get("basis", "point estimate")
        line = (f"operating floor at FPIR <= {op['target_fpir']:g} on {_neg(name)} negatives ({basis}): "
                f"{gate_score(op.get('floor'))} [{op.get('label', '')}]")
        if op.get("floor") is None and op.get("reason"):
            line += f": {op['reason']}"
        sub.append(line)
    if "applied" in g:
        a = g["applied"]
        if a.get("margin") is None:
            margin = "off"
        else:
            margin = gate_score(a["margin"]) + (" (--margin)" if asked.get("margin") is not None else " (calibrated)")
        mutual = "off" if a.get("mutual_r") is None else f"r = {a['mutual_r']}"
        inf = _infinity_of((g.get("outcome") or {}).get("floor_reason"))
        sub.append(f"applied from {a['from']} [{a['label']}]: floor {gate_score(a.get('floor'), inf)}, "
                   f"margin {margin}, mutual {mutual}")
    elif g.get("outcome"):
        o = g["outcome"]
        margin = "off" if o.get("margin") is None else gate_score(o["margin"])
        mutual = "off" if o.get("mutual_r") is None else f"r = {o['mutual_r']}"
        sub.append(f"gate floor {gate_score(o.get('floor'), _infinity_of(o.get('floor_reason')))} [{g.get('floor_label', 'tuning')}], "
                   f"margin {margin}, mutual {mutual}")
    if g.get("unattainable_reason"):
        sub.append(f"floor +inf (reject all) because: {g['unattainable_reason']}")
    conds = g.get("outcome_by_condition") or {}
    if conds:
        sub.append("outcome at the gate's floor (the floor alone, then ANDed with each active condition):")
        sub += ["  " + outcome_line(name, o) for name, o in conds.items()]
    elif "operating_point" in g and not g.get("outcome"):
        sub.append("no floor applied: no in-domain negatives to pick one on")
    if g.get("mutual"):
        sub.append(mutual_line(g["mutual"]))
    return out + ["  " + line for line in sub]


def _gate_lines(report: dict) -> list[str]:
    lines = gate_lines(report)
    return [""] + lines if lines else []


def _gate_latex(report: dict) -> list[str]:
    lines = gate_lines(report)
    if not lines:
        return []
    # sloppypar: the lines hold long unbreakable numbers and names; a ragged line beats an overfull one
    out = [r"\begin{sloppypar}", r"\paragraph{" + escape_latex(lines[0].split(":", 1)[0]) + "}",
           escape_latex(lines[0].split(":", 1)[1].strip())]
    if len(lines) == 1:  # one line (no gate lane): an itemize without an item stops pdflatex
        return out + [r"\end{sloppypar}", ""]
    out.append(r"\begin{itemize}")
    nested = False
    for line in lines[1:]:
        deep = line.startswith("    ")
        if deep != nested:
            out.append(r"\begin{itemize}" if deep else r"\end{itemize}")
            nested = deep
        out.append(r"\item " + escape_latex(line.strip()))
    if nested:
        out.append(r"\end{itemize}")
    return out + [r"\end{itemize}", r"\end{sloppypar}", ""]


#: A text field of the per-query CSV that starts with one of these is written with a
#: leading ``'``: a spreadsheet then shows it as text instead of running it as a formula
#: (``=``, ``+``, ``-``, ``@``, TAB, CR; CWE-1236). A field that itself starts with ``'``
#: gets one too, so the rule is reversible: drop one leading ``'`` from a field that
#: starts with ``'`` to get the id back (:func:`csv_text_value`).
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_text_field(text: str) -> str:
    """A lane, level or qid as the per-query CSV writes it (formula prefixes neutralised)."""
    return "'" + text if text.startswith(CSV_FORMULA_PREFIXES) else text


def csv_text_value(field: str) -> str:
    """The id a per-query CSV text field holds (undoes :func:`csv_text_field`)."""
    return field[1:] if field.startswith("'") else field


def per_query_csv(report: dict) -> str:
    """``lane,level,qid`` then one column per metric key; one row per (lane, level, positive qid).

    RFC 4180 quoting: a field holding a comma, a double quote, CR or LF is quoted (quotes
    doubled), so a bare CR in a qid never splits a row; lines end in LF. Text fields that
    a spreadsheet would run as a formula get a leading ``'`` (:data:`CSV_FORMULA_PREFIXES`)."""
    import csv
    import io

    class Dialect(csv.excel):
        lineterminator = "\n"
        quoting = csv.QUOTE_MINIMAL

    metrics = report["inputs"]["settings"]["metrics"]
    buf = io.StringIO()
    w = csv.writer(buf, Dialect)

    def row(fields: list[str]) -> None:
        # csv quotes only the characters of its lineterminator (LF): quote a CR by hand
        if any("\r" in f for f in fields):
            buf.write(",".join('"' + f.replace('"', '""') + '"' if any(c in f for c in ',"\r\n') else f
                               for f in fields) + "\n")
        else:
            w.writerow(fields)

    # the list length and the short-list ceilings (kernel.report.short_lists) follow the metrics
    short = report.get("short_lists") or {}
    ceiled = [m for m in metrics if any(m in (lv.get("cannot_reach_1") or {}) for lvs in short.values() for lv in lvs.values())]
    extra = (["length"] + [f"ceiling {m}" for m in ceiled]) if short else []
    row(["lane", "level", "qid"] + [csv_text_field(m) for m in metrics] + [csv_text_field(c) for c in extra])
    for lane, levels in report["per_query"].items():
        for level, rows in levels.items():
            sq = short.get(lane, {}).get(level, {}).get("per_query", {}) if short else {}
            for qid, vals in rows.items():
                more = [str(sq[qid]["length"])] + [repr(sq[qid][m]) for m in ceiled] if short else []
                row([csv_text_field(lane), csv_text_field(level), csv_text_field(qid)] + [repr(vals[m]) for m in metrics] + more)
    return buf.getvalue()
