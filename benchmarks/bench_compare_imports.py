"""What a small compare spends on imports against a small evaluate (issue 35, item 3):
SciPy only where the standard library does not suffice.

    .venv/bin/python benchmarks/bench_compare_imports.py [--reps 5] [--before PATH-TO-CHECKOUT]

On Cranfield (``../shared/data/cranfield``: the bm25 and dense lanes, the test qrels),
``rankscope compare`` and ``rankscope evaluate`` at their defaults, each a fresh
process under ``python -X importtime``, with this checkout's code ("after") and with
``--before`` (default: the main checkout beside the worktrees), taking turns in every
round. Reported per (code, command): the import time (the sum of the top-level
imports' cumulative times as ``-X importtime`` prints them), the whole process's wall
time, and how many SciPy modules it loaded; min, median and max over rounds. Writes
``results/compare_imports.md`` and ``.json``. Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared" / "data").is_dir() else ROOT.parents[1] / "shared"
CRANFIELD = SHARED / "data" / "cranfield"
DEFAULT_BEFORE = ROOT.parents[1] / "main" if (ROOT.parents[1] / "main").is_dir() else None
LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)")


def measure(code: Path, command: str, out: Path) -> tuple[float, float, int]:
    """(import seconds, wall seconds, SciPy modules) of one process."""
    lanes = CRANFIELD / "lanes"
    cmd = [sys.executable, "-X", "importtime", "-m", "rankscope_tui.cli", command, "--lane", str(lanes / "bm25.run"),
           "--lane", str(lanes / "dense.run"), "--qrels", str(CRANFIELD / "qrels-test.txt"), "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=str(code))
    t = time.perf_counter()
    got = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(out.parent))
    wall = time.perf_counter() - t
    if got.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{got.stderr[-2000:]}")
    total, scipy = 0, 0
    for m in map(LINE.match, got.stderr.splitlines()):
        if m is None:
            continue
        if len(m.group(2)) == 0:  # a top-level import: its cumulative time holds its children's
            total += int(m.group(1))
        scipy += m.group(3).split(".")[0] == "scipy"
    return total / 1e6, wall, scipy


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--before", type=Path, default=DEFAULT_BEFORE)
    args = ap.parse_args(argv)
    codes = {"after": ROOT} if args.before is None else {"before": args.before.resolve(), "after": ROOT}
    pairs = [(c, cmd) for c in codes for cmd in ("evaluate", "compare")]
    got: dict[str, dict[str, list[float]]] = {f"{c} {cmd}": {"imports": [], "wall": [], "scipy": []} for c, cmd in pairs}
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmpd:
        for rep in range(args.reps + 1):
            k = rep % len(pairs)
            for c, cmd in pairs[k:] + pairs[:k]:
                imp, wall, sc = measure(codes[c], cmd, Path(tmpd) / "out.json")
                if rep:  # the first round warms the caches (bytecode, page cache)
                    for name, v in (("imports", imp), ("wall", wall), ("scipy", sc)):
                        got[f"{c} {cmd}"][name].append(v)
    load_end = os.getloadavg()

    def mmm(xs: list[float], unit: str = " s") -> str:
        return f"{statistics.median(xs):.2f}{unit} ({min(xs):.2f}-{max(xs):.2f})"

    rows = [f"| {k} | {mmm(v['imports'])} | {mmm(v['wall'])} | {int(statistics.median(v['scipy']))} |"
            for k, v in got.items()]
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    md = "\n".join([
        f"# compare's imports against evaluate's (Cranfield, two lanes, {args.reps} rounds)", "",
        f"machine: {machine}; load average (1, 5, 15 min) {', '.join(f'{x:.2f}' for x in load_start)} at the start, "
        f"{', '.join(f'{x:.2f}' for x in load_end)} at the end (the 2 cores are shared)", "",
        "Each row: `rankscope evaluate|compare --lane bm25.run --lane dense.run --qrels qrels-test.txt --out F` at its "
        "defaults under `python -X importtime`, a fresh process each time; `before` is the main branch's code, "
        "`after` this branch's. Median (min-max) over rounds.", "",
        "| code, command | import time | wall time | SciPy modules loaded |", "|---|---:|---:|---:|", *rows, "",
        "Data: `benchmarks/bench_compare_imports.py` docstring.", ""])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compare_imports.md").write_text(md)
    (RESULTS / "compare_imports.json").write_text(json.dumps(
        {"rounds": args.reps, "machine": machine, "load_average_start": load_start, "load_average_end": load_end,
         "measurements": got}, indent=1, sort_keys=True) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
