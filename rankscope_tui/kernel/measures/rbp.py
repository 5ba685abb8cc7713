"""Rank-biased precision ``rbp(p=X)`` and its residual ``rbp_resid(p=X)`` (trec_eval ``rbp``, ``rbp_resid``).

RBP = (1 - p) * sum over retrieved hits at rank i (i <= k for rbp@k) of gain_i * p^(i-1).
Gain: trec_eval's, the grade scaled into [0, 1] by the query's highest judged grade
(grade / max(1, highest grade); grades <= 0 and unjudged hits gain 0), so binary qrels
give 0/1; with ``rel=N`` in the name the gain is binary, 1 for grade >= N (ir_measures'
``RBP(rel=N)``). trec_eval ignores ``-l`` here, and so does the graded form.

RBP is a lower bound when hits are unjudged. The residual is trec_eval's: when at least
one retrieved hit is unjudged (not in the qrels, or a negative grade), residual =
p^n + (1 - p) * sum over unjudged hits at rank i of p^(i-1), n = hits retrieved (within
k); the value could rise by at most that much. When every retrieved hit is judged it is
0, as trec_eval prints it (the tail past the list then counts for nothing), and so is a
query missing from the lane (trec_eval ``-c`` sets it to 0). Requesting
``rbp`` brings ``rbp_resid`` beside it, at the same p, level and cutoff.

The default persistence is trec_eval's p = 0.9; ir_measures' ``RBP`` defaults to 0.8,
so the canonical key always writes p.

Group level: gains and judgments of the group at its first occurrence (SPEC §3); a later
occurrence gains 0 and is unjudged when its group is.

References
----------
- Moffat, A. & Zobel, J. (2008). Rank-biased precision for measurement of retrieval
  effectiveness. *ACM TOIS* 27(1), article 2. (RBP and its residual)
- trec_eval (NIST), the TREC evaluation program, version 10.0: ``m_rbp.c`` and
  ``m_rbp_resid.c`` (gain scaling, the residual's convention).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..ranking.judgments import NO_JUDGMENT
from .columns import weighted_bincount
from .measure import OPTIONAL, Measure, Name, Param
from .portable import power_int

if TYPE_CHECKING:
    from .columns import Columns

#: RBP's persistence: trec_eval's default 0.9; p in (0, 1).
PERSISTENCE = Param("p", "paren", 0.9, 0.0, 1.0, low_open=True, high_open=True)


def _max_grade(cols: Columns) -> NDArray[np.float64]:
    """The highest judged grade per query, at least 1 (trec_eval scales gains into [0, 1] by it)."""

    def compute() -> NDArray[np.float64]:
        top = np.zeros(cols.n, dtype=np.int64)
        if cols.ideal.qid.size:
            np.maximum.at(top, cols.ideal.qid, cols.ideal.grade)
        return np.maximum(top, 1).astype(np.float64)

    return cols._cached("max_grade", compute)


def per_query(cols: Columns, k: int | None, rel: int | None, p: float = 0.9) -> NDArray[np.float64]:
    m = cols.grade > 0 if rel is None else cols.grade >= rel
    if k is not None:
        m &= cols.top(k)
    q, r = cols.qid[m], cols.rank[m]
    gain = np.ones(q.size) if rel is not None else cols.grade[m] / _max_grade(cols)[q]
    total = weighted_bincount(q, weights=gain * power_int(p, r - 1), minlength=cols.n)
    out: NDArray[np.float64] = (1.0 - p) * total
    return out


def residual(cols: Columns, k: int | None, rel: int | None, p: float = 0.9) -> NDArray[np.float64]:
    h = cols.hits
    unj = (h.grade == NO_JUDGMENT) | (h.grade < 0)
    if k is not None:
        unj &= h.rank <= k
    q, r = h.qid[unj], h.rank[unj]
    tail = weighted_bincount(q, weights=power_int(p, r - 1), minlength=cols.n)
    any_unj = np.bincount(q, minlength=cols.n) > 0
    n = cols.n_ret(k)
    out = np.zeros(cols.n)
    out[any_unj] = power_int(p, n[any_unj]) + (1.0 - p) * tail[any_unj]
    # an all-unjudged list sums to 1 exactly in arithmetic; float rounding may land a hair above
    return np.minimum(out, 1.0)


_RBP_NAMES = (Name("rbp", "rankscope", "rbp"), Name("rbp", "rankscope", "rbp(p=0.8)"), Name("rbp", "rankscope", "rbp@k"),
              Name("RBP", "ir_measures", "RBP(p=0.8)"), Name("RBP", "ir_measures", "RBP(p=0.8)@k"),
              Name("rbp", "trec_eval", "rbp", cutoff="none"))

MEASURE = Measure(
    kind="rbp", cutoff=OPTIONAL, takes_rel=True, per_query=per_query, param=PERSISTENCE, companion="rbp_resid",
    definition=("{key}: rank-biased precision at persistence p = {param} over the top {k}, (1 - p) * sum of gain * "
                "p^(i-1); gain = grade / the query's highest judged grade (at least 1), or with rel=N in the name 1 "
                "for grade >= N; unjudged hits gain 0, so it is a lower bound: read it with its residual "
                "(Moffat & Zobel 2008; trec_eval rbp)"),
    definition_uncut=("{key}: rank-biased precision at persistence p = {param}, (1 - p) * sum over the whole list of "
                      "gain * p^(i-1); gain = grade / the query's highest judged grade (at least 1), or with rel=N in "
                      "the name 1 for grade >= N; unjudged hits gain 0, so it is a lower bound: read it with its "
                      "residual (Moffat & Zobel 2008; trec_eval rbp)"),
    formula="(1 − p) · Σ gain_i · p^(i−1); gain = grade / highest grade of the query; p = 0.9 unless given",
    peers="trec_eval rbp (p=0.9); ir_measures RBP(p=X) (its default p is 0.8)",
    names=_RBP_NAMES,
)

RESIDUAL = Measure(
    kind="rbp_resid", cutoff=OPTIONAL, takes_rel=True, per_query=residual, param=PERSISTENCE, ranks_lanes=False,
    definition=("{key}: the residual of rbp at p = {param} over the top {k}: when a hit there is unjudged, p^n + (1 - p) "
                "* sum of p^(i-1) over the unjudged hits (n = hits retrieved, at most {k}), the most rbp could rise; 0 "
                "when every hit is judged (trec_eval rbp_resid)"),
    definition_uncut=("{key}: the residual of rbp at p = {param}: when a retrieved hit is unjudged, p^n + (1 - p) * sum "
                      "of p^(i-1) over the unjudged hits (n = hits retrieved), the most rbp could rise; 0 when every "
                      "hit is judged (trec_eval rbp_resid)"),
    formula="p^n + (1 − p) · Σ over unjudged hits of p^(i−1); 0 when every hit is judged (shown beside rbp)",
    peers="trec_eval rbp_resid",
    names=(Name("rbp_resid", "rankscope", "rbp_resid"), Name("rbp_resid", "trec_eval", "rbp_resid", cutoff="none")),
)

MEASURES = (MEASURE, RESIDUAL)
