"""Typed modal dialogs: error, export, query search, value edit, help.

Each is a ``ModalScreen[T]`` that hands its result to the caller's callback through
``dismiss``; none of them computes anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from .numbers import number_input
from .safe import text as plain_text
from .textual_private import drop_buried_screen

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


class Dialog(ModalScreen):
    """A modal that dismisses itself only while it is the screen shown: a dismiss that arrives
    after a mode switch or another dialog came on top (a fast key burst) closes this dialog
    where it is instead of popping whatever screen is current."""

    def dismiss(self, result=None) -> AwaitComplete:
        return safe_dismiss(self, result, super().dismiss)


def safe_dismiss(screen: ModalScreen, result, dismiss) -> AwaitComplete:
    app = screen.app
    if screen is app.screen:
        return dismiss(result)
    gone = drop_buried_screen(app, screen)  # a dialog left behind under another screen: dropped, no callback
    if gone is not None:
        async def wait_gone() -> None:
            await gone

        return AwaitComplete(wait_gone()).call_next(app)

    async def nothing() -> None:
        return None

    return AwaitComplete(nothing()).call_next(app)


# ----------------------------------------------------------------------------- paths


def check_input_path(path: str) -> str | None:
    """Why ``path`` cannot be opened as an input file (None when it can): missing, a
    directory, not a regular file (a FIFO or a device would block or never end), unreadable."""
    if not path.strip():
        return "give a path"
    p = os.path.expanduser(path.strip())
    if not os.path.exists(p):
        return f"{path}: no such file"
    if os.path.isdir(p):
        return f"{path}: is a directory"
    import stat

    if not stat.S_ISREG(os.stat(p).st_mode):
        return f"{path}: not a regular file (a FIFO or a device is not read here)"
    if not os.access(p, os.R_OK):
        return f"{path}: permission denied"
    return None


#: The characters of a download's name: textual-serve sends it unquoted in the
#: Content-Disposition header, where only a token (RFC 6266) is read back whole.
DOWNLOAD_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def check_download_name(name: str) -> str | None:
    """Why ``name`` cannot name a browser download (None when it can): letters, digits,
    '.', '_' and '-', not starting with a dot."""
    if not name:
        return "give a file name"
    bad = sorted(set(name) - DOWNLOAD_NAME_CHARS)
    if bad or name.startswith("."):
        shown = " ".join(repr(c) for c in bad) if bad else "a leading '.'"
        return f"{name}: a download's name takes letters, digits, '.', '_' and '-' (not {shown})"
    return None


def check_output_path(path: str) -> str | None:
    """Why ``path`` cannot be written (None when it can), by the command line's one rule
    (``kernel.report.output.check_output_path``): a symbolic link is written through, a
    FIFO or character device (``/dev/null``) in place; a missing or unwritable folder, a
    directory, a block device or a socket is refused."""
    from ..kernel.errors import InputError
    from ..kernel.report.output import check_output_path as check_output

    if not path.strip():
        return "give a path"
    p = os.path.expanduser(path.strip())
    try:
        check_output(p, [])
    except InputError as exc:
        return f"{path}: {exc.detail}"
    return None


def path_matches(text: str, limit: int = 200) -> list[str]:
    """Entries of the folder of ``text`` whose name starts with its last part (folders end in
    ``/``; hidden entries only when the part starts with a dot), sorted."""
    expanded = os.path.expanduser(text)
    folder, part = os.path.split(expanded)
    try:
        names = sorted(os.listdir(folder or "."))
    except OSError:
        return []
    out = []
    for name in names:
        if not name.startswith(part) or (name.startswith(".") and not part.startswith(".")):
            continue
        full = os.path.join(folder, name)
        shown = os.path.join(os.path.split(text)[0], name)
        out.append(shown + ("/" if os.path.isdir(full) else ""))
        if len(out) >= limit:
            break
    return out


def complete_path(text: str) -> str:
    """``text`` extended by the longest prefix its matches share (Tab in a path field)."""
    matches = path_matches(text)
    if not matches:
        return text
    common = os.path.commonprefix(matches)
    return common if len(common) > len(text) else text


class PathSuggester(Suggester):
    """Suggests the completion of a path as you type (→ accepts it)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        matches = path_matches(value, limit=2)
        return matches[0] if len(matches) == 1 and matches[0] != value else None


class ErrorDialog(Dialog):
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
    ("this view's figure (.vl.json; .svg .pdf .png need rankscope[plots])", "figure"),
]


def export_choices() -> list:
    """The prompts as plain text: a Select reads a str prompt as markup, which would
    swallow "[plots]"."""
    return [(plain_text(label), value) for label, value in EXPORT_FORMATS]
_SUFFIX = {"json": ".json", "markdown": ".md", "latex": ".tex", "text": ".txt", "csv": ".csv", "figure": ".vl.json"}


@dataclass(frozen=True)
class ExportRequest:
    path: str
    format: str


class ExportDialog(Dialog):
    """Asks where and in which format to write the report."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ExportDialog")

    def __init__(self, default_path: str = "report.json", fmt: str = "json", *, download: bool = False) -> None:
        """``download``: the dashboard is served in a browser, which downloads the export under
        the name given here (nothing is written on the server's disk)."""
        super().__init__()
        self.default_path, self.default_format, self.download = default_path, fmt, download

    def compose(self) -> ComposeResult:
        how = "Downloaded by the browser" if self.download else "Written atomically"
        with Vertical():
            yield Label("Export the report", classes="dialog-title")
            yield Label("File name (the browser downloads it)" if self.download else "Path")
            yield Input(self.default_path, id="export-path", placeholder="report.json",
                        suggester=None if self.download else PathSuggester())
            yield Static("", id="export-problem", classes="dialog-problem", markup=False)
            yield Label("Format")
            yield Select(export_choices(), value=self.default_format, allow_blank=False, id="export-format")
            yield Static(f"{how}: the report of the loaded settings (command-line flags), byte for byte "
                         "what `evaluate --out` writes; what you changed here (RRF k, edited rules, the fit on test) "
                         "follows in a separate block labelled exploratory.", classes="dialog-note")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Export", variant="primary", id="export")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
                Binding("tab", "complete", "Complete path", id="dialog.complete", priority=True)]

    def action_complete(self) -> None:
        """Tab in the path field completes the path; with nothing to complete (the path is
        whole, or matches nothing) it moves on to the next field, as Tab does elsewhere."""
        inp = self.query_one("#export-path", Input)
        if self.focused is inp and not self.download:
            done = complete_path(inp.value)
            if done != inp.value:
                inp.value = done
                inp.cursor_position = len(inp.value)
                return
        self.focus_next()

    @on(Select.Changed, "#export-format")
    def _format_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#export-path", Input)
        value = path.value
        old = next((x for x in sorted(_SUFFIX.values(), key=len, reverse=True) if value.endswith(x)), None)
        if old is not None:
            path.value = value[: -len(old)] + _SUFFIX[str(event.value)]

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export")
    def _submit(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        if self.download:  # a name for the browser's download: the server's folders do not matter
            path = os.path.basename(path)
            problem = check_download_name(path)
        else:
            problem = check_output_path(path)
        self.query_one("#export-problem", Static).update(problem or "")
        if problem:
            return
        if not self.download:
            path = os.path.expanduser(path)
        self.dismiss(ExportRequest(path, str(self.query_one("#export-format", Select).value)))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


OPEN_KINDS = [
    ("lane (a run to add)", "lane"),
    ("lane (replaces every lane)", "lanes"),
    ("qrels (replaces the judgments)", "qrels"),
    ("strata (a stratification to add)", "strata"),
    ("query texts (replaces --queries)", "queries"),
    ("doc texts (replaces --docs)", "docs"),
    ("corpus (replaces --corpus)", "corpus"),
]
#: The kinds an ir_datasets id (``irds:DATASET``) may stand for instead of a path.
DATASET_KINDS = ("qrels", "queries", "docs")


@dataclass(frozen=True)
class OpenRequest:
    kind: str  # one of OPEN_KINDS' values
    path: str


class OpenDialog(Dialog):
    """Open a file from inside the dashboard: what it is, and its path (Tab completes, the
    matches are listed, the path is checked before the dialog closes)."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="OpenDialog") + """
    OpenDialog #open-matches { height: auto; max-height: 8; color: $text-muted; }
    OpenDialog #open-problem { color: $error; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
                Binding("tab", "complete", "Complete path", id="dialog.complete", priority=True)]

    def __init__(self, kind: str = "lane", path: str = "") -> None:
        super().__init__()
        self.kind, self.initial = kind, path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Open a file (reloads the dashboard)", classes="dialog-title")
            yield Label("What it is")
            yield Select(OPEN_KINDS, value=self.kind, allow_blank=False, id="open-kind")
            yield Label("Path (Tab completes; irds:DATASET for qrels or texts from ir_datasets)")
            yield Input(self.initial, id="open-path", placeholder="path/to/file", suggester=PathSuggester())
            yield Static("", id="open-problem", markup=False)
            yield Static("", id="open-matches", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Open", variant="primary", id="open")

    def on_mount(self) -> None:
        self.query_one("#open-path", Input).focus()

    def action_complete(self) -> None:
        inp = self.query_one("#open-path", Input)
        if self.focused is not inp:
            self.focus_next()
            return
        done = complete_path(inp.value)
        if done == inp.value and inp.value:  # nothing to complete: Tab moves on, as elsewhere
            self.focus_next()
            return
        inp.value = done
        inp.cursor_position = len(inp.value)
        self._show_matches(inp.value)

    def _show_matches(self, text: str) -> None:
        matches = path_matches(text, limit=9)
        shown = "\n".join(matches[:8]) + ("\n…" if len(matches) > 8 else "")
        self.query_one("#open-matches", Static).update(shown)

    @on(Input.Changed, "#open-path")
    def _changed(self, event: Input.Changed) -> None:
        self.query_one("#open-problem", Static).update("")
        self._show_matches(event.value)

    @on(Input.Submitted, "#open-path")
    @on(Button.Pressed, "#open")
    def _submit(self) -> None:
        from ..kernel.inputs.irds import is_dataset

        path = self.query_one("#open-path", Input).value.strip()
        kind = str(self.query_one("#open-kind", Select).value)
        if is_dataset(path) and kind in DATASET_KINDS:  # read by ir_datasets id: the loading names any problem
            self.dismiss(OpenRequest(kind, path))
            return
        problem = check_input_path(path)
        self.query_one("#open-problem", Static).update(problem or "")
        if problem:
            return
        self.dismiss(OpenRequest(kind, os.path.expanduser(path)))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class SearchDialog(Dialog):
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
        ol.add_options([Option(plain_text(label), id=qid) for qid, label in results])  # query texts are data, not markup
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


class ValueDialog(Dialog):
    """Edit one number (a verdict threshold, a target FPIR)."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ValueDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, value: float | None) -> None:
        super().__init__()
        self.title_text, self.value = title, value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="dialog-title")
            yield number_input("" if self.value is None else repr(self.value), id="value-input")
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


class HelpScreen(Dialog):
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
        from textual.widgets import Markdown  # imported when help is first shown (markdown-it: ~50 ms)

        with Vertical():
            with VerticalScroll():
                yield Markdown(self.markdown)

    def action_close(self) -> None:
        self.dismiss(None)
