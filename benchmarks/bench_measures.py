"""What the issue-15 measures cost: the four-measure evaluation with and without
``ap,rprec,bpref,rr@10,ndcg`` on the same files in the same run (issue 15, must show 5).

    .venv/bin/python benchmarks/bench_measures.py [--scale 7M|1M|500k] [--reps N]

Data: ``../shared/tools/synth.py`` (seeded), generated into ``benchmarks/data/`` when
missing (7M = 7,000 queries x 1,000 hits, the directory bench_eval uses; 500k = 500 x
1,000 for a quick look). Two measurements, both same-run ratios:

* **evaluation**: a fresh subprocess per repetition runs ``Workspace.load`` + ``per_query``
  (read, encode, order, judge, measure) with the base set ``ndcg@10,rr,p@10,recall@100``
  or the base set plus the new measures; the two variants alternate (the order rotates
  each repetition) so machine load falls on both alike. Reported: medians of wall and
  CPU time and their ratio (the claim: at most 1.15 at 7M).
* **measure stage**: one process loads once, then times ``measures.compute`` on the cached
  hits for each set, alternating, many times: what the new measures add to the stage
  they live in.

Writes ``benchmarks/results/measures.md`` and ``measures.json``. Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "results"
SYNTH = ROOT.parent / "shared" / "tools" / "synth.py"  # ../shared beside the checkout
SCALES = {"7M": ("n7000_d1000", 7000, 1000), "1M": ("n1000_d1000", 1000, 1000), "500k": ("n500_d1000", 500, 1000)}
BASE = "ndcg@10,rr,p@10,recall@100"
NEW = "ap,rprec,bpref,rr@10,ndcg"
VARIANTS = {"base": BASE, "with_new": f"{BASE},{NEW}"}
CLAIM = 1.15


def ensure_data(scale: str) -> Path:
    d, q, depth = SCALES[scale]
    out = DATA / d
    if not (out / "run1.txt").exists() or not (out / "qrels.txt").exists():
        out.mkdir(parents=True, exist_ok=True)
        print(f"generating {out} with synth.py ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(SYNTH), "--queries", str(q), "--depth", str(depth), "--runs", "1",
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


def _imports():
    sys.path.insert(0, str(ROOT))
    from rankscope_tui.cli import process_setup

    process_setup()
    from rankscope_tui.kernel import measures as M
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    return M, LoadSettings, Workspace


def child_eval(variant: str, run: str, qrels: str) -> dict:
    M, LoadSettings, Workspace = _imports()
    settings = LoadSettings(metrics=tuple(M.parse_metrics(VARIANTS[variant])), resamples=0)
    t, c = time.perf_counter(), time.process_time()
    ws = Workspace.load([("run", run)], qrels, settings)
    pq = ws.per_query("run", "doc")
    out = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c}
    out["check"] = float(sum(float(v[ws.positives].sum()) for k, v in pq.items() if k != "rank"))
    return out


def child_stage(run: str, qrels: str, reps: int) -> dict:
    M, LoadSettings, Workspace = _imports()
    ws = Workspace.load([("run", run)], qrels, LoadSettings(metrics=tuple(M.parse_metrics(BASE)), resamples=0))
    hits, ideal = ws.hits("run", "doc")
    keys = {v: M.parse_metrics(spec) for v, spec in VARIANTS.items()}
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for i in range(reps):
        for v in (list(VARIANTS) if i % 2 == 0 else list(VARIANTS)[::-1]):
            t = time.perf_counter()
            M.compute(hits, ideal, ws.n_queries, keys[v], ws.settings.relevant)
            times[v].append(time.perf_counter() - t)
    return {"hits": int(hits.qid.shape[0]), "times": times}


def _spawn(args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=list(SCALES), default="7M")
    ap.add_argument("--reps", type=int, default=None, help="fresh-process repetitions per variant (default 5, 7 below 7M)")
    ap.add_argument("--stage-reps", type=int, default=20)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args, _unknown = ap.parse_known_args(argv)  # `python -m benchmarks -- ARGS` passes every module the same ARGS
    if args.child:
        kind, *rest = args.child
        out = child_eval(*rest) if kind == "eval" else child_stage(rest[0], rest[1], int(rest[2]))
        print(json.dumps(out))
        return 0
    d = ensure_data(args.scale)
    run, qrels = str(d / "run1.txt"), str(d / "qrels.txt")
    lines = sum(1 for _ in open(run, "rb"))
    reps = args.reps or (5 if args.scale == "7M" else 7)
    res: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    _spawn(["--child", "eval", "base", run, qrels])  # warm the page cache and .pyc files
    for i in range(reps):
        order = list(VARIANTS) if i % 2 == 0 else list(VARIANTS)[::-1]
        for v in order:
            res[v].append(_spawn(["--child", "eval", v, run, qrels]))
    stage = _spawn(["--child", "stage", run, qrels, str(args.stage_reps)])
    med = {v: {m: statistics.median(r[m] for r in res[v]) for m in ("wall", "cpu")} for v in VARIANTS}
    ratio = {m: med["with_new"][m] / med["base"][m] for m in ("wall", "cpu")}
    st = {v: statistics.median(t) for v, t in stage["times"].items()}
    summary = {
        "scale": args.scale, "lines": lines, "reps": reps, "base": BASE, "added": NEW,
        "evaluation_median_s": med, "evaluation_ratio": ratio, "claim": f"ratio <= {CLAIM}",
        "claim_holds_wall": ratio["wall"] <= CLAIM, "claim_holds_cpu": ratio["cpu"] <= CLAIM,
        "stage_hits": stage["hits"], "stage_median_s": st, "stage_added_s": st["with_new"] - st["base"],
        "python": sys.version.split()[0], "cpus": os.cpu_count(),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "measures.json").write_text(json.dumps(summary, indent=2) + "\n")
    md = [
        f"# bench_measures ({args.scale}, {lines:,} lines, {reps} fresh processes per variant)", "",
        f"Base set `{BASE}`; added `{NEW}`. Same run, variants alternating.", "",
        "| variant | wall median (s) | CPU median (s) |", "|---|---|---|",
        *[f"| {v} | {med[v]['wall']:.3f} | {med[v]['cpu']:.3f} |" for v in VARIANTS],
        "", f"Ratio with/without: wall {ratio['wall']:.3f}, CPU {ratio['cpu']:.3f} (claim: <= {CLAIM}).", "",
        f"Measure stage alone on {stage['hits']:,} hits (median of {args.stage_reps}): base {st['base'] * 1e3:.1f} ms, "
        f"with the new measures {st['with_new'] * 1e3:.1f} ms.", "",
    ]
    (RESULTS / "measures.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
