"""ndcg_exp@k: nDCG with exponential gain 2^grade - 1 (Burges et al. 2005; ranx ``ndcg_burges@k``).

Discount log2(i + 1); ideal = every judged doc with grade > 0, best first, cut at k; 0
when the ideal is 0. Grades 0, 1, 2 gain 0, 1, 3 (seed 000). Independent of the relevance
level. Group level: the group's best judged grade, at its first occurrence.

References
----------
- Järvelin, K. & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR
  techniques. *ACM TOIS* 20(4), 422-446. (nDCG)
- Burges, C., Shaked, T., Renshaw, E. et al. (2005). Learning to rank using gradient
  descent. *ICML 2005*, 89-96. (the exponential gain 2^grade - 1)
- Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
  comparison. *ECIR 2022*, 259-264. (``ndcg_burges@k``)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import REQUIRED, Measure, Name

if TYPE_CHECKING:
    from .columns import Columns


def per_query(cols: Columns, k: int, rel: int | None) -> NDArray[np.float64]:
    dcg = cols.dcg(k, "exp")
    idcg = cols.ideal_dcg(k, "exp")
    return np.divide(dcg, idcg, out=np.zeros(cols.n), where=idcg > 0)


MEASURE = Measure(
    kind="ndcg_exp", cutoff=REQUIRED, takes_rel=False, per_query=per_query, brings_judged=True,
    definition=("{key}: exponential gain 2^grade - 1 (grades <= 0 add nothing), discount log2(i+1), ideal over all judged "
                "docs cut at {k} (Burges et al. 2005; ranx ndcg_burges@{k}); independent of the relevant level"),
    formula="DCG / ideal DCG; gain = 2^grade - 1, discount log2(i+1), ideal over all judged cut at k",
    peers="ranx ndcg_burges@k",
    names=(Name("ndcg_exp", "rankscope", "ndcg_exp@k"), Name("ndcg_burges", "ranx", "ndcg_burges@k")),
)
