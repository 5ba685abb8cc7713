"""Writing report.json's text (issue 35, item 4): orjson's road against the column
writer and ``json.dumps``, on a report-shaped object, in one process.

    .venv/bin/python benchmarks/bench_report_writer.py [--queries 100000] [--reps 5]

The object: ``--queries`` per-query rows of the nine default measures (seeded random
values of the shapes the measures give: P@10 in tenths, the others in [0, 1], a few
below 1e-4) and a settings block with nulls. Timed per round, in turns: ``json.dumps(obj,
indent=2, ensure_ascii=False, allow_nan=False)`` (the text every writer must give),
the column writer alone (``json_text``'s road before orjson) and
``json_text.dumps_parts`` (orjson's road when it applies); each text is checked equal
to ``json.dumps``'s first. Writes ``results/report_writer.md`` and ``.json``. Not a
test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rankscope_tui.kernel.report import json_text  # noqa: E402

MEASURES = ["ndcg@10", "rr", "p@10", "recall@100", "map", "ndcg", "bpref", "r-prec", "success@10"]


def report(queries: int, seed: int = 35) -> dict:
    r = random.Random(seed)
    per_query = {f"q{i}": {m: (r.randint(0, 10) / 10 if m == "p@10" else r.random() ** 2) for m in MEASURES}
                 for i in range(queries)}
    return {"settings": {"depth": None, "group_sep": None, "measures": MEASURES}, "per_query": per_query}


def column_writer(obj: object) -> str:
    out: list[str] = []
    json_text._value(obj, 0, out, set())
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    obj = report(args.queries)
    writers = {"json.dumps": lambda o: json.dumps(o, indent=2, ensure_ascii=False, allow_nan=False),
               "column writer (before)": column_writer,
               "dumps_parts (after: orjson's road)": lambda o: "".join(json_text.dumps_parts(o))}
    want = writers["json.dumps"](obj)
    equal = {k: f(obj) == want for k, f in writers.items()}
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {k: [] for k in writers}
    names = list(writers)
    for rep in range(args.reps):
        for k in names[rep % 3:] + names[:rep % 3]:
            t = time.perf_counter()
            writers[k](obj)
            times[k].append(time.perf_counter() - t)
    load_end = os.getloadavg()
    base = times["column writer (before)"]
    rows = [f"| {k} | {statistics.median(v):.3f} s | {min(v):.3f}-{max(v):.3f} s | "
            f"{statistics.median(b / x for b, x in zip(base, v)):.2f}x | {'yes' if equal[k] else 'NO'} |"
            for k, v in times.items()]
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    md = "\n".join([
        f"# report.json's text: {args.queries:,} queries x {len(MEASURES)} measures ({len(want) / 1e6:.1f} MB), "
        f"{args.reps} rounds", "",
        f"machine: {machine}; load average (1, 5, 15 min) {', '.join(f'{x:.2f}' for x in load_start)} at the start, "
        f"{', '.join(f'{x:.2f}' for x in load_end)} at the end (the 2 cores are shared)", "",
        "| writer | median | min-max | speed-up over the column writer (median of rounds) | text equal to json.dumps's |",
        "|---|---:|---:|---:|---|", *rows, "", "Data: `benchmarks/bench_report_writer.py` docstring.", ""])
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "report_writer.md").write_text(md)
    (out / "report_writer.json").write_text(json.dumps({"queries": args.queries, "rounds": args.reps, "machine": machine,
                                                         "load_average_start": load_start, "load_average_end": load_end,
                                                         "seconds": times, "equal": equal}, indent=1) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
