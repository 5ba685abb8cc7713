"""Query buckets out of core: a 100M-line run on this machine, memory summed over every process.

    .venv/bin/python benchmarks/bench_buckets.py [--queries 1000000] [--reference 70000]
        [--memory-limit 2GB] [--buckets N] [--memory-cap 12GB] [--skip-memory-path]

Data: ``../shared/tools/synth.py`` (seeded: ``--seed 19``), the recommender shape --
``--queries`` users x 100 items, one run, with qrels -- generated into
``benchmarks/data/rec_n<Q>_d100/`` when missing (git-ignored). Above 100,000 queries the
set is tiles of synth.py's 100,000-query set with the qids of tile k shifted by
k x 1,200,000 (see :func:`data_dir`): 1M x 100 is 100M lines, 3.9 GB of run text.

What is measured, each as a whole process from outside (``rankscope evaluate --lane
run1.txt --qrels qrels.txt --resamples 0 --out report.json``; ``--resamples 0``: the
statistics read per-query vectors and do not grow with the lines, the per-query work
does):

* **buckets**: the 100M run with ``--buckets N`` (when given) and ``--memory-limit``:
  DuckDB partitions the run and qrels into Parquet buckets in the driver, a pool of
  worker processes evaluates them;
* **memory at the reference size**: the in-memory path on the same shape at 7M lines
  (``--reference`` users), the time per line the buckets are compared with (target:
  within 1.5x);
* **memory at 100M**: the in-memory path on the 100M run, under a cap so this shared
  machine neither swaps nor meets the OOM killer: the sampler below ends the process
  tree when its summed RSS passes ``--memory-cap`` (and ``prlimit --as`` is not used:
  address-space limits trip over the allocators' reservations long before RSS does).

Peak memory: a sampler reads ``/proc/PID/statm`` (resident pages) of the process and of
every descendant (the pool's workers, multiprocessing's resource tracker; DuckDB runs
in the driver's threads) every 50 ms (the process tree itself is found anew every
500 ms) and keeps the largest **sum** -- shared pages
(libraries, copy-on-write) are counted once per process, so the sum is an upper bound of
what the tree holds; ``Pss`` from ``/proc/PID/smaps_rollup`` (shared pages divided among
their users) is summed too, every 10th sample, as the closer figure. The largest single
process (``ru_maxrss`` from ``os.wait4``: the largest of the process and its reaped
descendants) is reported beside them. The sampler's own process is not in the tree.

The report of the bucketed run is checked against the in-memory one where both finish
(byte-identical but for the settings block naming the engine). Writes
``benchmarks/results/buckets.md`` and ``buckets.json``. Not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))
from benchmarks.paths import SYNTH, shown_argv  # noqa: E402

SEED = 19
DEPTH = 100
PAGE = os.sysconf("SC_PAGE_SIZE")


# --------------------------------------------------------------------------- data


#: synth.py draws qids below this; tile k adds k times it, so tiles never share a qid
QID_SPACE = 1_200_000
#: synth.py makes at most this many queries in one call here; more are tiles of it
TILE_QUERIES = 100_000


def data_dir(queries: int) -> Path:
    """``benchmarks/data/rec_n<Q>_d100`` (run1.txt, qrels.txt, meta.json), generated when
    missing: synth.py itself up to ``TILE_QUERIES`` queries; above, ``Q / TILE_QUERIES``
    tiles of the ``TILE_QUERIES`` set, tile k with every qid plus ``k * QID_SPACE`` (synth.py
    runs one Python loop per query: 1M queries would take it over an hour on this shared
    machine; the tiles have its shape, line format, ties and missing queries exactly)."""
    d = DATA / f"rec_n{queries}_d{DEPTH}"
    if (d / "meta.json").exists():
        return d
    if queries > TILE_QUERIES:
        if queries % TILE_QUERIES:
            sys.exit(f"--queries above {TILE_QUERIES:,} must be a multiple of it (tiles)")
        return _tiled(data_dir(TILE_QUERIES), queries // TILE_QUERIES, d)
    tmp = d.with_name(d.name + ".tmp")
    print(f"generating {queries:,} queries x {DEPTH} into {d} (synth.py --seed {SEED})", file=sys.stderr)
    subprocess.run([sys.executable, str(SYNTH), "--queries", str(queries), "--depth", str(DEPTH), "--runs", "1",
                    "--seed", str(SEED), "--out", str(tmp)], check=True)
    tmp.rename(d)
    return d


def _tiled(base: Path, tiles: int, d: Path) -> Path:
    """``tiles`` copies of ``base``'s run1.txt and qrels.txt, copy k's qids shifted by k * QID_SPACE."""
    import hashlib

    tmp = d.with_name(d.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"tiling {base.name} {tiles} times into {d}", file=sys.stderr)
    files = {}
    for name in ("qrels.txt", "run1.txt"):
        lines = (base / name).read_bytes().splitlines(keepends=True)
        h = hashlib.sha256()
        with open(tmp / name, "wb") as out:
            for k in range(tiles):
                off = k * QID_SPACE
                chunk = b"".join(b"%d%s" % (int(line[:line.index(b" ")]) + off, line[line.index(b" "):])
                                 for line in lines)
                h.update(chunk)
                out.write(chunk)
        files[name] = {"bytes": (tmp / name).stat().st_size, "sha256": h.hexdigest()}
    base_meta = json.loads((base / "meta.json").read_text())
    meta = {"generator": f"synth.py --seed {SEED} --queries {TILE_QUERIES} --depth {DEPTH}, tiled {tiles} times "
                         f"(tile k: qid + k * {QID_SPACE})",
            "n_queries_qrels": base_meta["n_queries_qrels"] * tiles, "n_queries_run": base_meta["n_queries_run"] * tiles,
            "qrels_lines": base_meta["qrels_lines"] * tiles, "run_lines": base_meta["run_lines"] * tiles,
            "files": files}
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    tmp.rename(d)
    return d


# --------------------------------------------------------------------------- the sampler


def _children() -> dict:
    """pid -> parent pid of every process (from /proc/PID/stat)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2:].split()
        out[int(name)] = int(rest[1])
    return out


def _tree(root: int) -> list[int]:
    parent = _children()
    kids: dict = {}
    for pid, ppid in parent.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Every ``interval`` s: the summed RSS of ``pid`` and its descendants (the tree found
    anew every 10th time, with their summed PSS); ends the tree (SIGKILL to each) when the
    RSS sum passes ``cap``."""

    def __init__(self, pid: int, cap: int | None, interval: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.cap, self.interval = pid, cap, interval
        self.peak_rss = self.peak_pss = self.peak_processes = self.peak_root = self.peak_others = 0
        self.timeline: list = []
        self.samples = 0
        self.capped_at: float | None = None
        self.stop = threading.Event()
        self.t0 = time.perf_counter()

    def run(self) -> None:
        pids: list = []
        while not self.stop.is_set():
            if self.samples % 10 == 0:  # the tree every 10th sample (a scan of /proc is slow on a busy machine)
                pids = _tree(self.pid)
            each = [_rss(p) for p in pids]
            total = sum(each)
            self.peak_rss = max(self.peak_rss, total)
            if each:
                self.peak_root = max(self.peak_root, each[0])
                self.peak_others = max(self.peak_others, total - each[0])
            now = time.perf_counter() - self.t0
            if now >= len(self.timeline):  # one point a second: (s, driver, the others)
                self.timeline.append((round(now, 1), each[0] if each else 0, total - (each[0] if each else 0)))
            self.peak_processes = max(self.peak_processes, len(pids))
            if self.samples % 10 == 0:
                self.peak_pss = max(self.peak_pss, sum(_pss(p) for p in pids))
            self.samples += 1
            if self.cap is not None and total > self.cap and self.capped_at is None:
                self.capped_at = time.perf_counter() - self.t0
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
            self.stop.wait(self.interval)


def measure(argv: list[str], cap: int | None = None, env: dict | None = None) -> dict:
    """Run ``argv`` (a whole process), sampling its tree; wall time, peaks, exit status."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    sampler = TreeSampler(proc.pid, cap)
    sampler.start()
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"argv": shown_argv(argv[2:]), "exit": proc.returncode, "seconds": round(wall, 2),
            "peak_rss_sum_bytes": sampler.peak_rss, "peak_pss_sum_bytes": sampler.peak_pss,
            "largest_process_bytes": ru.ru_maxrss * 1024, "peak_driver_rss_bytes": sampler.peak_root,
            "peak_other_processes_rss_sum_bytes": sampler.peak_others, "rss_timeline_s_driver_others": sampler.timeline,
            "processes_at_most": sampler.peak_processes, "samples": sampler.samples,
            "killed_at_cap_after_s": round(sampler.capped_at, 2) if sampler.capped_at is not None else None,
            "stderr_tail": err.strip().splitlines()[-3:]}


# --------------------------------------------------------------------------- the runs


def evaluate_argv(d: Path, out: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", str(d / "run1.txt"), "--qrels",
            str(d / "qrels.txt"), "--resamples", "0", "--out", str(out), *extra]


def same_but_engine(bucketed: Path, memory: Path) -> bool:
    from rankscope_tui.kernel.report.output import dumps_strict

    data = json.loads(bucketed.read_bytes())
    data["inputs"]["settings"].pop("engine", None)
    return dumps_strict(data).encode("utf-8") == memory.read_bytes()


def gb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e9:.2f} GB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1_000_000, help="users of the large run (x 100 items)")
    ap.add_argument("--reference", type=int, default=70_000, help="users of the in-memory reference run (x 100)")
    ap.add_argument("--memory-limit", default="2GB", help="--memory-limit of the bucketed run")
    ap.add_argument("--buckets", type=int, default=None, help="--buckets of the bucketed run (default: from the limit)")
    ap.add_argument("--memory-cap", default="12GB", help="the in-memory 100M run is ended past this summed RSS")
    ap.add_argument("--skip-memory-path", action="store_true", help="do not run the in-memory path at the large size")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from rankscope_tui.kernel.scale.engine import parse_size

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "rankscope_tui")], check=False)
    big, ref = data_dir(a.queries), data_dir(a.reference)
    meta = {k: json.loads((d / "meta.json").read_text()) for k, d in (("large", big), ("reference", ref))}
    lines = {k: m["run_lines"] for k, m in meta.items()}
    work = Path(tempfile.mkdtemp(prefix="rankscope-bench-buckets-"))
    runs: dict = {}
    extra = ["--memory-limit", a.memory_limit] + (["--buckets", str(a.buckets)] if a.buckets else [])

    # the must-show first: each result is written as soon as it is in (a run can be stopped)
    order = [("buckets_large", big, "large", extra, None), ("memory_reference", ref, "reference", [], None)]
    if not a.skip_memory_path:
        order.append(("memory_large", big, "large", [], parse_size(a.memory_cap)))
    order.append(("buckets_reference", ref, "reference", extra, None))
    load_before = os.getloadavg()
    for key, d, size, flags, cap in order:
        how = "buckets" if flags else "in memory"
        print(f"{how}, {lines[size]:,} lines{f' (capped at {a.memory_cap})' if cap else ''} ...", file=sys.stderr)
        load = os.getloadavg()[0]
        runs[key] = measure(evaluate_argv(d, work / f"{key}.json", flags), cap=cap)
        runs[key]["load_average_1min"] = [round(load, 2), round(os.getloadavg()[0], 2)]  # before, after
        result = summarize(runs, lines, meta, big, ref, extra, work, load_before)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "buckets.json").write_text(json.dumps(result, indent=1) + "\n")
        write_markdown(result)
    for f in work.iterdir():
        f.unlink()
    work.rmdir()
    print(json.dumps({k: result[k] for k in ("ns_per_line", "ratio_buckets_large_to_memory_reference",
                                             "identical_but_engine")}, indent=1))
    return 0


def summarize(runs: dict, lines: dict, meta: dict, big: Path, ref: Path, extra: list, work: Path,
              load_before) -> dict:
    def per_line(run: str, size: str) -> float | None:
        r = runs.get(run)
        return r["seconds"] / lines[size] * 1e9 if r and r["exit"] == 0 else None

    ns = {"memory_reference": per_line("memory_reference", "reference"),
          "buckets_reference": per_line("buckets_reference", "reference"),
          "buckets_large": per_line("buckets_large", "large"),
          "memory_large": per_line("memory_large", "large")}

    def ok(key: str) -> bool:
        return key in runs and runs[key]["exit"] == 0

    identical = {}
    if ok("buckets_reference") and ok("memory_reference"):
        identical["reference"] = same_but_engine(work / "buckets_reference.json", work / "memory_reference.json")
    if ok("memory_large") and ok("buckets_large"):
        identical["large"] = same_but_engine(work / "buckets_large.json", work / "memory_large.json")
    engine = {}
    if ok("buckets_large"):
        with open(work / "buckets_large.json", "rb") as f:  # the settings block is near the top
            head = f.read(1 << 16).decode("utf-8", "replace")
        i = head.find('"engine": {')
        if i >= 0:
            engine = json.loads(head[i + len('"engine": '):head.index("}", i) + 1])
    return {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
                    "python": platform.python_version(), "load_average_before": load_before},
        "data": {k: {"dir": str(d.relative_to(ROOT)), "queries": meta[k]["n_queries_qrels"], "run_lines": lines[k],
                     "qrels_lines": meta[k]["qrels_lines"], "run_bytes": meta[k]["files"]["run1.txt"]["bytes"],
                     "run_sha256": meta[k]["files"]["run1.txt"]["sha256"], "generator": meta[k].get("generator")}
                 for k, d in (("large", big), ("reference", ref))},
        "bucket_options": extra, "engine_of_large_run": engine, "runs": runs, "ns_per_line": ns,
        "ratio_buckets_large_to_memory_reference": (ns["buckets_large"] / ns["memory_reference"]
                                                    if ns["buckets_large"] and ns["memory_reference"] else None),
        "identical_but_engine": identical,
        "targets": {"peak_sum_bytes_at_most": 2.5e9, "time_per_line_ratio_at_most": 1.5},
    }


def write_markdown(r: dict) -> None:
    L, R = r["data"]["large"], r["data"]["reference"]
    rows = []
    names = {"memory_reference": ("in memory", R), "buckets_reference": ("buckets", R), "buckets_large": ("buckets", L),
             "memory_large": ("in memory", L)}
    for key, (how, d) in names.items():
        run = r["runs"].get(key)
        if run is None:
            continue
        ns = r["ns_per_line"][key]
        if run["exit"] == 0:
            outcome = "finished"
        elif run["killed_at_cap_after_s"] is not None:
            outcome = f"ended at the cap after {run['killed_at_cap_after_s']:.0f} s"
        else:
            outcome = f"failed (exit {run['exit']}): {' '.join(run['stderr_tail'])[:160]}"
        rows.append(f"| {how} | {d['run_lines'] / 1e6:.0f}M | {outcome} | {run['seconds']:.1f} s | "
                    f"{'-' if ns is None else f'{ns:.0f} ns'} | {gb(run['peak_rss_sum_bytes'])} | "
                    f"{gb(run['peak_pss_sum_bytes'])} | {gb(run['peak_driver_rss_bytes'])} | "
                    f"{gb(run['peak_other_processes_rss_sum_bytes'])} | {run['processes_at_most']} |")
    ratio = r["ratio_buckets_large_to_memory_reference"]
    big = r["runs"]["buckets_large"]
    ident = ", ".join(f"{k}: {'identical' if v else 'DIFFERENT'}" for k, v in r["identical_but_engine"].items()) or "-"
    e = r["engine_of_large_run"]
    engine_text = f"the {e['name']} engine, {e['buckets']} bucket(s)" if e else "did not finish"
    text = f"""# Query buckets out of core: 100M lines on one machine

`benchmarks/bench_buckets.py` ({r['when']}; {r['machine']['cpus']} CPUs, {r['machine']['memory_bytes'] / 2**30:.0f} GiB,
load average before {r['machine']['load_average_before'][0]:.1f}: the machine is shared). Data: synth.py
`--seed 19`, the recommender shape (users x 100 items, one run): **large** {L['queries']:,} queries,
{L['run_lines']:,} run lines ({L['run_bytes'] / 1e9:.2f} GB of text), {L['qrels_lines']:,} qrels lines;
**reference** {R['queries']:,} queries, {R['run_lines']:,} lines. Every run is a whole
`rankscope evaluate --lane run1.txt --qrels qrels.txt --resamples 0 --out report.json` process;
the bucketed ones add `{' '.join(r['bucket_options'])}` (large run: {engine_text}).

Peak memory is the largest **sum of RSS over the process tree** (driver with DuckDB's threads,
pool workers, resource tracker), sampled from /proc every 50 ms: an upper bound (shared pages count
once per process); the PSS sum (shared pages divided) is the closer figure. "Driver" is the
`rankscope` process itself (reading, DuckDB's partitioning, the merge, the report), "others"
the pool's workers and the resource tracker (their peaks need not coincide with the driver's).

| path | lines | outcome | wall | per line | peak RSS sum | peak PSS sum | driver peak | others' peak sum | processes |
|---|---:|---|---:|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

- peak summed over the processes, buckets at {L['run_lines'] / 1e6:.0f}M: **{gb(big['peak_rss_sum_bytes'])}** RSS sum,
  {gb(big['peak_pss_sum_bytes'])} PSS sum (target: at most 2.50 GB);
- time per line, buckets at {L['run_lines'] / 1e6:.0f}M over in memory at {R['run_lines'] / 1e6:.0f}M:
  **{'-' if ratio is None else f'{ratio:.2f}x'}** (target: at most 1.5x);
- report.json of the buckets vs in memory, but the engine entry: {ident}.
"""
    (RESULTS / "buckets.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
