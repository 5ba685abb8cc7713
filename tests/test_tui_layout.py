"""The dashboard's layout (issue 13 items 15-18, 26; issue 14 item 7): every view at 80×24 and
200×60 shows its key numbers, read from the rendered text of its widgets (what a person
sees: a column cut by a stale width or pushed off the right edge is not there), plus one
snapshot per view at 80×24.

The oracles are the report's own cells (the numbers are tested elsewhere; here the question
is whether they reach the screen whole), Cranfield's stratum sizes counted from the strata
file, and the best k recomputed by hand over the plotted curve.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from support import SHARED_DATA, picture_ready, settle
from test_tui import FAST, KEY, demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures: the one way these tests build and drive the app)
from textual.geometry import Region

from rankscope_tui.commands.tui import demo_argv, parse_args
from rankscope_tui.demo import SHOWCASE
from rankscope_tui.kernel.instruments import compare as CMP
from rankscope_tui.screens import VIEWS
from rankscope_tui.widgets import fmt

SMALL, LARGE, SNAP = (80, 24), (200, 60), (140, 45)
C = SHARED_DATA / "cranfield"
needs_cranfield = pytest.mark.skipif(not C.exists(), reason=f"shared data not found: {C}")


def shown(widget) -> str:
    """The text a widget draws at its laid-out size (all of it, also rows scrolled below the
    screen's fold; only what fits its width: a cut or off-screen column is missing)."""
    w, h = widget.size
    return "\n".join(s.text for s in widget.render_lines(Region(0, 0, w, h)))


def screen_text(app) -> str:
    """What the terminal shows now."""
    return "\n".join(s.text for s in app.screen._compositor.render_strips())


async def open_view(app, pilot, mode: str):
    await settle(app, pilot)
    if mode == "query":
        app.open_query(SHOWCASE["flood_cap_hurts"])
    else:
        await pilot.press(KEY[mode])
    await settle(app, pilot)
    assert app.current_mode == mode
    await pilot.pause()
    return app.screen


def cranfield_argv(strata: bool = True) -> list[str]:
    argv = [a for n in ("bm25", "tfidf", "dense") for a in ("--lane", str(C / "lanes" / f"{n}.run"))]
    argv += ["--qrels", str(C / "qrels-test.txt"), "--group-sep", "#", "--corpus", str(C / "passages.tsv"),
             "--queries", str(C / "queries.tsv"), *FAST]
    if strata:
        argv += ["--strata", str(C / "strata.tsv"), "--strata", str(C / "strata-length.tsv")]
    return argv


# ----------------------------------------------------------------------------- every view, two sizes


def key_numbers(mode: str, screen, report, ws) -> list[tuple[object, str]]:
    """(widget, text it must show) for a view: its key numbers as the report has them."""
    q = screen.query_one
    lanes = list(ws.input_lanes)
    narrow = screen.narrow
    if mode == "overview":
        cells = [fmt.cell(report["lanes"][l]["doc"]["hit@1"], compact=True) for l in lanes]
        share = [fmt.num(report["unique_share"][l]["share"]) for l in lanes] if "unique_share" in report else []
        return [(q("#ov-metrics"), c) for c in cells] + [(q("#ov-summary"), s) for s in share]
    if mode == "strata":
        block = report["strata"]["strata"]
        return [(q("#st-table"), fmt.cell(block[label][l]["doc"]["ndcg@10"], compact=narrow))
                for label in block for l in lanes] + [(q("#st-table"), label) for label in block]
    if mode == "attribution":
        return [(q("#att-counts"), "not_indexed"), (q("#att-counts"), "lexical+dense")]
    if mode == "rrf":
        means = q("#rrf-means")
        want = [fmt.num(report["lanes"]["rrf"]["doc"][m]["value"]) for m in ("hit@1", "hit@5", "ndcg@10")]
        return [(means, w) for w in want] + [(q("#rrf-best"), "best k on the curve")]
    if mode == "calibrate":
        return [(q("#cal-summary"), "fitted on dev")]
    if mode == "gate":
        return [(q("#gate-floors"), "Null floor")]
    if mode == "compare":
        row = screen.row
        return [(q("#cmp-rows"), f"{r.difference:+.4f}") for r in screen.result.result.rows] + [
            (q("#cmp-rows"), row.verdict_text),
            (q("#cmp-verdict"), f"{row.difference:+.4f}"),
            (q("#cmp-verdict"), fmt.interval(row.ci_low, row.ci_high, 4)),
            (q("#cmp-verdict"), fmt.interval(row.unpaired_ci_low, row.unpaired_ci_high, 4))]
    if mode == "verdicts":
        out = []
        for res in screen.results:
            out += [(q("#vd-table"), fmt.num(res.value)), (q("#vd-table"), fmt.interval(res.low, res.high))]
        return out + [(q("#vd-table"), "point"), (q("#vd-table"), "interval verdict")]
    if mode == "goldens":
        rows = screen.result.rows
        return [(q("#gd-summary"), f"all {len(rows)} cases agree"), (q("#gd-table"), f" {rows[0].line} "),
                (q("#gd-table"), "✓"), (q("#gd-table"), rows[0].label),
                (q("#gd-table"), re.compile(r"^ 11 .*\[0/4\] 2 .*\[0/4\] 2\s*$", re.M))]  # both answers on screen
    if mode == "query":
        qc = ws.qid_index[SHOWCASE["flood_cap_hurts"]]
        first = q("#q-first")
        hits = {l: str(ws.lanes[l].doc[ws.lanes[l].rows_of(qc)].size) for l in lanes}
        return [(first, l) for l in lanes] + [(first, re.compile(rf"^ {re.escape(l)}\s+{hits[l]}\s", re.M))
                                              for l in lanes]
    raise AssertionError(mode)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
@pytest.mark.parametrize("mode", [m for m, _ in VIEWS], ids=[f"{KEY[m]}-{m}" for m, _ in VIEWS])
async def test_view_shows_its_key_numbers(demo_options, loaded, mode, size):
    """Issue 13.18: each view, stacked at 80×24 and spread out at 200×60, draws its key numbers
    whole (and the ten view keys are on the bar)."""
    ws, report = loaded
    app = make_app(demo_options, loaded)
    async with app.run_test(size=size) as pilot:
        screen = await open_view(app, pilot, mode)
        assert screen.narrow == (size[0] < 110)
        assert screen.has_class("-narrow") == (size[0] < 110)
        for widget, text in key_numbers(mode, screen, report, screen.ws):
            out = shown(widget)
            ok = text.search(out) if isinstance(text, re.Pattern) else (text and text in out)
            assert ok, f"{mode} at {size}: {text!r} not drawn in #{widget.id}"
        bar = shown(screen.query_one("#viewbar"))
        for i in range(10):
            assert f" {i} " in bar, f"view {i} missing from the bar: {bar!r}"
        assert app._exception is None


async def test_narrow_compare_table_is_readable(demo_options, loaded):
    """Issue 13.18: at 80×24 Compare's rows table keeps whole cells (it wrapped to 1–2
    characters a column): each candidate's name and verdict on one line."""
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_view(app, pilot, "compare")
        lines = shown(screen.query_one("#cmp-rows")).splitlines()
        for r in screen.result.result.rows:
            assert any(r.candidate in ln and f"{r.difference:+.4f}" in ln and r.verdict_text in ln for ln in lines)
        assert screen.query_one("#cmp-rows").region.width >= 70


async def test_narrow_query_and_rrf_show_whole_lists(demo_options, loaded):
    """Issue 13.18: at 80×24 the Query view lists each lane's ranking (not one row per lane)
    and RRF's rankings show whole doc ids."""
    ws, _ = loaded
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_view(app, pilot, "query")
        lanes = list(screen.query(".q-lane"))
        assert lanes and all(l.region.width >= 70 for l in lanes)
        assert all(len(shown(l).splitlines()) >= 8 for l in lanes)
        screen = await open_view(app, pilot, "rrf")
        q = ws.qid_index[screen.focus_qid]
        text = "\n".join(shown(t) for t in screen.query(".rrf-rank"))
        L = ws.lanes[ws.input_lanes[0]]
        for d in L.doc[L.rows_of(q)][:5]:
            assert str(ws.doc_id(d)) in text


# ----------------------------------------------------------------------------- snapshots at 80×24


@pytest.mark.parametrize("mode", [mode for mode, _ in VIEWS], ids=[f"{KEY[m]}-{m}" for m, _ in VIEWS])
def test_snapshot_80x24(snap_compare, demo_options, loaded, mode):
    """One snapshot per view at 80×24 (the stacked layout)."""

    async def run_before(pilot):
        app = pilot.app
        await open_view(app, pilot, mode)
        app.screen.set_focus(None)
        await picture_ready(app, pilot)

    assert snap_compare(make_app(demo_options, loaded), terminal_size=SMALL, run_before=run_before)


# ----------------------------------------------------------------------------- 15, 14.7: strata


@needs_cranfield
async def test_strata_selector_change_rebuilds_the_table():
    """Issue 13.15: on Cranfield, `2`, Enter, Down, Enter picks strata-length; the table shows
    each stratum's n (counted from the file) and whole cells with their intervals; `(none)`
    empties it."""
    app = make_app(parse_args(cranfield_argv()), synthetic=False, source_label="cranfield")
    async with app.run_test(size=SNAP) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("enter", "down", "enter")
        await settle(app, pilot)
        screen = app.screen
        assert screen.stratification == "strata-length"
        ws, rep = screen.ws, screen.report
        pos = {str(q) for q in ws.qids[ws.positives]}
        labels = dict(line.split("\t") for line in (C / "strata-length.tsv").read_text().split("\n") if line)
        n = Counter(labels[q] for q in pos if q in labels)
        text = shown(screen.query_one("#st-table"))
        lines = text.splitlines()
        for label, count in n.items():
            line = next(ln for ln in lines if ln.split() and ln.split()[0] == label)
            assert line.split()[1] == str(count), line
            for lane in ws.input_lanes:
                assert fmt.cell(rep["strata"]["strata-length"][label][lane]["doc"]["ndcg@10"]) in line
        # back to "(none)": no table, a note; never the previous one
        sel = screen.query_one("#st-strat")
        sel.clear()
        await settle(app, pilot)
        assert screen.query_one("#st-table").row_count == 0
        assert "No stratification chosen" in str(screen.query_one("#st-note").render())


@pytest.mark.parametrize("data", [pytest.param("cranfield", marks=needs_cranfield), "demo"])
async def test_navigation_without_strata_does_not_crash(data, demo_dir):
    """Issue 14.7: without --strata, `2` then a view key, Tab, Ctrl+P: no KeyError, the app runs on."""
    if data == "cranfield":
        argv = cranfield_argv(strata=False)
    else:
        argv = demo_argv(demo_dir) + FAST
        i = argv.index("--strata")
        del argv[i:i + 2]
        del argv[argv.index("--blind"):argv.index("--blind") + 2]
    app = make_app(parse_args(argv), synthetic=data == "demo")
    async with app.run_test(size=SNAP) as pilot:
        await settle(app, pilot)
        for keys in (["2", "3"], ["2", "tab"], ["2", "ctrl+p", "escape"], ["2", "tab", "tab", "1"]):
            await pilot.press(*keys)
            await settle(app, pilot)
            assert app._exception is None and app.is_running, keys
        await pilot.press("2")
        await settle(app, pilot)
        assert "No stratification loaded" in str(app.screen.query_one("#st-note").render())


# ----------------------------------------------------------------------------- 16: RRF plot


def test_best_k_picks_the_highest_point_first_on_ties():
    from rankscope_tui.kernel.fusion.rrf_at_k import best_k

    curve = {1: {"m": 0.5}, 5: {"m": 0.7}, 10: {"m": 0.7}, 60: {"m": float("nan")}, 100: {"m": 0.6}}
    assert best_k(curve, "m") == (5, 0.7)
    assert best_k({1: {"m": float("nan")}}, "m") is None


async def test_rrf_plot_lanes_legend_ticks_and_best_k(demo_options, loaded):
    """Issue 13.16: each input lane's reference line has its own visible colour and a legend
    entry with its mean; the k axis has integer ticks; the best k over the curve is read out."""
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SNAP) as pilot:
        screen = await open_view(app, pilot, "rrf")
        ws, m = screen.ws, screen.metric
        from rankscope_tui.screens.rrf import CURVE_KS, LANE_COLOURS

        assert set(CURVE_KS) <= set(screen.curve)
        # the best k by hand over the plotted points: highest mean, smallest k on ties
        top = max(v[m] for v in screen.curve.values())
        want = min(k for k, v in screen.curve.items() if v[m] == top)
        best = shown(screen.query_one("#rrf-best"))
        assert f"best k on the curve: {want:g} ({m} {fmt.num(top, 4)}" in best
        for lane in ws.input_lanes:
            assert f"{lane} {fmt.num(ws.mean(lane, 'doc', m))}" in best
        monitor = screen.query_one("#rrf-plot").plt._active.monitor
        colours = [c[0] if isinstance(c, list) else c for c in monitor.color]
        n = len(ws.input_lanes)
        assert colours[1:1 + n] == list(LANE_COLOURS[:n])  # after the curve: one colour per lane
        assert not {"black", "default"} & set(colours[1:1 + n])
        plot = shown(screen.query_one("#rrf-plot"))
        assert "50.8" not in plot and "100.5" not in plot
        axis = next(ln for ln in plot.splitlines() if " 50 " in ln and "100" in ln and "200" in ln)
        assert axis.split() == ["1", "50", "100", "150", "200"]


# ----------------------------------------------------------------------------- 17: Compare plot


async def test_compare_plot_above_the_fold_without_a_legend_on_the_interval(demo_options, loaded):
    """Issue 13.17: at 140×45 the compare plot is on screen (not below the fold), its rows are
    named on the y axis and no legend is drawn over the intervals."""
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SNAP) as pilot:
        screen = await open_view(app, pilot, "compare")
        plot = screen.query_one("#cmp-plot")
        assert plot.region.height >= 7 and plot.region.bottom <= SNAP[1] - 1, plot.region
        monitor = plot.plt._active.monitor
        assert not any(label for label in monitor.label if label), monitor.label
        text = screen_text(app)
        assert "paired" in shown(plot) and "unpaired" in shown(plot)
        assert "█" in shown(plot)  # the paired interval, drawn whole
        assert "mean Δ" in shown(screen.query_one("#cmp-plot-key"))
        assert f"{screen.row.difference:+.4f}" in text


# ----------------------------------------------------------------------------- 26: Compare cached


def test_compare_is_computed_once_per_settings(loaded, monkeypatch):
    """Issue 13.26: the kernel's comparison is memoised on the workspace: the same settings
    give the same result without running the statistics again; other settings run them."""
    from rankscope_tui.kernel.settings import CompareSettings

    ws, _ = loaded
    calls = []
    real = CMP.run_compare
    monkeypatch.setattr(CMP, "run_compare", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    s = CompareSettings(baseline="lexical", candidates=("dense",), metrics=("ndcg@10",), correction="bonferroni")
    a = CMP.compare(ws, None, s)
    b = CMP.compare(ws, None, s)
    assert a is b and len(calls) == 1
    c = CMP.compare(ws, None, CompareSettings(baseline="lexical", candidates=("dense",), metrics=("hit@1",),
                                               correction="bonferroni"))
    assert c is not a and len(calls) == 2


async def test_compare_revisit_is_immediate(demo_options, loaded, monkeypatch):
    """Issue 13.26: coming back to Compare with the same settings runs no new comparison (no
    worker, no statistics) and redraws nothing: the result on screen is the one computed."""
    calls = []
    real = CMP.run_compare
    monkeypatch.setattr(CMP, "run_compare", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SNAP) as pilot:
        screen = await open_view(app, pilot, "compare")
        first, before = len(calls), screen.result
        starts = []
        real_worker = screen.run_compare
        monkeypatch.setattr(screen, "run_compare", lambda *a: starts.append(1) or real_worker(*a))
        for _ in range(2):
            await pilot.press("1")
            await settle(app, pilot)
            screen._stale = True  # a revisit that asks again, as after new data arrives
            await pilot.press("7")
            await settle(app, pilot)
        assert starts == [] and len(calls) == first, "the revisit computed again"
        assert screen.result is before and screen.query_one("#cmp-verdict").loading is False
        assert f"{screen.row.difference:+.4f}" in shown(screen.query_one("#cmp-verdict"))
