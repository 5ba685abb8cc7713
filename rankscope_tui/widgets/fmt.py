"""Formatting of kernel numbers for the screens (formatting only; nothing is computed here)."""

from __future__ import annotations

import math


def num(x, digits: int = 3) -> str:
    if x is None:
        return "—"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "+∞" if x > 0 else "−∞"
    return f"{x:.{digits}f}"


def interval(low, high, digits: int = 3) -> str:
    if low is None or high is None:
        return ""
    if low == high:
        return "not informative (no variation)"
    return f"[{num(low, digits)}, {num(high, digits)}]"


def cell(c: dict | None, digits: int = 3, compact: bool = False) -> str:
    """A report metric cell ``{value, low, high, ...}`` as 'v [lo, hi]'."""
    if not c:
        return "—"
    v = c.get("value")
    if v is None:
        return "n/a"
    lo, hi = c.get("low"), c.get("high")
    if lo is None or hi is None:
        return num(v, digits)
    if lo == hi:
        return f"{num(v, digits)} (no var.)"
    if compact:
        return f"{num(v, digits)} {num(lo, 2)[1:] if lo >= 0 else num(lo, 2)}–{num(hi, 2)[1:] if 0 <= hi < 1 else num(hi, 2)}"
    return f"{num(v, digits)} [{num(lo, digits)}, {num(hi, digits)}]"


def pct(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{100 * float(x):.{digits}f}%"


def rate(r) -> str:
    """A gate Rate (k, n, low, high) as 'k/n = v [lo, hi]'."""
    if r is None:
        return "—"
    if isinstance(r, dict):
        k, n, v, lo, hi = r.get("k"), r.get("n"), r.get("value"), r.get("low"), r.get("high")
    else:
        k, n, v, lo, hi = r.k, r.n, r.value, r.low, r.high
    if not n:
        return f"{k}/{n}"
    return f"{k}/{n} = {num(v)} {interval(lo, hi)}"
