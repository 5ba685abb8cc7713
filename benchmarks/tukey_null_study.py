"""Does ``compare --all-pairs`` hold the family-wise error rate, and what does Bonferroni cost?

    python -m benchmarks.tukey_null_study [--trials 1000] [--lanes 5] [--queries 50] [--resamples 999]

Each trial draws k lanes from one distribution (every query has its own difficulty,
each lane's score is that difficulty plus independent noise, rounded to two decimals
like nDCG; so the lanes are exchangeable within every query and every pair is null),
then counts whether any of the k(k − 1)/2 pairs is called established

* by the randomised Tukey HSD (``kernel.tukey``) at α = 0.05;
* by the paired randomization test on every pair, Bonferroni-adjusted (α / pairs);
* by the paired randomization test on every pair, unadjusted.

A second cell shifts one lane by +0.08 and counts how often its pairs are found
(power), so the cost of Bonferroni's extra conservatism shows. Monte Carlo error of a
rate r over T trials is √(r(1 − r)/T) (±0.007 at r = 0.05, T = 1,000). Seeded: trial t
draws its data from ``default_rng(10_000 + t)`` and resamples with seed t, so the same
arguments give the same table. Writes ``benchmarks/results/tukey_null.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rankscope_tui.kernel.statistics.randomization import randomization_test  # noqa: E402
from rankscope_tui.kernel.statistics.tukey import tukey_hsd  # noqa: E402

ALPHA = 0.05


def draw(rng: np.random.Generator, n: int, k: int, shift: float) -> np.ndarray:
    difficulty = rng.beta(2.0, 3.0, n)
    x = np.clip(difficulty[:, None] + rng.normal(0.0, 0.2, (n, k)), 0.0, 1.0)
    x[:, 0] = np.clip(x[:, 0] + shift, 0.0, 1.0)
    return x.round(2)


def one_trial(t: int, n: int, k: int, B: int, shift: float) -> tuple[bool, bool, bool]:
    """(Tukey found a pair, Bonferroni found one, unadjusted found one); with a shift,
    only pairs with lane 0 count as found (the others are null)."""
    x = draw(np.random.default_rng(10_000 + t), n, k, shift)
    res = tukey_hsd(x, [f"l{j}" for j in range(k)], resamples=B, seed=t)
    pairs = list(itertools.combinations(range(k), 2))
    wanted = [p for p in pairs if p[0] == 0] if shift else pairs
    tukey_found = any(p.p <= ALPHA for p, ij in zip(res.pairs, pairs) if ij in wanted)
    raw = {ij: randomization_test(x[:, ij[1]] - x[:, ij[0]], B, seed=t, threads=1).p for ij in pairs}
    bonf_found = any(raw[ij] <= ALPHA / len(pairs) for ij in wanted)
    raw_found = any(raw[ij] <= ALPHA for ij in wanted)
    return tukey_found, bonf_found, raw_found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--lanes", type=int, default=5)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--shift", type=float, default=0.08)
    a = ap.parse_args(argv)
    start = time.perf_counter()
    cells = {}
    for name, shift in (("null (family-wise false-positive rate)", 0.0), (f"lane 0 shifted by +{a.shift:g} (power)", a.shift)):
        found = np.array([one_trial(t, a.queries, a.lanes, a.resamples, shift) for t in range(a.trials)])
        rates = found.mean(axis=0)
        cells[name] = {"tukey": float(rates[0]), "bonferroni": float(rates[1]), "unadjusted": float(rates[2])}
    seconds = time.perf_counter() - start
    T = a.trials
    pairs = a.lanes * (a.lanes - 1) // 2
    lines = [f"# Randomised Tukey HSD against Bonferroni: {a.lanes} lanes ({pairs} pairs), {a.queries} queries, "
             f"B = {a.resamples:,}, {T:,} trials per cell, α = {ALPHA}", "",
             "| cell | Tukey HSD | Bonferroni over all pairs | unadjusted |", "|---|---:|---:|---:|"]
    for name, r in cells.items():
        lines.append(f"| {name} | {r['tukey']:.3f} | {r['bonferroni']:.3f} | {r['unadjusted']:.3f} |")
    mc = math.sqrt(ALPHA * (1 - ALPHA) / T)
    lines += ["", f"Monte Carlo error at a rate of {ALPHA}: ±{mc:.4f} (one standard error). {seconds:.0f} s."]
    text = "\n".join(lines) + "\n"
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "tukey_null.md").write_text(text)
    (out / "tukey_null.json").write_text(json.dumps({"args": vars(a), "cells": cells, "seconds": seconds}, indent=2) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
