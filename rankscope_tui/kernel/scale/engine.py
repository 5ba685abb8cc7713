"""Running the query buckets: partition on disk, evaluate each bucket in a worker, merge.

:func:`run_engine` is the driver of ``--buckets`` / ``--memory-limit`` / ``--engine``:

1. ``bucket.plan`` of the sources (refusing what does not split by query);
2. ``partition.partition_files`` into a temporary directory (DuckDB hashes the qids, pyarrow
   writes the Parquet buckets); an input that is a pre-bucketed dataset (``given``) is
   checked on a sample first and not partitioned: its ``bucket=K`` directories are the
   buckets, fingerprinted in a thread while the buckets run;
3. ``partition.bucket_task`` per bucket -- on a pool of ``workers`` processes (the
   ``local`` engine; ``multiprocessing``'s spawn context, so a worker starts clean), or
   on a Dask cluster (``dask``: ``dask_engine.run_dask``);
4. ``bucket.merge`` of the per-query tables, which the caller hands to
   ``bucket.evaluate_merged`` or a ``bucket.QueryWorkspace``.

Every bucket must succeed: a bucket that raises, or a worker that dies (killed, out of
memory), fails the whole run with one line naming the bucket, and nothing is merged.
The temporary directory is removed on every way out -- success, error, Ctrl-C and
SIGTERM (which the CLI turns into KeyboardInterrupt) -- and the worker processes are
ended before it is.

How many buckets, when ``--buckets`` is not given (:func:`bucket_count`): the rows of one
bucket, held by one worker, take about ``EXPANSION`` times their bytes as stored
(uncompressed; a compressed file counts ``COMPRESSED_RATIO`` times its size), plus a
worker's fixed ``WORKER_BASE_BYTES``. ``--memory-limit`` is shared by the workers and the
driver, so each gets ``limit / (workers + 1)`` and

    N = ceil(EXPANSION * input bytes / (limit / (workers + 1) - WORKER_BASE_BYTES))

(without ``--memory-limit`` the budget of a bucket is ``DEFAULT_BUCKET_BYTES``). While it
partitions, the driver's bucket writer buffers at most an eighth of the driver's share.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import InputError
from .budget import WAIT_S, BucketFailed, parse_size  # engine.X stays the spelling callers and tests use

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from ..settings import CalibrationSettings, GateSettings
    from ..workspace.loaded import Sources
    from .bucket import BucketPlan, BucketResult, FileFacts, Merged
    from .partition import BucketFiles

__all__ = ["EngineSettings", "run_engine", "bucket_count", "parse_size", "BucketFailed", "ENGINES"]

ENGINES = ("memory", "local", "dask")

#: Peak memory of evaluating a bucket's rows, per byte of their (uncompressed) file text
#: (measured: 7.8x for a bucket of 4M lines at 1,000 rows a query, 126 MB of text; about 9x
#: at 100 rows a query, where per-query tables weigh more: the larger figure, with a margin).
EXPANSION = 10.0
#: A compressed input is taken as this many times its stored size once decompressed.
COMPRESSED_RATIO = 4.0
#: What a worker process holds before any rows (Python, numpy, pyarrow, the kernel).
WORKER_BASE_BYTES = 150 * 10**6
#: A bucket's budget when no --memory-limit is given.
DEFAULT_BUCKET_BYTES = 10**9
#: At most this many buckets (files per input; a bucket of a few rows gains nothing).
MAX_BUCKETS = 4096


@dataclass(frozen=True)
class EngineSettings:
    """How per-query work is run: ``memory`` (every row in this process, the default),
    ``local`` (query buckets on a process pool of ``workers`` processes; None: one per CPU,
    at most ``parallel.MAX_DEFAULT_THREADS``) or ``dask`` (buckets on the Dask scheduler at
    ``scheduler``); ``buckets``: how many (None: from ``memory_limit``, see
    :func:`bucket_count`); ``memory_limit``: e.g. ``2GB`` (decimal units, or KiB/MiB/GiB)."""

    engine: str = "memory"
    buckets: int | None = None
    memory_limit: str | None = None
    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise InputError(f"unknown engine {self.engine!r} (one of: {', '.join(ENGINES[1:])})", "--engine")
        if self.buckets is not None and not 1 <= self.buckets <= MAX_BUCKETS:
            raise InputError(f"must be from 1 to {MAX_BUCKETS}, got {self.buckets}", "--buckets")
        if self.memory_limit is not None:
            parse_size(self.memory_limit)
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        if self.scheduler is not None and self.engine != "dask":
            raise InputError("names a Dask scheduler: give it with --engine dask", "--scheduler")

    @property
    def bucketed(self) -> bool:
        return self.engine != "memory"

    def as_dict(self) -> dict[str, Any]:
        """What report.json's settings record of a bucketed run (the engine and the bucket
        count, once known; where the workers ran is not a setting of the result)."""
        return {"name": self.engine, "buckets": self.buckets}


def _workers(engine: EngineSettings) -> int:
    from ..parallel import default_threads

    return engine.workers if engine.workers is not None else default_threads()


def input_bytes(paths: Sequence[str]) -> int:
    """The inputs' estimated uncompressed size: a file's size, times ``COMPRESSED_RATIO`` when
    its content is compressed."""
    from ..inputs.files import compression_of

    total = 0
    for p in paths:
        try:
            size = os.path.getsize(p)
            with open(p, "rb") as fh:
                head = fh.read(6)
        except OSError:
            continue  # the readers name what is wrong with it
        total += int(size * (COMPRESSED_RATIO if compression_of(head) is not None else 1))
    return total


def bucket_count(paths: Sequence[str], engine: EngineSettings) -> int:
    """``engine.buckets``, or the count the module docstring's rule gives for ``paths``;
    with a pre-bucketed dataset among them, its count (``given.given_count``: refused
    when ``engine.buckets`` is smaller)."""
    from . import given as G

    datasets = [G.read_dataset(p) for p in paths if G.is_dataset(p)]
    if datasets:
        return G.given_count(datasets, engine.buckets, MAX_BUCKETS)
    if engine.buckets is not None:
        return engine.buckets
    if engine.memory_limit is not None:
        share = parse_size(engine.memory_limit) / (_workers(engine) + 1)
        budget = share - WORKER_BASE_BYTES
        if budget <= 0:
            raise InputError(f"{engine.memory_limit} leaves no memory for rows: each of {_workers(engine)} workers "
                             f"and the driver gets {share / 1e6:.0f} MB, and a worker needs "
                             f"{WORKER_BASE_BYTES // 10**6} MB before any rows", "--memory-limit")
    else:
        budget = DEFAULT_BUCKET_BYTES
    return max(1, min(MAX_BUCKETS, math.ceil(EXPANSION * input_bytes(paths) / budget)))


def _driver_share(engine: EngineSettings) -> str | None:
    if engine.memory_limit is None:
        return None
    return f"{max(1, parse_size(engine.memory_limit) // (_workers(engine) + 1) // 10**6)}MB"


# --------------------------------------------------------------------------- the local pool


def _worker_init() -> None:
    """A worker leaves Ctrl-C to the driver, which ends the pool (no traceback per worker)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def new_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes (a fresh interpreter each: no state of the
    driver, no forked threads)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init)


def _end_pool(pool: ProcessPoolExecutor, cancel: bool) -> None:
    """Shut ``pool`` down; on a failure or interrupt its processes are ended first (ours:
    the pool started them), so none outlives the command."""
    if cancel:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
    else:
        pool.shutdown(wait=True)


def _has_rows(files: BucketFiles) -> bool:
    return any(os.path.exists(p) for p in [*(p for _, p in files.lanes), files.qrels, files.ood] if p)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:400]


def _warm() -> None:
    """Import what a bucket needs (what a worker does while the driver partitions)."""
    from ..workspace import loaded as workspace  # noqa: F401


def warm_pool(workers: int) -> ProcessPoolExecutor:
    """A pool (:func:`new_pool`) whose ``workers`` processes are started, each importing the
    kernel, in the background: the driver partitions meanwhile."""
    pool = new_pool(workers)
    for _ in range(workers):
        pool.submit(_warm)
    return pool


def run_local(files_list: list[BucketFiles], plan: BucketPlan, workers: int,
              progress: Callable[[int, int], None] | None = None,
              pool: ProcessPoolExecutor | None = None) -> list[BucketResult]:
    """``partition.bucket_task`` of every bucket on a pool of ``workers`` processes (``pool``,
    which the caller then ends, or one of its own), in bucket order. Buckets without rows
    are run here (they read nothing). An InputError of a bucket (a duplicate doc, named by
    file and line) is raised as it is; any other failure, or a worker that died, is a
    :class:`BucketFailed` naming the bucket."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    from . import partition as P

    results: list[Any] = [None] * len(files_list)  # every slot holds a BucketResult once the loop ends
    busy = [f for f in files_list if _has_rows(f)]
    for f in files_list:
        if not _has_rows(f):
            results[f.index] = P.bucket_task(f, plan)
    done_count = len(files_list) - len(busy)
    if progress:
        progress(done_count, len(files_list))
    if not busy:
        return results
    own = pool is None
    if pool is None:
        pool = new_pool(max(1, min(workers, len(busy))))
    ok = False
    try:
        futures: dict[Any, BucketFiles] = {}
        for f in busy:
            try:
                futures[pool.submit(_task(), f, plan)] = f
            except BrokenProcessPool:  # a worker died before this bucket went out (while the driver partitioned)
                raise BucketFailed(f"bucket {f.index} of {len(files_list)} failed: a worker process ended "
                                   "unexpectedly (killed, or out of memory) before it could run; nothing was "
                                   "written") from None
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=WAIT_S, return_when=FIRST_COMPLETED)
            if not done:
                continue
            for fut in sorted(done, key=lambda x: futures[x].index):
                exc = fut.exception()
                k = futures[fut].index
                if isinstance(exc, BrokenProcessPool):
                    lost = min(futures[x].index for x in done | pending if x.done() and x.exception() is not None)
                    raise BucketFailed(f"bucket {lost} of {len(files_list)} failed: a worker process ended "
                                       "unexpectedly (killed, or out of memory); nothing was written") from None
                if isinstance(exc, InputError):
                    raise exc
                if exc is not None:
                    raise BucketFailed(f"bucket {k} of {len(files_list)} failed: {type(exc).__name__}: "
                                       f"{_one_line(exc)}; nothing was written") from None
                results[k] = fut.result()
                done_count += 1
            if progress:
                progress(done_count, len(files_list))
        ok = True
    finally:
        if own or not ok:
            _end_pool(pool, cancel=not ok)
    return results


def _check_given(p: BucketPlan, n: int) -> tuple[dict[str, Any], dict[str, tuple[Any, dict[str, str] | None]]]:
    """The pre-bucketed datasets among ``p``'s inputs by path (``given.Dataset``), each
    checked on a sample against ``bucket_of(qid, n)`` (``given.check_sample``), and what
    their facts say: (the ``buckets_given`` warning, the columns read)."""
    from ..inputs.formats import InputOptions
    from . import given as G

    opts = p.settings.inputs
    assert isinstance(opts, InputOptions)  # what LoadSettings.inputs holds
    roles = [(path, "run", opts.run_columns) for _, path in p.lanes] + [(p.qrels, "qrels", opts.qrels_columns)]
    if p.ood_negatives is not None:
        roles.append((p.ood_negatives, "qrels", opts.qrels_columns))
    datasets: dict[str, Any] = {}
    notes: dict[str, tuple[Any, dict[str, str] | None]] = {}
    for path, what, columns in roles:
        if not G.is_dataset(path):
            continue
        ds = G.read_dataset(path)
        checked = G.check_sample(ds, n, columns, what)
        datasets[path] = ds
        notes[path] = (G.given_note(ds, n, checked), G.dataset_columns(ds, columns, what))
    return datasets, notes


def _task() -> Callable[[BucketFiles, BucketPlan], BucketResult]:
    """The function each worker runs (``partition.bucket_task``; looked up when used)."""
    from . import partition as P

    return P.bucket_task


# --------------------------------------------------------------------------- the driver


def run_engine(sources: Sources, engine: EngineSettings, gate: GateSettings | None = None,
               thresholds_path: str | None = None, metrics: Sequence[str] = (),
               calibration: CalibrationSettings | None = None,
               progress: Callable[[str], None] | None = None) -> tuple[Merged, BucketPlan, dict[str, FileFacts]]:
    """(``bucket.Merged``, ``bucket.BucketPlan``, FileFacts by path) of ``sources`` run in
    query buckets as ``engine`` says; ``metrics`` / ``calibration`` as ``bucket.plan``
    takes them. ``progress`` (optional) is told each finished stage, one line of text."""
    import shutil
    import tempfile

    from . import bucket as B
    from .partition import partition_files

    if not engine.bucketed:
        raise ValueError("run_engine runs query buckets; the memory engine is the workspace itself")
    p = B.plan(sources, gate, thresholds_path, metrics, calibration)
    paths = [path for _, path in p.lanes] + [p.qrels] + ([p.ood_negatives] if p.ood_negatives else [])
    n = bucket_count(paths, engine)
    if engine.engine == "dask":
        import importlib

        try:  # kernel/scale/dask_engine.py, which imports dask.distributed (the scale extra)
            run_dask = importlib.import_module(".dask_engine", __package__).run_dask
        except ImportError as exc:
            raise InputError(f"the Dask engine is not available here ({_one_line(exc)}): pip install "
                             "'rankscope[scale]'", "--engine") from None
    given, notes = _check_given(p, n)
    digests: dict[str, Any] = {}
    workdir = tempfile.mkdtemp(prefix="rankscope-buckets-")
    pool, ok = None, False
    hasher = None
    import threading

    stop = threading.Event()
    try:
        if given:  # pre-bucketed datasets are fingerprinted while the buckets run
            from concurrent.futures import ThreadPoolExecutor

            from .given import dataset_sha256

            hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankscope-sha256")
            digests = {path: hasher.submit(dataset_sha256, ds, stop) for path, ds in given.items()}
        workers = max(1, min(_workers(engine), n))
        if engine.engine == "local":  # the workers start while the driver partitions (and take its spans)
            pool = warm_pool(workers)
        files, facts = partition_files(p, n, workdir, _driver_share(engine), pool, workers if pool is not None else 1,
                                       frozenset(given))
        if progress:
            progress(f"partitioned the inputs into {n} query bucket(s)")
        last = [-math.inf]

        def each(done: int, total: int) -> None:  # at most a line a second, and the last one
            now = time.monotonic()
            if progress and total > 1 and done and (done == total or now - last[0] >= 1.0):
                last[0] = now
                progress(f"buckets {done}/{total} done")

        if engine.engine == "dask":
            results = run_dask(files, p, engine.scheduler, each)
        else:
            results = run_local(files, p, _workers(engine), each, pool)
        merged = B.merge(results)
        for path, note in notes.items():
            facts[path] = B.FileFacts(path, digests[path].result(), "parquet", note[1], (note[0],))
        ok = True
    finally:
        if hasher is not None:
            if not ok:
                stop.set()  # a failed run does not wait for the fingerprints
            hasher.shutdown(wait=ok, cancel_futures=True)
        try:
            if pool is not None:
                _end_pool(pool, cancel=not ok)  # (ended before the directory goes: no worker reads it then)
        finally:  # the directory goes even if ending the pool did not finish
            shutil.rmtree(workdir, ignore_errors=True)
    return merged, p, facts
