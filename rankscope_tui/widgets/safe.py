"""Data labels for the dashboard: a lane, qid, doc id or stratum label shows as itself.

``escape`` is what every screen interpolates data through: control characters become
visible escapes (``kernel.encoding.escape_control``: ESC, C1 CSI, bidi overrides...),
then Rich/Textual markup is escaped, so a qid ``[/]`` or ``[link=...]`` is text, never
markup, and ``\\x1b]0;title\\x07`` never reaches the terminal. ``text`` is the same for
a ``rich.text.Text`` cell (never parsed as markup).
"""

from __future__ import annotations

from rich.text import Text
from textual.markup import escape as _markup_escape

from ..kernel.ranking.visible import escape_control


def escape(value) -> str:
    """``value`` as markup-safe, control-free text for a Static or a title."""
    return _markup_escape(escape_control(value))


def text(value, **kw) -> Text:
    """``value`` as a plain ``Text`` (no markup), control characters escaped."""
    return Text(escape_control(value), **kw)
