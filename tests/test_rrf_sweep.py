"""The k slider's re-fusion (``rrf_at_k.RRFSweep``): each lane's ranks are prepared once and
only the docs several lanes hold are re-scored and re-sorted per k. Its numbers must be
those of fusing the lanes from scratch at that k.

Oracles: ``rrf_at_k`` (``methods.rrf`` over the workspace's lanes, scored by
``Workspace.metrics_of``; ``methods.rrf`` is checked against ranx in tests/test_fusion*.py)
for the means of a broad set of measures (cutoff, full-depth, set and residual measures),
the lane's head and the dilution; and a hand-worked two-lane case whose ties cross the
streams (a doc one lane holds against a doc the other holds at the same rank; two shared
docs with mirrored ranks), ordered by score, then doc id descending as bytes (SPEC §4).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankscope_tui.demo import FILES, write_demo
from rankscope_tui.kernel.fusion import methods as F
from rankscope_tui.kernel.fusion.rrf_at_k import RRFExplorer, RRFSweep, method_against_best, rrf_at_k
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Sources, load

BROAD = "ndcg@10,map,recall@1000,P@5,bpref,Rprec,num_ret,num_rel_ret,rbp,rbp_resid,RR,success@1,ndcg"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("demo")
    write_demo(d, seed=7)
    return d


def _workspace(d: Path, **settings):
    f = {k: str(d / v) for k, v in FILES.items()}
    return load(Sources((("lexical", f["lexical"]), ("dense", f["dense"])), f["qrels_test"],
                        LoadSettings(metrics=tuple(parse_metrics(BROAD)), resamples=0, **settings)))


def _same(ws, got, k: float, head: int) -> None:
    want = rrf_at_k(ws, k)
    assert got.means.keys() == want.means.keys()
    for m, v in want.means.items():
        assert got.means[m] == v or (np.isnan(v) and np.isnan(got.means[m])), (k, m)
    cut = F._head(want.lane, head)
    for col in ("qid", "doc", "score", "rank", "offsets"):
        assert np.array_equal(getattr(got.lane, col), getattr(cut, col)), (k, col)
    assert [q.tolist() for q in got.dilution.queries] == [q.tolist() for q in want.dilution.queries]


@pytest.mark.parametrize("depth", [None, 25], ids=["whole lanes", "depth 25"])
def test_the_sweep_gives_the_numbers_of_fusing_from_scratch(demo, depth):
    ws = _workspace(demo, depth=depth)
    sweep = RRFSweep(ws, 10)
    for k in (0, 1, 2.5, 59, 60, 61, 137, 200, 5000):
        _same(ws, sweep.at(k, tuple(ws.settings.metrics)), k, 10)


def test_an_explorer_over_large_inputs_sweeps_and_counts_its_fusions(demo, monkeypatch):
    from rankscope_tui.kernel.fusion import rrf_at_k as R

    ws = _workspace(demo)
    monkeypatch.setattr(R, "EXPLORER_PREPARE_ROWS", 0)
    ex = RRFExplorer(ws)
    assert ex.sweeps and not ex.prepares
    for k in (3, 90, 3):  # the second 3 is a kept result: not fused again
        _same(ws, ex.at(k), k, R.EXPLORER_HEAD)
    assert ex.computed == [3, 90] and ex._sweep is not None and ex._table is None


def test_ties_across_the_streams_follow_the_doc_ids(tmp_path):
    """q1: lane a = d1, d2, d3; lane b = d4, d3, d2. d2 and d3 are in both lanes with mirrored
    ranks (2, 3) and (3, 2): equal scores 1/(k+2) + 1/(k+3), d3 first (larger id). d1 and d4
    are each one lane's rank 1: equal scores 1/(k+1), d4 first. At k = 60 the shared pair
    scores above the single docs (1/62 + 1/63 > 1/61); at k = 0 below (1/2 + 1/3 < 1).
    Relevant: d1 (grade 1) and d4 (grade 2); d2 judged non-relevant; R = 2."""
    a, b, qrels = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "qrels.txt"
    a.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\n", encoding="utf-8")
    b.write_text("q1 Q0 d4 1 3 b\nq1 Q0 d3 2 2 b\nq1 Q0 d2 3 1 b\n", encoding="utf-8")
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d4 2\n", encoding="utf-8")
    ws = load(Sources((("a", str(a)), ("b", str(b))), str(qrels),
                      LoadSettings(metrics=tuple(parse_metrics("map,ndcg@3,RR")), resamples=0)))
    sweep = RRFSweep(ws, 10)
    # k: (order, AP, RR). k = 60: relevant at ranks 3 and 4, AP = (1/3 + 2/4) / 2, RR = 1/3;
    # k = 0: relevant at ranks 1 and 2, AP = 1, RR = 1
    cases = {60.0: (["d3", "d2", "d4", "d1"], (1 / 3 + 2 / 4) / 2, 1 / 3), 0.0: (["d4", "d1", "d3", "d2"], 1.0, 1.0)}
    for k, (order, ap, rr) in cases.items():
        got = sweep.at(k, tuple(ws.settings.metrics))
        assert [str(ws.doc_id(d)) for d in got.lane.doc] == order
        shared, single = 1 / (k + 2) + 1 / (k + 3), 1 / (k + 1)
        want_scores = [shared, shared, single, single] if k else [single, single, shared, shared]
        assert got.lane.score.tolist() == want_scores
        assert got.means["ap"] == pytest.approx(ap, abs=1e-15)
        assert got.means["rr"] == pytest.approx(rr, abs=1e-15)
        _same(ws, got, k, 10)


def test_the_rrf_method_table_reads_the_sweeps_values(demo):
    """The Fusion view's per-query table for rrf at the slider's k takes the slider's
    per-query values: the same rows as fusing with ``methods.fuse`` from scratch."""
    ws = _workspace(demo)
    sweep = RRFSweep(ws, 10)
    for k in (1.0, 60.0, 173.0):
        got = sweep.at(k, tuple(ws.settings.metrics))
        for metric in ("ndcg@10", "ap", "rbp_resid(p=0.9)", "num_ret"):
            assert method_against_best(ws, "rrf", metric, k, got) == method_against_best(ws, "rrf", metric, k)
