"""``rrf_at_k.method_against_best`` (the per-query table of the RRF view's fusion method
picker) on a case worked by hand.

Lanes A and B, qrels q1:d1 and q2:d2 relevant, metric rr.
A: q1 d1 3, d2 2; q2 d1 3, d2 1 → rr 1, 1/2 (mean 3/4).
B: q1 d2 5, d1 4; q2 d2 9, d1 1 → rr 1/2, 1 (mean 3/4): a tie, so the best lane is A (first).
combsum with max normalisation (score / the lane's top score for the query):
q1: d1 = 3/3 + 4/5 = 1.8, d2 = 2/3 + 5/5 ≈ 1.667 → d1 first, rr 1;
q2: d1 = 3/3 + 1/9 ≈ 1.111, d2 = 1/3 + 9/9 ≈ 1.333 → d2 first, rr 1.
Differences against A: q1 0, q2 +1/2."""

from __future__ import annotations

import pytest

from rankscope_tui.kernel.fusion.rrf_at_k import method_against_best
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "A.run").write_text("q1 Q0 d1 1 3 A\nq1 Q0 d2 2 2 A\nq2 Q0 d1 1 3 A\nq2 Q0 d2 2 1 A\n", encoding="utf-8")
    (tmp_path / "B.run").write_text("q1 Q0 d2 1 5 B\nq1 Q0 d1 2 4 B\nq2 Q0 d2 1 9 B\nq2 Q0 d1 2 1 B\n", encoding="utf-8")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 1\nq2 0 d1 0\n", encoding="utf-8")
    return Workspace.load([("A", str(tmp_path / "A.run")), ("B", str(tmp_path / "B.run"))], str(tmp_path / "q.txt"),
                          LoadSettings(metrics=tuple(parse_metrics("rr")), resamples=0))


def test_combsum_max_against_the_best_lane_by_hand(ws):
    r = method_against_best(ws, "combsum:max", "rr", 60)
    assert (r.name, r.best_lane, r.fused_mean, r.best_mean) == ("combsum:max", "A", 1.0, 0.75)
    assert r.rows == (("q1", 1.0, 1.0, 0.0), ("q2", 1.0, 0.5, 0.5))


def test_an_unknown_metric_is_refused(ws):
    with pytest.raises(ValueError, match="not among"):
        method_against_best(ws, "rrf", "ndcg@10", 60)
