"""Cohen's κ and weighted κ from a confusion matrix, and their bootstrap over queries.

For a K × K confusion matrix O of two labellers (row: A's grade, column: B's, counts of
pairs), with row sums r, column sums c and n pairs, the chance table is E = r cᵀ / n and

    κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij,

with disagreement weights w_ij = 0 on the diagonal and, off it, 1 (Cohen's κ, 1960),
|i − j| (linear) or (i − j)² (quadratic; Cohen 1968). The categories are the integers of
the common scale (``pairs``), so i − j is the grade distance. κ is undefined (NaN) when
the chance disagreement Σ w E is 0: both labellers gave every pair one same grade.
This is the formula of scikit-learn's ``cohen_kappa_score`` (with ``labels`` the scale).

Intervals: the pairs of one query share a topic, a judge and a ranking, so they are not
independent draws; the bootstrap resamples whole queries (a cluster bootstrap): each
replicate draws the query codes ``rng.integers(0, Q, (B, Q))`` from a fresh
``default_rng(seed)`` (the project's resampling protocol, queries sorted as bytes), sums
the drawn queries' confusion matrices and computes κ on the sum; the interval is the
percentile interval of the replicates (a replicate where κ is undefined is left out and
counted). Treating the pairs as independent (the analytic standard error of Fleiss,
Cohen & Everitt 1969) would make the interval too narrow when queries differ.

References
----------
- Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
  Psychological Measurement* 20(1), 37-46.
- Cohen, J. (1968). Weighted kappa. *Psychological Bulletin* 70(4), 213-220.
- Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. *JRSS B* 69(3),
  369-390. (resampling clusters, not the units inside them)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..statistics.intervals import finite_or_none, percentile_bounds

#: The weightings, in the order tables list them; ``None`` is Cohen's unweighted κ.
WEIGHTS: tuple[str, ...] = ("none", "linear", "quadratic")
#: Each weighting's name as every face shows it.
LABELS: dict[str, str] = {"none": "Cohen's kappa", "linear": "weighted kappa, linear",
                          "quadratic": "weighted kappa, quadratic"}
#: Replicates drawn per block (memory flat in B).
_BLOCK = 2048


def weight_matrix(k: int, weights: str) -> NDArray[np.float64]:
    """The K × K disagreement weights of ``weights`` ("none", "linear", "quadratic")."""
    i = np.arange(k, dtype=np.float64)
    d = np.abs(i[:, None] - i[None, :])
    if weights == "none":
        return (d > 0).astype(np.float64)
    if weights == "linear":
        return d
    if weights == "quadratic":
        return d * d
    raise ValueError(f"unknown weights {weights!r}; expected one of {', '.join(WEIGHTS)}")


def confusion(a: NDArray[np.int64], b: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """Counts of (A category, B category) over the pairs; ``a``, ``b`` are category indices 0..k-1."""
    return np.bincount(np.asarray(a) * k + np.asarray(b), minlength=k * k).reshape(k, k).astype(np.int64)


def kappas(tables: NDArray[Any], weights: str) -> NDArray[np.float64]:
    """κ of each confusion matrix in ``tables`` (shape (..., K, K)); NaN where undefined."""
    t = np.asarray(tables, dtype=np.float64)
    k = t.shape[-1]
    w = weight_matrix(k, weights)
    n = t.sum(axis=(-2, -1))
    rows, cols = t.sum(axis=-1), t.sum(axis=-2)
    observed = np.einsum("...ij,ij->...", t, w)
    # Σ w_ij r_i c_j / n without forming E
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.einsum("...i,ij,...j->...", rows, w, cols) / n
        out = 1.0 - observed / expected
    return np.where((n > 0) & (expected > 0), out, np.nan)


def kappa(table: NDArray[Any], weights: str) -> float:
    """κ of one confusion matrix (NaN where undefined)."""
    return float(kappas(np.asarray(table)[None], weights)[0])


def query_tables(query: NDArray[np.int64], a: NDArray[np.int64], b: NDArray[np.int64], n_queries: int,
                 k: int) -> NDArray[np.int64]:
    """One confusion matrix per query code, shape (Q, K, K)."""
    flat = (np.asarray(query, dtype=np.int64) * k + a) * k + b
    return np.bincount(flat, minlength=n_queries * k * k).reshape(n_queries, k, k).astype(np.int64)


@dataclass(frozen=True)
class KappaInterval:
    """κ under one weighting, its percentile interval over ``resamples`` query resamples."""

    weights: str
    estimate: float
    low: float
    high: float
    resamples: int
    undefined_replicates: int

    def as_dict(self) -> dict[str, Any]:
        return {"weights": self.weights, "label": LABELS[self.weights], "estimate": finite_or_none(self.estimate),
                "low": finite_or_none(self.low),
                "high": finite_or_none(self.high), "resamples": self.resamples,
                "undefined_replicates": self.undefined_replicates}


def bootstrap_kappas(tables: NDArray[np.int64], weights: tuple[str, ...], resamples: int, seed: int,
                     confidence: float) -> list[KappaInterval]:
    """κ of the summed per-query ``tables`` (Q, K, K) under each weighting, with the
    cluster bootstrap's percentile interval (the module docstring); ``resamples`` 0 or a
    single query gives no interval (NaN bounds)."""
    q = tables.shape[0]
    total = tables.sum(axis=0)
    estimates = {w: kappa(total, w) for w in weights}
    if resamples == 0 or q < 2:
        return [KappaInterval(w, estimates[w], float("nan"), float("nan"), 0, 0) for w in weights]
    flat = tables.reshape(q, -1).astype(np.float64)
    k = tables.shape[-1]
    rng = np.random.default_rng(seed)
    reps: dict[str, list[NDArray[np.float64]]] = {w: [] for w in weights}
    done = 0
    while done < resamples:
        m = min(_BLOCK, resamples - done)
        idx = rng.integers(0, q, size=(m, q))
        rows = np.arange(m, dtype=np.int64)[:, None] * q
        counts = np.bincount((rows + idx).ravel(), minlength=m * q).reshape(m, q).astype(np.float64)
        drawn = (counts @ flat).reshape(m, k, k)
        for w in weights:
            reps[w].append(kappas(drawn, w))
        done += m
    out = []
    for w in weights:
        r = np.concatenate(reps[w])
        ok = r[np.isfinite(r)]
        if np.isfinite(estimates[w]) and ok.size:
            lo, hi = percentile_bounds(ok, confidence)
        else:
            lo, hi = float("nan"), float("nan")
        out.append(KappaInterval(w, estimates[w], lo, hi, resamples, int(r.size - ok.size)))
    return out
