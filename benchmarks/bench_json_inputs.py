"""Reading speed of JSON and JSON Lines runs against the same run as TREC text (issue 35,
item 4): the target is JSON and JSON Lines within 1.5x of TREC text at 1M lines.

    .venv/bin/python benchmarks/bench_json_inputs.py [--lines 1000000] [--reps 3]
                                                     [--before PATH-TO-CHECKOUT]

Data (generated into ``benchmarks/data/json_inputs_<lines>/`` when missing): one run
from ``../shared/tools/synth.py`` (seeded; ``lines / 100`` queries x 100 hits, a few
queries absent as synth.py leaves them out) and its qrels, the run written three ways:

=====  ==================================================================
trec   synth.py's TREC text, as is
json   ``{qid: {docid: score}}``, two-space indent (each doc on its line)
jsonl  one ``{"query_id": .., "doc_id": .., "score": ..}`` object a line
=====  ==================================================================

Every measurement is the whole process as a user runs it, ``rankscope evaluate --lane
lane=FILE --qrels qrels.txt --resamples 0 --out report.json``, a fresh process each
time, with the code of this checkout ("after") and of ``--before`` (default: the
``main`` checkout beside the worktrees, put first on ``PYTHONPATH``); every (code,
format) pair takes a turn in each round, the order rotating from round to round, so
load from other processes falls on all alike. Reported per pair: wall time median and
min-max, CPU time (user + system, ``os.wait4``) median, and the ratio against TREC
text with the same code: min, median and max over rounds of (this / TREC's time in
the same round). Before timing, every pair's ``--per-query`` CSV is checked
byte-identical to TREC's with the new code. Writes ``results/json_inputs.md`` and
``json_inputs.json``. Not a test: nothing asserts a time.
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
DATA = HERE / "data"
RESULTS = HERE / "results"
SYNTH = ROOT.parent / "shared" / "tools" / "synth.py"  # ../shared beside the checkout
if not SYNTH.exists():  # a worktree under wt/: shared/ is beside the main checkout
    SYNTH = ROOT.parents[1] / "shared" / "tools" / "synth.py"
DEFAULT_BEFORE = ROOT.parents[1] / "main" if (ROOT.parents[1] / "main").is_dir() else None

FORMATS = {"trec": "run.trec", "json": "run.json", "jsonl": "run.jsonl"}
TARGET = 1.5  # JSON and JSON Lines within 1.5x of TREC text


def generate(lines: int, seed: int = 35) -> Path:
    """The data directory for ``lines`` rows (written once)."""
    d = DATA / f"json_inputs_{lines}"
    if (d / "done").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    depth = 100 if lines >= 100 else lines
    syn = d / "synth"
    subprocess.run([sys.executable, str(SYNTH), "--queries", str(max(1, lines // depth)), "--depth", str(depth),
                    "--runs", "1", "--seed", str(seed), "--out", str(syn)], check=True, stdout=subprocess.DEVNULL)
    os.replace(syn / "run1.txt", d / FORMATS["trec"])
    os.replace(syn / "qrels.txt", d / "qrels.txt")
    shutil.rmtree(syn)
    run: dict[str, dict[str, float]] = {}
    with open(d / FORMATS["trec"], encoding="utf-8") as f, open(d / FORMATS["jsonl"], "w", encoding="utf-8") as jl:
        for line in f:
            q, _, doc, _, score, _ = line.split()
            run.setdefault(q, {})[doc] = float(score)
            jl.write(json.dumps({"query_id": q, "doc_id": doc, "score": float(score)}) + "\n")
    with open(d / FORMATS["json"], "w", encoding="utf-8") as f:
        json.dump(run, f, indent=2)
    (d / "done").write_text("ok\n")
    return d


def command(run: Path, qrels: Path, out: Path, per_query: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", f"lane={run}", "--qrels", str(qrels),
           "--resamples", "0", "--out", str(out)]
    return cmd + (["--per-query", str(per_query)] if per_query is not None else [])


def spawn(cmd: list[str], code: Path) -> tuple[float, float]:
    """Run ``cmd`` with ``code`` first on the path: (wall s, CPU s); a failure stops the benchmark."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code)
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=str(code), env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"failed: {' '.join(cmd)}\n{err.read().decode(errors='replace')[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime


def _ratios(xs: list[float], base: list[float]) -> list[float]:
    return [x / b for x, b in zip(xs, base)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3, help="rounds (every code and format once per round)")
    ap.add_argument("--before", type=Path, default=DEFAULT_BEFORE,
                    help="a checkout of the code to compare against (default: the main checkout beside this one)")
    args = ap.parse_args(argv)
    codes = {"after": ROOT}
    if args.before is not None:
        codes = {"before": args.before.resolve(), "after": ROOT}
    import compileall  # cached bytecode, as an installed package starts

    for code in codes.values():
        compileall.compile_dir(str(code / "rankscope_tui"), quiet=1)
    d = generate(args.lines)
    pairs = [(c, f) for c in codes for f in FORMATS]
    load_start = os.getloadavg()
    wall: dict[str, list[float]] = {f"{c} {f}": [] for c, f in pairs}
    cpu: dict[str, list[float]] = {f"{c} {f}": [] for c, f in pairs}
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        for c, f in pairs:
            spawn(command(d / FORMATS[f], d / "qrels.txt", tmp / "r.json", tmp / f"{c}_{f}.csv"), codes[c])
        base = (tmp / "after_trec.csv").read_bytes()
        equal = {f"{c} {f}": (tmp / f"{c}_{f}.csv").read_bytes() == base for c, f in pairs}
        for rep in range(args.reps):
            k = rep % len(pairs)
            for c, f in pairs[k:] + pairs[:k]:
                w, u = spawn(command(d / FORMATS[f], d / "qrels.txt", tmp / "report.json"), codes[c])
                wall[f"{c} {f}"].append(w)
                cpu[f"{c} {f}"].append(u)
            print(f"round {rep + 1}/{args.reps}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in wall.items()),
                  file=sys.stderr, flush=True)
    load_end = os.getloadavg()
    sizes = {f: (d / FORMATS[f]).stat().st_size for f in FORMATS}
    rows, summary = [], {}
    for c, f in pairs:
        key = f"{c} {f}"
        rw = _ratios(wall[key], wall[f"{c} trec"])
        rc = _ratios(cpu[key], cpu[f"{c} trec"])
        met = "-" if f == "trec" else ("met" if statistics.median(rw) <= TARGET else "missed")
        summary[key] = {"file_bytes": sizes[f], "wall_median": statistics.median(wall[key]),
                        "wall_min": min(wall[key]), "wall_max": max(wall[key]), "cpu_median": statistics.median(cpu[key]),
                        "wall_ratio_vs_trec": [min(rw), statistics.median(rw), max(rw)],
                        "cpu_ratio_vs_trec": [min(rc), statistics.median(rc), max(rc)],
                        "per_query_csv_equal_to_trec": equal[key]}
        rows.append(f"| {c} | {f} | {sizes[f] / 1e6:,.1f} MB | {statistics.median(wall[key]):.2f} s | "
                    f"{min(wall[key]):.2f}-{max(wall[key]):.2f} s | {statistics.median(cpu[key]):.2f} s | "
                    f"{statistics.median(rw):.2f}x ({min(rw):.2f}-{max(rw):.2f}) | "
                    f"{statistics.median(rc):.2f}x ({min(rc):.2f}-{max(rc):.2f}) | {met} | "
                    f"{'yes' if equal[key] else 'NO'} |")
    speedup = {f: [b / a for b, a in zip(wall[f"before {f}"], wall[f"after {f}"])]
               for f in FORMATS if "before" in codes}
    lines_read = sum(1 for _ in open(d / FORMATS["trec"], "rb"))
    import numpy
    import pyarrow

    machine = (f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
               f"numpy {numpy.__version__}, pyarrow {pyarrow.__version__}")
    md = [f"# JSON and JSON Lines inputs against TREC text ({lines_read:,} lines, {args.reps} rounds)", "",
          f"machine: {machine}; load average (1, 5, 15 min) {', '.join(f'{x:.2f}' for x in load_start)} at the "
          f"start, {', '.join(f'{x:.2f}' for x in load_end)} at the end (the 2 cores are shared: CPU time is the "
          "steadier figure)", "",
          "Each row: the whole `rankscope evaluate --lane lane=FILE --qrels qrels.txt --resamples 0 --out "
          "report.json` process, a fresh process per measurement; `before` is the main branch's code, `after` this "
          "branch's; every (code, format) pair takes a turn in every round, the order rotating. Ratios against TREC "
          "text with the same code, in the same round: median (min-max). Target: JSON and JSON Lines within "
          f"{TARGET}x of TREC text.", "",
          "| code | format | file | wall median | wall min-max | CPU median | wall vs TREC | CPU vs TREC | target "
          "| per-query CSV equal to TREC's |",
          "|---|---|---:|---:|---:|---:|---:|---:|---|---|", *rows, ""]
    if speedup:
        md += ["Speed-up, before / after in the same round (wall): " + "; ".join(
            f"{f} {statistics.median(v):.2f}x ({min(v):.2f}-{max(v):.2f})" for f, v in speedup.items()), ""]
    md += ["Data: `benchmarks/bench_json_inputs.py` docstring.", ""]
    text = "\n".join(md)
    result = {"lines": lines_read, "rounds": args.reps, "machine": machine, "load_average_start": load_start,
              "load_average_end": load_end, "summary": summary, "wall_s": wall, "cpu_s": cpu,
              "speedup_before_over_after": speedup}
    RESULTS.mkdir(exist_ok=True)
    suffix = "" if args.lines == 1_000_000 else f"_{args.lines}"
    (RESULTS / f"json_inputs{suffix}.md").write_text(text)
    (RESULTS / f"json_inputs{suffix}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
