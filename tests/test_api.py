"""The public Python API (``import rankscope_tui``): one road with the command line.

Per-query values are checked against pytrec_eval-terrier (the oracle) and against the
command line's own output for the same inputs given every way the API takes them:
paths, dicts, DataFrames in each column convention, pyarrow Tables and ir_measures'
named tuples. ``compare()`` rows are ``rankscope compare --out``'s, ``paired()`` on
shuffled ids equals a compare row, and the README's Python example runs here.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import pytrec_eval
from ir_measures import Qrel, ScoredDoc
from support import REPO, cli_env, shared_path

import rankscope_tui as rs
from rankscope_tui.cli import main

MEASURES = "ndcg@10,rr,p@10,recall@100,hit@10"
PYTREC = {"ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "p@10": "P_10", "recall@100": "recall_100",
          "hit@10": "success_10"}
B = 999


def _read(path, kind):
    rows = [line.split() for line in open(path) if line.strip()]
    if kind == "run":
        return [(f[0], f[2], float(f[4])) for f in rows]
    return [(f[0], f[2], int(f[3])) for f in rows]


def _nested(rows):
    out: dict = {}
    for q, d, v in rows:
        out.setdefault(q, {})[d] = v
    return out


@pytest.fixture(scope="module")
def data():
    d = shared_path("cranfield")
    runs = {lane: d / "lanes" / f"{lane}.run" for lane in ("bm25", "dense")}
    return {"qrels": d / "qrels-test.txt", "runs": runs,
            "run_rows": {k: _read(p, "run") for k, p in runs.items()}, "qrels_rows": _read(d / "qrels-test.txt", "qrels")}


@pytest.fixture(scope="module")
def cli_per_query(data, tmp_path_factory):
    """``rankscope evaluate --per-query`` on the files: the command line's values."""
    out = tmp_path_factory.mktemp("cli") / "rows.csv"
    report = out.with_suffix(".json")
    args = ["evaluate", "--qrels", str(data["qrels"]), "--metrics", MEASURES, "--resamples", str(B),
            "--per-query", str(out), "--out", str(report)]
    for lane, p in data["runs"].items():
        args += ["--lane", f"{lane}={p}"]
    assert main(args) == 0
    df = pd.read_csv(out, dtype={"qid": str})
    # the list length and the short-list ceilings follow the metrics: not measure values
    df = df.drop(columns=[c for c in df.columns if c == "length" or c.startswith("ceiling ")])
    long = df.melt(id_vars=["lane", "level", "qid"], var_name="measure", value_name="value")
    return long.rename(columns={"lane": "run", "qid": "query_id"}), json.loads(report.read_text())


def _frames(rows, names, value):
    return pd.DataFrame(rows, columns=[*names[:2], value if names[2] is None else names[2]])


RUN_CONVENTIONS = [("q_id", "doc_id", "score"), ("qid", "docno", "score"), ("query_id", "doc_id", "score"),
                   ("query-id", "corpus-id", "score")]
QRELS_CONVENTIONS = [("q_id", "doc_id", "score"), ("qid", "docno", "label"), ("query_id", "doc_id", "relevance"),
                     ("query-id", "corpus-id", "score")]


def _inputs(data, how: str):
    """(qrels, {name: run}) given ``how``."""
    runs, qrels = data["run_rows"], data["qrels_rows"]
    if how == "paths":
        return data["qrels"], dict(data["runs"])
    if how == "dicts":
        return _nested(qrels), {k: _nested(v) for k, v in runs.items()}
    if how.startswith("frames-"):
        i = int(how.split("-")[1])
        return (pd.DataFrame(qrels, columns=list(QRELS_CONVENTIONS[i])),
                {k: pd.DataFrame(v, columns=list(RUN_CONVENTIONS[i])) for k, v in runs.items()})
    if how == "arrow":
        def table(rows, names):
            cols = list(zip(*rows))
            return pa.table({names[0]: list(cols[0]), names[1]: list(cols[1]), names[2]: list(cols[2])})
        return table(qrels, QRELS_CONVENTIONS[2]), {k: table(v, RUN_CONVENTIONS[2]) for k, v in runs.items()}
    if how == "tuples":
        return ([Qrel(q, d, g) for q, d, g in qrels], {k: [ScoredDoc(q, d, s) for q, d, s in v] for k, v in runs.items()})
    raise AssertionError(how)


HOW = ["paths", "dicts", "frames-0", "frames-1", "frames-2", "frames-3", "arrow", "tuples"]


@pytest.mark.parametrize("how", HOW)
def test_per_query_values_equal_the_cli_and_pytrec_eval(data, cli_per_query, how):
    """Must show 2: every input form gives the command line's per-query values exactly
    and the report's numbers; both equal pytrec_eval-terrier's to 1e-9."""
    cli, cli_report = cli_per_query
    qrels, runs = _inputs(data, how)
    ev = rs.evaluate(qrels, runs, measures=MEASURES, resamples=B)
    got = ev.per_query()
    key = ["run", "level", "query_id", "measure"]
    merged = got.merge(cli, on=key, how="outer", suffixes=("", "_cli"), indicator=True)
    assert (merged["_merge"] == "both").all()
    assert (merged["value"].to_numpy() == merged["value_cli"].to_numpy()).all()
    rep = ev.report()
    assert rep["lanes"] == cli_report["lanes"] and rep["per_query"] == cli_report["per_query"]
    oracle = _nested(data["qrels_rows"])
    for lane, rows in data["run_rows"].items():
        res = pytrec_eval.RelevanceEvaluator(oracle, set(PYTREC.values()) - {"success_10"} | {"success"}).evaluate(
            _nested(rows))
        mine = got[(got.run == lane)]
        for (q, m), v in mine.set_index(["query_id", "measure"])["value"].items():
            if m in PYTREC:
                assert v == pytest.approx(res[q][PYTREC[m]], abs=1e-9), (lane, q, m)


@pytest.fixture(scope="module")
def cli_compare(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp") / "c.json"
    args = ["compare", "--qrels", str(data["qrels"]), "--resamples", str(B), "--metric", "ndcg@10", "--metric", "rr",
            "--out", str(out)]
    for lane, p in data["runs"].items():
        args += ["--lane", f"{lane}={p}"]
    assert main(args) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("how", ["paths", "frames-1"])
def test_compare_rows_equal_compare_out_key_for_key(data, cli_compare, how):
    qrels, runs = _inputs(data, how)
    c = rs.compare(qrels, runs, measures=["ndcg@10", "rr"], resamples=B)
    got = c.as_dict()
    assert [list(r) for r in got["comparisons"]] == [list(r) for r in cli_compare["comparisons"]]
    assert got["comparisons"] == cli_compare["comparisons"]
    assert list(c.to_frame()["candidate"]) == ["dense", "dense"]  # rrf only when named, as the CLI
    md, tex = c.to_markdown(), c.to_latex()
    assert "| baseline |" in md and "\\begin{tabular}" in tex
    assert "<table" in c._repr_html_()


def test_paired_on_shuffled_ids_equals_the_compare_row(data, cli_compare):
    ev = rs.evaluate(data["qrels"], dict(data["runs"]), measures="ndcg@10", resamples=0)
    pq = ev.per_query()
    wide = pq[pq.measure == "ndcg@10"].pivot(index="query_id", columns="run", values="value")
    shuffled = wide.sample(frac=1.0, random_state=3)
    assert list(shuffled.index) != sorted(shuffled.index, key=str.encode)
    row = next(r for r in cli_compare["comparisons"] if r["candidate"] == "dense" and r["metric"] == "ndcg@10")
    # compare's family holds two rows (Holm); a family of one is compared without its adjustment
    one = rs.paired(shuffled["bm25"].to_numpy(), shuffled["dense"].to_numpy(), ids=list(shuffled.index),
                    metric="ndcg@10", baseline="bm25", candidate="dense", resamples=B)
    as_series = rs.paired(shuffled["bm25"], wide["dense"], metric="ndcg@10", baseline="bm25", candidate="dense",
                          resamples=B)
    family = {"adjusted_p", "bca_level", "bca_low", "bca_high", "verdict", "verdict_text", "t_agrees", "interval_agrees",
              "bootstrap_agrees", "correction", "sentence",  # (the sentence quotes the adjusted p)
              "notes",  # (the tests' disagreements are read against the adjusted decision)
              "power"}  # the MDE and queries needed are at the row's corrected α
    for got in (one.as_dict(), as_series.as_dict()):
        for k, v in row.items():
            if k in ("largest_losses", "largest_gains"):  # judged@10 needs the rankings
                assert [{a: b for a, b in x.items() if not a.endswith("_judged")} for x in got[k]] == \
                       [{a: b for a, b in x.items() if not a.endswith("_judged")} for x in v]
            elif k in ("tie_order", "judgment_bounds"):  # values without their rankings hold neither
                assert got[k] is None and v is not None
            elif k not in family and not k.endswith("_reason"):
                assert got[k] == v, k
    single = rs.compare(data["qrels"], dict(data["runs"]), candidates=["dense"], measures="ndcg@10", resamples=B)
    skip = ("tie_order", "judgment_bounds", "notes")  # rankings add these; the notes are checked below
    from_runs = single.as_dict()["comparisons"][0]
    assert {k: v for k, v in one.as_dict().items() if "judged" not in str(v) and not k.startswith(skip)} == \
           {k: v for k, v in from_runs.items() if "judged" not in str(v) and not k.startswith(skip)}
    # the runs' row may add the unjudged hits' note (its bounds need the rankings), nothing else
    assert one.as_dict()["notes"] == [n for n in from_runs["notes"] if not n.startswith("the verdict holds under one bound")]


def test_evaluation_renders_and_tables(data):
    ev = rs.evaluate(data["qrels"], [data["runs"]["bm25"]], measures="ndcg@10,hit@10", resamples=B,
                     strata=[shared_path("cranfield", "strata.tsv")])
    t = ev.table()
    assert set(t.stratification) == {"(all)", "strata"}
    rep = ev.report()
    cell = rep["lanes"]["bm25"]["doc"]["hit@10"]
    row = t[(t.stratification == "(all)") & (t.measure == "hit@10")].iloc[0]
    assert (row.value, row.low, row.high, row.method) == (cell["value"], cell["low"], cell["high"], cell["method"])
    assert "### Overall" in ev.to_markdown() and "\\begin{tabular}" in ev.to_latex() and "<table" in ev._repr_html_()


def test_iter_calc_and_calc_aggregate(data):
    got = list(rs.iter_calc(["ndcg@10", "rr"], data["qrels"], data["runs"]["dense"]))
    oracle = pytrec_eval.RelevanceEvaluator(_nested(data["qrels_rows"]), {"ndcg_cut_10", "recip_rank"}).evaluate(
        _nested(data["run_rows"]["dense"]))
    assert {m for _, m, _ in got} == {"ndcg@10", "rr"}
    for q, m, v in got:
        assert v == pytest.approx(oracle[q][PYTREC[m]] if q in oracle else 0.0, abs=1e-9)
    agg = rs.calc_aggregate("ndcg@10", data["qrels"], data["runs"]["dense"])
    assert agg == {"ndcg@10": pytest.approx(np.mean([v for _, m, v in got if m == "ndcg@10"]), abs=1e-15)}


# --------------------------------------------------------------------------- errors: the CLI's words


def test_errors_are_the_cli_input_errors_with_the_same_wording(tmp_path, capsys):
    run = tmp_path / "bad.run"
    run.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 x t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    assert main(["evaluate", "--lane", str(run), "--qrels", str(qrels)]) == 2
    cli = capsys.readouterr().err.removeprefix("rankscope: error: ").rstrip("\n")
    with pytest.raises(rs.InputError) as e:
        rs.evaluate(qrels, [run])
    assert str(e.value) == cli
    with pytest.raises(rs.InputError, match=r"<run bm25>:2: score for query 'q1', doc 'd2' is not a number: 'x'"):
        rs.evaluate({"q1": {"d1": 1}}, {"bm25": {"q1": {"d1": 1.0, "d2": "x"}}})
    with pytest.raises(rs.InputError, match="must be at least 1"):
        rs.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, relevant=0)
    assert main(["evaluate", "--lane", str(run), "--qrels", str(qrels), "--confidence", "1.5"]) == 2
    cli = capsys.readouterr().err.removeprefix("rankscope: error: ").rstrip("\n")
    with pytest.raises(rs.InputError) as e:
        rs.evaluate(qrels, [run], confidence=1.5)
    # a setting out of range: the same words, naming the parameter where the command line names the option
    assert cli.startswith("--confidence: ") and str(e.value) == cli.replace("--confidence", "confidence", 1)
    with pytest.raises(rs.InputError, match="ids must be unique"):
        rs.paired([1, 2], [2, 3], ids=["a", "a"])


def test_a_dict_run_is_fingerprinted_by_content(tmp_path):
    """from_raw needs no digest: an in-memory input gets one from its content."""
    q = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    a = rs.evaluate(q, {"x": {"q1": {"d1": 1.0}, "q2": {"d2": 2.0}}}, measures="rr", resamples=0).report()
    b = rs.evaluate(q, {"x": {"q2": {"d2": 2.0}, "q1": {"d1": 1.0}}}, measures="rr", resamples=0).report()
    c = rs.evaluate(q, {"x": {"q1": {"d1": 1.5}, "q2": {"d2": 2.0}}}, measures="rr", resamples=0).report()
    sha = lambda r: r["inputs"]["lanes"]["x"]["sha256"]  # noqa: E731
    assert re.fullmatch("[0-9a-f]{64}", sha(a)) and sha(a) != sha(c)
    assert sha(a) != sha(b)  # row order is content: the fingerprint is of the rows as given


# --------------------------------------------------------------------------- light, Textual-free, one road


def test_import_is_light_and_the_api_never_loads_textual_or_the_command_line():
    code = ("import sys, rankscope_tui as rs\n"
            "light = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pyarrow', 'pandas', 'textual'))\n"
            "ev = rs.evaluate({'q1': {'d1': 1}, 'q2': {'d2': 1}}, {'q1': {'d1': 1.0}, 'q2': {'d3': 1.0}}, "
            "measures='rr', resamples=0)\n"
            "ev.to_markdown(); ev._repr_html_()\n"
            "rs.paired([0.1, 0.5], [0.2, 0.6], ['a', 'b'], resamples=0)\n"
            "rs.compare({'q1': {'d1': 1}, 'q2': {'d1': 1}}, {'a': {'q1': {'d1': 1.0}, 'q2': {'d2': 1.0}}, "
            "'b': {'q1': {'d1': 1.0}, 'q2': {'d1': 1.0}}}, resamples=0)\n"
            "ui = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'plotext'))\n"
            "cli = sorted(m for m in sys.modules if m.startswith(('rankscope_tui.cli', 'rankscope_tui.commands')))\n"
            "print(light, ui, cli)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "[] [] []"


def test_the_cli_and_dashboard_entry_points_still_import():
    res = subprocess.run([sys.executable, "-c", "from rankscope_tui.cli import main; from rankscope_tui.commands import build_parser; build_parser();"
                          "from rankscope_tui.commands import tui; import rankscope_tui; print(rankscope_tui.__version__)"],
                         capture_output=True, text=True, env=cli_env(), timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "0.1.0", res.stderr[-2000:]


def test_the_api_imports_only_the_kernel_and_render():
    """The API is a front over the kernel; it renders through render/ and builds its settings
    directly (the settings check themselves): it never imports the command line."""
    from test_architecture import import_edges

    edges, problems = import_edges(REPO)
    assert not problems
    bad = [f"{e.file}:{e.line} → {e.target}" for e in edges if e.source in ("rankscope_tui.api", "rankscope_tui")
           and not e.target.startswith(("rankscope_tui.kernel", "rankscope_tui.render", "rankscope_tui.api"))]
    assert not bad, bad


# --------------------------------------------------------------------------- the README's example


def readme_python_blocks() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_python_example_runs(tmp_path):
    """Must show 4: the README's Python block is executed as written."""
    blocks = readme_python_blocks()
    assert len(blocks) == 2  # the API example, then query buckets (run by tests/test_bucket.py)
    ast.parse(blocks[0])
    res = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True, env=cli_env(),
                         cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ndcg@10" in res.stdout and "q1 ndcg@10" in res.stdout


def test_per_query_tables_through_the_api_give_the_rows_of_the_runs(data, cli_compare, tmp_path):
    """compare(per_query=...) is compare --per-query-in: a long DataFrame of the runs' own
    per-query values (judged@10 among them) gives every row of compare on the runs."""
    ev = rs.evaluate(data["qrels"], dict(data["runs"]), measures="ndcg@10,rr", resamples=0)
    long = ev.per_query()
    long = long[long.run != "rrf"].drop(columns="level").sample(frac=1.0, random_state=1)  # any row order
    got = rs.compare(data["qrels"], per_query=long, measures=["ndcg@10", "rr"], baseline="bm25", candidates=["dense"],
                     resamples=B)  # (the first run is the one seen first: the rows are shuffled)
    on_runs = rs.compare(data["qrels"], dict(data["runs"]), measures=["ndcg@10", "rr"], candidates=["dense"],
                         resamples=B)
    # per-query tables carry no rankings, hence no tie order (null); every other key agrees
    from_tables, from_runs = got.as_dict()["comparisons"], on_runs.as_dict()["comparisons"]
    assert all(r.pop("tie_order") is None and r.pop("tie_order_reason") for r in from_tables)
    assert all(r.pop("tie_order") is not None for r in from_runs)
    assert all(r.pop("judgment_bounds") is None and r.pop("judgment_bounds_reason") for r in from_tables)
    assert all(r.pop("judgment_bounds") is not None for r in from_runs)
    for r in from_runs:  # nor the unjudged hits' note, which needs the rankings
        r["notes"] = [n for n in r["notes"] if not n.startswith("the verdict holds under one bound")]
    assert from_tables == from_runs
    t = rs.evaluate(data["qrels"], per_query=long, resamples=0)
    assert "attribution" not in t.report() and "attribution" in t.report()["summary"]["not_available"]
    for lane in ("bm25", "dense"):
        assert t.report()["lanes"][lane] == ev.report()["lanes"][lane]
    with pytest.raises(rs.InputError, match="depth cannot be used with per_query tables"):
        rs.compare(data["qrels"], per_query=long, depth=10)
    with pytest.raises(rs.InputError, match=r"<per-query table 1>:2: two values of rr for query"):
        rs.compare(per_query=pd.DataFrame({"run": ["a", "a"], "qid": ["1", "1"], "measure": ["RR", "rr"],
                                           "value": [0.5, 0.5]}))


def test_from_raw_needs_no_digest():
    """Workspace.from_raw on raw inputs built by hand (no file, no digest): each is
    fingerprinted by its content, as columns.table_digest does for a table."""
    from rankscope_tui.kernel.inputs.arrow import arrow_strings
    from rankscope_tui.kernel.inputs.readers import RawLane, RawQrels, RowLines
    from rankscope_tui.kernel.workspace.loaded import Workspace

    lane = RawLane("x", "<memory>", arrow_strings(["q1", "q2"]), arrow_strings(["d1", "d2"]), np.array([1.0, 2.0]),
                   RowLines(2))
    qrels = RawQrels("<memory qrels>", arrow_strings(["q1", "q2"]), arrow_strings(["d1", "d3"]),
                     np.array([1, 1], dtype=np.int64), RowLines(2))
    ws = Workspace.from_raw([lane], qrels)
    shas = [f.sha256 for f in ws.inputs]
    assert len(shas) == 2 and all(re.fullmatch("[0-9a-f]{64}", s) for s in shas) and shas[0] != shas[1]
    assert ws.per_query("x")["rr"].tolist() == [1.0, 0.0]


def test_lane_names_are_checked_as_the_cli_checks_them():
    q = {"q1": {"d1": 1}}
    with pytest.raises(rs.InputError, match="lane name 'rrf' is reserved for a fused lane"):
        rs.evaluate(q, {"rrf": {"q1": {"d1": 1.0}}})
    with pytest.raises(rs.InputError, match=r"lane name 'a\.b' must be non-empty"):
        rs.evaluate(q, {"a.b": {"q1": {"d1": 1.0}}})
    ev = rs.evaluate(q, [{"q1": {"d1": 1.0}}, [ScoredDoc("q1", "d1", 2.0)]], measures="rr", resamples=0)
    assert list(ev.report()["lanes"]) == ["run1", "run2", "rrf"]


def test_columns_in_no_convention_are_named_as_the_cli_names_them():
    run = pd.DataFrame({"a": ["q1", "q1"], "b": ["d1", "d2"], "c": [1.0, 2.0]})
    qrels = pd.DataFrame({"x": ["q1"], "y": ["d1"], "z": [1]})
    with pytest.raises(rs.InputError, match="no known run columns among: a, b, c"):
        rs.evaluate(qrels, run, qrels_columns={"query": "x", "doc": "y", "relevance": "z"})
    ev = rs.evaluate(qrels, run, measures="rr", resamples=0, run_columns={"query": "a", "doc": "b", "score": "c"},
                     qrels_columns="query=x,doc=y,relevance=z")
    assert ev.per_query().value.tolist() == [0.5]  # d2 scores higher: the relevant d1 is second


def test_numpy_numbers_in_dicts_are_read_as_the_numbers_they_hold():
    """Dicts built from model outputs hold numpy scalars (np.float32 scores, np.int64 grades
    and ids), as pytrec_eval and ranx take them. Hand-worked: in q1, d2 (0.75) ranks above
    the relevant d1 (0.25), so rr = 1/2; in q2 the relevant 7 is first, rr = 1; ndcg@2 of q1
    = (1/log2 3) / 1."""
    run = {"q1": {"d1": np.float32(0.25), "d2": np.float64(0.75)}, np.int64(2): {np.int32(7): np.float16(1.5),
                                                                               "d3": np.int64(1)}}
    qrels = {"q1": {"d1": np.int64(1), "d2": np.int8(0)}, "2": {"7": np.uint8(2)}}
    ev = rs.evaluate(qrels, run, measures="rr,ndcg@2", resamples=0)
    pq = ev.per_query()
    got = {(r.query_id, r.measure): r.value for r in pq.itertuples()}
    assert got[("q1", "rr")] == 0.5 and got[("2", "rr")] == 1.0
    assert got[("q1", "ndcg@2")] == pytest.approx(1 / np.log2(3), abs=1e-12) and got[("2", "ndcg@2")] == 1.0
    for bad in (True, np.bool_(True), "1", None):
        with pytest.raises(rs.InputError, match="is not a number"):
            rs.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": bad}}, measures="rr", resamples=0)
