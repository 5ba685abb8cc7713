"""Tests for the gate kernel (SPEC §6, lessons 04 and 09–11)."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import numpy as np
import pytest
from gate_oracles import sweep_brute_force  # the test oracle (tests/gate_oracles.py)
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope_tui.kernel import gate as G
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.ranking.judgments import Judgments
from rankscope_tui.kernel.ranking.ranks import rank_lane

Z = NormalDist().inv_cdf(0.975)
Z2 = Z * Z


# --------------------------------------------------------------------------- helpers

def make_lane(hits: dict[int, list[tuple[int, float]]], n_queries: int, depth=None, name="gate"):
    """hits: query code -> [(doc code, score)] in any order."""
    q, d, s = [], [], []
    for qc, lst in hits.items():
        for dc, sc in lst:
            q.append(qc)
            d.append(dc)
            s.append(sc)
    return rank_lane(name, np.array(q, dtype=np.int32), np.array(d, dtype=np.int64), np.array(s, dtype=np.float64), n_queries, depth)


def make_judgments(rel: dict[int, dict[int, int]], n_docs: int) -> Judgments:
    rows = sorted((q, d, g) for q, m in rel.items() for d, g in m.items())
    if not rows:
        return Judgments(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64), n_docs)
    q, d, g = zip(*rows)
    return Judgments(np.array(q, np.int32), np.array(d, np.int64), np.array(g, np.int64), n_docs)


def mask(n, codes):
    m = np.zeros(n, dtype=bool)
    m[list(codes)] = True
    return m


def top_from_arrays(top=None, first_relevant=None, top_relevant=None, margin=None):
    """A TopScores built directly from per-query arrays (for simulations)."""
    arrays = [a for a in (top, first_relevant, top_relevant, margin) if a is not None]
    n = len(arrays[0])
    top = np.full(n, 0.0) if top is None else np.asarray(top, float)
    present = np.isfinite(top)
    fr = np.full(n, -math.inf) if first_relevant is None else np.asarray(first_relevant, float)
    tr = np.zeros(n, bool) if top_relevant is None else np.asarray(top_relevant, bool)
    mg = np.where(present, math.inf, -math.inf) if margin is None else np.asarray(margin, float)
    return G.TopScores("t", present, present.astype(np.int64), top, np.full(n, -math.inf), mg,
                       np.where(present, 0, -1), tr, fr, np.where(np.isfinite(fr), 1, 0).astype(np.int32))


def strict_json(obj):
    return json.loads(json.dumps(obj, allow_nan=False))


# --------------------------------------------------------------------------- top scores

def test_top_scores_hand_worked():
    # q0: tie at the top (margin 0), relevant doc 5 at rank 3
    # q1: lone hit, relevant at the top; q2: absent; q3: two hits, none relevant
    lane = make_lane({0: [(1, 3.0), (2, 3.0), (5, 1.0)], 1: [(7, 0.4)], 3: [(1, 2.0), (2, 0.5)]}, 4)
    j = make_judgments({0: {5: 2, 1: 0}, 1: {7: 1}, 3: {1: 0}}, 10)
    t = G.top_scores(lane, j, relevant=1)
    assert t.present.tolist() == [True, True, False, True]
    assert t.top.tolist() == [3.0, 0.4, -math.inf, 2.0]
    # trec_eval order: equal scores -> doc code descending, so doc 2 is first in q0
    assert t.top_doc.tolist() == [2, 7, -1, 1]
    assert t.margin.tolist() == [0.0, math.inf, -math.inf, 1.5]
    assert t.top_relevant.tolist() == [False, True, False, False]
    assert t.first_relevant_score.tolist() == [1.0, 0.4, -math.inf, -math.inf]
    assert t.first_relevant_rank.tolist() == [3, 1, 0, 0]


def test_top_scores_respects_depth_and_group_relevance():
    lane = make_lane({0: [(1, 3.0), (2, 2.0), (3, 1.0)]}, 1, depth=2)
    j = make_judgments({0: {3: 1}}, 5)
    t = G.top_scores(lane, j)
    assert t.first_relevant_rank.tolist() == [0]  # doc 3 is beyond depth 2
    # group level: caller marks rows relevant when their group is
    t2 = G.top_scores(lane, hit_relevant=np.array([False, True]))
    assert t2.first_relevant_rank.tolist() == [2] and t2.first_relevant_score.tolist() == [2.0]


# --------------------------------------------------------------------------- Wilson, rule of three

def test_wilson_eight_of_twelve():
    lo, hi = G.wilson_interval(8, 12, 0.95)
    assert round(lo, 3) == 0.391 and round(hi, 3) == 0.862


@given(st.integers(1, 100_000), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_zero_events_upper(n, c):
    z = NormalDist().inv_cdf(1 - (1 - c) / 2)
    lo, hi = G.wilson_interval(0, n, c)
    assert lo == 0.0
    assert hi == pytest.approx(z * z / (n + z * z), rel=1e-12)
    assert G.wilson_interval(n, n, c)[1] == 1.0


@settings(max_examples=300)
@given(st.integers(0, 5000), st.integers(0, 5000), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_vectorised_wilson_is_intervals_wilson(a, b, c):
    from rankscope_tui.kernel.statistics import intervals

    k, n = min(a, b), max(a, b)
    p, lo, hi = G.rates._wilson_arrays(np.array([k]), np.array([n]), c)
    iv = intervals.wilson(k, n, c)
    if n == 0:
        assert np.isnan(lo[0]) and iv.low is None
    else:  # bit for bit: the sweep's conservative choice and the quoted bound agree
        assert (p[0], lo[0], hi[0]) == (iv.value, iv.low, iv.high)


def test_rule_of_three_table():
    rows = {r["target"]: r for r in G.rule_of_three_table([0.1, 0.05, 0.01])}
    assert rows[0.05]["wilson_n"] == 73 and rows[0.05]["rule_of_three_n"] == 60
    assert rows[0.01]["rule_of_three_n"] == 300
    assert "97.5" in rows[0.05]["wilson_level"] and "95" in rows[0.05]["rule_of_three_level"]


@given(st.floats(0.0005, 0.5), st.sampled_from([0.9, 0.95, 0.99]))
def test_negatives_needed_is_minimal(t, c):
    z2 = NormalDist().inv_cdf(1 - (1 - c) / 2) ** 2
    n = G.negatives_needed(t, c)
    assert z2 / (n + z2) <= t
    assert n == 0 or z2 / (n - 1 + z2) > t


# --------------------------------------------------------------------------- conformal

def test_conformal_k_exact_fraction():
    assert math.ceil((1 - 0.18) * 150) == 124  # the float trap
    assert G.conformal_k(149, 0.18) == 123
    cf = G.conformal_floor(top_from_arrays(first_relevant=np.arange(149.0)), np.ones(149, bool), 0.18)
    assert cf.k == 123 and cf.floor == 149 - 123  # the 123rd largest of 0..148


@given(st.integers(1, 999), st.integers(0, 5000))
def test_conformal_k_matches_integer_arithmetic(p, n):
    alpha = p / 1000  # str(alpha) is the decimal the user typed
    k = G.conformal_k(n, alpha)
    num = (1000 - p) * (n + 1)  # (1 - alpha)(n + 1) = num / 1000
    assert k == -(-num // 1000)


@pytest.mark.parametrize("alpha, n_min", [(0.05, 19), (0.1, 9), (0.18, 5), (0.2, 4), (0.01, 99), (0.03, 33)])
def test_conformal_boundary_n(alpha, n_min):
    assert G.conformal_min_n(alpha) == n_min
    rng = np.random.default_rng(7)
    for n, finite in ((n_min - 1, False), (n_min, True)):
        scores = rng.uniform(0, 1, n)
        t = top_from_arrays(first_relevant=scores)
        cf = G.conformal_floor(t, np.ones(n, bool), alpha)
        if finite:
            assert cf.k <= n and math.isfinite(cf.floor)
            assert cf.floor == pytest.approx(np.sort(scores)[::-1][cf.k - 1])
        else:
            assert cf.k > n
            assert cf.floor == -math.inf  # never the sample minimum
            assert str(n_min) in cf.reason
            d = strict_json(cf.as_dict())
            assert d["floor"] is None and d["floor_reason"]


def test_conformal_hand_worked_and_unretrieved():
    # n = 9, alpha = 0.2: k = ceil(0.8 * 10) = 8; s = -score; s_(8) = -2 -> floor 2
    t = top_from_arrays(first_relevant=np.arange(1.0, 10.0))
    cf = G.conformal_floor(t, np.ones(9, bool), 0.2)
    assert (cf.k, cf.floor, cf.reason) == (8, 2.0, None)
    # two unretrieved positives (s = +inf): n - k = 1 of them is tolerable, 2 are not
    fr = np.array([9, 8, 7, 6, 5, 4, 3, -math.inf, -math.inf])
    cf = G.conformal_floor(top_from_arrays(first_relevant=fr), np.ones(9, bool), 0.2)
    assert cf.floor == -math.inf and "s_(k) = +inf" in cf.reason and cf.n_unretrieved == 2
    fr[-1] = 2.0
    cf = G.conformal_floor(top_from_arrays(first_relevant=fr), np.ones(9, bool), 0.2)
    assert cf.floor == 2.0


def test_conformal_counts_absent_positives():
    lane = make_lane({0: [(1, 5.0)], 1: [(2, 4.0)]}, 3)
    j = make_judgments({0: {1: 1}, 1: {2: 1}, 2: {3: 1}}, 5)
    t = G.top_scores(lane, j)
    cf = G.conformal_floor(t, mask(3, [0, 1, 2]), 0.5)  # k = ceil(0.5 * 4) = 2
    assert cf.n == 3 and cf.n_unretrieved == 1 and cf.k == 2 and cf.floor == 4.0
    assert "false accepts" in cf.as_dict()["bounds"]


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, "x"])
def test_conformal_rejects_bad_alpha(bad):
    with pytest.raises(InputError):
        G.conformal_k(10, bad)


def _miss_rates(rule, n, alpha, draws, m_test, seed, p_unretrieved=0.0):
    """Mean empirical miss share of fresh positives over calibration draws."""
    rng = np.random.default_rng(seed)
    rates = np.empty(draws)
    ones = np.ones(n, bool)
    for i in range(draws):
        cal = rng.uniform(0, 1, n)
        cal[rng.uniform(size=n) < p_unretrieved] = -math.inf
        if rule == "conformal":
            floor = G.conformal_floor(top_from_arrays(first_relevant=cal), ones, alpha).floor
        else:  # the sample minimum of the retrieved scores
            fin = cal[np.isfinite(cal)]
            floor = fin.min() if fin.size else -math.inf
        new = rng.uniform(0, 1, m_test)
        new[rng.uniform(size=m_test) < p_unretrieved] = -math.inf
        # missed: no relevant hit, or its score below the floor
        rates[i] = np.mean(~np.isfinite(new) | (new < floor))
    return rates.mean(), rates.std(ddof=1) / math.sqrt(draws)


@pytest.mark.parametrize("n", [10, 19, 50])
def test_conformal_simulation_meets_alpha(n):
    alpha = 0.05
    mean, se = _miss_rates("conformal", n, alpha, draws=4000, m_test=50, seed=20240611 + n, p_unretrieved=0.01 if n == 50 else 0.0)
    assert mean <= alpha + 4 * se, (mean, se)


def test_sample_minimum_falls_short():
    # n = 10 < 19: conformal says -inf; the sample minimum covers only n/(n+1) = 10/11
    mean, se = _miss_rates("minimum", 10, 0.05, draws=4000, m_test=50, seed=11)
    assert mean == pytest.approx(1 / 11, abs=4 * se)
    assert mean > 0.05 + 10 * se


# --------------------------------------------------------------------------- null floor

def test_null_floor_hand_worked_and_per_set():
    # in-domain negatives 0..3 (3 absent), ood negatives 4..6, positives 7..8
    lane = make_lane({0: [(1, 1.0)], 1: [(1, 2.0)], 2: [(1, 3.0)], 4: [(1, 0.1)], 5: [(1, 0.2)], 6: [(2, 10.0)], 7: [(3, 9.0)], 8: [(4, 2.5)]}, 9)
    j = make_judgments({7: {3: 1}, 8: {4: 1}}, 10)
    t = G.top_scores(lane, j)
    negs = {"in_domain": mask(9, [0, 1, 2, 3]), "ood": mask(9, [4, 5, 6])}
    floors = G.null_floors(t, negs)
    nf = floors["in_domain"]
    assert nf.n == 3 and nf.n_absent == 1
    assert nf.mean == 2.0 and nf.sd == pytest.approx(1.0) and nf.floor == pytest.approx(5.0)
    assert (nf.fpir["in_domain"].k, nf.fpir["in_domain"].n) == (0, 4)
    assert (nf.fpir["ood"].k, nf.fpir["ood"].n) == (1, 3)  # ood negative at 10.0 passes
    ood = floors["ood"]
    assert ood.floor == pytest.approx(np.mean([0.1, 0.2, 10]) + 3 * np.std([0.1, 0.2, 10], ddof=1))
    d = strict_json({k: v.as_dict() for k, v in floors.items()})
    assert d["in_domain"]["fpir"]["ood"]["method"] == "wilson"


def test_null_floor_needs_two():
    lane = make_lane({0: [(1, 1.0)]}, 2)
    t = G.top_scores(lane, hit_relevant=np.array([False]))
    nf = G.null_floor(t, mask(2, [0, 1]))
    assert nf.floor is None and "at least 2" in nf.reason
    d = strict_json(nf.as_dict())
    assert d["floor"] is None and d["floor_reason"]


# --------------------------------------------------------------------------- gate outcome and sweep

def _case():
    """Top scores with ties; q9 absent (positive), q10 absent (negative)."""
    top = [3.0, 2.0, 2.0, 1.0, 5.0, 2.0, 0.5, 2.0, 4.0, -math.inf, -math.inf]
    rel = [True, True, False, True, True, False, False, False, False, False, False]
    t = top_from_arrays(top=top, top_relevant=rel)
    pos = mask(11, [0, 1, 2, 3, 4, 9])
    neg = {"in_domain": mask(11, [5, 6, 7, 10]), "ood": mask(11, [8])}
    return t, pos, neg


def test_gate_outcome_floor_exactly_at_a_score():
    t, pos, neg = _case()
    o = G.gate_outcome(t, pos, neg, floor=2.0).combined
    # positives: 0 (3, rel) ok, 1 (2, rel) ok at the floor, 2 (2, wrong) wrong accept,
    # 3 (1) rejected, 4 (5, rel) ok, 9 absent rejected
    assert (o.positives, o.correct, o.wrong_accept, o.rejected) == (6, 3, 1, 2)
    assert o.fnir.k == 3 and o.fnir.n == 6
    assert (o.fpir["in_domain"].k, o.fpir["in_domain"].n) == (2, 4)  # 5 and 7 sit at 2.0
    assert (o.fpir["ood"].k, o.fpir["ood"].n) == (1, 1)
    # a floor of -inf still rejects absent queries
    o = G.gate_outcome(t, pos, neg, floor=-math.inf).combined
    assert o.rejected == 1 and o.fpir["in_domain"].k == 3
    strict_json(G.gate_outcome(t, pos, neg, floor=math.inf).as_dict())


def test_sweep_hand_worked():
    t, pos, neg = _case()
    sw = G.sweep(t, pos, neg)
    assert sw.threshold.tolist() == [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, math.inf]
    i = 2
    assert (sw.correct[i], sw.wrong_accept[i], sw.rejected[i]) == (3, 1, 2)
    assert sw.accepted["in_domain"].tolist() == [3, 2, 2, 0, 0, 0, 0]
    assert sw.accepted["ood"].tolist() == [1, 1, 1, 1, 1, 0, 0]
    assert sw.rejected[-1] == 6 and sw.accepted["in_domain"][-1] == 0
    d = strict_json(sw.as_dict())
    assert d["threshold"][-1] is None and "reject all" in d["threshold_reason"]


@st.composite
def gate_data(draw):
    n_q = draw(st.integers(1, 25))
    n_docs = draw(st.integers(1, 8))
    hits = {}
    for q in range(n_q):
        k = draw(st.integers(0, n_docs))
        docs = draw(st.permutations(range(n_docs)))[:k]
        scores = [draw(st.integers(0, 4)) / 2 for _ in docs]  # small range: many ties
        if k:
            hits[q] = list(zip(docs, scores))
    lane = make_lane(hits, n_q)
    hit_rel = np.array([draw(st.booleans()) for _ in range(lane.n_rows)], dtype=bool)
    cls = np.array([draw(st.integers(0, 3)) for _ in range(n_q)])  # 0 none, 1 pos, 2 neg, 3 ood
    return lane, hit_rel, cls


def _sets(cls):
    return cls == 1, {"in_domain": cls == 2, "ood": cls == 3}


def _same(a: G.Sweep, b: G.Sweep):
    np.testing.assert_array_equal(a.threshold, b.threshold)
    for f in ("correct", "wrong_accept", "rejected"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert a.n_negatives == b.n_negatives
    for k in a.accepted:
        np.testing.assert_array_equal(a.accepted[k], b.accepted[k])
        np.testing.assert_array_equal(a.fpir(k), b.fpir(k))
    np.testing.assert_array_equal(a.fnir, b.fnir)


@settings(max_examples=300, deadline=None)
@given(gate_data(), st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, math.inf])), st.one_of(st.none(), st.integers(1, 3)))
def test_sweep_equals_brute_force(data, m, r):
    lane, hit_rel, cls = data
    t = G.top_scores(lane, hit_relevant=hit_rel)
    pos, negs = _sets(cls)
    mn = G.mutual_nn(lane, cls > 0, tie_rule="count") if r is not None else None
    fast = G.sweep(t, pos, negs, margin=m, mutual=mn, r=r)
    slow = sweep_brute_force(t, pos, negs, margin=m, mutual=mn, r=r)
    _same(fast, slow)
    # candidates: distinct finite top scores of every evaluated query, plus +inf
    ev = (cls > 0) & t.present
    assert fast.threshold.tolist() == sorted(set(t.top[ev].tolist())) + [math.inf]
    # monotone: raising the floor never accepts more
    for k in fast.accepted:
        assert np.all(np.diff(fast.accepted[k]) <= 0)
    assert np.all(np.diff(fast.correct + fast.wrong_accept) <= 0)


@settings(max_examples=200, deadline=None)
@given(gate_data(), st.floats(-1, 3, allow_nan=False))
def test_gate_outcome_between_candidates_matches_sweep(data, f):
    lane, hit_rel, cls = data
    t = G.top_scores(lane, hit_relevant=hit_rel)
    pos, negs = _sets(cls)
    sw = G.sweep(t, pos, negs)
    i = int(np.searchsorted(sw.threshold, f, side="left"))  # next candidate >= f decides the same
    o = G.gate_outcome(t, pos, negs, floor=f).combined
    assert (o.correct, o.wrong_accept, o.rejected) == (sw.correct[i], sw.wrong_accept[i], sw.rejected[i])
    for k in negs:
        assert o.fpir[k].k == sw.accepted[k][i]


# --------------------------------------------------------------------------- operating point

def test_operating_point_hand_worked():
    t, pos, neg = _case()
    sw = G.sweep(t, pos, neg)
    op = G.operating_point(sw, target_fpir=0.05)  # in-domain: FPIR 0 first at floor 3.0
    assert op.attainable and op.floor == 3.0 and op.index == 3
    assert op.fnir.k == 4 and op.rejected == 4 and op.wrong_accept == 0
    # conservative with 4 negatives: even 0/4 has Wilson upper > 0.05 -> reject all, flagged
    op = G.operating_point(sw, target_fpir=0.05, conservative=True)
    assert not op.attainable and op.floor == math.inf
    assert "unattainable with 4 negatives" in op.reason and "n >= 73" in op.reason
    d = strict_json(op.as_dict())
    assert d["floor"] is None and "reject all" in d["floor_reason"]
    # on the ood set (one negative at 4.0) the point estimate picks 5.0
    assert G.operating_point(sw, 0.05, negative_set="ood").floor == 5.0


def test_operating_point_conservative_attainable_with_73():
    n_neg = 73
    top = np.concatenate([np.linspace(0, 1, n_neg), [2.0, 3.0]])
    t = top_from_arrays(top=top, top_relevant=np.ones(n_neg + 2, bool))
    sw = G.sweep(t, mask(n_neg + 2, [n_neg, n_neg + 1]), mask(n_neg + 2, range(n_neg)))
    op = G.operating_point(sw, 0.05, conservative=True)
    assert op.attainable and op.floor == 2.0 and op.fpir["in_domain"].high <= 0.05
    sw72 = G.sweep(top_from_arrays(top=top[1:], top_relevant=np.ones(n_neg + 1, bool)), mask(n_neg + 1, [n_neg - 1, n_neg]), mask(n_neg + 1, range(n_neg - 1)))
    assert not G.operating_point(sw72, 0.05, conservative=True).attainable


@settings(max_examples=300, deadline=None)
@given(gate_data(), st.sampled_from([0.01, 0.05, 0.1, 0.25, 0.5]), st.booleans())
def test_operating_point_properties(data, target, conservative):
    lane, hit_rel, cls = data
    t = G.top_scores(lane, hit_relevant=hit_rel)
    pos, negs = _sets(cls)
    sw = G.sweep(t, pos, negs)
    op = G.operating_point(sw, target, conservative=conservative)
    n = sw.n_negatives["in_domain"]
    if n:
        hi = sw.fpir_interval("in_domain")[1]
        pt = sw.fpir("in_domain")
        crit = hi if conservative else pt
    if op.attainable:
        assert math.isfinite(op.floor)
        assert crit[op.index] <= target  # conservative never picks a Wilson upper above target
        assert np.all(crit[: op.index] > target)  # and it is the smallest such floor
    else:
        assert op.floor == math.inf and op.reason
        if n:
            assert np.all(crit[:-1] > target)
    strict_json(op.as_dict())


# --------------------------------------------------------------------------- margin

def test_margin_lone_candidate_passes_every_margin():
    # negatives: q0 lone hit, q1 clear winner (margin 3), q2 tie; positives q3, q4
    lane = make_lane({0: [(1, 0.2)], 1: [(1, 5.0), (2, 2.0)], 2: [(1, 1.0), (2, 1.0)], 3: [(3, 4.0), (1, 1.0)], 4: [(4, 3.0), (1, 2.5)]}, 5)
    t = G.top_scores(lane, hit_relevant=np.array([False, False, False, False, False, True, False, True, False]))
    assert t.margin.tolist() == [math.inf, 3.0, 0.0, 3.0, 0.5]
    negs = mask(5, [0, 1, 2])
    msw = G.margin_sweep(t, mask(5, [3, 4]), negs)
    assert msw.threshold.tolist() == [0.0, 0.5, 3.0, math.inf]
    assert msw.accepted["in_domain"].tolist() == [3, 2, 2, 1]  # the lone hit is always in
    for m in [0.0, 1e9, math.inf]:
        assert G.gate_outcome(t, mask(5, [3, 4]), negs, margin=m).combined.fpir["in_domain"].k >= 1
    om = G.operating_margin(msw, target_fpir=0.05)
    assert om.margin is None and "lone candidates" in om.reason
    d = strict_json(om.as_dict())
    assert d["margin"] is None and "lone" in d["margin_reason"]
    _same(msw, sweep_brute_force(t, mask(5, [3, 4]), negs, variable="margin"))


def test_operating_margin_attainable():
    # 40 negatives with ties (margin 0) and one lone in 40: 1/40 = 0.025 <= 0.05
    n = 41
    mg = np.array([0.0] * 39 + [math.inf] + [1.0, 2.0])
    t = top_from_arrays(top=np.ones(n + 1), top_relevant=np.ones(n + 1, bool), margin=mg)
    msw = G.margin_sweep(t, mask(n + 1, [40, 41]), mask(n + 1, range(40)))
    om = G.operating_margin(msw, 0.05)
    assert om.margin == 1.0 and om.fpir["in_domain"].k == 1 and om.fnir.k == 0
    # the margin alone cannot get below the lone share
    assert msw.fpir()[-1] == pytest.approx(1 / 40)
    assert G.operating_margin(msw, 0.02).margin is None


@settings(max_examples=200, deadline=None)
@given(gate_data())
def test_margin_sweep_equals_brute_force(data):
    lane, hit_rel, cls = data
    t = G.top_scores(lane, hit_relevant=hit_rel)
    pos, negs = _sets(cls)
    msw = G.margin_sweep(t, pos, negs)
    _same(msw, sweep_brute_force(t, pos, negs, variable="margin"))
    lone = np.count_nonzero(negs["in_domain"] & (t.n_hits == 1))
    assert msw.accepted["in_domain"][-1] == lone
    om = G.operating_margin(msw, 0.05)
    n = msw.n_negatives["in_domain"]
    if n and lone / n > 0.05:
        assert om.margin is None and "lone" in om.reason


# --------------------------------------------------------------------------- mutual nearest neighbour

def _mutual_case():
    # doc 1 is retrieved by q0 (rank 1), q1 (rank 1), q2 (rank 2), q3 (rank 3)
    # doc 2 is q2's top and q3's second; doc 3 is q3's top only
    return make_lane(
        {0: [(1, 0.9)], 1: [(1, 0.1), (4, 0.05)], 2: [(2, 50.0), (1, 40.0)], 3: [(3, 9.0), (2, 8.0), (1, 7.0)]},
        5,
    )


def test_mutual_hand_made_share_rule():
    lane = _mutual_case()
    mn = G.mutual_nn(lane, mask(5, [0, 1, 2, 3]))
    # row order: q0 d1 | q1 d1, d4 | q2 d2, d1 | q3 d3, d2, d1
    assert mn.row_position.tolist() == [1, 1, 1, 1, 3, 1, 2, 4]
    assert mn.row_list_size.tolist() == [4, 4, 1, 2, 4, 1, 2, 4]
    # a top doc has rank 1, so under the shared-tie rule its position is 1 (q4 absent: 0)
    assert mn.position.tolist() == [1, 1, 1, 1, 0]
    assert mn.list_size.tolist() == [4, 4, 2, 1, 0]
    assert mn.passes(1).tolist() == [True, True, True, True, False]
    assert mn.n_queries == 4
    assert mn.vacuous(1) == (1, 4)  # only q3's top doc (doc 3) has |L| <= 1
    assert mn.vacuous(2) == (2, 4)


def test_mutual_hand_made_count_rule():
    mn = G.mutual_nn(_mutual_case(), mask(5, [0, 1, 2, 3]), tie_rule="count")
    # doc 1 is the top hit of q0 and q1: with ties counted each sits at position 2
    assert mn.position.tolist() == [2, 2, 1, 1, 0]
    assert mn.passes(1).tolist() == [False, False, True, True, False]
    assert mn.row_position.tolist() == [2, 2, 1, 1, 3, 1, 2, 4]


def test_mutual_lists_only_from_among():
    mn = G.mutual_nn(_mutual_case(), mask(5, [2, 3]), tie_rule="count")
    assert mn.position.tolist() == [0, 0, 1, 1, 0]
    assert mn.row_position[4] == 1 and mn.row_list_size[4] == 2  # doc 1 in q2, q3 only
    assert mn.n_queries == 2


def test_mutual_vacuous_on_one_query():
    lane = make_lane({0: [(1, 3.0), (2, 1.0)]}, 1)
    for rule in ("share", "count"):
        mn = G.mutual_nn(lane, mask(1, [0]), tie_rule=rule)
        assert mn.passes(1).tolist() == [True]
        s = strict_json(mn.summary(1))
        assert s["vacuous_share"] == 1.0 and s["built_from"] == 1


def test_mutual_in_gate_outcome_alone_and_combined():
    lane = _mutual_case()
    t = G.top_scores(lane, hit_relevant=np.array([True, False, False, True, False, False, False, False]))
    mn = G.mutual_nn(lane, mask(5, [0, 1, 2, 3]), tie_rule="count")
    go = G.gate_outcome(t, mask(5, [0, 2]), {"in_domain": mask(5, [1, 3, 4])}, floor=0.5, mutual=mn, r=1)
    assert set(go.alone) == {"floor", "mutual"}
    assert go.alone["floor"].correct == 2 and go.alone["floor"].fpir["in_domain"].k == 1  # q3 at 9.0
    assert go.alone["mutual"].correct == 1 and go.alone["mutual"].fpir["in_domain"].k == 1
    assert go.combined.correct == 1 and go.combined.rejected == 1 and go.combined.fpir["in_domain"].k == 1
    strict_json(go.as_dict())


def test_batch_size_warning():
    assert G.batch_size_warning(100, 200) is None
    assert "2x" in G.batch_size_warning(100, 201)


# --------------------------------------------------------------------------- end to end, strict JSON

def test_everything_serialises_strictly():
    lane = _mutual_case()
    t = G.top_scores(lane, hit_relevant=np.zeros(lane.n_rows, bool))
    pos, neg = mask(5, [0, 4]), {"in_domain": mask(5, [1]), "ood": mask(5, [2, 3])}
    objs = [
        G.conformal_floor(t, pos, 0.05),
        G.conformal_floor(t, pos, 0.05, in_sample=True),
        G.sweep(t, pos, neg),
        G.margin_sweep(t, pos, neg),
        G.operating_point(G.sweep(t, pos, neg)),
        G.operating_margin(G.margin_sweep(t, pos, neg)),
        G.gate_outcome(t, pos, neg, floor=-math.inf, margin=math.inf),
        G.Rate(0, 0),
    ]
    for o in objs:
        strict_json(o.as_dict())
    for nf in G.null_floors(t, neg).values():
        strict_json(nf.as_dict())
    assert G.conformal_floor(t, pos, 0.05, in_sample=True).as_dict()["label"] == "in-sample, no guarantee"
    small = G.sweep(t, pos, neg).as_dict(max_points=2)
    assert small["points"] == 2 and small["threshold"][-1] is None


def test_kernel_gate_does_not_import_textual():
    import subprocess
    import sys

    code = "import sys, rankscope_tui.kernel.gate; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_operating_point_fpir_exactly_at_target_qualifies():
    # 20 negatives, one of them above every other query: FPIR 1/20 = 0.05 at the lowest floor
    top = np.concatenate([[9.0], np.zeros(19), [5.0]])
    t = top_from_arrays(top=top, top_relevant=np.ones(21, bool))
    sw = G.sweep(t, mask(21, [20]), mask(21, range(20)))
    assert sw.threshold.tolist() == [0.0, 5.0, 9.0, math.inf]
    op = G.operating_point(sw, 0.05)
    assert op.floor == 5.0 and op.fpir["in_domain"].k == 1
    assert G.operating_point(sw, 0.049).floor == math.inf


def test_query_sets_as_codes_or_masks():
    t, pos, neg = _case()
    as_codes = {k: np.flatnonzero(m) for k, m in neg.items()}
    a = G.sweep(t, np.flatnonzero(pos), as_codes)
    _same(a, G.sweep(t, pos, neg))
    lane = _mutual_case()
    m1 = G.mutual_nn(lane, np.array([0, 1, 2, 3]), tie_rule="count")
    m2 = G.mutual_nn(lane, mask(5, [0, 1, 2, 3]), tie_rule="count")
    np.testing.assert_array_equal(m1.position, m2.position)
    with pytest.raises(ValueError):
        G.sweep(t, pos[:-1], neg)  # a mask of the wrong length is refused


def test_evaluate_with_thresholds_warns_when_the_mutual_batches_differ_more_than_2x(tmp_path, capsys):
    """SPEC §6: r fitted on lists from one batch size does not transfer to a batch more than
    2x apart; `evaluate --thresholds` with the mutual condition says so in the report's
    warnings and prints it like the input warnings."""
    from rankscope_tui import cli
    from rankscope_tui.kernel.gate.thresholds import THRESHOLDS_SCHEMA

    lane = tmp_path / "a.run"
    lane.write_text("".join(f"q{i} Q0 d{j} {j} {3 - j}.5 t\n" for i in range(1, 11) for j in (1, 2, 3)), encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d1 {1 if i <= 8 else 0}\n" for i in range(1, 11)), encoding="utf-8")
    th = tmp_path / "th.json"

    def run(cal_qids: list[str]) -> tuple[dict, str]:
        th.write_text(json.dumps({"schema": THRESHOLDS_SCHEMA, "calibration": {"qids": cal_qids},
                                  "gate": {"floor": 0.5, "margin": None, "mutual_r": 1}}), encoding="utf-8")
        out = tmp_path / "report.json"
        assert cli.main(["evaluate", "--lane", f"a={lane}", "--qrels", str(qrels), "--thresholds", str(th),
                         "--gate-on", "a", "--resamples", "0", "--out", str(out)]) == 0
        return json.loads(out.read_text(encoding="utf-8")), capsys.readouterr().out

    report, text = run(["c1", "c2", "c3", "c4"])
    w = [x for x in report["summary"]["warnings"] if x["kind"] == "mutual_batch_size"]
    assert len(w) == 1 and w[0]["where"] == str(th)
    assert w[0]["message"] == G.batch_size_warning(4, 10)
    assert f"warning: {th}: {w[0]['message']} (1)" in text
    report, text = run([f"c{i}" for i in range(5)])  # 5 and 10: at most 2x apart
    assert not [x for x in report["summary"]["warnings"] if x["kind"] == "mutual_batch_size"]
    assert "r does not transfer" not in text


@settings(max_examples=150, deadline=None)
@given(gate_data(), st.sampled_from([-math.inf, 0.0, 0.5, 1.0, math.inf]), st.sampled_from([0.0, 0.5]), st.integers(1, 3))
def test_condition_outcomes_are_the_floor_anded_with_each_condition(data, floor, m, r):
    lane, hit_rel, cls = data
    t = G.top_scores(lane, hit_relevant=hit_rel)
    pos, negs = _sets(cls)
    mn = G.mutual_nn(lane, cls > 0, tie_rule="count")
    by = G.condition_outcomes(t, pos, negs, floor, margin=m, mutual=mn, r=r)
    assert list(by) == ["floor", "floor AND margin", "floor AND mutual", "floor AND margin AND mutual"]
    assert by["floor"] == G.gate_outcome(t, pos, negs, floor=floor).combined
    assert by["floor AND margin"] == G.gate_outcome(t, pos, negs, floor=floor, margin=m).combined
    assert by["floor AND mutual"] == G.gate_outcome(t, pos, negs, floor=floor, mutual=mn, r=r).combined
    assert by["floor AND margin AND mutual"] == G.gate_outcome(t, pos, negs, floor=floor, margin=m, mutual=mn, r=r).combined
    assert list(G.condition_outcomes(t, pos, negs, floor)) == ["floor"]
