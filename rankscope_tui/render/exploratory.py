"""The dashboard's exploratory block (``state.Exploratory.block``) as a labelled section
after a rendered report: text, markdown or LaTeX.

The block holds what was chosen after seeing the data (an RRF k, edited verdict rules, a fit
on the test set); the section repeats its label and writes each choice as one JSON line, so
the numbers read back exactly. LaTeX goes through ``escaping.escape_latex``, the one LaTeX
escaping of every renderer.
"""

from __future__ import annotations

import json
from typing import Any

from .escaping import escape_latex, terminal_safe


def exploratory_lines(block: dict[str, Any]) -> list[str]:
    """The label, then ``key: JSON value`` per choice, in the block's order."""
    lines = [str(block["label"])]
    for key, value in block.items():
        if key != "label":
            lines.append(f"{key}: {json.dumps(value, sort_keys=False, ensure_ascii=False)}")
    return lines


def exploratory_text(block: dict[str, Any], fmt: str) -> str:
    """The section for format ``fmt`` ("markdown", "latex"; anything else: plain text).
    Control characters show as visible escapes, as in the report above it."""
    lines = exploratory_lines(block)
    if fmt == "markdown":
        text = "## exploratory\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"
    elif fmt == "latex":
        text = "% exploratory\n\\paragraph{exploratory}\n" + "\n\n".join(escape_latex(line) for line in lines) + "\n"
    else:
        text = "== exploratory ==\n" + "\n".join(lines) + "\n"
    return terminal_safe(text)
