"""The GitHub Action (``action.yml``) run locally, step by step, as a composite action runs.

A small runner reads ``action.yml`` (PyYAML), substitutes the ``${{ inputs.X }}``,
``${{ steps.ID.outputs.X }}`` and ``${{ runner.temp }}`` expressions, and runs each
``run:`` step with ``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``),
with a step summary file, a per-step output file, ``GITHUB_ACTION_PATH`` at this checkout
and ``RUNNER_TEMP`` a temporary directory. The install step is replaced by this
environment: a ``rankscope`` on PATH that runs this checkout in the test interpreter.
A ``uses:`` step (the baseline artifact's download) is skipped: its ``if:`` is false here.

The oracle is independent of rankscope: pytrec_eval's nDCG@10 per query on the Cranfield
runs and scipy's paired t-test say the regression is real (p far below 0.05), the
summary's means are pytrec_eval's, and the largest loss it lists is pytrec_eval's.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from support import REPO, shared_path

ACTION = REPO / "action.yml"
SCHEMA = REPO / "tests" / "data" / "action-metadata.schema.json"
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def test_action_yml_validates_against_the_metadata_schema():
    meta = action()
    jsonschema.validate(meta, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert meta["runs"]["using"] == "composite"
    assert {"verdict", "regressions", "report"} <= set(meta["outputs"])
    assert {"runs", "qrels", "baseline", "baseline-artifact", "rules", "metrics", "min-delta", "fail-on"} <= set(meta["inputs"])
    # the schema is not vacuous: a node action's 'using', a step with neither run nor uses, a
    # run step without a shell and an input without a description are refused
    bad = [dict(meta, runs={"using": "node20", "steps": meta["runs"]["steps"]}),
           dict(meta, runs={"using": "composite", "steps": [{"name": "x"}]}),
           dict(meta, runs={"using": "composite", "steps": [{"run": "true"}]}),
           dict(meta, inputs={"runs": {"required": True}})]
    for b in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(b, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_run_steps_take_inputs_from_the_environment_only():
    """An input is never spliced into a script (script injection): ``run:`` holds no expression."""
    for step in action()["runs"]["steps"]:
        if "run" in step:
            assert not EXPR.search(step["run"]), step["name"]


# ----------------------------------------------------------------------------- the runner


def fake_bin(d: Path) -> Path:
    """What the install step provides, from this environment: ``rankscope`` and ``python``."""
    d.mkdir()
    (d / "rankscope").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rankscope_tui.cli "$@"\n', encoding="utf-8")
    (d / "rankscope").chmod(0o755 | stat.S_IXUSR)
    (d / "python").symlink_to(sys.executable)
    return d


def run_action(inputs: dict[str, str], tmp: Path) -> tuple[int, dict[str, str], str, list[str]]:
    """Run the action's steps: (exit status, the action's outputs, the step summary, the
    names of the steps run). Stops at the first failing step, as a composite action does."""
    meta = action()
    given = {k: str(v.get("default", "")) for k, v in meta["inputs"].items()}
    for k, v in inputs.items():
        assert k in meta["inputs"], f"no input {k}"
        given[k] = v
    missing = [k for k, v in meta["inputs"].items() if v.get("required") and not given.get(k)]
    assert not missing, missing
    temp = tmp / "runner-temp"
    temp.mkdir()
    summary = tmp / "step-summary.md"
    summary.write_text("", encoding="utf-8")
    outputs: dict[str, dict[str, str]] = {}

    def expr(m: re.Match) -> str:
        e = m.group(1)
        if e.startswith("inputs."):
            return given[e.removeprefix("inputs.")]
        if e.startswith("steps."):
            _, sid, kind, name = e.split(".")
            assert kind == "outputs", e
            return outputs.get(sid, {}).get(name, "")
        if e == "runner.temp":
            return str(temp)
        raise AssertionError(f"an expression the runner does not know: {e}")

    def condition(text: str) -> bool:
        m = re.fullmatch(r"inputs\.([\w-]+) (==|!=) ''", text.strip())
        assert m, f"an if: the runner does not know: {text}"
        empty = given[m.group(1)] == ""
        return empty if m.group(2) == "==" else not empty

    bin_dir = fake_bin(tmp / "bin")
    ran = []
    for i, step in enumerate(meta["runs"]["steps"]):
        if "if" in step and not condition(step["if"]):
            continue
        if step.get("id") == "install":  # replaced by this environment (fake_bin)
            continue
        assert "run" in step, f"a uses: step would run: {step.get('name')}"
        assert step["shell"] == "bash"
        out_file = tmp / f"output-{i}"
        out_file.write_text("", encoding="utf-8")
        env = dict(os.environ)
        env.pop("PYTHONHASHSEED", None)
        env.update({"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
                    "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
                    "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(out_file),
                    "GITHUB_ACTION_PATH": str(REPO), "RUNNER_TEMP": str(temp)})
        env.update({k: EXPR.sub(expr, str(v)) for k, v in (step.get("env") or {}).items()})
        script = tmp / f"step-{i}.sh"
        script.write_text(EXPR.sub(expr, step["run"]), encoding="utf-8")
        res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=tmp, env=env,
                             capture_output=True, text=True, timeout=600)
        ran.append(step["name"])
        print(f"--- {step['name']} (exit {res.returncode})\n{res.stdout}{res.stderr}")
        if step.get("id"):
            lines = out_file.read_text(encoding="utf-8").splitlines()
            outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        if res.returncode != 0:
            return res.returncode, _action_outputs(meta, expr), summary.read_text(encoding="utf-8"), ran
    return 0, _action_outputs(meta, expr), summary.read_text(encoding="utf-8"), ran


def _action_outputs(meta: dict, expr) -> dict[str, str]:
    return {k: EXPR.sub(expr, v["value"]) for k, v in meta["outputs"].items()}


# ----------------------------------------------------------------------------- the oracle


def _ndcg10(run: Path, qrels: Path) -> dict[str, float]:
    """pytrec_eval's nDCG@10 per positive query (a grade >= 1), the queries rankscope averages over."""
    import pytrec_eval

    q: dict[str, dict[str, int]] = {}
    for line in qrels.read_text(encoding="utf-8").splitlines():
        qid, _, doc, g = line.split()
        q.setdefault(qid, {})[doc] = int(g)
    r: dict[str, dict[str, float]] = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, score, _ = line.split()
        r.setdefault(qid, {})[doc] = float(score)
    res = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut"}).evaluate(r)
    return {qid: v["ndcg_cut_10"] for qid, v in res.items() if any(g >= 1 for g in q[qid].values())}


@pytest.fixture(scope="module")
def cran():
    return shared_path("cranfield")


@pytest.fixture(scope="module")
def baseline(cran, tmp_path_factory):
    """The baseline report: bm25 as lane ``sys``, written by the action on the main branch's run."""
    tmp = tmp_path_factory.mktemp("baseline")
    rc, out, _, _ = run_action({"runs": f"sys={cran / 'lanes' / 'bm25.run'}", "qrels": str(cran / "qrels-test.txt"),
                                "metrics": "ndcg@10,hit@5", "resamples": "999", "report": str(tmp / "baseline.json")}, tmp)
    assert rc == 0 and out["verdict"] == "pass"
    return tmp / "baseline.json"


def _gates(path: Path) -> Path:
    path.write_text(json.dumps({"rules": [{"path": "lanes.sys.doc.ndcg@10", "op": ">=", "threshold": 0.2}]}),
                    encoding="utf-8")
    return path


def test_a_regression_fails_the_action_with_the_table_in_the_summary(cran, baseline, tmp_path):
    from scipy.stats import ttest_rel

    before = _ndcg10(cran / "lanes" / "bm25.run", cran / "qrels-test.txt")
    after = _ndcg10(cran / "lanes" / "tfidf.run", cran / "qrels-test.txt")
    qids = sorted(before)
    assert ttest_rel([after[q] for q in qids], [before[q] for q in qids]).pvalue < 0.001  # a real loss
    rc, out, summary, ran = run_action(
        {"runs": f"sys={cran / 'lanes' / 'tfidf.run'}", "qrels": str(cran / "qrels-test.txt"), "baseline": str(baseline),
         "rules": str(_gates(tmp_path / "gates.json")), "metrics": "ndcg@10,hit@5", "resamples": "999",
         "report": str(tmp_path / "report.json")}, tmp_path)
    assert rc == 1
    assert out["verdict"] == "fail"
    assert int(out["regressions"]) >= 1
    assert out["report"] == str(tmp_path / "report.json") and (tmp_path / "report.json").exists()
    assert ran == ["Evaluate", "Diff against the baseline", "Judge the rules", "Decide"]
    assert "### rankscope diff: " in summary and "### rankscope verdict: pass" in summary
    row = next(line for line in summary.splitlines() if line.startswith("| sys | doc | ndcg@10 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == str(len(qids))
    assert cells[4].startswith(f"{sum(before.values()) / len(qids):.4f} [")
    assert cells[5].startswith(f"{sum(after.values()) / len(qids):.4f} [")
    assert cells[-1] == "**REGRESSION**"
    # the largest loss listed first is pytrec_eval's (ties: qid order as bytes)
    worst = min(qids, key=lambda q: (after[q] - before[q], q.encode()))
    losses = next(line for line in summary.splitlines() if line.startswith("- sys doc ndcg@10: "))
    assert losses.removeprefix("- sys doc ndcg@10: ").startswith(f"{worst} ({before[worst]:.4f} → {after[worst]:.4f}")
    assert "Caveats:" in summary and "**rankscope: fail**" in summary


def test_a_clean_run_passes(cran, baseline, tmp_path):
    rc, out, summary, _ = run_action(
        {"runs": f"sys={cran / 'lanes' / 'bm25.run'}", "qrels": str(cran / "qrels-test.txt"), "baseline": str(baseline),
         "rules": str(_gates(tmp_path / "gates.json")), "metrics": "ndcg@10,hit@5", "resamples": "999",
         "report": str(tmp_path / "report.json")}, tmp_path)
    assert rc == 0, summary
    assert out == {"verdict": "pass", "regressions": "0", "report": str(tmp_path / "report.json")}
    assert "### rankscope diff: no established regression" in summary
    assert "### rankscope verdict: pass" in summary and "**rankscope: pass**" in summary


def test_fail_on_never_reports_without_failing(cran, baseline, tmp_path):
    rc, out, summary, _ = run_action(
        {"runs": f"sys={cran / 'lanes' / 'tfidf.run'}", "qrels": str(cran / "qrels-test.txt"), "baseline": str(baseline),
         "metrics": "ndcg@10", "resamples": "999", "fail-on": "never", "report": str(tmp_path / "report.json")}, tmp_path)
    assert rc == 0 and out["verdict"] == "pass" and int(out["regressions"]) == 1
    assert "**REGRESSION**" in summary


def test_no_baseline_skips_the_diff_and_says_so(cran, tmp_path):
    rc, out, summary, _ = run_action(
        {"runs": f"sys={cran / 'lanes' / 'bm25.run'}", "qrels": str(cran / "qrels-test.txt"),
         "baseline": str(tmp_path / "not-there.json"), "resamples": "999", "report": str(tmp_path / "report.json")},
        tmp_path)
    assert rc == 0 and out["verdict"] == "pass"
    assert "### rankscope diff: skipped" in summary and "not-there.json" in summary


def test_bad_input_fails_the_step_with_rankscopes_error(cran, tmp_path):
    rc, out, _, ran = run_action({"runs": str(tmp_path / "missing.run"), "qrels": str(cran / "qrels-test.txt"),
                                  "report": str(tmp_path / "report.json")}, tmp_path)
    assert rc == 2 and ran == ["Evaluate"] and out["verdict"] == ""
    assert not (tmp_path / "report.json").exists()


# ----------------------------------------------------------------------------- the summary writer, from any CI


def test_largest_losses_hand_worked():
    from rankscope_tui.kernel.instruments.diff import largest_losses

    got = largest_losses(["a", "b", "c", "d", "e"], [1.0, 0.5, 0.5, 0.2, 0.0], [0.0, 0.0, 0.6, 0.2, 0.0], 3)
    # a loses 1.0, b loses 0.5; c gains, d and e are unchanged: never listed as losses
    assert [(x.qid, x.difference) for x in got] == [("a", -1.0), ("b", -0.5)]
    tie = largest_losses(["q2", "q10", "q1"], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5], 2)
    assert [x.qid for x in tie] == ["q1", "q10"]  # equal losses in qid order as bytes


def test_step_summary_appends_and_bad_input_leaves_it_as_it_was(cran, baseline, tmp_path):
    from support import run_cli

    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    res = run_cli("diff", "--before", baseline, "--after", baseline, "--resamples", "999", "--step-summary", summary)
    assert res.returncode == 0, res.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n### rankscope diff: no established regression")
    gates = _gates(tmp_path / "gates.json")
    res = run_cli("verdict", "--report", baseline, "--gates", gates, "--step-summary", summary)
    assert res.returncode == 0 and summary.read_text(encoding="utf-8").startswith(text)
    assert "| lanes.sys.doc.ndcg@10 \\>= 0.2 |" in summary.read_text(encoding="utf-8")
    before = summary.read_bytes()
    res = run_cli("diff", "--before", baseline, "--after", tmp_path / "nope.json", "--step-summary", summary)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "nope.json" in res.stderr
    assert summary.read_bytes() == before
    res = run_cli("diff", "--before", baseline, "--after", baseline, "--losses", "-1", "--step-summary", summary)
    assert res.returncode == 2 and "--losses" in res.stderr and summary.read_bytes() == before


def test_format_github_prints_the_summary_the_file_gets(baseline, tmp_path):
    from support import run_cli

    summary = tmp_path / "summary.md"
    res = run_cli("diff", "--before", baseline, "--after", baseline, "--resamples", "999", "--step-summary", summary,
                  "--format", "github")
    assert res.returncode == 0, res.stderr
    assert res.stdout == summary.read_text(encoding="utf-8")
    assert res.stdout.startswith("### rankscope diff: no established regression")
