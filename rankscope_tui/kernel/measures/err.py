"""Expected reciprocal rank ``err@k`` and its normalised form ``nerr@k`` (Chapelle et al. 2009).

ERR@k = sum over ranks i <= k of R_i / i * prod over j < i of (1 - R_j), where R is the
probability that a user stops at a doc of grade g: R = (2^g - 1) / 2^g_max, g_max = 4
(the grade scale of ir_measures' ERR, which runs gdeval), or the highest grade in the
qrels when that is above 4 (gdeval refuses such qrels; a higher maximum keeps R below 1).
Grades <= 0 and unjudged hits have R = 0. nERR@k = ERR@k / the ERR@k of the ideal order
(every judged grade, best first); 0 when the ideal is 0. Both are graded: no ``rel=``.

Group level: the group's grade at its first occurrence (SPEC §3), later occurrences R = 0.

References
----------
- Chapelle, O., Metzler, D., Zhang, Y. & Grinspan, P. (2009). Expected reciprocal rank
  for graded relevance. *CIKM 2009*, 621-630. (ERR, the grade-to-probability mapping)
- MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with
  ir-measures. *ECIR 2022*, 305-310. (``ERR@k``, computed by gdeval with g_max = 4)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from . import portable
from .columns import weighted_bincount, within_query_count
from .measure import REQUIRED, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns

#: the grade scale's top as gdeval (ir_measures' ERR) fixes it
G_MAX = 4


def _g_max(cols: Columns) -> int:
    return cols._cached("err_gmax", lambda: max(G_MAX, int(cols.ideal.grade.max()) if cols.ideal.grade.size else 0))


def _err(q: NDArray[np.int32], rank: NDArray[np.float64], grade: NDArray[np.int64], g_max: int,
         n: int) -> NDArray[np.float64]:
    """ERR per query over rows in (query, rank) order: stop probabilities R, the chance of
    reaching each row (the product of 1 - R above it, within its query), summed R / rank."""
    R = (np.exp2(np.maximum(grade, 0).astype(np.float64)) - 1.0) / 2.0 ** g_max
    # log of the chance to pass each row; summed within the query, exclusive of the row itself
    log_pass = portable.log1p(-R)
    before = np.zeros(q.size)
    if q.size:
        c = np.cumsum(log_pass)
        start = np.r_[True, q[1:] != q[:-1]]
        idx = np.arange(q.size)
        first = np.maximum.accumulate(np.where(start, idx, 0))
        # the sum of log_pass from the query's first row up to the row before this one
        before = (c - log_pass) - (c[first] - log_pass[first])
    return weighted_bincount(q, weights=R / rank * portable.exp(before), minlength=n)


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    m = cols.top(k) & (cols.grade > 0)
    return _err(cols.qid[m], cols.rank[m].astype(np.float64), cols.grade[m], _g_max(cols), cols.n)


def _ideal_err(cols: Columns, k: int) -> NDArray[np.float64]:
    def compute() -> NDArray[np.float64]:
        g = cols.ideal.grade
        keep = g > 0
        q, g = cols.ideal.qid[keep], g[keep]
        order = np.lexsort((-g, q))
        q, g = q[order], g[order]
        pos = within_query_count(q, np.ones(q.size, dtype=np.int64))
        m = pos <= k
        return _err(q[m], pos[m].astype(np.float64), g[m], _g_max(cols), cols.n)

    return cols._cached(("ideal_err", k), compute)


def normalised(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    err = per_query(cols, k, rel)
    ideal = _ideal_err(cols, k)
    return np.divide(err, ideal, out=np.zeros(cols.n), where=ideal > 0)


_DEF = ("stop probability R = (2^grade - 1) / 2^{gmax} (grades <= 0 and unjudged hits 0; g_max = 4 as ir_measures' ERR "
        "(gdeval), or the highest grade in the qrels when above 4)")

MEASURE = Measure(
    kind="err", cutoff=REQUIRED, takes_rel=False, per_query=per_query,
    definition=("{key}: expected reciprocal rank over the top {k}, sum of R_i / i * prod over j < i of (1 - R_j); "
                + _DEF.replace("{gmax}", "g_max") + " (Chapelle et al. 2009; ir_measures ERR@{k})"),
    formula="Σ_i R_i / i · Π_{j<i} (1 − R_j), R = (2^grade − 1) / 2^4 (Chapelle et al. 2009)",
    peers="ir_measures ERR@k (gdeval)",
    names=(Name("err", "rankscope", "err@k"), Name("ERR", "ir_measures", "ERR@k")),
)

NORMALISED = Measure(
    kind="nerr", cutoff=REQUIRED, takes_rel=False, per_query=normalised,
    definition=("{key}: err@{k} divided by the err@{k} of the ideal order (every judged grade, best first); 0 when the "
                "ideal is 0; " + _DEF.replace("{gmax}", "g_max") + " (Chapelle et al. 2009)"),
    formula="ERR@k / ERR@k of the ideal order",
    peers="ERR@k of ir_measures on the run over ERR@k on the ideal run",
    names=(Name("nerr", "rankscope", "nerr@k"),),
)

MEASURES = (MEASURE, NORMALISED)
