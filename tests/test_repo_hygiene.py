"""Contracts around the code: benchmarks find their data relative to the checkout and their
results hold no machine paths; the modules that implement a formula name its reference."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: absolute paths that belong to one machine: a workspace, a home folder, pytest's scratch
MACHINE_PATH = re.compile(r"(?<![\w.])(/work/|/root/|/home/|/tmp/pytest)")


def _benchmark_files() -> list[Path]:
    """The tracked text files under benchmarks/ (generated data in benchmarks/data is not tracked)."""
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "benchmarks"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        files = [REPO / line for line in out.stdout.splitlines()]
    else:  # not a git checkout (an unpacked archive): every file but the generated data
        files = [p for p in (REPO / "benchmarks").rglob("*") if p.is_file() and "data" not in p.relative_to(REPO).parts[1:2]]
    return [p for p in files if p.suffix in {".py", ".md", ".json", ".txt", ".csv"} and p.exists()]


def test_the_scan_covers_scripts_and_results():
    names = {p.relative_to(REPO).as_posix() for p in _benchmark_files()}
    assert "benchmarks/bench_eval.py" in names and "benchmarks/results/eval.json" in names
    assert MACHINE_PATH.search('"path": "/work/main/benchmarks/data/x"')  # the pattern finds what it is for
    assert not MACHINE_PATH.search('"path": "../shared/data/cranfield/qrels-test.txt"')


def test_benchmarks_and_their_results_hold_no_machine_paths():
    found = []
    for p in _benchmark_files():
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if MACHINE_PATH.search(line):
                found.append(f"{p.relative_to(REPO)}:{n}: {line.strip()[:120]}")
    assert found == [], "absolute machine paths:\n" + "\n".join(found)


def test_results_paths_are_written_relative_to_the_checkout():
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); import json, tempfile, os; "
            "from benchmarks.paths import ROOT, SHARED, SYNTH, shown, shown_argv; "
            "print(json.dumps([shown(ROOT), shown(ROOT / 'benchmarks' / 'data' / 'x.run'), shown(SYNTH), "
            "shown(os.path.join(tempfile.gettempdir(), 'rs-bench-1', 'out.json')), "
            "shown_argv(['evaluate', '--lane', 'run=' + str(SHARED / 'a.run'), '--metrics', 'ndcg@10']), "
            "str(SHARED) == os.path.join(os.path.dirname(str(ROOT)), 'shared')]))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    import json

    assert json.loads(res.stdout) == [".", "benchmarks/data/x.run", "../shared/tools/synth.py", "<scratch>/out.json",
                                      ["evaluate", "--lane", "run=../shared/a.run", "--metrics", "ndcg@10"], True]


# ---------------------------------------------------------------------------- references

KERNEL = REPO / "rankscope_tui" / "kernel"
#: the rooms whose modules implement a formula: each module's docstring names its references
FORMULA_ROOMS = ("statistics", "gate", "fusion", "measures")


def formula_modules() -> list[Path]:
    return sorted(p for room in FORMULA_ROOMS for p in (KERNEL / room).glob("*.py") if p.name != "__init__.py")


def references_of(path: Path) -> list[str]:
    """The entries of the ``References`` section of a module docstring (a line ``References``
    underlined with dashes, then ``- `` items until a blank line or the end)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    m = re.search(r"^References\n-{3,}\n(.*?)(?:\n\s*\n|\Z)", doc, flags=re.S | re.M)
    if not m:
        return []
    return [e.strip() for e in re.split(r"^- ", m.group(1), flags=re.M) if e.strip()]


def test_every_formula_room_has_modules():
    rooms = {p.parent.name for p in formula_modules()}
    assert rooms == set(FORMULA_ROOMS)
    assert len(formula_modules()) >= 20


@pytest.mark.parametrize("path", formula_modules(), ids=lambda p: str(p.relative_to(KERNEL)))
def test_each_formula_module_names_its_references(path):
    refs = references_of(path)
    assert refs, f"{path.relative_to(REPO)}: no 'References' section in the module docstring"
    for ref in refs:  # an author or a tool, and a year or a version or an address
        assert re.search(r"\b(1[89]\d\d|20\d\d)\b|trec_eval|https?://", ref), f"{path.relative_to(REPO)}: {ref!r}"


def test_the_reference_parser_reads_what_it_should(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('"""Title.\n\nReferences\n----------\n- Holm, S. (1979). A simple sequentially rejective\n'
                 '  multiple test procedure.\n- trec_eval 10.0 (NIST).\n\nMore text.\n"""\n')
    assert references_of(p) == ["Holm, S. (1979). A simple sequentially rejective\n  multiple test procedure.",
                                "trec_eval 10.0 (NIST)."]
    p.write_text('"""Title, no references."""\n')
    assert references_of(p) == []
