"""The Overview's P–R curve (`c`): the points drawn are the kernel's figure data
(``figures.pr_curve_rows``, the numbers `rankscope plot pr-curve` writes, checked against
trec_eval 10.0 in test_plot_pr_curve.py) for every lane of the dashboard's workspace, read
back from plotext's own series; `c` again gives the parsed order back; `p` (the edit box)
closes the curve. Snapshots at 80×24 and 200×60."""

from __future__ import annotations

import pytest
from support import picture_ready, settle
from test_tui import KEY, demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures: the one way these tests build and drive the app)

from rankscope_tui.kernel.report.figures import PR_LEVELS, pr_curve_rows
from rankscope_tui.widgets.plot import TermPlot

SMALL, LARGE = (80, 24), (200, 60)


async def _open_curve(app, pilot):
    await settle(app, pilot)
    await pilot.press(KEY["overview"])
    await settle(app, pilot)
    await pilot.press("c")
    await settle(app, pilot)
    return app.screen


async def test_curve_points_are_the_kernels_for_every_lane(demo_options, loaded):
    app = make_app(demo_options, loaded)
    async with app.run_test(size=LARGE) as pilot:
        screen = await _open_curve(app, pilot)
        assert screen.showing_pr and not screen.query_one("#ov-bottom").display
        want = pr_curve_rows(screen.ws, "doc")
        assert screen.pr_rows == want
        monitor = screen.query_one("#ov-pr-plot", TermPlot).plt._active.monitor
        xs, ys = monitor.x, monitor.y
        lanes = [lane for lane in dict.fromkeys(r["lane"] for r in want) if screen.ws.lane_origin[lane] != "variant"]
        assert lanes == [*screen.ws.input_lanes, "rrf"] and len(xs) == len(lanes)  # the inputs and rrf
        for lane, x, y in zip(lanes, xs, ys):
            pts = [r for r in want if r["lane"] == lane]
            assert list(x) == list(PR_LEVELS) and list(y) == [r["precision"] for r in pts]
        note = str(screen.query_one("#ov-pr-note").render())
        assert "iprec_at_recall" in note and all(lane in note for lane in lanes)
        await pilot.press("c")  # hides it: the parsed order is back
        await settle(app, pilot)
        assert not screen.showing_pr and screen.query_one("#ov-bottom").display
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("p")  # the edit box takes the curve's place
        await settle(app, pilot)
        assert screen.editing and not screen.showing_pr


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
def test_snapshot_pr_curve(snap_compare, demo_options, loaded, size):
    async def run_before(pilot):
        app = pilot.app
        await _open_curve(app, pilot)
        app.screen.set_focus(None)
        await picture_ready(app, pilot)

    assert snap_compare(make_app(demo_options, loaded), terminal_size=size, run_before=run_before)


async def test_chart_follows_the_app_theme(demo_options, loaded):
    """The chart's canvas is the app theme's surface colour and its ticks the foreground
    (``widgets/plot.py``); switching the theme redraws it in the new theme's colours."""
    from rich.color import Color as RichColor
    from textual.color import Color

    app = make_app(demo_options, loaded)
    async with app.run_test(size=LARGE) as pilot:
        screen = await _open_curve(app, pilot)
        plot = screen.query_one("#ov-pr-plot", TermPlot)
        seen = []
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await settle(app, pilot)
            surface = Color.parse(app.theme_variables["surface"]).rgb
            backgrounds = {span.style.bgcolor for span in plot.render().spans if span.style and span.style.bgcolor}
            assert backgrounds == {RichColor.from_rgb(*surface)}, theme
            seen.append(surface)
        assert seen[0] != seen[1]
