"""``--test bootstrap``: the null-centred paired bootstrap test (Efron & Tibshirani 1993,
§16.4) against a full enumeration of the bootstrap distribution, and as the deciding test."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from rankscope_tui.kernel.statistics.paired import paired_statistics
from rankscope_tui.kernel.statistics.verdict import RowInput, decide

# four differences (candidate − baseline): mean 0.15
BASE = np.array([0.2, 0.5, 0.1, 0.4])
CAND = np.array([0.5, 0.6, 0.4, 0.3])


def _exact_share(d: np.ndarray, alternative: str) -> float:
    """Every one of the n^n equally likely resamples of the centred differences, counted
    by hand: the share whose mean is at least as extreme as the observed mean."""
    n, obs = d.size, float(d.mean())
    centred = d - obs
    hit = 0
    for idx in itertools.product(range(n), repeat=n):
        m = sum(centred[i] for i in idx) / n
        if alternative == "greater":
            hit += m >= obs - 1e-12
        else:
            hit += abs(m) >= abs(obs) - 1e-12
    return hit / n ** n


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_p_matches_full_enumeration_within_monte_carlo_error(alternative):
    B = 40_000
    s = paired_statistics(BASE, CAND, ["a", "b", "c", "d"], resamples=B, seed=7, alternative=alternative)
    q = _exact_share(CAND - BASE, alternative)
    # two-sided: centred Δ' = (0.15, -0.05, 0.15, -0.25); 35 of the 256 resamples have |mean| >= 0.15
    if alternative == "two-sided":
        assert q == pytest.approx(35 / 256)
    expect = (1 + B * q) / (B + 1)
    mc_sd = np.sqrt(q * (1 - q) / B)
    assert s.bootstrap_p == pytest.approx(expect, abs=5 * mc_sd)


def test_p_counts_the_replicates_it_reads():
    """p = (1 + #{|rep − Δ̄| ≥ |Δ̄|}) / (B + 1) over the paired replicates, counted here."""
    s = paired_statistics(BASE, CAND, ["a", "b", "c", "d"], resamples=999, seed=1)
    reps = s.replicates
    count = sum(1 for r in reps if abs(r - s.difference) >= abs(s.difference) - 1e-12)
    assert s.bootstrap_p == (1 + count) / 1000


def test_bootstrap_decides_a_holm_family():
    rng = np.random.default_rng(3)
    base = rng.uniform(0, 1, 60)
    rows = []
    for shift in (0.08, 0.02, 0.0):
        cand = np.clip(base + shift + rng.normal(0, 0.1, 60), 0, 1)
        s = paired_statistics(base, cand, [f"q{i:02d}" for i in range(60)], resamples=1999, seed=0)
        rows.append(RowInput("b", f"c{shift}", "m", s))
    res = decide(rows, test="bootstrap")
    raw = [r.stats.bootstrap_p for r in rows]
    want = multipletests(raw, alpha=0.05, method="holm")[1]
    assert [r.adjusted_p for r in res.rows] == pytest.approx(list(want))
    assert res.rows[0].verdict == "better"
    assert all(r.test == "bootstrap" for r in res.rows)
    d = res.rows[0].as_dict()
    assert d["bootstrap_p"] == raw[0] and res.as_dict()["settings"]["test"] == "bootstrap"
    assert res.rows[0].randomization_agrees is not None  # the randomization test is the check


def test_no_resamples_is_inconclusive_with_a_reason():
    s = paired_statistics(BASE, CAND, ["a", "b", "c", "d"], resamples=0)
    res = decide([RowInput("b", "c", "m", s)], test="bootstrap")
    assert res.rows[0].verdict == "inconclusive"
    assert "no bootstrap test was run" in res.warnings[0]
    assert res.rows[0].as_dict(reasons=True)["bootstrap_p_reason"]


def test_compare_cli_says_the_bootstrap_test_decides(tmp_path, capsys):
    """``compare --test bootstrap`` on a pair: the adjusted column, the sentence and the
    Methods name the bootstrap test, and ``--out`` carries its p as the deciding one."""
    import json

    from rankscope_tui import cli as C

    qrels = "".join(f"q{i} 0 r{i} 1\n" for i in range(40))
    # lane a ranks the relevant doc first on every query, lane b only on every other one
    a = "".join(f"q{i} Q0 r{i} 1 2.0 a\nq{i} Q0 x{i} 2 1.0 a\n" for i in range(40))
    b = "".join(f"q{i} Q0 {'r' if i % 2 else 'x'}{i} 1 2.0 b\nq{i} Q0 {'x' if i % 2 else 'r'}{i} 2 1.0 b\n"
                for i in range(40))
    for name, text in (("qrels", qrels), ("a", a), ("b", b)):
        (tmp_path / name).write_text(text)
    out = tmp_path / "c.json"
    rc = C.main(["compare", "--lane", f"b={tmp_path / 'b'}", "--lane", f"a={tmp_path / 'a'}", "--qrels",
                 str(tmp_path / "qrels"), "--metrics", "rr", "--test", "bootstrap", "--resamples", "999",
                 "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "adj boot p" in text and "null-centred bootstrap test" in text and "Efron and Tibshirani, 1993" in text
    row = json.loads(out.read_text())["comparisons"][0]
    assert row["test"] == "bootstrap" and row["adjusted_p"] == row["bootstrap_p"]
    # Δ is 0.5 on 20 queries and 0 on 20 (mean 0.25, centred ±0.25): a resampled |mean| reaches 0.25
    # only when all 40 draws fall on one side (chance 2^-39), so p is the floor 1/(B + 1)
    assert row["bootstrap_p"] == pytest.approx(1 / 1000) and row["verdict"] == "better"
