"""The evaluate report and a comparison as markdown that reads well raw and renders the
same in CommonMark, GitHub and pandoc.

Only names (lanes, qids, strata, labels) and prose are escaped, and only for what breaks
a table or a line (``escaping.MARKDOWN_NAME_SPECIAL``): numbers are written as the text
report writes them (``0.3684 [0.2855, 0.4599]``), so a number copied from the raw file
parses. Every block of the text report is present, in its order: the summary lines, one
table per section with the section's n, attribution, fusion (RRF k and dilution), the
gate, the warnings and the caption with the definitions.
"""

from __future__ import annotations

from .compare import _notes, compare_footnotes, compare_table
from .escaping import escape_control, escape_markdown
from .power import power_lines
from .report import (
    LATENCY_HEADER,
    _attribution_lines,
    _fusion_lines,
    _sections,
    caption,
    gate_lines,
    judged_means_rows,
    judged_means_title,
    latency_rows,
    latency_title,
    section_footnotes,
    summary_lines,
    table_rows,
    warning_line,
)

#: What prose (summary, notes, gate lines, the caption) always escapes: emphasis, code,
#: a cell's bar, math and strike-through, the backslash.
PROSE_SPECIAL = "\\`*_|$~"


def md_prose(text: str) -> str:
    """A sentence of ours (holding names) for a list item or the caption. Brackets print
    as themselves (``[0.550, 0.774]``) except a ``]`` that would close a link (before
    ``(``, ``[`` or ``:``); ``<`` only before what could open a tag or an autolink."""
    t = escape_control(str(text))
    out = []
    for i, ch in enumerate(t):
        nxt = t[i + 1] if i + 1 < len(t) else ""
        if ch in PROSE_SPECIAL or (ch == "]" and nxt != "" and nxt in "([:") or (ch == "<" and (nxt.isalpha() or (nxt != "" and nxt in "/!?"))):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def md_table(header: list[str], rows: list[list[str]], names: int) -> list[str]:
    """A pipe table; the first ``names`` cells of each row are names (escaped), the others
    numbers or words of ours (written as they are, a ``|`` in them escaped)."""
    out = [md_row([escape_markdown(h) for h in header]), "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append(md_row([escape_markdown(c) for c in r[:names]] + [c.replace("|", "\\|") for c in r[names:]]))
    return out


def section_n(block: dict) -> int | None:
    """The positive queries a section's means are over (every cell of a section shares it)."""
    for levels in block.values():
        for cells in levels.values():
            for cell in cells.values():
                if isinstance(cell, dict) and "n" in cell:
                    return cell["n"]
    return None


def render_report_markdown(report: dict) -> str:
    out: list[str] = []
    if report.get("synthetic"):
        out += ["**Synthetic demo data.**", ""]
    out += ["- " + md_prose(line) for line in summary_lines(report)] + [""]
    for i, (title, block) in enumerate(_sections(report)):
        header, rows = table_rows(report, block)
        n = section_n(block)
        out += [f"### {escape_markdown(title)}", "", f"n = {n if n is not None else '—'} positive queries", ""]
        out += md_table(header, rows, 2) + [""]
        notes = section_footnotes(report, block)
        out += [md_prose(f) for f in notes] + ([""] if notes else [])
        judged = judged_means_rows(report) if i == 0 else None
        if judged is not None:
            n_judged, metrics, jrows = judged
            out += [f"### {escape_markdown(judged_means_title(report, n_judged))}", ""]
            out += md_table(["lane", "level", *metrics], jrows, 2) + [""]
    blocks = [_attribution_lines(report), _fusion_lines(report)]
    for lines in blocks:
        out += _md_list(lines)
    gate = gate_lines(report)
    if gate:
        head, _, rest = gate[0].partition(":")
        out += [f"### {escape_markdown(head)}", ""]
        if rest.strip():
            out.append("- " + md_prose(rest.strip()))
        out += _nested(gate[1:]) + [""]
    if report.get("latency"):
        out += [f"### {escape_markdown(latency_title(report))}", ""]
        out += md_table(LATENCY_HEADER, latency_rows(report), 1) + [""]
    warnings = [warning_line(w) for w in report["summary"]["warnings"]]
    if warnings:
        out += ["- " + md_prose(w) for w in warnings] + [""]
    out.append("*" + md_prose(caption(report)) + "*")
    return "\n".join(out) + "\n"


def _nested(lines: list[str]) -> list[str]:
    """Indented text lines (two spaces a level, the first level at two) as nested list items."""
    out = []
    for line in lines:
        depth = max((len(line) - len(line.lstrip(" "))) // 2 - 1, 0)
        out.append("  " * depth + "- " + md_prose(line.strip()))
    return out


def _md_list(lines: list[str]) -> list[str]:
    """A text block (a blank line, a head line, indented sub-lines) as a list."""
    out: list[str] = []
    for line in lines:
        if not line.strip():
            if out:
                out.append("")
            continue
        if line.startswith("  "):
            out += _nested([line])
            out[-1] = "  " + out[-1]
        else:
            out.append("- " + md_prose(line))
    return out + ([""] if out else [])


def render_compare_markdown(comparison) -> str:
    result = comparison.result
    header, rows = compare_table(result, p_prefix=False)
    notes = _notes(result, comparison.plan.exploratory_reasons)
    out = md_table(header, rows, 3) + [""]
    out += ["- " + md_prose(n) for n in notes + compare_footnotes(result)]
    out += ["", "*" + md_prose(result.caption) + "*"]
    out += [""] + ["- " + md_prose(x) for x in power_lines(result)]
    return "\n".join(out) + "\n"
