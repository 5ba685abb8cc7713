"""ViewBar: the views by their key (1–9, 0, or what a config file's keymap put there), the
current one highlighted; a click switches."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widget import Widget


def key_display(key: str) -> str:
    """A Textual key name as the footer shows it: ``left_square_bracket`` is ``[``,
    ``shift+left`` is ``shift+←``."""
    from textual.keys import format_key

    *mods, name = key.split("+")
    return "+".join([*mods, format_key(name)])


class ViewBar(Widget):
    DEFAULT_CSS = """
    ViewBar {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $text-muted;
    }
    ViewBar > .viewbar--current {
        background: $primary;
        color: $text;
        text-style: bold;
    }
    ViewBar > .viewbar--key {
        color: $accent;
        text-style: bold;
    }
    ViewBar > .viewbar--status {
        color: $warning;
    }
    """
    COMPONENT_CLASSES = {"viewbar--current", "viewbar--key", "viewbar--status"}

    def __init__(self, views: list[tuple[str, str]], current: str, status: str = "",
                 keymap: dict[str, str] | None = None, **kw) -> None:
        """``views``: (mode name, title) in key order 1..9, 0. ``keymap``: binding id -> keys
        (a config file's): a view whose ``view.MODE`` binding it moves shows its first key."""
        super().__init__(**kw)
        self.views, self.current, self.status = views, current, status
        keymap = keymap or {}
        self.keys = {mode: key_display(keymap[f"view.{mode}"].split(",")[0].strip()) if f"view.{mode}" in keymap
                     else str(i % 10) for i, (mode, _) in enumerate(views, 1)}  # the tenth view's key is 0
        self._spans: list[tuple[int, int, str]] = []

    def set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self.refresh()

    @staticmethod
    def short(title: str, width: int) -> str:
        """A title cut to ``width`` characters (0: none)."""
        return title[:width]

    def render(self) -> Text:
        """Every view's number, always: the titles shorten (then only the current one is
        spelled out) when the bar is narrower than the full list."""
        width = self.size.width or 200
        for cut in (99, 4, 3, 0):
            text = self._bar(cut)
            if text.cell_len <= width:
                break
        return text

    def _bar(self, cut: int) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        cur = self.get_component_rich_style("viewbar--current", partial=True)
        key = self.get_component_rich_style("viewbar--key", partial=True)
        self._spans = []
        for mode, title in self.views:
            start = len(text)
            digit = self.keys[mode]
            if mode == self.current:
                text.append(f" {digit} {title} ", style=cur)
            else:
                text.append(" ")
                text.append(digit, style=key)
                label = self.short(title, cut)
                text.append(f" {label} " if label else " ")
            self._spans.append((start, len(text), mode))
        if self.status:
            text.append("  " + self.status, style=self.get_component_rich_style("viewbar--status", partial=True))
        return text

    def on_click(self, event: events.Click) -> None:
        for start, end, mode in self._spans:
            if start <= event.x < end:
                self.app.switch_mode(mode)
                return
