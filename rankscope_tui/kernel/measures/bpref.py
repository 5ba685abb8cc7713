"""bpref (trec_eval ``bpref``; Buckley and Voorhees, SIGIR 2004).

bpref = (1/R) * sum over relevant hits r of (1 - min(n_r, R) / min(N, R)), where n_r is
the number of judged non-relevant hits (0 <= grade < rel) ranked above r, N the judged
non-relevant docs of the query, R the relevant judged; a term is 1 when n_r = 0.
Unjudged hits (and negative grades) are skipped. 0 when R = 0.

Group level: a group's grade is its best judged grade (SPEC §3); N counts the judged
non-relevant groups. A later occurrence of a group already seen is skipped, as bpref
skips every hit outside the judgment pool: it is a repeat, not a judged non-relevant
unit (the trec_eval construction gives it a fresh unjudged id).

References
----------
- Buckley, C. & Voorhees, E. M. (2004). Retrieval evaluation with incomplete
  information. *SIGIR 2004*, 25-32. (bpref)
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .columns import weighted_bincount, within_query_count
from .measure import NONE, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    L = cols.level(rel)
    g = cols.grade
    keep = g >= 0
    if cols.repeat is not None:
        keep &= ~cols.repeat
    q, gk = cols.qid[keep], g[keep]
    relm = gk >= L
    nonrel = (~relm).astype(np.int64)
    above = within_query_count(q, nonrel)[relm]  # relevant rows are not non-relevant: counts strictly above
    qr = q[relm]
    R = cols.n_rel(L)
    ig = cols.ideal.grade
    N = weighted_bincount(cols.ideal.qid, weights=(ig >= 0) & (ig < L), minlength=cols.n)
    Rq = R[qr]
    denom = np.minimum(N[qr], Rq)
    term = np.ones(qr.size)
    m = above > 0  # then N >= above >= 1 and R >= 1, so denom >= 1
    term[m] = 1.0 - np.minimum(above[m], Rq[m]) / denom[m]
    total = weighted_bincount(qr, weights=term, minlength=cols.n)
    return np.divide(total, R, out=np.zeros(cols.n), where=R > 0)


MEASURE = Measure(
    kind="bpref", cutoff=NONE, takes_rel=True, per_query=per_query,
    definition=("{key}: (1/R) * sum over relevant docs retrieved of 1 - min(n, R)/min(N, R), n = judged non-relevant docs "
                "ranked above it, N = judged non-relevant docs, R = relevant judged; unjudged docs skipped (trec_eval "
                "bpref; Buckley & Voorhees 2004); group level: a later occurrence of a group is skipped; "
                "relevant = grade >= {rel}"),
    formula="(1/R) * sum over relevant hits of 1 - min(n above, R) / min(N, R)",
    peers="trec_eval bpref; ir_measures Bpref; ranx bpref",
    names=(Name("bpref", "rankscope", "bpref"), Name("Bpref", "ir_measures", "Bpref"), Name("bpref", "trec_eval", "bpref"),
           Name("bpref", "ranx", "bpref")),
)
