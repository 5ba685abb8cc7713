"""1 Overview: lanes × metrics with intervals, unique share, missing queries, warnings,
one query's parsed order with its ties visible, and a box to paste run and qrels lines
into and see them parsed and ranked (lessons 01–04)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Static, TextArea

from ..kernel.ranking.judgments import NO_JUDGMENT
from ..kernel.ranking.ranks import tied_queries
from ..render.explain import tie_marks
from ..widgets import fmt
from ..widgets.plot import TermPlot
from ..widgets.safe import escape
from ..widgets.tables import PlainTable
from .base import ViewScreen, guarded

if TYPE_CHECKING:
    from textual.timer import Timer

PARSED_ROWS = 15
#: a plotext colour per lane of the P–R curve, and the same colour in the key line (Rich's name)
PR_COLOURS = ("orange", "magenta", "cyan", "red", "blue", "white", "green", "yellow")
PR_RICH = {"orange": "dark_orange", "magenta": "magenta", "cyan": "cyan", "red": "red", "blue": "blue",
           "white": "white", "green": "green", "yellow": "yellow"}
DEBOUNCE = 0.3  # seconds of quiet typing before the edit box is parsed again
EDIT_ROWS = 40  # parsed rows the edit box lists (a paste of thousands of lines is parsed whole)
#: what the edit box starts with: the file's ranks say d1 is 2nd, the scores put it 3rd (a tie)
EXAMPLE_RUN = "q1 Q0 d3 1 0.9 demo\nq1 Q0 d1 2 0.7 demo\nq1 Q0 d2 3 0.7 demo\nq2 Q0 d5 1 0.4 demo\n"
EXAMPLE_QRELS = "q1 0 d1 1\nq1 0 d3 0\nq2 0 d5 2\n"


class OverviewScreen(ViewScreen):
    VIEW = "overview"
    HELP = """# 1 Overview

**Lessons 01–04.** Every metric carries an interval: hit@k (a proportion) a Wilson
score interval, the other means a percentile bootstrap over queries. The report's first
numbers are not metrics: the **unique share** of each lane (positives only it surfaces
inside the window) and the count of **judged queries missing from any lane**.

The parsed view shows one query as rankscope ordered it: score descending, ties broken
on the doc id **descending as bytes** (trec_eval); the rank column of the file is never
trusted. `g` switches the table between doc and group level. `t` jumps to the next query with a tie, `l` changes lane, Enter on a lane row
drills into the current query.

**Edit and re-parse.** `p` opens two boxes in place of the parsed order (`p` again closes
them). Paste or type run lines (`qid Q0 docid rank score tag`, or any run format rankscope
reads) into the first and qrels lines into the second: after a pause in
typing they are parsed exactly as files with those lines would be, and the parsed order,
each query's first relevant rank and the tie groups update. A bad line shows the one-line
error the command line gives for such a file (`pasted run:LINE: …`). Escape leaves a box.

**P–R curve.** `c` shows every lane's interpolated precision at recall 0.0, 0.1, …, 1.0
in place of the parsed order (`c` again hides it): each point is the mean over the positive
queries of trec_eval's `iprec_at_recall` (the highest precision at or below the rank of the
c-th relevant hit, c = round(level · R)), the numbers `rankscope plot pr-curve` draws.
"""
    BINDINGS = [
        Binding("t", "next_tie", "Next tie", id="overview.next_tie", tooltip="Next query whose list has equal scores"),
        Binding("l", "next_lane", "Lane", id="overview.next_lane", tooltip="Show the parsed order of another lane"),
        Binding("g", "next_level", "Level", id="overview.level", tooltip="Doc or group level in the metric table"),
        Binding("p", "toggle_edit", "Paste lines", id="overview.edit",
                tooltip="Edit and re-parse: paste run and qrels lines, see them parsed and ranked (lesson 01)"),
        Binding("c", "toggle_pr", "P–R curve", id="overview.pr_curve",
                tooltip="Interpolated precision against recall, every lane (the 11 trec_eval levels)"),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.parsed_lane: str | None = None
        self.parsed_qid: str | None = None
        self.level = "doc"
        self._details_drawn = False  # the parsed order and warnings (drawn after the first data)
        self._edit_timer: Timer | None = None  # the pending re-parse of the edit box (debounced)
        self.edit_generation = 0  # counts edits: a parse of an older text is dropped
        self.edit_result = None  # kernel ``Reparsed`` of the current text, None on an error
        self.edit_error: str | None = None  # the command line's one-line error for the current text
        self.pr_rows: list[dict] | None = None  # the P–R curve's points (kernel figures.pr_curve_rows)
        self.pr_level: str | None = None  # the level pr_rows are of
        self.pr_ws: Any = None  # the workspace pr_rows are of (a reload makes another)

    def compose_body(self) -> ComposeResult:
        with Vertical(id="ov-main"):
            yield Static(self.waiting("loading inputs"), id="ov-summary", classes="panel")
            yield Label("Lanes × metrics (means over positives, with intervals)", classes="section-title")
            yield PlainTable(id="ov-metrics", cursor_type="row", zebra_stripes=True)
            yield Static("", id="ov-caption", classes="caption")
            yield Label("", id="ov-judged-title", classes="section-title")
            yield PlainTable(id="ov-judged", cursor_type="none", zebra_stripes=True)
            with Horizontal(id="ov-bottom"):
                with Vertical(id="ov-parsed-box"):
                    yield Label("Parsed order", id="ov-parsed-title", classes="section-title")
                    yield PlainTable(id="ov-parsed", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="ov-warnings-box"):
                    yield Label("Warnings (file:line)", classes="section-title")
                    yield Static("", id="ov-warnings")
            yield Label("P–R curve (c closes)", id="ov-pr-title", classes="section-title")
            with Vertical(id="ov-pr"):
                yield TermPlot(id="ov-pr-plot")
                yield Static("", id="ov-pr-note", classes="caption")
            yield Label("Edit and re-parse (p closes): run lines above, qrels lines below; parsed as files would be",
                        id="ov-edit-title", classes="section-title")
            with Horizontal(id="ov-edit"):
                with Vertical(id="ov-edit-inputs"):
                    yield TextArea(EXAMPLE_RUN, id="ov-edit-run", soft_wrap=False, show_line_numbers=True,
                                   tab_behavior="focus")
                    yield TextArea(EXAMPLE_QRELS, id="ov-edit-qrels", soft_wrap=False, show_line_numbers=True,
                                   tab_behavior="focus")
                with Vertical(id="ov-edit-out"):
                    yield Static("", id="ov-edit-status")
                    yield PlainTable(id="ov-edit-parsed", cursor_type="none", zebra_stripes=True)

    # ------------------------------------------------------------------ rendering

    def refresh_view(self) -> None:
        ws = self.ws
        summary = self.query_one("#ov-summary", Static)
        if ws is None:
            summary.update(self.waiting("loading inputs"))
            return
        rep = self.report
        table = self.query_one("#ov-metrics", DataTable)
        if rep is None:
            summary.update(self._counts_text() + "\n" + self.waiting("computing the report (intervals)"))
            if self.state.report_error is None:
                self._render_means()
        else:
            table.loading = False
            summary.update(self._summary_text(rep))
            self._render_metrics(rep)
        if self._details_drawn:
            self._render_details()
        else:  # the first data: the frame with the lanes' numbers first, the parsed order after it
            self.draw_after_refresh(self._render_details_later)

    def _render_details_later(self) -> None:
        if self.ws is None or not self.is_mounted:
            return
        try:
            self._render_details()
        except Exception as exc:  # as in refresh_view: show it, keep running
            self.log.error(f"_render_details failed: {exc!r}")
            self.app.show_error(exc)

    def _render_details(self) -> None:
        """The parsed order of one query (a tie first) and the load's warnings."""
        ws = self.ws
        self._details_drawn = True
        if self.parsed_lane is None and ws.input_lanes:
            self.parsed_lane = ws.input_lanes[0]
            self.parsed_qid = self._showcase_tie() or self._next_tie_qid(-1)
        self._render_parsed()
        self._render_warnings()

    def _counts_text(self) -> str:
        ws = self.ws
        return (f"{len(ws.input_lanes)} lanes · {ws.positives.size} positives · {ws.negatives.size} negatives · "
                f"{ws.n_queries} query ids")

    def _summary_text(self, rep: dict) -> str:
        s = rep["summary"]
        lines = []
        if self.state.synthetic or rep.get("synthetic"):
            lines.append("[b reverse] SYNTHETIC [/] demo data made by rankscope's own generator")
        if "unique_share" in s:
            shares = "  ".join(
                f"[b]{escape(lane)}[/] {fmt.num(v.get('share'))} ({v.get('count')})" for lane, v in s["unique_share"].items()
            )
            lines.append(f"Unique share (positives only this lane surfaces): {shares}")
        else:
            lines.append("Unique share: [i]attribution not in the report yet[/]")
        m = s.get("judged_queries_missing_from_any_lane") or {}
        per = ", ".join(f"{escape(k)} {v}" for k, v in (m.get("per_lane") or {}).items())
        count = m.get("missing_from_any", m.get("count"))
        of = f" of {m['judged_queries']} judged" if "judged_queries" in m else ""
        lines.append(f"Judged queries missing from any lane: [b]{count}[/]{of} ({per})")
        lines.append(
            f"positives {s['positives']} · negatives {s['negatives']} · partial {s['partial']} · unjudged {s['unjudged']}"
            f" · OOD negatives {s.get('ood_negatives', 0)} · means over {s['averaged_over']}"
        )
        if s.get("short_lists"):  # lists shorter than k and ceilings below 1, worded by the kernel
            from ..kernel.report.short_lists import short_list_line

            line = short_list_line(s["short_lists"])
            if line:
                lines.append(f"Short lists: {escape(line)}")
        return "\n".join(lines)

    def _render_metrics(self, rep: dict) -> None:
        """The lanes × metrics table of the report (narrow: metrics × lanes, so that every
        metric is a row on a screen that scrolls down, never a column cut off to the right),
        then the means over every judged query beside it (``summary.judged_means``)."""
        table = self.query_one("#ov-metrics", DataTable)
        metrics = rep["inputs"]["settings"]["metrics"]
        lanes = list(rep["lanes"])
        cells = {lane: rep["lanes"][lane].get(self.level, {}) for lane in lanes}
        self._fill(table, metrics, lanes, {lane: [fmt.cell(cells[lane].get(m), compact=True) for m in metrics] for lane in lanes})
        d = rep["definitions"]
        caption = d.get("intervals", "")
        if self.narrow and len(lanes) > 2:
            caption = "Narrow screen: one row per metric, the input lanes first; scroll right for the others. " + caption
        self.query_one("#ov-caption", Static).update(escape(caption))
        self._render_judged(rep)

    def _fill(self, table: DataTable, metrics: list[str], lanes: list[str], values: dict[str, list[str]]) -> None:
        """Lanes × metrics (row key: the lane), or metrics × lanes on a narrow screen."""
        table.clear(columns=True)
        if self.narrow:
            # the input lanes first: the columns past the screen's edge (scroll right) are
            # the derived lanes (rrf, convex, variants)
            inputs = list(self.ws.input_lanes) if self.ws is not None else []
            lanes = [lane for lane in inputs if lane in values] + [lane for lane in lanes if lane not in inputs]
            table.add_column("metric", key="metric")
            for lane in lanes:
                table.add_column(lane, key=lane)
            for i, m in enumerate(metrics):
                table.add_row(m, *[values[lane][i] for lane in lanes], key="\0" + m)
            return
        table.add_column("lane", key="lane")
        table.add_column("level", key="level")
        for m in metrics:
            table.add_column(m, key=m)
        for lane in lanes:
            table.add_row(lane, self.level, *values[lane], key=lane)

    def _render_judged(self, rep: dict) -> None:
        """The peers' figure: each lane's mean over every judged query, as trec_eval -c and
        ir_measures average (the kernel's ``summary.judged_means``; no interval)."""
        table = self.query_one("#ov-judged", DataTable)
        title = self.query_one("#ov-judged-title", Label)
        jm = rep.get("summary", {}).get("judged_means")
        table.display = title.display = bool(jm)
        if not jm:
            table.clear(columns=True)
            return
        metrics = rep["inputs"]["settings"]["metrics"]
        lanes = list(jm["lanes"])
        values = {lane: [fmt.num(jm["lanes"][lane].get(self.level, {}).get(m), 4) for m in metrics] for lane in lanes}
        self._fill(table, metrics, lanes, values)
        title.update(f"Means over all {jm['queries']} judged queries (as trec_eval -c, ir_measures, pytrec_eval, ranx "
                     f"average; above: over {escape(rep['summary']['averaged_over'])}), no intervals")

    def layout_changed(self) -> None:
        """Across the narrow breakpoint the tables turn (lanes × metrics ↔ metrics × lanes)."""
        if self.report is not None:
            self._render_metrics(self.report)
        elif self.ws is not None:
            self._render_means()

    def _render_means(self) -> None:
        """Before the report: the input lanes' means over the positives (the workspace's,
        which the report's cells carry as their value; computed by the load), intervals to
        follow. The derived lanes (rrf, variants) come with the report."""
        ws = self.ws
        table = self.query_one("#ov-metrics", DataTable)
        metrics = [m.key for m in ws.settings.metrics]
        level = self.level if self.level in ws.levels() else "doc"
        values = {}
        for lane in ws.input_lanes:
            means = ws.means_of(ws.per_query(lane, level), metrics)
            values[lane] = [f"{fmt.num(means[m])} …" for m in metrics]
        saved, self.level = self.level, level
        self._fill(table, metrics, list(ws.input_lanes), values)
        self.level = saved
        self.query_one("#ov-caption", Static).update("means over the positives; intervals (and fused lanes) follow with the report")

    def _render_warnings(self) -> None:
        lines = []
        for w in self.ws.warnings:
            where = os.path.basename(w.where) if w.where else "—"
            lines.append(f"[b]{escape(where)}[/]: {escape(w.message)} [dim]({w.count})[/]")
        self.query_one("#ov-warnings", Static).update("\n".join(lines) or "no warnings")

    # ------------------------------------------------------------------ the parsed view (lesson 01)

    def _showcase_tie(self) -> str | None:
        """The demo's tie lesson (q12: a relevant doc tied at rank 1, ordered second)."""
        qid = self.ws.showcase.get("tie")  # from the demo's marker file (kernel/inputs/provenance.py)
        return qid if isinstance(qid, str) and qid in self.ws.qid_index else None

    def _next_tie_qid(self, after: int) -> str | None:
        """The next query code after ``after`` whose parsed list has two equal scores in its
        first rows (judged queries first; ``ranking.tied_queries`` finds them)."""
        ws = self.ws
        lane = ws.lanes[self.parsed_lane]
        qs = tied_queries(lane, PARSED_ROWS)
        judged = ws.classes[qs] != 0
        qs = qs[judged] if judged.any() else qs
        later = qs[qs > after]
        pick = later if later.size else qs
        if pick.size:
            return str(ws.qids[int(pick[0])])
        present = np.flatnonzero(lane.present())
        return str(ws.qids[int(present[0])]) if present.size else None

    def _render_parsed(self) -> None:
        ws = self.ws
        table = self.query_one("#ov-parsed", PlainTable)
        title = self.query_one("#ov-parsed-title", Label)
        columns = ["rank", "doc", "score", "tie", "grade"]
        if self.parsed_qid is None or self.parsed_lane is None:
            table.fill(columns, [])
            title.update("Parsed order: no query")
            return
        q = ws.qid_index[self.parsed_qid]
        lane = ws.lanes[self.parsed_lane]
        rows = lane.rows_of(q)
        doc, score, rank = lane.doc[rows], lane.score[rows], lane.rank[rows]
        n = min(PARSED_ROWS, doc.size)
        grades = ws.judgments.grade_of(np.full(n, q), doc[:n])
        title.update(f"Parsed order — lane [b]{escape(self.parsed_lane)}[/], query [b]{escape(self.parsed_qid)}[/] "
                     f"({doc.size} hits; ties broken on doc id descending)")
        rows = []
        for i in range(n):
            same_prev = i > 0 and score[i] == score[i - 1]
            same_next = i + 1 < doc.size and score[i] == score[i + 1]
            tie = "┬ tie" if same_next and not same_prev else ("├ tie" if same_next else ("└ tie" if same_prev else ""))
            g = int(grades[i])
            rows.append(([str(int(rank[i])), str(ws.doc_id(doc[i])), repr(float(score[i])), tie,
                          "·" if g == NO_JUDGMENT else str(g)], None))
        # fixed widths (``fill``): a frame drawn before the table measured new rows kept the old widths and cut them
        table.fill(columns, rows)

    def action_next_level(self) -> None:
        if self.ws is None or self.report is None:
            return
        levels = list(self.ws.levels())
        self.level = levels[(levels.index(self.level) + 1) % len(levels)] if self.level in levels else "doc"
        self._render_metrics(self.report)
        if self.showing_pr:
            self._draw_pr()

    def action_next_tie(self) -> None:
        if self.ws is None or self.parsed_lane is None:
            return
        cur = self.ws.qid_index.get(self.parsed_qid, -1) if self.parsed_qid else -1
        self.parsed_qid = self._next_tie_qid(cur)
        self._render_parsed()

    def action_next_lane(self) -> None:
        if self.ws is None or not self.ws.input_lanes:
            return
        lanes = self.ws.input_lanes
        i = lanes.index(self.parsed_lane) if self.parsed_lane in lanes else -1
        self.parsed_lane = lanes[(i + 1) % len(lanes)]
        self._render_parsed()

    @on(DataTable.RowSelected, "#ov-parsed")
    def _drill_parsed(self) -> None:
        if self.parsed_qid:
            self.app.open_query(self.parsed_qid)

    # ------------------------------------------------------------------ the edit box (lesson 01)

    @property
    def editing(self) -> bool:
        """The edit box is open (in place of the parsed order and the warnings)."""
        return bool(self.query_one("#ov-edit").display)

    # ------------------------------------------------------------------ the P–R curve

    @property
    def showing_pr(self) -> bool:
        """The P–R curve is shown (in place of the parsed order and the warnings)."""
        return bool(self.query_one("#ov-pr").display)

    def action_toggle_pr(self) -> None:
        show = not self.showing_pr
        if show and self.editing:
            self.action_toggle_edit()
        self.query_one("#ov-bottom").display = not show
        self.query_one("#ov-pr-title").display = self.query_one("#ov-pr").display = show
        if show:
            self._draw_pr()
            # on a short screen that scrolls: the curve is below the tables, so its end shows it
            self.call_after_refresh(self.call_after_refresh, self.scroll_end, animate=False)

    def _draw_pr(self) -> None:
        """The curve of the current level; its points computed once per level in a worker."""
        if self.ws is None:
            return
        if self.pr_rows is None or self.pr_level != self.level or self.pr_ws is not self.ws:
            self.query_one("#ov-pr-note", Static).update("⟳ computing interpolated precision…")
            self._compute_pr(self.level)
            return
        from ..kernel.report.figures import PR_NOTE

        plot = self.query_one("#ov-pr-plot", TermPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        # the input and fused lanes (the cap / document-first variants would stack on them unread)
        lanes = [lane for lane in dict.fromkeys(r["lane"] for r in self.pr_rows)
                 if self.ws.lane_origin.get(lane) != "variant"]
        key = []
        for i, lane in enumerate(lanes):
            pts = [r for r in self.pr_rows if r["lane"] == lane and r["precision"] is not None]
            colour = PR_COLOURS[i % len(PR_COLOURS)]
            plt.plot([r["recall"] for r in pts], [r["precision"] for r in pts], marker="braille", color=colour)
            key.append(f"[{PR_RICH[colour]}]⣀⣀[/] {escape(lane)}")
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        plt.xlabel("recall")
        n = self.pr_rows[0]["n"] if self.pr_rows else 0
        plt.title(f"interpolated precision ({self.pr_level}), mean over {n} positives")
        plot.refresh()
        self.query_one("#ov-pr-note", Static).update("  ".join(key) + "\n" + escape(PR_NOTE))

    @work(thread=True, exclusive=True, group="ov-pr", exit_on_error=False, description="P–R curve")
    def _compute_pr(self, level: str) -> None:
        from ..kernel.report.figures import pr_curve_rows

        ws = self.ws
        rows = pr_curve_rows(ws, level)
        self.app.call_from_thread(self._pr_ready, ws, level, rows)

    @guarded
    def _pr_ready(self, ws: object, level: str, rows: list[dict]) -> None:
        self.pr_rows, self.pr_level, self.pr_ws = rows, level, ws
        if self.is_mounted and self.showing_pr:
            self._draw_pr()

    def action_toggle_edit(self) -> None:
        editing = not self.editing
        if editing and self.showing_pr:
            self.action_toggle_pr()
        self.query_one("#ov-bottom").display = not editing
        self.query_one("#ov-edit-title").display = self.query_one("#ov-edit").display = editing
        if editing:
            if self.edit_generation == 0:  # first opened: parse what the boxes hold
                self._reparse_now()
            self.query_one("#ov-edit-run", TextArea).focus(scroll_visible=False)
            # on a short screen that scrolls: the boxes are the view's last part, so its end shows
            # them with the parse under them (once they are laid out: two frames after the show)
            self.call_after_refresh(self.call_after_refresh, self.scroll_end, animate=False)

    @on(TextArea.Changed, "#ov-edit-run, #ov-edit-qrels")
    def _edited(self) -> None:
        """Every keystroke restarts the quiet period; the parse runs once typing pauses."""
        self.edit_generation += 1
        if self._edit_timer is not None:
            self._edit_timer.stop()
        self._edit_timer = self.set_timer(DEBOUNCE, self._reparse_now)

    def _reparse_now(self) -> None:
        self._edit_timer = None
        self.edit_generation += 1
        run = self.query_one("#ov-edit-run", TextArea).text
        qrels = self.query_one("#ov-edit-qrels", TextArea).text
        relevant = self.ws.settings.relevant if self.ws is not None else 1
        self.query_one("#ov-edit-status", Static).update("⟳ parsing…")
        self.reparse(self.edit_generation, run, qrels, relevant)

    @work(thread=True, exclusive=True, group="reparse", exit_on_error=False, description="parsing the edit box")
    def reparse(self, generation: int, run: str, qrels: str, relevant: int) -> None:
        from ..kernel import reparse
        from ..state import error_line

        try:
            result, error = reparse(run, qrels, relevant), None
        except Exception as exc:  # what is typed is never a fault: the command line's one line, shown in place
            result, error = None, error_line(exc)
        self.app.call_from_thread(self._reparsed, generation, result, error)

    @guarded
    def _reparsed(self, generation: int, result, error: str | None) -> None:
        if generation != self.edit_generation:
            return  # typing went on: a newer parse is coming
        self.edit_result, self.edit_error = result, error
        status = self.query_one("#ov-edit-status", Static)
        table = self.query_one("#ov-edit-parsed", PlainTable)
        if error is not None:
            status.update(f"[b $error]✗[/] {escape(error)}")
            table.fill(["qid", "rank", "doc", "score", "tie", "grade"], [])
            return
        ranks = " · ".join(
            f"{escape(q.qid)}: first relevant at rank {q.first_relevant}" if q.first_relevant
            else f"{escape(q.qid)}: no relevant hit" + ("" if q.relevant_judged else " (none judged relevant)")
            for q in result.queries[:6])
        more = f" · … {len(result.queries) - 6} more" if len(result.queries) > 6 else ""
        status.update(f"[b]✓[/] {len(result.queries)} queries, {result.n_hits} hits · order: {escape(result.tie_rule)}\n"
                      f"{ranks}{more}")
        rows: list[tuple[list[str], str | None]] = []
        for q in result.queries:
            marks = tie_marks([h.score for h in q.hits])
            for h, mark in zip(q.hits, marks):
                if len(rows) == EDIT_ROWS:
                    break
                rows.append(([q.qid, str(h.rank), h.doc, repr(h.score), mark, "·" if h.grade is None else str(h.grade)], None))
        table.fill(["qid", "rank", "doc", "score", "tie", "grade"], rows)
