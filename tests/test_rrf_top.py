"""The k slider's top-d fusion (``rrf_at_k.RRFTop``): per k only the docs whose best rank can
reach the fused lane's first d ranks are scored and sorted. Its numbers must be those of
fusing the lanes whole at that k.

Oracles: ``rrf_at_k`` (``methods.rrf`` over the whole lanes, scored by
``Workspace.metrics_of``) for every per-query value, the first relevant rank, the head of
the lane and the dilution; ranx's RRF (``ranx.fuse(method="rrf")``) for the fused scores
of the head; a hand-worked case where the first relevant doc sits below the first d.
Random cases: lanes of unequal depth, docs missing from a lane, queries missing from a
lane, fused ties (mirrored ranks, a doc alone in each lane at the same rank), several k and
cutoffs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import ranx
from support import ranx_dict

from rankscope_tui.kernel.fusion import methods as F
from rankscope_tui.kernel.fusion.rrf_at_k import RRFExplorer, RRFTop, rrf_at_k, top_depth
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Sources, load

TOP = "hit@1,hit@5,hit@10,recall@10,recall@100,rr,ndcg@10,p@10,judged@10"  # the defaults
CUTS = ["p@3,ndcg@7,recall@25,rr@5,hit(rel=2)@4", "rr,judged@2,ndcg@40", "hit@1"]


def _write(d: Path, seed: int, n_lanes: int, drop: bool = True) -> tuple[list[tuple[str, str]], str]:
    """Random lanes over a small doc pool per query (many docs in several lanes), unequal
    depths (some lanes shorter than the cutoffs), a query missing from one lane, and ties
    built in: lane b mirrors a's head on some queries (equal fused sums) and each lane's
    rank 1 is a doc the others lack on others (equal single terms)."""
    rng = np.random.default_rng(seed)
    lanes: list[list[str]] = [[] for _ in range(n_lanes)]
    qrels: list[str] = []
    for q in range(30):
        pool = [f"d{q}_{i}" for i in range(int(rng.integers(5, 120)))]
        order0 = list(rng.permutation(pool))
        for li in range(n_lanes):
            if drop and q == 3 and li == 1:
                continue  # a query the second lane lacks
            depth = int(rng.integers(1, len(pool) + 1))
            if q % 5 == 0 and li == 1:  # mirrored ranks: equal sums for pairs of docs
                head = order0[:6]
                docs = [head[1], head[0], head[3], head[2], head[5], head[4]] + order0[6:depth]
            elif q % 7 == 0:  # each lane's rank 1 a doc only it holds: equal single terms
                docs = [f"only{li}_{q}"] + list(rng.permutation(pool))[:depth]
            else:
                docs = list(rng.permutation(pool))[:depth]
            for r, doc in enumerate(docs, 1):
                lanes[li].append(f"q{q} Q0 {doc} {r} {1000 - r} l{li}")
        grades = {str(doc): int(rng.integers(0, 4))
                  for doc in rng.choice(pool, size=min(len(pool), int(rng.integers(0, 12))), replace=False)}
        if q % 4 == 1:  # only the pool's last doc relevant: the first relevant rank often below d
            grades = {doc: 0 for doc in grades} | {str(order0[-1]): 3}
        qrels += [f"q{q} 0 {doc} {g}" for doc, g in grades.items()]
    paths = []
    for li, rows in enumerate(lanes):
        p = d / f"l{li}.run"
        p.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths.append((f"l{li}", str(p)))
    qp = d / "qrels.txt"
    qp.write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return paths, str(qp)


def _ws(lanes, qrels, metrics: str, **settings):
    return load(Sources(tuple(lanes), qrels, LoadSettings(metrics=tuple(parse_metrics(metrics)), resamples=0, **settings)))


def _same(ws, got, k: float, head: int) -> None:
    want = rrf_at_k(ws, k)
    assert want.per_query is not None and got.per_query is not None
    for m, v in want.per_query.items():  # every value per query, and "rank" (first relevant)
        assert np.array_equal(got.per_query[m], v, equal_nan=True), (k, m)
    assert got.means == want.means or all(got.means[m] == v or (np.isnan(v) and np.isnan(got.means[m]))
                                          for m, v in want.means.items())
    cut = F._head(want.lane, head)
    for col in ("qid", "doc", "score", "rank", "offsets"):
        assert np.array_equal(getattr(got.lane, col), getattr(cut, col)), (k, col)
    assert [q.tolist() for q in got.dilution.queries] == [q.tolist() for q in want.dilution.queries]


@pytest.mark.parametrize("seed,n_lanes", [(1, 2), (2, 2), (3, 3), (4, 4)])
@pytest.mark.parametrize("metrics", [TOP, *CUTS])
@pytest.mark.parametrize("padded", [True, False], ids=["padded rows", "one sort"])
def test_the_top_fusion_gives_the_numbers_of_fusing_whole(tmp_path, monkeypatch, seed, n_lanes, metrics, padded):
    from rankscope_tui.kernel.fusion import rrf_at_k as R

    if not padded:  # the candidates ordered by one sort of every row, not a padded matrix's rows
        monkeypatch.setattr(R, "_PAD_FACTOR", 0)
        monkeypatch.setattr(R, "_PAD_SLACK", 0)
    lanes, qrels = _write(tmp_path, seed, n_lanes)
    ws = _ws(lanes, qrels, metrics)
    assert top_depth(tuple(ws.settings.metrics), ws.settings.relevant, 10) is not None
    top = RRFTop(ws, 10)
    for k in (0, 0.5, 1, 7, 59, 60, 61, 137.25, 200, 5000):
        _same(ws, top.at(k, tuple(ws.settings.metrics)), k, 10)


def test_a_depth_cut_is_kept(tmp_path):
    lanes, qrels = _write(tmp_path, 5, 2)
    ws = _ws(lanes, qrels, TOP, depth=15)
    top = RRFTop(ws, 10)
    for k in (1, 60, 200):
        _same(ws, top.at(k, tuple(ws.settings.metrics)), k, 10)


def test_head_scores_are_ranx_rrf(tmp_path):
    """ranx's RRF (``1/(k + rank)`` summed over the runs) scores the head's docs the same."""
    lanes, qrels = _write(tmp_path, 6, 3, drop=False)  # ranx fuses runs over the same queries
    ws = _ws(lanes, qrels, TOP)
    runs = [ranx.Run.from_file(p, kind="trec") for _, p in lanes]
    fused = ranx.fuse(runs=runs, method="rrf", params={"k": 60})
    got = RRFTop(ws, 10).at(60, tuple(ws.settings.metrics))
    want = ranx_dict(fused)
    for i in range(got.lane.n_rows):
        q, doc = str(ws.qids[got.lane.qid[i]]), str(ws.doc_id(got.lane.doc[i]))
        assert got.lane.score[i] == pytest.approx(want[q][doc], rel=1e-12)
    for q in range(ws.n_queries):  # the head is the ranx lane's best docs (scores, ties aside)
        scores = got.lane.score[got.lane.rows_of(q)].tolist()
        best = sorted(want.get(str(ws.qids[q]), {}).values(), reverse=True)[:len(scores)]
        assert scores == pytest.approx(best, rel=1e-12)


def test_the_first_relevant_rank_below_the_cut(tmp_path):
    """q1: lane a = x1..x30 then y; lane b = z1..z30 then y; y (rank 31 in both) is the only
    relevant doc. k = 60: y scores 2/91 ≈ 0.0220, above 1/61 ≈ 0.0164 (the best single doc):
    rank 1. k = 0: y scores 2/31 ≈ 0.0645; x_i and z_i score 1/i, above 2/31 for i <= 15: 30
    docs before y, so y is at rank 31 (RR = 1/31), below the first d = 10 ranks (hit@10 and
    p@10 are 0)."""
    a, b, qrels = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "qrels.txt"
    a.write_text("".join(f"q1 Q0 x{i} {i} {100 - i} a\n" for i in range(1, 31)) + "q1 Q0 y 31 1 a\n", encoding="utf-8")
    b.write_text("".join(f"q1 Q0 z{i} {i} {100 - i} b\n" for i in range(1, 31)) + "q1 Q0 y 31 1 b\n", encoding="utf-8")
    qrels.write_text("q1 0 y 1\n", encoding="utf-8")
    ws = _ws([("a", str(a)), ("b", str(b))], str(qrels), "rr,hit@10,p@10,recall@10")
    got = RRFTop(ws, 10).at(60, tuple(ws.settings.metrics))
    assert got.means["rr"] == 1.0 and got.means["hit@10"] == 1.0
    got = RRFTop(ws, 10).at(0, tuple(ws.settings.metrics))
    assert got.means["rr"] == pytest.approx(1 / 31, abs=1e-15)
    assert got.means["hit@10"] == 0.0 and got.means["p@10"] == 0.0
    _same(ws, got, 0, 10)


def test_measures_that_read_the_whole_lane_are_not_served_from_the_top():
    rel = 1
    for spec in ("map", "ndcg", "num_ret", "bpref", "Rprec", "rbp", "rr(rel=2)", "ap@10"):
        assert top_depth(tuple(parse_metrics(spec)), rel, 10) is None, spec
    assert top_depth(tuple(parse_metrics(TOP)), rel, 10) == 100
    assert top_depth(tuple(parse_metrics("rr,hit@1")), rel, 10) == 10  # at least the head the view lists


def test_an_explorer_takes_the_top_fusion_for_cutoff_measures(tmp_path, monkeypatch):
    from rankscope_tui.kernel.fusion import rrf_at_k as R

    lanes, qrels = _write(tmp_path, 7, 2)
    monkeypatch.setattr(R, "EXPLORER_PREPARE_ROWS", 0)
    ws = _ws(lanes, qrels, TOP)
    ex = RRFExplorer(ws)
    _same(ws, ex.at(33), 33, R.EXPLORER_HEAD)
    assert ex._top is not None and ex._sweep is None
    ws = _ws(lanes, qrels, TOP + ",map")  # map reads the whole fused lane: the sweep
    ex = RRFExplorer(ws)
    _same(ws, ex.at(33), 33, R.EXPLORER_HEAD)
    assert ex._top is None and ex._sweep is not None
