"""Long tables filled a few hundred rows per event-loop turn (``PlainTable.fill_in_steps``):
the first step is there at once, the rest arrives in order, a later fill stops an earlier
one's steps, and markup in a cell stays text. Oracle: the rows handed in (hand-made)."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from rankscope_tui.widgets.tables import QidTable, prepare


class _Host(App):
    def compose(self) -> ComposeResult:
        yield QidTable(id="t")


def _rows(n: int, tag: str) -> list:
    return [([f"q{i}", f"{tag}{i}", "[b]x[/b]"], f"q{i}") for i in range(n)]


async def _until_filled(table: QidTable, pilot) -> None:
    for _ in range(500):
        if not table.filling:
            return
        await pilot.pause()
    raise AssertionError("the table's steps never ended")


def _shown(table: QidTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_a_long_table_arrives_in_steps_in_order():
    app = _Host()
    async with app.run_test() as pilot:
        table = app.query_one(QidTable)
        rows = _rows(1000, "a")
        table.fill_in_steps(prepare(["qid", "value", "note"], rows), step=100)
        assert table.row_count == 100 and table.filling  # the first step at once, the rest later
        await _until_filled(table, pilot)
        assert _shown(table) == [cells for cells, _ in rows]  # markup kept as text: "[b]x[/b]"
        assert [r.value for r in table.rows] == [key for _, key in rows]
        assert [c.width for c in table.columns.values()] == [4, 5, 8]  # the widest cell of each column


async def test_a_later_fill_stops_the_earlier_steps():
    app = _Host()
    async with app.run_test() as pilot:
        table = app.query_one(QidTable)
        table.fill_in_steps(prepare(["qid", "value", "note"], _rows(2000, "old")), step=100)
        await pilot.pause()
        newer = _rows(300, "new")
        table.fill_in_steps(prepare(["qid", "value", "note"], newer), step=100)
        await _until_filled(table, pilot)
        await asyncio.sleep(0.05)
        await pilot.pause()
        assert _shown(table) == [cells for cells, _ in newer]  # no row of the older fill
        table.fill_in_steps(prepare(["qid", "value", "note"], _rows(2000, "old")), step=100)
        table.fill(["qid"], [(["only"], "only")])  # a plain fill stops the steps too
        await pilot.pause()
        await pilot.pause()
        assert _shown(table) == [["only"]] and not table.filling


async def test_stop_filling_keeps_the_rows_so_far_and_adds_no_more():
    app = _Host()
    async with app.run_test() as pilot:
        table = app.query_one(QidTable)
        rows = _rows(2000, "a")
        table.fill_in_steps(prepare(["qid", "value", "note"], rows), step=100)
        # the first step is added at once, the rest one per frame: stopped before any frame
        # (a pause first let a fast machine add all twenty steps before the stop)
        assert table.row_count == 100 and table.filling
        table.stop_filling()
        kept = table.row_count
        assert kept == 100 and not table.filling
        for _ in range(5):
            await pilot.pause()
        assert table.row_count == kept  # no step after the stop
        assert _shown(table) == [cells for cells, _ in rows[:kept]]  # the rows so far, in order
