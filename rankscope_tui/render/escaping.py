"""Escaping names for LaTeX and markdown tables: a lane, qid or stratum prints as itself."""

from __future__ import annotations

LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def escape_latex(text: str) -> str:
    """Every LaTeX special character as its text-mode command (``|`` prints as a bar)."""
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def escape_markdown(text: str) -> str:
    """A backslash before every character markdown could read as markup."""
    out = []
    for ch in str(text):
        if ch in "\\`*_{}[]()#+-.!|<>$%&~":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)
