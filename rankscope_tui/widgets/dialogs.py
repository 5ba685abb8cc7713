"""Typed modal dialogs: error, export, query search, value edit, help.

Each is a ``ModalScreen[T]`` that hands its result to the caller's callback through
``dismiss``; none of them computes anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Markdown, OptionList, Select, Static
from textual.widgets.option_list import Option

_DIALOG_CSS = """
{name} {{
    align: center middle;
    background: $background 60%;
}}
{name} > Vertical {{
    width: 84;
    max-width: 95%;
    height: auto;
    max-height: 90%;
    border: thick $primary 80%;
    background: $surface;
    padding: 1 2;
}}
{name} .dialog-title {{
    text-style: bold;
    width: 1fr;
    margin-bottom: 1;
}}
{name} .dialog-buttons {{
    height: auto;
    width: 1fr;
    align-horizontal: right;
    margin-top: 1;
}}
{name} .dialog-buttons Button {{
    margin-left: 2;
}}
{name} Input {{
    margin-bottom: 1;
}}
"""


class ErrorDialog(ModalScreen[None]):
    """Shows one error line (the CLI's wording); the app keeps running."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ErrorDialog") + """
    ErrorDialog > Vertical { border: thick $error 80%; }
    ErrorDialog #error-message { width: 1fr; color: $text; }
    """
    BINDINGS = [Binding("escape,enter", "close", "Close", id="dialog.close")]

    def __init__(self, message: str, title: str = "Error") -> None:
        super().__init__()
        self.message, self.title_text = message, title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.message, id="error-message", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", variant="error", id="ok")

    AUTO_FOCUS = "#ok"

    @on(Button.Pressed, "#ok")
    def action_close(self) -> None:
        self.dismiss(None)


EXPORT_FORMATS = [
    ("report.json (same as rankscope evaluate --out)", "json"),
    ("markdown tables", "markdown"),
    ("LaTeX tables", "latex"),
    ("plain text", "text"),
    ("per-query CSV (same as --per-query)", "csv"),
]
_SUFFIX = {"json": ".json", "markdown": ".md", "latex": ".tex", "text": ".txt", "csv": ".csv"}


@dataclass(frozen=True)
class ExportRequest:
    path: str
    format: str


class ExportDialog(ModalScreen[ExportRequest | None]):
    """Asks where and in which format to write the report."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ExportDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, default_path: str = "report.json", fmt: str = "json") -> None:
        super().__init__()
        self.default_path, self.default_format = default_path, fmt

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Export the report", classes="dialog-title")
            yield Label("Path")
            yield Input(self.default_path, id="export-path", placeholder="report.json")
            yield Label("Format")
            yield Select(EXPORT_FORMATS, value=self.default_format, allow_blank=False, id="export-format")
            yield Static("Written atomically; the loaded settings (command-line flags), not interactive choices.",
                         classes="dialog-note")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Export", variant="primary", id="export")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @on(Select.Changed, "#export-format")
    def _format_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#export-path", Input)
        stem, dot, ext = path.value.rpartition(".")
        if dot and "." + ext in _SUFFIX.values():
            path.value = stem + _SUFFIX[str(event.value)]

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export")
    def _submit(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        if not path:
            self.notify("give a path", severity="warning")
            return
        self.dismiss(ExportRequest(path, str(self.query_one("#export-format", Select).value)))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class SearchDialog(ModalScreen[str | None]):
    """Find a query by qid or by text; Enter opens it in the drill-down."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="SearchDialog") + """
    SearchDialog OptionList { height: auto; max-height: 20; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, search: Callable[[str], list[tuple[str, str]]], initial: str = "") -> None:
        super().__init__()
        self.search, self.initial = search, initial

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Go to query (qid or words of its text)", classes="dialog-title")
            yield Input(self.initial, id="search-input", placeholder="qid or text")
            yield OptionList(id="search-results")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._fill(self.initial)

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def _fill(self, text: str) -> None:
        results = self.search(text)
        ol = self.query_one(OptionList)
        ol.clear_options()
        ol.add_options([Option(label, id=qid) for qid, label in results])
        if results:
            ol.highlighted = 0

    @on(Input.Submitted, "#search-input")
    def _submit(self) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count and ol.highlighted is not None:
            self.dismiss(ol.get_option_at_index(ol.highlighted).id)
        else:
            self.notify("no query matches", severity="warning")

    @on(OptionList.OptionSelected, "#search-results")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def key_down(self) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count:
            ol.highlighted = min((ol.highlighted or 0) + 1, ol.option_count - 1)

    def key_up(self) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count:
            ol.highlighted = max((ol.highlighted or 0) - 1, 0)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ValueDialog(ModalScreen[float | None]):
    """Edit one number (a verdict threshold, a target FPIR)."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ValueDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, value: float | None) -> None:
        super().__init__()
        self.title_text, self.value = title, value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="dialog-title")
            yield Input("" if self.value is None else repr(self.value), type="number", id="value-input")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Set", variant="primary", id="set")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#set")
    def _submit(self) -> None:
        text = self.query_one(Input).value.strip()
        try:
            self.dismiss(float(text))
        except ValueError:
            self.notify("not a number", severity="error")

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """`?`: what the current view teaches, and its keys."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="HelpScreen") + """
    HelpScreen > Vertical { width: 100; }
    HelpScreen VerticalScroll { height: auto; max-height: 40; }
    """
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="dialog.close")]

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield Markdown(self.markdown)

    def action_close(self) -> None:
        self.dismiss(None)
