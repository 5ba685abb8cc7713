"""Tables: plain-text cells, and query lists whose row keys are qids (Enter drills down)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from .safe import text as _plain

#: Rows a table adds per event-loop turn when it is filled in steps (:meth:`PlainTable.fill_in_steps`):
#: adding and measuring a few hundred rows takes a few milliseconds; thousands at once froze
#: the screen for most of a second (and measuring 250 at once took up to 70 ms on a busy machine).
STEP_ROWS = 100


@dataclass(frozen=True)
class Filling:
    """A table's content made ready away from the event loop (:func:`prepare`): column
    labels with their widths (each column's widest cell) and rows of plain-text cells with
    their keys."""

    columns: tuple[tuple[Text, int], ...]
    rows: tuple[tuple[tuple[Any, ...], str | None], ...]


def prepare(columns: list[str], rows: Sequence[tuple[Sequence[Any], str | None]]) -> Filling:
    """:class:`Filling` of ``columns`` and ``rows`` ((cells, row key)): string cells as plain
    text. Touches no widget: a worker thread may call it."""
    cells = [tuple(_plain(c) if isinstance(c, str) else c for c in row) for row, _ in rows]
    labels = [_plain(name) for name in columns]
    widths = [max([labels[i].cell_len] + [row[i].cell_len for row in cells]) for i in range(len(columns))]
    return Filling(tuple(zip(labels, widths)), tuple(zip(cells, (key for _, key in rows))))


class PlainTable(DataTable):
    """A DataTable whose string cells are plain text (doc ids and query texts are data, not markup)."""

    _filling_turn = 0  # which fill_in_steps call is current (a newer one stops an older one's steps)
    filling = False  # rows of a fill_in_steps call still to add

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

    def fill_in_steps(self, filling: Filling, step: int = STEP_ROWS) -> None:
        """Clear and refill with ``filling`` (:func:`prepare`): the columns and the first
        ``step`` rows now, the rest ``step`` rows per event-loop turn (each turn also lets the
        table measure its new rows), so a long table never holds the screen still. A later
        fill (or :meth:`fill`) stops the remaining steps of this one."""
        self.clear(columns=True)  # (a new turn: the steps of an earlier fill stop)
        turn = self._filling_turn
        for label, width in filling.columns:
            super().add_column(label, width=width)
        self._add_step(turn, filling, 0, step)

    def _add_step(self, turn: int, filling: Filling, start: int, step: int) -> None:
        if turn != self._filling_turn or not self.is_mounted:
            return
        for row, key in filling.rows[start:start + step]:
            super().add_row(*row, key=key)
        self.filling = start + step < len(filling.rows)
        if self.filling:
            self.call_after_refresh(self._add_step, turn, filling, start + step, step)

    def stop_filling(self) -> None:
        """End the remaining steps of a :meth:`fill_in_steps` and keep the rows added so far
        (the rows still to come describe a choice that has moved on)."""
        self._filling_turn += 1
        self.filling = False

    def clear(self, columns: bool = False) -> Any:
        self._filling_turn += 1  # a clear ends the steps of an earlier fill_in_steps
        self.filling = False
        return super().clear(columns=columns)


class QidTable(PlainTable):
    """A row-cursor table whose row keys are qids: Enter drills into that query."""

    DEFAULT_CSS = """
    QidTable { height: 1fr; }
    """

    def __init__(self, **kw) -> None:
        kw.setdefault("cursor_type", "row")
        kw.setdefault("zebra_stripes", True)
        super().__init__(**kw)
