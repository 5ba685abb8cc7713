"""The lesson page's functions, public in ``import rankscope_tui``, each on a case worked by hand.

rank_of (lesson 02), sweep, margin_sweep and operating_point (lesson 11), calibrate
(lessons 08 and 11). The expected numbers below are written out from the cases' own
definitions, not from an earlier run.
"""

from __future__ import annotations

import math

import pytest

import rankscope_tui as rs

# Two positives and two in-domain negatives, hits (score) in each query's list:
#   p1: r1 0.9 (relevant), o1 0.5       top 0.9, relevant at the top, margin 0.4
#   p2: o2 0.6, r2 0.55 (relevant)      top 0.6, wrong at the top,    margin 0.05
#   n1: a 0.7 (a lone hit)              top 0.7,                      margin +inf
#   n2: b 0.4, c 0.1                    top 0.4,                      margin 0.3
QRELS = {"p1": {"r1": 1}, "p2": {"r2": 1}, "n1": {"x": 0}, "n2": {"y": 0}}
RUN = {"p1": {"r1": 0.9, "o1": 0.5}, "p2": {"o2": 0.6, "r2": 0.55}, "n1": {"a": 0.7}, "n2": {"b": 0.4, "c": 0.1}}


def test_the_lesson_functions_are_public_and_say_their_lesson():
    gate = 'Lesson 11 ("The gate: FNIR at a fixed FPIR")'
    for name, lesson in (("rank_of", 'Lesson 02 ("A rank has a level")'), ("sweep", gate), ("margin_sweep", gate),
                         ("operating_point", gate), ("calibrate", 'lessons 08 "Convex fusion, and fitting weights')):
        assert name in rs.__all__
        assert lesson in getattr(rs, name).__doc__, name


def test_rank_of_is_one_based_and_zero_for_a_miss():
    qrels = {"q1": {"d1": 1}, "q2": {"d5": 1}, "q3": {"d9": 0}}
    run = {"q1": {"d0": 3.0, "d1": 2.0}, "q2": {"d2": 1.0}, "q3": {"d9": 1.0}}
    # q1: d0 then d1 (relevant) -> 2; q2: d5 never retrieved -> 0; q3 has nothing relevant -> 0
    assert rs.rank_of(qrels, run) == {"q1": 2, "q2": 0, "q3": 0}


def test_rank_of_breaks_a_score_tie_on_the_doc_id_descending():
    # equal scores: "b" sorts before "a" (doc id descending), so the relevant "a" is second
    assert rs.rank_of({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}) == {"q": 2}


def test_rank_of_at_group_level_finds_the_right_document_not_the_passage():
    qrels = {"q1": {"A#1": 1}}
    run = {"q1": {"B#1": 3.0, "A#2": 2.0}}  # the right document's other passage at rank 2
    assert rs.rank_of(qrels, run) == {"q1": 0}
    assert rs.rank_of(qrels, run, level="group", group_sep="#") == {"q1": 2}
    with pytest.raises(rs.InputError, match="group_sep"):
        rs.rank_of(qrels, run, level="group")


def test_sweep_counts_each_floor_by_hand():
    sw = rs.sweep(QRELS, RUN)
    assert sw.threshold.tolist() == [0.4, 0.6, 0.7, 0.9, math.inf]
    # floor 0.4 and 0.6: both positives accepted, p1 correct, p2 a wrong accept;
    # 0.7 and 0.9: p2 rejected; +inf: both rejected
    assert sw.correct.tolist() == [1, 1, 1, 1, 0]
    assert sw.wrong_accept.tolist() == [1, 1, 0, 0, 0]
    assert sw.rejected.tolist() == [0, 0, 1, 1, 2]
    assert sw.fnir.tolist() == [0.5, 0.5, 0.5, 0.5, 1.0]
    # negatives: n1 (0.7) and n2 (0.4) at 0.4; n1 alone at 0.6 and 0.7; none from 0.9
    assert sw.accepted["in_domain"].tolist() == [2, 1, 1, 0, 0]
    assert sw.fpir().tolist() == [1.0, 0.5, 0.5, 0.0, 0.0]


def test_sweep_with_a_margin_ands_it_at_every_floor():
    sw = rs.sweep(QRELS, RUN, margin=0.3)  # p2 (0.05) fails the margin everywhere
    assert sw.wrong_accept.tolist() == [0, 0, 0, 0, 0]
    assert sw.rejected.tolist() == [1, 1, 1, 1, 2]
    assert sw.accepted["in_domain"].tolist() == [2, 1, 1, 0, 0]  # n1 is lone (+inf), n2's margin is 0.3


def test_operating_point_is_the_lowest_floor_within_the_target():
    sw = rs.sweep(QRELS, RUN)
    assert rs.operating_point(sw, 0.05).floor == 0.9  # FPIR 0/2 first at 0.9
    assert rs.operating_point(sw, 0.5).floor == 0.6  # FPIR 1/2 first at 0.6
    op = rs.operating_point(sw, 0.05, conservative=True)  # Wilson upper bound after 0/2 is far above 0.05
    assert op.floor == math.inf and not op.attainable and "73" in op.reason
    with pytest.raises(ValueError, match="^target_fpir must be between 0 and 1"):
        rs.operating_point(sw, 1.5)


def test_margin_sweep_lets_a_lone_hit_pass_every_margin():
    m = rs.margin_sweep(QRELS, RUN)
    assert m.threshold.tolist() == pytest.approx([0.6 - 0.55, 0.4 - 0.1, 0.9 - 0.5, math.inf])
    assert m.correct.tolist() == [1, 1, 1, 0]  # p1's margin 0.4 passes up to 0.4
    assert m.wrong_accept.tolist() == [1, 0, 0, 0]  # p2's margin 0.05 only at 0.05
    assert m.rejected.tolist() == [0, 1, 1, 2]
    assert m.accepted["in_domain"].tolist() == [2, 2, 1, 1]  # n1 (lone) even at +inf; n2 (0.3) up to 0.3


def test_calibrate_fits_the_hand_worked_convex_weights():
    # min-max per lane per query: each list's top doc gets 1, the other 0. Lane A has the
    # relevant "a" on top in q1 only, lane B in q2 and q3. With step 0.5 the grid is
    # (A, B) = (0, 1), (0.5, 0.5), (1, 0): hit@1 = 2/3, 0 (every fused score ties and the
    # doc id descending puts "b" first), 1/3; the first maximum is (0, 1).
    qrels = {q: {"a": 1, "b": 0} for q in ("q1", "q2", "q3")}
    a_top, b_top = {"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}
    runs = {"A": {"q1": a_top, "q2": b_top, "q3": b_top}, "B": {"q1": b_top, "q2": a_top, "q3": a_top}}
    th = rs.calibrate(qrels, runs, step=0.5, objective="hit@1")
    c = th["fusion"]["convex"]
    assert c["weights"] == {"A": 0.0, "B": 1.0}
    assert [p["objective"] for p in c["grid"]["values"]] == pytest.approx([2 / 3, 0.0, 1 / 3], abs=1e-12)
    assert th["fusion"]["rrf_k"] == 60 and "folds" not in th
