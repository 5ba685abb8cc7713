"""The import contract: which part of ``rankscope_tui`` may import which, and the kernel's rooms.

Every top-level module and package of ``rankscope_tui`` has a rule in ``LAYERS``; a module
the table does not name is an offence, so a new face cannot slip past the contract:

- ``kernel.*`` imports only the kernel (and numpy, scipy, pyarrow: never Textual, rich or plotext),
  and inside the kernel a room imports only the rooms before it in ``kernel.ROOMS``;
- ``render.*`` imports only the kernel and render; ``state`` only the kernel;
- ``widgets`` the kernel, render and state; ``screens`` those and widgets;
- ``app`` everything of the dashboard and ``startup``, never the command line;
- ``api`` (``import rankscope_tui``) only the kernel and render: never the command line;
- ``cli`` the kernel, render, startup and ``commands``; ``commands.*`` the kernel, render and
  startup, never ``cli`` back; ``commands/tui.py`` also the dashboard, ``commands/demo.py`` and
  ``commands/tui.py`` the demo; nothing else imports ``demo``;
- a face (anything outside the kernel) calls an instrument through the front door
  ``rankscope_tui.kernel`` (``kernel.ENTRY_POINTS``), never from the room that defines it.

Besides the arrows, no import circle may cross a room: the strongly connected components
of the module graph (top-level and in-function imports alike) each stay inside one
sub-package. Imports under ``if TYPE_CHECKING:`` never run and are not arrows.

The check reads every module's source (``ast``) once per test run, resolves each import
(absolute, relative, inside functions) and lists every offending ``file:line → target``.
A module that does not parse, or an import of a ``rankscope_tui`` module that does not
exist, is an offence too: the check can fail, never pass silently.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "rankscope_tui"

#: top-level module or package -> the top-level parts it may import besides itself
LAYERS: dict[str, tuple[str, ...]] = {
    "__init__": ("api",),
    "kernel": (),
    "render": ("kernel",),
    "state": ("kernel",),
    "widgets": ("kernel", "render", "state"),
    "screens": ("kernel", "render", "widgets", "state"),
    "app": ("kernel", "render", "widgets", "state", "screens", "startup"),
    "api": ("kernel", "render"),
    "cli": ("kernel", "render", "startup", "commands"),
    "commands": ("kernel", "render", "startup"),
    "demo": ("kernel",),
    "startup": (),
}
#: modules allowed more than their layer
EXTRA: dict[str, tuple[str, ...]] = {
    "commands.tui": ("app", "state", "screens", "demo"),
    "commands.demo": ("demo",),
}


@dataclass(frozen=True)
class Edge:
    file: str  # relative to the root, e.g. rankscope_tui/kernel/inputs/files.py
    line: int
    source: str  # importing module
    target: str  # imported rankscope_tui module
    function: str | None  # the enclosing function, None at module level
    names: tuple[str, ...] = ()  # the names a ``from target import ...`` takes
    typing_only: bool = False  # under ``if TYPE_CHECKING:``


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


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


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

        def visit(node: ast.AST, function: str | None, typing_only: bool) -> None:
            for child in ast.iter_child_nodes(node):
                fn = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
                targets: list[tuple[str, tuple[str, ...]]] = []
                if isinstance(child, ast.Import):
                    targets = [(a.name, ()) for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = _resolve(modname, is_pkg, child)
                    for a in child.names:
                        sub = f"{base}.{a.name}"
                        # `from . import intervals` names a module; `from .x import f` a name in x
                        targets.append((sub, ()) if sub in modules else (base, (a.name,)))
                for t, names in targets:
                    if t != package and not t.startswith(package + "."):
                        continue
                    if t not in modules:
                        problems.append(f"{rel}:{child.lineno} → {t}: no such module")
                        continue
                    edges.append(Edge(rel, child.lineno, modname, t, function, names, typing_only))
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for sub in child.body:
                        visit(ast.Module(body=[sub], type_ignores=[]), fn, True)
                    for sub in child.orelse:
                        visit(ast.Module(body=[sub], type_ignores=[]), fn, typing_only)
                else:
                    visit(child, fn, typing_only)

        visit(tree, None, False)
    return edges, problems


@functools.lru_cache(maxsize=None)
def walk(root: Path = REPO) -> tuple[tuple[Edge, ...], tuple[str, ...]]:
    """The walk of ``root``, made once per test run and shared by every test here."""
    edges, problems = import_edges(root)
    return tuple(edges), tuple(problems)


def _under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _part(module: str, package: str) -> str:
    """The top-level part of ``package`` a module belongs to (``__init__`` for the package)."""
    rest = module[len(package) + 1:] if module != package else ""
    return rest.split(".")[0] if rest else "__init__"


def _kernel_setup(root: Path, package: str) -> tuple[tuple[str, ...], dict[tuple[str, str], str]]:
    """``ROOMS`` and ``ENTRY_POINTS`` of the kernel under ``root`` (read from its source, not
    imported, so a tree under test needs no installation)."""
    init = root / package / "kernel" / "__init__.py"
    rooms: tuple[str, ...] = ()
    entries: dict[tuple[str, str], str] = {}
    if init.is_file():
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
            if isinstance(target, ast.Name) and target.id == "ROOMS" and node.value is not None:
                rooms = tuple(ast.literal_eval(node.value))
            if isinstance(target, ast.Name) and target.id == "ENTRY_POINTS" and node.value is not None:
                entries = {(f"{package}.kernel.{m}", n): verb for verb, (m, n) in ast.literal_eval(node.value).items()}
    return rooms, entries


def _room(module: str, package: str) -> str | None:
    """The kernel room of a kernel module (None for the front door itself)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "kernel" and parts[0] == package else None


def check_arrows(root: Path, package: str = PACKAGE) -> list[str]:
    """Every breach of the import contract under ``root/package``, as ``file:line → target (rule)``."""
    p = package
    edges, problems = walk(root) if root == REPO else import_edges(root, package)
    out = list(problems)
    rooms, entries = _kernel_setup(root, package)
    for m in sorted({e.source for e in edges} | set(_modules(root, package))):
        if _part(m, p) not in LAYERS:
            out.append(f"{m}: no rule in the import contract names this part of the package")
    for e in edges:
        if e.typing_only:
            continue
        s, t = e.source, e.target
        sp, tp = _part(s, p), _part(t, p)
        rule = None
        if sp not in LAYERS:
            continue
        allowed = {sp, *LAYERS[sp]}
        for mod, extra in EXTRA.items():
            if _under(s, f"{p}.{mod}"):
                allowed |= set(extra)
        if tp not in allowed:
            rule = f"{sp} imports only {', '.join(sorted(allowed))}"
        elif sp == "kernel" and tp == "kernel":
            rs, rt = _room(s, p), _room(t, p)
            if rs and rt and rs != rt and rs in rooms and rt in rooms and rooms.index(rt) > rooms.index(rs):
                rule = f"the kernel's room {rs} sits below {rt}"
        elif sp != "kernel" and tp == "kernel" and any((t, n) in entries for n in e.names):
            verbs = ", ".join(entries[(t, n)] for n in e.names if (t, n) in entries)
            rule = f"faces call instruments through the front door: rankscope_tui.kernel.{verbs}"
        if rule:
            out.append(f"{e.file}:{e.line} → {t} ({rule})")
    return out


def circles(root: Path, package: str = PACKAGE) -> list[list[str]]:
    """The strongly connected components (Tarjan) of more than one module in the run-time
    import graph (module-level and in-function imports; not ``if TYPE_CHECKING:``)."""
    edges, _ = walk(root) if root == REPO else import_edges(root, package)
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.typing_only and e.source != e.target:
            graph.setdefault(e.source, set()).add(e.target)
            graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:  # iterative enough for a graph of a few hundred modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)

    return found


def crossing_circles(root: Path, package: str = PACKAGE) -> list[list[str]]:
    """The circles whose modules lie in more than one room of the kernel or part of the package."""

    def place(m: str) -> str:
        return f"kernel.{_room(m, package)}" if _room(m, package) else _part(m, package)

    return [c for c in circles(root, package) if len({place(m) for m in c}) > 1]


# ----------------------------------------------------------------------------- the checker finds what it must


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        f = root / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")


KERNEL_INIT = (
    'ROOMS = ("errors", "inputs", "report", "instruments")\n'
    'ENTRY_POINTS = {"evaluate": ("instruments.evaluate", "evaluate_report")}\n'
)


def test_the_checker_reports_back_edges(tmp_path):
    """A planted offence of every kind is found, with its line and rule; an import under
    ``if TYPE_CHECKING:`` and the allowed arrows are not."""
    _write(tmp_path, {
        "rankscope_tui/__init__.py": "",
        "rankscope_tui/app.py": "X = 1\n",
        "rankscope_tui/demo.py": "",
        "rankscope_tui/state.py": "",
        "rankscope_tui/gadgets.py": "",
        "rankscope_tui/api.py": "from .kernel import evaluate\n\n\ndef f():\n    from .cli import main\n",
        "rankscope_tui/kernel/__init__.py": KERNEL_INIT,
        "rankscope_tui/kernel/errors.py": "",
        "rankscope_tui/kernel/inputs/__init__.py": "",
        "rankscope_tui/kernel/inputs/files.py": "from ..errors import E\nfrom ..report import output\n",
        "rankscope_tui/kernel/report/__init__.py": "",
        "rankscope_tui/kernel/report/output.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..instruments.evaluate import R\n"
            "from ..inputs import files\n"),
        "rankscope_tui/kernel/instruments/__init__.py": "",
        "rankscope_tui/kernel/instruments/evaluate.py": "from ..report import output\n\n\ndef f():\n    from ...app import X\n",
        "rankscope_tui/screens/__init__.py": "",
        "rankscope_tui/screens/view.py": "from rankscope_tui.state import S\nfrom rankscope_tui import app\n",
        "rankscope_tui/commands/__init__.py": "",
        "rankscope_tui/commands/tui.py": "from ..app import X\nfrom .. import demo\n",
        "rankscope_tui/commands/compare.py": (
            "from rankscope_tui.screens import view\nfrom ..cli import main\n"
            "from ..kernel.instruments.evaluate import evaluate_report\n"),
        "rankscope_tui/cli.py": "from . import demo\n",
    })
    found = check_arrows(tmp_path)
    assert found == [
        "rankscope_tui.gadgets: no rule in the import contract names this part of the package",
        "rankscope_tui/api.py:5 → rankscope_tui.cli (api imports only api, kernel, render)",
        "rankscope_tui/cli.py:1 → rankscope_tui.demo (cli imports only cli, commands, kernel, render, startup)",
        "rankscope_tui/commands/compare.py:1 → rankscope_tui.screens.view (commands imports only commands, kernel, render, startup)",
        "rankscope_tui/commands/compare.py:2 → rankscope_tui.cli (commands imports only commands, kernel, render, startup)",
        "rankscope_tui/commands/compare.py:3 → rankscope_tui.kernel.instruments.evaluate "
        "(faces call instruments through the front door: rankscope_tui.kernel.evaluate)",
        "rankscope_tui/kernel/inputs/files.py:2 → rankscope_tui.kernel.report.output (the kernel's room inputs sits below report)",
        "rankscope_tui/kernel/instruments/evaluate.py:5 → rankscope_tui.app (kernel imports only kernel)",
        "rankscope_tui/screens/view.py:2 → rankscope_tui.app (screens imports only kernel, render, screens, state, widgets)",
    ], found
    # inputs.files <-> report.output is one circle across two rooms; the TYPE_CHECKING arrow makes none
    assert crossing_circles(tmp_path) == [["rankscope_tui.kernel.inputs.files", "rankscope_tui.kernel.report.output"]]
    assert circles(tmp_path) == crossing_circles(tmp_path)
    _write(tmp_path, {"rankscope_tui/kernel/report/__init__.py": "from . import output\n"})  # a room's face and its module
    assert ["rankscope_tui.kernel.report", "rankscope_tui.kernel.report.output"] not in circles(tmp_path)
    _write(tmp_path, {"rankscope_tui/kernel/report/payload.py": "from .output import x\n",
                      "rankscope_tui/kernel/report/output.py": "from .payload import y\n"})
    assert ["rankscope_tui.kernel.report.output", "rankscope_tui.kernel.report.payload"] in circles(tmp_path)


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
    edges, _ = walk()
    parts = {_part(e.source, PACKAGE) for e in edges}
    assert set(LAYERS) - {"startup", "__init__"} <= parts, f"the walk missed a part: {sorted(set(LAYERS) - parts)}"
    offences = check_arrows(REPO)
    assert not offences, f"{len(offences)} import(s) break the contract:\n" + "\n".join(offences)


def test_no_import_circle_crosses_a_room():
    found = crossing_circles(REPO)
    assert not found, "import circles across rooms:\n" + "\n".join(" ↔ ".join(c) for c in found)


def test_no_import_circle_inside_a_room_either():
    """Inside a room too a file passes one way (the inputs from bytes to a loaded table,
    a measure module below the registry that lists it, the partitioner below the engine
    that runs it, the renderers below the format dispatch)."""
    found = circles(REPO)
    assert not found, "import circles:\n" + "\n".join(" ↔ ".join(c) for c in found)


def test_the_kernel_top_level_is_the_front_door_and_its_rooms():
    """The kernel's top level: ``__init__`` (the front door), one sub-package per room and
    the few loose modules ``kernel.LOOSE`` names with their reason; every room says in its
    docstring what it owns; every entry point resolves."""
    import importlib

    import rankscope_tui.kernel as K

    top = REPO / PACKAGE / "kernel"
    packages = {d.name for d in top.iterdir() if (d / "__init__.py").is_file()}
    loose = {f.stem for f in top.glob("*.py") if f.name != "__init__.py"}
    assert loose == set(K.LOOSE), f"loose modules {sorted(loose)} against LOOSE {sorted(K.LOOSE)}"
    assert set(K.ROOMS) == packages | loose, f"ROOMS {K.ROOMS} against the tree {sorted(packages | loose)}"
    for room in packages:
        doc = importlib.import_module(f"{PACKAGE}.kernel.{room}").__doc__ or ""
        assert len(doc.strip()) > 40, f"kernel/{room}/__init__.py says nothing of what the room owns"
    for verb, (module, name) in K.ENTRY_POINTS.items():
        assert callable(getattr(K, verb)), verb
        assert getattr(K, verb) is getattr(importlib.import_module(f"{PACKAGE}.kernel.{module}"), name)


def kernel_map() -> str:
    """The README's picture of the kernel, made from ``kernel.ROOMS``, ``kernel.LOOSE``,
    the rooms' docstrings and the front door's ``ENTRY_POINTS``."""
    import importlib

    import rankscope_tui.kernel as K

    by_room: dict[str, list[str]] = {}
    for verb, (module, _) in K.ENTRY_POINTS.items():
        by_room.setdefault(module.split(".")[0], []).append(verb)
    lines = ["| what it owns | room | modules | entry points (`rankscope_tui.kernel.…`) |", "|---|---|---|---|"]
    for room in K.ROOMS:
        if room in K.LOOSE:
            what, modules = K.LOOSE[room], f"`{room}.py`"
        else:
            doc = (importlib.import_module(f"{PACKAGE}.kernel.{room}").__doc__ or "").strip()
            what = re.sub(r"\s+", " ", doc.split("\n\n")[0]).rstrip(".")
            files = sorted(f.stem for f in (REPO / PACKAGE / "kernel" / room).glob("*.py") if f.name != "__init__.py")
            modules = ", ".join(f"`{f}`" for f in files) or "—"
        verbs = ", ".join(f"`{v}`" for v in sorted(by_room.get(room, []))) or "—"
        lines.append(f"| {what} | `{room}` | {modules} | {verbs} |")
    return "\n".join(lines) + "\n"


MAP_BEGIN, MAP_END = "<!-- kernel map: made by tests/test_architecture.py -->\n", "<!-- end of kernel map -->\n"


def test_the_readme_kernel_map_is_the_code():
    """The README's kernel map is the one ``kernel_map()`` makes from the code; after a
    change, ``python tests/test_architecture.py`` writes it again."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert MAP_BEGIN in text and MAP_END in text, "README.md has no kernel map between its markers"
    shown = text.split(MAP_BEGIN, 1)[1].split(MAP_END, 1)[0]
    assert shown == kernel_map(), "README.md's kernel map is stale: run `python tests/test_architecture.py`"


def test_import_rankscope_tui_loads_neither_textual_nor_numpy():
    code = ("import sys, rankscope_tui, rankscope_tui.kernel\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'numpy', 'pyarrow', 'rich')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]", res.stdout


def test_the_dashboard_module_loads_no_pyarrow_before_its_first_frame():
    """``rankscope tui`` imports the app before it draws a first frame; pyarrow (the inputs'
    reader, ~0.1 s to import) is for the load that follows that frame."""
    code = ("import sys, rankscope_tui.app\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pyarrow')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]", res.stdout


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
result = comparison.compare(ws, th, CompareSettings(candidates=("dense", "rrf"), resamples=999)).result
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich", "plotext"))
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


@pytest.mark.parametrize("layer", ["kernel", "screens", "commands", "widgets", "render"])
def test_every_layer_is_walked(layer):
    """The walk sees each layer's files (a renamed folder must not make the contract pass vacuously)."""
    files = {e.file for e in walk()[0]}
    assert any(f.startswith(f"{PACKAGE}/{layer}/") for f in files), layer


if __name__ == "__main__":  # write the README's kernel map from the code
    sys.path.insert(0, str(REPO))
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(MAP_BEGIN, 1)
    readme.write_text(head + MAP_BEGIN + kernel_map() + MAP_END + rest.split(MAP_END, 1)[1], encoding="utf-8")
    print("README.md: kernel map written")
