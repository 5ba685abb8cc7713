"""The command palette: switch view, go to query <qid>, set k, export, find."""

from __future__ import annotations

import re
from functools import partial

from textual import work
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.css.query import NoMatches

from ..widgets.dialogs import safe_dismiss
from . import VIEWS

_K = re.compile(r"(?:^|\b)(?:set\s+)?k\s*=?\s*(\d+)\s*$", re.I)


class RankscopeCommands(Provider):
    """Views and actions are cheap and always offered; queries are matched on qid or text."""

    def _static(self):
        app = self.app
        for i, (mode, title) in enumerate(VIEWS, 1):
            yield f"view: {i} {title}", partial(app.switch_mode, mode), f"switch to the {title} view (key {i})"
        yield "export report…", app.action_export, "write report.json, markdown, LaTeX, text or per-query CSV (key e)"
        yield "go to query…", app.action_search, "find a query by qid or text (key /)"
        yield "open file…", app.action_open, "open a lane, qrels, strata, query or doc texts, corpus (key o)"

    async def discover(self) -> Hits:
        for text, cb, help_text in self._static():
            yield DiscoveryHit(text, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        app = self.app
        matcher = self.matcher(query)
        for text, cb, help_text in self._static():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), cb, help=help_text)
        m = _K.search(query.strip())
        if m and hasattr(app, "set_rrf_k"):
            k = int(m.group(1))
            yield Hit(1.0, f"set k = {k} (RRF view)", partial(app.set_rrf_k, k), help="move the RRF slider")
        ws = getattr(app, "ws", None)
        if ws is None:
            return
        words = query.strip()
        for prefix in ("go to query", "goto query", "query", "go to", "q "):
            if words.lower().startswith(prefix):
                words = words[len(prefix):].strip()
                break
        if not words:
            return
        for qid, label in app.search_queries(words, limit=15):
            text = f"go to query {label}"
            yield Hit(max(matcher.match(text), 0.5), text, partial(app.open_query, qid), help="open the drill-down")


class RankscopePalette(CommandPalette):
    """Textual's command palette, dismissed safely: a selection that arrives after a mode
    switch or after another dialog came on top closes the palette where it is instead of
    popping the screen shown (``ScreenStackError`` on a fast Enter, Ctrl+P, Enter)."""

    def dismiss(self, result=None):
        return safe_dismiss(self, result, super().dismiss)

    # A palette closed while its search was running (Esc or a view key right after Ctrl+P)
    # has no command list any more: the search stops there instead of ending the app.
    @work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP, exit_on_error=False)
    async def _gather_commands(self, search_value: str) -> None:
        try:
            await CommandPalette._gather_commands.__wrapped__(self, search_value)
        except NoMatches:
            pass

    async def _on_message(self, message) -> None:
        """A message that reaches a palette already being taken down (its no-matches timer, an
        Enter typed in the same burst as Esc) finds no command list; it is dropped there. While
        the palette is whole, every error still surfaces."""
        try:
            await super()._on_message(message)
        except NoMatches:
            if self._whole():
                raise

    def _start_no_matches_countdown(self, search_value: str) -> None:
        """Textual's countdown to "No matches found", run only on a palette still whole (its
        timer can fire after the command list was taken down)."""
        from rich.align import Align
        from rich.text import Text
        from textual.command import CommandList
        from textual.widgets.option_list import Option

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
        from textual.command import CommandList

        try:
            self.query_one(CommandList)
        except NoMatches:
            return False
        return self.is_attached

    def _watch__list_visible(self) -> None:
        try:
            super()._watch__list_visible()
        except NoMatches:
            pass

    async def _watch__show_busy(self) -> None:
        try:
            await super()._watch__show_busy()
        except NoMatches:
            pass
