"""Speed and memory of evaluating a run as a user does it -- the whole process: start,
read, evaluate nDCG@10, RR, P@10, recall@100, write the output, exit -- against the
tools a user would pick instead, on the same files in the same run (issue 20; SPEC §12).

    .venv/bin/python benchmarks/bench_eval.py [--scales 100k 1M 7M] [--reps N]
        [--tools cli cli_b9999 kernel pytrec_eval trec_eval ranx ranx_warm floor ir_measures]
        [--rankscope PATH-TO-CHECKOUT] [--trec-eval PATH] [--ranx-reps N] [--intervals-at 1M ...]
        [--results DIR] [--no-warmup]
    .venv/bin/python benchmarks/bench_eval.py --profile [--scales 100k 1M]   # results/profile_eval.md
    .venv/bin/python benchmarks/bench_eval.py --rewrite   # eval.md again from eval.json

Data: ``../shared/tools/synth.py`` (deterministic, seeded), generated into
``benchmarks/data/`` when missing: 100k = 1,000 queries x 100 hits, 1M = 10,000 x
100, 7M = 7,000 x 1,000 (MS MARCO dev shape). Metrics: nDCG@10, RR, P@10, recall@100
(trec_eval ndcg_cut.10, recip_rank, P.10, recall.100).

Every measurement is a fresh process; wall time is taken from outside, CPU time and
peak RSS are that child's ``ru_utime + ru_stime`` and ``ru_maxrss`` from ``os.wait4``.
Tools run round-robin, the order rotating each repetition, so load from other processes
falls on all of them alike, after one untimed round (page cache). Reported: medians
with min-max spreads.

* ``cli``         ``rankscope evaluate --resamples 0 --out report.json`` (the console
                  script of the interpreter running this file, with ``PYTHONPATH`` set to
                  the checkout under test, ``--rankscope``; the checkout's bytecode is
                  compiled first, as an installed package's is).
* ``cli_b9999``   the same without ``--resamples``: the default run with bootstrap
                  intervals (B = 9,999), at the scales given by ``--intervals-at``.
* ``kernel``      ``Workspace.load`` + ``per_query`` timed inside the interpreter: the first
                  call in a fresh process and a warm second call; its per-query values
                  are the ones checked against pytrec_eval's.
* ``pytrec_eval`` a small script: pytrec_eval-terrier, inputs parsed with plain Python
                  (``line.split()`` into dicts, as a user would), ``evaluate``, the
                  per-query results written as JSON.
* ``trec_eval``   the C binary (``-q -c -m ...``, its output written to a file; ``-c`` because
                  10.0 exits with status 4 at the first judged query missing from the run
                  -- "result qid not found in qrels" -- unless told to score it 0): ``--trec-eval
                  PATH``, else built by ``make`` from ``../shared/tools/trec_eval`` in a
                  scratch copy under ``benchmarks/data/`` (git-ignored, never committed).
* ``ranx``        a small script: ``Qrels/Run.from_file`` + ``evaluate``, the means written as
                  JSON, in a fresh process (numba's compilation or cache load included).
* ``ranx_warm``   the same calls twice in one process: the second ("warm") call is ranx's
                  steady state, the one the 7M target is stated against.
* ``floor``       the parse + sort floor: pyarrow's multithreaded CSV reader on the run's
                  qid (as int64), doc and score columns, then ``np.lexsort`` by (qid, -score).
* ``ir_measures`` (not run by default) ``read_trec_*`` + ``calc_aggregate``.

Correctness in the same run: the kernel's per-query values are compared with
pytrec_eval's on every positive query (a query pytrec_eval omits counts as 0), and with
trec_eval's ``-q`` output (printed to 4 decimals, so agreement is to 5e-5); so is the
``rankscope evaluate`` process's own report.json (its per-query table value by value, its
means against pytrec_eval's over the same queries), found by shape, so a new layout
reports "not checked" rather than failing. The maximum absolute difference per metric is
reported. A fast wrong answer is no answer.

Writes ``benchmarks/results/eval.md`` and ``eval.json`` (``--profile``:
``results/profile_eval.md``). Not a test: nothing here asserts a time.
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
sys.path.insert(0, str(ROOT))
from benchmarks.paths import SYNTH, TREC_EVAL_SRC, shown, shown_argv  # noqa: E402

# a `pip install --target DIR pyinstrument`, when it is not in the venv
PYINSTRUMENT_DIRS = tuple(filter(None, [os.environ.get("BENCH_PYINSTRUMENT_DIR")]))

# name -> (directory, queries, depth, runs)
SCALES = {
    "100k": ("n1000_d100", 1000, 100, 2),
    "1M": ("n10000_d100", 10000, 100, 2),
    "7M": ("n7000_d1000", 7000, 1000, 1),
}
RS_METRICS = "ndcg@10,rr,p@10,recall@100"
PT_METRICS = {"ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "p@10": "P_10", "recall@100": "recall_100"}
TE_MEASURES = ["ndcg_cut.10", "recip_rank", "P.10", "recall.100"]
TOOLS = ["cli", "cli_b9999", "kernel", "pytrec_eval", "trec_eval", "ranx", "ranx_warm", "floor", "ir_measures"]
DEFAULT_TOOLS = [t for t in TOOLS if t != "ir_measures"]
RANKSCOPE_TOOLS = ("cli", "cli_b9999", "kernel")
RANX_TOOLS = ("ranx", "ranx_warm")

# Issue 20's targets: same-run ratios of medians of whole-process wall times.
TARGETS = {
    "100k-pytrec": "100k lines, whole process: >= 1.5x faster than pytrec_eval",
    "100k-trec_eval": "100k lines, whole process: within 2x of trec_eval (C); stretch: match it",
    "1M-pytrec": "1M lines, whole process: >= 3x faster than pytrec_eval",
    "7M-pytrec": "7M lines, whole process: >= 5x faster than pytrec_eval",
    "7M-ranx": "7M lines, whole process: >= 10x faster than ranx warm (its in-process second call)",
    "7M-rss": "7M lines: peak RSS of the `rankscope evaluate` process <= 1.0 GB (1024 MiB)",
    "1M-intervals": "1M lines: default `evaluate` with intervals (B = 9,999) within 1.3x of the same run without",
}

# ----------------------------------------------------------------------------- child scripts
# Each tool runs as a small script of its own, importing only what it needs (this file's
# imports would add to the peers' start-up). Each prints one JSON line of in-process times.

_PRELUDE = """\
import json, os, sys, time
T0 = time.perf_counter()
def cpu():
    t = os.times()
    return t.user + t.system
"""

KERNEL_SCRIPT = _PRELUDE + """\
from rankscope_tui.cli import process_setup
process_setup()  # the memory settings a rankscope process runs with
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace
import resource
run, qrels, dump = sys.argv[1], sys.argv[2], sys.argv[3]
out = {"import": time.perf_counter() - T0}
settings = LoadSettings(metrics=tuple(parse_metrics(%(metrics)r)), resamples=0)
def once():
    ws = Workspace.load([("run", run)], qrels, settings)
    return ws, ws.per_query("run", "doc")
t, c = time.perf_counter(), cpu()
ws, pq = once()
out["first"], out["cpu_first"] = time.perf_counter() - t, cpu() - c
out["rss_first_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
if dump != "-":
    names = %(names)r
    with open(dump, "w") as fh:
        json.dump({ws.qids[q]: {m: float(pq[m][q]) for m in names} for q in ws.positives.tolist()}, fh)
del ws, pq
t, c = time.perf_counter(), cpu()
once()
out["warm"], out["cpu_warm"] = time.perf_counter() - t, cpu() - c
print(json.dumps(out))
""" % {"metrics": RS_METRICS, "names": list(PT_METRICS)}

PYTREC_SCRIPT = _PRELUDE + """\
import pytrec_eval
run, qrels, outfile = sys.argv[1], sys.argv[2], sys.argv[3]
out = {"import": time.perf_counter() - T0}
t, c = time.perf_counter(), cpu()
qr = {}
with open(qrels, encoding="utf-8") as fh:
    for line in fh:
        f = line.split()
        if f:
            qr.setdefault(f[0], {})[f[2]] = int(f[3])
rn = {}
with open(run, encoding="utf-8") as fh:
    for line in fh:
        f = line.split()
        if f:
            rn.setdefault(f[0], {})[f[2]] = float(f[4])
out["parse"] = time.perf_counter() - t
t1 = time.perf_counter()
res = pytrec_eval.RelevanceEvaluator(qr, {"ndcg_cut.10", "recip_rank", "P.10", "recall.100"}).evaluate(rn)
out["eval"] = time.perf_counter() - t1
t1 = time.perf_counter()
with open(outfile, "w") as fh:
    json.dump(res, fh)
out["write"] = time.perf_counter() - t1
out["first"], out["cpu_first"] = time.perf_counter() - t, cpu() - c
print(json.dumps(out))
"""

_RANX_CALL = """\
def once():
    t, c = time.perf_counter(), cpu()
    qr = Qrels.from_file(qrels, kind="trec")
    rn = Run.from_file(run, kind="trec")
    t1 = time.perf_counter()
    means = evaluate(qr, rn, ["ndcg@10", "mrr", "precision@10", "recall@100"], make_comparable=True)
    return means, t1 - t, time.perf_counter() - t1, time.perf_counter() - t, cpu() - c
"""

RANX_SCRIPT = _PRELUDE + """\
from ranx import Qrels, Run, evaluate
run, qrels, outfile = sys.argv[1], sys.argv[2], sys.argv[3]
out = {"import": time.perf_counter() - T0}
""" + _RANX_CALL + """\
means, out["parse"], out["eval"], out["first"], out["cpu_first"] = once()
with open(outfile, "w") as fh:
    json.dump({k: float(v) for k, v in means.items()}, fh)
print(json.dumps(out))
"""

RANX_WARM_SCRIPT = _PRELUDE + """\
from ranx import Qrels, Run, evaluate
run, qrels, outfile = sys.argv[1], sys.argv[2], sys.argv[3]
out = {"import": time.perf_counter() - T0}
""" + _RANX_CALL + """\
_, out["parse_first"], out["eval_first"], out["first"], out["cpu_first"] = once()
_, out["parse_warm"], out["eval_warm"], out["warm"], out["cpu_warm"] = once()
print(json.dumps(out))
"""

FLOOR_SCRIPT = _PRELUDE + """\
import numpy as np
import pyarrow as pa
import pyarrow.csv as csv
run = sys.argv[1]
out = {"import": time.perf_counter() - T0}
t, c = time.perf_counter(), cpu()
table = csv.read_csv(run, read_options=csv.ReadOptions(column_names=["qid", "q0", "doc", "rank", "score", "tag"]),
                     parse_options=csv.ParseOptions(delimiter=" "),
                     convert_options=csv.ConvertOptions(include_columns=["qid", "doc", "score"],
                                                        column_types={"qid": pa.int64(), "doc": pa.string(),
                                                                      "score": pa.float64()}))
out["parse"] = time.perf_counter() - t
t1 = time.perf_counter()
def column(name, dtype):  # the chunks' value buffers, without pyarrow's to_numpy (it imports pandas)
    parts = [np.frombuffer(ch.buffers()[1], dtype=dtype, count=len(ch), offset=ch.offset * 8)
             for ch in table.column(name).chunks]
    return np.concatenate(parts) if len(parts) != 1 else parts[0]
order = np.lexsort((-column("score", np.float64), column("qid", np.int64)))
out["sort"] = time.perf_counter() - t1
out["first"], out["cpu_first"] = time.perf_counter() - t, cpu() - c
out["rows"] = int(order.size)
print(json.dumps(out))
"""

IRM_SCRIPT = _PRELUDE + """\
import ir_measures
from ir_measures import RR, nDCG, P, R
run, qrels, outfile = sys.argv[1], sys.argv[2], sys.argv[3]
out = {"import": time.perf_counter() - T0}
t, c = time.perf_counter(), cpu()
means = ir_measures.calc_aggregate([nDCG @ 10, RR, P @ 10, R @ 100], ir_measures.read_trec_qrels(qrels),
                                   ir_measures.read_trec_run(run))
with open(outfile, "w") as fh:
    json.dump({str(k): float(v) for k, v in means.items()}, fh)
out["first"], out["cpu_first"] = time.perf_counter() - t, cpu() - c
print(json.dumps(out))
"""

MODULES_DRIVER = """\
import json, sys
out = sys.argv.pop(1)
from rankscope_tui.cli import main
main(sys.argv[1:])
json.dump([m for m in sys.modules if m != "__main__"], open(out, "w"))
"""

IMPORT_ONLY = """\
import importlib, json, sys
for name in json.load(open(sys.argv[1])):
    try:
        importlib.import_module(name)
    except Exception:  # a module only importable as a side effect of another (rare); its parent imported it
        pass
"""

# Samples main()'s stack; each sample's time goes to the outermost phase on its stack.
PYINSTRUMENT_DRIVER = """\
import json, os, sys
sys.path[0:0] = %r
from pyinstrument import Profiler
t0 = os.times()
p = Profiler(interval=0.0005)
p.start()
from rankscope_tui.cli import main
rc = main(sys.argv[1:])
p.stop()
t1 = os.times()
PHASES = {"build_parser": "argument parser", "process_setup": "process set-up",
          "load_workspace": "read + encode + rank + per-query metrics (`Workspace.load`)",
          "evaluate_report": "report contents (`evaluate_report`: summaries, gate, attribution)",
          "dumps_strict": "report.json serialisation (`dumps_strict`)",
          "write_outputs": "writing the files (`write_outputs`, atomic)"}
acc = {}
def walk(frame, phase):
    if frame.is_synthetic:  # a self-time marker: already in its parent's total_self_time
        return
    if frame.function == "<module>":
        phase = "imports (module bodies run at import)"
    elif phase is None and frame.function in PHASES:
        phase = PHASES[frame.function]
    elif phase is None and "rankscope_tui/render/" in (frame.file_path or ""):
        phase = "rendering the text output"
    key = phase or "other (main, checks, stdout)"
    acc[key] = acc.get(key, 0.0) + frame.total_self_time
    for child in frame.children:
        walk(child, phase)
root = p.last_session.root_frame()
for child in root.children:
    walk(child, None)
acc["total"] = root.time
acc["cpu"] = (t1.user + t1.system) - (t0.user + t0.system)
sys.stderr.write(p.output_text(unicode=False, color=False, show_all=False))
print(json.dumps(acc))
"""

SCRIPTS = {"kernel": KERNEL_SCRIPT, "pytrec_eval": PYTREC_SCRIPT, "ranx": RANX_SCRIPT, "ranx_warm": RANX_WARM_SCRIPT,
           "floor": FLOOR_SCRIPT, "ir_measures": IRM_SCRIPT}

# ----------------------------------------------------------------------------- set-up


def ensure_data(scale: str) -> Path:
    d, q, depth, runs = SCALES[scale]
    out = DATA / d
    if not (out / "run1.txt").exists() or not (out / "qrels.txt").exists():
        out.mkdir(parents=True, exist_ok=True)
        print(f"generating {out} with synth.py ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(SYNTH), "--queries", str(q), "--depth", str(depth), "--runs", str(runs),
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


def build_trec_eval() -> Path:
    """trec_eval built by its own ``make`` in a scratch copy of the source (benchmarks/data/, git-ignored)."""
    dest = DATA / "trec_eval"
    exe = dest / "trec_eval"
    if exe.exists():
        return exe
    if not (TREC_EVAL_SRC / "Makefile").exists():
        raise SystemExit(f"no trec_eval source at {TREC_EVAL_SRC}; give a binary with --trec-eval PATH")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(TREC_EVAL_SRC, dest)
    print(f"building trec_eval in {dest} ...", file=sys.stderr, flush=True)
    subprocess.run(["make"], cwd=str(dest), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return exe


class Checkout:
    """The rankscope under test: a checkout run through ``PYTHONPATH``, from a scratch cwd."""

    def __init__(self, path: Path, scratch: Path):
        self.path = path.resolve()
        self.scratch = scratch
        if not (self.path / "rankscope_tui" / "__init__.py").exists():
            raise SystemExit(f"--rankscope {path}: no rankscope_tui package there")
        self.env = dict(os.environ, PYTHONPATH=str(self.path))
        exe = Path(sys.executable).parent / "rankscope"
        # The console script as a user runs it; its sys.path[0] is bin/, then PYTHONPATH.
        self.cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "rankscope_tui.cli"]

    def prepare(self) -> dict:
        import compileall

        # Cached bytecode, as an installed package has (this machine sets
        # PYTHONDONTWRITEBYTECODE: an uncompiled checkout would recompile on every start).
        compileall.compile_dir(str(self.path / "rankscope_tui"), quiet=1)
        found = subprocess.run([sys.executable, "-c", "import rankscope_tui, os; print(os.path.dirname(os.path.realpath(rankscope_tui.__file__)))"],
                               capture_output=True, text=True, cwd=str(self.scratch), env=self.env).stdout.strip()
        want = str((self.path / "rankscope_tui").resolve())
        if found != want:
            raise SystemExit(f"PYTHONPATH={self.path} imports rankscope_tui from {found!r}, not {want!r}")

        def git(*a):
            r = subprocess.run(["git", "-C", str(self.path), *a], capture_output=True, text=True)
            return r.stdout.strip() if r.returncode == 0 else None

        status = git("status", "--porcelain", "--untracked-files=no", "--", "rankscope_tui")  # the code measured
        return {"path": shown(self.path), "package": shown(found), "commit": git("rev-parse", "HEAD"),
                "package_commit": git("log", "-1", "--format=%H", "--", "rankscope_tui", "pyproject.toml"),
                "package_subject": git("log", "-1", "--format=%s", "--", "rankscope_tui", "pyproject.toml"),
                "branch": git("rev-parse", "--abbrev-ref", "HEAD"), "subject": git("log", "-1", "--format=%s"),
                "dirty": bool(status) if status is not None else None, "cli": " ".join(shown_argv(self.cli))}


# ----------------------------------------------------------------------------- measuring


def _spawn(cmd: list[str], cwd: Path, env=None, stdout_path: Path | None = None) -> dict:
    """Run cmd as a fresh process: wall s (from outside), CPU s and peak RSS MiB (os.wait4)."""
    with tempfile.TemporaryFile() as e:
        o = open(stdout_path, "wb") if stdout_path else tempfile.TemporaryFile()
        with o:
            t = time.perf_counter()
            p = subprocess.Popen(cmd, stdout=o, stderr=e, cwd=str(cwd), env=env)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t
            p.returncode = os.waitstatus_to_exitcode(status)
            out = ""
            if not stdout_path:
                o.seek(0)
                out = o.read().decode(errors="replace")
        e.seek(0)
        err = e.read().decode(errors="replace")
    rec = {"process": wall, "process_cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024.0,
           "rc": p.returncode}
    if p.returncode != 0:
        rec["error"] = (err.strip().splitlines() or ["exit status %d" % p.returncode])[-1][:300]
    elif out:
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if lines:
            rec.update(json.loads(lines[-1]))
    return rec


class Bench:
    def __init__(self, checkout: Checkout, trec_eval: Path | None, scratch: Path):
        self.co = checkout
        self.trec_eval = trec_eval
        self.scratch = scratch
        self.scripts = {}
        for name, text in SCRIPTS.items():
            p = scratch / f"tool_{name}.py"  # not ranx.py: it would shadow the package
            p.write_text(text)
            self.scripts[name] = p
        self.peer_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def measure(self, tool: str, run: Path, qrels: Path, out: Path, dump: Path | None) -> dict:
        stdout_path = None
        if tool in ("cli", "cli_b9999"):
            cmd = self.co.cli + ["evaluate", "--lane", f"run={run}", "--qrels", str(qrels), "--metrics", RS_METRICS,
                                 "--out", str(out)]
            if tool == "cli":
                cmd[-2:-2] = ["--resamples", "0"]
            env = self.co.env
        elif tool == "trec_eval":
            cmd = [str(self.trec_eval), "-q", "-c"] + [a for m in TE_MEASURES for a in ("-m", m)] + [str(qrels), str(run)]
            env, stdout_path = self.peer_env, out
        else:
            cmd = [sys.executable, str(self.scripts[tool]), str(run), str(qrels),
                   str(dump) if tool == "kernel" and dump else ("-" if tool == "kernel" else str(out))]
            env = self.co.env if tool == "kernel" else self.peer_env
        return _spawn(cmd, self.scratch, env, stdout_path)


def parity_pytrec(rs_dump: Path, pt_out: Path) -> dict:
    rs = json.loads(rs_dump.read_text())
    pt = json.loads(pt_out.read_text())
    worst = {m: 0.0 for m in PT_METRICS}
    for q, vals in rs.items():
        for m, key in PT_METRICS.items():
            worst[m] = max(worst[m], abs(vals[m] - float(pt.get(q, {}).get(key, 0.0))))
    return {"queries": len(rs), "max_abs_diff": worst, "ok": max(worst.values()) == 0.0}


def parity_trec_eval(rs_dump: Path, te_out: Path) -> dict:
    rs = json.loads(rs_dump.read_text())
    names = dict(zip(["ndcg_cut_10", "recip_rank", "P_10", "recall_100"], PT_METRICS))
    te: dict = {}
    for line in te_out.read_text().splitlines():
        f = line.split()
        if len(f) == 3 and f[0] in names and f[1] != "all":
            te.setdefault(f[1], {})[names[f[0]]] = float(f[2])
    worst = {m: 0.0 for m in PT_METRICS}
    for q, vals in rs.items():
        for m in PT_METRICS:
            worst[m] = max(worst[m], abs(vals[m] - te.get(q, {}).get(m, 0.0)))
    return {"queries": len(rs), "max_abs_diff": worst, "printed_decimals": 4, "ok": max(worst.values()) <= 5e-5 + 1e-12}


def _report_values(node, found: list) -> None:
    """Every {qid: {metric: value}} table and every lane's {metric: {"value": mean}} in a report."""
    if isinstance(node, dict):
        vals = list(node.values())[:3]
        if vals and all(isinstance(v, dict) and all(m in v for m in PT_METRICS) for v in vals):
            if all(isinstance(v[m], (int, float)) for v in vals for m in PT_METRICS):
                found.append(("per_query", node))
                return
        if all(isinstance(node.get(m), dict) and "value" in node[m] for m in PT_METRICS):
            found.append(("means", node))
            return
        for v in node.values():
            _report_values(v, found)
    elif isinstance(node, list):
        for v in node:
            _report_values(v, found)


def parity_report(report: Path, pt_out: Path) -> dict:
    """The `rankscope evaluate` process's own report.json against pytrec_eval: its per-query table (where
    the report holds one) value by value, and its means against the mean of pytrec_eval's per-query
    values over the same queries (pytrec_eval's omitted queries count as 0)."""
    pt = json.loads(pt_out.read_text())
    found: list = []
    _report_values(json.loads(report.read_text()), found)
    out: dict = {"per_query_tables": 0, "means": 0}
    worst = {m: 0.0 for m in PT_METRICS}
    qids: list = []
    for kind, node in found:
        if kind == "per_query":
            out["per_query_tables"] += 1
            qids = list(node)
            for q, vals in node.items():
                for m, key in PT_METRICS.items():
                    worst[m] = max(worst[m], abs(float(vals[m]) - float(pt.get(q, {}).get(key, 0.0))))
    if found and qids:
        for kind, node in found:
            if kind == "means" and node[next(iter(PT_METRICS))]["value"] is not None:
                out["means"] += 1
                for m, key in PT_METRICS.items():
                    mean = statistics.fmean(float(pt.get(q, {}).get(key, 0.0)) for q in qids)
                    out.setdefault("max_abs_diff_means", {})[m] = max(
                        out.get("max_abs_diff_means", {}).get(m, 0.0), abs(float(node[m]["value"]) - mean))
    out["queries"] = len(qids)
    out["max_abs_diff"] = worst
    means_ok = all(d <= 1e-12 for d in out.get("max_abs_diff_means", {}).values())
    out["ok"] = bool(qids) and max(worst.values()) == 0.0 and means_ok
    return out


def _stats(xs: list[float]) -> dict:
    if not xs:
        return {}
    s = sorted(xs)
    q = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else [s[0]] * 3
    return {"median": statistics.median(s), "min": s[0], "max": s[-1], "q1": q[0], "q3": q[2], "n": len(s),
            "values": [round(x, 6) for x in xs]}


def run_scale(bench: Bench, scale: str, reps: int, tools: list[str], ranx_reps: int, warmup: bool = True) -> dict:
    d = ensure_data(scale)
    run, qrels = d / "run1.txt", d / "qrels.txt"
    with open(run, "rb") as fh:
        lines = sum(1 for _ in fh)
    recs: dict = {t: [] for t in tools}
    par: dict = {}
    work = bench.scratch / scale
    work.mkdir(exist_ok=True)
    for tool in tools if warmup else []:  # untimed: the page cache holds the inputs and libraries after it
        if tool not in RANX_TOOLS:  # ranx's first process compiles anyway; its spread shows it
            bench.measure(tool, run, qrels, work / f"{tool}.out", None)
    for rep in range(reps):
        order = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for tool in order:
            if tool in RANX_TOOLS and rep >= ranx_reps:  # numba compiles in every fresh process: tens of seconds
                continue
            out = work / f"{tool}.out"
            dump = work / "kernel.json" if tool == "kernel" and rep == 0 else None
            rec = bench.measure(tool, run, qrels, out, dump)
            recs[tool].append(rec)
            shown = rec.get("first", rec["process"])
            print(f"  {scale} rep {rep + 1}/{reps} {tool:12s} process {rec['process']:7.3f} s  cpu "
                  f"{rec['process_cpu']:7.3f} s  in-process {shown:7.3f} s  {rec['rss_mb']:6.0f} MB"
                  + (f"  ERROR {rec['error']}" if "error" in rec else ""), file=sys.stderr, flush=True)
            if rep == 0 and rec["rc"] == 0:  # keep the first outputs for the parity checks
                if tool == "pytrec_eval":
                    shutil.copy(out, work / "pytrec_eval.json")
                if tool == "trec_eval":
                    shutil.copy(out, work / "trec_eval.q")
                if tool == "cli":
                    shutil.copy(out, work / "report.json")
    kd = work / "kernel.json"
    if kd.exists() and (work / "pytrec_eval.json").exists():
        par["pytrec_eval"] = parity_pytrec(kd, work / "pytrec_eval.json")
    if (work / "report.json").exists() and (work / "pytrec_eval.json").exists():
        par["report.json"] = parity_report(work / "report.json", work / "pytrec_eval.json")
    if kd.exists() and (work / "trec_eval.q").exists():
        par["trec_eval"] = parity_trec_eval(kd, work / "trec_eval.q")
    summary: dict = {"lines": lines, "run": str(run.relative_to(ROOT)), "qrels": str(qrels.relative_to(ROOT)),
                     "parity": par, "tools": {}}
    for tool, rs in recs.items():
        ok = [r for r in rs if r["rc"] == 0]
        s: dict = {"runs": len(rs), "errors": [r["error"] for r in rs if "error" in r][:1]}
        keys = sorted({k for r in ok for k, v in r.items() if isinstance(v, float)})
        for key in keys:
            s[key] = _stats([r[key] for r in ok if key in r])
        summary["tools"][tool] = s
    summary["ratios"] = ratios(summary["tools"])
    return summary


def _med(tools: dict, tool: str, key: str):
    return tools.get(tool, {}).get(key, {}).get("median")


def ratios(t: dict) -> dict:
    """Peer time / rankscope time on medians (> 1: rankscope faster), whole process unless said."""
    out: dict = {}
    cli, cli_cpu = _med(t, "cli", "process"), _med(t, "cli", "process_cpu")

    def put(name, num, den):
        if num and den:
            out[name] = num / den

    put("pytrec_eval process / rankscope evaluate process", _med(t, "pytrec_eval", "process"), cli)
    put("pytrec_eval process CPU / rankscope evaluate process CPU", _med(t, "pytrec_eval", "process_cpu"), cli_cpu)
    put("trec_eval process / rankscope evaluate process", _med(t, "trec_eval", "process"), cli)
    put("trec_eval process CPU / rankscope evaluate process CPU", _med(t, "trec_eval", "process_cpu"), cli_cpu)
    put("ranx process (cold) / rankscope evaluate process", _med(t, "ranx", "process"), cli)
    put("ranx warm (in-process read + eval) / rankscope evaluate process", _med(t, "ranx_warm", "warm"), cli)
    put("ranx warm CPU / rankscope evaluate process CPU", _med(t, "ranx_warm", "cpu_warm"), cli_cpu)
    put("ir_measures process / rankscope evaluate process", _med(t, "ir_measures", "process"), cli)
    put("rankscope evaluate process / floor process (parse + sort)", cli, _med(t, "floor", "process"))
    put("rankscope kernel first call / floor in-process (parse + sort)", _med(t, "kernel", "first"),
        _med(t, "floor", "first"))
    put("rankscope default (B = 9,999) process / --resamples 0 process", _med(t, "cli_b9999", "process"), cli)
    put("rankscope default (B = 9,999) CPU / --resamples 0 CPU", _med(t, "cli_b9999", "process_cpu"), cli_cpu)
    put("pytrec_eval in-process (parse + eval + write) / rankscope kernel first call",
        _med(t, "pytrec_eval", "first"), _med(t, "kernel", "first"))
    put("ranx warm / rankscope kernel warm (steady state against steady state)", _med(t, "ranx_warm", "warm"),
        _med(t, "kernel", "warm"))
    put("rankscope kernel first / warm", _med(t, "kernel", "first"), _med(t, "kernel", "warm"))
    return out


def verdicts(res: dict) -> dict:
    v: dict = {}
    s = res["scales"]

    def ratio(scale, name):
        return s.get(scale, {}).get("ratios", {}).get(name)

    def target(key, value, goal, met, cpu=None, paired=None, **extra):
        """Met on the wall-time ratio of medians (the issue's measure); beside it the CPU-time ratio and the
        median of the per-repetition wall ratios (pairs measured minutes apart at most, so steadier when
        the machine's load drifts during the run)."""
        if value is not None:
            v[key] = {"value": value, "cpu_value": cpu, "paired_value": paired, "goal": goal, "met": bool(met(value)),
                      "met_on_cpu": None if cpu is None else bool(met(cpu)),
                      "met_paired": None if paired is None else bool(met(paired)), **extra}

    def paired(scale, num, den):
        """Median over repetitions of (num tool's time / den tool's time) in the same repetition."""
        tools = s.get(scale, {}).get("tools", {})
        a, b = (tools.get(t, {}).get(k, {}).get("values") for t, k in (num, den))
        return statistics.median([x / y for x, y in zip(a, b)]) if a and b else None

    pt, pt_cpu = "pytrec_eval process / rankscope evaluate process", "pytrec_eval process CPU / rankscope evaluate process CPU"
    ptp, tep = (("pytrec_eval", "process"), ("cli", "process")), (("trec_eval", "process"), ("cli", "process"))
    target("100k-pytrec", ratio("100k", pt), ">= 1.5x", lambda x: x >= 1.5, ratio("100k", pt_cpu), paired("100k", *ptp))
    te = ratio("100k", "trec_eval process / rankscope evaluate process")
    te_cpu = ratio("100k", "trec_eval process CPU / rankscope evaluate process CPU")
    target("100k-trec_eval", te, "trec_eval / rankscope >= 0.5x (stretch >= 1x)", lambda x: x >= 0.5, te_cpu,
           paired("100k", *tep), stretch_met=bool(te and te >= 1.0))
    target("1M-pytrec", ratio("1M", pt), ">= 3x", lambda x: x >= 3, ratio("1M", pt_cpu), paired("1M", *ptp))
    target("7M-pytrec", ratio("7M", pt), ">= 5x", lambda x: x >= 5, ratio("7M", pt_cpu), paired("7M", *ptp))
    target("7M-ranx", ratio("7M", "ranx warm (in-process read + eval) / rankscope evaluate process"), ">= 10x",
           lambda x: x >= 10, ratio("7M", "ranx warm CPU / rankscope evaluate process CPU"),
           paired("7M", ("ranx_warm", "warm"), ("cli", "process")))
    target("7M-rss", _med(s.get("7M", {}).get("tools", {}), "cli", "rss_mb"), "<= 1024 MiB", lambda x: x <= 1024)
    target("1M-intervals", ratio("1M", "rankscope default (B = 9,999) process / --resamples 0 process"), "<= 1.3x",
           lambda x: x <= 1.3, ratio("1M", "rankscope default (B = 9,999) CPU / --resamples 0 CPU"),
           paired("1M", ("cli_b9999", "process"), ("cli", "process")))
    return v


# ----------------------------------------------------------------------------- report

LABELS = {
    "cli": "`rankscope evaluate --resamples 0`",
    "cli_b9999": "`rankscope evaluate` (default, B = 9,999)",
    "kernel": "rankscope kernel (`Workspace.load` + `per_query`)",
    "pytrec_eval": "pytrec_eval-terrier (plain-Python parse)",
    "trec_eval": "trec_eval 10.0 (C), `-q -c`",
    "ranx": "ranx, fresh process",
    "ranx_warm": "ranx, in-process (first / warm)",
    "floor": "floor: pyarrow CSV read + `np.lexsort`",
    "ir_measures": "ir_measures",
}


def _spread(x: dict | None, unit: str = "s", digits: int = 3) -> str:
    if not x:
        return "—"
    if unit == "MB":
        return f"{x['median']:.0f} MB ({x['min']:.0f}–{x['max']:.0f})"
    return f"{x['median']:.{digits}f} s ({x['min']:.{digits}f}–{x['max']:.{digits}f})"


def _notes(tool: str, st: dict) -> str:
    n = []
    med = lambda k: st[k]["median"] if k in st else None  # noqa: E731
    if med("import") is not None:
        n.append(f"imports {med('import'):.3f} s")
    if tool == "kernel" and med("warm") is not None:
        n.append(f"warm call {med('warm'):.3f} s; RSS after the first call {med('rss_first_mb'):.0f} MB")
    if tool == "pytrec_eval" and med("parse") is not None:
        n.append(f"parse {med('parse'):.3f} s, evaluate {med('eval'):.3f} s, write {med('write'):.3f} s")
    if tool == "ranx" and med("parse") is not None:
        n.append(f"read {med('parse'):.3f} s, evaluate {med('eval'):.3f} s (compiles)")
    if tool == "ranx_warm" and med("warm") is not None:
        n.append(f"first {med('first'):.3f} s; **warm {med('warm'):.3f} s** (read {med('parse_warm'):.3f}, "
                 f"evaluate {med('eval_warm'):.3f}), warm CPU {med('cpu_warm'):.3f} s")
    if tool == "floor" and med("parse") is not None:
        n.append(f"in-process {med('first'):.3f} s: parse {med('parse'):.3f} s + sort {med('sort'):.3f} s")
    if st.get("errors"):
        n.append("ERROR: " + st["errors"][0])
    return "; ".join(n)


def write_report(res: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "eval.json").write_text(json.dumps(res, indent=2) + "\n")
    co = res["rankscope"]
    la0, la1 = res["load_average_start"], res["load_average_end"]
    pc = co.get("package_commit")
    L = ["# Evaluate a run, whole process: rankscope against pytrec_eval, trec_eval (C), ranx", "",
         f"rankscope under test: `{co['path']}` at commit `{(co['commit'] or '?')[:12]}` ({co['branch']}"
         f"{', with uncommitted changes to rankscope_tui' if co['dirty'] else ''}); its package (`rankscope_tui`, "
         f"`pyproject.toml`) last changed in `{(pc or '?')[:12]}` \"{co.get('package_subject')}\". Run at "
         f"{res['started_utc']} ({res['elapsed_s']:.0f} s). {res['machine']}.", "",
         f"**Load average** (1 / 5 / 15 min) at the start {la0[0]:.2f} / {la0[1]:.2f} / {la0[2]:.2f}, at the end "
         f"{la1[0]:.2f} / {la1[1]:.2f} / {la1[2]:.2f} on {os.cpu_count()} CPUs shared with other work: read the ratios "
         "and the CPU times; the seconds move with the load.", "",
         "Each tool as a user runs it, a fresh process each time: start, read, evaluate nDCG@10, RR, P@10, "
         "recall@100, write the output, exit. Wall time from outside; CPU (user + system) and peak RSS from "
         f"`os.wait4`. Tools round-robin, the order rotating per repetition; {res['reps']} repetitions "
         f"(ranx {res['ranx_reps']}: numba compiles in every fresh process). Cells: median (min–max).", "",
         f"Versions: {res['versions']}.", ""]
    for scale, s in res["scales"].items():
        L += [f"## {scale} ({s['lines']:,} run lines, `{s['run']}`)", "",
              "| tool | wall, whole process | CPU, whole process | peak RSS | in-process work | notes |",
              "|---|---:|---:|---:|---:|---|"]
        for tool, st in s["tools"].items():
            inproc = st.get("first")
            L.append(f"| {LABELS[tool]} | {_spread(st.get('process'))} | {_spread(st.get('process_cpu'))} | "
                     f"{_spread(st.get('rss_mb'), 'MB')} | {_spread(inproc) if inproc else '—'} | {_notes(tool, st)} |")
        L += ["", "| ratio of medians | value |", "|---|---:|"]
        L += [f"| {k} | {v:.2f}× |" for k, v in s["ratios"].items()]
        for peer, p in s.get("parity", {}).items():
            if peer == "report.json":
                if not p["queries"]:
                    L += ["", "report.json of `rankscope evaluate`: no per-query table found in it (not checked)."]
                    continue
                means = p.get("max_abs_diff_means", {})
                L += ["", f"report.json of `rankscope evaluate` against pytrec_eval, {p['queries']:,} queries in its "
                      "per-query table: max |Δ| " + ", ".join(f"{m} {d:.1e}" for m, d in p["max_abs_diff"].items())
                      + ("; its means against pytrec_eval's over those queries: max |Δ| "
                         + ", ".join(f"{m} {d:.1e}" for m, d in means.items()) if means else "")
                      + (" — **equal**" if p["ok"] else " — **DIFFERENT**")]
                continue
            tol = " (its output has 4 decimals: agreement means |Δ| ≤ 5e-5)" if peer == "trec_eval" else ""
            L += ["", f"Per-query values, kernel against {peer}{tol}, {p['queries']:,} positive queries: max |Δ| "
                  + ", ".join(f"{m} {d:.1e}" for m, d in p["max_abs_diff"].items())
                  + (" — **equal**" if p["ok"] else " — **DIFFERENT**")]
        L.append("")
    L += ["## Issue 20's targets (ratios of medians, same run)", "",
          "| target | goal | wall, ratio of medians | status | CPU, ratio of medians | status | wall, median of "
          "paired ratios | status |", "|---|---|---:|---|---:|---|---:|---|"]
    for key, text in TARGETS.items():
        v = res["verdicts"].get(key)
        if v is None:
            L.append(f"| {text} | — | — | not measured | — | — | — | — |")
            continue
        val = f"{v['value']:.0f} MiB" if key == "7M-rss" else f"{v['value']:.2f}×"
        status = "**met**" if v["met"] else "**missed**"
        if "stretch_met" in v:
            status += ", stretch " + ("met" if v["stretch_met"] else "missed")
        cells = []
        for x, ok in ((v.get("cpu_value"), v.get("met_on_cpu")), (v.get("paired_value"), v.get("met_paired"))):
            cells += ["—", "—"] if x is None else [f"{x:.2f}×", "met" if ok else "missed"]
        L.append(f"| {text} | {v['goal']} | {val} | {status} | " + " | ".join(cells) + " |")
    L += ["", "Ratios are peer / rankscope (> 1: rankscope faster) except the interval and floor lines "
          "(rankscope / reference: < 1.3 and near 1 are the goals). The issue states its targets in wall time; "
          "on a machine whose load average exceeds its CPU count a process's wall time is mostly its share of "
          "the CPUs, so the CPU-time ratios are given beside (rankscope uses two threads where the peers use one, "
          "which wall time on an idle machine credits and CPU time does not), and so is the median of the "
          "per-repetition ratios: the two processes of a pair ran minutes apart at most, while the load "
          "changed over the run.", ""]
    (RESULTS / "eval.md").write_text("\n".join(L))


def versions(trec_eval: Path | None) -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in ("numpy", "pyarrow", "pytrec_eval-terrier", "ranx", "numba", "ir_measures"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            pass
    if trec_eval:
        r = subprocess.run([str(trec_eval), "-v"], capture_output=True, text=True)
        parts.append(f"trec_eval `{(r.stdout + r.stderr).strip().splitlines()[0]}` ({shown(trec_eval)})")
    return ", ".join(parts)


# ----------------------------------------------------------------------------- profile (--profile)


def profile(co: Checkout, scales: list[str], reps: int, scratch: Path) -> None:
    """Where a ``rankscope evaluate --resamples 0`` process spends its time: process deltas
    (interpreter start, imports, the rest), ``-X importtime`` grouped by package, and a
    pyinstrument tree of ``main()`` (imports included) at each scale."""
    startup = {"python -c pass": [sys.executable, "-c", "pass"],
               "python -c 'import rankscope_tui.cli'": [sys.executable, "-c", "import rankscope_tui.cli"]}
    L = ["# Where `rankscope evaluate --resamples 0 --out report.json` spends its time", "",
         f"rankscope at `{shown(co.path)}`, commit `{(co.info['commit'] or '?')[:12]}` ({co.info['branch']}"
         f"{', with uncommitted changes to rankscope_tui' if co.info['dirty'] else ''}; package last changed in "
         f"`{(co.info.get('package_commit') or '?')[:12]}`). Load average at the start "
         f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} shared CPUs. Metrics {RS_METRICS}; data as in `eval.md`.", ""]
    pyinst = [d for d in PYINSTRUMENT_DIRS if Path(d, "pyinstrument").is_dir()]
    for scale in scales:
        d = ensure_data(scale)
        run, qrels = d / "run1.txt", d / "qrels.txt"
        cli = co.cli + ["evaluate", "--lane", f"run={run}", "--qrels", str(qrels), "--metrics", RS_METRICS,
                        "--resamples", "0", "--out", str(scratch / "report.json")]
        # The modules an evaluate process holds at exit, imported in their order and nothing run: the
        # process's CPU minus this one's is the work; this one's minus `python -c pass` is the imports.
        mods_file = scratch / f"modules_{scale}.json"
        subprocess.run([sys.executable, "-c", MODULES_DRIVER, str(mods_file), *cli[len(co.cli):]],
                       capture_output=True, cwd=str(scratch), env=co.env)
        mods = json.loads(mods_file.read_text()) if mods_file.exists() else []
        cmds = dict(startup)
        cmds["python -c 'import numpy'"] = [sys.executable, "-c", "import numpy"]
        cmds["python -c 'import numpy, pyarrow, pyarrow.csv'"] = [sys.executable, "-c", "import numpy, pyarrow, pyarrow.csv"]
        if mods:
            cmds[f"import the {len(mods)} modules an evaluate process holds at exit"] = [
                sys.executable, "-c", IMPORT_ONLY, str(mods_file)]
        cmds["rankscope evaluate --resamples 0"] = cli
        times: dict = {k: [] for k in cmds}
        for rep in range(reps):
            names = list(cmds)
            for k in names[rep % len(names):] + names[:rep % len(names)]:
                times[k].append(_spawn(cmds[k], scratch, co.env))
        L += [f"## {scale}", "", f"### Whole process, fresh processes ({reps} each, round-robin; median (min–max))", "",
              "| process | wall | CPU | peak RSS |", "|---|---:|---:|---:|"]
        for k, rs in times.items():
            L.append(f"| `{k}` | {_spread(_stats([r['process'] for r in rs]))} | "
                     f"{_spread(_stats([r['process_cpu'] for r in rs]))} | {_spread(_stats([r['rss_mb'] for r in rs]), 'MB')} |")
        size = (scratch / "report.json").stat().st_size
        med = {k: statistics.median([r["process_cpu"] for r in rs]) for k, rs in times.items()}
        full, base = med["rankscope evaluate --resamples 0"], med["python -c pass"]
        imp = next((v for k, v in med.items() if k.startswith("import the ")), None)
        L += ["", f"report.json: {size / 1e6:.2f} MB."]
        if imp is not None:
            np_only, np_pa = med["python -c 'import numpy'"], med["python -c 'import numpy, pyarrow, pyarrow.csv'"]
            L += ["", f"CPU by difference of medians: interpreter start + exit {base:.3f} s; imports {imp - base:.3f} s "
                  f"(numpy alone {np_only - base:.3f} s, numpy + pyarrow + pyarrow.csv {np_pa - base:.3f} s); the "
                  f"work after the imports {full - imp:.3f} s; {full:.3f} s in all."]
        L.append("")
        # -X importtime: self time grouped by top-level package (one run; importtime adds its own overhead)
        script = cli if len(co.cli) == 1 else cli[1:]  # the console script's path, or -m rankscope_tui.cli
        r = subprocess.run([sys.executable, "-X", "importtime", *script], capture_output=True, text=True,
                           cwd=str(scratch), env=co.env)
        groups: dict = {}
        top: list = []
        for line in r.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cum_us, name = line.split(":", 1)[1].split("|")
            mod = name.strip()
            root = mod.split(".")[0]
            groups[root] = groups.get(root, 0) + int(self_us)
            if not name[1:].startswith(" "):  # imported at top level: its cumulative time
                top.append((int(cum_us), mod))
        total = sum(groups.values())
        L += ["### Imports (`-X importtime`, one run; self time summed per top-level package)", "",
              f"Total self time of all imports: {total / 1000:.1f} ms.", "", "| package | ms |", "|---|---:|"]
        for root, us in sorted(groups.items(), key=lambda kv: -kv[1])[:14]:
            L.append(f"| {root} | {us / 1000:.1f} |")
        L += ["", "Largest top-level imports (cumulative, ms): " + ", ".join(
            f"`{m}` {c / 1000:.1f}" for c, m in sorted(top, reverse=True)[:10]), ""]
        if not pyinst:
            L += ["(pyinstrument not found: no call tree)", ""]
            continue
        driver = scratch / "pyinst_driver.py"
        driver.write_text(PYINSTRUMENT_DRIVER % (pyinst,))
        runs = []
        for _ in range(3):  # the fastest of three: the least disturbed by the other work on the machine
            rr = subprocess.run([sys.executable, str(driver), *cli[len(co.cli):]], capture_output=True, text=True,
                                cwd=str(scratch), env=co.env)
            lines = [ln for ln in rr.stdout.splitlines() if ln.startswith("{")]
            if rr.returncode == 0 and lines:
                runs.append((json.loads(lines[-1]), rr.stderr))
        if not runs:
            L += ["(the pyinstrument runs failed)", ""]
            continue
        phases, tree = min(runs, key=lambda r: r[0]["total"])
        total, cpu = phases.pop("total"), phases.pop("cpu")
        L += ["### Where `main()` spends its time (pyinstrument, main thread, 0.5 ms wall-clock samples; the fastest "
              "of three runs)", "", f"Sampled {total:.3f} s wall, {cpu:.3f} s process CPU over it, from `from "
              "rankscope_tui.cli import main` to the return of `main()` (interpreter start-up and exit are in the "
              "table above). Each sample goes to the outermost phase on its stack (an import inside a phase counts "
              "as an import); waits (for disk, for worker threads, for a CPU the other work holds) count where they "
              "happen. A CPU-time timer was tried and dropped: pyinstrument calls it on every Python call, which "
              "inflates call-heavy code such as `json.dumps`.", "", "| phase | s | share |", "|---|---:|---:|"]
        for name, secs in sorted(phases.items(), key=lambda kv: -kv[1]):
            L.append(f"| {name} | {secs:.3f} | {100 * secs / total:.0f} % |")
        tree = tree.replace(str(scratch), "<scratch>").replace(str(ROOT) + "/", "")  # no machine paths in results
        L += ["", "<details><summary>call tree</summary>", "", "```", _trim_tree(tree), "```", "", "</details>", ""]
    (RESULTS / "profile_eval.md").write_text("\n".join(L))
    print((RESULTS / "profile_eval.md").read_text())


def _duration(tree: str) -> float:
    for line in tree.splitlines():
        if "Duration:" in line:
            try:
                return float(line.split("Duration:")[1].split()[0])
            except (ValueError, IndexError):
                pass
    return float("inf")


def _trim_tree(tree: str, width: int = 150) -> str:
    lines = [ln.rstrip()[:width] for ln in tree.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    global RESULTS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", nargs="+", default=list(SCALES), choices=list(SCALES))
    ap.add_argument("--reps", type=int, default=5, help="repetitions per scale (default 5)")
    ap.add_argument("--tools", nargs="+", default=DEFAULT_TOOLS, choices=TOOLS)
    ap.add_argument("--ranx-reps", type=int, default=None,
                    help="repetitions for ranx and ranx_warm (default: --reps; numba compiles in each fresh process)")
    ap.add_argument("--intervals-at", nargs="*", default=["1M"], choices=list(SCALES),
                    help="scales at which cli_b9999 (the default run, B = 9,999) runs (default 1M)")
    ap.add_argument("--rankscope", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    ap.add_argument("--trec-eval", type=Path, default=None, help="a trec_eval binary (default: build one)")
    ap.add_argument("--results", type=Path, default=RESULTS,
                    help="where eval.md / eval.json / profile_eval.md go (default benchmarks/results)")
    ap.add_argument("--rewrite", action="store_true", help="re-render results/eval.md from results/eval.json")
    ap.add_argument("--no-warmup", action="store_true", help="skip the untimed first round at each scale")
    ap.add_argument("--profile", action="store_true", help="write results/profile_eval.md instead")
    a = ap.parse_args(argv)
    RESULTS = a.results.resolve()
    if a.rewrite:  # re-render eval.md from eval.json (ratios and verdicts recomputed)
        res = json.loads((RESULTS / "eval.json").read_text())
        for s in res["scales"].values():
            s["ratios"] = ratios(s["tools"])
        res["verdicts"] = verdicts(res)
        write_report(res)
        print((RESULTS / "eval.md").read_text())
        return 0
    scratch_dir = tempfile.TemporaryDirectory(prefix="bench_eval.")
    scratch = Path(scratch_dir.name)
    co = Checkout(a.rankscope, scratch)
    co.info = co.prepare()
    if a.profile:
        scales = [s for s in a.scales if s != "7M"] if a.scales == list(SCALES) else a.scales
        profile(co, scales, a.reps, scratch)
        return 0
    trec_eval = None
    if "trec_eval" in a.tools:
        trec_eval = a.trec_eval.resolve() if a.trec_eval else build_trec_eval()
    import numpy
    import pyarrow

    started = time.time()
    res = {"started_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
           "machine": f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, "
                      f"{os.cpu_count()} CPUs",
           "versions": versions(trec_eval), "numpy": numpy.__version__, "pyarrow": pyarrow.__version__,
           "rankscope": co.info, "reps": a.reps, "ranx_reps": a.ranx_reps or a.reps,
           "load_average_start": list(os.getloadavg()), "targets": TARGETS, "scales": {}}
    bench = Bench(co, trec_eval, scratch)
    for scale in a.scales:
        tools = [t for t in a.tools if t != "cli_b9999" or scale in a.intervals_at]
        res["scales"][scale] = run_scale(bench, scale, a.reps, tools, a.ranx_reps or a.reps, not a.no_warmup)
    res["load_average_end"] = list(os.getloadavg())
    res["elapsed_s"] = time.time() - started
    res["verdicts"] = verdicts(res)
    write_report(res)
    print((RESULTS / "eval.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
