"""Running independent pieces of one computation on the available CPUs.

Only work whose result does not depend on how it is split is run this way (hash
partitions of a factorization, row ranges of a resampling walk); numpy's sorts,
gathers and ufuncs, hashlib and ``random_raw`` release the GIL, so plain threads
share the cores. Every pool is joined before the call returns: no thread outlives it.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence, TypeVar

from .errors import InputError

T = TypeVar("T")

MAX_DEFAULT_THREADS = 4


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """``RANKSCOPE_THREADS`` if set (a positive integer), else min(available CPUs, 4)."""
    env = os.environ.get("RANKSCOPE_THREADS", "").strip()
    if env:
        if not env.isdigit() or int(env) < 1:
            raise InputError(f"must be a positive integer, got {env!r}", "RANKSCOPE_THREADS")
        return int(env)
    return min(available_cpus(), MAX_DEFAULT_THREADS)


def run_all(tasks: Sequence[Callable[[], T]], threads: int | None = None) -> list[T]:
    """Results of ``tasks`` in order, run on up to ``threads`` threads (default
    ``default_threads()``); the first exception raised by a task is re-raised."""
    threads = default_threads() if threads is None else threads
    if threads < 2 or len(tasks) < 2:
        return [t() for t in tasks]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(threads, len(tasks)), thread_name_prefix="rankscope") as pool:
        futures = [pool.submit(t) for t in tasks]
        return [f.result() for f in futures]


@contextmanager
def in_background(tasks: Sequence[Callable[[], object]]) -> Iterator[None]:
    """Run ``tasks`` one after another on one extra thread while the ``with`` body runs;
    the thread is joined when the body ends (normally or by an exception). With one
    CPU the tasks are skipped: whoever needs their results computes them then.
    Exceptions in tasks are dropped here (the caller meets them again on its own call)."""

    def each() -> None:
        for t in tasks:
            try:
                t()
            except Exception:  # noqa: BLE001 - see the docstring
                pass

    with started(each, background=bool(tasks)):  # its result is never asked for
        yield


@contextmanager
def started(task: Callable[[], T], background: bool = True) -> Iterator[Callable[[], T]]:
    """Start ``task`` on one extra thread (when ``background`` and there is a second
    CPU) and yield a function returning its result, waiting for it; else the task
    runs on that function's first call. The thread is joined when the body ends."""
    if not background or default_threads() < 2:
        done: list[T] = []

        def result() -> T:
            if not done:
                done.append(task())
            return done[0]

        yield result
        return
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankscope-bg")
    try:
        yield pool.submit(task).result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
