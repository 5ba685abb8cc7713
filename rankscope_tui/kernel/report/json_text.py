"""Strict JSON text with a two-space indent: orjson's writer where its text is
``json.dumps``'s (:func:`_orjson_text`), else column by column.

:func:`dumps` returns exactly the text of ``json.dumps(obj, indent=2, ensure_ascii=False,
allow_nan=False)``. The standard library writes indented JSON with its pure-Python
encoder, one generator step per value; a report's per-query block (a dict of thousands
of dicts with the same keys) then costs most of the time of writing report.json. Here a
container whose values are all scalars is formatted a column at a time (``float.__repr__``,
``int.__repr__`` and the C string escaper mapped over a list -- the very functions
``json`` calls per value), and a dict or list of dicts that share one key order is filled
into one row template.

Only exact ``dict``, ``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool`` and
``None`` with string keys take this road. Anything else (a subclass, a non-string key,
a non-finite float, a cycle) hands the whole object to ``json.dumps``, so what that
gives -- text or error -- is what the caller gets.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from itertools import chain, repeat
from json.encoder import encode_basestring  # the C escaper when available (ensure_ascii=False)
from operator import itemgetter
from typing import Any, Iterable, Sequence

_FREPR = float.__repr__
_IREPR = int.__repr__
_ESC = encode_basestring
_ISFINITE = math.isfinite
_CONSTANTS = {None: "null", True: "true", False: "false"}
_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))
_JOIN_KEY = ": "
_NEG_ZERO = array("d", [-0.0]).tobytes()
#: Items of one container formatted (and joined) at a time.
ROWS_PER_PIECE = 8192


class _Fallback(Exception):
    """The object holds something only ``json.dumps`` may decide about."""


def dumps(obj: object) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)``, the same text."""
    return "".join(dumps_parts(obj))


def dumps_parts(obj: object) -> list[str]:
    """The text of :func:`dumps` as pieces to be written in order. orjson's road gives one
    piece (its bytes and their decoded text are both held while decoding: twice the
    text, briefly). The column writer's pieces are never joined (a report of a million
    queries is hundreds of MB of text, held once): a container of many items is
    formatted ``ROWS_PER_PIECE`` items at a time, so no list of one string per value of
    a whole column is held either."""
    fast = _orjson_text(obj)
    if fast is not None:
        return [fast]
    try:
        out: list[str] = []
        _value(obj, 0, out, set())
        return out
    except (_Fallback, RecursionError):
        return [json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)]


_CONTAINERS = (dict, list, tuple)
_PLAIN_TYPES = frozenset((dict, list, tuple, str, int, float, bool, type(None)))


def _orjson_text(obj: object) -> str | None:
    """The text of :func:`dumps` by orjson (its C writer, about ten times this module's
    speed), or None when orjson could write other text than ``json.dumps``.

    Its indented text is ``json.dumps``'s -- the same two-space layout, ``": "`` and
    ``","`` separators, empty containers as ``{}`` and ``[]``, keys in dict order, the
    same escapes with ``ensure_ascii=False`` -- with three differences, each kept off
    this road: it writes NaN and Infinity as ``null`` (so every float is checked finite
    first, by :func:`_plain`); it writes some floats below 1e-4 another way than
    ``repr`` (``0.00001`` for ``1e-05``, ``1e-7`` for ``1e-07``), the only floats whose
    text differs (both write the shortest digits that read back as the float), so
    those tokens are rewritten as ``repr`` writes them (:func:`_small_floats_as_repr`);
    and it writes Enum,
    UUID, dataclass and date values that ``json.dumps`` refuses, so only the exact
    types :func:`_plain` accepts take it. An integer beyond 64 bits, a lone surrogate
    or nesting beyond its depth it refuses, and the column writer then decides."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; the column writer serves without it
        return None
    if not _plain(obj):
        return None
    try:
        out = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
    except (TypeError, orjson.JSONEncodeError):
        return None
    if b"e-" in out or b"0.0000" in out:  # maybe a float below 1e-4: written as repr writes it
        out = _small_floats_as_repr(out)
    return out.decode("utf-8")


_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _small_floats_as_repr(out: bytes) -> bytes:
    """orjson's indented text with each number token holding ``e-`` or ``0.0000`` written
    as ``repr`` writes its float (both write the shortest digits that read back as that
    float, so ``repr(float(token))`` is the text ``json.dumps`` gives it).

    A token runs from the space before it (after ``": "`` or the indent) to the line
    break after it (less a comma) and is all number: a string never holds a raw line
    break, so a run of text inside a string that reaches one also holds the string's
    closing quote, and is no number."""
    hits: set[int] = set()
    for needle in (b"e-", b"0.0000"):
        k = out.find(needle)
        while k != -1:
            hits.add(k)
            k = out.find(needle, k + 1)
    pieces: list[bytes] = []
    last = 0
    for k in sorted(hits):
        if k < last:
            continue
        start = out.rfind(b" ", 0, k) + 1
        end = out.find(b"\n", k)
        if end == -1:
            end = len(out)
        if out[end - 1:end] == b",":
            end -= 1
        token = out[start:end]
        if start < last or not _NUMBER.fullmatch(token):
            continue
        pieces += [out[last:start], _FREPR(float(token)).encode("ascii")]
        last = end
    pieces.append(out[last:])
    return b"".join(pieces)


def _plain(obj: object) -> bool:
    """Whether ``obj`` holds only exact ``dict`` (string keys), ``list``, ``tuple``,
    ``str``, ``int``, finite ``float``, ``bool`` and ``None``, each container met once
    (a shared or cyclic one is left to the column writer and ``json.dumps``). Checked a
    level at a time: the values of every container of one depth in one list, so a
    report's per-query block costs a few passes of C loops, not a call per query."""
    if type(obj) not in _CONTAINERS:
        return type(obj) in _PLAIN_TYPES and (type(obj) is not float or _ISFINITE(obj))
    seen: set[int] = set()
    level: list[Any] = [obj]
    while level:
        ids = set(map(id, level))
        if len(ids) != len(level) or not seen.isdisjoint(ids):
            return False
        seen |= ids
        dicts = [c for c in level if type(c) is dict]
        seqs = [c for c in level if type(c) is not dict] if len(dicts) < len(level) else []
        if dicts and not set(map(type, chain.from_iterable(dicts))) <= {str}:
            return False
        vals = list(chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(seqs)))
        types = set(map(type, vals))
        if not types <= _PLAIN_TYPES:
            return False
        if float in types:
            floats = vals if len(types) == 1 else [v for v in vals if type(v) is float]
            if not all(map(_ISFINITE, floats)):
                return False
        level = [v for v in vals if type(v) in _CONTAINERS] if types & {dict, list, tuple} else []
    return True


def _scalar(v: Any) -> str:  # dispatched on its exact type, as json.dumps does
    t = type(v)
    if t is str:
        return _ESC(v)
    if t is float:
        if not _ISFINITE(v):
            raise _Fallback
        return _FREPR(v)
    if t is int:
        return _IREPR(v)
    if t is bool or v is None:
        return _CONSTANTS[v]
    raise _Fallback


def _floats(vals: Sequence[float]) -> list[str]:
    """``float.__repr__`` of each finite float, each distinct value formatted once (a
    per-query column holds few: p@10 is k/10). -0.0 equals 0.0 as a dict key but prints
    differently, so a column holding a negative zero is formatted value by value."""
    if not all(map(_ISFINITE, vals)):
        raise _Fallback
    if len(vals) < 64 or _NEG_ZERO in array("d", vals).tobytes():
        return list(map(_FREPR, vals))
    if len(set(vals[:256])) > 128:  # many distinct values (nDCG, RR): no lookup table
        return list(map(_FREPR, vals))
    distinct = list(dict.fromkeys(vals))
    if len(distinct) * 2 > len(vals):
        return list(map(_FREPR, vals))
    return list(map(dict(zip(distinct, map(_FREPR, distinct))).__getitem__, vals))


def _column(vals: Sequence[Any]) -> list[str] | None:
    """Every value's text when all are scalars, else None (a container among them)."""
    types = set(map(type, vals))
    if len(types) == 1:
        t = next(iter(types))
        if t is float:
            return _floats(vals)
        if t is int:
            return list(map(_IREPR, vals))
        if t is str:
            return list(map(_ESC, vals))
    if types <= _SCALAR_TYPES:
        return [_scalar(v) for v in vals]
    return None


def _rows(vals: list[Any], level: int) -> list[Iterable[str]] | None:
    """The pieces of each value, row after row, when all values are non-empty dicts with
    one key order and scalar values (a table's rows), each indented as a value at
    ``level``: ``[head, v1, mid1, v2, ..., vN, end]`` repeated; else None."""
    if not vals or set(map(type, vals)) != {dict}:
        return None
    keys = tuple(vals[0])
    if not keys or len(set(map(tuple, vals))) != 1 or set(map(type, keys)) != {str}:
        return None
    cols: list[Sequence[Any]]
    if len(keys) == 1:
        cols = [[v[keys[0]] for v in vals]]
    else:
        cols = list(zip(*map(itemgetter(*keys), vals)))
    inner = "\n" + "  " * (level + 1)
    parts: list[Iterable[str]] = []
    for i, (key, col) in enumerate(zip(keys, cols)):
        text = _column(col)
        if text is None:
            return None
        parts.append(repeat(("{" if i == 0 else ",") + inner + _ESC(key) + _JOIN_KEY))
        parts.append(text)
    parts.append(repeat("\n" + "  " * level + "}"))
    return parts


def _table(vals: list[Any], keys: list[str] | None, level: int, open_: str, close: str, out: list[str]) -> bool:
    """A container whose items are all scalars or all rows (:func:`_rows`), appended to
    ``out`` ``ROWS_PER_PIECE`` items a piece: each piece is each item's head (separator,
    key) and text, joined row by row. False, with ``out`` as it was, when a piece holds
    anything else (the caller then walks the container item by item). Each piece's items
    are formatted exactly as alone, so pieces that take different roads join to the same text."""
    start = len(out)
    step = ROWS_PER_PIECE
    nl = "\n" + "  " * (level + 1)
    for i in range(0, len(vals), step):
        part = vals[i:i + step]
        texts = _column(part)
        columns: list[Iterable[str]] | None = [texts] if texts is not None else _rows(part, level + 1)
        if columns is None:
            del out[start:]
            return False
        # each item: its separator, [its escaped key, ": "], its text (the columns hold one
        # finite list per item, so zip stops with the items)
        seps = chain(((open_ if i == 0 else ",") + nl,), repeat("," + nl))
        if keys is None:
            items = zip(seps, *columns)
        else:
            items = zip(seps, map(_ESC, keys[i:i + step]), repeat(_JOIN_KEY), *columns)
        out.append("".join(chain.from_iterable(items)))
    out.append("\n" + "  " * level + close)
    return True


def _value(o: Any, level: int, out: list[str], path: set[int]) -> None:  # dispatched on its exact type
    t = type(o)
    if t is dict:
        _dict(o, level, out, path)
    elif t is list or t is tuple:
        _list(o, level, out, path)
    else:
        out.append(_scalar(o))


def _dict(d: dict[Any, Any], level: int, out: list[str], path: set[int]) -> None:
    if not d:
        out.append("{}")
        return
    keys = list(d)
    if set(map(type, keys)) != {str}:
        raise _Fallback
    vals = list(d.values())
    nl = "\n" + "  " * (level + 1)
    if _table(vals, keys, level, "{", "}", out):
        return
    if id(d) in path:
        raise _Fallback  # a cycle: json.dumps says so
    path.add(id(d))
    sep = "{" + nl
    for k, v in zip(keys, vals):
        out.append(sep + _ESC(k) + _JOIN_KEY)
        sep = "," + nl
        _value(v, level + 1, out, path)
    out.append("\n" + "  " * level + "}")
    path.discard(id(d))


def _list(seq: list[Any] | tuple[Any, ...], level: int, out: list[str], path: set[int]) -> None:
    if not seq:
        out.append("[]")
        return
    vals = list(seq)
    nl = "\n" + "  " * (level + 1)
    if _table(vals, None, level, "[", "]", out):
        return
    if id(seq) in path:
        raise _Fallback
    path.add(id(seq))
    sep = "[" + nl
    for v in vals:
        out.append(sep)
        sep = "," + nl
        _value(v, level + 1, out, path)
    out.append("\n" + "  " * level + "]")
    path.discard(id(seq))
