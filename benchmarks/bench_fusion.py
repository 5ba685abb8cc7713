"""Benchmark: fusion (SPEC §5, §12) -- RRF, convex calibration, and ranx's ``fuse``.

Synthetic data (seeded, labelled so), built in memory as RankedLanes (no parsing):
each query draws its hits from a pool of 2,500 consecutive doc codes (so lanes
overlap by ~40 %, and docs recur across queries in a vocabulary of 8.8M codes);
scores are continuous and strictly decreasing (no ties inside a lane). Judgments:
3 judged docs per query (grades 3, 2, 1), which the lanes tend to rank high.

Cases
  1. RRF over 2 lanes of 7,000 queries × 1,000 hits, + nDCG@10 of the fused lane:
     a. one shot, fused lane cut to depth 1,000 (what ``evaluate`` computes once);
     b. one shot, fused lane cut to depth 10 (only docs that can reach the top 10
        are scored; their deep ranks in the other lane are looked up);
     c. from a prepared FusionTable (built once, timed apart): what an RRF k sweep or
        a dashboard slider pays per value of k.
  2. Convex calibration, step 0.1 (66 points), 3 lanes of 7,000 × 1,000, objective
     nDCG@10 (the kernel's metrics) on the top 10 of each point; build included.
  3. 2 runs of 10,000 queries × 100 hits (1M lines each): RRF and wsum + min-max,
     rankscope (one shot, whole fused lists) against ranx ``fuse`` warm (numba
     compiled by a first call; Run objects built outside the timing), same process.

Every measurement reports the median wall time over repeats (min in brackets) and
the median CPU time of this process; the load average is recorded because the
machine is shared.

    .venv/bin/python benchmarks/bench_fusion.py [--repeats 7] [--quick]

Writes benchmarks/results/fusion.md and fusion.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rankscope_tui.kernel import measures as M  # noqa: E402
from rankscope_tui.kernel.fusion import methods as F  # noqa: E402
from rankscope_tui.kernel.ranking.judgments import Judgments  # noqa: E402
from rankscope_tui.kernel.ranking.ranks import RankedLane, offsets_for  # noqa: E402

HERE = Path(__file__).resolve().parent
VOCAB = 8_841_823  # MS MARCO passage corpus size
POOL = 2_500


# ------------------------------------------------------------------------ data


def lane(rng, nq: int, depth: int, name: str, shift: float) -> RankedLane:
    start = (np.arange(nq, dtype=np.int64) * 1_037_329) % VOCAB
    key = rng.random((nq, POOL))
    key[:, :3] -= 0.5 * rng.random((nq, 3))  # the judged docs (pool positions 0-2) tend to rank high
    local = np.argsort(key, axis=1)[:, :depth]
    doc = ((start[:, None] + local) % VOCAB).ravel()
    qid = np.repeat(np.arange(nq, dtype=np.int32), depth)
    score = (np.sort(rng.random((nq, depth)), axis=1)[:, ::-1] * 10 + shift).ravel().copy()
    rank = np.tile(np.arange(1, depth + 1, dtype=np.int32), nq)
    return RankedLane(name, qid, doc, score, rank, offsets_for(qid, nq))


def judgments(rng, nq: int) -> Judgments:
    start = (np.arange(nq, dtype=np.int64) * 1_037_329) % VOCAB
    doc = ((start[:, None] + np.arange(3)) % VOCAB).ravel()
    qid = np.repeat(np.arange(nq, dtype=np.int32), 3)
    grade = np.tile(np.array([3, 2, 1], dtype=np.int64), nq)
    order = np.lexsort((doc, qid))
    return Judgments(qid[order], doc[order], grade[order], VOCAB)


def ndcg10(fused: RankedLane, j: Judgments, queries: np.ndarray, nq: int) -> float:
    """Mean nDCG@10 with the kernel's metric code, on the fused lane's top 10."""
    top = fused.rank <= 10
    q, d, r = fused.qid[top], fused.doc[top], fused.rank[top]
    hits = M.Hits(q, r, j.grade_of(q, d))
    ideal = M.Ideal(j.qid, j.grade)
    v = M.compute(hits, ideal, nq, [M.MetricKey("ndcg", 10)], 1)["ndcg@10"]
    return float(v[queries].mean())


# --------------------------------------------------------------------- timing


def measure(fn, repeats: int) -> dict:
    wall, cpu, out = [], [], None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return {"median_s": float(np.median(wall)), "min_s": float(min(wall)), "cpu_median_s": float(np.median(cpu)),
            "repeats": repeats, "_out": out}


def public(m: dict) -> dict:
    return {k: v for k, v in m.items() if not k.startswith("_")}


def load() -> float:
    return os.getloadavg()[0]


# ----------------------------------------------------------------------- cases


def case_rrf(repeats: int, nq: int, depth: int) -> dict:
    rng = np.random.default_rng(1)
    a, b = lane(rng, nq, depth, "bm25", 0.0), lane(rng, nq, depth, "dense", 5.0)
    j = judgments(rng, nq)
    queries = np.arange(nq)
    F.rrf([a, b], depth=depth)  # warm the class table cache and the allocator
    full = measure(lambda: ndcg10(F.rrf([a, b], 60, depth=depth), j, queries, nq), repeats)
    top = measure(lambda: ndcg10(F.rrf([a, b], 60, depth=10), j, queries, nq), repeats)
    built = measure(lambda: F.FusionTable.build([a, b]), 1)
    table = built["_out"]
    sweep = measure(lambda: ndcg10(table.rrf(60, 10), j, queries, nq), repeats)
    same = full["_out"] == top["_out"] == sweep["_out"]
    return {"queries": nq, "hits_per_lane": depth, "lanes": 2, "k": 60,
            "one_shot_depth_full": public(full), "one_shot_depth_10": public(top),
            "table_build": public(built), "table_rrf_depth_10": public(sweep),
            "ndcg10": full["_out"], "all_three_agree": bool(same), "target_s": 0.150}


def case_calibration(nq: int, depth: int) -> dict:
    rng = np.random.default_rng(2)
    lanes = [lane(rng, nq, depth, n, s) for n, s in (("bm25", 0.0), ("dense", 5.0), ("splade", 2.0))]
    j = judgments(rng, nq)
    queries = np.arange(nq)
    per_point: list[float] = []

    def objective(fused: RankedLane) -> float:
        t = time.perf_counter()
        v = ndcg10(fused, j, queries, nq)
        per_point.append(time.perf_counter() - t)
        return v

    w, c = time.perf_counter(), time.process_time()
    table = F.FusionTable.build(lanes, by_best_rank=False)
    build = time.perf_counter() - w
    points_t = []
    values = []
    for _, weights in F.grid_weights(3, 0.1):
        t = time.perf_counter()
        values.append(objective(table.convex(weights, 10)))
        points_t.append(time.perf_counter() - t)
    total, cpu = time.perf_counter() - w, time.process_time() - c
    fit = F.calibrate_convex(table, lambda fused: ndcg10(fused, j, queries, nq), step=0.1, objective_depth=10)
    assert [v for _, v in fit.points] == values
    return {"queries": nq, "hits_per_lane": depth, "lanes": 3, "step": 0.1, "points": len(values),
            "total_s": total, "cpu_s": cpu, "build_s": build,
            "point_median_s": float(np.median(points_t)), "point_max_s": float(max(points_t)),
            "objective_median_s": float(np.median(per_point)),
            "best_weights": list(fit.weights), "best_ndcg10": fit.objective, "target_s": 30.0}


def case_ranx(repeats: int, nq: int, depth: int) -> dict:
    rng = np.random.default_rng(3)
    a, b = lane(rng, nq, depth, "run1", 0.0), lane(rng, nq, depth, "run2", 5.0)
    out: dict = {"queries": nq, "hits_per_run": depth, "lines_per_run": nq * depth, "target_ratio": 4.0}
    ours_rrf = measure(lambda: F.rrf([a, b], 60), repeats)
    ours_wsum = measure(lambda: F.convex([a, b], (0.3, 0.7)), repeats)
    out["rankscope"] = {"rrf": public(ours_rrf), "wsum_minmax": public(ours_wsum)}
    try:
        import ranx
    except ImportError:
        out["ranx"] = None
        out["ranx_reason"] = "ranx not installed (pip install ranx)"
        return out
    from importlib.metadata import version

    out["ranx_version"] = version("ranx")

    def as_dict(x: RankedLane) -> dict:
        d: dict = {}
        q = x.qid.tolist()
        docs = [f"d{c}" for c in x.doc.tolist()]
        for qq, dd, ss in zip(q, docs, x.score.tolist()):
            d.setdefault(f"q{qq:05d}", {})[dd] = ss
        return d

    w = time.perf_counter()
    runs = [ranx.Run.from_dict(as_dict(x)) for x in (a, b)]
    out["ranx_run_build_s"] = time.perf_counter() - w
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = time.perf_counter()
        ranx.fuse(runs, norm=None, method="rrf", params={"k": 60})
        ranx.fuse(runs, norm="min-max", method="wsum", params={"weights": [0.3, 0.7]})
        out["ranx_first_calls_s"] = time.perf_counter() - w  # numba compile (or cache load)
        r_rrf = measure(lambda: ranx.fuse(runs, norm=None, method="rrf", params={"k": 60}), repeats)
        r_wsum = measure(lambda: ranx.fuse(runs, norm="min-max", method="wsum", params={"weights": [0.3, 0.7]}), repeats)
    out["ranx"] = {"rrf": public(r_rrf), "wsum_minmax": public(r_wsum)}
    out["speedup"] = {"rrf": r_rrf["median_s"] / ours_rrf["median_s"],
                      "wsum_minmax": r_wsum["median_s"] / ours_wsum["median_s"]}
    # same numbers? (two runs: identical floats expected)
    agree = {}
    for key, ours, theirs in (("rrf", ours_rrf["_out"], r_rrf["_out"]), ("wsum_minmax", ours_wsum["_out"], r_wsum["_out"])):
        td = theirs.to_dict()
        od = as_dict(ours)
        agree[key] = bool(od.keys() == td.keys() and all(od[q] == dict(td[q]) for q in od))
    out["same_scores_as_ranx"] = agree
    return out


# ------------------------------------------------------------------------ main


def fmt(m: dict) -> str:
    return f"{m['median_s'] * 1000:.0f} ms [{m['min_s'] * 1000:.0f}] (cpu {m['cpu_median_s'] * 1000:.0f} ms)"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    p.add_argument("--out", type=Path, default=HERE / "results")
    args = p.parse_args()
    nq_big, nq_ranx = (700, 1000) if args.quick else (7000, 10_000)

    env = {"python": platform.python_version(), "numpy": np.__version__, "platform": f"{platform.system()} {platform.machine()}",
           "cpus": os.cpu_count(), "load_average_start": load()}
    t0 = time.perf_counter()
    rrf = case_rrf(args.repeats, nq_big, 1000)
    env["load_after_rrf"] = load()
    cal = case_calibration(nq_big, 1000)
    env["load_after_calibration"] = load()
    rx = case_ranx(args.repeats, nq_ranx, 100)
    env["load_average_end"] = load()
    env["total_s"] = time.perf_counter() - t0
    result = {"schema": "rankscope.bench.fusion/1", "synthetic": True, "environment": env,
              "rrf_plus_ndcg10": rrf, "convex_calibration": cal, "vs_ranx_fuse": rx}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fusion.json").write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")

    L = [
        "# Fusion: RRF, convex calibration, and ranx's fuse",
        "",
        "Synthetic data (seeded; see `bench_fusion.py`), built in memory as ranked lanes. "
        f"Python {env['python']}, numpy {env['numpy']}, {env['platform']}, {env['cpus']} CPUs, shared machine: "
        f"load average {env['load_average_start']:.2f} at start, {env['load_average_end']:.2f} at the end. "
        "Times: median wall [min] over repeats, and the median CPU time of this process.",
        "",
        f"## 1. RRF over 2 lanes of {rrf['queries']:,} × {rrf['hits_per_lane']:,}, + nDCG@10 (target < 150 ms)",
        "",
        "| path | time |",
        "|---|---|",
        f"| one shot, fused lane to depth {rrf['hits_per_lane']:,} (what `evaluate` computes once) | {fmt(rrf['one_shot_depth_full'])} |",
        f"| one shot, fused lane to depth 10 | {fmt(rrf['one_shot_depth_10'])} |",
        f"| prepared `FusionTable` (build {rrf['table_build']['median_s']:.2f} s, once), per k | {fmt(rrf['table_rrf_depth_10'])} |",
        "",
        f"nDCG@10 of the fused lane {rrf['ndcg10']:.4f}; the three paths agree: {rrf['all_three_agree']}.",
        "",
        f"## 2. Convex calibration, step 0.1, 3 lanes of {cal['queries']:,} × {cal['hits_per_lane']:,} (target < 30 s)",
        "",
        f"{cal['points']} points in **{cal['total_s']:.1f} s** wall ({cal['cpu_s']:.1f} s CPU), of which the build "
        f"(union, min-max, padded matrices) {cal['build_s']:.1f} s; per point median {cal['point_median_s'] * 1000:.0f} ms "
        f"(max {cal['point_max_s'] * 1000:.0f} ms), of which nDCG@10 {cal['objective_median_s'] * 1000:.0f} ms. "
        f"Best weights {cal['best_weights']} (nDCG@10 {cal['best_ndcg10']:.4f}).",
        "",
        f"## 3. Against ranx `fuse`, 2 runs of {rx['queries']:,} × {rx['hits_per_run']} ({rx['lines_per_run']:,} lines each; target ≥ 4×)",
        "",
    ]
    if rx.get("ranx"):
        L += [
            "| method | rankscope | ranx (warm) | ranx / rankscope |",
            "|---|---|---|---|",
            f"| RRF, k = 60 | {fmt(rx['rankscope']['rrf'])} | {fmt(rx['ranx']['rrf'])} | {rx['speedup']['rrf']:.1f}× |",
            f"| wsum + min-max (0.3, 0.7) | {fmt(rx['rankscope']['wsum_minmax'])} | {fmt(rx['ranx']['wsum_minmax'])} | {rx['speedup']['wsum_minmax']:.1f}× |",
            "",
            f"ranx {rx['ranx_version']}: building its two Run objects took {rx['ranx_run_build_s']:.1f} s and the first "
            f"two `fuse` calls (numba) {rx['ranx_first_calls_s']:.1f} s, both outside the timings. "
            f"Identical fused scores: {rx['same_scores_as_ranx']}. Both sides return whole fused lists (no depth cut).",
        ]
    else:
        L.append(f"ranx not measured: {rx.get('ranx_reason')}")
    L += ["", f"Total benchmark time {env['total_s']:.0f} s."]
    (args.out / "fusion.md").write_text("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
