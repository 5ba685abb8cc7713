"""Ordering of hits: trec_eval's rule, depth cut, ranks, groups.

Convention (trec_eval ``form_res_rels.c``): within a query, hits are ordered by score
descending; equal scores are ordered by doc id **descending as byte strings**
(``strcmp(b, a)``). The rank column of a run file is never trusted. ``depth`` cuts
each query's list after ordering.

Doc ids are carried as integer codes into a shared vocabulary (in first-seen order);
ties are broken by looking up the ids of the tied rows only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RankedLane:
    """One lane, ordered and depth-cut, as columns.

    Rows are sorted by (qid code ascending, score descending, doc id descending as bytes).
    ``offsets`` has length ``n_queries + 1``: the rows of query code q are
    ``offsets[q]:offsets[q+1]`` (empty when the lane lacks q).
    """

    name: str
    qid: np.ndarray  # int32 query codes
    doc: np.ndarray  # int64 doc codes (shared vocabulary; not in byte order)
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
    """Permutation putting rows in trec_eval order when doc codes are in byte order:
    qid asc, score desc, doc code desc."""
    # lexsort sorts by the last key first; negate to get descending.
    return np.lexsort((-doc, -score, qid))


def _order_qid_score(qid: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """Permutation to (qid asc, score desc), ties left in file order; None if already so.

    Run files usually hold each query as one block already in score order (only the
    query order differs: files sort qids as numbers, we sort them as bytes), so the
    common case is a reordering of whole blocks, O(n), without a row sort.
    """
    n = qid.shape[0]
    if n < 2:
        return None
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    block_q = qid[starts]
    inner_up = score[1:] > score[:-1]
    inner_up[starts[1:] - 1] = False
    if not inner_up.any() and np.unique(block_q).size == block_q.size:
        if np.all(block_q[1:] > block_q[:-1]):
            return None
        lengths = np.diff(np.r_[starts, n])
        bo = np.argsort(block_q, kind="stable")
        new_starts = np.r_[0, np.cumsum(lengths[bo])[:-1]]
        return np.repeat(starts[bo] - new_starts, lengths[bo]) + np.arange(n)
    return np.lexsort((-score, qid))


def _fix_ties(qid: np.ndarray, doc: np.ndarray, score: np.ndarray, doc_ids) -> np.ndarray | None:
    """Permutation ordering runs of equal (qid, score) by doc id descending as bytes.

    Only tied rows are looked at: their ids are fetched from ``doc_ids`` (any sequence
    indexed by doc code; None means doc codes are already in byte order).
    """
    if qid.shape[0] < 2:
        return None
    tie = (qid[1:] == qid[:-1]) & (score[1:] == score[:-1])
    if not tie.any():
        return None
    in_run = np.zeros(qid.shape[0], dtype=bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    idx = np.flatnonzero(in_run)
    run_start = np.r_[True, ~tie][idx]  # a tied row starts a run unless tied to its predecessor
    run_id = np.cumsum(run_start)
    codes = doc[idx]
    if doc_ids is None:
        key = codes
    else:
        uniq, inv = np.unique(codes, return_inverse=True)
        if hasattr(doc_ids, "take"):
            names = doc_ids.take(uniq).to_pylist() if not isinstance(doc_ids, np.ndarray) else doc_ids[uniq].tolist()
        else:
            names = [doc_ids[int(c)] for c in uniq]
        # Python str order is code point order, which is UTF-8 byte order.
        byte_rank = np.empty(len(names), dtype=np.int64)
        byte_rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
        key = byte_rank[inv]
    sub = np.lexsort((-key, run_id))
    perm = np.arange(qid.shape[0])
    perm[idx] = idx[sub]
    return perm


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
    doc_ids=None,
) -> RankedLane:
    """Order a lane by trec_eval's rule and cut it to ``depth`` hits per query.

    ``doc_ids`` maps doc codes to id strings for the tie rule (doc id descending as
    bytes); without it the doc codes themselves are taken to be in byte order.
    """
    qid = np.asarray(qid, dtype=np.int32)
    doc = np.asarray(doc, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    perm = _order_qid_score(qid, score)
    if perm is not None:
        qid, doc, score = qid[perm], doc[perm], score[perm]
    perm = _fix_ties(qid, doc, score, doc_ids)
    if perm is not None:
        qid, doc, score = qid[perm], doc[perm], score[perm]
    rank = ranks_within(qid)
    if depth is not None and qid.size and int(rank.max()) > depth:
        keep = rank <= depth
        qid, doc, score, rank = qid[keep], doc[keep], score[keep], rank[keep]
    return RankedLane(name, qid, doc, score, rank, offsets_for(qid, n_queries))


def group_codes(doc_ids, sep: str) -> tuple[np.ndarray, np.ndarray]:
    """Group of every doc code: the id up to the first ``sep`` (the whole id without it).

    Returns (group vocabulary sorted as bytes, int64 group code per doc code).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(doc_ids) == 0:
        return np.array([], dtype=object), np.zeros(0, dtype=np.int64)
    head = pc.list_element(pc.split_pattern(doc_ids.cast(pa.string()), sep, max_splits=1), 0)
    enc = pc.dictionary_encode(head)
    order = pc.array_sort_indices(enc.dictionary).to_numpy()
    remap = np.empty(len(order), dtype=np.int64)
    remap[order] = np.arange(len(order))
    vocab = np.asarray(enc.dictionary.take(order).to_pylist(), dtype=object)
    return vocab, remap[enc.indices.to_numpy(zero_copy_only=False)]
