"""Benchmark: the dashboard's speed targets (issues 20 and 35), on the real app, whole process
where it starts, same run against another checkout (``--against``, e.g. main).

1. **First frame with data** (Cranfield: three lanes, two stratifications, corpus, texts,
   in-domain and out-of-domain negatives, group separator, dev qrels; the command line of
   ``cranfield_argv``): ``python -m rankscope_tui.cli tui ...`` is spawned in a
   pseudo-terminal (160×50) and its output is read, escape sequences stripped, until
   (a) the first frame is written (the header's "1 Overview"), (b) the Overview's
   lanes × metrics table shows a lane's mean ("bm25 doc 0.xxx": the first frame with
   data), (c) the report's intervals are in that table. Targets: (a) drawn before the
   inputs are read (a live app at once on a busy machine), (b) < 0.5 s on a quiet machine.
2. **Revisit of every view** (Cranfield, ``App.run_test`` at 160×50): each view is shown
   once (its first visit, timed too), then every view is revisited in ``--rounds`` rounds;
   latency = from the key press to the first frame the compositor draws with that view
   (``App._display``). Target: every view's median revisit < 150 ms.
3. **Slider redraw at 7M lines** (two synthetic 7M-line lanes, ``synth.py --queries 7000
   --depth 1000 --runs 2 --seed 1``, generated into ``benchmarks/data/rrf-7M`` when
   absent; ``--resamples 0``): the RRF view is opened headless, then → is pressed, each
   press waiting for the plot's render at the new k; latency = key → end of that render
   (and the kernel's share: the fusion call alone). Target: median < 200 ms.
4. **Frozen frames**: a 5 ms asyncio ticker inside the app records the event loop's
   longest gap during start-up and loading, during view switches, and during slider steps.
   Target: no gap over 100 ms (a stall a person sees), every heavy step in a worker.

Every measurement runs in a fresh child process (``--child``) per checkout, the checkouts
taking turns (round robin), so both see the same machine load. Medians and spreads (min,
max) are reported.

    python benchmarks/bench_tui.py [--against ../main] [--starts 7] [--rounds 3]
                                   [--presses 15] [--skip-7m] [--data-7m DIR]

Writes benchmarks/results/tui.md and tui.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
from benchmarks.paths import CRANFIELD, SYNTH, shown  # noqa: E402

if "--child" in sys.argv:
    # a child measures the checkout it runs in (its cwd, also its PYTHONPATH), never the
    # checkout this script belongs to, which the line above put first on the path
    sys.path.insert(0, os.getcwd())

SIZE = (160, 50)

TARGETS = {"first_frame_with_data_s": 0.5, "revisit_ms": 150, "slider_7m_ms": 200, "frozen_ms": 100}

# the pty output with escape sequences removed is searched for these
_ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\x1b\][^\x07]*\x07")
SENTINELS = (
    ("frame", re.compile(rb"1 Overview")),
    ("data", re.compile(rb"bm25\W+doc\W+0\.\d{3}")),
    ("report", re.compile(rb"bm25\W+doc\W+0\.\d{3} \.\d\d\xe2\x80\x93\.\d\d")),
)


def cranfield_argv(d: Path = CRANFIELD) -> list[str]:
    return [
        "--lane", str(d / "lanes/bm25.run"), "--lane", str(d / "lanes/tfidf.run"), "--lane", str(d / "lanes/dense.run"),
        "--qrels", str(d / "qrels-test.txt"), "--ood-negatives", str(d / "qrels-ood-negatives.txt"),
        "--strata", str(d / "strata.tsv"), "--strata", str(d / "strata-length.tsv"),
        "--corpus", str(d / "passages.tsv"), "--queries", str(d / "queries.tsv"), "--docs", str(d / "passages.tsv"),
        "--group-sep", "#", "--gate-on", "dense", "--dev-qrels", str(d / "qrels-dev.txt"),
    ]


def lanes_7m_argv(d: Path) -> list[str]:
    return ["--lane", f"a={d / 'run1.txt'}", "--lane", f"b={d / 'run2.txt'}", "--qrels", str(d / "qrels.txt"),
            "--resamples", "0"]


def ensure_7m(d: Path) -> None:
    if all((d / n).exists() for n in ("run1.txt", "run2.txt", "qrels.txt")):
        return
    d.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(SYNTH), "--queries", "7000", "--depth", "1000", "--runs", "2",
                    "--out", str(d), "--seed", "1"], check=True)


def child_env(tree: Path) -> dict:
    """A child's environment: ``tree`` first on the path; bytecode caching on (as for an
    installed package: a start reads compiled modules)."""
    env = dict(os.environ, PYTHONPATH=str(tree), COLORTERM="truecolor", TERM="xterm-256color")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def summary(xs: list[float]) -> dict:
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


# ----------------------------------------------------------------------------- 1. first frame (pty)


def time_start(tree: Path, argv: list[str], timeout: float = 60.0) -> dict:
    """Seconds from spawning `rankscope tui ARGV` (``tree``'s code) until each sentinel is on
    its terminal; then `q`, and the process is reaped."""
    import fcntl
    import pty
    import struct
    import termios

    env = child_env(tree)
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.chdir(tree)
        os.execve(sys.executable, [sys.executable, "-m", "rankscope_tui.cli", "tui", *argv], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    t0 = time.perf_counter()
    seen: dict[str, float] = {}
    buf = b""
    try:
        while time.perf_counter() - t0 < timeout and len(seen) < len(SENTINELS):
            r, _, _ = select.select([fd], [], [], 0.01)
            if not r:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            now = time.perf_counter() - t0
            buf += chunk
            plain = _ESCAPES.sub(b"", buf)
            for name, rx in SENTINELS:
                if name not in seen and rx.search(plain):
                    seen[name] = now
    finally:
        try:
            os.write(fd, b"q")
        except OSError:
            pass
        deadline = time.perf_counter() + 5
        while time.perf_counter() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            try:
                if select.select([fd], [], [], 0.05)[0]:
                    os.read(fd, 1 << 16)
            except OSError:
                pass
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
    return {name: seen.get(name) for name, _ in SENTINELS}


#: processes that do only what any dashboard holding the data must do before its first frame
#: with data: start Python and import Textual's app, and also numpy and pyarrow's CSV reader
#: (what the loaded inputs are held in); timed whole, as the starts are
FLOORS = {
    "python -c 'import textual.app'": "import textual.app",
    "python -c 'import textual.app, numpy, pyarrow.csv'": "import textual.app, numpy, pyarrow.csv",
}


def time_floor(tree: Path, code: str) -> float:
    """Wall seconds of a whole ``python -c CODE`` process (``tree``'s environment)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=child_env(tree), cwd=tree, check=True)
    return time.perf_counter() - t0


# ----------------------------------------------------------------------------- in-app children


class LoopWatch:
    """The event loop's gaps: a task that sleeps 5 ms and records how late each wake-up is
    (with the phase the benchmark is in)."""

    def __init__(self) -> None:
        self.phase = "start"
        self.worst: dict[str, float] = {}
        self.over_50: dict[str, int] = {}
        self._task = None

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gap = now - last - 0.005
            last = now
            self.worst[self.phase] = max(self.worst.get(self.phase, 0.0), gap)
            if gap > 0.05:
                self.over_50[self.phase] = self.over_50.get(self.phase, 0) + 1

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    def stop(self) -> dict:
        if self._task is not None:
            self._task.cancel()
        return {"worst_ms": {k: 1000 * v for k, v in self.worst.items()}, "gaps_over_50ms": self.over_50}


def _frame_hook(app) -> list:
    """Timestamps of the frames the compositor hands to the driver: [(t, screen)]."""
    frames: list = []
    original = app._display

    def display(screen, renderable):
        if renderable is not None:
            frames.append((time.perf_counter(), screen))
        return original(screen, renderable)

    app._display = display
    return frames


async def _report_in(app, pilot, t0: float, limit_s: float, poll_s: float) -> None:
    """Wait (polling every ``poll_s``, at most ``limit_s`` after ``t0``) until the app holds
    its report or its load error, then until the screen settles."""
    while app.state.report is None and app.state.report_error is None and time.perf_counter() - t0 < limit_s:
        await asyncio.sleep(poll_s)
    await _settle(app, pilot)


async def _settle(app, pilot) -> None:
    from textual.worker import WorkerCancelled

    try:
        await app.workers.wait_for_complete()
    except WorkerCancelled:
        pass
    await pilot.pause()


def _as_the_command_starts() -> None:
    """What `rankscope tui` does before it makes the app (``commands/tui.run``): the cyclic
    collector paused until the first frame with data, when the app turns it back on with
    the dashboard's thresholds (``startup.resume_collector``); a checkout without it: nothing."""
    try:
        from rankscope_tui.startup import pause_collector
    except ImportError:
        return
    pause_collector()


async def child_revisit(rounds: int) -> dict:
    _as_the_command_starts()
    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.screens import VIEWS

    watch = LoopWatch()
    t0 = time.perf_counter()
    app = RankscopeApp(state_from_args(parse_args(cranfield_argv()), source_label="cranfield"))
    frames = _frame_hook(app)
    first: dict[str, float] = {}
    again: dict[str, list[float]] = {}
    async with app.run_test(size=SIZE) as pilot:
        watch.start()
        await _report_in(app, pilot, t0, 120, 0.01)
        loaded_s = time.perf_counter() - t0
        watch.phase = "views"
        keys = {mode: str(i) for i, (mode, _) in enumerate(VIEWS, 1) if mode != "query"}
        order = list(keys)[1:] + list(keys)[:1]  # the Overview is shown at start: revisited last
        for rnd in range(rounds + 1):
            for mode in order:
                n = len(frames)
                t = time.perf_counter()
                await pilot.press(keys[mode])
                while not any(s is app.screen for _, s in frames[n:]) and time.perf_counter() - t < 30:
                    await asyncio.sleep(0.001)
                drawn = next((f for f, s in frames[n:] if s is app.screen), None)
                ms = None if drawn is None else 1000 * (drawn - t)
                if rnd == 0 and mode != "overview":
                    first[mode] = ms
                else:
                    again.setdefault(mode, []).append(ms)
                await _settle(app, pilot)
                await pilot.pause(0.05)
    return {"loaded_headless_s": loaded_s, "first_visit_ms": first, "revisit_ms": again, "loop": watch.stop()}


async def child_slider(data: Path, presses: int) -> dict:
    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.screens import screen_class
    from rankscope_tui.widgets.kslider import KSlider
    from rankscope_tui.widgets.plot import TermPlot

    _as_the_command_starts()
    RRFScreen = screen_class("rrf")
    renders: list[tuple[float, int | None]] = []
    original = TermPlot.render

    def render(self):
        out = original(self)
        screen = self.screen
        if isinstance(screen, RRFScreen) and self.id == "rrf-plot":
            renders.append((time.perf_counter(), screen.drawn_k))
        return out

    TermPlot.render = render
    watch = LoopWatch()
    t0 = time.perf_counter()
    app = RankscopeApp(state_from_args(parse_args(lanes_7m_argv(data)), source_label="synthetic 7M"))
    latencies: list[float | None] = []
    kernel: list[float | None] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            watch.start()
            await _report_in(app, pilot, t0, 600, 0.05)
            load_s = time.perf_counter() - t0
            watch.phase = "open rrf"
            t1 = time.perf_counter()
            await pilot.press("4")
            screen = app.screen
            while screen.drawn_k is None and time.perf_counter() - t1 < 600:
                await asyncio.sleep(0.01)
            open_s = time.perf_counter() - t1
            await _settle(app, pilot)
            screen.query_one(KSlider).focus()
            await pilot.pause(0.3)
            watch.phase = "slider"
            for _ in range(presses):
                k_next = screen.k + 1
                renders.clear()
                t = time.perf_counter()
                await pilot.press("right")
                deadline = time.perf_counter() + 120
                while not any(k == k_next for _, k in renders) and time.perf_counter() < deadline:
                    await asyncio.sleep(0.001)
                done = next((r for r, k in renders if k == k_next), None)
                latencies.append(None if done is None else 1000 * (done - t))
                ks = getattr(screen, "kernel_seconds", None)
                kernel.append(None if ks is None else 1000 * ks)
                await pilot.pause(0.15)  # each press a fresh gesture (older checkouts: past their quiet window)
            rows = int(sum(app.ws.lanes[n].n_rows for n in app.ws.input_lanes))
            prepared = bool(getattr(screen._explorer, "prepares", False))
            sweeps = bool(getattr(screen._explorer, "sweeps", False))
            top = getattr(screen._explorer, "_top", None) is not None  # RRFTop: the first d ranks only
    finally:
        TermPlot.render = original
    return {"load_and_report_s": load_s, "open_rrf_s": open_s, "latency_ms": latencies, "kernel_ms": kernel,
            "rows": rows, "prepared_table": prepared, "sweep": sweeps, "top": top, "loop": watch.stop()}


def run_child(tree: Path, kind: str, args: argparse.Namespace, timeout: float = 1800) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--rounds", str(args.rounds),
           "--presses", str(args.presses), "--data-7m", str(args.data_7m)]
    p = subprocess.run(cmd, cwd=tree, env=child_env(tree), capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{kind} child for {tree} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- report


def _fmt_s(x) -> str:
    return "—" if x is None else f"{x:.2f} s"


def _fmt_ms(x) -> str:
    return "—" if x is None else f"{x:.0f} ms"


def _spread(s: dict, fmt) -> str:
    if s["median"] is None:
        return "—"
    return f"{fmt(s['median'])} ({fmt(s['min'])}–{fmt(s['max'])})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default=None, help="another checkout to measure in the same run (e.g. ../main)")
    ap.add_argument("--starts", type=int, default=7, help="whole-process starts per checkout")
    ap.add_argument("--rounds", type=int, default=3, help="revisit rounds over the views")
    ap.add_argument("--revisit-runs", type=int, default=2, help="revisit children per checkout")
    ap.add_argument("--presses", type=int, default=15, help="slider presses at 7M lines")
    ap.add_argument("--slider-runs", type=int, default=1, help="slider children per checkout (taking turns)")
    ap.add_argument("--skip-7m", action="store_true")
    ap.add_argument("--first-only", action="store_true",
                    help="section 1 alone (the first frames), written to results/tui_first.md and .json")
    ap.add_argument("--data-7m", default=str(HERE / "data" / "rrf-7M"))
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--child", choices=["revisit", "slider"], help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child == "revisit":
        print(json.dumps(asyncio.run(child_revisit(args.rounds))))
        return 0
    if args.child == "slider":
        print(json.dumps(asyncio.run(child_slider(Path(args.data_7m), args.presses))))
        return 0

    trees = {"this": ROOT}
    if args.against:
        trees["against"] = Path(args.against).resolve()
    load_before = os.getloadavg()[0]
    argv = cranfield_argv()
    for tree in trees.values():  # one start each first: compiled modules cached, files in the page cache
        time_start(tree, argv)
    starts: dict[str, list[dict]] = {k: [] for k in trees}
    floors: dict[str, list[float]] = {k: [] for k in FLOORS}
    for rep in range(args.starts):
        # the order alternates each round, so a burst of load falls on both alike
        for name, tree in (list(trees.items()) if rep % 2 == 0 else list(trees.items())[::-1]):
            starts[name].append(time_start(tree, argv))
        if args.first_only:
            for label, code in FLOORS.items():
                floors[label].append(time_floor(ROOT, code))
    if args.first_only:
        return first_only(starts, trees, args, load_before, floors)
    revisit: dict[str, list[dict]] = {k: [] for k in trees}
    for _ in range(args.revisit_runs):
        for name, tree in trees.items():
            revisit[name].append(run_child(tree, "revisit", args))
    slider: dict[str, dict] = {}
    if not args.skip_7m:
        ensure_7m(Path(args.data_7m))
        runs: dict[str, list[dict]] = {k: [] for k in trees}
        for _ in range(args.slider_runs):  # the checkouts taking turns
            for name, tree in trees.items():
                runs[name].append(run_child(tree, "slider", args, timeout=3600))
        for name, rs in runs.items():  # every press of every run; the worst gap of any run
            worst: dict[str, float] = {}
            for r in rs:
                for phase, ms in r["loop"]["worst_ms"].items():
                    worst[phase] = max(worst.get(phase, 0.0), ms)
            slider[name] = {**rs[0], "latency_ms": [x for r in rs for x in r["latency_ms"]],
                            "kernel_ms": [x for r in rs for x in r["kernel_ms"]],
                            "load_and_report_s": statistics.median(r["load_and_report_s"] for r in rs),
                            "open_rrf_s": statistics.median(r["open_rrf_s"] for r in rs),
                            "runs": len(rs), "loop": {"worst_ms": worst}}
    load_after = os.getloadavg()[0]

    result = {"targets": TARGETS, "starts": {}, "revisit": {}, "slider_7m": {}, "frozen": {}}
    for name in trees:
        result["starts"][name] = {s: summary([r[s] for r in starts[name]]) for s, _ in SENTINELS}
        result["starts"][name]["raw"] = starts[name]
        modes = list(revisit[name][0]["revisit_ms"])
        result["revisit"][name] = {
            "first_visit_ms": {m: summary([r["first_visit_ms"].get(m) for r in revisit[name]]) for m in modes if m != "overview"},
            "revisit_ms": {m: summary([x for r in revisit[name] for x in r["revisit_ms"][m]]) for m in modes},
            "loaded_headless_s": summary([r["loaded_headless_s"] for r in revisit[name]]),
        }
        loops = [r["loop"] for r in revisit[name]]
        worst = {}
        for lp in loops:
            for phase, ms in lp["worst_ms"].items():
                worst[phase] = max(worst.get(phase, 0.0), ms)
        if name in slider:
            s = slider[name]
            result["slider_7m"][name] = {**{k: v for k, v in s.items() if k != "loop"}, "latency": summary(s["latency_ms"]),
                                         "kernel": summary(s.get("kernel_ms", []))}
            for phase, ms in s["loop"]["worst_ms"].items():
                worst[f"7M {phase}"] = max(worst.get(f"7M {phase}", 0.0), ms)
        result["frozen"][name] = worst
    env = {"python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}",
           "cpus": os.cpu_count(), "load_average_1min": [load_before, load_after], "trees": {k: shown(v) for k, v in trees.items()}}
    try:
        import textual

        env["textual"] = textual.__version__
    except ImportError:  # pragma: no cover
        pass
    result["environment"] = env
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tui.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    md = render_markdown(result, args)
    (out / "tui.md").write_text(md, encoding="utf-8")
    print(md)
    return 0


def first_only(starts: dict[str, list[dict]], trees: dict[str, Path], args, load_before: float,
               floors: dict[str, list[float]]) -> int:
    """Section 1 alone: ``results/tui_first.json`` and ``.md`` (``tui.md`` keeps the full run)."""
    load_after = os.getloadavg()[0]
    result = {"targets": TARGETS, "starts": {}}
    for name in trees:
        result["starts"][name] = {s: summary([r[s] for r in starts[name]]) for s, _ in SENTINELS}
        result["starts"][name]["raw"] = starts[name]
    result["environment"] = {"python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}",
                             "cpus": os.cpu_count(), "load_average_1min": [load_before, load_after],
                             "trees": {k: shown(v) for k, v in trees.items()}}
    label = {"this": "this checkout", "against": f"against ({result['environment']['trees'].get('against', '')})"}

    def cell(d: dict) -> str:
        return "—" if d["median"] is None else f"{d['median']:.2f} s ({d['min']:.2f} s–{d['max']:.2f} s)"

    this = result["starts"]["this"]["data"]["median"]
    L = ["# Dashboard: first frame with data (issue 35, item 1; `bench_tui.py --first-only`)", "",
         f"Python {platform.python_version()}, {os.cpu_count()} CPUs shared with other jobs; 1-minute load average "
         f"{load_before:.1f} at the start, {load_after:.1f} at the end. `rankscope tui` on Cranfield (the command line "
         f"of section 1 in `tui.md`) in a 160×50 pseudo-terminal, {args.starts} starts per checkout after one untimed "
         "each, the checkouts alternating. Median (min–max).", "",
         "| checkout | first frame | first frame with data (lane means) | report on screen (B = 9,999 intervals) |",
         "|---|---:|---:|---:|"]
    for name in trees:
        st = result["starts"][name]
        L.append(f"| {label[name]} | {cell(st['frame'])} | {cell(st['data'])} | {cell(st['report'])} |")
    ok = this is not None and this < TARGETS["first_frame_with_data_s"]
    L += ["", f"Target: first frame with data < {TARGETS['first_frame_with_data_s']} s — {_met(ok if this is not None else None)}.", ""]
    result["floors"] = {k: summary(v) | {"raw": v} for k, v in floors.items()}
    L += ["## Floors (the same rounds, whole processes)", "",
          "What any dashboard must do before its first frame with data, timed as the starts are: start Python and "
          "import Textual's app, and also numpy and pyarrow's CSV reader, which hold the loaded inputs.", "",
          "| process | wall |", "|---|---:|"]
    for k in floors:
        L.append(f"| `{k}` | {cell(result['floors'][k])} |")
    L.append("")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tui_first.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / "tui_first.md").write_text("\n".join(L), encoding="utf-8")
    print("\n".join(L))
    return 0


def _met(ok: bool | None) -> str:
    return "—" if ok is None else ("**met**" if ok else "**missed**")


def render_markdown(r: dict, args) -> str:
    names = list(r["starts"])
    label = {"this": "this checkout", "against": f"against ({r['environment']['trees'].get('against', '')})"}
    env = r["environment"]
    T = r["targets"]
    L = ["# Dashboard speed (issues 20 and 35)", "",
         f"Python {env['python']}, Textual {env.get('textual', '?')}, {env['platform']}, {env['cpus']} CPUs shared with "
         f"other jobs: 1-minute load average {env['load_average_1min'][0]:.1f} before, {env['load_average_1min'][1]:.1f} after. "
         "One run of `benchmarks/bench_tui.py`; every measurement in a fresh process, the checkouts taking turns, so "
         "compare the columns of one table: the seconds move with the machine's load, the ratios much less. "
         "Median (min–max).", ""]
    this = r["starts"]["this"]
    ok1 = this["data"]["median"] is not None and this["data"]["median"] < T["first_frame_with_data_s"]
    L += ["## 1. First frame with data (Cranfield, whole process, 160×50 pseudo-terminal)", "",
          f"`rankscope tui` with Cranfield's three lanes, qrels, out-of-domain negatives, two strata files, corpus, "
          f"query and doc texts, group separator and dev qrels; {args.starts} starts per checkout after one warm-up.", "",
          "| checkout | first frame | first frame with data (lane means) | report on screen (B = 9,999 intervals) |",
          "|---|---:|---:|---:|"]
    for n in names:
        s = r["starts"][n]
        L.append(f"| {label[n]} | {_spread(s['frame'], _fmt_s)} | {_spread(s['data'], _fmt_s)} | {_spread(s['report'], _fmt_s)} |")
    L += ["", f"Target: first frame with data < {T['first_frame_with_data_s']} s — {_met(ok1)}.", ""]

    L += ["## 2. Every view's revisit (Cranfield, `App.run_test` 160×50, key → first frame with the view)", "",
          "| view | " + " | ".join(f"first visit, {label[n]} | revisit, {label[n]}" for n in names) + " |",
          "|---|" + "---:|---:|" * len(names)]
    modes = list(r["revisit"]["this"]["revisit_ms"])
    worst_revisit = 0.0
    for m in modes:
        cells = []
        for n in names:
            fv = r["revisit"][n]["first_visit_ms"].get(m)
            rv = r["revisit"][n]["revisit_ms"].get(m)
            cells += [_spread(fv, _fmt_ms) if fv else "(start view)", _spread(rv, _fmt_ms) if rv else "—"]
        worst_revisit = max(worst_revisit, r["revisit"]["this"]["revisit_ms"][m]["median"] or 0.0)
        L.append(f"| {m} | " + " | ".join(cells) + " |")
    ok2 = worst_revisit < T["revisit_ms"]
    L += ["", f"{args.revisit_runs} processes per checkout × {args.rounds} rounds. Target: every view's median revisit "
              f"< {T['revisit_ms']} ms — {_met(ok2)} (slowest median {worst_revisit:.0f} ms).", ""]

    if r["slider_7m"]:
        s7 = r["slider_7m"]
        L += ["## 3. RRF slider at 7M lines (two synthetic 7M-line lanes, `--resamples 0`, headless)", "",
              "| checkout | ranked rows | fused from | load + report | RRF view open | key → redrawn plot | the fusion alone |",
              "|---|---:|---|---:|---:|---:|---:|"]
        for n in names:
            if n in s7:
                x = s7[n]
                src = ("ranks prepared once, only the docs able to reach the top d (RRFTop)" if x.get("top") else
                       "ranks prepared once (sweep)" if x.get("sweep") else
                       "the prepared fusion table" if x["prepared_table"] else "the lanes, each k")
                kern = _spread(x["kernel"], _fmt_ms) if x.get("kernel") else "—"
                L.append(f"| {label[n]} | {x['rows']:,} | {src} | {_fmt_s(x['load_and_report_s'])} | {_fmt_s(x['open_rrf_s'])} | "
                         f"{_spread(x['latency'], _fmt_ms)} | {kern} |")
        med = s7["this"]["latency"]["median"]
        ok3 = med is not None and med < T["slider_7m_ms"]
        runs = s7["this"].get("runs", 1)
        L += ["", f"{args.presses} presses per process, {runs} process{'es' if runs > 1 else ''} per checkout taking turns "
                  f"(load + report and RRF view open: their median). Target: < {T['slider_7m_ms']} ms — {_met(ok3)}.", ""]
    else:
        ok3 = None
        L += ["## 3. RRF slider at 7M lines", "",
              "Not run in this table (`--skip-7m`); the kernel's share of a step at 7M lines is in "
              "`benchmarks/results/tui_profile.md`.", ""]

    L += ["## 4. Frozen frames: the event loop's longest gap (5 ms ticker inside the app)", "",
          "| phase | " + " | ".join(label[n] for n in names) + " |", "|---|" + "---:|" * len(names)]
    phases = list(dict.fromkeys(p for n in names for p in r["frozen"][n]))
    for p in phases:
        L.append(f"| {p} | " + " | ".join(_fmt_ms(r["frozen"][n].get(p)) for n in names) + " |")
    worst = max(r["frozen"]["this"].values()) if r["frozen"]["this"] else None
    ok4 = worst is not None and worst < T["frozen_ms"]
    L += ["", "start = start-up, loading and the report; views = the view switches of table 2; 7M phases = table 3. "
              f"Target: no gap over {T['frozen_ms']} ms — {_met(ok4)} (worst {_fmt_ms(worst)}).", ""]
    L += ["## Targets", "", "| target | status |", "|---|---|",
          f"| first frame with data < {T['first_frame_with_data_s']} s (Cranfield) | {_met(ok1)}: {_fmt_s(this['data']['median'])} |",
          f"| every view's revisit < {T['revisit_ms']} ms | {_met(ok2)}: slowest {worst_revisit:.0f} ms |",
          f"| slider redraw < {T['slider_7m_ms']} ms at 7M lines | {_met(ok3)}"
          + (f": {_fmt_ms(r['slider_7m']['this']['latency']['median'])} |" if r["slider_7m"] else ": not run |"),
          f"| never a frozen frame (no loop gap > {T['frozen_ms']} ms) | {_met(ok4)}: worst {_fmt_ms(worst)} |", ""]
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
