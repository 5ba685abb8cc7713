"""Rank correlations between two orders of the same systems: Kendall's τ and τ_AP.

Each system has a score under the reference labels (A) and under the other labels (B);
an order ranks the systems by score, highest first.

Kendall's τ-b (Kendall 1945), the variant ``scipy.stats.kendalltau`` computes by default:
over the pairs of systems, with C concordant pairs, D discordant, T_x pairs tied only in
x and T_y tied only in y,

    τ_b = (C − D) / √((C + D + T_x)(C + D + T_y)),

undefined (NaN) when one side ties every pair.

τ_AP (Yilmaz, Aslam & Robertson 2008) weighs a swap near the top more: walking the
order under B (the estimate) from its second system down, with C(i) the number of the
i − 1 systems above position i that A also ranks above the system at i,

    τ_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1.

It is not symmetric: A is the truth, B the estimate. The formula assumes no ties; here a
tie in either order is broken by the systems' order as given (the ``ties`` count says
how many tied pairs there were). Two orders that swap only the bottom pair keep τ_AP
near 1; a swap of the top pair costs the most.

References
----------
- Kendall, M. G. (1945). The treatment of ties in ranking problems. *Biometrika* 33(3), 239-251.
- Yilmaz, E., Aslam, J. A. & Robertson, S. (2008). A new rank correlation coefficient
  for information retrieval. *Proceedings of SIGIR 2008*, 587-594.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b of paired scores ``x``, ``y`` (NaN under fewer than 2 systems or all ties on a side)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = a.size
    if n < 2:
        return math.nan
    i, j = np.triu_indices(n, k=1)
    sx, sy = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    both = sx * sy
    c, d = int((both > 0).sum()), int((both < 0).sum())
    tx = int(((sx == 0) & (sy != 0)).sum())
    ty = int(((sy == 0) & (sx != 0)).sum())
    den = math.sqrt((c + d + tx) * (c + d + ty))
    return (c - d) / den if den > 0 else math.nan


def order(scores: Sequence[float]) -> list[int]:
    """Indices of the systems by score, highest first; a tie keeps the given order."""
    s = np.asarray(scores, dtype=np.float64)
    return sorted(range(s.size), key=lambda i: (-s[i], i))


def tied_pairs(scores: Sequence[float]) -> int:
    s = np.asarray(scores, dtype=np.float64)
    i, j = np.triu_indices(s.size, k=1)
    return int((s[i] == s[j]).sum())


def tau_ap(truth: Sequence[float], estimate: Sequence[float]) -> float:
    """τ_AP of the order by ``estimate`` against the order by ``truth`` (module docstring);
    NaN under 2 systems."""
    n = len(truth)
    if n < 2:
        return math.nan
    rank_true = {sys: r for r, sys in enumerate(order(truth))}
    est = order(estimate)
    total = 0.0
    for i in range(1, n):
        here = rank_true[est[i]]
        correct = sum(1 for j in range(i) if rank_true[est[j]] < here)
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0
