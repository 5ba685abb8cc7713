"""Tie exposure (kernel/measures/ties.py) against brute force.

The oracle enumerates every ordering of the hits inside every tie group of small random
cases (at most 8 tied hits in all) and evaluates each ordering with measures written
here from their definitions (trec_eval's), independently of the module: the minimum,
maximum and mean over the orderings must equal the module's worst, best and expected
values.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from rankscope_tui.kernel.measures.registry import MetricKey
from rankscope_tui.kernel.measures.ties import query_ties, straddles, tie_groups
from rankscope_tui.kernel.ranking.judgments import NO_JUDGMENT


def oracle(kind, k, grades, ideal, level):
    """The measure from its definition on one ordered list of grades (None = unjudged)."""
    rels = [g is not None and g >= level for g in grades]
    R = sum(1 for g in ideal if g >= level)
    top = rels if k is None else rels[:k]
    if kind == "hit":
        return float(any(top))
    if kind == "p":
        return sum(top) / k
    if kind == "recall":
        return sum(top) / R if R else 0.0
    if kind == "rr":
        for i, r in enumerate(top):
            if r:
                return 1.0 / (i + 1)
        return 0.0
    if kind == "ap":
        seen, total = 0, 0.0
        for i, r in enumerate(top):
            if r:
                seen += 1
                total += seen / (i + 1)
        return total / R if R else 0.0
    if kind == "ndcg":
        def dcg(gs):
            return sum(g / math.log2(i + 2) for i, g in enumerate(gs) if g is not None and g > 0)
        ideal_sorted = sorted(ideal, reverse=True)
        idcg = dcg(ideal_sorted if k is None else ideal_sorted[:k])
        return dcg(grades if k is None else grades[:k]) / idcg if idcg > 0 else 0.0
    raise AssertionError(kind)


def orderings(grades, groups):
    """Every list obtained by permuting the places inside each group (distinct place
    permutations, so repeated grades are counted with their multiplicity: a uniform
    draw over the orderings of the hits)."""
    per_group = [list(itertools.permutations(range(s, e))) for s, e in groups]
    for choice in itertools.product(*per_group):
        out = list(grades)
        for (s, e), perm in zip(groups, choice):
            for place, src in zip(range(s, e), perm):
                out[place] = grades[src]
        yield out


def random_case(rng: random.Random, graded: bool):
    n = rng.randint(2, 12)
    # scores drawn from few values so that ties are frequent; at most 8 tied hits in all
    while True:
        scores = sorted((rng.choice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) for _ in range(n)), reverse=True)
        groups = tie_groups(scores)
        if groups and sum(e - s for s, e in groups) <= 8:
            break
    top_grade = 3 if graded else 1
    grades = [None if rng.random() < 0.15 else rng.randint(0, top_grade) for _ in range(n)]
    # the qrels: the judged hits plus some relevant docs the run missed
    ideal = [g for g in grades if g is not None] + [rng.randint(0, top_grade) for _ in range(rng.randint(0, 3))]
    return scores, grades, ideal, groups


KEYS = [MetricKey("hit", 1), MetricKey("hit", 3), MetricKey("p", 3), MetricKey("p", 5), MetricKey("recall", 4),
        MetricKey("rr", None), MetricKey("rr", 3), MetricKey("ap", None), MetricKey("ap", 5),
        MetricKey("ndcg", None), MetricKey("ndcg", 3), MetricKey("ndcg", 5), MetricKey("p", 3, rel=2)]


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_bounds_and_mean_equal_enumeration_of_every_tie_order(graded):
    rng = random.Random(20080330 + graded)
    checked = dependent = 0
    for _ in range(80):
        scores, grades, ideal, groups = random_case(rng, graded)
        arr = np.array([NO_JUDGMENT if g is None else g for g in grades], dtype=np.int64)
        ideal_arr = np.array(ideal, dtype=np.int64)
        all_orders = list(orderings(grades, groups))
        for key in KEYS:
            level = key.rel if key.rel is not None else 1
            vals = [oracle(key.kind, key.k, o, ideal, level) for o in all_orders]
            got = query_ties(key, np.array(scores), arr, ideal_arr, relevant=1)
            assert got.worst == pytest.approx(min(vals), abs=1e-12), (key.key, scores, grades, ideal)
            assert got.best == pytest.approx(max(vals), abs=1e-12), (key.key, scores, grades, ideal)
            if key.kind == "ap":
                assert got.expected is None
            else:
                assert got.expected == pytest.approx(sum(vals) / len(vals), abs=1e-12), (key.key, scores, grades, ideal)
            assert got.depends == (max(vals) - min(vals) > 1e-12)
            checked += 1
            dependent += got.depends
    # the cases exercise both outcomes
    assert checked == 80 * len(KEYS) and 0 < dependent < checked


def test_lane_ties_of_many_queries_equal_enumeration_per_query():
    """``lane_ties`` finds every query's tie groups in one pass over the lane's rows; on a
    lane of 60 random queries (with an empty query and tie-free ones among them) each
    query's worst, best and mean equal the enumeration of its tie orders, a query
    without a tie keeps the value under the tie rule, and ``straddles`` equals a check
    written here from the runs of equal adjacent scores."""
    from rankscope_tui.kernel.measures.ties import lane_ties
    from rankscope_tui.kernel.ranking.judgments import Judgments
    from rankscope_tui.kernel.ranking.ranks import RankedLane

    rng = random.Random(4956)
    cases = [random_case(rng, graded=bool(i % 2)) for i in range(58)]
    cases.insert(7, ([3.0, 2.0, 1.0], [1, None, 0], [1, 2], []))  # no tie
    cases.insert(20, ([], [], [1], []))  # the lane lacks this query
    qid, doc, score, rank, offsets = [], [], [], [], [0]
    jq, jd, jg = [], [], []
    for q, (scores, grades, ideal, _) in enumerate(cases):
        for i, (sc, g) in enumerate(zip(scores, grades)):
            qid.append(q), doc.append(i), score.append(sc), rank.append(i + 1)
            if g is not None:
                jq.append(q), jd.append(i), jg.append(g)
        # the relevant docs the run missed, as doc codes past the run's
        extra = ideal[len([g for g in grades if g is not None]):]
        for j, g in enumerate(extra):
            jq.append(q), jd.append(100 + j), jg.append(g)
        offsets.append(len(qid))
    lane = RankedLane("t", np.array(qid, dtype=np.int32), np.array(doc, dtype=np.int64), np.array(score),
                      np.array(rank, dtype=np.int32), np.array(offsets, dtype=np.int64))
    judgments = Judgments(np.array(jq, dtype=np.int32), np.array(jd, dtype=np.int64), np.array(jg, dtype=np.int64),
                          200)
    values = {k.key: np.array([oracle(k.kind, k.k, grades, ideal, k.rel or 1) for _, grades, ideal, _ in cases])
              for k in KEYS}
    got = lane_ties(lane, judgments, values, KEYS, relevant=1)
    walked = 0
    for q, (scores, grades, ideal, _) in enumerate(cases):
        runs, i = [], 0  # maximal runs of two or more equal adjacent scores
        while i < len(scores):
            j = i
            while j + 1 < len(scores) and scores[j + 1] == scores[i]:
                j += 1
            if j > i:
                runs.append((i, j + 1))
            i = j + 1
        assert got.tied[q] == bool(runs)
        all_orders = list(orderings(grades, runs))
        for key in KEYS:
            level = key.rel or 1
            vals = [oracle(key.kind, key.k, o, ideal, level) for o in all_orders]
            assert got.worst[key.key][q] == pytest.approx(min(vals), abs=1e-12), (key.key, q)
            assert got.best[key.key][q] == pytest.approx(max(vals), abs=1e-12), (key.key, q)
            if key.kind != "ap" or max(vals) - min(vals) <= 1e-12:
                assert got.expected[key.key][q] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (key.key, q)
            else:
                assert math.isnan(got.expected[key.key][q])
            assert got.depends[key.key][q] == (max(vals) - min(vals) > 1e-12), (key.key, q)
            assert got.straddles[key.key][q] == (key.k is not None and any(s < key.k < e for s, e in runs))
            walked += got.depends[key.key][q]
    assert walked > 0


def test_lane_ties_equals_query_ties_bit_for_bit_on_large_lanes():
    """``lane_ties`` computes every tied query at once; each of its numbers is the same
    float (compared with ``==``, not approximately) as :func:`query_ties` on that query
    alone, the function the enumeration above checks. Lanes of 400 queries with up to 70
    hits, scores from few values (long tie groups straddling the cutoffs), grades 0-3,
    pool-only grades (-1), unjudged hits, relevance levels 1 and 2, cut and uncut measures."""
    from rankscope_tui.kernel.measures.ties import lane_ties
    from rankscope_tui.kernel.ranking.judgments import Judgments
    from rankscope_tui.kernel.ranking.ranks import RankedLane

    keys = [*KEYS, MetricKey("recall", None), MetricKey("hit", 10), MetricKey("ndcg", 10), MetricKey("ap", 20),
            MetricKey("rr", 10), MetricKey("p", 10), MetricKey("recall", 10, rel=2), MetricKey("rr", None, rel=2)]
    for seed, relevant in ((1, 1), (2, 2), (3, 1)):
        rng = np.random.default_rng(seed)
        qid, doc, score, rank, offsets, jq, jd, jg = [], [], [], [], [0], [], [], []
        for q in range(400):
            n = int(rng.integers(0, 71))
            values = np.sort(rng.choice(rng.uniform(0, 1, size=int(rng.integers(1, 9))), size=n))[::-1]
            for i in range(n):
                qid.append(q), doc.append(i), score.append(float(values[i])), rank.append(i + 1)
                u = rng.random()
                if u < 0.7:
                    jq.append(q), jd.append(i), jg.append(int(rng.integers(0, 4)) if u < 0.65 else -1)
            for j in range(int(rng.integers(0, 4))):  # relevant docs the run missed
                jq.append(q), jd.append(500 + j), jg.append(int(rng.integers(0, 4)))
            offsets.append(len(qid))
        lane = RankedLane("t", np.array(qid, dtype=np.int32), np.array(doc, dtype=np.int64), np.array(score),
                          np.array(rank, dtype=np.int32), np.array(offsets, dtype=np.int64))
        judgments = Judgments(np.array(jq, dtype=np.int32), np.array(jd, dtype=np.int64),
                              np.array(jg, dtype=np.int64), 600)
        values = {k.key: np.full(400, 0.25) for k in keys}  # a query without a tie keeps these
        got = lane_ties(lane, judgments, values, keys, relevant=relevant)
        walked = 0
        for q in range(400):
            lo, hi = offsets[q], offsets[q + 1]
            s = np.array(score[lo:hi])
            groups = tie_groups(s)
            grades = judgments.grade_of(np.full(hi - lo, q), np.arange(hi - lo))
            ideal = judgments.grade[judgments.qid == q]
            ideal = ideal[ideal >= 0]
            moving = any(np.unique(np.maximum(grades[a:b], -1)).size > 1 for a, b in groups)
            for key in keys:
                if not moving:
                    assert got.worst[key.key][q] == got.best[key.key][q] == 0.25
                    continue
                t = query_ties(key, s, grades, ideal, relevant, groups)
                assert (got.worst[key.key][q], got.best[key.key][q]) == (t.worst, t.best), (seed, q, key.key)
                exp = t.expected if t.expected is not None else (t.worst if not t.depends else None)
                if exp is None:
                    assert math.isnan(got.expected[key.key][q])
                else:
                    assert got.expected[key.key][q] == exp, (seed, q, key.key)
                assert got.depends[key.key][q] == t.depends
                walked += t.depends
        assert walked > 1000


def test_lane_ties_where_no_walked_query_holds_a_relevant_hit():
    """Hand-worked: one query whose tie group holds a judged non-relevant hit and an
    unjudged one (two grades, so it is walked) and no relevant hit; its relevant doc is
    missing from the run. Every measure is 0 in every order: worst, best and mean 0."""
    from rankscope_tui.kernel.measures.ties import lane_ties
    from rankscope_tui.kernel.ranking.judgments import Judgments
    from rankscope_tui.kernel.ranking.ranks import RankedLane

    lane = RankedLane("t", np.zeros(3, dtype=np.int32), np.arange(3, dtype=np.int64), np.array([2.0, 1.0, 1.0]),
                      np.arange(1, 4, dtype=np.int32), np.array([0, 3], dtype=np.int64))
    judgments = Judgments(np.zeros(2, dtype=np.int32), np.array([1, 9], dtype=np.int64), np.array([0, 1]), 10)
    got = lane_ties(lane, judgments, {k.key: np.zeros(1) for k in KEYS}, KEYS, relevant=1)
    for key in KEYS:
        assert (got.worst[key.key][0], got.best[key.key][0], got.expected[key.key][0]) == (0.0, 0.0, 0.0), key.key
        assert not got.depends[key.key][0]


def test_tie_groups_and_straddling_by_hand():
    scores = [9.0, 7.0, 7.0, 7.0, 5.0, 3.0, 3.0]
    assert tie_groups(scores) == [(1, 4), (5, 7)]  # ranks 2-4 and 6-7
    assert straddles(tie_groups(scores), 2) and straddles(tie_groups(scores), 3)
    assert not straddles(tie_groups(scores), 1) and not straddles(tie_groups(scores), 4)
    assert not straddles(tie_groups(scores), 5) and straddles(tie_groups(scores), 6)


def test_hand_worked_p_at_2_and_rr():
    # ranks 1-3 tie; one relevant among them. p@2 is 1/2 if it lands in places 1-2 (2 of 3
    # orderings), else 0: worst 0, best 1/2, mean 1/3. rr: 1, 1/2, 1/3 equally likely.
    scores = np.array([5.0, 5.0, 5.0, 1.0])
    grades = np.array([0, 1, 0, 0], dtype=np.int64)
    ideal = np.array([0, 1, 0, 0], dtype=np.int64)
    p2 = query_ties(MetricKey("p", 2), scores, grades, ideal, 1)
    assert (p2.worst, p2.best) == (0.0, 0.5) and p2.expected == pytest.approx(1 / 3) and p2.straddles
    rr = query_ties(MetricKey("rr", None), scores, grades, ideal, 1)
    assert (rr.worst, rr.best) == (pytest.approx(1 / 3), 1.0) and rr.expected == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)



def _read_trec(path, cols):
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts:
                out.setdefault(parts[0], []).append(tuple(parts[c] for c in cols))
    return out


def test_cranfield_bounds_equal_pytrec_eval_on_the_extreme_tie_orders():
    """On Cranfield's three lanes, the worst and best values equal pytrec_eval's on the run
    reordered inside each group of equal scores by grade ascending / descending (written
    with distinct integer scores, so pytrec_eval keeps that order); the value under the tie
    rule lies between them. The tie-dependent counts are printed for the README."""
    import pytrec_eval
    from support import shared_path

    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    C = shared_path("cranfield")
    names = {"p@10": "P_10", "recall@100": "recall_100", "rr": "recip_rank", "ap": "map", "ndcg@10": "ndcg_cut_10",
             "ndcg": "ndcg"}
    metrics = tuple(parse_metrics(",".join(names)))
    lanes = ("bm25", "tfidf", "dense")
    ws = Workspace.load([(n, str(C / "lanes" / f"{n}.run")) for n in lanes], str(C / "qrels-test.txt"),
                        LoadSettings(metrics=metrics))
    qrels = {q: {d: int(g) for d, g in rows} for q, rows in _read_trec(C / "qrels-test.txt", (2, 3)).items()}
    positives = [ws.qids[c] for c in ws.positives]
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names.values()))
    for lane in lanes:
        run = _read_trec(C / "lanes" / f"{lane}.run", (2, 4))
        extremes = {}
        for case, sign in (("best", -1), ("worst", 1)):
            reordered = {}
            for q, rows in run.items():
                # score descending; inside equal scores grade descending (best) or ascending
                # (worst), unjudged as -1
                rows = sorted(rows, key=lambda r: (-float(r[1]), sign * qrels.get(q, {}).get(r[0], -1)))
                reordered[q] = {d: float(len(rows) - i) for i, (d, _) in enumerate(rows)}
            extremes[case] = evaluator.evaluate(reordered)
        t = ws.ties(lane)
        values = ws.per_query(lane)
        dependent = {}
        for key, pyname in names.items():
            for q in positives:
                c = ws.qid_index[q]
                assert t.best[key][c] == pytest.approx(extremes["best"][q][pyname], abs=1e-9), (lane, key, q)
                assert t.worst[key][c] == pytest.approx(extremes["worst"][q][pyname], abs=1e-9), (lane, key, q)
                assert t.worst[key][c] - 1e-12 <= values[key][c] <= t.best[key][c] + 1e-12
            dependent[key] = int(t.depends[key][ws.positives].sum())
            assert dependent[key] == sum(extremes["best"][q][pyname] - extremes["worst"][q][pyname] > 1e-9
                                         for q in positives)
        print(lane, "tie-dependent positive queries:", dependent)


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def test_compare_flags_a_row_that_a_tie_order_could_flip(tmp_path):
    """Hand-worked: on each of 4 queries, d9 (relevant) and d1 (not) tie in the candidate;
    the tie rule (doc id descending as bytes) puts d9 first, so rr = 1 and the observed Δ
    over the baseline (d1 above d9, rr = 1/2) is +1/2. Ordered the other way the candidate
    scores 1/2 too: Δ ranges from 0 to +1/2, so the sign could change and the row is
    flagged; the flag also reaches the row's notes and its compare --out dict."""
    from rankscope_tui.kernel.instruments.compare import compare
    from rankscope_tui.kernel.instruments.evaluate import prepare, ties_block
    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import CompareSettings, LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    qs = ["q1", "q2", "q3", "q4"]
    qrels = _write(tmp_path / "qrels", [f"{q} 0 {d} {g}" for q in qs for d, g in (("d9", 1), ("d1", 0))])
    base = _write(tmp_path / "base", [f"{q} Q0 {d} {i + 1} {s} base" for q in qs for i, (d, s) in enumerate((("d1", 2), ("d9", 1)))])
    cand = _write(tmp_path / "cand", [f"{q} Q0 {d} {i + 1} 1 cand" for q in qs for i, d in enumerate(("d1", "d9"))])
    ws = Workspace.load([("base", base), ("cand", cand)], qrels, LoadSettings(metrics=tuple(parse_metrics("rr,p@1"))))
    ws, th = prepare(ws)
    result = compare(ws, th, CompareSettings(baseline="base", candidates=("cand",), metrics=("rr", "p@1")))
    rows = {r.metric: r for r in result.rows}
    rr = rows["rr"]
    assert rr.difference == pytest.approx(0.5)
    assert rr.tie_order is not None and rr.tie_order.dependent_queries == 4
    assert rr.tie_order.delta_low == pytest.approx(0.0) and rr.tie_order.delta_high == pytest.approx(0.5)
    assert rr.tie_order.could_flip
    assert any("tied scores could change this row" in n for n in rr.notes)
    assert rr.as_dict(reasons=True)["tie_order"]["could_flip"] is True
    # p@1: the baseline scores 0 on every query, the candidate 1 under the rule and 0 the other way
    p1 = rows["p@1"]
    assert p1.tie_order.delta_low == pytest.approx(0.0) and p1.tie_order.delta_high == pytest.approx(1.0) and p1.tie_order.could_flip
    # the report's ties block: every query of cand depends on the order for both measures
    tb = ties_block(ws)
    assert tb["lanes"]["cand"]["metrics"]["rr"] == {"dependent": 4, "straddling": 0, "worst": 0.5, "best": 1.0,
                                                     "expected": 0.75}
    assert tb["lanes"]["cand"]["metrics"]["p@1"]["straddling"] == 4
    assert tb["lanes"]["base"]["metrics"]["rr"]["dependent"] == 0 and tb["lanes"]["base"]["tied_queries"] == 0


def test_evaluate_and_compare_print_the_tie_exposure(tmp_path):
    """The CLI faces: evaluate's text has the Ties line and report.json the block (the
    hand-worked case above: every candidate query depends on the order for rr and p@1,
    none of the baseline's); compare's text carries the row's note."""
    import json

    from support import run_cli

    qs = ["q1", "q2", "q3", "q4"]
    qrels = _write(tmp_path / "qrels", [f"{q} 0 {d} {g}" for q in qs for d, g in (("d9", 1), ("d1", 0))])
    base = _write(tmp_path / "base", [f"{q} Q0 {d} {i + 1} {s} base" for q in qs for i, (d, s) in enumerate((("d1", 2), ("d9", 1)))])
    cand = _write(tmp_path / "cand", [f"{q} Q0 {d} {i + 1} 1 cand" for q in qs for i, d in enumerate(("d1", "d9"))])
    out = tmp_path / "report.json"
    p = run_cli("evaluate", "--lane", f"base={base}", "--lane", f"cand={cand}", "--qrels", qrels, "--metrics", "rr,p@1",
                "--resamples", "0", "--out", out)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("Ties"))
    assert line.startswith("Ties (of 4 positives, how many change value with the order of tied scores): ")
    assert "base none" in line and "cand rr 4, p@1 4" in line
    block = json.loads(out.read_text())["ties"]
    assert block["lanes"]["cand"]["tied_queries"] == 4 and block["lanes"]["cand"]["metrics"]["p@1"]["expected"] == 0.5
    p = run_cli("compare", "--lane", f"base={base}", "--lane", f"cand={cand}", "--qrels", qrels, "--metric", "rr",
                "--baseline", "base", "--resamples", "999")
    assert p.returncode == 0, p.stderr
    assert "another order of tied scores could change this row" in p.stdout
