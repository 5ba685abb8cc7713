"""Speed and memory of reading + evaluating a run, against the tools a user would pick
instead, on the same files in the same run (SPEC §12; targets T1-T4).

    .venv/bin/python benchmarks/bench_eval.py [--scales 100k 1M 7M] [--reps N]
                                              [--tools rankscope cli pytrec_eval ranx ir_measures trec_eval]

Data: ``/work/shared/tools/synth.py`` (deterministic, seeded), generated into
``benchmarks/data/`` when missing: 100k = 1,000 queries x 100 hits, 1M = 10,000 x
100, 7M = 7,000 x 1,000 (MS MARCO dev shape). Metrics: nDCG@10, RR, P@10, recall@100
(trec_eval ndcg_cut.10, recip_rank, P.10, recall.100).

Every measurement is a fresh subprocess; peak RSS is that child's ``ru_maxrss`` from
``os.wait4``. Tools are interleaved repetition by repetition (the order rotates), so
load from other processes falls on all of them alike. Reported: medians and minimums.

* ``rankscope``   in-process kernel: ``Workspace.load`` (read, encode, order, judge) +
                  ``per_query`` -- the first call in a fresh process ("first") and a
                  second call in the same process ("warm"); imports are timed apart.
* ``cli``         the whole ``rankscope evaluate --resamples 0 --out report.json``
                  process (interpreter start, imports, report), wall time from outside.
* ``pytrec_eval`` pytrec_eval-terrier with its inputs parsed by a plain Python reader
                  (``line.split()`` into dicts, as a user would), then ``evaluate``.
* ``ranx``        ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate``: "cold" is the
                  first call in a fresh process (numba dispatch / cache load included),
                  "warm" a second identical call in the same process.
* ``ir_measures`` ``read_trec_qrels`` / ``read_trec_run`` + ``calc_aggregate`` (its default
                  provider is pytrec_eval).
* ``trec_eval``   the C binary, when one is on PATH.

Correctness in the same run: rankscope's per-query values are compared with
pytrec_eval's on every positive query (a query pytrec_eval omits counts as 0); the
maximum absolute difference per metric is reported. A fast wrong answer is no answer.

Writes ``benchmarks/results/eval.md`` and ``eval.json``. Not a test: nothing asserts.
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
SYNTH = Path("/work/shared/tools/synth.py")

# name -> (directory, queries, depth, runs)
SCALES = {
    "100k": ("n1000_d100", 1000, 100, 2),
    "1M": ("n10000_d100", 10000, 100, 2),
    "7M": ("n7000_d1000", 7000, 1000, 1),
}
DEFAULT_REPS = {"100k": 7, "1M": 5, "7M": 3}
RS_METRICS = "ndcg@10,rr,p@10,recall@100"
PT_METRICS = {"ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "p@10": "P_10", "recall@100": "recall_100"}
TOOLS = ["rankscope", "cli", "pytrec_eval", "ranx", "ir_measures", "trec_eval"]

# Targets from the performance brief (ratios are peer time / rankscope time).
TARGETS = {
    "T1": "7M: read + evaluate >= 3x faster than pytrec_eval (incl. parsing), >= 7x ranx warm; peak RSS <= 1.2 GB; stretch <= 1.0 s",
    "T2": "1M: >= 3x faster than pytrec_eval (incl. parsing)",
    "T3": "100k: whole `rankscope evaluate --resamples 0` process no slower than a pytrec_eval process; within 3x of trec_eval (C) if on PATH",
    "T4": "first call in a fresh process within 1.5x of a warm call",
}


# ----------------------------------------------------------------------------- data


def ensure_data(scale: str) -> Path:
    d, q, depth, runs = SCALES[scale]
    out = DATA / d
    if not (out / "run1.txt").exists() or not (out / "qrels.txt").exists():
        out.mkdir(parents=True, exist_ok=True)
        print(f"generating {out} with synth.py ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(SYNTH), "--queries", str(q), "--depth", str(depth), "--runs", str(runs),
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


# ----------------------------------------------------------------------------- workers (run in the child)


def _plain_run(path: str) -> dict:
    run: dict = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            f = line.split()
            if f:
                run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


def _plain_qrels(path: str) -> dict:
    qrels: dict = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            f = line.split()
            if f:
                qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    return qrels


def worker(tool: str, run: str, qrels: str, dump: str | None) -> dict:
    out: dict = {}
    t0 = time.perf_counter()
    if tool == "rankscope":
        sys.path.insert(0, str(ROOT))
        from rankscope_tui.cli import process_setup

        process_setup()  # the memory settings a rankscope process runs with
        from rankscope_tui.kernel.metrics import parse_metrics
        from rankscope_tui.kernel.settings import LoadSettings
        from rankscope_tui.kernel.workspace import Workspace

        out["import"] = time.perf_counter() - t0
        settings = LoadSettings(metrics=tuple(parse_metrics(RS_METRICS)), resamples=0)

        def once():
            ws = Workspace.load([("run", run)], qrels, settings)
            return ws, ws.per_query("run", "doc")

        t, c = time.perf_counter(), time.process_time()
        ws, pq = once()
        out["first"] = time.perf_counter() - t
        out["cpu_first"] = time.process_time() - c
        import resource

        out["rss_first_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # before the warm call
        if dump:
            pos = ws.positives
            vals = {ws.qids[c]: {m: float(pq[m][c]) for m in PT_METRICS} for c in pos.tolist()}
            Path(dump).write_text(json.dumps(vals))
        del ws, pq
        t, c = time.perf_counter(), time.process_time()
        once()
        out["warm"] = time.perf_counter() - t
        out["cpu_warm"] = time.process_time() - c
    elif tool == "pytrec_eval":
        import pytrec_eval

        out["import"] = time.perf_counter() - t0
        t, c = time.perf_counter(), time.process_time()
        qr = _plain_qrels(qrels)
        rn = _plain_run(run)
        out["parse"] = time.perf_counter() - t
        t1 = time.perf_counter()
        ev = pytrec_eval.RelevanceEvaluator(qr, {"ndcg_cut.10", "recip_rank", "P.10", "recall.100"})
        res = ev.evaluate(rn)
        out["eval"] = time.perf_counter() - t1
        out["first"] = time.perf_counter() - t
        out["cpu_first"] = time.process_time() - c
        if dump:
            Path(dump).write_text(json.dumps({q: {m: float(v.get(PT_METRICS[m], 0.0)) for m in PT_METRICS}
                                              for q, v in res.items()}))
    elif tool == "ranx":
        from ranx import Qrels, Run, evaluate

        out["import"] = time.perf_counter() - t0
        ms = ["ndcg@10", "mrr", "precision@10", "recall@100"]
        for label in ("first", "warm"):
            t, c = time.perf_counter(), time.process_time()
            qr = Qrels.from_file(qrels, kind="trec")
            rn = Run.from_file(run, kind="trec")
            out[f"parse_{label}"] = time.perf_counter() - t
            t1 = time.perf_counter()
            evaluate(qr, rn, ms, make_comparable=True)
            out[f"eval_{label}"] = time.perf_counter() - t1
            out[label] = time.perf_counter() - t
            out[f"cpu_{label}"] = time.process_time() - c
            del qr, rn
    elif tool == "ir_measures":
        import ir_measures
        from ir_measures import RR, nDCG, P, R

        out["import"] = time.perf_counter() - t0
        t, c = time.perf_counter(), time.process_time()
        ir_measures.calc_aggregate([nDCG @ 10, RR, P @ 10, R @ 100], ir_measures.read_trec_qrels(qrels),
                                   ir_measures.read_trec_run(run))
        out["first"] = time.perf_counter() - t
        out["cpu_first"] = time.process_time() - c
    else:
        raise SystemExit(f"unknown worker {tool}")
    return out


# ----------------------------------------------------------------------------- parent


def _spawn(cmd: list[str], env=None) -> tuple[float, float, float, int, str, str]:
    """Run cmd; (wall s, CPU s, peak RSS MB of that child, exit status, stdout, stderr)."""
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=o, stderr=e, cwd=str(ROOT), env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        o.seek(0)
        e.seek(0)
        return (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, p.returncode, o.read().decode(errors="replace"),
                e.read().decode(errors="replace"))


def measure(tool: str, run: Path, qrels: Path, tmp: Path, dump: str | None) -> dict:
    if tool == "cli":
        exe = ROOT / ".venv" / "bin" / "rankscope"
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "rankscope_tui.cli"]
        cmd += ["evaluate", "--lane", f"run={run}", "--qrels", str(qrels), "--metrics", RS_METRICS, "--resamples", "0",
                "--out", str(tmp / "report.json")]
    elif tool == "trec_eval":
        cmd = [shutil.which("trec_eval"), "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "P.10", "-m", "recall.100",
               str(qrels), str(run)]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", tool, "--run", str(run), "--qrels", str(qrels)]
        if dump:
            cmd += ["--dump", dump]
    wall, cpu, rss, rc, out, err = _spawn(cmd)
    rec = {"process": wall, "process_cpu": cpu, "rss_mb": rss, "rc": rc}
    if rc != 0:
        rec["error"] = (err.strip().splitlines() or ["exit status %d" % rc])[-1][:300]
        return rec
    if tool not in ("cli", "trec_eval"):
        line = [ln for ln in out.splitlines() if ln.startswith("{")][-1]
        rec.update(json.loads(line))
    return rec


def parity(rs_dump: str, pt_dump: str) -> dict:
    rs = json.loads(Path(rs_dump).read_text())
    pt = json.loads(Path(pt_dump).read_text())
    worst = {m: 0.0 for m in PT_METRICS}
    for q, vals in rs.items():
        for m in PT_METRICS:
            worst[m] = max(worst[m], abs(vals[m] - pt.get(q, {}).get(m, 0.0)))
    return {"queries": len(rs), "max_abs_diff": worst, "ok": max(worst.values()) <= 1e-9}


def _stats(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "n": len(xs)} if xs else {}


def run_scale(scale: str, reps: int, tools: list[str], ranx_reps: int = 2) -> dict:
    d = ensure_data(scale)
    run, qrels = d / "run1.txt", d / "qrels.txt"
    lines = sum(1 for _ in open(run, "rb"))
    recs: dict = {t: [] for t in tools}
    par = None
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        for rep in range(reps):
            order = tools[rep % len(tools):] + tools[:rep % len(tools)]
            for tool in order:
                if tool == "ranx" and rep >= ranx_reps:  # numba compiles in every fresh process: tens of seconds
                    continue
                dump = str(tmp / f"{tool}.json") if rep == 0 and tool in ("rankscope", "pytrec_eval") else None
                rec = measure(tool, run, qrels, tmp, dump)
                recs[tool].append(rec)
                shown = rec.get("first", rec["process"])
                print(f"  {scale} rep {rep + 1}/{reps} {tool:12s} {shown:7.3f} s  process {rec['process']:7.3f} s  "
                      f"{rec['rss_mb']:7.0f} MB" + (f"  ERROR {rec['error']}" if "error" in rec else ""),
                      file=sys.stderr, flush=True)
            if rep == 0 and (tmp / "rankscope.json").exists() and (tmp / "pytrec_eval.json").exists():
                par = parity(str(tmp / "rankscope.json"), str(tmp / "pytrec_eval.json"))
    summary: dict = {"lines": lines, "run": str(run.relative_to(ROOT)), "qrels": str(qrels.relative_to(ROOT)),
                     "parity_vs_pytrec_eval": par, "tools": {}}
    for tool, rs in recs.items():
        ok = [r for r in rs if r["rc"] == 0]
        s: dict = {"errors": [r["error"] for r in rs if "error" in r][:1]}
        for key in ("first", "warm", "process", "cpu_first", "cpu_warm", "process_cpu", "rss_mb", "rss_first_mb", "import", "parse",
                    "eval", "parse_first", "eval_first", "parse_warm", "eval_warm"):
            xs = [r[key] for r in ok if key in r]
            if xs:
                s[key] = _stats(xs)
        summary["tools"][tool] = s
    summary["ratios"] = ratios(summary["tools"])
    return summary


def _med(tools: dict, tool: str, key: str):
    return tools.get(tool, {}).get(key, {}).get("median")


def ratios(t: dict) -> dict:
    """Peer time / rankscope time (> 1: rankscope is faster), on medians."""
    out: dict = {}
    rs_first, rs_warm, cli = _med(t, "rankscope", "first"), _med(t, "rankscope", "warm"), _med(t, "cli", "process")
    peers = {
        "pytrec_eval (parse + eval)": _med(t, "pytrec_eval", "first"),
        "pytrec_eval process": _med(t, "pytrec_eval", "process"),
        "ranx warm (read + eval)": _med(t, "ranx", "warm"),
        "ranx cold (read + eval)": _med(t, "ranx", "first"),
        "ir_measures (read + eval)": _med(t, "ir_measures", "first"),
        "trec_eval process": _med(t, "trec_eval", "process"),
    }
    for name, v in peers.items():
        if v is None:
            continue
        if rs_first and "process" not in name:
            out[f"{name} / rankscope kernel"] = v / rs_first
        if cli:
            key = f"{name} / rankscope evaluate process"
            out[key] = v / cli
    rs_cpu, cli_cpu = _med(t, "rankscope", "cpu_first"), _med(t, "cli", "process_cpu")
    for name, v in {"pytrec_eval CPU (parse + eval)": _med(t, "pytrec_eval", "cpu_first"),
                    "ranx warm CPU": _med(t, "ranx", "cpu_warm"),
                    "pytrec_eval process CPU": _med(t, "pytrec_eval", "process_cpu")}.items():
        if v is None:
            continue
        if rs_cpu and "process" not in name:
            out[f"{name} / rankscope kernel CPU"] = v / rs_cpu
        if cli_cpu and "process" in name:
            out[f"{name} / rankscope evaluate process CPU"] = v / cli_cpu
    ranx_warm = _med(t, "ranx", "warm")
    if ranx_warm and rs_warm:  # steady state against steady state
        out["ranx warm (read + eval) / rankscope kernel warm"] = ranx_warm / rs_warm
    if rs_first and rs_warm:
        out["rankscope first / warm (T4)"] = rs_first / rs_warm
    return out


def verdicts(res: dict) -> dict:
    v: dict = {}
    s = res["scales"]
    if "7M" in s:
        r, t = s["7M"]["ratios"], s["7M"]["tools"]
        pt = r.get("pytrec_eval (parse + eval) / rankscope kernel")
        rx = r.get("ranx warm (read + eval) / rankscope kernel")
        rss = _med(t, "cli", "rss_mb") or _med(t, "rankscope", "rss_first_mb")
        first = _med(t, "rankscope", "first")
        v["T1"] = {"pytrec_ratio": pt, "ranx_warm_ratio": rx,
                   "ranx_warm_vs_rankscope_warm": r.get("ranx warm (read + eval) / rankscope kernel warm"),
                   "peak_rss_mb_cli": _med(t, "cli", "rss_mb"),
                   "peak_rss_mb_kernel_first_call": _med(t, "rankscope", "rss_first_mb"), "kernel_s": first,
                   "met": bool(pt and pt >= 3 and (rx is None or rx >= 7) and (rss or 0) <= 1200),
                   "stretch_met": bool(first and first <= 1.0)}
    if "1M" in s:
        pt = s["1M"]["ratios"].get("pytrec_eval (parse + eval) / rankscope kernel")
        v["T2"] = {"pytrec_ratio": pt, "met": bool(pt and pt >= 3)}
    if "100k" in s:
        t = s["100k"]["tools"]
        cli, ptp, te = _med(t, "cli", "process"), _med(t, "pytrec_eval", "process"), _med(t, "trec_eval", "process")
        v["T3"] = {"cli_s": cli, "pytrec_process_s": ptp, "trec_eval_s": te,
                   "met": bool(cli and ptp and cli <= ptp and (te is None or cli <= 3 * te))}
    t4 = {k: s[k]["ratios"].get("rankscope first / warm (T4)") for k in s}
    v["T4"] = {"first_over_warm": t4, "met": all(x is not None and x <= 1.5 for x in t4.values())}
    return v


def _fmt(x, unit="s") -> str:
    if x is None:
        return "—"
    return f"{x:.3f} {unit}" if unit == "s" else f"{x:.0f} {unit}"


def write_report(res: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "eval.json").write_text(json.dumps(res, indent=2) + "\n")
    L = ["# Read + evaluate: rankscope against pytrec_eval, ranx, ir_measures", "",
         f"Synthetic data from `synth.py` (seeded). Metrics nDCG@10, RR, P@10, recall@100. Every measurement in a fresh "
         f"subprocess, tools interleaved; medians (min in brackets) over the repetitions. {res['machine']}.", "",
         "Times: **kernel** = `Workspace.load` + `per_query` inside a running interpreter (first call); **process** = the "
         "whole process seen from outside (interpreter start and imports included). pytrec_eval's time includes parsing "
         "its inputs with a plain Python reader; ranx's includes `from_file`. Peak RSS is the child's maximum resident set.", ""]
    for scale, s in res["scales"].items():
        L += [f"## {scale} lines ({s['lines']:,} run lines: `{s['run']}`)", ""]
        L += ["| tool | in-process (first) | warm | process | CPU (first / process) | peak RSS | notes |",
              "|---|---:|---:|---:|---:|---:|---|"]
        for tool, st in s["tools"].items():
            def cell(k):
                x = st.get(k)
                return "—" if not x else f"{x['median']:.3f} s ({x['min']:.3f})"
            notes = []
            if "parse" in st:
                notes.append(f"parse {st['parse']['median']:.2f} s, eval {st['eval']['median']:.2f} s")
            if "parse_warm" in st:
                notes.append(f"warm: read {st['parse_warm']['median']:.2f} s, eval {st['eval_warm']['median']:.2f} s")
            if "import" in st:
                notes.append(f"imports {st['import']['median']:.2f} s")
            if "rss_first_mb" in st:
                notes.append(f"peak RSS after the first call {st['rss_first_mb']['median']:.0f} MB")
            if st.get("errors"):
                notes.append("ERROR: " + st["errors"][0])
            rss = st.get("rss_mb")
            rss_cell = "—" if not rss else "%.0f MB" % rss["median"]
            cf, cp = st.get("cpu_first"), st.get("process_cpu")
            cpu_cell = " / ".join("—" if not x else "%.2f s" % x["median"] for x in (cf, cp))
            L.append(f"| {tool} | {cell('first')} | {cell('warm')} | {cell('process')} | {cpu_cell} | {rss_cell} | "
                     f"{'; '.join(notes)} |")
        L += ["", "| ratio (peer / rankscope; > 1 = rankscope faster) | value |", "|---|---:|"]
        L += [f"| {k} | {v:.2f}× |" for k, v in s["ratios"].items()]
        p = s.get("parity_vs_pytrec_eval")
        if p:
            L += ["", f"Parity with pytrec_eval on {p['queries']:,} positive queries: max |Δ| " +
                  ", ".join(f"{m} {d:.1e}" for m, d in p["max_abs_diff"].items()) + (" — **equal**" if p["ok"] else " — **DIFFERENT**")]
        L.append("")
    L += ["## Targets", ""]
    for k, text in TARGETS.items():
        v = res["verdicts"].get(k)
        L.append(f"- **{k}** {text}: " + ("not measured" if v is None else ("met" if v["met"] else "NOT met") +
                                         " — " + json.dumps({a: (round(b, 3) if isinstance(b, float) else b)
                                                             for a, b in v.items() if a != "met"})))
    L.append("")
    (RESULTS / "eval.md").write_text("\n".join(L))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", nargs="+", default=list(SCALES), choices=list(SCALES))
    ap.add_argument("--reps", type=int, default=None, help="repetitions per scale (default 7 / 5 / 3)")
    ap.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    ap.add_argument("--ranx-reps", type=int, default=2, help="repetitions for ranx (its cold start compiles with numba)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--qrels", help=argparse.SUPPRESS)
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(worker(a.worker, a.run, a.qrels, a.dump)))
        return 0
    # The CLI should load cached bytecode, as an installed package does: an editable
    # install under PYTHONDONTWRITEBYTECODE would otherwise recompile every module per run.
    import compileall

    compileall.compile_dir(str(ROOT / "rankscope_tui"), quiet=1)
    tools = [t for t in a.tools if t != "trec_eval" or shutil.which("trec_eval")]
    missing = [t for t in a.tools if t not in tools]
    import numpy
    import pyarrow

    res = {"machine": f"Python {platform.python_version()}, numpy {numpy.__version__}, pyarrow {pyarrow.__version__}, "
                      f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load average at start "
                      f"{os.getloadavg()[0]:.2f}",
           "tools_not_available": missing, "targets": TARGETS, "scales": {}}
    for scale in a.scales:
        res["scales"][scale] = run_scale(scale, a.reps or DEFAULT_REPS[scale], tools, a.ranx_reps)
    res["load_average_at_end"] = os.getloadavg()[0]
    res["verdicts"] = verdicts(res)
    write_report(res)
    print((RESULTS / "eval.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
