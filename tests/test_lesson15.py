"""Lesson 15 of seed 003, end to end, as a new user types it.

The six commands of the lesson run on the Cranfield lanes (and on the built-in demo)
under the file names the lesson uses. What is checked is what a user reads: every
fitted and applied gate condition is printed, the gate lane recorded by `calibrate`
is the one `evaluate --thresholds` applies, an unattainable floor says why and reads
``+inf (reject all)``, no ``None``/``null``/``nan`` reaches text, markdown or LaTeX,
and each command ends with the status it should.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"
# "null" as an undefined value; "null floor" (lesson 09's name, asserted below) and the
# randomization "null distribution" / "null hypothesis" are words, not values
UNREADABLE = re.compile(r"\b(None|nan|NaN)\b|\bnull\b(?! (floor|distribution|hypothesis))")

GATES = [
    {"path": "lanes.rrf.doc.hit@5", "op": ">=", "against": "lanes.bm25.doc.hit@5"},
    {"path": "lanes.bm25.doc.ndcg@10", "op": ">=", "threshold": 0.2},
]


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rankscope_tui.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def readable(p: subprocess.CompletedProcess) -> None:
    """Nothing a person reads holds an undefined value or a traceback."""
    for stream in (p.stdout, p.stderr):
        hit = UNREADABLE.search(stream)
        assert hit is None, f"{hit.group(0)!r} in output: ...{stream[max(0, hit.start() - 80):hit.end() + 80]}..."
        assert "Traceback" not in stream


def _cranfield(tmp: Path) -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"Cranfield data not found at {SHARED}")
    for src, dst in [("lanes/bm25.run", "bm25.run"), ("lanes/dense.run", "dense.run"), ("qrels-dev.txt", "qrels-dev.txt"),
                     ("qrels-test.txt", "qrels-test.txt"), ("strata.tsv", "strata.tsv")]:
        shutil.copy(SHARED / src, tmp / dst)
    return tmp


def _demo(tmp: Path) -> Path:
    p = run(tmp, "demo", "--out", "demo")
    assert p.returncode == 0, p.stderr
    d = tmp / "demo"
    for src, dst in [("lexical.run", "bm25.run")]:
        shutil.copy(d / src, tmp / dst)
    for name in ("dense.run", "qrels-dev.txt", "qrels-test.txt", "strata.tsv"):
        shutil.copy(d / name, tmp / name)
    return tmp


@pytest.fixture(scope="module", params=["cranfield", "demo"])
def lesson(request, tmp_path_factory):
    """The lesson's working directory after commands 1-5 (and a stored baseline)."""
    tmp = tmp_path_factory.mktemp(f"lesson15-{request.param}")
    (_cranfield if request.param == "cranfield" else _demo)(tmp)
    (tmp / "gates.json").write_text(json.dumps(GATES, indent=2))
    out = {}
    # the stored baseline: last release's report on the same test set
    out["baseline"] = run(tmp, "evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                          "--out", "baseline.json")
    out["calibrate"] = run(tmp, "calibrate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-dev.txt",
                           "--gate-on", "dense", "--depth", "100", "--conservative", "--out", "thresholds.json")
    out["evaluate"] = run(tmp, "evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                          "--thresholds", "thresholds.json", "--strata", "strata.tsv", "--blind", "no-overlap",
                          "--format", "markdown", "--out", "report.json")
    out["verdict"] = run(tmp, "verdict", "--report", "report.json", "--gates", "gates.json")
    out["compare"] = run(tmp, "compare", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                         "--candidate", "rrf", "--metric", "ndcg@10", "--min-delta", "0.02")
    out["diff"] = run(tmp, "diff", "--before", "baseline.json", "--after", "report.json", "--fail-on-regression")
    out["variants"] = run(tmp, "evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                          "--group-sep", "#", "--cap", "5", "--document-first", "--mutual", "3")
    return request.param, tmp, out


def test_calibrate_prints_every_fitted_quantity(lesson):
    _, tmp, out = lesson
    p = out["calibrate"]
    assert p.returncode == 0, p.stderr
    readable(p)
    th = json.loads((tmp / "thresholds.json").read_text())
    assert th["gate"]["lane"] == "dense"
    text = p.stdout
    assert "convex weights" in text
    assert "null floor" in text and "conformal floor" in text
    assert "operating floor" in text
    if th["gate"].get("margin") is not None:
        assert "operating margin" in text
    if th["gate"].get("floor") is None:  # unattainable with these negatives
        assert "+inf (reject all)" in text
        assert "unattainable" in text and "73" in text  # zero false accepts at FPIR 0.05 needs n >= 73


def test_thresholds_store_numbers_as_numbers(lesson):
    _, tmp, _ = lesson
    th = json.loads((tmp / "thresholds.json").read_text())
    s = th["settings"]
    assert isinstance(s["confidence"], float) and isinstance(s["relevant"], int)
    g = th["gate"]
    for key in ("target_fpir", "miss_rate"):
        assert isinstance(g[key], float), key


def test_evaluate_applies_the_calibrated_gate_lane(lesson):
    _, tmp, out = lesson
    p = out["evaluate"]
    assert p.returncode == 0, p.stderr
    readable(p)
    report = json.loads((tmp / "report.json").read_text())
    gate = report["gate"]
    assert not gate.get("skipped"), gate
    assert gate["lane"] == "dense"
    assert "applied" in gate
    text = p.stdout
    # every applied condition, and the floor alone beside the combination
    assert "floor alone" in text
    th = json.loads((tmp / "thresholds.json").read_text())
    if th["gate"].get("margin") is not None:
        assert "floor AND margin" in text
    if th["gate"].get("floor") is None:
        assert "+inf (reject all)" in text
        assert "unattainable" in text


def test_gate_on_that_disagrees_with_thresholds_is_refused(lesson):
    _, tmp, _ = lesson
    p = run(tmp, "evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
            "--thresholds", "thresholds.json", "--gate-on", "bm25")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "--gate-on" in p.stderr and "dense" in p.stderr


def test_verdict_prints_the_numbers(lesson):
    _, _, out = lesson
    p = out["verdict"]
    assert p.returncode in (0, 1), p.stderr
    readable(p)
    lines = [ln for ln in p.stdout.splitlines() if "lanes.bm25.doc.ndcg@10" in ln]
    assert lines, p.stdout
    assert re.search(r"0\.\d{4}", lines[0]) and "0.2" in lines[0]


def test_compare_and_diff_read_cleanly(lesson):
    _, _, out = lesson
    assert out["compare"].returncode == 0, out["compare"].stderr
    readable(out["compare"])
    assert out["diff"].returncode in (0, 1), out["diff"].stderr
    readable(out["diff"])


def test_mutual_without_a_gate_lane_is_refused(lesson):
    _, tmp, out = lesson
    p = out["variants"]
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1
    assert "--mutual" in p.stderr and "--gate-on" in p.stderr
    ok = run(tmp, "evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
             "--group-sep", "#", "--cap", "5", "--document-first", "--mutual", "3", "--gate-on", "dense")
    assert ok.returncode == 0, ok.stderr
    readable(ok)
    assert "mutual" in ok.stdout and "vacuous" in ok.stdout


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex"])
def test_no_undefined_value_in_any_format(lesson, fmt):
    _, tmp, _ = lesson
    for args in (["evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                  "--thresholds", "thresholds.json", "--strata", "strata.tsv", "--format", fmt],
                 ["compare", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                  "--resamples", "999", "--format", fmt]):
        p = run(tmp, *args)
        assert p.returncode == 0, p.stderr
        readable(p)


# --------------------------------------------------------------------------- the README's walkthrough

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- lesson 15 walkthrough: begin -->", "<!-- lesson 15 walkthrough: end -->"


def readme_commands() -> list[str]:
    """The shell commands of the README's lesson-15 block, in order: comments and blank
    lines dropped, continuation lines joined, a here-document kept whole."""
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "README.md has lost its lesson-15 walkthrough markers"
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    lines = block.strip().removeprefix("```sh").removesuffix("```").strip("\n").splitlines()
    commands: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "<<'" in line:  # a here-document: up to its delimiter line
            delim = line.split("<<'", 1)[1].split("'", 1)[0]
            body = [line]
            while lines[i] != delim:
                body.append(lines[i])
                i += 1
            body.append(lines[i])
            i += 1
            commands.append("\n".join(body))
            continue
        while line.endswith("\\"):
            line = line[:-1] + lines[i].strip()
            i += 1
        commands.append(line)
    return commands


def test_the_readme_walkthrough_is_the_lessons_commands():
    cmds = readme_commands()
    verbs = [c.split()[1] for c in cmds if c.startswith("rankscope ")]
    assert verbs == ["evaluate", "calibrate", "evaluate", "verdict", "compare", "diff", "evaluate"]
    assert any(c.startswith("cat > gates.json") for c in cmds)
    # the lesson's own options are all there (step 1 adds --folds; the variants name the gate lane)
    for words in ("--gate-on dense --depth 100 --conservative --folds 5 --out thresholds.json",
                  "--thresholds thresholds.json --strata strata.tsv --blind no-overlap --format markdown --out report.json",
                  "--candidate rrf --metric ndcg@10 --min-delta 0.02", "--fail-on-regression",
                  "--group-sep '#' --cap 5 --document-first --mutual 3 --gate-on dense"):
        assert any(words in c for c in cmds), words


def test_the_readme_walkthrough_runs_as_printed(tmp_path):
    """Each command of the README's block, run by a shell as printed (``rankscope`` being this
    checkout's command line), in a directory of the Cranfield files under the lesson's names:
    every command exits 0, prints nothing undefined, and the files it names are written."""
    from support import cli_env

    work = _cranfield(tmp_path)
    env = cli_env()
    shell_prelude = f'rankscope() {{ "{sys.executable}" -m rankscope_tui.cli "$@"; }}\n'
    outputs = {}
    for cmd in readme_commands():
        p = subprocess.run(["bash", "-c", shell_prelude + cmd], cwd=work, capture_output=True, text=True, env=env,
                           timeout=600)
        assert p.returncode == 0, f"{cmd}\n{p.stderr}"
        readable(p)
        outputs[cmd.split("\n")[0]] = p.stdout
    for name in ("gates.json", "baseline.json", "thresholds.json", "report.json"):
        assert (work / name).stat().st_size > 0, name
    th = json.loads((work / "thresholds.json").read_text())
    assert th["folds"]["k"] == 5 and th["gate"]["floor"] is None  # +inf (reject all): 14 negatives, 73 needed
    calibrate_text = next(v for k, v in outputs.items() if k.startswith("rankscope calibrate"))
    assert "cross-validation: 5 folds" in calibrate_text and "operating floor +inf in every fold" in calibrate_text
    compare_text = next(v for k, v in outputs.items() if k.startswith("rankscope compare"))
    assert "inconclusive" in compare_text and "p_superiority = 0.9517" in compare_text  # the README's lesson-12 case
