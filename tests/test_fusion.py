"""Fusion (SPEC §5; lessons 07, 08, 16): RRF, convex fusion and its grid, caps and
document-first, dilution. Expected values come from the lessons, from hand work, from
small pure-Python reference implementations written here, or from ranx."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyarrow as pa
import pytest
import ranx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ranx.fusion_optimization import optimize_weights as opt
from support import ranx_dict

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.fusion import methods as F
from rankscope_tui.kernel.ranking.judgments import Judgments
from rankscope_tui.kernel.ranking.ranks import RankedLane, byte_order, rank_lane

# ----------------------------------------------------------------------- helpers


class Vocab:
    """Query and doc vocabularies for hand-made lanes.

    Doc codes are given in first-seen order (like the workspace), so byte order and
    code order differ; ``ids`` maps codes to ids for the tie rule.
    """

    def __init__(self, runs: list[dict[str, dict[str, float]]], extra_docs=()):
        self.qids = sorted({q for run in runs for q in run})
        self.ids: list[str] = []
        self.code: dict[str, int] = {}
        for d in [d for run in runs for q in sorted(run) for d in run[q]] + list(extra_docs):
            if d not in self.code:
                self.code[d] = len(self.ids)
                self.ids.append(d)
        self.runs = runs

    @property
    def nq(self) -> int:
        return len(self.qids)

    def lane(self, i: int, name: str | None = None, depth=None) -> RankedLane:
        run = self.runs[i]
        q = [self.qids.index(qq) for qq in run for _ in run[qq]]
        d = [self.code[dd] for qq in run for dd in run[qq]]
        s = [run[qq][dd] for qq in run for dd in run[qq]]
        return rank_lane(name or f"l{i}", np.array(q, np.int32), np.array(d, np.int64), np.array(s, float),
                         self.nq, depth, np.array(self.ids, dtype=object))

    def lanes(self, names=None) -> list[RankedLane]:
        return [self.lane(i, None if names is None else names[i]) for i in range(len(self.runs))]

    def listing(self, lane: RankedLane) -> dict[str, list[tuple[str, float]]]:
        out = {}
        for qi, q in enumerate(self.qids):
            sl = lane.rows_of(qi)
            out[q] = [(self.ids[int(c)], float(s)) for c, s in zip(lane.doc[sl], lane.score[sl])]
        return out

    def docs(self, lane: RankedLane, q: str) -> list[str]:
        return [d for d, _ in self.listing(lane)[q]]


def ordered(scores: dict[str, float], depth=None) -> list[tuple[str, float]]:
    """Reference order: score descending, then doc id descending as bytes."""
    items = sorted(scores.items(), key=lambda x: x[0].encode(), reverse=True)
    items = sorted(items, key=lambda x: -x[1])
    return items[:depth] if depth else items


def ref_rrf(runs, k=60, depth=None):
    out = {}
    for q in sorted({q for run in runs for q in run}):
        ranks: dict[str, list[int]] = {}
        for run in runs:
            hits = sorted(run.get(q, {}).items(), key=lambda x: x[0].encode(), reverse=True)
            hits = sorted(hits, key=lambda x: -x[1])
            for r, (d, _) in enumerate(hits, start=1):
                ranks.setdefault(d, []).append(r)
        scores = {}
        for d, rs in ranks.items():
            total = 0.0
            for r in sorted(rs):  # largest term first
                total += 1.0 / (k + r)
            scores[d] = total
        out[q] = ordered(scores, depth)
    return out


def ref_convex(runs, weights, depth=None):
    out = {}
    for q in sorted({q for run in runs for q in run}):
        norms = []
        for run in runs:
            hits = run.get(q, {})
            if not hits:
                norms.append({})
                continue
            lo, hi = min(hits.values()), max(hits.values())
            norms.append({d: 1.0 if hi == lo else (s - lo) / (hi - lo) for d, s in hits.items()})
        docs = set().union(*norms)
        scores = {}
        for d in docs:
            total = 0.0
            for w, n in zip(weights, norms):
                if w:
                    total += w * n.get(d, 0.0)
            scores[d] = total
        out[q] = ordered(scores, depth)
    return out


def capped(docs: list[str], n: int) -> list[str]:
    """Reference cap: the first n docs of each group (the id up to '#'), in order."""
    seen: dict[str, int] = {}
    out = []
    for d in docs:
        g = d.split("#")[0]
        seen[g] = seen.get(g, 0) + 1
        if seen[g] <= n:
            out.append(d)
    return out


def random_runs(rng, n_runs, n_queries, n_docs, max_len, ties=False, same_queries=False):
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_queries):
            n = int(rng.integers(1 if same_queries else 0, max_len + 1))
            docs = rng.choice(n_docs, size=min(n, n_docs), replace=False)
            if docs.size == 0:
                continue
            scores = rng.integers(0, 4, docs.size).astype(float) if ties else rng.random(docs.size) * 10 - 3
            run[f"q{q}"] = {f"d{int(d)}": float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return runs


def ndcg10(judged: dict[tuple[int, int], int], n_queries: int, queries: np.ndarray):
    """A small nDCG@10 (linear gain, log2 discount, ideal over all judged docs) for tests."""
    ideal = np.zeros(n_queries)
    by_q: dict[int, list[int]] = {}
    for (q, _), g in judged.items():
        by_q.setdefault(q, []).append(g)
    for q, gs in by_q.items():
        gs = sorted((g for g in gs if g > 0), reverse=True)[:10]
        ideal[q] = sum(g / math.log2(i + 2) for i, g in enumerate(gs))

    def objective(lane: RankedLane) -> float:
        dcg = np.zeros(n_queries)
        top = lane.rank <= 10
        for q, d, r in zip(lane.qid[top], lane.doc[top], lane.rank[top]):
            g = judged.get((int(q), int(d)), 0)
            if g > 0:
                dcg[q] += g / math.log2(r + 1)
        v = np.divide(dcg, ideal, out=np.zeros(n_queries), where=ideal > 0)
        return float(v[queries].mean())

    return objective


# ------------------------------------------------------------ lesson arithmetic


def test_lesson_07_arithmetic():
    assert F.rrf_score([1]) == 1 / 61
    assert round(F.rrf_score([1]), 4) == 0.0164
    assert F.rrf_score([3, 5]) == 1 / 63 + 1 / 65
    assert round(F.rrf_score([3, 5]), 4) == 0.0313


def test_presence_in_two_lanes_beats_first_in_one():
    v = Vocab([{"q": {"top": 9.0, "a": 8.0, "both": 7.0, "b": 6.0, "c": 5.0}},
               {"q": {"x": 9.0, "y": 8.0, "z": 7.0, "w": 6.0, "both": 5.0}}])
    fused = F.rrf(v.lanes(), k=60)
    got = dict(v.listing(fused)["q"])
    assert got["both"] == 1 / 63 + 1 / 65
    assert got["top"] == 1 / 61
    assert v.docs(fused, "q")[0] == "both"


def test_small_k_trusts_the_top_large_k_trusts_presence():
    # "star" is first in lane A only; "common" is 10th in both lanes.
    # star: 1/(k+1); common: 2/(k+10); common wins iff k > 8.
    a = {"q": {"star": 100.0, **{f"a{i}": 90.0 - i for i in range(8)}, "common": 10.0}}
    b = {"q": {"zz": 100.0, **{f"b{i}": 90.0 - i for i in range(8)}, "common": 10.0}}
    v = Vocab([a, b])
    small = v.docs(F.rrf(v.lanes(), k=1), "q")
    large = v.docs(F.rrf(v.lanes(), k=60), "q")
    assert small.index("star") < small.index("common")
    assert large[0] == "common"
    # ranks are the lanes' own; "star" and "zz" tie exactly at every k (rank 1 in one lane)
    # and the tie goes to the larger doc id as bytes
    assert small[:2] == ["zz", "star"]


def test_equal_rank_multisets_tie_exactly_three_lanes():
    runs = [{"q": {"x": 3.0, "y": 2.0, "z": 1.0}},
            {"q": {"y": 3.0, "z": 2.0, "x": 1.0}},
            {"q": {"z": 3.0, "x": 2.0, "y": 1.0}}]
    v = Vocab(runs)
    fused = F.rrf(v.lanes(), k=60)
    listing = v.listing(fused)["q"]
    assert len({s for _, s in listing}) == 1  # (1,2,3) in every permutation: one exact score
    assert [d for d, _ in listing] == ["z", "y", "x"]  # doc id descending


def test_rrf_tie_break_uses_doc_ids_not_codes():
    # codes in first-seen order: "b" = 0, "c" = 1, "a" = 2; all three tie at rank 1
    runs = [{"q": {"b": 1.0}}, {"q": {"c": 1.0}}, {"q": {"a": 1.0}}]
    v = Vocab(runs)
    ids = np.array(v.ids, dtype=object)
    for lanes in (v.lanes()[:2], v.lanes()):
        for doc_ids in (ids, list(v.ids), byte_order(ids)):
            got = v.docs(F.rrf(lanes, doc_ids=doc_ids), "q")
            assert got == sorted(got, reverse=True)
            got = v.docs(F.FusionTable.build(lanes, doc_ids=doc_ids).rrf(60), "q")
            assert got == sorted(got, reverse=True)
    assert v.docs(F.rrf(v.lanes(), doc_ids=pa.array(v.ids)), "q") == ["c", "b", "a"]
    assert list(byte_order(pa.array(v.ids))) == [1, 2, 0]


def test_absent_lane_contributes_nothing_and_depth_cuts():
    v = Vocab([{"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}, {"q1": {"b": 5.0}}])
    fused = F.rrf(v.lanes(), k=60, depth=1)
    assert v.listing(fused) == {"q1": [("b", 1 / 61 + 1 / 62)], "q2": [("c", 1 / 61)]}
    assert fused.name == "rrf" and list(fused.rank) == [1, 1]


def test_rrf_rejects_bad_k():
    v = Vocab([{"q": {"a": 1.0}}, {"q": {"a": 1.0}}])
    with pytest.raises(InputError):
        F.rrf(v.lanes(), k=-1)
    with pytest.raises(InputError):
        F.rrf(v.lanes(), k=float("nan"))


@pytest.mark.parametrize("n_runs", [1, 2, 3])
@pytest.mark.parametrize("ties", [False, True])
def test_rrf_matches_reference(n_runs, ties):
    rng = np.random.default_rng(n_runs * 10 + ties)
    for _ in range(25):
        runs = random_runs(rng, n_runs, 4, 40, 25, ties)
        if not any(runs):
            continue
        v = Vocab(runs)
        ids = np.array(v.ids, dtype=object)
        for k in (0, 1, 60):
            for depth in (None, 1, 3, 20):
                want = ref_rrf(runs, k, depth)
                assert v.listing(F.rrf(v.lanes(), k, depth=depth, doc_ids=ids)) == want
                table = F.FusionTable.build(v.lanes(), doc_ids=ids)
                assert v.listing(table.rrf(k, depth)) == want


def test_rrf_two_lane_paths_agree_on_big_lists():
    # long lists exercise the hash table's probing and the three-stream merge
    rng = np.random.default_rng(3)
    nq, nd = 40, 700
    lanes = []
    for name in ("a", "b"):
        q = np.repeat(np.arange(nq, dtype=np.int32), 300)
        d = np.concatenate([rng.choice(nd, 300, replace=False) for _ in range(nq)])
        s = rng.integers(0, 50, q.size).astype(float)  # many score ties
        lanes.append(rank_lane(name, q, d, s, nq))
    pair = F.rrf(lanes, k=10)
    general = F._rrf_union(lanes, 10, nq, None, "rrf", None, None)
    for col in ("qid", "doc", "score", "rank", "offsets"):
        assert np.array_equal(getattr(pair, col), getattr(general, col)), col
    top = F.rrf(lanes, k=10, depth=5)  # candidate bound path
    assert np.array_equal(top.doc, pair.doc[pair.rank <= 5])
    assert np.array_equal(top.score, pair.score[pair.rank <= 5])


# ------------------------------------------------------------------ min-max, convex


def test_minmax_constant_list_is_ones():
    v = Vocab([{"q1": {"a": 2.0, "b": 2.0}, "q2": {"c": 5.0, "d": 1.0, "e": 3.0}}])
    lane = v.lane(0)
    norm = dict(zip((v.ids[int(c)] for c in lane.doc), F.minmax(lane)))
    assert norm == {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0, "e": 0.5}


def test_convex_by_hand_absent_doc_scores_zero():
    v = Vocab([{"q": {"a": 10.0, "b": 6.0, "c": 2.0}}, {"q": {"b": 1.0, "d": 0.0}}])
    fused = F.convex(v.lanes(), (0.25, 0.75))
    assert v.listing(fused)["q"] == [("b", 0.25 * 0.5 + 0.75 * 1.0), ("a", 0.25), ("d", 0.0), ("c", 0.0)]
    assert fused.name == "convex"


def test_convex_zero_weight_lane_keeps_its_docs_at_zero():
    v = Vocab([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"c": 9.0}}])
    assert v.listing(F.convex(v.lanes(), (1.0, 0.0)))["q"] == [("a", 1.0), ("c", 0.0), ("b", 0.0)]


@pytest.mark.parametrize("n_runs", [1, 2, 3])
@pytest.mark.parametrize("ties", [False, True])
def test_convex_matches_reference(n_runs, ties):
    rng = np.random.default_rng(100 + n_runs * 10 + ties)
    grid = [w for _, w in F.grid_weights(n_runs, 0.25)]
    for _ in range(20):
        runs = random_runs(rng, n_runs, 4, 40, 25, ties)
        if not any(runs):
            continue
        v = Vocab(runs)
        ids = np.array(v.ids, dtype=object)
        table = F.FusionTable.build(v.lanes(), doc_ids=ids, by_best_rank=bool(rng.integers(0, 2)))
        for w in grid[:: max(1, len(grid) // 5)]:
            for depth in (None, 1, 4):
                want = ref_convex(runs, w, depth)
                assert v.listing(F.convex(v.lanes(), w, depth=depth, doc_ids=ids)) == want
                assert v.listing(table.convex(w, depth)) == want


def test_convex_rejects_bad_weights():
    v = Vocab([{"q": {"a": 1.0}}, {"q": {"a": 1.0}}])
    for w in [(1.0,), (-0.5, 1.5), (0.0, 0.0), (float("nan"), 1.0)]:
        with pytest.raises(ValueError):
            F.convex(v.lanes(), w)


# --------------------------------------------------------------------- ranx parity


def _ranx_runs(runs):
    return ranx, [ranx.Run.from_dict(r) for r in runs]


def _tie_free_runs(seed, n_runs=2, nq=8, nd=60, length=20):
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        runs.append({f"q{q}": {f"d{int(d)}": float(s) for d, s in
                               zip(rng.choice(nd, length, replace=False), rng.random(length) * 5 + 1)}
                     for q in range(nq)})
    return runs


@pytest.mark.parametrize("seed", [0, 1])
def test_rrf_agrees_with_ranx(seed):
    runs = _tie_free_runs(seed)
    ranx, rr = _ranx_runs(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx_dict(ranx.fuse(rr, norm=None, method="rrf", params={"k": 60}))
    v = Vocab(runs)
    ours = v.listing(F.rrf(v.lanes(), k=60, doc_ids=np.array(v.ids, dtype=object)))
    for q, hits in ours.items():
        assert dict(hits) == theirs[q]  # two lanes: the very same floats
        _same_order_where_untied(hits, theirs[q])


def _same_order_where_untied(hits, theirs):
    """Positions agree wherever the fused score is unique (ranx has no tie rule)."""
    their_order = sorted(theirs, key=lambda d: -theirs[d])
    scores = [s for _, s in hits]
    untied = [i for i, s in enumerate(scores) if scores.count(s) == 1]
    assert len(untied) > len(hits) // 3
    for i in untied:
        assert their_order.index(hits[i][0]) == i


@pytest.mark.parametrize("weights", [(0.3, 0.7), (0.5, 0.5), (0.9, 0.1)])
def test_wsum_minmax_agrees_with_ranx(weights):
    runs = _tie_free_runs(7)
    ranx, rr = _ranx_runs(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx_dict(ranx.fuse(rr, norm="min-max", method="wsum", params={"weights": list(weights)}))
    v = Vocab(runs)
    ours = v.listing(F.convex(v.lanes(), weights, doc_ids=np.array(v.ids, dtype=object)))
    for q, hits in ours.items():
        assert dict(hits) == theirs[q]  # same formula, same order of additions: the same floats
        _same_order_where_untied(hits, theirs[q])


def test_three_lane_rrf_agrees_with_ranx_to_rounding():
    runs = _tie_free_runs(11, n_runs=3)
    ranx, rr = _ranx_runs(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx_dict(ranx.fuse(rr, norm=None, method="rrf", params={"k": 60}))
    v = Vocab(runs)
    for q, hits in v.listing(F.rrf(v.lanes(), k=60)).items():
        # ranx adds in lane order, we add largest term first: equal to the last bit or so
        assert dict(hits) == pytest.approx(theirs[q], rel=1e-15, abs=0)


def test_documented_difference_constant_list():
    # a constant list: we normalise to ones (lesson 08), ranx to zeros
    runs = [{"q": {"a": 2.0, "b": 2.0}}, {"q": {"c": 3.0, "a": 1.0}}]
    v = Vocab(runs)
    ours = dict(v.listing(F.convex(v.lanes(), (0.5, 0.5)))["q"])
    assert ours == {"a": 0.5, "b": 0.5, "c": 0.5}
    ranx, rr = _ranx_runs(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx_dict(ranx.fuse(rr, norm="min-max", method="wsum", params={"weights": [0.5, 0.5]}))["q"]
    assert theirs == {"a": 0.0, "b": 0.0, "c": 0.5}


def test_documented_difference_tie_order():
    # exact ties are ordered by doc id descending as bytes (trec_eval), whatever the input order
    runs = [{"q": {"m": 3.0, "k": 2.0}}, {"q": {"z": 3.0, "a": 2.0}}]
    v = Vocab(runs)
    fused = F.rrf(v.lanes(), doc_ids=np.array(v.ids, dtype=object))
    assert v.docs(fused, "q") == ["z", "m", "k", "a"]  # z/m tie at 1/61, k/a at 1/62
    assert v.docs(F.convex(v.lanes(), (0.5, 0.5), doc_ids=np.array(v.ids, dtype=object)), "q") == ["z", "m", "k", "a"]


# ---------------------------------------------------------------------------- grid


def test_grid_size_and_points():
    assert F.grid_size(3, 0.1) == 66
    assert F.grid_size(4, 0.1) == 286
    assert F.grid_size(3, 0.05) == 231
    for n_lanes, step in [(1, 0.1), (2, 0.5), (3, 0.25), (4, 0.2), (3, 1.0)]:
        pts = F.grid_weights(n_lanes, step)
        n = round(1 / step)
        assert len(pts) == F.grid_size(n_lanes, step) == math.comb(n + n_lanes - 1, n_lanes - 1)
        comps = [c for c, _ in pts]
        assert comps == sorted(comps)  # ascending lexicographic order
        assert len(set(comps)) == len(comps) and all(sum(c) == n for c in comps)
    weights = [w for _, w in F.grid_weights(3, 0.1)]
    assert weights[0] == (0.0, 0.0, 1.0) and weights[-1] == (1.0, 0.0, 0.0)
    for kept in [(0.2, 0.7, 0.1), (0.3, 0.6, 0.1), (0.6, 0.3, 0.1), (0.7, 0.2, 0.1)]:
        assert kept in weights


def test_grid_keeps_points_ranx_drops():
    theirs = opt.get_trial_configs(opt.get_possible_weights(0.1), 3)
    ours = [w for _, w in F.grid_weights(3, 0.1)]
    assert len(theirs) == 62 and len(ours) == 66
    assert set(ours) - set(map(tuple, theirs)) == {(0.2, 0.7, 0.1), (0.3, 0.6, 0.1), (0.6, 0.3, 0.1), (0.7, 0.2, 0.1)}


@pytest.mark.parametrize("step", [0.3, 0.15, 0.0, -0.1, 1.5, float("nan")])
def test_grid_rejects_steps_without_integer_inverse(step):
    with pytest.raises(InputError):
        F.grid_size(3, step)


def test_grid_accepts_inverse_within_1e9():
    assert F.grid_size(2, 1 / 3) == 4
    assert F.grid_size(2, 0.1 + 1e-12) == 11


def _calibration_case(seed=5, nq=30):
    rng = np.random.default_rng(seed)
    runs = random_runs(rng, 3, nq, 80, 40, same_queries=True)
    v = Vocab(runs)
    judged = {}
    for q in range(v.nq):
        for d in rng.choice(len(v.ids), 6, replace=False):
            judged[(q, int(d))] = int(rng.integers(0, 4))
    return v, judged


def test_calibration_first_maximum_and_fast_path_agree_with_brute_force():
    v, judged = _calibration_case()
    lanes = v.lanes()
    queries = np.arange(v.nq)[::2]  # fit on half the queries
    objective = ndcg10(judged, v.nq, queries)
    fit = F.calibrate_convex(lanes, objective, step=0.1, objective_depth=10, queries=queries,
                             objective_name="ndcg@10")
    assert fit.n_points == 66
    brute = []
    for comp, w in F.grid_weights(3, 0.1):
        brute.append(objective(F.convex(lanes, w, depth=10)))
    assert [v for _, v in fit.points] == brute  # the fast path gives the same lanes
    best = max(brute)
    assert fit.objective == best
    assert fit.composition == F.grid_weights(3, 0.1)[brute.index(best)][0]  # first maximum
    d = fit.as_dict()
    assert d["grid"]["points"] == 66 and d["objective"]["name"] == "ndcg@10"


def test_calibration_tie_goes_to_the_lexicographically_first_point():
    v, _ = _calibration_case(nq=4)
    fit = F.calibrate_convex(v.lanes(), lambda lane: 0.5, step=0.5)
    assert fit.composition == (0, 0, 2) and fit.weights == (0.0, 0.0, 1.0)
    # two maxima: (0, 1, 1) is visited before (1, 0, 1)
    target = {(0.0, 0.5, 0.5): 1.0, (0.5, 0.0, 0.5): 1.0}
    seen = iter(F.grid_weights(3, 0.5))
    fit = F.calibrate_convex(v.lanes(), lambda lane: target.get(next(seen)[1], 0.0), step=0.5)
    assert fit.composition == (0, 1, 1)


# ---------------------------------------------------------------- caps, docfirst


def _grouped_lane(order: list[str], nq_name="q"):
    v = Vocab([{nq_name: {d: float(len(order) - i) for i, d in enumerate(order)}}])
    groups = sorted({d.split("#")[0] for d in v.ids})
    group_of = np.array([groups.index(d.split("#")[0]) for d in v.ids])
    return v, v.lane(0, "fused"), group_of


def test_flooding_manual_cap_cuts_the_right_page_docfirst_keeps_it():
    # lesson 16: a long manual ranks six of its own pages above its one right page
    order = [f"manual#p{i}" for i in range(1, 7)] + ["manual#right", "other#1", "blog#1", "other#2"]
    v, lane, group_of = _grouped_lane(order)
    capped = F.cap(lane, group_of, 5)
    assert capped.name == "fused+cap5"
    assert "manual#right" not in v.docs(capped, "q")
    assert v.docs(capped, "q") == order[:5] + ["other#1", "blog#1", "other#2"]
    first = F.document_first(lane, group_of)
    assert first.name == "fused+docfirst"
    assert v.docs(first, "q").index("manual#right") == 6
    both = F.document_first(lane, group_of, cap=1)
    assert both.name == "fused+docfirst+cap1"
    assert v.docs(both, "q") == order[:7] + ["other#1", "blog#1"]  # the top group is never capped
    assert list(both.rank) == list(range(1, 10))
    assert dict(v.listing(both)["q"])["blog#1"] == 2.0  # original scores are kept


def test_flooding_catalogue_cap_lifts_the_right_item_docfirst_does_not():
    order = [f"cat#p{i}" for i in range(60)] + ["shop#right"]
    v, lane, group_of = _grouped_lane(order)
    assert v.docs(F.cap(lane, group_of, 5), "q").index("shop#right") == 5  # rank 6: inside the top 10
    # document-first keeps the whole top group first: what the rule costs here
    assert v.docs(F.document_first(lane, group_of), "q").index("shop#right") == 60


def test_document_first_reorders_rows_of_every_query():
    v = Vocab([{"q1": {"a#1": 5.0, "b#1": 4.0, "a#2": 3.0, "b#2": 2.0, "a#3": 1.0},
                "q2": {"c#1": 3.0, "d#1": 2.0, "c#2": 1.0}}])
    groups = sorted({d.split("#")[0] for d in v.ids})
    group_of = np.array([groups.index(d.split("#")[0]) for d in v.ids])
    out = F.document_first(v.lane(0), group_of)
    assert v.listing(out) == {"q1": [("a#1", 5.0), ("a#2", 3.0), ("a#3", 1.0), ("b#1", 4.0), ("b#2", 2.0)],
                              "q2": [("c#1", 3.0), ("c#2", 1.0), ("d#1", 2.0)]}
    assert list(out.rank) == [1, 2, 3, 4, 5, 1, 2, 3]


def test_cap_rejects_n_below_one():
    v, lane, group_of = _grouped_lane(["a#1"])
    with pytest.raises(InputError):
        F.cap(lane, group_of, 0)
    assert F.variant_name("bm25", 5, True) == "bm25+docfirst+cap5"


# ------------------------------------------------------------------------- dilution


def test_dilution_lists_queries_whose_rank_one_answer_was_lost():
    runs = [{"q1": {"right": 9.0, "x": 1.0}, "q2": {"ok": 5.0}},
            {"q1": {"wrong1": 9.0, "wrong2": 8.0, "x": 7.0}, "q2": {"ok": 9.0}}]
    v = Vocab(runs)
    lanes = v.lanes(["bm25", "dense"])
    fused = F.rrf(lanes, k=60)
    assert v.docs(fused, "q1")[0] != "right"
    rel = {(0, v.code["right"]): 1, (1, v.code["ok"]): 2}
    keys = sorted(rel)
    j = Judgments(np.array([q for q, _ in keys], np.int32), np.array([d for _, d in keys], np.int64),
                  np.array([rel[k] for k in keys], np.int64), len(v.ids))
    dil = F.dilution(lanes, fused, j, relevant=1)
    assert dil.counts() == {"bm25": 1, "dense": 0}
    assert list(dil.queries[0]) == [0]
    assert dil.as_dict(qids=v.qids)["lanes"]["bm25"] == {"count": 1, "queries": ["q1"]}
    assert F.dilution(lanes, fused, j, queries=np.array([1])).counts() == {"bm25": 0, "dense": 0}


# --------------------------------------------------------------- property tests


runs_strategy = st.lists(
    st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]),
        st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)] + ["D", "d", "d1#x", "é"]),
                        st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 3.25]), min_size=1, max_size=10),
        min_size=0, max_size=3),
    min_size=1, max_size=4).filter(any)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=runs_strategy, k=st.sampled_from([0, 1, 2.5, 60]), depth=st.sampled_from([None, 1, 2, 5]))
def test_property_rrf_matches_reference(runs, k, depth):
    v = Vocab(runs)
    ids = np.array(v.ids, dtype=object)
    want = ref_rrf(runs, k, depth)
    assert v.listing(F.rrf(v.lanes(), k, depth=depth, doc_ids=ids)) == want
    assert v.listing(F.FusionTable.build(v.lanes(), doc_ids=ids).rrf(k, depth)) == want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=runs_strategy, data=st.data(), depth=st.sampled_from([None, 1, 3]))
def test_property_convex_matches_reference(runs, data, depth):
    v = Vocab(runs)
    ids = np.array(v.ids, dtype=object)
    w = data.draw(st.sampled_from([w for _, w in F.grid_weights(len(runs), 0.5)]))
    want = ref_convex(runs, w, depth)
    assert v.listing(F.convex(v.lanes(), w, depth=depth, doc_ids=ids)) == want
    assert v.listing(F.FusionTable.build(v.lanes(), doc_ids=ids).convex(w, depth)) == want


@settings(max_examples=150, deadline=None)
@given(order=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=25),
       n=st.integers(1, 4), doc_first=st.booleans(), use_cap=st.booleans())
def test_property_caps(order, n, doc_first, use_cap):
    docs = [f"{g}#{i}" for i, g in enumerate(order)]
    v, lane, group_of = _grouped_lane(docs)
    groups = [d.split("#")[0] for d in docs]
    if doc_first:
        top = [d for d in docs if d.split("#")[0] == groups[0]]
        rest = [d for d in docs if d.split("#")[0] != groups[0]]
        want = top + (capped(rest, n) if use_cap else rest)
        got = F.document_first(lane, group_of, n if use_cap else None)
    else:
        want = capped(docs, n)
        got = F.cap(lane, group_of, n)
    assert v.docs(got, "q") == want
    assert list(got.rank) == list(range(1, len(want) + 1))


@settings(max_examples=60, deadline=None)
@given(n_docs=st.integers(1, 3000), n_q=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_property_hash_union_matches_a_set(n_docs, n_q, seed):
    # many colliding and repeated doc codes across queries and lanes
    rng = np.random.default_rng(seed)
    lanes = []
    for name in ("a", "b", "c"):
        q = np.repeat(np.arange(n_q, dtype=np.int32), min(n_docs, 200))
        d = np.concatenate([rng.choice(n_docs, min(n_docs, 200), replace=False) * 4096 for _ in range(n_q)])
        lanes.append(rank_lane(name, q, d.astype(np.int64), rng.random(q.size), n_q))
    u = F._union(lanes, n_q)
    want = sorted({(int(q), int(d)) for L in lanes for q, d in zip(L.qid, L.doc)})
    assert sorted(zip(u.qid.tolist(), u.doc.tolist())) == want
    for i, L in enumerate(lanes):
        assert np.array_equal(u.doc[u.pos[i]], L.doc) and np.array_equal(u.qid[u.pos[i]], L.qid)
