"""Fusion methods beyond RRF and convex (kernel/fusion/combine.py): parity with
``ranx.fuse`` for every method and normalisation ranx shares with us (per query, per
document score, at 1e-12) on Cranfield's three lanes and on synthetic lanes with ties
and absent documents; hand-worked cases for what ranx lacks (weighted RRF) and for
where ranx's convention differs (constant lists, tie order, all-negative lists)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import ranx
from support import ranx_dict, shared_path

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.fusion import combine as C
from rankscope_tui.kernel.fusion import methods as F
from rankscope_tui.kernel.ranking.ranks import RankedLane, rank_lane

# ----------------------------------------------------------------------- helpers


class Lanes:
    """Hand-made runs ({qid: {doc: score}}) as RankedLanes over one vocabulary; doc codes
    in first-seen order (not byte order), ``ids`` maps them back for the tie rule."""

    def __init__(self, runs: list[dict[str, dict[str, float]]]):
        self.qids = sorted({q for run in runs for q in run})
        self.ids: list[str] = []
        code: dict[str, int] = {}
        for run in runs:
            for q in sorted(run):
                for d in run[q]:
                    if d not in code:
                        code[d] = len(self.ids)
                        self.ids.append(d)
        self.tie = np.array(self.ids, dtype=object)
        self.lanes: list[RankedLane] = []
        for i, run in enumerate(runs):
            q = [self.qids.index(qq) for qq in run for _ in run[qq]]
            d = [code[dd] for qq in run for dd in run[qq]]
            s = [run[qq][dd] for qq in run for dd in run[qq]]
            self.lanes.append(rank_lane(f"l{i}", np.array(q, np.int32), np.array(d, np.int64), np.array(s, float),
                                        len(self.qids), None, self.tie))

    def listing(self, lane: RankedLane) -> dict[str, list[tuple[str, float]]]:
        """{qid: [(doc, score)] in the lane's order}."""
        return {q: [(self.ids[int(c)], float(s)) for c, s in zip(lane.doc[lane.rows_of(i)], lane.score[lane.rows_of(i)])]
                for i, q in enumerate(self.qids)}

    def ranx_runs(self, by_rank: bool = False) -> list[ranx.Run]:
        """The lanes as ranx runs. ranx has no tie rule (its sort may put tied docs in any
        order), so where only the order is read (rank methods, rank and Borda normalisation)
        ``by_rank`` gives it each lane's order as the scores ``-rank``: both sides then read
        the same ranking, and the test compares the arithmetic."""
        out = []
        for lane in self.lanes:
            hits = self.listing(lane)
            out.append(ranx.Run.from_dict({q: {d: (-float(r) if by_rank else s) for r, (d, s) in enumerate(h, 1)}
                                           for q, h in hits.items()}))
        return out

    def fuse(self, spec: str, **kw) -> dict[str, dict[str, float]]:
        return {q: dict(h) for q, h in self.listing(F.fuse(self.lanes, spec, doc_ids=self.tie, **kw)).items()}


def ranx_fuse(runs, method: str, norm: str | None, **params) -> dict[str, dict[str, float]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ranx_dict(ranx.fuse(runs, norm=norm, method=method, params=params or None))


def assert_scores_close(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]], what: str) -> int:
    """Same queries, same docs per query, every score within 1e-12 (relative, or absolute
    near zero); returns the number of (query, doc) scores compared."""
    assert set(ours) == set(theirs), what
    n = 0
    for q in ours:
        assert set(ours[q]) == set(theirs[q]), (what, q)
        for d, s in ours[q].items():
            assert math.isclose(s, theirs[q][d], rel_tol=1e-12, abs_tol=1e-12), (what, q, d, s, theirs[q][d])
            n += 1
    return n


# our method -> ranx's method name; wrrf has no ranx counterpart (tested by hand below)
RANX_METHOD = {"combsum": "sum", "combmnz": "mnz", "combanz": "anz", "combmax": "max", "combmin": "min",
               "combmed": "med", "wsum": "wsum", "borda": "bordafuse", "isr": "isr", "logisr": "log_isr", "rrf": "rrf"}
RANX_NORM = {"minmax": "min-max", "max": "max", "sum": "sum", "zmuv": "zmuv", "rank": "rank", "borda": "borda",
             "none": None}
SHARED = [m for m in C.METHODS if m in RANX_METHOD]


def by_rank(method: str, norm: str | None) -> bool:
    """Whether only the lanes' order is read (see ``Lanes.ranx_runs``)."""
    return method in C.RANK_METHODS or norm in ("rank", "borda")


def shared_specs(n_lanes: int):
    """(our spelling, ranx method, ranx norm, ranx params, our weights) for every method and
    normalisation both have."""
    weights = [0.5, 0.3, 0.2][:n_lanes] if n_lanes <= 3 else [1.0 / n_lanes] * n_lanes
    for method in SHARED:
        params = {"weights": weights} if method == "wsum" else {"k": 60} if method == "rrf" else {}
        if method in C.RANK_METHODS:
            yield method, RANX_METHOD[method], None, params, None
            continue
        for norm in C.NORMS:
            yield f"{method}:{norm}", RANX_METHOD[method], RANX_NORM[norm], params, \
                (weights if method == "wsum" else None)


def synthetic_runs(seed: int, n_runs: int = 3, nq: int = 6, pool: int = 14) -> list[dict[str, dict[str, float]]]:
    """Lanes with ties (scores on a coarse grid) and absent docs (each lane lists a random
    subset of a small pool, of varying length); never a constant list (ranx and we differ
    there, see below) and every lane holds every query (ranx needs the same queries)."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(nq):
            n = int(rng.integers(3, pool))
            docs = rng.choice(pool, n, replace=False)
            scores = rng.integers(1, 5, n).astype(float) * 0.25 + 0.5  # few values: ties
            scores[0], scores[1] = 3.0, 0.5  # two distinct values at least
            run[f"q{q}"] = {f"d{int(d):02d}": float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return runs


def read_trec(path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            out.setdefault(q, {})[d] = float(s)
    return out


# --------------------------------------------------------------------------- parity


@pytest.fixture(scope="module")
def cranfield() -> Lanes:
    lanes = shared_path("cranfield", "lanes")
    return Lanes([read_trec(lanes / f"{n}.run") for n in ("bm25", "dense", "tfidf")])


def test_parity_with_ranx_on_cranfield(cranfield):
    runs = {False: cranfield.ranx_runs(), True: cranfield.ranx_runs(by_rank=True)}
    ties = sum(int(np.count_nonzero((lane.score[1:] == lane.score[:-1]) & (lane.qid[1:] == lane.qid[:-1])))
               for lane in cranfield.lanes)
    assert ties > 0  # the lanes hold tied scores: the insertion order given to ranx matters
    compared = 0
    specs = list(shared_specs(3))
    assert len(specs) == 7 * len(C.NORMS) + 4
    for ours, method, norm, params, weights in specs:
        spec = C.parse_fuse(ours)
        theirs = ranx_fuse(runs[by_rank(spec.method, spec.norm)], method, norm, **params)
        compared += assert_scores_close(cranfield.fuse(ours, weights=weights), theirs, ours)
    assert compared > len(specs) * 25_000  # every union doc of every query, per method


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parity_with_ranx_on_synthetic_ties_and_absent_docs(seed):
    v = Lanes(synthetic_runs(seed))
    union = {q: set().union(*({d for d, _ in v.listing(lane)[q]} for lane in v.lanes)) for q in v.qids}
    assert any(len(union[q]) > len(v.listing(lane)[q]) for q in v.qids for lane in v.lanes)  # absent docs exist
    runs = {False: v.ranx_runs(), True: v.ranx_runs(by_rank=True)}
    for ours, method, norm, params, weights in shared_specs(3):
        spec = C.parse_fuse(ours)
        theirs = ranx_fuse(runs[by_rank(spec.method, spec.norm)], method, norm, **params)
        assert_scores_close(v.fuse(ours, weights=weights), theirs, ours)


def test_parity_with_ranx_two_lanes():
    v = Lanes(synthetic_runs(5, n_runs=2))
    runs = {False: v.ranx_runs(), True: v.ranx_runs(by_rank=True)}
    for ours, method, norm, params, weights in shared_specs(2):
        spec = C.parse_fuse(ours)
        theirs = ranx_fuse(runs[by_rank(spec.method, spec.norm)], method, norm, **params)
        assert_scores_close(v.fuse(ours, weights=weights), theirs, ours)


# ------------------------------------------------------ where ranx's convention differs


def test_difference_tie_order_ranx_keeps_the_input_order_we_use_doc_ids():
    # Ours: a lane's tied docs are ordered by doc id descending (trec_eval), so a lane
    # means one ranking whatever the order of its file. ranx keeps them in the order it
    # was given, so a rank method's scores then depend on the file's line order.
    a = {"q": {"x": 1.0, "y": 1.0, "z": 2.0}}
    b = {"q": {"y": 2.0, "x": 1.0}}
    given = Lanes([a, b])
    swapped = Lanes([{"q": {"y": 1.0, "x": 1.0, "z": 2.0}}, b])
    assert given.fuse("isr") == swapped.fuse("isr")
    # our order of lane a: z (rank 1), y (2, "y" > "x"), x (3): isr(y) = 2·(1/4 + 1) by hand
    assert given.fuse("isr")["q"] == {"z": 1.0, "y": 2 * (0.25 + 1.0), "x": 2 * (1 / 9 + 0.25)}
    as_given = ranx_fuse([ranx.Run.from_dict(a), ranx.Run.from_dict(b)], "isr", None)["q"]
    assert as_given["x"] == 2 * (0.25 + 0.25)  # ranx: x before y in a, so x has rank 2 there
    assert as_given != given.fuse("isr")["q"]


def test_difference_constant_list_minmax_and_sum():
    # A constant list cannot tell its docs apart: min-max gives each the full share (1.0,
    # as the convex lane always has) and sum the equal share 1/n; ranx floors the
    # denominator at 1e-9 and gives 0.
    runs = [{"q": {"a": 2.0, "b": 2.0}}, {"q": {"c": 3.0, "a": 1.0}}]
    v = Lanes(runs)
    assert v.fuse("combsum:minmax")["q"] == {"a": 1.0 + 0.0, "b": 1.0, "c": 1.0}
    assert v.fuse("combsum:sum")["q"] == {"a": 0.5 + 0.0, "b": 0.5, "c": 1.0}
    rr = [ranx.Run.from_dict(r) for r in runs]
    assert ranx_fuse(rr, "sum", "min-max")["q"] == {"a": 0.0, "b": 0.0, "c": 1.0}
    assert ranx_fuse(rr, "sum", "sum")["q"] == {"a": 0.0, "b": 0.0, "c": 1.0}
    # z-score: every score is the mean, 0 for both (ranx too)
    assert v.fuse("combsum:zmuv")["q"]["b"] == 0.0 == ranx_fuse(rr, "sum", "zmuv")["q"]["b"]


def test_difference_all_negative_list_max():
    # max normalisation divides by |max|: an all-negative list keeps its order with the
    # top at -1; ranx divides by max(max, 1e-9), scaling the list by 1e9.
    runs = [{"q": {"a": -1.0, "b": -4.0}}, {"q": {"a": 2.0, "c": 1.0}}]
    v = Lanes(runs)
    assert v.fuse("combsum:max")["q"] == {"a": -1.0 + 1.0, "b": -4.0, "c": 0.5}
    theirs = ranx_fuse([ranx.Run.from_dict(r) for r in runs], "sum", "max")["q"]
    assert theirs["b"] == pytest.approx(-4e9)
    # and ranx's CombMAX lets an absent doc score -1e9 there: b's max becomes -1e9, not -4e9
    assert ranx_fuse([ranx.Run.from_dict(r) for r in runs], "max", "max")["q"]["b"] == -1e9
    assert v.fuse("combmax:max")["q"]["b"] == -4.0


# ------------------------------------------------------------------- by hand


TWO = [{"q": {"a": 4.0, "b": 2.0, "c": 1.0}}, {"q": {"b": 9.0, "d": 3.0}}]


def test_absent_documents_by_hand():
    # lane 0 min-max: a 1, b 1/3, c 0; lane 1: b 1, d 0. a, c absent from lane 1; d from lane 0
    v = Lanes(TWO)
    third = 1 / 3
    assert v.fuse("combsum")["q"] == {"a": 1.0, "b": third + 1.0, "c": 0.0, "d": 0.0}
    assert v.fuse("combmnz")["q"] == {"a": 1.0, "b": 2 * (third + 1.0), "c": 0.0, "d": 0.0}
    assert v.fuse("combanz")["q"] == {"a": 1.0, "b": (third + 1.0) / 2, "c": 0.0, "d": 0.0}
    assert v.fuse("combmax")["q"] == {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}
    assert v.fuse("combmin")["q"] == {"a": 1.0, "b": third, "c": 0.0, "d": 0.0}
    assert v.fuse("combmed")["q"] == {"a": 1.0, "b": (third + 1.0) / 2, "c": 0.0, "d": 0.0}
    # Borda: m = 4 candidates; lane 0 gives 4, 3, 2 and d the mean of what is left, 1;
    # lane 1 gives b 4, d 3, and a, c the mean of 2 and 1
    assert v.fuse("borda")["q"] == {"a": 4 + 1.5, "b": 3 + 4.0, "c": 2 + 1.5, "d": 1 + 3.0}
    # ISR / log-ISR: ranks a 1, b 2 | 1, c 3, d 2
    assert v.fuse("isr")["q"] == {"a": 1.0, "b": 2 * (0.25 + 1.0), "c": 1 / 9, "d": 0.25}
    assert v.fuse("logisr")["q"] == {"a": 0.0, "b": math.log(2) * (0.25 + 1.0), "c": 0.0, "d": 0.0}
    # rank normalisation: 1 - (r-1)/n: lane 0 n=3, lane 1 n=2
    assert v.fuse("combsum:rank")["q"] == pytest.approx({"a": 1.0, "b": 2 / 3 + 1.0, "c": 1 / 3, "d": 0.5}, rel=1e-15)
    # borda normalisation fills absent docs with 1/2 - (n-1)/(2m): lane 0 (n=3) 0.25, lane 1 (n=2) 0.375;
    # no doc is absent after it, so CombMNZ counts both lanes for every doc
    assert v.fuse("combmnz:borda")["q"] == pytest.approx(
        {"a": 2 * (1.0 + 0.375), "b": 2 * (0.75 + 1.0), "c": 2 * (0.5 + 0.375), "d": 2 * (0.25 + 0.75)}, rel=1e-15)


def test_weighted_rrf_by_hand():
    v = Lanes(TWO)
    got = v.fuse("wrrf", weights=(0.75, 0.25), k=10)["q"]
    assert got == {"a": 0.75 / 11, "b": 0.75 / 12 + 0.25 / 11, "c": 0.75 / 13, "d": 0.25 / 12}
    # equal weights 1/L by default: RRF's order, its scores halved
    rrf = v.fuse("rrf", k=10)["q"]
    assert v.fuse("wrrf", k=10)["q"] == pytest.approx({d: s / 2 for d, s in rrf.items()}, rel=1e-15)
    # a zero weight: that lane's docs stay, at 0
    assert v.fuse("wrrf", weights=(1.0, 0.0), k=10)["q"]["d"] == 0.0


def test_one_tie_rule_doc_id_descending():
    # a, c tie (1.0 each under combmax); z, b tie at 0: doc id descending as bytes
    runs = [{"q": {"a": 2.0, "b": 1.0}}, {"q": {"c": 5.0, "z": 1.0}}]
    v = Lanes(runs)
    lane = F.fuse(v.lanes, "combmax:minmax", doc_ids=v.tie)
    assert [d for d, _ in v.listing(lane)["q"]] == ["c", "a", "z", "b"]
    assert list(lane.rank) == [1, 2, 3, 4]
    cut = F.fuse(v.lanes, "combmax:minmax", doc_ids=v.tie, depth=3)
    assert [d for d, _ in v.listing(cut)["q"]] == ["c", "a", "z"]


def test_wsum_minmax_is_the_convex_lane_bit_for_bit(cranfield):
    w = (0.2, 0.5, 0.3)
    ours = F.fuse(cranfield.lanes, "wsum:minmax", weights=w, doc_ids=cranfield.tie, depth=100)
    convex = F.convex(cranfield.lanes, w, depth=100, doc_ids=cranfield.tie)
    assert ours.score.tobytes() == convex.score.tobytes() and ours.doc.tobytes() == convex.doc.tobytes()


def test_rrf_through_fuse_is_the_rrf_lane(cranfield):
    a = F.fuse(cranfield.lanes, "rrf", doc_ids=cranfield.tie)
    b = F.rrf(cranfield.lanes, doc_ids=cranfield.tie)
    assert a.doc.tobytes() == b.doc.tobytes() and a.score.tobytes() == b.score.tobytes()


@pytest.mark.parametrize("spec", ["combmnz:zmuv", "borda", "isr", "wrrf", "combmed:rank", "rrf"])
def test_fusion_table_gives_the_same_lane(cranfield, spec):
    table = F.FusionTable.build(cranfield.lanes, doc_ids=cranfield.tie)
    for depth in (None, 10):
        a = table.fuse(spec, depth=depth)
        b = F.fuse(cranfield.lanes, spec, doc_ids=cranfield.tie, depth=depth)
        assert a.name == b.name == C.parse_fuse(spec).name
        assert a.doc.tobytes() == b.doc.tobytes() and a.score.tobytes() == b.score.tobytes()
        assert a.rank.tobytes() == b.rank.tobytes()


# ------------------------------------------------------------------- spellings


@pytest.mark.parametrize("text, name", [
    ("combmnz:zmuv", "combmnz:zmuv"), ("CombMNZ:z-score", "combmnz:zmuv"), ("comb_sum:min-max", "combsum:minmax"),
    ("combsum", "combsum:minmax"), ("log_isr", "logisr"), ("bordafuse", "borda"), ("wrrf", "wrrf"),
    ("wsum:none", "wsum:none"),
])
def test_spellings(text, name):
    assert C.parse_fuse(text).name == name


@pytest.mark.parametrize("text, words", [
    ("combfoo", "unknown fusion method 'combfoo'"), ("combsum:l2", "unknown normalisation 'l2'"),
    ("isr:zmuv", "isr reads ranks and takes no normalisation"),
])
def test_bad_spellings_are_one_line(text, words):
    with pytest.raises(InputError) as e:
        C.parse_fuse(text)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_weights_only_for_weighted_methods():
    v = Lanes(TWO)
    with pytest.raises(ValueError, match="takes no weights"):
        F.fuse(v.lanes, "combsum", weights=(0.5, 0.5))
    with pytest.raises(ValueError):
        F.fuse(v.lanes, "wsum", weights=(1.0,))


def test_fusion_table_keeps_terms_across_weights_and_k(cranfield):
    # one table, many fusions (a calibration grid): each lane equals a fresh fuse()
    table = F.FusionTable.build(cranfield.lanes, doc_ids=cranfield.tie, by_best_rank=False)
    calls = [("wsum:zmuv", (0.2, 0.3, 0.5), 60), ("wsum:zmuv", (1.0, 0.0, 0.0), 60), ("combmnz:zmuv", None, 60),
             ("wsum:max", (0.5, 0.5, 0.0), 60), ("wrrf", (0.6, 0.2, 0.2), 10), ("wrrf", (0.6, 0.2, 0.2), 60),
             ("isr", None, 60), ("logisr", None, 60)]
    for spec, w, k in calls:
        a = table.fuse(spec, w, k=k, depth=20)
        b = F.fuse(cranfield.lanes, spec, w, k=k, doc_ids=cranfield.tie, depth=20)
        assert a.doc.tobytes() == b.doc.tobytes() and a.score.tobytes() == b.score.tobytes(), (spec, w, k)
