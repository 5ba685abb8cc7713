"""Ids as people see them: control characters made visible.

One rule for every face that prints an id, a query text or a path a user gave: the output
layer (``render.escaping``) and the dashboard (``widgets.safe``) share it. C0 and C1
controls, the line and paragraph separators and the bidirectional overrides and isolates
(U+202A-U+202E, U+2066-U+2069, which can reorder what a terminal shows) become ``\\xNN`` /
``\\uNNNN``. Kept apart from the id encoding (numpy, pyarrow), so the dashboard module imports neither.
"""

from __future__ import annotations

import re as _re

_CONTROL = _re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_KEEP_LAYOUT = _re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(m: _re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def escape_control(text: object, keep_layout: bool = False) -> str:
    """Control characters as visible escapes; with ``keep_layout`` tab and newline stay."""
    pat = _CONTROL_KEEP_LAYOUT if keep_layout else _CONTROL
    return pat.sub(_visible, str(text))
