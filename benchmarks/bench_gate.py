"""Benchmark: the gate's floor sweep (sort once, bisect per floor) against brute-force
re-evaluation of the gate at every floor, in the same run (SPEC §6, §12).

Synthetic data (labelled so): query codes split 70 % positives, 20 % in-domain and
10 % out-of-domain negatives, 10 hits per query, scores rounded to 5 decimals so some top
scores tie. Brute force runs on every floor at the small size and on an evenly spaced
subsample of floors at the large size, where its total is extrapolated linearly (its
cost per floor does not depend on the floor). The subsampled brute-force counts are
checked against the fast sweep in the same run.

    .venv/bin/python benchmarks/bench_gate.py [--queries 100000] [--brute-floors 300]

Writes benchmarks/results/gate.md and gate.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the brute-force oracle lives with the tests

from gate_oracles import sweep_brute_force  # noqa: E402

from rankscope_tui.kernel import gate as G  # noqa: E402
from rankscope_tui.kernel.ranking.ranks import rank_lane  # noqa: E402

HERE = Path(__file__).resolve().parent


def synthetic(n_queries: int, hits: int, seed: int):
    rng = np.random.default_rng(seed)
    cls = rng.choice(np.array([1, 2, 3]), size=n_queries, p=[0.7, 0.2, 0.1])
    q = np.repeat(np.arange(n_queries, dtype=np.int32), hits)
    doc = rng.integers(0, 50 * n_queries, size=q.size).astype(np.int64)
    # make docs unique within a query: offset by position
    doc = doc * hits + np.tile(np.arange(hits), n_queries)
    shift = np.where(cls == 1, 1.0, np.where(cls == 2, 0.3, 0.8))[q]
    score = np.round(rng.normal(shift, 0.5), 5)  # 5 decimals: mostly distinct, some ties
    lane = rank_lane("synthetic", q, doc, score, n_queries)
    hit_rel = (cls[lane.qid] == 1) & (rng.uniform(size=lane.n_rows) < 0.15)
    return lane, hit_rel, cls


def best_of(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def run_size(n_queries: int, hits: int, brute_floors: int | None, seed: int, repeats: int) -> dict:
    lane, hit_rel, cls = synthetic(n_queries, hits, seed)
    t_top, top = best_of(lambda: G.top_scores(lane, hit_relevant=hit_rel), repeats)
    pos = cls == 1
    negs = {"in_domain": cls == 2, "ood": cls == 3}
    t_sweep, sw = best_of(lambda: G.sweep(top, pos, negs), repeats)
    t_msweep, _ = best_of(lambda: G.margin_sweep(top, pos, negs), repeats)
    t_mutual, _ = best_of(lambda: G.mutual_nn(lane, cls > 0, tie_rule="count"), repeats)
    t_op, _ = best_of(lambda: G.operating_point(sw, 0.05, conservative=True), repeats)

    n_cand = len(sw)
    if brute_floors is None or brute_floors >= n_cand:
        idx = np.arange(n_cand)
    else:
        idx = np.unique(np.linspace(0, n_cand - 1, brute_floors).round().astype(np.int64))
    t0 = time.perf_counter()
    slow = sweep_brute_force(top, pos, negs, candidates=sw.threshold[idx])
    t_brute_sub = time.perf_counter() - t0
    per_floor = t_brute_sub / idx.size
    t_brute = per_floor * n_cand
    extrapolated = idx.size < n_cand
    agree = bool(
        np.array_equal(slow.correct, sw.correct[idx])
        and np.array_equal(slow.wrong_accept, sw.wrong_accept[idx])
        and all(np.array_equal(slow.accepted[k], sw.accepted[k][idx]) for k in negs)
    )
    return {
        "queries": n_queries,
        "rows": lane.n_rows,
        "positives": int(pos.sum()),
        "negatives": {k: int(m.sum()) for k, m in negs.items()},
        "candidate_floors": n_cand,
        "top_scores_s": t_top,
        "sweep_s": t_sweep,
        "margin_sweep_s": t_msweep,
        "mutual_nn_s": t_mutual,
        "operating_point_s": t_op,
        "brute_force_floors_run": int(idx.size),
        "brute_force_per_floor_s": per_floor,
        "brute_force_s": t_brute,
        "brute_force_extrapolated": extrapolated,
        "speedup": t_brute / t_sweep,
        "agree_with_brute_force": agree,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=5_000, help="size at which brute force runs on every floor")
    ap.add_argument("--hits", type=int, default=10)
    ap.add_argument("--brute-floors", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)

    rows = [
        run_size(args.small, args.hits, None, args.seed, args.repeats),
        run_size(args.queries, args.hits, args.brute_floors, args.seed + 1, args.repeats),
    ]
    env = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "system": platform.system(),
        "cpus": os.cpu_count(),
    }
    result = {"benchmark": "gate floor sweep vs brute-force re-evaluation", "data": "synthetic", "seed": args.seed,
              "hits_per_query": args.hits, "environment": env, "sizes": rows, "target": "sweep over 100,000 queries < 1 s"}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gate.json").write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")

    lines = [
        "# Gate sweep benchmark",
        "",
        f"Synthetic data (seed {args.seed}), {args.hits} hits per query, 70 % positives / 20 % in-domain / 10 % "
        "out-of-domain negatives, scores rounded to 5 decimals (mostly distinct top scores, some ties). Best of "
        f"{args.repeats} runs for the kernel; brute force re-evaluates the gate at each floor "
        "(every floor at the small size; an even subsample, extrapolated linearly, at the large size). "
        f"Python {env['python']}, numpy {env['numpy']}, {env['system']} {env['machine']}.",
        "",
        "| queries | candidate floors | top_scores | sweep | brute force | brute force floors run | speedup | agree |",
        "|---:|---:|---:|---:|---:|---:|---:|:---|",
    ]
    for r in rows:
        bf = f"{r['brute_force_s']:.2f} s" + (" (extrapolated)" if r["brute_force_extrapolated"] else "")
        lines.append(
            f"| {r['queries']:,} | {r['candidate_floors']:,} | {r['top_scores_s'] * 1e3:.1f} ms | {r['sweep_s'] * 1e3:.1f} ms | "
            f"{bf} | {r['brute_force_floors_run']:,} | {r['speedup']:,.0f}× | {'yes' if r['agree_with_brute_force'] else 'NO'} |"
        )
    lines += [
        "",
        "| queries | margin sweep | mutual_nn (count rule) | operating point (conservative) |",
        "|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['queries']:,} | {r['margin_sweep_s'] * 1e3:.1f} ms | {r['mutual_nn_s'] * 1e3:.1f} ms | {r['operating_point_s'] * 1e3:.2f} ms |")
    big = rows[-1]
    ok = big["sweep_s"] < 1.0
    lines += ["", f"Target (sweep over {big['queries']:,} queries < 1 s): {'met' if ok else 'NOT met'} ({big['sweep_s']:.3f} s)."]
    (args.out / "gate.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok and all(r["agree_with_brute_force"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
