"""Issue 15: the new measures and the names users type reach every consumer — the per-query
CSV and report.json under canonical keys, with definitions and intervals; rules, compare and
diff accept the other tools' spellings and resolve them to the same keys."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from rankscope_tui import cli
from rankscope_tui.kernel.instruments.compare import compare
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import CompareSettings, DiffSettings, LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace

NEW = "map,map_cut.10,Rprec,bpref,ndcg,RR@10,ndcg_burges@10,calibrated_recall@5,P(rel=2)@5,success@3,nDCG@10"
KEYS = ["ap", "ap@10", "rprec", "bpref", "ndcg", "rr@10", "ndcg_exp@10", "calibrated_recall@5", "p(rel=2)@5", "hit@3", "ndcg@10"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("measures_e2e")
    rng = np.random.default_rng(5)
    qrels, runs = [], {"a": [], "b": []}
    for i in range(40):
        q = f"q{i}"
        for j in range(8):
            qrels.append(f"{q} 0 d{j} {2 if j == 0 else int(rng.choice([0, 1, 2]))}\n")
        for lane in runs:
            docs = rng.permutation(15)[:12]
            for r, doc in enumerate(docs, start=1):
                runs[lane].append(f"{q} Q0 d{doc} {r} {20 - r + rng.random():.6f} {lane}\n")
    (d / "qrels.txt").write_text("".join(qrels))
    (d / "kind.tsv").write_text("".join(f"q{i}\t{'short' if i % 3 else 'long'}\n" for i in range(40)))
    for lane, lines in runs.items():
        (d / f"{lane}.run").write_text("".join(lines))
    return d


def _evaluate(d, name, metrics):
    code = cli.main(["evaluate", "--lane", f"a={d / 'a.run'}", "--lane", f"b={d / 'b.run'}", "--qrels", str(d / "qrels.txt"),
                     "--metrics", metrics, "--resamples", "999", "--out", str(d / f"{name}.json"),
                     "--per-query", str(d / f"{name}.csv"), "--strata", str(d / "kind.tsv")])
    assert code == 0
    return json.loads((d / f"{name}.json").read_text())


def test_report_and_csv_carry_canonical_keys_with_definitions_and_intervals(files, capsys):
    rep = _evaluate(files, "r1", NEW)
    capsys.readouterr()
    assert rep["inputs"]["settings"]["metrics"][: len(KEYS)] == KEYS
    for key in KEYS:
        assert key in rep["definitions"], key
        cell = rep["lanes"]["a"]["doc"][key]
        assert cell["value"] is not None and cell["low"] <= cell["value"] <= cell["high"]
    assert rep["lanes"]["a"]["doc"]["hit@3"]["method"].lower().startswith("wilson")
    assert "bootstrap" in rep["lanes"]["a"]["doc"]["ap"]["method"].lower()
    for label in ("short", "long"):  # strata carry every new measure too
        cells = rep["strata"]["kind"][label]["a"]["doc"]
        assert all(cells[key]["value"] is not None for key in KEYS), label
    with open(files / "r1.csv", newline="") as fh:
        header = next(csv.reader(fh))
    for key in KEYS:
        assert key in header, (key, header)


def test_rules_accept_other_tools_spellings(files, capsys):
    _evaluate(files, "r2", NEW)
    gates = [{"path": "lanes.a.doc.map", "op": ">=", "threshold": 0.0},
             {"path": "lanes.a.doc.ndcg_cut.10", "op": ">=", "threshold": 0.0},
             {"path": "lanes.a.doc.map_cut.10", "op": ">=", "threshold": 0.0},
             {"path": "lanes.a.doc.RR@10", "op": ">=", "against": "lanes.b.doc.mrr@10"}]
    (files / "gates.json").write_text(json.dumps(gates))
    capsys.readouterr()
    code = cli.main(["verdict", "--report", str(files / "r2.json"), "--gates", str(files / "gates.json"), "--on", "point",
                     "--out", str(files / "v.json")])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert "error" not in out.err
    v = json.loads((files / "v.json").read_text())
    assert len(v["rules"]) == 4


def test_compare_and_diff_take_the_names_users_type(files, capsys):
    ws = Workspace.load([("a", str(files / "a.run")), ("b", str(files / "b.run"))], str(files / "qrels.txt"),
                        LoadSettings(metrics=tuple(parse_metrics("ndcg@10")), resamples=999))
    res = compare(ws, None, CompareSettings(baseline="a", metrics=("AP", "RR(rel=2)@10", "Bpref")))
    assert [r.metric for r in res.rows] == ["ap", "rr(rel=2)@10", "bpref"]
    assert DiffSettings(metrics=("map_cut.10", "nDCG@10")).metrics == ("ap@10", "ndcg@10")
    _evaluate(files, "before", NEW)
    _evaluate(files, "after", NEW)
    capsys.readouterr()
    code = cli.main(["diff", "--before", str(files / "before.json"), "--after", str(files / "after.json"),
                     "--metric", "map", "--metric", "Bpref", "--resamples", "999", "--out", str(files / "d.json")])
    assert code == 0, capsys.readouterr().err
    d = json.loads((files / "d.json").read_text())
    assert {row["metric"] for row in d["rows"]} == {"ap", "bpref"}


def test_a_rel_override_is_undefined_where_the_query_has_no_doc_at_that_level():
    """The drill-down shows — for a measure that needs a relevant doc on a query with none at
    its own level: q holds grade 1 only, so rr(rel=2)@10 and ap(rel=2) are undefined there,
    p(rel=2)@3 (defined on every query) and rr (level 1) are defined."""
    from rankscope_tui.kernel.measures import Ideal, defined_on

    ideal = Ideal(np.array([0, 0, 1], dtype=np.int32), np.array([1, 0, 2], dtype=np.int64))
    keys = parse_metrics("rr,RR(rel=2)@10,AP(rel=2),P(rel=2)@3,ndcg@3")
    d = defined_on(keys, ideal, 2, 1)
    assert d["rr"].tolist() == [True, True]
    assert d["rr(rel=2)@10"].tolist() == [False, True] and d["ap(rel=2)"].tolist() == [False, True]
    assert d["p(rel=2)@3"].tolist() == [True, True] and d["judged@3"].tolist() == [True, True]
