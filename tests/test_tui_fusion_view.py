"""The RRF view as a Fusion view: a method and a normalisation picked in the controls give
a per-query table of the method's value beside the best single input lane's. The oracle
is ``methods.fuse`` on the input lanes (equal weights), scored with the workspace's
measure, and the best lane picked here by hand (highest mean over the positives, first on
ties). Rank methods take no normalisation (the selector is disabled); rrf and wrrf follow
the k slider. Snapshots at 80×24 and 200×60 with a score method picked."""

from __future__ import annotations

import pytest
from support import picture_ready, settle
from test_tui import KEY, demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures: the one way these tests build and drive the app)
from textual.widgets import Select

from rankscope_tui.kernel.fusion import methods as F
from rankscope_tui.widgets import fmt

SMALL, LARGE = (80, 24), (200, 60)


def _oracle(ws, spec: str, metric: str, k: float):
    key = next(m for m in ws.settings.metrics if m.key == metric)
    fused = F.fuse([ws.lanes[n] for n in ws.input_lanes], spec, None, k=k, n_queries=ws.n_queries,
                   depth=ws.settings.depth, doc_ids=ws.doc_order)
    values = ws.metrics_of(fused, "doc", (key,))[metric]
    pos = ws.positives
    means = {n: float(ws.per_query(n, "doc")[metric][pos].mean()) for n in ws.input_lanes}
    best = next(n for n in ws.input_lanes if means[n] == max(means.values()))
    bv = ws.per_query(best, "doc")[metric]
    rows = sorted((str(ws.qids[q]), float(values[q]), float(bv[q]), float(values[q] - bv[q])) for q in pos.tolist())
    return best, rows


async def _pick(app, pilot, method: str, norm: str | None = None):
    screen = app.screen
    screen.query_one("#rrf-method", Select).value = method
    await settle(app, pilot)
    if norm is not None:
        screen.query_one("#rrf-norm", Select).value = norm
        await settle(app, pilot)
    return screen


def _check(screen, spec: str, k: float):
    ws, m = screen.ws, screen.metric
    r = screen.method_result
    best, rows = _oracle(ws, spec, m, k)
    assert r is not None and r.name == spec and r.best_lane == best
    assert sorted(r.rows) == rows  # every positive, the same values
    assert [row[3] for row in r.rows] == sorted(row[3] for row in r.rows)  # largest losses first
    table = screen.query_one("#rrf-method-table")
    shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
    assert shown == [[q, fmt.num(f), fmt.num(b), fmt.num(d)] for q, f, b, d in r.rows]
    assert [str(c.label) for c in table.columns.values()] == ["qid", spec, best, "Δ"]


async def test_picking_a_method_and_normalisation_shows_its_differences(demo_options, loaded):
    app = make_app(demo_options, loaded)
    async with app.run_test(size=LARGE) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["rrf"])
        await settle(app, pilot)
        screen = app.screen
        assert screen.query_one("#rrf-norm", Select).disabled  # rrf: ranks, no normalisation
        _check(screen, "rrf", screen.k)
        screen = await _pick(app, pilot, "combmnz", "zmuv")
        assert not screen.query_one("#rrf-norm", Select).disabled
        _check(screen, "combmnz:zmuv", screen.k)
        screen = await _pick(app, pilot, "borda")
        assert screen.query_one("#rrf-norm", Select).disabled
        _check(screen, "borda", screen.k)
        screen = await _pick(app, pilot, "wrrf")
        screen.set_k(10)  # wrrf follows the slider
        await settle(app, pilot, 0.3)
        assert screen.k == 10 and screen.method_result.k == 10
        _check(screen, "wrrf", 10)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
def test_snapshot_fusion_method(snap_compare, demo_options, loaded, size):
    async def run_before(pilot):
        app = pilot.app
        await settle(app, pilot)
        await pilot.press(KEY["rrf"])
        await settle(app, pilot)
        await _pick(app, pilot, "combsum", "zmuv")
        app.screen.set_focus(None)
        await picture_ready(app, pilot)

    assert snap_compare(make_app(demo_options, loaded), terminal_size=size, run_before=run_before)
