"""Inferred AP ``infap`` (trec_eval ``infAP``; Yilmaz & Aslam 2006), for sampled judgments.

trec_eval's convention sorts the hits into three kinds: not in the qrels (outside the
pool: skipped, though they keep their place in the ranking), in the qrels with a negative
grade (pooled but not judged: counted as pooled, their relevance inferred from the judged
ones), and judged (grade >= 0). For each relevant hit at rank i (0-based j = i - 1), with
r relevant, n judged non-relevant and u pooled-unjudged hits above it:

    term = 1                                            when j = 0
    term = 1/(j+1) + j/(j+1) * (r + n + u)/j * (r + eps)/(r + n + 2 eps)   otherwise

eps = 0.00001; infAP = sum of terms / R, R = relevant judged; 0 when R = 0. With
complete judgments (no negative grades) it still differs from AP: hits outside the qrels
count as non-relevant only through their ranks.

Group level: a group's grade at its first occurrence (SPEC §3); a later occurrence is
judged non-relevant when its group is judged, outside the pool when it is not.

References
----------
- Yilmaz, E. & Aslam, J. A. (2006). Estimating average precision with incomplete and
  imperfect judgments. *CIKM 2006*, 102-111. (infAP)
- trec_eval (NIST), the TREC evaluation program, version 10.0: ``m_infap.c`` (the pool
  convention: a negative grade marks a pooled, unjudged doc).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .columns import weighted_bincount, within_query_count
from .measure import NONE, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns

#: trec_eval's INFAP_EPSILON
EPSILON = 0.00001


def per_query(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    L = cols.level(rel)
    g, q = cols.grade, cols.qid  # rows in the qrels (judged or pooled-unjudged), in rank order
    relm = g >= L
    # counts strictly above each row: a relevant row is none of the three kinds it counts above itself
    rel_above = within_query_count(q, relm.astype(np.int64)) - relm
    nonrel_above = within_query_count(q, ((g >= 0) & ~relm).astype(np.int64))
    unj_above = within_query_count(q, (g < 0).astype(np.int64))
    r, n, u = rel_above[relm], nonrel_above[relm], unj_above[relm]
    fj = cols.rank[relm].astype(np.float64) - 1.0
    term = np.ones(fj.size)
    m = fj > 0
    fj_, r_, n_, u_ = fj[m], r[m], n[m], u[m]
    term[m] = (1.0 / (fj_ + 1.0) + (fj_ / (fj_ + 1.0)) * ((r_ + n_ + u_) / fj_)
               * ((r_ + EPSILON) / ((r_ + n_) + 2 * EPSILON)))
    total = weighted_bincount(q[relm], weights=term, minlength=cols.n)
    R = cols.n_rel(L)
    return np.divide(total, R, out=np.zeros(cols.n), where=R > 0)


MEASURE = Measure(
    kind="infap", cutoff=NONE, takes_rel=True, per_query=per_query,
    definition=("{key}: inferred AP (Yilmaz & Aslam 2006; trec_eval infAP): for each relevant hit at 0-based place j, "
                "1 when j = 0, else 1/(j+1) + j/(j+1) * (r+n+u)/j * (r+eps)/(r+n+2eps), with r relevant, n judged "
                "non-relevant and u pooled-unjudged (negative grade) hits above it and eps = 0.00001; hits not in the "
                "qrels are outside the pool and only hold their place; summed and divided by R; "
                "relevant = grade >= {rel}"),
    formula="(1/R) · Σ over relevant hits of 1/(j+1) + j/(j+1) · (r+n+u)/j · (r+ε)/(r+n+2ε); negative grade = pooled, unjudged",
    peers="trec_eval infAP; ir_measures infAP",
    names=(Name("infap", "rankscope", "infap"), Name("infAP", "ir_measures", "infAP"),
           Name("infAP", "trec_eval", "infAP")),
)
