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
