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
from collections.abc import Generator
from typing import Any, NoReturn

from ..errors import InputError
from .rows import INT32_MAX, INT32_MIN

#: (qids, docs, values, lines) of every pair, in file order
Pairs = tuple[list[str], list[str], list[float], list[int]]
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
    """
    return _JsonPairs(text, path, what).parse()


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
