"""Number fields stay responsive whatever is pasted (Pilot), and no field of the dashboard
uses Textual's ``type="number"`` / ``type="integer"``, whose character check backtracks
exponentially (26 digits then ``x`` froze the dashboard)."""

from __future__ import annotations

import ast
import time
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input

from rankscope_tui.widgets.numbers import integer_input, number_input

PACKAGE = Path(__file__).resolve().parents[1] / "rankscope_tui"


class Fields(App[None]):
    def compose(self) -> ComposeResult:
        yield number_input("0.05", id="real")
        yield integer_input("", id="whole")


async def test_pasting_forty_digits_then_x_finishes_promptly():
    app = Fields()
    async with app.run_test() as pilot:
        real, whole = app.query_one("#real", Input), app.query_one("#whole", Input)
        for field in (real, whole):
            field.focus()
            field.value = ""
            await pilot.pause()
            start = time.perf_counter()
            field.post_message(events.Paste("1" * 40 + "x"))  # refused whole: x is no digit
            await pilot.press("x")  # and typed after the digits
            await pilot.pause()
            # a hang guard, not a speed target: Textual's number regex took minutes at 26
            # digits and doubles with each digit, so 40 never ends; a busy machine is far below
            assert time.perf_counter() - start < 60.0
            assert field.type == "text"  # not Textual's regex-validated type="number"/"integer"
            assert field.value == ""
            field.post_message(events.Paste("1" * 40))
            await pilot.pause()
            assert field.value == "1" * 40
            await pilot.press("x")
            await pilot.pause()
            assert field.value == "1" * 40  # the x is refused
            assert time.perf_counter() - start < 60.0


async def test_number_fields_are_marked_invalid_until_they_parse():
    app = Fields()
    async with app.run_test() as pilot:
        real = app.query_one("#real", Input)
        real.focus()
        real.value = ""
        await pilot.press(*"1e")
        await pilot.pause()
        assert real.value == "1e" and real.has_class("-invalid")  # the exponent's digits are still to come
        await pilot.press("5")
        await pilot.pause()
        assert float(real.value) == 100000.0 and not real.has_class("-invalid")
        whole = app.query_one("#whole", Input)
        whole.focus()
        await pilot.press(*"2.5")  # the point is no integer character
        await pilot.pause()
        assert whole.value == "25"


def test_no_field_uses_textuals_number_types():
    """No call in the package passes ``type="number"`` or ``type="integer"`` (read from the
    source's syntax tree: a docstring that names them is no call)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "type" and isinstance(kw.value, ast.Constant) and kw.value.value in ("number", "integer"):
                        found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not found, found


def test_the_check_finds_such_a_call(tmp_path):
    tree = ast.parse('Input("1", type="integer")')
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    assert [kw.value.value for kw in call.keywords if kw.arg == "type"] == ["integer"]
