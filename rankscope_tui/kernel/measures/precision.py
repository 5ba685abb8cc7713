"""p@k (trec_eval ``P.k``): relevant in the top k / k; a short list's missing places are non-relevant.

Group level: relevant groups at their first occurrence in the top k / k.

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

from .measure import REQUIRED, Measure, Name, ceiling_min_r_over_k

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    out: NDArray[np.float64] = cols.count_rel_top(k, rel) / float(k)
    return out


MEASURE = Measure(
    kind="p", cutoff=REQUIRED, takes_rel=True, per_query=per_query, needs_relevant=False, ceiling=ceiling_min_r_over_k,
    definition=("{key}: relevant docs in the top {k} / {k}, short lists padded with non-relevant (trec_eval P.{k}); "
                "relevant = grade >= {rel}"),
    formula="relevant in the top k / k",
    peers="trec_eval P.k; ir_measures P@k; ranx precision@k; MTEB precision_at_k",
    names=(Name("p", "rankscope", "p@k"), Name("P", "ir_measures", "P@k"), Name("P", "trec_eval", "P.k"),
           Name("P", "trec_eval", "P_k"), Name("precision", "ranx", "precision@k"),
           Name("precision", "MTEB", "precision_at_k")),
)
