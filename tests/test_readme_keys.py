"""What the README shows of the dashboard stays true: its screenshots are the snapshot tests'
current pictures, and its key tables are the app's bindings.

Oracles: the snapshot files the snapshot tests compare against (tests/__snapshots__), and
the ``Binding`` objects of the app, the views, the sliders and the dialogs, each key shown
as Textual's footer shows it (``App.get_key_display``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.binding import Binding

from rankscope_tui.app import RankscopeApp, keys_markdown
from rankscope_tui.screens import LETTER_VIEWS, SCREEN_CLASSES, VIEW_KEYS, VIEWS, screen_class
from rankscope_tui.widgets import dialogs
from rankscope_tui.widgets.kslider import KSlider

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
SNAPS = REPO / "tests" / "__snapshots__"

#: docs/ copy -> the snapshot it copies (80×24 from the layout tests, 140×45 from test_tui)
SCREENSHOTS = {
    "docs/overview-80x24.svg": SNAPS / "test_tui_layout" / "test_snapshot_80x24[1-overview].svg",
    "docs/overview-140x45.svg": SNAPS / "test_tui" / "test_snapshot[1-overview].svg",
}


@pytest.mark.parametrize("copy", sorted(SCREENSHOTS))
def test_each_screenshot_is_in_the_readme_and_equals_its_snapshot(copy):
    assert f"]({copy})" in README, f"the README shows no {copy}"
    snapshot = SCREENSHOTS[copy]
    assert snapshot.exists(), f"{snapshot} is gone: point {copy} at the snapshot that replaced it"
    assert (REPO / copy).read_bytes() == snapshot.read_bytes(), (
        f"{copy} is stale: cp '{snapshot.relative_to(REPO)}' {copy}")


def test_every_picture_the_readme_shows_exists():
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (REPO / target).is_file(), f"the README shows {target}, which does not exist"


def _readme_tables() -> dict[str, dict[str, tuple[set[str], str]]]:
    """The README's key tables: title -> {binding id: (keys shown, action)}; a view with no
    keys of its own is an empty table."""
    m = re.search(r"<!-- keys:begin -->\n(.*?)<!-- keys:end -->", README, re.S)
    assert m, "the README has no generated key tables (<!-- keys:begin --> ... <!-- keys:end -->)"
    tables: dict[str, dict[str, tuple[set[str], str]]] = {}
    current = None
    for line in m.group(1).splitlines():
        if t := re.fullmatch(r"\*\*(.+?)\*\*(: no keys of its own.*)?", line):
            current = tables.setdefault(t.group(1), {})
        elif line.startswith("| `"):
            keys, action, bid = (c.strip() for c in line.strip("|").split("|"))
            assert current is not None
            current[bid.strip("`")] = (set(re.findall(r"`([^`]+)`", keys)), action)
    return tables


def _bindings_of_the_classes() -> dict[str, dict[str, tuple[set[str], str]]]:
    app = RankscopeApp()

    def table(bindings) -> dict[str, tuple[set[str], str]]:
        out: dict[str, tuple[set[str], str]] = {}
        for b in Binding.make_bindings(bindings):
            keys, _ = out.setdefault(b.id, (set(), b.description))
            keys.add(app.get_key_display(b))
        return out

    tables = {"Everywhere": table(RankscopeApp.BINDINGS)}
    titles = {m: f"{VIEW_KEYS[m]} {t} view" for m, t in VIEWS} | {m: f"{k} {t} view" for m, t, k in LETTER_VIEWS}
    assert set(titles) == set(SCREEN_CLASSES)
    for mode, title in titles.items():
        tables[title] = table(screen_class(mode).__dict__.get("BINDINGS", []))
    tables["k sliders (Fusion, Calibrate)"] = table(KSlider.BINDINGS)
    tables["Dialogs"] = table([b for c in vars(dialogs).values() if isinstance(c, type)
                               and c.__module__ == dialogs.__name__ and "BINDINGS" in c.__dict__
                               for b in c.__dict__["BINDINGS"]])
    return tables


def test_the_readme_key_tables_are_the_bindings():
    readme, bindings = _readme_tables(), _bindings_of_the_classes()
    assert list(readme) == list(bindings), "the README's key tables name other views"
    for title, rows in bindings.items():
        assert readme[title] == rows, (f"the README's {title!r} keys differ from the bindings: "
                                       "python -m rankscope_tui.app --keys prints the tables")


def test_the_readme_block_is_what_the_generator_prints():
    m = re.search(r"<!-- keys:begin -->\n(.*?)<!-- keys:end -->", README, re.S)
    assert m and m.group(1) == keys_markdown()


def test_a_changed_binding_is_caught(monkeypatch):
    """The check can fail: a key moved in the app but not in the README is a difference."""
    from rankscope_tui.screens import overview

    moved = [Binding("T", b.action, b.description, id=b.id) if b.id == "overview.next_tie" else b
             for b in overview.OverviewScreen.BINDINGS]
    monkeypatch.setattr(overview.OverviewScreen, "BINDINGS", moved)
    assert _readme_tables()["1 Overview view"] != _bindings_of_the_classes()["1 Overview view"]
