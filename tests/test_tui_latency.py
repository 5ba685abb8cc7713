"""Where a person waits in the dashboard (issue 35 item 1), shown by counting, never timing:

- the frame (views, keys, the loading line) is drawn before the inputs are read (the
  command starts no read before the app), so a busy machine shows a live app at once and
  `q` quits while the load still runs;
- a burst of k-slider keys fuses only the k the slider was at when a fusion started and the
  last one: no stale k is queued behind a running fusion, and the view shows the last k.
  The oracle for the k shown is ``rrf_at_k`` (``methods.rrf`` on the workspace's lanes, the
  report's own RRF path, checked against ranx in tests/test_fusion*.py).
"""

from __future__ import annotations

import threading

import pytest
from support import settle
from test_tui import KEY, QUIET, demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures: the one way these tests build and drive the app)
from test_tui_layout import open_view

from rankscope_tui.kernel.fusion.rrf_at_k import rrf_at_k
from rankscope_tui.widgets import fmt
from rankscope_tui.widgets.kslider import KSlider

SIZE = (160, 50)
module_loop = pytest.mark.asyncio(loop_scope="module")


@module_loop
async def test_the_frame_is_drawn_before_the_inputs_are_read_and_q_quits_during_the_load(demo_options, monkeypatch):
    import rankscope_tui.app as app_module
    from rankscope_tui import state as state_module

    frames: list[int] = []
    frames_at_load: list[int] = []
    release = threading.Event()
    original = state_module.start_loading

    def held(options):
        frames_at_load.append(len(frames))
        future = original(options)
        out = state_module.LoadingWorkspace(options)

        def wait() -> None:  # the load "takes" until the test lets it finish
            release.wait(30)
            if not out.cancelled():  # quitting cancels the app's wait for it
                out.set_result(future.result())

        threading.Thread(target=wait, daemon=True).start()
        return out

    monkeypatch.setattr(app_module, "start_loading", held)
    app = make_app(demo_options)  # no workspace: the app loads it
    shown = app._display

    def display(screen, renderable):
        if renderable is not None:
            frames.append(1)
        return shown(screen, renderable)

    app._display = display
    try:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(100):
                if frames_at_load:
                    break
                await pilot.pause(0.02)
            assert frames_at_load and frames_at_load[0] >= 1, "the load began before the first frame"
            assert app.state.base_workspace is None and app.ws is None
            assert any(w.group == "load" and w.is_running for w in app.workers)
            texts = [str(s.content) for s in app.screen.query("Static")]
            assert any(t.startswith("⟳") for t in texts), "the frame says it is loading"
            await pilot.press("q")
            await pilot.pause()
            assert app.closing, "q quits while the inputs are still loading"
    finally:
        release.set()
    assert app.state.base_workspace is None  # quit before the load ended: nothing shown, nothing kept


def test_the_command_reads_no_input_before_the_app_draws(tmp_path, monkeypatch):
    """`rankscope tui` hands the app its options and no load begun: the first read starts
    from the app, once its frame is drawn (the test above)."""
    import rankscope_tui.app as app_module
    from rankscope_tui import state as state_module
    from rankscope_tui.commands import tui
    from rankscope_tui.demo import write_demo

    write_demo(tmp_path, seed=7)
    reads: list = []
    handed: list = []
    monkeypatch.setattr(state_module, "start_loading", lambda options: reads.append(options))
    monkeypatch.setattr(app_module, "run", lambda state: handed.append(state) or 0)
    monkeypatch.setattr("rankscope_tui.startup.pause_collector", lambda: None)  # this process keeps its collector
    assert tui.run(tui.parse_args(tui.demo_argv(tmp_path))) == 0
    assert reads == [] and len(handed) == 1
    assert handed[0].preload is None and handed[0].base_workspace is None and handed[0].has_inputs


@module_loop
async def test_a_burst_of_slider_keys_fuses_only_the_last_k(demo_options, loaded):
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(app, pilot, "rrf")
        assert screen.drawn_k == 60
        release = threading.Event()
        fuse = screen._fuse

        def held(explorer, k):  # the first fusion of the burst runs until every key is in
            release.wait(30)
            return fuse(explorer, k)

        screen._fuse = held
        screen.slider_fusions.clear()
        screen.query_one(KSlider).focus()
        await pilot.press(*["right"] * 25, "shift+right", "left")
        assert screen.k == 60 + 25 + 10 - 1
        release.set()
        await settle(app, pilot)
        assert screen.slider_fusions == [61, 94], "a k passed on the way was fused"
        assert screen.drawn_k == 94 and screen.current.k == 94
        want = rrf_at_k(app.ws, 94).means
        assert screen.current.means == want
        table = screen.query_one("#rrf-means")
        metrics = [m.key for m in app.ws.settings.metrics]
        assert str(table.get_cell("\0rrf", "lane")) == "rrf k=94"
        assert [str(table.get_cell("\0rrf", m)) for m in metrics] == [fmt.num(want[m]) for m in metrics]
        # the method table under the means follows once the slider rests: rrf at k = 94, as
        # fusing from scratch
        from rankscope_tui.kernel.fusion.rrf_at_k import method_against_best

        await settle(app, pilot, 2 * QUIET)

        assert screen.method_result == method_against_best(app.ws, "rrf", screen.metric, 94.0)
        # a key pressed once the slider is idle is fused at once (no waiting window)
        screen.slider_fusions.clear()
        await pilot.press("right")
        await settle(app, pilot)
        assert screen.slider_fusions == [95] and screen.drawn_k == 95


async def test_the_method_table_follows_the_slider_once_it_rests(demo_options, loaded, monkeypatch):
    """Slider steps redraw the plot and the means at each k; the per-query method table (one
    row per positive) is computed once, for the k the slider rests on. Oracle: the
    method's rows fused from scratch at that k (``method_against_best`` without the slider's
    values)."""
    from rankscope_tui.kernel.fusion.rrf_at_k import method_against_best
    from rankscope_tui.screens import rrf as rrf_screen

    asked: list[float] = []

    def counted(ws, spec, metric, k, rrf=None):
        asked.append(k)
        return method_against_best(ws, spec, metric, k, rrf)

    monkeypatch.setattr(rrf_screen, "method_against_best", counted)
    monkeypatch.setattr(rrf_screen, "METHOD_QUIET", 0.6)
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(app, pilot, "rrf")
        assert screen.method_result is not None and screen.method_result.k == 60
        asked.clear()
        screen.query_one(KSlider).focus()
        for _ in range(3):
            await pilot.press("right")
            await settle(app, pilot)
        assert screen.drawn_k == 63 and screen.current.k == 63  # each step drawn
        assert asked == [] and screen.method_result.k == 60  # the table waits for the rest
        assert "once the slider rests" in str(screen.query_one("#rrf-method-note").render())
        await settle(app, pilot, 0.8)
        assert asked == [63.0]
        assert screen.method_result == method_against_best(app.ws, "rrf", screen.metric, 63.0)


async def test_a_slider_step_stops_the_method_tables_refill(demo_options, loaded, monkeypatch):
    """The method table (rrf follows k) refilling in steps when the slider moves: its
    remaining steps are for the k the slider left, so they stop at once, and the table
    waits for the rest at the new k."""
    from rankscope_tui.screens import rrf as rrf_screen
    from rankscope_tui.widgets.tables import QidTable, prepare

    monkeypatch.setattr(rrf_screen, "METHOD_QUIET", 60.0)  # no rest within the test
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(app, pilot, "rrf")
        table = screen.query_one("#rrf-method-table", QidTable)
        rows = [([f"q{i}", "0.5", "0.4", "0.1"], f"q{i}") for i in range(5000)]
        table.fill_in_steps(prepare(["qid", "rrf", "best", "Δ"], rows), step=100)
        assert table.filling
        screen.query_one(KSlider).focus()
        await pilot.press("right")
        assert not table.filling
        kept = table.row_count
        await pilot.pause()
        await pilot.pause()
        assert table.row_count == kept < 5000
        assert "once the slider rests" in str(screen.query_one("#rrf-method-note").render())


def test_the_report_is_frozen_out_of_full_collections_when_the_command_manages_the_collector():
    """``startup.freeze_long_lived`` (called when the report is in) moves what is tracked to
    the permanent generation (``gc.get_freeze_count``) once the command paused and resumed
    the collector, and does nothing in a process whose collector it never touched (a
    notebook, a test). Run in child processes: this one's collector stays as it is."""
    import subprocess
    import sys

    body = ("import gc; from rankscope_tui import startup as s\n"
            "{manage}"
            "n0 = gc.get_freeze_count(); kept = [[i] for i in range(5000)]\n"
            "s.freeze_long_lived(); print(gc.get_freeze_count() - n0)\n")
    managed = "s.pause_collector(); s.resume_collector()\n"
    counts = []
    for manage in (managed, ""):
        p = subprocess.run([sys.executable, "-c", body.format(manage=manage)], capture_output=True, text=True, check=True)
        counts.append(int(p.stdout.strip()))
    assert counts[0] >= 5000 and counts[1] == 0


async def test_the_app_freezes_once_its_report_is_in(demo_options, monkeypatch):
    import rankscope_tui.app as app_module

    calls: list[bool] = []
    monkeypatch.setattr(app_module, "freeze_long_lived", lambda: calls.append(True))
    app = make_app(demo_options)  # the app loads and computes its report itself
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.state.report is not None and calls == [True]
