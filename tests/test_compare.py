"""Paired comparisons and the verdict, checked against scipy, statsmodels, a naive protocol
implementation, a long Monte Carlo run, seed 001's worked numbers and hand-worked verdicts."""

from __future__ import annotations

import dataclasses
import json
import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.instruments import diff as df
from rankscope_tui.kernel.statistics import multiplicity as mt
from rankscope_tui.kernel.statistics import paired as pa
from rankscope_tui.kernel.statistics import randomization as rz
from rankscope_tui.kernel.statistics import verdict as vd
from rankscope_tui.kernel.statistics.intervals import BcaParts

EPS100 = 100 * np.finfo(np.float64).eps


def qids_for(n: int) -> list[str]:
    return sorted((f"q{i}" for i in range(n)), key=str.encode)


def naive_randomization_p(d: np.ndarray, B: int, seed: int, alternative: str = "two-sided") -> float:
    """The protocol written plainly: a full B × n sign matrix (small inputs only)."""
    signs = 1 - 2 * np.random.default_rng(seed).integers(0, 2, size=(B, d.size))
    flipped = (signs * d).mean(axis=1)
    obs = d.mean()
    gamma = EPS100 * abs(obs)
    if alternative == "two-sided":
        e = np.count_nonzero(np.abs(flipped) >= abs(obs) - gamma)
    elif alternative == "greater":
        e = np.count_nonzero(flipped >= obs - gamma)
    else:
        e = np.count_nonzero(flipped <= obs + gamma)
    return (1 + e) / (B + 1)


def datasets():
    rng = np.random.default_rng(42)
    cont = rng.normal(0.02, 0.2, 150)
    hits = rng.choice([-1.0, 0.0, 0.0, 1.0], 97)  # hit@k-like: exact integer ties
    ranks = rng.integers(1, 6, (2, 61))
    rr = 1.0 / ranks[0] - 1.0 / ranks[1]  # rr-like: many equal magnitudes
    zero_mean = np.array([0.5, -0.5, 0.25, -0.25, 1 / 3, -1 / 3] * 7)  # observed mean exactly 0
    return {"continuous": cont, "hits": hits, "rr": rr, "zero_mean": zero_mean}


# --- t-test -----------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_paired_t_equals_scipy_ttest_rel(alternative):
    rng = np.random.default_rng(0)
    for n in (2, 5, 30, 500):
        b = rng.random(n)
        c = b + rng.normal(0.03, 0.1, n)
        ref = stats.ttest_rel(c, b, alternative=alternative).pvalue
        assert pa.paired_t_test(c - b, alternative) == pytest.approx(ref, rel=1e-12, abs=1e-300)


def test_paired_t_is_null_when_sd_is_zero():
    assert pa.paired_t_test(np.full(10, 0.1)) is None
    assert pa.paired_t_test(np.zeros(10)) is None


# --- randomization test -------------------------------------------------------------


@pytest.mark.parametrize("name", ["continuous", "hits", "rr", "zero_mean"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_randomization_equals_the_plain_protocol_exactly(name, alternative):
    d = datasets()[name]
    for chunk in (None, 1, 7):
        got = rz.randomization_test(d, 1999, seed=3, alternative=alternative, chunk=chunk)
        assert got.p == naive_randomization_p(d, 1999, 3, alternative)
    assert got.observed == pytest.approx(d.mean(), abs=1e-15)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_lattice_differences_take_the_exact_path_and_still_equal_the_protocol(alternative):
    """hit@k and rr differences land on a lattice: many flipped means tie the observed one exactly,
    and only the plain computation's own rounding decides them. Those rows are recomputed the plain way."""
    rng = np.random.default_rng(7)
    hits = rng.choice([-1.0, 0.0, 0.0, 1.0], 1500)
    ranks = rng.integers(1, 4, (2, 1200))
    rr = 1.0 / ranks[0] - 1.0 / ranks[1]
    zero = datasets()["zero_mean"]
    recomputed = 0
    for d in (hits, rr, zero):
        got = rz.randomization_test(d, 999, seed=5, alternative=alternative)
        assert got.p == naive_randomization_p(d, 999, 5, alternative)
        recomputed += got.exact_rows
    assert recomputed > 0


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_randomization_threads_give_the_same_count(threads):
    for name, d in datasets().items():
        for chunk in (None, 4):
            assert rz.randomization_test(d, 2999, seed=9, chunk=chunk, threads=threads).p == naive_randomization_p(
                d, 2999, 9
            )


def test_zero_observed_mean_gives_p_one():
    assert rz.randomization_test(datasets()["zero_mean"], 999).p == 1.0


def test_p_is_never_zero_and_its_floor_is_one_over_b_plus_one():
    d = np.abs(np.random.default_rng(1).normal(0.5, 0.1, 200))  # every query improves
    for B in (999, 9999):
        r = rz.randomization_test(d, B, seed=0)
        assert r.exceedances == 0 and r.at_floor
        assert r.p == 1 / (B + 1) > 0
    assert rz.format_p(1 / 10000, 9999) == "p = 0.0001, the minimum attainable with B = 9,999"
    assert "<" not in rz.format_p(1 / 10000, 9999)


def test_randomization_p_agrees_with_a_much_longer_run():
    d = np.random.default_rng(8).normal(0.03, 0.25, 80)
    short = rz.randomization_test(d, 9999, seed=0).p
    long = rz.randomization_test(d, 399_999, seed=12345).p
    se = math.sqrt(long * (1 - long) / 9999)
    assert 0.01 < long < 0.5  # an informative p, not the floor
    assert abs(short - long) < 4 * se


def test_randomization_close_to_scipy_permutation_test_where_p_is_small():
    rng = np.random.default_rng(4)
    b = rng.random(60)
    c = np.clip(b + rng.normal(0.045, 0.12, 60), 0, 1)
    ours = rz.randomization_test(c - b, 9999, seed=0).p
    ref = stats.permutation_test(
        (c, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=9999, rng=np.random.default_rng(0),
    )
    assert ours < 0.05 and ref.pvalue < 0.05
    assert abs(ours - ref.pvalue) < 4 * math.sqrt(ours * (1 - ours) / 9999) * math.sqrt(2) + 2 / 10000


def _scipy_tails(res, observed: float, B: int) -> tuple[float, float, float]:
    null = res.null_distribution
    gamma = EPS100 * abs(observed)
    less = (1 + np.count_nonzero(null <= observed + gamma)) / (B + 1)
    greater = (1 + np.count_nonzero(null >= observed - gamma)) / (B + 1)
    both = (1 + np.count_nonzero(np.abs(null) >= abs(observed) - gamma)) / (B + 1)
    return less, greater, both


def test_scipy_two_sided_is_twice_the_smaller_tail_so_the_two_part_near_one():
    """scipy's two-sided p = min(1, 2·min(one-sided p)); ours counts |Δ̄*| ≥ |Δ̄|.

    Where p is small the two agree within Monte Carlo error (scipy's floor is
    2/(B+1), ours 1/(B+1)). Near p = 1 scipy doubles a noisy half-count, so it
    moves by about ±2/√B around 1 (and is clipped to 1), while the |·| count on
    the very same null distribution stays pinned near 1.
    """
    B = 9999
    statistic = lambda x, y, axis: np.mean(x - y, axis=axis)  # noqa: E731
    rng = np.random.default_rng(6)
    b = rng.random(50)
    for shift, near_one in ((0.08, False), (0.0, True)):
        c = b + rng.normal(0.0, 0.2, 50)
        c = c - np.mean(c - b) + shift + (1e-4 if near_one else 0.0)  # near_one: observed mean ≈ 0
        obs = np.mean(c - b)
        res = stats.permutation_test((c, b), statistic, permutation_type="samples", vectorized=True,
                                     n_resamples=B, rng=np.random.default_rng(1))
        less, greater, both = _scipy_tails(res, obs, B)
        assert res.pvalue == pytest.approx(min(1.0, 2 * min(less, greater)), abs=1e-15)
        ours = rz.randomization_test(c - b, B, seed=1).p
        if near_one:
            assert both > 0.99 and ours > 0.99
            assert abs(res.pvalue - both) > 1 / (B + 1)  # they part
        else:
            assert both < 0.01 and abs(res.pvalue - both) < 4 * math.sqrt(both / B) + 2 / (B + 1)
            assert abs(ours - both) < 4 * math.sqrt(both / B) * math.sqrt(2) + 2 / (B + 1)


def test_resample_limits():
    with pytest.raises(InputError):
        rz.randomization_test([0.1, -0.2, 0.3], 500)
    assert rz.randomization_test([0.1, -0.2, 0.3], 0).p is None


# --- one pair -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(17)
    n = 240
    b = np.round(rng.beta(0.8, 0.7, n), 2)
    c = b.copy()
    moved = rng.random(n) < 0.6
    c[moved] = np.clip(b[moved] + rng.normal(0.03, 0.2, moved.sum()), 0, 1).round(2)
    q = qids_for(n)
    return b, c, q, pa.paired_statistics(b, c, q, resamples=9999, seed=0)


def test_pair_counts_and_descriptives(pair):
    b, c, q, s = pair
    d = c - b
    assert (s.wins, s.losses, s.ties) == (np.sum(d > 0), np.sum(d < 0), np.sum(d == 0))
    assert s.n == 240 and s.n_nonzero == s.wins + s.losses
    assert s.tie_rate == pytest.approx(s.ties / 240)
    assert s.difference == pytest.approx(c.mean() - b.mean(), abs=1e-15)
    assert s.median_difference == np.median(d)
    assert s.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert s.t_p == pytest.approx(stats.ttest_rel(c, b).pvalue, rel=1e-12)


def test_pair_bootstrap_equals_scipy(pair):
    b, c, q, s = pair
    d = c - b
    ref = stats.bootstrap((d,), np.mean, method="percentile", rng=np.random.default_rng(0))
    assert s.ci_low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert s.ci_high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert s.p_superiority == np.mean(ref.bootstrap_distribution > 0)
    for level in (0.95, 1 - 0.05 / 4):
        bca = stats.bootstrap((d,), np.mean, method="BCa", confidence_level=level, rng=np.random.default_rng(0))
        lo, hi = s.bca_interval(level)
        assert lo == pytest.approx(bca.confidence_interval.low, abs=1e-12)
        assert hi == pytest.approx(bca.confidence_interval.high, abs=1e-12)
    unpaired = stats.bootstrap(
        (b, c), lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis),
        paired=False, method="percentile", rng=np.random.default_rng(0),
    )
    assert s.unpaired_ci_low == pytest.approx(unpaired.confidence_interval.low, abs=1e-12)
    assert s.unpaired_ci_high == pytest.approx(unpaired.confidence_interval.high, abs=1e-12)
    assert s.unpaired_ci_high - s.unpaired_ci_low > s.ci_high - s.ci_low  # pairing removes variance here


def test_pair_shares_the_stream_without_changing_numbers(pair):
    b, c, q, s = pair
    assert s.randomization_p == rz.randomization_test(c - b, 9999, seed=0).p
    chunked = pa.paired_statistics(b, c, q, resamples=9999, seed=0, chunk=3, threads=2)
    assert np.array_equal(chunked.replicates, s.replicates)
    assert (chunked.unpaired_ci_low, chunked.unpaired_ci_high) == (s.unpaired_ci_low, s.unpaired_ci_high)
    assert chunked.randomization_p == s.randomization_p


def test_largest_losses_and_gains_order_by_delta_then_qid_bytes():
    q = sorted(["B", "a", "Q10", "Q2", "z", "Z", "m"], key=str.encode)  # bytes: uppercase first
    base = np.array([0.5] * 7)
    delta = {"B": -0.3, "Q10": -0.3, "Q2": 0.2, "Z": 0.0, "a": 0.2, "m": -0.1, "z": 0.4}
    cand = base + np.array([delta[x] for x in q])
    judged = (np.linspace(0.5, 1.0, 7), np.linspace(1.0, 0.4, 7))
    s = pa.paired_statistics(base, cand, q, resamples=999, judged=judged)
    assert [x.qid for x in s.largest_losses] == ["B", "Q10", "m"]
    assert [x.qid for x in s.largest_gains] == ["z", "Q2", "a"]
    first = s.largest_losses[0]
    assert (first.baseline, first.candidate) == (0.5, pytest.approx(0.2))
    assert first.share == pytest.approx(0.3 / 0.7) and s.largest_gains[0].share == pytest.approx(0.4 / 0.8)
    assert (first.baseline_judged, first.candidate_judged) == (judged[0][0], judged[1][0])  # "B" sorts first
    many = pa.paired_statistics(np.zeros(12), np.linspace(-0.6, 0.5, 12), qids_for(12), resamples=999)
    assert len(many.largest_losses) == 5 and len(many.largest_gains) == 5
    assert all(x.difference < 0 for x in many.largest_losses)


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_pair_follows_the_alternative(pair, alternative):
    b, c, q, _ = pair
    s = pa.paired_statistics(b, c, q, resamples=9999, seed=0, alternative=alternative)
    ref = stats.bootstrap((c - b,), np.mean, method="percentile", alternative=alternative,
                          rng=np.random.default_rng(0)).confidence_interval
    assert (s.ci_low, s.ci_high) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
    assert s.t_p == pytest.approx(stats.ttest_rel(c, b, alternative=alternative).pvalue, rel=1e-12)
    row = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    d = row.as_dict()
    json.dumps(d, allow_nan=False)
    assert (d["ci_high"] if alternative == "greater" else d["ci_low"]) is None


def test_input_errors():
    with pytest.raises(InputError):
        pa.paired_statistics([0.1], [0.2], ["q"], resamples=999)
    with pytest.raises(InputError):
        pa.paired_statistics([0.1, 0.2], [0.2, 0.3], ["q2", "q10"], resamples=999)  # not sorted as bytes
    with pytest.raises(InputError):
        pa.paired_statistics([0.1, 0.2], [0.2, 0.3, 0.4], ["a", "b"], resamples=999)
    with pytest.raises(InputError):
        pa.paired_statistics([0.1, 0.2], [0.2, 0.3], ["a", "b"], resamples=100)


def test_memory_stays_chunked():
    """A B × n float64 matrix would be 80 MB here; the kernel must stay far below it."""
    n = 10_000
    rng = np.random.default_rng(0)
    b = rng.random(n)
    c = b + rng.normal(0, 0.1, n)
    q = qids_for(n)
    tracemalloc.start()
    pa.paired_statistics(b, c, q, resamples=999, seed=0, threads=2)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20e6


# --- multiplicity -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_adjust_p_equals_statsmodels_exactly(method):
    rng = np.random.default_rng(5)
    cases = [rng.random(10) * 0.1, rng.random(7), np.array([0.01, 0.01, 0.03, 0.01, 0.5]),
             np.array([0.3]), np.array([0.0001] * 6), rng.choice([0.001, 0.02, 0.04], 9)]
    for p in cases:
        assert np.array_equal(mt.adjust_p(p, method), multipletests(p, method=method)[1])


def test_seed_001_holm_example():
    raw = [0.0399, 0.0123, 0.0159, 0.0338]  # ndcg@100, calibrated_recall@20, recall@20, mrr@20 on 400 users
    adj = mt.adjust_p(raw, "holm")
    assert np.round(adj, 4).tolist() == [0.0676, 0.0492, 0.0492, 0.0676]
    assert adj[1] == pytest.approx(0.0123 * 4)
    thr = mt.thresholds(raw, 0.05, "holm")
    assert thr.tolist() == pytest.approx([0.05, 0.05 / 4, 0.05 / 3, 0.05 / 2])
    assert mt.thresholds(raw, 0.05, "bonferroni").tolist() == pytest.approx([0.0125] * 4)


def test_holm_thresholds_break_ties_in_call_order():
    assert mt.thresholds([0.01, 0.01, 0.2], 0.05, "holm").tolist() == pytest.approx([0.05 / 3, 0.05 / 2, 0.05])


def test_format_p():
    assert rz.format_p(4 / 10000, 9999, hypotheses=4) == (
        "p = 0.0004, the minimum attainable with B = 9,999 and 4 hypotheses"
    )
    assert rz.format_p(0.0123, 9999) == "p = 0.0123"
    assert rz.format_p(1 / 100000, 99999).startswith("p = 0.00001, the minimum")
    assert rz.format_p(2.11e-05) == "p = 2.11e-05"
    assert rz.format_p(None) == "p = n/a"


# --- the verdict --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def template():
    rng = np.random.default_rng(1)
    b = rng.random(100)
    return pa.paired_statistics(b, b + rng.normal(0.01, 0.1, 100), qids_for(100), resamples=9999)


def fake(template, *, p, diff, t_p=None, p_sup=None, spread=0.02, n_nonzero=100, resamples=9999, **kw):
    """A PairedStats with hand-chosen numbers; replicates are a symmetric cloud around diff (z0 = a = 0)."""
    reps = diff + spread * np.linspace(-1.0, 1.0, resamples)
    return dataclasses.replace(
        template, randomization_p=p, difference=diff, t_p=p if t_p is None else t_p,
        p_superiority=float(np.mean(reps > 0)) if p_sup is None else p_sup,
        replicates=reps, bca=BcaParts(0.0, 0.0), n_nonzero=n_nonzero, resamples=resamples, **kw,
    )


def test_verdict_better_worse_inconclusive(template):
    rows = vd.decide([
        vd.RowInput("bm25", "dense", "ndcg@10", fake(template, p=0.001, diff=0.05)),
        vd.RowInput("bm25", "dense", "rr", fake(template, p=0.002, diff=-0.06)),
        vd.RowInput("bm25", "dense", "hit@1", fake(template, p=0.3, diff=-0.01)),
    ]).rows
    assert [r.verdict for r in rows] == ["better", "worse", "inconclusive"]
    assert [r.verdict_text for r in rows] == ["established better", "established worse", "inconclusive"]
    assert [r.adjusted_p for r in rows] == pytest.approx([0.003, 0.004, 0.3])
    assert all(r.t_agrees and r.interval_agrees and r.bootstrap_agrees for r in rows)
    assert rows[0].bca_level == pytest.approx(1 - 0.05 / 3)


def test_verdict_seed_001_family(template):
    raw = [0.0399, 0.0123, 0.0159, 0.0338]
    res = vd.decide([vd.RowInput("EASE", "ELSA", m, fake(template, p=p, diff=0.01))
                     for m, p in zip(["ndcg@100", "calibrated_recall@20", "recall@20", "mrr@20"], raw)])
    assert res.family_size == 4
    assert [r.verdict for r in res.rows] == ["inconclusive", "better", "better", "inconclusive"]
    assert [round(r.adjusted_p, 4) for r in res.rows] == [0.0676, 0.0492, 0.0492, 0.0676]
    assert [r.bca_level for r in res.rows] == pytest.approx([0.95, 1 - 0.0125, 1 - 0.05 / 3, 0.975])


def test_min_delta_names_a_small_established_difference_in_either_direction(template):
    rows = vd.decide([vd.RowInput("a", "b", "m", fake(template, p=0.0001, diff=0.004)),
                      vd.RowInput("a", "b", "r", fake(template, p=0.0001, diff=-0.004))], min_delta=0.01).rows
    assert [r.verdict for r in rows] == ["below_min_delta", "below_min_delta"]
    assert rows[0].verdict_text == "established but below min-delta 0.01"
    assert rows[0].adjusted_p == pytest.approx(0.0002)


def test_exploratory_rows_are_outside_the_family(template):
    # seed 000's harness: three planned comparisons and one chosen after seeing the test means
    rows = [vd.RowInput("bm25", "semantic", "ndcg@10", fake(template, p=0.001, diff=0.105)),
            vd.RowInput("semantic", "hybrid", "ndcg@10", fake(template, p=0.125, diff=-0.018)),
            vd.RowInput("hybrid", "reranked", "ndcg@10", fake(template, p=0.382, diff=-0.014)),
            vd.RowInput("semantic", "reranked", "ndcg@10", fake(template, p=0.048, diff=-0.032), exploratory=True)]
    res = vd.decide(rows, correction="bonferroni")
    assert res.family_size == 3
    assert [r.verdict for r in res.rows] == ["better", "inconclusive", "inconclusive", "exploratory"]
    assert res.rows[0].bca_level == pytest.approx(1 - 0.05 / 3)  # 0.9833
    last = res.rows[3]
    assert last.adjusted_p is None and last.bca_level == pytest.approx(0.95) and not last.in_family
    assert last.as_dict()["adjusted_p"] is None and last.as_dict()["exploratory"] is True


def test_primary_metric_makes_the_rest_descriptive(template):
    rows = [vd.RowInput("a", "b", "ndcg@10", fake(template, p=0.004, diff=0.02)),
            vd.RowInput("a", "b", "rr", fake(template, p=0.0001, diff=0.03)),
            vd.RowInput("a", "c", "ndcg@10", fake(template, p=0.02, diff=0.01))]
    res = vd.decide(rows, primary="ndcg@10")
    assert res.family_size == 2
    assert [r.verdict for r in res.rows] == ["better", "descriptive", "better"]
    assert res.rows[1].adjusted_p is None
    assert res.rows[0].adjusted_p == pytest.approx(0.008)  # Holm over the two primary rows only
    with pytest.raises(InputError):
        vd.decide(rows, primary="p@10")


def test_agreement_flags_and_their_words(template):
    s = fake(template, p=0.001, diff=0.01, t_p=0.2, spread=0.05, p_sup=0.6)
    row = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    assert row.verdict == "better"
    assert row.t_agrees is False and row.interval_agrees is False and row.bootstrap_agrees is False
    text = " | ".join(row.disagreements)
    assert "t-test disagrees" in text and "includes 0" in text and "p_superiority = 0.6000" in text


def test_undefined_checks_give_null_flags(template):
    s = fake(template, p=0.0001, diff=0.1, t_p=None, effect_size=None)
    s = dataclasses.replace(s, t_p=None, bca=BcaParts(math.nan, math.nan))
    row = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    assert row.t_agrees is None and row.interval_agrees is None and row.bca_low is None
    d = row.as_dict(reasons=True)
    json.dumps(d, allow_nan=False)
    assert d["t_p"] is None and "sd" in d["t_p_reason"] and "degenerate" in d["bca_low_reason"]


def test_constant_nonzero_difference_is_established_without_a_t_test():
    n = 40
    b = np.arange(n) / 64  # dyadic, so every difference is exactly 0.25
    s = pa.paired_statistics(b, b + 0.25, qids_for(n), resamples=9999)
    assert s.t_p is None and s.effect_size is None and s.bca_degenerate
    assert s.randomization_p == pytest.approx(1 / 10000)
    row = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    assert row.verdict == "better" and row.bca_low is None


def test_warnings_for_coarse_null_and_unreachable_threshold(template):
    rows = [vd.RowInput("a", "b", f"m{i}", fake(template, p=0.001, diff=0.01, n_nonzero=12, resamples=999))
            for i in range(60)]
    res = vd.decide(rows)
    assert any("cannot be established" in w for w in res.rows[0].warnings)
    assert any("coarse" in w for w in res.rows[0].warnings)
    assert any("nothing can be established" in w for w in res.warnings)
    assert all(r.verdict == "inconclusive" for r in res.rows)


def test_row_dict_has_exactly_the_spec_keys(pair):
    b, c, q, s = pair
    res = vd.decide([vd.RowInput("bm25", "dense", "ndcg@10", s)])
    d = res.rows[0].as_dict()
    assert tuple(d) == vd.ROW_KEYS
    assert set(d["largest_losses"][0]) == {
        "qid", "baseline", "candidate", "difference", "share", "baseline_judged", "candidate_judged"
    }
    json.dumps(res.as_dict(), allow_nan=False)
    assert res.caption.startswith("Intervals are per comparison, not simultaneous")


def test_a_row_holds_its_stats_and_declares_only_the_family_fields(pair):
    b, c, q, s = pair
    row = vd.decide([vd.RowInput("bm25", "dense", "ndcg@10", s)]).rows[0]
    assert row.stats is s and row.difference == s.difference and row.largest_losses == s.largest_losses
    own = {f.name for f in dataclasses.fields(vd.ComparisonRow)}
    assert not own & {f.name for f in dataclasses.fields(pa.PairedStats)}  # nothing copied field by field
    stats_keys = [f.name for f in dataclasses.fields(pa.PairedStats) if f.metadata.get("row", True)]
    assert [k for k in vd.ROW_KEYS if k in stats_keys] == stats_keys  # the stats keep their declared order
    assert len(set(vd.ROW_KEYS)) == len(vd.ROW_KEYS)
    assert vd.ROW_KEYS.index("adjusted_p") == vd.ROW_KEYS.index("randomization_p") + 1


def test_rows_must_share_settings(template):
    other = dataclasses.replace(template, seed=7)
    with pytest.raises(InputError):
        vd.decide([vd.RowInput("a", "b", "m", template), vd.RowInput("a", "c", "m", other)])


# --- diff ------------------------------------------------------------------------------------


def test_diff_flags_a_regression_after_holm():
    rng = np.random.default_rng(3)
    n = 200
    q = tuple(qids_for(n))
    before = rng.random(n)
    worse = before - np.abs(rng.normal(0.05, 0.02, n))
    same = before + rng.normal(0, 0.1, n)
    rows = df.diff_rows([df.DiffInput("bm25", "doc", "ndcg@10", q, before, worse),
                         df.DiffInput("bm25", "doc", "rr", q, before, same)], resamples=9999, min_delta=0.01)
    assert rows[0].regression and not rows[0].improvement
    assert rows[0].adjusted_p == pytest.approx(2 / 10000)
    assert not rows[1].regression
    assert rows[1].randomization_p == rz.randomization_test(same - before, 9999, 0).p
    strict = df.diff_rows([df.DiffInput("bm25", "doc", "ndcg@10", q, before, worse)], min_delta=1.0)
    assert not strict[0].regression


# --- the deciding test as a setting (--test randomization|t) ------------------------------


@pytest.fixture(scope="module")
def family_inputs():
    """Four real rows: two clear gains, one small one, one null — the t-test and the
    randomization test computed by the kernel on each."""
    rng = np.random.default_rng(23)
    n = 60
    b = rng.random(n)
    shifts = [0.08, 0.03, 0.025, 0.0]
    rows = []
    for k, shift in enumerate(shifts):
        c = b + rng.normal(shift, 0.12, n)
        rows.append((b, c, vd.RowInput("base", f"c{k}", "ndcg@10", pa.paired_statistics(b, c, qids_for(n), resamples=1999))))
    return rows


def test_test_t_decides_with_the_t_p_holm_adjusted_as_statsmodels(family_inputs):
    inputs = [r for _, _, r in family_inputs]
    t_raw = [stats.ttest_rel(c, b).pvalue for b, c, _ in family_inputs]
    res = vd.decide(inputs, test="t")
    want = multipletests(t_raw, method="holm")[1]
    assert [r.adjusted_p for r in res.rows] == pytest.approx(list(want), rel=1e-12)
    assert res.settings_dict()["test"] == "t" and all(r.test == "t" for r in res.rows)
    thr = mt.thresholds(t_raw, 0.05, "holm")
    assert [r.bca_level for r in res.rows] == pytest.approx(list(1 - thr))
    for r, adj in zip(res.rows, want):
        assert r.verdict == ("better" if adj <= 0.05 and r.difference > 0 else "inconclusive")
        # the randomization test is now the check: Holm-adjusted randomization p <= alpha matches?
        assert r.t_agrees is None and r.randomization_agrees is not None
    rand_adj = multipletests([r.stats.randomization_p for r in inputs], method="holm")[1]
    assert [r.randomization_agrees for r in res.rows] == [
        bool(ra <= 0.05) == bool(ta <= 0.05) for ra, ta in zip(rand_adj, want)]
    d = res.rows[0].as_dict(reasons=True)
    assert d["test"] == "t" and d["t_agrees"] is None and "decides" in d["t_agrees_reason"]
    default = vd.decide(inputs)
    assert [r.adjusted_p for r in default.rows] == pytest.approx(list(rand_adj), rel=1e-12)
    assert all(r.randomization_agrees is None and r.t_agrees is not None for r in default.rows)
    with pytest.raises(InputError):
        vd.decide(inputs, test="wilcoxon")


def test_test_t_disagreement_names_the_randomization_test(template):
    s = fake(template, p=0.3, diff=0.05, t_p=0.001)
    row = vd.decide([vd.RowInput("a", "b", "m", s)], test="t").rows[0]
    assert row.verdict == "better" and row.adjusted_p == pytest.approx(0.001)
    assert row.randomization_agrees is False
    assert any("randomization test disagrees" in x for x in row.disagreements)
    flipped = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    assert flipped.verdict == "inconclusive" and flipped.t_agrees is False


def test_test_t_decides_without_resamples():
    rng = np.random.default_rng(2)
    b = rng.random(50)
    c = b + rng.normal(0.1, 0.1, 50)
    s = pa.paired_statistics(b, c, qids_for(50), resamples=0)
    res = vd.decide([vd.RowInput("a", "b", "m", s)], test="t")
    assert res.rows[0].verdict == "better" and res.warnings == ()
    assert res.rows[0].adjusted_p == pytest.approx(stats.ttest_rel(c, b).pvalue, rel=1e-12)
    assert vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0].verdict == "inconclusive"


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_bca_follows_the_alternative(pair, alternative):
    b, c, q, _ = pair
    s = pa.paired_statistics(b, c, q, resamples=9999, seed=0, alternative=alternative)
    ref = stats.bootstrap((c - b,), np.mean, method="BCa", alternative=alternative,
                          rng=np.random.default_rng(0)).confidence_interval
    lo, hi = s.bca_interval(0.95)
    assert (lo, hi) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
    assert (hi if alternative == "greater" else lo) in (math.inf, -math.inf)
    u_lo, u_hi = s.unpaired_ci_low, s.unpaired_ci_high
    assert (u_hi if alternative == "greater" else u_lo) in (math.inf, -math.inf)


def test_cli_test_t_records_the_deciding_test(demo_dir, tmp_path):
    from support import run_cli

    out = tmp_path / "c.json"
    r = run_cli("compare", "--lane", demo_dir / "lexical.run", "--lane", demo_dir / "dense.run", "--qrels",
                demo_dir / "qrels-test.txt", "--resamples", "999", "--test", "t", "--out", out)
    assert r.returncode == 0, r.stderr
    payload = json.loads(out.read_text())
    assert payload["settings"]["test"] == "t"
    row = payload["comparisons"][0]
    assert row["test"] == "t" and row["t_agrees"] is None and isinstance(row["randomization_agrees"], bool)
    bad = run_cli("compare", "--lane", demo_dir / "lexical.run", "--qrels", demo_dir / "qrels-test.txt", "--test", "z")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
