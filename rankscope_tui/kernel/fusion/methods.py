"""Fusion of ranked lanes (SPEC §5, lessons 07, 08 and 16), on columns.

Inputs are :class:`~.ranking.RankedLane` objects over one shared query-code and
doc-code vocabulary. Outputs are RankedLanes too, so every metric, interval and
table treats a fused lane or a variant like any other lane.

Conventions
-----------
Order of a fused lane
    Like any lane: score descending, then doc id descending as bytes (trec_eval),
    then cut to ``depth`` per query. ``doc_ids`` plays the role it plays in
    :func:`~.ranking.rank_lane`: ``None`` means the doc codes are already in byte
    order; a pyarrow string array or a sequence of str maps codes to ids (only the
    tied docs are looked up); an *integer* numpy array is taken as a precomputed
    byte rank of every doc code (see :func:`~.ranking.byte_order`) -- the fastest form when
    many calls are made (RRF produces many exact ties).

RRF
    ``score(d) = Σ_lanes 1/(k + rank_lane(d))``; a lane without d adds nothing; ranks
    are the lanes' own (after ordering and depth). A doc's terms are added in
    ascending rank order (largest term first) in float64, so two docs whose rank
    multisets are equal tie exactly. For two lanes the order of the two terms does
    not matter (IEEE addition is commutative), which the fast path relies on.

Min-max normalisation
    Per lane and per query, over the lane's own list: ``(s - min) / (max - min)``.
    A doc absent from the lane scores 0 there. A constant list (max == min)
    normalises to all **ones**, as the lesson says; ranx gives all zeros. ranx also
    floors the denominator at 1e-9; we divide by the true range (only lists whose
    range is below 1e-9 differ).

Convex fusion
    ``Σ_l w_l · n_l(d)`` added in lane order. Zero-weight terms are skipped; that is
    exact (``w·n = 0`` and ``x + 0 == x``), and it gives the same floats as ranx's
    ``wsum`` (which starts a sum at 0 and adds in run order). Every doc of the union
    of the lanes is kept, with score 0 when only zero-weight lanes hold it.

Speed
    Two-lane RRF joins the lanes with a per-query hash table and merges three
    streams without sorting the whole union; a small ``depth`` only scores the docs
    that can reach it (a doc whose best rank is m scores at most L/(k+m)). A
    :class:`FusionTable` prepares the union once for many fusions (the calibration
    grid, an RRF k sweep, a dashboard slider); each then costs a weighted sum and a
    per-query top-k selection. Every path gives the same lane, ties included.

Calibration grid
    Every integer composition ``(c_1..c_L)`` of ``N = 1/step`` (1/step must be an
    integer within 1e-9), visited in ascending lexicographic order of the integer
    tuple, read as weights ``c_i / N``; ``C(N + L - 1, L - 1)`` points. The first
    point with the maximal mean objective (exact float comparison) wins. ranx's
    float-sum filter loses simplex points (e.g. (0.2, 0.7, 0.1)) and keeps the
    *last* of tied points.

Caps and document-first (lesson 16)
    ``group_of`` maps doc code -> group code. A cap keeps the first ``n`` hits of
    each (query, group) in order. Document-first puts the top hit's whole group
    first, in its original order, then the remaining hits in order, the cap applied
    to the other groups only. Variants keep each hit's **original score**; their
    order is the row order and the ``rank`` column (renumbered 1..n), which is what
    metrics read. The top hit (and so its score) never changes under either rule,
    but a document-first lane's scores need not be descending.

References
----------
- Cormack, G. V., Clarke, C. L. A. & Büttcher, S. (2009). Reciprocal rank fusion
  outperforms Condorcet and individual rank learning methods. *SIGIR 2009*, 758-759.
  (RRF)
- Fox, E. A. & Shaw, J. A. (1994). Combination of multiple searches. *TREC-2*, NIST
  Special Publication 500-215, 243-252. (score combination, CombSUM)
- Lee, J. H. (1997). Analyses of multiple evidence combination. *SIGIR 1997*, 267-276.
  (min-max normalisation before combining)
- Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
  comparison. *ECIR 2022*, 259-264. (``fuse``, the peer the tests compare against)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Sequence, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..ranking.judgments import Judgments
from ..ranking.ranks import RankedLane, distinct_inverse, offsets_for, ranks_within, tie_key
from ..ranking.ranks import _fix_ties as _ranking_fix_ties
from ..ranking.runs import running_count
from .combine import FuseSpec, fused_scores, parse_fuse
from .combine import check_weights as _check_weights
from .combine import weighted_sum as _weighted

if TYPE_CHECKING:
    from ..ranking.ranks import DocIds

__all__ = [
    "rrf",
    "rrf_score",
    "minmax",
    "convex",
    "fuse",
    "compositions",
    "grid_size",
    "grid_weights",
    "FusionTable",
    "ConvexFit",
    "calibrate_convex",
    "cap",
    "document_first",
    "variant_name",
    "Dilution",
    "dilution",
]

_I64_MAX = np.iinfo(np.int64).max
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier


# ---------------------------------------------------------------------- tie keys


def _is_rank_array(doc_ids: DocIds) -> bool:
    return isinstance(doc_ids, np.ndarray) and doc_ids.dtype.kind in "iu"


def _fix_ties(qid: np.ndarray, score: np.ndarray, doc: np.ndarray, doc_ids: DocIds) -> np.ndarray | None:
    """Permutation ordering each run of equal (qid, score) by doc id descending as bytes
    (rows already in (qid asc, score desc) order): the ranking module's tie rule."""
    return _ranking_fix_ties(qid, doc, score, doc_ids)


# ------------------------------------------------------------------ small helpers


def _bits(x: int) -> int:
    return max(int(x).bit_length(), 1)


def _n_queries(lanes: Sequence[RankedLane]) -> int:
    n = {int(lane.offsets.shape[0]) - 1 for lane in lanes}
    if len(n) != 1:
        raise ValueError("lanes are over different query vocabularies")
    return n.pop()


def _lane(name: str, qid: np.ndarray, doc: np.ndarray, score: np.ndarray, n_queries: int, depth: int | None,
          rank: np.ndarray | None = None) -> RankedLane:
    """RankedLane from rows already in final order (qid-grouped); ranks renumbered, depth cut."""
    qid = qid.astype(np.int32, copy=False)
    rank = ranks_within(qid) if rank is None else rank
    if depth is not None and rank.size and int(rank.max()) > depth:
        keep = rank <= depth
        qid, doc, score, rank = qid[keep], doc[keep], score[keep], rank[keep]
    return RankedLane(name, qid, doc.astype(np.int64, copy=False), score.astype(np.float64, copy=False), rank,
                      offsets_for(qid, n_queries))


def _check_depth(depth: int | None) -> None:
    if depth is not None and depth < 1:
        raise ValueError("depth must be >= 1")


class _RowTable:
    """Open-addressing hash table of (query, doc) rows: one power-of-two region per
    query, so probes stay inside a small, cache-friendly block (rows are query-sorted).

    Entries are indices into ``ref_doc``; a region is at most half full. The first
    probe of every row is one vectorised pass; the few rows that collide continue
    in rounds of linear probing. Regions share one size unless list lengths are
    so skewed that a per-query size saves memory.
    """

    def __init__(self, rows_per_query: np.ndarray, ref_doc: np.ndarray):
        c = np.maximum(np.asarray(rows_per_query, dtype=np.int64), 1)
        nq = c.shape[0]
        ubits = max(int(2 * int(c.max()) - 1).bit_length(), 1)
        if (nq << ubits) <= 4 * int(c.sum()) + (1 << 16) and _bits(nq) + ubits <= 62:
            self._uniform = True
            bits = np.full(nq, ubits, dtype=np.int64)
        else:
            self._uniform = False
            bits = np.frexp((2 * c - 1).astype(np.float64))[1].astype(np.int64)  # 2**bits >= 2c
        self._ubits = ubits
        size = np.left_shift(np.int64(1), bits)
        self._base = np.zeros(nq, dtype=np.int64)
        np.cumsum(size[:-1], out=self._base[1:])
        self._shift = (64 - bits).astype(np.uint64)
        self._mask = size - 1
        dtype = np.int32 if ref_doc.shape[0] < 2**31 - 1 else np.int64
        self._table = np.full(int(size.sum()), -1, dtype=dtype)
        self._ref = ref_doc

    def _first_slot(self, q: np.ndarray, d: np.ndarray) -> np.ndarray:
        h = np.multiply(np.asarray(d, dtype=np.int64).view(np.uint64), _GOLDEN)
        if self._uniform:
            np.right_shift(h, np.uint64(64 - self._ubits), out=h)
            s = h.view(np.int64)
            s |= q.astype(np.int64) << self._ubits
            return s
        np.right_shift(h, self._shift[q], out=h)
        s = h.view(np.int64)
        s += self._base[q]
        return s

    def _next(self, first: np.ndarray, q: np.ndarray, j: int) -> np.ndarray:
        base, mask = self._base[q], self._mask[q]
        slot: NDArray[np.int64] = base + ((first - base + j) & mask)
        return slot

    def insert(self, entries: np.ndarray, q: np.ndarray, d: np.ndarray) -> None:
        """Insert rows known to be absent (and distinct); ``entries`` index ``ref_doc``."""
        e = np.asarray(entries, dtype=np.int64)
        table = self._table
        first = self._first_slot(q, d)
        free = table[first] < 0
        if free.all():
            table[first] = e  # a slot wanted twice keeps one write; the others probe on
            lost = np.flatnonzero(table[first] != e)
        else:
            f = np.flatnonzero(free)
            table[first[f]] = e[f]
            won = np.zeros(e.shape[0], dtype=bool)
            won[f[table[first[f]] == e[f]]] = True
            lost = np.flatnonzero(~won)
        e, first, q, j = e[lost], first[lost], q[lost], 1
        while e.size:
            slot = self._next(first, q, j)
            free = np.flatnonzero(table[slot] < 0)
            table[slot[free]] = e[free]
            won = np.zeros(e.shape[0], dtype=bool)
            won[free[table[slot[free]] == e[free]]] = True
            e, first, q, j = e[~won], first[~won], q[~won], j + 1

    def lookup(self, q: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Entry holding each (q, d), or -1 (in the table's integer type)."""
        d = np.asarray(d, dtype=np.int64)
        table, ref = self._table, self._ref
        if ref.shape[0] == 0:
            return np.full(d.shape[0], -1, dtype=np.int64)
        first = self._first_slot(q, d)
        e = table[first]
        empty = e < 0
        hit = ref[np.maximum(e, 0)] == d
        hit &= ~empty
        out = np.where(hit, e, -1)
        p = np.flatnonzero(~(hit | empty))  # slot taken by another doc: probe on
        first, q, d, j = first[p], q[p], d[p], 1
        while p.size:
            e = table[self._next(first, q, j)]
            empty = e < 0
            h = (ref[np.maximum(e, 0)] == d) & ~empty
            out[p[h]] = e[h]
            go = ~(h | empty)
            p, first, q, d, j = p[go], first[go], q[go], d[go], j + 1
        return out


def _sort_within(keys: np.ndarray, qid: np.ndarray, n_queries: int, prefixed: bool = False) -> np.ndarray:
    """Sort non-negative int64 ``keys`` (< 2**62) within each run of equal, ascending ``qid``
    (``prefixed``: the keys already start with the qid bits).

    Per-query rows of a padded matrix sort much faster than one long array; a
    skewed length distribution falls back to one flat sort with the qid in the key.
    """
    n = keys.shape[0]
    if n == 0:
        return keys.copy()
    counts = np.bincount(qid, minlength=n_queries)
    rows = np.flatnonzero(counts)
    width = int(counts.max())
    if rows.size * width <= 2 * n + 4096:
        row_of = np.zeros(n_queries, dtype=np.int64)
        row_of[rows] = np.arange(rows.size)
        mat = np.full((rows.size, width), _I64_MAX, dtype=np.int64)
        mat[row_of[qid], ranks_within(qid) - 1] = keys
        mat.sort(axis=1)
        return mat[np.arange(width)[None, :] < counts[rows][:, None]]
    if prefixed:
        return np.sort(keys)
    kb = _bits(int(keys.max()))
    if _bits(n_queries) + kb <= 63:
        packed = (qid.astype(np.int64) << kb) | keys
        packed.sort()
        unpacked: NDArray[np.int64] = packed & ((np.int64(1) << kb) - 1)
        return unpacked
    return keys[np.lexsort((keys, qid))]


# ----------------------------------------------------------------------------- union


@dataclass(frozen=True)
class _Union:
    """The union of several lanes' docs per query, as qid-grouped flat rows.

    Within a query the union lists lane 0's docs in lane 0's order, then the docs
    new in lane 1 in lane 1's order, and so on. ``pos[l]`` gives, for each row of
    lane l, the union row holding its doc.
    """

    qid: NDArray[np.int32]
    doc: NDArray[np.int64]
    offsets: NDArray[np.int64]  # len n_queries + 1
    pos: tuple[np.ndarray, ...]

    @property
    def size(self) -> int:
        return int(self.qid.shape[0])

    def column(self, lane_index: int, values: np.ndarray, fill: float, dtype: type[np.generic]) -> np.ndarray:
        out = np.full(self.size, fill, dtype=dtype)
        out[self.pos[lane_index]] = values
        return out


@overload
def _union(lanes: Sequence[RankedLane], n_queries: int, with_table: Literal[False] = False) -> _Union: ...


@overload
def _union(lanes: Sequence[RankedLane], n_queries: int,
           with_table: Literal[True]) -> tuple[_Union, _RowTable, NDArray[np.int64]]: ...


def _union(lanes: Sequence[RankedLane], n_queries: int,
           with_table: bool = False) -> _Union | tuple[_Union, _RowTable, NDArray[np.int64]]:
    """The union of ``lanes``; with ``with_table`` also (table, union row of each table entry)
    so that more (query, doc) pairs can be looked up in it."""
    total = np.zeros(n_queries, dtype=np.int64)
    for lane in lanes:
        total += np.diff(lane.offsets)
    ref = np.concatenate([lane.doc for lane in lanes]) if lanes else np.zeros(0, np.int64)
    start = np.cumsum([0] + [lane.n_rows for lane in lanes])
    table = _RowTable(total, ref)
    col = np.empty(ref.shape[0], dtype=np.int64)  # column of each row's doc within its query
    ucount = np.zeros(n_queries, dtype=np.int64)
    for i, lane in enumerate(lanes):
        g = np.arange(start[i], start[i + 1], dtype=np.int64)
        found = table.lookup(lane.qid, lane.doc) if i else np.full(lane.n_rows, -1, dtype=np.int64)
        new = found < 0
        nq = lane.qid[new]
        col[g[new]] = ucount[nq] + ranks_within(nq) - 1
        col[g[~new]] = col[found[~new]]
        ucount += np.bincount(nq, minlength=n_queries)
        if (with_table or i < len(lanes) - 1) and new.any():
            table.insert(g[new], nq, lane.doc[new])
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(ucount, out=offsets[1:])
    size = int(offsets[-1])
    uq = np.repeat(np.arange(n_queries, dtype=np.int32), ucount)
    ud = np.empty(size, dtype=np.int64)
    pos: list[NDArray[np.int64]] = []
    for i, lane in enumerate(lanes):
        p = offsets[lane.qid] + col[start[i]:start[i + 1]]
        ud[p] = lane.doc
        pos.append(p)
    u = _Union(uq, ud, offsets, tuple(pos))
    if with_table:
        return u, table, (np.concatenate(pos) if pos else np.zeros(0, np.int64))
    return u


def _order_union(u: _Union, score: np.ndarray, n_queries: int, doc_ids: DocIds) -> np.ndarray:
    """Permutation of union rows into lane order: qid asc, score desc, doc id desc (bytes)."""
    n = u.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    counts = np.diff(u.offsets)
    rows = np.flatnonzero(counts)
    width = int(counts.max())
    if rows.size * width <= 2 * n + 4096:
        row_of = np.zeros(n_queries, dtype=np.int64)
        row_of[rows] = np.arange(rows.size)
        neg = np.full((rows.size, width), np.inf)  # padding sorts last
        c = np.arange(n, dtype=np.int64) - u.offsets[u.qid]
        neg[row_of[u.qid], c] = -score
        o = np.argsort(neg, axis=1)
        valid = np.arange(width)[None, :] < counts[rows][:, None]
        perm = (u.offsets[rows][:, None] + o)[valid]
    else:
        perm = np.lexsort((-score, u.qid))
    fix = _fix_ties(u.qid[perm], score[perm], u.doc[perm], doc_ids)
    return perm if fix is None else perm[fix]


# ------------------------------------------------------------------------------- RRF


def rrf_score(ranks: Sequence[int], k: float = 60) -> float:
    """RRF score of one doc from its ranks in the lanes that hold it (largest term first)."""
    total = 0.0
    for r in sorted(int(x) for x in ranks):
        total += 1.0 / (k + r)
    return total


@lru_cache(maxsize=16)
def _rrf_classes(k: float, da: int, db: int) -> tuple[np.ndarray, np.ndarray]:
    """Score classes of every rank pair (a, b), 0 = absent: class 0 scores highest.

    Equal scores share a class, so an integer (class, doc) key orders by exact score.
    Depends only on (k, da, db), hence cached.
    """
    ta = np.zeros(da + 1)
    ta[1:] = 1.0 / (k + np.arange(1, da + 1, dtype=np.float64))
    tb = np.zeros(db + 1)
    tb[1:] = 1.0 / (k + np.arange(1, db + 1, dtype=np.float64))
    s = (ta[:, None] + tb[None, :]).ravel()
    neg, inv = distinct_inverse(-s)
    return inv.astype(np.int32).ravel(), -neg


def _rrf_pair(a: RankedLane, b: RankedLane, k: float, n_queries: int, depth: int | None, name: str,
              doc_ids: DocIds) -> RankedLane | None:
    """Two-lane RRF without sorting the whole union.

    Docs found by one lane only are already in score order (their scores fall with
    rank), so only the docs found by both need a (per-query) sort; the three sorted
    streams are then merged. Keys pack (qid, score class, doc tie key) in an int64.
    Returns None when the keys do not fit (the caller takes the general path).
    """
    da = int(a.rank.max()) if a.n_rows else 0
    db = int(b.rank.max()) if b.n_rows else 0
    if (da + 1) * (db + 1) > 1 << 22 or not (np.isfinite(k) and k >= 0):
        return None
    exact = doc_ids is None or _is_rank_array(doc_ids)
    key_a = tie_key(doc_ids, a.doc) if exact else a.doc
    key_b = tie_key(doc_ids, b.doc) if exact else b.doc
    kmax = int(max(key_a.max(initial=0), key_b.max(initial=0)))
    cls_of, cls_score = _rrf_classes(float(k), da, db)
    dbits, cbits = _bits(kmax), _bits(cls_score.shape[0] - 1)
    if _bits(n_queries) + cbits + dbits > 62:
        return None

    table = _RowTable(np.diff(a.offsets), a.doc)
    table.insert(np.arange(a.n_rows, dtype=np.int64), a.qid, a.doc)
    in_a = table.lookup(b.qid, b.doc)  # row of A holding each B row's doc, or -1
    found = in_a >= 0
    partner = np.zeros(a.n_rows, dtype=np.int64)
    partner[in_a[found]] = b.rank[found]

    stride = np.int64(db + 1)
    cshift, qshift = dbits, cbits + dbits
    # one packed key per row: (qid, score class, tie key descending); the class of an
    # A row depends on its partner rank in B (0 = absent), that of a B row on its rank
    ka = a.rank.astype(np.int64)
    ka *= stride
    ka += partner
    ka = cls_of[ka].astype(np.int64)
    ka <<= cshift
    ka |= a.qid.astype(np.int64) << qshift
    ka |= kmax - key_a
    kb = cls_of[b.rank].astype(np.int64)
    kb <<= cshift
    kb |= b.qid.astype(np.int64) << qshift
    kb |= kmax - key_b
    both = partner > 0
    # one-lane docs are already in key order (scores fall with rank); sort the others
    merged = np.concatenate([ka[~both], kb[~found], _sort_within(ka[both], a.qid[both], n_queries, prefixed=True)])
    merged.sort(kind="stable")  # three sorted runs: a linear merge

    qid = (merged >> qshift).astype(np.int32)
    rank = None
    if exact:
        rank = ranks_within(qid)
        if depth is not None and rank.size and int(rank.max()) > depth:  # cut before unpacking
            keep = rank <= depth
            merged, qid, rank = merged[keep], qid[keep], rank[keep]
    score = cls_score[(merged >> cshift) & ((np.int64(1) << cbits) - 1)]
    tk = kmax - (merged & ((np.int64(1) << dbits) - 1))
    if doc_ids is None:
        doc = tk
    elif exact:  # tie keys are byte ranks (injective): invert them back to codes
        assert isinstance(doc_ids, np.ndarray)  # exact and not None: a rank per doc code
        inv = np.zeros(int(doc_ids.max(initial=0)) + 1, dtype=np.int64)
        inv[doc_ids] = np.arange(doc_ids.shape[0], dtype=np.int64)
        doc = inv[tk]
    else:
        doc = tk
        fix = _fix_ties(qid, score, doc, doc_ids)
        if fix is not None:
            qid, doc, score = qid[fix], doc[fix], score[fix]
    return _lane(name, qid, doc, score, n_queries, depth, rank)


def rrf(
    lanes: Sequence[RankedLane],
    k: float = 60,
    n_queries: int | None = None,
    depth: int | None = None,
    name: str = "rrf",
    doc_ids: DocIds = None,
) -> RankedLane:
    """Reciprocal rank fusion of ``lanes`` (see the module conventions).

    ``n_queries`` defaults to the lanes' query vocabulary size. Paths (same result):
    a small ``depth`` only scores docs that can reach it (a doc whose best rank is m
    scores at most L/(k+m), below the depth-th score once m > L(k+depth) - k);
    otherwise two lanes merge sorted streams, and more lanes sort the union's scores.
    """
    if not lanes:
        raise ValueError("rrf needs at least one lane")
    if not (k >= 0 and math.isfinite(k)):
        raise InputError(f"--rrf-k must be a finite number >= 0, got {k!r}", "--rrf-k")
    _check_depth(depth)
    n_queries = _n_queries(lanes) if n_queries is None else int(n_queries)
    deepest = max((int(lane.rank.max()) for lane in lanes if lane.n_rows), default=0)
    bound = _rrf_bound(len(lanes), k, depth)
    if bound is not None and bound < deepest:
        return _rrf_union(lanes, k, n_queries, depth, name, doc_ids, bound)
    if len(lanes) == 2:
        out = _rrf_pair(lanes[0], lanes[1], k, n_queries, depth, name, doc_ids)
        if out is not None:
            return out
    return _rrf_union(lanes, k, n_queries, depth, name, doc_ids, None)


def _rrf_bound(n_lanes: int, k: float, depth: int | None) -> int | None:
    """Best rank beyond which a doc cannot reach ``depth`` (None: no useful bound).

    The real-valued margin at the bound is 1/((k+depth)(L(k+depth)+1)), far above
    float64 rounding while k + depth stays moderate; ``+ n_lanes`` adds slack.
    """
    if depth is None or k + depth > 1e6:
        return None
    return int(math.floor(n_lanes * (k + depth) - k)) + n_lanes


def _head(lane: RankedLane, bound: int) -> RankedLane:
    keep = lane.rank <= bound
    qid = lane.qid[keep]
    return RankedLane(lane.name, qid, lane.doc[keep], lane.score[keep], lane.rank[keep],
                      offsets_for(qid, lane.offsets.shape[0] - 1))


def _rrf_union(lanes: Sequence[RankedLane], k: float, n_queries: int, depth: int | None, name: str, doc_ids: DocIds,
               bound: int | None) -> RankedLane:
    """RRF over the union of the lanes' docs (all of them, or those with a rank <= bound
    in some lane: their ranks deeper in the other lanes are then looked up)."""
    heads = list(lanes) if bound is None else [_head(lane, bound) for lane in lanes]
    table: _RowTable | None
    where: NDArray[np.int64] | None
    u, table, where = _union(heads, n_queries, with_table=True) if bound is not None \
        else (_union(heads, n_queries), None, None)
    ranks = np.zeros((u.size, len(lanes)), dtype=np.float64)
    for i, (lane, head) in enumerate(zip(lanes, heads)):
        ranks[u.pos[i], i] = head.rank
        if bound is not None and head.n_rows < lane.n_rows:
            assert table is not None and where is not None  # built when there is a bound
            # look every row up (the head rows find themselves): cheaper than selecting the deep ones
            e = table.lookup(lane.qid, lane.doc)
            f = e >= 0
            ranks[where[e[f]], i] = lane.rank[f]
    terms = np.zeros_like(ranks)
    held = ranks > 0
    terms[held] = 1.0 / (k + ranks[held])
    terms = -np.sort(-terms, axis=1)  # largest term (smallest rank) first; absent (0) last
    score = terms[:, 0].copy()
    for j in range(1, terms.shape[1]):
        score += terms[:, j]
    perm = _order_union(u, score, n_queries, doc_ids)
    return _lane(name, u.qid[perm], u.doc[perm], score[perm], n_queries, depth)


# --------------------------------------------------------------------- convex fusion


def minmax(lane: RankedLane) -> np.ndarray:
    """Per-query min-max normalised score of every row (constant list -> 1.0)."""
    n = lane.n_rows
    if n == 0:
        return np.zeros(0)
    counts = np.diff(lane.offsets)
    nz = np.flatnonzero(counts)
    starts = lane.offsets[nz]
    lo = np.minimum.reduceat(lane.score, starts)
    hi = np.maximum.reduceat(lane.score, starts)
    lo_r = np.repeat(lo, counts[nz])
    span = np.repeat(hi - lo, counts[nz])
    out = np.ones(n)
    var = span > 0
    out[var] = (lane.score[var] - lo_r[var]) / span[var]
    return out


def convex(
    lanes: Sequence[RankedLane],
    weights: Sequence[float],
    n_queries: int | None = None,
    depth: int | None = None,
    name: str = "convex",
    doc_ids: DocIds = None,
) -> RankedLane:
    """Convex (weighted min-max) fusion of ``lanes`` with ``weights`` in lane order."""
    if not lanes:
        raise ValueError("convex fusion needs at least one lane")
    w = _check_weights(weights, len(lanes))
    _check_depth(depth)
    n_queries = _n_queries(lanes) if n_queries is None else int(n_queries)
    u = _union(lanes, n_queries)
    cols = [u.column(i, minmax(lane), 0.0, np.float64) for i, lane in enumerate(lanes)]
    score = _weighted(cols, w)
    perm = _order_union(u, score, n_queries, doc_ids)
    return _lane(name, u.qid[perm], u.doc[perm], score[perm], n_queries, depth)


# ------------------------------------------------------------ the other fusion methods


def fuse(
    lanes: Sequence[RankedLane],
    spec: FuseSpec | str,
    weights: Sequence[float] | None = None,
    k: float = 60,
    n_queries: int | None = None,
    depth: int | None = None,
    name: str | None = None,
    doc_ids: DocIds = None,
) -> RankedLane:
    """The fused lane of ``lanes`` by ``spec`` (a :class:`~.combine.FuseSpec` or its
    ``METHOD[:NORM]`` spelling; definitions in :mod:`.combine`), ordered by the one tie
    rule and cut to ``depth``, named ``spec.name`` unless ``name`` is given. ``rrf`` is
    :func:`rrf` itself; ``weights`` only for a weighted method (None: ``1/L`` each)."""
    spec = parse_fuse(spec) if isinstance(spec, str) else spec
    if not lanes:
        raise ValueError("fusion needs at least one lane")
    _check_depth(depth)
    n_queries = _n_queries(lanes) if n_queries is None else int(n_queries)
    if spec.method == "rrf":
        return rrf(lanes, k, n_queries, depth, name or spec.name, doc_ids)
    u = _union(lanes, n_queries)
    return _fused_lane(u, lanes, spec, weights, k, n_queries, depth, name or spec.name, doc_ids)


def _fused_lane(u: _Union, lanes: Sequence[RankedLane], spec: FuseSpec, weights: Sequence[float] | None, k: float,
                n_queries: int, depth: int | None, name: str, doc_ids: DocIds, cache: dict[Any, Any] | None = None
                ) -> RankedLane:
    """The lane of :func:`~.combine.fused_scores` on a prepared union (``FusionTable.fuse`` shares it,
    with its cache of the lanes' terms)."""
    score = fused_scores(u, lanes, spec, weights, k, cache)
    perm = _order_union(u, score, n_queries, doc_ids)
    return _lane(name, u.qid[perm], u.doc[perm], score[perm], n_queries, depth)


# ----------------------------------------------------------------- calibration grid


def _grid_n(step: float) -> int:
    if not (isinstance(step, (int, float)) and math.isfinite(step) and 0 < step <= 1):
        raise InputError(f"step must be in (0, 1], got {step!r}", "--step")
    inv = 1.0 / step
    n = round(inv)
    if abs(inv - n) > 1e-9:
        raise InputError(f"1/step must be an integer (within 1e-9); 1/{step!r} = {inv!r}", "--step")
    return int(n)


def compositions(n_lanes: int, total: int) -> Iterator[tuple[int, ...]]:
    """Every composition of ``total`` into ``n_lanes`` parts >= 0, in ascending lexicographic order."""
    if n_lanes < 1:
        return
    if n_lanes == 1:
        yield (total,)
        return
    for c in range(total + 1):
        for rest in compositions(n_lanes - 1, total - c):
            yield (c, *rest)


def grid_size(n_lanes: int, step: float) -> int:
    """Number of grid points: C(1/step + L - 1, L - 1)."""
    return math.comb(_grid_n(step) + n_lanes - 1, n_lanes - 1)


#: The most convex-weight grid points a fit evaluates (each is one fused lane scored on
#: the calibration queries, a few ms each on Cranfield): 3 lanes at step 0.01 are 5,151
#: points, at 0.001 501,501.
MAX_GRID_POINTS = 10_000


def check_grid(n_lanes: int, step: float) -> int:
    """The grid's size, or an ``InputError`` (naming the size) beyond :data:`MAX_GRID_POINTS`."""
    size = grid_size(n_lanes, step)
    if size > MAX_GRID_POINTS:
        nice = (0.001, 0.002, 0.0025, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0)
        coarser = next((s for s in nice if grid_size(n_lanes, s) <= MAX_GRID_POINTS), 1.0)
        raise InputError(f"the convex weight grid of {n_lanes} lanes at step {step:g} has {size:,} points, more than the "
                         f"{MAX_GRID_POINTS:,} rankscope evaluates; use a coarser step (step {coarser:g} gives "
                         f"{grid_size(n_lanes, coarser):,})", "--step")
    return size


def grid_weights(n_lanes: int, step: float) -> list[tuple[tuple[int, ...], tuple[float, ...]]]:
    """The grid in visiting order: (composition, weights c_i / N); at most :data:`MAX_GRID_POINTS`."""
    check_grid(n_lanes, step)
    n = _grid_n(step)
    return [(c, tuple(x / n for x in c)) for c in compositions(n_lanes, n)]


@dataclass(frozen=True)
class ConvexFit:
    """Result of :func:`calibrate_convex`: the winning weights and every grid point."""

    lanes: tuple[str, ...]
    step: float
    weights: tuple[float, ...]
    composition: tuple[int, ...]
    objective: float  # mean objective of the winner
    objective_name: str
    fused_queries: int  # calibration queries with at least one fused hit
    points: tuple[tuple[tuple[int, ...], float], ...]  # (composition, objective) in visiting order

    @property
    def n_points(self) -> int:
        return len(self.points)

    def as_dict(self) -> dict[str, Any]:
        n = round(1 / self.step)
        return {
            "lanes": list(self.lanes),
            "step": self.step,
            "weights": dict(zip(self.lanes, self.weights)),
            "composition": list(self.composition),
            "objective": {"name": self.objective_name, "value": self.objective},
            "fused_queries": self.fused_queries,
            "grid": {
                "points": self.n_points,
                "order": "integer compositions of 1/step, ascending lexicographic, first maximum wins",
                "values": [{"weights": [c / n for c in comp], "objective": v} for comp, v in self.points],
            },
        }


def _select(lanes: Sequence[RankedLane], mask: np.ndarray) -> list[RankedLane]:
    out = []
    for lane in lanes:
        keep = mask[lane.qid]
        qid = lane.qid[keep]
        out.append(RankedLane(lane.name, qid, lane.doc[keep], lane.score[keep], lane.rank[keep],
                              offsets_for(qid, lane.offsets.shape[0] - 1)))
    return out


def _query_mask(queries: ArrayLike, n_queries: int) -> np.ndarray:
    q = np.asarray(queries)
    if q.dtype == bool:
        if q.shape[0] != n_queries:
            raise ValueError("query mask has the wrong length")
        return q
    mask = np.zeros(n_queries, dtype=bool)
    mask[q.astype(np.int64)] = True
    return mask


_BLOCK = 64  # columns per block in the top-k pre-selection


@dataclass(frozen=True, eq=False)
class FusionTable:
    """Several lanes prepared once for many fusions with the same inputs.

    Holds the union of the lanes' docs per query with every lane's rank and min-max
    score, laid out as padded (query × doc) matrices. A fusion is then a weighted sum
    and a per-query top-k selection: what the calibration grid, an RRF k sweep or a
    dashboard slider need. Results are identical (scores, order, ties) to
    :func:`rrf` and :func:`convex`. With ``by_best_rank`` the columns of each query
    are sorted by the doc's best rank over the lanes, so RRF with a small depth only
    reads the first columns. A very skewed list-length distribution keeps a flat
    layout (a full sort per call).
    """

    lanes: tuple[str, ...]
    n_queries: int
    union: _Union
    rows: np.ndarray | None  # matrix row -> query code (None: flat layout)
    rank: tuple[NDArray[np.int32], ...]  # per lane, 0 = absent (and padding)
    norm: tuple[NDArray[np.float64], ...]  # per lane, min-max score, 0 = absent, -1 = padding
    doc: NDArray[np.int64]  # doc code, -1 = padding
    doc_ids: DocIds
    by_best_rank: bool = False
    inputs: tuple[RankedLane, ...] = ()  # the (selected) lanes themselves, for the other fusion methods
    _scratch: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _terms: dict[Any, Any] = field(default_factory=dict, repr=False)  # each lane's terms per method (fuse)

    @classmethod
    def build(cls, lanes: Sequence[RankedLane], n_queries: int | None = None, doc_ids: DocIds = None,
              queries: ArrayLike | None = None, by_best_rank: bool = True) -> "FusionTable":
        """Prepare ``lanes`` (optionally only the ``queries``: bool mask or codes)."""
        if not lanes:
            raise ValueError("fusion needs at least one lane")
        n_queries = _n_queries(lanes) if n_queries is None else int(n_queries)
        if queries is not None:
            lanes = _select(lanes, _query_mask(queries, n_queries))
        u = _union(lanes, n_queries)
        names = tuple(lane.name for lane in lanes)
        rank = [u.column(i, lane.rank, 0, np.int32) for i, lane in enumerate(lanes)]
        norm = [u.column(i, minmax(lane), 0.0, np.float64) for i, lane in enumerate(lanes)]
        counts = np.diff(u.offsets)
        rows = np.flatnonzero(counts)
        width = -(-int(counts.max()) // _BLOCK) * _BLOCK if rows.size else 0  # whole blocks
        if rows.size * width > 2 * u.size + 64 * rows.size + 4096:
            return cls(names, n_queries, u, None, tuple(rank), tuple(norm), u.doc, doc_ids, inputs=tuple(lanes))
        row_of = np.zeros(n_queries, dtype=np.int64)
        row_of[rows] = np.arange(rows.size)
        r = row_of[u.qid]
        c = np.arange(u.size, dtype=np.int64) - u.offsets[u.qid]
        if by_best_rank and len(lanes) > 1:
            best = np.full((rows.size, width), np.iinfo(np.int32).max, dtype=np.int32)
            best_flat = np.full(u.size, np.iinfo(np.int32).max, dtype=np.int32)
            for col in rank:
                np.minimum(best_flat, np.where(col > 0, col, best_flat), out=best_flat)
            best[r, c] = best_flat
            # every doc whose best rank is <= m now sits in the first L·m columns
            # (each lane has at most m docs with rank <= m)
            order = np.argsort(best, axis=1)
            dest = np.empty_like(order)  # column of each entry after the sort
            np.put_along_axis(dest, order, np.broadcast_to(np.arange(width), order.shape), axis=1)
            c = dest[r, c]

        def mat(flat: np.ndarray, fill: float | np.generic) -> np.ndarray:
            m = np.full((rows.size, width), fill, dtype=flat.dtype)
            m[r, c] = flat
            return m

        return cls(names, n_queries, u, rows, tuple(mat(x, np.int32(0)) for x in rank),
                   tuple(mat(x, -1.0) for x in norm), mat(u.doc, np.int64(-1)), doc_ids,
                   by_best_rank and len(lanes) > 1, tuple(lanes))

    # -- fusions

    def rrf(self, k: float = 60, depth: int | None = None, name: str = "rrf") -> RankedLane:
        """Same as :func:`rrf` on the prepared lanes."""
        if not (k >= 0 and math.isfinite(k)):
            raise InputError(f"--rrf-k must be a finite number >= 0, got {k!r}", "--rrf-k")
        _check_depth(depth)
        ncols = None
        bound = _rrf_bound(len(self.lanes), k, depth)
        if self.rows is not None and bound is not None and (self.by_best_rank or len(self.lanes) == 1):
            ncols = min(self.doc.shape[1], -(-len(self.lanes) * bound // _BLOCK) * _BLOCK)
        def cut(x: np.ndarray) -> np.ndarray:
            return x if ncols is None else x[:, :ncols]

        deepest = max((int(col.max()) for col in self.rank if col.size), default=0)
        term = np.zeros(deepest + 1)  # term[r] = 1/(k + r), term[0] = 0 (absent)
        term[1:] = 1.0 / (k + np.arange(1, deepest + 1, dtype=np.float64))
        terms = [term[cut(col)] for col in self.rank]
        if len(terms) > 2:  # largest term first; with two terms the order is immaterial
            terms = list(np.moveaxis(-np.sort(-np.stack(terms, axis=-1), axis=-1), -1, 0))
        s = terms[0].copy()
        for t in terms[1:]:
            s += t
        if self.rows is not None:
            s[cut(self.doc) < 0] = -1.0
        return self._top(s, depth, name, ncols)

    def convex(self, weights: Sequence[float], depth: int | None = None, name: str = "convex") -> RankedLane:
        """Same as :func:`convex` on the prepared lanes."""
        w = _check_weights(weights, len(self.lanes))
        _check_depth(depth)
        # padding is -1 in every lane, so its fused score is -Σw < 0 <= any real score
        if self.rows is None:
            return self._top(_weighted(self.norm, w), depth, name, None)
        s = self._buffer("s", self.doc.shape)
        tmp = self._buffer("tmp", self.doc.shape)
        first = True
        for col, x in zip(self.norm, w):  # the arithmetic of _weighted, without allocations
            if x == 0.0:
                continue
            if first:
                np.multiply(col, x, out=s)
                first = False
            else:
                np.multiply(col, x, out=tmp)
                np.add(s, tmp, out=s)
        return self._top(s, depth, name, None)

    def fuse(self, spec: FuseSpec | str, weights: Sequence[float] | None = None, k: float = 60,
             depth: int | None = None, name: str | None = None) -> RankedLane:
        """Any method of :mod:`.combine` (``METHOD[:NORM]``) on the prepared lanes: the same
        lane as :func:`.combine.fuse` (``rrf`` is :meth:`rrf`, ``wsum:minmax`` with weights
        the same floats as :meth:`convex`)."""
        spec = parse_fuse(spec) if isinstance(spec, str) else spec
        _check_depth(depth)
        if spec.method == "rrf":
            return self.rrf(k, depth, name or spec.name)
        return _fused_lane(self.union, self.inputs, spec, weights, k, self.n_queries, depth, name or spec.name,
                           self.doc_ids, self._terms)

    def _buffer(self, key: str, shape: tuple[int, ...]) -> np.ndarray:
        buf = self._scratch.get(key)
        if buf is None or buf.shape != shape:
            buf = self._scratch[key] = np.empty(shape)
        return buf

    def _top(self, s: np.ndarray, depth: int | None, name: str, ncols: int | None) -> RankedLane:
        if self.rows is None:
            perm = _order_union(self.union, s, self.n_queries, self.doc_ids)
            u = self.union
            return _lane(name, u.qid[perm], u.doc[perm], s[perm], self.n_queries, depth)
        doc = self.doc if ncols is None else self.doc[:, :ncols]
        n_rows, width = doc.shape
        if n_rows == 0 or width == 0:
            return _lane(name, np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0), self.n_queries, None)
        if depth is not None and depth * 8 <= width:
            # Pre-selection: split each row into blocks; the depth-th largest block
            # maximum is a lower bound of the depth-th largest score (depth blocks
            # reach it), so every hit of the top `depth` (ties included) scores at
            # least that much. Blocks are sized so that there are >= 4·depth of them.
            size = _BLOCK
            while size > 1 and width // size < 4 * depth:
                size //= 2
            blocks = s.reshape(n_rows, width // size, size).max(axis=2)
            nb = blocks.shape[1]
            floor = np.partition(blocks, nb - depth, axis=1)[:, nb - depth]
            floor = np.maximum(floor, 0.0)  # padding (< 0) never qualifies
            ri, ci = np.nonzero(s >= floor[:, None])
            sc, dc = s[ri, ci], doc[ri, ci]
            order = np.lexsort((-tie_key(self.doc_ids, dc), -sc, ri))
            return _lane(name, self.rows[ri[order]], dc[order], sc[order], self.n_queries, depth)
        o = np.argsort(-s, axis=1)
        s_sorted = np.take_along_axis(s, o, axis=1)
        valid = s_sorted >= 0
        sc = s_sorted[valid]
        dc = np.take_along_axis(doc, o, axis=1)[valid]
        q = np.broadcast_to(self.rows[:, None], s.shape)[valid].astype(np.int32)
        fix = _fix_ties(q, sc, dc, self.doc_ids)
        if fix is not None:
            q, sc, dc = q[fix], sc[fix], dc[fix]
        return _lane(name, q, dc, sc, self.n_queries, depth)

    @property
    def fused_queries(self) -> int:
        """Queries with at least one doc in some lane."""
        return int(np.count_nonzero(np.diff(self.union.offsets)))


def _objective_depth(depth: int | None, objective_depth: int | None) -> int | None:
    if depth is None:
        return objective_depth
    return depth if objective_depth is None else min(depth, objective_depth)


def calibrate_convex(
    lanes: Sequence[RankedLane] | FusionTable,
    objective: Callable[[RankedLane], float],
    n_queries: int | None = None,
    step: float = 0.1,
    depth: int | None = None,
    objective_depth: int | None = None,
    queries: ArrayLike | None = None,
    doc_ids: DocIds = None,
    objective_name: str = "objective",
) -> ConvexFit:
    """Fit convex fusion weights on the grid (see the module conventions).

    ``objective(lane)`` returns the mean objective of a fused lane (the caller's
    metric over the calibration queries). Each grid point only materialises the top
    ``objective_depth`` hits per query (10 for ndcg@10; None = ``depth``, the whole
    list) -- exactly the first rows of :func:`convex` with the same weights.
    ``queries`` (bool mask or codes) restricts the fit to those queries; a prepared
    :class:`FusionTable` may be passed instead of lanes.
    """
    table = lanes if isinstance(lanes, FusionTable) else \
        FusionTable.build(lanes, n_queries, doc_ids, queries, by_best_rank=False)
    _check_depth(depth)
    _check_depth(objective_depth)
    grid = grid_weights(len(table.lanes), step)
    k = _objective_depth(depth, objective_depth)
    return fit_of_values(table.lanes, step, grid, (objective(table.convex(w, k, "convex")) for _, w in grid),
                         table.fused_queries, objective_name)


def grid_lanes(table: FusionTable, step: float, depth: int | None = None,
               objective_depth: int | None = None) -> Iterator[RankedLane]:
    """The fused lane of every grid point, in visiting order, as :func:`calibrate_convex`
    scores them (for a caller that keeps per-query values rather than means)."""
    _check_depth(depth)
    _check_depth(objective_depth)
    k = _objective_depth(depth, objective_depth)
    for _, w in grid_weights(len(table.lanes), step):
        yield table.convex(w, k, "convex")


def fit_of_values(lanes: Sequence[str], step: float, grid: list[tuple[tuple[int, ...], tuple[float, ...]]],
                  values: Iterable[float], fused_queries: int, objective_name: str = "objective") -> ConvexFit:
    """The fit from the objective of every grid point (``values``, in visiting order):
    the first maximum wins (exact comparison)."""
    each = iter(values)
    best_i, best_v, got = _first_best(grid, lambda _: next(each))
    comp, w = grid[best_i]
    return ConvexFit(tuple(lanes), float(step), w, comp, best_v, objective_name, int(fused_queries),
                     tuple((c, v) for (c, _), v in zip(grid, got)))


def _first_best(points: Iterable[object], score: Callable[[Any], float]) -> tuple[int, float, list[float]]:
    """Index and value of the first maximal point (exact comparison), and every value;
    ``score`` is given a tuple point's second item, else the point."""
    best_i, best_v = -1, -math.inf
    values: list[float] = []
    for i, p in enumerate(points):
        v = float(score(p[1] if isinstance(p, tuple) else p))
        if math.isnan(v):
            raise ValueError(f"objective is NaN at {p}")
        values.append(v)
        if v > best_v:  # strict: the first maximum wins
            best_i, best_v = i, v
    return best_i, best_v, values


# ------------------------------------------------------------ caps and document-first


def variant_name(lane_name: str, cap_n: int | None = None, doc_first: bool = False) -> str:
    """``{lane}+cap{N}``, ``{lane}+docfirst`` or ``{lane}+docfirst+cap{N}``."""
    name = lane_name + ("+docfirst" if doc_first else "")
    return name + (f"+cap{cap_n}" if cap_n is not None else "")


def _occurrence(lane: RankedLane, groups: np.ndarray) -> np.ndarray:
    """0-based index of each row among the earlier rows of the same (query, group)."""
    n = lane.n_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    nq = lane.offsets.shape[0] - 1
    pos = np.arange(n, dtype=np.int64) - lane.offsets[lane.qid]
    pbits = _bits(int(pos.max()))
    g = groups.astype(np.int64)
    if _bits(int(g.max(initial=0))) + pbits > 62:
        order = np.lexsort((pos, g, lane.qid))
        key_sorted_g, key_sorted_pos = g[order], pos[order]
        q_sorted = lane.qid[order]
    else:
        packed = _sort_within((g << pbits) | pos, lane.qid, nq)
        key_sorted_g, key_sorted_pos = packed >> pbits, packed & ((np.int64(1) << pbits) - 1)
        q_sorted = lane.qid
    start = np.r_[True, (key_sorted_g[1:] != key_sorted_g[:-1]) | (q_sorted[1:] != q_sorted[:-1])]
    idx = np.arange(n, dtype=np.int64)
    occ_sorted = idx - np.maximum.accumulate(np.where(start, idx, 0))
    occ = np.empty(n, dtype=np.int64)
    occ[lane.offsets[q_sorted] + key_sorted_pos] = occ_sorted
    return occ


def _check_groups(lane: RankedLane, group_of: np.ndarray) -> np.ndarray:
    group_of = np.asarray(group_of)
    if lane.n_rows and int(lane.doc.max()) >= group_of.shape[0]:
        raise ValueError("group_of does not cover the lane's doc codes")
    return group_of[lane.doc] if lane.n_rows else np.zeros(0, dtype=np.int64)


def cap(lane: RankedLane, group_of: np.ndarray, n: int, name: str | None = None) -> RankedLane:
    """Keep at most ``n`` hits per (query, group), in order; ranks renumbered, scores kept."""
    if n < 1:
        raise InputError(f"--cap must be >= 1, got {n}", "--cap")
    g = _check_groups(lane, group_of)
    keep = _occurrence(lane, g) < n
    nq = lane.offsets.shape[0] - 1
    return _lane(name or variant_name(lane.name, n), lane.qid[keep], lane.doc[keep], lane.score[keep], nq, None)


def document_first(lane: RankedLane, group_of: np.ndarray, cap: int | None = None, name: str | None = None) -> RankedLane:
    """The top hit's whole group first (original order), then the other hits in order,
    at most ``cap`` per other group. Scores are kept; the row order is the ranking."""
    if cap is not None and cap < 1:
        raise InputError(f"--cap must be >= 1, got {cap}", "--cap")
    nq = lane.offsets.shape[0] - 1
    out_name = name or variant_name(lane.name, cap, True)
    if lane.n_rows == 0:
        return _lane(out_name, lane.qid, lane.doc, lane.score, nq, None)
    g = _check_groups(lane, group_of)
    first_group = np.full(nq, -1, dtype=np.int64)
    present = np.diff(lane.offsets) > 0
    first_group[present] = g[lane.offsets[:-1][present]]
    top = g == first_group[lane.qid]
    # the cap counts each other group's rows; the top group is never capped
    keep = np.ones(lane.n_rows, dtype=bool) if cap is None else top | (_occurrence(lane, g) < cap)
    qid, doc, score, top = lane.qid[keep], lane.doc[keep], lane.score[keep], top[keep]
    # stable partition within each query: top-group rows, then the rest
    offs = offsets_for(qid, nq)
    n_top = np.bincount(qid[top], minlength=nq)
    idx_top = running_count(top) - 1
    idx_rest = running_count(~top) - 1
    before_top = np.cumsum(np.r_[0, n_top])[:-1]  # top rows of earlier queries
    before_rest = offs[:-1] - before_top
    new = np.where(top, offs[qid] + idx_top - before_top[qid], offs[qid] + n_top[qid] + idx_rest - before_rest[qid])
    order = np.empty_like(new)
    order[new] = np.arange(new.size)
    return _lane(out_name, qid[order], doc[order], score[order], nq, None)


# --------------------------------------------------------------------------- dilution


@dataclass(frozen=True)
class Dilution:
    """Queries where an input lane's top hit is relevant and the fused lane's is not."""

    fused: str
    relevant: int
    lanes: tuple[str, ...]
    queries: tuple[np.ndarray, ...]  # per input lane: query codes (ascending)

    def counts(self) -> dict[str, int]:
        return {name: int(q.size) for name, q in zip(self.lanes, self.queries)}

    def as_dict(self, qids: Sequence[str] | np.ndarray | None = None) -> dict[str, Any]:
        """Strict-JSON dict; ``qids`` (code -> qid string) lists the queries by id."""
        lanes: dict[str, dict[str, Any]] = {}
        out = {"fused": self.fused, "relevant": self.relevant,
               "definition": f"input lane's rank-1 doc has grade >= {self.relevant} and {self.fused}'s rank-1 doc does not",
               "lanes": lanes}
        for name, q in zip(self.lanes, self.queries):
            entry: dict[str, Any] = {"count": int(q.size)}
            if qids is not None:
                entry["queries"] = [str(qids[int(c)]) for c in q]
            lanes[name] = entry
        return out


def _top_relevant(lane: RankedLane, judgments: Judgments, relevant: int, n_queries: int) -> np.ndarray:
    first = lane.rank == 1
    out = np.zeros(n_queries, dtype=bool)
    q = lane.qid[first]
    out[q] = judgments.grade_of(q, lane.doc[first]) >= relevant
    return out


def dilution(
    inputs: Sequence[RankedLane],
    fused: RankedLane,
    judgments: Judgments,
    relevant: int = 1,
    queries: np.ndarray | None = None,
) -> Dilution:
    """What fusion dilutes: per input lane, the queries (optionally within ``queries``,
    a bool mask or codes) whose rank-1 hit is relevant there but not in ``fused``
    (:func:`dilution_of` over each lane's :func:`_top_relevant`)."""
    nq = fused.offsets.shape[0] - 1
    return dilution_of(fused.name, relevant, [lane.name for lane in inputs],
                       [_top_relevant(lane, judgments, relevant, nq) for lane in inputs],
                       _top_relevant(fused, judgments, relevant, nq), queries)


def dilution_of(fused: str, relevant: int, lanes: Sequence[str], top_relevant: Sequence[np.ndarray],
                fused_top_relevant: np.ndarray, queries: np.ndarray | None = None) -> Dilution:
    """:func:`dilution` from per-query flags: ``top_relevant`` per input lane and
    ``fused_top_relevant`` (bool per query code: the rank-1 hit has grade >= ``relevant``)."""
    nq = int(np.asarray(fused_top_relevant).shape[0])
    lost_in_fused = ~np.asarray(fused_top_relevant, dtype=bool)
    allowed = np.ones(nq, dtype=bool)
    if queries is not None:
        q = np.asarray(queries)
        allowed = q if q.dtype == bool else np.isin(np.arange(nq), q)
    out = tuple(np.flatnonzero(np.asarray(t, dtype=bool) & lost_in_fused & allowed).astype(np.int32) for t in top_relevant)
    return Dilution(fused, int(relevant), tuple(lanes), out)
