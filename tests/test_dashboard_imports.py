"""The dashboard's import rules: what each of its layers may import.

- ``state`` imports only the kernel;
- ``widgets`` only the kernel, ``render``, ``state`` and ``widgets``;
- ``screens`` only the kernel, ``render``, ``widgets``, ``state`` and ``screens``;
- ``app`` never the command line (``cli``, ``commands``);
- none of them reaches an instrument behind the kernel's front door: they import
  ``rankscope_tui.kernel`` (``from ..kernel import compare``), never ``kernel.instruments.*``.

Imports under ``if TYPE_CHECKING:`` are for the type checker only and are not arrows. The
walk reads each module's source (``ast``) and resolves relative imports, including those
inside functions; each breach is listed as ``file:line → target (rule)``.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
P = "rankscope_tui"


def _type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports_of(path: Path, module: str, root: Path = REPO) -> list[tuple[int, str]]:
    """(line, absolute target) of every ``rankscope_tui`` import in ``path``, outside
    ``TYPE_CHECKING`` blocks; ``from X import name`` names ``X.name`` when that is a module."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_bytes(), filename=str(path))
    out: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child):
                for orelse in child.orelse:  # the else branch runs
                    visit(orelse)
                continue
            if isinstance(child, ast.Import):
                out.extend((child.lineno, a.name) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".") if is_pkg else module.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    where = root / Path(*sub.split("."))
                    exists = where.with_suffix(".py").is_file() or where.is_dir()
                    out.append((child.lineno, sub if exists else target))
            visit(child)

    visit(tree)
    return [(line, t) for line, t in out if t == P or t.startswith(P + ".")]


def _under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


RULES: dict[str, tuple[tuple[str, ...], str]] = {
    # layer -> (what it may import, the rule's words)
    f"{P}.state": ((f"{P}.kernel", f"{P}.state"), "state imports only the kernel"),
    f"{P}.widgets": ((f"{P}.kernel", f"{P}.render", f"{P}.state", f"{P}.widgets"),
                     "widgets import only the kernel, render, state and widgets"),
    f"{P}.screens": ((f"{P}.kernel", f"{P}.render", f"{P}.widgets", f"{P}.state", f"{P}.screens"),
                     "screens import only the kernel, render, widgets, state and screens"),
}


def dashboard_breaches(root: Path = REPO) -> list[str]:
    out = []
    files = [root / P / "app.py", root / P / "state.py", *sorted((root / P / "screens").rglob("*.py")),
             *sorted((root / P / "widgets").rglob("*.py"))]
    for path in files:
        rel = path.relative_to(root)
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        for line, target in imports_of(path, module, root):
            rule = None
            if _under(target, f"{P}.kernel.instruments"):
                rule = "the dashboard reaches instruments through the front door rankscope_tui.kernel"
            elif module == f"{P}.app" and _under(target, f"{P}.cli", f"{P}.commands"):
                rule = "app never imports the command line"
            else:
                for layer, (allowed, words) in RULES.items():
                    if _under(module, layer) and not _under(target, *allowed):
                        rule = words
            if rule:
                out.append(f"{rel}:{line} → {target} ({rule})")
    return out


def test_the_dashboard_keeps_its_import_rules():
    breaches = dashboard_breaches()
    assert not breaches, "\n".join(breaches)


def test_the_walk_sees_the_dashboards_imports():
    """The walk finds imports (it can fail): the app imports the state, a screen the kernel."""
    app = [t for _, t in imports_of(REPO / P / "app.py", f"{P}.app")]
    assert f"{P}.state" in app
    verdicts = [t for _, t in imports_of(REPO / P / "screens" / "verdicts.py", f"{P}.screens.verdicts")]
    assert f"{P}.kernel" in verdicts


def test_a_breach_is_reported(tmp_path):
    """A state that reaches a screen, a widget that imports the app, an instrument imported
    directly and the app importing the command line are each named; a TYPE_CHECKING import is not."""
    files = {
        "state.py": "from .screens import base\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from .kernel.instruments import compare\n",
        "app.py": "from .cli import main\n",
        "screens/__init__.py": "",
        "screens/base.py": "def f():\n    from ..kernel.instruments import compare\n",
        "widgets/__init__.py": "",
        "widgets/w.py": "from .. import app\n",
        "cli.py": "",
        "kernel/__init__.py": "",
        "kernel/instruments/__init__.py": "",
        "kernel/instruments/compare.py": "",
    }
    for name, text in files.items():
        f = tmp_path / P / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    got = dashboard_breaches(tmp_path)
    assert got == [
        f"{P}/app.py:1 → {P}.cli (app never imports the command line)",
        f"{P}/state.py:1 → {P}.screens.base (state imports only the kernel)",
        f"{P}/screens/base.py:2 → {P}.kernel.instruments.compare "
        "(the dashboard reaches instruments through the front door rankscope_tui.kernel)",
        f"{P}/widgets/w.py:1 → {P}.app (widgets import only the kernel, render, state and widgets)",
    ], got
