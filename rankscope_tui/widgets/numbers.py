"""Number fields that stay responsive whatever is typed or pasted.

Textual's ``Input(type="number")`` and ``type="integer"`` check every edit against a
``restrict`` pattern with nested repeats (``(?:\\d*|\\d+_)*``): on a long run of digits
followed by a character the pattern refuses, the regular-expression engine backtracks
exponentially (26 digits then ``x`` froze the dashboard). These fields restrict the
characters with a single character class instead -- linear in the text -- and check the
value with Textual's ``Number`` / ``Integer`` validators, which parse with ``float`` and
``int``. The views parse the value (``float``, ``int``) where they use it.
"""

from __future__ import annotations

from typing import Any

from textual.validation import Integer, Number
from textual.widgets import Input

#: The characters a number may hold (sign, digits, point, exponent, Python's digit
#: separator). A class with one repeat: no backtracking.
NUMBER_CHARACTERS = r"[-+0-9._eE]*"
#: The characters an integer may hold.
INTEGER_CHARACTERS = r"[-+0-9_]*"


def number_input(value: str = "", **kw: Any) -> Input:
    """A text field for a real number (marked invalid while it does not parse)."""
    return Input(value, restrict=NUMBER_CHARACTERS, validators=[Number()], **kw)


def integer_input(value: str = "", **kw: Any) -> Input:
    """A text field for an integer (marked invalid while it does not parse)."""
    return Input(value, restrict=INTEGER_CHARACTERS, validators=[Integer()], **kw)
