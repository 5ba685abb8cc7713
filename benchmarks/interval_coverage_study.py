"""Does reading the bootstrap draws as counts change what evaluate's intervals cover?

    python -m benchmarks.interval_coverage_study [--trials 2000] [--resamples 1999]

evaluate's percentile intervals (``intervals.bootstrap_intervals``) read each replicate
as the count-weighted mean of the protocol's draws (``resampling.bootstrap_means_counted``);
before, as ``np.mean`` of the gathered row (``resampling.bootstrap_means``, scipy's
reduction). The draws are the same; the replicates differ by rounding. This study runs
both on the same trials and counts the trials where the two decide coverage differently.

Populations: the Cranfield demo set's per-query ndcg@10 on the 114 positive queries of
``qrels-test.txt`` for bm25, tfidf, dense and rrf (k = 60); each lane's mean over those
queries is its true mean. Each trial draws n queries with replacement (the same draw for
the four lanes: ``default_rng(30_000 + trial)``), and both methods bootstrap the (n, 4)
matrix with seed = trial, B resamples, 95 %. Coverage's Monte Carlo error over T trials
is √(c(1 − c)/T) (±0.0049 at c = 0.95, T = 2,000). Writes
``benchmarks/results/interval_coverage.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchmarks.paths import CRANFIELD  # noqa: E402
from rankscope_tui.kernel.instruments.evaluate import add_derived_lanes  # noqa: E402
from rankscope_tui.kernel.measures import parse_metrics  # noqa: E402
from rankscope_tui.kernel.settings import LoadSettings  # noqa: E402
from rankscope_tui.kernel.statistics.intervals import bootstrap_intervals, percentile_bounds  # noqa: E402
from rankscope_tui.kernel.statistics.resampling import bootstrap_means  # noqa: E402
from rankscope_tui.kernel.workspace.loaded import Workspace  # noqa: E402

LANES = ("bm25", "tfidf", "dense", "rrf")
METRIC = "ndcg@10"
CONFIDENCE = 0.95


def populations() -> np.ndarray:
    ws = Workspace.load(lanes=[(None, str(CRANFIELD / "lanes" / f"{n}.run")) for n in ("bm25", "tfidf", "dense")],
                        qrels=str(CRANFIELD / "qrels-test.txt"),
                        settings=LoadSettings(metrics=tuple(parse_metrics(METRIC)), resamples=0))
    add_derived_lanes(ws)
    pos = ws.positives
    return np.column_stack([ws.per_query(lane, "doc")[METRIC][pos] for lane in LANES]).astype(np.float64)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=1999)
    ap.add_argument("--sizes", type=int, nargs="+", default=[30, 114])
    a = ap.parse_args(argv)
    started = time.time()
    pop = populations()
    truth = pop.mean(axis=0)
    T, B = a.trials, a.resamples
    rows = []
    for n in a.sizes:
        covered = {"counted": np.zeros(len(LANES), dtype=np.int64), "gathered": np.zeros(len(LANES), dtype=np.int64)}
        differ = np.zeros(len(LANES), dtype=np.int64)
        max_diff = 0.0
        for t in range(T):
            sample = pop[np.random.default_rng(30_000 + t).integers(0, pop.shape[0], n)]
            counted = [(iv.low, iv.high) for iv in bootstrap_intervals(sample, resamples=B, seed=t, confidence=CONFIDENCE)]
            reps = bootstrap_means(sample, B, seed=t)
            gathered = [percentile_bounds(reps[:, j], CONFIDENCE) for j in range(len(LANES))]
            for j in range(len(LANES)):
                hit_c = counted[j][0] <= truth[j] <= counted[j][1]
                hit_g = gathered[j][0] <= truth[j] <= gathered[j][1]
                covered["counted"][j] += hit_c
                covered["gathered"][j] += hit_g
                differ[j] += hit_c != hit_g
                max_diff = max(max_diff, abs(counted[j][0] - gathered[j][0]), abs(counted[j][1] - gathered[j][1]))
        for j, lane in enumerate(LANES):
            rows.append({"lane": lane, "n": n, "true_mean": float(truth[j]),
                         "coverage_counted": covered["counted"][j] / T, "coverage_gathered": covered["gathered"][j] / T,
                         "trials_deciding_differently": int(differ[j]), "max_abs_bound_difference": max_diff})
    res = {"trials": T, "resamples": B, "confidence": CONFIDENCE, "metric": METRIC, "queries": int(pop.shape[0]),
           "seconds": round(time.time() - started), "rows": rows}
    out = HERE / "results"
    (out / "interval_coverage.json").write_text(json.dumps(res, indent=1) + "\n")
    se = math.sqrt(0.95 * 0.05 / T)
    L = ["# evaluate's intervals: counted against gathered replicates, coverage on the same trials", "",
         f"Cranfield `qrels-test.txt`, {METRIC} on the {res['queries']} positive queries of each lane (the population; "
         f"its mean is the truth); {T:,} trials per size, each a with-replacement sample of n queries shared by the four "
         f"lanes; B = {B:,}, seed = trial, {CONFIDENCE:g} percentile intervals. Counted: `bootstrap_intervals` "
         "(evaluate's, the draws read as counts); gathered: `percentile_bounds` of `bootstrap_means` (np.mean of each "
         f"drawn row, scipy's replicates bit for bit). Monte Carlo error of a coverage near 0.95: ±{se:.4f}. "
         f"Reproduce: `python -m benchmarks.interval_coverage_study` ({res['seconds']} s).", "",
         "| lane | n | true mean | coverage, counted | coverage, gathered | trials deciding differently | "
         "max abs bound difference (all lanes) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        L.append(f"| {r['lane']} | {r['n']} | {r['true_mean']:.4f} | {r['coverage_counted']:.4f} | "
                 f"{r['coverage_gathered']:.4f} | {r['trials_deciding_differently']} | {r['max_abs_bound_difference']:.1e} |")
    (out / "interval_coverage.md").write_text("\n".join(L) + "\n")
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    sys.exit(main())
