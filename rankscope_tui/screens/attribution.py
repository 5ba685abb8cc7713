"""3 Attribution: label counts, unique share, the blind stratum; select a label to list
its queries and drill into one (lessons 05–06)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Select, Static

from ..kernel.attribution import misses as A
from ..widgets import fmt
from ..widgets.safe import escape
from ..widgets.tables import PlainTable, QidTable
from .base import ViewScreen, guarded

if TYPE_CHECKING:
    from ..kernel.attribution.misses import Attribution


class AttributionScreen(ViewScreen):
    VIEW = "attribution"
    HELP = """# 3 Attribution

**Lesson 06: whose fault is a miss?** For every positive, from each input lane's first
relevant rank and the window W (what the next stage sees):

- `not_indexed` — no relevant doc is in the corpus (coverage; no lane can help);
- `not_surfaced` — no lane has it inside W: `beyond_window` (some lane has it deeper) or
  `not_retrieved`;
- otherwise the lanes that carried it inside W, joined with `+`.

The **unique share** — positives only one lane surfaces — says whether a lane earns its
place. The blind stratum (`--blind`) is the class the attribution singles out (lesson 05).
Highlight a label to list its queries; Enter drills into one.
"""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.level = "doc"
        self.result: Attribution | None = None
        self.label: str | None = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("level")
            yield Select([("doc", "doc")], value="doc", id="att-level", allow_blank=False)
        with Vertical(id="att-main"):
            yield Static(self.waiting("computing the report"), id="att-summary", classes="panel")
            with Horizontal(id="att-bottom"):
                with Vertical(id="att-left"):
                    yield Label("Labels (positives), overall and per stratum", classes="section-title")
                    yield PlainTable(id="att-counts", cursor_type="row", zebra_stripes=True)
                with Vertical(id="att-right"):
                    yield Label("Queries with the highlighted label (Enter: drill down)", id="att-q-title",
                                classes="section-title")
                    yield QidTable(id="att-queries")

    def refresh_view(self) -> None:
        ws = self.ws
        if ws is None:
            return
        with self.prevent(Select.Changed):
            sel = self.query_one("#att-level", Select)
            sel.set_options([(l, l) for l in ws.levels()])
            sel.value = self.level if self.level in ws.levels() else "doc"
        self.query_one("#att-summary", Static).loading = True
        self.attribute(ws, self.level)

    @work(thread=True, exclusive=True, group="attribution", exit_on_error=False, description="attributing misses")
    def attribute(self, ws, level: str) -> None:
        att = A.attribute_workspace(ws, level)
        self.app.call_from_thread(self._attributed, level, att)

    def worker_failed(self, worker) -> None:
        self.query_one("#att-summary", Static).loading = False

    @guarded
    def _attributed(self, level: str, att) -> None:
        if level != self.level:
            return
        self.result = att
        self.query_one("#att-summary", Static).loading = False
        self._summary(att)
        self._counts(att)
        self._queries()

    def _summary(self, att) -> None:
        L = [f"{att.overall.n} positives, {att.level} level, window W = {att.window} (the candidates the next stage sees)"]
        L.append("Unique share (positives only this lane surfaces inside the window): " + "  ".join(
            f"[b]{escape(u.lane)}[/] {fmt.num(u.share)} ({u.count})" for u in att.overall.unique))
        if att.missing is not None:
            per = ", ".join(f"{escape(l)} {n}" for l, n in att.missing.per_lane)
            L.append(f"Judged queries missing from any lane: [b]{att.missing.missing_from_any}[/] of "
                     f"{att.missing.judged} ({per})")
        cov = att.coverage
        if cov.assessed:
            L.append(f"Coverage: {cov.not_in_corpus} of {cov.relevant_pairs} relevant (query, doc) pairs are not in the "
                     f"corpus; {cov.queries_not_indexed} positives have no relevant doc indexed")
        else:
            L.append("Coverage not assessed (no --corpus): not_indexed is never assigned")
        b = att.blind
        if b is not None:
            inside, overall = dict(b.misses_in_stratum), dict(b.misses_overall)
            per = "; ".join(f"{escape(l)} misses {inside[l]} of {b.size} here, {overall[l]} overall" for l in inside)
            L.append(f"[b]Blind stratum[/] {escape(b.stratification)} = [b]{escape(b.label)}[/] ({b.size} positives): {per}")
        self.query_one("#att-summary", Static).update("\n".join(L))

    def _counts(self, att) -> None:
        t = self.query_one("#att-counts", PlainTable)
        t.clear(columns=True)
        t.add_column("label", key="label")
        t.add_column("overall", key="overall")
        cols = []
        for strat, per in att.strata:
            for lab, counts in per:
                cols.append(dict(counts.counts))
                t.add_column(f"{lab}" if len(att.strata) == 1 else f"{strat}={lab}")
        labels = [name for name, _ in att.overall.counts]
        for name, n in att.overall.counts:
            t.add_row(name, "—" if n is None else str(n), *[("—" if c.get(name) is None else str(c.get(name))) for c in cols],
                      key=name)
        if self.label not in labels:
            self.label = next((name for name, n in att.overall.counts if n), labels[0] if labels else None)
        if self.label in labels:
            t.move_cursor(row=labels.index(self.label))

    def _queries(self) -> None:
        ws, att = self.ws, self.result
        if att is None:
            return
        t = self.query_one("#att-queries", QidTable)
        t.clear(columns=True)
        t.add_columns("qid", "label", *[f"rank {l}" for l in att.lanes], "text")
        ranks = {l: ws.first_relevant_rank(l, att.level) for l in att.lanes}
        n = 0
        for q, lab in zip(att.positives.tolist(), att.labels.tolist()):
            if self.label is not None and lab != self.label:
                continue
            qid = str(ws.qids[q])
            t.add_row(qid, lab, *[str(int(ranks[l][q])) for l in att.lanes], ws.query_text.get(qid, "")[:50], key=qid)
            n += 1
        self.query_one("#att-q-title", Label).update(
            f"Positives labelled [b]{escape(str(self.label))}[/] ({n}); rank = first relevant, 0 = not retrieved "
            f"(Enter: drill down)")

    @on(DataTable.RowHighlighted, "#att-counts")
    def _label(self, event: DataTable.RowHighlighted) -> None:
        if getattr(event.row_key, "value", None) and getattr(event.row_key, "value", None) != self.label and self.result is not None:
            self.label = str(getattr(event.row_key, "value", None))
            self._queries()

    @on(Select.Changed, "#att-level")
    def _level(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL and str(event.value) != self.level:
            self.level = str(event.value)
            self.refresh_view()
