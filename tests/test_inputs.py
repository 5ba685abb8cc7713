"""Inputs (SPEC §2): every malformed input through the CLI, warnings, and what is accepted.

Errors run ``rankscope evaluate`` in a subprocess and check the contract: exit status
2, exactly one stderr line ``rankscope: error: FILE[:LINE]: what is wrong`` naming the
file (and the line where one exists), no traceback, and no output file left behind.

Accepted inputs are checked against an independent oracle: the file text is parsed
here the way trec_eval does (split on any whitespace, blank and ``#`` lines skipped)
and scored by pytrec_eval-terrier.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest
import pytrec_eval
import support

from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace

GOOD_RUN = (
    "q1 Q0 d1 1 3.0 t\n"
    "q1 Q0 d2 2 2.0 t\n"
    "q1 Q0 d3 3 1.0 t\n"
    "q2 Q0 d1 1 1.5 t\n"
    "q2 Q0 d4 2 0.5 t\n"
)
GOOD_QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d1 0\n"


def run_cli(tmp_path: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``rankscope evaluate ARGS`` run in tmp_path (or cwd)."""
    return support.run_cli("evaluate", *args, cwd=cwd or tmp_path, timeout=120)


def outputs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "out" / "report.json", tmp_path / "out" / "per_query.csv"


def assert_error(res: subprocess.CompletedProcess, tmp_path: Path, path: str, line: int | None = None,
                 outs: tuple[Path, ...] = ()) -> str:
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    msg = lines[0]
    prefix = f"rankscope: error: {path}:{line}: " if line is not None else f"rankscope: error: {path}: "
    assert msg.startswith(prefix), f"expected prefix {prefix!r}, got {msg!r}"
    assert len(msg) > len(prefix), "the message must say what is wrong"
    for p in outs:
        assert not p.exists(), f"{p} was written despite the error"
    leftovers = [p.name for p in (tmp_path / "out").iterdir()] if (tmp_path / "out").is_dir() else []
    assert not leftovers, f"files left in the output directory: {leftovers}"
    return msg


def write_bytes(path: Path, data: bytes | str) -> str:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return str(path)


def evaluate_lane_error(tmp_path: Path, run: bytes | str, name: str = "run.txt", qrels: bytes | str = GOOD_QRELS,
                        qname: str = "qrels.txt"):
    (tmp_path / "out").mkdir(exist_ok=True)
    rp = write_bytes(tmp_path / name, run)
    qp = write_bytes(tmp_path / qname, qrels)
    out, pq = outputs(tmp_path)
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--out", str(out), "--per-query", str(pq), "--resamples", "0")
    return res, rp, qp, (out, pq)


# ------------------------------------------------------------------ malformed lanes

RUN_ERRORS = {
    # name: (run text, 1-based line of the problem)
    "too_few_columns": (GOOD_RUN + "q2 Q0 d5 3 0.25\n", 6),
    "too_few_columns_after_comment_and_blank": ("# produced by bm25\n\nq1 Q0 d1 1 3.0 t\nq1 Q0 d2 2\n", 4),
    "too_few_columns_tab_empty_field": ("q1\tQ0\td1\t1\t3.0\tt\nq1\tQ0\td2\t\t2.0\tt\n", 2),
    "too_few_columns_tab_empty_tag": ("q1\tQ0\td1\t1\t3.0\tt\nq1\tQ0\td2\t2\t2.0\t\n", 2),
    "too_few_columns_double_space": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2  2.0 t\n", 2),
    "non_numeric_score": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 high t\n", 2),
    "non_numeric_score_tab": ("q1\tQ0\td1\t1\t3.0\tt\nq1\tQ0\td2\t2\t1,5\tt\n", 2),
    "score_nan": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 nan t\n", 2),
    "score_NaN_late": (GOOD_RUN + "q3 Q0 d2 2 NaN t\n", 6),
    "score_inf": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 inf t\n", 2),
    "score_minus_infinity": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 -Infinity t\n", 2),
    "score_overflows_to_inf": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 1e999 t\n", 2),
    "same_doc_twice_in_query": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 3 0.5 t\n", 4),
    "same_doc_twice_tab": ("q1\tQ0\td1\t1\t3.0\tt\nq1\tQ0\td2\t2\t2.0\tt\nq1\tQ0\td1\t3\t3.0\tt\n", 3),
    "nul_byte": ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d\x003 3 1.0 t\n", 3),
    "non_utf8": (b"q1 Q0 d1 1 3.0 t\nq1 Q0 d\xe92 2 2.0 t\n", 2),
    "non_utf8_tab": (b"q1\tQ0\td1\t1\t3.0\tt\nq1\tQ0\td2\t2\t2.0\tt\nq1\tQ0\tcaf\xe9\t3\t1.0\tt\n", 3),
}


@pytest.mark.parametrize("case", sorted(RUN_ERRORS))
def test_malformed_run_line(tmp_path, case):
    text, line = RUN_ERRORS[case]
    res, rp, _, outs = evaluate_lane_error(tmp_path, text)
    assert_error(res, tmp_path, rp, line, outs)


def test_same_doc_twice_names_the_second_line_and_the_first(tmp_path):
    res, rp, _, outs = evaluate_lane_error(tmp_path, RUN_ERRORS["same_doc_twice_in_query"][0])
    msg = assert_error(res, tmp_path, rp, 4, outs)
    assert "d1" in msg and "q1" in msg


@pytest.mark.parametrize("case", ["run_empty", "run_whitespace_only", "run_only_comments", "run_empty_gz"])
def test_empty_run(tmp_path, case):
    data = {"run_empty": b"", "run_whitespace_only": b"\n  \n\t\n", "run_only_comments": b"# nothing here\n\n# at all\n",
            "run_empty_gz": gzip.compress(b"")}[case]
    name = "run.txt.gz" if case.endswith("gz") else "run.txt"
    res, rp, _, outs = evaluate_lane_error(tmp_path, data, name=name)
    msg = assert_error(res, tmp_path, rp, None, outs)
    assert "empty" in msg


def test_truncated_gzip_run(tmp_path):
    blob = gzip.compress((GOOD_RUN * 50).encode())
    res, rp, _, outs = evaluate_lane_error(tmp_path, blob[: len(blob) // 2], name="run.txt.gz")
    assert_error(res, tmp_path, rp, None, outs)


def test_corrupt_gzip_run(tmp_path):
    blob = bytearray(gzip.compress((GOOD_RUN * 50).encode()))
    blob[20:40] = b"\x00" * 20
    res, rp, _, outs = evaluate_lane_error(tmp_path, bytes(blob), name="run.txt.gz")
    assert_error(res, tmp_path, rp, None, outs)


def test_binary_file(tmp_path):
    res, rp, _, outs = evaluate_lane_error(tmp_path, bytes(range(256)) * 4, name="run.bin")
    assert_error(res, tmp_path, rp, 1, outs)


# ------------------------------------------------------------------ malformed JSON

JSON_LANE_ERRORS = {
    "list_not_object": '[["q1", "d1", 1.0]]',
    "query_value_is_list": '{"q1": [["d1", 1.0]]}',
    "query_value_is_number": '{"q1": 3.5}',
    "score_is_string": '{"q1": {"d1": "0.5"}}',
    "score_is_null": '{"q1": {"d1": null}}',
    "score_is_bool": '{"q1": {"d1": true}}',
    "score_is_list": '{"q1": {"d1": [1.0]}}',
    "score_is_nan": '{"q1": {"d1": NaN}}',
    "score_is_infinity": '{"q1": {"d1": -Infinity}}',
    "invalid_syntax": '{"q1": {"d1": 1.0,}}',
    "truncated": '{"q1": {"d1": 1.0',
    "empty_object": "{}",
    "only_empty_queries": '{"q1": {}}',
}


@pytest.mark.parametrize("case", sorted(JSON_LANE_ERRORS))
def test_json_lane_wrong_shape_or_values(tmp_path, case):
    res, rp, _, outs = evaluate_lane_error(tmp_path, JSON_LANE_ERRORS[case], name="run.json")
    _assert_error_any_line(res, tmp_path, rp, outs)


def _assert_error_any_line(res, tmp_path, path, outs):
    """For one-line JSON the line, if given, must be 1."""
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    prefix = f"rankscope: error: {path}:"
    assert lines[0].startswith(prefix), lines[0]
    rest = lines[0][len(prefix):]
    assert rest.startswith(" ") or rest.startswith("1: "), f"a one-line JSON file has no line other than 1: {rest!r}"
    assert len(rest.strip()) > 3, "the message must say what is wrong"
    for p in outs:
        assert not p.exists()
    return lines[0]


def test_json_lane_bad_value_names_its_own_line(tmp_path):
    text = '{\n  "q1": {"d1": 1.0, "d2": 0.5},\n  "q2": {"d2": 0.7, "d1": "high"}\n}\n'
    res, rp, _, outs = evaluate_lane_error(tmp_path, text, name="run.json")
    assert_error(res, tmp_path, rp, 3, outs)


def test_json_lane_duplicate_doc_key_is_an_error(tmp_path):
    # the JSON parser would silently keep the last value; SPEC: the same doc twice in one query is an error
    text = '{\n  "q1": {\n    "d1": 1.0,\n    "d1": 2.0\n  }\n}\n'
    res, rp, _, outs = evaluate_lane_error(tmp_path, text, name="run.json")
    assert_error(res, tmp_path, rp, 4, outs)


JSON_QRELS_ERRORS = {
    "list_not_object": '[["q1", "d1", 1]]',
    "query_value_is_string": '{"q1": "d1"}',
    "grade_is_float": '{"q1": {"d1": 1.5}}',
    "grade_is_string": '{"q1": {"d1": "1"}}',
    "grade_is_null": '{"q1": {"d1": null}}',
    "grade_out_of_range": '{"q1": {"d1": 4294967296}}',
}


@pytest.mark.parametrize("case", sorted(JSON_QRELS_ERRORS))
def test_json_qrels_wrong_shape_or_values(tmp_path, case):
    res, _, qp, outs = evaluate_lane_error(tmp_path, GOOD_RUN, qrels=JSON_QRELS_ERRORS[case], qname="qrels.json")
    _assert_error_any_line(res, tmp_path, qp, outs)


def test_json_qrels_duplicate_doc_with_different_grades_is_an_error(tmp_path):
    text = '{\n  "q1": {\n    "d1": 1,\n    "d1": 0\n  }\n}\n'
    res, _, qp, outs = evaluate_lane_error(tmp_path, GOOD_RUN, qrels=text, qname="qrels.json")
    assert_error(res, tmp_path, qp, 4, outs)


# ------------------------------------------------------------------ malformed qrels

QRELS_ERRORS = {
    "too_few_columns": (GOOD_QRELS + "q2 0 d9\n", 5),
    "grade_not_integer": ("q1 0 d1 1\nq1 0 d2 1.5\n", 2),
    "grade_text": ("q1 0 d1 1\n\nq1 0 d2 high\n", 3),
    "grade_too_large": ("q1 0 d1 1\nq1 0 d2 2147483648\n", 2),
    "grade_too_small": ("q1 0 d1 1\nq1 0 d2 -2147483649\n", 2),
    "grade_beyond_int64": ("q1 0 d1 1\nq1 0 d2 99999999999999999999\n", 2),
    "conflicting_duplicate": ("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n", 3),
    "nul_byte": ("q1 0 d1 1\nq1 0 d2 1\nq1\x00 0 d3 1\n", 3),
    "non_utf8": (b"q1 0 d1 1\nq1 0 d2 1\nq1 0 d\xff3 1\n", 3),
}


@pytest.mark.parametrize("case", sorted(QRELS_ERRORS))
def test_malformed_qrels_line(tmp_path, case):
    text, line = QRELS_ERRORS[case]
    res, _, qp, outs = evaluate_lane_error(tmp_path, GOOD_RUN, qrels=text)
    assert_error(res, tmp_path, qp, line, outs)


def test_grade_at_the_32_bit_limits_is_accepted(tmp_path):
    qrels = "q1 0 d1 2147483647\nq1 0 d2 -2147483648\nq2 0 d4 1\n"
    qp = write_bytes(tmp_path / "qrels.txt", qrels)
    rp = write_bytes(tmp_path / "run.txt", GOOD_RUN)
    ws = Workspace.load(lanes=[(None, rp)], qrels=qp, settings=LoadSettings(metrics=tuple(parse_metrics("rr"))))
    assert ws.per_query("run", "doc")["rr"][ws.qid_index["q1"]] == 1.0


@pytest.mark.parametrize("case", ["empty", "only_blank", "truncated_gz"])
def test_bad_qrels_file(tmp_path, case):
    data = {"empty": b"", "only_blank": b"\n\n", "truncated_gz": gzip.compress(GOOD_QRELS.encode() * 40)[:-12]}[case]
    qname = "qrels.txt.gz" if case.endswith("gz") else "qrels.txt"
    res, _, qp, outs = evaluate_lane_error(tmp_path, GOOD_RUN, qrels=data, qname=qname)
    assert_error(res, tmp_path, qp, None, outs)


# ------------------------------------------------------------------ command-line level errors


def _setup(tmp_path: Path) -> tuple[str, str, Path, Path]:
    (tmp_path / "out").mkdir(exist_ok=True)
    rp = write_bytes(tmp_path / "run.txt", GOOD_RUN)
    qp = write_bytes(tmp_path / "qrels.txt", GOOD_QRELS)
    out, pq = outputs(tmp_path)
    return rp, qp, out, pq


def test_duplicate_lane_names_explicit(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    rp2 = write_bytes(tmp_path / "other.txt", GOOD_RUN.replace(" t\n", " u\n"))
    res = run_cli(tmp_path, "--lane", f"bm25={rp}", "--lane", f"bm25={rp2}", "--qrels", qp, "--out", str(out),
                  "--per-query", str(pq))
    msg = assert_error(res, tmp_path, rp2, None, (out, pq))
    assert "bm25" in msg


def test_duplicate_lane_names_from_file_names(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    r1 = write_bytes(tmp_path / "a" / "bm25.run", GOOD_RUN)
    r2 = write_bytes(tmp_path / "b" / "bm25.run.gz", gzip.compress(GOOD_RUN.encode()))
    res = run_cli(tmp_path, "--lane", r1, "--lane", r2, "--qrels", qp, "--out", str(out), "--per-query", str(pq))
    msg = assert_error(res, tmp_path, r2, None, (out, pq))
    assert "bm25" in msg


def test_strata_line_without_tab(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    sp = write_bytes(tmp_path / "kind.tsv", "q1\tlexical\n\nq2 semantic\n")
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--strata", sp, "--out", str(out), "--per-query", str(pq))
    assert_error(res, tmp_path, sp, 3, (out, pq))


@pytest.mark.parametrize("role", ["lane", "qrels", "strata"])
def test_path_is_a_directory(tmp_path, role):
    rp, qp, out, pq = _setup(tmp_path)
    d = tmp_path / "adir"
    d.mkdir()
    args = {"lane": ["--lane", str(d), "--qrels", qp], "qrels": ["--lane", rp, "--qrels", str(d)],
            "strata": ["--lane", rp, "--qrels", qp, "--strata", str(d)]}[role]
    res = run_cli(tmp_path, *args, "--out", str(out), "--per-query", str(pq))
    assert_error(res, tmp_path, str(d), None, (out, pq))


@pytest.mark.parametrize("role", ["lane", "named_lane", "qrels", "strata"])
def test_path_is_missing(tmp_path, role):
    rp, qp, out, pq = _setup(tmp_path)
    missing = str(tmp_path / "nope.txt")
    args = {"lane": ["--lane", missing, "--qrels", qp], "named_lane": ["--lane", f"x={missing}", "--qrels", qp],
            "qrels": ["--lane", rp, "--qrels", missing], "strata": ["--lane", rp, "--qrels", qp, "--strata", missing]}[role]
    res = run_cli(tmp_path, *args, "--out", str(out), "--per-query", str(pq))
    assert_error(res, tmp_path, missing, None, (out, pq))


def test_same_file_given_twice_as_two_lanes(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    res = run_cli(tmp_path, "--lane", f"a={rp}", "--lane", f"b={rp}", "--qrels", qp, "--out", str(out), "--per-query", str(pq))
    assert_error(res, tmp_path, rp, None, (out, pq))


def test_same_file_given_as_lane_and_qrels(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    res = run_cli(tmp_path, "--lane", rp, "--qrels", rp, "--out", str(out), "--per-query", str(pq))
    assert_error(res, tmp_path, rp, None, (out, pq))


def test_same_file_given_twice_under_another_spelling(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    res = run_cli(tmp_path, "--lane", "a=run.txt", "--lane", "b=./out/../run.txt", "--qrels", "qrels.txt",
                  "--out", str(out), "--per-query", str(pq))
    assert_error(res, tmp_path, "./out/../run.txt", None, (out, pq))


@pytest.mark.parametrize("which", ["out", "per_query"])
def test_output_directory_does_not_exist(tmp_path, which):
    rp, qp, out, pq = _setup(tmp_path)
    bad = tmp_path / "no" / "such" / "dir" / "file.out"
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, f"--{which.replace('_', '-')}", str(bad))
    assert_error(res, tmp_path, str(bad), None, (out, pq))
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("target", ["qrels", "lane", "strata"])
@pytest.mark.parametrize("which", ["out", "per_query"])
def test_output_path_equal_to_an_input(tmp_path, target, which):
    rp, qp, out, pq = _setup(tmp_path)
    sp = write_bytes(tmp_path / "kind.tsv", "q1\tA\nq2\tB\n")
    victim = {"qrels": qp, "lane": rp, "strata": sp}[target]
    before = Path(victim).read_bytes()
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--strata", sp, f"--{which.replace('_', '-')}", victim)
    assert_error(res, tmp_path, victim, None, (out, pq))
    assert Path(victim).read_bytes() == before


def test_output_path_equal_to_an_input_through_a_symlink(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    link = tmp_path / "out" / "report.json"
    link.symlink_to(qp)
    before = Path(qp).read_bytes()
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--out", str(link))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith(f"rankscope: error: {link}")
    assert Path(qp).read_bytes() == before


def test_unknown_metric_is_a_one_line_error(tmp_path):
    rp, qp, out, pq = _setup(tmp_path)
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--metrics", "ndcg@10,mapp@x", "--out", str(out))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("rankscope: error: ")
    assert "mapp@x" in res.stderr and not out.exists()


def test_a_good_invocation_writes_both_outputs(tmp_path):
    """Control for the error tests: the same command line with good files succeeds and writes."""
    rp, qp, out, pq = _setup(tmp_path)
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--out", str(out), "--per-query", str(pq), "--resamples", "0")
    assert res.returncode == 0, res.stderr
    assert out.exists() and pq.exists()
    report = json.loads(out.read_text())
    assert report["schema"] == "rankscope.report/1"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["per_query.csv", "report.json"]


# ------------------------------------------------------------------ warnings (not errors)


def test_warnings_are_counted(tmp_path):
    run = (
        "q1 Q0 d1 1 3.0 t extra\n"          # extra column (1)
        "q1 Q0 d2 2 2.0 t more junk\n"      # extra columns (2)
        "q1 Q0 d3 3 1.0 t\n"
        "q7 Q0 d1 1 1.0 t x\n"              # extra (3); q7 not in qrels
        "q8 Q0 d1 1 1.0 t\n"                # q8 not in qrels
    )
    qrels = (
        "q1 0 d1 1\nq1 0 d1 1\n"            # identical duplicate (1)
        "q2 0 d4 1\n"                       # positive absent from the lane
        "q3 0 d5 2\n"                       # positive absent from the lane
        "q4 0 d1 1\nq4 0 d1 1\nq4 0 d1 1\n"  # partial at relevant=2; two more identical duplicates (3)
        "q5 0 d2 -1\n"                      # unjudged
        "q6 0 d2 0\n"                       # negative
    )
    rp = write_bytes(tmp_path / "run.txt", run)
    qp = write_bytes(tmp_path / "qrels.txt", qrels)
    ws = Workspace.load(lanes=[(None, rp)], qrels=qp, settings=LoadSettings(metrics=tuple(parse_metrics("rr")), relevant=2))
    counts = {w.kind: w.count for w in ws.warnings}
    assert counts.get("extra_columns") == 3
    assert counts.get("lane_queries_without_judgments") == 2
    assert counts.get("duplicate_qrels_lines") == 3
    # at relevant=2: q1, q2 and q4 (grade 1 at best) are partial; q3 is the only positive, absent from the lane
    assert counts.get("partial_queries") == 3
    assert counts.get("positives_missing_from_lane") == 1
    assert counts.get("unjudged_queries") == 1
    ws1 = Workspace.load(lanes=[(None, rp)], qrels=qp, settings=LoadSettings(metrics=tuple(parse_metrics("rr")), relevant=1))
    counts1 = {w.kind: w.count for w in ws1.warnings}
    assert counts1.get("positives_missing_from_lane") == 3  # q2, q3, q4
    assert "partial_queries" not in counts1


def test_warnings_reach_the_report_and_do_not_fail_the_cli(tmp_path):
    (tmp_path / "out").mkdir()
    rp = write_bytes(tmp_path / "run.txt", "q1 Q0 d1 1 3.0 t junk\nq9 Q0 d1 1 1.0 t\n")
    qp = write_bytes(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d1 1\nq2 0 d2 1\nq3 0 d3 -1\nq4 0 d4 1\n")
    out, pq = outputs(tmp_path)
    res = run_cli(tmp_path, "--lane", rp, "--qrels", qp, "--out", str(out), "--relevant", "1", "--resamples", "0")
    assert res.returncode == 0, res.stderr
    kinds = {w["kind"]: w["count"] for w in json.loads(out.read_text())["summary"]["warnings"]}
    assert kinds.get("extra_columns") == 1
    assert kinds.get("lane_queries_without_judgments") == 1
    assert kinds.get("duplicate_qrels_lines") == 1
    assert kinds.get("positives_missing_from_lane") == 2
    assert kinds.get("unjudged_queries") == 1


# ------------------------------------------------------------------ accepted as trec_eval does


def trec_parse_run(text: str) -> dict[str, dict[str, float]]:
    """trec_eval's reading of a run: any whitespace separates fields, blank and '#' lines skipped."""
    out: dict[str, dict[str, float]] = {}
    for line in text.lstrip("\ufeff").splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        out.setdefault(f[0], {})[f[2]] = float(f[4])
    return out


def trec_parse_qrels(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in text.lstrip("\ufeff").splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        out.setdefault(f[0], {})[f[2]] = int(f[3])
    return out


BASE_RUN = (
    "q1 Q0 D1#p2 1 3.5 bm25\n"
    "q1 Q0 d9 2 2.0 bm25\n"
    "q1 Q0 d10 3 2.0 bm25\n"
    "q1 Q0 x#y#z 4 1.0e0 bm25\n"
    "q2 Q0 d10 1 0.5 bm25\n"
    "q2 Q0 d2 2 5E-1 bm25\n"
    "q2 Q0 d3 3 -1 bm25\n"
    "q3 Q0 d1 1 1 bm25\n"
)
BASE_QRELS = "q1 0 D1#p2 1\nq1 0 d10 2\nq1 0 x#y#z 1\nq2 0 d2 1\nq2 0 d3 3\nq3 0 d1 0\nq4 0 d1 1\n"
METRICS = "ndcg@3,ndcg@10,rr,p@2,recall@2,hit@1"
PT = {"ndcg@3": "ndcg_cut_3", "ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "p@2": "P_2", "recall@2": "recall_2",
      "hit@1": "success_1"}


def _lines(text: str) -> list[str]:
    return text.splitlines()


RUN_VARIANTS = {
    "plain": lambda t: t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
    "bom_crlf": lambda t: "\ufeff" + t.replace("\n", "\r\n"),
    "trailing_whitespace": lambda t: "".join(line + " \t  \n" for line in _lines(t)),
    "blank_lines": lambda t: "\n" + "".join(line + "\n\n   \n" for line in _lines(t)) + "\n\n",
    "comments": lambda t: "# run written by bm25\n" + "".join(line + "\n# a comment q1 Q0 d1 1 9.0 x\n   # indented\n"
                                                             for line in _lines(t)),
    "tabs": lambda t: t.replace(" ", "\t"),
    "mixed_separators": lambda t: "".join(
        (line.replace(" ", "\t") if i % 2 else line.replace(" ", "  ")) + "\n" for i, line in enumerate(_lines(t))),
    "padded_fields_in_tab_file": lambda t: "".join(
        ("  " + line.replace(" ", " \t ") if i else line.replace(" ", "\t")) + "\n" for i, line in enumerate(_lines(t))),
    "no_final_newline": lambda t: t.rstrip("\n"),
    "shuffled_lines_and_ranks": lambda t: "".join(
        " ".join(f[:3] + [str(100 - i)] + f[4:]) + "\n" for i, f in enumerate(reversed([ln.split() for ln in _lines(t)]))),
}


def _pytrec_oracle(run: dict, qrels: dict, relevant: int = 1) -> dict:
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3,10", "recip_rank", "P.2", "recall.2", "success.1"},
                                        relevance_level=relevant)
    return ev.evaluate(run)


def _check_against_oracle(ws: Workspace, lane: str, run: dict, qrels: dict) -> None:
    oracle = _pytrec_oracle(run, qrels)
    pq = ws.per_query(lane, "doc")
    positives = {q for q, d in qrels.items() if any(g >= 1 for g in d.values())}
    assert {ws.qids[c] for c in ws.positives.tolist()} == positives
    for q in positives:
        for key, name in PT.items():
            want = oracle.get(q, {}).get(name, 0.0)
            assert pq[key][ws.qid_index[q]] == pytest.approx(want, abs=1e-9), (q, key)


def _load(tmp_path: Path, run_path: str, qrels_path: str) -> Workspace:
    return Workspace.load(lanes=[("lane", run_path)], qrels=qrels_path, settings=LoadSettings(metrics=tuple(parse_metrics(METRICS))))


@pytest.mark.parametrize("variant", sorted(RUN_VARIANTS))
def test_run_variants_are_read_as_trec_eval_reads_them(tmp_path, variant):
    text = RUN_VARIANTS[variant](BASE_RUN)
    run = trec_parse_run(text)
    if variant != "shuffled_lines_and_ranks":
        assert run == trec_parse_run(BASE_RUN)  # the variant keeps the content
    rp = write_bytes(tmp_path / "lane.run", text)
    qp = write_bytes(tmp_path / "qrels.txt", BASE_QRELS)
    ws = _load(tmp_path, rp, qp)
    _check_against_oracle(ws, "lane", run, trec_parse_qrels(BASE_QRELS))
    # d9 and d10 tie at 2.0 in q1: doc id descending as bytes puts d9 first
    L = ws.lanes["lane"]
    order = [ws.docs[c] for c in L.doc[L.rows_of(ws.qid_index["q1"])].tolist()]
    assert order == ["D1#p2", "d9", "d10", "x#y#z"]


def test_a_space_inside_a_field_of_a_tab_file_splits_it_as_trec_eval_does(tmp_path):
    # trec_eval splits on any whitespace: 'dA x' is two fields, so the score is the 5th token, 2.
    text = "q1\tQ0\tdB\t1\t1.0\tt\nq1\tQ0\tdA x\t2\t0.5\tt\n"
    run = trec_parse_run(text)
    assert run == {"q1": {"dB": 1.0, "dA": 2.0}}
    rp = write_bytes(tmp_path / "lane.run", text)
    qp = write_bytes(tmp_path / "qrels.txt", "q1 0 dA 1\nq1 0 dB 0\n")
    ws = _load(tmp_path, rp, qp)
    _check_against_oracle(ws, "lane", run, trec_parse_qrels("q1 0 dA 1\nq1 0 dB 0\n"))
    assert "extra_columns" in {w.kind for w in ws.warnings}


QRELS_VARIANTS = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
    "trailing_whitespace": lambda t: "".join(line + "\t \n" for line in _lines(t)),
    "blank_lines_and_comments": lambda t: "# qrels\n\n" + "".join(line + "\n \n#c 0 x 1\n" for line in _lines(t)),
    "tabs": lambda t: t.replace(" ", "\t"),
}


@pytest.mark.parametrize("variant", sorted(QRELS_VARIANTS))
def test_qrels_variants_are_read_as_trec_eval_reads_them(tmp_path, variant):
    text = QRELS_VARIANTS[variant](BASE_QRELS)
    assert trec_parse_qrels(text) == trec_parse_qrels(BASE_QRELS)
    rp = write_bytes(tmp_path / "lane.run", BASE_RUN)
    qp = write_bytes(tmp_path / "qrels.txt", text)
    ws = _load(tmp_path, rp, qp)
    _check_against_oracle(ws, "lane", trec_parse_run(BASE_RUN), trec_parse_qrels(BASE_QRELS))


def test_hash_inside_a_doc_id_is_data_without_group_sep(tmp_path):
    rp = write_bytes(tmp_path / "lane.run", BASE_RUN)
    qp = write_bytes(tmp_path / "qrels.txt", BASE_QRELS)
    ws = _load(tmp_path, rp, qp)
    assert {"D1#p2", "x#y#z"} <= set(ws.docs.tolist())
    assert ws.levels() == ("doc",)
    assert ws.per_query("lane", "doc")["rr"][ws.qid_index["q1"]] == 1.0  # D1#p2 judged relevant, at rank 1


@pytest.mark.parametrize("which", ["lane", "qrels", "both"])
def test_gzip_inputs(tmp_path, which):
    rp = tmp_path / ("lane.run.gz" if which in ("lane", "both") else "lane.run")
    qp = tmp_path / ("qrels.txt.gz" if which in ("qrels", "both") else "qrels.txt")
    rp.write_bytes(gzip.compress(BASE_RUN.encode()) if rp.suffix == ".gz" else BASE_RUN.encode())
    qp.write_bytes(gzip.compress(BASE_QRELS.encode()) if qp.suffix == ".gz" else BASE_QRELS.encode())
    ws = Workspace.load(lanes=[(None, str(rp))], qrels=str(qp), settings=LoadSettings(metrics=tuple(parse_metrics(METRICS))))
    assert ws.input_lanes == ["lane"]  # 'lane.run.gz' -> 'lane'
    _check_against_oracle(ws, "lane", trec_parse_run(BASE_RUN), trec_parse_qrels(BASE_QRELS))


def test_json_lane_and_json_qrels(tmp_path):
    run, qrels = trec_parse_run(BASE_RUN), trec_parse_qrels(BASE_QRELS)
    rp = write_bytes(tmp_path / "lane.json", json.dumps(run, indent=2))
    qp = write_bytes(tmp_path / "qrels.json.gz", gzip.compress(json.dumps(qrels).encode()))
    ws = Workspace.load(lanes=[(None, rp)], qrels=qp, settings=LoadSettings(metrics=tuple(parse_metrics(METRICS))))
    assert ws.input_lanes == ["lane"]
    _check_against_oracle(ws, "lane", run, qrels)


def test_accepted_inputs_through_the_cli(tmp_path):
    (tmp_path / "out").mkdir()
    rp = write_bytes(tmp_path / "bm25.run", "\ufeff# header\r\n" + BASE_RUN.replace("\n", " \r\n") + "\r\n")
    jp = write_bytes(tmp_path / "dense.json", json.dumps(trec_parse_run(BASE_RUN)))
    qp = tmp_path / "qrels.txt.gz"
    qp.write_bytes(gzip.compress(("# qrels\n" + BASE_QRELS).encode()))
    out, pq = outputs(tmp_path)
    res = run_cli(tmp_path, "--lane", rp, "--lane", jp, "--qrels", str(qp), "--metrics", METRICS, "--out", str(out),
                  "--per-query", str(pq), "--resamples", "0")
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    oracle = _pytrec_oracle(trec_parse_run(BASE_RUN), trec_parse_qrels(BASE_QRELS))
    for lane in ("bm25", "dense"):
        per_query = report["per_query"][lane]["doc"]
        for q in ("q1", "q2", "q4"):
            for key, name in PT.items():
                assert per_query[q][key] == pytest.approx(oracle.get(q, {}).get(name, 0.0), abs=1e-9), (lane, q, key)
