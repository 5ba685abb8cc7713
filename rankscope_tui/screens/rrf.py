"""4 Fusion (RRF and every fusion method): a k slider recomputing the fused lane live, the chosen metric against k, and the
query whose correct top hit fusion dilutes (lesson 07).

Every number comes from the kernel's RRF-at-k entry point (``kernel/fusion/rrf_at_k.py``): at
the report's k it is the report's fused lane and numbers; other k go through an
``RRFExplorer`` (the input lanes prepared once, a few fused lanes kept)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Select, Static

from ..kernel.fusion.combine import DEFAULT_NORM, K_METHODS, METHODS, NORMS, RANK_METHODS
from ..kernel.fusion.rrf_at_k import FusedAtK, MethodAgainstBest, RRFExplorer, best_k, method_against_best
from ..kernel.report.figures import RRF_CURVE_KS as CURVE_KS
from ..kernel.settings import CompareSettings, LoadSettings  # the points `rankscope plot rrf-k` draws too
from ..widgets import fmt
from ..widgets.kslider import KSlider
from ..widgets.plot import TermPlot
from ..widgets.safe import escape
from ..widgets.safe import text as safe_text
from ..widgets.tables import Filling, PlainTable, QidTable, prepare
from .base import ViewScreen, guarded

if TYPE_CHECKING:
    from textual.timer import Timer

K_MIN, K_MAX = 1, 200
CURVE_REDRAW = 0.2  # seconds: at most one plot redraw per window while the curve's points arrive
#: seconds the slider rests before the per-query method table follows its k (rrf, wrrf): the
#: table holds a row per positive query (7,000 at 2 × 7M lines) and refilling it at every
#: step took the event loop and the fusion's time away from the plot a person is watching
METHOD_QUIET = 0.3
SHOW = 10
X_TICKS = (1, 50, 100, 150, 200)  # k is an integer: integer ticks
# the input lanes' reference lines: colours that show on the dark and the light themes
LANE_COLOURS = ("orange", "magenta", "cyan", "red", "blue", "white")
CURVE_COLOUR, BEST_COLOUR = "yellow", "green"
_RICH = {"orange": "dark_orange", "magenta": "magenta", "cyan": "cyan", "red": "red", "blue": "blue",
         "white": "white", "yellow": "yellow", "green": "green"}  # the same colours in the key line


class RRFScreen(ViewScreen):
    VIEW = "rrf"
    BINDINGS = [Binding("enter", "drill", "Open query", id="rrf.drill", tooltip="Drill into the query shown on the right")]
    HELP = """# 4 Fusion

**Lesson 07: reciprocal rank fusion, and what it dilutes.** score(d) = Σ 1/(k + rank). Rank
1 in one lane scores 1/61 ≈ 0.0164; ranks 3 and 5 in two lanes score ≈ 0.0313 — presence in
two lanes beats being first in one. Small k trusts the top of each lane; large k trusts
presence. The cost: a lane's confident wrong top hits can dilute another lane's correct
top hit. The view opens on such a query.

←/→ move k by 1, shift+←/→ by 10, Home/End to the ends (when the slider has focus; Tab
moves focus). The plot shows the chosen metric (mean over positives) against k, input
lanes as horizontal lines. k picked here is **chosen on these queries: in-sample**.
Enter drills into the query shown (or, in the list, the highlighted one).

**Fusion methods.** `method` picks any fusion method rankscope knows (`--fuse METHOD[:NORM]`)
and `norm` its score normalisation (rank methods — rrf, wrrf, borda, isr, logisr — read
ranks and take none; wrrf and wsum weigh the lanes equally here). The table under the
means lists, per positive query, the method's value of the metric beside the best single
input lane's (highest mean) and their difference, the largest losses first. rrf and wrrf
use the slider's k (the table follows once the slider rests).
"""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.metric: str | None = None
        self.current: FusedAtK | None = None
        self.curve: dict[float, dict] = {}  # k -> the fused lane's means at k
        self.focus_qid: str | None = None
        self.drawn_k: float | None = None
        self.redraws = 0
        self._explorer: RRFExplorer | None = None
        self._curve_redraw: Timer | None = None
        self._method_timer: Timer | None = None  # the method table's wait for the slider to rest
        self._wanted_k: int | None = None  # the k the slider asks for
        self._in_flight = False  # a slider fusion is running
        self.slider_fusions: list[int] = []  # every k the slider fused, in order (tests count them)
        self._method_wanted: tuple[str, str, float] | None = None  # the method table asked for
        self._method_in_flight = False
        self._last_changed = 0.0
        self.last_latency: float | None = None
        self.kernel_seconds: float | None = None  # the drawn k's kernel call (benchmarks read it)
        self._ranked_for: str | None = None
        self._diluted_shown: tuple | None = None
        self.method = "rrf"  # the fusion method the per-query table shows (combine.METHODS)
        self.norm = DEFAULT_NORM  # its normalisation, for a score method
        self.method_result: MethodAgainstBest | None = None

    @property
    def figure_metric(self) -> str | None:
        return self.metric

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls", id="rrf-controls"):
            yield KSlider(int(LoadSettings().rrf_k), K_MIN, K_MAX, id="rrf-k")
            yield Label("metric")
            yield Select([], id="rrf-metric", allow_blank=True, prompt="metric")
        with Horizontal(classes="controls", id="rrf-fusion-controls"):  # a row of its own: fits 80 columns
            yield Label("fusion method")
            yield Select([(m, m) for m in METHODS], id="rrf-method", value="rrf", allow_blank=False)
            yield Label("norm")
            yield Select([(n, n) for n in NORMS], id="rrf-norm", value=DEFAULT_NORM, allow_blank=False, disabled=True)
        with Horizontal(id="rrf-main"):
            with Vertical(id="rrf-left"):
                yield TermPlot(id="rrf-plot")
                yield Static("", id="rrf-best", classes="caption")
                yield PlainTable(id="rrf-means", cursor_type="none", zebra_stripes=True)
                yield Static("", id="rrf-method-note", classes="caption")
                yield QidTable(id="rrf-method-table")
            with Vertical(id="rrf-right"):
                yield Static(self.waiting("fusing"), id="rrf-focus-head", classes="panel")
                yield Horizontal(id="rrf-rankings")
                yield Label("Queries fusion dilutes at this k (Enter: drill down)", classes="section-title")
                yield QidTable(id="rrf-diluted")

    @property
    def k(self) -> int:
        return self.query_one("#rrf-k", KSlider).value

    def set_k(self, k: int) -> None:
        self.query_one("#rrf-k", KSlider).value = k

    # ------------------------------------------------------------------ data

    def refresh_view(self) -> None:
        ws = self.ws
        if ws is None:
            return
        if len(ws.input_lanes) < 2:
            self.query_one("#rrf-focus-head", Static).update("RRF needs two or more lanes.")
            return
        metrics = [m.key for m in ws.settings.metrics]
        if self.metric not in metrics:
            first = CompareSettings().metrics[0]  # the metric every picker starts on
            self.metric = first if first in metrics else metrics[0]
        with self.prevent(Select.Changed):
            sel = self.query_one("#rrf-metric", Select)
            sel.set_options([(m, m) for m in metrics])
            sel.value = self.metric
        slider = self.query_one("#rrf-k", KSlider)
        with self.prevent(KSlider.Changed):
            slider.value = int(ws.settings.rrf_k)
        self.state.exploratory.move_rrf_k(slider.value, int(ws.settings.rrf_k))  # back at the report's k
        self._explorer = RRFExplorer(ws)  # the slider's and the curve's fused lanes: a few at a time
        self.curve = {}
        self.current = None
        self.focus_qid = None
        self._ranked_for = None
        self._diluted_shown = None
        self.query_one("#rrf-means", DataTable).clear(columns=True)
        self.method_result = None
        self.recompute(slider.value)
        self.compute_curve()
        slider.focus()

    # ------------------------------------------------------------------ the slider: one fusion in flight, the latest k next

    @on(KSlider.Changed, "#rrf-k")
    def _k_changed(self, event: KSlider.Changed) -> None:
        self._last_changed = time.perf_counter()
        if self.ws is None or self._explorer is None:
            return
        self.state.exploratory.move_rrf_k(int(event.value), int(self.ws.settings.rrf_k))
        if self.method in K_METHODS:
            # the method table follows k once the slider rests: until then its pending work
            # (rows still to add, a table being made) is for a k the slider has left, and it
            # would take the event loop and the interpreter from the step a person watches
            self.query_one("#rrf-method-table", QidTable).stop_filling()
            self._method_wanted = None
        self.recompute(event.value)

    def recompute(self, k: int) -> None:
        """Ask for the fused lane at ``k``. One fusion runs at a time (a thread cannot be
        stopped midway): keys pressed meanwhile only move the wanted k, and when the running
        fusion is in, the latest k is fused next, never the ones passed on the way."""
        self._wanted_k = int(k)
        if not self._in_flight:
            self._start_fusion()

    def _start_fusion(self) -> None:
        if self._explorer is None or self._wanted_k is None:
            return
        self._in_flight = True
        self.fuse_at(self._explorer, self._wanted_k)

    @work(thread=True, exclusive=True, group="rrf", exit_on_error=False, description="fusing")
    def fuse_at(self, explorer: RRFExplorer, k: int) -> None:
        t = time.perf_counter()
        try:
            result = self._fuse(explorer, k)
        except BaseException:  # the app shows the error; the slider's latest k is still fused
            self.app.call_from_thread(self._fusion_over, explorer, k, None)
            raise
        self.app.call_from_thread(self._fusion_over, explorer, k, result, time.perf_counter() - t)

    def _fuse(self, explorer: RRFExplorer, k: int) -> FusedAtK:
        """The slider's fusion at ``k`` (every call is one k the slider computed)."""
        self.slider_fusions.append(k)
        return explorer.at(k)

    def _fusion_over(self, explorer: RRFExplorer, k: int, r: FusedAtK | None, elapsed: float | None = None) -> None:
        self._in_flight = False
        if not self.is_mounted:
            return
        if explorer is not self._explorer:  # the data changed meanwhile: fuse on the new explorer
            self._start_fusion()
            return
        if r is not None:
            self._fused(r, elapsed)
        if self._wanted_k is not None and self._wanted_k != k:  # the slider moved on meanwhile
            self._start_fusion()

    @guarded
    def _fused(self, r: FusedAtK, elapsed: float | None = None) -> None:
        self.curve.setdefault(r.k, r.means)
        if r.k != self.k:  # stale: the slider has moved on
            return
        self.current = r
        self.state.exploratory.rrf_fused(r.k, r.means)
        self.kernel_seconds = elapsed
        if self.focus_qid is None:
            self.focus_qid = self._opening_query(r)
        self._draw_plot()
        self._draw_means()
        self._draw_focus()
        self._draw_diluted()
        if self.method_result is None or self.method_result.metric != self.metric:
            self.refresh_method()
        elif self.method in K_METHODS and self.method_result.k != r.k:
            self._method_when_resting()
        self.drawn_k = r.k
        self.redraws += 1
        self.last_latency = time.perf_counter() - self._last_changed if self._last_changed else None

    @work(thread=True, exclusive=True, group="rrf-curve", exit_on_error=False, description="metric against k")
    def compute_curve(self) -> None:
        explorer = self._explorer
        if explorer is None:
            return
        for k in CURVE_KS:
            if k in self.curve:
                continue
            from textual.worker import get_current_worker

            worker = get_current_worker()
            while self._in_flight and not worker.is_cancelled:  # the slider's k first: a person waits for it
                time.sleep(0.005)
            if worker.is_cancelled:
                return
            r = explorer.at(k)
            self.app.call_from_thread(self._curve_point, r)

    @guarded
    def _curve_point(self, r: FusedAtK) -> None:
        """A point of the metric-against-k curve: the plot is redrawn at most every
        ``CURVE_REDRAW`` seconds while points arrive (each redraw rebuilds the figure on the
        event loop), and at once with the last point."""
        self.curve.setdefault(r.k, r.means)
        if self.current is None:
            return
        if all(k in self.curve for k in CURVE_KS):
            if self._curve_redraw is not None:
                self._curve_redraw.stop()
                self._curve_redraw = None
            self._draw_plot()
        elif self._curve_redraw is None:
            self._curve_redraw = self.set_timer(CURVE_REDRAW, self._redraw_curve)

    def _redraw_curve(self) -> None:
        self._curve_redraw = None
        if self.current is not None and self.is_mounted:
            self._draw_plot()

    def _opening_query(self, r: FusedAtK) -> str | None:
        """A query fusion dilutes (the demo's showcase when it is one)."""
        ws = self.ws
        codes = sorted({int(q) for qs in r.diluted.values() for q in qs})
        want = ws.qid_index.get(str(ws.showcase.get("dilution")))  # showcase: demo data only
        if want in codes:
            return str(ws.qids[want])
        if codes:
            return str(ws.qids[codes[0]])
        return self.app.qid

    # ------------------------------------------------------------------ drawing

    def _draw_plot(self) -> None:
        plot = self.query_one("#rrf-plot", TermPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        m = self.metric
        if m is None:  # drawn once the metrics are known
            return
        ks = sorted(self.curve)
        ys = [self.curve[k][m] for k in ks]
        # the legend is the key line under the plot (inside the plot it covered the curve's small k)
        if ks:
            plt.plot(ks, ys, marker="braille", color=CURVE_COLOUR)
        ws = self.ws
        for i, lane in enumerate(ws.input_lanes):  # a coloured reference line per input lane
            y = ws.mean(lane, "doc", m)
            plt.plot([K_MIN, K_MAX], [y, y], marker="─", color=LANE_COLOURS[i % len(LANE_COLOURS)])
        best = best_k(self.curve, m)
        if best is not None:
            plt.scatter([best[0]], [best[1]], marker="◆", color=BEST_COLOUR)
        if self.current is not None:
            plt.scatter([self.current.k], [self.current.means[m]], marker="●", color=CURVE_COLOUR)
        plt.xlim(K_MIN, K_MAX)
        plt.xticks(list(X_TICKS), [str(k) for k in X_TICKS])
        plt.xlabel("k")
        plt.title(f"{m} (mean over {ws.positives.size} positives) against k")
        plot.refresh()
        self._draw_best(best, ks)

    def _draw_best(self, best, ks) -> None:
        """The plot's legend, then the best k over the curve's points, read out (the kernel
        picks it: ``best_k``)."""
        m, ws = self.metric, self.ws
        if m is None:
            return
        key = [f"[{_RICH[CURVE_COLOUR]}]⣀⣀[/] rrf {escape(m)}"]
        for i, lane in enumerate(ws.input_lanes):
            c = _RICH[LANE_COLOURS[i % len(LANE_COLOURS)]]
            key.append(f"[{c}]──[/] {escape(lane)} {fmt.num(ws.mean(lane, 'doc', m))}")
        if best is not None:
            key.append(f"[{_RICH[BEST_COLOUR]}]◆[/] best k")
        if self.current is not None:
            key.append(f"[{_RICH[CURVE_COLOUR]}]●[/] k = {self.current.k} {fmt.num(self.current.means[m])}")
        legend = "legend: " + " · ".join(key)
        if best is None:
            text = f"best k: — (no {m} value on the curve yet)"
        else:
            pending = [k for k in CURVE_KS if k not in self.curve]
            done = f", {len(pending)} still computing" if pending else ""
            text = (f"best k on the curve: [b]{best[0]:g}[/] ({m} {fmt.num(best[1], 4)}; over the {len(ks)} k "
                    f"plotted{done}) — chosen on these queries: in-sample")
        self.query_one("#rrf-best", Static).update(legend + "\n" + text)

    def _draw_means(self) -> None:
        """Input lanes once; then only the fused row's cells change with k (a full clear
        would re-render the whole table on every key)."""
        ws, r = self.ws, self.current
        if r is None:
            return
        t = self.query_one("#rrf-means", DataTable)
        metrics = [m.key for m in ws.settings.metrics]
        if t.row_count != len(ws.input_lanes) + 1:
            t.clear(columns=True)
            t.add_column("lane", key="lane")
            for m in metrics:
                t.add_column(m, key=m)
            for lane in ws.input_lanes:
                t.add_row(lane, *[fmt.num(ws.mean(lane, "doc", m)) for m in metrics], key=lane)
            t.add_row("rrf", *["" for _ in metrics], key="\0rrf")
        t.update_cell("\0rrf", "lane", Text(f"rrf k={r.k}"))
        for m in metrics:
            t.update_cell("\0rrf", m, fmt.num(r.means[m]))

    def _fill_ranking(self, t, L, q: int) -> None:
        from ..kernel.ranking.judgments import NO_JUDGMENT

        ws = self.ws
        rows = L.rows_of(q)
        doc = L.doc[rows][:SHOW]
        grades = ws.judgments.grade_of(np.full(doc.size, q), doc)
        for i in range(doc.size):
            g = int(grades[i])
            rel = g != NO_JUDGMENT and g >= ws.settings.relevant
            d = str(ws.doc_id(doc[i]))
            t.add_row(str(i + 1), safe_text(d, style="bold reverse") if rel else d, "·" if g == NO_JUDGMENT else str(g))

    def _draw_focus(self) -> None:
        ws, r = self.ws, self.current
        head = self.query_one("#rrf-focus-head", Static)
        box = self.query_one("#rrf-rankings", Horizontal)
        if self.focus_qid is None:
            head.update("No query is diluted at this k.")
            return
        if r is None:  # drawn when the fused lane arrives
            return
        q = ws.qid_index[self.focus_qid]
        diluted_by = [l for l, qs in r.diluted.items() if q in set(qs.tolist())]
        state = (f"diluted at k={r.k}: {', '.join(diluted_by)} had a relevant doc at rank 1, rrf does not"
                 if diluted_by else f"not diluted at k={r.k}")
        text = ws.query_text.get(self.focus_qid, "")
        head.update(f"[b]Query {escape(self.focus_qid)}[/] — {state}" + (f"\n[i]{escape(text)}[/]" if text else ""))
        n = len(ws.input_lanes) + 1
        tables = list(box.query(DataTable))
        if len(tables) != n:
            box.remove_children()
            tables = [PlainTable(cursor_type="none", classes="rrf-rank") for _ in range(n)]
            box.mount_all(tables)
            self._ranked_for = None
        if self._ranked_for != self.focus_qid:  # the input lanes' lists do not depend on k
            for t, name in zip(tables, ws.input_lanes):
                t.clear(columns=True)
                t.add_columns("#", name, "g")
                self._fill_ranking(t, ws.lanes[name], q)
            self._ranked_for = self.focus_qid
        fused = tables[-1]
        fused.clear(columns=True)
        fused.add_columns("#", f"rrf k={r.k}", "g")
        self._fill_ranking(fused, r.lane, q)

    def _draw_diluted(self) -> None:
        ws, r = self.ws, self.current
        if r is None:
            return
        by_q: dict[int, list[str]] = {}
        for lane, qs in r.diluted.items():
            for q in qs.tolist():
                by_q.setdefault(int(q), []).append(lane)
        listing = tuple((q, "+".join(by_q[q])) for q in sorted(by_q))
        if listing == self._diluted_shown:  # unchanged at this k: keep the table (and its cursor)
            return
        self._diluted_shown = listing
        rows = []
        for q, lanes in listing:
            qid = str(ws.qids[q])
            rows.append(([qid, lanes, ws.query_text.get(qid, "")[:50]], qid))
        self.query_one("#rrf-diluted", QidTable).fill_in_steps(prepare(["qid", "diluted from", "text"], rows))

    def action_drill(self) -> None:
        if self.focus_qid:
            self.app.open_query(self.focus_qid)

    @on(Select.Changed, "#rrf-metric")
    def _metric(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL and self.current is not None:
            self.metric = str(event.value)
            self._draw_plot()
            self.refresh_method()

    # ------------------------------------------------------------------ any fusion method against the best lane

    @property
    def method_spec(self) -> str:
        """The chosen method in ``--fuse`` spelling (``METHOD`` or ``METHOD:NORM``)."""
        return self.method if self.method in RANK_METHODS else f"{self.method}:{self.norm}"

    @on(Select.Changed, "#rrf-method, #rrf-norm")
    def _method(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:
            return
        if event.select.id == "rrf-method":
            self.method = str(event.value)
            self.query_one("#rrf-norm", Select).disabled = self.method in RANK_METHODS  # ranks: no normalisation
        else:
            self.norm = str(event.value)
        self.refresh_method()

    def _method_when_resting(self) -> None:
        """The method table follows the slider's k once the slider has rested
        ``METHOD_QUIET`` seconds (each step restarts the wait)."""
        if self._method_timer is not None:
            self._method_timer.stop()
        self.query_one("#rrf-method-note", Static).update(
            f"⟳ {escape(self.method_spec)} at k={self.k} once the slider rests…")
        self._method_timer = self.set_timer(METHOD_QUIET, self._method_rested)

    def _method_rested(self) -> None:
        self._method_timer = None
        if self.is_mounted:
            self.refresh_method()

    def refresh_method(self) -> None:
        """Ask for the chosen method's table. As for the slider, one runs at a time and the
        latest choice (method, metric, k) is computed next; rrf at the slider's k reads the
        slider's fused result instead of fusing again."""
        ws = self.ws
        if self._method_timer is not None:  # asked now: no later refresh for the slider's rest
            self._method_timer.stop()
            self._method_timer = None
        if ws is None or self.metric is None or len(ws.input_lanes) < 2:
            return
        self.query_one("#rrf-method-note", Static).update(f"⟳ fusing with {escape(self.method_spec)}…")
        self._method_wanted = (self.method_spec, self.metric, float(self.k))
        if not self._method_in_flight:
            self._start_method()

    def _start_method(self) -> None:
        if self._method_wanted is None:
            return
        spec, metric, k = self._method_wanted
        rrf = self.current if self.current is not None and self.current.k == k else None
        self._method_in_flight = True
        self.fuse_method(spec, metric, k, rrf)

    @work(thread=True, exclusive=True, group="rrf-method", exit_on_error=False, description="fusion method")
    def fuse_method(self, spec: str, metric: str, k: float, rrf: FusedAtK | None = None) -> None:
        try:
            result = method_against_best(self.ws, spec, metric, k, rrf)
            if self._method_wanted != (spec, metric, k):  # the slider or the choice moved on: no cells for it
                self.app.call_from_thread(self._method_over, (spec, metric, k), None)
                return
            # the table's cells made here, off the event loop (one row per positive query)
            filling = prepare(["qid", result.name, result.best_lane, "Δ"],
                              [([qid, fmt.num(fused), fmt.num(best), fmt.num(diff)], qid)
                               for qid, fused, best, diff in result.rows])
        except BaseException:
            self.app.call_from_thread(self._method_over, (spec, metric, k), None)
            raise
        self.app.call_from_thread(self._method_over, (spec, metric, k), result, filling)

    def _method_over(self, asked: tuple[str, str, float], r: MethodAgainstBest | None,
                     filling: Filling | None = None) -> None:
        self._method_in_flight = False
        if not self.is_mounted:
            return
        if r is not None and filling is not None:
            self._method_ready(r, filling)
        if self._method_wanted is not None and self._method_wanted != asked:  # the choice moved on meanwhile
            self._start_method()

    @guarded
    def _method_ready(self, r: MethodAgainstBest, filling: Filling) -> None:
        if r.name != self.method_spec or r.metric != self.metric or (r.name in K_METHODS and r.k != self.k):
            return  # stale: the choice (or the slider) has moved on
        self.method_result = r
        at_k = f" at k={r.k:g}" if r.name in K_METHODS else ""
        wins = sum(1 for row in r.rows if row[3] > 0)
        losses = sum(1 for row in r.rows if row[3] < 0)
        self.query_one("#rrf-method-note", Static).update(
            f"[b]{escape(r.name)}[/]{at_k}: {escape(r.metric)} {fmt.num(r.fused_mean)} against the best single lane "
            f"[b]{escape(r.best_lane)}[/] {fmt.num(r.best_mean)}; {wins} queries better, {losses} worse "
            f"(largest losses first)\n{escape(r.definition)}")
        # thousands of rows at large inputs: added a few hundred per event-loop turn
        self.query_one("#rrf-method-table", QidTable).fill_in_steps(filling)

    @on(QidTable.RowHighlighted, "#rrf-diluted")
    def _highlight(self, event: QidTable.RowHighlighted) -> None:
        if not event.data_table.has_focus:  # refilling the table is not a choice
            return
        if getattr(event.row_key, "value", None) and getattr(event.row_key, "value", None) != self.focus_qid and self.current is not None:
            self.focus_qid = str(getattr(event.row_key, "value", None))
            self._draw_focus()
