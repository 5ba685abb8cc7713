"""kernel.json_text gives exactly json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False).

The oracle is the standard library's encoder: every case compares the two texts (or, for
what strict JSON refuses, the two errors), on generated values, on tables of rows that
take the column-at-a-time road, and on real reports of the demo and Cranfield sets.
"""

from __future__ import annotations

import enum
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import SHARED_DATA

from rankscope_tui.kernel.instruments.evaluate import evaluate_report
from rankscope_tui.kernel.report import json_text
from rankscope_tui.kernel.report.output import dumps_strict
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace


def oracle(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)


def same(obj) -> None:
    """Both give the same text, or both refuse with the same kind of error and message."""
    try:
        want = oracle(obj)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc)) as got:
            json_text.dumps(obj)
        assert str(got.value) == str(exc)
        return
    assert json_text.dumps(obj) == want


# floats where repr is delicate: subnormals, the 1e16 switch to exponent notation, -0.0
EDGE_FLOATS = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1e-5, 1e-4, 9.999999999999999e-5,
               0.1, 0.2, 0.30000000000000004, 1 / 3, 2 / 3, 1e15, 9999999999999998.0, 1e16, 1.0000000000000002e16, 1e17, 1e22,
               1e23, 1.7976931348623157e308, -1.7976931348623157e308, 123456789012345680.0, 0.5531464700081437]
floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.floats(allow_nan=False, allow_infinity=False,
                   allow_subnormal=True, min_value=-1e-300, max_value=1e-300), st.sampled_from(EDGE_FLOATS),
                   st.integers(0, 10).map(lambda k: k / 10), st.integers(1, 200).map(lambda k: 1 / k))
texts = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(["%s", "%%", "%(a)s", "\x00", "\u2028", '"\\', "é€😀"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30), floats, texts)


def tables(values=scalars):
    """A dict or list of rows that share one key order (the per-query block's shape)."""
    keys = st.lists(texts, min_size=1, max_size=6, unique=True)
    return keys.flatmap(lambda ks: st.tuples(
        st.lists(st.tuples(*[values for _ in ks]), min_size=1, max_size=150),
        st.lists(texts, min_size=150, max_size=150, unique=True),
    ).map(lambda rv: _table(ks, *rv)))


def _table(keys, rows, outer):
    body = [dict(zip(keys, r)) for r in rows]
    return {"rows": dict(zip(outer, body)), "list": body}


json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.lists(inner, max_size=4).map(tuple), st.dictionaries(texts, inner, max_size=6)), max_leaves=40)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_any_value_as_json_dumps(obj):
    same(obj)


@settings(max_examples=80, deadline=None)
@given(tables())
def test_tables_of_rows_as_json_dumps(obj):
    same(obj)


@settings(max_examples=60, deadline=None)
@given(st.lists(floats, min_size=64, max_size=400), st.integers(0, 399))
def test_float_columns_with_repeats_and_negative_zero(vals, at):
    """Long float columns are formatted once per distinct value: -0.0 (equal to 0.0 as a
    key) must still print as -0.0, wherever it falls among the zeros."""
    col = [v for v in vals for _ in range(2)] + [0.0] * 10
    col.insert(at % len(col), -0.0)
    same(col)
    same({"q": {str(i): {"a": v, "b": 0.0} for i, v in enumerate(col)}})
    same([0.0] * 100)
    same([-0.0] * 100)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_refused_as_json_dumps(bad):
    same(bad)
    same({"a": [1.0, bad]})
    same([float(i) for i in range(100)] + [bad])
    same({str(i): {"v": 0.5 if i != 70 else bad} for i in range(100)})


class Grade(enum.IntEnum):
    HIGH = 3


class Real(float):
    pass


class Text(str):
    pass


@pytest.mark.parametrize("obj", [
    {1: "a"}, {1.5: "a"}, {True: 1, None: 2}, {"a": {2: 1}}, [Grade.HIGH], {"g": Grade.HIGH}, [Real(0.1)], Real(2.5),
    [Text("x")], {Text("k"): 1}, [np.float64(0.5)], {"a": np.int64(3)}, [object()], [{1, 2}], [b"bytes"],
    [{"a": 1}, {"a": np.float32(1)}], {"x": {"a": Real(1.0)}, "y": {"a": 2.0}},
])
def test_other_types_go_to_json_dumps(obj):
    same(obj)


def test_a_cycle_is_refused_as_json_dumps():
    a: list = [1]
    a.append(a)
    same(a)
    d: dict = {"k": 1}
    d["self"] = {"inner": d}
    same(d)
    shared = {"x": 1.0}
    same({"a": shared, "b": [shared, shared]})  # the same object twice is not a cycle


def test_empty_and_nested_shapes():
    for obj in [{}, [], (), "", 0, -0.0, 1e16, [[]], [{}], {"a": {}}, {"a": []}, [[[]]], {"a": {"b": {"c": {}}}},
                [{"a": 1}, {"b": 1}], [{"a": 1, "b": 2}, {"b": 2, "a": 1}], [{"a": [1]}, {"a": [2]}], {"r": [{"a": {}}]}]:
        same(obj)


def _reports(demo_dir):
    d = demo_dir
    lanes = [("lexical", str(d / "lexical.run")), ("dense", str(d / "dense.run"))]
    yield Workspace.load(lanes, str(d / "qrels-test.txt"), LoadSettings(resamples=200, group_sep="#"))
    yield Workspace.load(lanes[:1], str(d / "qrels-test.txt"), LoadSettings(resamples=0))
    c = SHARED_DATA / "cranfield"
    if c.is_dir():
        yield Workspace.load([("bm25", str(c / "lanes" / "bm25.run")), ("dense", str(c / "lanes" / "dense.run"))],
                             str(c / "qrels-test.txt"), LoadSettings(resamples=200))


def test_real_reports_as_json_dumps(demo_dir):
    n = 0
    for ws in _reports(demo_dir):
        report = evaluate_report(ws)
        assert dumps_strict(report) == oracle(report) + "\n"
        assert json.loads(dumps_strict(report)) == report
        n += 1
    assert n >= 2


@pytest.mark.parametrize("rows_per_piece", [1, 2, 7])
@settings(max_examples=40, deadline=None)
@given(obj=st.one_of(tables(), json_values, tables(st.one_of(scalars, st.lists(scalars, max_size=2)))))
def test_pieces_of_any_size_join_to_json_dumps(rows_per_piece, obj):
    """A large container is formatted a piece of ``ROWS_PER_PIECE`` items at a time: at
    every piece size the pieces join to json.dumps' text, also where one piece holds a
    container among its scalars and the whole container goes item by item."""
    old = json_text.ROWS_PER_PIECE
    json_text.ROWS_PER_PIECE = rows_per_piece
    try:
        same(obj)  # (json_text.dumps is the join of dumps_parts)
    finally:
        json_text.ROWS_PER_PIECE = old


def test_a_report_written_in_pieces_is_the_text_of_json_dumps(demo_dir, tmp_path):
    """dumps_strict_parts, written by write_outputs, gives the file dumps_strict gives."""
    from rankscope_tui.kernel.report.output import dumps_strict_parts, write_outputs

    ws = next(_reports(demo_dir))
    report = evaluate_report(ws)
    old = json_text.ROWS_PER_PIECE
    json_text.ROWS_PER_PIECE = 3
    try:
        parts = dumps_strict_parts(report)
    finally:
        json_text.ROWS_PER_PIECE = old
    assert len(parts) > 10
    write_outputs([(str(tmp_path / "r.json"), parts)])
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == oracle(report) + "\n"
