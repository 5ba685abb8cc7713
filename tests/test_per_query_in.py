"""Per-query tables as input (``--per-query-in``): values computed elsewhere get rankscope's
comparison, interval and strata tables, and the same rows as the runs they came from.

The oracles are the peers themselves: ``ir_measures -q`` run as its own command line,
and trec_eval's ``-q`` output written from pytrec_eval-terrier's values in trec_eval's own
format (``%-22s\\t%s\\t%.4f``, the summary ``all`` lines and ``runid`` last), as
/work/shared/data/trec_eval_test/README.md documents it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import ir_measures  # noqa: F401  (a declared test dependency: its command line writes the tables)
import numpy as np
import pytest
import pytrec_eval
from support import shared_path

from rankscope_tui.cli import main
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.instruments.tables import table_report
from rankscope_tui.kernel.workspace.per_query_tables import detect_format, load_tables, read_per_query_table

LANES = ("bm25", "dense", "tfidf")
B = "1999"


def _read_trec(path, kind):
    out: dict = {}
    for line in open(path):
        f = line.split()
        if f:
            out.setdefault(f[0], {})[f[2]] = float(f[4]) if kind == "run" else int(f[3])
    return out


def write_trec_eval_q(path, qrels: dict, run: dict, tag: str) -> None:
    """What ``trec_eval -q -m ndcg_cut.10 -m P.10 -m recip_rank -m map -m num_ret`` prints."""
    measures = {"ndcg_cut.10", "P.10", "recip_rank", "map", "num_ret"}
    res = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    with open(path, "w") as fh:
        fh.write("%-22s\t%s\t%s\n" % ("runid", "all", tag))  # trec_eval prints runid among the lines
        for q in sorted(res):
            for m in sorted(res[q]):
                fh.write("%-22s\t%s\t%.4f\n" % (m, q, res[q][m]))
        for m in sorted(next(iter(res.values()))):
            fh.write("%-22s\t%s\t%.4f\n" % (m, "all", float(np.mean([r[m] for r in res.values()]))))


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory):
    d = shared_path("cranfield")
    out = tmp_path_factory.mktemp("pq")
    qrels = _read_trec(d / "qrels-test.txt", "qrels")
    paths = {"runs": {}, "trec_eval": {}, "irm_jsonl": {}, "irm_tsv": {}}
    for lane in LANES:
        run_path = d / "lanes" / f"{lane}.run"
        paths["runs"][lane] = run_path
        te = out / "trec_eval" / f"{lane}.q"  # one directory a format: a file's name up to its suffix names its run
        te.parent.mkdir(exist_ok=True)
        write_trec_eval_q(te, qrels, _read_trec(run_path, "run"), lane)
        paths["trec_eval"][lane] = te
        for fmt, suffix in (("jsonl", "irm_jsonl"), ("tsv", "irm_tsv")):
            p = out / f"irm_{fmt}" / f"{lane}.{fmt}"
            p.parent.mkdir(exist_ok=True)
            with open(p, "w") as fh:
                subprocess.run([sys.executable, "-m", "ir_measures", str(d / "qrels-test.txt"), str(run_path),
                                "nDCG@10", "P@10", "RR", "-q", "-o", fmt], stdout=fh, check=True)
            paths[suffix][lane] = p
    paths["qrels"] = d / "qrels-test.txt"
    paths["dir"] = out
    return paths


def _compare(tmp, name, inputs: list[str], qrels) -> dict:
    out = tmp / f"{name}.json"
    rc = main(["compare", *inputs, "--qrels", str(qrels), "--resamples", B, "--metric", "ndcg@10", "--metric", "p@10",
               "--candidate", "dense", "--candidate", "tfidf", "--out", str(out)])  # (on runs, rrf is a lane too)
    assert rc == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def on_runs(cranfield):
    lanes = [x for lane in LANES for x in ("--lane", str(cranfield["runs"][lane]))]
    return _compare(cranfield["dir"], "runs", lanes, cranfield["qrels"])


JUDGED_KEYS = ("baseline_judged", "candidate_judged")


def _no_tie_order(rows):
    """The rows without ``tie_order`` and ``judgment_bounds`` (and their reasons) and without
    the unjudged hits' note: a table holds no ranking, so neither (null there, checked by each
    test), where the runs give them."""
    return [{k: ([n for n in v if not n.startswith("the verdict holds under one bound")] if k == "notes" else v)
             for k, v in r.items() if not k.startswith(("tie_order", "judgment_bounds"))} for r in rows]


def _without_judged(rows):
    """A row with its largest losses' and gains' judged@10 left out (a table holds no ranking)."""
    out = []
    for r in rows:
        r = _no_tie_order([r])[0]
        for k in ("largest_losses", "largest_gains"):
            r[k] = [{a: b for a, b in x.items() if a not in JUDGED_KEYS} for x in r[k]]
        out.append(r)
    return out


def test_ir_measures_jsonl_gives_the_rows_of_compare_on_the_runs(cranfield, capsys, on_runs):
    """Must show 3 (ir_measures -q, full precision): every row key for key, every setting."""
    tables = [x for lane in LANES for x in ("--per-query-in", str(cranfield["irm_jsonl"][lane]))]
    got = _compare(cranfield["dir"], "irm", tables, cranfield["qrels"])
    assert list(_no_tie_order(got["comparisons"])[0]) == list(_no_tie_order(on_runs["comparisons"])[0])
    assert all(r["tie_order"] is None for r in got["comparisons"])
    assert _without_judged(got["comparisons"]) == _without_judged(on_runs["comparisons"])
    assert got["settings"] == on_runs["settings"]  # qrels_sha256 included: the same test set
    # a table has no ranking: judged@10 of the largest losses is undefined, never invented
    assert all(x[k] is None for r in got["comparisons"] for x in r["largest_losses"] for k in JUDGED_KEYS)


def test_trec_eval_q_gives_the_rows_of_compare_on_the_runs(cranfield, on_runs):
    """Must show 3 (trec_eval -q): trec_eval prints 4 decimals, so values agree to 5e-5,
    and on the Cranfield lanes every count, verdict and key is the same."""
    tables = [x for lane in LANES for x in ("--per-query-in", str(cranfield["trec_eval"][lane]))]
    got = _compare(cranfield["dir"], "te", tables, cranfield["qrels"])
    assert len(got["comparisons"]) == len(on_runs["comparisons"]) == 4
    assert all(r["tie_order"] is None for r in got["comparisons"])
    for a, b in zip(_no_tie_order(got["comparisons"]), _no_tie_order(on_runs["comparisons"])):
        assert list(a) == list(b)
        for k, v in b.items():
            if k in ("largest_losses", "largest_gains"):
                assert [x["qid"] for x in a[k]] == [x["qid"] for x in v]
            elif isinstance(v, float) and k in ("randomization_p", "adjusted_p", "t_p", "p_superiority"):
                assert a[k] == pytest.approx(v, abs=5e-3), k
            elif isinstance(v, float):
                assert a[k] == pytest.approx(v, abs=5e-4), k  # means of 4-decimal values, bounds, effect size
            elif k == "power":  # from sd and Δ̄ of 4-decimal values: the queries needed agree to a few per cent
                assert list(a[k]) == list(v)
                for pk, pv in v.items():
                    if isinstance(pv, float):
                        assert a[k][pk] == pytest.approx(pv, abs=5e-4), pk
                    elif pk == "needed" and isinstance(pv, int):
                        assert a[k][pk] == pytest.approx(pv, rel=0.03), pk
                    elif pk == "sentence":  # quotes the numbers just compared
                        assert a[k][pk].split(",")[0] == pv.split(",")[0], pk
                    else:
                        assert a[k][pk] == pv, pk
            elif k == "sentence":  # built from the numbers above, which agree to trec_eval's 4 decimals
                assert a[k].split(" (")[0].split(" by ")[0] == v.split(" (")[0].split(" by ")[0], k
            else:
                assert a[k] == v, k


def test_rankscope_per_query_csv_gives_the_same_rows_exactly(cranfield, on_runs, tmp_path):
    """rankscope's own --per-query CSV carries repr'd values and judged@10: the rows are equal, all of them."""
    csv = tmp_path / "rows.csv"
    lanes = [x for lane in LANES for x in ("--lane", str(cranfield["runs"][lane]))]
    assert main(["evaluate", *lanes, "--qrels", str(cranfield["qrels"]), "--resamples", "0", "--per-query",
                 str(csv)]) == 0
    got = _compare(tmp_path, "csv", ["--per-query-in", str(csv)], cranfield["qrels"])
    assert all(r["tie_order"] is None for r in got["comparisons"])
    assert _no_tie_order(got["comparisons"]) == _no_tie_order(on_runs["comparisons"])


def test_ir_measures_tsv_is_detected_and_read_as_ir_measures(cranfield):
    t = read_per_query_table(str(cranfield["irm_tsv"]["bm25"]))
    assert t.format == "ir_measures" and t.runs == ["bm25"]
    assert set(k[2] for k in t.values) == {"ndcg@10", "p@10", "rr"}
    assert t.skipped == {"summary rows (qid 'all')": 3}
    te = read_per_query_table(str(cranfield["trec_eval"]["bm25"]))
    assert te.format == "trec_eval" and {"runid", "num_ret"} <= set(te.skipped)


def test_table_report_intervals_equal_the_runs_report(cranfield, tmp_path):
    """evaluate --per-query-in: the interval tables per run and stratum are the runs' own."""
    strata = shared_path("cranfield", "strata.tsv")
    lanes = [x for lane in LANES for x in ("--lane", str(cranfield["runs"][lane]))]
    a, b = tmp_path / "runs.json", tmp_path / "tables.json"
    common = ["--qrels", str(cranfield["qrels"]), "--strata", str(strata), "--resamples", "999"]
    assert main(["evaluate", *lanes, *common, "--metrics", "ndcg@10,p@10,rr", "--out", str(a)]) == 0
    tables = [x for lane in LANES for x in ("--per-query-in", str(cranfield["irm_jsonl"][lane]))]
    assert main(["evaluate", *tables, *common, "--out", str(b)]) == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    for lane in LANES:
        for m in ("ndcg@10", "p@10", "rr"):
            assert rb["lanes"][lane]["doc"][m] == ra["lanes"][lane]["doc"][m]
            for label, block in ra["strata"]["strata"].items():
                assert rb["strata"]["strata"][label][lane]["doc"][m] == block[lane]["doc"][m]
    assert "attribution" not in rb and "gate" not in rb and "fusion" not in rb
    assert "attribution" in rb["summary"]["not_available"]


# --------------------------------------------------------------------------- small hand-built tables

VALUES = {"a": {"q1": 0.5, "q2": 0.25, "q3": 1.0}, "b": {"q1": 0.75, "q2": 0.0, "q3": 0.5}}


def _write_all_formats(d):
    """The same values in every format a table can come in."""
    files = {}
    for run in VALUES:
        p = d / "trec_eval" / f"{run}.q"
        p.parent.mkdir(exist_ok=True)
        p.write_text("".join("%-22s\t%s\t%.4f\n" % ("ndcg_cut_10", q, v) for q, v in VALUES[run].items())
                     + "%-22s\t%s\t%.4f\n" % ("ndcg_cut_10", "all", 0.5))
        files.setdefault("trec_eval", []).append(str(p))
        p = d / "irm" / f"{run}.tsv"
        p.parent.mkdir(exist_ok=True)
        p.write_text("".join(f"{q}\tnDCG@10\t{v}\n" for q, v in VALUES[run].items()) + "all\tnDCG@10\t0.5\n")
        files.setdefault("ir_measures", []).append(str(p))
        p = d / f"{run}.jsonl"
        p.write_text("".join(json.dumps({"query_id": q, "measure": "nDCG@10", "value": v}) + "\n"
                             for q, v in VALUES[run].items()))
        files.setdefault("jsonl", []).append(str(p))
    p = d / "perquery.csv"  # pandas' to_csv of PyTerrier's Experiment(perquery=True): the index column first
    p.write_text(",name,qid,measure,value\n" + "".join(f"{i},{run},{q},nDCG@10,{v}\n" for i, (run, q, v) in enumerate(
        (run, q, v) for run in VALUES for q, v in VALUES[run].items())))
    files["pyterrier"] = [str(p)]
    p = d / "warehouse.tsv"
    p.write_text("run\tquery_id\tmeasure\tvalue\n" + "".join(f"{run}\t{q}\tndcg_cut_10\t{v}\n" for run in VALUES
                                                              for q, v in VALUES[run].items()))
    files["warehouse"] = [str(p)]
    p = d / "own.csv"
    p.write_text("lane,level,qid,ndcg@10\n" + "".join(f"{run},doc,{q},{v!r}\n" for run in VALUES
                                                      for q, v in VALUES[run].items()))
    files["rankscope"] = [str(p)]
    return files


@pytest.fixture
def formats(tmp_path):
    return _write_all_formats(tmp_path)


@pytest.mark.parametrize("fmt", ["trec_eval", "ir_measures", "jsonl", "pyterrier", "warehouse", "rankscope"])
def test_every_format_reads_the_same_values(formats, fmt):
    ws = load_tables([(None, p) for p in formats[fmt]])
    assert ws.input_lanes == ["a", "b"]
    assert ws.qids.tolist() == ["q1", "q2", "q3"]
    assert [m.key for m in ws.measures] == ["ndcg@10"]
    for run in VALUES:
        assert ws.per_query(run)["ndcg@10"].tolist() == [VALUES[run][q] for q in ("q1", "q2", "q3")]
    rep = table_report(ws)
    assert rep["per_query"]["a"]["doc"]["q2"] == {"ndcg@10": 0.25}


def test_detection_and_explicit_format(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_text("q1\tq2\t0.5\n")
    with pytest.raises(InputError, match="cannot tell which column holds the measure"):
        detect_format(p.read_text(), str(p))
    t = read_per_query_table(str(p), fmt="ir_measures")
    assert list(t.values) == [("x", "doc", "q2")]


def test_a_rankscope_table_with_a_tab_header_reads_its_measures(tmp_path):
    """Detection takes a tab-separated ``lane<TAB>level<TAB>qid`` header as rankscope's table,
    and its rows split at tabs: the measure names split the same way (hand-written values)."""
    p = tmp_path / "t.tsv"
    p.write_text("lane\tlevel\tqid\tP@10\na\tdoc\t1\t0.5\na\tgroup\t2\t0.25\n")
    t = read_per_query_table(str(p))
    assert t.format == "rankscope"
    assert t.values == {("a", "doc", "p@10"): {"1": (0.5, 2)}, ("a", "group", "p@10"): {"2": (0.25, 3)}}
    assert t.names == {"p@10": ["P@10"]}


@pytest.mark.parametrize("fmt,text,where,what", [
    ("trec_eval", "ndcg_cut_10\t1\t0.5\nndcg_cut_10\t2\tnan\n", 2, "must be finite"),
    ("trec_eval", "ndcg_cut_10\t1\t0.5\nndcg_cut_10\t1\t0.25\n", 2, "two values of ndcg_cut_10 for query '1'"),
    ("ir_measures", "1\tnDCG@10\t0.5\n2\tnDCG@10\tx\n", 2, "must be a number"),
    ("ir_measures", "1\tnDCG@10\t0.5\n2\tnDCG@10\n", 2, "expected 3 fields"),
    ("jsonl", '{"query_id": "1", "measure": "P@10", "value": 0.5}\n{"query_id": "2", "value": 0.5}\n', 2,
     "expected one measure key"),
    ("jsonl", '{"query_id": "1", "measure": "P@10", "value": 0.5}\n{"query_id": "2", "measure": "P@10"\n', 2,
     "invalid JSON"),
    ("long", "run,query_id,measure,value\na,1,P@10,0.5\na,2,P@10\n", 3, "expected 4 fields"),
    ("long", "run,query_id,value\na,1,0.5\n", 1, "the header names no measure column"),
    ("long", "run,query_id,measure\na,1,P@10\n", 1, "the header names no value column"),
    ("rankscope", "lane,level,qid,p@10\na,doc,1,0.5\na,page,2,0.5\n", 3, "level must be doc or group"),
    # a header of fewer than three cells, and one that does not begin lane, level, qid
    ("rankscope", "q*,1\tnDG@1\nq3\tRR0.5\n", 1, "the header must begin lane, level, qid"),
    ("rankscope", "lane,level\na,doc\n", 1, "the header must begin lane, level, qid"),
    ("rankscope", "run,level,qid,p@10\na,doc,1,0.5\n", 1, "the header must begin lane, level, qid"),
    ("trec_eval", "ndcg_cut_10\t1\t0.5\nndcg_cut_10\t2\t1.5\n", 2, r"is a proportion in \[0, 1\], not 1.5"),
    ("long", "run,qid,measure,value\na,1,success_10,1\na,2,success_10,0.5\n", 3, "is 0 or 1 per query"),
])
def test_a_malformed_table_is_refused_with_its_line(tmp_path, capsys, fmt, text, where, what):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(InputError, match=what) as e:
        read_per_query_table(str(p), fmt=fmt)
    assert e.value.path == str(p) and e.value.line == where
    out = tmp_path / "out.json"
    assert main(["compare", "--per-query-in", str(p), "--per-query-format", fmt, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rankscope: error: {p}:{where}: ") and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["trec_eval", "ir_measures", "jsonl", "long", "rankscope"])
def test_a_table_of_only_comments_is_refused_in_every_format_given(tmp_path, capsys, fmt):
    p = tmp_path / "empty.csv"
    p.write_text("# nothing\n\n")
    out = tmp_path / "out.json"
    assert main(["compare", "--per-query-in", str(p), "--per-query-format", fmt, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rankscope: error: {p}: ") and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_query_missing_from_one_run_is_an_error_without_qrels_and_zero_with_them(tmp_path):
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text("q1\tP@10\t0.5\nq2\tP@10\t0.1\nq3\tP@10\t0.2\n")
    b.write_text("q1\tP@10\t0.5\nq2\tP@10\t0.3\n")
    with pytest.raises(InputError, match="run 'b' has no p@10 value for query 'q3'"):
        load_tables([(None, str(a)), (None, str(b))])
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d 1\nq2 0 d 1\nq3 0 d 2\nq4 0 d 0\n")
    ws = load_tables([(None, str(a)), (None, str(b))], qrels=str(qrels))
    assert ws.per_query("b")["p@10"].tolist() == [0.5, 0.3, 0.0]
    assert [w.kind for w in ws.warnings] == ["positives_missing_from_lane"]
    # a measure rankscope does not know has no "scores 0" convention: refused, not invented
    a.write_text("q1\tmystery\t0.5\nq2\tmystery\t0.1\nq3\tmystery\t0.2\n")
    b.write_text("q1\tmystery\t0.5\nq2\tmystery\t0.3\n")
    with pytest.raises(InputError, match="cannot tell which column holds the measure"):
        load_tables([(None, str(a)), (None, str(b))], qrels=str(qrels))
    with pytest.raises(InputError, match="run 'b' has no mystery value for query 'q3'"):
        load_tables([(None, str(a)), (None, str(b))], qrels=str(qrels), fmt="ir_measures")


def test_ranking_options_are_refused_with_tables(formats, capsys):
    assert main(["compare", "--per-query-in", formats["warehouse"][0], "--depth", "10"]) == 2
    assert "--depth cannot be used with --per-query-in" in capsys.readouterr().err
    assert main(["compare", "--per-query-in", formats["warehouse"][0], "--log", "x.log"]) == 2
    assert "--log with --per-query-in needs --qrels" in capsys.readouterr().err


def test_a_level_the_tables_do_not_hold_says_so(formats, capsys):
    """Tables computed elsewhere hold their own levels: --group-sep cannot add one, so the
    error names the levels the tables hold rather than asking for --group-sep."""
    assert main(["compare", "--per-query-in", formats["warehouse"][0], "--level", "group"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("level 'group' is not in the per-query tables (they hold level 'doc' only)")
    assert "--group-sep" not in err


def test_a_measure_of_another_tool_is_compared_under_its_own_name(tmp_path):
    rows = "".join(f"{r}\t{q}\tbpref\t{v}\n" for r, vals in VALUES.items() for q, v in vals.items())
    p = tmp_path / "w.tsv"
    p.write_text("system\ttopic\tmetric\tvalue\n" + rows)
    out = tmp_path / "c.json"
    assert main(["compare", "--per-query-in", str(p), "--metric", "bpref", "--resamples", "999", "--out", str(out)]) == 0
    row = json.loads(out.read_text())["comparisons"][0]
    assert (row["baseline"], row["candidate"], row["metric"], row["n"]) == ("a", "b", "bpref", 3)
    assert row["difference"] == pytest.approx(np.mean([0.25, -0.25, -0.5]))


def test_diff_and_verdict_read_a_report_made_from_tables(formats, tmp_path, capsys):
    """evaluate --per-query-in --out writes a report that diff and verdict take like any other."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    p = formats["warehouse"][0]
    assert main(["evaluate", "--per-query-in", p, "--resamples", "999", "--out", str(a)]) == 0
    text = capsys.readouterr().out
    assert "not computed: attribution, fusion, the gate" in text
    after = tmp_path / "after.tsv"
    after.write_text(open(p).read().replace("\t0.25\n", "\t0.0\n"))
    assert main(["evaluate", "--per-query-in", str(after), "--resamples", "999", "--out", str(b)]) == 0
    capsys.readouterr()
    assert main(["diff", "--before", str(a), "--after", str(b), "--resamples", "999", "--out",
                 str(tmp_path / "d.json")]) == 0
    rows = json.loads((tmp_path / "d.json").read_text())["rows"]
    assert [(r["lane"], r["metric"], r["n"], r["difference"]) for r in rows] == [
        ("a", "ndcg@10", 3, pytest.approx(-0.25 / 3)), ("b", "ndcg@10", 3, 0.0)]
    gates = tmp_path / "g.json"
    gates.write_text(json.dumps([{"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.1}]))
    assert main(["verdict", "--report", str(a), "--gates", str(gates), "--on", "point"]) == 0
    assert "pass" in capsys.readouterr().out


def test_real_trec_eval_q_output_reads_as_rankscope_evaluates_the_run():
    """trec_eval 10.0's own ``-q -m all_trec`` output (the upstream test file): its
    per-query ndcg_cut_10, P_10, recall_100, success_10, recip_rank, map, map_cut_10,
    Rprec, bpref, ndcg, infAP, Rprec_mult, set_*, iprec_at_recall and 11pt_avg equal
    rankscope's evaluation of the same run to trec_eval's 4 decimals (read through the one
    name resolver: ``map`` is ``ap``); its other measures keep their names."""
    import rankscope_tui as rs

    d = shared_path("trec_eval_test")
    with pytest.raises(InputError, match=r"lane name 'out.test' .*; name it with NAME=PATH \(--per-query-in out="):
        read_per_query_table(str(d / "out.test.aq"))  # the lanes' naming rule: no '.' in a run's name
    t = read_per_query_table(str(d / "out.test.aq"), "out")
    assert t.format == "trec_eval" and t.runs == ["out"]
    assert {"runid", "num_ret", "num_rel", "relstring"} <= set(t.skipped)
    ws = load_tables([("out", str(d / "out.test.aq"))])
    assert ws.qids.tolist() == ["301", "302", "303"]
    keys = {m.key for m in ws.measures}
    read = ("ndcg@10", "p@10", "recall@100", "hit@10", "rr", "ap", "ap@10", "rprec", "bpref", "ndcg",
            # issue 33's measures: trec_eval's infAP, Rprec_mult_0.20, set_P, ... are rankscope's now
            "infap", "rprec_mult_0.20", "set_p", "set_recall", "set_f", "iprec_at_recall_0.10", "11pt_avg", "rbp(p=0.9)", "rbp_resid(p=0.9)")
    assert set(read) <= keys and "map" not in keys and "infAP" not in keys
    assert {"unj_10", "Rndcg", "set_map"} <= keys  # not rankscope's: kept as written
    ev = rs.evaluate(d / "qrels.test", d / "results.test", measures=",".join(read), resamples=0)
    mine = ev.per_query().set_index(["query_id", "measure"])["value"]
    for m in read:
        got = ws.per_query("out")[m]
        want = np.array([mine[(q, m)] for q in ("301", "302", "303")])
        assert np.abs(got - want).max() <= 5e-5, m


def test_a_compressed_table_and_names_a_terminal_must_not_run(formats, tmp_path):
    import gzip

    src = formats["trec_eval"][0]
    gz = tmp_path / "a.q.gz"
    gz.write_bytes(gzip.compress(open(src, "rb").read()))
    assert read_per_query_table(str(gz)).values == read_per_query_table(src).values
    bad = tmp_path / "w.tsv"
    bad.write_text("run\tqid\tmeasure\tvalue\nx\x1b[31m\t1\tP@10\t0.5\n")
    with pytest.raises(InputError, match="must not contain control characters"):
        read_per_query_table(str(bad))
    bad.write_text("run\tqid\tmeasure\tvalue\nx y\t1\tP@10\t0.5\n")
    with pytest.raises(InputError, match=r"w.tsv:2: lane name 'x y' must .* no '.', '=' or whitespace"):
        read_per_query_table(str(bad))


def test_diff_and_verdict_take_tables_directly(formats, tmp_path, capsys):
    """diff --before-per-query-in / --after-per-query-in and verdict --per-query-in give what
    the reports made from the same tables give."""
    p = formats["warehouse"][0]
    after = tmp_path / "after.tsv"
    after.write_text(open(p).read().replace("\t0.25\n", "\t0.0\n"))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for src, out in ((p, a), (str(after), b)):
        assert main(["evaluate", "--per-query-in", src, "--resamples", "999", "--out", str(out)]) == 0
    capsys.readouterr()
    d1, d2 = tmp_path / "d1.json", tmp_path / "d2.json"
    assert main(["diff", "--before", str(a), "--after", str(b), "--resamples", "999", "--out", str(d1)]) == 0
    assert main(["diff", "--before-per-query-in", p, "--after-per-query-in", str(after), "--resamples", "999",
                 "--out", str(d2)]) == 0
    assert json.loads(d1.read_text())["rows"] == json.loads(d2.read_text())["rows"]
    gates = tmp_path / "g.json"
    gates.write_text(json.dumps([{"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.1}]))
    v1, v2 = tmp_path / "v1.json", tmp_path / "v2.json"
    assert main(["verdict", "--report", str(a), "--gates", str(gates), "--out", str(v1)]) == 0
    assert main(["verdict", "--per-query-in", p, "--resamples", "999", "--gates", str(gates), "--out", str(v2)]) == 0
    r1, r2 = json.loads(v1.read_text()), json.loads(v2.read_text())
    assert r1["rules"] == r2["rules"] and (r1["passed"], r1["failed"]) == (r2["passed"], r2["failed"]) == (True, 0)
    capsys.readouterr()
    assert main(["verdict", "--gates", str(gates)]) == 2
    assert "the following arguments are required: --report" in capsys.readouterr().err
    assert main(["diff", "--after", str(b)]) == 2
    assert "the following arguments are required: --before" in capsys.readouterr().err
    assert main(["diff", "--before", str(a), "--after", str(b), "--qrels", p]) == 2
    assert "--qrels is for per-query tables" in capsys.readouterr().err
