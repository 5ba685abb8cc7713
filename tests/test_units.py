"""Units with several rows (``--unit FILE``): every paired statistic runs on unit means.

Checked on a hand-built case (three topics with 1, 2 and 5 variants) against scipy on
the unit means computed by hand here, against the plain sign-flip protocol and the
exact enumeration of all 2^3 sign patterns, and shown to differ from the row-level
numbers. One unit is refused."""

from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pytest
from scipy import stats
from support import run_cli

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.statistics import paired as pa
from rankscope_tui.kernel.statistics import units as un

EPS100 = 100 * np.finfo(np.float64).eps

# three topics: t1 has one variant, t2 two, t3 five (qids sorted as bytes)
QIDS = ["t1v1", "t2v1", "t2v2", "t3v1", "t3v2", "t3v3", "t3v4", "t3v5"]
UNITS = ["t1", "t2", "t2", "t3", "t3", "t3", "t3", "t3"]
BASE = np.array([0.50, 0.20, 0.40, 0.30, 0.35, 0.10, 0.60, 0.25])
CAND = np.array([0.70, 0.15, 0.55, 0.10, 0.20, 0.05, 0.40, 0.30])


def by_hand():
    """Unit means written out: t1 = row 0, t2 = rows 1-2, t3 = rows 3-7."""
    d = CAND - BASE
    groups = [[0], [1, 2], [3, 4, 5, 6, 7]]
    du = np.array([np.mean(d[g]) for g in groups])
    bu = np.array([np.mean(BASE[g]) for g in groups])
    cu = np.array([np.mean(CAND[g]) for g in groups])
    return du, bu, cu


def naive_flip_p(d, B, seed):
    signs = 1 - 2 * np.random.default_rng(seed).integers(0, 2, size=(B, d.size))
    flipped = (signs * d).mean(axis=1)
    return (1 + np.count_nonzero(np.abs(flipped) >= abs(d.mean()) - EPS100 * abs(d.mean()))) / (B + 1)


@pytest.fixture(scope="module")
def unit_stats():
    return pa.paired_statistics(BASE, CAND, QIDS, resamples=9999, seed=0, units=UNITS)


def test_every_statistic_runs_on_the_unit_means(unit_stats):
    s = unit_stats
    du, bu, cu = by_hand()
    assert (s.n, s.n_units) == (8, 3)
    assert s.difference == np.mean(du)
    assert (s.baseline_mean, s.candidate_mean) == (np.mean(bu), np.mean(cu))
    assert s.median_difference == np.median(du)
    assert (s.wins, s.losses, s.ties) == (int(np.sum(du > 0)), int(np.sum(du < 0)), int(np.sum(du == 0)))
    assert s.n_nonzero == 3 and s.tie_rate == 0.0
    assert s.effect_size == pytest.approx(np.mean(du) / np.std(du, ddof=1), rel=1e-12)
    assert s.t_p == pytest.approx(stats.ttest_rel(cu, bu).pvalue, rel=1e-9)
    assert s.t_p == pytest.approx(stats.ttest_1samp(du, 0.0).pvalue, rel=1e-12)
    ref = stats.bootstrap((du,), np.mean, method="percentile", rng=np.random.default_rng(0))
    assert (s.ci_low, s.ci_high) == (ref.confidence_interval.low, ref.confidence_interval.high)
    bca = stats.bootstrap((du,), np.mean, method="BCa", rng=np.random.default_rng(0)).confidence_interval
    assert s.bca_interval(0.95) == (pytest.approx(bca.low, abs=1e-12), pytest.approx(bca.high, abs=1e-12))
    unpaired = stats.bootstrap((bu, cu), lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis),
                               paired=False, method="percentile", rng=np.random.default_rng(0)).confidence_interval
    assert (s.unpaired_ci_low, s.unpaired_ci_high) == (pytest.approx(unpaired.low, abs=1e-12),
                                                       pytest.approx(unpaired.high, abs=1e-12))
    assert s.randomization_p == naive_flip_p(du, 9999, 0)


def test_the_sign_flip_p_on_units_agrees_with_the_exact_enumeration(unit_stats):
    du, _, _ = by_hand()
    obs = abs(du.mean())
    patterns = [np.array(p) for p in itertools.product([1, -1], repeat=3)]
    exact = np.mean([abs((p * du).mean()) >= obs - EPS100 * obs for p in patterns])
    long_run = pa.paired_statistics(BASE, CAND, QIDS, resamples=199_999, seed=11, units=UNITS).randomization_p
    assert abs(long_run - exact) < 4 * np.sqrt(exact * (1 - exact) / 199_999) + 1e-5
    assert abs(unit_stats.randomization_p - exact) < 4 * np.sqrt(exact * (1 - exact) / 9999) + 1e-4


def test_units_differ_from_the_row_level_numbers(unit_stats):
    rows = pa.paired_statistics(BASE, CAND, QIDS, resamples=9999, seed=0)
    assert rows.n_units == rows.n == 8 and rows.sampling_unit == "query"
    assert rows.difference == pytest.approx(np.mean(CAND - BASE))
    assert rows.difference != unit_stats.difference
    assert rows.t_p != unit_stats.t_p and rows.ci_low != unit_stats.ci_low
    assert (rows.wins, rows.losses) != (unit_stats.wins, unit_stats.losses)
    assert unit_stats.sampling_unit == "unit" and unit_stats.sampled == "units"


def test_one_unit_is_refused():
    with pytest.raises(InputError, match="at least 2"):
        pa.paired_statistics(BASE, CAND, QIDS, resamples=999, units=["t"] * 8)


def test_unit_file_reader(tmp_path):
    f = tmp_path / "u.tsv"
    f.write_text("# topic of each variant\nq1\tA\nq2\tA\n\nq3\tB\nq1\tA\n")
    uf = un.read_units(str(f))
    assert uf.units_of(["q1", "q2", "q3"]) == ["A", "A", "B"]
    with pytest.raises(InputError, match="no unit"):
        uf.units_of(["q1", "q9"])
    f.write_text("q1\tA\nq1\tB\n")
    with pytest.raises(InputError, match="two units"):
        un.read_units(str(f))
    f.write_text("q1 A\n")
    with pytest.raises(InputError, match="no tab"):
        un.read_units(str(f))


# --- the command line ------------------------------------------------------------------------


def _demo_args(demo_dir):
    return ["--lane", demo_dir / "lexical.run", "--lane", demo_dir / "dense.run", "--qrels", demo_dir / "qrels-test.txt"]


def test_cli_unit_file_reduces_to_unit_means_and_reports_n_units(demo_dir, tmp_path):
    per_query = tmp_path / "pq.csv"
    r = run_cli("evaluate", *_demo_args(demo_dir), "--metrics", "ndcg@10", "--resamples", "0",
                "--per-query", per_query)
    assert r.returncode == 0, r.stderr
    values: dict = {}
    with open(per_query, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["level"] == "doc" and row["lane"] in ("lexical", "dense"):
                values.setdefault(row["lane"], {})[row["qid"]] = float(row["ndcg@10"])
    qids = sorted(values["lexical"])
    unit_of = {q: f"topic{int(q.lstrip('q')) % 7}" for q in qids}  # seven topics of several variants
    units = tmp_path / "units.tsv"
    units.write_text("".join(f"{q}\t{u}\n" for q, u in unit_of.items()))
    out = tmp_path / "c.json"
    r = run_cli("compare", *_demo_args(demo_dir), "--candidate", "dense", "--resamples", "999", "--unit", units,
                "--out", out)
    assert r.returncode == 0, r.stderr
    row = json.loads(out.read_text())["comparisons"][0]
    topics = sorted(set(unit_of.values()))
    du = np.array([np.mean([values["dense"][q] - values["lexical"][q] for q in qids if unit_of[q] == t])
                   for t in topics])
    assert row["n"] == len(qids) and row["n_units"] == 7
    assert row["difference"] == pytest.approx(du.mean(), abs=1e-12)
    assert row["t_p"] == pytest.approx(stats.ttest_1samp(du, 0.0).pvalue, rel=1e-9)
    assert json.loads(out.read_text())["settings"]["sampling_unit"] == "unit"
    assert "7 units" in r.stdout  # n_units printed
    one = tmp_path / "one.tsv"
    one.write_text("".join(f"{q}\tall\n" for q in qids))
    r = run_cli("compare", *_demo_args(demo_dir), "--resamples", "999", "--unit", one, "--out", tmp_path / "x.json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "at least 2" in r.stderr
    assert not (tmp_path / "x.json").exists()
