"""5 Calibrate: convex fusion weights fitted on a grid — on dev, scored on test — and a
toggle that fits on the test set to show how much that flatters the result (lesson 08).

The numbers are the kernel's calibration comparison (``kernel/calibration.py``); the dev
split is loaded like the main workspace (``kernel.workspace.load`` of its sources with
the dev qrels)."""

from __future__ import annotations

import os

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from ..widgets.safe import escape
from textual.widgets import Label, Select, Static, Switch
from textual_plotext import PlotextPlot

from ..kernel.calibration import CalibrationComparison, compare_calibration
from ..kernel.settings import CalibrationSettings
from ..state import load_dev_workspace
from ..widgets import fmt
from .base import PlainTable, ViewScreen, guarded

STEPS = [("0.5", 0.5), ("0.25", 0.25), ("0.2", 0.2), ("0.1", 0.1), ("0.05", 0.05)]


class CalibrateScreen(ViewScreen):
    VIEW = "calibrate"
    HELP = """# 5 Calibrate

**Lesson 08: convex fusion, and fitting weights without lying.** Each lane's scores are
min-max normalised over its own list (absent doc = 0, a constant list = all ones) and
summed with weights on the simplex. The grid visits every integer composition of 1/step
in ascending lexicographic order; the first maximum of the mean objective wins.

Fit on one query set (dev, `--dev-qrels`) and score on another (the loaded `--qrels`).
`f` fits on the **test** set instead: the score it reports is in-sample and flatters the
fusion — the gap is the optimism. Choose the grid step and the objective above.
"""
    BINDINGS = [Binding("f", "toggle_fit_on_test", "Fit on test", id="calibrate.fit_on_test")]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.result: CalibrationComparison | None = None
        self.dev_ws = None
        self.dev_error: str | None = None
        self.step = 0.1
        self.objective: str | None = None
        self.fit_on_test = False

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("grid step")
            yield Select(STEPS, value=0.1, id="cal-step", allow_blank=False)
            yield Label("objective")
            yield Select([], id="cal-objective", allow_blank=True, prompt="objective")
            yield Label("fit on test (cheat)")
            yield Switch(False, id="cal-cheat")
        with Horizontal(id="cal-main"):
            with Vertical(id="cal-left"):
                yield PlotextPlot(id="cal-plot")
            with VerticalScroll(id="cal-right"):
                yield Static(self.waiting("loading"), id="cal-summary", classes="panel")
                yield Label("Scores of the fused lane (means over positives)", classes="section-title")
                yield PlainTable(id="cal-table", cursor_type="none", zebra_stripes=True)

    def refresh_view(self) -> None:
        ws = self.ws
        if ws is None:
            return
        if len(ws.input_lanes) < 2:
            self.query_one("#cal-summary", Static).update("Convex fusion needs two or more lanes.")
            return
        metrics = [m.key for m in ws.settings.metrics]
        if self.objective not in metrics:
            self.objective = "ndcg@10" if "ndcg@10" in metrics else metrics[0]
        with self.prevent(Select.Changed):
            sel = self.query_one("#cal-objective", Select)
            sel.set_options([(m, m) for m in metrics])
            sel.value = self.objective
        if self.app.state.options.dev_qrels and self.dev_ws is None and self.dev_error is None:
            self.load_dev()
        else:
            self.recompute()

    @work(thread=True, exclusive=True, group="calibrate-load", exit_on_error=False, description="loading dev qrels")
    def load_dev(self) -> None:
        dev = load_dev_workspace(self.app.state.options)
        self.app.call_from_thread(self._dev_loaded, dev)

    @guarded
    def _dev_loaded(self, dev) -> None:
        self.dev_ws = dev
        self.recompute()

    def worker_failed(self, worker) -> None:
        if worker.group == "calibrate-load":
            from ..state import error_line

            self.dev_error = error_line(worker.error)
            self.recompute()
        self.query_one("#cal-summary", Static).loading = False

    def params(self) -> CalibrationSettings:
        return CalibrationSettings(float(self.step), self.objective)

    def recompute(self) -> None:
        if self.ws is None or self.objective is None:
            return
        self.query_one("#cal-summary", Static).loading = True
        self.calibrate(self.ws, self.dev_ws, self.params())

    @work(thread=True, exclusive=True, group="calibrate", exit_on_error=False, description="fitting weights")
    def calibrate(self, ws, dev, p: CalibrationSettings) -> None:
        r = compare_calibration(ws, dev, p)
        self.app.call_from_thread(self._done, r)

    @guarded
    def _done(self, r: CalibrationComparison) -> None:
        if r.settings != self.params():
            return
        self.result = r
        self.query_one("#cal-summary", Static).loading = False
        self._draw()

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or self.ws is None:
            return
        if event.select.id == "cal-step":
            self.step = float(event.value)
        elif event.select.id == "cal-objective":
            self.objective = str(event.value)
        self.recompute()

    @on(Switch.Changed, "#cal-cheat")
    def _cheat(self, event: Switch.Changed) -> None:
        self.fit_on_test = event.value
        if self.result is not None:
            self._draw()

    def action_toggle_fit_on_test(self) -> None:
        sw = self.query_one("#cal-cheat", Switch)
        sw.value = not sw.value

    # ------------------------------------------------------------------ drawing

    def _weights(self, fit) -> str:
        return ", ".join(f"{lane} {w:g}" for lane, w in zip(fit.lanes, fit.weights))

    def _draw(self) -> None:
        r = self.result
        m = r.settings.objective
        honest = r.fit_dev is not None
        cheat = self.fit_on_test or not honest
        L = [f"grid step {r.settings.step:g}: {r.fit_test.n_points} weight vectors over {len(r.lanes)} lanes; objective {m}"]
        if honest:
            dev = os.path.basename(str(self.app.state.options.dev_qrels or "dev"))
            L.append(f"[b]fitted on dev[/] ({escape(dev)}, {r.n_dev} positives): {self._weights(r.fit_dev)}")
            L.append(f"    dev {m} {fmt.num(r.fit_dev.objective, 4)} (in-sample) → [b]test {fmt.num(r.test_at_dev[m], 4)}[/] "
                     f"(held out, {r.n_test} positives)")
        else:
            L.append(f"[$warning]no --dev-qrels: only an in-sample fit on the evaluated queries is possible[/]")
            if self.dev_error:
                L.append(self.dev_error)
        if cheat:
            L.append(f"[b $warning]fitted on test[/] ({r.n_test} positives): {self._weights(r.fit_test)}")
            L.append(f"    test {m} [b]{fmt.num(r.fit_test.objective, 4)}[/]  [reverse] in-sample: flattering [/]")
            if honest:
                L.append(f"    optimism of fitting on test: {fmt.num(r.optimism, 4)} "
                         f"({m} on test, test-fitted minus dev-fitted)")
        L.append("Ties on the grid: the first maximum in visiting order wins (ranx keeps the last).")
        self.query_one("#cal-summary", Static).update("\n".join(L))
        t = self.query_one("#cal-table", PlainTable)
        metrics = [k.key for k in self.ws.settings.metrics]
        rows = [(f"{lane} (test)", [self.ws.mean(lane, "doc", k) for k in metrics]) for lane in self.ws.input_lanes]
        if honest:
            rows.append(("convex, dev weights (test)", [r.test_at_dev[k] for k in metrics]))
        if cheat:
            rows.append(("convex, test weights (test, in-sample)", [r.test_at_test[k] for k in metrics]))
        t.fill(["lane / weights", *metrics], [([label, *[fmt.num(v) for v in values]], None) for label, values in rows])
        self._plot(r, honest, cheat)

    def _plot(self, r: CalibrationComparison, honest: bool, cheat: bool) -> None:
        plot = self.query_one("#cal-plot", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        m = r.settings.objective
        n = round(1 / r.settings.step)
        two = len(r.lanes) == 2
        xs = [c[0] / n for c, _ in r.fit_test.points] if two else list(range(1, r.fit_test.n_points + 1))
        if honest:
            plt.plot(xs, [v for _, v in r.fit_dev.points], label=f"dev {m}", marker="braille")
        plt.plot(xs, [v for _, v in r.fit_test.points], label=f"test {m}", marker="braille")
        if honest:
            i = [c for c, _ in r.fit_dev.points].index(r.fit_dev.composition)
            plt.scatter([xs[i]], [r.fit_dev.points[i][1]], marker="●", label="dev fit (on dev)")
            plt.scatter([xs[i]], [r.fit_test.points[i][1]], marker="◆", label="dev fit, scored on test")
        if cheat:
            j = [c for c, _ in r.fit_test.points].index(r.fit_test.composition)
            plt.scatter([xs[j]], [r.fit_test.points[j][1]], marker="✖", label="test fit (in-sample)")
        plt.xlabel(f"weight of {r.lanes[0]}" if two else "grid point (visiting order)")
        plt.title(f"mean {m} over the weight grid")
        plot.refresh()
