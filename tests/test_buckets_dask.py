"""Query-id buckets on a Dask cluster (kernel/dask_engine.py) against the in-memory path.

A ``distributed.LocalCluster`` started and stopped by the module's fixture (two workers in
this process, reached over TCP as a remote cluster would be) runs every bucket; the
per-query tables come back, are merged on the driver, and report.json
(``output.dumps_strict``) and the per-query CSV must equal ``pipeline.evaluate_report`` on
the whole workspace, byte for byte: on the demo, the Cranfield set and generated runs
with ties, missing queries and negatives. A bucket that fails (its own input error, a
task that raises, a worker that dies, a worker of another version, no scheduler) fails
with one line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import dask
import distributed
import pyarrow.parquet as pq
import pytest

from rankscope_tui.kernel import bucket as B
from rankscope_tui.kernel import dask_engine as D
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.output import dumps_strict
from rankscope_tui.kernel.pipeline import evaluate_report
from rankscope_tui.kernel.workspace import load, read_inputs
from rankscope_tui.render.report import per_query_csv

from support import REPO, shared_path
from test_bucket import _generate, _lane_args, _sources

N_BUCKETS = 5


@pytest.fixture(scope="module")
def cluster():
    """Two single-thread workers in this process behind a real scheduler on a TCP port."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None,
                                  host="127.0.0.1") as c:
        yield c


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    return _generate(tmp_path_factory.mktemp("generated"), seed=5, n_queries=160)


def _bucket_files(src, n: int, workdir: Path):
    """The inputs of ``src`` split into ``n`` Parquet buckets (one file per lane, qrels and
    negatives per bucket) as an engine's partitioner leaves them, and their FileFacts."""
    raw_lanes, raw_q, raw_ood = read_inputs(list(src.lanes), src.qrels, src.settings, src.ood_negatives)
    facts = {r.path: B.file_facts(r) for r in [*raw_lanes, raw_q] + ([raw_ood] if raw_ood is not None else [])}
    files = []
    for i, (lanes, q, o) in enumerate(B.partition(raw_lanes, raw_q, n, raw_ood)):
        paths = []
        for name, t in lanes.items():
            paths.append((name, str(workdir / f"{i}-{len(paths)}.parquet")))
            pq.write_table(t, paths[-1][1])
        qp = str(workdir / f"{i}-qrels.parquet")
        pq.write_table(q, qp)
        op = None
        if o is not None:
            op = str(workdir / f"{i}-ood.parquet")
            pq.write_table(o, op)
        files.append(SimpleNamespace(index=i, lanes=tuple(paths), qrels=qp, ood=op))
    return files, facts


def _on_dask(argv, cluster, tmp_path, n: int = N_BUCKETS) -> dict:
    src, gate, th = _sources(argv)
    p = B.plan(src, gate, th)
    files, facts = _bucket_files(src, n, tmp_path)
    done = []
    results = D.run_dask(files, p, cluster.scheduler_address, progress=lambda k, total: done.append((k, total)))
    assert done[-1] == (n, n) and [k for k, _ in done] == list(range(1, n + 1))
    for f, r in zip(files, results):  # in bucket order, whatever order they finished in
        qids = set()
        for path in [path for _, path in f.lanes] + [f.qrels] + ([f.ood] if f.ood else []):
            qids |= set(pq.read_table(path).column("qid").to_pylist())
        assert set(r.queries.column("qid").to_pylist()) == qids
    return B.evaluate_merged(B.merge(results), p, facts, gate)


def _assert_same(argv, cluster, tmp_path, n: int = N_BUCKETS) -> dict:
    src, gate, th = _sources(argv)
    want = evaluate_report(load(src), gate, th)
    got = _on_dask(argv, cluster, tmp_path, n)
    assert dumps_strict(got) == dumps_strict(want), "report.json differs on Dask"
    assert per_query_csv(got) == per_query_csv(want), "per-query CSV differs on Dask"
    return want


# --------------------------------------------------------------------------- byte for byte


def test_demo(demo_dir, cluster, tmp_path):
    d = demo_dir
    report = _assert_same(["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}",
                           "--qrels", d / "qrels-test.txt", "--strata", d / "strata.tsv", "--ood-negatives",
                           d / "qrels-ood-negatives.txt", "--corpus", d / "corpus.tsv", "--gate-on", "dense",
                           "--resamples", "999"], cluster, tmp_path)
    assert not report["gate"].get("skipped")


def test_cranfield(cluster, tmp_path):
    c = shared_path("cranfield")
    _assert_same([*_lane_args({n: c / "lanes" / f"{n}.run" for n in ("bm25", "tfidf", "dense")}), "--qrels",
                  c / "qrels-test.txt", "--strata", c / "strata.tsv", "--ood-negatives", c / "qrels-ood-negatives.txt",
                  "--resamples", "999"], cluster, tmp_path)


def test_generated_runs_with_ties_missing_queries_and_negatives(generated, cluster, tmp_path):
    g = generated
    report = _assert_same([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"], "--ood-negatives",
                           g["ood"], "--gate-on", "gamma", "--mutual", "1", "--margin", "0.5", "--resamples", "499"],
                          cluster, tmp_path, n=7)
    assert report["summary"]["negatives"] > 0 and report["gate"]["mutual"]["built_from"] > 0
    kinds = {w["kind"] for w in report["summary"]["warnings"]}
    assert {"duplicate_qrels_lines", "positives_missing_from_lane", "unjudged_queries"} <= kinds


def test_more_buckets_than_the_cluster_holds_at_once(generated, cluster, tmp_path):
    """23 buckets through 2 workers (at most D.in_flight(2) in the cluster at once), some
    empty: the results still come back in bucket order."""
    g = generated
    _assert_same([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--resamples", "99"], cluster, tmp_path, n=23)


# --------------------------------------------------------------------------- failures


def _plan_and_files(g, tmp_path, lanes=None):
    src, gate, th = _sources([*_lane_args(lanes or g["lanes"]), "--qrels", g["qrels"]])
    files, _ = _bucket_files(src, 3, tmp_path)
    return src, B.plan(src, gate, th), files


def test_a_buckets_input_error_is_the_in_memory_error(generated, cluster, tmp_path):
    g = generated
    run = tmp_path / "dup.run"
    lines = g["lanes"]["alpha"].read_text().splitlines()
    run.write_text("\n".join(lines + [next(l for l in lines if l and not l.startswith("#"))]) + "\n")
    src, p, files = _plan_and_files(g, tmp_path, {"alpha": run})
    with pytest.raises(InputError) as mem:
        load(src)
    with pytest.raises(InputError) as dsk:
        D.run_dask(files, p, cluster.scheduler_address)
    assert str(dsk.value) == str(mem.value) and "\n" not in str(dsk.value)


def test_a_task_that_raises_names_its_bucket(generated, cluster, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(B, "run_bucket", broken)  # the workers run in this process
    _, p, files = _plan_and_files(generated, tmp_path)
    with pytest.raises(D.DaskError) as e:
        D.run_dask(files, p, cluster.scheduler_address)
    assert str(e.value).startswith("bucket ") and "of 3 failed on the Dask cluster: RuntimeError: disk on fire second line" \
        in str(e.value) and "\n" not in str(e.value)


def test_a_worker_of_another_version_refuses(generated, tmp_path):
    """What a worker runs refuses a bucket sent by a driver of another rankscope version."""
    _, p, files = _plan_and_files(generated, tmp_path)
    with pytest.raises(D.DaskError, match=r"^a Dask worker runs rankscope \S+, the driver 0.0.0-other: install"):
        D.run_shipped(D.ship(files[0]), p, "0.0.0-other")
    assert isinstance(D.run_shipped(D.ship(files[0]), p, None), B.BucketResult)


class _DieOnBucket(distributed.WorkerPlugin):
    """Ends its worker's process as soon as a bucket task starts there."""

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith("rankscope-bucket-"):
            os._exit(1)


def test_a_lost_worker_fails_with_one_line(generated, tmp_path):
    """A worker process that dies running a bucket (here: every time; the cluster allows
    no retry) fails the whole run with one line naming the bucket."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    _, p, files = _plan_and_files(generated, tmp_path)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                      worker_dashboard_address=None, host="127.0.0.1", env={"PYTHONPATH": str(REPO)}) as c:
            with distributed.Client(c.scheduler_address, set_as_default=False) as client:
                client.register_plugin(_DieOnBucket())
            with pytest.raises(D.DaskError) as e:
                D.run_dask(files, p, c.scheduler_address)
    assert "the Dask worker running it was lost" in str(e.value) and "\n" not in str(e.value)


def test_no_scheduler_is_one_line(generated, tmp_path):
    _, p, files = _plan_and_files(generated, tmp_path)
    with dask.config.set({"scheduler-address": None}):
        with pytest.raises(InputError, match="--engine dask needs --scheduler ADDRESS"):
            D.run_dask(files, p, None)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(D.DaskError, match=r"^--scheduler: cannot connect to the Dask scheduler at tcp://127.0.0.1:9"):
            D.run_dask(files, p, "tcp://127.0.0.1:9")


def test_the_configured_scheduler_address_is_the_default(cluster):
    with dask.config.set({"scheduler-address": cluster.scheduler_address}):
        assert D.scheduler_address(None) == cluster.scheduler_address
    assert D.scheduler_address(" tcp://h:1 ") == "tcp://h:1"
