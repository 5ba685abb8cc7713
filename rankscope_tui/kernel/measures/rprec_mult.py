"""Precision at a multiple of R, ``rprec_mult_X`` (trec_eval ``Rprec_mult``).

The cut c = floor(x * R + 0.9) docs (trec_eval's rounding; R = relevant judged); the value
is the relevant docs in the top c / c, a short list padded with non-relevant docs (as
``P.k``); 0 when c = 0 (no relevant doc). ``rprec_mult_1.00`` equals ``rprec``. Comparing
low and high multiples tells a precision-oriented lane from a recall-oriented one.

Group level: relevant groups at their first occurrence (SPEC §3).

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: ``m_Rprec_mult.c``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .measure import NONE, Measure, Name, Param

if TYPE_CHECKING:
    from .columns import Columns

MULTIPLE = Param("multiple", "suffix", None, 0.0, 1000.0, low_open=True)


def per_query(cols: Columns, k: int | None, rel: int | None, x: float = 1.0) -> NDArray[np.float64]:
    cut = np.floor(x * cols.n_rel(rel) + 0.9)
    m = cols.is_rel(rel) & (cols.rank <= cut[cols.qid])
    cnt = np.bincount(cols.qid[m], minlength=cols.n).astype(np.float64)
    return np.divide(cnt, cut, out=np.zeros(cols.n), where=cut > 0)


MEASURE = Measure(
    kind="rprec_mult", cutoff=NONE, takes_rel=True, per_query=per_query, param=MULTIPLE,
    definition=("{key}: precision at {param} times R, relevant docs in the top c / c with c = floor({param} * R + 0.9), "
                "short lists padded with non-relevant (trec_eval Rprec_mult_{param}); relevant = grade >= {rel}"),
    formula="relevant in the top c / c, c = ⌊x · R + 0.9⌋",
    peers="trec_eval Rprec_mult_x",
    names=(Name("rprec_mult", "rankscope", "rprec_mult_0.20"), Name("Rprec_mult", "trec_eval", "Rprec_mult_2.00")),
)
