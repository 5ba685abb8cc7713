"""Runs shorter than k (issue 31 item 8): the warning in every face and the per-query
ceilings, against hand-worked values and a brute-force search over rankings."""

from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pytest

from rankscope_tui import api
from rankscope_tui import cli as C
from rankscope_tui.kernel.report.short_lists import list_ceiling

# q1: 3 relevant docs, the run lists 2 hits (one relevant); q2: 1 relevant, 12 hits
QRELS = "q1 0 r1 1\nq1 0 r2 1\nq1 0 r3 1\nq2 0 s1 1\n"
RUN = ("q1 Q0 r1 1 2.0 t\nq1 Q0 z1 2 1.0 t\n"
       + "".join(f"q2 Q0 {'s1' if i == 0 else f'd{i}'} {i + 1} {20 - i}.0 t\n" for i in range(12)))
# by hand: q1 L = 2, R = 3, k = 10 -> min(R, L, k) = 2: p@10 2/10, recall@10 2/3, ap@10 2/3;
#          q2 L = 12, R = 1        -> min = 1:          p@10 1/10, recall@10 1,   ap@10 1
HAND = {"q1": {"length": 2, "p@10": 0.2, "recall@10": 2 / 3, "ap@10": 2 / 3},
        "q2": {"length": 12, "p@10": 0.1, "recall@10": 1.0, "ap@10": 1.0}}
MEASURES = "ndcg@10,p@10,recall@10,ap@10"


def _brute(kind: str, R: int, L: int, k: int) -> float:
    """The best value over every way of placing relevant docs (at most R) in a list of L
    places, each measure written out directly (trec_eval's P.k, recall.k, map_cut.k)."""
    best = 0.0
    for n in range(0, min(R, L) + 1):
        for places in itertools.combinations(range(1, L + 1), n):
            top = [r for r in places if r <= k]
            if kind == "p":
                v = len(top) / k
            elif kind == "recall":
                v = len(top) / R
            else:
                v = sum((i + 1) / r for i, r in enumerate(sorted(top))) / R
            best = max(best, v)
    return best


@pytest.mark.parametrize("kind", ["p", "recall", "ap"])
def test_list_ceiling_is_the_best_any_placement_reaches(kind):
    cases = [(R, L, k) for R in range(1, 6) for L in range(0, 8) for k in (1, 3, 5, 10)]
    R, L, k = (np.array(c) for c in zip(*cases))
    for kk in (1, 3, 5, 10):
        sel = k == kk
        got = list_ceiling(kind, R[sel].astype(float), L[sel], kk)
        want = [_brute(kind, int(r), int(n), kk) for r, n in zip(R[sel], L[sel])]
        assert got == pytest.approx(want, abs=1e-12)


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def _check_block(report: dict) -> None:
    pq = report["short_lists"]["short"]["doc"]
    assert pq["fewer_than_k"] == {"ndcg@10": 1, "p@10": 1, "recall@10": 1, "ap@10": 1}
    assert pq["cannot_reach_1"] == {"p@10": 2, "recall@10": 1, "ap@10": 1}
    for qid, want in HAND.items():
        assert pq["per_query"][qid] == pytest.approx(want)
    [w] = [w for w in report["summary"]["warnings"] if w["kind"] == "short_lists"]
    assert w["count"] == 1 and "ndcg@10: 1" in w["message"] and "fewer than k hits" in w["message"]


def test_two_hit_run_warns_in_text_json_and_csv(files, capsys):
    out, pq = files / "report.json", files / "pq.csv"
    rc = C.main(["evaluate", "--lane", f"short={files / 'run'}", "--qrels", str(files / "qrels"), "--metrics", MEASURES,
                 "--resamples", "0", "--out", str(out), "--per-query", str(pq)])
    assert rc == 0
    text = capsys.readouterr().out
    warned = [line for line in text.splitlines() if line.startswith("warning:") and "fewer than k hits" in line]
    assert len(warned) == 1 and "lane short" in warned[0] and "ndcg@10: 1" in warned[0]
    assert "lane short: 1 of 2 positive queries list fewer than k hits" in text
    assert "queries whose ceiling is below 1: p@10 2, recall@10 1, ap@10 1" in text
    _check_block(json.loads(out.read_text()))
    rows = {r["qid"]: r for r in csv.DictReader(pq.open())}
    for qid, want in HAND.items():
        assert int(rows[qid]["length"]) == want["length"]
        for m in ("p@10", "recall@10", "ap@10"):
            assert float(rows[qid][f"ceiling {m}"]) == pytest.approx(want[m])


def test_two_hit_run_warns_in_the_api(files):
    ev = api.evaluate(str(files / "qrels"), {"short": str(files / "run")}, measures=MEASURES, resamples=0)
    _check_block(ev.report())
    assert "fewer than k hits" in str(ev)


def test_full_lists_do_not_warn(files):
    run = "".join(f"q1 Q0 {d} {i + 1} {9 - i}.0 t\n" for i, d in enumerate(["r1", "r2", "r3", "x", "y"]))
    run += "".join(f"q2 Q0 {d} {i + 1} {9 - i}.0 t\n" for i, d in enumerate(["s1", "a", "b", "c", "d"]))
    (files / "long").write_text(run)
    ev = api.evaluate(str(files / "qrels"), {"long": str(files / "long")}, measures="ndcg@5,p@1", resamples=0)
    rep = ev.report()
    assert not [w for w in rep["summary"]["warnings"] if w["kind"] == "short_lists"]
    assert rep["short_lists"]["long"]["doc"]["fewer_than_k"] == {"ndcg@5": 0, "p@1": 0}
    assert rep["summary"]["short_lists"]["lanes"] == {}  # p@1 reaches 1 on both: nothing to say


def test_the_overview_says_it_in_one_line(files):
    """The dashboard's Overview line (Pilot): the short lane and its counts, escaped."""
    import asyncio

    from support import settle

    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args

    args = parse_args(["--lane", f"short={files / 'run'}", "--qrels", str(files / "qrels"), "--metrics", MEASURES,
                       "--resamples", "0"])

    async def run() -> str:
        app = RankscopeApp(state_from_args(args))
        async with app.run_test(size=(160, 50)) as pilot:
            await settle(app, pilot, 0.5)
            from textual.widgets import Static

            return str(app.screen.query_one("#ov-summary", Static).render())

    text = asyncio.run(run())
    assert "Short lists: 1 of 1 lanes list fewer than k hits for some positive query (most: short, 1 of 2)" in text
