"""Issue 13, the command line: nothing silent (items 5, 7, 8, 9, 11, 13, 14).

Every CLI call runs as its own process (``support.cli_many``: forked from one warm
interpreter) and is checked for what a user sees: the exit status, the one stderr
line ``rankscope: error: WHERE: what``, no traceback, no output file left behind,
and the numbers printed. The Cranfield cases skip without ``../shared``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import support

from rankscope_tui.kernel.errors import InputError

UNREADABLE = re.compile(r"\b(None|nan|NaN)\b|\bnull\b(?! (floor|distribution|hypothesis))")  # "null floor" is a gate term

RUN_A = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 1.0 t\nq2 Q0 d1 1 1.5 t\nq2 Q0 d4 2 0.5 t\n"
RUN_B = "q1 Q0 d3 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq2 Q0 d4 1 1.5 t\nq2 Q0 d2 2 0.5 t\n"
QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d1 0\nq3 0 d2 0\n"


def one_error_line(p, *needles: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr)
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: "), p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def readable(p) -> None:
    for stream in (p.stdout, p.stderr):
        hit = UNREADABLE.search(stream)
        assert hit is None, stream[max(0, hit.start() - 120):hit.end() + 120]
        assert "Traceback" not in stream


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("small")
    (d / "a.run").write_text(RUN_A)
    (d / "b.run").write_text(RUN_B)
    (d / "c.run").write_text(RUN_A + "q7 Q0 d1 1 1.0 t\n")  # q7: a lane query without judgments
    (d / "qrels.txt").write_text(QRELS)
    (d / "other.txt").write_text(QRELS)
    (d / "one.txt").write_text("q1 0 d1 1\n")
    (d / "negs.txt").write_text("q1 0 d2 0\nq2 0 d2 0\n")
    (d / "docs1.tsv").write_text("d1\tfirst doc\nd2\tsecond doc\n")
    (d / "docs2.tsv").write_text("d3\tthird doc\nd4\tfourth doc\n")
    (d / "docs-dup.tsv").write_text("d5\tfifth\n\nd2\tsecond again\n")
    (d / "queries.tsv").write_text("q1\tone\n")
    (d / "queries2.tsv").write_text("q2\ttwo\n")
    (d / "strata.tsv").write_text("q1\tlong\nq2\tshort\n")
    return d


# ------------------------------------------------------------------ item 5: repeated options

REPEATS = {
    "evaluate-qrels": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--qrels", "other.txt", "--out", "r.json"], "--qrels"),
    "evaluate-corpus": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--corpus", "docs1.tsv", "--corpus", "docs2.tsv",
                         "--out", "r.json"], "--corpus"),
    "evaluate-thresholds": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--thresholds", "x.json", "--thresholds=y.json",
                             "--out", "r.json"], "--thresholds"),
    "evaluate-ood": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--ood-negatives", "negs.txt", "--ood-negatives",
                      "negs.txt", "--out", "r.json"], "--ood-negatives"),
    "evaluate-depth": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--depth", "3", "--depth", "3", "--out", "r.json"], "--depth"),
    "evaluate-out": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--out", "r.json", "--out", "s.json"], "--out"),
    "calibrate-out": (["calibrate", "--lane", "a.run", "--qrels", "qrels.txt", "--out", "t.json", "--out", "u.json"], "--out"),
    "compare-baseline": (["compare", "--lane", "a.run", "--lane", "b.run", "--qrels", "qrels.txt", "--baseline", "a",
                          "--baseline", "b", "--out", "r.json"], "--baseline"),
    "diff-before": (["diff", "--before", "x.json", "--before", "y.json", "--after", "z.json", "--out", "r.json"], "--before"),
    "verdict-gates": (["verdict", "--report", "x.json", "--gates", "g.json", "--gates", "h.json", "--out", "r.json"], "--gates"),
    "tui-gates": (["tui", "--lane", "a.run", "--qrels", "qrels.txt", "--gates", "g.json", "--gates", "h.json"], "--gates"),
    "goldens-out": (["goldens", "--out", "r.json", "--out", "s.json"], "--out"),
}


@pytest.fixture(scope="module")
def repeats(small):
    return support.cli_many({k: (a, small, None) for k, (a, _) in REPEATS.items()})


@pytest.mark.parametrize("case", sorted(REPEATS))
def test_a_repeated_single_valued_option_is_an_error(repeats, small, case):
    line = one_error_line(repeats[case], REPEATS[case][1], "given twice")
    assert f"rankscope: error: {REPEATS[case][1]} given twice" in line
    for out in ("r.json", "s.json", "t.json", "u.json"):
        assert not (small / out).exists()


def test_every_single_valued_option_of_every_command_refuses_a_repeat():
    """No option of any command keeps the last of two values: every store action is the checking one."""
    import argparse

    from rankscope_tui.commands import build_parser
    from rankscope_tui.commands.options import _StoreOnce

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    seen = 0
    for name, sp in subs.choices.items():
        for action in sp._actions:
            if type(action) is argparse._StoreAction:
                pytest.fail(f"{name} {action.option_strings} keeps the last of two values")
            seen += isinstance(action, _StoreOnce)
    assert seen > 40


def test_docs_and_queries_are_repeatable_and_merged(small):
    from rankscope_tui.commands import build_parser
    from rankscope_tui.commands.options import load_workspace
    from rankscope_tui.commands.tui import options_from_args, parse_args
    from rankscope_tui.state import load_workspace as dash_load

    argv = ["--lane", str(small / "a.run"), "--qrels", str(small / "qrels.txt"), "--docs", str(small / "docs1.tsv"),
            "--docs", str(small / "docs2.tsv"), "--queries", str(small / "queries.tsv"), "--queries",
            str(small / "queries2.tsv"), "--resamples", "0"]
    ws = load_workspace(build_parser().parse_args(["evaluate", *argv]))
    assert ws.doc_text == {"d1": "first doc", "d2": "second doc", "d3": "third doc", "d4": "fourth doc"}
    assert ws.query_text == {"q1": "one", "q2": "two"}
    assert ws.sources.docs == (str(small / "docs1.tsv"), str(small / "docs2.tsv"))
    opts = options_from_args(parse_args(argv))
    assert opts.docs == (str(small / "docs1.tsv"), str(small / "docs2.tsv")) and len(opts.queries) == 2
    assert str(small / "docs2.tsv") in opts.input_paths()
    assert dash_load(opts).doc_text == ws.doc_text


def test_an_id_defined_in_two_text_files_names_both(small):
    p = support.run_cli("evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--docs", "docs1.tsv", "--docs",
                        "docs-dup.tsv", "--out", "r.json", cwd=small)
    line = one_error_line(p, "docs-dup.tsv:3:", "'d2'", "docs1.tsv:2")
    assert line.startswith("rankscope: error: docs-dup.tsv:3: ")
    assert not (small / "r.json").exists()


def test_cranfield_texts_come_in_two_files():
    d = support.shared_path("cranfield")
    from rankscope_tui.kernel.inputs.tables import read_text_files

    texts = read_text_files([str(d / "passages.tsv"), str(d / "passages-not-indexed.tsv")])
    n = sum(1 for f in ("passages.tsv", "passages-not-indexed.tsv") for ln in (d / f).read_text().splitlines() if ln.strip())
    assert len(texts) == n
    first_not_indexed = (d / "passages-not-indexed.tsv").read_text().split("\n", 1)[0].split("\t")
    assert texts[first_not_indexed[0]] == first_not_indexed[1].strip()


# ------------------------------------------------------------------ items 7, 8: no positive, one query, --relevant

def _zero_positive_jobs(d: Path) -> dict:
    two = ["--lane", "a.run", "--lane", "b.run"]
    jobs = {}
    for fmt in ("text", "markdown", "latex"):
        jobs[f"above-{fmt}"] = (["evaluate", *two, "--qrels", "qrels.txt", "--relevant", "3", "--strata", "strata.tsv",
                                 "--format", fmt, "--out", f"above-{fmt}.json"], d, None)
        jobs[f"negs-{fmt}"] = (["evaluate", *two, "--qrels", "negs.txt", "--format", fmt, "--out", f"negs-{fmt}.json"], d, None)
        jobs[f"one-{fmt}"] = (["evaluate", "--lane", "a.run", "--qrels", "one.txt", "--format", fmt, "--out",
                               f"one-{fmt}.json"], d, None)
    jobs["compare-none"] = (["compare", *two, "--qrels", "qrels.txt", "--relevant", "3"], d, None)
    for rel in ("0", "-1"):
        jobs[f"relevant{rel}"] = (["evaluate", *two, "--qrels", "qrels.txt", "--relevant", rel, "--out", f"rel{rel}.json"], d, None)
        jobs[f"relevant{rel}-compare"] = (["compare", *two, "--qrels", "qrels.txt", "--relevant", rel], d, None)
    return jobs


@pytest.fixture(scope="module")
def zero(small):
    return support.cli_many(_zero_positive_jobs(small))


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex"])
@pytest.mark.parametrize("case", ["above", "negs", "one"])
def test_no_positive_or_one_query_reports_cleanly(zero, small, case, fmt):
    p = zero[f"{case}-{fmt}"]
    assert p.returncode == 0, p.stderr
    readable(p)
    report = json.loads((small / f"{case}-{fmt}.json").read_text())
    assert report["summary"]["positives"] == (1 if case == "one" else 0)
    if fmt == "text" and case != "one":
        assert "no positive query" in p.stdout
        assert "unique share (positives only this lane surfaces): a — (no positives), b — (no positives)" in p.stdout
    if fmt == "text" and case == "one":
        assert "a — (not meaningful with one lane)" in p.stdout  # one lane: no share is printed as a number
        assert "one positive query" in p.stdout


def test_one_query_cells_say_why_they_have_no_interval(zero, small):
    rr = json.loads((small / "one-text.json").read_text())["lanes"]["a"]["doc"]["rr"]
    assert rr["value"] == 1.0 and rr["low"] is None and rr["low_reason"] == "one query: no bootstrap interval"


def test_compare_with_no_positive_is_one_line(zero):
    one_error_line(zero["compare-none"], "2 queries", "got 0")


@pytest.mark.parametrize("rel", ["0", "-1"])
def test_relevant_below_one_is_refused(zero, small, rel):
    for job in (f"relevant{rel}", f"relevant{rel}-compare"):
        line = one_error_line(zero[job], "--relevant", "at least 1", f"not {rel}", "grade 0", "not judged")
        assert line.startswith("rankscope: error: --relevant: ")
    assert not (small / f"rel{rel}.json").exists()


def test_relevant_below_one_is_refused_by_the_kernel(small):
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    with pytest.raises(InputError, match="at least 1"):
        Workspace.load([(None, str(small / "a.run"))], str(small / "qrels.txt"), LoadSettings(relevant=0))


@pytest.fixture(scope="module")
def downstream(zero, small):
    """verdict and diff on the zero-positive and one-query reports."""
    (small / "g.json").write_text(json.dumps([
        {"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.2},
        {"path": "lanes.b.doc.hit@5", "op": ">=", "against": "lanes.a.doc.hit@5"},
        {"path": "summary.positives", "op": ">=", "threshold": 1},
    ]))
    (small / "g1.json").write_text(json.dumps([{"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.2},
                                               {"path": "summary.unique_share.a.share", "op": ">=", "threshold": 0.5}]))
    return support.cli_many({
        "verdict-none": (["verdict", "--report", "above-text.json", "--gates", "g.json", "--out", "v.json"], small, None),
        "verdict-one": (["verdict", "--report", "one-text.json", "--gates", "g1.json"], small, None),
        "diff-none": (["diff", "--before", "negs-text.json", "--after", "above-text.json", "--out", "d.json"], small, None),
        "diff-one": (["diff", "--before", "one-text.json", "--after", "one-text.json"], small, None),
    })


def test_verdict_on_a_report_without_positives(downstream, small):
    p = downstream["verdict-none"]
    assert p.returncode == 1, p.stderr  # summary.positives >= 1 fails on the point
    readable(p)
    rows = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.startswith(("lanes.", "summary."))}
    assert "— (no queries)" in rows["lanes.a.doc.ndcg@10"] and "undecided  undecided" in rows["lanes.a.doc.ndcg@10"]
    assert re.search(r"summary\.positives >= 1\s+0\s+threshold 1\s+fail\s+not applicable", rows["summary.positives"])
    v = json.loads((small / "v.json").read_text())
    assert [r["point"] for r in v["rules"]] == ["undecided", "undecided", "fail"]


def test_verdict_on_one_lane_one_query(downstream):
    p = downstream["verdict-one"]
    assert p.returncode == 0, p.stderr
    readable(p)
    share = next(ln for ln in p.stdout.splitlines() if ln.startswith("summary.unique_share"))
    assert "not meaningful with one lane" in share and "undecided" in share  # judged on no number


def test_diff_without_positives_or_with_one_query_is_one_line(downstream, small):
    one_error_line(downstream["diff-none"], "negs-text.json", "no positive query")
    assert not (small / "d.json").exists()
    one_error_line(downstream["diff-one"], "two common queries")


def test_negatives_only_qrels_with_a_gate_lane_on_cranfield(tmp_path):
    """The issue's reproduction: the shipped out-of-domain negatives as the qrels, gated on dense."""
    d = support.shared_path("cranfield")
    lanes = ["--lane", str(d / "lanes" / "bm25.run"), "--lane", str(d / "lanes" / "dense.run")]
    res = support.cli_many({
        fmt: (["evaluate", *lanes, "--qrels", str(d / "qrels-ood-negatives.txt"), "--gate-on", "dense", "--format", fmt,
               "--out", str(tmp_path / f"{fmt}.json")], tmp_path, None) for fmt in ("markdown", "latex")})
    for fmt, p in res.items():
        assert p.returncode == 0, p.stderr
        readable(p)
        report = json.loads((tmp_path / f"{fmt}.json").read_text())
        assert report["summary"]["positives"] == 0 and report["gate"]["lane"] == "dense"


# ------------------------------------------------------------------ item 9: repeated JSON keys

JSON_REPEATS = {
    "lane-qid": ("lane", '{\n "q1": {"d1": 1.0},\n "q2": {"d1": 2.0},\n "q1": {"d2": 0.5}\n}\n', 4, "query 'q1' appears twice", 2),
    "qrels-qid": ("qrels", '{\n "q1": {"d1": 1},\n "q1": {"d3": 2}\n}\n', 3, "query 'q1' appears twice", 2),
    "qrels-doc-same-grade": ("qrels", '{"q1": {"d1": 1,\n "d1": 1}}\n', 2, "doc 'd1' appears twice in query 'q1'", 1),
    "lane-doc": ("lane", '{"q1": {"d1": 1.0, "d2": 0.5,\n\n "d1": 0.1}}\n', 3, "doc 'd1' appears twice in query 'q1'", 1),
}


@pytest.mark.parametrize("case", sorted(JSON_REPEATS))
def test_a_repeated_json_key_names_both_lines(tmp_path, case):
    role, text, line, what, first = JSON_REPEATS[case]
    (tmp_path / "in.json").write_text(text)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "qrels.txt").write_text(QRELS)
    args = (["--lane", "in.json", "--qrels", "qrels.txt"] if role == "lane" else ["--lane", "a.run", "--qrels", "in.json"])
    p = support.run_cli("evaluate", *args, "--out", "r.json", cwd=tmp_path)
    msg = one_error_line(p, what, f"first at line {first}")
    assert msg.startswith(f"rankscope: error: in.json:{line}: ")
    assert not (tmp_path / "r.json").exists()


def test_json_pairs_still_reads_distinct_keys():
    from rankscope_tui.kernel.inputs.json_pairs import json_pairs

    q, d, v, lines = json_pairs('{"q1": {"d1": 1, "d2": 2},\n"q2": {"d1": 3}}', "x.json", "grade")
    # the fast road returns columns (arrays), the scanner lists: compared as lists
    assert [list(x) for x in (q, d, v, lines)] == [["q1", "q1", "q2"], ["d1", "d2", "d1"], [1, 2, 3], [1, 1, 2]]


# ------------------------------------------------------------------ item 11: definitions that hold

def _judged_oracle(ranked: list[str], judged: set[str], k: int) -> float:
    """Hits in the top k judged (grade >= 0), divided by k: plain Python."""
    return sum(1 for d in ranked[:k] if d in judged) / k


def _trec_eval_unj(ranked: list[str] | None, judged: set[str], k: int) -> float:
    """trec_eval's unj.k: unjudged docs among the retrieved top k, divided by k (a missing
    query retrieves nothing: 0)."""
    if ranked is None:
        return 0.0
    return sum(1 for d in ranked[:k] if d not in judged) / k


def test_judged_at_k_is_what_its_definition_says(tmp_path):
    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    run = {"full": [f"d{i}" for i in range(12)], "short": ["d0", "d1", "d2"]}
    judged = {"d0", "d2", "d5", "d7"}
    lines = [f"{q} Q0 {d} {i + 1} {100 - i} t" for q, docs in run.items() for i, d in enumerate(docs)]
    (tmp_path / "r.run").write_text("\n".join(lines) + "\n")
    qrels = [f"{q} 0 {d} {1 if d == 'd0' else 0}" for q in ("full", "short", "missing") for d in sorted(judged)]
    (tmp_path / "q.txt").write_text("\n".join(qrels) + "\n")
    ws = Workspace.load([(None, str(tmp_path / "r.run"))], str(tmp_path / "q.txt"),
                        LoadSettings(metrics=tuple(parse_metrics("judged@10")), resamples=0))
    got = dict(zip(ws.qids.tolist(), ws.per_query("r")["judged@10"].tolist()))
    for q in ("full", "short", "missing"):
        assert got[q] == pytest.approx(_judged_oracle(run.get(q, []), judged, 10), abs=1e-12)
    # equal to 1 - unj.10 only for the full list of a query in the run
    assert got["full"] == pytest.approx(1 - _trec_eval_unj(run["full"], judged, 10))
    assert got["short"] != pytest.approx(1 - _trec_eval_unj(run["short"], judged, 10))
    assert got["missing"] != pytest.approx(1 - _trec_eval_unj(None, judged, 10))
    text = ws.settings.metrics[0].definition(1)
    assert "only when the list holds at least 10 hits and the query is in the run" in text
    assert "= 1 - trec_eval unj.10;" not in text


def test_readme_says_what_holds():
    readme = (support.REPO / "README.md").read_text()
    assert "keeps 62 of 66" in readme and "drops simplex points (62 of 66" not in readme
    assert "float32" in readme and "input order" in readme
    assert "only when the" in readme and "1 − `unj.k`" in readme


def test_ranx_grid_count_the_readme_quotes():
    """The README's numbers, from the test that checks them against ranx (tests/test_fusion.py)."""
    from rankscope_tui.kernel.fusion import methods as F

    assert F.grid_size(3, 0.1) == 66
    src = (support.REPO / "tests" / "test_fusion.py").read_text()
    assert "len(theirs) == 62 and len(ours) == 66" in src


# ------------------------------------------------------------------ item 13: verdict prints the numbers

@pytest.fixture(scope="module")
def verdicts(small):
    p = support.run_cli("evaluate", "--lane", "a.run", "--lane", "b.run", "--qrels", "qrels.txt", "--resamples", "200",
                        "--out", "full.json", cwd=small)
    assert p.returncode == 0, p.stderr
    rules = [
        {"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.2},
        {"path": "lanes.rrf.doc.rr", "op": ">=", "against": "lanes.b.doc.rr"},
        {"path": "summary.unique_share.b.share", "op": "<=", "threshold": 0.9},
        {"path": "summary.judged_queries_missing_from_any_lane.missing_from_any", "op": "<=", "threshold": 0},
        {"path": "summary.negatives", "op": ">=", "against": "summary.positives"},
    ]
    (small / "rules.json").write_text(json.dumps(rules, indent=1))
    res = support.cli_many({
        on: (["verdict", "--report", "full.json", "--gates", "rules.json", "--on", on, "--out", f"v-{on}.json"], small, None)
        for on in ("interval", "point")})
    return json.loads((small / "full.json").read_text()), res


def test_verdict_prints_value_interval_threshold_and_both_decisions(verdicts, small):
    report, res = verdicts
    p = res["interval"]
    readable(p)
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith(("lanes.", "summary."))]
    assert len(rows) == 5
    nd = report["lanes"]["a"]["doc"]["ndcg@10"]
    assert f"{nd['value']:.4f} [{nd['low']:.4f}, {nd['high']:.4f}]" in rows[0] and "threshold 0.2" in rows[0]
    rr, other = report["lanes"]["rrf"]["doc"]["rr"], report["lanes"]["b"]["doc"]["rr"]
    assert f"{rr['value']:.4f} [{rr['low']:.4f}, {rr['high']:.4f}]" in rows[1]
    assert f"against {other['value']:.4f} [{other['low']:.4f}, {other['high']:.4f}]" in rows[1]
    point = "pass" if nd["value"] >= 0.2 else "fail"
    interval = "pass" if nd["low"] >= 0.2 else "fail"
    assert rows[0].split()[-2:] == [point, interval]
    share = report["summary"]["unique_share"]["b"]["share"]
    assert f"{share:.4f}" in rows[2] and re.search(rf"{'pass' if share <= 0.9 else 'fail'}\s+not applicable$", rows[2])
    s = report["summary"]
    assert re.search(rf"\b{s['negatives']}\s+against {s['positives']}\s+fail\s+not applicable", rows[4])
    assert "judged on the point in either column" in p.stdout


def test_scalar_rules_decide_on_the_point_in_either_column(verdicts, small):
    _, res = verdicts
    s_int, s_pt = (json.loads((small / f"v-{on}.json").read_text()) for on in ("interval", "point"))
    assert res["interval"].returncode == res["point"].returncode == 1  # negatives 1 >= positives 2 fails
    scal = [r for r in s_int["rules"] if r["kind"] == "scalar"]
    assert len(scal) == 3 and all(r["interval"] == "not applicable" and r["low"] is None for r in scal)
    assert s_int["failed"] >= 1 and s_pt["failed"] >= 1


def test_a_rule_path_that_ends_nowhere_useful_says_which_numbers_are_there(small, verdicts):
    (small / "bad.json").write_text(json.dumps([{"path": "summary.unique_share.b", "op": ">=", "threshold": 0.1}]))
    p = support.run_cli("verdict", "--report", "full.json", "--gates", "bad.json", cwd=small)
    one_error_line(p, "bad.json:1:", "count, n, share")


# ------------------------------------------------------------------ item 14: small ones

@pytest.fixture(scope="module")
def small_ones(small):
    base = ["evaluate", "--lane", "a.run", "--lane", "b.run", "--qrels", "qrels.txt", "--resamples", "0"]
    return support.cli_many({
        "blind-no-strata": (base + ["--blind", "long"], small, None),
        "blind-unknown": (base + ["--strata", "strata.tsv", "--blind", "x"], small, None),
        "blind-strat": (base + ["--strata", "strata.tsv", "--blind", "foo=long"], small, None),
        "blind-label": (base + ["--strata", "strata.tsv", "--blind", "strata=x"], small, None),
        "ok": (["evaluate", "--lane", "c.run", "--lane", "b.run", "--qrels", "qrels.txt", "--resamples", "0", "--strata",
                "strata.tsv", "--blind", "long"], small, None),
        "one-lane": (["evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--resamples", "0", "--out", "one-lane.json"], small, None),
    })


def test_blind_errors_name_the_flag_once(small_ones):
    for case, needles in {"blind-no-strata": ("'long'", "needs a --strata file and none is loaded"),
                          "blind-unknown": ("no stratification has the label 'x'", "'long', 'short'"),
                          "blind-strat": ("no stratification named 'foo'", "loaded: 'strata'"),
                          "blind-label": ("stratification 'strata' has no label 'x'", "'long', 'short'")}.items():
        line = one_error_line(small_ones[case], *needles)
        assert line.startswith("rankscope: error: --blind: ") and line.count("--blind") == 1, line


def test_warnings_name_file_and_line(small_ones):
    p = small_ones["ok"]
    assert p.returncode == 0, p.stderr
    warn = [ln for ln in p.stdout.splitlines() if ln.startswith("warning:")]
    assert warn
    for ln in warn:
        if "list holds fewer than k hits" in ln:  # a count over a lane's queries: no one place, the lane named
            assert re.match(r"warning: lane \w+: positive queries whose list holds fewer than k hits ", ln), ln
            continue
        assert re.match(r"warning: [\w.-]+\.(run|txt):\d+: ", ln), ln


def test_warning_lines_point_at_the_first_case(tmp_path):
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2 t\nq9 Q0 d1 1 2 t\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d1 0\nq3 0 d2 1\nq4 0 d1 1\nq5 0 d1 -1\n")
    ws = Workspace.load([(None, str(tmp_path / "r.run"))], str(tmp_path / "q.txt"), LoadSettings(resamples=0))
    got = {w.kind: (w.where, w.message) for w in ws.warnings}
    assert got["lane_queries_without_judgments"][0] == f"{tmp_path / 'r.run'}:2"  # q9
    assert got["positives_missing_from_lane"][0] == f"{tmp_path / 'q.txt'}:3"  # q3
    assert got["unjudged_queries"][0] == f"{tmp_path / 'q.txt'}:5"


def test_one_lane_unique_share_is_not_a_number(small_ones, small):
    p = small_ones["one-lane"]
    assert p.returncode == 0, p.stderr
    assert "unique share (positives only this lane surfaces): a — (not meaningful with one lane)" in p.stdout
    rep = json.loads((small / "one-lane.json").read_text())
    assert rep["summary"]["unique_share"]["a"]["share_reason"] == "not meaningful with one lane"


def test_attribution_line_keeps_the_subtotal_apart(small_ones):
    line = next(ln for ln in small_ones["ok"].stdout.splitlines() if ln.startswith("Attribution (doc level"))
    head, _, subtotal = line.partition("; not_surfaced ")
    assert "not_surfaced" not in head and "(= beyond_window + not_retrieved)" in subtotal
    counts = dict(re.findall(r"([\w+]+) (\d+)", head.split(": ", 1)[1]))
    assert sum(map(int, counts.values())) == 2  # the parts partition the 2 positives


def test_qids_in_display_order():
    from rankscope_tui.kernel.inputs.tables import qid_display_order

    ids = ["10", "102", "2", "1", "9", "007", "7"]
    assert [ids[i] for i in qid_display_order(ids)] == ["1", "2", "007", "7", "9", "10", "102"]
    mixed = ["q10", "q102", "q9", "Q1", "q2", "cisi-10", "cisi-2"]
    # digits inside an id compare as numbers: q9 before q10, never q10, q102, ..., q9
    assert [mixed[i] for i in qid_display_order(mixed)] == ["Q1", "cisi-2", "cisi-10", "q2", "q9", "q10", "q102"]


def test_strata_view_lists_cranfield_qids_numerically():
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    d = support.shared_path("cranfield")
    ws = Workspace.load([(None, str(d / "lanes" / "bm25.run"))], str(d / "qrels-test.txt"), LoadSettings(resamples=0))
    shown = ws.qids[ws.in_display_order(ws.positives)].tolist()
    assert [int(q) for q in shown] == sorted(int(q) for q in shown)
    assert ws.qids[ws.positives].tolist() != shown  # code order (bytes) is left alone
    assert np.array_equal(np.sort(ws.in_display_order(ws.positives)), ws.positives)


@pytest.mark.parametrize("option", [["--gate-on", "dense"], ["--fpir", "0.1"], ["--conservative"], ["--miss-rate", "0.1"],
                                    ["--margin", "0.01"], ["--mutual", "2"], ["--window", "50"], ["--blind", "x"]])
def test_compare_refuses_options_it_would_not_apply(demo_dir, option):
    """compare shares evaluate's loading options, but runs neither the gate nor attribution:
    such an option given to it is refused, not silently dropped."""
    p = support.run_cli("compare", "--lane", demo_dir / "lexical.run", "--lane", demo_dir / "dense.run",
                        "--qrels", demo_dir / "qrels-test.txt", *option)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"rankscope: error: {option[0]}: compare does not use "), p.stderr
    assert "Traceback" not in p.stderr


def test_a_relevance_level_above_every_grade_is_said(small, tmp_path):
    """The qrels grade at most 2: p(rel=3)@2 is 0 on every query, and the report says why
    (p(rel=2)@2, reached by d3 in q1, draws no warning)."""
    out = tmp_path / "r.json"
    p = support.run_cli("evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--metrics", "p(rel=3)@2,p(rel=2)@2",
                        "--resamples", "0", "--out", out, cwd=small)
    assert p.returncode == 0, p.stderr
    readable(p)
    said = [w for w in json.loads(out.read_text())["summary"]["warnings"] if w["kind"] == "relevance_level_unreached"]
    assert [w["message"] for w in said] == [
        "p(rel=3)@2: no judged doc has grade >= 3 (the highest grade is 2); it is 0 on every query"]
    assert said[0]["where"] == "qrels.txt"
    assert "p(rel=3)@2: no judged doc has grade >= 3" in p.stdout + p.stderr
    assert "p(rel=2)@2: no judged" not in p.stdout + p.stderr
