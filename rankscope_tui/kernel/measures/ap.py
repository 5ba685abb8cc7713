"""Average precision: ap (trec_eval ``map`` per query) and ap@k (trec_eval ``map_cut.k``).

AP = (1/R) * sum over relevant hits at rank i (i <= k for ap@k) of precision at i,
where R counts every relevant judged doc of the query (not min(k, R): ranx ``map@k`` and
ir_measures ``AP@k`` agree; some recommender libraries divide by min(k, R)). 0 when R = 0.
Group level: relevant groups at their first occurrence; R counts relevant judged groups.

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

from .columns import weighted_bincount, within_query_count
from .measure import OPTIONAL, Measure, Name, ceiling_min_r_over_r

if TYPE_CHECKING:
    from .columns import Columns


def _precision_at_relevant(
    cols: Columns, rel: int | None,
) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.float64]]:
    """(qid, rank, precision at that rank) of every relevant hit, in (qid, rank) order."""

    def compute() -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.float64]]:
        m = cols.is_rel(rel)
        q, r = cols.qid[m], cols.rank[m]
        return q, r, within_query_count(q, np.ones(q.size, dtype=np.int64)) / r.astype(np.float64)

    return cols._cached(("prec_at_rel", cols.level(rel)), compute)


def per_query(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    q, r, prec = _precision_at_relevant(cols, rel)
    if k is not None:
        m = r <= k
        q, prec = q[m], prec[m]
    total = weighted_bincount(q, weights=prec, minlength=cols.n)
    n_rel = cols.n_rel(rel)
    return np.divide(total, n_rel, out=np.zeros(cols.n), where=n_rel > 0)


MEASURE = Measure(
    kind="ap", cutoff=OPTIONAL, takes_rel=True, per_query=per_query,
    ceiling=lambda n_rel, k: None if k is None else ceiling_min_r_over_r(n_rel, k),
    definition_uncut=("{key}: average precision, the sum of precision at each relevant doc retrieved within depth divided "
                      "by all relevant docs judged for the query; mean = MAP (trec_eval map); relevant = grade >= {rel}"),
    definition=("{key}: average precision cut at {k}, the sum of precision at each relevant doc in the top {k} divided by "
                "all relevant docs judged for the query, not min({k}, R) (trec_eval map_cut.{k}; ranx map@{k}); "
                "relevant = grade >= {rel}"),
    formula="(1/R) * sum of precision@i over relevant hits at i (i <= k)",
    peers="trec_eval map, map_cut.k; ir_measures AP, AP@k; ranx map, map@k; MTEB map_at_k",
    names=(Name("ap", "rankscope", "ap"), Name("ap", "rankscope", "ap@k"), Name("AP", "ir_measures", "AP"),
           Name("AP", "ir_measures", "AP@k"), Name("map", "trec_eval", "map", cutoff="none"),
           Name("map_cut", "trec_eval", "map_cut.k", cutoff="required"),
           Name("map_cut", "trec_eval", "map_cut_k", cutoff="required"), Name("map", "ranx", "map"),
           Name("map", "ranx", "map@k"), Name("map", "MTEB", "map_at_k")),
)
