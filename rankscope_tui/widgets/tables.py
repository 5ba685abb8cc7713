"""Tables: plain-text cells, and query lists whose row keys are qids (Enter drills down)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable


class PlainTable(DataTable):
    """A DataTable whose string cells are plain text (doc ids and query texts are data, not markup)."""

    def add_row(self, *cells, **kw):
        return super().add_row(*[Text(c) if isinstance(c, str) else c for c in cells], **kw)


class QidTable(PlainTable):
    """A row-cursor table whose row keys are qids: Enter drills into that query."""

    DEFAULT_CSS = """
    QidTable { height: 1fr; }
    """

    def __init__(self, **kw) -> None:
        kw.setdefault("cursor_type", "row")
        kw.setdefault("zebra_stripes", True)
        super().__init__(**kw)
