"""The omnibus test before many pairs: Friedman's rank test over the system × query matrix.

``compare --all-pairs`` first asks whether the k lanes differ at all; only then is the
randomised Tukey HSD table read as the answer to "which pairs differ" (when the omnibus
test does not reject, the table is exploratory). Friedman's test is the repeated-measures
test on ranks: each query (row) ranks the k lanes' scores (ties get their average rank),
R_j is lane j's rank sum over the n rows, and

    Q = [12 / (n k (k + 1))] · Σ_j R_j² − 3 n (k + 1),

divided by the tie correction C = 1 − Σ_i Σ_g (t_g³ − t_g) / (n k (k² − 1)) (t_g the
sizes of the tie groups within row i); p = P(χ²_{k−1} ≥ Q / C), the large-sample
approximation (the convention of ``scipy.stats.friedmanchisquare``). With every row
tied (C = 0) the statistic is undefined and there is no p. With ``--unit`` the rows are
the unit means, as for the Tukey table.

References
----------
- Friedman, M. (1937). The use of ranks to avoid the assumption of normality implicit in
  the analysis of variance. *JASA* 32(200), 675-701.
- Sakai, T. (2018). *Laboratory Experiments in Information Retrieval*, ch. 4 (an omnibus
  test over many systems before the pairwise randomised Tukey HSD).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chi2, rankdata


@dataclass(frozen=True)
class Omnibus:
    """Friedman's test over k lanes and n rows (module doc); ``p`` None with ``reason``."""

    statistic: float | None
    df: int
    p: float | None
    n: int
    k: int
    alpha: float
    reason: str = ""

    @property
    def rejects(self) -> bool:
        """The lanes differ at α (p ≤ α)."""
        return self.p is not None and self.p <= self.alpha

    @property
    def sentence(self) -> str:
        """What every face prints above the pairwise table, decided here once."""
        head = f"omnibus Friedman test over {self.k} lanes and {self.n} rows"
        if self.p is None or self.statistic is None:
            return f"{head}: no p ({self.reason}); the pairwise table below is exploratory"
        nums = f"χ² = {self.statistic:.4g}, df = {self.df}, p = {self.p:.4g}"
        if self.rejects:
            return f"{head}: {nums} ≤ α = {self.alpha:.4g}: the lanes differ; the pairwise table says which pairs"
        return (f"{head}: {nums} > α = {self.alpha:.4g}: it does not reject that the lanes are alike; "
                "the pairwise table below is exploratory")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"test": "Friedman", "statistic": self.statistic, "df": self.df, "p": self.p,
                               "n": self.n, "k": self.k, "alpha": self.alpha, "rejects": self.rejects,
                               "sentence": self.sentence}
        if self.reason:
            out["p_reason"] = self.reason
        return out


def friedman(values: np.ndarray, alpha: float) -> Omnibus:
    """Friedman's test (module doc) over the columns of ``values`` ((n, k): rows = queries
    or units, columns = lanes)."""
    x = np.asarray(values, dtype=np.float64)
    n, k = x.shape
    ranks = rankdata(x, axis=1)  # average ranks within each row
    R = ranks.sum(axis=0)
    q = 12.0 / (n * k * (k + 1)) * float(np.sum(R * R)) - 3.0 * n * (k + 1)
    ties = 0.0
    for row in x:
        _, t = np.unique(row, return_counts=True)
        ties += float(np.sum(t.astype(np.float64) ** 3 - t))
    c = 1.0 - ties / (n * k * (k * k - 1))
    if c <= 0.0:
        return Omnibus(None, k - 1, None, n, k, alpha, "every row ties all lanes")
    stat = max(q / c, 0.0)
    return Omnibus(stat, k - 1, float(chi2.sf(stat, k - 1)), n, k, alpha)
