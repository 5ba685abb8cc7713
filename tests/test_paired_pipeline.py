"""compare's paired walk on two threads (larger blocks; the rows of I shifted on the
drawing thread, ``walk_stream``'s ``drawn_rows``) changes no number: the paired and
unpaired replicates equal the protocol computed directly from fresh generators, bit for
bit, and every resampled number equals the one-thread walk's, for every thread count
and chunk."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rankscope_tui.kernel.statistics import paired as pa
from rankscope_tui.kernel.statistics import resampling as rs
from rankscope_tui.kernel.statistics.intervals import percentile_bounds


def _qids(n: int) -> list[str]:
    return [f"q{i:05d}" for i in range(n)]


def _protocol(b: np.ndarray, c: np.ndarray, B: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(paired replicates mean(d[I_b]), unpaired mean(c[J_b]) - mean(b[I_b])) with I, J the first
    and next B rows of a fresh ``default_rng(seed).integers(0, n, (2B, n))``."""
    n = b.size
    idx = np.random.default_rng(seed).integers(0, n, size=(2 * B, n))
    i, j = idx[:B], idx[B:]
    d = c - b
    paired = np.array([np.mean(d[r]) for r in i])
    unpaired = np.array([np.mean(c[rj]) for rj in j]) - np.array([np.mean(b[ri]) for ri in i])
    return paired, unpaired


@pytest.mark.parametrize("n", [2, 7, 301])
def test_replicates_equal_the_protocol_for_every_thread_count_and_chunk(n):
    rng = np.random.default_rng(n)
    b = rng.random(n)
    c = np.clip(b + rng.normal(0, 0.2, n), 0, 1)
    B, seed = 999, 17
    want_paired, want_unpaired = _protocol(b, c, B, seed)
    first = None
    for threads in (1, 2, 3):
        for chunk in (None, 1, 4):
            s = pa.paired_statistics(b, c, _qids(n), resamples=B, seed=seed, threads=threads, chunk=chunk)
            assert np.array_equal(s.replicates.view(np.int64), want_paired.view(np.int64)), (threads, chunk)
            numbers = (s.ci_low, s.ci_high, s.p_superiority, s.randomization_p, s.exceedances,
                       s.unpaired_ci_low, s.unpaired_ci_high, s.bca)
            if first is None:
                first = numbers
            assert numbers == first, (threads, chunk)
    # the unpaired interval is the one read off the protocol's unpaired replicates
    assert (first[5], first[6]) == percentile_bounds(want_unpaired, 0.95, "two-sided")


def test_pipelined_blocks_are_larger_than_one_threads():
    n = 10_000
    assert rs.block_rows(n, None, pa.PAIRED_PIPELINE_BLOCK_ELEMENTS) == 13 > rs.block_rows(n) == 6


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [1, 13])
def test_drawn_rows_limits_the_drawing_threads_share(threads, n):
    B, limit = 40, 20
    drawn, handed, where = [], [], set()

    def on_drawn(start, idx):
        where.add(threading.current_thread() is threading.main_thread())
        drawn.append(start)

    def on_indices(start, idx):
        handed.append((start, idx.copy()))

    rs.walk_stream(9, n, index_rows=B, on_indices=on_indices, on_indices_drawn=on_drawn, drawn_rows=limit,
                   chunk=3, threads=threads)
    assert where == {True}
    assert drawn == list(range(0, limit, 3))  # blocks starting before row 20: 0, 3, ..., 18
    assert [s for s, _ in handed] == list(range(0, B, 3))
    whole = np.concatenate([i for _, i in handed])
    want = np.zeros((B, 1), dtype=np.int64) if n == 1 else np.random.default_rng(9).integers(0, n, size=(B, n))
    assert np.array_equal(whole, want)
