"""hit@k (trec_eval ``success.k``): 1 if 0 < rank <= k, where rank is the first relevant hit.

Group level: the first occurrence of a relevant group (SPEC §3).

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import REQUIRED, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    r = cols.first_rank(rel)
    return ((r > 0) & (r <= k)).astype(np.float64)


MEASURE = Measure(
    kind="hit", cutoff=REQUIRED, takes_rel=True, per_query=per_query, proportion=True, needs_relevant=False,
    definition="{key}: 1 if a relevant doc is in the top {k} (trec_eval success.{k}); relevant = grade >= {rel}",
    formula="1 if a relevant doc is in the top k, else 0",
    peers="trec_eval success.k; ir_measures Success@k; ranx hit_rate@k",
    names=(Name("hit", "rankscope", "hit@k"), Name("success", "rankscope", "success@k"),
           Name("Success", "ir_measures", "Success@k"), Name("success", "trec_eval", "success.k"),
           Name("success", "trec_eval", "success_k"), Name("hit_rate", "ranx", "hit_rate@k")),
)
