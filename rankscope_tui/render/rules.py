"""What ``verdict`` prints: pre-registered rules judged on a report (``kernel.rules.RuleVerdicts``)
as text — the gates file's fingerprint, then per rule the value and its interval, the
threshold or the against-value with its interval, and both decisions; the deciding column."""

from __future__ import annotations

from ..kernel.instruments.rules import AGAINST_NOTE, NOT_APPLICABLE, SCALAR_NOTE
from .escaping import terminal_safe


def _num(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return f"{v:.4f}"


def _side(value, low, high, kind: str, reason: str | None, no_interval: str | None = None) -> str:
    """``0.6140 [0.5200, 0.7000]``; a scalar has no interval; an undefined value says why."""
    if value is None:
        return f"— ({reason})" if reason else "—"
    if reason:  # a value the report marks as not meaningful (a share with one lane)
        return f"{_num(value)} ({reason})"
    if kind == "scalar":
        return _num(value)
    if low is None or high is None:
        return f"{_num(value)} (no interval" + (f": {no_interval})" if no_interval else ")")
    return f"{_num(value)} [{_num(low)}, {_num(high)}]"


def rule_cells(r) -> list[str]:
    """rule, value [interval], threshold or against-value [interval], point, interval."""
    value = _side(r.value, r.low, r.high, "scalar" if r.kind == "scalar" and r.low is None else "metric", r.reason,
                  r.interval_reason)
    if r.rule.against is None:
        rhs = f"threshold {r.rule.threshold:g}"
    else:
        o = r.other or {}
        rhs = "against " + _side(o.get("value"), o.get("low"), o.get("high"), o.get("kind", "metric"), o.get("reason"))
    return [r.rule.describe(), value, rhs, r.point, r.interval]


def render_verdict(v) -> str:
    results = v.results
    lines = [f"gates {v.gates} sha256 {v.sha256}\n"]
    if v.git:
        lines.append(f"warning: the gates file is {v.git} in git; write the rules before the run and commit them\n")
    header = ["rule", "value [interval]", "threshold or against-value [interval]", "point", "interval"]
    rows = [rule_cells(r) for r in results]
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    for row in [header] + rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
    if any(r.rule.against for r in results):
        lines.append(AGAINST_NOTE + "\n")
    if any(r.interval == NOT_APPLICABLE for r in results):
        lines.append(SCALAR_NOTE + "\n")
    for rule, error in v.errors:
        lines.append(f"not judged: {rule.describe()}: {error}\n")
    lines.append(f"deciding column: {v.on}{' (strict: undecided fails)' if v.strict else ''}; "
                 f"{v.tally.summary(v.on, v.strict)}\n")
    return terminal_safe("".join(lines))
