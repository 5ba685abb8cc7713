"""Every use of Textual's private names, in one module.

The dashboard tunes Textual in a few places its public API does not reach: start-up time
(restyling and re-parsing it can skip), keys that arrive while it quits, dialogs left under
another view by a fast key burst, and a command palette closed while its search runs. Each
such use is here, with why; the rest of the package uses only these helpers.

:data:`PRIVATE_NAMES` lists every private name this module touches (the class that owns
it, the name, and whether it lives on the class or is set on each instance);
``tests/test_textual_private.py`` checks each against the installed Textual, so an
upgrade that removes or renames one fails there, naming it, before any view misbehaves.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Iterable
from typing import Any, cast

from rich.align import Align
from rich.text import Text
from textual import work
from textual._xterm_parser import XTermParser  # the terminal input parser the drivers make
from textual.app import App, ScreenError
from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.drivers.linux_driver import LinuxDriver
from textual.keys import _get_unicode_name_from_key  # a key's Unicode name: how a terminal sends it
from textual.screen import Screen
from textual.widgets._footer import FooterKey  # the footer's key widget: Textual exports only Footer
from textual.widgets._select import SelectOverlay  # an open Select's list: Textual exports only Select
from textual.widgets.option_list import Option

__all__ = [
    "PRIVATE_NAMES", "FooterKey", "GuardedCommandPalette", "PasteSafeParser", "guard_paste_end", "input_parser_state",
    "HangupSafeDriver", "SelectOverlay", "TunedApp", "adopt_current_styles",
    "drop_buried_screen", "is_data_bound", "is_exiting", "screen_stacks", "styles_current", "unicode_name_of_key",
]

#: (owner, name, "class" | "instance"): every private name used below. "instance" names are
#: set in the owner's ``__init__``; the test makes an instance to find them.
PRIVATE_NAMES: tuple[tuple[str, str, str], ...] = (
    ("textual.app.App", "_screen_stacks", "instance"),
    ("textual.app.App", "_exit", "instance"),
    ("textual.app.App", "_css_update_count", "instance"),
    ("textual.app.App", "_check_bindings", "class"),
    ("textual.app.App", "_replace_screen", "class"),
    ("textual.screen.Screen", "_css_update_count", "instance"),
    ("textual.screen.Screen", "_refresh_layout", "class"),
    ("textual.screen.Screen", "_pop_result_callback", "class"),
    ("textual.css.stylesheet.Stylesheet", "_variables", "instance"),
    ("textual.dom.DOMNode", "_reactive_connect", "instance"),
    ("textual.message_pump.MessagePump", "_on_message", "class"),
    ("textual.command.CommandPalette", "_GATHER_COMMANDS_GROUP", "class"),
    ("textual.command.CommandPalette", "_NO_MATCHES", "class"),
    ("textual.command.CommandPalette", "_NO_MATCHES_COUNTDOWN", "class"),
    ("textual.command.CommandPalette", "_gather_commands", "class"),
    ("textual.command.CommandPalette", "_start_no_matches_countdown", "class"),
    ("textual.command.CommandPalette", "_stop_no_matches_countdown", "class"),
    ("textual.command.CommandPalette", "_list_visible", "class"),
    ("textual.command.CommandPalette", "_show_busy", "class"),
    ("textual.command.CommandPalette", "_no_matches_timer", "instance"),
    ("textual.command.CommandPalette", "_watch__list_visible", "class"),
    ("textual.command.CommandPalette", "_watch__show_busy", "class"),
    ("textual.widgets._footer", "FooterKey", "module"),
    ("textual.widgets._select", "SelectOverlay", "module"),
    ("textual.keys", "_get_unicode_name_from_key", "module"),
    ("textual._xterm_parser", "XTermParser", "module"),
    ("textual.drivers.linux_driver", "XTermParser", "module"),
    ("textual.drivers.linux_inline_driver", "XTermParser", "module"),
    ("textual._parser.Parser", "_gen", "instance"),
    ("textual.drivers.linux_driver.LinuxDriver", "_file", "instance"),
)


# ----------------------------------------------------------------------------- the app's screens


def screen_stacks(app: App[Any]) -> dict[str, list[Screen[Any]]]:
    """Each mode's screen stack. Textual shows only the current mode's (``screen_stack``);
    a dialog left under another view, and a load error every view must show, need them all.
    Empty before the app has set them up."""
    stacks: dict[str, list[Screen[Any]]] = getattr(app, "_screen_stacks", {})
    return stacks


def is_exiting(app: App[Any]) -> bool:
    """``exit()`` was called: Textual says so only through ``_exit`` until the app stops
    running, and keys of the same burst (`q` then `e`) still arrive meanwhile."""
    return bool(getattr(app, "_exit", False))


def drop_buried_screen(app: App[Any], screen: Screen[Any]) -> Awaitable[Any] | None:
    """Take ``screen`` out of whichever mode's stack holds it under other screens, without
    its result callback: a dismiss that arrives after a mode switch (a fast key burst) must
    not pop the screen now shown. Textual's ``_replace_screen`` unmounts it the way
    ``pop_screen`` would. None when no stack holds it."""
    for stack in screen_stacks(app).values():
        if screen in stack:
            stack.remove(screen)
            screen._pop_result_callback()
            return app._replace_screen(screen)
    return None


def unicode_name_of_key(key: str) -> str:
    """The Unicode name of a key (``"slash"`` -> ``"SOLIDUS"``): what a terminal types for it.
    Tests send keys to the driver as a terminal would; Textual's own mapping is private."""
    return _get_unicode_name_from_key(key)


# ----------------------------------------------------------------------------- styles


def styles_current(screen: Screen[Any]) -> bool:
    """The screen was styled after the last invalidation (a theme or terminal-theme change
    counts the app's ``_css_update_count`` up): a revisit need not restyle every widget."""
    try:
        return bool(screen._css_update_count == screen.app._css_update_count)
    except Exception:  # no running app
        return False


def adopt_current_styles(screen: Screen[Any]) -> None:
    """A new screen counts its styles as never refreshed, so Textual re-parses the whole
    stylesheet (and drops its parse cache) when the view is first shown (~50-100 ms of every
    first visit). When the screen shown now was refreshed with the current variables the
    stylesheet is current, and the new screen is styled by it as it mounts: mark it so. The
    first view of a start keeps Textual's refresh (it applies the theme's variables)."""
    try:
        app = screen.app
        if screen_stacks(app) and app.screen._css_update_count == app._css_update_count:
            screen._css_update_count = app._css_update_count
    except Exception:  # no running app or no screen yet: Textual's default
        pass


def is_data_bound(widget: DOMNode) -> bool:
    """The widget is bound to its parent's reactives (``data_bind``), which Textual records
    only in ``_reactive_connect``."""
    return bool(widget._reactive_connect)


# ----------------------------------------------------------------------------- the app


class _QuietWhenHungUp:
    """The terminal file Textual's output thread writes to, where a write or flush to a
    hung-up terminal (EIO) is dropped instead of raised: nobody can see it any more."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def write(self, text: str) -> int:
        try:
            return int(self._file.write(text))
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            return 0

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding: the terminal's
        return getattr(self._file, name)


class HangupSafeDriver(LinuxDriver):
    """Textual's terminal driver, with output that outlives a hung-up terminal. Textual's
    output thread ends at the first write that raises (EIO once the terminal hung up);
    its queue then fills, and the next write -- or the shutdown, which queues one more --
    waits for ever. The dashboard leaves a hung-up terminal (``app._watch_terminal``) by
    the ordinary shutdown, so that thread has to keep taking writes until then."""

    def __init__(self, app: App[Any], *, debug: bool = False, mouse: bool = True,
                 size: tuple[int, int] | None = None) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        # read when application mode starts the output thread; typed there as the text file it wraps
        self._file = cast(Any, _QuietWhenHungUp(self._file))


class TunedApp(App[Any]):
    """Textual's App with two private hooks tuned: a stylesheet refresh that skips work
    already done, and a key filter (:meth:`key_consumed`) ahead of the bindings; on a
    terminal, the driver is :class:`HangupSafeDriver`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.driver_class is LinuxDriver:  # not a driver chosen by TEXTUAL_DRIVER (the browser)
            self.driver_class = HangupSafeDriver

    def key_consumed(self, key: str, priority: bool) -> bool:
        """Hook: True when ``key`` is handled (or dropped) before the bindings see it."""
        return False

    async def _check_bindings(self, key: str, priority: bool = False) -> bool:
        # Textual's one place where every key meets the bindings (priority ones first); no
        # public hook sees a key before a priority binding takes it.
        if self.key_consumed(key, priority):
            return True
        return await super()._check_bindings(key, priority)

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's refresh, without re-parsing a stylesheet that is already parsed with
        the current variables: Textual sets the variables (which clears the parse cache)
        and re-parses every source whenever a screen is first shown, ~35 ms of the start
        on the Cranfield command line for rules identical to those it has. A source added
        since (a screen's CSS) still makes the stylesheet parse on its next use, and a
        theme change (other variables) re-parses as before.

        Nor is every widget restyled again when nothing was invalidated since the last
        refresh (the same variables, no ``_invalidate_css``: a theme or terminal-theme
        change counts it up): a view's first show did that for every widget of the view
        on screen (~60 ms on the loop); the new view's widgets are styled as they mount,
        by the same rules. Screen CSS added meanwhile is applied by Textual itself
        (``_load_screen_css``)."""
        stylesheet = self.stylesheet
        variables = self.get_css_variables()
        key = (self._css_update_count, variables)
        if stylesheet._variables == variables and getattr(self, "_css_refreshed", None) == key:
            for stack in screen_stacks(self).values():
                for screen in stack:
                    screen._css_update_count = self._css_update_count
            return
        self._css_refreshed = key
        if stylesheet._variables != variables:
            return super().refresh_css(animate)
        stylesheet.update(self, animate=animate)
        try:
            if self.screen.is_mounted:
                self.screen._refresh_layout(self.size)
                self.screen._css_update_count = self._css_update_count
        except ScreenError:
            pass
        for screen in self.screen_stack:
            if screen != self.screen:
                stylesheet.update(screen, animate=animate)
                screen._css_update_count = self._css_update_count


# ----------------------------------------------------------------------------- the command palette


class GuardedCommandPalette(CommandPalette):
    """Textual's command palette, kept alive when it is closed while its search runs (Esc
    or a view key right after Ctrl+P): the search, its no-matches timer and its watchers
    find no command list any more and stop there instead of ending the app. While the
    palette is whole every error still surfaces."""

    @work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP, exit_on_error=False)
    async def _gather_commands(self, search_value: str) -> None:
        # the worker is Textual's (its group cancels the previous search); only its
        # NoMatches on a palette being taken down is dropped
        try:
            await CommandPalette._gather_commands.__wrapped__(self, search_value)  # type: ignore[attr-defined]
        except NoMatches:
            pass

    async def _on_message(self, message: Any) -> None:
        # every message the palette handles passes here: one that reaches a palette already
        # being taken down (its timer, an Enter in the same burst as Esc) finds no list
        try:
            await super()._on_message(message)
        except NoMatches:
            if self._whole():
                raise

    def _start_no_matches_countdown(self, search_value: str) -> None:
        # Textual's countdown to "No matches found", run only on a palette still whole (its
        # timer can fire after the command list was taken down)
        self._stop_no_matches_countdown()

        def show_no_matches() -> None:
            if not self._whole():
                return
            if search_value:
                self.query_one(CommandList).add_option(
                    Option(Align.center(Text("No matches found", style="not bold")), disabled=True, id=self._NO_MATCHES))
                self._list_visible = True
            else:  # discover mode: nothing to announce
                self._list_visible = False

        self._no_matches_timer = self.set_timer(self._NO_MATCHES_COUNTDOWN, show_no_matches)

    def _whole(self) -> bool:
        try:
            self.query_one(CommandList)
        except NoMatches:
            return False
        return self.is_attached

    def _watch__list_visible(self) -> None:
        # the watcher of Textual's private reactive: it queries the list
        try:
            super()._watch__list_visible()
        except NoMatches:
            pass

    async def _watch__show_busy(self) -> None:
        # the same for the busy indicator
        try:
            await super()._watch__show_busy()
        except NoMatches:
            pass


# ----------------------------------------------------------------------------- terminal input

#: A bracketed paste whose end marker has not come after this long with no input is ended
#: as if it had (a terminal or a link that dropped the marker would otherwise leave every
#: later key inside the paste). Long enough for a slow link's pause inside a paste.
PASTE_IDLE_S = 2.0
_PASTE_START = "\x1b[200~"
_PASTE_END = "\x1b[201~"


class PasteSafeParser(XTermParser):
    """Textual's terminal parser, with a bracketed paste that always ends.

    Textual waits ``ESCAPE_DELAY`` (0.1 s) after an ESC for the rest of a sequence, also
    inside a paste. When the paste's end marker ``ESC [ 2 0 1 ~`` arrives in two reads more
    than that apart (a busy machine, a slow ssh link), the wait runs out, the ESC is sent
    as the Escape key and the parser stays in paste mode: every later key, ``q`` included,
    is swallowed into a paste that never ends, and the app looks frozen. Here the stream's
    paste state is tracked beside the parser: inside a paste the ESC wait is not cut short,
    and a paste left open ``PASTE_IDLE_S`` with no input is finished by feeding the rest of
    its end marker."""

    #: the parser the terminal driver made last (what a task dump reports)
    latest: PasteSafeParser | None = None

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        PasteSafeParser.latest = self
        self.pasting = False
        self.stream_tail = ""  # the stream's last bytes: a marker may straddle two reads
        self.last_input = 0.0

    def feed(self, data: str) -> Iterable[Any]:
        if data:
            import time

            self.last_input = time.monotonic()
            seen = self.stream_tail + data
            start, end = seen.rfind(_PASTE_START), seen.rfind(_PASTE_END)
            if start != end:  # both -1: no marker, the state stands
                self.pasting = start > end
            self.stream_tail = seen[-(len(_PASTE_END) - 1):]
        return super().feed(data)

    def tick(self) -> Iterable[Any]:
        if not self.pasting:
            return super().tick()
        import time

        if time.monotonic() - self.last_input < PASTE_IDLE_S:
            return ()  # inside a paste: an ESC waits for the rest of the end marker
        # the end marker's part already fed (a proper prefix of it at the stream's end) is completed
        done = next((n for n in range(len(_PASTE_END) - 1, 0, -1) if self.stream_tail.endswith(_PASTE_END[:n])), 0)
        return self.feed(_PASTE_END[done:])


def input_parser_state() -> str:
    """The terminal input parser's state, for a task dump: whether the stream is inside a
    paste, the stream's last bytes, and the state Textual's parser keeps in its generator."""
    parser = PasteSafeParser.latest
    if parser is None:
        return "input parser: none made"
    frame = getattr(getattr(parser, "_gen", None), "gi_frame", None)
    inner = {k: frame.f_locals.get(k) for k in ("bracketed_paste", "sequence", "character")} if frame else {}
    return f"input parser: pasting={parser.pasting} tail={parser.stream_tail!r} textual={inner!r}"


def guard_paste_end() -> None:
    """Make the terminal drivers build :class:`PasteSafeParser` (they name the parser class
    at their module level; the dashboard's process runs one app)."""
    import textual.drivers.linux_driver as linux
    import textual.drivers.linux_inline_driver as inline

    linux.XTermParser = PasteSafeParser  # type: ignore[misc]
    inline.XTermParser = PasteSafeParser  # type: ignore[misc]
