"""rr (trec_eval ``recip_rank``) and rr@k (MS MARCO's MRR@10): 1/rank of the first relevant hit.

rr has no cutoff beyond depth; rr@k is 0 when the first relevant hit lies below k (the
value trec_eval's ``recip_rank`` gives on the run cut at k). Group level: the rank of the
first occurrence of a relevant group.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
- Voorhees, E. M. (1999). The TREC-8 question answering track report. *TREC-8*, NIST
  Special Publication 500-246. (mean reciprocal rank)
- Nguyen, T., Rosenberg, M., Song, X. et al. (2016). MS MARCO: a human generated machine
  reading comprehension dataset. *CoCo@NIPS 2016*. (MRR@10)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import OPTIONAL, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    r = cols.first_rank(rel)
    hit = r > 0 if k is None else (r > 0) & (r <= k)
    return np.where(hit, 1.0 / np.maximum(r, 1), 0.0)


MEASURE = Measure(
    kind="rr", cutoff=OPTIONAL, takes_rel=True, per_query=per_query,
    definition_uncut=("{key}: 1 / rank of the first relevant doc within depth, 0 for a miss; mean = MRR "
                      "(trec_eval recip_rank); relevant = grade >= {rel}"),
    definition=("{key}: 1 / rank of the first relevant doc if it is in the top {k}, else 0; mean = MRR@{k} "
                "(trec_eval recip_rank on the run cut at {k}; ranx mrr@{k}; ir_measures RR@{k}); relevant = grade >= {rel}"),
    formula="1 / rank of the first relevant hit (0 if none, or none within k)",
    peers="trec_eval recip_rank (on the run cut at k); ir_measures RR, RR@k; ranx mrr, mrr@k; MTEB mrr_at_k",
    names=(Name("rr", "rankscope", "rr"), Name("rr", "rankscope", "rr@k"), Name("RR", "ir_measures", "RR"),
           Name("RR", "ir_measures", "RR@k"), Name("recip_rank", "trec_eval", "recip_rank", cutoff="none"),
           Name("mrr", "ranx", "mrr"), Name("mrr", "ranx", "mrr@k"), Name("mrr", "MTEB", "mrr_at_k")),
)
