"""Issue 29's two wrong numbers, against hand computations.

1. A unit whose mean difference is exactly zero in the rationals is a tie, not a win or a
   loss, although the float subtraction leaves rounding: (0.3 − 0.2) + (0.1 − 0.2) is
   −2.8e-17. Four queries in three units: u1 = {q1, q2} with Δ = +0.1 and −0.1 (a tie),
   u2 = {q3} with Δ = +0.2 (a win), u3 = {q4} with Δ = −0.1 (a loss): W/L/T = 1/1/1,
   two units scored differently, tie rate 1/3, median unit Δ = median(0, 0.2, −0.1) = 0.
2. The same gain on every query (p@10 + 0.1 on 8 queries) has sd = 0 exactly: the effect
   size, the t-test p and the BCa interval are undefined (SPEC §7) and ``--test t`` cannot
   call it better; the mean difference is 0.1 and all 8 queries are wins.
"""

from __future__ import annotations

import numpy as np
import pytest

import rankscope_tui
from rankscope_tui.kernel.statistics.paired import TIE_TOLERANCE, paired_statistics
from rankscope_tui.kernel.statistics.verdict import RowInput, decide

B = 999


def test_the_hand_case_has_rounding_to_decide():
    # without rounding there would be nothing to test
    assert (0.3 - 0.2) + (0.1 - 0.2) != 0.0
    assert abs((0.3 - 0.2) + (0.1 - 0.2)) < TIE_TOLERANCE


def test_a_unit_with_zero_mean_difference_is_a_tie():
    b = np.array([0.2, 0.2, 0.5, 0.5])
    c = np.array([0.3, 0.1, 0.7, 0.4])
    s = paired_statistics(b, c, ["q1", "q2", "q3", "q4"], resamples=B, units=["u1", "u1", "u2", "u3"])
    assert (s.wins, s.losses, s.ties) == (1, 1, 1)
    assert s.n_nonzero == 2 and s.n_units == 3 and s.n == 4
    assert s.tie_rate == pytest.approx(1 / 3, abs=1e-15)
    assert s.median_difference == 0.0


def test_per_query_ties_within_rounding():
    # q1: 0.3 − 0.2 − 0.1 computed as two subtractions on the same grid values
    b = np.array([0.1, 0.2, 0.4])
    c = np.array([(0.3 - 0.2), 0.5, 0.3])  # q1's Δ is 0.1 − 0.1 up to rounding (2.8e-17)
    assert c[0] - b[0] != 0.0
    s = paired_statistics(b, c, ["q1", "q2", "q3"], resamples=0)
    assert (s.wins, s.losses, s.ties) == (1, 1, 1)


def _constant_gain() -> tuple[np.ndarray, np.ndarray, list[str]]:
    tenths = [1, 2, 3, 4, 5, 6, 7, 2]
    b = np.array([k / 10 for k in tenths])
    c = np.array([(k + 1) / 10 for k in tenths])  # p@10 one relevant hit better on every query
    return b, c, [f"q{i}" for i in range(1, 9)]


def test_a_constant_difference_has_zero_sd():
    b, c, q = _constant_gain()
    d = c - b
    assert np.std(d, ddof=1) > 0.0  # rounding makes the plain sd non-zero
    s = paired_statistics(b, c, q, resamples=B)
    assert s.sd == 0.0
    assert s.effect_size is None and s.t_p is None and s.bca is None
    assert s.difference == pytest.approx(0.1, abs=1e-15)
    assert (s.wins, s.losses, s.ties) == (8, 0, 0)
    for test in ("t", "randomization"):
        row = decide([RowInput("b", "c", "p@10", s)], correction="holm", test=test).rows[0]
        assert row.bca_low is None and row.bca_high is None and row.effect_size is None and row.t_p is None
        if test == "t":
            assert row.verdict != "better", row.verdict


def test_the_api_says_the_same():
    b, c, q = _constant_gain()
    row = rankscope_tui.paired(b, c, q, metric="p@10").row
    assert row.t_p is None and row.effect_size is None and row.bca_low is None
    assert (row.wins, row.losses, row.ties) == (8, 0, 0)
