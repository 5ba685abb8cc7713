"""Power, the minimum detectable effect, the queries needed and the randomization floor,
checked against statsmodels' ``TTestPower``, hand-worked counts and simulation; compare's
rows and family carry them in every face; ``rankscope plan`` solves the same equations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower
from support import run_cli, shared_path

from rankscope_tui.kernel.statistics import paired as pa
from rankscope_tui.kernel.statistics import power as pw
from rankscope_tui.kernel.statistics import randomization as rz
from rankscope_tui.kernel.statistics import verdict as vd

SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "larger"}
CASES = [(114, 0.05, "two-sided"), (30, 0.05 / 3, "two-sided"), (225, 0.01, "greater"), (12, 0.05, "less"),
         (2000, 0.05 / 12, "two-sided")]


def qids_for(n: int) -> list[str]:
    return sorted((f"q{i}" for i in range(n)), key=str.encode)


# --- the formulas against statsmodels --------------------------------------------------------


@pytest.mark.parametrize("n,alpha,alternative", CASES)
def test_power_and_detectable_effect_equal_statsmodels(n, alpha, alternative):
    oracle = TTestPower()
    alt = SM_ALTERNATIVE[alternative]
    for d in (0.05, 0.2, 0.5):
        expected = oracle.power(d, n, alpha, alternative=alt)
        if math.isnan(expected):  # scipy's noncentral t cdf is NaN that far in its tail (λ = 22): power is 1
            assert d * math.sqrt(n) > 20 and pw.t_power(d, n, alpha, alternative) == pytest.approx(1.0, abs=1e-12)
        else:
            assert pw.t_power(d, n, alpha, alternative) == pytest.approx(expected, abs=1e-9)
    for power in (0.5, 0.8, 0.95):
        mine = pw.detectable_effect(n, alpha, power, alternative)
        # statsmodels' own solver stops at a looser tolerance: its power at ours is the target
        assert oracle.power(mine, n, alpha, alternative=alt) == pytest.approx(power, abs=1e-9)
        assert mine == pytest.approx(oracle.solve_power(nobs=n, alpha=alpha, power=power, alternative=alt), rel=1e-4)


@pytest.mark.parametrize("n,alpha,alternative", CASES)
def test_queries_needed_is_the_ceiling_of_statsmodels_solution(n, alpha, alternative):
    oracle = TTestPower()
    alt = SM_ALTERNATIVE[alternative]
    for effect in (0.1, 0.25, 0.6):
        for power in (0.8, 0.9):
            exact = oracle.solve_power(effect_size=effect, alpha=alpha, power=power, alternative=alt)
            assert pw.queries_needed(effect, alpha, power, alternative) == max(2, math.ceil(exact))


def test_queries_needed_edges():
    assert pw.queries_needed(0.0, 0.05) is None  # no difference: no sample reaches power
    assert pw.queries_needed(1e-6, 0.05) is None  # beyond MAX_QUERIES
    assert pw.queries_needed(50.0, 0.05) == 2


# --- the randomization floor ------------------------------------------------------------------


def test_randomization_floor_by_hand():
    # 5 non-zero differences: 2 of the 32 sign patterns are as extreme as a perfect result
    assert pw.randomization_floor(5, 999) == pytest.approx((1 + 999 * 2 / 32) / 1000)
    assert pw.randomization_floor(5, 999, "greater") == pytest.approx((1 + 999 / 32) / 1000)
    assert pw.randomization_floor(60, 9999) == pytest.approx(1 / 10000, rel=1e-12)
    assert pw.randomization_floor(0, 999) == 1.0
    assert pw.randomization_floor(10, 0) is None


@pytest.mark.parametrize("nonzero", [4, 6, 9])
def test_randomization_floor_is_what_the_product_test_gives_a_perfect_result(nonzero):
    """A perfect result (every non-zero difference positive) through the product's own test:
    its p is (1 + e)/(B + 1), e ~ Binomial(B, q); the floor is its mean (within 5 sd)."""
    B = 9999
    d = np.concatenate([np.linspace(0.1, 0.5, nonzero), np.zeros(7)])
    p = rz.randomization_test(d, resamples=B, seed=11).p
    q = 2.0 ** (1 - nonzero)
    sd_p = math.sqrt(B * q * (1 - q)) / (B + 1)
    assert abs(p - pw.randomization_floor(nonzero, B)) <= 5 * sd_p + 1e-12


def test_unresolvable_row_says_so():
    b = np.zeros(40)
    c = b.copy()
    c[:4] = 0.5  # 4 non-zero differences: a perfect result's p is about 1/8
    s = pa.paired_statistics(b, c, qids_for(40), resamples=999)
    row = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    assert row.power.resolvable is False and row.power.randomization_floor > 0.05
    from rankscope_tui.render.power import row_line

    assert "unresolvable, even a perfect result could not be established" in row_line(row)


# --- the family's false-positive chance -------------------------------------------------------


def test_family_false_positive_by_hand():
    f = pw.family_false_positive(0.05, 3, "holm")
    assert f["uncorrected"] == pytest.approx(1 - 0.95 ** 3) and round(f["uncorrected"], 3) == 0.143
    assert f["corrected"] == 0.05 and "≤ α = 0.05" in f["holds"]
    assert pw.family_false_positive(0.05, 3, "none")["corrected"] == pytest.approx(0.142625)
    assert pw.family_false_positive(0.05, 0, "holm")["uncorrected"] == 0.0


# --- compare rows -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def family():
    rng = np.random.default_rng(5)
    n = 80
    b = rng.uniform(0, 1, n)
    rows = [vd.RowInput("base", f"c{k}", "m", pa.paired_statistics(b, np.clip(b + rng.normal(0.03 * k, 0.15, n), 0, 1),
                                                                  qids_for(n), resamples=999))
            for k in range(3)]
    return vd.decide(rows, min_delta=0.02)


def test_row_mde_uses_the_rows_corrected_alpha(family):
    oracle = TTestPower()
    for row in family.rows:
        p = row.power
        assert p.alpha == row.threshold  # Holm: α/(J − j + 1) by the row's rank
        assert p.mde == pytest.approx(row.sd * oracle.solve_power(nobs=row.n_units, alpha=row.threshold, power=0.8),
                                      rel=1e-5)
        exact = oracle.solve_power(effect_size=0.02 / row.sd, alpha=row.threshold, power=0.8)
        assert p.target_delta == 0.02 and p.target_from == "min_delta" and p.needed == math.ceil(exact)
        assert p.randomization_floor == pytest.approx(1 / 1000, rel=1e-6) and p.resolvable


def test_observed_delta_is_the_target_without_min_delta(family):
    rows = [vd.RowInput(r.baseline, r.candidate, r.metric, r.stats) for r in family.rows]
    res = vd.decide(rows, correction="bonferroni")
    for r in res.rows:
        assert r.power.target_from == "observed" and r.power.target_delta == pytest.approx(abs(r.difference))
        assert r.power.alpha == pytest.approx(0.05 / 3)


def test_json_and_text_carry_the_power_and_the_family_chance(family):
    d = family.as_dict(reasons=True)
    json.dumps(d, allow_nan=False)
    fam = d["settings"]["family_false_positive"]
    assert fam["family_size"] == 3 and fam["uncorrected"] == pytest.approx(0.142625)
    row = d["comparisons"][0]
    assert set(row["power"]) >= {"mde", "randomization_floor", "resolvable", "needed", "target_delta", "approximation"}
    assert row["power"]["approximation"].startswith("paired t approximation")
    from rankscope_tui.render.power import power_lines

    lines = power_lines(family)
    assert lines[0].startswith("family of J = 3 tests") and "= 0.143" in lines[0]
    assert len(lines) == 4 and all("would be established with 80% power" in x for x in lines[1:])


def test_sd_zero_row_has_reasons_not_nulls_in_text():
    b = np.arange(20) / 64
    s = pa.paired_statistics(b, b + 0.25, qids_for(20), resamples=999)
    row = vd.decide([vd.RowInput("a", "b", "m", s)]).rows[0]
    d = row.as_dict(reasons=True)["power"]
    assert d["mde"] is None and d["mde_reason"] == "undefined: sd of the differences is 0"
    from rankscope_tui.render.power import row_line

    text = row_line(row)
    assert "None" not in text and "nan" not in text and "sd of the differences is 0" in text


# --- through the faces ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cranfield():
    c = shared_path("cranfield")
    return c


def test_compare_cli_prints_and_writes_the_power_lines(cranfield, tmp_path):
    out = tmp_path / "c.json"
    r = run_cli("compare", "--qrels", cranfield / "qrels-test.txt", "--lane", f"bm25={cranfield / 'lanes/bm25.run'}",
                "--lane", f"dense={cranfield / 'lanes/dense.run'}", "--candidate", "dense", "--resamples", "999",
                "--out", out)
    assert r.returncode == 0, r.stderr
    assert "family of J = 1 test at α = 0.05" in r.stdout
    assert "dense vs bm25 on ndcg@10: with n = 114 queries" in r.stdout and "needs about" in r.stdout
    row = json.loads(out.read_text())["comparisons"][0]
    oracle = TTestPower()
    assert row["power"]["mde"] == pytest.approx(row["power"]["sd"] * oracle.solve_power(nobs=114, alpha=0.05, power=0.8),
                                                rel=1e-5)


def test_api_compare_carries_power(cranfield):
    import rankscope_tui as rs

    c = rs.compare(cranfield / "qrels-test.txt", {"bm25": cranfield / "lanes/bm25.run",
                                                  "dense": cranfield / "lanes/dense.run"},
                   candidates="dense", resamples=999)
    d = c.as_dict()
    assert d["comparisons"][0]["power"]["needed"] > 114  # the observed Δ is not established on 114 queries
    assert d["settings"]["family_false_positive"]["corrected"] == pytest.approx(0.05)


def test_readme_quotes_the_power_line_compare_prints(cranfield):
    from support import REPO

    r = run_cli("compare", "--qrels", cranfield / "qrels-test.txt", "--lane", f"bm25={cranfield / 'lanes/bm25.run'}",
                "--lane", f"dense={cranfield / 'lanes/dense.run'}", "--candidate", "dense")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("dense vs bm25 on ndcg@10: with n = 114"))
    assert "> " + line in (REPO / "README.md").read_text(encoding="utf-8")


def test_unresolvable_is_about_the_deciding_test():
    """With --test t the randomization floor is printed but does not bound the verdict."""
    b = np.zeros(40)
    c = b.copy()
    c[:4] = 0.5
    s = pa.paired_statistics(b, c, qids_for(40), resamples=999)
    row = vd.decide([vd.RowInput("a", "b", "m", s)], test="t").rows[0]
    d = row.as_dict(reasons=True)["power"]
    assert d["resolvable"] is None and d["resolvable_reason"].startswith("the t-test decides")
    from rankscope_tui.render.power import row_line

    assert "unresolvable" not in row_line(row) and "randomization floor p = " in row_line(row)


def test_power_sentence_quotes_its_numbers(family):
    for row in family.rows:
        p = row.power
        want = (f"with n = {p.n} queries and this spread, Δ ≥ {p.mde:.3f} would be established (80% power at "
                f"α = {p.alpha:.4g}, paired t approximation: noncentral t, df = n − 1); "
                f"Δ = 0.020 needs about {p.needed:,} queries")
        assert p.as_dict()["sentence"] == want


# The root finder behind the MDE and the queries needed: SciPy's brentq is the oracle (the
# same Brent steps and stopping rule, so the same float in practice; 1e-9 is the contract).
BRENT_CASES = [
    (lambda x: x**3 - 2 * x - 5, 2.0, 3.0, 1e-12),  # Wallis's cubic, Brent's own example
    (lambda x: math.cos(x) - x, 0.0, 1.0, 1e-12),
    (lambda x: math.exp(x) - 10.0, -5.0, 10.0, 1e-12),
    (lambda x: math.tanh(50 * (x - 0.123)), -4.0, 9.0, 1e-12),  # flat far from the root: bisection steps
    (lambda x: x * x - 2, 0.0, 2.0, 1e-12),
    (lambda x: x - 7.25, 2.0, 1e7, 1e-6),  # the queries_needed bracket and tolerance
    (lambda x: math.atan(x - 1e3), 2.0, 1e7, 1e-6),
]


@pytest.mark.parametrize("case", range(len(BRENT_CASES)))
def test_brent_root_equals_scipy_brentq(case):
    from scipy.optimize import brentq

    f, a, b, xtol = BRENT_CASES[case]
    want = brentq(f, a, b, xtol=xtol)
    got = pw.brent_root(f, a, b, xtol=xtol)
    assert abs(got - want) <= 1e-9 * max(1.0, abs(want))
    assert got == want


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
@pytest.mark.parametrize("alpha", [0.001, 0.05, 0.2])
@pytest.mark.parametrize("power", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("n", [2, 3, 10, 50, 225, 5000])
def test_detectable_effect_root_equals_scipy_brentq(n, power, alpha, alternative):
    from scipy.optimize import brentq

    pw.detectable_effect.cache_clear()
    got = pw.detectable_effect(n, alpha, power, alternative)
    hi = 1.0
    while pw.t_power(hi, n, alpha, alternative) < power:
        hi *= 2.0
    want = brentq(lambda d: pw.t_power(d, n, alpha, alternative) - power, 0.0, hi, xtol=1e-12)
    assert abs(got - want) <= 1e-9
    assert got == want


def test_brent_root_refuses_a_bracket_without_a_sign_change():
    with pytest.raises(ValueError, match="differ in sign"):
        pw.brent_root(lambda x: x * x + 1, -1.0, 1.0, xtol=1e-12)

