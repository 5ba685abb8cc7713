"""F1@k: the harmonic mean of p@k and recall@k (ranx ``f1@k``).

F1@k = 2 * P@k * R@k / (P@k + R@k), P@k = relevant in the top k / k (short lists padded),
R@k = relevant in the top k / R; 0 when the top k holds no relevant doc.

Group level: relevant groups at their first occurrence (SPEC §3).

References
----------
- van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., ch. 7. Butterworths.
  (the F measure)
- Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
  comparison. *ECIR 2022*, 259-264. (``f1@k``)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import REQUIRED, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    cnt = cols.count_rel_top(k, rel).astype(np.float64)
    R = cols.n_rel(rel)
    p = cnt / float(k)
    r = np.divide(cnt, R, out=np.zeros(cols.n), where=R > 0)
    return np.divide(2.0 * p * r, p + r, out=np.zeros(cols.n), where=cnt > 0)


MEASURE = Measure(
    kind="f1", cutoff=REQUIRED, takes_rel=True, per_query=per_query,
    definition=("{key}: 2 * p@{k} * recall@{k} / (p@{k} + recall@{k}), 0 when the top {k} holds no relevant doc "
                "(ranx f1@{k}); relevant = grade >= {rel}"),
    formula="2 · P@k · R@k / (P@k + R@k)", peers="ranx f1@k",
    names=(Name("f1", "rankscope", "f1@k"), Name("f1", "ranx", "f1@k")),
)
