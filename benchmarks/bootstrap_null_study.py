"""Does ``--test bootstrap`` hold its false-"better" rate under the null?

    python -m benchmarks.bootstrap_null_study [--trials 1000] [--resamples 999] [--metric ndcg@10]

The per-query values of two Cranfield lanes (bm25 and dense on the test qrels) are read
once. Each trial makes a null pair from them by swapping the two lanes' values on a
random half of the queries (each query's pair swapped with probability 1/2): the lanes
are then exchangeable within every query, so no difference is real. The trial is decided
by ``kernel.statistics.verdict.decide`` with ``test="bootstrap"`` (a family of one: the
adjusted p is the raw p) at α = 0.05, two-sided, and counted when the verdict is
"better". A two-sided test at α calls "better" (Δ̄ > 0 established) in α/2 of null
trials, so the rate is compared with α/2 = 0.025; its Monte Carlo error over T trials is
√(r(1 − r)/T) (±0.0049 at r = 0.025, T = 1,000). The randomization test and the paired
t-test decide the same trials beside it. Seeded: trial t swaps with
``default_rng(20_000 + t)`` and resamples with seed t, so the same arguments give the
same table. Writes ``benchmarks/results/bootstrap_null.md``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.paths import CRANFIELD  # noqa: E402
from rankscope_tui import api  # noqa: E402
from rankscope_tui.kernel.statistics.paired import paired_statistics  # noqa: E402
from rankscope_tui.kernel.statistics.verdict import RowInput, decide  # noqa: E402

ALPHA = 0.05
TESTS = ("bootstrap", "randomization", "t")


def lanes(metric: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """bm25's and dense's per-query ``metric`` over the positive test queries, aligned by qid."""
    ev = api.evaluate(str(CRANFIELD / "qrels-test.txt"),
                      {"bm25": str(CRANFIELD / "lanes/bm25.run"), "dense": str(CRANFIELD / "lanes/dense.run")},
                      measures=metric, resamples=0)
    pq = ev.report()["per_query"]
    qids = sorted(pq["bm25"]["doc"], key=str.encode)
    a = np.array([pq["bm25"]["doc"][q][metric] for q in qids])
    b = np.array([pq["dense"]["doc"][q][metric] for q in qids])
    return a, b, qids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--metric", default="ndcg@10")
    a = ap.parse_args(argv)
    start = time.perf_counter()
    x, y, qids = lanes(a.metric)
    better = {t: 0 for t in TESTS}
    for trial in range(a.trials):
        swap = np.random.default_rng(20_000 + trial).random(x.size) < 0.5
        base, cand = np.where(swap, y, x), np.where(swap, x, y)
        s = paired_statistics(base, cand, qids, resamples=a.resamples, seed=trial, threads=1)
        for t in TESTS:
            better[t] += decide([RowInput("base", "cand", a.metric, s)], test=t).rows[0].verdict == "better"
    seconds = time.perf_counter() - start
    T = a.trials
    lines = [f"# Null-centred bootstrap test under the null: Cranfield bm25 / dense, {a.metric}, {x.size} queries",
             "",
             f"{T:,} trials, each query's two values swapped with probability 1/2; B = {a.resamples:,}; "
             f"α = {ALPHA} two-sided; a \"better\" verdict is a false positive; expected α/2 = {ALPHA / 2}.",
             "",
             "| deciding test | false \"better\" | rate | Monte Carlo error | within 2 errors of α/2 |",
             "|---|---:|---:|---:|---|"]
    for t in TESTS:
        r = better[t] / T
        err = math.sqrt(max(r * (1 - r), ALPHA / 2 * (1 - ALPHA / 2)) / T)
        lines.append(f"| {t} | {better[t]} / {T} | {r:.4f} | {err:.4f} | {'yes' if abs(r - ALPHA / 2) <= 2 * err else 'no'} |")
    lines += ["", f"({seconds:.0f} s)"]
    text = "\n".join(lines) + "\n"
    out = ROOT / "benchmarks" / "results" / "bootstrap_null.md"
    out.write_text(text.replace(f"({seconds:.0f} s)\n", ""))
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
