"""The JSON input form ``{qid: {docid: value}}`` (SPEC §2), flattened to pairs.

A scanner, not ``json.loads``: every (qid, doc) pair is read with the line of its doc
key. A repeated key is refused naming both lines -- a qid key twice in the file, or a
doc key twice in one query's object -- where ``json.loads`` (and pytrec_eval,
ir_measures, ranx after it) would keep the last silently, as the same doc twice in
one query of a TREC run is refused. Values are decoded by the standard
decoder, so numbers read exactly as ``json.loads`` reads them. A score must be a
finite number; a grade an integer that fits 32 bits (as trec_eval's ``atoi`` reads a
well-formed one).
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Generator, Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .rows import INT32_MAX, INT32_MIN

#: (qids, docs, values, lines) of every pair, in file order (values and lines: lists, or
#: numpy arrays from the C decoder's road)
Pairs = tuple[list[str], list[str], Sequence[float] | npt.NDArray[np.float64] | npt.NDArray[np.int64],
              Sequence[int] | npt.NDArray[np.int64]]
#: a key of an object: (key, its line, where its value starts, where its value ends)
Key = tuple[str, int, int, int]
#: yields (key, key position, position after the colon); sent the end of each value; returns the end of the object
Members = Generator[tuple[str, int, int], int, int]


class _JsonPairs:
    """A scanner for ``{qid: {docid: value}}`` that keeps every pair, repeats included
    (``json.loads`` keeps only the last of two equal keys), with the line of each.

    Values are decoded by the standard decoder (``raw_decode``), so numbers, NaN and
    Infinity read exactly as ``json.loads`` reads them."""

    _WS = " \t\n\r"

    def __init__(self, text: str, path: str, what: str) -> None:
        self.text, self.path, self.what = text, path, what
        self.dec = json.JSONDecoder()
        self._nl: list[int] | None = None

    def line(self, pos: int) -> int:
        if self._nl is None:
            self._nl = [m.start() for m in re.finditer("\n", self.text)]
        return bisect.bisect_left(self._nl, pos) + 1

    def fail(self, msg: str, pos: int) -> NoReturn:
        raise InputError(msg, self.path, self.line(pos))

    def ws(self, i: int) -> int:
        t, n = self.text, len(self.text)
        while i < n and t[i] in self._WS:
            i += 1
        return i

    def value(self, i: int) -> tuple[Any, int]:
        try:
            return self.dec.raw_decode(self.text, i)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", self.path, exc.lineno) from None
        except RecursionError:
            self.fail("invalid JSON: nested too deeply", i)
        except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
            self.fail(f"invalid JSON: {exc}", i)

    def expect(self, i: int, ch: str) -> int:
        i = self.ws(i)
        if self.text[i:i + 1] != ch:
            if i >= len(self.text):
                self.fail(f"invalid JSON: expected {ch!r}, found the end of the file", i)
            self.fail(f"invalid JSON: expected {ch!r}", i)
        return i + 1

    def key(self, i: int) -> tuple[str, int, int]:
        i = self.ws(i)
        if self.text[i:i + 1] != '"':
            self.fail("invalid JSON: expecting a property name in double quotes", i)
        k, end = self.value(i)
        try:
            k.encode("utf-8")
        except UnicodeEncodeError:
            self.fail(f"invalid JSON: the key {k!r} is not valid Unicode (a lone surrogate escape)", i)
        return k, i, end

    def members(self, i: int) -> Members:
        """Yield (key, key position, position after the colon) of an object opened before i;
        the caller consumes each value and returns its end position via ``send``."""
        i = self.ws(i)
        if self.text[i:i + 1] == "}":
            return i + 1
        while True:
            k, kpos, i = self.key(i)
            i = self.expect(i, ":")
            i = yield k, kpos, i
            i = self.ws(i)
            c = self.text[i:i + 1]
            if c == ",":
                i += 1
            elif c == "}":
                return i + 1
            else:
                self.fail("invalid JSON: expecting ',' delimiter", i)

    def parse(self) -> Pairs:
        i = self.ws(0)
        qids, docs, vals, lines, i = self.parse_object(i)
        i = self.ws(i)
        if i < len(self.text):
            self.fail("invalid JSON: extra data after the object", i)
        if not qids:
            raise InputError("empty file (no query holds any doc)", self.path)
        return qids, docs, vals, lines

    def parse_object(self, i: int) -> tuple[list[str], list[str], list[float], list[int], int]:
        """The ``{qid: {docid: value}}`` object at ``i``: (qids, docs, values, lines, end);
        a grade is held as an int (``what`` = "grade"), a score as a float."""
        what, t = self.what, self.text
        qids: list[str] = []
        docs: list[str] = []
        vals: list[float] = []
        lines: list[int] = []
        if t[i:i + 1] != "{":
            if t[i:i + 1] == "[":
                self.value(i)  # a syntax error inside still reads as one
            self.fail("JSON must be an object {qid: {docid: " + what + "}}", i)
        outer = self.members(i + 1)
        seen_q: dict[str, int] = {}
        try:
            q, qpos, j = next(outer)
            while True:
                qline = self.line(qpos)
                if q in seen_q:
                    raise InputError(f"query {q!r} appears twice as a key (first at line {seen_q[q]}); "
                                     "give each query one object", self.path, qline)
                seen_q[q] = qline
                seen_d: dict[str, int] = {}
                j = self.ws(j)
                if t[j:j + 1] != "{":
                    self.value(j)
                    self.fail(f"JSON value for query {q!r} must be an object {{docid: {what}}}", j)
                inner = self.members(j + 1)
                try:
                    d, dpos, k = next(inner)
                    while True:
                        k = self.ws(k)
                        v, end = self.value(k)
                        self._check(q, d, v, k)
                        dline = self.line(dpos)
                        if d in seen_d:
                            raise InputError(f"doc {d!r} appears twice in query {q!r} (first at line {seen_d[d]})",
                                             self.path, dline)
                        seen_d[d] = dline
                        qids.append(q)
                        docs.append(d)
                        vals.append(float(v) if what == "score" else int(v))
                        lines.append(dline)
                        d, dpos, k = inner.send(end)
                except StopIteration as stop:
                    j = stop.value
                q, qpos, j = outer.send(j)
        except StopIteration as stop:
            i = stop.value
        return qids, docs, vals, lines, i

    def keys_at(self, i: int, skip: bool = True) -> tuple[list[Key], int]:
        """(key, line, position of its value, end of its value) of the object at ``i``; a
        repeated key is an error naming both lines."""
        if self.text[i:i + 1] != "{":
            self.fail("expected a JSON object", i)
        out: list[Key] = []
        seen: dict[str, int] = {}
        gen = self.members(i + 1)
        try:
            k, kpos, j = next(gen)
            while True:
                line = self.line(kpos)
                if k in seen:
                    raise InputError(f"key {k!r} appears twice in one object (first at line {seen[k]})"[:300],
                                     self.path, line)
                seen[k] = line
                j = self.ws(j)
                _, end = self.value(j)
                out.append((k, line, j, end))
                k, kpos, j = gen.send(end)
        except StopIteration as stop:
            return out, stop.value

    def _check(self, q: str, d: str, v: object, pos: int) -> None:
        what = self.what
        if not q or not d:  # a TREC line cannot hold an empty id, and a CSV row would show an empty cell
            self.fail(f"query {q!r}, doc {d!r}: an id may not be empty", pos)
        if "\n" in q or "\r" in q or "\n" in d or "\r" in d:
            # a TREC line cannot hold one; in printed tables, CSV rows and terminals it would
            # split a line, so an id from JSON may not either
            self.fail(f"query {q!r}, doc {d!r}: an id may not contain a line break", pos)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(f"{what} for query {q!r}, doc {d!r} is not a number: {v!r}", pos)
        if what == "score":
            try:
                finite = math.isfinite(v) and math.isfinite(float(v))
            except OverflowError:  # an integer literal beyond the float range
                finite = False
            if not finite:
                self.fail(f"score for query {q!r}, doc {d!r} is not finite", pos)
        else:
            if isinstance(v, float) and not v.is_integer():
                self.fail(f"grade for query {q!r}, doc {d!r} is not an integer: {v!r}", pos)
            if not INT32_MIN <= int(v) <= INT32_MAX:
                self.fail(f"grade for query {q!r}, doc {d!r} out of range (must fit a 32-bit integer)", pos)


def json_pairs(text: str, path: str, what: str) -> Pairs:
    """Flatten ``{qid: {docid: value}}``; ``what`` is 'score' (finite number) or 'grade' (integer).

    Every pair is read with the line of its doc key; a repeated qid key, or a doc key
    repeated inside one query's object, is an error naming both lines.

    The C decoder reads the file first (:func:`_fast_pairs`); the scanner reads it
    only when that road is not sure -- anything to refuse, or a shape it does not
    take -- so every refusal is the scanner's, word for word.
    """
    fast = _fast_pairs(text, what)
    if fast is not None:
        return fast
    return _JsonPairs(text, path, what).parse()


class _Object(list[tuple[str, Any]]):
    """A JSON object's (key, value) pairs in file order, repeats kept: the pairs hook's
    result, told apart from a JSON array (a plain ``list``)."""

    __slots__ = ()


def _decoded(text: str) -> tuple[list[str], list[int], list[str], list[Any]] | None:
    """(qid keys, docs per query, doc keys, values) of ``{qid: {docid: value}}`` in file
    order by a C decoder, or None when the text is not that shape or holds a repeated key.

    orjson when installed (about five times the speed of ``json``): it keeps the last
    of two equal keys, which :func:`_key_lines` then sees (the text holds more keys than
    the objects). It refuses NaN and Infinity, which are refused here anyway; its
    numbers are correctly rounded doubles, as ``float()`` of the literal (an integer
    beyond 64 bits comes as its nearest double, which is all a score keeps of it and
    out of a grade's range either way). Without orjson, ``json`` with a pairs hook that
    keeps every pair."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib is the fallback
        return _decoded_stdlib(text)
    try:
        top = orjson.loads(text)
    except (orjson.JSONDecodeError, RecursionError, UnicodeEncodeError):
        return None
    if type(top) is not dict or not top:
        return None
    inners = list(top.values())
    if any(type(inner) is not dict for inner in inners):
        return None
    counts = list(map(len, inners))
    return list(top), counts, list(chain.from_iterable(inners)), list(chain.from_iterable(map(dict.values, inners)))


def _decoded_stdlib(text: str) -> tuple[list[str], list[int], list[str], list[Any]] | None:
    """:func:`_decoded` by ``json.loads`` with a pairs hook (repeats seen in the pairs)."""
    try:
        top = json.loads(text, object_pairs_hook=_Object)
    except (ValueError, RecursionError):
        return None
    if type(top) is not _Object or not top:
        return None
    inners = [inner for _, inner in top]
    if any(type(inner) is not _Object for inner in inners):
        return None
    qkeys = [q for q, _ in top]
    if len(set(qkeys)) != len(qkeys) or any(len(dict(inner)) != len(inner) for inner in inners):
        return None
    pairs = list(chain.from_iterable(inners))
    return qkeys, list(map(len, inners)), list(map(itemgetter(0), pairs)), list(map(itemgetter(1), pairs))


def _fast_pairs(text: str, what: str) -> Pairs | None:
    """The pairs of ``{qid: {docid: value}}`` by a C decoder (:func:`_decoded`), with
    checks on whole columns after; None when anything would be refused or the lines
    cannot be told for sure (the scanner then decides, naming the line).

    The line of each doc key comes from the raw text: in a file this road accepts,
    every JSON string is a key (values are numbers), so once each escaped backslash
    and escaped quote is masked, the quotes pair up in file order -- qid key, its doc
    keys, the next qid key ... -- and a key's line is one plus the newlines before its
    opening quote (as the scanner counts). A file with more quotes than that (a
    repeated key the decoder folded, a string value) takes the scanner's road."""
    got = _decoded(text)
    if got is None:
        return None
    qkeys, per_query, docs, raw = got
    counts = np.asarray(per_query, dtype=np.int64)
    if not docs:
        return None
    kinds = set(map(type, raw))  # exact types: a bool is neither an int nor a float here
    if not kinds <= {int, float}:
        return None
    try:
        values = np.asarray(raw, dtype=np.float64) if float in kinds or what == "score" else None
    except OverflowError:  # an integer literal beyond the float range
        return None
    if what == "score":
        assert values is not None
        if not np.isfinite(values).all():
            return None
        vals: list[float] | npt.NDArray[np.float64] | npt.NDArray[np.int64] = values
    else:
        if values is None:
            try:
                ints = np.asarray(raw, dtype=np.int64)
            except OverflowError:
                return None
        else:  # a grade written 2.0 reads as 2 (as the scanner's int(v))
            if not (np.isfinite(values) & (values == np.trunc(values))).all():
                return None
            if values.size and (values.min() < INT32_MIN or values.max() > INT32_MAX):
                return None
            ints = values.astype(np.int64)
        if ints.size and (ints.min() < INT32_MIN or ints.max() > INT32_MAX):
            return None
        vals = ints
    del raw
    qids = list(chain.from_iterable(map(repeat, qkeys, per_query)))
    if not _ids_ok(qkeys, text) or not _ids_ok(docs, text):
        return None
    lines = _key_lines(text, counts)
    if lines is None:
        return None
    return qids, docs, vals, lines


def _ids_ok(ids: list[str], text: str) -> bool:
    """No id empty, none holding a line break, every one valid Unicode (the scanner's
    checks; a raw line break in a string is invalid JSON, so one can come only from an
    escape, and a lone surrogate only from a ``\\u`` escape)."""
    if not all(ids):
        return False
    if "\\" not in text:
        return True
    return not any("\n" in x or "\r" in x for x in ids) and all(x.isascii() or _utf8(x) for x in ids)


def _utf8(x: str) -> bool:
    try:
        x.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _key_lines(text: str, counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
    """The line of every doc key (see :func:`_fast_pairs`), or None when the quotes do not
    pair up as ``counts`` (docs per query, in file order) says they must."""
    data = text.encode("utf-8")  # a multi-byte character never holds a quote, backslash or newline byte
    if b"\\" in data:
        data = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    buf = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(buf == ord('"'))
    nq = counts.size
    if quotes.size != 2 * (nq + int(counts.sum())):
        return None
    starts = quotes[0::2]
    is_doc = np.ones(starts.size, dtype=bool)
    before = np.zeros(nq, dtype=np.int64)
    np.cumsum(counts[:-1], out=before[1:])
    is_doc[np.arange(nq, dtype=np.int64) + before] = False
    newlines = np.flatnonzero(buf == ord("\n"))
    return (np.searchsorted(newlines, starts[is_doc], side="left") + 1).astype(np.int64)


def top_level_has(text: str, key: str) -> bool:
    """Whether the JSON object ``text`` has ``key`` among its top-level keys (a cheap
    substring test first; the keys are then read, skipping their values)."""
    if json.dumps(key) not in text:
        return False
    sc = _JsonPairs(text, "", "score")
    i = sc.ws(0)
    if text[i:i + 1] != "{":
        return False
    try:
        keys, _ = sc.keys_at(i)
    except InputError:
        return False
    return any(k == key for k, *_ in keys)


def mteb_pairs(text: str, path: str, subset: str | None, split: str | None) -> Pairs:
    """The ``{qid: {docid: score}}`` pairs of one subset and split of an MTEB predictions
    file (``{"mteb_model_meta": {...}, SUBSET: {SPLIT: {qid: {docid: score}}}}``), each
    with the line of its doc key. Without ``subset``/``split`` the file must hold only
    one; otherwise the choices are listed. A subset or split not in the file is an error
    listing those that are."""
    sc = _JsonPairs(text, path, "score")
    i = sc.ws(0)
    keys, end = sc.keys_at(i)
    if sc.ws(end) < len(text):
        sc.fail("invalid JSON: extra data after the object", sc.ws(end))
    subsets = [(k, line, j) for k, line, j, _ in keys if k != "mteb_model_meta"]
    if not subsets:
        raise InputError("an MTEB predictions file without predictions (only 'mteb_model_meta')", path)
    names = [k for k, _, _ in subsets]

    def listed(xs: list[str]) -> str:
        return ", ".join(repr(x) for x in xs)[:300]

    if subset is None:
        if len(subsets) > 1:
            raise InputError(f"MTEB predictions of several subsets ({listed(names)}): choose one with --mteb-subset",
                             path)
        chosen = subsets[0]
    else:
        hits = [s for s in subsets if s[0] == subset]
        if not hits:
            raise InputError(f"no subset {subset!r} in these MTEB predictions (subsets: {listed(names)})", path)
        chosen = hits[0]
    sname, sline, j = chosen
    if text[j:j + 1] != "{":
        sc.fail(f"subset {sname!r} must be an object {{split: {{qid: {{docid: score}}}}}}", j)
    splits, _ = sc.keys_at(j)
    if not splits:
        raise InputError(f"subset {sname!r} holds no split", path, sline)
    snames = [k for k, *_ in splits]
    if split is None:
        if len(splits) > 1:
            raise InputError(f"MTEB predictions of subset {sname!r} hold several splits ({listed(snames)}): choose "
                             "one with --mteb-split", path)
        pick = splits[0]
    else:
        split_hits = [s for s in splits if s[0] == split]
        if not split_hits:
            raise InputError(f"no split {split!r} in subset {sname!r} (splits: {listed(snames)})", path)
        pick = split_hits[0]
    qids, docs, vals, lines, _ = sc.parse_object(pick[2])
    if not qids:
        raise InputError(f"split {pick[0]!r} of subset {sname!r} holds no scored doc", path, pick[1])
    return qids, docs, vals, lines
