"""The loaded table every reader returns, and the rules every reader shares.

``RawLane`` (a run) and ``RawQrels`` hold string qid and doc columns (pyarrow), the
value column (float64 scores, int64 grades) and the 1-based source line of each row
(``RowLines`` when row i is line i + ``first``), so that later checks (duplicates,
conflicting grades) can still name a line. A lane name follows :func:`check_lane_name`.

The numeric column parsers read text as the TREC reader reads it: a score through
pyarrow's cast to float64, finite; a grade or rank as trec_eval's ``atoi`` reads a
well-formed decimal integer, fitting 32 bits. The first refused value is named by its
line (found by bisection with the same cast, so exactly what pyarrow refuses).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..errors import InputError, InputWarning
from .arrow import to_numpy
from .files import Digest, strip_compressed_suffix

#: the range of a grade or rank (trec_eval reads them with ``atoi`` into an int)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class RowLines:
    """Source lines of a file whose row i is line i + ``first`` (a clean run file, or
    one under a header line): indexes like the int64 array ``arange(first, first + n)``
    without holding it."""

    dtype = np.dtype(np.int64)

    def __init__(self, n: int, first: int = 1) -> None:
        self.n = int(n)
        self.first = int(first)

    def __len__(self) -> int:
        return self.n

    @property
    def shape(self) -> tuple[int]:
        return (self.n,)

    @property
    def size(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int | np.integer[Any]) -> np.int64: ...

    @overload
    def __getitem__(self, i: slice | npt.NDArray[Any]) -> npt.NDArray[np.int64]: ...

    def __getitem__(self, i: int | np.integer[Any] | slice | npt.NDArray[Any]) -> np.int64 | npt.NDArray[np.int64]:
        if isinstance(i, (int, np.integer)):
            j = int(i) + self.n if int(i) < 0 else int(i)
            if not 0 <= j < self.n:
                raise IndexError(i)
            return np.int64(j + self.first)
        out: npt.NDArray[np.int64] = np.asarray(self)[i]
        return out

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> npt.NDArray[Any]:
        return np.arange(self.first, self.first + self.n, dtype=dtype or np.int64)


#: the source line of each row: an int64 array, or a ``RowLines`` standing for one
Lines = Union[npt.NDArray[np.int64], RowLines]


@dataclass
class RawLane:
    """A lane as read: string qid and doc columns, float scores, source lines."""

    name: str
    path: str
    qid: pa.Array | pa.ChunkedArray  # pyarrow strings
    doc: pa.Array | pa.ChunkedArray  # pyarrow strings
    score: npt.NDArray[np.float64]
    line: Lines  # source line per row
    warnings: list[InputWarning] = field(default_factory=list)
    tag: str = ""
    digest: Digest | None = None  # sha256 of the file as stored (see Digest)
    shards: tuple[tuple[str, int], ...] = ()  # ((path, rows), ...) of a lane read from several files (readers.merge_shards)
    format: str = ""  # the format it was read as (formats.RUN_FORMATS)
    columns: dict[str, str] | None = None  # a table's columns read: {"query": .., "doc": .., "score"|"rank": ..}
    latency: dict[str, float] | None = None  # seconds per query of a run made by asking a retriever (inputs.retrieve)

    def sha256(self) -> str:
        return (self.digest or Digest(path=self.path)).hexdigest()


@dataclass
class RawQrels:
    """Qrels as read: string qid and doc columns, int64 grades, source lines."""

    path: str
    qid: pa.Array | pa.ChunkedArray
    doc: pa.Array | pa.ChunkedArray
    grade: npt.NDArray[np.int64]
    line: Lines
    warnings: list[InputWarning] = field(default_factory=list)
    digest: Digest | None = None
    format: str = ""  # the format it was read as (formats.QRELS_FORMATS)
    columns: dict[str, str] | None = None  # a table's columns read: {"query": .., "doc": .., "relevance": ..}
    origin: dict[str, str] | None = None  # qrels read by dataset id: the dataset and ir_datasets' version (inputs.irds)

    def sha256(self) -> str:
        return (self.digest or Digest(path=self.path)).hexdigest()


def lane_name_from_path(path: str) -> str:
    """``bm25.run.gz`` → ``bm25``: drop a compression suffix (``.gz``, ``.bz2``, ``.xz``,
    ``.zst``, ``.lz4``) and then one suffix."""
    base = strip_compressed_suffix(os.path.basename(path))
    stem, dot, _ = base.rpartition(".")
    return stem if dot and stem else base


def check_lane_name(name: str, where: str, hint: str = "name it with NAME=PATH") -> None:
    """A lane name is non-empty, without '.', '=', whitespace or control characters, and
    without '+': ``NAME+capN`` / ``NAME+docfirst`` are the variant lanes' names, so a lane
    called ``bm25+cap2`` would shadow one. A refused name's error ends with ``hint``."""
    if not name or any(c in name for c in ".=") or any(c.isspace() for c in name):
        raise InputError(f"lane name {name!r} must be non-empty and contain no '.', '=' or whitespace; {hint}", where)
    if "+" in name:
        raise InputError(f"lane name {name!r} must not contain '+' (reserved for variant lanes such as "
                         f"NAME+cap2); {hint}", where)
    if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in name):
        raise InputError(f"lane name {name!r} must not contain control characters; {hint}", where)


def file_lane_name(path: str, option: str = "--lane") -> str:
    """The one naming rule for a run or a per-query table given without ``NAME=`` (``--lane``,
    ``--per-query-in``, the API's paths): :func:`lane_name_from_path`, which must be a lane
    name (:func:`check_lane_name`). A file whose name gives none (``bm25.msmarco.tsv``,
    Pyserini's ``run.msmarco-passage.bm25.txt``: a '.' would split report paths such as
    ``lanes.bm25.doc.ndcg@10``) is refused, never renamed by a guess, and the error gives
    the ``NAME=PATH`` to write (``--lane bm25=bm25.msmarco.tsv``)."""
    name = lane_name_from_path(path)
    stem = re.split(r"[.=+\s]", name)[0]
    if not stem or any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in stem):
        stem = "NAME"
    check_lane_name(name, path, f"name it with NAME=PATH ({option} {stem}={shlex.quote(path)})")
    return name


# ---------------------------------------------------------------------------
# numeric columns read from text


def _first_failing(col: pa.Array | pa.ChunkedArray, convert: Callable[[Any], Any]) -> int:
    """Index of the first element of ``col`` that ``convert`` (a pyarrow cast) refuses,
    found by bisection with that same cast (so exactly what pyarrow refuses, not what
    Python's float()/int() happen to refuse). ``convert(col)`` is known to fail."""
    lo, hi = 0, len(col)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            convert(col.slice(lo, mid - lo))
            lo = mid
        except pa.ArrowException:  # invalid value or an unsupported conversion
            hi = mid
    return lo


def parse_float_col(col: pa.Array | pa.ChunkedArray, line: Lines, path: str, what: str) -> npt.NDArray[np.float64]:
    """A text column as finite float64 (pyarrow's cast); the first value refused, or not
    finite, is named with its line."""
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

    def convert(c: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
        return pc.cast(c, pa.float64())

    try:
        out: npt.NDArray[np.float64] = to_numpy(convert(col))
    except pa.ArrowException:  # invalid value or an unsupported conversion
        i = _first_failing(col, convert)
        raise InputError(f"{what} is not a number: {col[i].as_py()!r}", path, int(line[i])) from None
    finite = np.isfinite(out)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(f"{what} is not finite: {col[i].as_py()!r}", path, int(line[i]))
    return out


def parse_int_col(col: pa.Array | pa.ChunkedArray, line: Lines, path: str, what: str) -> npt.NDArray[np.int64]:
    """Decimal integers as trec_eval's atoi reads a well-formed one: optional sign, ASCII
    digits. pyarrow's cast alone would read '0x1' as hexadecimal and refuse '+1'."""
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which clean reads never need

    decimal = to_numpy(pc.match_substring_regex(col, r"^[+-]?[0-9]+$"))
    if not decimal.all():
        i = int(np.flatnonzero(~decimal)[0])
        raise InputError(f"{what} is not an integer: {col[i].as_py()!r}", path, int(line[i]))
    unsigned = pc.replace_substring_regex(col, r"^\+", "")

    def convert(c: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
        return pc.cast(c, pa.int64())

    try:
        out: npt.NDArray[np.int64] = to_numpy(convert(unsigned))
    except pa.ArrowException:  # invalid value, or beyond int64
        i = _first_failing(unsigned, convert)
        raise InputError(f"{what} out of range (must fit a 32-bit integer): {col[i].as_py()!r}", path,
                         int(line[i])) from None
    bad = (out < INT32_MIN) | (out > INT32_MAX)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what} out of range (must fit a 32-bit integer): {col[i].as_py()!r}", path, int(line[i]))
    return out
