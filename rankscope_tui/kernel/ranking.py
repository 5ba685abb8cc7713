"""Ordering of hits: trec_eval's rule, depth cut, ranks, groups.

Convention (trec_eval ``form_res_rels.c``): within a query, hits are ordered by score
descending; equal scores are ordered by doc id **descending as byte strings**
(``strcmp(b, a)``). The rank column of a run file is never trusted. ``depth`` cuts
each query's list after ordering.

Doc ids are carried as integer codes into a vocabulary sorted by bytes, so "doc id
descending as bytes" is "doc code descending".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RankedLane:
    """One lane, ordered and depth-cut, as columns.

    Rows are sorted by (qid code ascending, score descending, doc code descending).
    ``offsets`` has length ``n_queries + 1``: the rows of query code q are
    ``offsets[q]:offsets[q+1]`` (empty when the lane lacks q).
    """

    name: str
    qid: np.ndarray  # int32 query codes
    doc: np.ndarray  # int64 doc codes (vocabulary sorted as bytes)
    score: np.ndarray  # float64
    rank: np.ndarray  # int32, 1-based within the query
    offsets: np.ndarray  # int64, len n_queries + 1

    @property
    def n_rows(self) -> int:
        return int(self.qid.shape[0])

    def present(self) -> np.ndarray:
        """Boolean mask over query codes: the lane has at least one hit for q."""
        return np.diff(self.offsets) > 0

    def rows_of(self, q: int) -> slice:
        return slice(int(self.offsets[q]), int(self.offsets[q + 1]))


def trec_order(qid: np.ndarray, doc: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Permutation putting rows in trec_eval order: qid asc, score desc, doc code desc."""
    # lexsort sorts by the last key first; negate to get descending.
    return np.lexsort((-doc, -score, qid))


def is_trec_ordered(qid: np.ndarray, doc: np.ndarray, score: np.ndarray) -> bool:
    """True when rows are already in trec_eval order (then the sort can be skipped)."""
    if qid.shape[0] < 2:
        return True
    dq = np.diff(qid)
    if np.any(dq < 0):
        return False
    same_q = dq == 0
    ds = np.diff(score)
    if np.any(same_q & (ds > 0)):
        return False
    tie = same_q & (ds == 0)
    return not np.any(tie & (np.diff(doc) >= 0))


def ranks_within(qid: np.ndarray) -> np.ndarray:
    """1-based position of each row within its run of equal (sorted) qid codes."""
    n = qid.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    start = np.empty(n, dtype=bool)
    start[0] = True
    np.not_equal(qid[1:], qid[:-1], out=start[1:])
    idx = np.arange(n, dtype=np.int64)
    first = np.maximum.accumulate(np.where(start, idx, 0))
    return (idx - first + 1).astype(np.int32)


def offsets_for(qid: np.ndarray, n_queries: int) -> np.ndarray:
    """CSR offsets of sorted qid codes over a vocabulary of n_queries codes."""
    counts = np.bincount(qid, minlength=n_queries) if qid.size else np.zeros(n_queries, dtype=np.int64)
    out = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def rank_lane(
    name: str,
    qid: np.ndarray,
    doc: np.ndarray,
    score: np.ndarray,
    n_queries: int,
    depth: int | None = None,
) -> RankedLane:
    """Order a lane by trec_eval's rule and cut it to ``depth`` hits per query."""
    qid = np.asarray(qid, dtype=np.int32)
    doc = np.asarray(doc, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if not is_trec_ordered(qid, doc, score):
        perm = trec_order(qid, doc, score)
        qid, doc, score = qid[perm], doc[perm], score[perm]
    rank = ranks_within(qid)
    if depth is not None and qid.size and int(rank.max()) > depth:
        keep = rank <= depth
        qid, doc, score, rank = qid[keep], doc[keep], score[keep], rank[keep]
    return RankedLane(name, qid, doc, score, rank, offsets_for(qid, n_queries))


def group_of_ids(ids: np.ndarray, sep: str | None) -> np.ndarray:
    """Group id of each doc id: the part before the first ``sep`` (the whole id without it)."""
    if not sep:
        return ids
    return np.array([s.split(sep, 1)[0] for s in ids.tolist()], dtype=object)
