"""A/B: the same `rankscope` commands from two source trees, alternated run by run.

A refactor must not slow the tool down. This module runs fixed command-line workloads
(whole processes, as a user runs them) with the package imported from tree A (by default
a clean checkout of ``--base``, HEAD~1) and from tree B (this working tree), alternating
A, B, B, A, ... so that load from other processes falls on both alike, and reports the
median wall and CPU time of each, their ratio B / A, and each process's peak RSS.

Workloads (synthetic data from ``synth.py``, the same files as ``bench_eval``):

* ``eval-100k`` / ``eval-1M`` / ``eval-7M``: ``evaluate --metrics ndcg@10,rr,p@10,recall@100 --resamples 0 --out``;
* ``fusion-2x1M``: ``evaluate`` on two correlated 1M-line lanes (adds ``rrf``, its dilution and
  attribution) with ``--metrics ndcg@10 --resamples 0``;
* ``stats-10k``: ``compare`` of those two lanes on nDCG@10 and RR, B = 9,999 (paired bootstrap,
  randomization, t, BCa, unpaired interval over 10,000 queries).

Usage::

    python benchmarks/bench_ab.py                      # HEAD~1 against the working tree
    python benchmarks/bench_ab.py --base main~3 --reps 5 --only eval-1M stats-10k

Writes ``results/ab.md`` and ``results/ab.json``. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SYNTH = ROOT.parent / "shared" / "tools" / "synth.py"
DATA = ROOT / "benchmarks" / "data"

SCALES = {"100k": (1_000, 100, 1), "1M": (10_000, 100, 2), "7M": (7_000, 1_000, 1)}  # queries, depth, runs


def ensure(scale: str) -> Path:
    nq, depth, runs = SCALES[scale]
    out = DATA / f"ab-{scale}"
    if not (out / "meta.json").exists():
        out.mkdir(parents=True, exist_ok=True)
        print(f"generating {out} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(SYNTH), "--queries", str(nq), "--depth", str(depth), "--runs", str(runs),
                        "--out", str(out), "--seed", "1"], check=True)
    return out


def workloads() -> dict:
    small, one, seven = ensure("100k"), ensure("1M"), ensure("7M")
    m4 = ["--metrics", "ndcg@10,rr,p@10,recall@100"]
    return {
        "eval-100k": ["evaluate", "--lane", str(small / "run1.txt"), "--qrels", str(small / "qrels.txt"), *m4,
                      "--resamples", "0", "--out", "{out}"],
        "eval-1M": ["evaluate", "--lane", str(one / "run1.txt"), "--qrels", str(one / "qrels.txt"), *m4,
                    "--resamples", "0", "--out", "{out}"],
        "eval-7M": ["evaluate", "--lane", str(seven / "run1.txt"), "--qrels", str(seven / "qrels.txt"), *m4,
                    "--resamples", "0", "--out", "{out}"],
        "fusion-2x1M": ["evaluate", "--lane", f"a={one / 'run1.txt'}", "--lane", f"b={one / 'run2.txt'}", "--qrels",
                        str(one / "qrels.txt"), "--metrics", "ndcg@10", "--resamples", "0", "--out", "{out}"],
        "stats-10k": ["compare", "--lane", f"a={one / 'run1.txt'}", "--lane", f"b={one / 'run2.txt'}", "--qrels",
                      str(one / "qrels.txt"), "--metric", "ndcg@10", "--metric", "rr", "--resamples", "9999",
                      "--out", "{out}"],
    }


def run_once(tree: Path, argv: list[str], tmp: Path) -> dict:
    out = tmp / "out.json"
    args = [a.replace("{out}", str(out)) for a in argv]
    env = dict(os.environ, PYTHONPATH=str(tree))
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "rankscope_tui.cli", *args], env=env, cwd=tmp,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tree}: {' '.join(args[:1])} failed: {err.strip()[-500:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def checkout(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(where), rev], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(where / "rankscope_tui")], check=True)
    return where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD~1", help="tree A: this git revision (default HEAD~1)")
    ap.add_argument("--reps", type=int, default=5, help="runs per tree and workload (default 5)")
    ap.add_argument("--only", nargs="+", default=None, help="these workloads only")
    a = ap.parse_args(argv)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "rankscope_tui")], check=True)
    loads = workloads()
    load_start = os.getloadavg()[0]
    names = a.only or list(loads)
    base_dir = Path(tempfile.mkdtemp(prefix="rankscope-ab-"))
    tree_a = checkout(a.base, base_dir / "a")
    rev_a = subprocess.run(["git", "-C", str(tree_a), "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True).stdout.strip()
    rev_b = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True).stdout.strip()
    res: dict = {"schema": "rankscope.bench.ab/1", "a": f"{a.base} ({rev_a})", "b": f"working tree at {rev_b}",
                 "reps": a.reps, "workloads": {}}
    try:
        for name in names:
            runs = {"a": [], "b": []}
            with tempfile.TemporaryDirectory() as tmp:
                run_once(tree_a, loads[name], Path(tmp))  # warm the page cache for both
                for i in range(a.reps):
                    for side in (("a", "b") if i % 2 == 0 else ("b", "a")):
                        runs[side].append(run_once(tree_a if side == "a" else ROOT, loads[name], Path(tmp)))
            med = {s: {k: statistics.median(r[k] for r in runs[s]) for k in ("wall", "cpu", "rss_mb")} for s in runs}
            spread = {s: [min(r["wall"] for r in runs[s]), max(r["wall"] for r in runs[s])] for s in runs}
            res["workloads"][name] = {"median": med, "wall_range": spread,
                                      "ratio_wall": med["b"]["wall"] / med["a"]["wall"],
                                      "ratio_cpu": med["b"]["cpu"] / med["a"]["cpu"], "runs": runs}
            w = res["workloads"][name]
            print(f"{name}: A {med['a']['wall']:.3f} s / B {med['b']['wall']:.3f} s wall (B/A {w['ratio_wall']:.3f}), "
                  f"cpu B/A {w['ratio_cpu']:.3f}, rss {med['a']['rss_mb']:.0f} / {med['b']['rss_mb']:.0f} MB", flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree_a)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(base_dir, ignore_errors=True)
    res["load"] = [load_start, os.getloadavg()[0]]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ab.json").write_text(json.dumps(res, indent=2) + "\n")
    lines = [f"# A/B: {res['a']} against {res['b']}", "",
             f"Whole `rankscope` processes, alternated A/B/B/A, {a.reps} runs each; medians (wall range). "
             f"1-minute load average {res['load'][0]:.1f} at the start, {res['load'][1]:.1f} at the end.", "",
             "| workload | A wall | B wall | B/A wall | B/A cpu | peak RSS A / B |", "|---|---:|---:|---:|---:|---:|"]
    for name, w in res["workloads"].items():
        m, r = w["median"], w["wall_range"]
        lines.append(f"| {name} | {m['a']['wall']:.3f} s ({r['a'][0]:.2f}–{r['a'][1]:.2f}) | {m['b']['wall']:.3f} s "
                     f"({r['b'][0]:.2f}–{r['b'][1]:.2f}) | {w['ratio_wall']:.3f} | {w['ratio_cpu']:.3f} | "
                     f"{m['a']['rss_mb']:.0f} / {m['b']['rss_mb']:.0f} MB |")
    (RESULTS / "ab.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
