"""Power, the minimum detectable effect and the number of queries needed, for a paired
comparison of two systems; and how coarse the randomization test is on a given sample.

The paired t approximation (what ``compare`` and ``plan`` print, and say so):

* The per-query differences Δ have mean μ and standard deviation σ (the pilot's sd,
  ddof = 1); n queries (or units with ``--unit``) are compared; d = μ/σ.
* The t statistic Δ̄/(sd/√n) follows a noncentral t with df = n − 1 and noncentrality
  λ = d·√n. With c = the (1 − α/2) quantile of the central t (two-sided) or the (1 − α)
  quantile (one-sided), power(d, n, α) = P(T ≥ c) + P(T ≤ −c) two-sided, P(T ≥ c)
  one-sided. This is the power the paired t-test has; the randomization (sign-flip)
  test of the same mean has about the same power once n_nonzero is not small
  (Smucker et al. 2007), which ``tests/test_power.py`` checks by simulation.
* Minimum detectable effect (MDE) at power π: the d solving power(d, n, α) = π, times σ.
* Queries needed for a difference δ: the smallest integer n ≥ 2 with
  power(δ/σ, n, α) ≥ π.

This is the topic-set-size design of Sakai: fix α, β = 1 − π, the minimum difference
worth detecting and a variance estimate from a pilot, and solve the noncentral-t power
equation for the number of topics. Sakai's tools start from the normal approximation
and correct it; here the noncentral t is solved directly (the same equations as
``statsmodels.stats.power.TTestPower``, the tests' oracle).

The randomization test's own resolution: the test flips the signs of the n_nonzero
non-zero differences (zeros do not move a flipped mean). A perfect result — every
non-zero difference on one side — is matched or exceeded by q = 2^(1 − n_nonzero)
of the 2^n_nonzero sign patterns two-sided (the pattern and its mirror), 2^(−n_nonzero)
one-sided. The product's p is (1 + e)/(B + 1) with e the count of B Monte Carlo
flips at least as extreme (``randomization``), so a perfect result's p is on average
(1 + B·q)/(B + 1): that is the floor printed here (its least possible value is
1/(B + 1), reached only when no flip matches). A row whose floor exceeds its α is
"unresolvable": even a perfect result could not be established.

The family's false-positive chance: J independent tests each at α reject at least one
true null with probability 1 − (1 − α)^J (0.143 for J = 3 at 0.05). Holm and Bonferroni
hold the family-wise error rate at ≤ α whatever the dependence between the tests.

References
----------
- Sakai, T. (2016). Topic set size design. *Information Retrieval Journal* 19(3),
  256-283.
- Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.,
  chapter 2 (power of the t-test through the noncentral t).
- Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical
  significance tests for information retrieval evaluation. *CIKM 2007*, 623-632.
- Holm, S. (1979). A simple sequentially rejective multiple test procedure.
  *Scandinavian Journal of Statistics* 6(2), 65-70.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import InputError

#: The power ``compare`` quotes the minimum detectable effect at.
DEFAULT_POWER = 0.8
#: Said wherever the numbers below are printed.
APPROXIMATION = "paired t approximation: noncentral t, df = n − 1"
#: No plan is solved beyond this many queries (a target Δ far below the noise).
MAX_QUERIES = 10_000_000


def check_power(power: float) -> float:
    if not (isinstance(power, (int, float)) and 0.0 < float(power) < 1.0):
        raise InputError(f"power must be between 0 and 1 (exclusive), got {power!r}", "--power")
    return float(power)


def check_alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and 0.0 < float(alpha) < 1.0):
        raise InputError(f"α must be between 0 and 1 (exclusive), got {alpha!r}")
    return float(alpha)


def _sided(alternative: str) -> bool:
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(f"alternative must be two-sided, greater or less, got {alternative!r}", "--alternative")
    return alternative == "two-sided"


def t_power(effect: float, n: float, alpha: float, alternative: str = "two-sided") -> float:
    """power(d, n, α) of the module doc: d = |μ|/σ in the alternative's direction (a
    one-sided test's power for d ≥ 0), n ≥ 2 (real n allowed, for solving).

    The critical value is ``scipy.stats.t.isf`` and the tail ``scipy.stats.nct.sf``,
    computed by the special functions those call (:func:`_t_isf`, :func:`_nct_sf`), so
    a compare never imports ``scipy.stats`` (a second and more of a small run's start)."""
    two = _sided(alternative)
    if n < 2:
        raise InputError(f"power needs at least 2 queries, got {n}")
    df = n - 1.0
    nc = effect * math.sqrt(n)
    if two:
        crit = _t_isf(alpha / 2.0, df)
        # P(T ≤ −c | λ) read as P(T ≥ c | −λ): scipy's cdf is NaN far in that tail, its sf is not
        return float(_nct_sf(crit, df, nc) + _nct_sf(crit, df, -nc))
    crit = _t_isf(alpha, df)
    return float(_nct_sf(crit, df, nc))


def _t_isf(q: float, df: float) -> float:
    """``scipy.stats.t.isf(q, df)`` for 0 < q < 1, df > 0: ``-stdtrit(df, q)``, what it computes."""
    from scipy.special import stdtrit  # on first use: a compare row needs it, evaluate never does

    return float(-stdtrit(df, q))


def _nct_sf(x: float, df: float, nc: float) -> Any:
    """``scipy.stats.nct.sf(x, df, nc)`` for finite x and nc, df > 0: the special
    function it calls, clipped to [0, 1] as it clips (a float64). A SciPy without that
    function (before 1.12) is asked through ``scipy.stats``."""
    from scipy.special import _ufuncs  # on first use: a compare row needs it, evaluate never does

    sf = getattr(_ufuncs, "_nct_sf", None)
    if sf is None:  # pragma: no cover - older SciPy
        from scipy import stats

        return stats.nct.sf(x, df, nc)
    with np.errstate(over="ignore"):
        return np.clip(sf(x, df, nc), 0, 1)


#: the relative tolerance of :func:`brent_root`: four machine epsilons, as SciPy's ``brentq`` defaults to
BRENT_RTOL = 4 * sys.float_info.epsilon
BRENT_MAXITER = 100


def brent_root(f: Callable[[float], float], a: float, b: float, xtol: float, rtol: float = BRENT_RTOL) -> float:
    """A root of ``f`` in [a, b] where f(a) and f(b) differ in sign: Brent's method.

    Brent (1973), *Algorithms for Minimization without Derivatives*, chapter 4: keep a
    bracket [x, x_blk] with the root inside and |f(x)| ≤ |f(x_blk)|; step by inverse
    quadratic interpolation through the last three points (a secant step when two of them
    coincide), and fall back to bisection when that step leaves the bracket's inner three
    quarters or shrinks less than half of the step before last. Stops when half the
    bracket is below (xtol + rtol·|x|)/2 or f(x) = 0, returning x. These are the steps and
    the stopping rule of SciPy's ``optimize.brentq`` (its tests' oracle, ``tests/test_power.py``),
    so the minimum detectable effect and the queries needed are the same numbers without
    importing ``scipy.optimize`` (0.25 to 0.5 s of a small compare's start on a busy 2-core machine).
    """
    x_pre, x_cur = a, b
    f_pre, f_cur = f(a), f(b)
    if f_pre == 0.0:
        return x_pre
    if f_cur == 0.0:
        return x_cur
    if (f_pre > 0) == (f_cur > 0):
        raise ValueError("brent_root: f(a) and f(b) must differ in sign")
    x_blk, f_blk, s_pre, s_cur = 0.0, 0.0, 0.0, 0.0
    for _ in range(BRENT_MAXITER):
        if f_pre != 0.0 and f_cur != 0.0 and (f_pre > 0) != (f_cur > 0):
            # the root lies between the last two points: the previous one becomes the far end
            x_blk, f_blk = x_pre, f_pre
            s_pre = s_cur = x_cur - x_pre
        if abs(f_blk) < abs(f_cur):  # keep the best point current
            x_pre, x_cur, x_blk = x_cur, x_blk, x_cur
            f_pre, f_cur, f_blk = f_cur, f_blk, f_cur
        delta = (xtol + rtol * abs(x_cur)) / 2
        s_bis = (x_blk - x_cur) / 2
        if f_cur == 0.0 or abs(s_bis) < delta:
            return x_cur
        if abs(s_pre) > delta and abs(f_cur) < abs(f_pre):
            if x_pre == x_blk:  # two distinct points: the secant
                s_try = -f_cur * (x_cur - x_pre) / (f_cur - f_pre)
            else:  # three: inverse quadratic interpolation
                d_pre = (f_pre - f_cur) / (x_pre - x_cur)
                d_blk = (f_blk - f_cur) / (x_blk - x_cur)
                s_try = -f_cur * (f_blk * d_blk - f_pre * d_pre) / (d_blk * d_pre * (f_blk - f_pre))
            if 2 * abs(s_try) < min(abs(s_pre), 3 * abs(s_bis) - delta):
                s_pre, s_cur = s_cur, s_try
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        x_pre, f_pre = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > delta else (delta if s_bis > 0 else -delta)
        f_cur = f(x_cur)
    raise ValueError(f"brent_root: no convergence in {BRENT_MAXITER} steps")


@lru_cache(maxsize=256)  # the rows of one compare call share n and, within a family, often α
def detectable_effect(n: int, alpha: float, power: float = DEFAULT_POWER, alternative: str = "two-sided") -> float:
    """The standardised MDE: d with power(d, n, α) = ``power`` (module doc)."""
    check_alpha(alpha)
    check_power(power)
    if n < 2:
        raise InputError(f"a detectable effect needs at least 2 queries, got {n}")
    if t_power(0.0, n, alpha, alternative) >= power:  # only when α ≥ power: any d is "detected"
        return 0.0
    hi = 1.0
    while t_power(hi, n, alpha, alternative) < power:
        hi *= 2.0
    return brent_root(lambda d: t_power(d, n, alpha, alternative) - power, 0.0, hi, xtol=1e-12)


def queries_needed(effect: float, alpha: float, power: float = DEFAULT_POWER, alternative: str = "two-sided") -> int | None:
    """The smallest integer n ≥ 2 with power(effect, n, α) ≥ ``power``; None when it
    would exceed :data:`MAX_QUERIES` or the effect is 0."""
    check_alpha(alpha)
    check_power(power)
    effect = abs(float(effect))
    if effect == 0.0 or not math.isfinite(effect):
        return None

    def gap(n: float) -> float:
        return t_power(effect, n, alpha, alternative) - power

    if gap(2.0) >= 0:
        return 2
    if gap(float(MAX_QUERIES)) < 0:
        return None
    root = brent_root(gap, 2.0, float(MAX_QUERIES), xtol=1e-6)
    n = max(2, math.ceil(root - 1e-6))
    while gap(float(n)) < 0:  # the root's float error: the first integer that reaches the power
        n += 1
    while n > 2 and gap(float(n - 1)) >= 0:
        n -= 1
    return n


def randomization_floor(n_nonzero: int, resamples: int, alternative: str = "two-sided") -> float | None:
    """The p a perfect result gets on average from the product's sign-flip test,
    (1 + B·q)/(B + 1) with q = 2^(1 − n_nonzero) two-sided, 2^(−n_nonzero) one-sided
    (q = 1 when n_nonzero = 0); None without a test (B = 0)."""
    if resamples <= 0:
        return None
    two = _sided(alternative)
    q = 1.0 if n_nonzero <= 0 else min(1.0, 2.0 ** ((1 if two else 0) - n_nonzero))
    return (1.0 + resamples * q) / (resamples + 1.0)


def family_false_positive(alpha: float, family_size: int, correction: str) -> dict[str, Any]:
    """The chance of at least one false "established" in a family of J true nulls:
    1 − (1 − α)^J uncorrected (independent tests), and the bound the correction holds."""
    J = int(family_size)
    uncorrected = 1.0 - (1.0 - alpha) ** J if J else 0.0
    if correction in ("holm", "bonferroni"):
        bound = alpha if J else 0.0
        words = f"{correction.capitalize()} holds the family-wise error rate at ≤ α = {alpha:.4g}"
    else:
        bound = uncorrected
        words = f"no correction (--correction none): the family-wise error rate stays {uncorrected:.3f}"
    return {"family_size": J, "alpha": alpha, "uncorrected": uncorrected, "corrected": bound,
            "correction": correction, "holds": words}


@dataclass(frozen=True)
class RowPower:
    """What one compare row could establish: the MDE at ``power`` and the row's α, the
    randomization floor, and the sample a target difference needs (module doc)."""

    n: int  # queries, or units with --unit
    sampled: str  # "queries" or "units"
    sd: float
    alpha: float  # the row's α after the family's correction (its threshold), α outside the family
    power: float
    alternative: str
    mde: float | None
    randomization_floor: float | None
    resolvable: bool | None
    target_delta: float | None
    target_from: str  # "min_delta" or "observed"
    needed: int | None
    reasons: tuple[tuple[str, str], ...] = ()

    @property
    def sentence(self) -> str:
        """The results sentence's clause: what this spread lets n establish, and what the
        target needs ("with n = 114 queries and this spread, Δ ≥ 0.046 would be established
        ...; Δ = 0.035 needs about 192 queries")."""
        if self.mde is None:
            return f"with n = {self.n} {self.sampled} and no spread in the differences, no detectable effect is defined"
        out = (f"with n = {self.n} {self.sampled} and this spread, Δ ≥ {self.mde:.3f} would be established "
               f"({self.power:.0%} power at α = {self.alpha:.4g}, {APPROXIMATION})")
        if self.target_delta is not None and self.needed is not None:
            out += f"; Δ = {self.target_delta:.3f} needs about {self.needed:,} {self.sampled}"
        elif self.target_delta is not None:
            out += f"; Δ = {self.target_delta:.3f} needs more than {MAX_QUERIES:,} {self.sampled}"
        return out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "approximation": APPROXIMATION, "n": self.n, "sampled": self.sampled, "sd": self.sd,
            "alpha": self.alpha, "power": self.power, "mde": self.mde,
            "randomization_floor": self.randomization_floor, "resolvable": self.resolvable,
            "target_delta": self.target_delta, "target_from": self.target_from, "needed": self.needed,
            "sentence": self.sentence,
        }
        for key, why in self.reasons:
            out[f"{key}_reason"] = why
        return out


def row_power(n: int, sd: float, n_nonzero: int, difference: float, alpha: float, resamples: int,
              alternative: str = "two-sided", min_delta: float = 0.0, sampled: str = "queries",
              power: float = DEFAULT_POWER, test: str = "randomization") -> RowPower:
    """A compare row's ``RowPower``: MDE = σ·d(n, α, π); floor from n_nonzero and B; the
    target is ``min_delta`` when set, else |Δ̄|; needed = queries_needed(target/σ).
    ``resolvable`` judges the deciding test: None when the t-test decides (``test = "t"``)."""
    reasons: dict[str, str] = {}
    mde = needed = None
    target: float | None = float(min_delta) if min_delta > 0 else abs(float(difference))
    target_from = "min_delta" if min_delta > 0 else "observed"
    if sd > 0 and math.isfinite(sd) and n >= 2:
        mde = sd * detectable_effect(n, alpha, power, alternative)
        if target:
            needed = queries_needed(target / sd, alpha, power, alternative)
            if needed is None:
                reasons["needed"] = f"more than {MAX_QUERIES:,} {sampled}"
        else:
            reasons["needed"] = "the target difference is 0"
    else:
        why = "undefined: sd of the differences is 0" if n >= 2 else f"fewer than 2 {sampled}"
        reasons["mde"] = reasons["needed"] = why
    if target == 0.0:
        target = None
        reasons["target_delta"] = "the observed difference is 0 and no --min-delta is set"
    floor = randomization_floor(n_nonzero, resamples, alternative)
    resolvable = None if floor is None else floor <= alpha
    if floor is None:
        reasons["randomization_floor"] = reasons["resolvable"] = "no randomization test (resamples = 0)"
    elif test == "t":
        resolvable = None
        reasons["resolvable"] = "the t-test decides (--test t): the randomization floor does not bound the verdict"
    return RowPower(n, sampled, float(sd), float(alpha), float(power), alternative, mde, floor,
                    resolvable, target, target_from, needed,
                    tuple(sorted(reasons.items())))
