"""pyarrow glue: numeric and string arrays to and from numpy without pandas.

pyarrow's own ``to_numpy`` and ``pa.array`` import pandas (a third of a second)
whenever pandas is installed; building arrays from buffers, and reading them, does
not. Every module that imports this one reads or builds pyarrow arrays, so pyarrow
itself is imported with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa


def to_numpy(arr: pa.Array | pa.ChunkedArray) -> npt.NDArray[Any]:
    """A null-free pyarrow numeric or boolean (chunked) array as a numpy array.

    pyarrow's own ``to_numpy`` imports pandas (a third of a second) whenever pandas is
    installed; reading the buffers does not.
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts: list[npt.NDArray[Any]] = []
    for c in chunks:
        if c.null_count:
            raise ValueError("array with nulls")
        t = c.type
        if pa.types.is_boolean(t):
            bits = np.frombuffer(c.buffers()[1], dtype=np.uint8)
            parts.append(np.unpackbits(bits, bitorder="little", count=c.offset + len(c))[c.offset:].astype(bool))
        elif pa.types.is_dictionary(t):
            parts.append(to_numpy(c.indices))
        else:
            dt = _numpy_dtype(t)
            parts.append(np.frombuffer(c.buffers()[1], dtype=dt, count=len(c), offset=c.offset * dt.itemsize))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        t = arr.type
        return np.zeros(0, dtype=bool if pa.types.is_boolean(t) else _numpy_dtype(t))
    return np.concatenate(parts)


def _numpy_dtype(t: pa.DataType) -> np.dtype[Any]:
    if pa.types.is_floating(t):
        return np.dtype(f"float{t.bit_width}")
    if pa.types.is_signed_integer(t):
        return np.dtype(f"int{t.bit_width}")
    if pa.types.is_unsigned_integer(t):
        return np.dtype(f"uint{t.bit_width}")
    raise TypeError(f"no numpy dtype for {t}")


def arrow_ints(values: npt.NDArray[np.integer[Any]]) -> pa.Array:
    """A numpy integer array as a pyarrow int64 array (``pa.array`` would import pandas)."""
    v = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), v.shape[0], [None, pa.py_buffer(v)])


def arrow_strings(items: Iterable[str]) -> pa.Array:
    """A list of str as a pyarrow string array (``pa.array`` would import pandas)."""
    enc = [x.encode("utf-8") for x in items]
    off = np.zeros(len(enc) + 1, dtype=np.int64)
    if enc:
        np.cumsum(np.fromiter((len(b) for b in enc), dtype=np.int64, count=len(enc)), out=off[1:])
    arr = pa.Array.from_buffers(pa.large_string(), len(enc), [None, pa.py_buffer(off), pa.py_buffer(b"".join(enc))])
    return arr.cast(pa.string()) if off[-1] < 2**31 else arr


def arrow_mask(mask: npt.NDArray[np.bool_]) -> pa.Array:
    """A numpy boolean array as a pyarrow boolean array (a filter mask)."""
    bits = np.packbits(np.ascontiguousarray(mask, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), mask.shape[0], [None, pa.py_buffer(bits)])


def string_lengths(arr: pa.Array) -> npt.NDArray[np.int64]:
    """Byte length of every string of a pyarrow (large_)string array, from its offsets."""
    odt = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) else np.int32
    off = np.frombuffer(arr.buffers()[1], dtype=odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    return np.diff(off).astype(np.int64)


def first_repeat(key: npt.NDArray[np.int64]) -> tuple[int, int] | None:
    """The earliest row whose ``key`` appeared before, with that first row: ``(first,
    second)`` positions, or None when every key is distinct (a stable sort keeps the first
    occurrence of each key ahead of its repeats)."""
    order = np.argsort(key, kind="stable")
    sk = key[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1])
    if not dup.size:
        return None
    seconds = order[dup + 1]
    j = int(np.argmin(seconds))
    return int(order[dup[j]]), int(seconds[j])
