"""judged@k: hits in the top k judged with grade >= 0, divided by k.

A short list's missing places and a query missing from the lane count as not judged.
Equals 1 - trec_eval ``unj.k`` only when the list holds at least k hits and the query is
in the run; ir_measures' ``Judged@k`` divides by min(k, retrieved), so that name is
refused (``names.py``). Group level: a later occurrence of a judged group counts as judged.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
- MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with
  ir-measures. *ECIR 2022*, 305-310. (ir_measures' names, ``Judged@k``)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import REQUIRED, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    judged = cols._cached("judged", lambda: cols.grade >= 0)
    out: NDArray[np.float64] = np.bincount(cols.qid[cols.top(k) & judged], minlength=cols.n) / float(k)
    return out


MEASURE = Measure(
    kind="judged", cutoff=REQUIRED, takes_rel=False, per_query=per_query, needs_relevant=False, ranks_lanes=False,
    definition=("{key}: hits in the top {k} judged with grade >= 0, divided by {k}; a short list's missing places and "
                "a query missing from the lane count as not judged (equals 1 - trec_eval unj.{k} only when the list holds "
                "at least {k} hits and the query is in the run: trec_eval counts missing places as judged; ir_measures' "
                "Judged@k divides by min(k, retrieved) instead)"),
    formula="judged hits in the top k / k",
    peers="1 - trec_eval unj.k when the list holds k hits (ir_measures Judged@k differs: refused)",
    names=(Name("judged", "rankscope", "judged@k"),),
)
