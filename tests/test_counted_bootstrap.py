"""The counted bootstrap (``resampling.bootstrap_means_counted``, what every interval of
evaluate reads): the protocol's index draws read as counts, one product for every column.

Oracles: ``numpy.random.default_rng(seed).integers(0, n, (B, n))`` directly (the draws),
the exact rational mean of each drawn row (``fractions.Fraction``), an integer matrix
product without BLAS (exactness of the grid), and ``scipy.stats.bootstrap`` (the same
draws, its replicates within rounding)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.statistics import intervals as iv
from rankscope_tui.kernel.statistics import resampling as rs


def _exact_means(values: np.ndarray, B: int, seed: int) -> list[list[Fraction]]:
    """Each replicate's mean in exact rational arithmetic, from the protocol's draws."""
    n, m = values.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    exact = [[Fraction(float(x)) for x in values[:, j]] for j in range(m)]
    return [[sum((exact[j][i] for i in row.tolist()), Fraction(0)) / n for j in range(m)] for row in idx]


def _mixed_columns(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([
        rng.random(n),                                  # an nDCG-like column in [0, 1)
        np.round(rng.random(n), 1),                     # p@10-like: tenths
        rng.normal(-3.0, 40.0, n),                      # signed, wider
        rng.random(n) * 10.0 ** rng.integers(-12, 1, n),  # magnitudes from 1e-12 to 1
        np.full(n, 0.3),                                # no variation
        np.zeros(n),
    ])


@pytest.mark.parametrize("n", [2, 5, 37, 200])
def test_replicates_are_the_exact_means_of_the_drawn_rows_within_an_ulp_and_the_grid(n):
    values = _mixed_columns(n, n)
    B = 60
    got = rs.bootstrap_means_counted(values, B, seed=7)
    want = _exact_means(values, B, 7)
    b = 53 - n.bit_length()
    for j in range(values.shape[1]):
        peak = float(np.max(np.abs(values[:, j])))
        grid = math.ldexp(1.0, math.frexp(peak)[1] - 2 * b) if peak else 0.0  # the grid's step for this column
        for r in range(B):
            exact = want[r][j]
            err = abs(Fraction(float(got[r, j])) - exact)
            # two roundings (the sum, the division) and at most half a grid step moved per value
            assert err <= 2 * Fraction(math.ulp(float(exact))) + Fraction(grid), (j, r, float(err))


def test_the_counts_are_the_protocols_draws():
    """With one-hot columns, column i's replicate times n is how often query i was drawn."""
    n, B, seed = 23, 400, 5
    got = rs.bootstrap_means_counted(np.eye(n), B, seed=seed, chunk=3)
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    counts = np.stack([np.bincount(row, minlength=n) for row in idx])
    assert np.array_equal(np.rint(got * n).astype(np.int64), counts)


@pytest.mark.parametrize("n", [3, 150, 4097])
def test_the_grid_sums_are_exact_whatever_the_order(n):
    """``counts @ weights`` by BLAS equals the integer product (numpy's int64 matmul, no BLAS):
    every product and partial sum is an integer below 2**53."""
    values = _mixed_columns(n, 3)
    grid = rs.ExactGrid(values)
    assert np.all(np.abs(grid.weights) <= 2.0**grid.b) and n * 2.0**grid.b < 2.0**53
    counts = np.stack([np.bincount(r, minlength=n) for r in np.random.default_rng(1).integers(0, n, (17, n))])
    by_blas = counts.astype(np.float64) @ grid.weights
    by_ints = counts @ grid.weights.astype(np.int64)
    assert np.array_equal(by_blas, by_ints.astype(np.float64))
    reversed_order = counts[:, ::-1].astype(np.float64) @ grid.weights[::-1]
    assert np.array_equal(grid.means(reversed_order), grid.means(by_blas))


def test_chunks_threads_and_column_company_change_no_bit():
    values = _mixed_columns(301, 8)
    one = rs.bootstrap_means_counted(values, 999, seed=2, threads=1)
    for threads in (1, 2):
        for chunk in (None, 1, 7, 5000):
            assert np.array_equal(rs.bootstrap_means_counted(values, 999, seed=2, chunk=chunk, threads=threads), one)
    for j in range(values.shape[1]):  # a column alone gets the bits it gets beside the others
        assert np.array_equal(rs.bootstrap_means_counted(values[:, j], 999, seed=2), one[:, j])


@pytest.mark.parametrize("n", [2, 12, 129, 1000])
def test_replicates_equal_scipys_within_rounding(n):
    x = np.random.default_rng(n).standard_normal(n) * 3 + 0.2
    ours = rs.bootstrap_means_counted(x, 1999, seed=4)
    ref = stats.bootstrap((x,), np.mean, n_resamples=1999, method="percentile", rng=np.random.default_rng(4))
    assert np.allclose(ours, ref.bootstrap_distribution, rtol=0, atol=8 * np.spacing(np.max(np.abs(x))))


def test_no_variation_stays_zero_width_beside_other_columns():
    values = _mixed_columns(80, 4)
    got = iv.bootstrap_intervals(values, resamples=999, seed=1)
    assert got[4].low == got[4].high and got[4].note == iv.NOTE_NO_VARIATION
    assert got[5].low == got[5].high == 0.0
    assert all(c.informative for c in got[:4])


def test_extreme_magnitudes_neither_overflow_nor_vanish():
    rng = np.random.default_rng(0)
    values = np.column_stack([rng.random(50) * 1e307, rng.random(50) * 1e-300, -rng.random(50) * 1e307])
    got = rs.bootstrap_means_counted(values, 99, seed=3)
    assert np.all(np.isfinite(got))
    want = _exact_means(values, 99, 3)
    for j in range(3):
        assert np.allclose(got[:, j], [float(w[j]) for w in want], rtol=1e-15, atol=0)


def test_one_query_and_no_resamples():
    assert np.array_equal(rs.bootstrap_means_counted([0.7], 5, seed=0), np.full(5, 0.7))
    assert rs.bootstrap_means_counted(np.ones((4, 3)), 0).shape == (0, 3)
    with pytest.raises(InputError):
        rs.bootstrap_means_counted([], 10)
    with pytest.raises(InputError):
        rs.bootstrap_means_counted([0.1, np.inf], 10)
