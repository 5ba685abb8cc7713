"""Reading speed of the input formats against the same run as plain TREC text (issue 16,
"Must show" 5): a Parquet run should load at least as fast as TREC text, a
zstd-compressed TREC run within 1.5x of the uncompressed one.

    .venv/bin/python benchmarks/bench_formats.py [--lines 7000000] [--reps 3]
                                                 [--formats trec zstd gzip parquet msmarco jsonl]

(the default leaves out jsonl; the 300k results in ``results/`` include it)

Data (generated into ``benchmarks/data/formats_<lines>/`` when missing, seeded):
``lines / 1000`` queries x 1,000 hits, doc ids ``D<7 digits>``, scores with 4
decimals (the MS MARCO dev shape at 7M). The same rows are written as TREC text,
zstd- and gzip-compressed TREC, Parquet (PyTerrier columns ``qid, docno, score,
rank``; pyarrow's default snappy pages), an MS MARCO ``qid docid rank`` file and JSON
Lines; qrels hold one relevant doc per query.

Every measurement is a fresh subprocess (imports timed apart), interleaved repetition
by repetition with the order rotating, so load from other processes falls on all
formats alike: ``read`` is ``readers.read_lane`` alone, ``load`` the whole
``Workspace.load`` (read, encode, order, judge). Medians and minimums of wall time;
the ratio is against TREC text in the same run. Before timing, every format's
per-query values are checked equal to TREC's (MS MARCO against a TREC run scored
-rank, as it is read). Writes ``results/formats.md`` and ``formats.json``. Not a
test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "results"

FORMATS = {  # name -> file name
    "trec": "run.trec", "zstd": "run.trec.zst", "gzip": "run.trec.gz", "parquet": "run.parquet",
    "msmarco": "run.msmarco.tsv", "jsonl": "run.jsonl",
}


def generate(lines: int, seed: int = 16) -> Path:
    """The data directory for ``lines`` rows (written once)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    d = DATA / f"formats_{lines}"
    if (d / "done").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    depth = 1000 if lines >= 1000 else lines
    nq = max(1, lines // depth)
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.array([f"q{i}" for i in range(nq)], dtype=object), depth)
    docs = rng.integers(0, 9_000_000, size=nq * depth)
    # unique docs per query: offset each query's draws by its rank (distinct within a query)
    docs = (docs // depth) * depth + np.tile(np.arange(depth), nq)
    doc = np.char.add("D", np.char.zfill(docs.astype(str), 7)).astype(object)
    score = np.round(np.sort(rng.random((nq, depth)) * 30, axis=1)[:, ::-1], 4).ravel()
    score = np.maximum(score, 0.0001)
    rank = np.tile(np.arange(1, depth + 1), nq)
    table = pa.table({"qid": pa.array(qid, pa.string()), "q0": pa.array(np.full(nq * depth, "Q0", dtype=object)),
                      "docno": pa.array(doc, pa.string()), "rank": pa.array(rank, pa.int64()),
                      "score": pa.array(score), "tag": pa.array(np.full(nq * depth, "bench", dtype=object))})
    # TREC text with pyarrow's CSV writer (space-separated, no header, no quotes)
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pcsv.write_csv(table, str(d / FORMATS["trec"]), opts)
    raw = (d / FORMATS["trec"]).read_bytes()
    with pa.CompressedOutputStream(str(d / FORMATS["zstd"]), "zstd") as out:
        out.write(raw)
    import gzip

    (d / FORMATS["gzip"]).write_bytes(gzip.compress(raw, compresslevel=6))
    pq.write_table(table.select(["qid", "docno", "score", "rank"]), str(d / FORMATS["parquet"]))
    pcsv.write_csv(table.select(["qid", "docno", "rank"]), str(d / FORMATS["msmarco"]),
                   pcsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none"))
    # the MS MARCO twin as TREC, scored -rank (as the MS MARCO reader scores it)
    twin = table.set_column(4, "score", pa.array(-rank.astype(np.float64)))
    pcsv.write_csv(twin, str(d / "run.msmarco_twin.trec"), opts)
    with open(d / FORMATS["jsonl"], "w") as fh:  # (written always, timed only when asked)
        for q, dd, s in zip(qid, doc, score):
            fh.write(f'{{"query_id": "{q}", "doc_id": "{dd}", "score": {float(s)!r}}}\n')
    with open(d / "qrels.txt", "w") as fh:
        for i in range(nq):
            fh.write(f"q{i} 0 {doc[i * depth + (i % 10)]} 1\n")
    (d / "done").write_text("ok\n")
    return d


CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from rankscope_tui.kernel import readers
from rankscope_tui.kernel.workspace import Workspace
t1 = time.perf_counter()
path, qrels, what = sys.argv[1], sys.argv[2], sys.argv[3]
t2 = time.perf_counter()
if what == "read":
    lane = readers.read_lane(path, "lane")
    n = len(lane.score)
else:
    ws = Workspace.load([("lane", path)], qrels)
    n = ws.lanes["lane"].n_rows
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "seconds": t3 - t2, "rows": n}))
"""


def child(path: Path, qrels: Path, what: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(qrels), what], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout)


def check_equal(d: Path, formats: list[str]) -> dict:
    """Per-query values of each format equal TREC's (the MS MARCO twin for msmarco)."""
    import numpy as np

    from rankscope_tui.kernel.workspace import Workspace

    def pq(path):
        ws = Workspace.load([("lane", str(path))], str(d / "qrels.txt"))
        return ws.per_query("lane")

    base = pq(d / FORMATS["trec"])
    twin = pq(d / "run.msmarco_twin.trec") if "msmarco" in formats else None
    out = {}
    for f in formats:
        if f == "trec":
            continue
        got = pq(d / FORMATS[f])
        ref = twin if f == "msmarco" else base
        out[f] = all(np.asarray(got[k]).tobytes() == np.asarray(ref[k]).tobytes() for k in ref)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=7_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--formats", nargs="+", default=[f for f in FORMATS if f != "jsonl"], choices=list(FORMATS),
                    help="default: all but jsonl (parsed in Python, ~20 us a row: minutes at 7M)")
    ap.add_argument("--what", nargs="+", default=["read", "load"], choices=["read", "load"])
    args = ap.parse_args(argv)
    formats = ["trec"] + [f for f in args.formats if f != "trec"]
    t = time.perf_counter()
    d = generate(args.lines)
    gen_s = time.perf_counter() - t
    equal = check_equal(d, formats)
    times: dict = {w: {f: [] for f in formats} for w in args.what}
    for rep in range(args.reps):
        order = formats[rep % len(formats):] + formats[:rep % len(formats)]
        for w in args.what:
            for f in order:
                r = child(d / FORMATS[f], d / "qrels.txt", w)
                times[w][f].append(r["seconds"])
    sizes = {f: (d / FORMATS[f]).stat().st_size for f in formats}
    result = {"lines": args.lines, "reps": args.reps, "machine": platform.platform(), "cpus": os.cpu_count(),
              "load_average": os.getloadavg()[0], "equal_per_query": equal, "bytes": sizes, "seconds": times,
              "generated_in_s": gen_s}
    rows = []
    for w in args.what:
        base = statistics.median(times[w]["trec"])
        for f in formats:
            med = statistics.median(times[w][f])
            rows.append(f"| {w} | {f} | {sizes[f] / 1e6:,.1f} MB | {med:.3f} s | {min(times[w][f]):.3f} s | "
                        f"{med / base:.2f}x | {'yes' if f == 'trec' or equal.get(f) else 'NO'} |")
    md = "\n".join([
        f"# formats: reading speed against TREC text ({args.lines:,} lines, {args.reps} reps)", "",
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end",
        "", "| what | format | file | median | min | vs TREC | per-query equal |", "|---|---|---:|---:|---:|---:|---|",
        *rows, "",
        "read = `readers.read_lane`; load = `Workspace.load` (read, encode, order, judge). Fresh process per "
        "measurement, order rotating per repetition.", ""])
    RESULTS.mkdir(exist_ok=True)
    suffix = "" if args.lines == 7_000_000 else f"_{args.lines}"
    (RESULTS / f"formats{suffix}.md").write_text(md)
    (RESULTS / f"formats{suffix}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
