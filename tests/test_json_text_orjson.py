"""report.json's writer by orjson gives exactly ``json.dumps(obj, indent=2,
ensure_ascii=False, allow_nan=False)``: the same bytes, or the same error.

The oracle is the standard library's encoder. orjson writes some floats below 1e-4
another way than ``repr`` (``0.00001``, ``1e-7``) and NaN as ``null``, and writes
types ``json`` refuses; the cases here aim at each, and check that a report-shaped
object does take orjson's road (so the comparisons are not all of the column writer).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import random
import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope_tui.kernel.report import json_text


def oracle(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)


def floats(n: int, seed: int) -> list[float]:
    """Floats of every magnitude (random bit patterns, finite), small ones, and [0, 1)."""
    r = random.Random(seed)
    out: list[float] = []
    while len(out) < n:
        x = struct.unpack("d", struct.pack("Q", r.getrandbits(64)))[0]
        if x == x and abs(x) != float("inf"):
            out.append(x)
        out.append(r.random() ** 9)
        out.append(r.random() * 10 ** r.uniform(-12, 20))
        out.append(round(r.random(), r.randint(0, 17)))
    return out


def test_report_shaped_object_takes_orjson_and_gives_the_same_text():
    vals = floats(40_000, 1)
    per_query = {f"q{i}": {"ndcg@10": vals[i], "rr": vals[i + 1], "p@10": (i % 11) / 10, "n": i}
                 for i in range(0, 30_000, 3)}
    obj = {"per_query": per_query, "note": "one-sided, 1e-7 is 0.0000001", "settings": {"depth": None, "k": [1, 2]},
           "tiny": [1e-7, -1e-07, 1e-05, 0.0001, 5e-324, -0.0, 1e16, 1e-300], "last": 1e-9}
    assert json_text._orjson_text(obj) is not None
    assert json_text.dumps(obj) == oracle(obj)


@pytest.mark.parametrize("obj", [
    1e-7, 0.00001, -0.0, 5e-324, 1e16, 123.5, "x: 1e-7", "1e-7\n", ["a: 1e-7", 1e-7], {"e-": "0.0000", "0.0000": 1e-5},
    {"a": [], "b": {}, "c": [[], {}], "d": [[[1e-7]]]}, [2**63, -2**63, 2**64 - 1, 2**64, -(2**70)], [True, False, None],
    {"\u2028\x00\x1f\"\\é😀": ["\u2028\x00\x1f\"\\é😀"]},
])
def test_edge_values_same_text(obj):
    assert json_text.dumps(obj) == oracle(obj)


class Colour(enum.Enum):
    RED = 1


class Grade(enum.IntEnum):
    TWO = 2


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize("obj", [
    {"a": float("nan")}, [1.0, float("inf")], {"a": [Colour.RED]}, {"a": uuid.UUID(int=1)}, {"a": Point(1)},
    {"a": datetime.date(2020, 1, 1)}, {"a": Grade.TWO}, {1: 2}, {"a": b"x"}, {"a": {1, 2}},
])
def test_what_json_refuses_or_writes_its_own_way(obj):
    """NaN, Infinity and types orjson writes but ``json`` refuses (or writes otherwise)
    give ``json.dumps``'s text or error, never orjson's."""
    try:
        want = oracle(obj)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)) as got:
            json_text.dumps(obj)
        assert str(got.value) == str(exc)
        return
    assert json_text.dumps(obj) == want


def test_shared_and_cyclic_containers():
    shared = [1e-7, 2]
    assert json_text.dumps({"a": shared, "b": shared}) == oracle({"a": shared, "b": shared})
    cyc: list = [1]
    cyc.append(cyc)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text.dumps(cyc)


FLOATS = st.floats(allow_nan=False, allow_infinity=False)
LEAVES = st.one_of(FLOATS, FLOATS.map(lambda x: x * 1e-9), st.integers(), st.booleans(), st.none(), st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.recursive(LEAVES, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                   st.dictionaries(st.text(max_size=6), kids, max_size=4)),
                    max_leaves=30))
def test_generated_values_same_text(obj):
    try:
        want = oracle(obj)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            json_text.dumps(obj)
        return
    assert json_text.dumps(obj) == want
