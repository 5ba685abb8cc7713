"""Do two checkouts write the same bytes? Lesson 15 of seed 003 on Cranfield, every output.

    python benchmarks/same_outputs.py BASE_REV [--data ../shared/data/cranfield]

Checks out ``BASE_REV`` into a temporary git worktree, then runs the lesson's commands
(calibrate, evaluate with thresholds and strata in text, markdown and LaTeX with
report.json and the per-query CSV, verdict, compare in text, markdown, LaTeX and
``--out``, diff, the variants line, plot specs) with this checkout and with the base,
each in a directory of its own holding the same input files under the same names. Every
file written and every stdout/stderr is compared byte for byte; for JSON files that
differ, the keys added, removed or changed are listed. Exit status 1 when anything
differs, 0 when every byte is the same.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "cranfield"

LANES = ["--lane", "bm25.run", "--lane", "dense.run", "--lane", "tfidf.run"]
COMMANDS: list[tuple[str, list[str]]] = [
    ("calibrate", ["calibrate", *LANES, "--qrels", "qrels-dev.txt", "--gate-on", "dense", "--depth", "100",
                   "--conservative", "--out", "thresholds.json"]),
    ("baseline", ["evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                  "--out", "baseline.json"]),
    ("evaluate_text", ["evaluate", *LANES, "--qrels", "qrels-test.txt", "--thresholds", "thresholds.json",
                       "--strata", "strata.tsv", "--blind", "no-overlap", "--out", "report.json",
                       "--per-query", "rows.csv"]),
    ("evaluate_markdown", ["evaluate", *LANES, "--qrels", "qrels-test.txt", "--thresholds", "thresholds.json",
                           "--strata", "strata.tsv", "--blind", "no-overlap", "--format", "markdown"]),
    ("evaluate_latex", ["evaluate", *LANES, "--qrels", "qrels-test.txt", "--thresholds", "thresholds.json",
                        "--strata", "strata.tsv", "--blind", "no-overlap", "--format", "latex"]),
    ("evaluate_summary", ["evaluate", *LANES, "--qrels", "qrels-test.txt", "--summary", "summary.csv"]),
    ("verdict", ["verdict", "--report", "report.json", "--gates", "gates.json"]),
    ("compare_text", ["compare", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                      "--candidate", "rrf", "--metric", "ndcg@10", "--min-delta", "0.02", "--out", "compare.json"]),
    ("compare_markdown", ["compare", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                          "--candidate", "rrf", "--metric", "ndcg@10", "--min-delta", "0.02", "--format", "markdown"]),
    ("compare_latex", ["compare", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                       "--candidate", "rrf", "--metric", "ndcg@10", "--min-delta", "0.02", "--format", "latex"]),
    ("all_pairs", ["compare", *LANES, "--qrels", "qrels-test.txt", "--all-pairs", "--metric", "ndcg@10",
                   "--resamples", "999"]),
    ("diff", ["diff", "--before", "baseline.json", "--after", "report.json", "--fail-on-regression"]),
    ("variants", ["evaluate", "--lane", "bm25.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                  "--group-sep", "#", "--cap", "5", "--document-first", "--gate-on", "dense", "--mutual", "3"]),
    ("plot_gate", ["plot", "gate", "--report", "report.json", "--out", "gate.vl.json"]),
]
GATES = [{"path": "lanes.rrf.doc.hit@5", "op": ">=", "against": "lanes.bm25.doc.hit@5"},
         {"path": "lanes.bm25.doc.ndcg@10", "op": ">=", "threshold": 0.2}]


def lay_out(data: Path, work: Path) -> None:
    work.mkdir(parents=True)
    for src, dst in [("lanes/bm25.run", "bm25.run"), ("lanes/dense.run", "dense.run"), ("lanes/tfidf.run", "tfidf.run"),
                     ("qrels-dev.txt", "qrels-dev.txt"), ("qrels-test.txt", "qrels-test.txt"),
                     ("strata.tsv", "strata.tsv")]:
        shutil.copy(data / src, work / dst)
    (work / "gates.json").write_text(json.dumps(GATES, indent=2), encoding="utf-8")


def run_lesson(checkout: Path, work: Path) -> dict[str, tuple[int, str, str]]:
    # each side starts from an empty comparison log, at one path (compare counts the calls
    # logged before it, and names the log, on stderr)
    cache = work.parent.parent / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(checkout), XDG_CACHE_HOME=str(cache))
    env.pop("PYTHONHASHSEED", None)
    out = {}
    for name, args in COMMANDS:
        p = subprocess.run([sys.executable, "-m", "rankscope_tui.cli", *args], cwd=work, env=env,
                           capture_output=True, text=True, timeout=900)
        out[name] = (p.returncode, p.stdout, p.stderr)
    return out


def json_changes(a: object, b: object, path: str = "") -> list[str]:
    """Keys added (+), removed (-) or changed (~) from ``a`` to ``b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            p = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append(f"+ {p}")
            elif k not in b:
                out.append(f"- {p}")
            else:
                out += json_changes(a[k], b[k], p)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [c for i, (x, y) in enumerate(zip(a, b)) for c in json_changes(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"~ {path}"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="the git revision to compare this checkout with")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the Cranfield folder (default: ../shared/data/cranfield)")
    args = ap.parse_args()
    if not (args.data / "qrels-test.txt").is_file():
        print(f"same_outputs: no Cranfield data at {args.data}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="rs-same-") as tmp:
        t = Path(tmp)
        base = t / "checkout"  # the runs' folders lie outside it: a folder inside a git worktree changes verdict's git note
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(base), args.base], check=True)
        try:
            runs = {}
            for label, checkout in (("base", base), ("this", REPO)):
                lay_out(args.data, t / label / "work")
                runs[label] = run_lesson(checkout, t / label / "work")
            differ = 0
            for name, _ in COMMANDS:
                a, b = runs["base"][name], runs["this"][name]
                same = a == b
                differ += not same
                print(f"{'same' if same else 'DIFFERS'}  {name}: exit {b[0]}, stdout {len(b[1]):,} chars")
                if not same:
                    for what, x, y in (("exit", a[0], b[0]), ("stdout", a[1], b[1]), ("stderr", a[2], b[2])):
                        if x != y:
                            print(f"    {what} differs")
            files = sorted({p.name for label in ("base", "this") for p in (t / label / "work").iterdir()})
            for f in files:
                pa, pb = t / "base" / "work" / f, t / "this" / "work" / f
                if not (pa.exists() and pb.exists()):
                    print(f"DIFFERS  {f}: only in {'this' if pb.exists() else 'base'}")
                    differ += 1
                    continue
                same = pa.read_bytes() == pb.read_bytes()
                differ += not same
                print(f"{'same' if same else 'DIFFERS'}  {f} ({pb.stat().st_size:,} bytes)")
                if not same and f.endswith(".json"):
                    for c in json_changes(json.loads(pa.read_text()), json.loads(pb.read_text()))[:40]:
                        print(f"    {c}")
            print(f"{differ} difference(s) against {args.base}")
            return 1 if differ else 0
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)


if __name__ == "__main__":
    sys.exit(main())
