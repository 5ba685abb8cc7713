"""Hits and judged grades as columns, and the shared per-call work every measure reads.

Doc level and group level (SPEC §3) build the same two tables: ``Hits`` (a lane's hits
with their grades, in (qid, rank) order) and ``Ideal`` (the judged grades per query).
``Columns`` holds the judged rows of one call and caches what several measures share
(relevant masks, relevant counts, first relevant ranks, ideal DCGs), so adding a measure
to a call costs only its own arithmetic.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: judged grades, the
  relevance level and the tie order every measure reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..ranking.judgments import NO_JUDGMENT
from ..ranking.runs import running_count
from .portable import log2_int

T = TypeVar("T")


@dataclass(frozen=True)
class Hits:
    """Hits of one lane at one level, in (qid, rank) order, with their judgments."""

    qid: NDArray[np.int32]  # query codes
    rank: NDArray[np.int32]  # 1-based
    grade: NDArray[np.int64]  # NO_JUDGMENT when unjudged
    # group level: True on a later occurrence of a group already seen higher in the list
    # (bpref skips those); None at doc level
    repeat: NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class Ideal:
    """Judged grades per query at one level, for recall denominators and ideal DCG."""

    qid: NDArray[np.int32]
    grade: NDArray[np.int64]  # only grades >= 0: judged units


def weighted_bincount(bins: NDArray[np.integer[Any]], weights: ArrayLike, minlength: int = 0) -> NDArray[np.float64]:
    """``np.bincount(bins, weights=weights, minlength=minlength)``: the float64 sum of
    ``weights`` per bin, added in array order."""
    # numpy's stubs give bincount an integer result even with weights, where it is float64
    return cast("NDArray[np.float64]", np.bincount(bins, weights=weights, minlength=minlength))


def within_query_count(qid: NDArray[np.integer[Any]], x: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """Running count of ``x`` within each run of equal (sorted) ``qid``, inclusive."""
    if qid.size == 0:
        return np.zeros(0, dtype=np.int64)
    c = running_count(x)
    start = np.r_[True, qid[1:] != qid[:-1]]
    idx = np.arange(qid.size)
    first = np.maximum.accumulate(np.where(start, idx, 0))
    return c - (c[first] - x[first])


class Columns:
    """The judged rows of one lane at one level, and the work measures share.

    Unjudged hits add to no measure, so only judged rows are kept (order kept: sums run
    in rank order, as trec_eval's loops do; ``np.bincount`` adds in array order).
    ``rel`` arguments are a measure's own relevance level (``None`` = the call's).
    """

    def __init__(self, hits: Hits, ideal: Ideal, n_queries: int, relevant: int):
        sel = np.flatnonzero(hits.grade != NO_JUDGMENT)
        self.qid, self.rank, self.grade = hits.qid[sel], hits.rank[sel], hits.grade[sel]
        self.repeat = hits.repeat[sel] if hits.repeat is not None else None
        self.ideal = ideal
        self.hits = hits  # every row, judged or not: the set measures count what was retrieved
        self.n = n_queries
        self.relevant = relevant
        self._cache: dict[Hashable, Any] = {}  # each key's value has the type its compute returns

    def _cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        if key not in self._cache:
            self._cache[key] = compute()
        value: T = self._cache[key]
        return value

    def level(self, rel: int | None) -> int:
        return self.relevant if rel is None else rel

    def is_rel(self, rel: int | None = None) -> NDArray[np.bool_]:
        """Rows whose grade is relevant at the level."""
        L = self.level(rel)
        return self._cached(("rel", L), lambda: self.grade >= L)

    def n_rel(self, rel: int | None = None) -> NDArray[np.float64]:
        """Relevant judged units per query (float64), the recall denominator R."""
        L = self.level(rel)
        return self._cached(("n_rel", L), lambda: weighted_bincount(self.ideal.qid, weights=(self.ideal.grade >= L),
                                                                    minlength=self.n))

    def first_rank(self, rel: int | None = None) -> NDArray[np.int32]:
        """Rank of the first relevant hit per query code; 0 = miss."""
        L = self.level(rel)

        def compute() -> NDArray[np.int32]:
            out = np.zeros(self.n, dtype=np.int32)
            m = self.is_rel(L)
            q = self.qid[m]
            if q.size:
                # rows are in (qid, rank) order: the first row of each query is its first relevant hit
                first = np.r_[True, q[1:] != q[:-1]]
                out[q[first]] = self.rank[m][first]
            return out

        return self._cached(("first", L), compute)

    def n_ret(self, k: int | None = None) -> NDArray[np.float64]:
        """Hits retrieved per query (within depth; within the top k when k is given)."""
        def compute() -> NDArray[np.float64]:
            q = self.hits.qid if k is None else self.hits.qid[self.hits.rank <= k]
            return np.bincount(q, minlength=self.n).astype(np.float64)

        return self._cached(("n_ret", k), compute)

    def n_rel_ret(self, rel: int | None = None, k: int | None = None) -> NDArray[np.float64]:
        """Relevant hits retrieved per query (within the top k when k is given)."""
        L = self.level(rel)

        def compute() -> NDArray[np.float64]:
            m = self.is_rel(L) if k is None else self.is_rel(L) & self.top(k)
            return np.bincount(self.qid[m], minlength=self.n).astype(np.float64)

        return self._cached(("n_rel_ret", L, k), compute)

    def top(self, k: int) -> NDArray[np.bool_]:
        return self._cached(("top", k), lambda: self.rank <= k)

    def count_rel_top(self, k: int, rel: int | None = None) -> NDArray[np.intp]:
        """Relevant hits in the top k per query."""
        L = self.level(rel)
        return self._cached(("cnt", k, L), lambda: np.bincount(self.qid[self.top(k) & self.is_rel(L)], minlength=self.n))

    def gain(self, kind: str = "linear") -> NDArray[np.float64]:
        """Gain per row: the grade (linear) or 2^grade - 1 (exponential); grades <= 0 gain 0."""
        return self._cached(("gain", kind), lambda: _gain(self.grade, kind))

    def ideal_dcg(self, k: int | None, kind: str = "linear") -> NDArray[np.float64]:
        """DCG of the best order of every judged grade of the query, cut at k (None = uncut)."""
        return self._cached(("idcg", k, kind), lambda: _ideal_dcg(self.ideal, self.n, k, kind))

    def dcg(self, k: int | None, kind: str = "linear") -> NDArray[np.float64]:
        def compute() -> NDArray[np.float64]:
            g = self.gain(kind)
            m = g > 0 if k is None else self.top(k) & (g > 0)
            return weighted_bincount(self.qid[m], weights=g[m] / log2_int(self.rank[m] + 1), minlength=self.n)

        return self._cached(("dcg", k, kind), compute)


def _gain(grade: NDArray[np.int64], kind: str) -> NDArray[np.float64]:
    if kind == "linear":
        return np.where(grade > 0, grade, 0).astype(np.float64)
    g = np.where(grade > 0, grade, 0).astype(np.float64)
    return np.exp2(g) - 1.0


def _ideal_dcg(ideal: Ideal, n_queries: int, k: int | None, kind: str = "linear") -> NDArray[np.float64]:
    gain = _gain(ideal.grade, kind)
    pos_mask = gain > 0
    q = ideal.qid[pos_mask]
    g = gain[pos_mask]
    if q.size == 0:
        return np.zeros(n_queries)
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    # position of each judged gain within its query, best first
    start = np.r_[True, q[1:] != q[:-1]]
    idx = np.arange(q.size)
    pos = idx - np.maximum.accumulate(np.where(start, idx, 0)) + 1
    if k is None:
        return weighted_bincount(q, weights=g / log2_int(pos + 1), minlength=n_queries)
    m = pos <= k
    return weighted_bincount(q[m], weights=g[m] / log2_int(pos[m] + 1), minlength=n_queries)


def doc_level(qid: NDArray[np.int32], doc: NDArray[np.int64], rank: NDArray[np.int32], j_qid: NDArray[np.int32],
              j_doc: NDArray[np.int64], j_grade: NDArray[np.int64], n_docs: int) -> tuple[Hits, Ideal]:
    """Doc-level hits and ideal from a ranked lane's columns and the judgments' columns."""
    from ..ranking.judgments import Judgments

    jud = Judgments(j_qid, j_doc, j_grade, n_docs)
    doc = np.asarray(doc)
    grade = np.full(doc.shape, NO_JUDGMENT, dtype=np.int64)
    if doc.size and j_doc.size:
        # Only hits whose doc is judged for some query can have a grade: a gather from
        # a per-doc mask narrows the (qid, doc) join to those rows.
        in_qrels = np.zeros(max(int(n_docs), int(j_doc.max()) + 1), dtype=bool)
        in_qrels[j_doc] = True
        cand = np.flatnonzero(in_qrels[doc])
        grade[cand] = jud.grade_of(qid[cand], doc[cand])
    judged = j_grade >= 0
    return Hits(qid, rank, grade), Ideal(j_qid[judged], j_grade[judged])


def group_level(
    qid: NDArray[np.int32], doc: NDArray[np.int64], rank: NDArray[np.int32], j_qid: NDArray[np.int32],
    j_doc: NDArray[np.int64], j_grade: NDArray[np.int64], group_of: NDArray[np.int64], n_groups: int,
) -> tuple[Hits, Ideal]:
    """Group-level hits and ideal (SPEC §3).

    A group's grade is the maximum grade >= 0 of its judged docs; positions stay the
    doc-level positions; a hit counts for its group only at the group's first
    occurrence, later occurrences are non-relevant with gain 0 and judged iff the
    group is judged (``Hits.repeat`` marks them).
    """
    judged = j_grade >= 0
    gq = j_qid[judged].astype(np.int64)
    gg = group_of[j_doc[judged]]
    keys = gq * n_groups + gg
    gkeys, inv = np.unique(keys, return_inverse=True)
    ggrade = np.full(gkeys.size, -1, dtype=np.int64)
    np.maximum.at(ggrade, inv, j_grade[judged])
    hit_keys = qid.astype(np.int64) * n_groups + group_of[doc]
    grade = np.full(qid.shape, NO_JUDGMENT, dtype=np.int64)
    later = np.ones(qid.shape, dtype=bool)
    if hit_keys.size:
        # rows are in (qid, rank) order, so the first index of each key is its first occurrence
        _, first = np.unique(hit_keys, return_index=True)
        later[first] = False
    if gkeys.size and hit_keys.size:
        pos = np.minimum(np.searchsorted(gkeys, hit_keys), gkeys.size - 1)
        found = gkeys[pos] == hit_keys
        grade[found] = ggrade[pos[found]]
        grade[later & found] = 0
    ideal = Ideal((gkeys // n_groups).astype(np.int32), ggrade)
    return Hits(qid, rank, grade, later), ideal
