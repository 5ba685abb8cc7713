"""The inputs room reads in one direction: no import circle among its modules.

A file passes ``rankscope_tui/kernel/inputs`` from the bottom up (files and the pyarrow
glue, the loaded table in ``rows``, format detection, one reader per format family,
the dispatch in ``readers``); a module that imports one above it, at module level or
inside a function, closes a circle. The import graph of the room is read from the
source (``ast``: every ``import`` and ``from ... import``, relative or absolute,
module level and in functions; the body of ``if TYPE_CHECKING:`` is left out, since
it never runs) and its strongly connected components (Tarjan) must all be single
modules. The room also imports nothing of the kernel but the rooms below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOM = "rankscope_tui.kernel.inputs"
#: what the room may import from the rest of the kernel: the rooms before it
BELOW = ("rankscope_tui.kernel.errors", "rankscope_tui.kernel.parallel")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[str, int]]:
    """(imported module, line) of every import that runs: module level and in functions,
    not under ``if TYPE_CHECKING:``. ``from X import name`` names ``X.name`` when that is
    a module of the package, else ``X`` (resolved later against the known modules)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    out: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit_one(other)
                continue
            visit_one(child)

    def visit_one(child: ast.AST) -> None:
        if isinstance(child, ast.Import):
            out.extend((a.name, child.lineno) for a in child.names)
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base_parts = package[: len(package) - (child.level - 1)]
                base = ".".join(base_parts + ([child.module] if child.module else []))
            else:
                base = child.module or ""
            out.extend((f"{base}.{a.name}|{base}", child.lineno) for a in child.names)
        visit(child)

    visit(tree)
    return out


def room_graph(root: Path = REPO) -> tuple[dict[str, set[str]], list[str]]:
    """The room's import graph ({module: modules of the room it imports}) and every import
    of a kernel module outside the room that is not a room below it."""
    folder = root / Path(*ROOM.split("."))
    files = {(ROOM if p.name == "__init__.py" else f"{ROOM}.{p.stem}"): p for p in sorted(folder.glob("*.py"))}
    graph: dict[str, set[str]] = {m: set() for m in files}
    above: list[str] = []
    for module, path in files.items():
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for target, line in _imports(tree, module, path.name == "__init__.py"):
            candidates = target.split("|")
            name = next((c for c in candidates if c in files), candidates[-1])
            if name in files:
                if name != module and name != ROOM:
                    graph[module].add(name)
            elif name.startswith("rankscope_tui.") and not any(name == b or name.startswith(b + ".") for b in BELOW):
                above.append(f"{path.relative_to(root)}:{line} → {name}")
    return graph, above


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph``, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_the_component_finder_sees_a_circle():
    """A hand-made graph: a → b → c → a is one component; d → a and e alone are their own."""
    comps = strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()})
    assert sorted(comps) == [["a", "b", "c"], ["d"], ["e"]]


def test_the_walk_finds_in_function_imports_and_skips_type_checking(tmp_path):
    """A circle closed by an import inside a function is found; one closed only under
    ``if TYPE_CHECKING:`` is not; an import of a room above is named."""
    room = tmp_path / Path(*ROOM.split("."))
    room.mkdir(parents=True)
    (room / "__init__.py").write_text("")
    (room / "low.py").write_text("def f():\n    from .high import g\n    return g\n")
    (room / "high.py").write_text("from . import low\nfrom ..errors import InputError\n")
    (room / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .user import U\n"
                                   "else:\n    from ..report import output\n")
    (room / "user.py").write_text("from .typed import T\n")
    graph, above = room_graph(tmp_path)
    assert graph[f"{ROOM}.low"] == {f"{ROOM}.high"} and graph[f"{ROOM}.high"] == {f"{ROOM}.low"}
    assert graph[f"{ROOM}.typed"] == set() and graph[f"{ROOM}.user"] == {f"{ROOM}.typed"}
    big = [c for c in strongly_connected(graph) if len(c) > 1]
    assert big == [[f"{ROOM}.high", f"{ROOM}.low"]]
    assert above == [f"{Path(*ROOM.split('.')) / 'typed.py'}:5 → rankscope_tui.kernel.report"]


def test_the_inputs_room_has_no_import_circle():
    graph, _ = room_graph()
    assert f"{ROOM}.readers" in graph and graph[f"{ROOM}.readers"], "the walk found no import in readers"
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert not circles, "import circles in the inputs room:\n" + "\n".join(
        " ↔ ".join(c) + ": " + "; ".join(f"{m} → {', '.join(sorted(graph[m] & set(c)))}" for m in c) for c in circles)


def test_the_inputs_room_imports_no_room_above_it():
    _, above = room_graph()
    assert not above, "the inputs room imports rooms above it:\n" + "\n".join(above)
