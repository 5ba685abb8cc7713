"""The base of every view: header, the view bar, footer, data refresh and worker errors."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState

from ..state import DashboardOptions, DashboardState
from ..widgets.footer import ViewFooter
from ..widgets.textual_private import TunedApp, adopt_current_styles, styles_current
from ..widgets.viewbar import ViewBar
from . import VIEW_KEYS, VIEWS, view_title


class DashboardApp(TunedApp):
    """What the views ask of the dashboard app (``app.RankscopeApp`` is one): its state,
    the workspace snapshot the views draw and the actions they reach. The views name this
    class, never the app module; the app sets these attributes and defines these methods."""

    data_version: reactive[int] = reactive(0, init=False)  # counted up when the workspace changes
    report_version: reactive[int] = reactive(0, init=False)  # counted up when the report (or its error) arrives
    qid: reactive[str | None] = reactive(None, init=False)  # the query the drill-down shows

    state: DashboardState
    ws: Any  # the base workspace's snapshot (kernel ``Workspace``), None until loaded
    lane_names: list[str]
    input_lane_names: list[str]
    previous_mode: str
    show_error: Callable[..., None]  # (exception or text, title="Error"): the error dialog
    update_busy: Callable[[], None]  # the view bar's "⟳ what is running"
    open_query: Callable[[str], None]  # drill into one query
    set_rrf_k: Callable[[int], None]  # move the RRF slider (and show the RRF view)
    search_queries: Callable[..., list[tuple[str, str]]]  # (qid, label) of the queries matching a text
    action_export: Callable[[], None]  # the export dialog
    action_search: Callable[[], None]  # the query search dialog
    action_open: Callable[[], None]  # the open-file dialog


def guarded(method):
    """For handlers that receive worker results on the event loop: an exception shows the
    error dialog instead of ending the app."""

    @functools.wraps(method)
    def wrapper(self, *a, **kw):
        try:
            return method(self, *a, **kw)
        except Exception as exc:
            self.log.error(f"{method.__name__} failed: {exc!r}")
            self.app.show_error(exc)

    return wrapper


class ViewScreen(Screen):
    """A top-level view. Subclasses implement ``compose_body`` and ``refresh_view``."""

    VIEW = "overview"
    HELP = ""
    # the layout follows the terminal: below 110 columns or 32 rows every view stacks its
    # panes (``-narrow`` / ``-short`` in app.tcss) and scrolls; from 180×55 it uses the room
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-normal"), (180, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-mid"), (55, "-tall")]

    @property
    def figure_metric(self) -> str | None:
        """The metric this view shows (its picker's), drawn by its exported figure; None
        for a view without a metric picker."""
        return None

    NARROW = 110  # columns: below this the panes stack (the -narrow breakpoint)
    # (numbers pane id, figure pane id) of a view whose figure is drawn left of its numbers:
    # stacked on a narrow screen, the numbers come first (on screen at 80×24, the figure below)
    NUMBERS_FIRST: tuple[str, str] | None = None

    if TYPE_CHECKING:  # the views run inside the dashboard app
        app: DashboardApp

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        adopt_current_styles(self)  # the first show skips a re-parse (see there)
        self._stale = True
        self._draws_pending = 0  # parts drawn in a later frame (``draw_after_refresh``)
        self.narrow = False
        self.title = f"{VIEW_KEYS[self.VIEW]} {view_title(self.VIEW)}"

    def compose(self) -> ComposeResult:
        yield Header(icon="◎")
        keymap = dict(getattr(getattr(self.app, "state", None), "keymap", ()))
        yield ViewBar(VIEWS, self.VIEW, id="viewbar", keymap=keymap)
        yield from self.compose_body()
        yield ViewFooter()

    def compose_body(self) -> ComposeResult:
        yield Static()

    # ------------------------------------------------------------------ data

    @property
    def ws(self) -> Any:
        return self.app.ws

    @property
    def state(self) -> DashboardState:
        """The dashboard's state."""
        return self.app.state

    @property
    def options(self) -> DashboardOptions:
        """The options the dashboard was started with (``DashboardOptions``)."""
        return self.app.state.options

    @property
    def report(self) -> dict | None:
        return self.app.state.report

    def on_mount(self) -> None:
        self._order_panes()  # a first Resize before the mount left the order as composed
        self.watch(self.app, "data_version", self._data_changed, init=False)
        self.watch(self.app, "report_version", self._data_changed, init=False)
        self.draw_after_refresh(self._refresh_if_stale)

    def draw_after_refresh(self, callback, *args) -> None:
        """Draw a part of the view in the frame after this one (the numbers first, the long
        lists after them), counted in ``drawing`` until it has run."""
        self._draws_pending += 1

        def run() -> None:
            self._draws_pending -= 1
            callback(*args)

        self.call_after_refresh(run)

    @property
    def drawing(self) -> bool:
        """True while a part of this view waits for a later frame (or its data is not drawn
        yet): a picture of the view taken now would be of a view mid-way."""
        return self._draws_pending > 0 or (self._stale and self.is_current)

    def on_screen_resume(self, event) -> None:
        """A revisit keeps the view's styles (this runs before Textual's own handler, which
        reads ``refresh_styles``): Textual restyles every widget of a resumed screen, which
        also drops every table's and plot's rendered lines, so a revisit re-rendered the
        whole view. Returning from an opaque screen Textual itself skips that
        (``pop_screen``); a view left for another view is the same case. Styles are
        refreshed as before when they were invalidated meanwhile (a theme change counts up
        ``_css_update_count``) or the view was never drawn with its data."""
        if styles_current(self) and self.is_mounted and not self._stale:
            event.refresh_styles = False
        self._refresh_if_stale()
        self.app.update_busy()

    def on_resize(self, event) -> None:
        narrow = event.size.width < self.NARROW
        if narrow != self.narrow:
            self.narrow = narrow
            self._order_panes()
            if not self._stale and self.is_mounted:
                try:
                    self.layout_changed()
                except Exception as exc:
                    self.log.error(f"layout_changed failed: {exc!r}")
                    self.app.show_error(exc)

    def _order_panes(self) -> None:
        """Narrow: the numbers pane before the figure pane; wide: the figure on the left."""
        if self.NUMBERS_FIRST is None or not self.is_mounted:
            return
        from textual.widget import Widget

        numbers, figure = (self.query_one(f"#{i}") for i in self.NUMBERS_FIRST)
        parent = numbers.parent
        if not isinstance(parent, Widget) or figure.parent is not parent:
            return
        order = list(parent.children)
        if self.narrow and order.index(numbers) > order.index(figure):
            parent.move_child(numbers, before=figure)
        elif not self.narrow and order.index(numbers) < order.index(figure):
            parent.move_child(numbers, after=figure)

    def layout_changed(self) -> None:
        """Hook: the terminal crossed the narrow breakpoint (``self.narrow``); redraw what
        a narrow screen shows differently (CSS does the rest)."""

    def _data_changed(self, _value=None) -> None:
        self._stale = True
        if self.is_current:
            self._refresh_if_stale()

    def _refresh_if_stale(self) -> None:
        if not self._stale or not self.is_mounted:
            return
        self._stale = False
        try:
            self.refresh_view()
        except Exception as exc:  # a rendering bug or an unexpected kernel shape: show it, keep running
            self.log.error(f"refresh_view failed: {exc!r}")
            self.app.show_error(exc)

    def refresh_view(self) -> None:
        """Ask the kernel and render. Called when data or the report arrive and on first show."""

    # ------------------------------------------------------------------ workers and drill-down

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.app.show_error(event.worker.error)
            self.worker_failed(event.worker)
        self.app.update_busy()

    def worker_failed(self, worker: Worker) -> None:
        """Hook: undo a loading state after a worker raised."""

    @on(DataTable.RowSelected, "QidTable")
    def _drill(self, event: DataTable.RowSelected) -> None:
        key = getattr(event.row_key, "value", None)
        if key is not None and not str(key).startswith("\0"):
            event.stop()
            self.app.open_query(str(key))

    def waiting(self, what: str) -> str:
        if self.state.report_error is not None and ("report" in what or self.state.base_workspace is None):
            return f"The report could not be computed:\n{self.state.error_wording}"
        return f"⟳ {what}…"


def parse_optional_number(text: str, kind=float):
    """'' → None; a number → kind(number); anything else raises ValueError."""
    text = (text or "").strip()
    if not text:
        return None
    return kind(text)
