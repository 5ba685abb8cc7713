"""The dashboard's items of issue 29 (one voice): a lane added while dev qrels are loaded,
the Calibrate view while its dev split loads, and the key numbers of the Overview, Gate
and Calibrate views at 80×24 (every metric column, the Gate numbers, the Calibrate fit)
and at 200×60; the Export dialog's Tab leaves the path field.

Oracles: the kernel's calibration comparison recomputed here on a workspace loaded from
the same files (the new lane included), and the report's own cells for what must reach
the screen whole.
"""

from __future__ import annotations

import shutil
import threading

import pytest
from support import settle
from test_tui import demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures)
from test_tui_layout import KEY, LARGE, SMALL, open_view, shown

from rankscope_tui.kernel.fusion.calibration import compare_calibration
from rankscope_tui.screens import calibrate as CAL
from rankscope_tui.state import load_dev_workspace
from rankscope_tui.widgets import fmt
from rankscope_tui.widgets.dialogs import ErrorDialog, OpenRequest


def _errors(app) -> list[str]:
    return [s.message for s in app.screen_stack if isinstance(s, ErrorDialog)]


async def test_adding_a_lane_with_dev_qrels_reloads_the_dev_side(demo_options, loaded, demo_dir, tmp_path):
    """Issue 29.16: `o` adds a lane while --dev-qrels is loaded: no "dev and test workspaces
    must hold the same lanes" error; the dev split is read again with the new lane, and the
    view never shows the two-lane fit once the third lane is in."""
    extra = tmp_path / "extra.run"
    shutil.copyfile(demo_dir / "lexical.run", extra)
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_view(app, pilot, "calibrate")
        assert screen.result is not None and screen.result.lanes == ("lexical", "dense")
        app.open_file(OpenRequest("lane", str(extra)))
        # the old fit is gone the moment the data changes (asked before any await: on a fast
        # machine one pause was enough for the reload and the new fit to finish)
        assert screen.result is None
        assert "lexical 0." not in shown(screen.query_one("#cal-summary"))
        await pilot.pause()
        assert screen.result is None or screen.result.lanes == ("lexical", "dense", "extra")
        await settle(app, pilot)
        await pilot.press(KEY["calibrate"])
        await settle(app, pilot)
        assert _errors(app) == [] and app._exception is None
        r = screen.result
        assert r is not None and r.lanes == ("lexical", "dense", "extra") and r.fit_dev is not None
        assert list(screen.dev_ws.lanes) == ["lexical", "dense", "extra"]
        # the oracle: the kernel's comparison on the dev split loaded afresh from the new options
        want = compare_calibration(app.ws, load_dev_workspace(app.state.options), screen.params())
        assert tuple(r.fit_dev.weights) == tuple(want.fit_dev.weights)
        assert r.test_at_dev == want.test_at_dev
        text = shown(screen.query_one("#cal-summary"))
        assert "fitted on dev" in text and "extra" in text


async def test_calibrate_says_fitting_on_dev_while_the_dev_split_loads(demo_options, loaded, monkeypatch):
    """Issue 29.17: while the dev qrels load the view says "fitting on dev…" and shows no
    fit on the test set (no "no --dev-qrels", no test-fitted weights); once loaded, the dev fit."""
    gate = threading.Event()
    real = CAL.load_dev_workspace

    def slow(options):
        assert gate.wait(30), "the test never released the dev load"
        return real(options)

    monkeypatch.setattr(CAL, "load_dev_workspace", slow)
    app = make_app(demo_options, loaded)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(app, pilot)
            await pilot.press(KEY["calibrate"])
            for _ in range(5):  # the step and objective selects post their first changes meanwhile
                await pilot.pause(0.05)
            screen = app.screen
            text = shown(screen.query_one("#cal-summary"))
            assert "fitting on dev" in text, text
            assert "no --dev-qrels" not in text and "fitted on test" not in text
            assert screen.result is None
            assert shown(screen.query_one("#cal-table")).strip() == ""
            gate.set()
            await settle(app, pilot)
            text = shown(screen.query_one("#cal-summary"))
            assert "fitted on dev" in text and "fitted on test" not in text
            assert screen.result is not None and screen.result.fit_dev is not None
    finally:
        gate.set()


# ----------------------------------------------------------------------------- 18: 80×24 and 200×60


def screen_text(app) -> str:
    """What the terminal shows now (no scrolling)."""
    return "\n".join(s.text for s in app.screen._compositor.render_strips())


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
async def test_overview_shows_every_metric_and_the_judged_means(demo_options, loaded, size):
    """Issue 29.18/19: the Overview shows every metric of every input lane whole (at 80×24 one
    row per metric, on screen without scrolling; at 200×60 one column per metric), and the
    means over every judged query beside them (the report's ``summary.judged_means``)."""
    ws, report = loaded
    app = make_app(demo_options, loaded)
    async with app.run_test(size=size) as pilot:
        screen = await open_view(app, pilot, "overview")
        metrics = report["inputs"]["settings"]["metrics"]
        table = shown(screen.query_one("#ov-metrics"))
        visible = screen_text(app)
        for lane in ws.input_lanes:
            for m in metrics:
                cell = fmt.cell(report["lanes"][lane]["doc"][m], compact=True)
                assert cell in table, (lane, m, cell)
                if size == SMALL:  # the row of the metric, on screen: its name and this lane's cell
                    assert any(ln.lstrip().startswith(m + " ") and cell in ln for ln in visible.splitlines()), (m, lane)
        jm = report["summary"]["judged_means"]
        judged = shown(screen.query_one("#ov-judged"))
        for lane in ws.input_lanes:
            for m in metrics:
                assert fmt.num(jm["lanes"][lane]["doc"][m], 4) in judged, (lane, m)
        title = shown(screen.query_one("#ov-judged-title"))
        assert f"all {jm['queries']} judged queries" in title and "trec_eval -c" in title
        assert app._exception is None


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
async def test_gate_and_calibrate_numbers_on_screen(demo_options, loaded, size):
    """Issue 29.18: at 80×24 (panes stacked) the Gate's floors and the Calibrate fit are on
    the screen without scrolling (the numbers before the figure), as at 200×60. Oracles: the
    report's null floors, and the kernel's calibration comparison recomputed here."""
    ws, report = loaded
    app = make_app(demo_options, loaded)
    async with app.run_test(size=size) as pilot:
        screen = await open_view(app, pilot, "gate")
        visible = screen_text(app)
        a = screen.result.analysis
        for name, nf in a.null.items():
            assert nf.floor is not None and fmt.num(nf.floor, 4) in visible, (name, visible)
        assert "Null floor" in visible
        screen = await open_view(app, pilot, "calibrate")
        visible = screen_text(app)
        want = compare_calibration(screen.ws, load_dev_workspace(app.state.options), screen.params())
        m = want.settings.objective
        assert "fitted on dev" in visible
        assert fmt.num(want.test_at_dev[m], 4) in visible and fmt.num(want.fit_dev.objective, 4) in visible
        for lane, w in zip(want.fit_dev.lanes, want.fit_dev.weights):
            assert f"{lane} {w:g}" in visible
        assert app._exception is None


async def test_export_dialog_tab_leaves_the_path_field(demo_options, loaded, tmp_path):
    """Issue 29.18: in the Export dialog Tab completes a path that can be completed and
    otherwise moves to the next field (it never left the path field)."""
    from textual.widgets import Input, Select

    from rankscope_tui.widgets.dialogs import ExportDialog

    (tmp_path / "report-one.json").write_text("{}")
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportDialog)
        path = dialog.query_one("#export-path", Input)
        assert app.focused is path
        path.value = str(tmp_path / "report-o")
        path.cursor_position = len(path.value)
        await pilot.press("tab")  # a unique match: completed, the field keeps the focus
        await pilot.pause()
        assert path.value == str(tmp_path / "report-one.json") and app.focused is path
        await pilot.press("tab")  # nothing left to complete: on to the format
        await pilot.pause()
        assert isinstance(app.focused, Select) and app.focused.id == "export-format"
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not path and app.focused is not None
