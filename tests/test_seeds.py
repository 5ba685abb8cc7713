"""Retraining seeds (``compare --seed-runs``): the retraining column beside the interval.

The four columns (mean, SD over queries, SD over retraining, ratio, and "widens by")
are checked against numpy and scipy written out here on five synthetic seed runs; the
sign-reversal count on a case where one seed reverses; the quadrature rule when both
sides are stochastic and their seeds are not shared; and the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from support import run_cli

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.statistics import seeds as sd

N = 120
B = 1999


def qids() -> list[str]:
    return sorted((f"q{i}" for i in range(N)), key=str.encode)


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(8)
    base = rng.random(N)
    # five retrained candidates: a common gain, each seed its own offset and noise
    offsets = [0.030, 0.041, 0.025, 0.036, 0.033]
    cand = {s: np.clip(base + rng.normal(off, 0.1, N), 0, 1) for s, off in zip(range(5), offsets)}
    return base, cand


def se(d: np.ndarray) -> float:
    """scipy's bootstrap standard error of the mean difference, with the protocol's generator."""
    return stats.bootstrap((d,), np.mean, n_resamples=B, method="percentile",
                           rng=np.random.default_rng(0)).standard_error


def test_the_four_columns_equal_numpy(runs):
    base, cand = runs
    got = sd.retraining_spread({0: base}, cand, qids(), resamples=B, seed=0)
    diffs = np.array([np.mean(cand[s] - base) for s in range(5)])
    sd_q = np.mean([se(cand[s] - base) for s in range(5)])
    sd_r = np.std(diffs, ddof=1)
    assert got.rule == "one side retrained" and got.candidate_seeds == (0, 1, 2, 3, 4)
    assert got.mean_difference == pytest.approx(np.mean(diffs), abs=1e-15)
    assert got.sd_queries == pytest.approx(sd_q, rel=1e-12)
    assert got.sd_retraining == pytest.approx(sd_r, rel=1e-12)
    assert got.ratio == pytest.approx(sd_r / sd_q, rel=1e-12)
    assert got.widens_by == pytest.approx(np.hypot(sd_q, sd_r) / sd_q - 1, rel=1e-12)
    assert got.reversals == 0 and got.reversals_out_of == 5
    assert got.warnings == ()  # five seeds: no warning
    json.dumps(got.as_dict(), allow_nan=False)


def test_a_seed_that_reverses_the_sign_is_counted(runs):
    base, cand = runs
    flipped = dict(cand)
    flipped[3] = np.clip(base - 0.05 + np.random.default_rng(1).normal(0, 0.05, N), 0, 1)
    got = sd.retraining_spread({0: base}, flipped, qids(), resamples=B, seed=0)
    diffs = [np.mean(flipped[s] - base) for s in range(5)]
    assert sum(d < 0 for d in diffs) == 1 and np.mean(diffs) > 0
    assert got.reversals == 1 and got.reversals_out_of == 5


def test_a_retrained_baseline_against_a_fixed_candidate(runs):
    base, cand = runs
    got = sd.retraining_spread(cand, {0: base}, qids(), resamples=B, seed=0)
    diffs = np.array([np.mean(base - cand[s]) for s in range(5)])
    assert got.mean_difference == pytest.approx(diffs.mean(), abs=1e-15)
    assert got.sd_retraining == pytest.approx(np.std(diffs, ddof=1), rel=1e-12)


def test_both_stochastic_without_shared_seeds_combine_own_spreads_in_quadrature(runs):
    base, cand = runs
    rng = np.random.default_rng(3)
    base_runs = {s: np.clip(base + rng.normal(0, 0.02, N), 0, 1) for s in range(10, 15)}
    got = sd.retraining_spread(base_runs, cand, qids(), resamples=B, seed=0)
    b_means = np.array([base_runs[s].mean() for s in range(10, 15)])
    c_means = np.array([cand[s].mean() for s in range(5)])
    sd_r = math.sqrt(np.var(b_means, ddof=1) + np.var(c_means, ddof=1))
    assert got.rule == "own spreads in quadrature"
    assert got.sd_retraining == pytest.approx(sd_r, rel=1e-12)
    assert got.mean_difference == pytest.approx(c_means.mean() - b_means.mean(), abs=1e-15)
    sd_q = np.mean([se(cand[c] - base_runs[b]) for b, c in zip(range(10, 15), range(5))])
    assert got.sd_queries == pytest.approx(sd_q, rel=1e-12)
    assert got.reversals_out_of == 25
    # declared shared seeds pair by seed instead, and need the same seeds
    with pytest.raises(InputError, match="seeds differ"):
        sd.retraining_spread(base_runs, cand, qids(), shared=True, resamples=B)
    same = {s - 10: v for s, v in base_runs.items()}
    paired = sd.retraining_spread(same, cand, qids(), shared=True, resamples=B, seed=0)
    diffs = np.array([np.mean(cand[s] - same[s]) for s in range(5)])
    assert paired.rule == "paired by shared seed"
    assert paired.sd_retraining == pytest.approx(np.std(diffs, ddof=1), rel=1e-12)


def test_fewer_than_five_seeds_warn_with_the_relative_error(runs):
    base, cand = runs
    got = sd.retraining_spread({0: base}, {s: cand[s] for s in range(3)}, qids(), resamples=B)
    assert len(got.warnings) == 1 and "3 retraining runs" in got.warnings[0]
    assert f"{1 / math.sqrt(4):.0%}" in got.warnings[0]
    assert sd.relative_sd_error(5) == pytest.approx(0.3536, abs=1e-4)  # seed 001's "roughly 35 %"


def test_seed_lane_names():
    assert sd.parse_seed_lane("dense@3") == ("dense", 3)
    assert sd.parse_seed_lane("dense") is None and sd.parse_seed_lane("a@b") is None
    assert sd.seed_groups(["bm25", "dense@2", "dense@0"]) == {"dense": {0: "dense@0", 2: "dense@2"}}
    with pytest.raises(InputError):
        sd.seed_groups(["dense", "dense@0"])


# --- the command line ------------------------------------------------------------------------


def _seed_run(src, dst, seed: int) -> None:
    """The demo's dense run with its scores jittered by a seeded generator (a 'retrained' run)."""
    rng = np.random.default_rng(seed)
    lines = []
    for line in src.read_text().splitlines():
        q, q0, doc, rank, score, tag = line.split()
        lines.append(f"{q} {q0} {doc} {rank} {float(score) + rng.normal(0, 0.05):.6f} {tag}")
    dst.write_text("\n".join(lines) + "\n")


def test_cli_seed_runs_add_the_retraining_column(demo_dir, tmp_path):
    lanes = ["--lane", f"lexical={demo_dir / 'lexical.run'}"]
    for s in range(5):
        path = tmp_path / f"dense{s}.run"
        _seed_run(demo_dir / "dense.run", path, s)
        lanes += ["--lane", f"dense@{s}={path}"]
    out = tmp_path / "c.json"
    r = run_cli("compare", *lanes, "--qrels", demo_dir / "qrels-test.txt", "--resamples", "999", "--seed-runs",
                "--candidate", "dense", "--out", out)
    assert r.returncode == 0, r.stderr
    payload = json.loads(out.read_text())
    rows = payload["comparisons"]
    assert [x["candidate"] for x in rows] == ["dense@0"]  # one row: the smallest seed's run, not one per seed
    spread = rows[0]["retraining"]
    assert spread["candidate_seeds"] == [0, 1, 2, 3, 4] and spread["rule"] == "one side retrained"
    assert len(spread["differences"]) == 5
    assert spread["sd_retraining"] == pytest.approx(np.std(spread["differences"], ddof=1), rel=1e-12)
    assert rows[0]["difference"] == spread["differences"][0]
    assert "retraining" in r.stdout.lower()
    plain = run_cli("compare", "--lane", demo_dir / "lexical.run", "--lane", demo_dir / "dense.run", "--qrels",
                    demo_dir / "qrels-test.txt", "--resamples", "999", "--out", tmp_path / "p.json")
    assert plain.returncode == 0
    row = json.loads((tmp_path / "p.json").read_text())["comparisons"][0]
    assert row["retraining"] is None
    every = run_cli("compare", *lanes, "--qrels", demo_dir / "qrels-test.txt", "--resamples", "999", "--seed-runs",
                    "--candidate", "dense", "--candidate", "rrf")
    assert every.returncode == 0, every.stderr
    assert "rrf fuses every input lane, the 5 retraining runs (dense@SEED) included" in every.stdout  # said, not silent
    bad = run_cli("compare", *lanes, "--qrels", demo_dir / "qrels-test.txt", "--resamples", "999", "--shared-seeds")
    assert bad.returncode == 2 and "--seed-runs" in bad.stderr
