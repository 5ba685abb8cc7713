"""The outputs the paste-ready tests read, made once per test process: evaluate and compare
on Cranfield (every format, report.json, compare.json, the tidy tables) and on the demo.

Each producer runs the CLI the way a person would; the tests then compare what was
written against report.json / compare.json (the numbers' source) or an oracle."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from support import run_cli, shared_path

LANES = ("bm25", "tfidf", "dense")


@functools.cache
def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="rankscope-paper-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def cranfield_args() -> list[str]:
    c = shared_path("cranfield")
    lanes = [a for name in LANES for a in ("--lane", str(c / "lanes" / f"{name}.run"))]
    return [*lanes, "--qrels", str(c / "qrels-test.txt"), "--strata", str(c / "strata.tsv"),
            "--strata", str(c / "strata-length.tsv"), "--group-sep", "#", "--corpus", str(c / "passages.tsv"),
            "--resamples", "999", "--gate-on", "dense", "--ood-negatives", str(c / "qrels-ood-negatives.txt")]


@functools.cache
def demo_dir() -> Path:
    d = _root() / "demo"
    res = run_cli("demo", "--out", str(d))
    assert res.returncode == 0, res.stderr
    return d


def demo_args() -> list[str]:
    d = demo_dir()
    return ["--lane", str(d / "lexical.run"), "--lane", str(d / "dense.run"), "--qrels", str(d / "qrels-test.txt"),
            "--strata", str(d / "strata.tsv"), "--group-sep", "#", "--corpus", str(d / "corpus.tsv"),
            "--gate-on", "dense", "--resamples", "999"]


def _without_gate(args: list[str]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--gate-on":
            skip = True
        else:
            out.append(a)
    return out


@functools.cache
def outputs(which: str) -> dict:
    """``which`` is ``cranfield`` or ``demo``: paths and printed texts of one evaluate
    (report.json, --summary in three formats, --per-query-long) and one compare."""
    args = cranfield_args() if which == "cranfield" else demo_args()
    d = _root() / f"out-{which}"
    d.mkdir(parents=True, exist_ok=True)
    out = {"dir": d, "args": args}
    res = run_cli("evaluate", *args, "--format", "markdown", "--out", str(d / "report.json"),
                  "--summary", str(d / "summary.csv"), "--per-query-long", str(d / "long.csv"),
                  "--per-query", str(d / "wide.csv"))
    assert res.returncode == 0, res.stderr
    out["evaluate_markdown"] = res.stdout
    res = run_cli("evaluate", *args, "--format", "latex", "--summary", str(d / "summary.tsv"),
                  "--per-query-long", str(d / "long.parquet"))
    assert res.returncode == 0, res.stderr
    out["evaluate_latex"] = res.stdout
    res = run_cli("evaluate", *args, "--summary", str(d / "summary.parquet"))
    assert res.returncode == 0, res.stderr
    cmp = [*_without_gate(args), "--metric", "ndcg@10", "--metric", "rr"]  # compare runs no gate
    if which == "cranfield":
        cmp += ["--candidate", "dense", "--candidate", "tfidf", "--candidate", "rrf"]
    res = run_cli("compare", *cmp, "--format", "markdown", "--out", str(d / "compare.json"))
    assert res.returncode == 0, res.stderr
    out["compare_markdown"] = res.stdout
    res = run_cli("compare", *cmp, "--format", "latex")
    assert res.returncode == 0, res.stderr
    out["compare_latex"] = res.stdout
    out["report"] = json.loads((d / "report.json").read_text(encoding="utf-8"))
    out["compare"] = json.loads((d / "compare.json").read_text(encoding="utf-8"))
    return out
