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

from support import settle
from test_tui import demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures)
from test_tui_layout import KEY, open_view, shown

from rankscope_tui.kernel.fusion.calibration import compare_calibration
from rankscope_tui.screens import calibrate as CAL
from rankscope_tui.state import load_dev_workspace
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
        await pilot.pause()
        # the old fit is gone the moment the data changes
        assert screen.result is None
        assert "lexical 0." not in shown(screen.query_one("#cal-summary"))
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
