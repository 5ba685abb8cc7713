"""Elementary functions whose last bit does not depend on the CPU the kernel runs on.

numpy picks the loop of ``power``, ``exp``, ``log1p``, ``log2`` and ``log`` by the CPU's
vector extensions: on a machine with AVX-512 (x86-64-v4) float64 ``power`` and ``exp``
come from vectorised approximations accurate to an ulp or so, elsewhere from the C library.
The same inputs then gave different last bits on two machines: ``0.8 ** 2`` differed, so
did RBP with p = 0.8 (2.4 % of the powers p^r for r < 3,000), and ``log2(1621)``, a
discount nDCG takes at rank 1,620. A result that is the same bytes for the same inputs
(SPEC: same inputs and seed, same bytes) may not depend on that.

The measures therefore take these functions from the C library, through Python's
``math`` module, which does not switch with the vector extensions:

* by table where the argument is an integer a ranking has (a rank, a count): the table
  holds ``f(i)`` for ``i = 0 .. max`` and grows on demand, so a value costs one lookup;
* element by element where the argument is a real number, on the few rows that need it
  (ERR's chance of reaching a relevant hit).

The C library's ``pow``, ``log2``, ``exp`` and ``log1p`` (glibc 2.28 and later) are within
0.52 ulp of the exact value, so these are also at least as close as numpy's dispatched loops.

References
----------
- NumPy 2.x documentation, "CPU/SIMD optimizations": runtime dispatch by CPU feature and
  ``NPY_DISABLE_CPU_FEATURES``, https://numpy.org/doc/stable/reference/simd/
- The GNU C Library manual, "Errors in Math Functions" (the ulp bounds of the C library's
  functions per architecture), https://www.gnu.org/software/libc/manual/
- Muller, J.-M. et al. (2018). Handbook of Floating-Point Arithmetic, 2nd ed. Birkhäuser.
  (why the last bit of an elementary function differs between implementations)
"""

from __future__ import annotations

import math
import threading
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

_lock = threading.Lock()
_tables: dict[tuple[str, float], NDArray[np.float64]] = {}


def _table(name: str, param: float, fn: Callable[[int], float], top: int) -> NDArray[np.float64]:
    """``fn(i)`` for i = 0 .. at least ``top``, grown by doubling so a growing depth pays
    O(top) calls once. Workers share the tables; a grown table replaces the old one whole."""
    key = (name, param)
    table = _tables.get(key)
    if table is not None and table.size > top:
        return table
    with _lock:
        table = _tables.get(key)
        have = 0 if table is None else table.size
        if have > top:
            return table  # type: ignore[return-value]
        size = max(top + 1, 2 * have, 64)
        grown = np.empty(size)
        if table is not None:
            grown[:have] = table
        grown[have:] = np.fromiter(map(fn, range(have, size)), dtype=np.float64, count=size - have)
        grown.flags.writeable = False
        _tables[key] = grown
        return grown


def _indices(x: ArrayLike) -> NDArray[np.int64]:
    """Non-negative integer arguments (ints, or floats holding integers) as int64 indices."""
    a = np.asarray(x)
    idx = a if a.dtype == np.int64 else a.astype(np.int64)
    if idx.size and int(idx.min()) < 0:
        raise ValueError("portable tables take non-negative integer arguments")
    return idx


def _lookup(name: str, param: float, fn: Callable[[int], float], x: ArrayLike) -> NDArray[np.float64]:
    idx = _indices(x)
    if idx.size == 0:
        return np.zeros(idx.shape)
    return _table(name, param, fn, int(idx.max()))[idx]


def _log2(i: int) -> float:
    return math.log2(i) if i > 0 else -math.inf


def _ln(i: int) -> float:
    return math.log(i) if i > 0 else -math.inf


def log2_int(x: ArrayLike) -> NDArray[np.float64]:
    """``log2(x)`` for non-negative integers x (log2(0) = -inf), the C library's value."""
    return _lookup("log2", 0.0, _log2, x)


def log_int(x: ArrayLike) -> NDArray[np.float64]:
    """``ln(x)`` for non-negative integers x (ln(0) = -inf), the C library's value."""
    return _lookup("ln", 0.0, _ln, x)


def power_int(p: float, e: ArrayLike) -> NDArray[np.float64]:
    """``p ** e`` for a real base p and non-negative integer exponents e (``math.pow``)."""
    base = float(p)
    return _lookup("pow", base, lambda i: math.pow(base, i), e)


def exp(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``exp(x)`` element by element (``math.exp``); for the few rows of a measure."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    return np.fromiter(map(math.exp, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


def log1p(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(1 + x)`` element by element (``math.log1p``; -inf at x = -1)."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    out = np.fromiter((math.log1p(v) if v > -1.0 else -math.inf for v in flat.tolist()), dtype=np.float64,
                      count=flat.size)
    return out.reshape(np.shape(x))
