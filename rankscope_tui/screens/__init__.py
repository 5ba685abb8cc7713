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
