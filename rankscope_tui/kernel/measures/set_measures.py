"""trec_eval's set measures: the retrieved list as an unordered set.

``num_ret`` hits retrieved (within depth), ``num_rel`` relevant judged (R), ``num_rel_ret``
relevant hits retrieved; ``set_P`` = num_rel_ret / num_ret (0 with nothing retrieved),
``set_recall`` = num_rel_ret / R, ``set_F`` = 2 * P * R / (P + R) on those two (trec_eval's
set_F at its default weight 1; 0 when nothing relevant is retrieved). trec_eval's summary
line of the three counts is their sum over queries; rankscope reports their mean, as for
every measure.

Group level: relevant groups at their first occurrence (SPEC §3); num_ret counts every
position of the list.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: ``m_num_ret.c``,
  ``m_num_rel.c``, ``m_num_rel_ret.c``, ``m_set_P.c``, ``m_set_recall.c``, ``m_set_F.c``.
- van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., ch. 7. Butterworths.
  (the F measure)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import NONE, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def num_ret(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    return cols.n_ret()


def num_rel(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    return cols.n_rel(rel)


def num_rel_ret(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    return cols.n_rel_ret(rel)


def set_p(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    n = cols.n_ret()
    return np.divide(cols.n_rel_ret(rel), n, out=np.zeros(cols.n), where=n > 0)


def set_recall(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    R = cols.n_rel(rel)
    return np.divide(cols.n_rel_ret(rel), R, out=np.zeros(cols.n), where=R > 0)


def f_measure(p: NDArray[np.float64], r: NDArray[np.float64], hit: NDArray[np.bool_]) -> NDArray[np.float64]:
    """2PR / (P + R) where ``hit`` (something relevant found), else 0; trec_eval's operation
    order ((x + 1) * P) * R / (x * P + R) at x = 1."""
    out = np.zeros(p.size)
    out[hit] = (2.0 * p[hit]) * r[hit] / (1.0 * p[hit] + r[hit])
    return out


def set_f(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    return f_measure(set_p(cols, k, rel), set_recall(cols, k, rel), cols.n_rel_ret(rel) > 0)


NUM_RET = Measure(
    kind="num_ret", cutoff=NONE, unit_interval=False, takes_rel=False, per_query=num_ret, needs_relevant=False, ranks_lanes=False,
    definition="{key}: hits retrieved for the query, within depth (trec_eval num_ret; the mean, not trec_eval's sum)",
    formula="hits retrieved", peers="trec_eval num_ret; ir_measures NumRet",
    names=(Name("num_ret", "rankscope", "num_ret"), Name("num_ret", "trec_eval", "num_ret"),
           Name("NumRet", "ir_measures", "NumRet")),
)
NUM_REL = Measure(
    kind="num_rel", cutoff=NONE, unit_interval=False, takes_rel=True, per_query=num_rel, needs_relevant=False, ranks_lanes=False,
    definition=("{key}: relevant docs judged for the query, R (trec_eval num_rel; the mean, not trec_eval's sum); "
                "relevant = grade >= {rel}"),
    formula="R", peers="trec_eval num_rel; ir_measures NumRel",
    names=(Name("num_rel", "rankscope", "num_rel"), Name("num_rel", "trec_eval", "num_rel"),
           Name("NumRel", "ir_measures", "NumRel")),
)
NUM_REL_RET = Measure(
    kind="num_rel_ret", cutoff=NONE, unit_interval=False, takes_rel=True, per_query=num_rel_ret, needs_relevant=False,
    definition=("{key}: relevant docs retrieved, within depth (trec_eval num_rel_ret; the mean, not trec_eval's sum); "
                "relevant = grade >= {rel}"),
    formula="relevant retrieved", peers="trec_eval num_rel_ret; ir_measures NumRelRet",
    names=(Name("num_rel_ret", "rankscope", "num_rel_ret"), Name("num_rel_ret", "trec_eval", "num_rel_ret"),
           Name("NumRelRet", "ir_measures", "NumRelRet")),
)
SET_P = Measure(
    kind="set_p", cutoff=NONE, takes_rel=True, per_query=set_p, needs_relevant=False,
    definition=("{key}: relevant retrieved / retrieved, over the whole list within depth, not padded (trec_eval set_P); "
                "relevant = grade >= {rel}"),
    formula="relevant retrieved / retrieved", peers="trec_eval set_P; ir_measures SetP",
    names=(Name("set_p", "rankscope", "set_p"), Name("set_P", "trec_eval", "set_P"), Name("SetP", "ir_measures", "SetP")),
)
SET_RECALL = Measure(
    kind="set_recall", cutoff=NONE, takes_rel=True, per_query=set_recall,
    definition="{key}: relevant retrieved / R, over the whole list within depth (trec_eval set_recall); relevant = grade >= {rel}",
    formula="relevant retrieved / R", peers="trec_eval set_recall; ir_measures SetR",
    names=(Name("set_recall", "rankscope", "set_recall"), Name("set_recall", "trec_eval", "set_recall"),
           Name("SetR", "ir_measures", "SetR")),
)
SET_F = Measure(
    kind="set_f", cutoff=NONE, takes_rel=True, per_query=set_f,
    definition=("{key}: 2 * set_P * set_recall / (set_P + set_recall), 0 when nothing relevant is retrieved (trec_eval "
                "set_F at its default weight 1.0); relevant = grade >= {rel}"),
    formula="2 · set_P · set_recall / (set_P + set_recall)", peers="trec_eval set_F; ir_measures SetF",
    names=(Name("set_f", "rankscope", "set_f"), Name("set_F", "trec_eval", "set_F"), Name("SetF", "ir_measures", "SetF")),
)

MEASURES = (NUM_RET, NUM_REL, NUM_REL_RET, SET_P, SET_RECALL, SET_F)
