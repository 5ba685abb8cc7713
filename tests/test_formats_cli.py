"""The format options on the command line and the dashboard's loader: given, told,
recorded in report.json, refused when they cannot apply."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankscope_tui import cli

RUN = b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 0.5 t\n"
QRELS = b"q1 0 d1 1\nq2 0 d3 1\n"


def _run(argv, capsys):
    rc = cli.main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.mark.parametrize("extra, pattern", [
    (["--run-format", "csv"], "argument --run-format: invalid choice: 'csv'"),
    (["--run-columns", "query"], "--run-columns: expected ROLE=COLUMN pairs"),
    (["--run-columns", "qid=a"], "--run-columns: unknown role 'qid'"),
    (["--qrels-columns", "query=a,query=b"], "--qrels-columns: role 'query' given twice"),
    (["--run-format", "trec", "--run-format", "json"], "--run-format given twice"),
])
def test_bad_format_options_are_one_line_errors(tmp_path, capsys, extra, pattern):
    (tmp_path / "a.run").write_bytes(RUN)
    (tmp_path / "q.txt").write_bytes(QRELS)
    rc, _, err = _run(["evaluate", "--lane", str(tmp_path / "a.run"), "--qrels", str(tmp_path / "q.txt"),
                       "--resamples", "0", *extra], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and pattern in err, err


def test_a_glob_of_several_files_needs_a_lane_name(tmp_path, capsys):
    (tmp_path / "s1.run").write_bytes(RUN[:34])
    (tmp_path / "s2.run").write_bytes(RUN[34:])
    (tmp_path / "q.txt").write_bytes(QRELS)
    rc, _, err = _run(["evaluate", "--lane", str(tmp_path / "s*.run"), "--qrels", str(tmp_path / "q.txt"),
                       "--resamples", "0"], capsys)
    assert rc == 2 and "a lane of several shard files needs a name" in err


def test_report_names_formats_and_shards(tmp_path, capsys):
    (tmp_path / "s1.run").write_bytes(RUN[:34])
    (tmp_path / "s2.tsv").write_bytes(b"q2\td3\t1\n")
    (tmp_path / "q.tsv").write_bytes(b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    out = tmp_path / "r.json"
    rc, _, err = _run(["evaluate", "--lane", f"a={tmp_path / 's1.run'},{tmp_path / 's2.tsv'}",
                       "--qrels", str(tmp_path / "q.tsv"), "--resamples", "0", "--out", str(out)], capsys)
    assert rc == 0, err
    inputs = json.loads(out.read_text())["inputs"]
    lane = inputs["lanes"]["a"]
    assert lane["format"] == "trec,msmarco" and lane["rows"] == 3
    assert lane["path"] == f"{tmp_path / 's1.run'},{tmp_path / 's2.tsv'}"
    expect = hashlib.sha256("".join(f"{p}\t{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                                    for p in (tmp_path / "s1.run", tmp_path / "s2.tsv")).encode()).hexdigest()
    assert lane["sha256"] == expect
    assert inputs["qrels"]["format"] == "beir"


def test_dashboard_loads_with_the_same_format_options(tmp_path):
    """The dashboard's loader (state.load_workspace) gets the format options through its
    LoadSettings, as every command does."""
    from rankscope_tui.commands.tui import options_from_args, parse_args
    from rankscope_tui.kernel.workspace.loaded import Workspace
    from rankscope_tui.state import load_workspace

    pq.write_table(pa.table({"Q": ["q1", "q1", "q2"], "D": ["d1", "d2", "d3"], "S": [2.5, 1.5, 0.5]}),
                   str(tmp_path / "a.parquet"))
    (tmp_path / "a.run").write_bytes(RUN)
    (tmp_path / "q.txt").write_bytes(QRELS)
    args = parse_args(["--lane", f"a={tmp_path / 'a.parquet'}", "--qrels", str(tmp_path / "q.txt"),
                       "--run-columns", "query=Q,doc=D,score=S"])
    ws = load_workspace(options_from_args(args))
    ref = Workspace.load([("a", str(tmp_path / "a.run"))], str(tmp_path / "q.txt"))
    for k, v in ref.per_query("a").items():
        assert ws.per_query("a")[k].tobytes() == v.tobytes()
    assert ws.sources.settings.inputs.run_columns.query == "Q"


def test_report_names_the_columns_a_table_was_read_by(tmp_path, capsys):
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "score": [2.5, 1.5, 0.5],
                             "extra": [1, 2, 3]}), str(tmp_path / "a.parquet"))
    (tmp_path / "q.jsonl").write_text('{"qid": "q1", "docno": "d1", "label": 1}\n{"qid": "q2", "docno": "d3", "label": 1}\n')
    out = tmp_path / "r.json"
    rc, _, err = _run(["evaluate", "--lane", f"a={tmp_path / 'a.parquet'}", "--qrels", str(tmp_path / "q.jsonl"),
                       "--resamples", "0", "--out", str(out)], capsys)
    assert rc == 0, err
    inputs = json.loads(out.read_text())["inputs"]
    assert inputs["lanes"]["a"]["format"] == "parquet"
    assert inputs["lanes"]["a"]["columns"] == {"query": "query_id", "doc": "doc_id", "score": "score"}
    assert inputs["qrels"]["format"] == "jsonl"
    assert inputs["qrels"]["columns"] == {"query": "qid", "doc": "docno", "relevance": "label"}
