"""9 Query: one query's rankings side by side — rank, doc, score, tie group, grade, group —
with the first relevant rank per lane at both levels, the attribution label, the texts
(lesson 02) and how much of each lane's numbers depend on the order of tied scores."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Static

from ..kernel import measures as M
from ..kernel.attribution import misses as A
from ..widgets import fmt
from ..widgets.safe import escape
from ..widgets.tables import PlainTable, tie_marks
from .base import ViewScreen

SHOW_ROWS = 100


class QueryScreen(ViewScreen):
    VIEW = "query"
    HELP = """# 9 Query drill-down

**Lesson 02: a rank has a level.** The first relevant rank at doc level answers "right
passage?", at group level "right document?"; they fail differently and want different
fixes. Each lane's ranking is shown side by side with grades (· = unjudged) and groups; the
attribution label says which lanes carried the query inside the window.

**Ties.** The `tie` column marks each group of equal scores (`┬` first, `│` inside, `└`
last, with the group's number): trec_eval orders a group by doc id descending, another
tool may not. `✂k` on a row says the cutoff of an @k measure falls inside its group, right
after that row: which of the group's hits count at @k depends on the tie rule. The lane's
title counts its positives whose value of some measure changes with the tie order
(`tie-dependent n/N positives`); the
`tie order` column gives this query's measures that do, with their worst–best range.

Reached with Enter from every list, with `/` (qid or text) and from the command palette.
`[` / `]` step through the positives, `v` adds the cap / document-first variant lanes
(lesson 16), Tab moves between lanes, Escape goes back.
"""
    BINDINGS = [
        Binding("left_square_bracket", "step(-1)", "Prev query", id="query.prev"),
        Binding("right_square_bracket", "step(1)", "Next query", id="query.next"),
        Binding("v", "toggle_variants", "Variants", id="query.variants",
                tooltip="Show the cap / document-first variant lanes too"),
        Binding("escape", "back", "Back", id="query.back"),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.shown_qid: str | None = None
        self.lanes_shown: list[str] = []
        self._tables: list = []
        self._titles: list = []
        self.show_variants = False

    def compose_body(self) -> ComposeResult:
        with Vertical(id="q-main"):
            yield Static("no query selected — press / to find one", id="q-head", classes="panel")
            yield PlainTable(id="q-first", cursor_type="none", zebra_stripes=True)
            yield Static("", id="q-gate", classes="panel")
            yield Horizontal(id="q-lanes")
            yield Static("", id="q-doc", classes="panel")
            yield Label("Judged docs of this query", classes="section-title")
            yield PlainTable(id="q-judged", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        super().on_mount()
        self.watch(self.app, "qid", self._data_changed, init=False)

    def refresh_view(self) -> None:
        ws, qid = self.ws, self.app.qid
        if ws is None and self.state.report_error is not None:
            self.query_one("#q-head", Static).update(escape(self.waiting("loading")))
            return
        if ws is None or qid is None or qid not in ws.qid_index:
            self.query_one("#q-head", Static).update("no query selected — press / to find one")
            return
        q = ws.qid_index[qid]
        self.shown_qid = qid
        self._render_head(q)
        self._render_first(q)
        self._render_lanes(q)
        self._render_gate(q)
        self._render_judged(q)

    def _lanes(self) -> list[str]:
        names = self.app.lane_names or list(self.ws.lanes)
        names = [n for n in names if n in self.ws.lanes]
        if self.show_variants:
            return names
        return [n for n in names if self.ws.lane_origin.get(n) != "variant"]

    def action_toggle_variants(self) -> None:
        self.show_variants = not self.show_variants
        self._stale = True
        self._refresh_if_stale()

    def _attribution_label(self, q: int) -> str:
        if int(self.ws.classes[q]) != 1:
            return "— (not a positive)"
        levels = []
        for level in self.ws.levels():
            att = A.attribute_workspace(self.ws, level)  # cached in the workspace
            levels.append(f"{escape(att.label_of(self.ws.n_queries)[q])} ({level})")
        return ", ".join(levels)

    def _render_head(self, q: int) -> None:
        from ..kernel.ranking.judgments import CLASS_NAMES, relevant_counts

        ws, qid = self.ws, self.shown_qid
        cls = CLASS_NAMES.get(int(ws.classes[q]), "?")
        if ws.ood_negatives is not None and q in set(ws.ood_negatives.tolist()):
            cls = "out-of-domain negative"
        nrel = int(relevant_counts(ws.judgments, ws.n_queries, ws.settings.relevant)[q])
        strata = " · ".join(f"{escape(name)} = {escape(labels[q])}" for name, labels in ws.strata.items())
        text = ws.query_text.get(qid, "")
        lines = [f"[b]Query {escape(qid)}[/]  {cls} · {nrel} relevant judged" + (f" · {strata}" if strata else ""),
                 f"attribution (window {ws.settings.window}): [b]{self._attribution_label(q)}[/]"]
        if text:
            lines.append(f"[i]{escape(text)}[/]")
        if self.state.synthetic:
            lines[0] += "  [reverse] SYNTHETIC [/]"
        self.query_one("#q-head", Static).update("\n".join(lines))

    def _render_first(self, q: int) -> None:
        ws = self.ws
        table = self.query_one("#q-first", DataTable)
        table.clear(columns=True)
        levels = list(ws.levels())
        table.add_column("lane")
        table.add_column("hits")
        for level in levels:
            table.add_column(f"first relevant ({level})")
        keys = list(ws.settings.metrics)  # every metric of the workspace, in its order
        for m in keys:
            table.add_column(m.key)
        table.add_column("tie order")
        # a measure that needs a relevant doc is undefined on a query without one at its level (rel=N or --relevant)
        defined = M.defined_on(keys, ws.hits(ws.input_lanes[0], "doc")[1], ws.n_queries, ws.settings.relevant)
        for lane in self._lanes():
            L = ws.lanes[lane]
            ranks = []
            for level in levels:
                r = int(ws.per_query(lane, level)["rank"][q])
                ranks.append(str(r) if r > 0 else "miss")
            pq = ws.per_query(lane, "doc")
            n = L.rows_of(q)
            values = [fmt.num(pq[m.key][q]) if defined[m.key][q] else "—" for m in keys]  # —, not 0.000
            table.add_row(lane, str(n.stop - n.start), *ranks, *values, self._tie_ranges(lane, q))

    def _lane_ties(self, lane: str):
        """The kernel's tie exposure of a lane (``Workspace.ties``), None where there is none
        (a workspace read from per-query tables has no ranked rows)."""
        ties_of = getattr(self.ws, "ties", None)
        return None if ties_of is None else ties_of(lane)

    def _tie_ranges(self, lane: str, q: int) -> str:
        """This query's measures whose value changes with the tie order: ``key worst–best``."""
        t = self._lane_ties(lane)
        if t is None:
            return "—"
        parts = [f"{key} {fmt.num(t.worst[key][q])}–{fmt.num(t.best[key][q])}" for key in t.depends if t.depends[key][q]]
        return ", ".join(parts) if parts else ("tied, no value moves" if t.tied[q] else "no ties")

    def _lane_title(self, lane: str) -> str:
        """The lane's name and its count of tie-dependent positives (any covered measure)."""
        t = self._lane_ties(lane)
        if t is None or not t.depends:
            return escape(lane)
        pos = self.ws.positives
        dep = np.zeros(self.ws.n_queries, dtype=bool)
        for mask in t.depends.values():
            dep |= mask
        return f"{escape(lane)} · tie-dependent {int(dep[pos].sum())}/{pos.size} positives"

    def _render_lanes(self, q: int) -> None:
        box = self.query_one("#q-lanes", Horizontal)
        lanes = self._lanes()
        if lanes != self.lanes_shown:
            box.remove_children()
            self._tables = [PlainTable(cursor_type="row", zebra_stripes=True, classes="q-lane-table") for _ in lanes]
            self._titles = [Label(escape(lane), classes="section-title q-lane-title") for lane in lanes]
            box.mount_all([Vertical(title, t, classes="q-lane") for title, t in zip(self._titles, self._tables)])
            self.lanes_shown = lanes
            box.set_class(len(lanes) > 4, "-many")
        for lane, title in zip(self.lanes_shown, self._titles):
            title.update(self._lane_title(lane))
        self._fill_lanes(q)

    def _cutoffs(self) -> list[int]:
        """The cutoffs k of the measures whose tie exposure the kernel computes."""
        from ..kernel.measures.ties import SUPPORTED

        return sorted({m.k for m in self.ws.settings.metrics if m.kind in SUPPORTED and m.k is not None})



    def _fill_lanes(self, q: int) -> None:
        from ..kernel.ranking.judgments import NO_JUDGMENT

        ws = self.ws
        rel = ws.settings.relevant
        cutoffs = self._cutoffs()
        for lane, table in zip(self.lanes_shown, self._tables):
            table.clear(columns=True)
            cols = ["#", "doc", "score", "tie", "g"] + (["group"] if ws.group_of is not None else [])
            table.add_columns(*cols)
            L = ws.lanes[lane]
            rows = L.rows_of(q)
            doc = L.doc[rows][:SHOW_ROWS]
            score, rank = L.score[rows][:SHOW_ROWS], L.rank[rows][:SHOW_ROWS]
            marks = tie_marks(L.score[rows], cutoffs)  # the whole list: a group may run past the rows shown
            grades = ws.judgments.grade_of(np.full(doc.size, q), doc)
            for i in range(doc.size):
                g = int(grades[i])
                gs = "·" if g == NO_JUDGMENT else (Text(str(g), style="bold reverse") if g >= rel else str(g))
                row = [str(int(rank[i])), str(ws.doc_id(doc[i])), f"{float(score[i]):.6g}", marks[i], gs]
                if ws.group_of is not None:
                    row.append(str(ws.groups[int(ws.group_of[int(doc[i])])]))
                table.add_row(*row, key=str(ws.doc_id(doc[i])))
            if doc.size == 0:
                table.add_row("", "(query absent from lane)", "", "", "")

    def gate_decision(self, q: int):
        """The kernel's gate decision for query code ``q`` under the loaded gate settings and
        thresholds (the report's own analysis, cached in the workspace); None without a gate."""
        from ..kernel import analyse_gate

        analysis = analyse_gate(self.ws, self.options.gate, self.state.thresholds())
        if analysis.skipped:
            return None, analysis.skipped_reason
        d = analysis.decision(q)
        return d, None if d is not None else "no floor to apply (no in-domain negatives)"

    def _render_gate(self, q: int) -> None:
        box = self.query_one("#q-gate", Static)
        try:
            d, why = self.gate_decision(q)
        except Exception as exc:  # the gate cannot be analysed on these inputs: say so
            from ..state import error_line

            box.update(f"[b]Gate[/]: not available — {escape(error_line(exc))}")
            return
        if d is None:
            box.update(f"[b]Gate[/]: not applied — {escape(str(why))}")
            return
        word = "[b $success]ACCEPTED[/]" if d.accepted else "[b $error]REJECTED[/]"
        lines = [f"[b]Gate[/] on {escape(d.lane)} ({d.label}): {word} — {escape(d.verdict)}"]
        for name, ok, words in d.checks:
            lines.append(f"    {'✓' if ok else '✗'} {name}: {escape(words)}")
        box.update("\n".join(lines))

    def _render_judged(self, q: int) -> None:
        """Every judged doc of the query: grade, text, which lanes retrieved it (rank), indexed."""
        ws = self.ws
        docs = A.judged_docs(ws, q)
        lanes = list(ws.input_lanes)
        table = self.query_one("#q-judged", DataTable)
        table.clear(columns=True)
        table.add_columns("doc", "grade", *lanes, "retrieved", "text")
        for jd in docs:
            if jd.indexed is False:
                status = "not indexed"
            elif jd.retrieved:
                status = "by " + ", ".join(l for l in lanes if jd.ranks[l] > 0)
            else:
                status = "no lane"
            grade = Text(str(jd.grade), style="bold reverse") if jd.relevant else str(jd.grade)
            text = ws.doc_text.get(jd.doc, "")
            table.add_row(jd.doc, grade, *[str(jd.ranks[l]) if jd.ranks[l] else "—" for l in lanes], status,
                          Text(text[:80] or "(no text)", no_wrap=True), key="\0" + jd.doc)
        if not docs:
            table.add_row("(no judged doc: the query is not in the qrels)", "", *["" for _ in lanes], "", "")

    @on(DataTable.RowHighlighted, ".q-lane-table")
    def _doc_highlighted(self, event: DataTable.RowHighlighted) -> None:
        doc = getattr(event.row_key, "value", None)
        if doc is None:
            return
        text = self.ws.doc_text.get(doc, "")
        self.query_one("#q-doc", Static).update(f"[b]{escape(doc)}[/]  " + (escape(text) or "[i](no text; --docs FILE gives texts)[/]"))

    def action_step(self, delta: int) -> None:
        ws = self.ws
        if ws is None:
            return
        pos = ws.positives
        if not pos.size:
            return
        cur = ws.qid_index.get(self.app.qid or "", -1)
        i = int(np.searchsorted(pos, cur))
        if delta > 0:
            j = i + 1 if i < pos.size and pos[i] == cur else i
        else:
            j = i - 1
        self.app.qid = str(ws.qids[int(pos[j % pos.size])])

    def action_back(self) -> None:
        self.app.switch_mode(self.app.previous_mode or "overview")
