"""The compare path imports no more of SciPy than the t distribution's special functions
(issue 35, item 3), and the power figures computed from them are SciPy's own; the
evaluate path imports neither SciPy nor pandas (issue 34, item 6: pandas only for the
API's DataFrames).

The oracle for the numbers is ``scipy.stats``: ``t.isf`` and ``nct.sf``, compared bit
for bit with what ``power.t_power`` now computes without importing ``scipy.stats``.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from scipy import stats
from support import cli_env

from rankscope_tui.kernel.statistics import power


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [2, 3, 7.5, 30, 1000, 10_000_000])
@pytest.mark.parametrize("effect", [0.0, 1e-6, 0.05, 0.3, 1.0, 4.0, 40.0])
@pytest.mark.parametrize("alpha", [1e-6, 0.01, 0.05, 0.5])
def test_t_power_is_scipy_stats_bit_for_bit(effect, n, alpha, alternative):
    df, nc = n - 1.0, effect * n ** 0.5
    if alternative == "two-sided":
        crit = float(stats.t.isf(alpha / 2.0, df))
        want = float(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc))
    else:
        want = float(stats.nct.sf(float(stats.t.isf(alpha, df)), df, nc))
    assert power.t_power(effect, n, alpha, alternative) == want


def test_compare_never_imports_scipy_stats_or_optimize(demo_dir, tmp_path):
    """A default compare (randomization test, the t-test beside it, power figures on
    every row) on the demo runs without ``scipy.stats`` or ``scipy.optimize`` (the MDE's
    root is ``power.brent_root``) in the process."""
    code = ("import sys; from rankscope_tui.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print('scipy.stats' in sys.modules, 'scipy.optimize' in sys.modules)")
    got = subprocess.run([sys.executable, "-c", code, "compare", "--lane", str(demo_dir / "lexical.run"), "--lane",
                          str(demo_dir / "dense.run"), "--qrels", str(demo_dir / "qrels-test.txt"),
                          "--out", str(tmp_path / "c.json")],
                         capture_output=True, text=True, env=cli_env(), cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "c.json").stat().st_size > 1000
    assert got.stdout.strip().splitlines()[-1] == "False False"


@pytest.mark.parametrize("extra", [[], ["--resamples", "0"], ["--format", "markdown"]])
def test_evaluate_imports_neither_pandas_nor_scipy(demo_dir, tmp_path, extra):
    """``evaluate`` (with and without intervals, text and markdown) writes its report
    with no pandas and no SciPy module loaded: pandas is for the API's DataFrames, SciPy
    for a comparison's t distribution; nor the comparison's own modules (the verdicts, the
    paired statistics, power, the randomization test), whose classes a small run would otherwise build at start."""
    code = ("import sys; from rankscope_tui.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "comparison = {'rankscope_tui.kernel.statistics.' + m for m in ('verdict', 'paired', 'power', 'randomization')}\n"
            "print(sorted(({m.split('.')[0] for m in sys.modules} & {'pandas', 'scipy'}) | (comparison & set(sys.modules))))")
    got = subprocess.run([sys.executable, "-c", code, "evaluate", "--lane", str(demo_dir / "lexical.run"), "--lane",
                          str(demo_dir / "dense.run"), "--qrels", str(demo_dir / "qrels-test.txt"),
                          "--out", str(tmp_path / "r.json"), *extra],
                         capture_output=True, text=True, env=cli_env(), cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "r.json").stat().st_size > 1000
    assert got.stdout.strip().splitlines()[-1] == "[]"


def test_evaluate_of_plain_files_leaves_the_bucket_engine_unloaded(demo_dir, tmp_path):
    """An ``evaluate`` of run files (no ``--buckets``, no ``bucket=K`` dataset) asks only
    whether an input is a bucket dataset: the bucket engine's modules (``scale.bucket``,
    its dataclasses and hashing; ``scale.partition``) are not loaded at all."""
    code = ("import sys; from rankscope_tui.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules if m.startswith('rankscope_tui.kernel.scale.')))")
    got = subprocess.run([sys.executable, "-c", code, "evaluate", "--lane", str(demo_dir / "lexical.run"), "--lane",
                          str(demo_dir / "dense.run"), "--qrels", str(demo_dir / "qrels-test.txt"),
                          "--resamples", "0", "--out", str(tmp_path / "r.json")],
                         capture_output=True, text=True, env=cli_env(), cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "r.json").stat().st_size > 1000
    loaded = ast.literal_eval(got.stdout.strip().splitlines()[-1])
    assert "rankscope_tui.kernel.scale.bucket" not in loaded and "rankscope_tui.kernel.scale.partition" not in loaded
    assert "rankscope_tui.kernel.scale.given" in loaded  # the question was asked


def test_dashboard_views_import_without_pandas_scipy_or_plotext():
    """The dashboard's app and every view's class load with no pandas, no SciPy and no
    plotext: plotext comes with a chart's first draw (``widgets/plot.py``), SciPy with a
    comparison, pandas with an API DataFrame."""
    code = ("import sys\nimport rankscope_tui.app\nfrom rankscope_tui.screens import VIEWS, screen_class\n"
            "for mode, _ in VIEWS:\n    screen_class(mode)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'scipy', 'plotext', 'textual_plotext'}))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=300)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().splitlines()[-1] == "[]"
