"""Benchmark: the dashboard's memory in the RRF view against the CLI's (issue 14, item 9).

Two synthetic 7M-line lanes (``../shared/tools/synth.py --queries 7000 --depth 1000
--runs 2 --seed 1``, generated into ``benchmarks/data/rrf-7M`` when absent). Each side runs
in its own child process and its peak resident set is read from ``os.wait4`` (ru_maxrss,
the whole process):

(a) the CLI: ``rankscope evaluate --lane a=run1 --lane b=run2 --qrels qrels --resamples 0``;
(b) the dashboard: the app built from ``commands.tui.state_from_args`` runs headless
    (``App.run_test``), the RRF view is opened (key ``4``), then the k slider is stepped
    N times (→, each step waits for the fused result at the new k to be drawn). The child
    also records its own peak (VmHWM) and current (VmRSS) resident set at each stage.

    .venv/bin/python benchmarks/bench_tui_memory.py [--steps 50] [--data DIR]

Writes benchmarks/results/tui_memory.md and tui_memory.json. Target: dashboard peak after
the steps <= 1.5 x the CLI's peak.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
from benchmarks.paths import SYNTH, shown  # noqa: E402

TARGET = 1.5


def _status(field: str) -> int:
    """/proc/self/status field in bytes (VmHWM: peak resident set, VmRSS: current)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def ensure_data(d: Path) -> None:
    if all((d / n).exists() for n in ("run1.txt", "run2.txt", "qrels.txt")):
        return
    d.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(SYNTH), "--queries", "7000", "--depth", "1000", "--runs", "2",
                    "--out", str(d), "--seed", "1"], check=True)


def peak_of(argv: list[str]) -> dict:
    """Spawn ``argv`` with fork/exec and reap it with os.wait4 for its ru_maxrss."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r, w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.execve(argv[0], argv, env)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    return {"peak_bytes": ru.ru_maxrss * 1024, "seconds": time.perf_counter() - t0,
            "exit": os.waitstatus_to_exitcode(status), "output": b"".join(chunks).decode(errors="replace")}


def lane_args(d: Path) -> list[str]:
    return ["--lane", f"a={d / 'run1.txt'}", "--lane", f"b={d / 'run2.txt'}", "--qrels", str(d / "qrels.txt")]


# ----------------------------------------------------------------------------- the dashboard child


async def _dashboard(d: Path, steps: int) -> dict:
    from textual.worker import WorkerCancelled

    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.screens.rrf import RRFScreen
    from rankscope_tui.widgets.kslider import KSlider

    async def settle() -> None:
        """Wait for the workers (an exclusive worker cancelled by its successor is fine)."""
        while True:
            try:
                await app.workers.wait_for_complete()
                return
            except WorkerCancelled:
                continue

    stages = []

    def mark(name: str) -> None:
        stages.append({"stage": name, "peak_bytes": _status("VmHWM"), "rss_bytes": _status("VmRSS"),
                       "t": time.perf_counter() - t0})

    t0 = time.perf_counter()
    mark("start")
    app = RankscopeApp(state_from_args(parse_args(lane_args(d) + ["--resamples", "0"]), source_label="synthetic"))
    async with app.run_test(size=(160, 50)) as pilot:
        # the app reads its inputs once its first frame is drawn: wait for them and the report
        while app.state.report is None and app.state.report_error is None:
            await asyncio.sleep(0.05)
        await settle()
        await pilot.pause()
        mark("loaded")
        await pilot.press("4")
        screen = app.screen
        assert isinstance(screen, RRFScreen), type(screen)
        await settle()
        await pilot.pause()
        while screen.drawn_k is None:
            await asyncio.sleep(0.05)
        mark("rrf view open")
        screen.query_one(KSlider).focus()
        await pilot.pause()
        for i in range(steps):
            k_next = screen.k + 1
            await pilot.press("right")
            deadline = time.perf_counter() + 120
            while screen.drawn_k != k_next and time.perf_counter() < deadline:
                await asyncio.sleep(0.01)
            if screen.drawn_k != k_next:
                raise RuntimeError(f"k={k_next} was not drawn within 120 s")
            if (i + 1) in (1, 10, 25, 50) or i + 1 == steps:
                mark(f"after {i + 1} steps")
        await settle()
        mark("end")
        ex = screen._explorer
        kept = list(ex.kept) if ex is not None else []
        prepares = bool(getattr(ex, "prepares", True)) if ex is not None else None
        rows = int(sum(app.ws.lanes[n].n_rows for n in app.ws.input_lanes))
        sweeps = bool(getattr(ex, "sweeps", False)) if ex is not None else None
        top = getattr(ex, "_top", None) is not None if ex is not None else None  # RRFTop: the first d ranks only
        return {"stages": stages, "final_k": screen.k, "explorer_kept": kept, "explorer_prepares": prepares,
                "explorer_sweeps": sweeps, "explorer_top": top, "rows": rows, "queries": int(app.ws.n_queries)}


def dashboard_child(d: Path, steps: int) -> int:
    res = asyncio.run(_dashboard(d, steps))
    print("RESULT " + json.dumps(res))
    return 0


# ----------------------------------------------------------------------------- report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--data", default=str(HERE / "data" / "rrf-7M"))
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    d = Path(args.data)
    if args.child:
        return dashboard_child(d, args.steps)

    ensure_data(d)
    load_before = os.getloadavg()[0]
    py = sys.executable
    cli = peak_of([py, "-m", "rankscope_tui.cli", "evaluate", *lane_args(d), "--resamples", "0"])
    print(f"CLI peak {cli['peak_bytes'] / 2**30:.2f} GiB in {cli['seconds']:.0f} s", file=sys.stderr, flush=True)
    if cli["exit"] != 0:
        print(cli["output"][-3000:], file=sys.stderr)
        return 1
    dash = peak_of([py, str(Path(__file__).resolve()), "--child", "--steps", str(args.steps), "--data", str(d)])
    lines = [l for l in dash["output"].splitlines() if l.startswith("RESULT ")]
    if dash["exit"] != 0 or not lines:
        print(dash["output"][-5000:], file=sys.stderr)
        return 1
    inner = json.loads(lines[-1][len("RESULT "):])
    ratio = dash["peak_bytes"] / cli["peak_bytes"]
    env = {"python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}",
           "cpus": os.cpu_count(), "load_average_1min": [load_before, os.getloadavg()[0]]}
    result = {"data": shown(d), "rows": inner["rows"], "queries": inner["queries"], "steps": args.steps,
              "cli": {k: v for k, v in cli.items() if k != "output"},
              "dashboard": {"peak_bytes": dash["peak_bytes"], "seconds": dash["seconds"], "stages": inner["stages"],
                            "final_k": inner["final_k"], "explorer_kept": inner["explorer_kept"],
                            "explorer_prepares": inner.get("explorer_prepares"),
                            "explorer_sweeps": inner.get("explorer_sweeps"), "explorer_top": inner.get("explorer_top")},
              "ratio": ratio, "target_ratio": TARGET, "met": ratio <= TARGET, "environment": env}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tui_memory.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

    def gb(x: int) -> str:
        return f"{x / 2**30:.2f} GiB"

    md = [
        "# Dashboard memory in the RRF view",
        "",
        f"Python {env['python']}, {env['platform']}, {env['cpus']} CPUs; 1-minute load average "
        f"{load_before:.1f} before and {env['load_average_1min'][1]:.1f} after. One run of "
        "`benchmarks/bench_tui_memory.py`.",
        "",
        f"Data: two synthetic lanes (`synth.py --queries 7000 --depth 1000 --runs 2 --seed 1`), "
        f"{inner['rows']:,} ranked rows in all, {inner['queries']:,} query ids.",
        "",
        "Peak resident set of the whole process (`os.wait4` ru_maxrss):",
        "",
        "| process | peak RSS | wall |",
        "|---|---:|---:|",
        f"| CLI: `rankscope evaluate --lane a --lane b --qrels --resamples 0` | {gb(cli['peak_bytes'])} | {cli['seconds']:.0f} s |",
        f"| dashboard: open the RRF view, {args.steps} slider steps (→, each drawn) | {gb(dash['peak_bytes'])} | {dash['seconds']:.0f} s |",
        "",
        f"Ratio dashboard / CLI: **{ratio:.2f}** (target ≤ {TARGET}) — " + ("**met**." if ratio <= TARGET else "**not met**."),
        "",
        "Inside the dashboard process (VmHWM = peak so far, VmRSS = now):",
        "",
        "| stage | peak so far | resident now |",
        "|---|---:|---:|",
        *[f"| {s['stage']} | {gb(s['peak_bytes'])} | {gb(s['rss_bytes'])} |" for s in inner["stages"]],
        "",
        f"Results the explorer holds at the end: k = {', '.join(str(k) for k in inner['explorer_kept']) or '—'} "
        f"(each with the first ranks of its fused lane); "
        + ("fused from a prepared table." if inner.get("explorer_prepares") else
           "each k fused from the lanes' ranks prepared once, only the docs able to reach the first ranks the "
           "metrics read (RRFTop)." if inner.get("explorer_top") else
           "each k re-fused from the lanes' ranks prepared once (RRFSweep)." if inner.get("explorer_sweeps") else
           "each k fused from the lanes (no prepared table)."),
        "",
    ]
    (out / "tui_memory.md").write_text("\n".join(md), encoding="utf-8")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
