"""The dashboard: Pilot tests on app state, one snapshot per view, export parity, errors.

Every test drives the app as a person would (keys, choices in widgets) and asserts on the
app's state, not on scraped text; workers are awaited (``app.workers.wait_for_complete()``),
never slept on.

Speed: the demo (conftest's ``demo_dir``), its workspace and its report are made once per
session and handed to every app. The ten snapshots go through pytest-textual-snapshot's
public ``snap_compare``: a fresh app per view, the view's number key pressed once its data
is loaded. One app, ``work``, is shared by the view tests that change state (they run in one
module-scoped event loop); each works in its own view (and the query drill-down), so none
depends on what another left behind. Tests that load through the app's own worker or export
get a fresh app. Every app is built by ``make_app``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import pytest_asyncio
from support import picture_ready, settle
from textual.widgets import Checkbox, Input, Select, SelectionList

from rankscope_tui.app import RankscopeApp
from rankscope_tui.commands.tui import demo_argv, evaluate_argv, parse_args, state_from_args
from rankscope_tui.demo import SHOWCASE
from rankscope_tui.kernel.gate.analysis import GateLabel
from rankscope_tui.screens import VIEW_KEYS, VIEWS
from rankscope_tui.state import DashboardOptions, DashboardState, evaluate, load_workspace
from rankscope_tui.widgets.dialogs import ErrorDialog, ExportDialog, HelpScreen, SearchDialog, ValueDialog

SIZE = (140, 45)  # the snapshots' terminal
WORK_SIZE = (120, 36)  # the Pilot tests': every view still lays out; a smaller screen repaints faster
FAST = ["--resamples", "999"]  # compare refuses 0 < B < 999; 999 keeps the suite fast
KEY = VIEW_KEYS  # 1–9, then 0

module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="session")
def demo_options(demo_dir) -> DashboardOptions:
    """The demo's options, as `rankscope tui` builds them from its command line."""
    return state_from_args(parse_args(demo_argv(demo_dir) + FAST), synthetic=True).options


@pytest.fixture(scope="session")
def loaded(demo_options):
    """(workspace, report) of the demo, computed once as `evaluate` computes them."""
    return evaluate(demo_options, load_workspace(demo_options))


QUIET = 0.03  # the screens' debounce / throttle windows in these tests (seconds)


@pytest.fixture(scope="module", autouse=True)
def test_timing():
    """The debounce windows that spare a person's typing a recompute per key are shortened,
    so that a test waits ``2 * QUIET`` after a change instead of a quarter second (the
    coalescing is unchanged)."""
    from rankscope_tui.screens import compare, gate, rrf

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compare, "DEBOUNCE", QUIET)
        mp.setattr(gate, "DEBOUNCE", QUIET)
        mp.setattr(rrf, "METHOD_QUIET", QUIET)
        yield


def make_app(options, loaded=None, *, synthetic: bool = True, source_label: str = "demo (seed 7)") -> RankscopeApp:
    """The one place these tests build the dashboard: ``options`` (DashboardOptions, or the
    arguments `rankscope tui` parsed), ``loaded`` the (workspace, report) computed as
    `evaluate` computes them (None: the app loads them in its own worker)."""
    if not isinstance(options, DashboardOptions):
        options = state_from_args(options).options
    ws, report = loaded if loaded is not None else (None, None)
    return RankscopeApp(DashboardState(options, synthetic=synthetic, source_label=source_label,
                                       base_workspace=ws, report=report))


async def view(app, pilot, mode: str):
    """Close any dialog left open, press the view's number key, wait; the view's screen."""
    while len(app.screen_stack) > 1:
        app.pop_screen()
    await pilot.press(KEY[mode])
    await settle(app, pilot)
    assert app.current_mode == mode
    return app.screen


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def work(demo_options, loaded):
    """An app for the view tests that change state, each in its own view."""
    app = make_app(demo_options, loaded)
    async with app.run_test(size=WORK_SIZE) as pilot:
        await settle(app, pilot)
        yield app, pilot


# ----------------------------------------------------------------------------- the command line


def _imported_modules(path: Path) -> set[str]:
    """Absolute names of the rankscope_tui modules a source file imports (anywhere in it)."""
    import ast

    rel = path.relative_to(Path(__file__).resolve().parents[1]).with_suffix("")
    package = list(rel.parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out |= {mod} | {f"{mod}.{a.name}" for a in node.names}
    return {m for m in out if m.startswith("rankscope_tui")}


def test_screens_import_only_the_kernel_render_widgets_and_state():
    """The import arrows (issue 12): screens and widgets reach the app at run time through
    ``self.app``; they import the kernel, the output layer, the widgets, the state and each other, never the
    app, the command line or the demo; the app never imports the command line or the demo."""
    root = Path(__file__).resolve().parents[1] / "rankscope_tui"
    allowed = ("rankscope_tui.kernel", "rankscope_tui.render", "rankscope_tui.widgets", "rankscope_tui.state",
               "rankscope_tui.screens")
    for path in sorted([*root.glob("screens/*.py"), *root.glob("widgets/*.py")]):
        bad = {m for m in _imported_modules(path) if not m.startswith(allowed)}
        assert not bad, f"{path.name} imports {sorted(bad)}"
    forbidden = ("rankscope_tui.cli", "rankscope_tui.commands", "rankscope_tui.demo")
    assert not {m for m in _imported_modules(root / "app.py") if m.startswith(forbidden)}


def cli_main(argv: list[str]) -> int:
    from rankscope_tui import cli

    return cli.main(argv)


def test_cli_registers_tui():
    from rankscope_tui.commands import build_parser

    args = build_parser().parse_args(["tui"])
    assert args.command == "tui" and args.lane == [] and args.qrels is None


def test_tui_without_inputs_opens_the_synthetic_demo(tmp_path, monkeypatch):
    from rankscope_tui.commands.options import CliError
    from rankscope_tui.commands.tui import resolve

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    state = resolve(parse_args([]))
    args = state.options
    assert state.synthetic and "demo" in state.source_label
    assert [Path(p).name for _, p in args.lanes] == ["lexical.run", "dense.run"]
    assert Path(args.qrels).name == "qrels-test.txt" and Path(args.dev_qrels).name == "qrels-dev.txt"
    assert args.gates in state.protected_paths and args.dev_qrels in state.protected_paths
    again = resolve(parse_args([]))  # cached: the same files
    assert again.options.qrels == args.qrels
    with pytest.raises(CliError):
        resolve(parse_args(["--lane", args.lanes[0][1]]))
    with pytest.raises(CliError):
        resolve(parse_args(["--qrels", args.qrels]))


def test_the_demo_report_says_synthetic(loaded):
    """SPEC §11: labelled synthetic everywhere it is shown — report.json too, and the export
    must stay byte-identical to `evaluate --out`, so the kernel loader has to know."""
    ws, report = loaded
    assert ws.synthetic and report.get("synthetic") is True


# ----------------------------------------------------------------------------- one snapshot per view


@pytest.mark.parametrize("mode", [mode for mode, _ in VIEWS], ids=[f"{KEY[m]}-{m}" for m, _ in VIEWS])
def test_snapshot(snap_compare, demo_options, loaded, mode):
    """One snapshot per view, at 140×45: a fresh app on the shared report, the view's key
    pressed once the data is in (the query view opens on the flood-cap showcase query)."""

    async def open_view(pilot):
        app = pilot.app
        await settle(app, pilot)
        if mode == "query":
            app.open_query(SHOWCASE["flood_cap_hurts"])
        else:
            await pilot.press(KEY[mode])
        await settle(app, pilot)
        assert app.current_mode == mode and app.screen.title == f"{KEY[mode]} {dict(VIEWS)[mode]}"
        app.screen.set_focus(None)  # no focused widget: no blinking cursor in the picture
        await picture_ready(app, pilot)

    assert snap_compare(make_app(demo_options, loaded), terminal_size=SIZE, run_before=open_view)


# ----------------------------------------------------------------------------- views that change state


@module_loop
async def test_number_keys_reach_the_ten_views(work):
    app, pilot = work
    while len(app.screen_stack) > 1:
        app.pop_screen()
    assert [KEY[m] for m, _ in VIEWS] == [*"1234567890"]
    for mode, title in VIEWS:
        await pilot.press(KEY[mode])
        await pilot.pause()
        assert app.current_mode == mode
        assert app.screen.title == f"{KEY[mode]} {title}"
    await settle(app, pilot)
    assert not isinstance(app.screen, ErrorDialog)
    await pilot.press("1")
    await pilot.press("question_mark")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen)
    await pilot.press("escape")
    await pilot.pause()
    assert app.current_mode == "overview" and not isinstance(app.screen, HelpScreen)


@module_loop
async def test_overview_tables_and_parsed_ties(work, loaded):
    ws, report = loaded
    app, pilot = work
    screen = await view(app, pilot, "overview")
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


@module_loop
async def test_strata_choose_and_drill(work, loaded):
    ws, report = loaded
    app, pilot = work
    screen = await view(app, pilot, "strata")
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


@module_loop
async def test_attribution_view(work, loaded):
    ws, report = loaded
    app, pilot = work
    screen = await view(app, pilot, "attribution")
    att = screen.result
    assert att is not None and att.level == "doc" and att.lanes == tuple(ws.input_lanes)
    counts = screen.query_one("#att-counts")
    assert counts.row_count == len(att.overall.counts)
    shares = report["attribution"]["doc"]["unique_share"]  # the screen and the report read one computation
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
    await pilot.press("escape")
    await pilot.pause()
    assert app.current_mode == "attribution"
    screen.query_one("#att-level", Select).value = "group"
    await settle(app, pilot)
    assert screen.result.level == "group"


@module_loop
async def test_rrf_slider_recomputes_and_opens_on_dilution(work):
    app, pilot = work
    screen = await view(app, pilot, "rrf")
    assert screen.drawn_k == 60
    assert screen.focus_qid == SHOWCASE["dilution"], "opens on the query fusion dilutes"
    assert len(screen.curve) >= 10
    mean_60 = screen.current.means["ndcg@10"]
    await pilot.press("right", "right", "right")
    await settle(app, pilot, 2 * QUIET)
    assert screen.k == 63 and screen.drawn_k == 63 and screen.current.k == 63
    assert 63 in screen.curve
    await pilot.press("shift+right")
    await settle(app, pilot, 2 * QUIET)
    assert screen.drawn_k == 73
    await pilot.press("home")
    await settle(app, pilot, 2 * QUIET)
    assert screen.drawn_k == 1 and screen.current.means["ndcg@10"] != mean_60
    await pilot.press("end", "right")  # clamped at the end
    await settle(app, pilot, 2 * QUIET)
    assert screen.k == 200 and screen.drawn_k == 200
    assert screen.query_one("#rrf-plot").plt._active.monitor.y  # the curve and the current point are drawn
    # Enter on a diluted query drills into it
    diluted = screen.query_one("#rrf-diluted")
    diluted.focus()
    await pilot.press("enter")
    await pilot.pause()
    assert app.current_mode == "query" and app.qid == diluted.coordinate_to_cell_key((0, 0)).row_key.value
    # the palette's "set k" switches back to the RRF view and moves the slider
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*"set k 30")
    await pilot.pause(0.3)
    await pilot.press("enter")
    await settle(app, pilot, 2 * QUIET)
    assert app.current_mode == "rrf" and app.screen is screen
    assert screen.k == 30 and screen.drawn_k == 30


@module_loop
async def test_rrf_view_at_the_default_k_shows_the_reports_numbers(work, loaded):
    """At the report's k the view's means and dilution are `evaluate --out`'s (``lanes.rrf``,
    ``fusion.rrf.dilution``) and the kernel entry point's; so is the table it draws."""
    from rankscope_tui.kernel.fusion.rrf_at_k import rrf_at_k
    from rankscope_tui.widgets import fmt

    ws, report = loaded
    app, pilot = work
    screen = await view(app, pilot, "rrf")
    screen.set_k(61)
    await settle(app, pilot, 2 * QUIET)
    screen.set_k(60)
    await settle(app, pilot, 2 * QUIET)
    r = screen.current
    assert r.k == 60 and screen.drawn_k == 60
    entry = rrf_at_k(ws)
    metrics = [m.key for m in ws.settings.metrics]
    want = {m: report["lanes"]["rrf"]["doc"][m]["value"] for m in metrics}
    assert r.means == entry.means == want
    table = screen.query_one("#rrf-means")
    assert [str(table.get_cell("\0rrf", m)) for m in metrics] == [fmt.num(want[m]) for m in metrics]
    dil = {lane: e["queries"] for lane, e in report["fusion"]["rrf"]["dilution"]["lanes"].items()}
    for got in (r, entry):
        assert {lane: [str(ws.qids[int(q)]) for q in qs] for lane, qs in got.diluted.items()} == dil
    listed = [row.value for row in screen.query_one("#rrf-diluted").rows]
    assert sorted(listed) == sorted({q for qs in dil.values() for q in qs})
    # the slider and the curve (20 k) went through one explorer: it holds a few fused lanes only
    assert len(screen.curve) >= 20 and len(screen._explorer.kept) <= screen._explorer.limit


@module_loop
async def test_calibrate_fits_on_dev_loaded_like_the_main_workspace(work, loaded):
    ws, _ = loaded
    app, pilot = work
    screen = await view(app, pilot, "calibrate")
    r = screen.result
    assert r is not None and r.fit_dev is not None and r.settings.step == 0.1
    assert abs(sum(r.fit_dev.weights) - 1) < 1e-12 and r.fit_dev.n_points == 11
    # the dev set came through the same loader with the same options as the main workspace
    dev = screen.dev_ws
    assert dev.settings == ws.settings and list(dev.lanes) == ws.input_lanes
    assert set(dev.strata) == set(ws.strata) and dev.group_of is not None
    assert dev.ood_negatives is not None and dev.ood_negatives.size == ws.ood_negatives.size
    assert dev.corpus_mask is not None and dev.query_text
    assert not screen.fit_on_test
    await pilot.press("f")
    await pilot.pause()
    assert screen.fit_on_test
    assert r.fit_test.objective >= r.test_at_dev["ndcg@10"]  # the in-sample fit flatters
    screen.query_one("#cal-step", Select).value = 0.05
    await settle(app, pilot)
    assert screen.result.settings.step == 0.05 and screen.result.fit_test.n_points == 21


@module_loop
async def test_gate_target_and_conservative(work):
    app, pilot = work
    screen = await view(app, pilot, "gate")
    r = screen.result
    assert r.params.gate_on == "dense" and r.params.fpir == 0.05 and not r.params.conservative
    assert set(r.negatives) == {"in_domain", "out_of_domain"}
    assert r.rule_of_three[1]["wilson_n"] == 73 and r.rule_of_three[1]["rule_of_three_n"] == 60
    # the out-of-domain floor looks safe and is not: it accepts in-domain negatives
    ood = r.nulls["out_of_domain"]
    assert ood.fpir["in_domain"].value > r.nulls["in_domain"].fpir["in_domain"].value
    # no --thresholds: tuning only, and the applied-margin key is off
    assert r.analysis.applied is None and r.calibrated is None
    assert not screen.query_one("#gate-strata").display
    assert app.screen.check_action("applied_margin", ()) is False
    await pilot.press("c")
    await settle(app, pilot)
    assert screen.result.params.conservative
    screen.query_one("#gate-target", Input).value = "0.2"
    await settle(app, pilot, 2 * QUIET)
    assert screen.result.params.fpir == 0.2
    screen.query_one("#gate-margin", Input).value = "0.01"
    screen.query_one("#gate-mutual", Input).value = "2"
    await settle(app, pilot, 2 * QUIET)
    assert screen.result.params.margin == 0.01 and screen.result.mutual_summary is not None
    assert screen.result.op_margin is not None


@module_loop
async def test_compare_family_options_and_deltas(work, loaded):
    from rankscope_tui.kernel.instruments import compare as CMP
    from rankscope_tui.kernel.settings import CompareSettings

    ws, _ = loaded
    app, pilot = work
    screen = await view(app, pilot, "compare")
    # `rankscope compare` without --candidate: every other input lane, ndcg@10; the derived
    # rrf lane only when named (ticked), as the CLI and the API (SPEC §13)
    assert screen.result.plan.baseline == "lexical" and screen.result.plan.candidates == ("dense",)
    assert [(r.candidate, r.metric) for r in screen.result.result.rows] == [("dense", "ndcg@10")]
    cli_plan = CMP.plan_compare(ws, None, CompareSettings())
    assert (cli_plan.baseline, cli_plan.candidates) == ("lexical", ("dense",))
    screen.query_one("#cmp-candidates", SelectionList).select("rrf")
    await settle(app, pilot, 2 * QUIET)
    res = screen.result
    assert res.plan.baseline == "lexical" and res.plan.candidates == ("dense", "rrf")
    assert [(r.candidate, r.metric) for r in res.result.rows] == [("dense", "ndcg@10"), ("rrf", "ndcg@10")]
    assert res.result.family_size == 2 and res.result.correction == "holm"
    row = screen.row
    assert row.n == ws.positives.size and row.resamples == 999 and row.alternative == "two-sided"
    assert screen.query_one("#cmp-rows").row_count == 2
    # the highlighted row's results sentence is the one `compare --out` writes for it
    from rankscope_tui.render.sentences import with_sentences

    cli_rows = with_sentences(CMP.compare(ws, None, CompareSettings(candidates=("dense", "rrf"))).as_dict())["comparisons"]
    sentence = next(r["sentence"] for r in cli_rows if (r["candidate"], r["metric"]) == (row.candidate, row.metric))
    assert sentence.startswith(row.candidate) and sentence in str(screen.query_one("#cmp-verdict").render())
    # the per-query list is the kernel's, largest losses first
    deltas = screen.query_one("#cmp-deltas")
    expected = CMP.query_deltas(ws, "lexical", row.candidate, "ndcg@10")
    assert deltas.row_count == row.n == len(expected)
    assert [deltas.coordinate_to_cell_key((i, 0)).row_key.value for i in (0, row.n - 1)] == [expected[0][0], expected[-1][0]]
    # largest losses and gains carry both lanes' judged@10 and their share of the total
    extremes = screen.query_one("#cmp-extremes")
    assert extremes.row_count == len(row.largest_losses) + len(row.largest_gains)
    assert row.largest_losses[0].baseline_judged is not None and 0 < row.largest_losses[0].share <= 1
    # a second metric doubles the rows and the family
    screen.query_one("#cmp-metrics", SelectionList).select("recall@100")
    await settle(app, pilot, 2 * QUIET)
    assert screen.result.result.family_size == 4 and len(screen.result.result.rows) == 4
    # --primary: only ndcg@10 is tested, recall@100 is descriptive
    screen.query_one("#cmp-primary", Select).value = "ndcg@10"
    await settle(app, pilot, 2 * QUIET)
    rows = screen.result.result.rows
    assert screen.result.result.family_size == 2 and screen.result.result.primary == "ndcg@10"
    assert {r.verdict for r in rows if r.metric == "recall@100"} == {"descriptive"}
    assert all(r.adjusted_p is None for r in rows if r.metric == "recall@100")
    # Bonferroni: every family row's threshold is α / J
    screen.query_one("#cmp-correction", Select).value = "bonferroni"
    await settle(app, pilot, 2 * QUIET)
    fam = [r for r in screen.result.result.rows if r.in_family]
    assert {r.correction for r in fam} == {"bonferroni"} and all(abs(r.threshold - 0.025) < 1e-12 for r in fam)
    # a pre-registered direction (here the wrong one: rrf gains): the interval follows it, and
    # the bootstrap's two-sided bar disagrees with the one-sided test — printed in words
    screen.query_one("#cmp-alternative", Select).value = "less"
    await settle(app, pilot, 2 * QUIET)
    rows = screen.result.result.rows
    assert {r.alternative for r in rows} == {"less"}
    assert all(r.ci_low == float("-inf") and r.ci_high < float("inf") for r in rows)
    odd = next(i for i, r in enumerate(rows) if False in (r.t_agrees, r.interval_agrees, r.bootstrap_agrees))
    table = screen.query_one("#cmp-rows")
    table.focus()
    table.move_cursor(row=odd)
    await pilot.pause()
    assert screen.row is rows[odd]
    panel = str(screen.query_one("#cmp-verdict").render())
    assert "DISAGREES" in panel and rows[odd].disagreements[0][:40] in panel
    # a minimum effect larger than any mean Δ: nothing can be called better
    screen.query_one("#cmp-alternative", Select).value = "two-sided"
    screen.query_one("#cmp-min-delta", Input).value = "0.5"
    await settle(app, pilot, 2 * QUIET)
    assert screen.result.params.min_delta == 0.5
    assert not [r for r in screen.result.result.rows if r.verdict in ("better", "worse")]
    # exploratory: every row gets a raw p only
    screen.query_one("#cmp-exploratory", Checkbox).value = True
    await settle(app, pilot, 2 * QUIET)
    assert {r.verdict for r in screen.result.result.rows} == {"exploratory"}
    assert "*" in screen.result.plan.exploratory_reasons
    screen.query_one("#cmp-exploratory", Checkbox).value = False
    screen.query_one("#cmp-min-delta", Input).value = "0"
    await settle(app, pilot, 2 * QUIET)
    # the paired / unpaired toggle
    assert screen.paired
    await pilot.press("p")
    await pilot.pause()
    assert not screen.paired
    # Enter on the per-query list drills down, Escape comes back
    table.move_cursor(row=0)
    await pilot.pause()
    first = deltas.coordinate_to_cell_key((0, 0)).row_key.value
    deltas.focus()
    await pilot.press("enter")
    await pilot.pause()
    assert app.current_mode == "query" and app.qid == first
    await pilot.press("escape")
    await pilot.pause()
    assert app.current_mode == "compare"
    # swap: the highlighted row's candidate becomes the baseline
    cand = screen.row.candidate
    await pilot.press("s")
    await settle(app, pilot)
    assert screen.result.plan.baseline == cand and "lexical" in screen.result.plan.candidates
    # `--baseline best`: chosen on the compared queries, so every row is exploratory
    screen.query_one("#cmp-baseline", Select).value = "best"
    await settle(app, pilot, 2 * QUIET)
    plan = screen.result.plan
    assert plan.baseline not in plan.candidates and "*" in plan.exploratory_reasons
    assert {r.verdict for r in screen.result.result.rows} == {"exploratory"}


@module_loop
async def test_verdicts_edit_threshold_sha_and_git(work, monkeypatch, demo_options):
    from rankscope_tui.screens import verdicts as verdicts_view

    app, pilot = work
    screen = await view(app, pilot, "verdicts")
    assert len(screen.rules) == 5
    assert all(r is not None for r in screen.results), "every rule resolves against the report"
    assert screen.sha == hashlib.sha256(Path(demo_options.gates).read_bytes()).hexdigest()
    assert screen.git_state is None  # the demo lives outside any git work tree
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
    app.screen.query_one(Input).value = repr(new)
    await pilot.press("enter")
    await pilot.pause()
    assert screen.rules[i].threshold == new
    assert screen.results[i].point == "pass" and screen.results[i].interval == "fail"
    # `r` reads the file again: its rules, its sha256 and what git says of it
    monkeypatch.setattr(verdicts_view, "git_state", lambda path: "untracked")  # the name the view calls
    await pilot.press("r")
    await settle(app, pilot)
    assert screen.rules == screen.file_rules
    assert screen.git_state == "untracked"
    assert "untracked in git" in str(screen.query_one("#vd-head").render())


@module_loop
async def test_query_drilldown_and_search(work, loaded):
    ws, _ = loaded
    app, pilot = work
    await view(app, pilot, "overview")
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
    assert screen.query_one("#q-first").row_count == len(screen.lanes_shown)
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


@module_loop
async def test_export_refuses_to_overwrite_an_input(work, demo_dir):
    app, pilot = work
    await view(app, pilot, "overview")
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(app.screen, ExportDialog)
    app.screen.query_one("#export-path", Input).value = str(demo_dir / "qrels-test.txt")
    await pilot.press("enter")
    await settle(app, pilot)
    assert isinstance(app.screen, ErrorDialog)
    assert "refusing to overwrite an input" in app.screen.message
    assert app.exported == []
    await pilot.press("escape")
    await pilot.pause()
    assert not isinstance(app.screen, ErrorDialog)


@module_loop
async def test_a_worker_that_raises_shows_the_dialog(work, monkeypatch):
    from rankscope_tui.screens import gate as gate_screen

    def boom(*args, **kw):
        raise RuntimeError("kernel exploded")

    app, pilot = work
    screen = await view(app, pilot, "gate")
    monkeypatch.setattr(gate_screen, "compute_gate", boom)
    screen.query_one("#gate-target", Input).value = "0.3"
    await settle(app, pilot, 2 * QUIET)
    assert isinstance(app.screen, ErrorDialog)
    assert "kernel exploded" in app.screen.message
    await pilot.press("escape")
    await pilot.pause()
    await pilot.press("1")
    await pilot.pause()
    assert app.is_running and app.current_mode == "overview"


# ----------------------------------------------------------------------------- fresh apps: loading, export, errors


@pytest.fixture(scope="module")
def thresholds(demo_dir, tmp_path_factory) -> Path:
    """thresholds.json as the README's `rankscope calibrate` line writes it, on the dev split."""
    out = tmp_path_factory.mktemp("th") / "th.json"
    d = demo_dir
    assert cli_main(["calibrate", "--lane", str(d / "lexical.run"), "--lane", str(d / "dense.run"),
                     "--qrels", str(d / "qrels-dev.txt"), "--gate-on", "dense",
                     "--ood-negatives", str(d / "qrels-ood-negatives.txt"), "--out", str(out)]) == 0
    return out


@module_loop
async def test_thresholds_run_applied_gate_and_export_parity(demo_dir, thresholds, tmp_path, monkeypatch):
    """With --thresholds: `e` writes exactly what `rankscope evaluate --out` writes, and the Gate
    view shows the applied floor and margin (the report's gate.applied and outcome) beside
    the tuning view, labelled as the report labels them. The dashboard parses the file once:
    the report, the Gate, Compare and Query views share that parse."""
    from rankscope_tui.kernel.gate import thresholds as TH

    argv = demo_argv(demo_dir) + FAST + ["--thresholds", str(thresholds)]
    cli_out = tmp_path / "cli.json"
    assert cli_main(["evaluate", *evaluate_argv(argv), "--out", str(cli_out)]) == 0
    parses: list[str] = []
    read = TH.read_thresholds

    def counted(path):
        parses.append(path)
        return read(path)

    tui_out = tmp_path / "tui.json"
    app = make_app(parse_args(argv), source_label="demo")  # the command line reads the file for its gate options
    monkeypatch.setattr(TH, "read_thresholds", counted)  # from here on: the dashboard's own parses
    async with app.run_test(size=WORK_SIZE) as pilot:
        await settle(app, pilot)  # loaded and reported by the app's own workers
        assert app.state.report is not None and "convex" in app.lane_names
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        app.screen.query_one("#export-path", Input).value = str(tui_out)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.exported == [str(tui_out)]
        assert tui_out.read_bytes() == cli_out.read_bytes()

        screen = await view(app, pilot, "gate")
        g = app.state.report["gate"]
        assert g["applied"]["label"] == "threshold (picked on other negatives)"
        # the screen's analysis under the command line's settings is the report's gate block
        assert screen.result.analysis.as_dict() == g
        assert screen.result.analysis.applied.label is GateLabel.THRESHOLD
        assert screen.result.calibrated["floor"] == g["applied"]["floor"]
        assert screen.query_one("#gate-strata").display and screen.query_one("#gate-strata").row_count > 0
        assert screen.result.params.margin is None  # the screen's own margin is off: the calibrated one applies
        await pilot.press("a")  # sweep the floor under the applied margin
        await settle(app, pilot, 2 * QUIET)
        assert screen.result.params.margin == g["applied"]["margin"]
        assert "margin" in screen.result.sweep.conditions and "margin" not in screen.result.analysis.sweep.conditions

        screen = await view(app, pilot, "compare")  # convex, a derived lane, is compared once ticked;
        assert "convex" not in screen.result.plan.candidates  # fitted on dev: not exploratory
        screen.query_one("#cmp-candidates", SelectionList).select("convex")
        await settle(app, pilot, 2 * QUIET)
        assert "convex" in screen.result.plan.candidates and not screen.result.plan.exploratory_reasons
        screen = await view(app, pilot, "query")
        decision, why = screen.gate_decision(app.ws.qid_index[app.qid])  # under the applied thresholds
        assert decision is not None, why
        assert parses == [str(thresholds)]  # one parse for the report and every view


@module_loop
async def test_app_from_a_state_built_without_argparse(demo_dir, tmp_path):
    """The dashboard is a library too: options written by hand (no command line) load, report
    and export exactly what `rankscope evaluate --out` writes for the same inputs."""
    from rankscope_tui.demo import FILES
    from rankscope_tui.kernel.settings import GateSettings, LoadSettings

    f = {k: str(demo_dir / v) for k, v in FILES.items()}
    options = DashboardOptions(
        lanes=((None, f["lexical"]), (None, f["dense"])), qrels=f["qrels_test"], strata=(f["strata"],),
        corpus=f["corpus"], queries=f["queries"], docs=f["docs"], ood_negatives=f["qrels_ood"],
        dev_qrels=f["qrels_dev"], gates=f["gates"],
        load=LoadSettings(group_sep="#", blind="no-overlap", cap=5, document_first=True, resamples=999),
        gate=GateSettings(gate_on="dense"),
    )
    argv = demo_argv(demo_dir) + FAST
    assert state_from_args(parse_args(argv)).options == options  # the command line builds the same object
    assert f["gates"] in options.input_paths() and f["qrels_dev"] in options.input_paths()
    cli_out = tmp_path / "cli.json"
    assert cli_main(["evaluate", *evaluate_argv(argv), "--out", str(cli_out)]) == 0
    tui_out = tmp_path / "tui.json"
    app = RankscopeApp(DashboardState(options, source_label="by hand"))
    async with app.run_test(size=WORK_SIZE) as pilot:
        await settle(app, pilot)
        assert app.state.base_workspace is not None and app.state.report is not None
        assert app.state.report_error is None and app.state.error_wording is None
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        app.screen.query_one("#export-path", Input).value = str(tui_out)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.exported == [str(tui_out)]
    assert tui_out.read_bytes() == cli_out.read_bytes()


async def test_gate_screen_shows_the_gate_analysis_and_the_report(demo_dir, tmp_path):
    """One road: the Gate view's floor and its FNIR / FPIR for the floor alone, floor AND
    margin, floor AND mutual (and all three) are the entry point's (``analyse_gate``) and
    `evaluate --out`'s gate block, with the margin and mutual conditions on."""
    import json

    from textual.content import Content
    from textual.widgets import Static

    from rankscope_tui.commands.options import gate_options, load_workspace
    from rankscope_tui.kernel.gate.analysis import analyse_gate
    from rankscope_tui.kernel.instruments.evaluate import prepare
    from rankscope_tui.widgets import fmt

    argv = demo_argv(demo_dir) + FAST + ["--margin", "0.01", "--mutual", "2"]
    cli_out = tmp_path / "cli.json"
    assert cli_main(["evaluate", *evaluate_argv(argv), "--out", str(cli_out)]) == 0
    report = json.loads(cli_out.read_text(encoding="utf-8"))
    block = report["gate"]
    args = parse_args(argv)
    assert report["inputs"]["settings"]["gate"] == gate_options(args).as_dict()
    ws = load_workspace(args)
    ws, _ = prepare(ws, args.thresholds)
    analysis = analyse_gate(ws, gate_options(args))
    assert json.loads(json.dumps(analysis.as_dict())) == block
    conds = block["outcome_by_condition"]
    assert list(conds) == ["floor", "floor AND margin", "floor AND mutual", "floor AND margin AND mutual"]
    assert conds["floor AND margin AND mutual"] == {**block["outcome"]["combined"]}
    floor = block["operating_point"]["in_domain"]["floor"]
    assert block["outcome"]["floor"] == floor and analysis.floor == floor

    app = make_app(args, source_label="demo")
    async with app.run_test(size=WORK_SIZE) as pilot:
        await settle(app, pilot)
        screen = await view(app, pilot, "gate")
        r = screen.result
        assert r.params == gate_options(args)
        assert json.loads(json.dumps(r.analysis.as_dict())) == block
        text = Content.from_markup(str(screen.query_one("#gate-floors", Static).content)).plain
        assert f"Gate at floor {fmt.num(floor, 4)} (tuning):" in text
        for cond, o in conds.items():
            shown = [f"    {cond}: FNIR {fmt.rate(o['fnir'])}  (rejected {o['rejected']}, wrong accept {o['wrong_accept']})"]
            shown += [f"        FPIR {gate_screen_label(k)}: {fmt.rate(v)}" for k, v in o["fpir"].items()]
            assert "\n".join(shown) in text, cond
        ms = block["mutual"]
        assert f"Mutual r={ms['r']}: lists built from {ms['built_from']} queries; vacuous for {ms['vacuous_queries']}" in text


def gate_screen_label(negative_set: str) -> str:
    from rankscope_tui.screens.gate import NEG_LABELS

    return NEG_LABELS.get(negative_set, negative_set)


@module_loop
async def test_malformed_file_shows_the_cli_error_and_keeps_running(demo_dir, tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1#p1 1 1.5 run\nq1 Q0 d2#p1 2 not-a-number run\n", encoding="utf-8")
    argv = ["--lane", str(bad), "--qrels", str(demo_dir / "qrels-test.txt")]
    assert cli_main(["evaluate", *argv]) == 2
    cli_line = capsys.readouterr().err.strip()
    assert cli_line.startswith("rankscope: error: ") and ":2:" in cli_line
    app = make_app(parse_args(argv), synthetic=False, source_label="bad")
    async with app.run_test(size=WORK_SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorDialog)
        assert app.screen.message == cli_line
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ErrorDialog) and app.is_running
        for key in "67":  # views cope with no data
            await pilot.press(key)
            await pilot.pause()
        assert app.is_running and not isinstance(app.screen, ErrorDialog)
