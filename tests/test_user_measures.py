"""Measures the user defines (``rankscope_tui.define``, ``--measures-from FILE.py``).

The oracle is plain Python over the run and qrels files (order by score descending, ties by
doc id descending as bytes, as trec_eval orders them), and a hand-worked case:

    qrels  q1: d1 3, d2 1, d3 0, d4 2        q2: d5 2, d6 2, d7 1        q3: d8 0
    run    q1: d1, d3, d2, dx, d4            q2: d7, d5, d9              q3: d8
    p_graded@3 = mean over the top 3 of grade / the query's highest judged grade
      q1: (3/3 + 0/3 + 1/3) / 3 = 4/9;   q2: (1/2 + 2/2 + 0) / 3 = 1/2
    mean over the positive queries q1, q2 = (4/9 + 1/2) / 2 = 17/36
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support import REPO, settle, shared_path

import rankscope_tui
from rankscope_tui.cli import main
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.measures import REGISTRY, parse_name
from rankscope_tui.kernel.measures.user import user_measures

#: The README's example (Measures you define), written to a file as a user would: the tests
#: run the very code the README shows.
_README = (REPO / "README.md").read_text(encoding="utf-8")
P_GRADED = _README.split("```python\n# graded.py\n", 1)[1].split("```", 1)[0]

QRELS = "q1 0 d1 3\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 2\nq2 0 d5 2\nq2 0 d6 2\nq2 0 d7 1\nq3 0 d8 0\n"
RUN = ("q1 Q0 d1 1 9 a\nq1 Q0 d3 2 8 a\nq1 Q0 d2 3 7 a\nq1 Q0 dx 4 6 a\nq1 Q0 d4 5 5 a\n"
       "q2 Q0 d7 1 9 a\nq2 Q0 d5 2 8 a\nq2 Q0 d9 3 7 a\nq3 Q0 d8 1 9 a\n")
RUN_B = "q1 Q0 d4 1 9 b\nq1 Q0 d1 2 8 b\nq1 Q0 d2 3 7 b\nq2 Q0 d6 1 9 b\nq2 Q0 d5 2 8 b\nq2 Q0 d7 3 7 b\nq3 Q0 d8 1 9 b\n"


@pytest.fixture(autouse=True)
def _no_definition_leaks():
    """Every test starts and ends with no user-defined measure in the registry."""
    assert not user_measures()
    yield
    assert not user_measures(), "a definition leaked out of its test"


@pytest.fixture
def small(tmp_path: Path) -> dict[str, Path]:
    files = {"qrels": QRELS, "a": RUN, "b": RUN_B, "defs": P_GRADED}
    out = {}
    for name, text in files.items():
        p = tmp_path / (name + (".py" if name == "defs" else ".txt"))
        p.write_text(text)
        out[name] = p
    return out


# ----------------------------------------------------------------------------- the oracle


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            q, _, d, g = line.split()
            out.setdefault(q, {})[d] = int(g)
    return out


def read_run(path: Path) -> dict[str, list[str]]:
    hits: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            q, _, d, _, s, _ = line.split()
            hits.setdefault(q, []).append((float(s), d))
    return {q: [d for _, d in sorted(h, key=lambda t: (t[0], t[1].encode()), reverse=True)] for q, h in hits.items()}


def p_graded_oracle(qrels: dict[str, dict[str, int]], run: dict[str, list[str]], k: int) -> dict[str, float]:
    out = {}
    for q, judged in qrels.items():
        top = max([g for g in judged.values() if g >= 0], default=0)
        total = 0.0
        for d in run.get(q, [])[:k]:
            g = max(judged.get(d, 0), 0)
            total += g / top if top > 0 else 0.0
        out[q] = total / k
    return out


# ----------------------------------------------------------------------------- evaluate


def test_evaluate_hand_worked_case_text_and_report(small, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["evaluate", "--lane", f"a={small['a']}", "--qrels", str(small["qrels"]), "--metrics", "pg@3,p@3",
                 "--measures-from", str(small["defs"]), "--resamples", "200", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "p_graded@3" in text
    r = json.loads(out.read_text())
    pq = r["per_query"]["a"]["doc"]
    assert pq["q1"]["p_graded@3"] == pytest.approx(4 / 9, abs=1e-15)
    assert pq["q2"]["p_graded@3"] == pytest.approx(1 / 2, abs=1e-15)
    cell = r["lanes"]["a"]["doc"]["p_graded@3"]
    assert cell["value"] == pytest.approx(17 / 36, abs=1e-15)
    assert cell["method"] == "percentile bootstrap" and cell["low"] <= cell["value"] <= cell["high"]
    assert f"{17 / 36:.4f}" in text
    # report.json says which definition made the numbers
    sha = hashlib.sha256(small["defs"].read_bytes()).hexdigest()
    assert r["inputs"]["settings"]["user_measures"] == {"p_graded": {"file": str(small["defs"]), "sha256": sha}}
    assert "mean of grade / max_grade over the top k" in r["definitions"]["p_graded@3"]
    assert "p_graded" not in REGISTRY  # the command's definitions end with it


def test_query_buckets_load_the_definitions_in_each_worker(small, tmp_path):
    from support import run_cli

    out = tmp_path / "rb.json"
    res = run_cli("evaluate", "--lane", f"a={small['a']}", "--qrels", small["qrels"], "--metrics", "p_graded@3",
                  "--measures-from", small["defs"], "--resamples", "0", "--buckets", "2",
                  "--out", out)
    assert res.returncode == 0, res.stderr
    r = json.loads(out.read_text())
    pq = r["per_query"]["a"]["doc"]
    assert pq["q1"]["p_graded@3"] == pytest.approx(4 / 9, abs=1e-15)
    assert pq["q2"]["p_graded@3"] == pytest.approx(1 / 2, abs=1e-15)
    assert r["inputs"]["settings"]["user_measures"]["p_graded"]["file"] == str(small["defs"])


def test_strata_and_latex_carry_the_user_measure(small, tmp_path, capsys):
    strata = tmp_path / "strata.tsv"
    strata.write_text("q1\tshort\nq2\tlong\nq3\tlong\n")
    out = tmp_path / "r.json"
    capsys.readouterr()
    assert main(["evaluate", "--lane", f"a={small['a']}", "--qrels", str(small["qrels"]), "--strata", str(strata),
                 "--metrics", "p_graded@3", "--measures-from", str(small["defs"]), "--resamples", "0",
                 "--format", "latex", "--out", str(out)]) == 0
    latex = capsys.readouterr().out
    assert "p\\_graded@3" in latex and "0.472" in latex
    st = json.loads(out.read_text())["strata"]["strata"]
    assert st["short"]["a"]["doc"]["p_graded@3"]["value"] == pytest.approx(4 / 9, abs=1e-15)
    assert st["long"]["a"]["doc"]["p_graded@3"]["value"] == pytest.approx(1 / 2, abs=1e-15)


def test_a_report_without_user_measures_has_no_user_measures_entry(small, tmp_path):
    out = tmp_path / "r.json"
    assert main(["evaluate", "--lane", f"a={small['a']}", "--qrels", str(small["qrels"]), "--metrics", "p@3",
                 "--resamples", "0", "--out", str(out)]) == 0
    assert "user_measures" not in json.loads(out.read_text())["inputs"]["settings"]


def test_cranfield_matches_plain_python_per_query(tmp_path):
    cran = shared_path("cranfield")
    defs = tmp_path / "defs.py"
    defs.write_text(P_GRADED)
    out = tmp_path / "r.json"
    lanes = {n: cran / "lanes" / f"{n}.run" for n in ("bm25", "dense", "tfidf")}
    assert main(["evaluate", *[x for n, p in lanes.items() for x in ("--lane", f"{n}={p}")],
                 "--qrels", str(cran / "qrels-test.txt"), "--metrics", "p_graded@5,p_graded@20",
                 "--measures-from", str(defs), "--resamples", "0", "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    qrels = read_qrels(cran / "qrels-test.txt")
    checked = 0
    for name, path in lanes.items():
        run = read_run(path)
        for k in (5, 20):
            want = p_graded_oracle(qrels, run, k)
            # report.json's per-query block holds the positive queries (a grade >= 1)
            positives = {q for q, j in qrels.items() if max(j.values()) >= 1}
            got = {q: v[f"p_graded@{k}"] for q, v in r["per_query"][name]["doc"].items()}
            assert set(got) == positives
            for q in positives:
                assert got[q] == pytest.approx(want[q], abs=1e-12), (name, k, q)
                checked += 1
            mean = sum(want[q] for q in positives) / len(positives)
            assert r["lanes"][name]["doc"][f"p_graded@{k}"]["value"] == pytest.approx(mean, abs=1e-12)
            # the judged means run over every judged query, the negatives (all grades 0) too
            every = sum(want.values()) / len(want)
            assert r["summary"]["judged_means"]["lanes"][name]["doc"][f"p_graded@{k}"] == pytest.approx(every, abs=1e-12)
    assert checked == 3 * 2 * 114


def test_a_user_proportion_gets_the_wilson_interval(small, tmp_path):
    from statsmodels.stats.proportion import proportion_confint

    defs = tmp_path / "top.py"
    defs.write_text("import numpy as np, rankscope_tui\n"
                    "def top_graded(cols, k, rel):\n"
                    "    first = (cols.rank == 1) & (cols.grade >= 2)\n"
                    "    return np.bincount(cols.qid[first], minlength=cols.n).astype(float)\n"
                    "rankscope_tui.define('top_graded', top_graded, proportion=True, cutoff='none')\n")
    out = tmp_path / "r.json"
    assert main(["evaluate", "--lane", f"a={small['a']}", "--lane", f"b={small['b']}", "--qrels", str(small["qrels"]),
                 "--metrics", "top_graded", "--measures-from", str(defs), "--resamples", "99", "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    # a: q1 starts with d1 (grade 3), q2 with d7 (grade 1): 1 of 2; b: d4 (2) and d6 (2): 2 of 2
    for lane, hits in (("a", 1), ("b", 2)):
        cell = r["lanes"][lane]["doc"]["top_graded"]
        low, high = proportion_confint(hits, 2, alpha=0.05, method="wilson")
        assert cell["value"] == hits / 2
        assert "wilson" in cell["method"].lower()
        assert cell["low"] == pytest.approx(low, abs=1e-12) and cell["high"] == pytest.approx(high, abs=1e-12)
    assert r["definitions"]["intervals"].startswith("hit@k, top_graded: Wilson score interval")


# ----------------------------------------------------------------------------- compare, verdict


def test_compare_gives_a_paired_row_on_the_user_measure(small, tmp_path):
    out = tmp_path / "c.json"
    assert main(["compare", "--lane", f"a={small['a']}", "--lane", f"b={small['b']}", "--qrels", str(small["qrels"]),
                 "--metric", "p_graded@3", "--measures-from", str(small["defs"]), "--resamples", "999",
                 "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["comparisons"]
    assert row["metric"] == "p_graded@3"
    # b: q1 (2/3 + 3/3 + 1/3) / 3 = 2/3, q2 (2/2 + 2/2 + 1/2) / 3 = 5/6; a: 4/9 and 1/2
    want = ((2 / 3 - 4 / 9) + (5 / 6 - 1 / 2)) / 2
    assert row["baseline_mean"] == pytest.approx(17 / 36, abs=1e-12)
    assert row["candidate_mean"] == pytest.approx((2 / 3 + 5 / 6) / 2, abs=1e-12)
    assert row["difference"] == pytest.approx(want, abs=1e-12)
    assert row["n"] == 2 and row["wins"] == 2 and row["losses"] == 0


def test_verdict_judges_a_rule_on_the_user_measure(small, tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["evaluate", "--lane", f"a={small['a']}", "--qrels", str(small["qrels"]), "--metrics", "p_graded@3",
                 "--measures-from", str(small["defs"]), "--resamples", "0", "--out", str(report)]) == 0
    gates = tmp_path / "gates.json"
    # 17/36 = 0.472...: passes >= 0.47, fails >= 0.48; the alias spelling resolves with the file loaded
    gates.write_text(json.dumps({"rules": [{"path": "lanes.a.doc.pg@3", "op": ">=", "threshold": 0.47}]}))
    capsys.readouterr()
    assert main(["verdict", "--report", str(report), "--gates", str(gates), "--on", "point",
                 "--measures-from", str(small["defs"])]) == 0
    # without the file the alias names nothing the report holds
    assert main(["verdict", "--report", str(report), "--gates", str(gates), "--on", "point"]) == 2
    gates.write_text(json.dumps({"rules": [{"path": "lanes.a.doc.p_graded@3", "op": ">=", "threshold": 0.48}]}))
    assert main(["verdict", "--report", str(report), "--gates", str(gates), "--on", "point"]) == 1


def test_verdict_reads_a_report_whose_user_measure_lies_outside_0_1(small, tmp_path, capsys):
    """A user measure need not be a proportion (here minus p@3, in [-1, 0]); report.json's
    user_measures tells the report reader not to hold it to [0, 1]."""
    defs = tmp_path / "neg.py"
    defs.write_text("import rankscope_tui\n"
                    "rankscope_tui.define('minus_p', lambda cols, k, rel: -cols.count_rel_top(k, rel) / k, "
                    "cutoff='required')\n")
    report = tmp_path / "r.json"
    assert main(["evaluate", "--lane", f"a={small['a']}", "--qrels", str(small["qrels"]), "--metrics", "minus_p@3",
                 "--measures-from", str(defs), "--resamples", "0", "--out", str(report)]) == 0
    # q1: d1, d2 relevant in the top 3 -> -2/3; q2: d7, d5 -> -2/3
    assert json.loads(report.read_text())["lanes"]["a"]["doc"]["minus_p@3"]["value"] == pytest.approx(-2 / 3, abs=1e-15)
    gates = tmp_path / "gates.json"
    gates.write_text(json.dumps({"rules": [{"path": "lanes.a.doc.minus_p@3", "op": "<=", "threshold": -0.6}]}))
    assert main(["verdict", "--report", str(report), "--gates", str(gates), "--on", "point"]) == 0
    # a built-in kind listed there is still held to [0, 1]
    r = json.loads(report.read_text())
    r["inputs"]["settings"]["user_measures"]["p"] = {"file": "x.py", "sha256": None}
    r["lanes"]["a"]["doc"]["p@3"] = {"value": 7.5, "low": None, "high": None}
    report.write_text(json.dumps(r))
    capsys.readouterr()
    assert main(["verdict", "--report", str(report), "--gates", str(gates), "--on", "point"]) == 2
    assert "lanes.a.doc.p@3.value is 7.5, outside [0, 1]" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the dashboard


async def test_dashboard_overview_shows_the_user_measure_column(small):
    from textual.widgets import DataTable

    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.state import DashboardState

    with rankscope_tui.defined_measures():
        ns: dict = {}
        exec(compile(P_GRADED, "defs.py", "exec"), ns)
        args = parse_args(["--lane", f"a={small['a']}", "--lane", f"b={small['b']}", "--qrels", str(small["qrels"]),
                           "--metrics", "p_graded@3,ndcg@3", "--resamples", "99"])
        st = state_from_args(args)
        app = RankscopeApp(DashboardState(st.options, synthetic=False, source_label="small"))
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(app, pilot)
            await app.workers.wait_for_complete()
            await settle(app, pilot)
            table = app.screen.query_one("#ov-metrics", DataTable)
            labels = [str(c.label) for c in table.columns.values()]
            at = next(i for i, lab in enumerate(labels) if "p_graded@3" in lab)
            cells = [str(table.get_row_at(r)[at]) for r in range(table.row_count)]
            assert cells[0].startswith(f"{17 / 36:.3f}"), cells  # lane a first


# ----------------------------------------------------------------------------- the API and names


def test_api_define_registers_through_the_names_resolver_and_unregister_removes_it():
    def zeros(cols, k, rel):
        return [0.0] * cols.n

    name = rankscope_tui.define("my_zero", zeros, aliases=("MyZ",), proportion=True)
    try:
        assert name == "my_zero"
        assert parse_name("myz@10").key == "my_zero@10" and parse_name("my_zero").key == "my_zero"
        assert parse_name("my_zero@5").is_proportion
    finally:
        rankscope_tui.unregister("my_zero")
    with pytest.raises(InputError, match="unknown metric"):
        parse_name("my_zero@5")


def test_api_evaluate_and_calc_aggregate_take_a_defined_measure(small):
    with rankscope_tui.defined_measures():
        ns: dict = {}
        exec(compile(P_GRADED, "defs.py", "exec"), ns)
        ev = rankscope_tui.evaluate(str(small["qrels"]), {"a": str(small["a"])}, measures="pg@3", resamples=0)
        r = ev.report()
        assert r["lanes"]["a"]["doc"]["p_graded@3"]["value"] == pytest.approx(17 / 36, abs=1e-15)
        assert r["inputs"]["settings"]["user_measures"] == {"p_graded": {"file": "python", "sha256": None}}
        agg = rankscope_tui.calc_aggregate(["pg@3"], str(small["qrels"]), str(small["a"]))
        # keyed as asked; the mean over the positive queries q1, q2
        assert agg["pg@3"] == pytest.approx(17 / 36, abs=1e-15)
    with pytest.raises(InputError, match="unknown metric"):
        rankscope_tui.evaluate(str(small["qrels"]), {"a": str(small["a"])}, measures="pg@3", resamples=0)


@pytest.mark.parametrize("name, aliases, needle", [
    ("P", (), "taken by the built-in measure p"),
    ("NDCG_cut", (), "taken by the built-in measure ndcg"),
    ("mine", ("map",), "alias 'map' is taken by the built-in measure ap"),
    ("mine", ("success",), "taken by the built-in measure hit"),
    ("Judged", (), "other tools use with another meaning"),
    ("p_10", (), "cutoff-like"),
    ("2bad", (), "use a letter"),
    ("mine", ("MINE",), "repeats a name"),
])
def test_a_clashing_or_malformed_name_is_one_line(name, aliases, needle):
    with rankscope_tui.defined_measures():
        with pytest.raises(InputError, match=needle) as exc:
            rankscope_tui.define(name, lambda cols, k, rel: [0.0] * cols.n, aliases=aliases)
        assert "\n" not in str(exc.value)
        assert not user_measures()


def test_a_second_definition_of_one_name_is_refused_and_the_scope_restores():
    with rankscope_tui.defined_measures():
        rankscope_tui.define("twice", lambda cols, k, rel: [0.0] * cols.n)
        with pytest.raises(InputError, match="unregister it first"):
            rankscope_tui.define("TWICE", lambda cols, k, rel: [1.0] * cols.n)
    assert "twice" not in REGISTRY


# ----------------------------------------------------------------------------- bad definition files


BAD = {
    "syntax": ("def f(:\n", r"defs\.py:1: the measure definitions do not import: SyntaxError"),
    "raises_on_import": ("import numpy\nraise RuntimeError('no luck')\n",
                         r"defs\.py:2: the measure definitions do not import: RuntimeError: no luck"),
    "nothing": ("x = 1\n", r"defs\.py: the file defines no measure"),
    "clash": ("import rankscope_tui\nrankscope_tui.define('ndcg', lambda c, k, r: [0.0] * c.n)\n",
              r"defs\.py: measure name 'ndcg' is taken by the built-in measure ndcg"),
    "raises_on_a_query": ("import numpy as np, rankscope_tui\n"
                          "def f(cols, k, rel):\n"
                          "    if np.any((cols.grade == 3) & (cols.rank == 1)):\n"
                          "        raise ValueError('grade 3 on top')\n"
                          "    return np.zeros(cols.n)\n"
                          "rankscope_tui.define('boom', f)\n",
                          r"defs\.py: measure 'boom@3' raised ValueError: grade 3 on top on query 'q1'"),
    "not_finite": ("import numpy as np, rankscope_tui\n"
                   "def f(cols, k, rel):\n"
                   "    top = np.zeros(cols.n); np.maximum.at(top, cols.ideal.qid, cols.ideal.grade)\n"
                   "    with np.errstate(invalid='ignore', divide='ignore'):\n"
                   "        return top / top\n"
                   "rankscope_tui.define('ratio', f)\n",
                   r"defs\.py: measure 'ratio@3' gave not a number on query 'q3'; every value must be a finite number"),
    "wrong_length": ("import numpy as np, rankscope_tui\n"
                     "rankscope_tui.define('short', lambda cols, k, rel: np.zeros(cols.n - 1))\n",
                     r"defs\.py: measure 'short@3' returned 2 values; it must return one value per query \(3"),
    "proportion_not_01": (P_GRADED.replace('cutoff="required"', 'cutoff="required", proportion=True'),
                          r"defs\.py: measure 'p_graded@3' is declared a proportion but gave 0\.44\d* on query 'q1'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_definition_file_is_one_line_exit_2_nothing_written(case, small, tmp_path, capsys):
    code, pattern = BAD[case]
    defs = tmp_path / "defs.py"
    defs.write_text(code)
    name = {"raises_on_a_query": "boom@3", "not_finite": "ratio@3", "wrong_length": "short@3"}.get(case, "p_graded@3")
    out = tmp_path / "r.json"
    capsys.readouterr()
    rc = main(["evaluate", "--lane", f"a={small['a']}", "--qrels", str(small["qrels"]), "--metrics", name,
               "--measures-from", str(defs), "--resamples", "0", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    import re

    assert re.search(pattern, err), err
    assert not out.exists()


@pytest.mark.parametrize("command", ["tui", "compare", "verdict"])
def test_every_command_with_the_option_refuses_a_bad_file_before_it_starts(command, small, tmp_path, capsys):
    defs = tmp_path / "defs.py"
    defs.write_text("raise KeyError('x')\n")
    extra = {"verdict": ["--report", str(tmp_path / "r.json"), "--gates", str(tmp_path / "g.json")],
             "compare": ["--lane", f"a={small['a']}", "--lane", f"b={small['b']}", "--qrels", str(small["qrels"])],
             "tui": ["--lane", f"a={small['a']}", "--qrels", str(small["qrels"])]}[command]
    capsys.readouterr()
    assert main([command, *extra, "--measures-from", str(defs)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"rankscope: error: {defs}:1: the measure definitions do not import: KeyError: 'x'"
