"""The lessons' last instruments in the dashboard (issue 31 item 10, issue 32 item 1), as Pilot
tests on app state:

- the Goldens view (lesson 14): every golden case computed live by the kernel and by the
  installed independent implementation; a disagreement seeded by monkeypatching the
  reference shows ✗ on exactly the cases it touches (the oracle: the cases of that kind
  in the committed goldens file);
- the Overview's edit-and-reparse box (lesson 01);
- tie groups in the Query view and the tie-order flag in the Compare view.

Snapshots of the new views at 80×24 and 200×60 go through ``snap_compare`` as the other
views' do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import picture_ready, settle
from test_tui import KEY, demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures: the one way these tests build the app)
from textual.widgets import Static

from rankscope_tui.kernel.instruments import goldens_reference as REF

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "goldens" / "reference.txt"
SMALL, LARGE = (80, 24), (200, 60)


def plain(widget: Static) -> str:
    return str(widget.render())


def table_rows(table) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def golden_cases() -> list[tuple[int, str]]:
    """(line, kind) of every case line of the committed goldens file."""
    out = []
    for i, line in enumerate(GOLDENS.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            out.append((i, line.split(" ", 1)[0]))
    return out


# ----------------------------------------------------------------------------- 0 Goldens


async def test_goldens_view_lists_every_case_agreeing(demo_options, loaded):
    cases = golden_cases()
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["goldens"])
        await settle(app, pilot)
        screen = app.screen
        assert app.current_mode == "goldens" and screen.title == "0 Goldens"
        rows = table_rows(screen.query_one("#gd-table"))
        assert [(int(r[0]), r[2].split("@")[0].split(" ")[0]) for r in rows] == cases
        assert {r[1] for r in rows} == {"✓"}
        assert plain(screen.query_one("#gd-summary")).startswith(f"✓ all {len(cases)} cases agree")
        await pilot.press("d")  # disagreements only: none
        await pilot.pause()
        assert screen.query_one("#gd-table").row_count == 0
        assert "no case disagrees" in plain(screen.query_one("#gd-detail"))


async def test_goldens_view_shows_a_seeded_disagreement(demo_options, loaded, monkeypatch):
    """One implementation is changed (the reference's Wilson interval nudged by 1e-6, beyond
    the 1e-9 tolerance): those cases, and only those, are ✗; the summary says how many and
    names the first; `d` lists exactly them; the detail line gives both answers."""
    real = REF.answer

    def nudged(kind, args):
        out = real(kind, args)
        return [out[0] + 1e-6, out[1]] if kind == "wilson" else out

    monkeypatch.setattr(REF, "answer", nudged)
    wilson = [line for line, kind in golden_cases() if kind == "wilson"]
    assert wilson
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["goldens"])
        await settle(app, pilot)
        screen = app.screen
        rows = table_rows(screen.query_one("#gd-table"))
        bad = [int(r[0]) for r in rows if r[1] == "✗"]
        assert bad == wilson
        first = next(r for r in rows if r[1] == "✗")
        assert first[3] != first[4] and first[3].startswith("[0/2] ") and first[4].startswith("[0/2] ")
        summary = plain(screen.query_one("#gd-summary"))
        assert summary.startswith(f"✗ {len(wilson)} of {len(rows)} cases disagree") and f"line {wilson[0]} wilson" in summary
        await pilot.press("d")
        await pilot.pause()
        assert [int(r[0]) for r in table_rows(screen.query_one("#gd-table"))] == wilson
        detail = plain(screen.query_one("#gd-detail"))
        assert f"line {wilson[0]} wilson" in detail and "|difference| = 1e-06" in detail
        assert detail.splitlines()[1].startswith("kernel    [") and detail.splitlines()[2].startswith("reference [")
        monkeypatch.setattr(REF, "answer", real)  # `r` computes again: all agree
        await pilot.press("r")
        await settle(app, pilot)
        assert screen.query_one("#gd-table").row_count == 0
        assert plain(screen.query_one("#gd-summary")).startswith("✓ all")


async def test_goldens_view_from_the_palette(demo_options, loaded):
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "view: 0 Goldens":
            await pilot.press("space" if ch == " " else ch)
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.current_mode == "goldens"
        keys = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"d", "r"} <= keys


def test_goldens_view_snapshot_200x60(snap_compare, demo_options, loaded):
    async def run_before(pilot):
        app = pilot.app
        await settle(app, pilot)
        await pilot.press(KEY["goldens"])
        await settle(app, pilot)
        app.screen.set_focus(None)
        await picture_ready(app, pilot)

    assert snap_compare(make_app(demo_options, loaded), terminal_size=LARGE, run_before=run_before)


def test_answer_cells_read_as_the_file_writes_them():
    from rankscope_tui.screens.goldens import answer_cell

    assert answer_cell(None, None) == "undefined"
    assert answer_cell("inf", None) == "+∞" and answer_cell([1.0, "-inf"], 1) == "[1/2] −∞"
    assert answer_cell(0.1 + 1e-9, None) == "0.100000001"  # a 1e-9 difference stays visible
    assert answer_cell([3, 1], None) == "[0/2] 3"
    assert answer_cell([], None) == "[] (empty)"


# ----------------------------------------------------------------------------- ties (issue 32 item 1)


def hand_tie_marks(run_path: str, qid: str, cutoffs: list[int]) -> list[tuple[str, str]]:
    """(doc, mark) of one query's list worked out from the run file by hand: score
    descending, ties by doc id descending as bytes (trec_eval); a run of equal scores is a
    group, numbered down the list; ``✂k`` on the place after which an @k cutoff falls inside
    a group."""
    hits = []
    for line in open(run_path, encoding="utf-8"):
        f = line.split()
        if len(f) >= 6 and f[0] == qid:
            hits.append((f[2], float(f[4])))
    hits.sort(key=lambda h: h[0].encode(), reverse=True)
    hits.sort(key=lambda h: -h[1])
    marks = [""] * len(hits)
    number, i = 0, 0
    while i < len(hits):
        j = i
        while j + 1 < len(hits) and hits[j + 1][1] == hits[i][1]:
            j += 1
        if j > i:
            number += 1
            for p in range(i, j + 1):
                marks[p] = f"{'┬' if p == i else '└' if p == j else '│'} {number}"
            for k in cutoffs:
                if i + 1 <= k < j + 1:  # places i+1..j+1 (1-based) hold the group; the cut after place k
                    marks[k - 1] += f" ✂{k}"
        i = j + 1
    return [(d, m) for (d, _), m in zip(hits, marks)]


async def test_query_view_marks_tie_groups(demo_options, loaded):
    """The demo's tie lesson (a relevant doc tied at rank 1 and ordered second): each lane's
    list marks its tie groups exactly as worked out by hand from the run file, the cut of
    hit@1 inside the first group included; the lane title counts the tie-dependent
    positives (the report's own ties block: the union over measures is at least its largest
    per-measure count)."""
    from rankscope_tui.demo import SHOWCASE

    ws, report = loaded
    qid = SHOWCASE["tie"]
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        app.open_query(qid)
        await settle(app, pilot)
        screen = app.screen
        cutoffs = screen._cutoffs()
        assert 1 in cutoffs and 10 in cutoffs
        seen_group = False
        for (name, path), table, title in zip(demo_options.lanes, screen._tables, screen._titles):
            lane = screen.lanes_shown[[p for _, p in demo_options.lanes].index(path)]
            rows = table_rows(table)
            want = hand_tie_marks(path, qid, cutoffs)[: len(rows)]
            assert [(r[1], r[3]) for r in rows] == want, lane
            seen_group |= any(m for _, m in want)
            counts = report["ties"]["lanes"][lane]["metrics"]
            n = int(str(title.render()).split("tie-dependent ")[1].split("/")[0])
            assert max(c["dependent"] for c in counts.values()) <= n <= report["ties"]["queries"]
        assert seen_group
        lexical = table_rows(screen._tables[0])
        assert lexical[0][3] == "┬ 1 ✂1" and lexical[1][4] == "3"  # the relevant doc, tied at the top, placed second


async def test_compare_view_shows_the_tie_order_flag_and_power(demo_options, loaded):
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["compare"])
        await settle(app, pilot)
        screen = app.screen
        row = screen.row
        tf = row.tie_order
        assert tf is not None and tf.dependent_queries > 0
        panel = plain(screen.query_one("#cmp-ties"))
        flag = next(line for line in panel.splitlines() if line.startswith("tie order"))
        assert f"over {tf.dependent_queries} tie-dependent queries" in flag
        assert f"{tf.delta_low:+.4f} to {tf.delta_high:+.4f}" in flag
        assert ("could flip" in flag) == tf.could_flip and ("holds" in flag) == (not tf.could_flip)
        power = next(line for line in panel.splitlines() if line.startswith("power: "))
        assert f"Δ ≥ {row.power.mde:.4f}" in power and f"about {row.power.needed:,} queries" in power


def test_the_tie_flag_says_when_the_verdict_could_flip():
    from rankscope_tui.kernel.statistics.verdict import TieFlip
    from rankscope_tui.screens.compare import CompareScreen

    class Row:
        tie_order = TieFlip(3, -0.01, 0.02, "[b]worse[/]", "better", True)

    line = CompareScreen.tie_order_line(Row)
    assert "a different tie order could flip the verdict" in line and "over 3 tie-dependent queries" in line
    assert "\\[b]worse\\[/]" in line  # a verdict word reaches the markup escaped
    Row.tie_order = None
    assert CompareScreen.tie_order_line(Row).startswith("tie order: not assessed")


# ----------------------------------------------------------------------------- 1 Overview: edit and re-parse (lesson 01)


async def open_edit_box(app, pilot, monkeypatch):
    from rankscope_tui.screens import overview

    monkeypatch.setattr(overview, "DEBOUNCE", 0.03)
    await settle(app, pilot)
    await pilot.press(KEY["overview"], "p")
    await settle(app, pilot)
    return app.screen


async def edited(app, pilot, run: str | None = None, qrels: str | None = None):
    """Replace the boxes' text (a paste), wait out the quiet period and the parse."""
    screen = app.screen
    if run is not None:
        screen.query_one("#ov-edit-run").load_text(run)
    if qrels is not None:
        screen.query_one("#ov-edit-qrels").load_text(qrels)
    await settle(app, pilot, extra=0.1)
    return screen


async def test_edit_box_parses_the_example_and_a_paste(demo_options, loaded, monkeypatch):
    """The box opens on its example (the file's rank column says d1 is second; the scores put
    it third, tied with d2 and ordered after it by doc id descending); a pasted run and
    qrels replace it; typed keys (a `q` among them) go into the box, not to the app."""
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_edit_box(app, pilot, monkeypatch)
        assert screen.editing and not screen.query_one("#ov-bottom").display
        assert isinstance(app.focused, type(screen.query_one("#ov-edit-run")))
        rows = table_rows(screen.query_one("#ov-edit-parsed"))
        assert [(r[0], r[1], r[2], r[4], r[5]) for r in rows] == [
            ("q1", "1", "d3", "", "0"), ("q1", "2", "d2", "┬ 1", "·"), ("q1", "3", "d1", "└ 1", "1"), ("q2", "1", "d5", "", "2")]
        status = plain(screen.query_one("#ov-edit-status"))
        assert "q1: first relevant at rank 3" in status and "q2: first relevant at rank 1" in status
        assert "ties broken on the doc id descending as bytes" in status
        # a paste: three hits, two tied at the top; the relevant one (grade 2) is 'a', ordered after 'b'
        await edited(app, pilot, "x Q0 a 9 5.0 r\nx Q0 b 1 5.0 r\nx Q0 c 2 7.5 r\n", "x 0 a 2\nx 0 c 0\n")
        rows = table_rows(screen.query_one("#ov-edit-parsed"))
        assert [(r[1], r[2], r[3], r[4]) for r in rows] == [("1", "c", "7.5", ""), ("2", "b", "5.0", "┬ 1"), ("3", "a", "5.0", "└ 1")]
        assert "x: first relevant at rank 3" in plain(screen.query_one("#ov-edit-status"))
        # typing: the keys reach the box (q does not quit, digits do not switch views)
        area = screen.query_one("#ov-edit-run")
        area.move_cursor(area.document.end)
        await pilot.press(*"x Q0 q 3 9 r")
        await settle(app, pilot, extra=0.1)
        assert app.is_running and app.current_mode == "overview"
        rows = table_rows(screen.query_one("#ov-edit-parsed"))
        assert [r[2] for r in rows] == ["q", "c", "b", "a"]
        await pilot.press("escape", "p")  # leave the box, close it: the parsed order is back
        await pilot.pause()
        assert not screen.editing and screen.query_one("#ov-bottom").display


async def test_edit_box_shows_the_command_lines_error(demo_options, loaded, monkeypatch, tmp_path, capsys):
    """A bad line: the box shows the one line `rankscope evaluate` prints for a file with
    the same content (its path read as `pasted run` / `pasted qrels`), and the app runs on."""
    from rankscope_tui import cli

    good_run, good_qrels = "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.4 r\n", "q1 0 d1 1\n"
    cases = [("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 high r\n", good_qrels, "pasted run"),
             ("q1 Q0 d1 1 0.5 r\nq1 Q0 d2\n", good_qrels, "pasted run"),
             (good_run, "q1 0 d1 1\nq1 0 d2 x\n", "pasted qrels")]
    wanted = []
    for i, (run, qrels, label) in enumerate(cases):  # the command line first (the app holds stdout later)
        f_run, f_qrels = tmp_path / f"run{i}.txt", tmp_path / f"qrels{i}.txt"
        f_run.write_text(run, encoding="utf-8")
        f_qrels.write_text(qrels, encoding="utf-8")
        assert cli.main(["evaluate", "--lane", str(f_run), "--qrels", str(f_qrels)]) == 2
        cli_line = capsys.readouterr().err.strip()
        assert cli_line.startswith("rankscope: error: ") and "\n" not in cli_line
        wanted.append(cli_line.replace(str(f_run if label == "pasted run" else f_qrels), label))
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_edit_box(app, pilot, monkeypatch)
        for (run, qrels, label), want in zip(cases, wanted):
            assert label in want
            await edited(app, pilot, run, qrels)
            assert screen.edit_error == want, (screen.edit_error, want)
            assert plain(screen.query_one("#ov-edit-status")) == f"✗ {want}"
            assert screen.query_one("#ov-edit-parsed").row_count == 0
        await edited(app, pilot, good_run, good_qrels)
        assert screen.edit_error is None and screen.query_one("#ov-edit-parsed").row_count == 2
        assert app.is_running and app.screen is screen  # no error dialog on top


async def test_edit_box_shows_markup_in_ids_literally(demo_options, loaded, monkeypatch):
    hostile_q, hostile_d = "[b]q[/]", "[@click=app.quit]d[/]"
    app = make_app(demo_options, loaded)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_edit_box(app, pilot, monkeypatch)
        await edited(app, pilot, f"{hostile_q} Q0 {hostile_d} 1 1 r\n{hostile_q} Q0 [red]x 2 0.5 r\n",
                     f"{hostile_q} 0 [red]x 1\n")
        rows = table_rows(screen.query_one("#ov-edit-parsed"))
        assert [(r[0], r[2]) for r in rows] == [(hostile_q, hostile_d), (hostile_q, "[red]x")]
        assert f"{hostile_q}: first relevant at rank 2" in plain(screen.query_one("#ov-edit-status"))
        assert app.is_running


def _edit_box_snapshot(size):
    async def run_before(pilot):
        from rankscope_tui.screens import overview

        app = pilot.app
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(overview, "DEBOUNCE", 0.03)
            await settle(app, pilot)
            await pilot.press(KEY["overview"], "p")
            await settle(app, pilot, extra=0.1)
        app.screen.set_focus(None)  # no blinking cursor in the picture
        await picture_ready(app, pilot)

    return run_before


def test_edit_box_snapshot_80x24(snap_compare, demo_options, loaded):
    assert snap_compare(make_app(demo_options, loaded), terminal_size=SMALL, run_before=_edit_box_snapshot(SMALL))


def test_edit_box_snapshot_200x60(snap_compare, demo_options, loaded):
    assert snap_compare(make_app(demo_options, loaded), terminal_size=LARGE, run_before=_edit_box_snapshot(LARGE))


async def test_query_lane_titles_show_markup_in_lane_names_literally(demo_options):
    """A lane named like markup keeps its name in the Query view's lane title (with its tie
    count), never read as a tag."""
    from dataclasses import replace

    from rankscope_tui.demo import SHOWCASE

    hostile = "[b]lex[/]"
    lanes = ((hostile, demo_options.lanes[0][1]), demo_options.lanes[1])
    app = make_app(replace(demo_options, lanes=lanes))
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        app.open_query(SHOWCASE["tie"])
        await settle(app, pilot)
        titles = [str(t.render()) for t in app.screen._titles]
        assert titles[0].startswith(f"{hostile} · tie-dependent "), titles
        assert app.is_running
