"""Parquet runs read through pyarrow's file reader (kernel/columns.read_parquet): a query
column stored as a dictionary is decoded run by run, and the rows are exactly those the
same data gives as TREC text or through pyarrow's own decoding."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs import columns, readers
from rankscope_tui.kernel.workspace.loaded import Workspace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _rows(n_queries=40, depth=150, seed=3):
    """(qid, doc, score) rows: queries in runs of ``depth`` hits, some ids non-ASCII."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" if i % 7 else f"qé{i}" for i in range(n_queries)]
    qid, doc, score = [], [], []
    for q in qids:
        docs = rng.choice(100_000, size=depth, replace=False)
        s = np.round(np.sort(rng.random(depth))[::-1] * 20, 4)
        qid += [q] * depth
        doc += [f"D{d}" for d in docs]
        score += s.tolist()
    return qid, doc, score


def _write_trec(path, qid, doc, score):
    with open(path, "w", encoding="utf-8") as fh:
        for i, (q, d, s) in enumerate(zip(qid, doc, score)):
            fh.write(f"{q} Q0 {d} {i % 150 + 1} {s!r} t\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("pq")
    qid, doc, score = _rows()
    _write_trec(d / "a.run", qid, doc, score)
    (d / "a.qrels").write_text("".join(f"{q} 0 {doc[i * 150 + 3]} 1\n" for i, q in enumerate(dict.fromkeys(qid))),
                               encoding="utf-8")
    t = pa.table({"qid": qid, "docno": doc, "score": score, "rank": [i % 150 + 1 for i in range(len(qid))]})
    pq.write_table(t, d / "dict.parquet", row_group_size=2_000)  # several row groups, each its own dictionary
    pq.write_table(t, d / "plain.parquet", use_dictionary=False)
    ranx = pa.table({"q_id": qid, "doc_id": doc, "score": score})
    pq.write_table(ranx, d / "ranx.parquet", compression="zstd")
    return d


def _lane(path):
    return readers.read_lane(str(path), "a")


@pytest.mark.parametrize("name", ["dict.parquet", "plain.parquet", "ranx.parquet"])
def test_rows_equal_trec(data, name):
    ref, got = _lane(data / "a.run"), _lane(data / name)
    assert got.qid.to_pylist() == ref.qid.to_pylist()
    assert got.doc.to_pylist() == ref.doc.to_pylist()
    assert got.score.tobytes() == ref.score.tobytes()
    q = readers.read_qrels(str(data / "a.qrels"))
    a, b = Workspace.from_raw([ref], q).per_query("a"), Workspace.from_raw([got], q).per_query("a")
    assert list(a) == list(b) and all(a[k].tobytes() == b[k].tobytes() for k in a)


def test_dictionary_query_column_is_taken_as_one(data):
    from pyarrow._parquet import ParquetReader

    r = ParquetReader()
    r.open(str(data / "dict.parquet"))
    assert columns._dictionary_pages(r, 0, "qid")
    r.open(str(data / "plain.parquet"))
    assert not columns._dictionary_pages(r, 0, "qid")


def _dictionary_column(chunks, value_type=pa.string()):
    out = []
    for values, idx in chunks:
        out.append(pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), pa.array(values, value_type)))
    return pa.chunked_array(out)


def test_decode_runs_equals_pyarrow_decoding():
    col = _dictionary_column([(["b", "", "ü日", "a"], [0] * 100 + [2] * 70 + [1] * 90 + [0] * 64),
                              (["x", "b"], [1] * 200 + [0] * 65)])
    got = columns._decode_runs(col)
    assert got is not None and got.to_pylist() == col.cast(pa.string()).to_pylist()
    big = _dictionary_column([(["qq", "r"], [1] * 80 + [0] * 80)], pa.large_string())
    assert columns._decode_runs(big).to_pylist() == big.cast(pa.large_string()).to_pylist()


def test_decode_runs_declines_short_runs_and_nulls():
    assert columns._decode_runs(_dictionary_column([(["a", "b"], [0, 1] * 100)])) is None
    nulls = pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array([0] * 100 + [None], pa.int32()),
                                                             pa.array(["a"]))])
    assert columns._decode_runs(nulls) is None


def test_null_query_id_named_by_row(tmp_path):
    qid = ["q1"] * 300 + [None] + ["q2"] * 300
    t = pa.table({"qid": pa.array(qid, pa.string()), "docno": [f"d{i}" for i in range(601)],
                  "score": [1.0] * 601})
    pq.write_table(t, tmp_path / "n.parquet")
    with pytest.raises(InputError) as e:
        _lane(tmp_path / "n.parquet")
    assert e.value.line == 301 and "null" in str(e.value)


def test_line_break_in_query_id_named_by_row(tmp_path):
    qid = ["q1"] * 300 + ["q\n2"] * 300
    t = pa.table({"qid": qid, "docno": [f"d{i}" for i in range(600)], "score": [1.0] * 600})
    pq.write_table(t, tmp_path / "b.parquet")
    with pytest.raises(InputError) as e:
        _lane(tmp_path / "b.parquet")
    assert e.value.line == 301 and "line break" in str(e.value)


def test_nested_columns_beside_the_chosen_ones(tmp_path, data):
    qid, doc, score = _rows(5, 100)
    t = pa.table({"meta": pa.array([{"a": 1, "b": "x"}] * len(qid)), "qid": qid, "docno": doc, "score": score})
    pq.write_table(t, tmp_path / "n.parquet")
    got = _lane(tmp_path / "n.parquet")
    assert got.qid.to_pylist() == qid and got.doc.to_pylist() == doc and got.score.tolist() == score


def test_compressed_parquet_reads_the_same(tmp_path, data):
    import gzip

    (tmp_path / "g.parquet.gz").write_bytes(gzip.compress((data / "dict.parquet").read_bytes()))
    ref, got = _lane(data / "dict.parquet"), readers.read_lane(str(tmp_path / "g.parquet.gz"), "a")
    assert got.qid.to_pylist() == ref.qid.to_pylist() and got.score.tobytes() == ref.score.tobytes()


def test_reading_a_parquet_run_leaves_pyarrow_compute_and_fs_unimported(data):
    code = ("import sys, json; from rankscope_tui.kernel.inputs import readers; "
            f"readers.read_lane({str(data / 'dict.parquet')!r}, 'a'); "
            "print(json.dumps([m in sys.modules for m in ('pyarrow.compute', 'pyarrow.fs', 'pyarrow.parquet')]))")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, False, False]


@pytest.mark.parametrize("repeated", ["score", "qid"])
def test_a_chosen_column_named_twice_is_one_line_exit_2(tmp_path, repeated):
    """Two columns of one name (pyarrow writes such a schema): which one is meant cannot be
    told, so the file is refused in one line naming it, as a TSV header or a DataFrame is."""
    from support import run_cli

    cols = {"qid": pa.array(["q1", "q1"]), "docno": pa.array(["d1", "d2"]), "score": pa.array([1.0, 0.5])}
    arrays, names = list(cols.values()), list(cols)
    arrays.append(cols[repeated])
    names.append(repeated)
    pq.write_table(pa.Table.from_arrays(arrays, names=names), tmp_path / "a.parquet")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        _lane(tmp_path / "a.parquet")
    assert f"{repeated!r} appears 2 times" in str(e.value)
    res = run_cli("evaluate", "--lane", f"a={tmp_path / 'a.parquet'}", "--qrels", tmp_path / "q.txt")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-1500:]
    assert res.stderr.splitlines() == [f"rankscope: error: {tmp_path / 'a.parquet'}: column {repeated!r} appears 2 times "
                                       "in the table; rename all but one"]


def test_a_repeated_column_beside_the_chosen_ones_is_read(tmp_path):
    t = pa.Table.from_arrays([pa.array(["q1", "q1"]), pa.array(["d1", "d2"]), pa.array([1.0, 0.5]),
                              pa.array([1, 2]), pa.array([3, 4])], names=["qid", "docno", "score", "x", "x"])
    pq.write_table(t, tmp_path / "a.parquet")
    got = _lane(tmp_path / "a.parquet")
    assert got.qid.to_pylist() == ["q1", "q1"] and got.doc.to_pylist() == ["d1", "d2"] and got.score.tolist() == [1.0, 0.5]
