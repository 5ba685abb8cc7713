"""The mutual-nearest-neighbour condition (lesson 11): reverse lists L(d) built from the
gate lane by rank, the position of a query in its top doc's list, and when the
condition is vacuous or its r does not transfer between batches.

References
----------
- Qin, D., Gammeter, S., Bossard, L., Quack, T. & Van Gool, L. (2011). Hello neighbor:
  accurate object retrieval with k-reciprocal nearest neighbors. *CVPR 2011*, 777-784.
  (reciprocal nearest neighbours)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..ranking.ranks import RankedLane
from ..ranking.runs import running_count
from .rates import _put
from .scores import _mask


@dataclass(frozen=True, eq=False)
class MutualNN:
    """Reverse lists L(d) from the gate lane, read by rank (scores never compared
    across queries).

    ``row_position[i]`` is the position of row i's query in L(doc_i) and
    ``row_list_size[i]`` is |L(doc_i)| (0 for rows of queries outside ``among``).
    ``position[q]`` / ``list_size[q]`` are the same for q's top doc (0 when q is absent
    or outside ``among``).

    ``tie_rule``: ``"share"`` (SPEC §6: 1 + #{q' : rank_q'(d) < rank_q(d)}) or ``"count"``
    (#{q' : rank_q'(d) <= rank_q(d)}, ties count against you). Note that under
    ``"share"`` a top doc has rank 1, so position(q) is always 1 and the mutual condition
    on the top doc always passes; ``"count"`` makes it reject hub docs that are the top
    hit of more than r queries.
    """

    row_position: np.ndarray
    row_list_size: np.ndarray
    position: np.ndarray
    list_size: np.ndarray
    among: np.ndarray
    n_queries: int  # queries the lists were built from (in ``among`` and present in the lane)
    tie_rule: str

    def passes(self, r: int) -> np.ndarray:
        """Bool per query code: position(q) <= r for q's top doc (False outside ``among``)."""
        return (self.position >= 1) & (self.position <= r)

    def vacuous(self, r: int, mask: np.ndarray | None = None) -> tuple[int, int]:
        """(queries whose top doc has |L(d)| <= r, queries considered): the condition
        cannot reject those. Default ``mask``: the queries the lists were built from."""
        m = (self.list_size >= 1) if mask is None else (np.asarray(mask, dtype=bool) & (self.list_size >= 1))
        return int(np.count_nonzero(m & (self.list_size <= r))), int(np.count_nonzero(m))

    def summary(self, r: int) -> dict[str, Any]:
        v, n = self.vacuous(r)
        d: dict[str, Any] = {"r": int(r), "tie_rule": self.tie_rule, "built_from": self.n_queries, "vacuous_queries": v}
        _put(d, "vacuous_share", v / n if n else math.nan, None if n else "no queries")
        return d


def mutual_nn(lane: RankedLane, among: np.ndarray, tie_rule: str = "share") -> MutualNN:
    """Build L(d) for every doc from the queries in ``among`` (positives, negatives and
    out-of-domain negatives being evaluated), vectorised: sort hits by (doc, rank)."""
    if tie_rule not in ("share", "count"):
        raise ValueError(f"tie_rule must be 'share' or 'count', got {tie_rule!r}")
    n_q = int(lane.offsets.shape[0] - 1)
    among = _mask(among, n_q, "among")
    rows = np.flatnonzero(among[lane.qid]) if lane.n_rows else np.zeros(0, dtype=np.int64)
    row_pos = np.zeros(lane.n_rows, dtype=np.int64)
    row_size = np.zeros(lane.n_rows, dtype=np.int64)
    if rows.size:
        d = lane.doc[rows]
        rk = lane.rank[rows]
        order = np.lexsort((rk, d))  # doc asc, then rank asc
        ds, rs = d[order], rk[order]
        m = ds.size
        idx = np.arange(m, dtype=np.int64)
        new_doc = np.ones(m, dtype=bool)
        new_doc[1:] = ds[1:] != ds[:-1]
        new_run = new_doc.copy()
        new_run[1:] |= rs[1:] != rs[:-1]
        doc_first = np.maximum.accumulate(np.where(new_doc, idx, 0))
        run_first = np.maximum.accumulate(np.where(new_run, idx, 0))
        doc_id = running_count(new_doc) - 1
        run_id = running_count(new_run) - 1
        doc_size = np.bincount(doc_id)
        run_size = np.bincount(run_id)
        if tie_rule == "share":
            pos = run_first - doc_first + 1
        else:
            pos = run_first + run_size[run_id] - doc_first
        # A doc occurs at most once per query (duplicates are input errors), so rows = queries.
        row_pos[rows[order]] = pos
        row_size[rows[order]] = doc_size[doc_id]
    present = np.diff(lane.offsets) > 0
    tops = lane.offsets[:-1][present]
    position = np.zeros(n_q, dtype=np.int64)
    list_size = np.zeros(n_q, dtype=np.int64)
    position[present] = row_pos[tops]
    list_size[present] = row_size[tops]
    n_built = int(np.count_nonzero(among & present))
    return MutualNN(row_pos, row_size, position, list_size, among, n_built, tie_rule)


def doc_reach(lane: RankedLane, among: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(doc codes, queries) : for every doc the lane lists for a query in ``among`` (bool
    mask or codes), how many of those queries list it -- |L(d)|. A doc occurs once per
    query, so rows are queries; counts of disjoint query sets add up (query buckets)."""
    n_q = int(lane.offsets.shape[0] - 1)
    rows = _mask(among, n_q, "among")[lane.qid] if lane.n_rows else np.zeros(0, dtype=bool)
    docs, counts = np.unique(lane.doc[rows], return_counts=True)
    return docs.astype(np.int64), counts.astype(np.int64)


def mutual_of_tops(top_doc: np.ndarray, present: np.ndarray, among: ArrayLike, reach_of_top: np.ndarray) -> MutualNN:
    """The mutual lists under the ``"count"`` tie rule from one row per query: a query's top
    doc d has rank 1, so its position in L(d) is the number of queries of ``among`` whose
    top doc is d, and |L(d)| is ``reach_of_top`` (:func:`doc_reach` of q's top doc). The
    same ``position`` / ``list_size`` as :func:`mutual_nn` with ``tie_rule="count"``; the
    per-row arrays are left empty (only the golden tables read them)."""
    n_q = int(np.asarray(present).shape[0])
    among = _mask(among, n_q, "among")
    sel = among & np.asarray(present, dtype=bool)
    position = np.zeros(n_q, dtype=np.int64)
    list_size = np.zeros(n_q, dtype=np.int64)
    if sel.any():
        _, inv, cnt = np.unique(np.asarray(top_doc)[sel], return_inverse=True, return_counts=True)
        position[sel] = cnt[inv]
        list_size[sel] = np.asarray(reach_of_top, dtype=np.int64)[sel]
    empty = np.zeros(0, dtype=np.int64)
    return MutualNN(empty, empty, position, list_size, among, int(np.count_nonzero(sel)), "count")


def batch_size_warning(calibration_queries: int, evaluation_queries: int) -> str | None:
    """Warning text when the mutual lists were built from batches differing by more than 2×
    (list positions grow with the number of queries, so r does not transfer)."""
    a, b = int(calibration_queries), int(evaluation_queries)
    if min(a, b) <= 0:
        return None if a == b else "mutual: one of the batches is empty"
    if max(a, b) > 2 * min(a, b):
        return f"mutual: calibration lists built from {a} queries, evaluation from {b} (more than 2x apart); r does not transfer"
    return None

