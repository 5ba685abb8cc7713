"""The out-of-core engine (kernel/scale/partition.py, kernel/scale/engine.py, ``--buckets``) against the
in-memory path, byte for byte, and its failures.

Every comparison is with the in-memory command on the same inputs: report.json, the
per-query CSV and the text of ``evaluate --buckets 1`` and ``--buckets 7`` equal the
in-memory ones except the settings block naming the engine (removed, the rest must be
the in-memory bytes); compare's and calibrate's outputs likewise. Inputs: the demo, the
Cranfield set (plain clean TREC runs: the streamed road) and generated runs with ties,
missing queries, negatives, comment lines and extra fields (the readers' road), gzip and
Parquet files. A failing bucket or a killed worker fails the command with one line and
exit 2, writes nothing and leaves no temporary bucket directory; SIGTERM exits 130 with
the directory gone and no worker left.

The commands run in this process (``cli.main``) on one spawned pool for the module
(spawned interpreters are slow to start), handed to the engine through
``engine.new_pool``; the kill and SIGTERM cases run the CLI in a subprocess with its own pool.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import REPO, cli_env, shared_path, without_engine
from test_bucket import _generate, _lane_args, _sources

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.instruments.evaluate import evaluate_report
from rankscope_tui.kernel.report.output import dumps_strict
from rankscope_tui.kernel.scale import bucket as B
from rankscope_tui.kernel.scale import engine as E
from rankscope_tui.kernel.scale import partition as P
from rankscope_tui.kernel.workspace.loaded import load

FAULTS = '''
"""Bucket tasks that fail, for tests/test_buckets_engine.py (imported by the pool's workers)."""
import os
import signal
import time

from rankscope_tui.kernel.scale.partition import bucket_task

FAILING = 3


def failing(files, plan):
    if files.index == FAILING:
        raise RuntimeError("the disk is on fire\\nand a second line")
    return bucket_task(files, plan)


def killing(files, plan):
    if files.index == FAILING:
        os.kill(os.getpid(), signal.SIGKILL)
    return bucket_task(files, plan)


def killing_span(path, delim, clean, span, index, n, out_dir, budget):
    if index == 1:  # the second span of the run
        os.kill(os.getpid(), signal.SIGKILL)
    from rankscope_tui.kernel.scale.partition import partition_span

    return partition_span(path, delim, clean, span, index, n, out_dir, budget)


def slow_span(path, delim, clean, span, index, n, out_dir, budget):
    with open(os.path.join(os.environ["RS_MARKS"], f"{os.getpid()}.started"), "w"):
        pass
    time.sleep(120)


def dying(*args):
    """What a warm-up task of the pool does here: the worker dies before any bucket."""
    os.kill(os.getpid(), signal.SIGKILL)


def sleeping(files, plan):
    with open(os.path.join(os.environ["RS_MARKS"], f"{os.getpid()}.started"), "w"):
        pass
    time.sleep(120)
    return bucket_task(files, plan)
'''

DRIVER = '''
import sys

import faults
from rankscope_tui.kernel.scale import engine


def slow_add(self, batch):
    """The bucket writer taking its time on the driver, to be interrupted while it partitions."""
    import os
    import time

    with open(os.path.join(os.environ["RS_MARKS"], f"{os.getpid()}.partitioning"), "w"):
        pass
    time.sleep(120)


if __name__ == "__main__":  # (the spawned workers import this file as __mp_main__)
    if sys.argv[1] == "slow_partition":
        from rankscope_tui.kernel.scale import partition

        partition._BucketWriter.add = slow_add
    elif sys.argv[1] == "broken_before_submit":  # a worker dies while the driver partitions
        real_run_local = engine.run_local
        engine._warm = faults.dying

        def run_local_once_broken(files, plan, workers, progress=None, pool=None):
            import time

            deadline = time.monotonic() + 60
            while not getattr(pool, "_broken", False) and time.monotonic() < deadline:
                time.sleep(0.05)
            return real_run_local(files, plan, workers, progress, pool)

        engine.run_local = run_local_once_broken
    elif sys.argv[1] == "second_sigterm":  # the buckets sleep; a second SIGTERM comes while the pool is ended
        import os
        import signal

        engine._task = lambda: faults.sleeping
        real_end_pool = engine._end_pool

        def end_pool_signalled(pool, cancel):
            os.kill(os.getpid(), signal.SIGTERM)
            real_end_pool(pool, cancel)

        engine._end_pool = end_pool_signalled
    elif sys.argv[1] in ("killing_span", "slow_span"):  # every plain run in spans, by these tasks
        from rankscope_tui.kernel.scale import partition

        partition.SPAN_MIN_BYTES = 0
        engine._workers = lambda e: 2
        partition.partition_span = getattr(faults, sys.argv[1])
    else:
        engine._task = lambda: getattr(faults, sys.argv[1])
    from rankscope_tui.cli import main

    sys.exit(main(sys.argv[2:]))
'''


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def faults_dir(tmp_path_factory) -> Path:
    """A directory holding ``faults.py`` (and the subprocess driver), on sys.path before the
    shared pool is spawned, so its workers can import the failing tasks."""
    d = tmp_path_factory.mktemp("faults")
    (d / "faults.py").write_text(textwrap.dedent(FAULTS))
    (d / "driver.py").write_text(textwrap.dedent(DRIVER))
    sys.path.insert(0, str(d))
    yield d
    sys.path.remove(str(d))


class _SharedPool:
    """One spawned pool for every command of the module; the engine's shutdown leaves it running."""

    def __init__(self, pool):
        self.pool = pool
        self.submitted = 0

    def submit(self, *a, **k):
        self.submitted += 1
        return self.pool.submit(*a, **k)

    def shutdown(self, *a, **k):
        pass


@pytest.fixture(scope="module")
def shared_pool(faults_dir):
    pool = E.new_pool(2)
    yield _SharedPool(pool)
    pool.shutdown(wait=True)


@pytest.fixture
def workdirs(tmp_path, monkeypatch, shared_pool) -> list:
    """The engine on the shared pool, its temporary directories under ``tmp_path/tmp``;
    the list gets each directory partition_files was given."""
    import tempfile

    monkeypatch.setattr(E, "new_pool", lambda workers: shared_pool)
    parent = tmp_path / "tmp"
    parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    seen: list = []
    real = P.partition_files

    def recording(plan, n, workdir, *args, **kwargs):
        seen.append(Path(workdir))
        assert Path(workdir).parent == parent and Path(workdir).is_dir()
        return real(plan, n, workdir, *args, **kwargs)

    monkeypatch.setattr(P, "partition_files", recording)
    return seen


def _no_workdir_left(workdirs) -> bool:
    return bool(workdirs) and not any(d.exists() for d in workdirs) and not any(workdirs[0].parent.iterdir())


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    return _generate(tmp_path_factory.mktemp("generated"))


# --------------------------------------------------------------------------- helpers


def _evaluate_both(cli_run, argv, tmp_path, workdirs, buckets=(1, 7)) -> dict:
    """``evaluate ARGV`` in memory and in each bucket count: the same report.json (but the
    engine), per-query CSV and text; the bucket directories gone after each."""
    m = tmp_path / "memory"
    m.mkdir()
    rc, text, err = cli_run("evaluate", *argv, "--out", m / "report.json", "--per-query", m / "pq.csv")
    assert rc == 0, err
    for n in buckets:
        b = tmp_path / f"buckets{n}"
        b.mkdir()
        before = len(workdirs)
        rc, btext, err = cli_run("evaluate", *argv, "--buckets", n, "--out", b / "report.json", "--per-query", b / "pq.csv")
        assert rc == 0 and err == "", err  # (no progress lines: stderr is not a terminal)
        assert len(workdirs) == before + 1 and _no_workdir_left(workdirs)
        assert without_engine((b / "report.json").read_bytes(), "local", n) == (m / "report.json").read_bytes(), n
        assert (b / "pq.csv").read_bytes() == (m / "pq.csv").read_bytes(), n
        assert btext == text, n
    return json.loads((m / "report.json").read_bytes())


# --------------------------------------------------------------------------- evaluate, byte for byte


def test_run_engine_is_the_in_memory_report(generated, workdirs):
    g = generated
    argv = [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"], "--ood-negatives", g["ood"],
            "--corpus", g["corpus"], "--gate-on", "gamma", "--mutual", "1", "--resamples", "99"]
    src, gate, th = _sources(argv)
    want = dumps_strict(evaluate_report(load(src), gate, th))
    merged, p, facts = E.run_engine(src, E.EngineSettings("local", 7, workers=2), gate, th)
    assert dumps_strict(B.evaluate_merged(merged, p, facts, gate)) == want
    assert _no_workdir_left(workdirs)


def test_demo(demo_dir, cli_run, tmp_path, workdirs):
    d = demo_dir
    argv = ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}", "--qrels",
            d / "qrels-test.txt", "--strata", d / "strata.tsv", "--ood-negatives", d / "qrels-ood-negatives.txt",
            "--corpus", d / "corpus.tsv", "--gate-on", "dense", "--resamples", "999"]
    report = _evaluate_both(cli_run, argv, tmp_path, workdirs)
    assert not report["gate"].get("skipped") and report["per_query"]["rrf"]
    # --memory-limit alone: the bucket count from the rule, recorded
    paths = [d / "lexical.run", d / "dense.run", d / "qrels-test.txt", d / "qrels-ood-negatives.txt"]
    n = E.bucket_count([str(p) for p in paths], E.EngineSettings("local", memory_limit="3GB"))
    rc, _, err = cli_run("evaluate", *argv, "--memory-limit", "3GB", "--out", tmp_path / "limited.json")
    assert rc == 0, err
    assert without_engine((tmp_path / "limited.json").read_bytes(), "local", n) == (tmp_path / "memory" / "report.json").read_bytes()


def _count_streams(monkeypatch) -> list:
    """(path, declined) of every file the streamed road read, once it was read."""
    seen: list = []
    for which in ("_Stream", "_ParquetStream"):
        real = getattr(P, which)

        class Counting(real):
            def batches(self):
                yield from super().batches()
                seen.append((self.path, self.declined))

        monkeypatch.setattr(P, which, Counting)
    return seen


def test_cranfield_streams_its_runs(cli_run, tmp_path, workdirs, monkeypatch):
    c = shared_path("cranfield")
    streamed = _count_streams(monkeypatch)
    lanes = _lane_args({n: c / "lanes" / f"{n}.run" for n in ("bm25", "tfidf", "dense")})
    _evaluate_both(cli_run, [*lanes, "--qrels", c / "qrels-test.txt", "--strata", c / "strata.tsv", "--ood-negatives",
                          c / "qrels-ood-negatives.txt", "--corpus", c / "passages.tsv", "--summary",
                          tmp_path / "summary.csv", "--resamples", "999"], tmp_path, workdirs)
    assert len(streamed) == 6 and not any(d for _, d in streamed)  # three clean plain runs, twice: streamed


def _in_spans(monkeypatch) -> list:
    """Every plain clean run partitioned in two spans by the pool's workers (whatever its
    size and the machine's cores); the list gets (path, spans) of each."""
    monkeypatch.setattr(P, "SPAN_MIN_BYTES", 0)
    monkeypatch.setattr(E, "_workers", lambda engine: 2)
    seen: list = []
    real = P._submit_spans

    def recording(pool, path, scan, workers, *rest):
        seen.append((path, workers))
        return real(pool, path, scan, workers, *rest)

    monkeypatch.setattr(P, "_submit_spans", recording)
    return seen


def test_cranfield_in_spans(cli_run, tmp_path, workdirs, monkeypatch):
    """The runs cut in two spans at a line end, each partitioned by a worker while the
    driver reads the qrels: the in-memory bytes."""
    c = shared_path("cranfield")
    spans = _in_spans(monkeypatch)
    lanes = _lane_args({n: c / "lanes" / f"{n}.run" for n in ("bm25", "tfidf", "dense")})
    _evaluate_both(cli_run, [*lanes, "--qrels", c / "qrels-test.txt", "--strata", c / "strata.tsv", "--resamples", "99"],
                   tmp_path, workdirs)
    assert [w for _, w in spans] == [2] * 3  # the 7-bucket run (one bucket has one worker: no spans)


def test_a_line_longer_than_a_span(generated, cli_run, tmp_path, workdirs, monkeypatch):
    """A last line longer than half the file leaves the second span empty: the first
    worker reads every row, nothing is declined (the readers do not read the file), and
    the report is the in-memory one."""
    g = generated
    spans = _in_spans(monkeypatch)
    clean = [l for l in g["lanes"]["alpha"].read_text().splitlines() if l and not l.startswith("#")]
    q, _, doc, *rest = clean[-1].split(" ")
    last = " ".join([q, "Q0", doc + "x" * (2 * len("\n".join(clean)) + 100), *rest])
    run = tmp_path / "long.run"
    run.write_text("\n".join(clean[:-1] + [last]) + "\n")
    assert P.spans_of(str(run), 2)[1][0] == run.stat().st_size  # the second span is empty
    import rankscope_tui.kernel.inputs.readers as RD

    real, whole = RD.read_lane, []
    monkeypatch.setattr(RD, "read_lane", lambda path, *a, **k: (whole.append(path), real(path, *a, **k))[1])
    _evaluate_both(cli_run, ["--lane", run, "--qrels", g["qrels"], "--resamples", "0"], tmp_path, workdirs, buckets=(7,))
    assert len(spans) == 1 and str(run) not in [str(p) for p in whole[1:]]  # (whole[0]: the in-memory command)


def test_spans_cut_at_line_ends(tmp_path):
    """``spans_of`` covers the file, each cut just after a newline (a line longer than a
    span leaves an empty one); ``_lines_before`` counts the lines before a cut."""
    f = tmp_path / "r.txt"
    lines = [f"q{i} Q0 d{i} {i} {1 / (i + 1)!r} t\n" for i in range(1000)]
    f.write_text("".join(lines))
    data = f.read_bytes()
    for pieces in (1, 2, 3, 7):
        spans = P.spans_of(str(f), pieces)
        assert len(spans) == pieces and spans[0][0] == 0 and spans[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
        for j, (start, _) in enumerate(spans[1:], 1):
            assert start == min(x for x in starts if x >= len(data) * j // pieces)
            assert data[start - 1:start] == b"\n"
            assert P._lines_before(str(f), start) == data[:start].count(b"\n")
    long = tmp_path / "long.txt"
    long.write_bytes(b"q1 Q0 " + b"d" * 5000 + b" 1 1.0 t\nq2 Q0 d 1 1.0 t\n")
    spans = P.spans_of(str(long), 3)  # both cuts fall inside the first line, 5,015 bytes
    assert spans == [(0, 5015), (5015, 5015), (5015, long.stat().st_size)]


def test_generated_runs_with_ties_missing_queries_and_negatives(generated, cli_run, tmp_path, workdirs):
    g = generated
    report = _evaluate_both(cli_run, [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"],
                                   "--ood-negatives", g["ood"], "--group-sep", "#", "--cap", "2", "--gate-on", "gamma",
                                   "--margin", "0.5", "--resamples", "499"], tmp_path, workdirs)
    kinds = {w["kind"] for w in report["summary"]["warnings"]}
    assert {"duplicate_qrels_lines", "positives_missing_from_lane", "unjudged_queries", "extra_columns"} <= kinds
    assert report["summary"]["negatives"] > 0


def test_gzip_and_parquet_inputs(generated, cli_run, tmp_path, workdirs, monkeypatch):
    """A gzip run with comment lines (read whole by the readers), a clean one (streamed,
    its bytes checked as they are decompressed), gzip qrels and a Parquet run."""
    g = generated
    streamed = _count_streams(monkeypatch)
    monkeypatch.setattr(P, "PARQUET_BATCH_ROWS", 300)  # several batches, across row groups
    alpha = tmp_path / "alpha.run.gz"
    alpha.write_bytes(gzip.compress(g["lanes"]["alpha"].read_bytes(), mtime=0))
    clean = [l for l in g["lanes"]["gamma"].read_text().splitlines() if l and not l.startswith("#")]
    gamma = tmp_path / "gamma.run.gz"
    gamma.write_bytes(gzip.compress(("\n".join(clean) + "\n").encode(), mtime=0))
    qrels = tmp_path / "qrels.txt.gz"
    qrels.write_bytes(gzip.compress(g["qrels"].read_bytes(), mtime=0))
    rows = [l.split() for l in g["lanes"]["beta"].read_text().splitlines() if l and not l.startswith("#")]
    beta = tmp_path / "beta.parquet"
    pq.write_table(pa.table({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows],
                             "score": [float(r[4]) for r in rows]}), beta, row_group_size=500)
    ranked = tmp_path / "ranked.parquet"
    pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                             "rank": [int(r[3]) for r in rows]}), ranked)
    report = _evaluate_both(cli_run, ["--lane", f"alpha={alpha}", "--lane", f"beta={beta}", "--lane", f"gamma={gamma}",
                                   "--lane", f"ranked={ranked}", "--qrels", qrels, "--resamples", "199"],
                            tmp_path, workdirs)
    lanes = report["inputs"]["lanes"]
    assert (lanes["alpha"]["format"], lanes["beta"]["format"], report["inputs"]["qrels"]["format"]) == \
        ("trec", "parquet", "trec")
    # alpha (comment lines) and the ranks (checked per query) go to the readers; beta and gamma stream
    assert streamed == [(str(alpha), True), (str(beta), False), (str(gamma), False), (str(ranked), True)] * 2


def test_progress_on_a_terminal(demo_dir, cli_run, workdirs, monkeypatch):
    monkeypatch.setenv("RANKSCOPE_PROGRESS_AFTER_S", "0")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    d = demo_dir
    argv = ["--lane", d / "lexical.run", "--lane", d / "dense.run", "--qrels", d / "qrels-test.txt", "--resamples", "0"]
    rc, _, err = cli_run("evaluate", *argv, "--buckets", "7")
    assert rc == 0
    lines = [line.rsplit(" (", 1)[0] for line in err.splitlines()]
    n_queries = load(_sources(argv)[0]).n_queries
    assert lines[0] == "rankscope: partitioned the inputs into 7 query bucket(s)"
    assert lines[-2:] == ["rankscope: buckets 7/7 done", f"rankscope: evaluated 7 bucket(s), {n_queries:,} queries"]


# --------------------------------------------------------------------------- compare and calibrate


def test_compare_on_buckets(generated, cli_run, tmp_path, workdirs):
    g = generated
    base = [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--resamples", "999", "--group-sep", "#"]
    for i, extra in enumerate(([], ["--metric", "ap", "--metric", "rr", "--level", "group", "--candidate", "rrf"],
                               ["--all-pairs", "--metric", "ndcg@10"])):
        m, b = tmp_path / f"m{i}.json", tmp_path / f"b{i}.json"
        rc, text, err = cli_run("compare", *base, *extra, "--out", m)
        assert rc == 0, err
        rc, btext, err = cli_run("compare", *base, *extra, "--buckets", "7", "--out", b)
        assert rc == 0, err
        assert without_engine(b.read_bytes(), "local", 7, ("settings",)) == m.read_bytes(), extra
        assert btext == text
    assert _no_workdir_left(workdirs)


def test_calibrate_on_buckets(demo_dir, generated, cli_run, tmp_path, workdirs):
    d, g = demo_dir, generated
    for i, argv in enumerate((["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}",
                               "--qrels", d / "qrels-dev.txt", "--gate-on", "dense", "--resamples", "99"],
                              [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--ood-negatives", g["ood"], "--gate-on",
                               "rrf", "--depth", "20", "--step", "0.25", "--objective", "rr", "--resamples", "99"])):
        m, b = tmp_path / f"m{i}.json", tmp_path / f"b{i}.json"
        rc, text, err = cli_run("calibrate", *argv, "--out", m)
        assert rc == 0, err
        rc, btext, err = cli_run("calibrate", *argv, "--buckets", "7", "--out", b)
        assert rc == 0, err
        assert without_engine(b.read_bytes(), "local", 7, ("settings",)) == m.read_bytes()
        assert btext.replace(str(b), str(m)) == text
        assert '"convex"' in m.read_text()
    # the thresholds applied: the convex lane and the calibrated gate, in buckets too
    report = _evaluate_both(cli_run, ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}",
                                   "--qrels", d / "qrels-test.txt", "--thresholds", tmp_path / "m0.json",
                                   "--resamples", "99"], tmp_path, workdirs, buckets=(7,))
    assert "convex" in report["lanes"] and report["gate"]["applied"]


# --------------------------------------------------------------------------- errors as in memory


@pytest.mark.parametrize("spans", [False, True], ids=["driver", "spans"])
def test_bad_input_is_the_readers_error(generated, cli_run, tmp_path, workdirs, monkeypatch, spans):
    """A clean plain run with an infinite score (the streamed road declines, the readers
    name the line), a run with a bad score on a commented file, a duplicate doc found
    inside a bucket, the infinite score gzip-compressed and a truncated gzip run: the one
    line of the in-memory command, exit 2, nothing written. ``spans``: the plain runs
    partitioned in two spans by the workers (the infinite score and the duplicate in the
    second span: the line named is the line in the whole file)."""
    if spans:
        _in_spans(monkeypatch)
    g = generated
    clean = [l for l in g["lanes"]["alpha"].read_text().splitlines() if l and not l.startswith("#")]
    inf = tmp_path / "inf.run"
    inf.write_text("\n".join(clean[:50] + [clean[50].rsplit(" ", 2)[0] + " inf x"] + clean[51:]) + "\n")
    bad = tmp_path / "bad.run"
    text = g["lanes"]["beta"].read_text().splitlines()
    text[40] = text[40].rsplit(" ", 2)[0] + " abc beta"
    bad.write_text("\n".join(text) + "\n")
    dup = tmp_path / "dup.run"
    dup.write_text("\n".join(clean + [clean[7]]) + "\n")
    inf_gz = tmp_path / "inf.run.gz"
    inf_gz.write_bytes(gzip.compress(inf.read_bytes(), mtime=0))
    cut_gz = tmp_path / "cut.run.gz"
    cut_gz.write_bytes(gzip.compress(("\n".join(clean) + "\n").encode(), mtime=0)[:-30])
    nulls = tmp_path / "nulls.parquet"  # a null doc id in the 700th row, a bad one in the 3rd row group
    rows = [l.split() for l in clean]
    pq.write_table(pa.table({"qid": [r[0] for r in rows], "docno": [None if i == 699 else r[2] for i, r in
                                                                   enumerate(rows)],
                             "score": [float(r[4]) for r in rows]}), nulls, row_group_size=250)
    monkeypatch.setattr(P, "PARQUET_BATCH_ROWS", 200)  # the null is in the 4th batch
    for run in (inf, bad, dup, inf_gz, cut_gz, nulls):
        out = tmp_path / "out.json"
        argv = ["evaluate", "--lane", run, "--qrels", g["qrels"], "--resamples", "0", "--out", out]
        rc, _, want = cli_run(*argv)
        assert rc == 2 and want.count("\n") == 1 and str(run) in want
        rc, _, err = cli_run(*argv, "--buckets", "7")
        assert (rc, err) == (2, want) and not out.exists()
    assert _no_workdir_left(workdirs)


def test_a_file_given_twice_is_the_in_memory_error(generated, cli_run, tmp_path):
    """The same file as two lanes, or as a lane and the qrels: refused before anything is
    read, in the in-memory command's words."""
    g = generated
    run = g["lanes"]["alpha"]
    out = tmp_path / "out.json"
    for extra in (["--lane", f"again={run}", "--qrels", g["qrels"]], ["--qrels", run]):
        argv = ["evaluate", "--lane", f"alpha={run}", *extra, "--resamples", "0", "--out", out]
        rc, _, want = cli_run(*argv)
        assert rc == 2 and "file given twice" in want and want.count("\n") == 1
        assert cli_run(*argv, "--buckets", "3")[::2] == (2, want) and not out.exists()


def test_options_that_do_not_split_by_query_are_refused(generated, demo_dir, cli_run, tmp_path):
    g, d = generated, demo_dir
    lanes = _lane_args(g["lanes"])
    cases = [
        (["evaluate", *lanes, "--qrels", g["qrels"], "--queries", d / "queries.tsv", "--buckets", "3"], "--queries"),
        (["evaluate", *lanes, "--qrels", g["qrels"], "--docs", d / "docs.tsv", "--buckets", "3"], "--docs"),
        (["evaluate", "--lane", f"ab={g['lanes']['alpha']},{g['lanes']['beta']}", "--qrels", g["qrels"], "--buckets",
          "3"], "shard"),
        (["evaluate", "--per-query-in", g["lanes"]["alpha"], "--qrels", g["qrels"], "--buckets", "3"], "--per-query-in"),
        (["compare", "--per-query-in", g["lanes"]["alpha"], "--memory-limit", "1GB"], "--per-query-in"),
        (["evaluate", *lanes, "--qrels", g["qrels"], "--scheduler", "tcp://127.0.0.1:1"], "--engine dask"),
        (["evaluate", *lanes, "--qrels", g["qrels"], "--memory-limit", "lots"], "--memory-limit"),
        (["evaluate", *lanes, "--qrels", g["qrels"], "--memory-limit", "100MB"], "leaves no memory"),
        (["evaluate", *lanes, "--qrels", g["qrels"], "--buckets", "0"], "--buckets"),
    ]
    for argv, words in cases:
        rc, _, err = cli_run(*argv)
        assert rc == 2 and err.count("\n") == 1 and err.startswith("rankscope: error: ") and words in err, (argv, err)
    assert not list(tmp_path.iterdir())


def test_the_bucket_count_rule(tmp_path):
    """N = ceil(EXPANSION * bytes / (limit / (workers + 1) - WORKER_BASE_BYTES)), at least 1;
    a compressed file counts COMPRESSED_RATIO times its size."""
    plain, packed = tmp_path / "big.run", tmp_path / "big.run.gz"
    limit = 2 * 10**9
    budget = limit / 4 - E.WORKER_BASE_BYTES
    for size in (10, 10**8, 10**10):
        with open(plain, "wb") as fh:  # sparse: no disk used
            fh.truncate(size)
        with open(packed, "wb") as fh:
            fh.write(gzip.compress(b"x"))
            fh.truncate(size)
        local = E.EngineSettings("local", memory_limit="2GB", workers=3)
        assert E.bucket_count([str(plain)], local) == max(1, math.ceil(E.EXPANSION * size / budget))
        assert E.bucket_count([str(packed)], local) == max(1, math.ceil(E.EXPANSION * E.COMPRESSED_RATIO * size / budget))
        assert E.bucket_count([str(plain)], E.EngineSettings("local", workers=3)) == \
            max(1, math.ceil(E.EXPANSION * size / E.DEFAULT_BUCKET_BYTES))
    assert E.bucket_count([str(plain)], E.EngineSettings("local", buckets=5)) == 5
    assert E.parse_size("1.5GiB") == 3 * 2**29 and E.parse_size("512MB") == 512 * 10**6
    with pytest.raises(InputError, match="--memory-limit"):
        E.parse_size("-1GB")


def test_duckdb_buckets_are_bucket_of(tmp_path):
    """The SQL hash DuckDB applies puts every qid where ``bucket.bucket_of`` says."""
    qids = ["1", "10", "q7", "é1", "Z", "a-b", "x" * 300, "日本"]
    run = tmp_path / "r.run"
    run.write_text("".join(f"{q} Q0 d{i} 1 {i}.5 t\n" for i, q in enumerate(qids)))
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 d{i} 1\n" for i, q in enumerate(qids)))
    plan = B.BucketPlan((("r", str(run)),), str(qrels))
    (tmp_path / "w").mkdir()
    files, facts = P.partition_files(plan, 5, str(tmp_path / "w"))
    for f in files:
        lanes, q, ood = P.read_bucket(f)
        want = sorted(x for x in qids if B.bucket_of(x, 5) == f.index)
        assert sorted(q.column("qid").to_pylist() if q is not None else []) == want
        assert sorted(lanes["r"].column("qid").to_pylist() if "r" in lanes else []) == want
        assert ood is None
        if "r" in lanes:
            assert lanes["r"].schema.field("score").type == pa.float64()
            assert lanes["r"].schema.field("line").type == pa.int64()
    assert facts[str(run)].format == "trec" and facts[str(run)].sha256 == hashlib.sha256(run.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- must-show 3: failures


def test_a_failing_bucket_fails_the_command(generated, cli_run, tmp_path, workdirs, monkeypatch, faults_dir):
    import faults

    monkeypatch.setattr(E, "_task", lambda: faults.failing)
    g = generated
    out, pqc = tmp_path / "report.json", tmp_path / "pq.csv"
    rc, text, err = cli_run("evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"], "--resamples", "0", "--buckets",
                         "7", "--out", out, "--per-query", pqc)
    assert rc == 2 and text == ""
    assert err == ("rankscope: error: bucket 3 of 7 failed: RuntimeError: the disk is on fire and a second line; "
                   "nothing was written\n")
    assert not out.exists() and not pqc.exists() and _no_workdir_left(workdirs)


def test_without_duckdb_the_command_says_what_to_install(generated, cli_run, monkeypatch, workdirs):
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb: ImportError
    g = generated
    rc, _, err = cli_run("evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"], "--buckets", "2")
    assert (rc, err) == (2, "rankscope: error: --buckets: query buckets need DuckDB: pip install 'rankscope[scale]'\n")
    assert _no_workdir_left(workdirs)


def _subprocess(faults_dir: Path, task: str, argv: list, tmp: Path, marks: Path | None = None):
    env = cli_env({"TMPDIR": str(tmp), "PYTHONPATH": os.pathsep.join([str(faults_dir), str(REPO)])})
    if marks is not None:
        env["RS_MARKS"] = str(marks)
    return subprocess.Popen([sys.executable, str(faults_dir / "driver.py"), task, *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_killed_worker_fails_the_command(generated, faults_dir, tmp_path):
    g = generated
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "report.json"
    proc = _subprocess(faults_dir, "killing", ["evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"],
                                               "--resamples", "0", "--buckets", "7", "--out", out], tmp)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 2 and stdout == ""
    assert stderr.startswith("rankscope: error: bucket ") and stderr.count("\n") == 1
    assert "a worker process ended unexpectedly (killed, or out of memory); nothing was written" in stderr
    assert not out.exists() and list(tmp.iterdir()) == []


def test_a_worker_dead_before_the_buckets_are_submitted_fails_the_command(generated, faults_dir, tmp_path):
    """The pool broke while the driver partitioned (its workers died in their warm-up):
    submitting a bucket raises BrokenProcessPool, which is one line naming the bucket."""
    g = generated
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "report.json"
    proc = _subprocess(faults_dir, "broken_before_submit", ["evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"],
                                                            "--resamples", "0", "--buckets", "7", "--out", out], tmp)
    stdout, stderr = proc.communicate(timeout=240)
    assert "Traceback" not in stderr, stderr[-2000:]
    assert proc.returncode == 2 and stdout == "", (proc.returncode, stderr[-2000:])
    assert stderr == ("rankscope: error: bucket 0 of 7 failed: a worker process ended unexpectedly (killed, or out of "
                      "memory) before it could run; nothing was written\n")
    assert not out.exists() and list(tmp.iterdir()) == []


def test_a_second_sigterm_while_the_pool_is_ended_still_removes_the_buckets(generated, faults_dir, tmp_path):
    """``docker stop``, ``timeout`` and systemd send more than one signal: the second, while
    the driver ends its workers, must not cut the clean-up short (the bucket directory
    stayed behind, with a traceback)."""
    g = generated
    tmp, marks = tmp_path / "tmp", tmp_path / "marks"
    tmp.mkdir()
    marks.mkdir()
    out = tmp_path / "report.json"
    proc = _subprocess(faults_dir, "second_sigterm", ["evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"],
                                                      "--resamples", "0", "--buckets", "7", "--out", out], tmp, marks)
    _sigterm_once_marked(proc, tmp, marks, out, 1)


def _clean_run(g, tmp_path) -> Path:
    """A plain run the streamed road reads (alpha without its comment lines)."""
    clean = [l for l in g["lanes"]["alpha"].read_text().splitlines() if l and not l.startswith("#")]
    run = tmp_path / "clean.run"
    run.write_text("\n".join(clean) + "\n")
    return run


def test_a_worker_killed_while_it_partitions_fails_the_command(generated, faults_dir, tmp_path):
    g = generated
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "report.json"
    run = _clean_run(g, tmp_path)
    proc = _subprocess(faults_dir, "killing_span", ["evaluate", "--lane", run, "--qrels", g["qrels"], "--resamples", "0",
                                                    "--buckets", "7", "--out", out], tmp)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 2 and stdout == ""
    assert stderr == (f"rankscope: error: partitioning {run} failed: a worker process ended unexpectedly (killed, or out "
                      "of memory); nothing was written\n")
    assert not out.exists() and list(tmp.iterdir()) == []


@pytest.mark.parametrize("task", ["sleeping", "slow_partition"])
def test_sigterm_removes_the_buckets_and_the_workers(generated, faults_dir, tmp_path, task):
    """SIGTERM while the buckets run (the workers are ended) and while the driver partitions."""
    g = generated
    tmp, marks = tmp_path / "tmp", tmp_path / "marks"
    tmp.mkdir()
    marks.mkdir()
    out = tmp_path / "report.json"
    proc = _subprocess(faults_dir, task, ["evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"],
                                                "--resamples", "0", "--buckets", "7", "--out", out], tmp, marks)
    _sigterm_once_marked(proc, tmp, marks, out, 1)


def _sigterm_once_marked(proc, tmp: Path, marks: Path, out: Path, n_marks: int) -> None:
    """SIGTERM once at least ``n_marks`` marks are written (the bucket directory there):
    exit 130, one line, nothing written, the directory gone, no marked worker left."""
    deadline = time.monotonic() + 180
    while len(list(marks.iterdir())) < n_marks and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if len(list(marks.iterdir())) < n_marks:
        proc.kill()
        pytest.fail(f"no {n_marks} marks before the deadline: {proc.communicate()[1]}")
    assert len(list(tmp.iterdir())) == 1  # the bucket directory, while the buckets run
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and stderr == "rankscope: interrupted\n" and stdout == "", (proc.returncode, stderr)
    assert not out.exists() and list(tmp.iterdir()) == []
    for mark in marks.glob("*.started"):
        pid = int(mark.name.split(".")[0])
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_sigterm_while_the_workers_partition_spans(generated, faults_dir, tmp_path):
    """SIGTERM while both workers partition spans of a run and the driver waits: exit 130,
    the bucket directory gone (the workers ended before it is removed), no worker left."""
    g = generated
    tmp, marks = tmp_path / "tmp", tmp_path / "marks"
    tmp.mkdir()
    marks.mkdir()
    out = tmp_path / "report.json"
    proc = _subprocess(faults_dir, "slow_span", ["evaluate", "--lane", _clean_run(g, tmp_path), "--qrels", g["qrels"],
                                                 "--resamples", "0", "--buckets", "7", "--out", out], tmp, marks)
    _sigterm_once_marked(proc, tmp, marks, out, 2)
