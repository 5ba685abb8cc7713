"""Proportions of a gate outcome with Wilson score intervals, and how many negatives a
false-accept rate needs.

A rate is k events in n trials; its interval is the Wilson score interval at the
workspace confidence (never a normal-approximation tail: top scores are maxima and skewed,
and 0/n must not collapse to a zero-width interval). ``as_dict`` helpers write strict
JSON: ±inf and undefined values are None with a sibling ``<key>_reason``.

References
----------
- Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
  inference. *JASA* 22(158), 209-212.
- Hanley, J. A. & Lippman-Hand, A. (1983). If nothing goes wrong, is everything all
  right? Interpreting zero numerators. *JAMA* 249(13), 1743-1745. (the rule of three)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..settings import DEFAULT_CONFIDENCE
from ..statistics import intervals as _iv

INF = math.inf


def _z(confidence: float) -> float:
    """Two-sided normal quantile z = Φ⁻¹(1 − (1 − c)/2) (raises InputError unless 0 < c < 1)."""
    return _iv.z_value(confidence)


def _wilson_arrays(k: ArrayLike, n: ArrayLike,
                   confidence: float) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Vectorised Wilson interval: (point, low, high) arrays; NaN where n == 0.

    Same operations in the same order as :func:`intervals.wilson`, so a sweep's arrays
    and the scalar interval quoted at its operating point agree bit for bit (the
    conservative choice and the printed upper bound can never disagree).
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = _z(confidence)
    z2 = z * z
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
        low = np.where(k == 0, 0.0, np.maximum(0.0, centre - half))
        high = np.where(k == n, 1.0, np.minimum(1.0, centre + half))
    empty = n == 0
    p = np.where(empty, np.nan, p)
    low = np.where(empty, np.nan, low)
    high = np.where(empty, np.nan, high)
    return p, low, high


def wilson_interval(k: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """(low, high) of :func:`intervals.wilson` as floats; NaNs when n == 0."""
    iv = _iv.wilson(int(k), int(n), confidence)
    # low and high are None together (n == 0)
    return (math.nan, math.nan) if iv.low is None or iv.high is None else (float(iv.low), float(iv.high))


def _num(x: float | np.floating[Any] | None) -> float | None:
    """A finite float, or None (strict JSON has no inf/nan)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _put(d: dict[str, Any], key: str, x: float | np.floating[Any] | None, reason: str | None = None) -> None:
    """d[key] = finite number, or None plus d[key + '_reason'] explaining why."""
    v = _num(x)
    d[key] = v
    if v is None:
        if reason is None:
            if x is None or (isinstance(x, float) and math.isnan(x)):
                reason = "undefined"
            elif float(x) > 0:
                reason = "+inf"
            else:
                reason = "-inf"
        d[key + "_reason"] = reason


def _num_list(a: np.ndarray) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in np.asarray(a, dtype=np.float64).tolist()]


@dataclass(frozen=True)
class Rate:
    """k events in n trials with a Wilson interval at ``confidence`` (intervals.wilson)."""

    k: int
    n: int
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def wilson(self) -> "_iv.Interval":
        return _iv.wilson(self.k, self.n, self.confidence)

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.k, self.n, self.confidence)

    @property
    def low(self) -> float:
        return self.interval[0]

    @property
    def high(self) -> float:
        return self.interval[1]

    def as_dict(self) -> dict[str, Any]:
        """``k`` plus the Interval's strict-JSON dict (value, low, high, method, n, level)."""
        return {"k": int(self.k), **self.wilson.as_dict()}


def negatives_needed(target: float, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """Smallest n whose Wilson upper bound after 0 false accepts in n is <= target:
    n >= z²(1 − t)/t (73 at t = 0.05, c = 0.95). See :func:`intervals.negatives_needed`."""
    return _iv.negatives_needed(target, confidence)[0]


def rule_of_three_table(targets: Iterable[float] = (0.1, 0.05, 0.02, 0.01, 0.005, 0.001), confidence: float = DEFAULT_CONFIDENCE) -> list[dict[str, Any]]:
    """Negatives needed to bound a false-accept rate t with zero false accepts: Wilson
    (one-sided (1+c)/2 bound, ⌈z²(1−t)/t⌉) beside the rule of three (one-sided 95 %, ⌈3/t⌉)."""
    z = _z(confidence)
    rows = []
    for t in targets:
        wilson_n, three_n = _iv.negatives_needed(t, confidence)
        rows.append(
            {
                "target": float(t),
                "wilson_n": wilson_n,
                "wilson_level": f"one-sided {100 * (1 + confidence) / 2:g}% (Wilson upper z^2/(n+z^2), z = {z:.6f})",
                "rule_of_three_n": three_n,
                "rule_of_three_level": "one-sided 95% (3/n)",
            }
        )
    return rows

