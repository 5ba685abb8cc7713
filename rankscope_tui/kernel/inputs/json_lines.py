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
    line = np.asarray(lines, dtype=np.int64)
    if what == "run":
        return run_table(table, path, mapping, name=name, digest=digest, rows=line)
    return qrels_table(table, path, mapping, digest=digest, rows=line)


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
