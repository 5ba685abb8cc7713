"""Intervals for proportions and means: Wilson, Wald, the rule of three, percentile and BCa bounds.

Pure numpy/scipy; never imports Textual.

Proportions (``hit@k``, FPIR, FNIR) get the Wilson score interval; zero events get the
rule of three beside it. Means get a percentile bootstrap over queries under the
resampling protocol of SPEC §3, whose replicates come from :mod:`.resampling`:

* every resampling procedure starts a fresh ``numpy.random.default_rng(seed)``
  over the n queries, already sorted by qid as bytes (the caller's job);
* quantiles are numpy's default (linear, type 7) at (1-c)/2 and (1+c)/2;
* BCa reads the same replicates at levels moved by a bias and an acceleration
  constant (scipy's formula, see ``BcaParts``).

References
----------
- Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
  inference. *JASA* 22(158), 209-212.
- Hanley, J. A. & Lippman-Hand, A. (1983). If nothing goes wrong, is everything all
  right? Interpreting zero numerators. *JAMA* 249(13), 1743-1745. (the rule of three)
- Efron, B. (1979). Bootstrap methods: another look at the jackknife. *Annals of
  Statistics* 7(1), 1-26. (the percentile bootstrap)
- Efron, B. (1987). Better bootstrap confidence intervals. *JASA* 82(397), 171-185.
  (BCa)
- Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. *The
  American Statistician* 50(4), 361-365. (quantile type 7)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, Sequence

import numpy as np

from ..errors import InputError
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from .resampling import Progress, as_matrix, bootstrap_means_counted, check_resamples

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")

#: A bootstrapped interval on fewer queries than this is flagged (seed 000's coverage check).
MIN_QUERIES_FOR_COVERAGE = 30
NOTE_COVERAGE = "coverage below nominal (fewer than 30 queries)"
NOTE_NO_VARIATION = "not informative (no variation)"


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` as a float, or raise ``InputError`` unless 0 < c < 1."""
    c = float(confidence)
    if not (0.0 < c < 1.0) or 1.0 - (1.0 - c) / 2 >= 1.0:  # nan fails too; so does a tail lost in rounding
        raise InputError(f"confidence must be strictly between 0 and 1 (with a tail 1 - (1 - c)/2 < 1), got {confidence!r}")
    return c


def alpha_of(confidence: float) -> float:
    """α = 1 − c for a confidence typed as a decimal (0.95), computed in decimal: 0.05, not
    the 0.050000000000000044 that binary subtraction leaves (the nearest double to the
    decimal difference of the setting's shortest repr)."""
    from decimal import Decimal

    return float(Decimal(1) - Decimal(repr(float(confidence))))


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise InputError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    return alternative


def z_value(confidence: float) -> float:
    """Two-sided normal quantile z = Φ⁻¹(1 − (1 − c)/2); 1.9599639845400536 at c = 0.95 (stdlib NormalDist)."""
    from statistics import NormalDist  # stdlib: keeps scipy out of a plain evaluate's start-up

    c = check_confidence(confidence)
    return float(NormalDist().inv_cdf(1.0 - (1.0 - c) / 2.0))


def finite_or_none(x: float | None) -> float | None:
    """A float for strict JSON: None for None, nan and ±inf."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def null_reason(x: float | None, default: str) -> str | None:
    """Why a value became null in JSON (None when it did not)."""
    if x is None:
        return default
    x = float(x)
    if math.isnan(x):
        return default
    if x == math.inf:
        return "unbounded above (one-sided interval)"
    if x == -math.inf:
        return "unbounded below (one-sided interval)"
    return None


# ---------------------------------------------------------------------------
# result type
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A point estimate with an interval and the method that produced it.

    ``low``/``high`` may be ``±inf`` (a one-sided interval) or ``None`` (not
    computed; ``reason`` says why). ``level`` is the coverage the method aims at
    (for a one-sided bound, its one-sided level). ``note`` carries the flags a
    reader must see: "coverage below nominal …", "not informative (no variation)".
    """

    value: float | None
    low: float | None
    high: float | None
    method: str
    n: int
    level: float | None
    note: str | None = None
    reason: str | None = None

    @property
    def width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return float(self.high) - float(self.low)

    @property
    def informative(self) -> bool:
        """False for a zero-width interval (shown as "not informative", never as [x, x])."""
        w = self.width
        return w is None or w > 0.0

    def as_dict(self) -> dict[str, Any]:
        """Strict-JSON-safe: nan/±inf become None with a sibling ``<key>_reason``."""
        out: dict[str, Any] = {}
        default = self.reason or "not computed"
        for key in ("value", "low", "high"):
            raw = getattr(self, key)
            out[key] = finite_or_none(raw)
            why = null_reason(raw, default)
            if why is not None:
                out[f"{key}_reason"] = why
        out["method"] = self.method
        out["n"] = int(self.n)
        out["level"] = finite_or_none(self.level)
        out["note"] = self.note
        return out

    def describe(self, digits: int = 3) -> str:
        """Human text: ``0.667 [0.391, 0.862] (wilson, 95 %)``; never ``[x, x]``."""
        fmt = f"{{:.{digits}f}}"
        value = "n/a" if self.value is None or not math.isfinite(self.value) else fmt.format(self.value)
        if self.low is None or self.high is None:
            span = f"(no interval: {self.reason or 'not computed'})"
        elif not self.informative:
            span = f"({NOTE_NO_VARIATION})"
        else:
            lo = "-inf" if self.low == -math.inf else fmt.format(self.low)
            hi = "+inf" if self.high == math.inf else fmt.format(self.high)
            level = "" if self.level is None else f", {self.level * 100:g} %"
            span = f"[{lo}, {hi}] ({self.method}{level})"
        note = f"; {self.note}" if self.note and self.note != NOTE_NO_VARIATION else ""
        return f"{value} {span}{note}"


# ---------------------------------------------------------------------------
# proportions: Wilson, Wald, rule of three (lesson 04)
# ---------------------------------------------------------------------------


def _check_counts(k: int, n: int) -> tuple[int, int]:
    if int(k) != k or int(n) != n:
        raise InputError(f"counts must be integers, got k={k!r}, n={n!r}")
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise InputError(f"need 0 <= k <= n, got k={k}, n={n}")
    return k, n


def wilson(k: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Wilson score interval for k events in n trials.

    centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n),
    z = Φ⁻¹(1 − (1−c)/2). At k = 0 the lower limit is exactly 0 and the upper
    limit is z²/(n + z²) (a one-sided (1+c)/2 bound). 8/12 at 95 % → [0.391, 0.862].
    n = 0 gives no interval.
    """
    k, n = _check_counts(k, n)
    c = check_confidence(confidence)
    if n == 0:
        return Interval(None, None, None, "wilson", 0, c, reason="no trials (n = 0)")
    z = z_value(c)
    z2 = z * z
    p = k / n
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Interval(p, low, high, "wilson", n, c)


def wald(k: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Normal-approximation (Wald) interval p̂ ± z·√(p̂(1−p̂)/n), clipped to [0, 1].

    Shown only beside Wilson: at k = 0 (or k = n) its width is zero, which
    claims certainty from a handful of trials — the lesson's point.
    """
    k, n = _check_counts(k, n)
    c = check_confidence(confidence)
    if n == 0:
        return Interval(None, None, None, "wald", 0, c, reason="no trials (n = 0)")
    p = k / n
    half = z_value(c) * math.sqrt(p * (1.0 - p) / n)
    low, high = max(0.0, p - half), min(1.0, p + half)
    note = "collapsed to zero width: the normal approximation fails at 0/n and n/n" if high == low else None
    return Interval(p, low, high, "wald", n, c, note=note)


def rule_of_three(n: int) -> float:
    """3/n: a one-sided 95 % upper bound on a rate after 0 events in n trials."""
    _, n = _check_counts(0, n)
    if n == 0:
        raise InputError("the rule of three needs n >= 1")
    return 3.0 / n


def wilson_upper_zero(n: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """Wilson upper limit after 0 events: z²/(n + z²), a one-sided (1+c)/2 bound (97.5 % at c = 0.95)."""
    _, n = _check_counts(0, n)
    z2 = z_value(confidence) ** 2
    return z2 / (n + z2)


def zero_event_bounds(n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[Interval, Interval, Interval]:
    """The lesson-04 row for 0 events in n trials: Wilson, rule of three and Wald, each labelled with its level."""
    c = check_confidence(confidence)
    w = wilson(0, n, c)
    w1 = Interval(0.0, 0.0, w.high, "wilson upper bound (one-sided)", n, (1.0 + c) / 2.0)
    r3 = Interval(0.0, 0.0, rule_of_three(n), "rule of three (one-sided)", n, 0.95)
    return w1, r3, wald(0, n, c)


def negatives_needed(t: float, confidence: float = DEFAULT_CONFIDENCE) -> tuple[int, int]:
    """Negatives needed to bound a false-accept rate by t after zero false accepts.

    Returns (⌈z²(1−t)/t⌉, ⌈3/t⌉): the smallest n whose Wilson upper limit
    z²/(n+z²) is ≤ t, and the rule-of-three count. (73, 60) at t = 0.05, c = 0.95.
    The rule-of-three count is computed on the exact decimal t (``Fraction(str(t))``),
    so 3/0.05 is 60, not a float a hair above it.
    """
    t = float(t)
    if not (0.0 < t < 1.0):
        raise InputError(f"target rate must be strictly between 0 and 1, got {t!r}")
    z2 = z_value(confidence) ** 2
    wilson_n = max(0, math.ceil(z2 * (1.0 - t) / t))
    # guard the float ceiling with the defining inequality z²/(n+z²) ≤ t
    while wilson_n > 0 and z2 / (wilson_n - 1 + z2) <= t:
        wilson_n -= 1
    while z2 / (wilson_n + z2) > t:
        wilson_n += 1
    three_n = math.ceil(Fraction(3) / Fraction(str(t)))
    return wilson_n, int(three_n)


def percentile_bounds(
    replicates: np.ndarray, confidence: float, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Percentile interval from replicates: numpy's default (linear) quantiles.

    Two-sided: quantiles at (1−c)/2 and (1+c)/2. ``greater``: [q(1−c), +inf);
    ``less``: (−inf, q(c)] — the interval follows a one-sided alternative.
    """
    c = check_confidence(confidence)
    check_alternative(alternative)
    reps = np.asarray(replicates, dtype=np.float64)
    if alternative == "two-sided":
        lo, hi = np.quantile(reps, [(1.0 - c) / 2.0, (1.0 + c) / 2.0])
        return float(lo), float(hi)
    a = 1.0 - c
    lo, hi = np.quantile(reps, [a, 1.0 - a])
    return (float(lo), math.inf) if alternative == "greater" else (-math.inf, float(hi))


@dataclass(frozen=True)
class BcaParts:
    """The two BCa constants (scipy's formula), so the interval can be read at any level later.

    z0 = Φ⁻¹((#{θ* < θ̂} + #{θ* ≤ θ̂}) / 2B) (bias: share of replicates below the
    estimate, ties counted half); a = Σu³ / (6 (Σu²)^{3/2}) with u_i the
    leave-one-out jackknife influence. For the mean u_i = x_i − x̄ exactly, which
    is scipy's ``(n−1)(θ̄₍.₎ − θ̂₍ᵢ₎)`` without its O(n²) jackknife loop.
    """

    z0: float
    acceleration: float

    @property
    def degenerate(self) -> bool:
        return not (math.isfinite(self.z0) and math.isfinite(self.acceleration))


def bca_parts(replicates: np.ndarray, values: np.ndarray, estimate: float | None = None) -> BcaParts:
    """BCa constants for the mean of ``values`` given its bootstrap ``replicates``."""
    x = np.asarray(values, dtype=np.float64)
    reps = np.asarray(replicates, dtype=np.float64)
    theta = float(np.mean(x)) if estimate is None else float(estimate)
    B = reps.size
    share = (np.count_nonzero(reps < theta) + np.count_nonzero(reps <= theta)) / (2.0 * B)
    from scipy.special import ndtri

    z0 = float(ndtri(share))
    u = x - theta
    s2 = float(np.sum(u * u))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = float(np.sum(u * u * u)) / (6.0 * s2**1.5) if s2 > 0.0 else math.nan
    return BcaParts(z0, acc)


def bca_bounds(
    replicates: np.ndarray, parts: BcaParts, level: float, alternative: str = "two-sided"
) -> tuple[float, float] | None:
    """BCa interval at ``level`` from replicates and their constants (None when degenerate).

    α = (1−level)/2 two-sided, 1−level one-sided; the levels read off the
    replicates are Φ(z0 + (z0 ± z_α)/(1 − a(z0 ± z_α))) (scipy's ``_bca_interval``),
    and the quantiles are numpy's linear ones.
    """
    check_alternative(alternative)
    level = check_confidence(level)
    if parts.degenerate:
        return None
    alpha = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    from scipy.special import ndtr, ndtri

    z_a = float(ndtri(alpha))
    z0, acc = parts.z0, parts.acceleration
    n1 = z0 + z_a
    n2 = z0 - z_a
    a1 = float(ndtr(z0 + n1 / (1.0 - acc * n1)))
    a2 = float(ndtr(z0 + n2 / (1.0 - acc * n2)))
    if not (math.isfinite(a1) and math.isfinite(a2)):
        return None
    lo, hi = np.quantile(np.asarray(replicates, dtype=np.float64), [a1, a2])
    lo, hi = float(lo), float(hi)
    if alternative == "greater":
        hi = math.inf
    elif alternative == "less":
        lo = -math.inf
    return lo, hi


def bootstrap_intervals(
    values: np.ndarray | Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    chunk: int | None = None,
    alternative: str = "two-sided",
    method_name: str = "percentile bootstrap",
    threads: int | None = None,
    progress: Progress | None = None,
) -> tuple[Interval, ...]:
    """Percentile bootstrap intervals for the mean of each column of ``values``.

    ``values``: (n,) or (n, m) floats, rows = queries sorted by qid as bytes (the
    caller sorts). All m columns share one draw of indices (one query set, one
    set of replicates), read as counts: each replicate is the count-weighted mean
    of :func:`.resampling.bootstrap_means_counted`, one matrix product per block for
    every column, so a column's interval is the same whichever columns share the
    call. The draws are ``scipy.stats.bootstrap``'s; the bounds differ from scipy's
    only by rounding (a few ulps of the replicates). Returns one ``Interval`` per
    column (a 1-tuple for 1-D input); ``value`` is the column mean. ``resamples=0`` returns the means with
    no interval. Flags: n < 30 → "coverage below nominal (fewer than 30
    queries)"; zero width → "not informative (no variation)".
    """
    a, _ = as_matrix(values)
    n, m = a.shape
    c = check_confidence(confidence)
    check_alternative(alternative)
    B = check_resamples(resamples)
    if n == 0:
        raise InputError("cannot bootstrap an empty set of queries")
    means = [float(np.mean(a[:, j])) for j in range(m)]
    level = c
    if B == 0:
        return tuple(
            Interval(mu, None, None, method_name, n, level, reason="resampling skipped (resamples = 0)") for mu in means
        )
    reps = bootstrap_means_counted(a, B, seed, chunk, threads, progress)
    out = []
    for j in range(m):
        lo, hi = percentile_bounds(reps[:, j], c, alternative)
        notes = []
        if n < MIN_QUERIES_FOR_COVERAGE:
            notes.append(NOTE_COVERAGE)
        if hi - lo == 0.0:
            notes.append(NOTE_NO_VARIATION)
        out.append(Interval(means[j], lo, hi, method_name, n, level, note="; ".join(notes) or None))
    return tuple(out)
