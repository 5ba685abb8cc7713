"""The import contract (issue 12): which layer of ``rankscope_tui`` may import which.

- ``kernel.*`` imports only the kernel (and numpy, scipy, pyarrow: never Textual, rich or plotext);
- ``screens.*`` imports only the kernel, the output layer ``render`` (words built from a
  payload, such as a comparison's results sentence), ``widgets``, ``state`` and other screens;
- ``render.*`` imports only the kernel and render;
- ``commands.*`` and ``cli`` import only the kernel, the output layer ``render``, ``startup``
  and the command line itself; ``commands/tui.py`` may also import ``app``, ``state`` and ``demo``;
- ``commands.*`` never import ``cli`` (``cli`` imports them, on demand: no circle);
- nothing imports ``demo`` but the demo command (``commands/demo.py``) and
  ``commands/tui.py``.

The check reads every module's source (``ast``), resolves each import (absolute, relative,
inside functions) and lists every offending ``file:line → target``. A module that does not
parse, or an import of a ``rankscope_tui`` module that does not exist, is an offence too:
the check can fail, never pass silently.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "rankscope_tui"


@dataclass(frozen=True)
class Edge:
    file: str  # relative to the root, e.g. rankscope_tui/kernel/io.py
    line: int
    source: str  # importing module
    target: str  # imported rankscope_tui module
    function: str | None  # the enclosing function, None at module level


def _modules(root: Path, package: str) -> dict[str, Path]:
    """{dotted module name: file} for every .py file of the package."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(modname: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    """The absolute module ``from X import ...`` names, for ``node.level`` dots."""
    if not node.level:
        return node.module or ""
    base = modname.split(".") if is_pkg else modname.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def import_edges(root: Path, package: str = PACKAGE) -> tuple[list[Edge], list[str]]:
    """Every import of a ``package`` module by a ``package`` module, and the problems found
    on the way (unparsable files, imports of modules that do not exist)."""
    modules = _modules(root, package)
    edges: list[Edge] = []
    problems: list[str] = []
    if not modules:
        return edges, [f"{root / package}: no modules found"]
    for modname, path in modules.items():
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_bytes(), filename=rel)
        except (SyntaxError, ValueError) as exc:
            problems.append(f"{rel}:{getattr(exc, 'lineno', 0) or 0}: does not parse ({exc.__class__.__name__}: {exc})")
            continue
        is_pkg = path.name == "__init__.py"

        def visit(node: ast.AST, function: str | None) -> None:
            for child in ast.iter_child_nodes(node):
                fn = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
                targets: list[str] = []
                if isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = _resolve(modname, is_pkg, child)
                    for a in child.names:
                        sub = f"{base}.{a.name}"
                        targets.append(sub if sub in modules else base)  # `from . import intervals` names a module
                for t in dict.fromkeys(targets):
                    if t != package and not t.startswith(package + "."):
                        continue
                    if t not in modules:
                        problems.append(f"{rel}:{child.lineno} → {t}: no such module")
                        continue
                    edges.append(Edge(rel, child.lineno, modname, t, function))
                visit(child, fn)

        visit(tree, None)
    return edges, problems


def _under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def check_arrows(root: Path, package: str = PACKAGE) -> list[str]:
    """Every breach of the import contract under ``root/package``, as ``file:line → target (rule)``."""
    p = package
    kernel, screens, commands, cli = f"{p}.kernel", f"{p}.screens", f"{p}.commands", f"{p}.cli"
    demo, tui = f"{p}.demo", f"{p}.commands.tui"
    edges, problems = import_edges(root, package)
    out = list(problems)
    for e in edges:
        s, t = e.source, e.target
        demo_command = (s == cli and e.function == "cmd_demo") or s in (f"{p}.commands.demo", tui)
        rule = None
        if _under(t, demo) and not demo_command:
            rule = "only the demo command and commands/tui.py import demo"
        elif _under(s, kernel) and not _under(t, kernel):
            rule = "the kernel imports only the kernel"
        elif _under(s, screens) and not _under(t, kernel, f"{p}.render", f"{p}.widgets", f"{p}.state", screens):
            rule = "screens import only the kernel, render, widgets, state and screens"
        elif _under(s, f"{p}.render") and not _under(t, kernel, f"{p}.render"):
            rule = "render imports only the kernel and render"
        elif _under(s, commands) and _under(t, cli):
            rule = "commands never import cli (cli imports them)"
        elif _under(s, commands, cli):
            allowed = [kernel, f"{p}.render", f"{p}.startup", cli, commands]
            if s == tui:
                allowed += [f"{p}.app", f"{p}.state", demo]
            if demo_command:
                allowed.append(demo)
            if not _under(t, *allowed):
                rule = "commands import only the kernel, render, startup and the command line"
        if rule:
            out.append(f"{e.file}:{e.line} → {t} ({rule})")
    return out


# ----------------------------------------------------------------------------- the checker finds what it must


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        f = root / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")


def test_the_checker_reports_back_edges(tmp_path):
    _write(tmp_path, {
        "rankscope_tui/__init__.py": "",
        "rankscope_tui/app.py": "X = 1\n",
        "rankscope_tui/demo.py": "",
        "rankscope_tui/state.py": "",
        "rankscope_tui/kernel/__init__.py": "",
        "rankscope_tui/kernel/good.py": "from . import bad\nfrom .bad import thing\nimport numpy\n",
        "rankscope_tui/kernel/bad.py": "import os\n\n\ndef f():\n    from ..app import X\n    return X\nthing = 1\n",
        "rankscope_tui/screens/__init__.py": "",
        "rankscope_tui/screens/view.py": "from rankscope_tui.state import S\nfrom rankscope_tui import app\n",
        "rankscope_tui/commands/__init__.py": "",
        "rankscope_tui/commands/tui.py": "from ..app import X\nfrom .. import demo\n",
        "rankscope_tui/commands/compare.py": "from rankscope_tui.screens import view\n",
        "rankscope_tui/commands/goldens.py": "import os\n\n\ndef run():\n    from ..cli import main\n    return main\n",
        "rankscope_tui/cli.py": "def cmd_demo():\n    from .demo import write\n\n\ndef cmd_other():\n    from . import demo\n",
    })
    found = check_arrows(tmp_path)
    assert found == [
        "rankscope_tui/cli.py:6 → rankscope_tui.demo (only the demo command and commands/tui.py import demo)",
        "rankscope_tui/commands/compare.py:1 → rankscope_tui.screens.view "
        "(commands import only the kernel, render, startup and the command line)",
        "rankscope_tui/commands/goldens.py:5 → rankscope_tui.cli (commands never import cli (cli imports them))",
        "rankscope_tui/kernel/bad.py:5 → rankscope_tui.app (the kernel imports only the kernel)",
        "rankscope_tui/screens/view.py:2 → rankscope_tui.app (screens import only the kernel, render, widgets, state and screens)",
    ], found


def test_the_checker_fails_on_unparsable_and_missing_modules(tmp_path):
    _write(tmp_path, {
        "rankscope_tui/__init__.py": "",
        "rankscope_tui/kernel/__init__.py": "",
        "rankscope_tui/kernel/broken.py": "def f(:\n",
        "rankscope_tui/kernel/ok.py": "from .gone import x\n",
    })
    found = check_arrows(tmp_path)
    assert len(found) == 2, found
    assert found[0].startswith("rankscope_tui/kernel/broken.py:1: does not parse")
    assert found[1] == "rankscope_tui/kernel/ok.py:1 → rankscope_tui.kernel.gone: no such module"
    assert check_arrows(tmp_path / "nowhere") == [f"{tmp_path / 'nowhere' / 'rankscope_tui'}: no modules found"]


# ----------------------------------------------------------------------------- the package keeps the contract


def test_the_package_keeps_the_import_arrows():
    edges, _ = import_edges(REPO)
    layers = {e.source.split(".")[1] for e in edges if "." in e.source}
    assert {"kernel", "screens", "commands", "cli"} <= layers, f"the walk missed a layer: {sorted(layers)}"
    offences = check_arrows(REPO)
    assert not offences, f"{len(offences)} import(s) break the contract:\n" + "\n".join(offences)


KERNEL_RUN = r"""
import json, sys
from pathlib import Path
from rankscope_tui.kernel.gate import analysis as gate_analysis
from rankscope_tui.kernel.instruments import compare as comparison, evaluate as pipeline
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import CompareSettings, GateSettings, LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace

d = Path(sys.argv[1])
settings = LoadSettings(metrics=tuple(parse_metrics("ndcg@10,rr,hit@10,recall@100")), group_sep="#", resamples=199,
                        blind="no-overlap", cap=5, document_first=True)
ws = Workspace.load([("lexical", str(d / "lexical.run")), ("dense", str(d / "dense.run"))], str(d / "qrels-test.txt"),
                    settings, strata=[str(d / "strata.tsv")], corpus=str(d / "corpus.tsv"), queries=str(d / "queries.tsv"),
                    docs=str(d / "docs.tsv"), ood_negatives=str(d / "qrels-ood-negatives.txt"))
gate = GateSettings(gate_on="dense", margin=0.01, mutual=2)
report = pipeline.evaluate_report(ws, gate)  # evaluate --gate-on dense --margin 0.01 --mutual 2
ws, th = pipeline.prepare(ws)
analysis = gate_analysis.analyse_gate(ws, gate, th)
assert analysis.as_dict() == report["gate"]
result = comparison.compare(ws, th, CompareSettings(resamples=999)).result
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "textual_plotext", "rich", "plotext"))
print(json.dumps({
    "ui_modules": loaded,
    "lanes": sorted(report["lanes"]),
    "ndcg": report["lanes"]["dense"]["doc"]["ndcg@10"]["value"],
    "gate_lane": (report.get("gate") or {}).get("lane"),
    "gate_keys": sorted(report.get("gate") or {}),
    "rows": [(r.candidate, r.metric, r.difference, r.randomization_p) for r in result.rows],
}))
"""


def test_the_kernel_alone_evaluates_gates_and_compares(demo_dir, tmp_path):
    """A whole evaluation (lanes, strata, attribution, fusion, variants), the gate analysis
    and a comparison through the kernel's entry points, and no Textual, rich or plotext
    module is ever imported."""
    res = subprocess.run([sys.executable, "-c", KERNEL_RUN, str(demo_dir)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["ui_modules"] == [], out["ui_modules"]
    assert {"lexical", "dense", "rrf"} <= set(out["lanes"]), out["lanes"]
    assert 0.0 < out["ndcg"] < 1.0
    assert out["gate_lane"] == "dense" and "skipped" not in out["gate_keys"], out["gate_keys"]
    assert [(c, m) for c, m, _, _ in out["rows"]] == [("dense", "ndcg@10"), ("rrf", "ndcg@10")], out["rows"]
    assert all(isinstance(delta, float) and 0.0 <= p <= 1.0 for _, _, delta, p in out["rows"]), out["rows"]


@pytest.mark.parametrize("layer", ["kernel", "screens", "commands"])
def test_every_layer_is_walked(layer):
    """The walk sees each layer's files (a renamed folder must not make the contract pass vacuously)."""
    files = {e.file for e in import_edges(REPO)[0]}
    assert any(f.startswith(f"{PACKAGE}/{layer}/") for f in files), layer
