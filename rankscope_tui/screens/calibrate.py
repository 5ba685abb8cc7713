"""5 Calibrate: convex fusion weights fitted on a grid — on dev, scored on test — and a
toggle that fits on the test set to show how much that flatters the result (lesson 08).

The numbers are the kernel's calibration comparison (``kernel/fusion/calibration.py``); the dev
split is loaded like the main workspace (``kernel.workspace.load`` of its sources with
the dev qrels)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Label, Select, Static, Switch

from ..kernel.fusion.calibration import CalibrationComparison, compare_calibration
from ..kernel.settings import CalibrationSettings
from ..state import DashboardOptions, load_dev_workspace
from ..widgets import fmt
from ..widgets.kslider import KSlider
from ..widgets.plot import TermPlot
from ..widgets.safe import escape
from ..widgets.tables import PlainTable
from .base import ViewScreen, guarded

if TYPE_CHECKING:
    from ..kernel.fusion.methods import ConvexFit

STEPS = [("0.5", 0.5), ("0.25", 0.25), ("0.2", 0.2), ("0.1", 0.1), ("0.05", 0.05)]


def _fits(r: CalibrationComparison) -> tuple[ConvexFit | None, ConvexFit]:
    """The comparison's fits on dev (None without a dev split) and on test, typed: the
    kernel keeps them as plain objects."""
    return r.fit_dev, r.fit_test


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

With three or more lanes the plot runs over the grid in visiting order: the **grid point**
slider (←/→ when focused) highlights one point and prints its weights and scores; with
three lanes a heat map of the grid (rows: weight of the first lane, columns: of the
second, the third takes the rest) shows where the objective is high (◉ highlighted,
● dev fit, ✖ test fit).
"""
    NUMBERS_FIRST = ("cal-right", "cal-left")
    BINDINGS = [Binding("f", "toggle_fit_on_test", "Fit on test", id="calibrate.fit_on_test")]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.result: CalibrationComparison | None = None
        self.dev_ws = None
        self.dev_error: str | None = None
        # the options the dev split was (or is being) loaded for: a lane opened with `o`
        # changes them, and the dev split must then be read again with that lane
        self.dev_for: DashboardOptions | None = None
        self.step = CalibrationSettings().step
        self.objective: str | None = None
        self.fit_on_test = False
        self.point: int | None = None  # index (0-based) of the highlighted grid point

    @property
    def figure_metric(self) -> str | None:
        return self.objective

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("grid step")
            yield Select(STEPS, value=CalibrationSettings().step, id="cal-step", allow_blank=False)
            yield Label("objective")
            yield Select([], id="cal-objective", allow_blank=True, prompt="objective")
            yield Label("fit on test (cheat)")
            yield Switch(False, id="cal-cheat")
        with Horizontal(id="cal-main"):
            with Vertical(id="cal-left"):
                yield TermPlot(id="cal-plot")
                yield KSlider(1, 1, 2, label="grid point", id="cal-point")
                yield Static("", id="cal-highlight", classes="caption")
                yield Static("", id="cal-heat", classes="caption")
            with VerticalScroll(id="cal-right"):
                yield Static(self.waiting("loading"), id="cal-summary", classes="panel")
                yield Label("Scores of the fused lane (means over positives)", classes="section-title")
                yield PlainTable(id="cal-table", cursor_type="none", zebra_stripes=True)

    def refresh_view(self) -> None:
        ws = self.ws
        if self.dev_for is not None and self.dev_for != self.app.state.options:
            # other inputs (a lane added with `o`, other qrels): the dev split and the fit
            # belong to the old ones; both go, and the dev split is read again below
            self.dev_ws, self.dev_error, self.dev_for = None, None, None
            self._clear()
        if ws is None:
            self._clear()
            return
        if len(ws.input_lanes) < 2:
            self.query_one("#cal-summary", Static).update("Convex fusion needs two or more lanes.")
            return
        metrics = [m.key for m in ws.settings.metrics]
        if self.objective not in metrics:
            first = CalibrationSettings().objective
            self.objective = first if first in metrics else metrics[0]
        with self.prevent(Select.Changed):
            sel = self.query_one("#cal-objective", Select)
            sel.set_options([(m, m) for m in metrics])
            sel.value = self.objective
        if self.dev_pending and self.dev_for is None:
            self.dev_for = self.app.state.options
            self.load_dev(self.dev_for)
        self.recompute()

    @property
    def dev_pending(self) -> bool:
        """Dev qrels were given and their split is not loaded yet (nor failed to load)."""
        return bool(self.app.state.options.dev_qrels) and self.dev_ws is None and self.dev_error is None

    def _clear(self) -> None:
        """Forget the fit on screen (it was made on other inputs): the summary, the table,
        the plot and the highlighted point say nothing until the next fit arrives."""
        self.result = None
        self.point = None
        self.state.exploratory.fit_on_test = None
        self.query_one("#cal-summary", Static).update(self.waiting("loading"))
        self.query_one("#cal-table", PlainTable).clear(columns=True)
        for box in ("#cal-highlight", "#cal-heat"):
            self.query_one(box, Static).update("")
        plot = self.query_one("#cal-plot", TermPlot)
        plot.plt.clear_data()
        plot.refresh()

    @work(thread=True, exclusive=True, group="calibrate-load", exit_on_error=False, description="loading dev qrels")
    def load_dev(self, options: DashboardOptions) -> None:
        dev = load_dev_workspace(options)
        self.app.call_from_thread(self._dev_loaded, dev, options)

    @guarded
    def _dev_loaded(self, dev, options: DashboardOptions) -> None:
        if options != self.dev_for:  # loaded for inputs since replaced: their own load follows
            return
        self.dev_ws = dev
        self.recompute()

    def worker_failed(self, worker) -> None:
        if worker.group == "calibrate-load":
            from ..state import error_line

            self.dev_error = error_line(worker.error)
            self.recompute()
        self.query_one("#cal-summary", Static).loading = False

    def params(self) -> CalibrationSettings:
        return CalibrationSettings(float(self.step), self.objective or CalibrationSettings().objective)

    def recompute(self) -> None:
        if self.ws is None or self.objective is None:
            return
        if self.dev_pending:
            # no fit until the dev split is in: a fit without it would be on the test set,
            # which is shown only when asked for (`f`)
            self.result = None
            self.query_one("#cal-summary", Static).update(
                "⟳ fitting on dev… (loading the dev qrels; the fit on the test set is shown only with f)")
            return
        self.query_one("#cal-summary", Static).loading = True
        self.calibrate(self.ws, self.dev_ws, self.params())

    @work(thread=True, exclusive=True, group="calibrate", exit_on_error=False, description="fitting weights")
    def calibrate(self, ws, dev, p: CalibrationSettings) -> None:
        r = compare_calibration(ws, dev, p)
        self.app.call_from_thread(self._done, r, ws, dev)

    @guarded
    def _done(self, r: CalibrationComparison, ws=None, dev=None) -> None:
        if r.settings != self.params() or ws is not self.ws or dev is not self.dev_ws:
            return  # fitted on data or settings replaced meanwhile: the newer fit follows
        self.result = r
        self._record_fit_on_test()
        self.query_one("#cal-summary", Static).loading = False
        fd, ft = _fits(r)
        n = ft.n_points
        best = [c for c, _ in (fd or ft).points].index((fd or ft).composition)
        self.point = best if self.point is None or self.point >= n else self.point
        slider = self.query_one("#cal-point", KSlider)
        with self.prevent(KSlider.Changed):
            slider.maximum = max(1, n)
            slider.value = self.point + 1
        slider.refresh()
        self._draw()

    @on(KSlider.Changed, "#cal-point")
    def _point_changed(self, event: KSlider.Changed) -> None:
        if self.result is None:
            return
        self.point = int(event.value) - 1
        self._plot(self.result, self.result.fit_dev is not None, self.fit_on_test or self.result.fit_dev is None)

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or self.ws is None:
            return
        if event.select.id == "cal-step":
            self.step = float(str(event.value))
        elif event.select.id == "cal-objective":
            self.objective = str(event.value)
        self.recompute()

    @on(Switch.Changed, "#cal-cheat")
    def _cheat(self, event: Switch.Changed) -> None:
        self.fit_on_test = event.value
        self._record_fit_on_test()
        if self.result is not None:
            self._draw()

    def _record_fit_on_test(self) -> None:
        """The export's exploratory block names the fit on the test set while it is shown."""
        self.state.exploratory.fit_on_test = self.result if self.fit_on_test else None

    def action_toggle_fit_on_test(self) -> None:
        sw = self.query_one("#cal-cheat", Switch)
        sw.value = not sw.value

    # ------------------------------------------------------------------ drawing

    def _weights(self, fit) -> str:
        return ", ".join(f"{escape(lane)} {w:g}" for lane, w in zip(fit.lanes, fit.weights))

    def _draw(self) -> None:
        r = self.result
        if r is None:
            return
        fd, ft = _fits(r)
        test_at_dev = r.test_at_dev or {}
        m = r.settings.objective
        honest = fd is not None
        cheat = self.fit_on_test or not honest
        L = [f"grid step {r.settings.step:g}: {ft.n_points} weight vectors over {len(r.lanes)} lanes; objective {m}"]
        if honest and fd is not None:
            dev = os.path.basename(str(self.app.state.options.dev_qrels or "dev"))
            L.append(f"[b]fitted on dev[/] ({escape(dev)}, {r.n_dev} positives): {self._weights(fd)}")
            L.append(f"    dev {m} {fmt.num(fd.objective, 4)} (in-sample) → [b]test {fmt.num(test_at_dev[m], 4)}[/] "
                     f"(held out, {r.n_test} positives)")
        else:
            L.append("[$warning]no --dev-qrels: only an in-sample fit on the evaluated queries is possible[/]")
            if self.dev_error:
                L.append(self.dev_error)
        if cheat:
            L.append(f"[b $warning]fitted on test[/] ({r.n_test} positives): {self._weights(ft)}")
            L.append(f"    test {m} [b]{fmt.num(ft.objective, 4)}[/]  [reverse] in-sample: flattering [/]")
            if honest:
                L.append(f"    optimism of fitting on test: {fmt.num(r.optimism, 4)} "
                         f"({m} on test, test-fitted minus dev-fitted)")
        L.append("Ties on the grid: the first maximum in visiting order wins (ranx keeps the last).")
        self.query_one("#cal-summary", Static).update("\n".join(L))
        t = self.query_one("#cal-table", PlainTable)
        metrics = [k.key for k in self.ws.settings.metrics]
        rows = [(f"{lane} (test)", [self.ws.mean(lane, "doc", k) for k in metrics]) for lane in self.ws.input_lanes]
        if honest:
            rows.append(("convex, dev weights (test)", [test_at_dev[k] for k in metrics]))
        if cheat:
            rows.append(("convex, test weights (test, in-sample)", [r.test_at_test[k] for k in metrics]))
        t.fill(["lane / weights", *metrics], [([label, *[fmt.num(v) for v in values]], None) for label, values in rows])
        self._plot(r, honest, cheat)

    def _plot(self, r: CalibrationComparison, honest: bool, cheat: bool) -> None:
        plot = self.query_one("#cal-plot", TermPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        fd, ft = _fits(r)
        m = r.settings.objective
        n = round(1 / r.settings.step)
        two = len(r.lanes) == 2
        xs = [c[0] / n for c, _ in ft.points] if two else list(range(1, ft.n_points + 1))
        if honest and fd is not None:
            plt.plot(xs, [v for _, v in fd.points], label=f"dev {m}", marker="braille")
        plt.plot(xs, [v for _, v in ft.points], label=f"test {m}", marker="braille")
        if honest and fd is not None:
            i = [c for c, _ in fd.points].index(fd.composition)
            plt.scatter([xs[i]], [fd.points[i][1]], marker="●", label="dev fit (on dev)")
            plt.scatter([xs[i]], [ft.points[i][1]], marker="◆", label="dev fit, scored on test")
        if cheat:
            j = [c for c, _ in ft.points].index(ft.composition)
            plt.scatter([xs[j]], [ft.points[j][1]], marker="✖", label="test fit (in-sample)")
        p = self.point if self.point is not None and 0 <= self.point < len(xs) else None
        if p is not None:
            plt.vline(xs[p], "orange")
        plt.xlabel(f"weight of {r.lanes[0]}" if two else "grid point (visiting order; the slider below highlights one)")
        plt.title(f"mean {m} over the weight grid")
        plot.refresh()
        self._draw_highlight(r, honest)
        self._draw_heat(r, honest, cheat)

    def _draw_highlight(self, r: CalibrationComparison, honest: bool) -> None:
        """The highlighted grid point: its weights and its objective on dev and test."""
        box = self.query_one("#cal-highlight", Static)
        fd, ft = _fits(r)
        p = self.point
        if p is None or not (0 <= p < ft.n_points):
            box.update("")
            return
        n = round(1 / r.settings.step)
        comp = ft.points[p][0]
        weights = ", ".join(f"{escape(lane)} {c / n:g}" for lane, c in zip(r.lanes, comp))
        m = r.settings.objective
        scores = [f"test {m} {fmt.num(ft.points[p][1], 4)}"]
        if honest and fd is not None:
            scores.insert(0, f"dev {m} {fmt.num(fd.points[p][1], 4)}")
        box.update(f"[b]point {p + 1}/{ft.n_points}[/]: {weights} → " + ", ".join(scores))

    def _draw_heat(self, r: CalibrationComparison, honest: bool, cheat: bool) -> None:
        """Three lanes: the grid as a heat map of the objective the fit reads (dev when there is
        a dev split, else test); rows: weight of the first lane, columns: of the second."""
        box = self.query_one("#cal-heat", Static)
        if len(r.lanes) != 3:
            box.display = False
            return
        box.display = True
        fd, ft = _fits(r)
        fit = fd if honest and fd is not None else ft
        n = round(1 / r.settings.step)
        value = {c: v for c, v in fit.points}
        vals = [v for v in value.values() if v is not None and v == v]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        shades = " ·░▒▓█"
        hl = ft.points[self.point][0] if self.point is not None and 0 <= self.point < ft.n_points else None
        marks = {fit.composition: "●"}
        if cheat and honest:
            marks.setdefault(ft.composition, "✖")
        if hl is not None:
            marks[hl] = "◉"  # the highlighted point wins its cell
        from rich.text import Text

        out = Text(no_wrap=True, overflow="crop")
        out.append(f"{'dev' if honest else 'test'} {r.settings.objective}, from {fmt.num(lo, 3)} (blank) to {fmt.num(hi, 3)} (█); "
                   f"rows: {r.lanes[0]} 1→0, columns: {r.lanes[1]} 0→1, {r.lanes[2]} the rest\n")
        for a in range(n, -1, -1):
            out.append(f"{a / n:>5.2f} ")
            for b in range(0, n - a + 1):
                c = (a, b, n - a - b)
                v = value.get(c)
                if c in marks:
                    out.append(marks[c] + " ", style="bold")
                elif v is None or v != v:
                    out.append("  ")
                else:
                    i = 0 if hi == lo else int(round((v - lo) / (hi - lo) * (len(shades) - 1)))
                    out.append(shades[i] * 2)
            out.append("\n")
        box.update(out)
