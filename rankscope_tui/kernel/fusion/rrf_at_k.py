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
the input lanes once and keeps only the last few fused lanes, never adding any to the
workspace.

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
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

import numpy as np

from ..ranking.ranks import RankedLane
from . import methods as F

if TYPE_CHECKING:
    from ..measures import MetricKey
    from ..workspace.loaded import Workspace

K = TypeVar("K", int, float)  # a curve's k: an int on the fixed grid, a float from the slider

#: Results an explorer keeps (least recently used dropped).
EXPLORER_LIMIT = 4
#: Ranks per query an explorer's results keep of their fused lane (the RRF view lists the
#: first 10): a whole fused lane is as large as the inputs (2 × 7M lines: ~0.2 GB each),
#: its head is not. The means and the dilution are always computed on the whole lane.
EXPLORER_HEAD = 100
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
    return FusedAtK(k, lane, ws.means_of(per_query, [m.key for m in metrics]), dil)


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
    depth cut are fused from the lanes at each k instead: see :attr:`prepares`). A result's ``lane`` is
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
            table = None if _is_own(self.ws, k) or not self.prepares else self._prepared()
            r = rrf_at_k(self.ws, k, table=table)
            if self.head is not None and r.lane.n_rows and int(r.lane.rank.max()) > self.head:
                r = replace(r, lane=F._head(r.lane, self.head))
        with self._lock:
            self._kept[k] = r
            self._kept.move_to_end(k)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return r


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


def method_against_best(ws: Workspace, spec: str, metric: str, k: float) -> MethodAgainstBest:
    """``spec`` (``METHOD[:NORM]``, ``combine.parse_fuse``) over the workspace's input lanes
    with equal weights (``1/L``) where the method is weighted, at RRF constant ``k`` (rank
    methods that use it), cut to the workspace's depth (``methods.fuse``), scored at doc
    level as the workspace scores any lane (``Workspace.metrics_of``), against the best
    single input lane (:class:`MethodAgainstBest`)."""
    from .combine import parse_fuse

    fs = parse_fuse(spec)
    keys = [m for m in ws.settings.metrics if m.key == metric]
    if not keys:
        raise ValueError(f"metric {metric!r} is not among the workspace's metrics")
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
