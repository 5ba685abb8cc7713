"""ndcg@k (trec_eval ``ndcg_cut.k``) and uncut ndcg (trec_eval ``ndcg``), linear gain.

Gain = the grade (grades <= 0 add nothing), discount log2(i + 1), ideal = every judged
doc with grade > 0 in descending grade order (cut at k), 0 when the ideal is 0.
Independent of the relevance level, so it takes no ``rel=``. Group level: the group's
grade (its best judged grade) at its first occurrence; the ideal runs over the judged
group grades.

References
----------
- Järvelin, K. & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR
  techniques. *ACM TOIS* 20(4), 422-446. (nDCG)
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import OPTIONAL, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int | None, rel: int | None) -> NDArray[np.float64]:
    dcg = cols.dcg(k)
    idcg = cols.ideal_dcg(k)
    return np.divide(dcg, idcg, out=np.zeros(cols.n), where=idcg > 0)


MEASURE = Measure(
    kind="ndcg", cutoff=OPTIONAL, takes_rel=False, per_query=per_query, brings_judged=True,
    definition=("{key}: linear gain (grade, grades <= 0 add nothing), discount log2(i+1), ideal over all judged docs cut "
                "at {k} (trec_eval ndcg_cut.{k}); independent of the relevant level"),
    definition_uncut=("{key}: linear gain (grade, grades <= 0 add nothing), discount log2(i+1), over the whole list "
                      "within depth, ideal over all judged docs, uncut (trec_eval ndcg); independent of the relevant level"),
    formula="DCG / ideal DCG; gain = grade, discount log2(i+1), ideal over all judged (cut at k)",
    peers="trec_eval ndcg, ndcg_cut.k; ir_measures nDCG, nDCG@k; ranx ndcg@k; MTEB ndcg_at_k",
    names=(Name("ndcg", "rankscope", "ndcg"), Name("ndcg", "rankscope", "ndcg@k"), Name("nDCG", "ir_measures", "nDCG"),
           Name("nDCG", "ir_measures", "nDCG@k"), Name("ndcg", "trec_eval", "ndcg", cutoff="none"),
           Name("ndcg_cut", "trec_eval", "ndcg_cut.k", cutoff="required"),
           Name("ndcg_cut", "trec_eval", "ndcg_cut_k", cutoff="required"), Name("ndcg", "ranx", "ndcg@k"),
           Name("ndcg", "MTEB", "ndcg_at_k")),
)
