"""Tables in the column conventions of ranx, PyTerrier, ir_measures and BEIR/MTEB read
to exactly what the TREC readers give for the same data (kernel/inputs/columns.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs import columns, readers
from rankscope_tui.kernel.inputs.formats import ColumnMapping
from rankscope_tui.kernel.workspace.loaded import Workspace

RUN = [("q1", "d1", 2.5), ("q1", "d2", 1.5), ("q2", "d3", 0.5), ("q2", "d1", 0.5), ("10", "d7", -3.25)]
QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 2), ("10", "d7", 1)]

RUN_NAMES = {"ranx": ("q_id", "doc_id", "score"), "PyTerrier": ("qid", "docno", "score"),
             "ir_measures": ("query_id", "doc_id", "score"), "BEIR/MTEB": ("query-id", "corpus-id", "score")}
QRELS_NAMES = {"ranx": ("q_id", "doc_id", "score"), "PyTerrier": ("qid", "docno", "label"),
               "ir_measures": ("query_id", "doc_id", "relevance"), "BEIR/MTEB": ("query-id", "corpus-id", "score")}


@pytest.fixture(scope="module")
def trec(tmp_path_factory):
    d = tmp_path_factory.mktemp("trec")
    run = d / "a.run"
    run.write_text("".join(f"{q} Q0 {doc} {i + 1} {s!r} t\n" for i, (q, doc, s) in enumerate(RUN)))
    qrels = d / "a.qrels"
    qrels.write_text("".join(f"{q} 0 {doc} {g}\n" for q, doc, g in QRELS))
    return readers.read_lane(str(run), "a"), readers.read_qrels(str(qrels))


def _frame(rows, names):
    return pd.DataFrame({n: [r[i] for r in rows] for i, n in enumerate(names)})


def _same(ws_a, ws_b):
    pa_, pb = ws_a.per_query("a"), ws_b.per_query("a")
    assert list(pa_) == list(pb)
    for k in pa_:
        assert pa_[k].tobytes() == pb[k].tobytes(), k


@pytest.mark.parametrize("conv", list(RUN_NAMES))
def test_each_convention_reads_like_trec(trec, conv):
    lane = columns.run_table(pa.Table.from_pandas(_frame(RUN, RUN_NAMES[conv])), "<df>", name="a")
    q = columns.qrels_table(pa.Table.from_pandas(_frame(QRELS, QRELS_NAMES[conv])), "<dq>")
    assert lane.qid.to_pylist() == trec[0].qid.to_pylist()
    assert lane.score.tobytes() == trec[0].score.tobytes()
    assert q.grade.tolist() == trec[1].grade.tolist()
    _same(Workspace.from_raw([trec[0]], trec[1]), Workspace.from_raw([lane], q))


def test_integer_ids_are_written_in_decimal():
    t = pa.table({"qid": pa.array([10, 10], pa.int64()), "docno": pa.array([7, 8], pa.int32()), "score": [1.0, 2.0]})
    lane = columns.run_table(t, "<t>", name="a")
    assert lane.qid.to_pylist() == ["10", "10"] and lane.doc.to_pylist() == ["7", "8"]


def test_rank_only_table_is_ordered_by_rank():
    t = pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "rank": [2, 1]})
    lane = columns.run_table(t, "<t>", name="a")
    assert lane.score.tolist() == [-2.0, -1.0]


def test_explicit_mapping():
    t = pa.table({"Q": ["q"], "D": ["a"], "S": [1.0]})
    lane = columns.run_table(t, "<t>", ColumnMapping.parse("query=Q,doc=D,score=S", "--run-columns"), name="a")
    assert lane.doc.to_pylist() == ["a"]
    with pytest.raises(InputError, match="no known run columns among: Q, D, S"):
        columns.run_table(t, "<t>", name="a")


def test_two_conventions_are_ambiguous():
    t = pa.table({"qid": ["q"], "docno": ["a"], "query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match="ambiguous columns"):
        columns.run_table(t, "<t>", name="a")


@pytest.mark.parametrize("table, message", [
    (pa.table({"qid": ["q", None], "docno": ["a", "b"], "score": [1.0, 2.0]}), "<t>:2: query id .* missing"),
    (pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "score": [1.0, float("nan")]}), "<t>:2: score is not finite"),
    (pa.table({"qid": ["q", "q"], "docno": ["a", "b\nc"], "score": [1.0, 2.0]}), "<t>:2: doc id .* line break"),
    (pa.table({"qid": [1.0], "docno": ["a"], "score": [1.0]}), "<t>: query ids .* floating-point"),
    (pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "score": ["1", "x"]}), "<t>:2: score is not a number: 'x'"),
    (pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "rank": [1, 1]}), "<t>:2: rank 1 appears twice"),
])
def test_malformed_rows_are_named(table, message):
    with pytest.raises(InputError, match=message):
        columns.run_table(table, "<t>", name="a")


def test_malformed_qrels_rows_are_named():
    t = pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "label": [1.0, 1.5]})
    with pytest.raises(InputError, match="<t>:2: grade is not an integer"):
        columns.qrels_table(t, "<t>")
    t = pa.table({"qid": ["q"], "docno": ["a"], "label": [2**40]})
    with pytest.raises(InputError, match="<t>:1: grade out of range"):
        columns.qrels_table(t, "<t>")


def test_content_digest_ignores_chunking():
    a = pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    b = pa.Table.from_batches(a.to_batches(max_chunksize=1))
    assert columns.run_table(a, "<a>", name="a").sha256() == columns.run_table(b, "<b>", name="a").sha256()
    assert np.asarray(columns.run_table(b, "<b>", name="a").line).tolist() == [1, 2]
