"""``rankscope plan``: queries (and units) needed over target Δ × power from a pilot, checked
against statsmodels' ``TTestPower`` on per-query values from pytrec_eval; the same plan
from per-query tables; bad settings refused in one line with status 2."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import pytrec_eval
from statsmodels.stats.power import TTestPower
from support import run_cli, shared_path

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.settings import PlanSettings


def _read_trec(path, kind):
    out: dict = {}
    for line in open(path):
        f = line.split()
        if f:
            out.setdefault(f[0], {})[f[2]] = float(f[4]) if kind == "run" else int(f[3])
    return out


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    """Cranfield's bm25 and dense lanes, their per-query ndcg@10 from pytrec_eval over the
    positive queries (a missing query scores 0), and trec_eval -q tables of them."""
    d = shared_path("cranfield")
    qrels = _read_trec(d / "qrels-test.txt", "qrels")
    positives = sorted(q for q, docs in qrels.items() if any(g >= 1 for g in docs.values()))
    values = {}
    out = tmp_path_factory.mktemp("plan")
    tables = {}
    for lane in ("bm25", "dense"):
        run = _read_trec(d / "lanes" / f"{lane}.run", "run")
        res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        values[lane] = np.array([res.get(q, {}).get("ndcg_cut_10", 0.0) for q in positives])
        path = out / f"{lane}.q"
        with open(path, "w") as fh:
            for q, v in zip(positives, values[lane]):
                fh.write("%-22s\t%s\t%.4f\n" % ("ndcg_cut_10", q, v))
        tables[lane] = path
    return {"dir": d, "positives": positives, "values": values, "tables": tables, "out": out}


def _oracle_n(delta, sd, alpha, power):
    return max(2, math.ceil(TTestPower().solve_power(effect_size=delta / sd, alpha=alpha, power=power)))


def _lanes(pilot):
    d = pilot["dir"]
    return ["--qrels", d / "qrels-test.txt", "--lane", f"bm25={d / 'lanes/bm25.run'}",
            "--lane", f"dense={d / 'lanes/dense.run'}"]


def test_plan_table_equals_statsmodels_on_pytrec_eval_values(pilot, tmp_path):
    out = tmp_path / "plan.json"
    r = run_cli("plan", *_lanes(pilot), "--delta", "0.02", "--delta", "0.05", "--power", "0.8", "--power", "0.9",
                "--family-size", "3", "--out", out)
    assert r.returncode == 0, r.stderr
    diff = pilot["values"]["dense"] - pilot["values"]["bm25"]
    sd = float(np.std(diff, ddof=1))
    payload = json.loads(out.read_text())
    assert payload["pilot"]["sd"] == pytest.approx(sd, rel=1e-9)
    assert payload["pilot"]["queries"] == len(pilot["positives"])
    cells = {(c["delta"], c["power"]): c["needed"] for c in payload["table"]}
    assert len(cells) == 4
    for (delta, power), n in cells.items():
        assert n == _oracle_n(delta, sd, 0.05 / 3, power)
        assert f"{n:,}" in r.stdout
    assert "Sakai 2016" in r.stdout and "alpha/J = 0.01667 (Bonferroni, for planning)" in r.stdout
    assert "Sakai" in payload["reference"] and payload["settings"]["alpha_per_test"] == pytest.approx(0.05 / 3)
    # the pilot's own MDE at 80 %: statsmodels' effect times the sd
    mde = payload["pilot"]["mde"][0]
    assert mde["delta"] == pytest.approx(sd * TTestPower().solve_power(nobs=diff.size, alpha=0.05 / 3, power=0.8),
                                         rel=1e-4)
    again = tmp_path / "again.json"
    run_cli("plan", *_lanes(pilot), "--delta", "0.02", "--delta", "0.05", "--power", "0.8", "--power", "0.9",
            "--family-size", "3", "--out", again)
    assert again.read_bytes() == out.read_bytes()  # same inputs, same bytes


def test_plan_without_delta_plans_the_observed_difference(pilot):
    r = run_cli("plan", *_lanes(pilot), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    diff = pilot["values"]["dense"] - pilot["values"]["bm25"]
    n = _oracle_n(abs(diff.mean()), float(np.std(diff, ddof=1)), 0.05, 0.8)
    assert f"| {abs(diff.mean()):.4f} | 0.80 | {n:,} |" in r.stdout


def test_plan_from_per_query_tables(pilot, tmp_path):
    t = pilot["tables"]
    out = tmp_path / "t.json"
    r = run_cli("plan", "--per-query-in", f"bm25={t['bm25']}", "--per-query-in", f"dense={t['dense']}",
                "--metric", "ndcg_cut_10", "--delta", "0.03", "--out", out)
    assert r.returncode == 0, r.stderr
    rounded = {k: np.round(v, 4) for k, v in pilot["values"].items()}
    sd = float(np.std(rounded["dense"] - rounded["bm25"], ddof=1))
    payload = json.loads(out.read_text())
    assert payload["pilot"]["sd"] == pytest.approx(sd, abs=1e-9)
    assert payload["table"][0]["needed"] == _oracle_n(0.03, sd, 0.05, 0.8)


def test_plan_with_units_counts_units_and_their_queries(pilot, tmp_path):
    units = tmp_path / "units.tsv"
    qs = pilot["positives"]
    labels = [f"u{i // 3}" for i in range(len(qs))]  # three queries per unit
    units.write_text("".join(f"{q}\t{u}\n" for q, u in zip(qs, labels)))
    out = tmp_path / "u.json"
    r = run_cli("plan", *_lanes(pilot), "--unit", units, "--delta", "0.04", "--out", out)
    assert r.returncode == 0, r.stderr
    diff = pilot["values"]["dense"] - pilot["values"]["bm25"]
    order = sorted(set(labels), key=str.encode)
    means = np.array([diff[[i for i, u in enumerate(labels) if u == lab]].mean() for lab in order])
    sd = float(np.std(means, ddof=1))
    payload = json.loads(out.read_text())
    cell = payload["table"][0]
    assert payload["pilot"]["sampled"] == "units" and payload["pilot"]["n"] == len(order)
    assert cell["needed"] == _oracle_n(0.04, sd, 0.05, 0.8)
    assert cell["queries"] == math.ceil(cell["needed"] * len(qs) / len(order) - 1e-9)
    assert "units needed" in r.stdout and "queries per unit" in r.stdout


@pytest.mark.parametrize("args,flag", [
    (["--delta", "-0.1"], "--delta"),
    (["--power", "1"], "--power"),
    (["--family-size", "0"], "--family-size"),
    (["--candidate", "nope"], "--candidate"),
    (["--candidate", "bm25"], "--candidate"),
])
def test_bad_plan_settings_are_one_line_status_2(pilot, tmp_path, args, flag):
    out = tmp_path / "never.json"
    r = run_cli("plan", *_lanes(pilot), *args, "--out", out)
    assert r.returncode == 2 and flag in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()


def test_plan_settings_check_themselves():
    with pytest.raises(InputError):
        PlanSettings(deltas=(float("nan"),))
    with pytest.raises(InputError):
        PlanSettings(powers=())
    assert PlanSettings(family_size=4).alpha == pytest.approx(0.0125)


def test_api_plan_is_the_command_lines(pilot):
    import rankscope_tui as rs

    d = pilot["dir"]
    runs = {"bm25": d / "lanes/bm25.run", "dense": d / "lanes/dense.run"}
    got = rs.plan(d / "qrels-test.txt", runs, deltas=0.03, powers=(0.8, 0.9), family_size=2)
    diff = pilot["values"]["dense"] - pilot["values"]["bm25"]
    sd = float(np.std(diff, ddof=1))
    assert [c["needed"] for c in got["table"]] == [_oracle_n(0.03, sd, 0.025, p) for p in (0.8, 0.9)]
    with pytest.raises(InputError, match="powers"):
        rs.plan(d / "qrels-test.txt", runs, powers=2)
