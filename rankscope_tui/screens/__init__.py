"""One Textual screen per instrument; each is a mode of the app, reached by its number key
(1–9, then 0 for the tenth)."""

from __future__ import annotations

from functools import partial

VIEWS: list[tuple[str, str]] = [
    ("overview", "Overview"),
    ("strata", "Strata"),
    ("attribution", "Attribution"),
    ("rrf", "Fusion"),
    ("calibrate", "Calibrate"),
    ("gate", "Gate"),
    ("compare", "Compare"),
    ("verdicts", "Verdicts"),
    ("query", "Query"),
    ("goldens", "Goldens"),
]

#: mode -> the key that shows it: the digits in key order, 0 for the tenth view
VIEW_KEYS: dict[str, str] = {mode: str(i % 10) for i, (mode, _) in enumerate(VIEWS, 1)}
assert len(VIEWS) <= 10, "ten views have a digit each; another view needs a key of its own"

#: Views reached by a letter key of their own, not on the numbered bar: (mode, title, key).
LETTER_VIEWS: list[tuple[str, str, str]] = [
    ("judgments", "Judgments", "j"),
]
VIEW_KEYS.update({mode: key for mode, _, key in LETTER_VIEWS})


#: Every binding id of the dashboard (the app's, the views', the sliders' and the dialogs'):
#: what a config file's ``keymap`` may name (``App.set_keymap``). Written out, not collected,
#: so the check costs no import of the views (the Compare view's module loads scipy);
#: ``tests/test_readme_keys.py`` holds it equal to the ids of the ``Binding`` objects. The
#: ids are stable: a renamed id would break the keymaps that name it.
BINDING_IDS: frozenset[str] = frozenset({
    *(f"view.{mode}" for mode, _ in VIEWS), *(f"view.{mode}" for mode, _, _ in LETTER_VIEWS),
    "app.export", "app.help", "app.leave_input", "app.open", "app.quit", "app.search",
    "overview.next_tie", "overview.next_lane", "overview.level", "overview.edit", "overview.pr_curve",
    "strata.variants", "rrf.drill", "calibrate.fit_on_test",
    "gate.conservative", "gate.fpir_up", "gate.fpir_down", "gate.applied_margin",
    "compare.paired", "compare.swap", "verdicts.edit", "verdicts.restore",
    "query.prev", "query.next", "query.variants", "query.back",
    "goldens.only_disagreements", "goldens.recompute",
    "slider.down", "slider.up", "slider.down10", "slider.up10", "slider.min", "slider.max",
    "dialog.close", "dialog.cancel", "dialog.complete",
})


def view_title(mode: str) -> str:
    """The title of view ``mode``, on the numbered bar or not."""
    return dict(VIEWS).get(mode) or next(t for m, t, _ in LETTER_VIEWS if m == mode)


#: mode -> (module, class) of its screen; a module is imported when its view is first shown
#: (the Compare view's statistics pull in scipy: a third of a second no start should pay)
SCREEN_CLASSES: dict[str, tuple[str, str]] = {
    "overview": ("overview", "OverviewScreen"),
    "strata": ("strata", "StrataScreen"),
    "attribution": ("attribution", "AttributionScreen"),
    "rrf": ("rrf", "RRFScreen"),
    "calibrate": ("calibrate", "CalibrateScreen"),
    "gate": ("gate", "GateScreen"),
    "compare": ("compare", "CompareScreen"),
    "verdicts": ("verdicts", "VerdictsScreen"),
    "query": ("query", "QueryScreen"),
    "goldens": ("goldens", "GoldensScreen"),
    "judgments": ("judgments", "JudgmentsScreen"),
}


def screen_class(mode: str) -> type:
    """The screen class of view ``mode`` (its module imported now, once)."""
    from importlib import import_module

    module, name = SCREEN_CLASSES[mode]
    return getattr(import_module(f"{__name__}.{module}"), name)


def view_screens() -> dict:
    """Mode name -> a factory of its screen, in key order (Textual's ``MODES`` accepts a
    callable): a view's module is imported when the view is first shown."""
    return {mode: partial(_make_screen, mode) for mode in [m for m, _ in VIEWS] + [m for m, _, _ in LETTER_VIEWS]}


def _make_screen(mode: str):
    return screen_class(mode)()
