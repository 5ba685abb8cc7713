"""One Textual screen per instrument; each is a mode of the app, reached by its number key."""

from __future__ import annotations

VIEWS: list[tuple[str, str]] = [
    ("overview", "Overview"),
    ("strata", "Strata"),
    ("attribution", "Attribution"),
    ("rrf", "RRF"),
    ("calibrate", "Calibrate"),
    ("gate", "Gate"),
    ("compare", "Compare"),
    ("verdicts", "Verdicts"),
    ("query", "Query"),
]


def view_screens() -> dict:
    """Mode name → screen class, in key order."""
    from .attribution import AttributionScreen
    from .calibrate import CalibrateScreen
    from .compare import CompareScreen
    from .gate import GateScreen
    from .overview import OverviewScreen
    from .query import QueryScreen
    from .rrf import RRFScreen
    from .strata import StrataScreen
    from .verdicts import VerdictsScreen

    classes = [OverviewScreen, StrataScreen, AttributionScreen, RRFScreen, CalibrateScreen, GateScreen,
               CompareScreen, VerdictsScreen, QueryScreen]
    return {mode: cls for (mode, _), cls in zip(VIEWS, classes)}
