"""JSON Lines rows (the shape of ``ir_datasets export ... --format jsonl``): one JSON
object per line, ``{"query_id": .., "doc_id": .., "score": ..}`` for a run and
``{"query_id": .., "doc_id": .., "relevance": ..}`` for qrels -- or any column
convention of ``columns`` (the first row's keys decide, every row must hold the same
three). Other keys (``iteration``) are ignored. Blank lines are skipped and counted.

Each line is parsed strictly (``files.load_json``: no NaN/Infinity, no key twice);
an id is a string or an integer (written in decimal, as in a TREC file); a score a
number; a relevance an integer. Every refusal names the file and line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, Literal, NoReturn, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..errors import InputError
from .arrow import arrow_strings
from .columns import qrels_table, run_table
from .files import Digest, as_finite_number
from .formats import ColumnMapping, resolve_columns
from .rows import INT32_MAX, INT32_MIN, RawLane, RawQrels


def _rows(text: str, path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) of every non-blank line, parsed strictly by one decoder (no
    NaN/Infinity, no key twice in an object), as ``files.load_json`` parses."""
    where = [0]

    def no_constants(name: str) -> NoReturn:
        raise InputError(f"{name} is not a JSON number", path, where[0])

    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen = set()
            for key, _ in pairs:
                if key in seen:
                    raise InputError(f"key {key!r} appears twice in one object"[:200], path, where[0])
                seen.add(key)
        return out

    dec = json.JSONDecoder(parse_constant=no_constants, object_pairs_hook=no_repeats)
    for no, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        where[0] = no
        try:
            obj = dec.decode(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path, no) from None
        except RecursionError:
            raise InputError("invalid JSON: nested too deeply", path, no) from None
        except ValueError as exc:  # e.g. an integer literal with more than 4300 digits
            raise InputError(f"invalid JSON: {exc}"[:300], path, no) from None
        if not isinstance(obj, dict):
            raise InputError(f"a JSON Lines row must be an object, not {type(obj).__name__}", path, no)
        yield no, obj


@overload
def read_json_lines(text: str, path: str, what: Literal["run"], columns: ColumnMapping | None, digest: Digest,
                    name: str | None = None) -> RawLane: ...


@overload
def read_json_lines(text: str, path: str, what: Literal["qrels"], columns: ColumnMapping | None, digest: Digest,
                    name: str | None = None) -> RawQrels: ...


def read_json_lines(text: str, path: str, what: str, columns: ColumnMapping | None, digest: Digest,
                    name: str | None = None) -> RawLane | RawQrels:
    """A run (``what`` = "run", a ``RawLane``) or qrels ("qrels", a ``RawQrels``) from
    JSON Lines text, through ``columns.run_table`` / ``qrels_table`` with each row's line."""
    fast = _fast_table(text, path, what, columns)
    table, mapping, line = fast if fast is not None else _strict_table(text, path, what, columns)
    if what == "run":
        return run_table(table, path, mapping, name=name, digest=digest, rows=line)
    return qrels_table(table, path, mapping, digest=digest, rows=line)


def _strict_table(text: str, path: str, what: str,
                  columns: ColumnMapping | None) -> tuple[pa.Table, ColumnMapping, npt.NDArray[np.int64]]:
    """(table of the three columns, their mapping, the line of each row), row by row:
    every refusal names its line."""
    rows = _rows(text, path)
    first = next(rows, None)
    if first is None:
        raise InputError("empty file (no rows)", path)
    r = resolve_columns(list(first[1]), columns, what, path)
    q: list[str] = []
    d: list[str] = []
    v: list[float] = []
    lines: list[int] = []
    for no, obj in [first, *rows]:
        for col in (r.query, r.doc, r.value):
            if col not in obj:
                raise InputError(f"row without the key {col!r}", path, no)
        q.append(_id(obj[r.query], r.query, path, no))
        d.append(_id(obj[r.doc], r.doc, path, no))
        v.append(_value(obj[r.value], r.value, r.kind, path, no))
        lines.append(no)
    kind = np.float64 if r.kind == "score" else np.int64
    values = np.asarray(v, dtype=kind)
    table = pa.table({r.query: arrow_strings(q), r.doc: arrow_strings(d),
                      r.value: pa.array(values)})
    mapping = ColumnMapping(query=r.query, doc=r.doc, **{r.kind: r.value})
    return table, mapping, np.asarray(lines, dtype=np.int64)


def _fast_table(text: str, path: str, what: str,
                columns: ColumnMapping | None) -> tuple[pa.Table, ColumnMapping, npt.NDArray[np.int64]] | None:
    """What :func:`_strict_table` gives, read by ``pyarrow.json`` (C++, threaded) with
    checks on whole columns after; None when anything would be refused or differ (the
    row-by-row reader then decides, naming the line).

    Taken only when every line starts with ``{`` (no blank, indented or BOM-led line)
    and pyarrow reads exactly one row a line, so row i is line i + 1 (pyarrow would
    read two objects on one line as two rows, and skips blank lines). pyarrow refuses
    a repeated key, as the strict reader does; it reads NaN and Infinity, a lone
    surrogate escape it refuses, and strings that look like dates it would read as
    timestamps, so the id columns are read as the first row's type (text, or a 64-bit
    integer written in decimal) and any other type, a null, a missing key, a non-finite
    score, a negative zero, or a grade off the integers or the 32-bit range takes the
    strict road."""
    import pyarrow.json as pj  # lazy: only JSON Lines needs it

    data = text.encode("utf-8")
    if not data.startswith(b"{"):
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = np.flatnonzero(buf == ord("\n")) + 1
    starts = starts[starts < buf.size]
    if not (buf[starts] == ord("{")).all():
        return None
    end = int(starts[0]) - 1 if starts.size else len(data)
    try:
        _, first = next(_rows(data[:end].decode("utf-8"), path))
        r = resolve_columns(list(first), columns, what, path)
    except (InputError, StopIteration):
        return None
    id_types: dict[str, pa.DataType] = {}
    for col in (r.query, r.doc):
        x = first.get(col)
        if type(x) is str:
            id_types[col] = pa.string()
        elif type(x) is int and -2**63 <= x < 2**63:
            id_types[col] = pa.int64()
        else:
            return None
    parse = pj.ParseOptions(explicit_schema=pa.schema(list(id_types.items())), unexpected_field_behavior="infer")
    try:
        got = pj.read_json(pa.BufferReader(data), parse_options=parse)
    except pa.ArrowException:  # any refusal of Arrow's reader (as trec._read_columns): the strict road names the line
        return None
    del data, buf
    if got.num_rows != starts.size + 1 or r.value not in got.column_names:
        return None
    cols = {c: got.column(c).combine_chunks() for c in (r.query, r.doc, r.value)}
    if any(c.null_count for c in cols.values()):
        return None
    ids = {c: cols[c].cast(pa.string()) for c in (r.query, r.doc)}  # an integer in decimal, as str(int)
    val = cols[r.value]
    if r.kind == "score":
        if not (pa.types.is_int64(val.type) or pa.types.is_float64(val.type)):
            return None
        scores = val.to_numpy(zero_copy_only=False).astype(np.float64)
        if not np.isfinite(scores).all():
            return None
        if pa.types.is_float64(val.type) and (np.signbit(scores) & (scores == 0)).any():
            # a double column reads the integer literal -0 as -0.0, where the strict
            # reader's int gives 0.0: which of the two a row wrote cannot be told here
            return None
        values: npt.NDArray[np.float64] | npt.NDArray[np.int64] = scores
    else:
        if pa.types.is_int64(val.type):
            grades = val.to_numpy(zero_copy_only=False)
        elif pa.types.is_float64(val.type):  # a grade written 2.0 reads as 2, as int(2.0)
            f = val.to_numpy(zero_copy_only=False)
            if not (np.isfinite(f) & (f == np.trunc(f)) & (f >= INT32_MIN) & (f <= INT32_MAX)).all():
                return None
            grades = f.astype(np.int64)
        else:
            return None
        if grades.size and (grades.min() < INT32_MIN or grades.max() > INT32_MAX):
            return None
        values = grades.astype(np.int64)
    table = pa.table({r.query: ids[r.query], r.doc: ids[r.doc], r.value: pa.array(values)})
    mapping = ColumnMapping(query=r.query, doc=r.doc, **{r.kind: r.value})
    return table, mapping, np.arange(1, got.num_rows + 1, dtype=np.int64)


def _id(x: object, col: str, path: str, no: int) -> str:
    if isinstance(x, str):
        if not x.isascii():
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(f"{col} {x!r} is not valid Unicode (a lone surrogate escape)"[:200], path,
                                 no) from None
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    raise InputError(f"{col} must be a string or an integer, not {x!r}"[:200], path, no)


def _value(x: object, col: str, kind: str, path: str, no: int) -> float:
    if kind == "score":
        if type(x) is float and math.isfinite(x):  # the common case, without a call
            return x
        return as_finite_number(x, f"score ({col})", path, no)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise InputError(f"{kind} ({col}) must be an integer, not {x!r}"[:200], path, no)
    if isinstance(x, float) and not x.is_integer():
        raise InputError(f"{kind} ({col}) is not an integer: {x!r}", path, no)
    if not INT32_MIN <= int(x) <= INT32_MAX:
        raise InputError(f"{kind} ({col}) out of range (must fit a 32-bit integer)", path, no)
    return int(x)
