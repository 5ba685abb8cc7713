"""The Judgments view (key j): holes and bounds per lane, tie exposure, the unjudged hits of a
query with their texts, at 80×24 and 200×60, and one snapshot per size.

The oracles are the report's own ``coverage`` and ``ties`` cells (their numbers are tested
against pytrec_eval and trec_eval in test_judgment_coverage.py; here the question is whether
they reach the screen whole) and the lanes' rows read from the workspace."""

from __future__ import annotations

import pytest
from support import picture_ready, settle
from test_tui import demo_options, loaded, make_app, test_timing  # noqa: F401 (fixtures)
from test_tui_layout import LARGE, SMALL, screen_text, shown

from rankscope_tui.widgets import fmt


async def open_judgments(app, pilot):
    await settle(app, pilot)
    await pilot.press("j")
    await picture_ready(app, pilot)
    assert app.current_mode == "judgments"
    return app.screen


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
async def test_judgments_view_shows_holes_bounds_ties_and_unjudged_hits(demo_options, loaded, size):
    ws, report = loaded
    app = make_app(demo_options, loaded)
    async with app.run_test(size=size) as pilot:
        screen = await open_judgments(app, pilot)
        assert screen.title == "j Judgments"
        metric, cov = screen.metric, report["coverage"]
        assert "@" in metric
        lanes = shown(screen.query_one("#jd-lanes"))
        for lane, cells in cov["lanes"].items():
            c = cells[metric]
            t = report["ties"]["lanes"][lane]["metrics"].get(metric)
            line = next((ln for ln in lanes.splitlines() if ln.strip().startswith(lane + " ")), None)
            assert line is not None, (lane, lanes)
            for want in (fmt.num(c["holes"], 2), f"{fmt.num(c['as_nonrelevant'])}..{fmt.num(c['as_relevant'])}",
                         fmt.num(c["gap"])):
                assert want in line, (want, line)
            if t is not None:
                assert f"  {t['dependent']}" in line
                if not screen.narrow:  # the tie extremes are left out at 80 columns
                    assert f"{fmt.num(t['worst'])}..{fmt.num(t['best'])}" in line
        # the chosen lane's queries with holes, widest gap first; the first one's unjudged hits
        c = ws.judgment_coverage(screen.lane)
        pos = ws.positives
        with_holes = pos[c.holes[metric][pos] > 0]
        assert with_holes.size and len(screen.rows) == min(with_holes.size, 200)
        gaps = [r["gap"] for r in screen.rows]
        assert gaps == sorted(gaps, reverse=True) and gaps[0] == pytest.approx(float(c.gap(metric)[with_holes].max()))
        first = screen.rows[0]
        code = ws.qid_index[first["qid"]]
        L = ws.lanes[screen.lane]
        sl = L.rows_of(code)
        k = next(m.k for m in ws.settings.metrics if m.key == metric)
        grade = ws.judgments.grade_of(L.qid[sl], L.doc[sl])
        want = [ws.doc_id(int(d)) for d, g, r in zip(L.doc[sl], grade, L.rank[sl]) if g < 0 and r <= k]
        assert [d for _, d, _ in first["hits"]] == want and len(want) == first["holes"]
        hits = shown(screen.query_one("#jd-hits"))
        assert want[0] in hits
        if ws.doc_text.get(want[0]):
            assert ws.doc_text[want[0]][:20] in hits
        assert "Agreement of two sets of labels" in shown(screen.query_one("#jd-agreement"))
        assert app._exception is None


async def test_judgments_view_follows_the_lane_and_metric_and_drills_down(demo_options, loaded):
    ws, report = loaded
    app = make_app(demo_options, loaded)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_judgments(app, pilot)
        other = [l for l in report["coverage"]["lanes"] if l != screen.lane][0]
        screen.query_one("#jd-lane").value = other
        await settle(app, pilot)
        assert screen.lane == other and other in shown(screen.query_one("#jd-q-title"))
        metrics = [m for m in report["coverage"]["lanes"][other] if m != screen.metric]
        screen.query_one("#jd-metric").value = metrics[0]
        await settle(app, pilot)
        assert screen.metric == metrics[0] and screen.lane == other
        table = screen.query_one("#jd-queries")
        if screen.rows:
            table.focus()
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.current_mode == "query" and app.qid == screen.rows[0]["qid"]
        assert app._exception is None


async def test_judgments_view_is_in_the_palette_and_help(demo_options, loaded):
    from rankscope_tui.screens.palette import RankscopeCommands

    app = make_app(demo_options, loaded)
    async with app.run_test(size=LARGE) as pilot:
        await open_judgments(app, pilot)
        provider = RankscopeCommands(app.screen)
        assert any(t == "view: Judgments" and "key j" in h for t, _, h in provider._static())
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert "J Judgments" in screen_text(app) or "Judgments" in screen_text(app)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "200x60"])
def test_snapshot_judgments(snap_compare, demo_options, loaded, size):
    async def run_before(pilot):
        app = pilot.app
        await open_judgments(app, pilot)
        app.screen.set_focus(None)
        await picture_ready(app, pilot)

    assert snap_compare(make_app(demo_options, loaded), terminal_size=size, run_before=run_before)


async def test_judgments_view_shows_markup_in_names_and_texts_verbatim(tmp_path):
    """A lane, doc ids and doc texts holding markup are shown as they are: the lane table,
    the queries' title and the unjudged hits with their texts."""
    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.state import DashboardState

    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 r 1\nq2 0 r 1\n")
    run = tmp_path / "run"
    docs = {"[b]u1": "[@click=app.quit]press[/] now", "u[/]2": "a [citation needed] claim"}
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {9 - i} t\n" for q in ("q1", "q2")
                           for i, d in enumerate(["[b]u1", "r", "u[/]2"])))
    texts = tmp_path / "docs.tsv"
    texts.write_text("".join(f"{d}\t{t}\n" for d, t in docs.items()), encoding="utf-8")
    options = state_from_args(parse_args(["--lane", f"[b]lane[i]={run}", "--qrels", str(qrels), "--docs", str(texts),
                                          "--metrics", "p@3", "--resamples", "0"])).options
    app = RankscopeApp(DashboardState(options, source_label="markup"))
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_judgments(app, pilot)
        lane = "[b]lane[i]"
        assert screen.lane == lane and lane in shown(screen.query_one("#jd-lanes"))
        assert lane in str(screen.query_one("#jd-q-title").render())
        hits = shown(screen.query_one("#jd-hits"))
        for d, t in docs.items():
            assert d in hits and t in hits, hits
        assert app.is_running and app._exception is None


async def test_judgments_view_shows_the_agreement_tables_with_a_second_qrels(demo_options, loaded, tmp_path):
    """With ``--qrels-b`` the view shows ``rankscope agree``'s tables for the two label
    sets (here B = A with every grade 2 lowered to 1: κ below 1, and the confusion counts
    as the agree payload has them); without it, a line saying how to give one."""
    from dataclasses import replace

    from rankscope_tui.kernel import agreement_tables

    ws, report = loaded
    lines = open(demo_options.qrels, encoding="utf-8").read().splitlines()
    second = tmp_path / "qrels-b.txt"
    second.write_text("".join((" ".join(p[:3] + ["1" if p[3] == "2" else p[3]]) if len(p := ln.split()) == 4 else ln)
                              + "\n" for ln in lines), encoding="utf-8")
    want = agreement_tables(ws, str(second)).as_dict()
    app = make_app(replace(demo_options, qrels_b=str(second)), loaded)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_judgments(app, pilot)
        await settle(app, pilot)
        text = str(screen.query_one("#jd-agreement").render())
        assert "Agreement of two sets of labels (A: --qrels, B: --qrels-b)" in text
        assert f"{want['kappa'][0]['estimate']:.3f}" in text and want["kappa"][0]["estimate"] < 1
        assert "confusion of grades" in text
        # the grade-2 row: A's 2s are all 1 under B, so its counts sit in B's column 1
        grades = want["confusion"]["grades"]
        row2 = want["confusion"]["counts"][grades.index(2)]
        assert row2[grades.index(1)] > 0 and row2[grades.index(2)] == 0
        line = next(ln for ln in text.splitlines() if ln.split()[:1] == ["2"])  # the lines kept as lines
        assert line.split()[1:] == [f"{n:,}" for n in row2]
        assert app._exception is None
    app = make_app(demo_options, loaded)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_judgments(app, pilot)
        assert "give rankscope tui --qrels-b PATH" in str(screen.query_one("#jd-agreement").render())


def test_tui_qrels_b_option_reaches_the_dashboard_options(tmp_path):
    from rankscope_tui.commands.tui import parse_args, state_from_args

    opts = state_from_args(parse_args(["--lane", "a.run", "--qrels", "q.txt", "--qrels-b", "b.txt"])).options
    assert opts.qrels_b == "b.txt" and "b.txt" in opts.input_paths()
