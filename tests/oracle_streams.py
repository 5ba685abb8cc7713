"""Whole-matrix views of the resampling stream, for tests only.

The kernel never holds the (B, n) matrices: it walks the stream in blocks
(:func:`rankscope_tui.kernel.statistics.resampling.walk_stream`). The tests compare these
materialised matrices with ``numpy.random.default_rng(seed).integers`` directly.
"""

from __future__ import annotations

import numpy as np

from rankscope_tui.kernel.statistics.resampling import walk_stream


def bootstrap_indices(
    n: int, resamples: int, seed: int = 0, chunk: int | None = None, threads: int | None = 1
) -> np.ndarray:
    """The whole index matrix ``default_rng(seed).integers(0, n, size=(B, n))``.

    O(B·n) memory: for tests only, never for the kernel's own work.
    """
    out = np.empty((resamples, n), dtype=np.int64)

    def keep(start: int, idx: np.ndarray) -> None:
        out[start : start + idx.shape[0]] = idx

    walk_stream(seed, n, index_rows=resamples, on_indices=keep, chunk=chunk, threads=threads)
    return out


def sign_flips(n: int, resamples: int, seed: int = 0, chunk: int | None = None, threads: int | None = 1) -> np.ndarray:
    """The whole sign matrix ``1 - 2 * default_rng(seed).integers(0, 2, size=(B, n))`` as int8 (tests only)."""
    out = np.empty((resamples, n), dtype=np.int8)

    def keep(start: int, flipped: np.ndarray) -> None:
        out[start : start + flipped.shape[0]] = 1 - 2 * flipped.astype(np.int8)

    walk_stream(seed, n, flip_rows=resamples, on_flips=keep, chunk=chunk, threads=threads)
    return out
