"""Many systems at once: the randomised Tukey HSD test over every pair of lanes on one metric.

When many rankers are compared, Bonferroni over all k(k − 1)/2 pairs gets very strict;
Sakai (2014, after Carterette 2012) recommends the randomised Tukey HSD test, which
compares every pair while holding the family-wise error rate at α (seed 000, "Decide
in advance what counts as established").

The protocol (one fresh ``numpy.random.default_rng(seed)``, queries sorted by qid as
bytes, or units by label when ``units`` is given, as every resampling here):

* the k! permutations of the k systems are numbered in lexicographic order
  (``itertools.permutations(range(k))``);
* trial t, query i draws ``c[t, i]`` from ``rng.integers(0, k!, size=(B, n))`` (drawn in
  row blocks: the same numbers) and permutes that query's k scores by permutation c:
  the permuted score of system j is ``X[i, P[c, j]]``;
* the trial's statistic is the range of the permuted system means, max − min;
* a pair's p = (1 + #{trials with range ≥ |observed difference| − 100·ε·|difference|})
  / (B + 1) (never 0; the tolerance is the sign-flip test's, so float ties count).

Beside each p: the paired percentile interval of mean(b) − mean(a) (one shared
bootstrap draw of queries, ``resampling.bootstrap_means``; each pair's replicate is the
difference of its two lanes' replicate means) and W/L/T. Memory stays bounded: the
trials are drawn in blocks, never a B × n × k array. The letters table follows ranx's
``compare``: each lane carries the letters of the lanes it beats (p ≤ α and a higher
mean).

References
----------
- Carterette, B. (2012). Multiple testing in statistical analysis of systems-based
  information retrieval experiments. *ACM TOIS* 30(1), article 4. (the randomised Tukey
  HSD test)
- Sakai, T. (2014). Statistical reform in information retrieval? *SIGIR Forum* 48(1),
  3-12.
- Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero:
  calculating exact p-values when permutations are randomly drawn. *Statistical
  Applications in Genetics and Molecular Biology* 9(1), article 39.
  (p = (1 + e)/(B + 1))
- Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
  comparison. *ECIR 2022*, 259-264. (``compare``'s letters table)
"""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from .friedman import Omnibus, friedman
from .intervals import alpha_of, check_confidence, percentile_bounds
from .paired import zero_band
from .randomization import check_resamples
from .resampling import GATHER_MODE, bootstrap_means

#: The most lanes the test permutes (its table of k! permutations: 9! = 362,880 rows).
MAX_SYSTEMS = 9
_TIE_TOL = 100.0 * float(np.finfo(np.float64).eps)
#: Draws per block: (block rows × n) codes stay a few MB.
_BLOCK_ELEMENTS = 1 << 18


def permutations_table(k: int) -> np.ndarray:
    """The k! permutations of range(k) in lexicographic order, as a (k!, k) int8 array."""
    return np.array(list(itertools.permutations(range(k))), dtype=np.int8).reshape(math.factorial(k), k)


def _plain_ranges(x: np.ndarray, perms: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The protocol's statistic the plain way, for a few trials: each trial's permuted
    (n, k) matrix summed over the queries in qid order (``np.add.reduce`` on axis 0)."""
    n = x.shape[0]
    rows = np.arange(n)[:, None]
    out = np.empty(codes.shape[0], dtype=np.float64)
    for t, c in enumerate(codes):
        means = np.add.reduce(x[rows, perms[c]], axis=0) / n
        out[t] = means.max() - means.min()
    return out


def null_ranges(values: np.ndarray, resamples: int, seed: int, chunk: int | None = None,
                thresholds: np.ndarray | None = None) -> np.ndarray:
    """The B permuted ranges (max − min of the system means), drawn as the module doc says.

    Fast path: per trial, the scores are summed per permutation code (``np.bincount``,
    one pass per system), then each position's sum is read off the k! code sums (when
    k! ≤ n; else each query's permuted scores are gathered, a block at a time). That
    sums in another order than the plain statistic, so it is within a rigorous rounding
    band δ = 4·(n + k! + 64)·ε·Σ_i max_s|x_is| / n of it; a trial whose fast range lies
    within δ of one of ``thresholds`` (the values the ranges are compared with) is
    recomputed the plain way (``_plain_ranges``), so every count equals the plain
    protocol's exactly.
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    n, k = x.shape
    perms = permutations_table(k).astype(np.intp)
    F = perms.shape[0]
    rng = np.random.default_rng(seed)
    B = resamples
    by_code = F <= n  # summing per code pays when there are fewer codes than queries
    rows = chunk or max(1, _BLOCK_ELEMENTS // (max(n, F * k) if by_code else n * k))
    cols = [np.ascontiguousarray(x[:, s]) for s in range(k)]
    flat = x.ravel()
    base = (np.arange(n, dtype=np.intp) * k)[None, :, None]
    codes_of = np.arange(F)[:, None]
    eps = float(np.finfo(np.float64).eps)
    band = 4.0 * (n + F + 64) * eps * float(np.sum(np.max(np.abs(x), axis=1))) / n
    thr = None if thresholds is None else np.sort(np.asarray(thresholds, dtype=np.float64))
    out = np.empty(B, dtype=np.float64)
    for start in range(0, B, rows):
        r = min(rows, B - start)
        codes = rng.integers(0, F, size=(r, n))
        if by_code:
            sums = np.empty((r, F, k), dtype=np.float64)
            for t in range(r):
                for s, col in enumerate(cols):
                    sums[t, :, s] = np.bincount(codes[t], weights=col, minlength=F)
            # position j of code c holds system perms[c, j]
            means = sums[:, codes_of, perms].sum(axis=1) / n
        else:  # gather each query's permuted scores: (r, n, k), never more than a block
            idx = perms[codes]
            idx += base
            means = np.take(flat, idx, mode=GATHER_MODE).sum(axis=1) / n

        block = means.max(axis=1) - means.min(axis=1)
        if thr is not None and thr.size:
            at = np.searchsorted(thr, block)
            near = np.zeros(r, dtype=bool)
            for side in (at - 1, at):
                ok = (side >= 0) & (side < thr.size)
                near[ok] |= np.abs(block[ok] - thr[side[ok]]) <= band
            if near.any():
                block[near] = _plain_ranges(x, perms, codes[near])
        out[start:start + r] = block
    return out


@dataclass(frozen=True)
class TukeyPair:
    """One pair (a, b) of lanes, a before b in lane order: Δ = mean(b) − mean(a)."""

    a: str
    b: str
    difference: float
    p: float | None
    exceedances: int | None
    ci_low: float | None
    ci_high: float | None
    wins: int  # queries (or units) where b > a
    losses: int
    ties: int
    significant: bool

    @property
    def winner(self) -> str | None:
        """The lane with the higher mean when the pair is significant, else None."""
        if not self.significant or self.difference == 0:
            return None
        return self.b if self.difference > 0 else self.a

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "difference": self.difference, "p": self.p,
                "exceedances": self.exceedances, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "wins": self.wins, "losses": self.losses, "ties": self.ties, "significant": self.significant,
                "winner": self.winner}


@dataclass(frozen=True)
class TukeyResult:
    """The randomised Tukey HSD over k lanes on one metric (module doc)."""

    metric: str
    lanes: tuple[str, ...]
    means: tuple[float, ...]
    letters: tuple[str, ...]  # one per lane, in lane order
    pairs: tuple[TukeyPair, ...]
    resamples: int
    seed: int
    confidence: float
    n: int
    n_units: int
    sampling_unit: str = "query"
    warnings: tuple[str, ...] = field(default=())
    omnibus: Omnibus | None = None  # Friedman's test over the same matrix, read before the pairs

    @property
    def alpha(self) -> float:
        return alpha_of(self.confidence)

    def beats(self, lane: str) -> tuple[str, ...]:
        """The letters of the lanes ``lane`` beats (significant and a higher mean), in letter order."""
        letter = dict(zip(self.lanes, self.letters))
        out = [letter[p.b if p.winner == p.a else p.a] for p in self.pairs if p.winner == lane]
        return tuple(sorted(out))

    def as_dict(self) -> dict[str, Any]:
        return {
            "test": "randomised Tukey HSD",
            "metric": self.metric,
            "lanes": [{"lane": n, "letter": l, "mean": m, "beats": list(self.beats(n))}
                      for n, l, m in zip(self.lanes, self.letters, self.means)],
            "pairs": [p.as_dict() for p in self.pairs],
            "settings": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence,
                         "alpha": self.alpha, "n": self.n, "n_units": self.n_units,
                         "sampling_unit": self.sampling_unit},
            "warnings": list(self.warnings),
            **({"omnibus": self.omnibus.as_dict()} if self.omnibus is not None else {}),
        }


def tukey_hsd(
    values: np.ndarray,
    lanes: Sequence[str],
    *,
    metric: str = "",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    units: Sequence[str] | None = None,
    chunk: int | None = None,
) -> TukeyResult:
    """The randomised Tukey HSD of the module doc over the columns of ``values``
    ((n, k): rows = queries sorted by qid as bytes, columns = lanes). With ``units`` the
    rows are first reduced to unit means (``units.unit_means``)."""
    x = np.asarray(values, dtype=np.float64)
    names = tuple(lanes)
    if x.ndim != 2 or x.shape[1] != len(names):
        raise InputError(f"values must be (queries, lanes) with one column per lane, got {x.shape}")
    n, k = x.shape
    if not 2 <= k <= MAX_SYSTEMS:
        raise InputError(f"the randomised Tukey HSD compares 2 to {MAX_SYSTEMS} lanes, got {k}", "--all-pairs")
    if not np.all(np.isfinite(x)):
        raise InputError("per-query values must be finite")
    conf = check_confidence(confidence)
    B = check_resamples(resamples)
    if units is not None:
        from .units import unit_means

        um = unit_means(units, *(x[:, j] for j in range(k)))
        x = np.column_stack(um.columns)
    elif n < 2:
        raise InputError(f"a paired comparison needs at least 2 queries, got {n}")
    u = x.shape[0]
    means = tuple(float(np.mean(x[:, j])) for j in range(k))
    alpha = alpha_of(conf)
    # the values the ranges are compared with: |Δ| less its float-tie tolerance
    obs_all = [abs(means[b] - means[a]) for a, b in itertools.combinations(range(k), 2)]
    thresholds = np.array([o - _TIE_TOL * o for o in obs_all])
    ranges = np.sort(null_ranges(x, B, seed, chunk, thresholds)) if B else None
    reps = bootstrap_means(x, B, seed) if B else None
    pairs = []
    for ia, ib in itertools.combinations(range(k), 2):
        d = x[:, ib] - x[:, ia]
        diff = means[ib] - means[ia]
        p = e = lo = hi = None
        if B:
            assert ranges is not None and reps is not None  # both drawn when B > 0
            obs = abs(diff)
            e = int(B - np.searchsorted(ranges, obs - _TIE_TOL * obs, side="left"))
            p = (1 + e) / (B + 1)
            lo, hi = percentile_bounds(reps[:, ib] - reps[:, ia], conf)
        band = zero_band(x[:, ia], x[:, ib])  # a tie within rounding, as compare decides it
        wins, losses = int(np.count_nonzero(d > band)), int(np.count_nonzero(d < -band))
        pairs.append(TukeyPair(names[ia], names[ib], diff, p, e, lo, hi, wins, losses, u - wins - losses,
                               p is not None and p <= alpha))
    warnings = []
    if B == 0:
        warnings.append("no randomised Tukey HSD was run (resamples = 0): no pair can be established")
    elif 1 / (B + 1) > alpha:
        warnings.append(f"with B = {B:,} the smallest attainable p is {1 / (B + 1):.4g} > α = {alpha:.4g}")
    return TukeyResult(metric, names, means, tuple(string.ascii_lowercase[:k]), tuple(pairs), B, int(seed), conf,
                       n, u, "query" if units is None else "unit", tuple(warnings), friedman(x, alpha))
