"""2 Strata: the per-stratum table, stratification and metric chosen (lesson 05)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Select, Static

from ..kernel.report.caveats import SMALL_SAMPLE_FOOTNOTE, SMALL_SAMPLE_MARK, small_sample
from ..kernel.settings import DEFAULT_METRIC
from ..widgets import fmt
from ..widgets.safe import escape
from ..widgets.tables import PlainTable, QidTable
from .base import ViewScreen


class StrataScreen(ViewScreen):
    VIEW = "strata"
    BINDINGS = [Binding("v", "toggle_variants", "Variants", id="strata.variants",
                        tooltip="Show the cap / document-first variant lanes too")]
    HELP = """# 2 Strata

**Lesson 05.** A stratum is a label per query. A mean can be respectable while one class
of query is at zero, so every table is reported per stratum and overall. Strata tables
are descriptive; comparisons give verdicts overall.

Choose the stratification, the metric and the level. Highlight a stratum to list its
queries with each lane's value; Enter on a query drills into it. `v` adds the cap /
document-first variant lanes.
"""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.stratification: str | None = None
        self.metric: str | None = None
        self.level = "doc"
        self.label: str | None = None
        self.show_variants = False

    @property
    def figure_metric(self) -> str | None:
        return self.metric

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("stratification")
            yield Select([], id="st-strat", allow_blank=True, prompt="(none)")
            yield Label("metric")
            yield Select([], id="st-metric", allow_blank=True, prompt="metric")
            yield Label("level")
            yield Select([("doc", "doc")], id="st-level", value="doc", allow_blank=False)
        with Vertical(id="st-main"):
            yield Static(self.waiting("computing the report"), id="st-note", classes="caption")
            yield PlainTable(id="st-table", cursor_type="row", zebra_stripes=True)
            yield Label("Queries of the highlighted stratum (Enter: drill down)", id="st-q-title", classes="section-title")
            yield QidTable(id="st-queries")

    def refresh_view(self) -> None:
        rep = self.report
        note = self.query_one("#st-note", Static)
        if rep is None:
            note.update(self.waiting("computing the report"))
            return
        strata = rep.get("strata") or {}
        metrics = rep["inputs"]["settings"]["metrics"]
        levels = list(self.ws.levels())
        if not strata:
            note.update("No stratification loaded (--strata FILE, qid<TAB>label).")
            return
        if self.stratification not in strata:
            self.stratification = next(iter(strata))
        if self.metric not in metrics:
            self.metric = DEFAULT_METRIC if DEFAULT_METRIC in metrics else metrics[0]
        with self.prevent(Select.Changed):
            s = self.query_one("#st-strat", Select)
            s.set_options([(n, n) for n in strata])
            s.value = self.stratification
            m = self.query_one("#st-metric", Select)
            m.set_options([(k, k) for k in metrics])
            m.value = self.metric
            lv = self.query_one("#st-level", Select)
            lv.set_options([(x, x) for x in levels])
            lv.value = self.level if self.level in levels else "doc"
        self._render_table()

    def _render_table(self) -> None:
        """The stratum table, rebuilt with its columns (each as wide as its widest cell) on
        every change, then the highlighted stratum's queries."""
        rep = self.report
        strata = (rep or {}).get("strata") or {}
        if self.stratification not in strata:  # no stratification loaded or chosen: no table at all
            self._clear_tables()
            return
        block = strata[self.stratification]
        assert rep is not None  # it holds the strata
        lanes = self._lanes()
        # narrow: intervals as ".23–.37" (the overview's form), so three lanes fit in 80 columns
        marked = False

        def cell(c):
            nonlocal marked
            if small_sample(c):  # the kernel's small-sample flag: the mark, explained in the note
                marked = True
                return fmt.cell(c, compact=self.narrow) + " " + SMALL_SAMPLE_MARK
            return fmt.cell(c, compact=self.narrow)
        rows = []
        for label, by_lane in block.items():
            n = next(iter(by_lane.values()))[self.level][self.metric].get("n", "")
            rows.append(([label, str(n), *[cell(by_lane[l][self.level].get(self.metric)) for l in lanes]], label))
        overall = rep["lanes"]
        n = next(iter(overall.values()))[self.level][self.metric].get("n", "")
        rows.append((["overall", str(n), *[cell(overall[l][self.level].get(self.metric)) for l in lanes]],
                     "\0overall"))
        self.query_one("#st-table", PlainTable).fill(["stratum", "n", *lanes], rows)
        self.query_one("#st-note", Static).update(
            f"{self.metric} at {self.level} level per stratum of [b]{escape(self.stratification)}[/]; "
            f"{escape(rep['definitions'].get(self.metric, ''))}. Descriptive: intervals per cell, not simultaneous."
            + (f" {SMALL_SAMPLE_MARK} {SMALL_SAMPLE_FOOTNOTE}." if marked else "")
        )
        if self.label not in block:
            self.label = next(iter(block), None)
        self._render_queries()

    def layout_changed(self) -> None:
        if self.report is not None and self.stratification is not None:
            self._render_table()

    def _clear_tables(self) -> None:
        self.query_one("#st-table", PlainTable).clear(columns=True)
        self.query_one("#st-queries", QidTable).clear(columns=True)
        self.label = None
        self.query_one("#st-q-title", Label).update("Queries of the highlighted stratum (Enter: drill down)")
        strata = (self.report or {}).get("strata") or {}
        self.query_one("#st-note", Static).update(
            "No stratification chosen: pick one above." if strata
            else "No stratification loaded (--strata FILE, qid<TAB>label).")

    def _render_queries(self) -> None:
        ws = self.ws
        table = self.query_one("#st-queries", QidTable)
        lanes = [l for l in self._lanes() if l in ws.lanes]
        if self.label is None or self.stratification not in ws.strata:
            table.clear(columns=True)
            return
        labels = ws.strata[self.stratification]
        pos = ws.positives
        codes = ws.in_display_order(pos[labels[pos] == self.label])
        cols = {lane: ws.per_query(lane, self.level)[self.metric] for lane in lanes}
        rows = []
        for q in codes.tolist():
            qid = str(ws.qids[q])
            rows.append(([qid, *[fmt.num(cols[l][q]) for l in lanes], ws.query_text.get(qid, "")[:60]], qid))
        table.fill(["qid", *lanes, "text"], rows)
        self.query_one("#st-q-title", Label).update(
            f"Positives in stratum [b]{escape(self.label)}[/] ({codes.size}), {self.metric} per lane (Enter: drill down)")

    def _lanes(self) -> list[str]:
        lanes = list((self.report or {}).get("lanes", {}))
        if self.show_variants:
            return lanes
        return [l for l in lanes if self.ws.lane_origin.get(l) != "variant"]

    def action_toggle_variants(self) -> None:
        self.show_variants = not self.show_variants
        if self.report is not None and self.stratification is not None:
            self._render_table()

    @on(DataTable.RowHighlighted, "#st-table")
    def _stratum_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = getattr(event.row_key, "value", None)
        if key and not key.startswith("\0") and key != self.label:
            self.label = key
            self._render_queries()

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        if self.report is None or not (self.report.get("strata") or {}):
            return  # nothing to stratify (no --strata): the selectors have nothing to change
        if event.select.id == "st-strat" and event.value is Select.NULL:  # "(none)": no table, not the old one
            self.stratification = None
            self._clear_tables()
            return
        if event.value is Select.NULL or self.stratification is None and event.select.id != "st-strat":
            return
        if event.select.id == "st-strat":
            self.stratification = str(event.value)
            self.label = None
        elif event.select.id == "st-metric":
            self.metric = str(event.value)
        elif event.select.id == "st-level":
            self.level = str(event.value)
        self._render_table()
