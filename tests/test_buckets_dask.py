"""Query-id buckets on a Dask cluster (``--engine dask``, kernel/scale/dask_engine.py) against the
in-memory path.

A ``distributed.LocalCluster`` started and stopped by the module's fixture (two
single-thread workers in this process behind a scheduler on a TCP port, reached as a
remote cluster is) runs every bucket. ``rankscope evaluate --engine dask --scheduler
ADDRESS`` (``cli.main`` in this process) must write the report.json, per-query CSV and
text of the in-memory command, byte for byte, but for the settings block naming the
engine: on the demo, the Cranfield set and generated runs with ties, missing queries and
negatives. A bucket that fails (its own input error, a task that raises, a worker that
dies, a worker of another version, no scheduler) fails the command with one line, exit
status 2 and nothing written.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import dask
import distributed
import pytest
from support import REPO, shared_path, without_engine
from test_bucket import _generate, _lane_args, _sources

from rankscope_tui.kernel.instruments.evaluate import evaluate_report
from rankscope_tui.kernel.report.output import dumps_strict
from rankscope_tui.kernel.scale import bucket as B
from rankscope_tui.kernel.scale import dask_engine as D
from rankscope_tui.kernel.scale import partition as P
from rankscope_tui.kernel.workspace.loaded import load

N_BUCKETS = 5


@pytest.fixture(scope="module")
def cluster():
    """Two single-thread workers in this process behind a real scheduler on a TCP port."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None, host="127.0.0.1") as c:
        yield c


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    return _generate(tmp_path_factory.mktemp("generated"), seed=5, n_queries=160)


def _evaluate_both(cli_run, argv, cluster, tmp_path, n: int = N_BUCKETS) -> dict:
    m, d = tmp_path / "memory", tmp_path / "dask"
    m.mkdir(), d.mkdir()
    rc, text, err = cli_run("evaluate", *argv, "--out", m / "report.json", "--per-query", m / "pq.csv")
    assert rc == 0, err
    rc, dtext, err = cli_run("evaluate", *argv, "--engine", "dask", "--scheduler", cluster.scheduler_address,
                          "--buckets", n, "--out", d / "report.json", "--per-query", d / "pq.csv")
    assert rc == 0, err
    assert without_engine((d / "report.json").read_bytes(), "dask", n) == (m / "report.json").read_bytes()
    assert (d / "pq.csv").read_bytes() == (m / "pq.csv").read_bytes()
    assert dtext == text
    return json.loads((m / "report.json").read_bytes())


# --------------------------------------------------------------------------- byte for byte


def test_demo(demo_dir, cli_run, cluster, tmp_path):
    d = demo_dir
    report = _evaluate_both(cli_run, ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}",
                                   "--qrels", d / "qrels-test.txt", "--strata", d / "strata.tsv", "--ood-negatives",
                                   d / "qrels-ood-negatives.txt", "--corpus", d / "corpus.tsv", "--gate-on", "dense",
                                   "--resamples", "199"], cluster, tmp_path)
    assert not report["gate"].get("skipped")


def test_cranfield(cli_run, cluster, tmp_path):
    c = shared_path("cranfield")
    _evaluate_both(cli_run, [*_lane_args({n: c / "lanes" / f"{n}.run" for n in ("bm25", "tfidf", "dense")}), "--qrels",
                          c / "qrels-test.txt", "--strata", c / "strata.tsv", "--ood-negatives",
                          c / "qrels-ood-negatives.txt", "--resamples", "199"], cluster, tmp_path)


def test_generated_runs_with_ties_missing_queries_and_negatives(generated, cli_run, cluster, tmp_path):
    g = generated
    report = _evaluate_both(cli_run, [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"],
                                   "--ood-negatives", g["ood"], "--gate-on", "gamma", "--mutual", "1", "--margin", "0.5",
                                   "--resamples", "199"], cluster, tmp_path, n=7)
    assert report["summary"]["negatives"] > 0 and report["gate"]["mutual"]["built_from"] > 0
    kinds = {w["kind"] for w in report["summary"]["warnings"]}
    assert {"duplicate_qrels_lines", "positives_missing_from_lane", "unjudged_queries", "extra_columns"} <= kinds


def _bucket_files(argv, n: int, workdir: Path):
    src, gate, th = _sources(argv)
    p = B.plan(src, gate, th)
    files, facts = P.partition_files(p, n, str(workdir))
    return src, gate, p, files, facts


def test_compare_and_calibrate(demo_dir, generated, cli_run, cluster, tmp_path):
    """compare's rows and calibrate's thresholds.json from Dask buckets: the in-memory bytes
    but the engine entry."""
    d, g = demo_dir, generated
    dask_args = ["--engine", "dask", "--scheduler", cluster.scheduler_address, "--buckets", "4"]
    for i, (command, argv) in enumerate((
            ("compare", [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--metric", "ap", "--metric", "rr",
                         "--resamples", "999"]),
            ("calibrate", ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}", "--qrels",
                           d / "qrels-dev.txt", "--gate-on", "dense", "--resamples", "99"]))):
        m, b = tmp_path / f"m{i}.json", tmp_path / f"b{i}.json"
        rc, text, err = cli_run(command, *argv, "--out", m)
        assert rc == 0, err
        rc, btext, err = cli_run(command, *argv, *dask_args, "--out", b)
        assert rc == 0, err
        assert without_engine(b.read_bytes(), "dask", 4, ("settings",)) == m.read_bytes(), command
        assert btext.replace(str(b), str(m)) == text


@pytest.mark.parametrize("few", [False, True], ids=["23 buckets", "3 queries in 7 buckets"])
def test_results_come_back_in_bucket_order(generated, cluster, tmp_path, few):
    """More buckets than the cluster holds at once (at most ``D.in_flight(2)``), or buckets
    without rows (run on the driver): result i holds the queries of bucket i's files, and
    the merged report is the in-memory one."""
    g = generated
    lanes, qrels, n = dict(g["lanes"]), g["qrels"], 23
    if few:
        keep = ("1", "q1", "é1")
        qrels = tmp_path / "qrels.txt"
        qrels.write_text("".join(l + "\n" for l in g["qrels"].read_text().splitlines() if l.split(" ")[0] in keep))
        lanes = {"alpha": tmp_path / "one.run"}
        lanes["alpha"].write_text("".join(l + "\n" for l in g["lanes"]["alpha"].read_text().splitlines()
                                          if l.split(" ")[0] in keep))
        n = 7
    src, gate, p, files, facts = _bucket_files([*_lane_args(lanes), "--qrels", qrels, "--resamples", "99"], n,
                                               tmp_path / "work")
    seen = []
    results = D.run_dask(files, p, cluster.scheduler_address, progress=lambda k, total: seen.append((k, total)))
    assert seen[-1] == (n, n) and [k for k, _ in seen] == sorted(k for k, _ in seen)
    for f, r in zip(files, results):
        want = set()
        for path in (*dict(f.lanes).values(), f.qrels):
            t = P._read_parquet(path)
            want |= set(t.column("qid").to_pylist()) if t is not None else set()
        assert set(r.queries.column("qid").to_pylist()) == want
    assert any(r.n_queries == 0 for r in results) == few
    report = B.evaluate_merged(B.merge(results), p, facts, gate)
    assert dumps_strict(report) == dumps_strict(evaluate_report(load(src), gate, None))


def test_workers_read_none_of_the_drivers_files(demo_dir, cluster, tmp_path, monkeypatch):
    """Each bucket's Parquet files and the corpus travel with the tasks: what the worker
    reads is its own copy (no storage shared with the driver is needed), and the report is
    still the in-memory one."""
    d = demo_dir
    argv = ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}", "--qrels",
            d / "qrels-test.txt", "--corpus", d / "corpus.tsv", "--resamples", "99"]
    src, gate, p, files, facts = _bucket_files(argv, 4, tmp_path / "work")
    seen, real = [], P.bucket_task

    def recording(files, plan):
        seen.append([path for _, path in files.lanes] + [files.qrels, plan.corpus])
        return real(files, plan)

    monkeypatch.setattr(P, "bucket_task", recording)
    report = B.evaluate_merged(B.merge(D.run_dask(files, p, cluster.scheduler_address)), p, facts, gate)
    assert dumps_strict(report) == dumps_strict(evaluate_report(load(src), gate, None))
    assert len(seen) == 4 and all(Path(x).exists() for paths in seen for x in paths[-1:])
    for paths in seen:
        assert not any(x.startswith(str(tmp_path)) or x == str(d / "corpus.tsv") for x in paths), paths


# --------------------------------------------------------------------------- failures


def _fails_with_one_line(cli_run, argv, tmp_path) -> str:
    """The command's one-line error; exit status 2 and nothing written."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    rc, text, err = cli_run("evaluate", *argv, "--out", out / "report.json", "--per-query", out / "pq.csv")
    assert rc == 2 and text == "" and err.count("\n") == 1 and err.startswith("rankscope: error: "), err
    assert not list(out.iterdir())
    return err[len("rankscope: error: "):].rstrip("\n")


def test_a_buckets_input_error_is_the_in_memory_error(generated, cli_run, cluster, tmp_path):
    g = generated
    run = tmp_path / "dup.run"
    lines = g["lanes"]["alpha"].read_text().splitlines()
    run.write_text("\n".join(lines + [next(l for l in lines if l and not l.startswith("#"))]) + "\n")
    argv = ["--lane", f"alpha={run}", "--qrels", g["qrels"]]
    mem = _fails_with_one_line(cli_run, argv, tmp_path)
    dsk = _fails_with_one_line(cli_run, [*argv, "--engine", "dask", "--scheduler", cluster.scheduler_address,
                                      "--buckets", "3"], tmp_path)
    assert dsk == mem and "appears twice" in mem


def test_a_task_that_raises_fails_the_command(generated, cli_run, cluster, tmp_path, monkeypatch):
    def broken(files, plan):
        raise RuntimeError("the disk is on fire\nand a second line")

    monkeypatch.setattr(P, "bucket_task", broken)  # the workers run in this process
    g = generated
    err = _fails_with_one_line(cli_run, [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--engine", "dask",
                                      "--scheduler", cluster.scheduler_address, "--buckets", "3"], tmp_path)
    assert err.startswith("bucket ") and err.endswith(
        " of 3 failed on the Dask cluster: RuntimeError: the disk is on fire and a second line; nothing was written")
    deadline = time.monotonic() + 10
    while any(str(k).startswith("rankscope-bucket-") for k in cluster.scheduler.tasks) and time.monotonic() < deadline:
        time.sleep(0.05)  # the scheduler forgets cancelled tasks asynchronously
    assert not any(str(k).startswith("rankscope-bucket-") for k in cluster.scheduler.tasks)


def test_a_worker_with_other_code_refuses(generated, tmp_path):
    """What a worker runs refuses a bucket sent by a driver whose kernel sources differ."""
    g = generated
    _, _, p, files, _ = _bucket_files([*_lane_args(g["lanes"]), "--qrels", g["qrels"]], 3, tmp_path)
    assert len(D.kernel_fingerprint()) == 12
    with pytest.raises(D.DaskError, match=r"^a Dask worker runs other rankscope code than the driver \(kernel "
                                          r"[0-9a-f]{12}, the driver's 000000000000\): install"):
        D.run_shipped(D.ship(files[0]), p, "000000000000")
    D.run_shipped(D.ship(files[0]), p, D.kernel_fingerprint())
    assert dumps_strict(D.run_shipped(D.ship(files[0]), p, None).queries.to_pydict()) == \
        dumps_strict(P.bucket_task(files[0], p).queries.to_pydict())


class _DieOnBucket(distributed.WorkerPlugin):
    """Ends its worker's process as soon as a bucket task starts there."""

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith("rankscope-bucket-"):
            os._exit(1)


def test_a_lost_worker_fails_with_one_line(generated, cli_run, tmp_path):
    """A worker process that dies running a bucket (here: every time, and the cluster
    allows no retry) fails the command with one line naming the bucket."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the worker cannot import this test module
    g = generated
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                      host="127.0.0.1", env={"PYTHONPATH": str(REPO)}) as c:
            with distributed.Client(c.scheduler_address, set_as_default=False) as client:
                client.register_plugin(_DieOnBucket())
            err = _fails_with_one_line(cli_run, [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--engine", "dask",
                                              "--scheduler", c.scheduler_address, "--buckets", "3"], tmp_path)
    assert err.startswith("bucket ") and "failed: the Dask worker running it was lost" in err


def test_no_scheduler_is_one_line(generated, cli_run, tmp_path):
    g = generated
    argv = [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--engine", "dask", "--buckets", "3"]
    with dask.config.set({"scheduler-address": None}):
        err = _fails_with_one_line(cli_run, argv, tmp_path)
    assert err.startswith("--scheduler: --engine dask needs --scheduler ADDRESS")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        err = _fails_with_one_line(cli_run, [*argv, "--scheduler", "tcp://127.0.0.1:9"], tmp_path)
    assert err.startswith("--scheduler: cannot connect to the Dask scheduler at tcp://127.0.0.1:9: ")


def test_the_configured_scheduler_address_is_the_default(cluster):
    with dask.config.set({"scheduler-address": cluster.scheduler_address}):
        assert D.scheduler_address(None) == cluster.scheduler_address
    assert D.scheduler_address(" tcp://h:1 ") == "tcp://h:1"
