"""Issue 31, items 3-5: a planned family across baselines (``compare --plan`` / ``--pair``),
its rows beyond the plan corrected apart, the plan's commit checked against the run's
files, the family's false-positive chance, and the comparison log on by default.

Oracles: ``statsmodels.stats.multitest.multipletests`` for every adjusted p; 1 − (1 − α)^J
by hand; git itself (a temporary repository with commit dates set through
GIT_COMMITTER_DATE / GIT_AUTHOR_DATE) for the commit times.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import statsmodels.stats.multitest as multitest
from support import shared_path

B = "999"  # resamples: enough for p of 0.001, quick on 114 queries


@pytest.fixture(scope="module")
def cran() -> dict:
    lanes = shared_path("cranfield", "lanes")
    qrels = shared_path("cranfield", "qrels-test.txt")
    lane_args = [a for n in ("bm25", "dense", "tfidf") for a in ("--lane", f"{n}={lanes / (n + '.run')}")]
    return {"qrels": qrels, "lanes": lanes, "args": ["--qrels", str(qrels), *lane_args, "--resamples", B]}


#: a chain: each pair's baseline is the previous pair's candidate (rrf: the fused lane, named)
CHAIN = [{"candidate": "dense", "baseline": "bm25"}, {"candidate": "rrf", "baseline": "dense"},
         {"candidate": "tfidf", "baseline": "rrf"}]


def _plan(tmp_path: Path, pairs=CHAIN, **extra) -> Path:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps({"pairs": pairs, **extra}), encoding="utf-8")
    return p


def _run(cli_run, cran, tmp_path, *extra, name="out.json"):
    out = tmp_path / name
    rc, stdout, stderr = cli_run("compare", *cran["args"], *extra, "--out", out)
    assert rc == 0, stderr
    return json.loads(out.read_text(encoding="utf-8")), stdout, stderr


def _holm(raw):
    return list(multitest.multipletests(raw, alpha=0.05, method="holm")[1])


def test_a_chain_of_three_pairs_with_different_baselines_is_one_holm_family(cli_run, cran, tmp_path):
    payload, stdout, _ = _run(cli_run, cran, tmp_path, "--plan", _plan(tmp_path))
    rows = payload["comparisons"]
    assert [(r["candidate"], r["baseline"]) for r in rows] == [(p["candidate"], p["baseline"]) for p in CHAIN]
    assert len({r["baseline"] for r in rows}) == 3  # three different baselines
    assert payload["settings"]["family_size"] == 3
    raw = [r["randomization_p"] for r in rows]
    assert [r["adjusted_p"] for r in rows] == pytest.approx(_holm(raw), abs=1e-12)
    assert all(r["verdict"] != "exploratory" for r in rows)
    for r in rows:  # the verdict follows the family's adjusted p
        assert (r["verdict"] in ("better", "worse")) == (r["adjusted_p"] <= 0.05)
    # the family's false-positive chance beside J, by hand
    fam = payload["settings"]["family_false_positive"]
    assert fam["family_size"] == 3 and fam["uncorrected"] == pytest.approx(1 - 0.95 ** 3)
    assert "family of J = 3 tests" in stdout and "= 0.143" in stdout
    assert payload["settings"]["plan"]["source"].endswith("plan.json")


def test_repeated_pair_options_and_the_api_make_the_same_family(cli_run, cran, tmp_path):
    from rankscope_tui import api as rs

    by_plan, _, _ = _run(cli_run, cran, tmp_path, "--plan", _plan(tmp_path), name="a.json")
    pairs = [f"{p['candidate']}:{p['baseline']}" for p in CHAIN]
    by_pairs, _, _ = _run(cli_run, cran, tmp_path, *[a for p in pairs for a in ("--pair", p)], name="b.json")
    keys = ("candidate", "baseline", "randomization_p", "adjusted_p", "verdict")
    assert [{k: r[k] for k in keys} for r in by_pairs["comparisons"]] == \
        [{k: r[k] for k in keys} for r in by_plan["comparisons"]]
    runs = {n: str(cran["lanes"] / f"{n}.run") for n in ("bm25", "dense", "tfidf")}
    api = rs.compare(str(cran["qrels"]), runs, pairs=[(p["candidate"], p["baseline"]) for p in CHAIN], resamples=int(B))
    assert [r.adjusted_p for r in api.rows] == [r["adjusted_p"] for r in by_plan["comparisons"]]
    assert api.as_dict()["settings"]["family_size"] == 3


def test_rows_beyond_the_plan_are_exploratory_and_corrected_apart(cli_run, cran, tmp_path):
    plan = _plan(tmp_path, metrics=["ndcg@10"])
    payload, stdout, _ = _run(cli_run, cran, tmp_path, "--plan", plan, "--pair", "tfidf:bm25", "--metric", "ndcg@10",
                              "--metric", "rr")
    rows = payload["comparisons"]
    planned = [r for r in rows if r["metric"] == "ndcg@10" and {"candidate": r["candidate"], "baseline": r["baseline"]} in CHAIN]
    extra = [r for r in rows if r not in planned]
    assert len(planned) == 3 and len(extra) == 5  # tfidf:bm25 on ndcg@10, and all four pairs on rr
    assert all(r["verdict"] == "exploratory" for r in extra)
    assert all(r["verdict"] != "exploratory" for r in planned)
    # the planned family is the plan's three rows alone: the extra rows do not enlarge it
    assert [r["adjusted_p"] for r in planned] == pytest.approx(_holm([r["randomization_p"] for r in planned]), abs=1e-12)
    # the exploratory rows are their own Holm family
    assert [r["adjusted_p"] for r in extra] == pytest.approx(_holm([r["randomization_p"] for r in extra]), abs=1e-12)
    s = payload["settings"]
    assert s["family_size"] == 3 and s["exploratory_family_size"] == 5
    assert s["exploratory_family_false_positive"]["uncorrected"] == pytest.approx(1 - 0.95 ** 5)
    assert "corrected apart as their own family of J = 5" in stdout
    assert "exploratory (tfidf vs bm25 on ndcg@10): not in the plan" in stdout


def test_a_plan_file_is_read_strictly(cli_run, cran, tmp_path):
    cases = {
        '{"pairs": ["dense:bm25"], "extra": 1}': "unknown key 'extra'",
        '{"pairs": []}': '"pairs" must be a non-empty list',
        '{"pairs": ["dense-bm25"]}': "pairs[0]: a pair is CANDIDATE:BASELINE",
        '{"pairs": ["dense:bm25", {"candidate": "dense", "baseline": "bm25"}]}': "listed twice",
        '{"schema": "x", "pairs": ["dense:bm25"]}': "unknown key 'schema'",
        '{"pairs": ["dense:bm25"], "metrics": [3]}': '"metrics" must be a list of metric names',
        '{"pairs": ["dense:bm25"], "metrics": ["nosuch@3"]}': "nosuch",
        '{"pairs": ["dense:nosuch"]}': "unknown lane 'nosuch'",
        '[1, 2': "invalid JSON",
    }
    for text, said in cases.items():
        p = tmp_path / "bad.json"
        p.write_text(text, encoding="utf-8")
        out = tmp_path / "never.json"
        rc, stdout, stderr = cli_run("compare", *cran["args"], "--plan", p, "--out", out)
        assert rc == 2, (text, stderr)
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and str(p) in lines[0], (text, stderr)
        assert "Traceback" not in stderr and not out.exists()


# ---------------------------------------------------------------------------- committed before the run?


def _git(repo: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path, cran):
    if shutil.which("git") is None:
        pytest.skip("git not found")
    d = tmp_path / "study"
    d.mkdir()
    _git(d, "init", "-q")
    return d


def _inputs_written_at(tmp_path, cran, stamp: float) -> list[str]:
    """Copies of the runs and qrels whose modification time is ``stamp``; their lane arguments."""
    args = []
    for n in ("bm25", "dense", "tfidf"):
        dst = tmp_path / f"{n}.run"
        shutil.copyfile(cran["lanes"] / f"{n}.run", dst)
        os.utime(dst, (stamp, stamp))
        args += ["--lane", f"{n}={dst}"]
    q = tmp_path / "qrels.txt"
    shutil.copyfile(cran["qrels"], q)
    os.utime(q, (stamp, stamp))
    return ["--qrels", str(q), *args, "--resamples", B]


JAN_1, JAN_2 = 1609459200.0, 1609545600.0  # 2021-01-01 and 2021-01-02, 00:00 UTC


def test_a_plan_committed_after_the_report_and_the_runs_is_warned_about(cli_run, cran, repo, tmp_path):
    args = _inputs_written_at(tmp_path, cran, JAN_1)
    report = tmp_path / "report.json"
    report.write_text("{}", encoding="utf-8")
    os.utime(report, (JAN_2, JAN_2))
    plan = _plan(repo)
    _git(repo, "add", "plan.json")
    _git(repo, "commit", "-q", "-m", "plan", when="2021-01-03T12:00:00+00:00")
    rc, stdout, stderr = cli_run("compare", *args, "--plan", plan, "--out", report)
    assert rc == 0, stderr
    warned = [w for w in json.loads(report.read_text())["warnings"] if "last committed" in w]
    assert len(warned) == 1, stdout
    w = warned[0]
    assert "2021-01-03 12:00:00 UTC" in w  # the commit time git recorded
    assert f"after the report {report} (written 2021-01-02 00:00:00 UTC)" in w
    assert "(written 2021-01-01 00:00:00 UTC)" in w and "3 inputs" in w  # the runs; the qrels are not compared
    assert "committer time" in w  # says what was compared
    assert w in stdout


def test_a_plan_committed_before_the_run_is_not_warned_about(cli_run, cran, repo, tmp_path):
    args = _inputs_written_at(tmp_path, cran, JAN_2)
    plan = _plan(repo)
    _git(repo, "add", "plan.json")
    _git(repo, "commit", "-q", "-m", "plan", when="2021-01-01T12:00:00+00:00")
    payload, stdout, _ = _run(cli_run, {"args": args}, tmp_path, "--plan", plan)
    assert not [w for w in payload["warnings"] if "plan" in w], payload["warnings"]


def test_a_plan_not_committed_is_warned_about(cli_run, cran, repo, tmp_path):
    plan = _plan(repo)  # in the repository, never added
    payload, stdout, _ = _run(cli_run, cran, tmp_path, "--plan", plan)
    assert any(f"the plan {plan} is not committed in git" in w for w in payload["warnings"])
    _git(repo, "add", "plan.json")
    _git(repo, "commit", "-q", "-m", "plan")
    _plan(repo, note="edited after the commit")
    payload, _, _ = _run(cli_run, cran, tmp_path, "--plan", plan, name="again.json")
    assert any("has changes not committed in git" in w for w in payload["warnings"])


# ---------------------------------------------------------------------------- the comparison log, on by default


def _cache_files() -> list[Path]:
    d = Path(os.environ["XDG_CACHE_HOME"]) / "rankscope" / "comparisons"
    return sorted(d.glob("*.jsonl")) if d.exists() else []


def test_every_compare_is_logged_in_the_user_cache_and_the_count_grows(cli_run, cran, tmp_path):
    assert os.environ["XDG_CACHE_HOME"].startswith(str(tmp_path.parent.parent))  # the conftest's, never the home
    import hashlib

    sha = hashlib.sha256(Path(cran["qrels"]).read_bytes()).hexdigest()
    counts = []
    for i in range(2):
        _, stdout, stderr = _run(cli_run, cran, tmp_path, name=f"{i}.json")
        counts.append(stderr)
    assert "0 earlier comparison call(s)" in counts[0] and "1 earlier comparison call(s)" in counts[1]
    (log,) = _cache_files()
    assert log.name == f"{sha}.jsonl"
    assert len(log.read_text().splitlines()) == 2
    before = log.read_bytes(), log.stat().st_mtime_ns
    _, stdout, stderr = _run(cli_run, cran, tmp_path, "--no-log", name="none.json")
    assert (log.read_bytes(), log.stat().st_mtime_ns) == before  # --no-log leaves the cache untouched
    assert "nothing was logged (--no-log)" in stderr


def test_the_stdout_of_two_calls_is_the_same_bytes_whatever_the_log_holds(cli_run, cran, tmp_path):
    a = _run(cli_run, cran, tmp_path, name="a.json")
    b = _run(cli_run, cran, tmp_path, name="b.json")
    assert a[1] == b[1] and a[0] == b[0]  # the count goes to stderr


def test_a_cache_that_cannot_be_written_warns_and_never_fails(cli_run, cran, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    payload, stdout, stderr = _run(cli_run, cran, tmp_path)
    assert payload["comparisons"]
    assert "warning: the comparison cache could not be written" in stderr and "this call was not logged" in stderr


def test_reuse_correct_folds_the_earlier_logged_rows_into_the_family(cli_run, cran, tmp_path):
    first, _, _ = _run(cli_run, cran, tmp_path, name="1.json")  # 2 rows: dense and tfidf vs bm25
    second, _, _ = _run(cli_run, cran, tmp_path, "--baseline", "dense", "--candidate", "tfidf", name="2.json")
    earlier = [r["randomization_p"] for r in first["comparisons"] + second["comparisons"]]
    third, stdout, _ = _run(cli_run, cran, tmp_path, "--plan", _plan(tmp_path), "--reuse-correct", name="3.json")
    raw = [r["randomization_p"] for r in third["comparisons"]]
    assert [r["adjusted_p"] for r in third["comparisons"]] == pytest.approx(_holm(raw + earlier)[:3], abs=1e-12)
    s = third["settings"]
    assert s["earlier_tests"] == 3 and s["family_size"] == 3
    assert s["family_false_positive"]["family_size"] == 6
    assert "--reuse-correct: 3 earlier logged comparison row(s)" in stdout
    assert "J = 6 (3 in this call + 3 logged earlier)" in stdout
    assert "over a family of 3 with 3 earlier logged rows (J = 6) (uncorrected chance of a false positive " \
           f"1 − (1 − α)^J = {1 - 0.95 ** 6:.3f}" in third["checklist"][4]


def test_an_explicit_log_file_stays_and_the_cache_is_not_written(cli_run, cran, tmp_path):
    log = tmp_path / "mine.jsonl"
    _, stdout, _ = _run(cli_run, cran, tmp_path, "--log", log)
    assert "0 earlier comparison call(s)" in stdout and len(log.read_text().splitlines()) == 1
    assert _cache_files() == []


def test_planned_latex_compiles_with_its_power_table(cli_run, cran, tmp_path):
    """Issue 31.1 in LaTeX: a power table whose cells are the rows' ``power`` blocks, and the
    whole compiles with pdflatex."""
    import re

    from tests.test_latex_paper import compile_tex

    out = tmp_path / "c.json"
    rc, stdout, stderr = cli_run("compare", *cran["args"], "--plan", _plan(tmp_path), "--pair", "tfidf:bm25",
                                 "--format", "latex", "--out", out)
    assert rc == 0, stderr
    (table,) = [t for t in re.findall(r"\\begin\{table\}.*?\\end\{table\}", stdout, flags=re.S)
                if "tab:rankscope-compare-power" in t]
    cells = [[c.strip() for c in ln.rstrip(" \\").split("&")] for ln in table.splitlines() if ln.startswith("ndcg@10 &")]
    rows = json.loads(out.read_text())["comparisons"]
    assert len(cells) == len(rows) == 4
    for c, r in zip(cells, rows):
        pw = r["power"]
        assert c[1] == f"{r['candidate']} vs {r['baseline']}"
        assert c[2:] == [str(pw["n"]), f"{pw['sd']:.4f}", f"{pw['mde']:.4f}", f"{pw['alpha']:.4g}",
                         f"{pw['randomization_floor']:.4g}", f"{pw['target_delta']:.4f}", f"{pw['needed']:,}"]
    assert "tab:rankscope-compare-power" in stdout and "1 − (1 − α)^J" not in stdout
    assert r"1 - (1 - alpha)\textasciicircum{}J = 0.143" in stdout
    compile_tex(stdout, tmp_path)


def test_per_query_tables_without_qrels_say_nothing_was_logged(cli_run, cran, tmp_path):
    csv = tmp_path / "rows.csv"
    lanes = [a for n in ("bm25", "dense") for a in ("--lane", f"{n}={cran['lanes'] / (n + '.run')}")]
    rc, _, stderr = cli_run("evaluate", *lanes, "--qrels", cran["qrels"], "--resamples", "0", "--per-query", csv)
    assert rc == 0, stderr
    rc, stdout, stderr = cli_run("compare", "--per-query-in", csv, "--resamples", B)
    assert rc == 0, stderr
    assert "nothing was logged: per-query tables without --qrels" in stderr
    assert _cache_files() == []
    rc, _, stderr = cli_run("compare", "--per-query-in", csv, "--resamples", B, "--qrels", cran["qrels"])
    assert rc == 0 and "0 earlier comparison call(s)" in stderr and len(_cache_files()) == 1


def test_a_gates_file_committed_after_the_report_is_warned_about(cli_run, cran, repo, tmp_path):
    report = tmp_path / "report.json"
    rc, _, stderr = cli_run("evaluate", "--lane", f"bm25={cran['lanes'] / 'bm25.run'}", "--qrels", cran["qrels"],
                            "--resamples", "0", "--metrics", "ndcg@10", "--out", report)
    assert rc == 0, stderr
    os.utime(report, (JAN_2, JAN_2))
    gates = repo / "gates.json"
    gates.write_text(json.dumps([{"path": "lanes.bm25.doc.ndcg@10", "op": ">=", "threshold": 0.1}]))
    _git(repo, "add", "gates.json")
    _git(repo, "commit", "-q", "-m", "gates", when="2021-01-03T00:00:00+00:00")
    out = tmp_path / "verdict.json"
    rc, stdout, stderr = cli_run("verdict", "--report", report, "--gates", gates, "--on", "point", "--out", out)
    assert rc == 0, stderr
    (late,) = json.loads(out.read_text())["gates"]["committed_after"]
    assert f"the gates file {gates} was last committed 2021-01-03 00:00:00 UTC, after the report {report} " \
           "(written 2021-01-02 00:00:00 UTC)" in late
    assert f"warning: {late}" in stdout
    _git(repo, "commit", "-q", "--amend", "-m", "gates", when="2021-01-01T00:00:00+00:00")  # before the report
    rc, stdout, _ = cli_run("verdict", "--report", report, "--gates", gates, "--on", "point", "--out", out)
    assert json.loads(out.read_text())["gates"]["committed_after"] == [] and "last committed" not in stdout


def test_the_family_chance_is_said_beside_j_in_every_face(cli_run, cran, tmp_path):
    """Issue 31.3: 1 − (1 − α)^J beside J (0.143 for three tests at 0.05, by hand) and what
    the correction holds it to, wherever J is shown."""
    chance = f"{1 - (1 - 0.05) ** 3:.3f}"
    assert chance == "0.143"
    plan = _plan(tmp_path)
    payload, text, _ = _run(cli_run, cran, tmp_path, "--plan", plan)
    assert f"family of J = 3 tests at α = 0.05: uncorrected, the chance of at least one false \"established\" is " \
           f"1 − (1 − α)^J = {chance}; Holm holds the family-wise error rate at ≤ α = 0.05" in text
    assert f"over a family of 3 (uncorrected chance of a false positive 1 − (1 − α)^J = {chance}, held to ≤ 0.05)" \
        in payload["checklist"][4]
    assert f"with probability 1 − (1 − α)^J = {chance}; the correction holds that to at most 0.05" in payload["methods"]
    rc, md, _ = cli_run("compare", *cran["args"], "--plan", plan, "--format", "markdown", "--no-log")
    assert rc == 0 and f"1 − (1 − α)^J = {chance}" in md
    rc, tex, _ = cli_run("compare", *cran["args"], "--plan", plan, "--format", "latex", "--no-log")
    assert rc == 0 and "(J = 3) the chance of at least one false established row is 1 - (1 - alpha)" in tex
    assert f"J = {chance} uncorrected" in tex
    out = tmp_path / "plan-out.json"
    rc, ptext, _ = cli_run("plan", "--qrels", cran["qrels"], "--lane", f"bm25={cran['lanes'] / 'bm25.run'}",
                           "--lane", f"dense={cran['lanes'] / 'dense.run'}", "--family-size", "3", "--out", out)
    assert rc == 0 and f"1 - (1 - alpha)^J = {chance}" in ptext
    fam = json.loads(out.read_text())["settings"]["family_false_positive"]
    assert fam["family_size"] == 3 and fam["uncorrected"] == pytest.approx(1 - 0.95 ** 3) and fam["corrected"] == pytest.approx(0.05)


def test_a_cache_that_cannot_be_read_warns_and_folds_nothing(cli_run, cran, tmp_path):
    import hashlib

    sha = hashlib.sha256(Path(cran["qrels"]).read_bytes()).hexdigest()
    d = Path(os.environ["XDG_CACHE_HOME"]) / "rankscope" / "comparisons"
    d.mkdir(parents=True)
    (d / f"{sha}.jsonl").write_text("not a log line\n")
    payload, stdout, stderr = _run(cli_run, cran, tmp_path, "--reuse-correct")
    assert "warning: the comparison cache could not be read" in stderr and "no earlier comparison was folded" in stderr
    assert "this call was not logged" in stderr
    raw = [r["randomization_p"] for r in payload["comparisons"]]
    assert [r["adjusted_p"] for r in payload["comparisons"]] == pytest.approx(_holm(raw), abs=1e-12)
    assert "earlier_tests" not in payload["settings"]


@pytest.fixture(scope="module")
def _module_scoped_compare(cran, tmp_path_factory):
    """A compare run by a module-scoped fixture, set up before any per-test fixture."""
    from rankscope_tui import cli

    d = tmp_path_factory.mktemp("module-scoped")
    assert cli.main(["compare", *cran["args"], "--out", str(d / "c.json")]) == 0
    return os.environ.get("XDG_CACHE_HOME", "")


def test_the_suite_never_logs_to_the_real_home(_module_scoped_compare):
    home_cache = os.path.join(os.path.expanduser("~"), ".cache")
    assert _module_scoped_compare and not _module_scoped_compare.startswith(home_cache)
    from rankscope_tui.kernel.instruments.comparison_log import default_log_path

    assert default_log_path("0" * 64, {"XDG_CACHE_HOME": "/x"}) == "/x/rankscope/comparisons/" + "0" * 64 + ".jsonl"
    assert default_log_path("0" * 64, {"XDG_CACHE_HOME": "rel"}).startswith(home_cache)  # relative: ignored (XDG)
