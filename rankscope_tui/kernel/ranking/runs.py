"""Runs of rows as index arrays, from numpy calls that release the interpreter lock.

``np.repeat`` with a count per value holds the interpreter lock for its whole call: at 7M
run lines one call froze the dashboard's event loop for 0.36 s while its worker loaded
the inputs. The same arrays come from a running sum (``np.cumsum`` with ``out=``) over
a mostly-constant step array, which numpy computes without the lock, and are no slower.
Both functions equal their ``np.repeat`` spelling exactly (tests/test_encoding.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def gather_index(start: NDArray[np.int64], ln: NDArray[np.int64], new_off: NDArray[np.int64],
                  total: int) -> NDArray[np.int64]:
    """``np.repeat(start - new_off[:-1], ln) + np.arange(total)``: for each byte of the rows
    laid end to end (row r at ``new_off[r]``), its place in the source buffer (row r from
    ``start[r]``). As the running sum of steps: 1 within a row, the jump to the next row's
    start at its first byte. ``np.repeat`` holds the interpreter lock for its whole call
    (0.36 s at 7M ids, the dashboard's event loop frozen meanwhile); these calls do not."""
    step = np.ones(total, dtype=np.int64)
    nz = np.flatnonzero(ln)
    if nz.size:
        s = start[nz]
        step[0] = s[0]  # the rows before the first non-empty one lay down no byte
        step[new_off[nz[1:]]] = s[1:] - (s[:-1] + ln[nz[:-1]]) + 1
    return np.cumsum(step, out=step)


def spread_runs(values: NDArray[np.int32], run_start: NDArray[np.int64], n: int) -> NDArray[np.int32]:
    """``np.repeat(values, np.diff(np.r_[run_start, n]))`` for runs that tile ``0..n``
    (``run_start[0] == 0``, each run at least one row), as the running sum of the value's
    change at each run's first row: the calls release the interpreter lock (:func:`gather_index`)."""
    out = np.zeros(n, dtype=np.int32)
    out[0] = values[0]
    out[run_start[1:]] = np.diff(values)
    return np.cumsum(out, dtype=np.int32, out=out)


def running_count(x: NDArray[Any]) -> NDArray[np.int64]:
    """``np.cumsum(x, dtype=np.int64)`` for booleans or integers: the cast first, then the
    running sum in place. A running sum that casts on the way holds the interpreter lock
    (0.3 s over 9M fresh booleans, most of it page faults); these two calls do not."""
    out = np.asarray(x).astype(np.int64)
    return np.cumsum(out, out=out)
