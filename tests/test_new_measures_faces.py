"""Issue 33's measures through the faces: RBP's residual beside it wherever RBP appears
(evaluate's tables, report.json, the per-query CSV, compare, the dashboard), the new
names in the resolver, and their definitions in report.json.

The residual's values are checked against trec_eval in ``test_parity_new_measures``; here
the oracle is that same per-query column averaged by hand (numpy) over the positives.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from support import settle, shared_path
from textual.widgets import DataTable

from rankscope_tui.cli import main
from rankscope_tui.commands.tui import parse_args, state_from_args
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.measures import parse_metrics, parse_name

CRAN = shared_path("cranfield")
QRELS = CRAN / "qrels-test.txt"
LANES = ["--lane", f"bm25={CRAN / 'lanes' / 'bm25.run'}", "--lane", f"dense={CRAN / 'lanes' / 'dense.run'}"]


def test_rbp_brings_its_residual_right_after_it():
    keys = [k.key for k in parse_metrics("ndcg@10,rbp,RBP(p=0.8)@20,map")]
    assert keys == ["ndcg@10", "rbp(p=0.9)", "rbp_resid(p=0.9)", "rbp(p=0.8)@20", "rbp_resid(p=0.8)@20", "ap",
                    "judged@10"]
    # asked for explicitly, in another place: still one, and beside its rbp
    keys = [k.key for k in parse_metrics("rbp_resid,ndcg@10,rbp")]
    assert keys == ["ndcg@10", "rbp(p=0.9)", "rbp_resid(p=0.9)", "judged@10"]


@pytest.mark.parametrize("name, key", [("rbp", "rbp(p=0.9)"), ("RBP(p=0.8)", "rbp(p=0.8)"), ("rbp(rel=2, p=0.95)@10",
                                                                                          "rbp(p=0.95,rel=2)@10"),
                                       ("iprec_at_recall_0.10", "iprec_at_recall_0.10"), ("IPrec@0.1",
                                                                                        "iprec_at_recall_0.10"),
                                       ("iprec_at_recall_1", "iprec_at_recall_1.00"), ("11pt_avg", "11pt_avg"),
                                       ("Rprec_mult_0.20", "rprec_mult_0.20"), ("infAP", "infap"), ("set_F", "set_f"),
                                       ("SetP", "set_p"), ("NumRelRet", "num_rel_ret"), ("ERR@20", "err@20"),
                                       ("nerr@5", "nerr@5"), ("F1@10", "f1@10"), ("set_recall(rel=2)", "set_recall(rel=2)")])
def test_new_names_resolve_to_one_canonical_key_that_reads_back(name, key):
    assert parse_name(name).key == key
    assert parse_name(key) == parse_name(name)


@pytest.mark.parametrize("name, needle", [("iprec_at_recall", "needs its recall"), ("Rprec_mult", "needs its multiple"),
                                          ("rbp(p=1)", "p must lie in (0, 1)"), ("rbp(p=0)", "p must lie in (0, 1)"),
                                          ("iprec_at_recall_1.5", "recall must lie in [0, 1]"),
                                          ("P@2.5", "whole number"), ("num_ret(rel=2)", "takes no rel="),
                                          ("ERR(rel=2)@10", "takes no rel="), ("rbp(q=0.5)", "rel=N and p=X"),
                                          ("ERR", "needs a cutoff"), ("infAP@10", "takes no cutoff")])
def test_bad_new_names_are_one_line_errors(name, needle):
    with pytest.raises(InputError) as e:
        parse_metrics(name)
    assert needle in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    d = tmp_path_factory.mktemp("faces")
    out, pq = d / "r.json", d / "pq.csv"
    assert main(["evaluate", *LANES, "--qrels", str(QRELS), "--metrics", "ndcg@10,rbp,err@10,infAP,11pt_avg",
                 "--resamples", "999", "--out", str(out), "--per-query", str(pq)]) == 0
    return d, json.loads(out.read_text()), list(csv.DictReader(pq.open()))


def test_evaluate_lists_the_residual_beside_rbp_in_report_table_and_csv(evaluated, capsys):
    d, report, rows = evaluated
    metrics = report["inputs"]["settings"]["metrics"]
    assert metrics[metrics.index("rbp(p=0.9)") + 1] == "rbp_resid(p=0.9)"
    cols = list(rows[0])
    assert cols[cols.index("rbp(p=0.9)") + 1] == "rbp_resid(p=0.9)"
    for key in ("rbp(p=0.9)", "rbp_resid(p=0.9)", "err@10", "infap", "11pt_avg"):
        assert key in report["definitions"] and "None" not in report["definitions"][key]
    assert "p = 0.9" in report["definitions"]["rbp(p=0.9)"] and "residual" in report["definitions"]["rbp(p=0.9)"]
    # the report's mean is the per-query column's mean over the positives
    positives = {ln.split()[0] for ln in QRELS.read_text().splitlines() if int(ln.split()[3]) >= 1}
    assert len(positives) == 114
    for lane in ("bm25", "dense"):
        vals = [float(r["rbp_resid(p=0.9)"]) for r in rows if r["lane"] == lane and r["level"] == "doc"
                and r["qid"] in positives]
        assert len(vals) == 114
        cell = report["lanes"][lane]["doc"]["rbp_resid(p=0.9)"]
        assert abs(cell["value"] - float(np.mean(vals))) < 1e-12
        assert 0.0 < cell["value"] < 1.0 and cell["low"] <= cell["value"] <= cell["high"]
        assert cell["method"] == "percentile bootstrap"


def test_evaluate_text_shows_the_residual_column_next_to_rbp(tmp_path, capsys):
    assert main(["evaluate", *LANES, "--qrels", str(QRELS), "--metrics", "rbp", "--resamples", "0",
                 "--out", str(tmp_path / "r.json")]) == 0
    header = next(ln for ln in capsys.readouterr().out.splitlines() if "rbp(p=0.9)" in ln)
    assert header.split()[header.split().index("rbp(p=0.9)") + 1] == "rbp_resid(p=0.9)"


def test_compare_on_rbp_states_the_residuals_of_both_lanes(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["compare", *LANES, "--qrels", str(QRELS), "--metric", "rbp", "--resamples", "999",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    (row,) = data["comparisons"]
    assert row["metric"] == "rbp(p=0.9)"
    ev = tmp_path / "r.json"
    assert main(["evaluate", *LANES, "--qrels", str(QRELS), "--metrics", "rbp", "--resamples", "0", "--out", str(ev)]) == 0
    lanes = json.loads(ev.read_text())["lanes"]
    want = {n: lanes[n]["doc"]["rbp_resid(p=0.9)"]["value"] for n in ("bm25", "dense")}
    note = next(w for w in data["warnings"] if "rbp_resid(p=0.9)" in w)
    assert f"bm25 {want['bm25']:.4f}" in note and f"dense {want['dense']:.4f}" in note
    assert "rbp_resid(p=0.9)" in text


async def test_dashboard_overview_shows_the_residual_beside_rbp(tmp_path):
    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.state import DashboardState

    args = parse_args([*LANES, "--qrels", str(QRELS), "--metrics", "rbp,ndcg@10", "--resamples", "999"])
    st = state_from_args(args)
    app = RankscopeApp(DashboardState(st.options, synthetic=False, source_label="cranfield"))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await app.workers.wait_for_complete()
        await settle(app, pilot)
        table = app.screen.query_one("#ov-metrics", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        at = next(i for i, lab in enumerate(labels) if "rbp(p=0.9)" in lab and "resid" not in lab)
        assert "rbp_resid(p=0.9)" in labels[at + 1]


def test_compare_on_per_query_tables_without_the_residual_says_so(tmp_path, capsys):
    """Tables holding rbp but not rbp_resid: the note says the residual is not in the inputs
    (it printed "averages a nan, b nan" before)."""
    lines_a = ["rbp\t1\t0.5\n", "rbp\t2\t0.25\n", "rbp\t3\t0.125\n"]
    lines_b = ["rbp\t1\t0.4\n", "rbp\t2\t0.35\n", "rbp\t3\t0.1\n"]
    (tmp_path / "a.q").write_text("".join(lines_a))
    (tmp_path / "b.q").write_text("".join(lines_b))
    out = tmp_path / "c.json"
    assert main(["compare", "--per-query-in", f"a={tmp_path / 'a.q'}", "--per-query-in", f"b={tmp_path / 'b.q'}",
                 "--metric", "rbp", "--resamples", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "nan" not in text.lower()
    note = next(w for w in json.loads(out.read_text())["warnings"] if "rbp_resid(p=0.9)" in w)
    assert "not in the inputs" in note
