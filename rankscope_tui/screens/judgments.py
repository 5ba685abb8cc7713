"""J Judgments: how much of each lane's numbers rests on what was judged and on tie order.

Per lane, for the chosen measure: the unjudged hits within its cutoff (holes) and the mean
value with them counted non-relevant .. relevant (report.json's ``coverage`` block), and the
tie exposure (its ``ties`` block). Below, the chosen lane's queries with holes, widest bound
gap first; the highlighted query's unjudged hits are listed with their texts (``--docs``).
Enter drills into the query. With a second qrels file (``tui --qrels-b``) the agreement of
the two sets of labels (``rankscope agree``'s tables) is shown at the bottom."""

from __future__ import annotations

from typing import Any

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Select, Static

from ..kernel.settings import DEFAULT_METRIC
from ..widgets import fmt
from ..widgets.safe import escape
from ..widgets.tables import PlainTable, QidTable
from .base import ViewScreen, guarded

#: Queries listed at most (the widest gaps first): the list is for reading, the report has all.
MAX_QUERIES = 200


def _lines(text: str) -> str:
    """A multi-line text for a Static: each line escaped (markup and control characters),
    the line breaks kept."""
    return "\n".join(escape(line) for line in text.splitlines())


class JudgmentsScreen(ViewScreen):
    VIEW = "judgments"
    HELP = """# J Judgments

**Can you trust the judgments?** A measure reads only judged hits: an unjudged hit
(a *hole*) adds nothing, as if judged non-relevant. For each lane and the chosen measure:

- `holes` — unjudged hits within the measure's cutoff (the whole list for an uncut
  measure), mean over the positives; `with holes` — positives with at least one;
- `non-rel .. rel` — the mean value with every hole added to the qrels as grade 0 / as
  relevant (a relevant hole also raises R and the ideal DCG);
- `tie-dep.` and `ties worst..best` — positives whose value changes with the order of
  tied scores, and the mean at the worst / best order.

The lower table lists the chosen lane's positives with holes, widest gap first; the
highlighted query's unjudged hits show below with their texts (`--docs`). Enter drills
into the query. `rankscope pool --budget N` writes the pairs worth judging next;
`--condensed` evaluates on judged hits only (trec_eval -J). Given a second set of labels
(`rankscope tui --qrels-b PATH`), the bottom shows their agreement: κ and weighted κ with
intervals, the confusion of grades, and whether the lanes' order changes (`rankscope agree`).
"""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.metric: str | None = None
        self.lane: str | None = None
        self.qid: str | None = None
        self.rows: list[dict[str, Any]] = []  # the listed queries of (lane, metric)
        self.agreement: tuple[str, str] | None = None  # (the second qrels, its agreement text)

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("metric")
            yield Select([], id="jd-metric", allow_blank=True, prompt="metric")
            yield Label("lane")
            yield Select([], id="jd-lane", allow_blank=True, prompt="lane")
        with Vertical(id="jd-main"):
            yield Static(self.waiting("computing the report"), id="jd-note", classes="caption")
            yield PlainTable(id="jd-lanes", cursor_type="row", zebra_stripes=True)
            with Horizontal(id="jd-bottom"):
                with Vertical(id="jd-left"):
                    yield Label("Queries with holes (Enter: drill down)", id="jd-q-title", classes="section-title")
                    yield QidTable(id="jd-queries")
                with Vertical(id="jd-right"):
                    yield Label("Unjudged hits of the highlighted query", id="jd-h-title", classes="section-title")
                    yield PlainTable(id="jd-hits", cursor_type="row", zebra_stripes=True)
            yield Static("", id="jd-agreement", classes="caption")

    # ------------------------------------------------------------------ data

    def refresh_view(self) -> None:
        rep = self.report
        note = self.query_one("#jd-note", Static)
        if rep is None:
            note.update(self.waiting("computing the report"))
            return
        cov = rep.get("coverage")
        if not cov:
            note.update("No judgment coverage: the inputs hold no rankings (per-query tables).")
            return
        lanes = list(cov["lanes"])
        metrics = list(next(iter(cov["lanes"].values()), {}))
        if not metrics:
            note.update("No measure to show.")
            return
        if self.metric not in metrics:
            self.metric = DEFAULT_METRIC if DEFAULT_METRIC in metrics else next((m for m in metrics if "@" in m),
                                                                                  metrics[0])
        if self.lane not in lanes:
            self.lane = lanes[0]
        with self.prevent(Select.Changed):
            m = self.query_one("#jd-metric", Select)
            m.set_options([(k, k) for k in metrics])
            m.value = self.metric
            s = self.query_one("#jd-lane", Select)
            s.set_options([(k, k) for k in lanes])
            s.value = self.lane
        self._render_lanes()
        self._render_agreement()
        self.list_queries(self.ws, self.lane, self.metric)

    def _render_lanes(self) -> None:
        rep = self.report
        assert rep is not None and self.metric is not None
        cov, ties = rep["coverage"], rep.get("ties") or {}
        rows = []
        for lane, cells in cov["lanes"].items():
            c = cells[self.metric]
            t = ((ties.get("lanes") or {}).get(lane) or {}).get("metrics", {}).get(self.metric)
            tie_dep = "—" if t is None else str(t["dependent"])
            tie_rng = "—" if t is None else f"{fmt.num(t['worst'])}..{fmt.num(t['best'])}"
            cells_ = [lane, fmt.num(c["holes"], 2), str(c["queries_with_holes"]), fmt.num(c["observed"]),
                      f"{fmt.num(c['as_nonrelevant'])}..{fmt.num(c['as_relevant'])}", fmt.num(c["gap"]), tie_dep,
                      tie_rng]
            rows.append(([x for i, x in enumerate(cells_) if i not in self._hidden()], lane))
        header = ["lane", "holes", "with holes", "value", "non-rel..rel", "gap", "tie-dep.", "ties worst..best"]
        table = self.query_one("#jd-lanes", PlainTable)
        with self.prevent(DataTable.RowHighlighted):  # refilling moves the cursor: not a choice of lane
            table.fill([x for i, x in enumerate(header) if i not in self._hidden()], rows)
            names = [key for _, key in rows]
            if self.lane in names:
                table.move_cursor(row=names.index(self.lane))
        cutoff = next(iter(cov["lanes"].values()))[self.metric]["cutoff"]
        where = "the whole list" if cutoff == "list" else f"the top {cutoff}"
        lead = ("Condensed lists (trec_eval -J): unjudged hits were removed before every cutoff, so no lane has a "
                "hole. " if cov["condensed"] else "")
        self.query_one("#jd-note", Static).update(
            f"{lead}[b]{escape(self.metric)}[/]: unjudged hits within {escape(where)} and the value with them counted "
            f"non-relevant .. relevant; means over {cov['queries']} positives. Ties: positives whose value depends "
            f"on the order of tied scores.")

    def _hidden(self) -> tuple[int, ...]:
        """Columns of the lanes table left out on a narrow screen (the value and the tie
        extremes: the bounds, the gap and the tie-dependent count fit 80 columns whole)."""
        return (3, 7) if self.narrow else ()

    def layout_changed(self) -> None:
        if self.report is not None and self.metric is not None and self.report.get("coverage"):
            self._render_lanes()

    def _render_agreement(self) -> None:
        """The agreement of two sets of labels (``rankscope agree``'s tables) when the
        dashboard was given a second qrels file (``--qrels-b``); a line saying so otherwise."""
        w = self.query_one("#jd-agreement", Static)
        second = self.options.qrels_b
        if not second:
            w.update("Agreement of two sets of labels: none loaded (give rankscope tui --qrels-b PATH).")
            return
        if self.agreement is not None and self.agreement[0] == second:
            w.update(_lines(self.agreement[1]))
            return
        w.update(escape(f"Agreement with {second}: computing…"))
        self.agree(self.ws, second)

    @work(thread=True, exclusive=True, group="judgments-agree", exit_on_error=False, description="agreement of labels")
    def agree(self, ws, second: str) -> None:
        """``rankscope agree``'s tables for the loaded qrels (A) and ``second`` (B), as text;
        bad input (no pair in common, another scale) is its one line."""
        from ..kernel import agreement_tables
        from ..kernel.errors import InputError
        from ..render.agree import render_agree

        try:
            text = "Agreement of two sets of labels (A: --qrels, B: --qrels-b)\n" + render_agree(
                agreement_tables(ws, second).as_dict())
        except InputError as exc:
            text = f"Agreement with {second}: {exc}"
        self.app.call_from_thread(self._agreed, second, text)

    @guarded
    def _agreed(self, second: str, text: str) -> None:
        self.agreement = (second, text)
        if second == self.options.qrels_b:
            self.query_one("#jd-agreement", Static).update(_lines(text))

    @work(thread=True, exclusive=True, group="judgments", exit_on_error=False, description="listing unjudged hits")
    def list_queries(self, ws, lane: str, metric: str) -> None:
        """The lane's positives with holes for ``metric``, widest gap first (at most
        ``MAX_QUERIES``), each with its unjudged hits within the cutoff."""
        c = ws.judgment_coverage(lane)
        k = next(m.k for m in ws.settings.metrics if m.key == metric)
        pos = ws.positives
        holes, gap = c.holes[metric], c.gap(metric)
        value = ws.per_query(lane, "doc")[metric]
        codes = pos[holes[pos] > 0]
        order = np.lexsort((codes, -holes[codes], -gap[codes]))[:MAX_QUERIES]
        L = ws.lanes[lane]
        rows = []
        for q in codes[order].tolist():
            sl = L.rows_of(q)
            grade = ws.judgments.grade_of(L.qid[sl], L.doc[sl])
            within = (grade < 0) if k is None else (grade < 0) & (L.rank[sl] <= k)
            hits = [(int(r), ws.doc_id(int(d)), float(s)) for r, d, s in
                    zip(L.rank[sl][within], L.doc[sl][within], L.score[sl][within])]
            rows.append({"qid": str(ws.qids[q]), "holes": int(holes[q]), "value": float(value[q]),
                         "nonrel": float(c.as_nonrelevant[metric][q]), "rel": float(c.as_relevant[metric][q]),
                         "gap": float(gap[q]), "hits": hits})
        self.app.call_from_thread(self._listed, lane, metric, rows, int(codes.size))

    def worker_failed(self, worker) -> None:
        self.query_one("#jd-q-title", Label).update("Queries with holes: could not be listed")

    @guarded
    def _listed(self, lane: str, metric: str, rows: list[dict[str, Any]], total: int) -> None:
        if (lane, metric) != (self.lane, self.metric):
            return
        self.rows = rows
        text = self.ws.query_text
        self.query_one("#jd-queries", QidTable).fill(
            ["qid", "holes", "value", "non-rel..rel", "gap", "text"],
            [([r["qid"], str(r["holes"]), fmt.num(r["value"]), f"{fmt.num(r['nonrel'])}..{fmt.num(r['rel'])}",
               fmt.num(r["gap"]), text.get(r["qid"], "")[:50]], r["qid"]) for r in rows])
        shown = f"the {len(rows)} widest gaps of {total}" if total > len(rows) else str(total)
        self.query_one("#jd-q-title", Label).update(
            f"[b]{escape(lane)}[/]: positives with holes for {escape(metric)} ({shown}), widest gap first "
            "(Enter: drill down)")
        if self.qid not in {r["qid"] for r in rows}:
            self.qid = rows[0]["qid"] if rows else None
        self._render_hits()

    def _render_hits(self) -> None:
        row = next((r for r in self.rows if r["qid"] == self.qid), None)
        table = self.query_one("#jd-hits", PlainTable)
        title = self.query_one("#jd-h-title", Label)
        if row is None:
            table.clear(columns=True)
            title.update("Unjudged hits of the highlighted query: none listed")
            return
        docs = self.ws.doc_text
        table.fill(["rank", "doc", "score", "text"],
                   [([str(r), d, f"{s:.6g}", docs.get(d, "")[:70]], f"{row['qid']}\0{r}") for r, d, s in row["hits"]])
        title.update(f"Unjudged hits of query [b]{escape(row['qid'])}[/] within the cutoff ({len(row['hits'])})"
                     + ("" if docs else "; no doc texts loaded (--docs)"))

    # ------------------------------------------------------------------ events

    @on(DataTable.RowHighlighted, "#jd-queries")
    def _query_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = getattr(event.row_key, "value", None)
        if key and key != self.qid:
            self.qid = str(key)
            self._render_hits()

    @on(DataTable.RowHighlighted, "#jd-lanes")
    def _lane_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = getattr(event.row_key, "value", None)
        if key and key != self.lane and self.report is not None:
            self.lane = str(key)
            with self.prevent(Select.Changed):
                self.query_one("#jd-lane", Select).value = self.lane
            self.list_queries(self.ws, self.lane, self.metric)

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or self.report is None or not self.report.get("coverage"):
            return
        if event.select.id == "jd-metric":
            self.metric = str(event.value)
            self._render_lanes()
        elif event.select.id == "jd-lane":
            self.lane = str(event.value)
        self.list_queries(self.ws, self.lane, self.metric)
