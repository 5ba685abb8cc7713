"""Must show 2: the LaTeX of ``evaluate`` and ``compare`` compiles with pdflatex, every
table fits ``\\textwidth`` (no overfull box in the log), one caption carries the
definitions and the others refer to it, each table has a label, the best mean of a
column is bold, and significance letters follow the comparison's verdicts. Hostile names
compile too (the data of tests/test_hostile_names.py).

pdflatex comes from the system's TeX (``.ci/run`` installs texlive-latex-base and
texlive-latex-recommended with apt where it is missing); where it cannot be had the
compile tests skip and print why."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from paper_outputs import _without_gate, cranfield_args, demo_args, outputs
from support import run_cli

PDFLATEX = shutil.which("pdflatex")


def _need_pdflatex():
    if PDFLATEX is None:
        reason = "pdflatex not found (install texlive-latex-base and texlive-latex-recommended; .ci/run does with apt)"
        print(reason, file=sys.stderr)
        pytest.skip(reason)


def compile_tex(body: str, tmp_path, name: str = "doc") -> str:
    """Compile ``body`` in a one-column article; the log's text."""
    _need_pdflatex()
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp_path / f"{name}.tex").write_text(doc, encoding="utf-8")
    res = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    log = (tmp_path / f"{name}.log").read_text(encoding="utf-8", errors="replace")
    assert res.returncode == 0, log[-3000:]
    assert (tmp_path / f"{name}.pdf").exists()
    return log


def _tables(text: str) -> list[str]:
    return re.findall(r"\\begin\{table\}.*?\\end\{table\}", text, flags=re.S)


@pytest.fixture(scope="module")
def cran():
    return outputs("cranfield")


@pytest.mark.parametrize("kind", ["evaluate_latex", "compare_latex"])
@pytest.mark.parametrize("which", ["cranfield", "demo"])
def test_tables_compile_and_fit_the_text_width(which, kind, tmp_path):
    text = outputs(which)[kind]
    log = compile_tex(text, tmp_path)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    assert "LaTeX Warning: Reference" not in log or "undefined" not in log.split("LaTeX Warning: Reference", 1)[1][:200] \
        or "Rerun" in log  # a first run may only ask for a rerun; the labels themselves are checked below


def test_one_caption_carries_the_definitions_the_others_refer_to_it(cran):
    tables = _tables(cran["evaluate_latex"])
    report = cran["report"]
    assert len(tables) == 1 + sum(len(v) for v in report["strata"].values())
    labels = [re.search(r"\\label\{([^}]*)\}", t).group(1) for t in tables]
    assert len(set(labels)) == len(labels) and labels[0] == "tab:rankscope-overall"
    definition = report["definitions"]["ndcg@10"][:25]
    caps = [re.search(r"\\caption\{(.*)\}\n\\label", t, flags=re.S).group(1) for t in tables]
    assert definition.replace("_", "\\_") in caps[0] or definition in caps[0]
    for cap in caps[1:]:
        assert definition not in cap and "\\ref{tab:rankscope-overall}" in cap
        assert re.search(r"n = \d+ positive queries", cap)  # each stratum says its n
    assert len(caps[0]) > 3 * max(len(c) for c in caps[1:])


def test_the_best_mean_of_each_column_is_bold(cran):
    report = cran["report"]
    table = _tables(cran["evaluate_latex"])[0]
    metrics = report["inputs"]["settings"]["metrics"]
    # rows of the first metric block: lane & level & v1 & v2 & v3 & v4
    head = metrics[:4]
    rows = [ln for ln in table.split("\\midrule")[1].strip().splitlines() if not ln.startswith(" &")]
    for k, m in enumerate(head):
        for level in ("doc", "group"):
            vals = {lane: report["lanes"][lane][level][m]["value"] for lane in report["lanes"]}
            best = max(round(v, 4) for v in vals.values())
            for ln in rows:
                cells = [c.strip() for c in ln.rstrip("\\ ").split("&")]
                if cells[1] != level:
                    continue
                bold = cells[2 + k].startswith("\\textbf{")
                assert bold == (round(vals[cells[0]], 4) == best), (m, level, cells)


def test_significance_letters_follow_the_verdicts(tmp_path):
    o = outputs("cranfield")
    rows = o["compare"]["comparisons"]
    text = o["compare_latex"]
    letters = dict(re.findall(r"^\(([a-z])\) (\S+) &", text, flags=re.M))
    by_lane = {lane: letter for letter, lane in letters.items()}
    means = _tables(text)[0]
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    expected: dict = {}
    for r in rows:  # the oracle: compare.json's verdicts
        if r["verdict"] == "better":
            expected.setdefault((r["candidate"], r["metric"]), set()).add(by_lane[r["baseline"]])
        if r["verdict"] == "worse":
            expected.setdefault((r["baseline"], r["metric"]), set()).add(by_lane[r["candidate"]])
    assert expected, "the Cranfield comparison establishes at least one difference"
    for line in means.splitlines():
        m = re.match(r"^\(([a-z])\) (\S+) & (.*) \\\\$", line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(3).split("&")]
        for metric, cell in zip(metrics, cells):
            sup = re.search(r"\\textsuperscript\{([a-z]+)\}", cell)
            assert set(sup.group(1) if sup else "") == expected.get((m.group(2), metric), set()), (line, metric)
    assert "Holm correction" in means and "paired randomization test" in means and "alpha = 0.05" in means


def test_compare_p_column_holds_numbers(cran):
    rows_table = _tables(cran["compare_latex"])[1]
    assert "p = " not in rows_table.split("\\bottomrule")[0]


def test_hostile_names_compile(tmp_path):
    from test_hostile_names import LANE_A, _write_data

    p = _write_data(tmp_path / "in")
    lanes = ["--lane", f"{LANE_A}={p['a']}", "--lane", p["b"], "--qrels", p["qrels"]]
    ev = run_cli("evaluate", *lanes, "--strata", p["strata"], "--metrics", "rr,hit@1,ndcg@5", "--resamples", "200",
                 "--format", "latex")
    cmp = run_cli("compare", *lanes, "--metric", "ndcg@10", "--metric", "rr", "--resamples", "999", "--format", "latex")
    assert ev.returncode == 0 and cmp.returncode == 0, ev.stderr + cmp.stderr
    log = compile_tex(ev.stdout + "\n" + cmp.stdout, tmp_path)
    assert "Overfull \\hbox" not in log


@pytest.mark.parametrize("which", ["cranfield", "demo"])
def test_several_lanes_without_a_gate_lane_compile(which, tmp_path):
    """The README's most basic call: several lanes, no ``--gate-on``. The gate section is one
    line then (no itemize, which pdflatex refuses empty)."""
    args = _without_gate(cranfield_args() if which == "cranfield" else demo_args())
    res = run_cli("evaluate", *args, "--format", "latex")
    assert res.returncode == 0, res.stderr
    assert "\\begin{itemize}\n\\end{itemize}" not in res.stdout
    compile_tex(res.stdout, tmp_path)


def test_all_pairs_latex_compiles(tmp_path):
    """``compare --all-pairs --format latex``: its caption's ≤ and α are written for pdflatex."""
    res = run_cli("compare", *_without_gate(demo_args()), "--all-pairs", "--metric", "ndcg@10", "--format", "latex")
    assert res.returncode == 0, res.stderr
    assert "≤" not in res.stdout and "α" not in res.stdout
    compile_tex(res.stdout, tmp_path)


PAIR_ROW = re.compile(r"^\(([a-z]+)\) (\S+) - \(([a-z]+)\) (\S+) & ([+-]\d\.\d{4}) & (\d\.\d{4})(?: \(floor\))? & "
                      r"(\d+)/(\d+)/(\d+) & (.*) \\\\$")


@pytest.mark.parametrize("which", ["cranfield", "demo"])
def test_all_pairs_latex_has_labelled_pair_rows_and_compiles_beside_the_others(which, tmp_path):
    """Issue 29.15 and must show 5: ``compare --all-pairs --format latex`` carries a table of
    every pair (Δ with its interval below, the Tukey p, W/L/T, the verdict), each table a
    ``\\label``, every number the one ``--out`` holds; it compiles in one document with
    evaluate's tables (several lanes, with ``--gate-on``) and compare's, and beside
    evaluate's tables without ``--gate-on``, with no overfull box and no label twice."""
    o = outputs(which)
    args = _without_gate(o["args"])
    named = ["tfidf", "dense", "rrf"] if which == "cranfield" else ["dense", "rrf"]
    out = tmp_path / "all-pairs.json"
    res = run_cli("compare", *args, "--all-pairs", "--metric", "ndcg@10",
                  *[a for n in named for a in ("--candidate", n)], "--format", "latex", "--out", out)
    assert res.returncode == 0, res.stderr
    payload = json.loads(out.read_text())
    tables = _tables(res.stdout)
    assert len(tables) == 2
    labels = [re.search(r"\\label\{([^}]*)\}", t).group(1) for t in tables]
    assert labels == ["tab:rankscope-all-pairs-means-ndcg-10", "tab:rankscope-all-pairs-ndcg-10"]
    assert "\\ref{tab:rankscope-all-pairs-means-ndcg-10}" in tables[1]
    letters = {x["lane"]: x["letter"] for x in payload["lanes"]}
    lines = tables[1].split("\\midrule", 1)[1].split("\\bottomrule")[0].strip().splitlines()
    rows = [PAIR_ROW.match(ln) for ln in lines[0::2]]
    assert all(rows), lines
    assert len(rows) == len(payload["pairs"]) == len(letters) * (len(letters) - 1) // 2
    for m, interval, pair in zip(rows, lines[1::2], payload["pairs"]):
        assert (m[1], m[2], m[3], m[4]) == (letters[pair["b"]], pair["b"], letters[pair["a"]], pair["a"])
        assert float(m[5]) == float(f"{pair['difference']:.4f}") and float(m[6]) == float(f"{pair['p']:.4f}")
        assert (int(m[7]), int(m[8]), int(m[9])) == (pair["wins"], pair["losses"], pair["ties"])
        assert m[10] == (f"established: {pair['winner']}" if pair["winner"] else "inconclusive")
        assert f"[{pair['ci_low']:.4f}, {pair['ci_high']:.4f}]" in interval
    log = compile_tex(o["evaluate_latex"] + "\n" + o["compare_latex"] + "\n" + res.stdout, tmp_path, "with-gate")
    assert "Overfull \\hbox" not in log and "multiply defined" not in log
    plain = run_cli("evaluate", *args, "--format", "latex")
    assert plain.returncode == 0, plain.stderr
    log = compile_tex(plain.stdout + "\n" + res.stdout, tmp_path, "without-gate")
    assert "Overfull \\hbox" not in log and "multiply defined" not in log
