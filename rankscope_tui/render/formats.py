"""What ``--format text|markdown|latex`` prints, one renderer per format and payload.

The renderers of a report (``report`` for text, ``markdown``, ``latex``) and of a
comparison (``compare`` for text) build on shared pieces; this module, above them all,
picks one by the format asked for, so no renderer imports another's dispatcher.
Every format goes through ``terminal_safe``: no control sequence reaches a terminal.
"""

from __future__ import annotations

from typing import Any, Callable

from .compare import compare_text
from .escaping import terminal_safe
from .latex import render_compare_latex, render_report_latex
from .markdown import render_compare_markdown, render_report_markdown
from .report import render_text
from .sentences import render_sentences


def _safe(render: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    def safe(report: dict[str, Any]) -> str:
        return terminal_safe(render(report))
    return safe


#: ``evaluate --format`` → renderer of a report.json dict
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    k: _safe(f) for k, f in {"text": render_text, "markdown": render_report_markdown, "latex": render_report_latex}.items()}


def render_report(report: dict[str, Any], fmt: str = "text", width: int | None = None) -> str:
    """``evaluate``'s printed report in ``fmt``; text fits ``width`` columns (None: the wide
    layout of ``--wide``, one line per lane and level)."""
    if fmt == "text":
        return terminal_safe(render_text(report, width))
    return RENDERERS[fmt](report)


def text_width(stream: Any) -> int:
    """The width ``evaluate``'s text is laid out for: the terminal's columns when ``stream``
    is a terminal (``COLUMNS`` overrides, as ``shutil.get_terminal_size`` reads it), else
    ``TEXT_WIDTH`` (80), so a file or a pipe gets the same bytes wherever it is written."""
    import shutil

    from .report import TEXT_WIDTH

    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError):
        tty = False
    return max(40, shutil.get_terminal_size((TEXT_WIDTH, 24)).columns) if tty else TEXT_WIDTH


def render_compare(comparison: Any, fmt: str = "text") -> str:
    """The printed comparison of ``compare`` in ``fmt``; ``comparison`` is a
    ``kernel.instruments.compare.Comparison``. Text and markdown end with the results
    sentence; LaTeX is the table alone."""
    if fmt == "markdown":
        return terminal_safe(render_compare_markdown(comparison) + render_sentences(comparison.as_dict(), fmt))
    if fmt == "latex":
        return terminal_safe(render_compare_latex(comparison.as_dict()))
    return terminal_safe(compare_text(comparison)) + render_sentences(comparison.as_dict(), fmt)
