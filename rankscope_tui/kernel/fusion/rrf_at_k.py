"""RRF at k: the fused lane at one k, its means over the positives and what it dilutes.

One entry point for the report's fusion block (the default or calibrated k) and the
dashboard's k slider (any k), so both print the same numbers from the same code:

- the lane: ``Σ_lanes 1/(k + rank)`` over the workspace's input lanes, ordered and cut
  like any lane (``fusion.rrf``; a prepared ``fusion.FusionTable`` gives the same lane,
  ties included, for many k);
- the means: doc level, over the positives, each requested metric, exactly as the
  workspace scores a loaded lane (``Workspace.metrics_of`` / ``per_query``);
- the dilution: per input lane, the positives whose rank-1 hit is relevant there and
  not in the fused lane (``fusion.dilution``).

At the workspace's own k the fused lane is the workspace's ``rrf`` lane and its numbers
are the workspace's (one computation). :class:`RRFExplorer` serves other k: it prepares
the input lanes once (a ``fusion.FusionTable``; over large inputs an :class:`RRFTop` that
fuses only the docs able to reach the first ranks the metrics read, or, when a metric reads
the whole fused lane, an :class:`RRFSweep` that re-sorts only the docs several lanes hold)
and keeps only the last few fused lanes, never adding any to the workspace.

References
----------
- Cormack, G. V., Clarke, C. L. A. & Büttcher, S. (2009). Reciprocal rank fusion
  outperforms Condorcet and individual rank learning methods. *SIGIR 2009*, 758-759.
  (RRF)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..ranking.judgments import NO_JUDGMENT
from ..ranking.ranks import RankedLane, distinct_inverse, offsets_for, ranks_within, tie_key
from . import methods as F

if TYPE_CHECKING:
    from ..measures import MetricKey
    from ..workspace.loaded import Workspace

K = TypeVar("K", int, float)  # a curve's k: an int on the fixed grid, a float from the slider

#: Results an explorer keeps (least recently used dropped).
EXPLORER_LIMIT = 4
#: Ranks per query an explorer's results keep of their fused lane (the RRF view lists the
#: first 10): a whole fused lane is as large as the inputs (2 × 7M lines: ~0.2 GB each),
#: its head is not, and a sweep (:class:`RRFSweep`) ranks only the head's candidates.
#: The means and the dilution are always computed on the whole lane.
EXPLORER_HEAD = 10
#: Input rows up to which an explorer prepares a ``fusion.FusionTable`` without a depth cut
#: (fast steps, small matrices); beyond, each k is fused from the lanes (``fusion.rrf``):
#: the same lane, without the table's matrices held beside the workspace.
EXPLORER_PREPARE_ROWS = 2_000_000


@dataclass(frozen=True)
class FusedAtK:
    """The fused lane at ``k`` and the numbers the report and the RRF view show for it."""

    k: float
    lane: RankedLane
    means: dict[str, float]  # metric key -> mean over the positives (doc level)
    dilution: F.Dilution
    #: metric key -> value per query code (doc level), every metric the means were taken from
    per_query: Mapping[str, np.ndarray] | None = None

    @property
    def diluted(self) -> dict[str, np.ndarray]:
        """Input lane -> query codes (ascending) whose correct top hit fusion dilutes."""
        return dict(zip(self.dilution.lanes, self.dilution.queries))


def rrf_lane(ws: Workspace, k: float, name: str = "rrf", table: F.FusionTable | None = None) -> RankedLane:
    """The RRF lane of ``ws``'s input lanes at ``k`` (with the workspace's depth and tie key)."""
    if table is not None:
        return table.rrf(k, ws.settings.depth, name=name)
    inputs = [ws.lanes[n] for n in ws.input_lanes]
    return F.rrf(inputs, k=k, n_queries=ws.n_queries, depth=ws.settings.depth, doc_ids=ws.doc_order, name=name)


def rrf_at_k(ws: Workspace, k: float | None = None, metrics: tuple[MetricKey, ...] | None = None, *,
             table: F.FusionTable | None = None) -> FusedAtK:
    """RRF at ``k`` (None: the workspace's k) over ``ws``'s input lanes: lane, means of
    ``metrics`` (workspace's by default; ``metrics.MetricKey``) and dilution."""
    s = ws.settings
    k = s.rrf_k if k is None else k
    metrics = tuple(metrics or s.metrics)
    if _is_own(ws, k):  # the report's lane: its per-query values are the workspace's, cached
        lane = ws.lanes["rrf"]
        per_query = ws.per_query("rrf", "doc", tuple(dict.fromkeys(tuple(s.metrics) + metrics)))
    else:
        lane = rrf_lane(ws, k, name=f"rrf@{k:g}", table=table)
        per_query = ws.metrics_of(lane, "doc", tuple(dict.fromkeys(tuple(s.metrics) + metrics)))
    inputs = [ws.lanes[n] for n in ws.input_lanes]
    dil = F.dilution(inputs, lane, ws.judgments, s.relevant, queries=ws.positives)
    return FusedAtK(k, lane, ws.means_of(per_query, [m.key for m in metrics]), dil, per_query)


def best_k(curve: Mapping[K, Mapping[str, Any]], metric: str) -> tuple[K, float] | None:
    """The k with the highest mean ``metric`` over the points of a metric-against-k curve
    (``curve``: k -> means, as :func:`rrf_at_k` returns them), and that mean; ties go to
    the smallest k; points whose value is not finite are skipped; None when none is left.
    The k is picked on the curve's queries: an in-sample choice."""
    best: tuple[K, float] | None = None
    for k in sorted(curve):
        v = curve[k].get(metric)
        if v is None or not np.isfinite(v):
            continue
        if best is None or v > best[1]:
            best = (k, float(v))
    return best


def _is_own(ws: Workspace, k: float) -> bool:
    """Is the RRF lane at ``k`` the workspace's own ``rrf`` lane (built at its k)?"""
    return bool(k == ws.settings.rrf_k and ws.lane_origin.get("rrf") == "fused")


class RRFExplorer:
    """RRF at any k over one workspace, for a slider: the input lanes are prepared once
    (``fusion.FusionTable``) and the last ``limit`` results are kept (least recently used
    dropped), so memory stays bounded however many k are visited (large inputs without a
    depth cut are re-fused from each lane's ranks prepared once, :class:`RRFTop` when every
    metric reads at most the first d ranks, else :class:`RRFSweep`: see :attr:`sweeps`). A result's ``lane`` is
    the head of the fused lane: its first ``head`` ranks per query (None: the whole lane);
    its means and dilution are those of the whole lane (:func:`rrf_at_k`'s numbers). One
    fusion runs at a time (the slider's and the curve's workers share the explorer), so
    a fusion's temporaries are held once. Thread-safe; the workspace is only read (its
    lanes, its cached input-lane numbers)."""

    def __init__(self, ws: Workspace, limit: int = EXPLORER_LIMIT, head: int | None = EXPLORER_HEAD) -> None:
        if limit < 1:
            raise ValueError("an explorer keeps at least one fused lane")
        if head is not None and head < 1:
            raise ValueError("an explorer keeps at least one rank per query")
        self.ws = ws
        self.limit = int(limit)
        self.head = None if head is None else int(head)
        self._table: F.FusionTable | None = None
        self._sweep: RRFSweep | None = None
        self._top: RRFTop | None = None
        self.computed: list[float] = []  # every k fused (not served from the kept results), in order
        self._kept: OrderedDict[float, FusedAtK] = OrderedDict()
        self._lock = threading.Lock()  # the kept results
        self._fusing = threading.Lock()  # one fusion (and the table's preparation) at a time

    @property
    def kept(self) -> tuple[float, ...]:
        """The k of the results held now (oldest first)."""
        with self._lock:
            return tuple(self._kept)

    @property
    def prepares(self) -> bool:
        """Does the explorer fuse from a prepared table? With a depth cut (RRF then reads
        only the table's first columns) or small inputs; otherwise the table's matrices
        would cost more memory than the whole evaluation, so each k is fused from the lanes."""
        ws = self.ws
        rows = sum(ws.lanes[n].n_rows for n in ws.input_lanes)
        return ws.settings.depth is not None or rows <= EXPLORER_PREPARE_ROWS

    @property
    def sweeps(self) -> bool:
        """Does the explorer re-fuse from a :class:`RRFSweep` (large inputs without a depth
        cut, where a prepared table would hold matrices as large as the workspace)?"""
        return not self.prepares

    def _deepest(self) -> int:
        ws = self.ws
        return max((int(ws.lanes[n].rank.max()) for n in ws.input_lanes if ws.lanes[n].n_rows), default=0)

    def table(self) -> F.FusionTable:
        with self._fusing:
            return self._prepared()

    def _prepared(self) -> F.FusionTable:
        if self._table is None:
            ws = self.ws
            # the best-rank column order only pays with a depth cut (RRF then reads the first
            # columns); without one it is a second copy of the matrices while building
            self._table = F.FusionTable.build([ws.lanes[n] for n in ws.input_lanes], ws.n_queries,
                                              doc_ids=ws.doc_order, by_best_rank=ws.settings.depth is not None)
        return self._table

    def _hit(self, k: float) -> FusedAtK | None:
        with self._lock:
            hit = self._kept.get(k)
            if hit is not None:
                self._kept.move_to_end(k)
            return hit

    def at(self, k: float) -> FusedAtK:
        """:func:`rrf_at_k` of the workspace at ``k`` (the workspace's metrics), its lane
        cut to the explorer's ``head``."""
        hit = self._hit(k)
        if hit is not None:
            return hit
        with self._fusing:
            hit = self._hit(k)  # fused by another thread while this one waited
            if hit is not None:
                return hit
            own = _is_own(self.ws, k)
            metrics, head = tuple(self.ws.settings.metrics), self.head
            fast = not own and self.sweeps and 0 <= k and k + self._deepest() <= SWEEP_K_MAX
            if fast and head is not None and top_depth(metrics, self.ws.settings.relevant, head) is not None:
                # every measure reads the fused lane's first d ranks (or its first relevant rank)
                if self._top is None:
                    self._top = RRFTop(self.ws, head)
                r = self._top.at(k, metrics)
            elif fast and head is not None:
                if self._sweep is None:
                    self._sweep = RRFSweep(self.ws, head)
                r = self._sweep.at(k, metrics)
            else:
                table = None if own or not self.prepares else self._prepared()
                r = rrf_at_k(self.ws, k, table=table)
            self.computed.append(k)
            if self.head is not None and r.lane.n_rows and int(r.lane.rank.max()) > self.head:
                r = replace(r, lane=F._head(r.lane, self.head))
        with self._lock:
            self._kept[k] = r
            self._kept.move_to_end(k)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return r


# --------------------------------------------------------------------------- the slider's sweep


#: Largest k (plus the deepest rank) for which :class:`RRFSweep` re-fuses: below it
#: ``1/(k + r)`` falls strictly with r in float64, so a lane's docs found by no other lane
#: stay in that lane's order at every k (beyond it the explorer fuses from the lanes).
SWEEP_K_MAX = 1e9


def _count_before(start: NDArray[np.int64], end: NDArray[np.int64], score_at: Callable[[NDArray[np.int64]], np.ndarray],
                  key_at: Callable[[NDArray[np.int64]], np.ndarray], score: np.ndarray, key: np.ndarray) -> NDArray[np.int64]:
    """Per probe i: how many rows of its stream segment ``[start[i], end[i])`` come before
    ``(score[i], key[i])`` in fused order (score descending, tie key descending). Each
    segment is sorted in that order, so "comes before" holds on a prefix: a vectorised
    binary search over every probe at once (about log2 of the longest segment rounds)."""
    lo, hi = start.copy(), end.copy()
    live = np.flatnonzero(lo < hi)
    while live.size:
        mid = (lo[live] + hi[live]) // 2
        sm, km = score_at(mid), key_at(mid)
        sx, kx = score[live], key[live]
        before = (sm > sx) | ((sm == sx) & (km > kx))
        lo[live[before]] = mid[before] + 1
        hi[live[~before]] = mid[~before]
        live = live[lo[live] < hi[live]]
    out: NDArray[np.int64] = lo - start
    return out


class RRFSweep:
    """RRF of a workspace's input lanes re-fused at any k from what does not depend on k.

    A doc's rank in each lane does not change with k; only the fused order does. Prepared
    once: the union of the lanes' docs per query, each doc's rank per lane, its tie key and
    its judgment. The union falls into streams: per lane, the docs that lane alone holds,
    already in fused order at every k (``1/(k + r)`` falls with r), and the docs held by two
    or more lanes, the only ones whose order depends on k. Per k, only that last stream is
    scored and sorted (``Σ 1/(k + r)``, terms summed largest first as :func:`methods.rrf`
    does, so every score is the same float; equal scores by doc id descending as bytes). A
    judged doc's fused rank is 1 + the number of docs before it in every stream (a search
    per stream); the hits the measures see (every rank of the fused lane, judged or not, cut
    to the workspace's depth) are rebuilt from those ranks: the same ``Hits`` as
    :meth:`Workspace.metrics_of` makes from the whole fused lane. The lane's head is the
    first ``head`` docs of every stream put in fused order. The numbers are those of
    :func:`rrf_at_k` (tests/test_rrf_sweep.py compares them)."""

    def __init__(self, ws: Workspace, head: int) -> None:
        from .. import measures as M

        inputs = [ws.lanes[n] for n in ws.input_lanes]
        nq = ws.n_queries
        self.ws, self.head, self.n_queries = ws, int(head), nq
        u = F._union(inputs, nq)
        self.doc = u.doc
        offsets = u.offsets
        ranks = [u.column(i, lane.rank, 0, np.int32) for i, lane in enumerate(inputs)]
        self.deepest = max((int(lane.rank.max()) for lane in inputs if lane.n_rows), default=0)
        self.key = tie_key(ws.doc_order, u.doc)
        held = np.zeros(u.size, dtype=np.int8)
        for r in ranks:
            held += r > 0
        multi = held > 1
        del held
        # streams: one per lane (the docs only it holds, by its rank), then the shared docs
        self.streams: list[np.ndarray] = []  # union rows in stream order
        self.stream_rank: list[NDArray[np.int32]] = []  # the lane's rank of each (lane streams)
        self.stream_start: list[NDArray[np.int64]] = []  # per query: the stream's first row
        self.stream_code: list[NDArray[np.int64]] = []  # query · (deepest + 2) + rank (lane streams), ascending
        self._scratch: dict[str, np.ndarray] = {}
        for i, r in enumerate(ranks):
            rows = np.flatnonzero((r > 0) & ~multi)  # union order within a query: the lane's rank order
            self._add_stream(rows, u.qid, nq)
            self.stream_rank.append(r[rows])
            self.stream_code.append(u.qid[rows].astype(np.int64) * (self.deepest + 2) + r[rows])
        shared = np.flatnonzero(multi)  # by query (union order)
        self._shared_qid = u.qid[shared]
        self._add_stream(shared, u.qid, nq)
        self.shared_ranks = [r[shared] for r in ranks]
        counts = np.diff(self.stream_start[-1])
        self._shared_rows = np.flatnonzero(counts)
        width = int(counts.max()) if counts.size else 0
        # each shared doc's cell in the per-query score matrix (int32: held while the view is open)
        self._shared_col = (np.arange(shared.size, dtype=np.int64) - self.stream_start[-1][u.qid[shared]]).astype(np.int32)
        row_of = np.zeros(nq, dtype=np.int32)
        row_of[self._shared_rows] = np.arange(self._shared_rows.size)
        self._shared_row = row_of[u.qid[shared]]
        self._shared_width = width
        # the judged docs (a grade, or a negative judgment): the measures read their ranks
        hits, self.ideal = M.doc_level(u.qid, u.doc, np.zeros(u.size, np.int32), ws.judgments.qid, ws.judgments.doc,
                                       ws.judgments.grade, ws.n_docs)
        self.judged = np.flatnonzero(hits.grade != NO_JUDGMENT)
        self.judged_grade = hits.grade[self.judged]
        self.judged_qid = u.qid[self.judged].astype(np.int64)
        stream_of = np.full(u.size, len(self.streams) - 1, dtype=np.int8)
        for i, rows in enumerate(self.streams[:-1]):
            stream_of[rows] = i
        self.judged_stream = stream_of[self.judged]
        where = np.empty(u.size, dtype=np.int64)  # position of each union row in its stream
        for rows in self.streams:
            where[rows] = np.arange(rows.size)
        self.judged_at = where[self.judged]
        del stream_of, where, hits
        # the fused lane's rows per query (cut to depth) do not depend on k: only which
        # doc sits at each rank does
        depth = ws.settings.depth
        n_rows = np.diff(offsets)
        self.n_rows = n_rows if depth is None else np.minimum(n_rows, depth)
        self.hit_offsets = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum(self.n_rows, out=self.hit_offsets[1:])
        self.hit_qid = np.repeat(np.arange(nq, dtype=np.int32), self.n_rows)
        self.hit_rank = (np.arange(self.hit_qid.size, dtype=np.int64) - self.hit_offsets[self.hit_qid] + 1).astype(np.int32)
        relevant = ws.settings.relevant
        self.top_relevant = [F._top_relevant(lane, ws.judgments, relevant, nq) for lane in inputs]

    def _add_stream(self, rows: NDArray[np.int64], qid: np.ndarray, nq: int) -> None:
        start = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum(np.bincount(qid[rows], minlength=nq), out=start[1:])
        # union rows fit int32 below 2**31 rows: half the memory the view holds for them
        self.streams.append(rows.astype(np.int32) if rows.size and self.doc.size < 2**31 else rows)
        self.stream_start.append(start)

    def _shared_scores(self, term: NDArray[np.float64]) -> NDArray[np.float64]:
        return rrf_sum([term[r] for r in self.shared_ranks])

    def _ranks(self, probe_stream: np.ndarray, probe_at: np.ndarray, probe_qid: np.ndarray, probe_score: np.ndarray,
               probe_key: np.ndarray, term: np.ndarray, shared_key: np.ndarray, shared_score: np.ndarray) -> np.ndarray:
        """Fused rank (1-based) of each probe (``probe_at``: its row in its stream, the
        shared stream in this k's order): its place in its own stream's segment plus the
        rows of every other stream's segment before it."""
        rank = probe_at + 1
        last = len(self.streams) - 1
        for i, start in enumerate(self.stream_start):
            own = probe_stream == i
            rank[own] -= start[probe_qid[own]]
            other = np.flatnonzero(~own)
            if not other.size:
                continue
            q = probe_qid[other]
            if i < last:
                rank[other] += self._lane_count(i, q, probe_score[other], probe_key[other], term)
            else:
                rank[other] += _count_before(start[q], start[q + 1], lambda m: shared_score[m], lambda m: shared_key[m],
                                             probe_score[other], probe_key[other])
        return rank

    def _lane_count(self, i: int, q: np.ndarray, score: np.ndarray, key: np.ndarray, term: np.ndarray) -> np.ndarray:
        """Rows of lane stream ``i`` in query ``q`` before (``score``, ``key``): its scores
        ``1/(k + r)`` fall with r, so they are the rows with r <= R (R = the ranks whose term
        exceeds the score: one search in the term table), plus the row at rank R + 1 when
        its term equals the score and its tie key is larger. Both are found by a search in
        the stream's sorted (query, rank) codes."""
        rows, code, span = self.streams[i], self.stream_code[i], self.deepest + 2
        above = np.searchsorted(-term[1:], -score, side="left")  # term[1..R] > score
        base = q * span
        count = np.searchsorted(code, base + above, side="right") - self.stream_start[i][q]
        eq = above + 1
        tied = np.flatnonzero((eq <= self.deepest) & (term[np.minimum(eq, self.deepest)] == score))
        if tied.size:
            at = np.searchsorted(code, base[tied] + eq[tied], side="left")
            inside = at < code.size
            at = np.minimum(at, code.size - 1)
            there = inside & (code[at] == base[tied] + eq[tied])
            count[tied] += there & (self.key[rows[at]] > key[tied])
        out: np.ndarray = count
        return out

    def _scratch_of(self, name: str, shape: tuple[int, ...], dtype: type[np.generic], fill: float | int) -> np.ndarray:
        """A buffer kept between k (one fusion at a time holds it): fresh arrays of this size
        cost page faults at every step."""
        buf = self._scratch.get(name)
        if buf is None or buf.shape != shape:
            buf = self._scratch[name] = np.empty(shape, dtype=dtype)
        buf.fill(fill)
        return buf

    def at(self, k: float, metrics: tuple[MetricKey, ...]) -> FusedAtK:
        """:func:`rrf_at_k` at ``k`` (``metrics``' means, dilution) with the head of the lane."""
        from .. import measures as M

        ws, nq = self.ws, self.n_queries
        term = np.zeros(self.deepest + 1)
        term[1:] = 1.0 / (k + np.arange(1, self.deepest + 1, dtype=np.float64))
        # the shared stream in fused order at this k: a sort by score within each query (a
        # padded matrix, one row per query), then equal scores by doc id (the tie rule of
        # every fusion: ranking.ranks._fix_ties)
        s = self._shared_scores(term)
        shared = self.streams[-1]
        if shared.size:
            mat = self._scratch_of("mat", (self._shared_rows.size, self._shared_width), np.float64, np.inf)
            mat[self._shared_row, self._shared_col] = -s
            order = np.argsort(mat, axis=1)
            valid = np.arange(self._shared_width)[None, :] < np.diff(self.stream_start[-1])[self._shared_rows][:, None]
            perm = (self.stream_start[-1][self._shared_rows][:, None] + order)[valid]
            fix = F._fix_ties(self._shared_qid[perm], s[perm], self.doc[shared[perm]], ws.doc_order)
            if fix is not None:
                perm = perm[fix]
            shared_rows, shared_score = shared[perm], s[perm]
            pos_of = np.empty(perm.size, dtype=np.int64)
            pos_of[perm] = np.arange(perm.size)
        else:
            shared_rows, shared_score, pos_of = shared, s, np.zeros(0, np.int64)
        shared_key = self.key[shared_rows]

        def scores(stream: np.ndarray, at: np.ndarray) -> np.ndarray:
            out = np.empty(at.size)
            for i in range(len(self.streams)):
                m = stream == i
                out[m] = shared_score[at[m]] if i == len(self.streams) - 1 else term[self.stream_rank[i][at[m]]]
            return out

        def union_rows(stream: np.ndarray, at: np.ndarray) -> np.ndarray:
            out = np.empty(at.size, dtype=np.int64)
            for i in range(len(self.streams)):
                m = stream == i
                out[m] = shared_rows[at[m]] if i == len(self.streams) - 1 else self.streams[i][at[m]]
            return out

        # the judged docs: their fused ranks place their grades among the lane's hits
        last = len(self.streams) - 1
        j_at = self.judged_at.copy()
        on_shared = self.judged_stream == last
        if on_shared.any():  # the position in the shared stream changes with k
            j_at[on_shared] = pos_of[j_at[on_shared]]
        j_score = scores(self.judged_stream, j_at)
        j_rank = self._ranks(self.judged_stream, j_at, self.judged_qid, j_score, self.key[self.judged], term,
                             shared_key, shared_score)
        grade = self._scratch_of("grade", (self.hit_qid.size,), np.int64, NO_JUDGMENT)
        keep = j_rank <= self.n_rows[self.judged_qid]
        grade[self.hit_offsets[self.judged_qid[keep]] + j_rank[keep] - 1] = self.judged_grade[keep]
        hits = M.Hits(self.hit_qid, self.hit_rank, grade)
        keys = tuple(dict.fromkeys(tuple(ws.settings.metrics) + tuple(metrics)))
        per_query = M.compute(hits, self.ideal, nq, list(keys), ws.settings.relevant, ws.qids)
        lane = self._head_lane(k, scores, union_rows)
        dil = F.dilution_of(lane.name, ws.settings.relevant, list(ws.input_lanes), self.top_relevant,
                            F._top_relevant(lane, ws.judgments, ws.settings.relevant, nq), ws.positives)
        return FusedAtK(k, lane, ws.means_of(per_query, [m.key for m in metrics]), dil, per_query)

    def _head_lane(self, k: float, scores: Callable[[np.ndarray, np.ndarray], np.ndarray],
                   union_rows: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> RankedLane:
        """The fused lane's first ``head`` ranks per query (and the depth cut): they are
        among the first ``head`` rows of each stream (a stream is in fused order), so those
        candidates, ordered as the fused lane orders rows (score descending, then tie key
        descending), begin with the lane's head in its order."""
        h = self.head if self.ws.settings.depth is None else min(self.head, int(self.ws.settings.depth))
        stream_l, at_l, qid_l = [], [], []
        for i, start in enumerate(self.stream_start):
            n = np.minimum(np.diff(start), h)
            q = np.repeat(np.arange(self.n_queries, dtype=np.int64), n)
            first = np.zeros(self.n_queries + 1, dtype=np.int64)
            np.cumsum(n, out=first[1:])
            stream_l.append(np.full(q.size, i, dtype=np.int8))
            at_l.append(start[q] + np.arange(q.size, dtype=np.int64) - first[q])
            qid_l.append(q)
        stream, at, qid = np.concatenate(stream_l), np.concatenate(at_l), np.concatenate(qid_l)
        rows = union_rows(stream, at)
        score = scores(stream, at)
        order = np.lexsort((-self.key[rows], -score, qid))
        q32 = qid[order].astype(np.int32)
        rank = ranks_within(q32)
        keep = rank <= h
        q32, rows, score, rank = q32[keep], rows[order][keep], score[order][keep], rank[keep]
        return RankedLane(f"rrf@{k:g}", q32, self.doc[rows], score, rank, offsets_for(q32, self.n_queries))


# --------------------------------------------------------------------------- the slider's top-d fusion


#: Measures :class:`RRFTop` serves from the fused lane's first d ranks: each reads only the
#: hits at ranks <= its cutoff (hit, p, recall, ndcg, judged at a cutoff; rr at a cutoff), or
#: only the first relevant rank (rr uncut at the workspace's relevant level, whose rank the
#: top fusion finds exactly). Every other measure (map, recall or ndcg uncut, bpref, num_ret,
#: Rprec, rbp, user measures, ...) reads the whole fused lane: the explorer then fuses it
#: whole (:class:`RRFSweep`).
TOP_KINDS = frozenset({"hit", "p", "recall", "ndcg", "judged", "rr"})
#: Relative margin on the score bounds below: the fused scores are float sums, a bound
#: ``m / (k + r)`` computed in float may differ from the true bound by a few ulps.
_BOUND_SLACK = 1e-9
#: The padded matrix :meth:`RRFTop._fused_order` sorts holds at most this many cells per row
#: sorted (plus the slack); beyond, the rows are sorted at once (``np.lexsort``).
_PAD_FACTOR, _PAD_SLACK = 4, 4096


def top_depth(metrics: tuple[MetricKey, ...], relevant: int, head: int) -> int | None:
    """The fused depth d :class:`RRFTop` needs for ``metrics`` (the largest cutoff, at least
    ``head``), or None when one of them reads the whole fused lane (see :data:`TOP_KINDS`)."""
    d = int(head)
    for m in metrics:
        if m.kind not in TOP_KINDS or m.measure.defined_in is not None or m.param is not None:
            return None
        if m.k is None:
            if m.kind != "rr" or m.rel not in (None, relevant):
                return None
        else:
            d = max(d, int(m.k))
    return d


def _ranges(start: NDArray[np.int64], length: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The positions ``start[i] .. start[i] + length[i] - 1`` for every i, concatenated, and
    each position's i."""
    length = np.maximum(length, 0)
    owner = np.repeat(np.arange(length.size, dtype=np.int64), length)
    first = np.zeros(length.size + 1, dtype=np.int64)
    np.cumsum(length, out=first[1:])
    pos = np.arange(owner.size, dtype=np.int64) - first[owner] + start[owner]
    return pos, owner


def rrf_sum(terms: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """Per doc, ``Σ_lanes 1/(k + rank)`` from each lane's term column, the terms added largest
    first as :func:`methods.rrf` adds them (float addition is not associative: the same
    order gives the same bits)."""
    if len(terms) > 2:
        terms = list(np.moveaxis(-np.sort(-np.stack(terms, axis=-1), axis=-1), -1, 0))
    s: NDArray[np.float64] = terms[0].copy()
    for t in terms[1:]:
        s += t
    return s


class RRFTop:
    """RRF of a workspace's input lanes at any k, fused only as deep as the measures read.

    Prepared once (nothing here depends on k): the union of the lanes' docs per query, with
    each doc's rank per lane, and per query those docs ordered by their best rank over the
    m lanes, ``r_min``. Per k, for the fused lane's first d ranks (d = the largest cutoff of
    the measures, at least the head the view lists; :func:`top_depth`):

    - the fused score is ``Σ_lanes 1/(k + rank)`` (terms summed largest first, as
      :func:`methods.rrf`), so a doc scores at most ``m / (k + r_min)``;
    - round 1 scores the docs with ``r_min <= d`` (each lane's first d are among them, so at
      least d docs when the query has d) and takes their d-th best score S, a lower bound of
      the fused lane's d-th score. A doc with ``m / (k + r_min) < S`` cannot reach the first
      d, ties included; when every doc left out in round 1 is below S the query is done;
    - round 2, for the other queries, scores the docs with ``r_min <= m / S - k`` (the whole
      query when it holds fewer than d docs), which holds every doc that can reach the first d;
    - the candidates with a score >= S are ordered as the fused lane orders rows (score
      descending, equal scores by doc id descending as bytes) and cut at d.

    The measures then read the hits at ranks 1..d with their grades (every doc retrieved,
    judged or not, as :meth:`Workspace.metrics_of` gives them) plus, for a query whose
    first relevant doc (grade >= the workspace's relevant level) is below rank d, that doc at
    its exact fused rank: the relevant doc with the best (score, tie key), ranked by counting
    the docs before it (only docs with ``m / (k + r_min)`` at or above its score can be).
    That gives every :data:`TOP_KINDS` measure and the first relevant rank the values of the
    whole fused lane (tests/test_rrf_top.py compares them with a fusion from scratch)."""

    def __init__(self, ws: Workspace, head: int) -> None:
        from .. import measures as M

        inputs = [ws.lanes[n] for n in ws.input_lanes]
        nq = ws.n_queries
        self.ws, self.head, self.n_queries, self.m = ws, int(head), nq, len(inputs)
        u = F._union(inputs, nq)
        self.deepest = max((int(lane.rank.max()) for lane in inputs if lane.n_rows), default=0)
        span = self.deepest + 2
        big = self.deepest + 1  # r_min of no lane: never happens in the union
        rdt = np.int16 if self.deepest < 2**15 - 1 else np.int32
        ranks = [u.column(i, lane.rank, 0, rdt) for i, lane in enumerate(inputs)]
        r_min = np.full(u.size, big, dtype=np.int32)
        for r in ranks:
            np.minimum(r_min, np.where(r > 0, r, big), out=r_min)
        code = u.qid.astype(np.int64) * span + r_min
        order = np.argsort(code, kind="stable")  # per query, by r_min (then union order)
        del code
        self.ranks = [r[order] for r in ranks]
        del ranks
        self.doc = u.doc[order]
        self.key = tie_key(ws.doc_order, self.doc)
        self.qid = u.qid[order]
        self.start = u.offsets
        self.size = np.diff(u.offsets)
        self.queries = np.flatnonzero(self.size).astype(np.int64)  # those with a doc in some lane
        self._warm: dict[int, NDArray[np.int64]] = {}  # d -> per query, round 1's r_min bound
        # count[q, t]: the query's docs with r_min <= t (a prefix of its rows in this order)
        cells = np.bincount(self.qid.astype(np.int64) * span + r_min[order], minlength=nq * span)
        self.count = np.cumsum(cells.reshape(nq, span), axis=1).astype(np.int32)
        del cells, r_min, order
        hits, self.ideal = M.doc_level(self.qid, self.doc, np.zeros(u.size, np.int32), ws.judgments.qid,
                                       ws.judgments.doc, ws.judgments.grade, ws.n_docs)
        # grades as small codes (a handful of distinct values): a quarter of the memory or less
        self.grades, code_of = distinct_inverse(hits.grade)
        self.grade_code = code_of.astype(np.uint8 if self.grades.size <= 256 else np.int64).ravel()
        relevant = ws.settings.relevant
        self.relevant_rows = np.flatnonzero((hits.grade != NO_JUDGMENT) & (hits.grade >= relevant))
        del hits
        depth = ws.settings.depth
        self.n_rows = self.size if depth is None else np.minimum(self.size, depth)
        self.top_relevant = [F._top_relevant(lane, ws.judgments, relevant, nq) for lane in inputs]

    def _scores(self, pos: NDArray[np.int64], term: NDArray[np.float64]) -> NDArray[np.float64]:
        return rrf_sum([term[r[pos]] for r in self.ranks])

    def _prefix(self, q: NDArray[np.int64], t: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The rows of queries ``q`` with ``r_min <= t`` (per query): positions and owner index."""
        t = np.clip(t, 0, self.deepest + 1)
        return _ranges(self.start[q], self.count[q, t].astype(np.int64))

    def _bound_rank(self, m: int, k: float, s: NDArray[np.float64]) -> NDArray[np.int64]:
        """Per score s: the largest r_min whose bound ``m / (k + r_min)`` may reach s (a doc
        with a larger r_min scores below s)."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            t = np.floor(m * (1 + _BOUND_SLACK) / s - k) + 1
        t = np.where(np.isfinite(t) & (s > 0), t, self.deepest + 1)
        out: NDArray[np.int64] = np.clip(t, 0, self.deepest + 1).astype(np.int64)
        return out

    def at(self, k: float, metrics: tuple[MetricKey, ...]) -> FusedAtK:
        """:func:`rrf_at_k` at ``k`` for ``metrics`` (:func:`top_depth` must not be None for
        the workspace's metrics and these), with the head of the lane."""
        from .. import measures as M

        ws, nq, m = self.ws, self.n_queries, self.m
        keys = tuple(dict.fromkeys(tuple(ws.settings.metrics) + tuple(metrics)))
        d = top_depth(keys, ws.settings.relevant, self.head)
        if d is None:
            raise ValueError("a measure reads the whole fused lane: fuse it with RRFSweep")
        if ws.settings.depth is not None:
            d = min(d, int(ws.settings.depth))
        term = np.zeros(self.deepest + 2)
        term[1:self.deepest + 1] = 1.0 / (k + np.arange(1, self.deepest + 1, dtype=np.float64))
        queries = self.queries
        # round 1: the docs some lane ranks in its first d, and those the last k's d-th score
        # let in (a nearby k: round 2 is then rarely needed)
        t1 = np.full(queries.size, min(d, self.deepest), dtype=np.int64)
        warm = self._warm.get(d)
        if warm is not None:
            np.maximum(t1, warm, out=t1)
        pos, owner = self._prefix(queries, t1)
        s = self._scores(pos, term)
        n1 = self.count[queries, t1].astype(np.int64)
        width = int(n1.max()) if n1.size else 0
        lower = np.full(queries.size, -np.inf)  # the d-th best score among round 1's docs
        if width >= d:
            mat = np.full((queries.size, width), -np.inf)
            mat[owner, pos - self.start[queries][owner]] = s
            lower = np.partition(mat, width - d, axis=1)[:, width - d]
            del mat
        # done: round 1 held the whole query, or every doc it left out scores below the bound
        left_out_max = m * (1 + _BOUND_SLACK) / (k + t1 + 1)
        done = (n1 >= self.size[queries]) | (left_out_max < lower)
        if not done.all():  # round 2 for the rest: every doc that can reach the first d
            t2 = np.where(done, t1, self._bound_rank(m, k, lower))
            pos, owner = self._prefix(queries, t2)  # (a longer prefix: round 1's rows again, in order)
            s = self._scores(pos, term)
        # candidates: score >= the lower bound, by query; in fused order; first d
        cand = s >= lower[owner]
        pos, owner, s = pos[cand], owner[cand], s[cand]
        order = self._fused_order(owner, s, self.doc[pos], queries.size)
        pos, owner, s = pos[order], owner[order], s[order]
        qsel = queries[owner].astype(np.int32)
        rank = ranks_within(qsel)
        keep = rank <= np.minimum(d, self.n_rows[qsel])
        pos, qsel, s, rank = pos[keep], qsel[keep], s[keep], rank[keep]
        # the next k's round 1: the prefix this k's d-th score needs, with a margin (the
        # bound moves with k); the numbers never depend on it, only the time
        at_d = rank == d
        s_d = np.full(queries.size, -np.inf)
        s_d[owner[keep][at_d]] = s[at_d]
        t_d = self._bound_rank(m, k, s_d)
        self._warm = {d: np.minimum(t_d + np.maximum(2, t_d // 20), self.deepest + 1)}
        grade = self.grades[self.grade_code[pos]]
        # the first relevant doc of the queries without one in the first d
        xq, xr, xg = self._first_relevant_below(k, term, qsel, grade)
        if xq.size:
            hq = np.concatenate([qsel, xq])
            hr = np.concatenate([rank, xr])
            hg = np.concatenate([grade, xg])
            o = np.argsort(hq.astype(np.int64) * (self.deepest * m + 2) + hr, kind="stable")
            hits = M.Hits(hq[o], hr[o], hg[o])
        else:
            hits = M.Hits(qsel, rank, grade)
        per_query = M.compute(hits, self.ideal, nq, list(keys), ws.settings.relevant, ws.qids)
        h = self.head if ws.settings.depth is None else min(self.head, int(ws.settings.depth))
        hk = rank <= h
        hq32 = qsel[hk]
        lane = RankedLane(f"rrf@{k:g}", hq32, self.doc[pos[hk]], s[hk], rank[hk], offsets_for(hq32, nq))
        dil = F.dilution_of(lane.name, ws.settings.relevant, list(ws.input_lanes), self.top_relevant,
                            F._top_relevant(lane, ws.judgments, ws.settings.relevant, nq), ws.positives)
        return FusedAtK(k, lane, ws.means_of(per_query, [x.key for x in metrics]), dil, per_query)

    def _fused_order(self, owner: NDArray[np.int64], s: NDArray[np.float64], doc: NDArray[np.int64],
                     n: int) -> NDArray[np.int64]:
        """Permutation putting rows grouped by ``owner`` (ascending) in fused order within
        each group: score descending, equal scores by doc id descending as bytes (the tie
        rule of every fusion: ``ranking.ranks``). A sort of each group's row of a padded
        matrix (the groups hold about d rows each), then the ties fixed."""
        if not owner.size:
            return np.zeros(0, dtype=np.int64)
        counts = np.bincount(owner, minlength=n)
        width = int(counts.max())
        if n * width > _PAD_FACTOR * owner.size + _PAD_SLACK:  # uneven groups: one sort of every row
            order: NDArray[np.int64] = np.lexsort((-tie_key(self.ws.doc_order, doc), -s, owner))
            return order
        first = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=first[1:])
        col = np.arange(owner.size, dtype=np.int64) - first[owner]
        mat = np.full((n, width), np.inf)  # padding sorts last
        mat[owner, col] = -s
        o = np.argsort(mat, axis=1)
        valid = np.arange(width)[None, :] < counts[:, None]
        perm: NDArray[np.int64] = (first[:-1][:, None] + o)[valid]
        fix = F._fix_ties(owner[perm], s[perm], doc[perm], self.ws.doc_order)
        return perm if fix is None else perm[fix]

    def _first_relevant_below(self, k: float, term: NDArray[np.float64], qsel: NDArray[np.int32],
                              grade: NDArray[np.int64]) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]]:
        """Per query with a relevant doc in the union but none among the first d hits
        (``qsel``, ``grade``): its first relevant doc's exact fused rank (within the
        workspace's depth) and grade."""
        nq, m = self.n_queries, self.m
        empty = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int64))
        rel = self.relevant_rows
        if not rel.size:
            return empty
        has_top = np.zeros(nq, dtype=bool)
        has_top[qsel[(grade != NO_JUDGMENT) & (grade >= self.ws.settings.relevant)]] = True
        rel = rel[~has_top[self.qid[rel]]]
        if not rel.size:
            return empty
        rs = self._scores(rel.astype(np.int64), term)
        rq = self.qid[rel]
        o = np.lexsort((-self.key[rel], -rs, rq))  # per query, the relevant doc first in fused order
        first = np.r_[True, rq[o][1:] != rq[o][:-1]]
        best = o[first]
        b_pos, b_q, b_s, b_key = rel[best].astype(np.int64), rq[best].astype(np.int64), rs[best], self.key[rel[best]]
        # the docs that may come before it: r_min within the bound of its score
        pos, owner = self._prefix(b_q, self._bound_rank(m, k, b_s))
        s = self._scores(pos, term)
        before = (s > b_s[owner]) | ((s == b_s[owner]) & (self.key[pos] > b_key[owner]))
        rank = 1 + np.bincount(owner, weights=before, minlength=b_q.size).astype(np.int64)
        ok = rank <= self.n_rows[b_q]
        return (b_q[ok].astype(np.int32), rank[ok].astype(np.int32),
                self.grades[self.grade_code[b_pos[ok]]].astype(np.int64))


# --------------------------------------------------------------------------- any method against the best lane


@dataclass(frozen=True)
class MethodAgainstBest:
    """A fusion method's fused lane against the best single input lane, per positive query.

    ``best_lane`` is the input lane with the highest mean of ``metric`` over the positives
    (the first in input order on a tie); ``rows`` are ``(qid, fused, best, fused − best)``
    per positive query, sorted by the difference ascending (the largest losses first, then
    by qid); the means are over the same positives."""

    name: str  # METHOD or METHOD:NORM (the --fuse spelling)
    definition: str
    metric: str
    k: float
    best_lane: str
    fused_mean: float
    best_mean: float
    rows: tuple[tuple[str, float, float, float], ...]


def method_against_best(ws: Workspace, spec: str, metric: str, k: float,
                        rrf: FusedAtK | None = None) -> MethodAgainstBest:
    """``spec`` (``METHOD[:NORM]``, ``combine.parse_fuse``) over the workspace's input lanes
    with equal weights (``1/L``) where the method is weighted, at RRF constant ``k`` (rank
    methods that use it), cut to the workspace's depth (``methods.fuse``), scored at doc
    level as the workspace scores any lane (``Workspace.metrics_of``), against the best
    single input lane (:class:`MethodAgainstBest`). ``rrf``: the RRF lane at ``k`` already
    scored (:func:`rrf_at_k`, an explorer's result): for ``spec`` rrf its per-query values
    are taken instead of fusing again (the same lane, the same values)."""
    from .combine import parse_fuse

    fs = parse_fuse(spec)
    keys = [m for m in ws.settings.metrics if m.key == metric]
    if not keys:
        raise ValueError(f"metric {metric!r} is not among the workspace's metrics")
    if fs.method == "rrf" and rrf is not None and rrf.k == k and rrf.per_query is not None and metric in rrf.per_query:
        values = rrf.per_query[metric]
    else:
        lanes = [ws.lanes[n] for n in ws.input_lanes]
        fused = F.fuse(lanes, fs, None, k=k, n_queries=ws.n_queries, depth=ws.settings.depth, doc_ids=ws.doc_order)
        values = ws.metrics_of(fused, "doc", (keys[0],))[metric]
    pos = ws.positives
    means = [(ws.mean(n, "doc", metric), i, n) for i, n in enumerate(ws.input_lanes)]
    best = max(means, key=lambda t: (t[0], -t[1]))[2]
    bv = ws.per_query(best, "doc")[metric]
    rows = sorted(((str(ws.qids[q]), float(values[q]), float(bv[q]), float(values[q] - bv[q])) for q in pos.tolist()),
                  key=lambda r: (r[3], r[0]))
    return MethodAgainstBest(fs.name, fs.definition, metric, float(k), best,
                             float(values[pos].mean()) if pos.size else float("nan"),
                             float(bv[pos].mean()) if pos.size else float("nan"), tuple(rows))
