"""Ordering of hits: trec_eval's rule, depth cut, ranks, groups.

Convention (trec_eval ``form_res_rels.c``): within a query, hits are ordered by score
descending; equal scores are ordered by doc id **descending as byte strings**
(``strcmp(b, a)``). The rank column of a run file is never trusted. ``depth`` cuts
each query's list after ordering.

Doc ids are carried as integer codes into a shared vocabulary (in no meaningful order);
ties are broken by looking up the ids of the tied rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence, Union, cast

import numpy as np
from numpy.typing import NDArray

from .runs import gather_index, running_count, spread_runs

if TYPE_CHECKING:
    import pyarrow as pa
    from typing_extensions import TypeAlias

    from .encoding import CodeWords

    # the doc ids themselves, by doc code
    IdStrings: TypeAlias = Union[CodeWords, pa.Array, NDArray[np.object_], Sequence[str]]
    # what the tie rule reads doc ids from (see ``tie_key``): also a byte-order rank per doc code, or nothing
    DocIds: TypeAlias = Union[NDArray[np.integer[Any]], IdStrings, None]


@dataclass(frozen=True)
class RankedLane:
    """One lane, ordered and depth-cut, as columns.

    Rows are sorted by (qid code ascending, score descending, doc id descending as bytes).
    ``offsets`` has length ``n_queries + 1``: the rows of query code q are
    ``offsets[q]:offsets[q+1]`` (empty when the lane lacks q).
    """

    name: str
    qid: NDArray[np.int32]  # query codes
    doc: NDArray[np.int64]  # doc codes (shared vocabulary; not in byte order)
    score: NDArray[np.float64]
    rank: NDArray[np.int32]  # 1-based within the query
    offsets: NDArray[np.int64]  # len n_queries + 1

    @property
    def n_rows(self) -> int:
        return int(self.qid.shape[0])

    def present(self) -> NDArray[np.bool_]:
        """Boolean mask over query codes: the lane has at least one hit for q."""
        return np.diff(self.offsets) > 0

    def rows_of(self, q: int) -> slice:
        return slice(int(self.offsets[q]), int(self.offsets[q + 1]))


def tied_queries(lane: RankedLane, within: int) -> NDArray[np.int32]:
    """Query codes (ascending) whose ordered list holds two equal scores on adjacent rows
    among its first ``within`` ranks: the queries where the tie rule decides the order."""
    tie = (lane.score[1:] == lane.score[:-1]) & (lane.qid[1:] == lane.qid[:-1]) & (lane.rank[1:] <= within)
    return distinct(lane.qid[1:][tie])


def distinct(values: NDArray[Any] | Sequence[Any]) -> NDArray[Any]:
    """Sorted distinct values of a 1-D array, as ``np.unique(values)`` -- without its
    masked-array check, which imports ``numpy.ma`` (~10 ms of a short CLI run)."""
    v = np.sort(np.asarray(values).ravel())
    if v.shape[0] < 2:
        return v
    keep = np.empty(v.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    if v.dtype.kind == "f":  # np.unique keeps one NaN (equal_nan)
        nan = np.isnan(v)
        keep[1:] &= ~(nan[1:] & nan[:-1])
    return v[keep]


def _score_blocks(qid: NDArray[np.int32], score: NDArray[np.float64],
                  starts: NDArray[np.int64] | None = None) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """(starts, lengths) of the file's query blocks when every query is one contiguous
    block already in score-descending order; None otherwise. ``starts``, when known, are
    the rows where a run of equal qids begins (0 first)."""
    n = qid.shape[0]
    if starts is None:
        cut = np.flatnonzero(qid[1:] != qid[:-1])
        cut += 1
    else:
        cut = starts[1:]
    up = score[1:] > score[:-1]
    up[cut - 1] = False  # a rise across a block boundary is fine
    if up.any():
        return None
    starts = np.r_[0, cut]
    if np.bincount(qid[starts]).max() > 1:  # a query split over several blocks
        return None
    return starts, np.diff(np.r_[starts, n])


def byte_order(doc_ids: IdStrings) -> NDArray[np.int64]:
    """Rank of every doc code's id in byte order (int64, a permutation of 0..n-1): the
    tie key of fused lanes (``Workspace.doc_order``).

    Pass the result as ``doc_ids=`` to :func:`tie_key`, :func:`rank_lane` or the fusion
    functions to make every tie a pure integer comparison. ``doc_ids`` is a pyarrow
    string array, a numpy object array or a sequence of str.
    """
    n = len(doc_ids)
    return tie_key(doc_ids, np.arange(n, dtype=np.int64))


def distinct_inverse(values: NDArray[Any] | Sequence[Any]) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """``np.unique(values, return_inverse=True)`` for a 1-D array (NaNs as one value, last):
    the sorted distinct values and each value's index among them. From an argsort, a
    running sum and a scatter, which numpy runs without the interpreter lock; np.unique's
    inverse held it 0.15 s at 9M values, a frozen dashboard while a view prepared its data."""
    v = np.asarray(values).ravel()
    if v.shape[0] == 0:
        return v.copy(), np.zeros(0, dtype=np.intp)
    perm = np.argsort(v)
    s = v[perm]
    new = np.empty(s.shape[0], dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    if s.dtype.kind == "f":
        nan = np.isnan(s)
        new[1:] &= ~(nan[1:] & nan[:-1])
    code = running_count(new)  # (not a cumsum that casts on the way: that one holds the lock)
    code -= 1
    inv = np.empty(s.shape[0], dtype=np.intp)
    inv[perm] = code
    return s[new], inv


def tie_key(doc_ids: DocIds, codes: NDArray[Any]) -> NDArray[np.int64]:
    """Integer key per doc code whose order is the byte order of the ids (larger = later as bytes).

    ``doc_ids``: None (codes are already in byte order), a byte-order rank per doc code
    (an integer array, e.g. ``Workspace.doc_order``: the fastest form), an
    ``encoding.CodeWords``, a pyarrow string array, or any sequence of str indexed by doc
    code. Only the given codes are looked up.
    """
    codes = np.asarray(codes, dtype=np.int64)
    if doc_ids is None:
        return codes
    if isinstance(doc_ids, np.ndarray) and doc_ids.dtype.kind in "iu":
        ranks: NDArray[np.int64] = doc_ids[codes].astype(np.int64, copy=False)
        return ranks
    uniq, inv = distinct_inverse(codes)
    byte_rank = np.empty(uniq.shape[0], dtype=np.int64)
    from .encoding import byte_order, words_of_rows

    words = None
    if hasattr(doc_ids, "words_of"):  # encoding.CodeWords: the ids' words by code
        words = doc_ids.words_of(uniq)
    elif hasattr(doc_ids, "buffers") and not isinstance(doc_ids, np.ndarray):
        # a pyarrow string array: sort the ids' big-endian words (= UTF-8 byte order)
        words = words_of_rows(doc_ids, uniq, max_words=32)
    if words is not None:
        byte_rank[byte_order(words)] = np.arange(uniq.shape[0])
    elif hasattr(doc_ids, "take") and not isinstance(doc_ids, np.ndarray):
        # very long ids: pyarrow sorts them (binary order = UTF-8 byte order)
        import pyarrow.compute as pc

        from ..inputs.arrow import arrow_ints, to_numpy

        names = doc_ids.take(arrow_ints(uniq))
        byte_rank[to_numpy(pc.array_sort_indices(names))] = np.arange(uniq.shape[0])
    else:
        if isinstance(doc_ids, np.ndarray):
            names = doc_ids[uniq].tolist()
        else:
            by_code = cast("Sequence[str]", doc_ids)  # the other forms were handled above
            names = [by_code[int(c)] for c in uniq]
        # Python str order is code point order, which is UTF-8 byte order.
        byte_rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    return byte_rank[inv]


def _tie_order(qid: NDArray[np.int32], doc: NDArray[np.int64], score: NDArray[np.float64], doc_ids: DocIds,
               starts: NDArray[np.int64] | None = None) -> tuple[NDArray[np.intp], NDArray[np.intp]] | None:
    """(rows, their new contents' source rows) putting runs of equal (qid, score) in doc
    id descending byte order, or None when no two neighbouring rows tie.

    Only tied rows are looked at: their ids are fetched from ``doc_ids`` (any sequence
    indexed by doc code; None means doc codes are already in byte order). ``starts``,
    when known, are the first rows of the query runs (saves comparing qids).
    """
    if score.shape[0] < 2:
        return None
    tie = score[1:] == score[:-1]
    if starts is None:
        tie &= qid[1:] == qid[:-1]
    elif starts.shape[0] > 1:
        tie[starts[1:] - 1] = False
    if not tie.any():
        return None
    in_run = np.zeros(qid.shape[0], dtype=bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    idx = np.flatnonzero(in_run)  # rows in a run of ties, ascending
    first = np.ones(idx.shape[0], dtype=bool)  # a tied row starts a run unless tied to its predecessor
    first[1:] = ~tie[idx[1:] - 1]
    run_id = running_count(first)
    key = tie_key(doc_ids, doc[idx])
    sub = np.lexsort((-key, run_id))
    return idx, idx[sub]


def _fix_ties(qid: NDArray[np.int32], doc: NDArray[np.int64], score: NDArray[np.float64],
              doc_ids: DocIds) -> NDArray[np.intp] | None:
    """Permutation ordering runs of equal (qid, score) by doc id descending as bytes."""
    t = _tie_order(qid, doc, score, doc_ids)
    if t is None:
        return None
    perm = np.arange(qid.shape[0])
    perm[t[0]] = t[1]
    return perm


def ranks_within(qid: NDArray[np.integer[Any]]) -> NDArray[np.int32]:
    """1-based position of each row within its run of equal (sorted) qid codes."""
    n = qid.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    start = np.flatnonzero(qid[1:] != qid[:-1])
    start += 1
    starts = np.r_[0, start]
    out = np.ones(n, dtype=np.int32)
    # rank = 1 + row - first row of the run: a cumulative sum of ones that restarts at each run
    out[start] = 1 - np.diff(starts).astype(np.int32)
    np.cumsum(out, out=out)
    return out


def offsets_for(qid: NDArray[np.integer[Any]], n_queries: int) -> NDArray[np.int64]:
    """CSR offsets of sorted qid codes over a vocabulary of n_queries codes."""
    counts = np.bincount(qid, minlength=n_queries) if qid.size else np.zeros(n_queries, dtype=np.int64)
    out = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def rank_lane(
    name: str,
    qid: NDArray[Any],  # integer codes, of any width: converted below
    doc: NDArray[Any],
    score: NDArray[Any],
    n_queries: int,

    depth: int | None = None,
    doc_ids: DocIds = None,
    *,
    starts: NDArray[np.int64] | None = None,
    overwrite: bool = False,
) -> RankedLane:
    """Order a lane by trec_eval's rule and cut it to ``depth`` hits per query.

    ``doc_ids`` maps doc codes to id strings for the tie rule (doc id descending as
    bytes); without it the doc codes themselves are taken to be in byte order.
    ``starts``: the rows where a run of equal ``qid`` begins (0 first), when the caller
    knows them; ``overwrite``: the caller gives up ``doc`` (an int64 array), which may
    then be reordered in place and become the lane's column.
    """
    qid = np.asarray(qid, dtype=np.int32)
    owned = overwrite and isinstance(doc, np.ndarray) and doc.dtype == np.int64  # the tie fix may write into doc
    doc = np.asarray(doc, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    n = qid.shape[0]
    runs = None  # (query code, length) of each query's run once rows are in order
    blocks = _score_blocks(qid, score, starts) if n >= 2 else None
    if blocks is not None:
        starts, lengths = blocks
        block_q = qid[starts]
        if np.all(block_q[1:] > block_q[:-1]):
            runs = block_q, lengths
        else:
            bo = np.argsort(block_q, kind="stable")
            runs = block_q[bo], lengths[bo]
            if bo.shape[0] * 16 <= n:  # long blocks: copy slices, no row permutation
                spans = [slice(a, a + b) for a, b in zip(starts[bo].tolist(), lengths[bo].tolist())]
                doc = np.concatenate([doc[sl] for sl in spans])
                score = np.concatenate([score[sl] for sl in spans])
                qid = spread_runs(runs[0].astype(np.int32, copy=False), np.r_[0, np.cumsum(runs[1])[:-1]], n)
            else:
                new_off = np.r_[0, np.cumsum(lengths[bo])]
                perm = gather_index(starts[bo].astype(np.int64), lengths[bo].astype(np.int64), new_off, n)
                qid, doc, score = qid[perm], doc[perm], score[perm]
            owned = True
    elif n >= 2:
        perm = np.lexsort((-score, qid))
        qid, doc, score = qid[perm], doc[perm], score[perm]
        owned = True
    if runs is not None:
        run_start = np.zeros(runs[1].shape[0], dtype=np.int64)
        np.cumsum(runs[1][:-1], out=run_start[1:])
        fix = _tie_order(qid, doc, score, doc_ids, run_start)
        rank = np.ones(n, dtype=np.int32)  # 1 + row - first row of its run
        rank[run_start[1:]] = 1 - runs[1][:-1]
        np.cumsum(rank, out=rank)
    else:
        fix = _tie_order(qid, doc, score, doc_ids)
        rank = ranks_within(qid)
    if fix is not None:  # tied rows share qid and score: only the docs move
        if not owned:
            doc = doc.copy()
        doc[fix[0]] = doc[fix[1]]
    if depth is not None and n and int(rank.max()) > depth:
        keep = rank <= depth
        qid, doc, score, rank = qid[keep], doc[keep], score[keep], rank[keep]
        runs = None
    if runs is not None:
        offsets = np.zeros(n_queries + 1, dtype=np.int64)
        offsets[runs[0].astype(np.int64) + 1] = runs[1]
        np.cumsum(offsets, out=offsets)
    else:
        offsets = offsets_for(qid, n_queries)
    return RankedLane(name, qid, doc, score, rank, offsets)


def group_codes(doc_ids: pa.Array, sep: str) -> tuple[NDArray[np.object_], NDArray[np.int64]]:
    """Group of every doc code: the id up to the first ``sep`` (the whole id without it).

    Returns (group vocabulary sorted as bytes, int64 group code per doc code).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..inputs.arrow import to_numpy

    if len(doc_ids) == 0:
        return np.array([], dtype=object), np.zeros(0, dtype=np.int64)
    parts = pc.split_pattern(doc_ids.cast(pa.string()), sep, max_splits=1)
    # each list's first element, taken at its offset; no pyarrow call here converts a Python
    # value or calls pyarrow's to_numpy (both import pandas: half a second on a dashboard start)
    head = parts.values.take(parts.offsets.slice(0, len(parts)))
    enc = pc.dictionary_encode(head)
    order = to_numpy(pc.array_sort_indices(enc.dictionary))
    remap = np.empty(len(order), dtype=np.int64)
    remap[order] = np.arange(len(order))
    vocab = np.asarray(enc.dictionary.to_pylist(), dtype=object)[order]
    return vocab, remap[to_numpy(enc.indices)]


def condense(lane: RankedLane, grade: NDArray[np.int64]) -> RankedLane:
    """The lane with its unjudged hits removed and the rest renumbered 1, 2, ... per query:
    trec_eval's ``-J`` (judged docs only). ``grade`` is each row's grade for its query
    (``judgments.NO_JUDGMENT`` when the pair is not in the qrels); a row is kept when its
    grade is >= 0, so a negative grade ("in the pool, not judged") is removed too, as
    trec_eval removes it. The order among the kept rows is unchanged (the tie rule was
    applied before), and the depth cut came first: trec_eval cuts at ``-M`` before ``-J``
    throws unjudged docs out, so a condensed list may be shorter than the depth."""
    keep = grade >= 0
    if bool(keep.all()):
        return lane
    qid = lane.qid[keep]
    return RankedLane(lane.name, qid, lane.doc[keep], lane.score[keep], ranks_within(qid),
                      offsets_for(qid, lane.offsets.shape[0] - 1))
