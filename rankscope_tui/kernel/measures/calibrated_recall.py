"""calibrated_recall@k: relevant in the top k / min(k, R), R = relevant judged; 0 when R = 0.

Equal to recall@k on every query with R <= k, larger where R > k (seed 001: quoting it
against a published Recall@k overstates). Group level: relevant groups, first occurrences.

References
----------
- Thakur, N., Reimers, N., Rücklé, A., Srivastava, A. & Gurevych, I. (2021). BEIR: a
  heterogeneous benchmark for zero-shot evaluation of information retrieval models.
  *NeurIPS 2021 Datasets and Benchmarks*. (capped recall, R_cap@k)
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
    d = np.minimum(cols.n_rel(rel), k)
    return np.divide(cnt, d, out=np.zeros(cols.n), where=d > 0)


MEASURE = Measure(
    kind="calibrated_recall", cutoff=REQUIRED, takes_rel=True, per_query=per_query,
    definition=("{key}: relevant docs in the top {k} / min({k}, R), R = all relevant docs judged for the query; equals "
                "recall@{k} when R <= {k} (not trec_eval recall.{k}, which divides by R); relevant = grade >= {rel}"),
    formula="relevant in the top k / min(k, R)",
    peers="none in trec_eval; seed 001's calibrated_recall@k",
    names=(Name("calibrated_recall", "rankscope", "calibrated_recall@k"),),
)
