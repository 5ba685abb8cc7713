"""One name resolver for every face (issue 29, items 3-5; must show 2).

Every spelling of the README's Measures table goes through ``evaluate --metrics``,
``calc_aggregate``, ``iter_calc``, ``compare --metric`` on runs and on per-query tables
(a trec_eval ``-q`` table holding ``map``, an ir_measures JSONL holding ``AP``) and a
``verdict`` rule path, and each face gives the same value for it. The anchor is
independent: pytrec_eval (trec_eval's code) on the same run and qrels, averaged over the
queries with a relevant judgment; the per-query tables are written by pytrec_eval and by
ir_measures. An unknown name, and an empty list, raise in each face.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import ir_measures
import numpy as np
import pytest
import pytrec_eval
from support import REPO, shared_path

import rankscope_tui as rs
from rankscope_tui.cli import main
from rankscope_tui.kernel.errors import InputError

CUT = 10
#: trec_eval's measure (pytrec_eval) for the canonical keys it computes
PYTREC = {"hit@10": "success_10", "recall@10": "recall_10", "p@10": "P_10", "rr": "recip_rank", "ndcg": "ndcg",
          "ndcg@10": "ndcg_cut_10", "ap": "map", "ap@10": "map_cut_10", "rprec": "Rprec", "bpref": "bpref"}
#: what the trec_eval -q table (bm25) and the ir_measures JSONL (dense) hold
TABLE_TREC_EVAL = ("map", "P_10", "recip_rank", "ndcg_cut_10", "Rprec", "bpref", "success_10", "recall_10")
TABLE_IR_MEASURES = (ir_measures.AP, ir_measures.P @ 10, ir_measures.RR, ir_measures.nDCG @ 10, ir_measures.Rprec,
                     ir_measures.Bpref, ir_measures.Success @ 10, ir_measures.R @ 10)


def readme_spellings() -> list[str]:
    """Every name in the "names accepted" column of the README's Measures table, with the
    cutoff ``k`` written as 10."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Measures\n") + 1:]
    section = section[:section.index("\n## ")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    assert len(rows) >= 11, "the Measures table moved"
    names: list[str] = []
    for row in rows:
        accepted = row.split(" | ")[2]
        for name in re.findall(r"`([^`]+)`", accepted):
            name = re.sub(r"(@|\.|_|_at_)k$", lambda m: f"{m.group(1)}{CUT}", name)
            if name not in names:
                names.append(name)
    return names


SPELLINGS = readme_spellings()


def _nested(path: Path, kind: str) -> dict:
    out: dict = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if kind == "qrels":
            out.setdefault(f[0], {})[f[2]] = int(f[3])
        else:
            out.setdefault(f[0], {})[f[2]] = float(f[4])
    return out


@pytest.fixture(scope="module")
def faces(tmp_path_factory):
    c = shared_path("cranfield")
    d = tmp_path_factory.mktemp("names")
    qrels, runs = c / "qrels-test.txt", {n: c / "lanes" / f"{n}.run" for n in ("bm25", "dense")}
    lanes = [a for n, p in runs.items() for a in ("--lane", f"{n}={p}")]
    report = d / "r.json"
    assert main(["evaluate", *lanes, "--qrels", str(qrels), "--metrics", ",".join(SPELLINGS), "--resamples", "999",
                 "--out", str(report), "--format", "markdown"]) == 0
    # the independent anchor: pytrec_eval per query, averaged over the queries with a relevant doc
    q = _nested(qrels, "qrels")
    positives = sorted(k for k, docs in q.items() if any(g >= 1 for g in docs.values()))
    oracle = {}
    for name, path in runs.items():
        per = pytrec_eval.RelevanceEvaluator(q, set(PYTREC.values())).evaluate(_nested(path, "run"))
        oracle[name] = {key: float(np.mean([per.get(x, {}).get(m, 0.0) for x in positives]))
                        for key, m in PYTREC.items()}
        # the per-query tables: trec_eval -q (bm25, by pytrec_eval) and ir_measures JSONL (dense)
        if name == "bm25":
            (d / "bm25.q").write_text("".join(f"{m}\t{x}\t{v[m]!r}\n" for x, v in per.items() for m in TABLE_TREC_EVAL))
    with open(d / "dense.jsonl", "w") as fh:
        for m in ir_measures.iter_calc(TABLE_IR_MEASURES, ir_measures.read_trec_qrels(str(qrels)),
                                       ir_measures.read_trec_run(str(runs["dense"]))):
            fh.write(json.dumps({"query_id": m.query_id, "measure": str(m.measure), "value": m.value}) + "\n")
    return {"dir": d, "qrels": qrels, "runs": runs, "lanes": lanes, "oracle": oracle,
            "report": json.loads(report.read_text())}


def _value(faces, lane: str, name: str) -> float:
    return faces["report"]["lanes"][lane]["doc"][rs.canonical_key(name)]["value"]


def test_the_readme_table_is_read_whole():
    assert len(SPELLINGS) >= 40
    assert {"map", "P.10", "P_10", "ndcg_cut.10", "recip_rank", "Rprec", "AP", "R@10", "Success@10", "nDCG@10",
            "map_cut.10", "r-precision", "mrr_at_10"} <= set(SPELLINGS)


def test_evaluate_metrics_takes_every_spelling_and_matches_trec_eval(faces):
    rep = faces["report"]
    keys = {rs.canonical_key(s) for s in SPELLINGS}
    assert keys <= set(rep["inputs"]["settings"]["metrics"])
    for lane in ("bm25", "dense"):
        for key, want in faces["oracle"][lane].items():
            assert math.isclose(rep["lanes"][lane]["doc"][key]["value"], want, rel_tol=0, abs_tol=1e-9), (lane, key)


def test_calc_aggregate_and_iter_calc_key_by_what_was_asked(faces):
    got = rs.calc_aggregate(SPELLINGS, faces["qrels"], faces["runs"]["bm25"])
    assert list(got) == SPELLINGS  # keyed by what was typed, in that order
    for s in SPELLINGS:
        assert got[s] == _value(faces, "bm25", s), s
    per: dict = {}
    for m in rs.iter_calc(SPELLINGS, faces["qrels"], faces["runs"]["bm25"]):
        per.setdefault(m.measure, []).append(m.value)
        assert m.key == rs.canonical_key(m.measure)
    assert list(per) == SPELLINGS
    for s in SPELLINGS:
        assert math.isclose(float(np.mean(per[s])), _value(faces, "bm25", s), rel_tol=1e-12), s
    # the cases, each alone: one measure asked, one value back, under the asked name
    for s in ("map", "recip_rank", "ndcg_cut.10", "P.10", "P_5", "R@100", "Success@1"):
        one = rs.calc_aggregate([s], faces["qrels"], faces["runs"]["bm25"])
        assert list(one) == [s]
    two = rs.calc_aggregate(["map", "Rprec"], faces["qrels"], faces["runs"]["bm25"])
    assert list(two) == ["map", "Rprec"] and two["map"] == faces["report"]["lanes"]["bm25"]["doc"]["ap"]["value"]


def test_ir_measures_objects_are_names_too(faces):
    got = rs.calc_aggregate(TABLE_IR_MEASURES, faces["qrels"], faces["runs"]["bm25"])
    assert list(got) == list(TABLE_IR_MEASURES)  # keyed by the objects, as ir_measures keys them
    for m in TABLE_IR_MEASURES:
        assert got[m] == _value(faces, "bm25", str(m)), m
    first = next(iter(rs.iter_calc([ir_measures.AP], faces["qrels"], faces["runs"]["bm25"])))
    assert first.measure is ir_measures.AP and first.key == "ap"
    # evaluate() and compare() take them as well (their results use the canonical keys, as report.json)
    ev = rs.evaluate(faces["qrels"], {"bm25": faces["runs"]["bm25"]}, measures=[ir_measures.AP, ir_measures.nDCG @ 10],
                     resamples=0)
    assert ev.report()["lanes"]["bm25"]["doc"]["ap"]["value"] == _value(faces, "bm25", "AP")
    cmp = rs.compare(faces["qrels"], faces["runs"], candidates=["dense"], measures=[ir_measures.AP], resamples=0)
    (row,) = cmp.as_dict()["comparisons"]
    assert (row["metric"], row["baseline_mean"]) == ("ap", _value(faces, "bm25", "AP"))


def _compare(faces, inputs: list[str], metrics: list[str], name: str) -> dict:
    out = faces["dir"] / f"{name}.json"
    args = ["compare", *inputs, "--qrels", str(faces["qrels"]), "--resamples", "0", "--out", str(out)]
    assert main(args + [a for s in metrics for a in ("--metric", s)]) == 0
    return json.loads(out.read_text())


def test_compare_metric_on_runs_takes_every_spelling(faces, capsys):
    rows = _compare(faces, faces["lanes"] + ["--candidate", "dense"], SPELLINGS, "c_runs")["comparisons"]
    by_key = {r["metric"]: r for r in rows}
    for s in SPELLINGS:
        r = by_key[rs.canonical_key(s)]
        assert (r["baseline_mean"], r["candidate_mean"]) == (_value(faces, "bm25", s), _value(faces, "dense", s)), s


def test_compare_metric_on_per_query_tables_trec_eval_map_meets_ir_measures_ap(faces, capsys):
    """bm25 from a trec_eval -q table (``map``, ``P_10``, ...), dense from an ir_measures JSONL
    (``AP``, ``P@10``, ...): every README spelling of a measure both hold finds it in both,
    and the means are the runs' (to the tables' float precision)."""
    d = faces["dir"]
    held = {rs.canonical_key(n) for n in TABLE_TREC_EVAL}
    assert held == {rs.canonical_key(m) for m in TABLE_IR_MEASURES}
    names = [s for s in SPELLINGS if rs.canonical_key(s) in held]
    assert {"map", "AP", "ap", "P.10", "P_10", "nDCG@10", "recip_rank", "Rprec", "r-precision"} <= set(names)
    inputs = ["--per-query-in", f"bm25={d / 'bm25.q'}", "--per-query-in", f"dense={d / 'dense.jsonl'}"]
    for s in names:  # each spelling alone: the README's own example is --metric map
        (r,) = _compare(faces, inputs, [s], "c_tables")["comparisons"]
        assert r["metric"] == rs.canonical_key(s)
        assert math.isclose(r["baseline_mean"], _value(faces, "bm25", s), abs_tol=1e-9), s
        assert math.isclose(r["candidate_mean"], _value(faces, "dense", s), abs_tol=1e-9), s


def test_evaluate_per_query_in_with_qrels_counts_the_qrels_negatives(faces, capsys):
    """Cranfield's test qrels hold 114 queries with a relevant doc and 20 judged with none."""
    q = _nested(faces["qrels"], "qrels")
    negatives = sum(1 for docs in q.values() if all(g <= 0 for g in docs.values()) and any(g >= 0 for g in docs.values()))
    assert negatives == 20
    out = faces["dir"] / "t.json"
    assert main(["evaluate", "--per-query-in", f"bm25={faces['dir'] / 'bm25.q'}", "--qrels", str(faces["qrels"]),
                 "--resamples", "0", "--out", str(out)]) == 0
    s = json.loads(out.read_text())["summary"]
    assert (s["positives"], s["negatives"]) == (114, negatives)
    assert "negatives 20" in capsys.readouterr().out


def test_a_verdict_rule_path_takes_every_spelling(faces, capsys):
    d = faces["dir"]
    report = d / "r.json"
    report.write_text(json.dumps(faces["report"]))
    rules = [{"path": f"lanes.bm25.doc.{s}", "op": ">=", "threshold": 0.0} for s in SPELLINGS]
    (d / "gates.json").write_text(json.dumps(rules))
    assert main(["verdict", "--report", str(report), "--gates", str(d / "gates.json"), "--out", str(d / "v.json")]) == 0
    got = json.loads((d / "v.json").read_text())["rules"]
    for s, r in zip(SPELLINGS, got):
        assert r["value"] == _value(faces, "bm25", s), s


# --------------------------------------------------------------------------- unknown and empty names


def _one_line_error(capsys, *needles: str) -> None:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rankscope: error: ") and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def test_an_unknown_name_is_refused_by_every_face(faces, capsys, tmp_path):
    qrels, bm25 = faces["qrels"], faces["runs"]["bm25"]
    for call in (lambda m: rs.calc_aggregate(m, qrels, bm25), lambda m: rs.iter_calc(m, qrels, bm25),
                 lambda m: rs.evaluate(qrels, bm25, measures=m, resamples=0),
                 lambda m: rs.compare(qrels, faces["runs"], measures=m, resamples=0)):
        with pytest.raises(InputError, match="ndcg_cutt.10"):
            call(["map", "ndcg_cutt.10"])
        for empty in ([], "", [" "]):
            with pytest.raises(InputError, match="no metric given|no measure given"):
                call(empty)
    assert main(["evaluate", *faces["lanes"], "--qrels", str(qrels), "--metrics", "map,ndcg_cutt.10"]) == 2
    _one_line_error(capsys, "ndcg_cutt.10", "ndcg_cut.10")  # with the closest known spelling
    for empty in (",", ""):
        assert main(["evaluate", *faces["lanes"], "--qrels", str(qrels), "--metrics", empty]) == 2
        _one_line_error(capsys, "no metric given")
    assert main(["compare", *faces["lanes"], "--qrels", str(qrels), "--metric", "", "--resamples", "0"]) == 2
    _one_line_error(capsys, "no metric given")
    for inputs in (faces["lanes"], ["--per-query-in", f"bm25={faces['dir'] / 'bm25.q'}",
                                    "--per-query-in", f"dense={faces['dir'] / 'dense.jsonl'}"]):
        assert main(["compare", *inputs, "--qrels", str(qrels), "--metric", "ndcg_cutt.10", "--resamples", "0"]) == 2
        _one_line_error(capsys, "ndcg_cutt.10")
    report = tmp_path / "r.json"
    report.write_text(json.dumps(faces["report"]))
    (tmp_path / "g.json").write_text(json.dumps([{"path": "lanes.bm25.doc.ndcg_cutt.10", "op": ">=", "threshold": 0}]))
    assert main(["verdict", "--report", str(report), "--gates", str(tmp_path / "g.json")]) == 2
    _one_line_error(capsys, "lanes.bm25.doc.ndcg_cutt.10")


# --------------------------------------------------------------------------- lane names (item 5)


@pytest.mark.parametrize("file_name, option, stem", [("bm25.msmarco.tsv", "--lane", "bm25"),
                                                     ("run.msmarco-passage.bm25.txt", "--lane", "run"),
                                                     ("bm25.trec_eval.q", "--per-query-in", "bm25")])
def test_one_lane_naming_rule_and_its_error_names_the_NAME_PATH_to_write(faces, capsys, tmp_path, file_name, option,
                                                                         stem):
    """A run file and a per-query table are named by one rule (the file name without its
    suffix); a name holding a '.' is refused in both, and the error gives ``NAME=PATH``."""
    src = faces["runs"]["bm25"] if option == "--lane" else faces["dir"] / "bm25.q"
    p = tmp_path / file_name
    p.write_bytes(Path(src).read_bytes())
    assert main(["evaluate", option, str(p), "--qrels", str(faces["qrels"]), "--resamples", "0"]) == 2
    _one_line_error(capsys, "lane name", "NAME=PATH", f"{option} {stem}={p}")
    # named so, it is read, under that name
    out = tmp_path / "r.json"
    assert main(["evaluate", option, f"{stem}={p}", "--qrels", str(faces["qrels"]), "--resamples", "0",
                 "--out", str(out)]) == 0
    assert list(json.loads(out.read_text())["lanes"])[0] == stem
