"""A diff of two reports (``kernel.instruments.diff.Diff``) as text: one line per (lane, level, metric)."""

from __future__ import annotations

from ..kernel.instruments.diff import STATUS_WORDS
from .escaping import terminal_safe


def render_diff(diff) -> str:
    header = f"{'lane':14} {'level':6} {'metric':11} {'n':>5} {'before':>8} {'after':>8} {'delta':>8} {'p':>8} {'adj p':>8}  status"
    lines = [header + "\n"]
    for r in diff.rows:
        status = STATUS_WORDS[r.status]
        p = "n/a" if r.randomization_p is None else f"{r.randomization_p:.4f}"
        ap = "n/a" if r.adjusted_p is None else f"{r.adjusted_p:.4f}"
        lines.append(f"{r.lane:14} {r.level:6} {r.metric:11} {r.n:5d} {r.before_mean:8.4f} {r.after_mean:8.4f} "
                     f"{r.difference:+8.4f} {p:>8} {ap:>8}  {status}\n")
    lines.append(f"{len(diff.rows)} rows tested (Holm over the rows); {len(diff.regressions)} established regression(s)\n")
    return terminal_safe("".join(lines))
