"""Query-id buckets on a Dask cluster: the bucket function on ``dask.distributed`` workers.

``rankscope evaluate --engine dask --scheduler ADDRESS`` partitions the inputs on the
driver as ``--buckets N`` does, then runs each bucket's :func:`bucket.run_bucket` on a
worker of a running ``dask.distributed`` cluster; the per-query tables
(:class:`bucket.BucketResult`) come back to the driver, which merges them and computes
everything else (intervals, strata, compare, the report) as on one machine.

The cluster is the user's: started with the tools they already use (``dask scheduler``
and ``dask worker``, dask-jobqueue on Slurm/PBS/SGE, the Dask Kubernetes operator, Dask
on YARN, Coiled, ...); rankscope only connects to it. Conventions:

- **address**: ``--scheduler`` takes what ``distributed.Client`` takes, ``tcp://host:8786``
  (``host:8786`` means the same), ``tls://...``, or the path of a scheduler file
  (``dask scheduler --scheduler-file FILE``, what dask-jobqueue and dask-mpi write).
  Without ``--scheduler`` the Dask configuration's ``scheduler-address`` is used
  (``DASK_SCHEDULER_ADDRESS`` in the environment, as many deployments export it); with
  neither, the command is refused: rankscope never starts a cluster of its own (on one
  machine ``--engine local`` is that cluster). The connect timeout is Dask's
  ``distributed.comm.timeouts.connect`` (``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``).
- **data**: each task carries its bucket's Parquet files as bytes (the driver reads them
  from its own work directory), so the workers need no storage shared with the driver
  and nothing is left on them (the ``--corpus`` file, the one input a bucket reads
  itself, goes once per run; each worker process keeps its copy in its temporary
  directory until it exits); at most :func:`in_flight` buckets are in the cluster at
  once, so the driver's memory holds a few buckets, never the run.
- **code**: the workers must have the driver's rankscope installed (and pyarrow, numpy,
  scipy); a task on a worker whose kernel sources differ from the driver's
  (:func:`kernel_fingerprint`) fails, naming both fingerprints.
- **order and failure**: results are put in bucket order whatever order they finish in.
  A bucket's own input error (a duplicate hit, a bad line: the error the in-memory path
  gives) fails the command with that error; any other failed task, a worker lost past
  Dask's retries (``distributed.scheduler.allowed-failures``; ``KilledWorker``) or a lost
  scheduler fails it with one line naming the bucket. Outstanding tasks are cancelled and
  the client is closed on every exit path; nothing is written (the driver writes the
  outputs only after every bucket is back).
"""

from __future__ import annotations

import logging
import os
import uuid
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, cast

from ..errors import InputError
from .budget import BucketFailed

if TYPE_CHECKING:
    from .bucket import BucketPlan, BucketResult
    from .partition import BucketFiles


# What the driver uses of distributed's client, futures and as_completed, whose methods
# distributed leaves unannotated: calls through these are checked.
class _Future(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def status(self) -> str: ...
    def result(self) -> BucketResult: ...
    def release(self) -> None: ...
    def exception(self) -> BaseException | None: ...


class _Client(Protocol):
    @property
    def loop(self) -> object: ...
    def submit(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> _Future: ...
    def nthreads(self) -> dict[str, int]: ...
    def cancel(self, futures: list[_Future], force: bool = False) -> None: ...
    def close(self) -> None: ...


class _Completed(Protocol):
    def add(self, future: _Future) -> None: ...
    def __iter__(self) -> Iterator[_Future]: ...


#: A file's content as a task carries it: ((file name, bytes), ...).
Content = tuple[tuple[str, bytes], ...]

__all__ = ["run_dask", "scheduler_address", "ShippedBucket", "ship", "run_shipped", "in_flight", "kernel_fingerprint", "DaskError"]


class DaskError(BucketFailed):
    """The cluster could not run the buckets (unreachable scheduler, failed task, lost
    worker): one line, the command fails and writes nothing."""


@dataclass(frozen=True)
class ShippedBucket:
    """One bucket as a task carries it: ``partition.BucketFiles`` with each path's content
    in place of the path. A content is ``((file name, bytes), ...)``: one entry for a
    Parquet file, one per part for a directory of them, none for a path that does not
    exist (no rows there). ``lanes``: ((name, content), ...) in plan order; ``ood``: None
    without out-of-domain negatives."""

    index: int
    lanes: tuple[tuple[str, Content], ...]  # ((name, content), ...)
    qrels: Content
    ood: Content | None = None
    given: tuple[str, ...] = ()  # roles of pre-bucketed inputs (``partition.BucketFiles.given``)

    @property
    def size(self) -> int:
        contents = [c for _, c in self.lanes] + [self.qrels] + ([self.ood] if self.ood is not None else [])
        return sum(len(b) for c in contents for _, b in c)


def _content(path: str | None) -> Content:
    def read(p: str) -> bytes:
        with open(p, "rb") as f:
            return f.read()

    if path is None or not os.path.exists(path):
        return ()
    if os.path.isdir(path):
        return tuple((name, read(os.path.join(path, name))) for name in sorted(os.listdir(path))
                     if name.endswith(".parquet"))
    return ((os.path.basename(path), read(path)),)


def ship(files: BucketFiles) -> ShippedBucket:
    """The content of one bucket's files (a ``partition.BucketFiles``)."""
    return ShippedBucket(int(files.index), tuple((name, _content(path)) for name, path in files.lanes),
                         _content(files.qrels), _content(files.ood) if files.ood is not None else None,
                         tuple(files.given))


_FINGERPRINT: list[str] = []


def kernel_fingerprint() -> str:
    """The first 12 hex digits of the sha256 over this kernel's source files (relative
    path and bytes of every ``*.py`` under ``rankscope_tui/kernel``, in path order): the
    code that computes the numbers, whatever its version string says. Once per process."""
    if not _FINGERPRINT:
        import hashlib
        from pathlib import Path

        root = Path(__file__).resolve().parent.parent  # the kernel, not only this room
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
        _FINGERPRINT.append(h.hexdigest()[:12])
    return _FINGERPRINT[0]


_CORPUS_FILES: dict[str, str] = {}  # sha256 of a corpus's bytes -> its file in this process


def _local_corpus(name: str, content: bytes) -> str:
    """The corpus file's bytes as a file of this worker process (once per content; removed
    when the process exits)."""
    import atexit
    import hashlib
    import shutil
    import tempfile

    key = hashlib.sha256(content).hexdigest()
    if key not in _CORPUS_FILES:
        d = tempfile.mkdtemp(prefix="rankscope-corpus-")
        atexit.register(shutil.rmtree, d, True)
        path = os.path.join(d, os.path.basename(name) or "corpus")
        with open(path, "wb") as f:
            f.write(content)
        _CORPUS_FILES[key] = path
    return _CORPUS_FILES[key]


def run_shipped(bucket: ShippedBucket, plan: BucketPlan, fingerprint: str | None = None,
                corpus: bytes | None = None) -> BucketResult:
    """``partition.bucket_task`` of a shipped bucket (what a worker runs): its files are
    written to a private temporary directory of the worker, read as the local engine reads
    them, and removed. ``fingerprint``: the driver's :func:`kernel_fingerprint`; a worker
    whose kernel differs refuses the task (its numbers could differ). ``corpus``: the
    bytes of ``plan.corpus`` (the one input file a bucket reads itself), sent once per
    run and kept by each worker process while it lives; an error reading it names the
    driver's path."""
    import shutil
    import tempfile
    from dataclasses import replace

    from .partition import BucketFiles, bucket_task

    if fingerprint is not None and fingerprint != kernel_fingerprint():
        raise DaskError(f"a Dask worker runs other rankscope code than the driver (kernel {kernel_fingerprint()}, "
                        f"the driver's {fingerprint}): install the driver's rankscope on the workers")
    local_corpus, plan_corpus = None, plan.corpus
    if plan.corpus is not None and corpus is not None:
        local_corpus = _local_corpus(plan.corpus, corpus)
        plan = replace(plan, corpus=local_corpus)
    root = tempfile.mkdtemp(prefix="rankscope-bucket-")
    try:
        def put(what: str, content: Content) -> str:
            d = os.path.join(root, what)  # a directory of parts (an empty one: no rows)
            os.mkdir(d)
            for name, data in content:
                with open(os.path.join(d, name), "wb") as f:
                    f.write(data)
            return d

        local = BucketFiles(bucket.index, tuple((name, put(f"lane{i}", c)) for i, (name, c) in enumerate(bucket.lanes)),
                            put("qrels", bucket.qrels), put("ood", bucket.ood) if bucket.ood is not None else None,
                            bucket.given)
        try:
            return bucket_task(local, plan)
        except InputError as exc:
            if local_corpus is None or plan_corpus is None or local_corpus not in str(exc):
                raise
            raise InputError(str(exc).replace(local_corpus, plan_corpus)) from None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def scheduler_address(scheduler: str | None) -> str:
    """The address ``--scheduler`` names, else Dask's configured ``scheduler-address``;
    neither is an error naming the option."""
    if scheduler is not None and scheduler.strip():
        return scheduler.strip()
    import dask

    configured = dask.config.get("scheduler-address", None)
    if configured:
        return str(configured)
    raise InputError("--engine dask needs --scheduler ADDRESS (a running dask.distributed scheduler, e.g. "
                     "tcp://host:8786, or its scheduler file); on one machine use --engine local", "--scheduler")


def in_flight(threads: int) -> int:
    """How many buckets are submitted at once: twice the cluster's worker threads (each
    has its next bucket waiting), at least 2 (a cluster still starting workers)."""
    return max(2, 2 * int(threads))


def run_dask(files: list[BucketFiles], plan: BucketPlan, scheduler: str | None,
             progress: Callable[[int, int], None] | None = None) -> list[BucketResult]:
    """The :class:`bucket.BucketResult` of every bucket of ``files`` (``partition.BucketFiles``),
    in the order of ``files``, computed on the Dask cluster at ``scheduler`` (see the module
    docstring). ``progress``: called with (buckets done, buckets) after each one."""
    address = scheduler_address(scheduler)
    with _quiet_distributed():
        client = _connect(address)
        try:
            return _run(client, list(files), plan, address, progress)
        finally:
            client.close()


def _connect(address: str) -> _Client:
    from distributed import Client

    try:
        if os.path.isfile(address):
            client = Client(scheduler_file=address, set_as_default=False)  # type: ignore[no-untyped-call]  # distributed leaves Client.__init__ unannotated
        else:
            client = Client(address, set_as_default=False)  # type: ignore[no-untyped-call]  # as above
    except (OSError, TimeoutError, ValueError) as exc:
        raise DaskError(f"cannot connect to the Dask scheduler at {address}: {_one_line(exc)}", "--scheduler") from None
    return cast("_Client", client)  # the members this module calls, with the types it relies on


def _has_rows(files: BucketFiles) -> bool:
    return any(os.path.exists(p) for p in [*(p for _, p in files.lanes), files.qrels, files.ood] if p)


def _run(client: _Client, files: list[BucketFiles], plan: BucketPlan, address: str,
         progress: Callable[[int, int], None] | None) -> list[BucketResult]:
    from distributed import as_completed

    from .partition import bucket_task

    fingerprint = kernel_fingerprint()
    token = uuid.uuid4().hex[:12]  # keys unique to this command: never another run's cached result
    results: dict[int, BucketResult] = {}
    for pos, f in enumerate(files):
        if not _has_rows(f):  # reads nothing: not worth a trip to the cluster
            results[pos] = bucket_task(f, plan)
    pending = [(pos, f) for pos, f in enumerate(files) if pos not in results][::-1]  # popped from the end
    running: dict[str, tuple[int, int, _Future]] = {}
    done: _Completed = as_completed(loop=client.loop)  # type: ignore[no-untyped-call]  # distributed leaves it unannotated
    corpus = None
    if plan.corpus is not None:  # one copy for the run; each worker fetches it once
        with open(plan.corpus, "rb") as fh, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ll]arge (graph|object).*")
            corpus = client.submit(_content_of, fh.read(), key=f"rankscope-corpus-{token}", pure=False)

    def submit_more() -> None:
        limit = in_flight(_threads(client))
        while pending and len(running) < limit:
            pos, f = pending.pop()
            payload = ship(f)
            with warnings.catch_warnings():  # a bucket is meant to travel with its task
                warnings.filterwarnings("ignore", message=".*[Ll]arge graph.*")
                warnings.filterwarnings("ignore", message=".*[Ll]arge object.*")
                fut = client.submit(run_shipped, payload, plan, fingerprint, corpus,
                                    key=f"rankscope-bucket-{f.index}-{token}", pure=False, retries=0)
            running[fut.key] = (pos, f.index, fut)
            done.add(fut)

    if progress is not None:
        progress(len(results), len(files))
    try:
        submit_more()
        for fut in done:
            pos, index, _ = running.pop(fut.key)
            if fut.status != "finished":
                raise _task_error(fut, index, len(files), address)
            try:
                results[pos] = fut.result()
            except Exception as exc:  # the result could not come back (a lost connection)
                raise _task_error(fut, index, len(files), address, exc) from None
            fut.release()
            if progress is not None:
                progress(len(results), len(files))
            submit_more()
    except BaseException:
        _cancel(client, running)
        raise
    return [results[i] for i in range(len(files))]


def _content_of(data: bytes) -> bytes:
    return data


def _threads(client: _Client) -> int:
    try:
        return sum(client.nthreads().values())
    except Exception:  # the scheduler is going away: the next result says why
        return 0


def _cancel(client: _Client, running: dict[str, tuple[int, int, _Future]]) -> None:
    try:
        client.cancel([fut for _, _, fut in running.values()], force=True)
    except Exception:  # a lost scheduler has nothing left to cancel
        pass


def _task_error(fut: _Future, index: int, n: int, address: str, exc: BaseException | None = None) -> InputError:
    """The one-line error of a bucket that did not come back: its own input error as it is
    (the in-memory path's words), anything else naming the bucket."""
    from distributed.scheduler import KilledWorker

    if exc is None:
        try:
            exc = fut.exception()
        except BaseException as e:  # a cancelled future raises instead of returning
            exc = e
    where = f"bucket {index} of {n} failed"
    if isinstance(exc, DaskError):
        return exc
    if isinstance(exc, InputError):
        return InputError(str(exc))
    if isinstance(exc, KilledWorker):
        return DaskError(f"{where}: the Dask worker running it was lost (killed, or out of memory) past the "
                         "cluster's retries (distributed.scheduler.allowed-failures); nothing was written")
    if fut.status == "cancelled" or exc is None or type(exc).__name__ in ("CancelledError", "FutureCancelledError"):
        return DaskError(f"{where}: lost the Dask scheduler at {address}; nothing was written")
    return DaskError(f"{where} on the Dask cluster: {type(exc).__name__}: {_one_line(exc)}; nothing was written")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


@contextmanager
def _quiet_distributed() -> Iterator[None]:
    """The client's own log lines (reconnect attempts, a lost scheduler) off stderr while it
    runs: the command says one line of its own when something fails."""
    loggers = [logging.getLogger(n) for n in ("distributed", "distributed.client", "distributed.core",
                                              "distributed.comm", "tornado")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
