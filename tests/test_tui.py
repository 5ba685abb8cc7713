"""The dashboard: Pilot tests on app state, one snapshot per view, export parity, errors.

Every test drives the app as a person would (keys) and asserts on the app's state, not
on scraped text; workers are awaited (``app.workers.wait_for_complete()``), never slept
on. The demo is written once per session; the workspace and report are shared by the
tests that do not load or export (they are read-only to the screens).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("textual")

from textual.widgets import Input, Select  # noqa: E402
from textual.worker import WorkerFailed  # noqa: E402

from rankscope_tui.app import RankscopeApp  # noqa: E402
from rankscope_tui.commands.tui import demo_argv, evaluate_argv, parse_args  # noqa: E402
from rankscope_tui.demo import SHOWCASE, write_demo  # noqa: E402
from rankscope_tui.screens import VIEWS  # noqa: E402
from rankscope_tui.widgets.dialogs import ErrorDialog, ExportDialog, HelpScreen, SearchDialog, ValueDialog  # noqa: E402

SIZE = (140, 45)
FAST = ["--resamples", "999"]  # compare refuses 0 < B < 999; 999 keeps the suite fast


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("demo")
    write_demo(d, seed=7)
    return d


@pytest.fixture(scope="session")
def demo_args(demo_dir):
    return parse_args(demo_argv(demo_dir) + FAST)


@pytest.fixture(scope="session")
def loaded(demo_args):
    """(workspace, report) of the demo, computed once as `evaluate` computes them."""
    from rankscope_tui.cli import gate_options, load_workspace
    from rankscope_tui.kernel.pipeline import evaluate_report

    ws = load_workspace(demo_args)
    report = evaluate_report(ws, gate_options(demo_args), thresholds_path=demo_args.thresholds)
    return ws, report


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch):
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


def make_app(demo_args, loaded) -> RankscopeApp:
    ws, report = loaded
    return RankscopeApp(demo_args, workspace=ws, report=report, synthetic=True, source_label="demo (seed 7)")


async def settle(app, pilot, extra: float = 0.0) -> None:
    """Wait for timers (debounce), then every worker, then the messages they posted."""
    if extra:
        await pilot.pause(extra)
    for _ in range(2):
        try:
            await app.workers.wait_for_complete()
        except WorkerFailed:  # the app shows it in the error dialog; tests assert on that
            pass
        await pilot.pause()


# ----------------------------------------------------------------------------- architecture


def test_kernel_does_not_import_textual():
    code = (
        "import sys, rankscope_tui.kernel, rankscope_tui.kernel.workspace, rankscope_tui.kernel.report, "
        "rankscope_tui.kernel.pipeline, rankscope_tui.kernel.gate\n"
        "import importlib\n"
        "for m in ('fusion', 'compare', 'intervals', 'attribution', 'rules'):\n"
        "    try: importlib.import_module('rankscope_tui.kernel.' + m)\n"
        "    except ModuleNotFoundError: pass\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_plotext', 'rich'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def cli_main(argv: list[str]) -> int:
    from rankscope_tui import cli

    return cli.main(argv)


def test_cli_registers_tui():
    from rankscope_tui import cli

    cli._register_extra()
    args = cli.build_parser().parse_args(["tui"])
    assert args.command == "tui" and args.lane == [] and args.qrels is None


def test_tui_without_inputs_opens_the_synthetic_demo(tmp_path, monkeypatch):
    from rankscope_tui.cli import CliError
    from rankscope_tui.commands.tui import resolve

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    args, synthetic, label = resolve(parse_args([]))
    assert synthetic and "demo" in label
    assert [Path(p).name for _, p in args.lane] == ["lexical.run", "dense.run"]
    assert Path(args.qrels).name == "qrels-test.txt" and Path(args.dev_qrels).name == "qrels-dev.txt"
    again, _, _ = resolve(parse_args([]))  # cached: the same files
    assert again.qrels == args.qrels
    with pytest.raises(CliError):
        resolve(parse_args(["--lane", args.lane[0][1]]))
    with pytest.raises(CliError):
        resolve(parse_args(["--qrels", args.qrels]))


# ----------------------------------------------------------------------------- navigation


async def test_number_keys_reach_the_nine_views(demo_args, loaded):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for i, (mode, title) in enumerate(VIEWS, 1):
            await pilot.press(str(i))
            await pilot.pause()
            assert app.current_mode == mode
            assert app.screen.title == f"{i} {title}"
        await settle(app, pilot)
        assert not isinstance(app.screen, ErrorDialog)


async def test_help_and_palette(demo_args, loaded):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == "overview" and not isinstance(app.screen, HelpScreen)
        # the palette's "set k" switches to the RRF view and moves the slider
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"set k 30")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(app, pilot, 0.2)
        assert app.current_mode == "rrf"
        assert app.screen.k == 30 and app.screen.drawn_k == 30


# ----------------------------------------------------------------------------- views


async def test_overview_tables_and_parsed_ties(demo_args, loaded):
    ws, report = loaded
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        table = screen.query_one("#ov-metrics")
        assert table.row_count == len(report["lanes"]) and screen.level == "doc"
        await pilot.press("g")
        await pilot.pause()
        assert screen.level == "group" and table.row_count == len(report["lanes"])
        assert screen.parsed_qid == SHOWCASE["tie"] and screen.parsed_lane == ws.input_lanes[0]
        parsed = screen.query_one("#ov-parsed")
        ties = [parsed.get_row_at(i)[3] for i in range(parsed.row_count)]
        assert any(str(t).strip() for t in ties), "the showcase query has a visible tie"
        await pilot.press("t")
        await pilot.pause()
        assert screen.parsed_qid != SHOWCASE["tie"]
        await pilot.press("l")
        await pilot.pause()
        assert screen.parsed_lane == ws.input_lanes[1]
        parsed.focus()
        await pilot.press("enter")  # Enter on the parsed list drills into its query
        await pilot.pause()
        assert app.current_mode == "query" and app.qid == screen.parsed_qid


async def test_strata_choose_and_drill(demo_args, loaded):
    ws, report = loaded
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        screen = app.screen
        assert screen.stratification == "strata" and screen.metric == "ndcg@10"
        assert screen.query_one("#st-table").row_count == len(report["strata"]["strata"]) + 1
        screen.query_one("#st-metric", Select).value = "hit@10"
        await pilot.pause()
        assert screen.metric == "hit@10"
        table = screen.query_one("#st-table")
        narrow = len(table.columns)
        await pilot.press("v")  # the cap / document-first variants join the table
        await pilot.pause()
        assert len(table.columns) == narrow + sum(1 for o in ws.lane_origin.values() if o == "variant")
        table.focus()
        await pilot.press("down")
        await pilot.pause()
        second = list(report["strata"]["strata"])[1]
        assert screen.label == second
        queries = screen.query_one("#st-queries")
        assert queries.row_count > 0
        first_qid = queries.coordinate_to_cell_key((0, 0)).row_key.value
        queries.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "query" and app.qid == first_qid
        assert ws.strata["strata"][ws.qid_index[first_qid]] == second


async def test_attribution_view(demo_args, loaded):
    ws, report = loaded
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        screen = app.screen
        att = screen.result
        assert att is not None and att.level == "doc" and att.lanes == tuple(ws.input_lanes)
        counts = screen.query_one("#att-counts")
        assert counts.row_count == len(att.overall.counts)
        if "attribution" in report:  # the screen and the report read one kernel computation
            shares = report["attribution"]["doc"]["unique_share"]
            assert {u.lane: u.count for u in att.overall.unique} == {k: v["count"] for k, v in shares.items()}
        # pick the blind-stratum label of the lexical lane's failures: "dense" alone
        labels = [name for name, _ in att.overall.counts]
        counts.focus()
        counts.move_cursor(row=labels.index("dense"))
        await pilot.pause()
        assert screen.label == "dense"
        queries = screen.query_one("#att-queries")
        assert queries.row_count == dict(att.overall.counts)["dense"] > 0
        qid = queries.coordinate_to_cell_key((0, 0)).row_key.value
        queries.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "query" and app.qid == qid
        # group level
        await pilot.press("escape")
        await pilot.pause()
        screen.query_one("#att-level", Select).value = "group"
        await settle(app, pilot)
        assert screen.result.level == "group"


async def test_rrf_slider_recomputes_and_opens_on_dilution(demo_args, loaded):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        screen = app.screen
        assert screen.drawn_k == 60
        assert screen.focus_qid == SHOWCASE["dilution"], "opens on the query fusion dilutes"
        curve_before = dict(screen.curve)
        assert len(curve_before) >= 10
        mean_60 = screen.current.means["ndcg@10"]
        await pilot.press("right", "right", "right")
        await settle(app, pilot, 0.15)
        assert screen.k == 63 and screen.drawn_k == 63 and screen.current.k == 63
        assert 63 in screen.curve
        await pilot.press("shift+right")
        await settle(app, pilot, 0.15)
        assert screen.drawn_k == 73
        await pilot.press("home")
        await settle(app, pilot, 0.15)
        assert screen.drawn_k == 1 and screen.current.means["ndcg@10"] != mean_60
        await pilot.press("end")
        await settle(app, pilot, 0.15)
        assert screen.drawn_k == 200
        await pilot.press("right")  # clamped
        await settle(app, pilot, 0.15)
        assert screen.k == 200
        # the plot holds the curve and the current point
        plot = screen.query_one("#rrf-plot")
        assert plot.plt._active.monitor.y  # something is drawn
        # Enter on a diluted query drills into it
        diluted = screen.query_one("#rrf-diluted")
        diluted.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "query" and app.qid == diluted.coordinate_to_cell_key((0, 0)).row_key.value


async def test_calibrate_fits_on_dev_and_cheats_on_test(demo_args, loaded):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        screen = app.screen
        r = screen.result
        assert r is not None and r.fit_dev is not None and r.params.step == 0.1
        assert abs(sum(r.fit_dev.weights) - 1) < 1e-12 and r.fit_dev.n_points == 11
        assert not screen.fit_on_test
        await pilot.press("f")
        await pilot.pause()
        assert screen.fit_on_test
        # in-sample fit is at least as good on test as the dev fit scored on test
        assert r.fit_test.objective >= r.test_at_dev["ndcg@10"]
        screen.query_one("#cal-step", Select).value = 0.05
        await settle(app, pilot)
        assert screen.result.params.step == 0.05 and screen.result.fit_test.n_points == 21


async def test_gate_target_and_conservative(demo_args, loaded):
    ws, _ = loaded
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        screen = app.screen
        r = screen.result
        assert r.params.lane == "dense" and r.params.target == 0.05 and not r.params.conservative
        assert set(r.negatives) == {"in_domain", "out_of_domain"}
        assert r.rule_of_three[1]["wilson_n"] == 73 and r.rule_of_three[1]["rule_of_three_n"] == 60
        # the out-of-domain floor looks safe and is not: it accepts in-domain negatives
        ood = r.nulls["out_of_domain"]
        assert ood.fpir["in_domain"].value > r.nulls["in_domain"].fpir["in_domain"].value
        await pilot.press("c")
        await settle(app, pilot)
        assert screen.result.params.conservative
        target = screen.query_one("#gate-target", Input)
        target.value = "0.2"
        await settle(app, pilot, 0.25)
        assert screen.result.params.target == 0.2
        margin = screen.query_one("#gate-margin", Input)
        margin.value = "0.01"
        mutual = screen.query_one("#gate-mutual", Input)
        mutual.value = "2"
        await settle(app, pilot, 0.25)
        assert screen.result.params.margin == 0.01 and screen.result.mutual_summary is not None
        assert screen.result.op_margin is not None


async def test_compare_toggle_and_drill(demo_args, loaded):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        screen = app.screen
        row = screen.result.row
        assert (row.baseline, row.candidate, row.metric) == ("lexical", "rrf", "ndcg@10")
        assert row.n == loaded[0].positives.size and row.resamples == 999
        assert row.verdict in ("better", "worse", "inconclusive")
        assert screen.paired
        await pilot.press("p")
        await pilot.pause()
        assert not screen.paired
        deltas = screen.query_one("#cmp-deltas")
        assert deltas.row_count == row.n
        first = deltas.coordinate_to_cell_key((0, 0)).row_key.value
        assert row.largest_losses and first == row.largest_losses[0].qid, "largest losses first"
        deltas.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "query" and app.qid == first
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == "compare"
        await pilot.press("s")
        await settle(app, pilot)
        assert (screen.result.row.baseline, screen.result.row.candidate) == ("rrf", "lexical")


async def test_verdicts_edit_threshold(demo_args, loaded):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("8")
        await settle(app, pilot)
        screen = app.screen
        assert len(screen.rules) == 5
        assert all(r is not None for r in screen.results), "every rule resolves against the report"
        i = next(i for i, r in enumerate(screen.rules) if r.against is None)
        table = screen.query_one("#vd-table")
        table.focus()
        table.move_cursor(row=i)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ValueDialog)
        res = screen.results[i]
        # a threshold between the interval's low end and the point: the columns disagree
        new = round((res.low + res.value) / 2, 6)
        dialog_input = app.screen.query_one(Input)
        dialog_input.value = repr(new)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.rules[i].threshold == new
        assert screen.results[i].point == "pass" and screen.results[i].interval == "fail"
        await pilot.press("r")
        await pilot.pause()
        assert screen.rules == screen.file_rules


async def test_query_drilldown_and_search(demo_args, loaded):
    ws, _ = loaded
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchDialog)
        await pilot.press(*SHOWCASE["flood_cap_hurts"], "enter")
        await pilot.pause()
        assert app.current_mode == "query" and app.qid == SHOWCASE["flood_cap_hurts"]
        screen = app.screen
        await settle(app, pilot)
        assert screen.shown_qid == app.qid
        assert screen.lanes_shown[: len(ws.input_lanes)] == ws.input_lanes
        first = screen.query_one("#q-first")
        assert first.row_count == len(screen.lanes_shown)
        assert not any("+" in lane for lane in screen.lanes_shown)
        await pilot.press("v")  # lesson 16: the cap / document-first variants beside their lanes
        await settle(app, pilot)
        assert "lexical+cap5" in screen.lanes_shown and "lexical+docfirst+cap5" in screen.lanes_shown
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.qid != SHOWCASE["flood_cap_hurts"] and screen.shown_qid == app.qid
        # search by text
        await pilot.press("slash")
        await pilot.pause()
        app.screen.query_one(Input).value = ws.query_text[SHOWCASE["dilution"]]  # as if typed
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.qid == SHOWCASE["dilution"]
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == "overview"


# ----------------------------------------------------------------------------- export and errors


async def test_export_equals_evaluate_out_byte_for_byte(demo_dir, tmp_path):
    """`e` writes exactly what `rankscope evaluate --out` writes with the same inputs and settings."""
    argv = demo_argv(demo_dir) + FAST
    cli_out = tmp_path / "cli.json"
    assert cli_main(["evaluate", *evaluate_argv(argv), "--out", str(cli_out)]) == 0
    tui_out = tmp_path / "tui.json"
    app = RankscopeApp(parse_args(argv), synthetic=True, source_label="demo")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.report is not None
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        path = app.screen.query_one("#export-path", Input)
        path.value = str(tui_out)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.exported == [str(tui_out)]
    assert tui_out.read_bytes() == cli_out.read_bytes()


async def test_malformed_file_shows_the_cli_error_and_keeps_running(demo_dir, tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1#p1 1 1.5 run\nq1 Q0 d2#p1 2 not-a-number run\n", encoding="utf-8")
    argv = ["--lane", str(bad), "--qrels", str(demo_dir / "qrels-test.txt")]
    assert cli_main(["evaluate", *argv]) == 2
    cli_line = capsys.readouterr().err.strip()
    assert cli_line.startswith("rankscope: error: ") and ":2:" in cli_line
    app = RankscopeApp(parse_args(argv), source_label="bad")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorDialog)
        assert app.screen.message == cli_line
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ErrorDialog) and app.is_running
        for key in "469":  # views cope with no data
            await pilot.press(key)
            await pilot.pause()
        assert app.is_running and not isinstance(app.screen, ErrorDialog)


async def test_a_worker_that_raises_shows_the_dialog(demo_args, loaded, monkeypatch):
    from rankscope_tui.screens import gate as gate_screen

    def boom(ws, p):
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(gate_screen, "compute_gate", boom)
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorDialog)
        assert "kernel exploded" in app.screen.message
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        assert app.is_running and app.current_mode == "overview"


async def test_export_refuses_to_overwrite_an_input(demo_args, loaded, demo_dir):
    app = make_app(demo_args, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(demo_dir / "qrels-test.txt")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorDialog)
        assert "refusing to overwrite an input" in app.screen.message
        assert app.exported == []


# ----------------------------------------------------------------------------- snapshots


SNAP_SIZE = (140, 45)


@pytest.mark.parametrize("key,mode", [(str(i), mode) for i, (mode, _) in enumerate(VIEWS, 1)])
def test_snapshot(snap_compare, demo_args, loaded, key, mode):
    app = make_app(demo_args, loaded)

    async def run_before(pilot) -> None:
        await settle(app, pilot)
        if mode == "query":
            app.open_query(SHOWCASE["flood_cap_hurts"])
        else:
            await pilot.press(key)
        await settle(app, pilot, 0.15)
        app.screen.set_focus(None)
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=SNAP_SIZE)
