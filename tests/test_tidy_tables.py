"""Must show 3: the tidy summary (``--summary FILE.csv|.tsv|.parquet``) and the long
per-query table (``--per-query-long``) load with pandas into report.json's means and
per-query values, exactly (the oracle is report.json itself, read with ``json``)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from paper_outputs import outputs
from support import run_cli


def _read(path):
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",",
                       keep_default_na=False, na_values={"value": [""], "low": [""], "high": [""]},
                       dtype={"level": str, "stratification": str, "stratum": str, "run": str, "query_id": str})


def _expected_summary(report):
    out = {}
    sections = [("(all)", "(all)", report["lanes"])]
    sections += [(s, lab, b) for s, labs in report["strata"].items() for lab, b in labs.items()]
    for s, lab, block in sections:
        for lane, levels in block.items():
            for level, cells in levels.items():
                for m in report["inputs"]["settings"]["metrics"]:
                    out[(lane, level, s, lab, m)] = cells[m]
    return out


@pytest.mark.parametrize("which", ["cranfield", "demo"])
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_summary_round_trips_to_report_means(which, suffix):
    o = outputs(which)
    df = _read(o["dir"] / f"summary{suffix}")
    assert list(df.columns) == ["run", "level", "stratification", "stratum", "measure", "value", "low", "high", "method", "n",
                                "note"]
    expected = _expected_summary(o["report"])
    assert len(df) == len(expected)
    for row in df.itertuples(index=False):
        cell = expected[(row.run, row.level, row.stratification, row.stratum, row.measure)]
        for col, key in (("value", "value"), ("low", "low"), ("high", "high")):
            got, want = getattr(row, col), cell[key]
            if want is None:
                assert math.isnan(got)
            else:
                assert got == want, (row, col)  # exactly: the same double
        assert row.n == cell["n"] and row.method == cell["method"]
        # the interval's flags as report.json has them (an empty field reads back as NaN from CSV)
        assert (row.note if isinstance(row.note, str) else "") == (cell.get("note") or ""), row
    # a 2-query stratum is visibly a 2-query stratum: n is a column
    assert df["n"].min() < df["n"].max()


@pytest.mark.parametrize("which", ["cranfield", "demo"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_long_per_query_round_trips_to_report_values(which, suffix):
    o = outputs(which)
    df = _read(o["dir"] / f"long{suffix}")
    assert list(df.columns) == ["run", "level", "query_id", "measure", "value"]
    pq = o["report"]["per_query"]
    metrics = o["report"]["inputs"]["settings"]["metrics"]
    n = sum(len(rows) for levels in pq.values() for rows in levels.values()) * len(metrics)
    assert len(df) == n
    for row in df.itertuples(index=False):
        assert row.value == pq[row.run][row.level][row.query_id][row.measure]
    # the long table is the wide one pivoted: same values in the shape pandas users expect
    wide = df.pivot_table(index=["run", "level", "query_id"], columns="measure", values="value")
    assert wide.shape == (n // len(metrics), len(metrics))


def test_a_summary_with_another_suffix_is_refused(tmp_path):
    o = outputs("demo")
    res = run_cli("evaluate", *o["args"], "--summary", str(tmp_path / "s.xlsx"))
    assert res.returncode == 2
    assert res.stderr.startswith("rankscope: error: ") and ".csv, .tsv or .parquet" in res.stderr
    assert len(res.stderr.splitlines()) == 1 and not list(tmp_path.iterdir())


def test_the_three_tidy_tables_speak_one_vocabulary(tmp_path):
    """--summary and Evaluation.table() have the same columns and rows; --per-query-long and
    Evaluation.per_query() too; the long table's names (run, query_id, measure, value) are
    ir_measures' and the summary's share them (issue: lane/mean/interval against
    run/value/method)."""
    from support import shared_path

    import rankscope_tui as rs

    c = shared_path("cranfield")
    summary, long = tmp_path / "s.csv", tmp_path / "l.csv"
    res = run_cli("evaluate", "--lane", str(c / "lanes" / "bm25.run"), "--qrels", str(c / "qrels-test.txt"),
                  "--strata", str(c / "strata.tsv"), "--metrics", "ndcg@10,hit@10", "--resamples", "999",
                  "--summary", str(summary), "--per-query-long", str(long))
    assert res.returncode == 0, res.stderr
    ev = rs.evaluate(c / "qrels-test.txt", {"bm25": c / "lanes" / "bm25.run"}, measures="ndcg@10,hit@10",
                     resamples=999, strata=[c / "strata.tsv"])
    cli_s, api_s = _read(summary), ev.table()
    assert list(cli_s.columns) == list(api_s.columns)
    assert {"run", "measure", "value"} <= set(cli_s.columns) and not {"lane", "mean", "interval"} & set(cli_s.columns)
    for col in cli_s.columns:  # the same rows in the same order, value for value
        a, b = cli_s[col].tolist(), api_s[col].tolist()
        assert len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b)), col
    cli_l, api_l = _read(long), ev.per_query()
    assert list(cli_l.columns) == list(api_l.columns) == ["run", "level", "query_id", "measure", "value"]
    assert cli_l.equals(api_l)
