"""Speed and memory of ``compare --all-pairs`` (the randomised Tukey HSD) against one
pairwise comparison of the same size, in one run (a same-run ratio).

    python benchmarks/bench_all_pairs.py [--lanes 6] [--queries 7000] [--resamples 9999] [--rounds 3]

``all_pairs``: ``kernel.tukey.tukey_hsd`` over k lanes (the permuted ranges, the shared
paired bootstrap, every pair's p, interval and W/L/T). ``pair``: ``kernel.paired.
paired_statistics`` for one pair (sign flips, paired and unpaired bootstrap, BCa, t-test),
what one row of ``compare`` costs. Each kind runs in its own subprocess (fresh
interpreter, peak RSS), rounds interleaved; times are medians. The issue's target: the
all-pairs run within 3× the pairwise one, and memory bounded (no B × n × k array: that
would be 8·B·n·k bytes). Writes ``benchmarks/results/all_pairs.md`` and ``.json``.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET_RATIO = 3.0


def make_data(n: int, k: int):
    import numpy as np

    rng = np.random.default_rng(20261)
    base = np.round(rng.beta(0.8, 0.6, n), 3)
    cols = [np.clip(base + rng.normal(0.01 * j, 0.15, n), 0, 1).round(3) for j in range(k)]
    qids = sorted((f"q{i}" for i in range(n)), key=str.encode)
    return np.column_stack(cols), qids


def child(kind: str, n: int, k: int, B: int) -> None:
    sys.path.insert(0, str(ROOT))
    from rankscope_tui.kernel.statistics.paired import paired_statistics
    from rankscope_tui.kernel.statistics.tukey import tukey_hsd

    x, qids = make_data(n, k)
    start = time.perf_counter()
    if kind == "all_pairs":
        tukey_hsd(x, [f"l{j}" for j in range(k)], resamples=B, seed=0)
    else:
        paired_statistics(x[:, 0], x[:, 1], qids, resamples=B, seed=0)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, default=6)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--resamples", type=int, default=9999)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child, a.queries, a.lanes, a.resamples)
        return 0
    runs: dict = {"all_pairs": [], "pair": []}
    for _ in range(a.rounds):
        for kind in runs:
            out = subprocess.run([sys.executable, __file__, "--child", kind, "--lanes", str(a.lanes), "--queries",
                                  str(a.queries), "--resamples", str(a.resamples)], capture_output=True, text=True,
                                 check=True)
            runs[kind].append(json.loads(out.stdout))
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    rss = {k: max(r["rss_mb"] for r in v) for k, v in runs.items()}
    ratio = med["all_pairs"] / med["pair"]
    full_mb = 8 * a.resamples * a.queries * a.lanes / 2**20
    text = "\n".join([
        f"# compare --all-pairs against one pairwise compare: {a.lanes} lanes, {a.queries:,} queries, "
        f"B = {a.resamples:,}, median of {a.rounds}", "",
        "| kind | seconds | peak RSS (MB) |", "|---|---:|---:|",
        f"| all pairs (randomised Tukey HSD, {a.lanes * (a.lanes - 1) // 2} pairs) | {med['all_pairs']:.2f} | {rss['all_pairs']:.0f} |",
        f"| one pair (paired_statistics) | {med['pair']:.2f} | {rss['pair']:.0f} |", "",
        f"ratio {ratio:.2f}× (target ≤ {TARGET_RATIO:g}×); a B × n × k float array would be {full_mb:,.0f} MB.", ""])
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "all_pairs.md").write_text(text)
    (out / "all_pairs.json").write_text(json.dumps({"args": vars(a), "median_seconds": med, "peak_rss_mb": rss,
                                                    "ratio": ratio}, indent=2) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
