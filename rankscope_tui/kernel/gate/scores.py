"""Per-query top scores of the gate lane: top score, runner-up, margin, relevance of the
top hit and the first relevant hit (the inputs of every floor and condition).

Every array is indexed by query code. Top score ``t(q)`` is the score at position 1, ``-inf``
when the lane lacks q; margin is ``t1 - t2`` (0 on a tie, ``+inf`` for a lone hit,
``-inf`` for an absent query). Query sets are boolean masks over query codes.

References
----------
- Grother, P., Ngan, M. & Hanaoka, K. (2019). Face Recognition Vendor Test (FRVT) Part
  2: Identification. NISTIR 8271. (FNIR and FPIR of 1:N identification, a threshold on
  the top candidate's score)
- trec_eval (NIST), the TREC evaluation program, version 10.0: the order of a ranked
  list (score descending, then doc id descending), which decides the top hit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..ranking.ranks import RankedLane

if TYPE_CHECKING:
    from ..ranking.judgments import Judgments

INF = math.inf


@dataclass(frozen=True, eq=False)
class TopScores:
    """Per-query-code view of the gate lane (see module conventions).

    ``first_relevant_score`` is the score of the first relevant hit within depth
    (``-inf`` when none is retrieved or the query is absent); ``first_relevant_rank`` is
    its 1-based rank (0 = miss). ``top_doc`` is -1 for an absent query.
    """

    lane: str
    present: NDArray[np.bool_]
    n_hits: NDArray[np.int64]
    top: NDArray[np.float64]  # -inf absent
    second: NDArray[np.float64]  # -inf when fewer than 2 hits
    margin: NDArray[np.float64]  # +inf lone hit, -inf absent
    top_doc: NDArray[np.int64]  # -1 absent
    top_relevant: NDArray[np.bool_]
    first_relevant_score: NDArray[np.float64]  # -inf miss
    first_relevant_rank: NDArray[np.int32]  # 0 miss

    @property
    def n_queries(self) -> int:
        return int(self.present.shape[0])


def top_scores(
    lane: RankedLane,
    judgments: Judgments | None = None,
    relevant: int = 1,
    hit_relevant: np.ndarray | None = None,
) -> TopScores:
    """Top score, runner-up, margin, top-hit relevance and first relevant hit per query.

    Relevance of a hit is ``judgments.grade_of(qid, doc) >= relevant`` unless
    ``hit_relevant`` (a bool per lane row) is given — use that for the group level,
    where a hit is relevant when its group is. Vectorised over rows; no loop per query.
    """
    n_q = int(lane.offsets.shape[0] - 1)
    starts = lane.offsets[:-1]
    n_hits = np.diff(lane.offsets).astype(np.int64)
    present = n_hits > 0
    has2 = n_hits >= 2

    top = np.full(n_q, -INF)
    top[present] = lane.score[starts[present]]
    second = np.full(n_q, -INF)
    second[has2] = lane.score[starts[has2] + 1]
    margin = np.full(n_q, -INF)
    margin[present] = INF  # lone hit: infinite gap
    # Equal scores subtract to exactly 0.0, so a tie has margin 0.
    margin[has2] = top[has2] - second[has2]
    top_doc = np.full(n_q, -1, dtype=np.int64)
    top_doc[present] = lane.doc[starts[present]]

    if hit_relevant is None:
        if judgments is None:
            raise ValueError("top_scores needs judgments or hit_relevant")
        hit_relevant = judgments.grade_of(lane.qid, lane.doc) >= relevant
    hit_relevant = np.asarray(hit_relevant, dtype=bool)
    if hit_relevant.shape[0] != lane.n_rows:
        raise ValueError("hit_relevant must have one entry per lane row")

    top_relevant = np.zeros(n_q, dtype=bool)
    top_relevant[present] = hit_relevant[starts[present]]

    # First relevant row per query: rows are sorted by qid then rank, so it is the
    # first relevant row of each run of equal qid codes.
    rel_rows = np.flatnonzero(hit_relevant)
    first_score = np.full(n_q, -INF)
    first_rank = np.zeros(n_q, dtype=np.int32)
    if rel_rows.size:
        rq = lane.qid[rel_rows]
        first = np.ones(rel_rows.size, dtype=bool)
        first[1:] = rq[1:] != rq[:-1]
        rows = rel_rows[first]
        first_score[lane.qid[rows]] = lane.score[rows]
        first_rank[lane.qid[rows]] = lane.rank[rows]

    return TopScores(lane.name, present, n_hits, top, second, margin, top_doc, top_relevant, first_score, first_rank)


def _mask(m: ArrayLike, n: int, what: str) -> np.ndarray:
    m = np.asarray(m)
    if m.dtype != bool:  # accept an array of query codes too
        out = np.zeros(n, dtype=bool)
        out[m.astype(np.int64)] = True
        return out
    if m.shape[0] != n:
        raise ValueError(f"{what}: mask has {m.shape[0]} entries, expected {n} query codes")
    return m


def _neg_sets(negatives: Mapping[str, ArrayLike] | ArrayLike | None, n: int) -> dict[str, np.ndarray]:
    if negatives is None:
        return {}
    if not isinstance(negatives, Mapping):
        negatives = {"in_domain": negatives}
    return {str(k): _mask(v, n, f"negatives[{k}]") for k, v in negatives.items()}

