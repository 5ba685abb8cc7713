"""Multiplicity: adjusting a family's p-values (Holm, Bonferroni) and each row's raw-p threshold.

Both equal ``statsmodels.stats.multitest.multipletests``. Holm positions rank the raw
p ascending; ties keep call order (a stable sort), so the positions do not depend on
how equal p-values happen to be ordered by the sort.

References
----------
- Holm, S. (1979). A simple sequentially rejective multiple test procedure.
  *Scandinavian Journal of Statistics* 6(2), 65-70.
- Dunn, O. J. (1961). Multiple comparisons among means. *JASA* 56(293), 52-64. (the
  Bonferroni correction)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

from ..errors import InputError

CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "none")


def check_correction(method: str) -> str:
    if method not in CORRECTIONS:
        raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    return method


def adjust_p(pvals: Sequence[float], method: str = "holm") -> np.ndarray:
    """Adjusted p-values, equal to ``statsmodels.stats.multitest.multipletests``.

    Bonferroni: min(1, J·p). Holm: sort ascending, p_(j)·(J − j + 1), running
    maximum, min(1, ·), restored to call order. ``none``: unchanged.
    """
    check_correction(method)
    p = np.asarray(pvals, dtype=np.float64)
    if p.ndim != 1:
        raise InputError("adjust_p needs a 1-D sequence of p-values")
    J = p.size
    if J == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        out = p * J
        out[out > 1] = 1.0
        return out
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * np.arange(J, 0, -1))
    stepped[stepped > 1] = 1.0
    out = np.empty_like(stepped)
    out[order] = stepped
    return out


def adjust_p_exact(pvals: Sequence[Fraction], method: str = "holm") -> np.ndarray:
    """:func:`adjust_p` on exact rational p-values, rounded once at the end.

    A randomization p is the rational (1 + e)/(B + 1): multiplying its double by J adds a
    rounding of its own (3 × 0.0001 is 0.00030000000000000003), while J·(1 + e)/(B + 1)
    taken exactly and then rounded is the double nearest the true adjusted p (0.0003). The
    order, the step-down and the cap at 1 are those of :func:`adjust_p`.
    """
    check_correction(method)
    p = list(pvals)
    J = len(p)
    if J == 0:
        return np.empty(0)
    if method == "none":
        adjusted = p
    elif method == "bonferroni":
        adjusted = [min(Fraction(1), x * J) for x in p]
    else:
        order = sorted(range(J), key=lambda i: p[i])  # stable: ties keep call order
        adjusted = [Fraction(0)] * J
        running = Fraction(0)
        for j, i in enumerate(order):
            running = max(running, p[i] * (J - j))
            adjusted[i] = min(Fraction(1), running)
    return np.array([float(x) for x in adjusted], dtype=np.float64)


def thresholds(pvals: Sequence[float], alpha: float = 0.05, method: str = "holm") -> np.ndarray:
    """Per-row raw-p thresholds: α/J (Bonferroni), α/(J − j + 1) (Holm), α (none).

    j is the row's 1-based position in ascending raw p, ties in call order.
    """
    check_correction(method)
    p = np.asarray(pvals, dtype=np.float64)
    J = p.size
    if method == "none":
        return np.full(J, alpha)
    if method == "bonferroni":
        return np.full(J, alpha / J) if J else np.empty(0)
    order = np.argsort(p, kind="stable")
    out = np.empty(J, dtype=np.float64)
    out[order] = alpha / (J - np.arange(J))
    return out
