"""Reading speed of the input formats against the same run as plain TREC text (issue 16,
"Must show" 5): a Parquet run should load at least as fast as TREC text, a
zstd-compressed TREC run within 1.5x of the uncompressed one.

    .venv/bin/python benchmarks/bench_formats.py [--lines 7000000] [--reps 7]
                                                 [--formats trec zstd gzip pq-ranx ...]

Data (generated into ``benchmarks/data/formats_<lines>/`` when missing): one run from
``../shared/tools/synth.py`` (seeded; ``lines / 1000`` queries x 1,000 hits, a
few queries absent as synth.py leaves them out: 6,965,000 lines at 7M), its qrels,
and the same rows written as

=================  ==========================================================
trec               synth.py's TREC text, as is
zstd, gzip         that text compressed (zstd level 3, gzip level 6)
pq-ranx            Parquet, ranx columns ``q_id, doc_id, score``
pq-pyterrier       Parquet, PyTerrier columns ``qid, docno, score, rank``
pq-pyterrier-plain the same without dictionary pages (``use_dictionary=False``)
pq-small-groups    ranx columns in row groups of 122,880 rows, zstd pages
                   (the row groups DuckDB writes)
=================  ==========================================================

The Parquet files come from pyarrow's writer with its defaults otherwise (snappy
pages, dictionary-encoded strings, row groups of 1,048,576 rows), ids as strings.

Every measurement is the whole process as a user runs it, ``rankscope evaluate
--lane lane=FILE --qrels qrels.txt --resamples 0 --out report.json``, a fresh process
each time; the formats take turns within each round and the order rotates from round
to round, so load from other processes falls on all of them alike. Reported per
format: median wall time and its spread (min, max), median CPU time (user + system,
``os.wait4``), and the ratio against TREC text: the median over rounds of (this
format's time / TREC's time in the same round). Before timing, each format's
``--per-query`` CSV is checked byte-identical to TREC's, and its report.json equal
to TREC's but for the ``inputs`` entries (path, digest, format). Writes
``results/formats.md`` and ``formats.json`` (``formats_<lines>.*`` at other sizes).
Not a test: nothing asserts a time.
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
SYNTH = ROOT.parent / "shared" / "tools" / "synth.py"  # ../shared beside the checkout

FORMATS = {  # name -> file name
    "trec": "run.trec", "zstd": "run.trec.zst", "gzip": "run.trec.gz",
    "pq-ranx": "ranx.parquet", "pq-pyterrier": "pyterrier.parquet",
    "pq-pyterrier-plain": "pyterrier_plain.parquet", "pq-small-groups": "small_groups.parquet",
}
# format -> (the target's text, the largest ratio to TREC text that meets it)
TARGETS = {f: ("at least as fast as TREC text", 1.0) for f in FORMATS if f.startswith("pq-")}
TARGETS["zstd"] = ("within 1.5x of TREC text", 1.5)


def generate(lines: int, seed: int = 16) -> Path:
    """The data directory for ``lines`` rows (written once)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    d = DATA / f"formats_{lines}"
    if (d / "done").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    depth = 1000 if lines >= 1000 else lines
    syn = d / "synth"
    subprocess.run([sys.executable, str(SYNTH), "--queries", str(max(1, lines // depth)), "--depth", str(depth),
                    "--runs", "1", "--seed", str(seed), "--out", str(syn)], check=True, stdout=subprocess.DEVNULL)
    os.replace(syn / "run1.txt", d / FORMATS["trec"])
    os.replace(syn / "qrels.txt", d / "qrels.txt")
    shutil.rmtree(syn)
    raw = (d / FORMATS["trec"]).read_bytes()
    with pa.CompressedOutputStream(str(d / FORMATS["zstd"]), "zstd") as out:  # pyarrow's default level, 3
        out.write(raw)
    import gzip

    (d / FORMATS["gzip"]).write_bytes(gzip.compress(raw, compresslevel=6, mtime=0))
    del raw
    t = pcsv.read_csv(str(d / FORMATS["trec"]),
                      read_options=pcsv.ReadOptions(column_names=["qid", "q0", "docno", "rank", "score", "tag"]),
                      parse_options=pcsv.ParseOptions(delimiter=" "),
                      convert_options=pcsv.ConvertOptions(column_types={"qid": pa.string(), "docno": pa.string(),
                                                                        "rank": pa.int64(), "score": pa.float64()}))
    ranx = pa.table({"q_id": t["qid"], "doc_id": t["docno"], "score": t["score"]})
    pyterrier = pa.table({"qid": t["qid"], "docno": t["docno"], "score": t["score"], "rank": t["rank"]})
    pq.write_table(ranx, str(d / FORMATS["pq-ranx"]))
    pq.write_table(pyterrier, str(d / FORMATS["pq-pyterrier"]))
    pq.write_table(pyterrier, str(d / FORMATS["pq-pyterrier-plain"]), use_dictionary=False)
    pq.write_table(ranx, str(d / FORMATS["pq-small-groups"]), row_group_size=122_880, compression="zstd")
    (d / "done").write_text("ok\n")
    return d


def command(run: Path, qrels: Path, out: Path, per_query: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", f"lane={run}", "--qrels", str(qrels),
           "--resamples", "0", "--out", str(out)]
    return cmd + (["--per-query", str(per_query)] if per_query is not None else [])


def spawn(cmd: list[str]) -> tuple[float, float, float]:
    """Run ``cmd`` to its end: (wall s, CPU s, peak RSS MB) of that process; a failure stops the benchmark."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=str(ROOT), env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"failed: {' '.join(cmd)}\n{err.read().decode(errors='replace')[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def _without_inputs(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "inputs"}


def check_equal(d: Path, formats: list[str], tmp: Path) -> dict:
    """Each format's per-query CSV byte-identical to TREC's, and its report.json equal to
    TREC's but for ``inputs`` (path, digest, format); {format: bool}."""
    got = {}
    for f in formats:
        spawn(command(d / FORMATS[f], d / "qrels.txt", tmp / f"{f}.json", tmp / f"{f}.csv"))
        got[f] = ((tmp / f"{f}.csv").read_bytes(), _without_inputs(json.loads((tmp / f"{f}.json").read_text())))
    return {f: got[f] == got["trec"] for f in formats if f != "trec"}


def _ratio(xs: list[float], base: list[float]) -> float:
    """Median over rounds of x / base in the same round."""
    return statistics.median(x / b for x, b in zip(xs, base))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=7_000_000)
    ap.add_argument("--reps", type=int, default=7, help="rounds (every format once per round)")
    ap.add_argument("--formats", nargs="+", default=list(FORMATS), choices=list(FORMATS))
    args = ap.parse_args(argv)
    formats = ["trec"] + [f for f in args.formats if f != "trec"]
    import compileall  # cached bytecode, as an installed package starts

    compileall.compile_dir(str(ROOT / "rankscope_tui"), quiet=1)
    t = time.perf_counter()
    d = generate(args.lines)
    gen_s = time.perf_counter() - t
    load_start = os.getloadavg()[0]
    wall: dict = {f: [] for f in formats}
    cpu: dict = {f: [] for f in formats}
    rss: dict = {f: [] for f in formats}
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        equal = check_equal(d, formats, tmp)
        for rep in range(args.reps):
            order = formats[rep % len(formats):] + formats[:rep % len(formats)]
            for f in order:
                w, c, m = spawn(command(d / FORMATS[f], d / "qrels.txt", tmp / "report.json"))
                wall[f].append(w)
                cpu[f].append(c)
                rss[f].append(m)
            print(f"round {rep + 1}/{args.reps}: " + ", ".join(f"{f} {wall[f][-1]:.2f}s" for f in formats),
                  file=sys.stderr, flush=True)
    load_end = os.getloadavg()[0]
    sizes = {f: (d / FORMATS[f]).stat().st_size for f in formats}
    rows, summary = [], {}
    for f in formats:
        rw, rc = _ratio(wall[f], wall["trec"]), _ratio(cpu[f], cpu["trec"])
        target = TARGETS.get(f)
        verdict = "" if target is None else ("met" if rw <= target[1] else "missed")
        summary[f] = {"file_bytes": sizes[f], "wall_median": statistics.median(wall[f]), "wall_min": min(wall[f]),
                      "wall_max": max(wall[f]), "cpu_median": statistics.median(cpu[f]),
                      "rss_mb_median": statistics.median(rss[f]), "wall_ratio_vs_trec": rw, "cpu_ratio_vs_trec": rc,
                      "target": target[0] if target else None, "target_met": None if target is None else rw <= target[1],
                      "equal_to_trec": True if f == "trec" else equal[f]}
        rows.append(f"| {f} | {sizes[f] / 1e6:,.1f} MB | {statistics.median(wall[f]):.2f} s | "
                    f"{min(wall[f]):.2f}-{max(wall[f]):.2f} s | {statistics.median(cpu[f]):.2f} s | "
                    f"{rw:.2f}x | {rc:.2f}x | {(target[0] + ': ' + verdict) if target else '-'} | "
                    f"{'yes' if f == 'trec' or equal[f] else 'NO'} |")
    lines_read = sum(1 for _ in open(d / FORMATS["trec"], "rb"))
    import numpy
    import pyarrow

    machine = (f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
               f"numpy {numpy.__version__}, pyarrow {pyarrow.__version__}")
    md = "\n".join([
        f"# formats: reading speed against TREC text ({lines_read:,} lines, {args.reps} rounds)", "",
        f"machine: {machine}; load average {load_start:.2f} at the start, {load_end:.2f} at the end "
        "(the cores are shared: CPU time is the steadier figure)", "",
        "Each row: the whole `rankscope evaluate --lane lane=FILE --qrels qrels.txt --resamples 0 --out report.json` "
        "process, a fresh process per measurement, the formats taking turns in every round (order rotating). "
        "Ratios: the median over rounds of (format / TREC text in the same round).", "",
        "| format | file | wall median | wall min-max | CPU median | wall vs TREC | CPU vs TREC | target | "
        "output equal to TREC's |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
        *rows, "",
        "Output equal: `--per-query` CSV byte-identical, report.json identical but for its `inputs` (path, digest, "
        "format, columns). Data: `benchmarks/bench_formats.py` docstring.", ""])
    result = {"lines": lines_read, "rounds": args.reps, "machine": machine, "load_average_start": load_start,
              "load_average_end": load_end, "generated_in_s": gen_s, "summary": summary,
              "wall_s": wall, "cpu_s": cpu, "rss_mb": rss}
    RESULTS.mkdir(exist_ok=True)
    suffix = "" if args.lines == 7_000_000 else f"_{args.lines}"
    (RESULTS / f"formats{suffix}.md").write_text(md)
    (RESULTS / f"formats{suffix}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
