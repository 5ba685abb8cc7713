"""Tables: plain-text cells, and query lists whose row keys are qids (Enter drills down)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from .safe import text as _plain


class PlainTable(DataTable):
    """A DataTable whose string cells are plain text (doc ids and query texts are data, not markup)."""

    def add_column(self, label: str | Text, *, width: int | None = None, key: str | None = None,
                   default: Any = None) -> Any:
        """A column whose label (a lane name, a metric) is plain text too."""
        return super().add_column(_plain(label) if isinstance(label, str) else label, width=width, key=key,
                                  default=default)

    def add_row(self, *cells, **kw):
        return super().add_row(*[_plain(c) if isinstance(c, str) else c for c in cells], **kw)

    def fill(self, columns: list[str], rows: Sequence[tuple[Sequence[Any], str | None]]) -> None:
        """Clear and refill: ``rows`` are (cells, row key). Each column gets a fixed width (its
        widest cell), so a frame drawn before the table measures its new rows cannot keep
        the old widths and cut the new cells."""
        self.clear(columns=True)
        cells = [[_plain(c) if isinstance(c, str) else c for c in row] for row, _ in rows]
        for i, name in enumerate(columns):
            self.add_column(name, width=max([Text(name).cell_len] + [row[i].cell_len for row in cells]))
        for row, (_, key) in zip(cells, rows):
            super().add_row(*row, key=key)


def tie_marks(scores: Sequence[float], cutoffs: Sequence[int] = ()) -> list[str]:
    """Per place of a ranked list (scores in rank order): its tie group's mark (``┬ 1``,
    ``│ 1``, ``└ 1``; '' off any group; groups numbered down the list) and ``✂k`` where an
    @k cutoff falls inside the group right after the place. The groups and the straddle
    test are the kernel's (``measures.ties``: ``tie_groups``, ``straddles``)."""
    from ..kernel.measures.ties import straddles, tie_groups

    marks = [""] * len(scores)
    for number, (s, e) in enumerate(tie_groups(scores), start=1):
        for i in range(s, e):
            marks[i] = f"{'┬' if i == s else ('└' if i == e - 1 else '│')} {number}"
        for k in cutoffs:
            if straddles([(s, e)], k):
                marks[k - 1] += f" ✂{k}"
    return marks


class QidTable(PlainTable):
    """A row-cursor table whose row keys are qids: Enter drills into that query."""

    DEFAULT_CSS = """
    QidTable { height: 1fr; }
    """

    def __init__(self, **kw) -> None:
        kw.setdefault("cursor_type", "row")
        kw.setdefault("zebra_stripes", True)
        super().__init__(**kw)
