"""Intervals and the resampling stream, checked against independent oracles (scipy, statsmodels, numpy)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import oracle_streams as streams
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.statistics import intervals as iv
from rankscope_tui.kernel.statistics import resampling as rs

Z95 = 1.959963984540054


# --- Wilson, Wald, rule of three ---------------------------------------------


def test_z_value_is_the_two_sided_normal_quantile():
    assert iv.z_value(0.95) == pytest.approx(Z95, abs=1e-15)
    assert iv.z_value(0.99) == pytest.approx(stats.norm.ppf(0.995), abs=1e-12)


def test_wilson_8_of_12_matches_the_lesson():
    w = iv.wilson(8, 12)
    assert (round(w.low, 3), round(w.high, 3)) == (0.391, 0.862)
    assert w.value == pytest.approx(8 / 12)
    assert w.method == "wilson" and w.level == 0.95 and w.n == 12


@pytest.mark.parametrize("k,n", [(0, 1), (0, 20), (3, 20), (8, 12), (19, 20), (20, 20), (1, 1000), (500, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, confidence):
    lo, hi = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    w = iv.wilson(k, n, confidence)
    assert w.low == pytest.approx(lo, abs=1e-12)
    assert w.high == pytest.approx(hi, abs=1e-12)


@pytest.mark.parametrize("n", [1, 12, 60, 73, 1000])
def test_zero_events_upper_limit_is_z2_over_n_plus_z2(n):
    w = iv.wilson(0, n)
    assert w.low == 0.0
    assert w.high == pytest.approx(Z95**2 / (n + Z95**2), rel=1e-12)
    assert iv.wilson_upper_zero(n) == pytest.approx(Z95**2 / (n + Z95**2), rel=1e-14)
    # all events: the mirror image
    full = iv.wilson(n, n)
    assert full.high == 1.0 and full.low == pytest.approx(1 - Z95**2 / (n + Z95**2), rel=1e-12)


def test_wald_collapses_at_zero_events_where_wilson_does_not():
    wald, wil = iv.wald(0, 20), iv.wilson(0, 20)
    assert wald.low == wald.high == 0.0 and not wald.informative
    assert "collapsed" in wald.note
    assert wil.high > 0.1
    lo, hi = proportion_confint(7, 20, alpha=0.05, method="normal")
    w = iv.wald(7, 20)
    assert (w.low, w.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))


def test_rule_of_three_and_labelled_levels():
    assert iv.rule_of_three(60) == 0.05
    assert iv.rule_of_three(300) == pytest.approx(0.01)
    wil, r3, wald = iv.zero_event_bounds(60)
    assert wil.level == pytest.approx(0.975) and "one-sided" in wil.method
    assert r3.level == 0.95 and r3.high == 0.05 and "rule of three" in r3.method
    assert wald.high == 0.0
    with pytest.raises(InputError):
        iv.rule_of_three(0)


def test_negatives_needed_at_five_percent():
    assert iv.negatives_needed(0.05, 0.95) == (73, 60)


@pytest.mark.parametrize("t", [0.2, 0.1, 0.05, 0.03, 0.01, 0.001])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_negatives_needed_is_the_smallest_n_that_bounds_t(t, confidence):
    wn, three = iv.negatives_needed(t, confidence)
    assert iv.wilson_upper_zero(wn, confidence) <= t < iv.wilson_upper_zero(wn - 1, confidence)
    assert 3 / three <= t + 1e-15 and 3 / (three - 1) > t


def test_bad_counts_and_levels_raise_input_error():
    with pytest.raises(InputError):
        iv.wilson(5, 3)
    with pytest.raises(InputError):
        iv.wilson(1, 3, confidence=1.0)
    with pytest.raises(InputError):
        iv.negatives_needed(0.0)


def test_interval_as_dict_is_strict_json():
    one_sided = iv.Interval(0.1, 0.02, math.inf, "percentile bootstrap", 40, 0.95)
    d = one_sided.as_dict()
    json.dumps(d, allow_nan=False)
    assert d["high"] is None and "one-sided" in d["high_reason"]
    missing = iv.Interval(0.3, None, None, "percentile bootstrap", 40, 0.95, reason="resampling skipped")
    d = missing.as_dict()
    assert d["low"] is None and d["low_reason"] == "resampling skipped"
    nan_value = iv.Interval(float("nan"), None, None, "wilson", 0, 0.95).as_dict()
    assert nan_value["value"] is None and "value_reason" in nan_value
    json.dumps(nan_value, allow_nan=False)


# --- the resampling stream ----------------------------------------------------


def _rejections(n: int, draws: int, seed: int) -> int:
    """Independent count of Lemire rejections in the first `draws` 32-bit outputs (numpy's next_uint32 order)."""
    words = np.random.default_rng(seed).bit_generator.random_raw((draws + 1) // 2)
    halves = np.empty(words.size * 2, dtype=np.uint64)
    halves[0::2] = words & np.uint64(0xFFFFFFFF)
    halves[1::2] = words >> np.uint64(32)
    threshold = (2**32 - n) % n
    return int(np.count_nonzero((halves[:draws] * np.uint64(n)) & np.uint64(0xFFFFFFFF) < threshold))


def test_numpy_chunked_integers_reproduce_the_single_draw():
    """The finding the protocol rests on: PCG64 keeps the spare 32-bit half in its state between calls."""
    for n in (7, 7001):
        big = np.random.default_rng(3).integers(0, n, size=(401, n))
        rng = np.random.default_rng(3)
        parts = [rng.integers(0, n, size=(r, n)) for r in (1, 3, 97, 300)]
        assert np.array_equal(np.vstack(parts), big)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 30, 1024, 7001, 10000])
@pytest.mark.parametrize("chunk", [None, 1, 3, 64])
def test_index_stream_equals_rng_integers(n, chunk):
    B = 211 if n < 5000 else 101
    expected = np.random.default_rng(11).integers(0, n, size=(B, n))
    assert np.array_equal(streams.bootstrap_indices(n, B, seed=11, chunk=chunk), expected)


def test_index_stream_rejection_path_is_exercised_and_exact():
    n, B = 10000, 400
    assert _rejections(n, B * n + 100, seed=5) > 0  # the rare Lemire redraw does happen here
    expected = np.random.default_rng(5).integers(0, n, size=(B, n))
    assert np.array_equal(streams.bootstrap_indices(n, B, seed=5, chunk=7), expected)


@pytest.mark.parametrize("start", [0, 1, 2, 7, 1000, 1001])
def test_half_stream_can_start_mid_stream(start):
    full = rs.HalfStream(4).take(3000)
    assert np.array_equal(rs.HalfStream(4, start=start).take(3000 - start), full[start:])
    pieces = rs.HalfStream(4)
    assert np.array_equal(np.concatenate([pieces.take(k) for k in (1, 2, 5, 2992)]), full)


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_never_change_the_numbers(threads):
    x = np.random.default_rng(0).random((257, 2))
    one = rs.bootstrap_means(x, 2999, seed=6, chunk=5, threads=1)
    assert np.array_equal(rs.bootstrap_means(x, 2999, seed=6, chunk=5, threads=threads), one)
    assert np.array_equal(streams.bootstrap_indices(301, 400, 2, chunk=3, threads=threads),
                          np.random.default_rng(2).integers(0, 301, size=(400, 301)))


def test_callback_errors_surface_from_the_pipeline():
    def boom(_start, _idx):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        rs.walk_stream(0, 50, index_rows=100, on_indices=boom, chunk=3, threads=2)


def test_progress_reaches_one():
    seen = []
    rs.bootstrap_means(np.arange(100.0), 999, progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen) and len(seen) <= 102


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9, 333])
@pytest.mark.parametrize("chunk", [None, 1, 5])
def test_sign_flips_equal_the_protocol(n, chunk):
    expected = 1 - 2 * np.random.default_rng(2).integers(0, 2, size=(157, n))
    assert np.array_equal(streams.sign_flips(n, 157, seed=2, chunk=chunk), expected)


@pytest.mark.parametrize("n", [2, 5, 12, 31, 129, 1000])
def test_bootstrap_replicates_equal_scipy_bit_for_bit(n):
    x = np.random.default_rng(n).standard_normal(n) * 3 + 0.2
    ours = rs.bootstrap_means(x, 1999, seed=4, chunk=13)
    ref = stats.bootstrap((x,), np.mean, n_resamples=1999, method="percentile", rng=np.random.default_rng(4))
    assert np.array_equal(ours, ref.bootstrap_distribution)
    batched = stats.bootstrap(
        (x,), np.mean, n_resamples=1999, method="percentile", rng=np.random.default_rng(4), batch=77
    )
    assert np.array_equal(ours, batched.bootstrap_distribution)  # scipy's batch does not change the stream


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.9833])
def test_percentile_interval_equals_scipy(confidence):
    x = np.random.default_rng(1).beta(0.7, 0.9, 200)
    (got,) = iv.bootstrap_intervals(x, resamples=9999, seed=0, confidence=confidence)
    ref = stats.bootstrap((x,), np.mean, method="percentile", confidence_level=confidence, rng=np.random.default_rng(0))
    assert got.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert got.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert got.value == pytest.approx(np.mean(x), abs=1e-15)
    assert got.note is None and got.method == "percentile bootstrap"


def test_columns_share_one_draw_of_indices():
    rng = np.random.default_rng(9)
    values = np.column_stack([rng.random(80), rng.integers(0, 2, 80).astype(float), rng.random(80) ** 3])
    got = iv.bootstrap_intervals(values, resamples=1999, seed=3)
    for j in range(3):
        ref = stats.bootstrap(
            (values[:, j],), np.mean, n_resamples=1999, method="percentile", rng=np.random.default_rng(3)
        )
        assert got[j].low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert got[j].high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    reps = rs.bootstrap_means(values, 1999, seed=3)
    idx = np.random.default_rng(3).integers(0, 80, size=(1999, 80))
    assert np.array_equal(reps[:, 1], values[idx, 1].mean(axis=1))


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_percentile_interval_follows_the_alternative(alternative):
    x = np.random.default_rng(5).normal(0.05, 0.3, 150)
    (got,) = iv.bootstrap_intervals(x, resamples=4999, seed=1, alternative=alternative)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=4999, method="percentile", alternative=alternative, rng=np.random.default_rng(1)
    ).confidence_interval
    assert got.low == pytest.approx(ref.low, abs=1e-12) or got.low == ref.low == -np.inf
    assert got.high == pytest.approx(ref.high, abs=1e-12) or got.high == ref.high == np.inf
    json.dumps(got.as_dict(), allow_nan=False)


def test_flags_small_n_and_no_variation():
    (small,) = iv.bootstrap_intervals(np.random.default_rng(0).random(12), resamples=999)
    assert small.note == iv.NOTE_COVERAGE
    (flat,) = iv.bootstrap_intervals(np.full(50, 0.4), resamples=999)
    assert flat.low == flat.high == pytest.approx(0.4)
    assert flat.note == iv.NOTE_NO_VARIATION and not flat.informative
    assert "[" not in flat.describe() and "not informative" in flat.describe()
    (big,) = iv.bootstrap_intervals(np.random.default_rng(0).random(30), resamples=999)
    assert big.note is None


def test_zero_resamples_gives_no_interval():
    (got,) = iv.bootstrap_intervals([0.1, 0.5, 0.9], resamples=0)
    assert got.low is None and got.high is None and got.value == pytest.approx(0.5)
    d = got.as_dict()
    assert d["low"] is None and "resamples = 0" in d["low_reason"]


def test_bad_values_raise_input_error():
    with pytest.raises(InputError):
        iv.bootstrap_intervals([0.1, np.nan, 0.3])
    with pytest.raises(InputError):
        iv.bootstrap_intervals([])
    with pytest.raises(InputError):
        iv.bootstrap_intervals([0.1, 0.2], confidence=0)


# --- BCa ------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0.9, 0.95, 1 - 0.05 / 3])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bca_equals_scipy_on_the_same_stream(level, alternative):
    x = np.random.default_rng(21).exponential(0.2, 120) - 0.15  # skewed, so a ≠ 0
    reps = rs.bootstrap_means(x, 9999, seed=0)
    parts = iv.bca_parts(reps, x)
    assert parts.acceleration != 0.0
    lo, hi = iv.bca_bounds(reps, parts, level, alternative)
    ref = stats.bootstrap(
        (x,), np.mean, method="BCa", confidence_level=level, alternative=alternative, rng=np.random.default_rng(0)
    ).confidence_interval
    for got, want in ((lo, ref.low), (hi, ref.high)):
        assert got == want if math.isinf(want) else got == pytest.approx(want, abs=1e-12)


def test_bca_acceleration_matches_the_jackknife():
    x = np.random.default_rng(2).gamma(0.5, 1.0, 40)
    loo = np.array([np.delete(x, i).mean() for i in range(x.size)])
    u = (x.size - 1) * (loo.mean() - loo)
    jack = np.sum(u**3) / (6 * np.sum(u**2) ** 1.5)
    assert iv.bca_parts(rs.bootstrap_means(x, 999), x).acceleration == pytest.approx(jack, rel=1e-9)


def test_bca_is_none_when_every_value_is_equal():
    x = np.full(40, 0.25)
    reps = rs.bootstrap_means(x, 999)
    parts = iv.bca_parts(reps, x)
    assert parts.degenerate and iv.bca_bounds(reps, parts, 0.95) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=999, rng=np.random.default_rng(0))
    assert np.isnan(ref.confidence_interval.low)  # scipy agrees there is no interval
