"""The dashboard's behaviour under a person's (and a key storm's) hands: the query drill-down's
numbers, focus, load errors, opening files, the exploratory export block, fast palette use,
quitting while a load blocks (the seeded key storms: tests/test_tui_storms.py).

Apps are built as in tests/test_tui.py (``make_app``); workers are awaited, never slept on.
Key bursts go straight to the driver (``burst``) so that several keys arrive before the app
has handled the first, as they do from a fast typist or a pasted string.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from support import settle
from test_tui import demo_options, loaded, test_timing  # noqa: F401 (the shared demo fixtures and short debounce)
from textual import events
from textual.keys import REPLACED_KEYS
from textual.widgets import DataTable, Input, Select, Static

from rankscope_tui.app import RankscopeApp, exit_status
from rankscope_tui.commands.tui import demo_argv, evaluate_argv, parse_args, state_from_args
from rankscope_tui.demo import FILES
from rankscope_tui.screens import VIEW_KEYS
from rankscope_tui.screens.palette import RankscopePalette
from rankscope_tui.state import DashboardOptions, DashboardState
from rankscope_tui.widgets.dialogs import ErrorDialog, ExportDialog, OpenDialog
from rankscope_tui.widgets.textual_private import unicode_name_of_key
from rankscope_tui.widgets.viewbar import ViewBar

SIZE = (120, 36)
FAST = ["--resamples", "999"]
KEY = VIEW_KEYS  # 1–9, then 0
module_loop = pytest.mark.asyncio(loop_scope="module")


def cli_main(argv: list[str]) -> int:
    from rankscope_tui import cli

    return cli.main(argv)


def make_app(options, loaded=None, *, synthetic: bool = True, source_label: str = "test") -> RankscopeApp:
    if not isinstance(options, DashboardOptions):
        options = state_from_args(options).options
    ws, report = loaded if loaded is not None else (None, None)
    return RankscopeApp(DashboardState(options, synthetic=synthetic, source_label=source_label,
                                       base_workspace=ws, report=report))


def send(app, key: str) -> None:
    """One key straight to the driver, as a terminal delivers it (no wait for the app)."""
    original = REPLACED_KEYS.get(key, key)
    try:
        char = unicodedata.lookup(unicode_name_of_key(original))
    except KeyError:
        char = key if len(key) == 1 else None
    event = events.Key(key, char)
    event.set_sender(app)
    app._driver.send_message(event)


async def burst(app, keys, gap: float = 0.0) -> None:
    for k in keys:
        send(app, k)
        await asyncio.sleep(gap)


def plain(widget) -> str:
    from textual.content import Content

    c = widget.content if hasattr(widget, "content") else widget.render()
    return Content.from_markup(str(c)).plain if isinstance(c, str) else str(c)


def cell_text(table: DataTable, row: int, col: int) -> str:
    return str(table.get_cell_at((row, col)))


# ----------------------------------------------------------------------------- 19: query drill-down


def _qrels_of(path: Path, qid: str) -> dict[str, int]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == qid:
            out[parts[2]] = int(parts[3])
    return out


def _run_of(path: Path, qid: str) -> list[tuple[str, float]]:
    rows = [(p[2], float(p[4])) for p in (l.split() for l in path.read_text(encoding="utf-8").splitlines()) if p and p[0] == qid]
    return sorted(rows, key=lambda r: -r[1])


@module_loop
async def test_query_drilldown_every_metric_dash_on_negative_gate_and_judged_docs(demo_dir, demo_options, loaded):
    from rankscope_tui.kernel.ranking.judgments import NEGATIVE, POSITIVE

    ws, report = loaded
    app = make_app(demo_options, loaded)
    keys = [m.key for m in ws.settings.metrics]
    assert "ndcg@10" in keys and len(keys) > 6
    neg = next(str(ws.qids[q]) for q in range(ws.n_queries) if int(ws.classes[q]) == NEGATIVE
               and q not in set((ws.ood_negatives if ws.ood_negatives is not None else []).tolist()))
    pos = next(str(ws.qids[q]) for q in range(ws.n_queries) if int(ws.classes[q]) == POSITIVE)
    floor = report["gate"]["outcome"]["floor"]
    corpus = {l.split("\t")[0].strip() for l in (demo_dir / FILES["corpus"]).read_text(encoding="utf-8").splitlines() if l.strip()}
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app, pilot)
        for qid in (neg, pos):
            app.open_query(qid)
            await settle(app, pilot)
            screen = app.screen
            assert screen.shown_qid == qid
            first = screen.query_one("#q-first", DataTable)
            labels = [str(c.label) for c in first.columns.values()]
            # every metric, nDCG@10 included, then the query's tie-dependent measures
            assert labels[-len(keys) - 1:-1] == keys and labels[-1] == "tie order"
            row = [cell_text(first, 0, i) for i in range(len(labels))]
            shown = dict(zip(labels, row))
            for k in keys:
                undefined = k.split("@")[0] in ("recall", "rr", "ndcg")
                if qid == neg and undefined:
                    assert shown[k] == "—", (k, shown[k])
                elif qid == neg:
                    assert shown[k] != "—"
                else:
                    assert shown[k] not in ("—", "")
            # the gate decision, against the run file read independently: top score vs the floor
            run = _run_of(demo_dir / FILES["dense"], qid)
            accepted = bool(run) and run[0][1] >= floor
            gate = plain(screen.query_one("#q-gate", Static))
            assert ("ACCEPTED" if accepted else "REJECTED") in gate and "floor" in gate, gate
            # the judged docs, against the qrels read independently
            judged = {d: g for d, g in _qrels_of(demo_dir / FILES["qrels_test"], qid).items() if g >= 0}
            t = screen.query_one("#q-judged", DataTable)
            docs = {cell_text(t, r, 0): cell_text(t, r, 1) for r in range(t.row_count)}
            assert docs == {d: str(g) for d, g in judged.items()}
            lex = {d for d, _ in _run_of(demo_dir / FILES["lexical"], qid)}
            dense = {d for d, _ in run}
            ncol = len(t.columns)
            for r in range(t.row_count):
                d, status = cell_text(t, r, 0), cell_text(t, r, ncol - 2)
                if d not in corpus:
                    assert status == "not indexed"
                elif d in lex or d in dense:
                    assert status.startswith("by ")
                else:
                    assert status == "no lane"


# ----------------------------------------------------------------------------- 20: focus


@module_loop
async def test_escape_leaves_an_input_and_view_keys_work_again(demo_options, loaded):
    app = make_app(demo_options, loaded)
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, *a, **kw: (said.append(str(message)), notify(message, *a, **kw))[1]
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["gate"])
        await settle(app, pilot)
        target = app.screen.query_one("#gate-target", Input)
        target.focus()
        await pilot.pause()
        assert app.check_action("leave_input", ()) is True  # the footer offers "esc Leave input"
        before = target.value
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is not target and not isinstance(app.focused, Input)
        assert app.check_action("leave_input", ()) is False
        assert any("left gate-target" in m and "view keys" in m for m in said)  # says what changed
        await pilot.press("7")  # a view key again, not a digit typed into the field
        await pilot.pause()
        assert target.value == before
        assert app.current_mode == "compare"


# ----------------------------------------------------------------------------- 21 / 22: load errors, opening files


@module_loop
async def test_load_error_shown_in_every_view_open_other_files_and_exit_status(demo_dir, tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1#p1 1 1.5 run\nq1 Q0 d2#p1 2 not-a-number run\n", encoding="utf-8")
    argv = ["--lane", str(bad), "--qrels", str(demo_dir / FILES["qrels_test"])]
    assert cli_main(["evaluate", *argv]) == 2
    cli_line = capsys.readouterr().err.strip()
    app = make_app(parse_args(argv), synthetic=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorDialog) and app.screen.message == cli_line
        await pilot.press("escape")
        await pilot.pause()
        for mode, key in KEY.items():
            await pilot.press(key)
            await settle(app, pilot)
            assert app.current_mode == mode
            bar = app.screen.query_one(ViewBar)
            assert cli_line in bar.status, mode
            texts = [plain(s) for s in app.screen.query(Static) if not isinstance(s, ViewBar)]
            assert not any(t.startswith("⟳") for t in texts), (mode, [t for t in texts if t.startswith("⟳")])
        assert exit_status(app) == 2  # (its stderr line is checked in the FIFO test: Textual holds stderr here)

        # open: a path that does not exist and a directory are refused in the dialog
        await pilot.press("o")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, OpenDialog)
        path = dialog.query_one("#open-path", Input)
        for wrong, why in ((str(tmp_path / "nope.run"), "no such file"), (str(tmp_path), "is a directory")):
            path.value = wrong
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is dialog and why in plain(dialog.query_one("#open-problem", Static))
        # Tab completes a unique prefix; replace the bad lane by the demo's lexical lane
        lexical = demo_dir / FILES["lexical"]
        path.value = str(lexical)[:-3]
        path.cursor_position = len(path.value)
        await pilot.press("tab")
        await pilot.pause()
        assert path.value == str(lexical)
        dialog.query_one("#open-kind", Select).value = "lanes"
        path.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.state.base_workspace is not None and app.state.load_error is None
        assert app.state.report is not None and app.state.options.lanes == ((None, str(lexical)),)
        assert exit_status(app) == 0
        assert cli_line not in app.screen.query_one(ViewBar).status

        # the export dialog checks its path the same way: a missing folder stays in the dialog
        await pilot.press("e")
        await pilot.pause()
        export = app.screen
        assert isinstance(export, ExportDialog)
        export.query_one("#export-path", Input).value = str(tmp_path / "no-such-dir" / "r.json")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is export and "does not exist" in plain(export.query_one("#export-problem", Static))
        assert app.exported == []


# ----------------------------------------------------------------------------- 23: exploratory block


@module_loop
async def test_export_keeps_the_report_and_adds_a_labelled_exploratory_block(demo_dir, demo_options, loaded, tmp_path):
    argv = demo_argv(demo_dir) + FAST
    cli_out = tmp_path / "cli.json"
    assert cli_main(["evaluate", *evaluate_argv(argv), "--out", str(cli_out)]) == 0
    cli_report = json.loads(cli_out.read_text(encoding="utf-8"))
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)

        async def export(path: Path, fmt: str = "json") -> None:
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await pilot.press("e")
            await pilot.pause()
            app.screen.query_one("#export-path", Input).value = str(path)
            app.screen.query_one("#export-format", Select).value = fmt
            await pilot.pause()
            app.screen.query_one("#export-path", Input).value = str(path)
            app.screen.query_one("#export-path", Input).focus()
            await pilot.press("enter")
            await settle(app, pilot)

        plain_out = tmp_path / "plain.json"
        await export(plain_out)
        assert plain_out.read_bytes() == cli_out.read_bytes()  # no interaction: evaluate --out, byte for byte

        await pilot.press(KEY["rrf"])
        await settle(app, pilot)
        app.screen.set_k(75)
        await settle(app, pilot, 0.1)
        await pilot.press(KEY["calibrate"])
        await settle(app, pilot)
        app.screen.query_one("#cal-cheat").focus()
        await pilot.press("f")
        await settle(app, pilot)
        assert app.screen.fit_on_test
        out = tmp_path / "tui.json"
        await export(out)
        report = json.loads(out.read_text(encoding="utf-8"))
        ex = report.pop("exploratory")
        assert report == cli_report  # the pre-registered numbers, untouched
        assert list(json.loads(out.read_text(encoding="utf-8")))[-1] == "exploratory"
        assert ex["label"].startswith("exploratory") and "not pre-registered" in ex["label"]
        assert ex["rrf"]["k"] == 75 and ex["rrf"]["pre_registered_k"] == 60
        assert set(ex["rrf"]["means"]) == {m.key for m in loaded[0].settings.metrics}
        fit = ex["fit_on_test"]
        assert fit["fitted_on"].startswith("test") and abs(sum(fit["weights"].values()) - 1) < 1e-9
        md = tmp_path / "tui.md"
        await export(md, "markdown")
        text = md.read_text(encoding="utf-8")
        assert "## exploratory" in text and text.index("## exploratory") > len(text) // 2
        assert "None" not in text.split("## exploratory")[1] and "nan" not in text.split("## exploratory")[1]


# ----------------------------------------------------------------------------- 24: calibrate with three lanes


@module_loop
async def test_calibrate_three_lanes_highlighted_weights_and_heat_map(demo_dir, tmp_path):
    """A third lane (the dense lane under another name): the highlighted grid point's weights
    are printed, and a heat map of the grid shows one cell per composition."""
    from itertools import product

    from rankscope_tui.widgets.kslider import KSlider

    d = demo_dir
    third = tmp_path / "c.run"  # the same lane as another file (one file may not be given twice)
    third.write_bytes((d / FILES["dense"]).read_bytes())
    argv = ["--lane", f"a={d / FILES['lexical']}", "--lane", f"b={d / FILES['dense']}", "--lane", f"c={third}",
            "--qrels", str(d / FILES["qrels_test"]), "--dev-qrels", str(d / FILES["qrels_dev"]), "--group-sep", "#",
            "--gate-on", "b", *FAST]
    app = make_app(parse_args(argv), synthetic=True)
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["calibrate"])
        await settle(app, pilot)
        screen = app.screen
        screen.step = 0.25
        screen.query_one("#cal-step", Select).value = 0.25
        await settle(app, pilot)
        r = screen.result
        assert r.settings.step == 0.25
        n = 4
        grid = [c for c in product(range(n + 1), repeat=3) if sum(c) == n]  # the simplex grid, independently
        assert sorted(c for c, _ in r.fit_test.points) == sorted(grid)
        slider = screen.query_one("#cal-point", KSlider)
        assert slider.maximum == len(grid)
        slider.focus()
        slider.value = 1
        await pilot.press("right")  # the second point in visiting order
        await settle(app, pilot)
        comp = r.fit_test.points[1][0]
        text = plain(screen.query_one("#cal-highlight", Static))
        assert text.startswith(f"point 2/{len(grid)}:")
        assert ", ".join(f"{lane} {c / n:g}" for lane, c in zip(r.lanes, comp)) in text
        heat = str(screen.query_one("#cal-heat", Static).render()).splitlines()
        rows = heat[1:]
        assert [row[:5] for row in rows] == [f"{a / n:>5.2f}" for a in range(n, -1, -1)]  # first lane's weight 1 → 0
        for a, row in zip(range(n, -1, -1), rows):
            assert len(row[6:].rstrip()) <= 2 * (n - a + 1)  # one two-character cell per composition
        assert sum(row.count("◉") for row in rows) == 1  # the highlighted point


# ----------------------------------------------------------------------------- 14.8: fast palette use


@module_loop
async def test_fast_palette_use_and_keys_after_quit_end_cleanly(demo_options, loaded):
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for _ in range(3):  # Compare view: Enter, Ctrl+P, Enter within a few ms
            await pilot.press(KEY["compare"])
            await settle(app, pilot)
            await burst(app, ["enter", "ctrl+p", "enter"], gap=0.005)
            await settle(app, pilot, 0.2)
            assert app.is_running and app._exception is None
            while len(app.screen_stack) > 1:
                app.pop_screen()
        await burst(app, ["ctrl+p", "escape", "ctrl+p", "ctrl+p", "e", "escape", "pagedown", "escape"], gap=0.0)
        await settle(app, pilot, 0.2)
        assert app.is_running and app._exception is None
    # ctrl+p is a priority binding: it is checked before `q` has bubbled up from the focused
    # widget, so a burst `q ctrl+p` once opened the palette instead of quitting
    for keys in (["q", "e"], ["q", "slash"], ["q", "ctrl+p"], ["q", "question_mark", "o", "ctrl+p"]):
        app = make_app(demo_options, loaded)
        async with app.run_test(size=SIZE) as pilot:  # re-raises whatever ended the app
            await settle(app, pilot)
            await burst(app, keys)
            await pilot.pause(0.2)
            quit_ = app._exit
        assert quit_, keys  # `q` quit ...
        assert app._exception is None  # ... and nothing raised on the way out (run_test re-raises it)


@module_loop
async def test_a_palette_taken_down_mid_search_does_not_end_the_app(demo_options, loaded):
    """The palette's own timers and handlers can fire while it is being taken down (a storm's
    Esc in the same burst as its typing): with the command list gone they must not raise."""
    from textual.command import CommandList

    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        palette = app.screen
        for ch in "zzzzq":  # matches nothing: the no-matches countdown starts
            await pilot.press(ch)
        await settle(app, pilot)
        await palette.query_one(CommandList).remove()  # the list goes first on teardown
        await pilot.press("enter", "down")  # handlers that look the list up
        await pilot.pause(palette._NO_MATCHES_COUNTDOWN + 0.3)  # the countdown fires
        assert app.is_running and app._exception is None
        await pilot.press("escape")
        await settle(app, pilot)
        assert len(app.screen_stack) == 1 and app.is_running and app._exception is None


@pytest.mark.parametrize("opened_by", ["search_themes", "search_commands"])
async def test_textuals_own_palettes_are_guarded_too(demo_options, loaded, opened_by):
    """The "Theme" and "Keys" commands open palettes of Textual's own; a list taken down while
    one of them searches must not end the app either (the storm met this through Theme)."""
    from textual.command import CommandList, SimpleCommand

    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        if opened_by == "search_themes":
            app.search_themes()
        else:
            app.search_commands([SimpleCommand("one", lambda: None, "a command")])
        await settle(app, pilot)
        palette = app.screen
        assert isinstance(palette, RankscopePalette)
        await palette.query_one(CommandList).remove()
        await pilot.press("a")  # a search starts and ends with the list gone
        await pilot.pause(0.5)
        assert app.is_running and app._exception is None
        await pilot.press("escape")
        await settle(app, pilot)
        assert len(app.screen_stack) == 1 and app.is_running and app._exception is None


# ----------------------------------------------------------------------------- 14.11: q quits while a load blocks

_BLOCKED = """
import asyncio, sys
from rankscope_tui.app import RankscopeApp, exit_status
from rankscope_tui.state import DashboardOptions, DashboardState

async def main():
    app = RankscopeApp(DashboardState(DashboardOptions(lanes=((None, sys.argv[1]),), qrels=sys.argv[2])))
    async with app.run_test() as pilot:
        await pilot.pause(0.5)
        await pilot.press("q")
    print("status", exit_status(app))

asyncio.run(main())
"""


def test_q_quits_while_a_load_is_blocked_on_a_fifo(demo_dir, tmp_path):
    fifo = tmp_path / "lane.run"
    os.mkfifo(fifo)  # no writer ever: opening it blocks
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    try:
        res = subprocess.run([sys.executable, "-c", _BLOCKED, str(fifo), str(demo_dir / FILES["qrels_test"])],
                             capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("the dashboard did not quit while its load was blocked")
    assert res.returncode == 0, res.stderr
    assert "status 2" in res.stdout
    assert "Traceback" not in res.stderr
    assert "quit before its inputs were loaded" in res.stderr


# the seeded key storms are in tests/test_tui_storms.py


async def test_export_writes_the_current_views_figure(demo_options, loaded, tmp_path):
    """The export's figure format writes the current view's figure: the data in the spec are
    the kernel's (``kernel.figures``) for the same report and comparison; a view without a
    figure says so."""
    from rankscope_tui.kernel.report import figures as FG
    from rankscope_tui.render.figures import vega_lite_text

    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)

        async def export(path: Path) -> None:
            await pilot.press("e")
            await pilot.pause()
            app.screen.query_one("#export-format", Select).value = "figure"
            await pilot.pause()
            app.screen.query_one("#export-path", Input).value = str(path)
            app.screen.query_one("#export-path", Input).focus()
            await pilot.press("enter")
            await settle(app, pilot, 0.2)

        report = app.state.report
        # issue 29.9: the Overview shows every metric: its figure draws the one every picker
        # starts on (ndcg@10), not the report's first column (hit@1)
        assert report["inputs"]["settings"]["metrics"][0] == "hit@1"
        out = tmp_path / "overview.vl.json"
        await export(out)
        assert out.read_text(encoding="utf-8") == vega_lite_text(FG.forest_figure(report, "ndcg@10"))
        # a view with a metric picker draws the metric it shows
        await pilot.press(KEY["strata"])
        await settle(app, pilot, 0.2)
        app.screen.query_one("#st-metric", Select).value = "rr"
        await settle(app, pilot, 0.2)
        assert app.screen.metric == "rr"
        out = tmp_path / "strata.vl.json"
        await export(out)
        assert out.read_text(encoding="utf-8") == vega_lite_text(FG.forest_figure(report, "rr"))
        await pilot.press(KEY["rrf"])
        await settle(app, pilot, 0.2)
        app.screen.query_one("#rrf-metric", Select).value = "p@10"
        await settle(app, pilot, 0.2)
        out = tmp_path / "rrf.vl.json"
        await export(out)
        spec = json.loads(out.read_text(encoding="utf-8"))
        assert spec["title"]["text"].startswith("p@10 ") and spec["layer"][0]["encoding"]["y"]["title"] == "p@10"
        await pilot.press(KEY["compare"])
        await settle(app, pilot, 0.2)
        payload = app.screen.result.payload
        out = tmp_path / "compare.vl.json"
        await export(out)
        assert out.read_text(encoding="utf-8") == vega_lite_text(FG.compare_intervals_figure(payload))
        assert json.loads(out.read_text(encoding="utf-8"))["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        await pilot.press(KEY["query"])
        await settle(app, pilot, 0.2)
        out = tmp_path / "query.vl.json"
        await export(out)
        assert not out.exists() and app.is_running and app._exception is None


async def test_export_format_label_keeps_its_brackets(demo_options, loaded):
    """Issue 29.9: the figure format's label reads "rankscope[plots]" (a str prompt is read
    as markup, which swallowed "[plots]")."""
    app = make_app(demo_options, loaded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        select = app.screen.query_one("#export-format", Select)
        select.value = "figure"
        await pilot.pause()
        drawn = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "need rankscope[plots])" in drawn, drawn
        assert app._exception is None


# ----------------------------------------------------------------------------- start-up: inputs read before the UI, means first


@module_loop
async def test_overview_shows_the_lane_means_before_the_report_then_its_intervals(demo_options, loaded, monkeypatch):
    """While the report (intervals) is computing, the Overview's table already holds each
    input lane's mean; each is the report's own cell value for that lane (the oracle: the
    report computed independently by the fixture), and the report's cells replace them."""
    import threading

    from rankscope_tui import app as app_module
    from rankscope_tui.widgets import fmt

    ws, report = loaded
    release = threading.Event()

    def held_evaluate(options, workspace, parsed=None):
        release.wait(60)
        return ws, report

    monkeypatch.setattr(app_module, "evaluate", held_evaluate)
    app = make_app(demo_options, (ws, None))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#ov-metrics", DataTable)
        assert app.state.report is None and not table.loading
        metrics = report["inputs"]["settings"]["metrics"]
        rows = {cell_text(table, r, 0): [cell_text(table, r, 2 + i) for i in range(len(metrics))]
                for r in range(table.row_count)}
        assert list(rows) == list(ws.input_lanes)  # the fused lanes come with the report
        for lane, cells in rows.items():
            want = [f"{fmt.num(report['lanes'][lane]['doc'][m]['value'])} …" for m in metrics]
            assert cells == want, lane
        release.set()
        await settle(app, pilot)
        assert app.state.report is report
        lanes = [cell_text(table, r, 0) for r in range(table.row_count)]
        assert lanes == list(report["lanes"])
        first = report["lanes"][lanes[0]]["doc"][metrics[0]]
        assert cell_text(table, 0, 2) == fmt.cell(first, compact=True)


@module_loop
async def test_a_load_begun_before_the_app_is_the_one_it_shows(demo_options):
    """A load begun before the app (``DashboardState.preload``, for a caller that starts
    reading early) is the one it takes (no second load), and its numbers are those of a
    fresh load."""
    from rankscope_tui import state as state_module

    future = state_module.start_loading(demo_options)
    calls = []
    original = state_module.load_workspace

    def counted(options):
        calls.append(options)
        return original(options)

    st = DashboardState(demo_options, synthetic=True, source_label="test")
    st.preload = future
    state_module.load_workspace, saved = counted, state_module.load_workspace
    try:
        app = RankscopeApp(st)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert calls == []
            assert app.state.base_workspace is future.result()
            fresh = original(demo_options)
            lane = fresh.input_lanes[0]
            assert app.ws.mean(lane, "doc", "ndcg@10") == fresh.mean(lane, "doc", "ndcg@10")
            assert app.state.report is not None
    finally:
        state_module.load_workspace = saved


@module_loop
async def test_a_load_begun_before_the_app_that_fails_is_reported_as_any_load_error(demo_options, tmp_path):
    """The early load's error reaches the error dialog and the exit status as the app's own
    load would (one line naming the file, status 2)."""
    from dataclasses import replace

    from rankscope_tui import state as state_module

    bad = tmp_path / "broken.run"
    bad.write_text("q1 Q0 d1 1 not-a-score run\n", encoding="utf-8")
    options = replace(demo_options, lanes=((None, str(bad)),) + demo_options.lanes[1:])
    st = DashboardState(options, source_label="test")
    st.preload = state_module.start_loading(options)
    app = RankscopeApp(st)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.state.base_workspace is None and app.state.load_error is not None
        assert any(isinstance(s, ErrorDialog) and "broken.run" in s.message for s in app.screen_stack)
    assert exit_status(app) == 2
