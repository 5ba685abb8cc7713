"""Interpolated precision at a recall level ``iprec_at_recall_X`` and the 11-point average
``11pt_avg`` (trec_eval ``iprec_at_recall``, ``11pt_avg``).

For a recall level x, the cut c = round(x * R) relevant docs (half away from zero, C's
``lround``, as trec_eval 10.0; R = relevant judged). Interpolated precision at x is the
highest precision at any rank at or below the c-th relevant hit: the maximum, over the
relevant hits numbered m >= max(c, 1), of m / (rank of the m-th relevant hit). It is 0
when fewer than c relevant docs are retrieved, and 0 when none is. ``11pt_avg`` is the
mean of the 11 levels 0.0, 0.1, ..., 1.0. These are the points of the precision-recall
curve papers print.

Group level: relevant groups at their first occurrence (SPEC §3).

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: ``m_iprec_at_recall.c``,
  ``m_11pt_avg.c`` (the interpolation and the rounding of the cut).
- Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information
  Retrieval*, §8.4. Cambridge University Press. (interpolated precision, 11-point average)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .columns import within_query_count
from .measure import NONE, Measure, Name, Param

if TYPE_CHECKING:
    from .columns import Columns

RECALL = Param("recall", "suffix", None, 0.0, 1.0)
#: the 11 recall levels of ``11pt_avg``, highest first (the order trec_eval adds them in)
LEVELS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)


def lround(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """C's ``lround`` for x >= 0: half away from zero, exact (no x + 0.5 rounding)."""
    f = np.floor(x)
    out: NDArray[np.int64] = (f + ((x - f) >= 0.5)).astype(np.int64)
    return out


def _rel_rows(cols: Columns, rel: int | None) -> tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.float64]]:
    """(qid, number m, precision m / rank) of every relevant hit, in (qid, rank) order."""

    def compute() -> tuple[NDArray[np.int32], NDArray[np.int64], NDArray[np.float64]]:
        m = cols.is_rel(rel)
        q, r = cols.qid[m], cols.rank[m]
        num = within_query_count(q, np.ones(q.size, dtype=np.int64))
        return q, num, num / r.astype(np.float64)

    return cols._cached(("iprec_rows", cols.level(rel)), compute)


def per_query(cols: Columns, k: int | None, rel: int | None, x: float = 0.0) -> NDArray[np.float64]:
    q, num, prec = _rel_rows(cols, rel)
    cut = lround(x * cols.n_rel(rel))
    reached = cut <= cols.n_rel_ret(rel)
    want = np.maximum(cut, 1)
    m = num >= want[q]
    out = np.zeros(cols.n)
    np.maximum.at(out, q[m], prec[m])
    out[~reached] = 0.0
    return out


def eleven_point(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    total = np.zeros(cols.n)
    for x in LEVELS:
        total += per_query(cols, None, rel, x)
    out: NDArray[np.float64] = total / float(len(LEVELS))
    return out


MEASURE = Measure(
    kind="iprec_at_recall", cutoff=NONE, takes_rel=True, per_query=per_query, param=RECALL,
    definition=("{key}: interpolated precision at recall {param}, the highest precision at or below the rank of the c-th "
                "relevant hit, c = round({param} * R) half away from zero (at least 1); 0 when fewer than c relevant docs "
                "are retrieved (trec_eval iprec_at_recall_{param}); relevant = grade >= {rel}"),
    formula="max precision at or below the c-th relevant hit, c = round(x · R); a point of the P–R curve",
    peers="trec_eval iprec_at_recall_x; ir_measures IPrec@x",
    names=(Name("iprec_at_recall", "rankscope", "iprec_at_recall_0.10"),
           Name("iprec_at_recall", "trec_eval", "iprec_at_recall_0.50"), Name("IPrec", "ir_measures", "IPrec@0.2")),
)

ELEVEN_POINT = Measure(
    kind="11pt_avg", cutoff=NONE, takes_rel=True, per_query=eleven_point,
    definition=("{key}: the mean of the interpolated precision at the 11 recall levels 0.0, 0.1, ..., 1.0 (trec_eval "
                "11pt_avg); relevant = grade >= {rel}"),
    formula="mean of iprec_at_recall at 0.0, 0.1, …, 1.0",
    peers="trec_eval 11pt_avg",
    names=(Name("11pt_avg", "rankscope", "11pt_avg"), Name("11pt_avg", "trec_eval", "11pt_avg")),
)

MEASURES = (MEASURE, ELEVEN_POINT)
