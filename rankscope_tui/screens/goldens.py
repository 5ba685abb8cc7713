"""0 Goldens: every reference case computed live by the kernel and by the independent
implementation installed beside it, side by side, with each disagreement marked (lesson 14)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Label, Static

from ..widgets.safe import escape
from ..widgets.tables import PlainTable
from .base import ViewScreen, guarded

if TYPE_CHECKING:
    from ..kernel.instruments.goldens import GoldenRow, GoldensSideBySide

AGREE, DISAGREE = "✓", "✗"
NARROW_LABEL = 16  # the measure column's width below the narrow breakpoint (the detail line has it whole)


def answer_cell(answer: Any, position: int | None) -> str:
    """One answer in a table cell: a number as itself (10 significant digits, enough to
    show a difference beyond 1e-9 on values near 1), a list as its entry at ``position``
    (the first differing one; else the first) after ``[index/length]``, ``undefined``
    where the file writes null."""
    if isinstance(answer, list):
        if not answer:
            return "[] (empty)"
        i = position if position is not None and position < len(answer) else 0
        return f"[{i}/{len(answer)}] {answer_cell(answer[i], None)}"
    if answer is None:
        return "undefined"
    if isinstance(answer, str):  # "inf" / "-inf", as the file writes them
        return {"inf": "+∞", "-inf": "−∞"}.get(answer, answer)
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return str(answer)
    if isinstance(answer, int):
        return str(answer)
    return f"{answer:.10g}" if math.isfinite(answer) else str(answer)


def _whole(answer: Any, limit: int = 240) -> str:
    text = "undefined" if answer is None else json.dumps(answer, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GoldensScreen(ViewScreen):
    VIEW = "goldens"
    HELP = """# 0 Goldens

**Lesson 14: a number is trusted when two implementations agree on it.** `rankscope
goldens` writes the reference vectors (`goldens/reference.txt`): one case a line, a
kind, its arguments and the answer. This view computes every case now, twice: once
through the kernel and once through `goldens_reference`, a second implementation
installed with rankscope that imports nothing of it (plain Python over `math`,
`fractions`, `json`; numpy only for the resampling streams the spec defines).

A case agrees (✓) when both answers have the same shape and every number is within
1e-9 (nulls and infinities equal); otherwise ✗, with the first differing entry of a
list answer shown in both columns. The case column is the line the case has in the
file `rankscope goldens` writes. `d` shows only the disagreements, `r` computes again.
"""
    BINDINGS = [
        Binding("d", "toggle_disagreements", "Only ✗", id="goldens.only_disagreements",
                tooltip="Show only the cases where the two implementations disagree (or all)"),
        Binding("r", "recompute", "Recompute", id="goldens.recompute", tooltip="Compute every case again, both ways"),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.result: GoldensSideBySide | None = None
        self.only_disagreements = False

    def compose_body(self) -> ComposeResult:
        with Vertical(id="gd-main"):
            yield Static("⟳ computing every golden case with both implementations…", id="gd-summary", classes="panel")
            yield Label("Cases: kernel against the independent implementation", id="gd-title", classes="section-title")
            yield PlainTable(id="gd-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="gd-detail", classes="caption")

    # ------------------------------------------------------------------ computing

    def refresh_view(self) -> None:
        """The goldens need no inputs: computed once, on the first show (``r`` again)."""
        if self.result is None:
            self.compute()

    @work(thread=True, exclusive=True, group="goldens", exit_on_error=False,
          description="computing the goldens both ways")
    def compute(self) -> None:
        from ..kernel import goldens_side_by_side

        result = goldens_side_by_side()
        self.app.call_from_thread(self._computed, result)

    def worker_failed(self, worker) -> None:
        self.query_one("#gd-summary", Static).update("The goldens could not be computed (see the error).")

    @guarded
    def _computed(self, result: GoldensSideBySide) -> None:
        self.result = result
        self._draw_result()

    # ------------------------------------------------------------------ rendering

    def _draw_result(self) -> None:
        result = self.result
        if result is None:
            return
        bad = result.disagreeing
        mark = DISAGREE if bad else AGREE
        self.query_one("#gd-summary", Static).update(
            f"[b]{mark}[/] {escape(result.summary)}\n"
            f"{len(result.rows) - len(bad)} {AGREE} · {len(bad)} {DISAGREE} · kernel: instruments/goldens.py · "
            f"reference: instruments/goldens_reference.py")
        rows = bad if self.only_disagreements else result.rows
        table = self.query_one("#gd-table", PlainTable)
        table.fill(["line", "agree", "measure", "kernel", "reference"],
                   [(self._cells(r, self.narrow), str(r.line)) for r in rows])
        shown = "disagreements only (d: all)" if self.only_disagreements else "all cases (d: disagreements only)"
        self.query_one("#gd-title", Label).update(f"{len(rows)} cases, {shown}; line = the case's line in goldens/reference.txt")
        self._detail(rows[0] if rows else None)

    @staticmethod
    def _cells(r: GoldenRow, narrow: bool = False) -> list[str]:
        label = r.label if not narrow or len(r.label) <= NARROW_LABEL else r.label[: NARROW_LABEL - 1] + "…"
        return [str(r.line), AGREE if r.agree else DISAGREE, label, answer_cell(r.kernel, r.position),
                answer_cell(r.reference, r.position)]

    def layout_changed(self) -> None:
        """Across the narrow breakpoint the measure column is cut (or whole again)."""
        self._draw_result()

    def _detail(self, row: GoldenRow | None) -> None:
        detail = self.query_one("#gd-detail", Static)
        if row is None:
            detail.update("no case disagrees" if self.only_disagreements else "")
            return
        why = "agree within 1e-9" if row.agree else row.problem or ""
        # one escape per line: a line break is a control character ``escape`` would show
        detail.update("\n".join(escape(line) for line in (
            f"line {row.line} {row.label}: {why}", f"kernel    {_whole(row.kernel)}", f"reference {_whole(row.reference)}")))

    @on(DataTable.RowHighlighted, "#gd-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = getattr(event.row_key, "value", None)
        if self.result is None or key is None:
            return
        row = next((r for r in self.result.rows if str(r.line) == key), None)
        self._detail(row)

    # ------------------------------------------------------------------ keys

    def action_toggle_disagreements(self) -> None:
        self.only_disagreements = not self.only_disagreements
        self._draw_result()

    def action_recompute(self) -> None:
        self.query_one("#gd-summary", Static).update("⟳ computing every golden case with both implementations…")
        self.compute()
