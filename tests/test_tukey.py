"""``compare --all-pairs``: the randomised Tukey HSD, checked against a plain, slow
implementation of the protocol written here (on the same stream), scipy's bootstrap for
the paired intervals, hand-counted W/L/T, the letters table, and bounded memory."""

from __future__ import annotations

import itertools
import json
import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats
from support import run_cli

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.statistics import tukey as tk

EPS100 = 100 * np.finfo(np.float64).eps


def slow_tukey_p(x: np.ndarray, B: int, seed: int) -> dict:
    """The protocol with loops: trial t, query i takes the c-th permutation (lexicographic)
    of the k systems, c from rng.integers(0, k!, size=(B, n)); the statistic is the range of
    the permuted means; a pair's p counts ranges >= |observed difference|."""
    n, k = x.shape
    perms = list(itertools.permutations(range(k)))
    codes = np.random.default_rng(seed).integers(0, math.factorial(k), size=(B, n))
    ranges = []
    for t in range(B):
        sums = [0.0] * k
        for i in range(n):
            perm = perms[codes[t, i]]
            for j in range(k):
                sums[j] += x[i, perm[j]]
        means = [s / n for s in sums]
        ranges.append(max(means) - min(means))
    out = {}
    for a, b in itertools.combinations(range(k), 2):
        obs = abs(np.mean(x[:, b]) - np.mean(x[:, a]))
        out[(a, b)] = (1 + sum(r >= obs - EPS100 * obs for r in ranges)) / (B + 1)
    return out


@pytest.fixture(scope="module")
def four_lanes():
    rng = np.random.default_rng(31)
    n = 40
    base = rng.random(n)
    x = np.column_stack([np.clip(base + rng.normal(shift, 0.15, n), 0, 1).round(2) for shift in (0.0, 0.02, 0.12, 0.13)])
    return x


def test_p_values_equal_the_slow_implementation_on_the_same_stream(four_lanes):
    x = four_lanes
    B = 999
    res = tk.tukey_hsd(x, ["a0", "a1", "a2", "a3"], resamples=B, seed=5)
    slow = slow_tukey_p(x, B, 5)
    got = {(res.lanes.index(p.a), res.lanes.index(p.b)): p.p for p in res.pairs}
    assert got == slow
    for chunk in (1, 7):  # drawn in any block size: the same stream
        again = tk.tukey_hsd(x, ["a0", "a1", "a2", "a3"], resamples=B, seed=5, chunk=chunk)
        assert [p.p for p in again.pairs] == [p.p for p in res.pairs]


def test_lattice_scores_tie_the_observed_range_and_still_match():
    rng = np.random.default_rng(2)
    x = rng.choice([0.0, 1.0], size=(25, 3))  # hit@k-like: many ranges equal an observed difference
    res = tk.tukey_hsd(x, ["x", "y", "z"], resamples=999, seed=1)
    slow = slow_tukey_p(x, 999, 1)
    assert [p.p for p in res.pairs] == [slow[k] for k in itertools.combinations(range(3), 2)]


def test_pairs_carry_the_paired_interval_and_wlt(four_lanes):
    x = four_lanes
    res = tk.tukey_hsd(x, ["a0", "a1", "a2", "a3"], resamples=1999, seed=0)
    pair = next(p for p in res.pairs if (p.a, p.b) == ("a0", "a2"))
    d = x[:, 2] - x[:, 0]
    assert pair.difference == pytest.approx(d.mean(), abs=1e-15)
    assert (pair.wins, pair.losses, pair.ties) == (int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()))
    ref = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=1999, rng=np.random.default_rng(0))
    assert pair.ci_low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert pair.ci_high == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_letters_table_marks_the_lanes_each_beats(four_lanes):
    res = tk.tukey_hsd(four_lanes, ["a0", "a1", "a2", "a3"], resamples=1999, seed=0)
    assert res.letters == ("a", "b", "c", "d")
    for lane in res.lanes:
        want = sorted(res.letters[res.lanes.index(p.a if p.b == lane else p.b)]
                      for p in res.pairs if lane in (p.a, p.b) and p.p <= 0.05
                      and res.means[res.lanes.index(lane)] > res.means[res.lanes.index(p.a if p.b == lane else p.b)])
        assert list(res.beats(lane)) == want
    assert res.beats("a2") and "a" in res.beats("a3")  # the two shifted lanes beat the baseline
    d = res.as_dict()
    json.dumps(d, allow_nan=False)
    assert d["lanes"][3]["beats"] == list(res.beats("a3"))


def test_limits():
    x = np.random.default_rng(0).random((20, 10))
    with pytest.raises(InputError, match="2 to 9"):
        tk.tukey_hsd(x, [f"l{i}" for i in range(10)], resamples=999)
    with pytest.raises(InputError):
        tk.tukey_hsd(x[:, :3], ["a", "b", "c"], resamples=100)
    with pytest.raises(InputError, match="at least 2"):
        tk.tukey_hsd(x[:, :3], ["a", "b", "c"], resamples=999, units=["u"] * 20)


def test_memory_stays_bounded():
    """A B × n × k float64 array would be 336 MB here."""
    rng = np.random.default_rng(0)
    x = rng.random((7000, 6))
    tracemalloc.start()
    tk.tukey_hsd(x, [f"l{i}" for i in range(6)], resamples=999, seed=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40e6


def test_cli_all_pairs(demo_dir, tmp_path):
    args = ["compare", "--lane", demo_dir / "lexical.run", "--lane", demo_dir / "dense.run",
            "--qrels", demo_dir / "qrels-test.txt", "--all-pairs", "--resamples", "999"]
    out = tmp_path / "t.json"
    r = run_cli(*args, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "beats" in r.stdout and "Tukey HSD p" in r.stdout
    payload = json.loads(out.read_text())
    # the derived rrf lane takes part only when named (SPEC §13)
    assert [x["lane"] for x in payload["lanes"]] == ["lexical", "dense"]
    named = run_cli(*args, "--candidate", "dense", "--candidate", "rrf", "--out", tmp_path / "n.json")
    assert named.returncode == 0, named.stderr
    assert [x["lane"] for x in json.loads((tmp_path / "n.json").read_text())["lanes"]] == ["lexical", "dense", "rrf"]
    md = run_cli(*args, "--format", "markdown")
    assert md.returncode == 0 and "| a | lexical |" in md.stdout
    assert run_cli(*args, "--format", "text").stdout == r.stdout  # same inputs and seed, same bytes
    for extra in (["--correction", "bonferroni"], ["--alternative", "greater"], ["--metric", "rr", "--metric", "ndcg@10"]):
        bad = run_cli(*args, *extra)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, (extra, bad.stderr)


def test_fewer_queries_than_permutations_take_the_gather_path_and_still_match():
    rng = np.random.default_rng(4)
    x = rng.choice([0.0, 0.25, 0.5, 1.0], size=(12, 4))  # 4! = 24 codes > 12 queries
    res = tk.tukey_hsd(x, ["a", "b", "c", "d"], resamples=999, seed=3)
    slow = slow_tukey_p(x, 999, 3)
    assert [p.p for p in res.pairs] == [slow[k] for k in itertools.combinations(range(4), 2)]


def test_units_reduce_the_rows_to_unit_means_first(four_lanes):
    x = four_lanes
    units = [f"u{i // 4}" for i in range(x.shape[0])]  # ten units of four queries
    res = tk.tukey_hsd(x, ["a0", "a1", "a2", "a3"], resamples=999, seed=2, units=units)
    labels = sorted(set(units))
    xu = np.array([[np.mean(x[[i for i, u in enumerate(units) if u == lab], j]) for j in range(4)] for lab in labels])
    slow = slow_tukey_p(xu, 999, 2)
    assert [p.p for p in res.pairs] == [slow[k] for k in itertools.combinations(range(4), 2)]
    assert (res.n, res.n_units, res.sampling_unit) == (40, 10, "unit")
