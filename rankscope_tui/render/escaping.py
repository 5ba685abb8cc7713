"""Escaping names for terminals, LaTeX and markdown: a lane, qid or stratum prints as itself,
and never as a control sequence.

``escape_control`` shows every control character as a visible escape (``\\x1b``,
``\\x9b``, ``\\u202e``): C0 (U+0000-U+001F) except the structural tab and newline of a
rendered text, DEL, C1 (U+0080-U+009F), the line and paragraph separators (U+2028,
U+2029: a line break to editors and browsers, a stop to pdflatex) and the bidirectional
overrides/isolates (U+202A-U+202E, U+2066-U+2069, which reorder what a terminal shows). Every text
renderer passes its whole output through it (``terminal_safe``); markdown and LaTeX
cells escape every control character, tab and newline included, before their own
escapes. A name holding a backslash followed by ``x1b`` prints the same as one holding
ESC -- the escape is for reading, not for round trips (the JSON report keeps the bytes).
"""

from __future__ import annotations

from ..kernel.ranking.visible import escape_control

__all__ = ["escape_control", "terminal_safe", "escape_latex", "escape_markdown"]

LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}",
                 # symbols the captions and notes write that pdflatex's text fonts lack
                 "≤": r"$\le$", "≥": r"$\ge$", "≠": r"$\neq$", "≈": r"$\approx$", "α": r"$\alpha$",
                 "Δ": r"$\Delta$", "∞": r"$\infty$", "χ": r"$\chi$", "²": r"\textsuperscript{2}", "\u2212": "-", "†": r"\dag{}"}


def terminal_safe(text: str) -> str:
    """A rendered text for a terminal: its lines and tabs kept, every other control shown escaped."""
    return escape_control(text, keep_layout=True)


def escape_latex(text: str) -> str:
    """Every LaTeX special character as its text-mode command (``|`` prints as a bar);
    control characters as visible escapes first."""
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in escape_control(text))


#: What a name (lane, qid, stratum) escapes in markdown: what would end a table cell
#: (``|``), open code, emphasis, a link or HTML, math (``$``, GitHub) or strike-through
#: (``~``), an entity (``&``) or a heading (``#``), and the backslash itself. Digits,
#: ``.``, ``,``, brackets of intervals and parentheses are never escaped, so numbers
#: copied from the raw file parse.
MARKDOWN_NAME_SPECIAL = "\\`*_[]<>|$~&#"


def escape_markdown(text: str) -> str:
    """A name for a markdown table cell, list item or heading: a backslash before each
    :data:`MARKDOWN_NAME_SPECIAL` character only; control characters as visible escapes first."""
    return "".join("\\" + ch if ch in MARKDOWN_NAME_SPECIAL else ch for ch in escape_control(text))
