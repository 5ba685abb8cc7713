"""``rankscope explain``: one query's drill-down as text or markdown, for a CI log or an issue.

The fields are the dashboard's Query view's (``screens/query.py``), read from the same
kernel data the view reads: each lane's ranking (``Lane.rows_of``, ``Lane.rank``,
``Judgments.grade_of``), the first relevant rank per lane at each level and the metrics
(``Workspace.per_query``, undefined values as ``measures.defined_on`` says), the class and
the attribution label (``ranking.judgments.CLASS_NAMES``, ``attribution.attribute_workspace``),
the gate's decision and its reasons (``analyse_gate(...).decision``: the kernel's words),
and the judged docs with the lanes that found them (``attribution.misses.judged_docs``).
Nothing is recomputed here; this module only lays the fields out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .escaping import escape_markdown, terminal_safe
from .markdown import md_prose, md_row, md_table

#: The rows of each lane's ranking shown by default (the view shows up to 100).
DEFAULT_ROWS = 10
#: A grade cell of a retrieved doc the qrels do not judge (as the view shows it).
UNJUDGED = "·"
#: A lane that has no relevant doc at a level (the view's word).
MISS = "miss"


def num(x: Any, digits: int = 3) -> str:
    """A metric value as the view prints it: fixed ``digits`` decimals, "—" when undefined."""
    if x is None:
        return "—"
    v = float(x)
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "+∞" if v > 0 else "−∞"
    return f"{v:.{digits}f}"


@dataclass(frozen=True)
class LaneRanking:
    lane: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # rank, doc, score, grade (UNJUDGED when none)[, group]
    relevant: tuple[bool, ...]  # per row: the grade reaches the relevant level


@dataclass(frozen=True)
class Explanation:
    """One query's drill-down: every field the Query view shows, as strings."""

    qid: str
    kind: str  # positive / negative / ... (the kernel's class name)
    relevant_judged: int
    strata: tuple[tuple[str, str], ...]
    attribution: str
    window: int
    text: str
    first_columns: tuple[str, ...]
    first_rows: tuple[tuple[str, ...], ...]
    gate: tuple[str, ...]  # the decision line, then one line per condition
    lanes: tuple[LaneRanking, ...]
    judged_columns: tuple[str, ...]
    judged_rows: tuple[tuple[str, ...], ...]  # doc, grade, each input lane's rank ("—": not found), retrieved, text
    docs_given: bool


def shown_lanes(ws: Any) -> list[str]:
    """The lanes the view shows by default: every lane but the cap / document-first variants."""
    return [n for n in ws.lanes if ws.lane_origin.get(n) != "variant"]


def attribution_label(ws: Any, q: int) -> str:
    from ..kernel.attribution import misses as A

    if int(ws.classes[q]) != 1:
        return "— (not a positive)"
    return ", ".join(f"{A.attribute_workspace(ws, level).label_of(ws.n_queries)[q]} ({level})" for level in ws.levels())


def gate_lines(ws: Any, q: int, gate: Any, thresholds: Any) -> tuple[str, ...]:
    """The gate's decision on query code ``q`` and each condition's words (the kernel's)."""
    from ..kernel import analyse_gate
    from ..kernel.errors import InputError

    try:
        analysis = analyse_gate(ws, gate, thresholds)
    except InputError as exc:  # the gate cannot be analysed on these inputs: said as the view says it, not fatal
        return (f"Gate: not available — rankscope: error: {' '.join(str(exc).split())}",)
    if analysis.skipped:
        return (f"Gate: not applied — {analysis.skipped_reason}",)
    d = analysis.decision(q)
    if d is None:
        return ("Gate: not applied — no floor to apply (no in-domain negatives)",)
    word = "ACCEPTED" if d.accepted else "REJECTED"
    return (f"Gate on {d.lane} ({d.label}): {word} — {d.verdict}",
            *(f"    {'✓' if ok else '✗'} {name}: {words}" for name, ok, words in d.checks))


def explain(ws: Any, qid: str, gate: Any, thresholds: Any = None, rows: int = DEFAULT_ROWS,
            lanes: Sequence[str] | None = None) -> Explanation:
    """The drill-down of ``qid`` on a prepared workspace (``kernel.prepare``'s) under the gate
    settings ``gate`` and ``thresholds``; ``rows`` of each lane's ranking. An unknown qid
    is an ``InputError``."""
    from ..kernel import measures as M
    from ..kernel.attribution import misses as A
    from ..kernel.errors import InputError
    from ..kernel.ranking.judgments import CLASS_NAMES, NO_JUDGMENT, relevant_counts

    if qid not in ws.qid_index:
        raise InputError(f"unknown query id {qid!r}: in neither the qrels nor a lane", "QID")
    q = int(ws.qid_index[qid])
    lanes = shown_lanes(ws) if lanes is None else list(lanes)
    kind = CLASS_NAMES.get(int(ws.classes[q]), "?")
    if ws.ood_negatives is not None and q in set(ws.ood_negatives.tolist()):
        kind = "out-of-domain negative"
    nrel = int(relevant_counts(ws.judgments, ws.n_queries, ws.settings.relevant)[q])
    levels = list(ws.levels())
    keys = list(ws.settings.metrics)
    defined = M.defined_on(keys, ws.hits(ws.input_lanes[0], "doc")[1], ws.n_queries, ws.settings.relevant)
    first = []
    for lane in lanes:
        ranks = []
        for level in levels:
            r = int(ws.per_query(lane, level)["rank"][q])
            ranks.append(str(r) if r > 0 else MISS)
        pq = ws.per_query(lane, "doc")
        span = ws.lanes[lane].rows_of(q)
        first.append((lane, str(span.stop - span.start), *ranks,
                      *[num(pq[m.key][q]) if defined[m.key][q] else "—" for m in keys]))
    rel = ws.settings.relevant
    rankings = []
    for lane in lanes:
        L = ws.lanes[lane]
        span = L.rows_of(q)
        doc = L.doc[span][:rows]
        score, rank = L.score[span][:rows], L.rank[span][:rows]
        grades = ws.judgments.grade_of(np.full(doc.size, q), doc)
        out, marks = [], []
        for i in range(doc.size):
            g = int(grades[i])
            row = [str(int(rank[i])), str(ws.doc_id(doc[i])), f"{float(score[i]):.6g}", UNJUDGED if g == NO_JUDGMENT else str(g)]
            if ws.group_of is not None:
                row.append(str(ws.groups[int(ws.group_of[int(doc[i])])]))
            out.append(tuple(row))
            marks.append(g != NO_JUDGMENT and g >= rel)
        rankings.append(LaneRanking(lane, ("#", "doc", "score", "g") + (("group",) if ws.group_of is not None else ()),
                                    tuple(out), tuple(marks)))
    inputs = list(ws.input_lanes)
    judged = []
    for jd in A.judged_docs(ws, q):
        if jd.indexed is False:
            status = "not indexed"
        elif jd.retrieved:
            status = "by " + ", ".join(n for n in inputs if jd.ranks[n] > 0)
        else:
            status = "no lane"
        judged.append((jd.doc, str(jd.grade), *[str(jd.ranks[n]) if jd.ranks[n] else "—" for n in inputs], status,
                       ws.doc_text.get(jd.doc, "")))
    return Explanation(
        qid=qid, kind=kind, relevant_judged=nrel,
        strata=tuple((name, str(labels[q])) for name, labels in ws.strata.items()),
        attribution=attribution_label(ws, q), window=int(ws.settings.window), text=ws.query_text.get(qid, ""),
        first_columns=("lane", "hits", *[f"first relevant ({lv})" for lv in levels], *[m.key for m in keys]),
        first_rows=tuple(first), gate=gate_lines(ws, q, gate, thresholds), lanes=tuple(rankings),
        judged_columns=("doc", "grade", *inputs, "retrieved", "text"), judged_rows=tuple(judged),
        docs_given=bool(ws.doc_text),
    )


# ----------------------------------------------------------------------------- text


def _text_table(columns: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [columns, *rows]]


def head_line(e: Explanation) -> str:
    """``Query QID  positive · 3 relevant judged · stratum = label`` (the view's head line)."""
    strata = " · ".join(f"{name} = {label}" for name, label in e.strata)
    return f"Query {e.qid}  {e.kind} · {e.relevant_judged} relevant judged" + (f" · {strata}" if strata else "")


def _judged_cells(e: Explanation, row: tuple[str, ...]) -> list[str]:
    """A judged row for a table: the text column only when texts were given (``--docs``)."""
    return list(row) if e.docs_given else list(row[:-1])


def render_text(e: Explanation) -> str:
    lines = [head_line(e), f"attribution (window {e.window}): {e.attribution}"]
    if e.text:
        lines.append(f"text: {e.text}")
    lines += ["", "First relevant rank and metrics"] + _text_table(e.first_columns, e.first_rows)
    lines += [""] + list(e.gate)
    for r in e.lanes:
        lines += ["", f"Lane {r.lane} (grade marked * when relevant)"]
        rows = [(*row[:3], row[3] + ("*" if rel else ""), *row[4:]) for row, rel in zip(r.rows, r.relevant)]
        lines += _text_table(r.columns, rows) if rows else ["  (query absent from lane)"]
    cols = list(e.judged_columns) if e.docs_given else list(e.judged_columns[:-1])
    lines += ["", "Judged docs of this query"]
    lines += _text_table(cols, [_judged_cells(e, row) for row in e.judged_rows]) if e.judged_rows else \
        ["  (no judged doc: the query is not in the qrels)"]
    return terminal_safe("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- markdown


def render_markdown(e: Explanation) -> str:
    out = [f"### {escape_markdown(head_line(e))}", "", md_prose(f"attribution (window {e.window}): {e.attribution}")]
    if e.text:
        out += ["", f"> {md_prose(e.text)}"]
    out += ["", "**First relevant rank and metrics**", ""] + md_table(list(e.first_columns), [list(r) for r in e.first_rows], 1)
    out += ["", f"**{md_prose(e.gate[0])}**"] + [f"- {md_prose(line.strip())}" for line in e.gate[1:]]
    for r in e.lanes:
        out += ["", f"**Lane {escape_markdown(r.lane)}** (relevant grades in bold)", ""]
        rows = [[escape_markdown(row[0]), escape_markdown(row[1]), row[2], f"**{row[3]}**" if rel else row[3],
                 *[escape_markdown(c) for c in row[4:]]] for row, rel in zip(r.rows, r.relevant)]
        out += _escaped_table(list(r.columns), rows) if rows else ["(query absent from lane)"]
    cols = list(e.judged_columns) if e.docs_given else list(e.judged_columns[:-1])
    out += ["", "**Judged docs of this query**", ""]
    if e.judged_rows:
        rows = [_judged_cells(e, row) for row in e.judged_rows]
        out += md_table(cols, rows, len(cols))
    else:
        out.append("(no judged doc: the query is not in the qrels)")
    return "\n".join(out) + "\n"


def _escaped_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A pipe table of cells escaped already (names by ``escape_markdown``, marks of ours)."""
    return [md_row([escape_markdown(h) for h in header]), "|" + "|".join("---" for _ in header) + "|",
            *[md_row(r) for r in rows]]


def render(e: Explanation, fmt: str) -> str:
    return render_markdown(e) if fmt == "markdown" else render_text(e)
