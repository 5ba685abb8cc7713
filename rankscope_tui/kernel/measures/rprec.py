"""R-precision (trec_eval ``Rprec``): relevant in the top R / R, R = relevant judged; 0 when R = 0.

Group level: relevant groups (first occurrences) in the top R / R relevant judged groups.

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

from .measure import NONE, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    n_rel = cols.n_rel(rel)
    m = cols.is_rel(rel) & (cols.rank <= n_rel[cols.qid])
    cnt = np.bincount(cols.qid[m], minlength=cols.n).astype(np.float64)
    return np.divide(cnt, n_rel, out=np.zeros(cols.n), where=n_rel > 0)


MEASURE = Measure(
    kind="rprec", cutoff=NONE, takes_rel=True, per_query=per_query,
    definition=("{key}: R-precision, relevant docs in the top R / R where R = all relevant docs judged for the query "
                "(trec_eval Rprec); relevant = grade >= {rel}"),
    formula="relevant in the top R / R",
    peers="trec_eval Rprec; ir_measures Rprec; ranx r-precision",
    names=(Name("rprec", "rankscope", "rprec"), Name("Rprec", "ir_measures", "Rprec"), Name("Rprec", "trec_eval", "Rprec"),
           Name("r-precision", "ranx", "r-precision")),
)
