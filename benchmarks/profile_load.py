"""Where a first `Workspace.load` + `per_query` spends its time (the 7M-line run).

    .venv/bin/python benchmarks/profile_load.py [--scale 7M] [--runs 3]

Writes ``results/profile.md``: a per-phase table (wall, and the process's user and
system CPU over each phase, minimum over fresh processes) and a pyinstrument call
tree of one first call (main thread; the worker threads' share shows as waits).
Each measurement is a fresh process configured as the ``rankscope`` command is
(``cli.process_setup``). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
METRICS = "ndcg@10,rr,p@10,recall@100"

# (module, attribute, label): the phases, in pipeline order
PHASES = [
    ("readers", "_scan_plain", "scan: byte checks (a large file as two halves on two threads)"),
    ("readers", "_parse_run", "pyarrow CSV parse (qid, doc, score; pyarrow's threads)"),
    ("workspace", "read_qrels", "read qrels"),
    ("workspace", "_encode_sorted", "encode qids (run heads sorted as bytes)"),
    ("encoding", "string_words", "doc words (8-byte big-endian loads)"),
    ("encoding", "factorize_words", "doc codes: hash partitions, one sort + neighbour compare each (threads)"),
    ("workspace", "_judgments", "judgments"),
    ("workspace", "_lane_duplicate", "duplicate check (neighbour pairs from the sort)"),
    ("workspace", "rank_lane", "order (block reorder, tie fix), ranks, offsets"),
    ("metrics", "doc_level", "grades of hits (doc_level)"),
    ("metrics", "compute", "metrics.compute"),
]


def _setup():
    sys.path.insert(0, str(ROOT))
    from rankscope_tui.cli import process_setup

    process_setup()
    from rankscope_tui.kernel import encoding, metrics, readers, workspace
    from rankscope_tui.kernel.metrics import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings

    settings = LoadSettings(metrics=tuple(parse_metrics(METRICS)), resamples=0)
    return {"encoding": encoding, "metrics": metrics, "readers": readers, "workspace": workspace}, settings


def child_phases(data: Path) -> dict:
    mods, settings = _setup()
    rec: dict = {}

    def wrap(mod, name, label):
        f = getattr(mod, name)

        def timed(*a, **k):
            r0, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            out = f(*a, **k)
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            w, u, s = rec.get(label, (0.0, 0.0, 0.0))
            rec[label] = (w + time.perf_counter() - t, u + r1.ru_utime - r0.ru_utime, s + r1.ru_stime - r0.ru_stime)
            return out

        setattr(mod, name, timed)

    for m, name, label in PHASES:
        wrap(mods[m], name, label)
    W = mods["workspace"]
    r0, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    ws = W.Workspace.load([("run", str(data / "run1.txt"))], str(data / "qrels.txt"), settings)
    ws.per_query("run", "doc")
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    rec["total"] = (time.perf_counter() - t, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime)
    return rec


def child_tree(data: Path) -> str:
    mods, settings = _setup()
    from pyinstrument import Profiler

    W = mods["workspace"]
    prof = Profiler(interval=0.002)
    prof.start()
    ws = W.Workspace.load([("run", str(data / "run1.txt"))], str(data / "qrels.txt"), settings)
    ws.per_query("run", "doc")
    prof.stop()
    text = prof.output_text(unicode=False, show_all=False)
    lines = [ln.replace(str(ROOT) + "/", "") for ln in text.splitlines() if "frames hidden" not in ln]
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Profile at")), 0)
    return "\n".join(ln for ln in lines[start + 1:] if ln.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="7M")
    ap.add_argument("--runs", type=int, default=3)
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

    def child(kind: str) -> str:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--data", str(data)]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    runs = [json.loads(child("phases").strip().splitlines()[-1]) for _ in range(a.runs)]
    L = [f"# Where a first load + evaluate spends its time ({a.scale} lines, one lane)", "",
         f"Minimum over {a.runs} fresh processes of each phase of `Workspace.load` + `per_query` (first call). "
         "User and system CPU are the whole process's over the phase, so they include what ran beside it on "
         "the other core (the fingerprint thread, the dictionary rebuild).", "",
         "| phase | wall s | user s | system s |", "|---|---:|---:|---:|"]
    for key in runs[0]:
        w, u, s = (min(r[key][i] for r in runs) for i in range(3))
        L.append(f"| {key} | {w:.3f} | {u:.3f} | {s:.3f} |")
    try:
        tree = child("tree")
        L += ["", "## pyinstrument, one first call (main thread)", "", "```", tree.rstrip(), "```"]
    except subprocess.CalledProcessError as exc:
        L += ["", f"(pyinstrument tree not available: {exc.stderr.strip().splitlines()[-1] if exc.stderr else exc})"]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "profile.md").write_text("\n".join(L) + "\n")
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    sys.exit(main())
