"""Intervals at 1M lines (issue 35, item 2): `evaluate` with and without its default
intervals, `compare`, before and after, and scipy's `bootstrap` doing the same job.

    python benchmarks/bench_intervals.py --base PATH-OR-REV [--reps 3] [--data DIR] [--scipy-reps 1]

Data: ``../shared/tools/synth.py`` 10,000 queries x 100 hits, two runs (995,000 lines
each; the files ``bench_eval`` uses at 1M), generated into ``--data`` when missing.

Whole processes, as a user runs them (``python -m rankscope_tui.cli`` with
``PYTHONPATH`` set to the tree under test), round-robin with the order rotating each
repetition, after one untimed round (page cache). For the tree before (``--base``: a
checkout path, or a git revision checked out into a scratch worktree) and after (this
checkout):

* ``evaluate --resamples 0``: the two lanes (and the ``rrf`` lane they bring), the nine
  default measures, no bootstrap (Wilson intervals stay);
* ``evaluate``: the same with the default intervals (B = 9,999, 18 bootstrap columns:
  3 lanes x 6 means, over the 9,900 positive queries);
* ``compare``: the default comparison of the two lanes (B = 9,999);
* ``evaluate``, both ways, without the ties and judgment-coverage blocks (a wrapper that
  replaces ``ties_block`` and ``coverage_block`` with ``None`` before calling the
  command line): the evaluate the issue measured its 1.75-1.95x on, before those blocks
  joined the report.

In process (a fresh interpreter per measurement, the workspace loaded untimed): the
report's bootstrap alone, ``bootstrap_intervals`` on the (9,900, 18) matrix of the
report's bootstrap columns, before and after, and ``scipy.stats.bootstrap`` on the same
matrix (``axis=-1``: one draw of indices for every column, as ours, ``batch=100``,
``rng=default_rng(0)``, percentile method), with the largest difference of every bound
from scipy's.

Cells: median (min-max) of wall time; CPU is the child's user + system time from
``os.wait4``. The load average is printed at the start and the end. Writes
``benchmarks/results/intervals.md`` and ``intervals.json`` (``--name``: another name).
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))
from benchmarks.paths import SYNTH, shown  # noqa: E402

QUERIES, DEPTH, RUNS = 10_000, 100, 2
B = 9999

# evaluate without the blocks that joined the report after the measurement
CORE = """
import sys
from rankscope_tui.kernel.instruments import evaluate as E
E.ties_block = lambda ws: None
E.coverage_block = lambda ws: None
from rankscope_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""

# the report's bootstrap alone: the matrix metric_blocks hands to bootstrap_intervals
IN_PROCESS = """
import json, sys, time
import numpy as np
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace
from rankscope_tui.kernel.instruments.evaluate import prepare
from rankscope_tui.kernel.statistics import intervals as I
data, kind = sys.argv[1], sys.argv[2]
ws = Workspace.load([("run1", f"{data}/run1.txt"), ("run2", f"{data}/run2.txt")], f"{data}/qrels.txt", LoadSettings())
ws, _ = prepare(ws)
q = ws.positives
cols = [ws.per_query(lane, "doc")[m.key][q] for lane in ws.lanes for m in ws.settings.metrics if not m.is_proportion]
x = np.column_stack(cols)
t = time.perf_counter(); c = time.process_time()
if kind == "scipy":
    from scipy import stats
    r = stats.bootstrap((x.T,), np.mean, axis=-1, n_resamples=%(B)d, batch=100, method="percentile",
                        rng=np.random.default_rng(0))
    bounds = np.column_stack([r.confidence_interval.low, r.confidence_interval.high])
elif kind == "scipy_columns":
    from scipy import stats
    cis = [stats.bootstrap((x[:, j],), np.mean, n_resamples=%(B)d, batch=1000, method="percentile",
                           rng=np.random.default_rng(0)).confidence_interval for j in range(x.shape[1])]
    bounds = np.array([[ci.low, ci.high] for ci in cis])
else:
    cells = I.bootstrap_intervals(x, resamples=%(B)d, seed=0)
    bounds = np.array([[iv.low, iv.high] for iv in cells])
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"wall": wall, "cpu": cpu, "shape": list(x.shape), "bounds": bounds.tolist()}))
""" % {"B": B}


def ensure_data(where: Path) -> Path:
    if not (where / "meta.json").exists():
        where.mkdir(parents=True, exist_ok=True)
        print(f"generating {shown(where)} with synth.py ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(SYNTH), "--queries", str(QUERIES), "--depth", str(DEPTH), "--runs",
                        str(RUNS), "--out", str(where)], check=True)
    return where


def tree_of(base: str, scratch: Path) -> Path:
    p = Path(base)
    if p.is_dir():
        return p
    where = scratch / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(where), base], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return where


def commit_of(tree: Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"


def run(tree: Path, argv: list[str], cwd: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, *argv], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {err.decode(errors='replace').strip()[-400:]}")
    return {"wall": wall, "stdout": out.decode()}


def run_timed(tree: Path, argv: list[str], cwd: Path) -> dict:
    """A whole process: wall from outside, CPU (user + system) and peak RSS from wait4."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[:3]} failed: {err.strip()[-400:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def spread(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def cell(s: dict, unit: str = "s") -> str:
    return f"{s['median']:.2f} {unit} ({s['min']:.2f}-{s['max']:.2f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the tree before: a checkout path or a git revision")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of every whole process (default 3)")
    ap.add_argument("--in-process-reps", type=int, default=3, help="repetitions of the in-process bootstrap (default 3)")
    ap.add_argument("--scipy-reps", type=int, default=1, help="repetitions of scipy's bootstrap (default 1)")
    ap.add_argument("--data", default=str(HERE / "data" / f"n{QUERIES}_d{DEPTH}"), help="the 1M-line data folder")
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--name", default="intervals", help="the results' file name, without .md / .json (default intervals)")
    ap.add_argument("--no-warmup", action="store_true", help="skip the untimed first round (the files are in the page cache)")
    a = ap.parse_args(argv)
    started = time.time()
    load_start = os.getloadavg()
    data = ensure_data(Path(a.data).resolve())
    scratch = Path(tempfile.mkdtemp(prefix="rankscope-intervals-"))
    try:
        trees = {"before": tree_of(a.base, scratch), "after": ROOT}
        commits = {k: commit_of(v) for k, v in trees.items()}
        for tree in trees.values():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "rankscope_tui")], check=True)
        core = scratch / "evaluate_core.py"
        core.write_text(CORE)
        out = scratch / "out.json"
        lanes = ["--lane", f"run1={data / 'run1.txt'}", "--lane", f"run2={data / 'run2.txt'}", "--qrels", str(data / "qrels.txt")]
        cli = ["-m", "rankscope_tui.cli"]
        work = {
            "evaluate --resamples 0": [*cli, "evaluate", *lanes, "--resamples", "0", "--out", str(out)],
            "evaluate (B = 9,999)": [*cli, "evaluate", *lanes, "--out", str(out)],
            "compare (B = 9,999)": [*cli, "compare", *lanes, "--out", str(out)],
            "core evaluate --resamples 0": [str(core), "evaluate", *lanes, "--resamples", "0", "--out", str(out)],
            "core evaluate (B = 9,999)": [str(core), "evaluate", *lanes, "--out", str(out)],
        }
        jobs = [(t, w) for t in trees for w in work]
        times: dict[str, dict[str, list[dict]]] = {t: {w: [] for w in work} for t in trees}
        first = 1 if a.no_warmup else 0
        for rep in range(first, a.reps + 1):  # round 0 is untimed (page cache, bytecode)
            order = jobs[rep % len(jobs):] + jobs[: rep % len(jobs)]
            for t, w in order:
                print(f"round {rep}: {t} {w}", file=sys.stderr, flush=True)
                r = run_timed(trees[t], work[w], scratch)
                if rep:
                    times[t][w].append(r)
        inproc: dict[str, list[dict]] = {"before": [], "after": [], "scipy": [], "scipy_columns": []}
        script = scratch / "in_process.py"
        script.write_text(IN_PROCESS)
        kinds = [("before", a.in_process_reps), ("after", a.in_process_reps), ("scipy", a.scipy_reps),
                 ("scipy_columns", a.scipy_reps)]
        for rep in range(max(k[1] for k in kinds)):
            for kind, reps in kinds:
                if rep < reps:
                    print(f"in process: {kind} {rep + 1}", file=sys.stderr, flush=True)
                    tree = trees["after" if kind.startswith("scipy") else kind]
                    inproc[kind].append(json.loads(run(tree, [str(script), str(data), kind], scratch)["stdout"]))
        load_end = os.getloadavg()

        import numpy as np

        res: dict = {"commits": commits, "data": shown(data), "python": platform.python_version(),
                     "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
                     "load_start": load_start, "load_end": load_end, "reps": a.reps,
                     "warmup": "" if a.no_warmup else ", after one untimed round", "seconds": round(time.time() - started),
                     "whole": {}, "in_process": {}, "ratios": {}}
        for t in trees:
            for w in work:
                rs = times[t][w]
                res["whole"][f"{t}: {w}"] = {k: spread([r[k] for r in rs]) for k in ("wall", "cpu", "rss_mb")}
        ref = np.array(inproc["scipy_columns"][0]["bounds"])  # scipy on each column alone: the protocol's reference
        for kind, rs in inproc.items():
            b = np.array(rs[0]["bounds"])
            res["in_process"][kind] = {"wall": spread([r["wall"] for r in rs]), "cpu": spread([r["cpu"] for r in rs]),
                                       "shape": rs[0]["shape"], "max_abs_diff_from_scipy": float(np.max(np.abs(b - ref))),
                                       "equal_to_scipy": bool(np.array_equal(b, ref))}

        def per_round(t: str, top: str, bottom: str, k: str) -> dict:
            """The ratio within each round (the two processes ran in the same rotation), over the rounds."""
            return spread([x[k] / y[k] for x, y in zip(times[t][top], times[t][bottom])])

        for t in trees:
            for k in ("wall", "cpu"):
                res["ratios"][f"{t}: evaluate / evaluate --resamples 0 ({k})"] = per_round(t, "evaluate (B = 9,999)", "evaluate --resamples 0", k)
                res["ratios"][f"{t}: compare / evaluate --resamples 0 ({k})"] = per_round(t, "compare (B = 9,999)", "evaluate --resamples 0", k)
                res["ratios"][f"{t}: core evaluate / core --resamples 0 ({k})"] = per_round(t, "core evaluate (B = 9,999)", "core evaluate --resamples 0", k)
        after = res["in_process"]["after"]["wall"]["median"]
        for kind in ("before", "scipy", "scipy_columns"):
            v = res["in_process"][kind]["wall"]["median"] / after
            res["ratios"][f"in process: {kind} / after (wall, ratio of medians)"] = {"median": v, "min": v, "max": v, "n": 1}
        out_dir = Path(a.results)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{a.name}.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
        (out_dir / f"{a.name}.md").write_text(markdown(res))
        print(markdown(res))
        return 0
    finally:  # the scratch worktree and folder go, whatever happened
        if (scratch / "base").is_dir():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(scratch / "base")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(scratch, ignore_errors=True)


def markdown(res: dict) -> str:
    la, lb = res["load_start"], res["load_end"]
    L = ["# Intervals at 1M lines: evaluate with and without, compare, before and after, scipy", "",
         f"Before: commit `{res['commits']['before']}`; after: commit `{res['commits']['after']}` (plus any uncommitted "
         f"change of the run). Data `{res['data']}` (10,000 queries x 100 hits, two runs). Python {res['python']}, "
         f"{res['machine']}; {res['seconds']} s.", "",
         f"**Load average** (1 / 5 / 15 min) at the start {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f}, at the end "
         f"{lb[0]:.2f} / {lb[1]:.2f} / {lb[2]:.2f}: the seconds move with the load, the CPU times less.", "",
         f"## Whole processes ({res['reps']} repetitions each, round-robin{res['warmup']})", "",
         "| tree | command | wall | CPU | peak RSS |", "|---|---|---:|---:|---:|"]
    for key, v in res["whole"].items():
        tree, what = key.split(": ", 1)
        L.append(f"| {tree} | `{what}` | {cell(v['wall'])} | {cell(v['cpu'])} | {cell(v['rss_mb'], 'MB')} |")
    L += ["", "`core`: the same command line with the ties and judgment-coverage blocks replaced by nothing "
          "(the report the issue's 1.75-1.95x was measured on).", "",
          "Whole-process ratios are taken within each round (both processes in the same rotation), then median "
          "(min-max) over the rounds.", "", "| ratio | median (min-max) |", "|---|---:|"]
    for k, v in res["ratios"].items():
        L.append(f"| {k} | {v['median']:.2f}x ({v['min']:.2f}-{v['max']:.2f}) |")
    L += ["", "## The report's bootstrap alone, in process", "",
          "`bootstrap_intervals` on the (queries x columns) matrix of the report's bootstrap columns, B = 9,999, "
          "seed 0; scipy: `stats.bootstrap((x.T,), np.mean, axis=-1, batch=100, method='percentile', "
          "rng=default_rng(0))`, the same draws for every column; scipy_columns: one 1-D `stats.bootstrap` per "
          "column (the same draws again), the reference every bound is compared with (scipy's vectorised call "
          "reduces a 3-D array and its replicates differ from its own 1-D ones by rounding).", "",
          "| what | matrix | wall | CPU | bounds: max abs difference from scipy_columns | equal to scipy_columns bit for bit |",
          "|---|---|---:|---:|---:|---|"]
    for kind, v in res["in_process"].items():
        L.append(f"| {kind} | {v['shape'][0]} x {v['shape'][1]} | {cell(v['wall'])} | {cell(v['cpu'])} | "
                 f"{v['max_abs_diff_from_scipy']:.1e} | {'yes' if v['equal_to_scipy'] else 'no'} |")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
