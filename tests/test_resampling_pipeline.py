"""The bootstrap pipeline's share of work on the drawing thread (``walk_stream``'s
``on_indices_drawn``) and its larger blocks change no number: replicates equal the
protocol computed directly (``default_rng(seed).integers(0, n, (B, n))`` and ``np.mean``
of each gathered row), bit for bit, for every thread count, chunk and column count."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rankscope_tui.kernel.statistics import resampling as rs


def _protocol(values: np.ndarray, B: int, seed: int) -> np.ndarray:
    n, m = values.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    cols = [np.ascontiguousarray(values[:, j]) for j in range(m)]
    return np.array([[np.mean(c[idx[b]]) for c in cols] for b in range(B)]).reshape(B, m)


@pytest.mark.parametrize("n", [1, 2, 7, 301])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 6, 9])
def test_replicates_equal_the_protocol_for_every_thread_count(n, m):
    values = np.random.default_rng(n * 10 + m).random((n, m))
    want = _protocol(values, 203, seed=11)
    for threads in (1, 2, 3):
        for chunk in (None, 1, 5):
            got = rs.bootstrap_means(values, 203, seed=11, threads=threads, chunk=chunk)
            assert got.shape == want.shape
            assert np.array_equal(got.view(np.int64), want.view(np.int64)), (threads, chunk)


def test_pipeline_blocks_are_larger_and_change_nothing():
    n = 997  # odd: blocks hold an even number of rows
    values = np.random.default_rng(3).random((n, 4))
    assert rs.block_rows(n, None, rs.PIPELINE_BLOCK_ELEMENTS) > rs.block_rows(n)
    one = rs.bootstrap_means(values, 1500, seed=5, threads=1)
    two = rs.bootstrap_means(values, 1500, seed=5, threads=2)
    assert np.array_equal(one.view(np.int64), two.view(np.int64))


@pytest.mark.parametrize("threads", [1, 2])
def test_on_indices_drawn_sees_every_block_first_on_the_calling_thread(threads):
    n, B = 13, 40
    drawn, handed, where = [], [], set()

    def on_drawn(start, idx):
        where.add(threading.current_thread() is threading.main_thread())
        drawn.append((start, idx.copy()))

    def on_indices(start, idx):
        handed.append((start, idx.copy()))

    rs.walk_stream(9, n, index_rows=B, on_indices=on_indices, on_indices_drawn=on_drawn, chunk=3, threads=threads)
    assert where == {True}
    assert [s for s, _ in drawn] == [s for s, _ in handed] == list(range(0, B, 3))
    for (_, a), (_, b) in zip(drawn, handed):
        assert np.array_equal(a, b)
    whole = np.concatenate([b for _, b in handed])
    assert np.array_equal(whole, np.random.default_rng(9).integers(0, n, size=(B, n)))


def test_an_error_on_the_drawing_thread_reaches_the_caller():
    def boom(start, idx):
        raise RuntimeError("drawn")

    with pytest.raises(RuntimeError, match="drawn"):
        rs.walk_stream(0, 50, index_rows=100, on_indices=lambda s, i: None, on_indices_drawn=boom, chunk=3, threads=2)
