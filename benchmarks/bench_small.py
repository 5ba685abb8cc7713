"""Small runs at the import floor (issue 35, item 6): a whole ``rankscope evaluate`` on
100k lines against a process that only imports numpy and pyarrow.csv, side by side with
pytrec_eval and trec_eval, and rankscope before (another checkout) and after (this one).

    .venv/bin/python benchmarks/bench_small.py [--reps 9] [--before GIT-REF | --no-before]
        [--scale 100k] [--trec-eval PATH]

Tools, each a fresh process as a user runs it, on ``benchmarks/data/n1000_d100``
(``synth.py``, 1,000 queries x 100 hits, the 100k scale of ``bench_eval.py``):

* ``floor``       ``python -c "import numpy, pyarrow.csv"``: the bare import floor, what any
                  Python tool that reads the run with pyarrow's CSV reader pays before work.
* ``after``       ``rankscope evaluate --lane run=RUN --qrels QRELS --metrics
                  ndcg@10,rr,p@10,recall@100 --resamples 0 --out report.json`` from this checkout
                  (the console script, ``PYTHONPATH`` = the checkout, bytecode compiled first).
* ``before``      the same command from the code at ``--before`` (a git ref, default
                  ``main``), taken with ``git archive`` into a scratch folder (no checkout is
                  touched).
* ``pytrec_eval`` plain-Python parse, ``RelevanceEvaluator.evaluate``, JSON written
                  (``bench_eval.py``'s script).
* ``trec_eval``   the C binary, ``-q -c`` with the same four measures.

Order: one untimed round (page cache, bytecode), then ``--reps`` rounds, the tools'
order rotated by one each round so a burst of load from elsewhere falls on all alike.
Reported per tool: wall time (from outside) and CPU (user + system of the child, from
``os.wait4``) as median (min-max), and each median over the floor's. The load average is
printed at the start and the end; on a shared machine read the CPU ratios first.
``before`` and ``after`` write their report.json to separate files, compared byte for
byte (the outputs must not change). Writes ``results/small.md`` and ``small.json``,
with paths relative to the checkout. Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bench_eval import (  # noqa: E402
    DATA,
    PYTREC_SCRIPT,
    RESULTS,
    RS_METRICS,
    TE_MEASURES,
    Checkout,
    _spawn,
    build_trec_eval,
    ensure_data,
    versions,
)
from benchmarks.paths import shown  # noqa: E402

FLOOR = "import numpy, pyarrow.csv"
#: the issue's target: a small evaluate within this many times the bare import floor
TARGET = 1.25


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--scale", default="100k")
    ap.add_argument("--before", default="main")
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--trec-eval", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.reps < 7:
        raise SystemExit("--reps: at least 7 (medians of fewer move with one busy second)")
    d = ensure_data(args.scale)
    run, qrels = d / "run1.txt", d / "qrels.txt"
    trec_eval = args.trec_eval or (DATA / "trec_eval" / "trec_eval" if (DATA / "trec_eval" / "trec_eval").exists()
                                   else build_trec_eval())
    started = time.time()
    with tempfile.TemporaryDirectory() as tmpd:
        scratch = Path(tmpd)
        checkouts = {"after": Checkout(ROOT, scratch)}
        before_commit = None
        if not args.no_before:
            before_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", args.before], capture_output=True,
                                           text=True, check=True).stdout.strip()
            code = scratch / "before"
            code.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", before_commit, "rankscope_tui"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
            checkouts["before"] = Checkout(code, scratch)
        info = {name: co.prepare() for name, co in checkouts.items()}
        if before_commit:
            info["before"].update(path=f"git archive {args.before}", commit=before_commit, branch=args.before, dirty=False)
        script = scratch / "tool_pytrec_eval.py"
        script.write_text(PYTREC_SCRIPT)
        peer_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

        def command(tool: str) -> tuple[list[str], dict, Path | None]:
            out = scratch / f"out_{tool}"
            if tool in checkouts:
                co = checkouts[tool]
                return (co.cli + ["evaluate", "--lane", f"run={run}", "--qrels", str(qrels), "--metrics", RS_METRICS,
                                  "--resamples", "0", "--out", str(out)], co.env, None)
            if tool == "floor":
                return [sys.executable, "-c", FLOOR], peer_env, None
            if tool == "pytrec_eval":
                return [sys.executable, str(script), str(run), str(qrels), str(out)], peer_env, None
            return ([str(trec_eval), "-q", "-c"] + [a for m in TE_MEASURES for a in ("-m", m)] + [str(qrels), str(run)],
                    peer_env, out)

        tools = ["floor", *checkouts, "pytrec_eval", "trec_eval"]
        got: dict[str, dict[str, list[float]]] = {t: {"wall": [], "cpu": []} for t in tools}
        load_start = os.getloadavg()
        for rep in range(args.reps + 1):
            k = rep % len(tools)
            for tool in tools[k:] + tools[:k]:
                cmd, env, stdout_path = command(tool)
                rec = _spawn(cmd, scratch, env, stdout_path)
                if rec["rc"] != 0:
                    raise SystemExit(f"{tool} failed: {rec.get('error')}")
                if rep:  # the first round warms the page cache and the bytecode
                    got[tool]["wall"].append(rec["process"])
                    got[tool]["cpu"].append(rec["process_cpu"])
        load_end = os.getloadavg()
        same = None
        if "before" in checkouts:
            same = (scratch / "out_before").read_bytes() == (scratch / "out_after").read_bytes()

    def mmm(xs: list[float]) -> dict[str, float]:
        return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}

    stats = {t: {k: mmm(v) for k, v in got[t].items()} for t in tools}
    floor = stats["floor"]
    ratios = {t: {k: stats[t][k]["median"] / floor[k]["median"] for k in ("wall", "cpu")} for t in tools}
    res = {"scale": args.scale, "run": shown(run), "qrels": shown(qrels), "reps": args.reps,
           "load_start": load_start, "load_end": load_end, "cpus": os.cpu_count(), "python": platform.python_version(),
           "versions": versions(trec_eval), "checkouts": info, "stats": stats, "ratios": ratios,
           "same_report_bytes": same, "seconds": round(time.time() - started, 1),
           "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "small.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    (RESULTS / "small.md").write_text(render(res))
    print(render(res))
    return 0


def render(res: dict) -> str:
    def cell(s: dict[str, float]) -> str:
        return f"{s['median']:.3f} s ({s['min']:.3f}-{s['max']:.3f})"

    names = {"floor": f"floor: `python -c \"{FLOOR}\"`",
             "after": "rankscope evaluate, this branch", "before": "rankscope evaluate, before",
             "pytrec_eval": "pytrec_eval-terrier (plain-Python parse)", "trec_eval": "trec_eval 10.0 (C), `-q -c`"}
    ls, le = res["load_start"], res["load_end"]
    L = [f"# Small runs at the import floor ({res['scale']}: `{res['run']}`)", "",
         f"Run at {res['when']} ({res['seconds']} s), Python {res['python']}, {res['cpus']} CPUs shared with other work. "
         f"**Load average** (1 / 5 / 15 min) at the start {ls[0]:.2f} / {ls[1]:.2f} / {ls[2]:.2f}, "
         f"at the end {le[0]:.2f} / {le[1]:.2f} / {le[2]:.2f}.", "",
         f"Each tool a fresh process, {res['reps']} timed rounds after one untimed, the order rotated each round. "
         f"rankscope: `evaluate --metrics {RS_METRICS} --resamples 0 --out report.json`. Cells: median (min-max); "
         f"ratios: median over the floor's median. Versions: {res['versions']}.", "",
         "| tool | wall | CPU (user + sys) | wall / floor | CPU / floor |", "|---|---:|---:|---:|---:|"]
    for t, s in res["stats"].items():
        r = res["ratios"][t]
        L.append(f"| {names[t]} | {cell(s['wall'])} | {cell(s['cpu'])} | {r['wall']:.2f}x | {r['cpu']:.2f}x |")
    a = res["ratios"]["after"]
    L += ["", f"Target: rankscope evaluate within {TARGET}x of the floor: wall {a['wall']:.2f}x, CPU {a['cpu']:.2f}x "
          f"({'met' if max(a.values()) <= TARGET else 'not met'})."]
    for name, c in res["checkouts"].items():
        L.append(f"- {name}: `{c['path']}` at `{(c['commit'] or '?')[:12]}` ({c['branch']}"
                 f"{', with uncommitted changes' if c['dirty'] else ''})")
    if res["same_report_bytes"] is not None:
        L.append(f"- report.json of before and after: {'the same bytes' if res['same_report_bytes'] else 'DIFFERENT'}")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
