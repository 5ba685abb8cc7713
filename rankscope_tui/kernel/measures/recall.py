"""recall@k (trec_eval ``recall.k``): relevant in the top k / all relevant judged (R, not min(k, R)).

Group level: relevant groups in the top k (first occurrences) / relevant judged groups.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
- Voorhees, E. M. & Harman, D. K., eds. (2005). *TREC: Experiment and Evaluation in
  Information Retrieval*. MIT Press. (the TREC measures)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import REQUIRED, Measure, Name, ceiling_min_r_over_r

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    cnt = cols.count_rel_top(k, rel).astype(np.float64)
    n_rel = cols.n_rel(rel)
    return np.divide(cnt, n_rel, out=np.zeros(cols.n), where=n_rel > 0)


MEASURE = Measure(
    kind="recall", cutoff=REQUIRED, takes_rel=True, per_query=per_query, ceiling=ceiling_min_r_over_r,
    definition=("{key}: relevant docs in the top {k} / all relevant docs judged for the query (trec_eval recall.{k}); "
                "relevant = grade >= {rel}"),
    formula="relevant in the top k / R (all relevant judged)",
    peers="trec_eval recall.k; ir_measures R@k; ranx recall@k; MTEB recall_at_k",
    names=(Name("recall", "rankscope", "recall@k"), Name("R", "ir_measures", "R@k"), Name("recall", "trec_eval", "recall.k"),
           Name("recall", "trec_eval", "recall_k"), Name("recall", "ranx", "recall@k"),
           Name("recall", "MTEB", "recall_at_k")),
)
