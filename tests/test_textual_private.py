"""Every private Textual name the dashboard relies on still exists in the installed Textual.

``rankscope_tui/widgets/textual_private.py`` is the one module that touches Textual's
internals, and it lists each name in ``PRIVATE_NAMES``. A Textual upgrade that removes or
renames one fails here, naming the owner and the attribute, instead of surfacing as a
view that misbehaves later. The package outside that module uses no private Textual name.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from textual.app import App
from textual.command import CommandPalette
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen
from textual.widgets import Static

from rankscope_tui.widgets import textual_private as TP

PACKAGE = Path(__file__).resolve().parents[1] / "rankscope_tui"


def _instance(owner: type) -> object:
    """An instance of ``owner`` (not mounted) to read the attributes its ``__init__`` sets."""
    if issubclass(owner, CommandPalette):
        return owner()
    if issubclass(owner, App):
        return owner()
    if issubclass(owner, Screen):
        return owner()
    if owner is Stylesheet:
        return Stylesheet()
    from textual._parser import Parser
    from textual._xterm_parser import XTermParser

    if issubclass(owner, Parser):
        return XTermParser()
    from textual.driver import Driver

    if issubclass(owner, Driver):  # a driver is made inside the app's event loop
        import asyncio

        async def make() -> object:
            return owner(App())

        return asyncio.run(make())
    return Static()  # DOMNode's instance attributes: any widget has them


def _resolve(owner: str) -> object:
    module, _, name = owner.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return importlib.import_module(owner)


@pytest.mark.parametrize(("owner", "name", "where"), TP.PRIVATE_NAMES, ids=[f"{o}.{n}" for o, n, _ in TP.PRIVATE_NAMES])
def test_private_name_exists(owner, name, where):
    if where == "module":
        module = importlib.import_module(owner)
        assert hasattr(module, name), f"Textual no longer has {owner}.{name}: update rankscope_tui/widgets/textual_private.py"
        return
    cls = _resolve(owner)
    assert isinstance(cls, type), f"Textual no longer has the class {owner}"
    if where == "class":
        assert hasattr(cls, name), f"Textual's {owner} no longer has {name!r}: update rankscope_tui/widgets/textual_private.py"
    else:
        obj = _instance(cls)
        assert hasattr(obj, name), (f"Textual's {owner} instances no longer set {name!r}: "
                                    f"update rankscope_tui/widgets/textual_private.py")


def test_the_check_names_a_missing_attribute():
    """The check can fail: a name Textual never had is reported by name."""
    with pytest.raises(AssertionError, match="_no_such_private_name"):
        test_private_name_exists("textual.app.App", "_no_such_private_name", "class")
    with pytest.raises(AssertionError, match="_no_such_instance_name"):
        test_private_name_exists("textual.screen.Screen", "_no_such_instance_name", "instance")


def test_every_private_name_used_is_listed():
    """Each ``._name`` the module reads on a Textual object, and each private import, is in
    ``PRIVATE_NAMES`` (so the check above covers the module's whole surface)."""
    source = (PACKAGE / "widgets" / "textual_private.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    listed = {name for _, name, _ in TP.PRIVATE_NAMES}
    own = {"_whole", "_css_refreshed"}  # the module's own helpers, not Textual's
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and re.fullmatch(r"_[a-zA-Z]\w*", node.attr) and not node.attr.startswith("__"):
            used.add(node.attr)
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not node.name.startswith("__"):
            used.add(node.name)  # an override of a private method
        elif isinstance(node, ast.ImportFrom) and node.module and "._" in node.module:
            used.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            used.update(a.name for a in node.names if a.name.startswith("_"))
    missing = sorted(used - listed - own)
    assert not missing, f"private Textual names used in textual_private.py but not in PRIVATE_NAMES: {missing}"


PRIVATE_USE = re.compile(r"from textual[\w.]*\._\w+ import|import textual[\w.]*\._|from textual[\w.]* import _\w+")
TEXTUAL_PRIVATE_ATTRS = ("_screen_stacks", "_css_update_count", "_exit", "_check_bindings", "_replace_screen",
                         "_pop_result_callback", "_refresh_layout", "_reactive_connect", "_variables",
                         "_gather_commands", "_on_message", "_list_visible", "_show_busy", "_no_matches",
                         "_NO_MATCHES", "_GATHER_COMMANDS_GROUP")


def test_no_other_module_touches_textual_privates():
    offenders = []
    faces = [PACKAGE / "app.py", PACKAGE / "state.py", *(PACKAGE / d for d in ("screens", "widgets", "render"))]
    files = [f for face in faces for f in ([face] if face.is_file() else sorted(face.rglob("*.py")))]
    assert len(files) > 10, files  # the scan reads the dashboard's files, not nothing
    for path in files:
        if path.name == "textual_private.py":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if PRIVATE_USE.search(code) or any(re.search(rf"\.{re.escape(a)}\b", code) for a in TEXTUAL_PRIVATE_ATTRS):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{i}: {line.strip()}")
    assert not offenders, "Textual internals outside widgets/textual_private.py:\n" + "\n".join(offenders)


def test_helpers_on_a_fresh_app():
    """The helpers' answers before the app runs: no stacks' screens, not exiting."""
    app = App()
    assert TP.screen_stacks(app) == {"_default": []}
    assert TP.is_exiting(app) is False
    assert TP.unicode_name_of_key("exclamation_mark") == "EXCLAMATION MARK"
    screen = Screen()
    assert TP.styles_current(screen) is False  # no running app: never current


# ----------------------------------------------------------------------------- a paste that always ends


def _keys(events) -> list[str]:
    return [f"key:{e.key}" if hasattr(e, "key") else f"{type(e).__name__}:{getattr(e, 'text', '')}" for e in events]


def _parse(parser, steps) -> list[str]:
    """Feed ``steps`` (text, or a float: seconds to wait, then a tick) and collect the events."""
    import time

    out = []
    for step in steps:
        if isinstance(step, float):
            time.sleep(step)
            out += _keys(parser.tick())
        else:
            out += _keys(parser.feed(step))
    return out


def test_a_paste_end_marker_split_across_slow_reads_does_not_swallow_later_keys():
    """The end marker ``ESC[201~`` in two reads further apart than Textual's escape delay
    (a busy machine, a slow link) left Textual's parser in paste mode for good: ``q`` and
    every later key vanished and the dashboard looked frozen (a tmux key storm under load)."""
    from textual import constants

    wait = constants.ESCAPE_DELAY + 0.05
    got = _parse(TP.PasteSafeParser(), ["\x1b[200~1234567890\x1b", wait, "[201~", "q", wait, "1"])
    assert got == ["Paste:1234567890", "key:q", "key:1"], got


def test_a_lone_escape_is_still_the_escape_key():
    from textual import constants

    got = _parse(TP.PasteSafeParser(), ["a", "\x1b", constants.ESCAPE_DELAY + 0.05, "b"])
    assert got == ["key:a", "key:escape", "key:b"], got


def test_a_paste_whose_end_never_comes_is_ended_after_the_idle_time(monkeypatch):
    monkeypatch.setattr(TP, "PASTE_IDLE_S", 0.2)
    for fed in ("\x1b[200~see [/] here", "\x1b[200~see [/] here\x1b[20"):
        got = _parse(TP.PasteSafeParser(), [fed, 0.05, 0.3, "q"])
        assert got == ["Paste:see [/] here", "key:q"], (fed, got)


def test_the_dashboard_drivers_build_the_paste_safe_parser():
    import textual.drivers.linux_driver as linux
    import textual.drivers.linux_inline_driver as inline

    before = (linux.XTermParser, inline.XTermParser)
    try:
        TP.guard_paste_end()
        assert linux.XTermParser is TP.PasteSafeParser and inline.XTermParser is TP.PasteSafeParser
    finally:
        linux.XTermParser, inline.XTermParser = before
