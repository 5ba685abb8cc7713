"""The command palette: switch view, go to query <qid>, set k, export, find."""

from __future__ import annotations

import re
from functools import partial
from typing import cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..widgets.dialogs import safe_dismiss
from ..widgets.safe import text as plain_text
from ..widgets.textual_private import GuardedCommandPalette
from . import LETTER_VIEWS, VIEW_KEYS, VIEWS
from .base import DashboardApp

_K = re.compile(r"(?:^|\b)(?:set\s+)?k\s*=?\s*(\d+)\s*$", re.I)


class RankscopeCommands(Provider):
    """Views and actions are cheap and always offered; queries are matched on qid or text."""

    def _static(self):
        app = cast(DashboardApp, self.app)  # the provider runs in the dashboard app
        for mode, title in VIEWS:
            key = VIEW_KEYS[mode]
            yield f"view: {key} {title}", partial(app.switch_mode, mode), f"switch to the {title} view (key {key})"
        for mode, title, key in LETTER_VIEWS:
            yield f"view: {title}", partial(app.switch_mode, mode), f"switch to the {title} view (key {key})"
        yield "export report…", app.action_export, "write report.json, markdown, LaTeX, text or per-query CSV (key e)"
        yield "go to query…", app.action_search, "find a query by qid or text (key /)"
        yield "open file…", app.action_open, "open a lane, qrels, strata, query or doc texts, corpus (key o)"

    async def discover(self) -> Hits:
        for text, cb, help_text in self._static():
            yield DiscoveryHit(text, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        app = cast(DashboardApp, self.app)
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
            # the qid and query text are data: shown as plain text, never parsed as markup
            yield Hit(max(matcher.match(text), 0.5), plain_text(text), partial(app.open_query, qid), text=text,
                      help="open the drill-down")


class RankscopePalette(GuardedCommandPalette):
    """Textual's command palette, dismissed safely: a selection that arrives after a mode
    switch or after another dialog came on top closes the palette where it is instead of
    popping the screen shown (``ScreenStackError`` on a fast Enter, Ctrl+P, Enter). A palette
    closed while its search runs stops there (``GuardedCommandPalette``)."""

    def dismiss(self, result=None):
        return safe_dismiss(self, result, super().dismiss)
