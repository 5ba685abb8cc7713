"""Where a `rankscope evaluate --resamples 0` process spends its time, phase by phase.

    .venv/bin/python benchmarks/profile_load.py [--scale 7M] [--runs 3]
    .venv/bin/python benchmarks/profile_load.py --scale 1M --ab ../main . --reps 7

Default: writes ``results/profile.md`` (keeping whatever follows its ``<!-- notes -->``
line): per phase of one whole ``rankscope evaluate --resamples 0 --out report.json``
run (``cli.main``, the same functions the command calls), its wall time, the
process's CPU (user + system, every thread) over the phase and the CPU of the thread
that ran it -- phases run on a worker thread (the duplicate check beside the ordering,
the input digest) are marked ``[thread]`` -- minimum over fresh processes; and a
pyinstrument call tree of one ``Workspace.load`` + ``per_query`` (main thread; the
worker threads' share shows as waits).

``--ab TREE TREE ...``: the whole command in fresh processes, the trees (package
roots, e.g. main's checkout and a branch's) alternating, ``--reps`` each: wall
(from outside), CPU (user + system from ``os.wait4``) and peak RSS, medians with
min-max, the load average before and after, and whether every tree wrote the same
report.json bytes. Printed as a Markdown table; nothing is written.

Not a test: nothing here asserts a time. Each measurement is a fresh process set up
as the ``rankscope`` command is (``cli.process_setup``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
METRICS = "ndcg@10,rr,p@10,recall@100"
NOTES = "<!-- notes -->"

K = "rankscope_tui.kernel."
# (module, attribute, label): the phases, in pipeline order; a missing attribute is skipped
PHASES = [
    (K + "workspace", "read_inputs", "read inputs (all of it)"),
    (K + "readers", "_scan_plain", "  scan: byte checks (a large file as two halves on two threads)"),
    (K + "readers", "_parse_run", "  pyarrow CSV parse (qid, doc, score; pyarrow's threads)"),
    (K + "workspace", "read_qrels", "  read qrels"),
    (K + "workspace", "_encode_sorted_runs", "encode qids (run heads sorted as bytes) + run starts"),
    (K + "encoding", "string_words", "doc words (8-byte big-endian loads)"),
    (K + "encoding", "factorize_words", "doc codes: hash partitions, one sort + neighbour compare each (threads)"),
    (K + "workspace", "_judgments", "judgments"),
    (K + "workspace", "_lane_duplicate", "duplicate check (neighbour pairs from the sort)"),
    (K + "workspace", "rank_lane", "order (block reorder, tie fix), ranks, offsets"),
    (K + "metrics", "doc_level", "grades of hits (doc_level)"),
    (K + "metrics", "compute", "metrics.compute"),
    (K + "pipeline", "evaluate_report", "report contents (evaluate_report)"),
    (K + "pipeline", "attribution_block", "  attribution block"),
    (K + "report", "build", "  report.build"),
    (K + "output", "dumps_strict_parts", "report.json text (dumps_strict_parts)"),
    (K + "output", "write_outputs", "writing the files"),
]
SCALES = {"100k": "n1000_d100", "1M": "n10000_d100", "7M": "n7000_d1000"}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _evaluate_args(data: Path, out: str) -> list[str]:
    return ["evaluate", "--lane", f"run={data / 'run1.txt'}", "--qrels", str(data / "qrels.txt"), "--metrics", METRICS,
            "--resamples", "0", "--out", out]


def child_phases(data: Path) -> dict:
    """One whole evaluate run in this process, every phase of PHASES timed."""
    import importlib

    t_start, c_start = time.perf_counter(), _cpu()
    sys.path.insert(0, str(ROOT))
    rec: dict = {}

    def wrap(mod, name, label):
        f = getattr(mod, name)

        def timed(*a, **k):
            main = threading.current_thread() is threading.main_thread()
            t, c, tc = time.perf_counter(), _cpu(), time.thread_time()
            try:
                return f(*a, **k)
            finally:
                key = label if main else label + " [thread]"
                w0, c0, t0 = rec.get(key, (0.0, 0.0, 0.0))
                rec[key] = (w0 + time.perf_counter() - t, c0 + _cpu() - c, t0 + time.thread_time() - tc)

        setattr(mod, name, timed)

    import rankscope_tui.cli as cli

    cli.process_setup()  # before numpy and pyarrow load, as the command does
    mods = {}
    for m, _, _ in PHASES:
        mods[m] = importlib.import_module(m)
    imports = (time.perf_counter() - t_start, _cpu() - c_start)
    for m, name, label in PHASES:
        if hasattr(mods[m], name):
            wrap(mods[m], name, label)
    from rankscope_tui.kernel.inputs import files

    hexdigest = files.Digest.hexdigest

    def digest(self):
        main = threading.current_thread() is threading.main_thread()
        t, c, tc = time.perf_counter(), _cpu(), time.thread_time()
        try:
            return hexdigest(self)
        finally:
            if time.perf_counter() - t > 1e-3:  # the hashing itself, not a digest already taken
                key = "sha256 of the inputs" + ("" if main else " [thread]")
                w0, c0, t0 = rec.get(key, (0.0, 0.0, 0.0))
                rec[key] = (w0 + time.perf_counter() - t, c0 + _cpu() - c, t0 + time.thread_time() - tc)

    files.Digest.hexdigest = digest
    import contextlib
    import io

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        t, c, tc = time.perf_counter(), _cpu(), time.thread_time()
        cli.main(_evaluate_args(data, str(Path(tmp) / "report.json")))
        total = (time.perf_counter() - t, _cpu() - c, time.thread_time() - tc)
    out = {"interpreter start + imports (before main)": (imports[0], imports[1], imports[1])}
    out.update(rec)
    out["main() in all"] = total
    out["peak RSS MB"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0.0, 0.0)
    return out


def child_tree(data: Path) -> str:
    sys.path.insert(0, str(ROOT))
    from rankscope_tui.cli import process_setup

    process_setup()
    from pyinstrument import Profiler

    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace import loaded as W

    settings = LoadSettings(metrics=tuple(parse_metrics(METRICS)), resamples=0)
    prof = Profiler(interval=0.002)
    prof.start()
    ws = W.Workspace.load([("run", str(data / "run1.txt"))], str(data / "qrels.txt"), settings)
    ws.per_query("run", "doc")
    prof.stop()
    text = prof.output_text(unicode=False, show_all=False)
    lines = [ln.replace(str(ROOT) + "/", "") for ln in text.splitlines() if "frames hidden" not in ln]
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Profile at")), 0)
    return "\n".join(ln for ln in lines[start + 1:] if ln.strip())


def ab(trees: list[str], data: Path, reps: int) -> str:
    """Fresh ``rankscope evaluate`` processes, the trees alternating (order reversed every
    other round); a Markdown table of medians (min-max). Each process runs in a scratch
    directory with PYTHONPATH set to its tree and checks that it imported that tree."""
    res: dict = {t: [] for t in trees}
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        outs = {t: str(Path(tmp) / f"report{i}.json") for i, t in enumerate(trees)}
        for i in range(reps):
            for t in (trees if i % 2 == 0 else trees[::-1]):
                env = dict(os.environ, PYTHONPATH=str(Path(t).resolve()))
                check = (f"import rankscope_tui, sys; p = rankscope_tui.__file__; "
                         f"sys.exit(0 if p.startswith({str(Path(t).resolve()) + os.sep!r}) else 3)")
                if i == 0 and subprocess.run([sys.executable, "-c", check], env=env, cwd=tmp).returncode != 0:
                    raise SystemExit(f"{t}: a process with PYTHONPATH={t} imports rankscope_tui from elsewhere")
                cmd = [sys.executable, "-m", "rankscope_tui.cli"] + _evaluate_args(data, outs[t])
                t0 = time.perf_counter()
                # cwd: a scratch directory, so ``-m`` finds the package on PYTHONPATH, not in the cwd
                p = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                err = p.stderr.read().decode(errors="replace")
                p.stderr.close()
                if status != 0:
                    raise SystemExit(f"{t}: exit status {status}: {err.strip()[-500:]}")
                res[t].append((wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))
        same = len({Path(o).read_bytes() for o in outs.values()}) == 1
    load1 = os.getloadavg()

    def cell(rows, k, fmt):
        v = [r[k] for r in rows]
        return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}–{fmt.format(max(v))})"

    L = [f"load average (1/5/15 min) {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f} before, "
         f"{load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f} after; {reps} fresh processes per tree, alternating; "
         f"report.json {'identical' if same else '**DIFFERENT**'} across the trees", "",
         "| tree | wall s | CPU s (user + sys) | peak RSS MB |", "|---|---:|---:|---:|"]
    for t in trees:
        L.append(f"| `{t}` | {cell(res[t], 0, '{:.3f}')} | {cell(res[t], 1, '{:.3f}')} | {cell(res[t], 2, '{:.0f}')} |")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="7M", choices=sorted(SCALES))
    ap.add_argument("--runs", type=int, default=3, help="fresh processes for the phase table (minimum of each)")
    ap.add_argument("--ab", nargs="+", metavar="TREE", help="compare these package roots, interleaved (prints only)")
    ap.add_argument("--reps", type=int, default=5, help="processes per tree with --ab")
    ap.add_argument("--child", choices=["phases", "tree"], help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child == "phases":
        print(json.dumps(child_phases(Path(a.data))))
        return 0
    if a.child == "tree":
        print(child_tree(Path(a.data)))
        return 0
    sys.path.insert(0, str(HERE))
    from bench_eval import ensure_data

    data = ensure_data(a.scale)
    if a.ab:
        print(ab(a.ab, data, a.reps))
        return 0

    def child(kind: str) -> str:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--data", str(data)]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    load0 = os.getloadavg()
    runs = [json.loads(child("phases").strip().splitlines()[-1]) for _ in range(a.runs)]
    load1 = os.getloadavg()
    L = [f"# Where a `rankscope evaluate --resamples 0` process spends its time ({a.scale} lines, one lane)", "",
         f"Minimum over {a.runs} fresh processes of each phase of one whole `rankscope evaluate --metrics {METRICS} "
         "--resamples 0 --out report.json` (`cli.main`). Process CPU is user + system of every thread over the "
         "phase (so it includes what ran beside it); thread CPU is the CPU of the thread that ran the phase. "
         "`[thread]`: the phase ran on a worker thread. Indented phases are inside the one above. "
         f"Load average {load0[0]:.2f} before, {load1[0]:.2f} after (2 CPUs, shared).", "",
         "| phase | wall s | process CPU s | thread CPU s |", "|---|---:|---:|---:|"]
    keys = list(runs[0])
    for r in runs[1:]:
        keys += [k for k in r if k not in keys]
    for key in keys:
        have = [r[key] for r in runs if key in r]
        w, c, tc = (min(h[i] for h in have) for i in range(3))
        if key == "peak RSS MB":
            L.append(f"| {key} | {w:.0f} | | |")
        else:
            L.append(f"| {key} | {w:.3f} | {c:.3f} | {tc:.3f} |")
    try:
        tree = child("tree")
        L += ["", "## pyinstrument, one first `Workspace.load` + `per_query` (main thread)", "", "```", tree.rstrip(), "```"]
    except subprocess.CalledProcessError as exc:
        L += ["", f"(pyinstrument tree not available: {exc.stderr.strip().splitlines()[-1] if exc.stderr else exc})"]
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "profile.md"
    notes = ""
    if path.exists() and NOTES in path.read_text():
        notes = path.read_text().split(NOTES, 1)[1]
    path.write_text("\n".join(L) + "\n\n" + NOTES + notes.rstrip("\n") + "\n")
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    sys.exit(main())
