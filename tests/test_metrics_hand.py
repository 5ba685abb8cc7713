"""Hand-worked metric values (seed 000, SPEC §2–3, peers-parity §6).

Every expected number here is worked out on paper (or by scikit-learn, an
independent implementation) from the definitions; none comes from rankscope.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.measures import MetricKey, parse_metrics
from rankscope_tui.kernel.ranking import judgments as J
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace


def _write_run(path: Path, rows: dict[str, list[tuple[str, float]]]) -> None:
    lines = []
    for q, hits in rows.items():
        for i, (d, s) in enumerate(hits, start=1):
            lines.append(f"{q} Q0 {d} {i} {s!r} hand")
    path.write_text("\n".join(lines) + "\n")


def _write_qrels(path: Path, rows: dict[str, dict[str, int]]) -> None:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in rows.items() for d, g in docs.items()))


def load(tmp_path: Path, run: dict, qrels: dict, metrics: str, relevant: int = 1, depth=None) -> Workspace:
    _write_run(tmp_path / "lane.run", run)
    _write_qrels(tmp_path / "qrels.txt", qrels)
    settings = LoadSettings(metrics=tuple(parse_metrics(metrics)), relevant=relevant, depth=depth)
    return Workspace.load(lanes=[("lane", str(tmp_path / "lane.run"))], qrels=str(tmp_path / "qrels.txt"), settings=settings)


def value(ws: Workspace, qid: str, metric: str, lane: str = "lane", level: str = "doc") -> float:
    return float(ws.per_query(lane, level)[metric][ws.qid_index[qid]])


def ranked(run_scores: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Re-score a list given in the intended order with strictly decreasing scores (no ties)."""
    n = len(run_scores)
    return [(d, float(n - i)) for i, (d, _) in enumerate(run_scores)]


def dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1) if g > 0)


# ---------------------------------------------------------------- seed 000


def test_precision_and_recall_by_hand_seed000(tmp_path):
    # 12 exact products (grade 2) judged; the top 10 holds 4 of them, 3 partial, 3 unjudged.
    exact = [f"e{i:02d}" for i in range(12)]
    qrels = {"246": {**{d: 2 for d in exact}, "p1": 1, "p2": 1, "p3": 1, "n1": 0}}
    top10 = ["p1", "e00", "u1", "e01", "p2", "u2", "e02", "p3", "u3", "e03"]
    ws = load(tmp_path, {"246": ranked([(d, 0) for d in top10])}, qrels, "p@10,recall@10,recall@100", relevant=2)
    assert value(ws, "246", "p@10") == pytest.approx(4 / 10, abs=1e-12)  # 0.400
    assert value(ws, "246", "recall@10") == pytest.approx(4 / 12, abs=1e-12)  # 0.333
    # ceilings: best p@10 = min(R, 10)/10 = 1, best recall@10 = 10/12
    ceil = ws.ceilings("doc")
    assert ceil["p@10"][ws.qid_index["246"]] == pytest.approx(1.0)
    assert ceil["recall@10"][ws.qid_index["246"]] == pytest.approx(10 / 12)


def test_ceilings_of_a_query_with_only_four_exact_products(tmp_path):
    qrels = {"q": {"e1": 2, "e2": 2, "e3": 2, "e4": 2, "p": 1}}
    ws = load(tmp_path, {"q": ranked([("e1", 0)])}, qrels, "p@10,recall@10", relevant=2)
    assert ws.ceilings("doc")["p@10"][ws.qid_index["q"]] == pytest.approx(0.4)
    assert ws.ceilings("doc")["recall@10"][ws.qid_index["q"]] == pytest.approx(1.0)


def test_reciprocal_rank_exact_only_vs_partial_or_better_seed000(tmp_path):
    # first result partial (grade 1), second exact (grade 2)
    run = {"246": ranked([("partial", 0), ("exact", 0), ("other", 0)])}
    qrels = {"246": {"partial": 1, "exact": 2, "other": 0}}
    assert value(load(tmp_path, run, qrels, "rr", relevant=2), "246", "rr") == pytest.approx(0.5)
    assert value(load(tmp_path, run, qrels, "rr", relevant=1), "246", "rr") == pytest.approx(1.0)


def test_rr_has_no_cutoff_beyond_depth(tmp_path):
    docs = [f"n{i:03d}" for i in range(40)] + ["rel"]
    qrels = {"q": {"rel": 1, "n000": 0}}
    run = {"q": ranked([(d, 0) for d in docs])}
    assert value(load(tmp_path, run, qrels, "rr"), "q", "rr") == pytest.approx(1 / 41)
    ws = load(tmp_path, run, qrels, "rr,hit@10", depth=40)
    assert value(ws, "q", "rr") == 0.0
    assert int(ws.per_query("lane", "doc")["rank"][ws.qid_index["q"]]) == 0


def test_ndcg_of_one_with_only_four_exact_products_seed000(tmp_path):
    # luau string lights: 4 exact products judged; the top 10 holds all 4, then partial ones.
    exact = ["x1", "x2", "x3", "x4"]
    partial = [f"p{i}" for i in range(9)]
    qrels = {"461": {**{d: 2 for d in exact}, **{d: 1 for d in partial}, "z": 0}}
    top10 = exact + partial[:6]
    ws = load(tmp_path, {"461": ranked([(d, 0) for d in top10])}, qrels, "ndcg@10,p@10", relevant=2)
    assert value(ws, "461", "ndcg@10") == pytest.approx(1.0, abs=1e-12)
    assert value(ws, "461", "p@10") == pytest.approx(0.4)  # "as good as the best order", not ten exact products


def _sklearn_row(ranking: list[str], judged: dict[str, int], k: int) -> float:
    """Seed 000's recipe: every judged product plus every retrieved one in the row,
    scores from ranks, everything not retrieved one score below all retrieved."""

    products = list(dict.fromkeys([*judged, *ranking]))
    position = {d: i for i, d in enumerate(ranking)}
    grades = [[max(judged.get(d, 0), 0) for d in products]]  # gains <= 0 add nothing in either variant
    scores = [[-position.get(d, len(ranking)) for d in products]]
    return float(ndcg_score(grades, scores, k=k))


def test_ndcg_matches_scikit_learn_when_every_judged_doc_is_in_the_row(tmp_path):
    rng = np.random.default_rng(2026)
    run, qrels = {}, {}
    for qi in range(40):
        q = f"q{qi}"
        pool = [f"d{j}" for j in range(int(rng.integers(15, 40)))]
        judged = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in pool if rng.random() < 0.6}
        if not any(g > 0 for g in judged.values()):
            judged[pool[0]] = 2
        qrels[q] = judged
        order = [pool[i] for i in rng.permutation(len(pool))][: int(rng.integers(10, len(pool) + 1))]  # >= k hits
        run[q] = ranked([(d, 0) for d in order])
    for k in (5, 10):
        ws = load(tmp_path, run, qrels, f"ndcg@{k}")
        for q in run:
            ours = value(ws, q, f"ndcg@{k}")
            theirs = _sklearn_row([d for d, _ in run[q]], qrels[q], k)
            assert ours == pytest.approx(theirs, abs=1e-9), (q, k)


def test_ndcg_short_run_differs_from_scikit_learn_as_seed000_says(tmp_path):
    # 5 hits, k = 10; relevant docs a3 (grade 2) and a4 (grade 1) were not retrieved.
    judged = {"r1": 2, "r2": 1, "n1": 0, "a3": 2, "a4": 1}
    ranking = ["n1", "r1", "u1", "r2", "u2"]
    ws = load(tmp_path, {"q": ranked([(d, 0) for d in ranking])}, {"q": judged}, "ndcg@10")
    by_hand = dcg([0, 2, 0, 1, 0]) / dcg([2, 2, 1, 1])
    ours = value(ws, "q", "ndcg@10")
    assert ours == pytest.approx(by_hand, abs=1e-12)
    theirs = _sklearn_row(ranking, judged, 10)
    # scikit-learn lets the unretrieved docs tie for the empty places 6..10 and credits their mean gain
    assert theirs > ours + 0.05


# ---------------------------------------------------------------- SPEC §3 definitions


def test_precision_of_a_short_list_divides_by_k(tmp_path):
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    ws = load(tmp_path, {"q": ranked([("a", 0), ("c", 0), ("b", 0)])}, qrels, "p@5,p@10,p@1,p@2")
    assert value(ws, "q", "p@10") == pytest.approx(0.2)
    assert value(ws, "q", "p@5") == pytest.approx(0.4)
    assert value(ws, "q", "p@1") == pytest.approx(1.0)
    assert value(ws, "q", "p@2") == pytest.approx(0.5)


def test_recall_denominator_is_all_relevant_judged_not_min_k_r(tmp_path):
    rel = [f"r{i:02d}" for i in range(12)]
    qrels = {"q": {**{d: 1 for d in rel}, "n": 0}}
    ws = load(tmp_path, {"q": ranked([("r00", 0), ("n", 0), ("r01", 0), ("r02", 0), ("x", 0)])}, qrels, "recall@5,recall@100")
    assert value(ws, "q", "recall@5") == pytest.approx(3 / 12)  # not 3 / min(5, 12)
    assert value(ws, "q", "recall@100") == pytest.approx(3 / 12)


def test_ndcg_is_zero_when_the_ideal_is_zero(tmp_path):
    qrels = {"neg": {"a": 0, "b": 0, "c": -1}, "pos": {"a": 1}}
    ws = load(tmp_path, {"neg": ranked([("a", 0), ("b", 0)]), "pos": ranked([("a", 0)])}, qrels, "ndcg@10")
    v = value(ws, "neg", "ndcg@10")
    assert v == 0.0 and not math.isnan(v)


def test_ndcg_ideal_uses_every_judged_doc_even_unretrieved(tmp_path):
    qrels = {"q": {"d1": 1, "d2": 3, "d0": 0}}
    ws = load(tmp_path, {"q": ranked([("d1", 0), ("d0", 0)])}, qrels, "ndcg@10,ndcg@1")
    assert value(ws, "q", "ndcg@10") == pytest.approx(1.0 / (3.0 + 1.0 / math.log2(3)), abs=1e-12)
    assert value(ws, "q", "ndcg@1") == pytest.approx(1.0 / 3.0, abs=1e-12)


def test_ndcg_linear_gain_and_log2_discount(tmp_path):
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
    ws = load(tmp_path, {"q": ranked([("d", 0), ("c", 0), ("a", 0), ("b", 0)])}, qrels, "ndcg@3,ndcg@10")
    assert value(ws, "q", "ndcg@3") == pytest.approx(dcg([0, 1, 3]) / dcg([3, 2, 1]), abs=1e-12)
    assert value(ws, "q", "ndcg@10") == pytest.approx(dcg([0, 1, 3, 2]) / dcg([3, 2, 1]), abs=1e-12)


def test_judged_on_a_short_list_negative_grades_count_as_unjudged(tmp_path):
    # grades along the list: 2, -1 (in pool, unjudged), not in qrels, 0
    qrels = {"q": {"a": 2, "b": -1, "d": 0}}
    ws = load(tmp_path, {"q": ranked([("a", 0), ("b", 0), ("c", 0), ("d", 0)])}, qrels, "judged@10,judged@5,judged@2")
    assert value(ws, "q", "judged@10") == pytest.approx(2 / 10)  # ir_measures' Judged@10 would say 2/4
    assert value(ws, "q", "judged@5") == pytest.approx(2 / 5)
    assert value(ws, "q", "judged@2") == pytest.approx(1 / 2)


def test_negative_grade_is_never_relevant_nor_a_gain(tmp_path):
    # relevant=1: a -1 doc at rank 1 must not be a hit, nor count toward recall
    qrels = {"q": {"neg": -1, "r": 1}}
    ws = load(tmp_path, {"q": ranked([("neg", 0), ("r", 0)])}, qrels, "rr,hit@1,recall@1,p@1,ndcg@1")
    assert value(ws, "q", "rr") == pytest.approx(0.5)
    assert value(ws, "q", "hit@1") == 0.0
    assert value(ws, "q", "recall@1") == 0.0
    assert value(ws, "q", "p@1") == 0.0
    assert value(ws, "q", "ndcg@1") == 0.0


# ---------------------------------------------------------------- peers-parity §6


def _peers_case(tmp_path: Path, relevant: int = 1) -> Workspace:
    (tmp_path / "lane.run").write_text(
        "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d3 3 1.0 t\nq1 Q0 d4 4 0.5 t\n"
        "q2 Q0 a 1 2.0 t\nq2 Q0 b 2 2.0 t\nq2 Q0 c 3 2.0 t\n"
        "q4 Q0 z 1 1.0 t\n"
        "q5 Q0 w 1 1.0 t\n"
    )
    (tmp_path / "qrels.txt").write_text(
        "q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 0\nq1 0 d9 1\nq2 0 a 1\nq2 0 b 0\nq3 0 x 2\nq3 0 y 1\nq4 0 z 0\n"
    )
    settings = LoadSettings(metrics=tuple(parse_metrics("ndcg@10,rr,p@3,recall@3,hit@1")), relevant=relevant)
    return Workspace.load(lanes=[("lane", str(tmp_path / "lane.run"))], qrels=str(tmp_path / "qrels.txt"), settings=settings)


def _lane_order(ws: Workspace, lane: str, qid: str) -> list[str]:
    L = ws.lanes[lane]
    rows = L.rows_of(ws.qid_index[qid])
    return [ws.docs[c] for c in L.doc[rows].tolist()]


def test_cross_tool_example_tie_order_and_values(tmp_path):
    ws = _peers_case(tmp_path)
    assert _lane_order(ws, "lane", "q1") == ["d3", "d2", "d1", "d4"]
    assert _lane_order(ws, "lane", "q2") == ["c", "b", "a"]
    assert value(ws, "q1", "ndcg@10") == pytest.approx(0.5627, abs=5e-5)
    assert value(ws, "q1", "rr") == pytest.approx(0.5)
    assert value(ws, "q2", "ndcg@10") == pytest.approx(0.5, abs=1e-12)
    assert value(ws, "q2", "rr") == pytest.approx(1 / 3)
    # by hand: q1 gains along d3,d2,d1,d4 = 0,2,1,0; ideal = 2,1,1
    assert value(ws, "q1", "ndcg@10") == pytest.approx(dcg([0, 2, 1]) / dcg([2, 1, 1]), abs=1e-12)
    # P@3, recall@3, hit@1 agree across tools once the ranking is the same
    assert value(ws, "q1", "p@3") == pytest.approx(2 / 3)
    assert value(ws, "q1", "recall@3") == pytest.approx(2 / 3)
    assert value(ws, "q1", "hit@1") == 0.0
    # q3 is judged but absent from the run: scored 0; q4 has no relevant doc; q5 is not judged
    assert value(ws, "q3", "ndcg@10") == 0.0 and value(ws, "q3", "rr") == 0.0
    cls = {q: int(ws.classes[ws.qid_index[q]]) for q in ("q1", "q2", "q3", "q4", "q5")}
    assert cls == {"q1": J.POSITIVE, "q2": J.POSITIVE, "q3": J.POSITIVE, "q4": J.NEGATIVE, "q5": J.NOT_IN_QRELS}
    # means over positives q1, q2, q3 (q4 is a negative, left out): not trec_eval's -c all line
    assert ws.mean("lane", "doc", "ndcg@10") == pytest.approx((dcg([0, 2, 1]) / dcg([2, 1, 1]) + 0.5 + 0.0) / 3)
    kinds = {w.kind: w.count for w in ws.warnings}
    assert kinds.get("lane_queries_without_judgments") == 1  # q5
    assert kinds.get("positives_missing_from_lane") == 1  # q3


@pytest.mark.parametrize("relevant", [1, 2])
def test_negative_grade_example_ndcg_cut_5(tmp_path, relevant):
    # qrels d1:-1, d2:2, d3:1, d5:0; run d1 > dX > d5 > d2 > d3
    (tmp_path / "lane.run").write_text(
        "q 0 d1 1 5 t\nq 0 dX 2 4 t\nq 0 d5 3 3 t\nq 0 d2 4 2 t\nq 0 d3 5 1 t\n"
    )
    (tmp_path / "qrels.txt").write_text("q 0 d1 -1\nq 0 d2 2\nq 0 d3 1\nq 0 d5 0\n")
    settings = LoadSettings(metrics=tuple(parse_metrics("ndcg@5,rr,judged@5")), relevant=relevant)
    ws = Workspace.load(lanes=[("lane", str(tmp_path / "lane.run"))], qrels=str(tmp_path / "qrels.txt"), settings=settings)
    assert value(ws, "q", "ndcg@5") == pytest.approx(0.4744, abs=5e-5)
    assert value(ws, "q", "ndcg@5") == pytest.approx(dcg([0, 0, 0, 2, 1]) / dcg([2, 1]), abs=1e-12)
    assert value(ws, "q", "rr") == pytest.approx(0.25)  # d2 at rank 4 is relevant at both levels
    assert value(ws, "q", "judged@5") == pytest.approx(3 / 5)  # d1 (-1) and dX unjudged


# ---------------------------------------------------------------- query classes (SPEC §2)


def test_query_classes(tmp_path):
    qrels = {
        "pos": {"a": 2, "b": 0},
        "neg": {"a": 0, "b": 0},
        "negm": {"a": 0, "b": -1},  # judged with grade >= 0 and none > 0: negative
        "part": {"a": 1, "b": 0},  # grade > 0 but none >= 2: partial at relevant=2
        "unj": {"a": -1, "b": -2},  # only negative grades: no judgment
    }
    run = {q: ranked([("a", 0), ("b", 0)]) for q in qrels} | {"extra": ranked([("a", 0)])}
    ws = load(tmp_path, run, qrels, "rr", relevant=2)
    got = {q: int(ws.classes[ws.qid_index[q]]) for q in run}
    assert got == {
        "pos": J.POSITIVE, "neg": J.NEGATIVE, "negm": J.NEGATIVE, "part": J.PARTIAL,
        "unj": J.UNJUDGED, "extra": J.NOT_IN_QRELS,
    }
    assert sorted(ws.qids[c] for c in ws.positives.tolist()) == ["pos"]
    assert sorted(ws.qids[c] for c in ws.negatives.tolist()) == ["neg", "negm"]
    kinds = {w.kind: w.count for w in ws.warnings}
    assert kinds.get("partial_queries") == 1
    assert kinds.get("unjudged_queries") == 1
    # at relevant=1 the partial query becomes a positive
    ws1 = load(tmp_path, run, qrels, "rr", relevant=1)
    assert int(ws1.classes[ws1.qid_index["part"]]) == J.POSITIVE
    assert "partial_queries" not in {w.kind for w in ws1.warnings}


# ---------------------------------------------------------------- parse_metrics


def test_parse_metrics_ndcg_brings_judged():
    keys = [m.key for m in parse_metrics("ndcg@10,rr")]
    assert keys[:2] == ["ndcg@10", "rr"] and "judged@10" in keys and len(keys) == 3
    keys = [m.key for m in parse_metrics("ndcg@5,judged@5,ndcg@20")]
    assert sorted(keys) == sorted(["ndcg@5", "judged@5", "ndcg@20", "judged@20"])
    assert parse_metrics("rr, p@10") == [MetricKey("rr", None), MetricKey("p", 10)]


def test_parse_metrics_default_set_is_the_spec_list():
    from rankscope_tui.kernel.settings import DEFAULT_METRICS

    assert [m.key for m in parse_metrics(DEFAULT_METRICS)] == [
        "hit@1", "hit@5", "hit@10", "recall@10", "recall@100", "rr", "ndcg@10", "p@10", "judged@10"
    ]


@pytest.mark.parametrize("spec", ["ndcg@x", "p@0", "recall@-1", "judged", "ndcg@10,bogus@3", "", "Judged@10"])
def test_parse_metrics_unknown_is_an_input_error(spec):
    with pytest.raises(InputError):
        parse_metrics(spec)


# ---------------------------------------------------------------- issue 15: the new measures by hand


def test_ap_rprec_bpref_rr_at_k_and_uncut_ndcg_by_hand(tmp_path):
    """Ranked: n1 (0), r1 (1), u (unjudged), r2 (2), n2 (0), r3 (1); judged also r4 (1), n3 (0).
    R = 4 relevant, N = 3 judged non-relevant.
    ap = (1/2 + 2/4 + 3/6) / 4 = 0.375; ap@4 = (1/2 + 2/4) / 4 = 0.25 (denominator R, not min(4, R));
    rprec: relevant in the top 4 = 2 -> 2/4; rr = 1/2, rr@1 = 0, rr@2 = 1/2;
    bpref: r1 has 1 non-relevant above, r2 1, r3 2; min(N, R) = 3 ->
      (1 - 1/3) + (1 - 1/3) + (1 - 2/3) = 5/3, / 4 = 5/12;
    ndcg (uncut): DCG = 1/log2 3 + 2/log2 5 + 1/log2 7; ideal 2, 1, 1, 1 over log2(2..5)."""
    run = {"q": ranked([("n1", 0), ("r1", 0), ("u", 0), ("r2", 0), ("n2", 0), ("r3", 0)])}
    qrels = {"q": {"n1": 0, "r1": 1, "r2": 2, "n2": 0, "r3": 1, "r4": 1, "n3": 0}}
    ws = load(tmp_path, run, qrels, "ap,ap@4,rprec,bpref,rr,rr@1,rr@2,ndcg,ndcg@3")
    assert value(ws, "q", "ap") == pytest.approx(0.375, abs=1e-12)
    assert value(ws, "q", "ap@4") == pytest.approx(0.25, abs=1e-12)
    assert value(ws, "q", "rprec") == pytest.approx(0.5, abs=1e-12)
    assert value(ws, "q", "bpref") == pytest.approx(5 / 12, abs=1e-12)
    assert value(ws, "q", "rr") == pytest.approx(0.5) and value(ws, "q", "rr@1") == 0.0 and value(ws, "q", "rr@2") == 0.5
    d = 1 / math.log2(3) + 2 / math.log2(5) + 1 / math.log2(7)
    ideal = 2 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    assert value(ws, "q", "ndcg") == pytest.approx(d / ideal, abs=1e-12)
    assert value(ws, "q", "ndcg") != pytest.approx(value(ws, "q", "ndcg@3"), abs=1e-3)


def test_per_measure_rel_by_hand(tmp_path):
    """At --relevant 1, P(rel=2)@3 counts only grade 2: r2 -> 1/3; RR(rel=2)@10 = 1/4."""
    run = {"q": ranked([("n1", 0), ("r1", 0), ("u", 0), ("r2", 0)])}
    qrels = {"q": {"n1": 0, "r1": 1, "r2": 2}}
    ws = load(tmp_path, run, qrels, "P@3,P(rel=2)@3,RR(rel=2)@10,rr")
    assert value(ws, "q", "p@3") == pytest.approx(1 / 3)
    assert value(ws, "q", "p(rel=2)@3") == 0.0
    assert value(ws, "q", "rr(rel=2)@10") == pytest.approx(1 / 4)
    assert value(ws, "q", "rr") == pytest.approx(1 / 2)


def test_group_bpref_skips_later_occurrences(tmp_path):
    """Group level, query a: D1#p1 (group D1 judged non-relevant), D1#p2 (a repeat), D2#p1 and
    D3#p1 (relevant); judged also D4 (non-relevant): R = 2, N = 2.
    The repeat skipped: each relevant group has 1 non-relevant above -> (1/2 + 1/2) / 2 = 0.5
    (were the repeat counted as non-relevant: 2 above each -> 0). Query b: relevant first -> 1."""
    _write_run(tmp_path / "lane.run", {"a": ranked([("D1#p1", 0), ("D1#p2", 0), ("D2#p1", 0), ("D3#p1", 0)]),
                                       "b": ranked([("D2#p1", 0), ("D2#p2", 0), ("D1#p1", 0)])})
    _write_qrels(tmp_path / "qrels.txt", {"a": {"D1#p1": 0, "D4#p1": 0, "D2#p1": 1, "D3#p1": 1},
                                          "b": {"D1#p1": 0, "D2#p1": 1}})
    ws = Workspace.load(lanes=[("lane", str(tmp_path / "lane.run"))], qrels=str(tmp_path / "qrels.txt"),
                        settings=LoadSettings(metrics=tuple(parse_metrics("bpref,p@2")), group_sep="#"))
    assert value(ws, "a", "bpref", level="group") == pytest.approx(0.5, abs=1e-12)
    assert value(ws, "b", "bpref", level="group") == 1.0
    # the repeat still counts as non-relevant for precision, as SPEC §3 says
    assert value(ws, "b", "p@2", level="group") == pytest.approx(0.5)
