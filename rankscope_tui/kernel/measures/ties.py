"""Tie exposure: how much of a per-query value depends on the order of tied scores.

rankscope orders equal scores by doc id descending as bytes (trec_eval's rule, see
``ranking.ranks``). That rule is arbitrary: another tool, or the same system with a
different doc numbering, puts tied hits in another order. This module measures, per
query, the range of values a measure can take over **every** ordering of the hits inside
each tie group (rows of one query with equal scores), and its expected value when the
tied hits are shuffled uniformly at random.

Tie groups and cutoffs
----------------------
A tie group is a maximal run of two or more equal scores on adjacent ranks of one
query's ordered (and depth-cut) list: ranks ``s+1 .. e`` (``s`` hits above it). It
*straddles* a cutoff ``k`` when ``s < k < e``: some of its hits are inside the top k and
some outside, so which of them count depends on the tie rule. Hits cut away by
``--depth`` are gone before ties are looked at.

Extremes (best and worst over the orderings)
--------------------------------------------
The best value is the one from ordering each tie group by grade **descending**, the
worst from ordering it by grade **ascending** (unjudged hits count as grade below 0).
Why this attains the extremes, for each supported measure (relevance = grade >= L):

- ``hit@k``, ``p@k``, ``recall@k``: the value increases with the number of relevant hits
  in the top k. Inside a group only the first ``k - s`` places are in the top k, so
  putting the relevant hits there (grade descending puts every grade >= L before every
  grade < L) maximises that count, and putting them last minimises it.
- ``rr`` / ``rr@k``: the value decreases with the rank of the first relevant hit. The
  first group holding a relevant hit decides it; relevant-first puts one at the group's
  top place (the smallest rank possible), relevant-last at the place after all the
  group's non-relevant hits (the largest).
- ``ap`` / ``ap@k``: swapping an adjacent (non-relevant, relevant) pair into (relevant,
  non-relevant) raises the precision at that relevant hit by 1/i and leaves every other
  term unchanged, so any ordering is improved by bubbling relevant hits up inside their
  group; the fixed point is relevant-first (and symmetrically relevant-last is the
  minimum). For ap@k the swap can also move a relevant hit into the top k, which only adds
  a positive term.
- ``ndcg`` / ``ndcg@k``: inside a group the discounts 1/log2(i+1) of its places are
  decreasing (0 beyond k), the gains are the grades; by the rearrangement inequality the
  sum of gain x discount is largest when the gains are sorted descending and smallest when
  sorted ascending. Relevant-first/last alone is not enough for graded qrels (a grade 2
  before a grade 1 matters), hence the order by grade rather than by relevance. The ideal
  DCG does not depend on the run.

Grade order also gives the binary measures' extremes, since it puts every grade >= L
before every grade < L.

Expected value over random tie orders
-------------------------------------
McSherry, F. & Najork, M. (2008). Computing information retrieval performance measures
efficiently in the presence of tied scores. *ECIR 2008*, LNCS 4956, 414-421. Every
ordering of each tie group is equally likely; the expectation is computed in closed form,
without enumerating orderings. For a group of ``n`` hits starting after rank ``s`` with
``r`` relevant hits:

- relevant hits in the top k: the group contributes ``m * r / n`` with ``m = clip(k - s, 0, n)``
  (each place holds a relevant hit with probability r/n), so ``E[p@k] = E[count]/k`` and
  ``E[recall@k] = E[count]/R``;
- hit@k: 1 if a relevant hit lies above the first group holding one and within k;
  otherwise, for that group, ``1 - C(n - r, m) / C(n, m)`` (the chance the m top places are
  not all non-relevant);
- rr: the first relevant hit lies at place j of the first group holding one with
  probability ``C(n - j, r - 1) / C(n, r)``, so ``E[rr] = sum_j P(j) / (s + j)`` (j with
  ``s + j <= k`` for rr@k);
- ndcg: each place of a group holds each of its hits with probability 1/n, so
  ``E[DCG] = sum over places of discount * (mean gain of the group)`` (linearity).

ap's expectation has a closed form too (McSherry & Najork give one) but it is not computed
here: ``expected`` is ``None`` for ap.

The public functions work on one query's list in rank order. :func:`lane_ties` computes
the same numbers for every query of a lane at once: it revisits only the queries whose
list holds a tie group with two grades (the rest keep the value under the tie rule as
best = worst = expected). It uses the same terms, summed in the same order, so each
value is the same float as :func:`query_ties` gives.

References
----------
- McSherry, F. & Najork, M. (2008). Computing information retrieval performance measures
  efficiently in the presence of tied scores. *ECIR 2008*, LNCS 4956, 414-421. (the
  expected value over tie orders)
- trec_eval (NIST), the TREC evaluation program, version 10.0: the tie rule and the
  measures' definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, log2
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..ranking.judgments import Judgments
from ..ranking.ranks import RankedLane, tied_queries
from ..ranking.runs import gather_index, running_count, spread_runs
from .columns import weighted_bincount, within_query_count
from .portable import log2_int
from .registry import MetricKey

#: The measure kinds whose tie exposure is computed.
SUPPORTED = ("hit", "p", "recall", "rr", "ap", "ndcg")

#: Two values closer than this count as equal (float sums in different orders).
TOLERANCE = 1e-12


def tie_groups(scores: Sequence[float] | NDArray[np.float64]) -> list[tuple[int, int]]:
    """``(s, e)`` of each run of two or more equal adjacent scores: places ``s .. e-1``
    (0-based) of a list already in rank order, i.e. ranks ``s+1 .. e``."""
    out = []
    # Python floats: indexing a numpy array element by element costs more than the walk
    vals = scores.tolist() if isinstance(scores, np.ndarray) else list(scores)
    n = len(vals)
    i = 0
    while i < n:
        j = i + 1
        while j < n and vals[j] == vals[i]:
            j += 1
        if j - i >= 2:
            out.append((i, j))
        i = j
    return out


def straddles(groups: Sequence[tuple[int, int]], k: int) -> bool:
    """True when some tie group holds places both inside and outside the top k."""
    return any(s < k < e for s, e in groups)


def _reorder(grades: NDArray[np.int64], groups: Sequence[tuple[int, int]], descending: bool) -> NDArray[np.int64]:
    g = grades.copy()
    for s, e in groups:
        part = np.sort(g[s:e], kind="stable")
        g[s:e] = part[::-1] if descending else part
    return g


def _moving(grades: NDArray[np.int64], groups: Sequence[tuple[int, int]], k: int | None) -> list[tuple[int, int]]:
    """The groups whose order can change a value cut at ``k``: those holding two grades
    and starting inside the top k (sorting a group of one grade gives it back, and the
    places from k on are read by no measure cut at k)."""
    return [(s, e) for s, e in groups if (k is None or s < k) and grades[s:e].min() != grades[s:e].max()]


def _ideal_dcg(ideal: NDArray[np.int64], k: int | None) -> float:
    gains = np.sort(ideal[ideal > 0])[::-1]
    if k is not None:
        gains = gains[:k]
    return float(sum(float(x) / log2(i + 2) for i, x in enumerate(gains)))


def value_of(kind: str, k: int | None, grades: NDArray[np.int64], level: int, n_rel: int, idcg: float) -> float:
    """The measure on one ordered list of grades (``NO_JUDGMENT`` = unjudged): the same
    definitions as the measure modules (trec_eval), written per query."""
    rel = grades >= level
    top = rel if k is None else rel[:k]
    if kind == "hit":
        return 1.0 if top.any() else 0.0
    if kind == "p":
        return float(top.sum()) / float(k or 1)
    if kind == "recall":
        return float(top.sum()) / n_rel if n_rel > 0 else 0.0
    if kind == "rr":
        where = np.flatnonzero(top)
        return 1.0 / float(where[0] + 1) if where.size else 0.0
    if kind == "ap":
        if n_rel == 0:
            return 0.0
        where = np.flatnonzero(top)
        return float(sum((i + 1) / float(r + 1) for i, r in enumerate(where))) / n_rel
    if kind == "ndcg":
        if idcg <= 0:
            return 0.0
        g = grades if k is None else grades[:k]
        return float(sum(float(x) / log2(i + 2) for i, x in enumerate(g) if x > 0)) / idcg
    raise ValueError(f"tie exposure does not cover {kind}")


def expected_value(kind: str, k: int | None, grades: NDArray[np.int64], groups: Sequence[tuple[int, int]],
                   level: int, n_rel: int, idcg: float) -> float | None:
    """The mean of the measure over uniformly random orders of every tie group (closed
    forms of McSherry & Najork 2008, see the module docstring); None for ap."""
    if kind not in ("p", "recall", "hit", "rr", "ndcg"):
        return None
    n = grades.shape[0]
    cut = n if k is None else min(k, n)
    # per place as Python ints (a block's count and gain sum are exact integers either way;
    # summing small list slices is what keeps this loop cheap on a query of many places)
    rel_a = grades >= level
    rel = rel_a.astype(np.int64).tolist()
    # singletons are groups of one, so every place belongs to exactly one block; blocks
    # that start at or past the cutoff add exactly 0 to every sum below (and a first
    # relevant block there gives hit and rr 0), so the walk stops at the cutoff. A
    # singleton whose weight is 0 (not relevant; for ndcg no gain) adds exactly +0.0 to a
    # sum that is >= 0 and is never the first relevant block, so only the singletons of
    # weight are walked, in place order among the groups: the same sums, term by term.
    weight = grades > 0 if kind == "ndcg" else rel_a
    single = weight[:cut].copy()
    for s, e in groups:
        single[s:e] = False
    blocks = sorted([(s, e) for s, e in groups if s < cut and e > s]
                    + [(j, j + 1) for j in np.flatnonzero(single).tolist()])
    if kind in ("p", "recall"):
        count = 0.0
        for s, e in blocks:
            m = max(0, min(cut, e) - s)
            count += m * float(sum(rel[s:e])) / (e - s)
        if kind == "p":
            return count / float(k or 1)
        return count / n_rel if n_rel > 0 else 0.0
    if kind in ("hit", "rr"):
        for s, e in blocks:
            r = sum(rel[s:e])
            if r == 0:
                continue
            size = e - s
            if kind == "hit":
                m = max(0, min(cut, e) - s)
                return 1.0 - comb(size - r, m) / comb(size, m)
            total = 0.0
            for j in range(1, size - r + 2):  # the first relevant hit at place j of the group
                if s + j > cut:
                    break
                total += comb(size - j, r - 1) / comb(size, r) / (s + j)
            return total
        return 0.0
    if kind == "ndcg":
        if idcg <= 0:
            return 0.0
        dcg = 0.0
        gain = np.maximum(grades, 0).tolist()
        for s, e in blocks:
            mean_gain = float(sum(gain[s:e])) / (e - s)
            dcg += sum(mean_gain / log2(p + 2) for p in range(s, min(cut, e)))
        return dcg / idcg
    return None


@dataclass(frozen=True)
class QueryTies:
    """One query's tie exposure for one measure."""

    worst: float
    best: float
    expected: float | None  # None where no closed form is computed (ap)
    straddles: bool  # a tie group crosses the measure's cutoff (False for an uncut measure)

    @property
    def depends(self) -> bool:
        """The value changes with the tie order."""
        return self.best - self.worst > TOLERANCE


def query_ties(key: MetricKey, scores: NDArray[np.float64], grades: NDArray[np.int64], ideal: NDArray[np.int64],
               relevant: int, groups: Sequence[tuple[int, int]] | None = None) -> QueryTies:
    """Tie exposure of one measure on one query: ``scores`` and ``grades`` in rank order
    (``NO_JUDGMENT`` for unjudged hits), ``ideal`` every judged grade (>= 0) of the query;
    ``groups``, when given, are ``tie_groups(scores)`` found already."""
    level = relevant if key.rel is None or not key.measure.takes_rel else key.rel
    n_rel = int((ideal >= level).sum())
    idcg = _ideal_dcg(ideal, key.k) if key.kind == "ndcg" else 0.0
    if groups is None:
        groups = tie_groups(scores)
    moving = _moving(grades, groups, key.k)
    best = value_of(key.kind, key.k, _reorder(grades, moving, True), level, n_rel, idcg)
    worst = value_of(key.kind, key.k, _reorder(grades, moving, False), level, n_rel, idcg)
    exp = expected_value(key.kind, key.k, grades, groups, level, n_rel, idcg)
    return QueryTies(worst=worst, best=best, expected=exp,
                     straddles=key.k is not None and straddles(groups, key.k))


@dataclass(frozen=True)
class LaneTies:
    """Tie exposure of one lane: per measure key, per query code, the worst and best
    value over tie orders and the expected value (NaN where no closed form is computed
    and the value depends on the order); ``depends`` marks the
    queries whose value changes with the tie order, ``straddles`` those with a tie group
    across the measure's cutoff; ``tied`` marks the queries holding any tie."""

    worst: dict[str, NDArray[np.float64]]
    best: dict[str, NDArray[np.float64]]
    expected: dict[str, NDArray[np.float64]]
    depends: dict[str, NDArray[np.bool_]]
    straddles: dict[str, NDArray[np.bool_]]
    tied: NDArray[np.bool_]  # per query code: its list holds two equal scores

    def n_dependent(self, key: str) -> int:
        return int(self.depends[key].sum())


def lane_ties(lane: RankedLane, judgments: Judgments, values: dict[str, NDArray[np.float64]],
              metrics: Sequence[MetricKey], relevant: int) -> LaneTies:
    """Tie exposure of every supported measure in ``metrics`` on one lane.

    ``values`` are the lane's per-query values under the tie rule (``measures.compute``);
    on a query without ties they are also the worst, best and expected values. Only the
    queries whose list holds a tie group of two grades are recomputed, all at once.
    """
    n_q = lane.offsets.shape[0] - 1
    keys = [m for m in metrics if m.kind in SUPPORTED]
    worst = {m.key: np.asarray(values[m.key], dtype=np.float64).copy() for m in keys}
    best = {m.key: w.copy() for m, w in zip(keys, worst.values())}
    expected = {m.key: w.copy() for m, w in zip(keys, worst.values())}
    depends = {m.key: np.zeros(n_q, dtype=bool) for m in keys}
    strad = {m.key: np.zeros(n_q, dtype=bool) for m in keys}
    tied = tied_queries(lane, int(np.iinfo(np.int32).max))
    jq = judgments.qid
    # the grades of every tied query's rows in one join, and each query's judgments' span
    # in one search: the same values the per-query calls give, without a call per query
    starts, ends = lane.offsets[tied].astype(np.int64), lane.offsets[tied + 1].astype(np.int64)
    lengths = ends - starts
    row_off = np.concatenate(([0], running_count(lengths)))
    n_rows = int(row_off[-1])
    row_base = row_off[:-1]
    at = gather_index(starts, lengths, row_off, n_rows)
    # the tied query of each row (each holds two rows or more: its runs tile the rows)
    qi_of_row = spread_runs(np.arange(tied.shape[0], dtype=np.int32), row_base, n_rows) if n_rows else \
        np.zeros(0, dtype=np.int32)
    all_grades = judgments.grade_of(tied[qi_of_row], lane.doc[at])
    j_lo, j_hi = np.searchsorted(jq, tied, "left").tolist(), np.searchsorted(jq, tied, "right").tolist()
    # every tied query's tie groups at once (``tie_groups`` per query: runs of equal
    # adjacent scores; equality of floats is transitive, so a run of adjacent equal pairs
    # is a run of one value), as (query index, start, end) with places counted per query
    all_scores = lane.score[at]
    pair = np.zeros(n_rows, dtype=bool)  # pair[r]: row r holds the score of row r - 1 in its query
    if n_rows > 1:
        pair[1:] = (all_scores[1:] == all_scores[:-1]) & (qi_of_row[1:] == qi_of_row[:-1])
    edge = np.diff(pair.astype(np.int8), append=np.int8(0))
    g_start = np.flatnonzero(edge == 1)  # the row before a run's first pair: the run's first row
    g_end = np.flatnonzero(edge == -1) + 1
    g_query = qi_of_row[g_start]
    g_s, g_e = g_start - row_base[g_query], g_end - row_base[g_query]
    for m in keys:
        if m.k is not None:
            across = np.zeros(tied.shape[0], dtype=bool)
            across[g_query[(g_s < m.k) & (m.k < g_e)]] = True
            strad[m.key][tied] = across
    # a group whose hits all carry the same grade (unjudged counted as one grade) cannot
    # change any value: only the queries with two grades inside one group are walked
    flat = np.maximum(all_grades, -1)
    differ = np.zeros(n_rows, dtype=bool)
    if n_rows > 1:
        differ[1:] = pair[1:] & (flat[1:] != flat[:-1])
    walk = np.zeros(tied.shape[0], dtype=bool)
    walk[qi_of_row[differ]] = True
    # the walked queries' rows: their tie groups reordered and the closed forms, for every
    # query at once (the same sums, term by term and in the same order, as query_ties)
    _walk_all(keys, tied, walk, qi_of_row, pair, all_grades, row_base, judgments, j_lo, j_hi, relevant,
              worst, best, expected, depends)
    tied_mask = np.zeros(n_q, dtype=bool)
    tied_mask[tied] = True
    return LaneTies(worst, best, expected, depends, strad, tied_mask)


def _walk_all(keys: Sequence[MetricKey], tied: NDArray[np.int32], walk: NDArray[np.bool_], qi_of_row: NDArray[np.int32],
              pair: NDArray[np.bool_], all_grades: NDArray[np.int64], row_base: NDArray[np.int64], judgments: Judgments,
              j_lo: list[int], j_hi: list[int], relevant: int, worst: dict[str, NDArray[np.float64]],
              best: dict[str, NDArray[np.float64]], expected: dict[str, NDArray[np.float64]],
              depends: dict[str, NDArray[np.bool_]]) -> None:
    """:func:`query_ties` of every walked query (``walk`` over ``tied``) at once, written into
    the per-query-code arrays. Each value is the same float as the per-query function's:
    the same terms (``log2_int`` is the C library's log2), summed in the same order
    (``np.bincount`` adds its weights in array order, as Python's ``sum`` does)."""
    wi = np.flatnonzero(walk)
    if wi.size == 0:
        return
    nw = int(wi.size)
    q = tied[wi]
    to_w = np.full(tied.shape[0], -1, dtype=np.int64)
    to_w[wi] = np.arange(nw, dtype=np.int64)
    sel = walk[qi_of_row]
    rows = np.flatnonzero(sel)
    wq = to_w[qi_of_row[rows]]  # the walked query of each row, ascending
    place = rows - row_base[qi_of_row[rows]]  # 0-based place in the query's list
    g = all_grades[rows]
    pr = pair[rows]  # the row continues the group of the row above (never at a query's first row)
    n_list = np.bincount(wq, minlength=nw)
    # segments: each tie group, and each other row alone, in row order
    seg = running_count(~pr) - 1
    in_group = pr.copy()
    in_group[:-1] |= pr[1:]
    # best / worst: every group sorted by grade, descending / ascending (ties.query_ties)
    g_best = g[np.lexsort((~g, seg))]
    g_worst = g[np.lexsort((g, seg))]
    # the walked queries' judged grades (the ideal), their rows laid end to end
    lo = np.asarray(j_lo, dtype=np.int64)[wi]
    ln = np.asarray(j_hi, dtype=np.int64)[wi] - lo
    j_off = np.concatenate(([0], running_count(ln)))
    j_at = gather_index(lo, ln, j_off, int(j_off[-1]))
    jg = judgments.grade[j_at]
    jw = np.searchsorted(q, judgments.qid[j_at]).astype(np.int64)  # the walked query of each (q ascends)
    judged = jg >= 0
    # segment blocks: their query, first place, size, and the grades they hold
    seg_first = np.flatnonzero(~pr)
    b_wq, b_s = wq[seg_first], place[seg_first]
    b_size = np.diff(np.r_[seg_first, seg.size])
    b_group = in_group[seg_first]
    for m in keys:
        level = relevant if m.rel is None or not m.measure.takes_rel else m.rel
        n_rel = np.bincount(jw[judged & (jg >= level)], minlength=nw)
        idcg = _ideal_dcg_all(jw[judged], jg[judged], nw, m.k) if m.kind == "ndcg" else np.zeros(nw)
        hi = _value_all(m.kind, m.k, g_best, wq, place, level, n_rel, idcg, nw)
        lo_v = _value_all(m.kind, m.k, g_worst, wq, place, level, n_rel, idcg, nw)
        dep = hi - lo_v > TOLERANCE
        worst[m.key][q], best[m.key][q] = lo_v, hi
        depends[m.key][q] = dep
        if m.kind == "ap":  # no closed form: the mean is known only when every order gives one value
            expected[m.key][q] = np.where(dep, np.nan, lo_v)
            continue
        cut = n_list if m.k is None else np.minimum(m.k, n_list)
        rel = g >= level
        weight = g > 0 if m.kind == "ndcg" else rel
        b_r = np.bincount(seg, weights=rel, minlength=b_s.size).astype(np.int64) if seg.size else b_s
        keep = (b_s < cut[b_wq]) & (b_group | weight[seg_first])
        expected[m.key][q] = _expected_all(m.kind, m.k, keep, b_wq, b_s, b_size, b_r, cut, n_rel, idcg, g, seg,
                                           place, nw)


def _value_all(kind: str, k: int | None, grades: NDArray[np.int64], wq: NDArray[np.int64], place: NDArray[np.int64],
               level: int, n_rel: NDArray[np.int64], idcg: NDArray[np.float64], nw: int) -> NDArray[np.float64]:
    """:func:`value_of` of every walked query's list (``grades`` in place order per query)."""
    top = np.ones(grades.shape[0], dtype=bool) if k is None else place < k
    rel = (grades >= level) & top
    out = np.zeros(nw)
    if kind in ("hit", "p", "recall"):
        count = np.bincount(wq[rel], minlength=nw).astype(np.float64)
        if kind == "hit":
            return (count > 0).astype(np.float64)
        return count / float(k or 1) if kind == "p" else _ratio(count, n_rel)
    if kind in ("rr", "ap"):
        at = np.flatnonzero(rel)
        rq = wq[at]
        nth = _nth(rq)  # the relevant hit's count in its query, 1-based
        if kind == "rr":
            first = nth == 1
            out[rq[first]] = 1.0 / (place[at[first]] + 1).astype(np.float64)
            return out
        # the i-th relevant hit (1-based) at place r (0-based) adds i / (r + 1)
        total = weighted_bincount(rq, weights=nth.astype(np.float64) / (place[at] + 1).astype(np.float64), minlength=nw)
        return _ratio(total, n_rel)
    if kind == "ndcg":
        gain = top & (grades > 0)
        dcg = weighted_bincount(wq[gain], weights=grades[gain].astype(np.float64) / log2_int(place[gain] + 2), minlength=nw)
        return _ratio(dcg, idcg)
    raise ValueError(f"tie exposure does not cover {kind}")


def _nth(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """1, 2, 3, ... along each run of equal (sorted) ``keys``: an element's place in its run."""
    return within_query_count(keys, np.ones(keys.shape[0], dtype=np.int64))


def _ratio(num: NDArray[np.float64], den: NDArray[Any]) -> NDArray[np.float64]:
    """``num / den`` where ``den > 0``, else 0.0 (a query without relevant docs, or without
    gain in its ideal list, scores 0)."""
    out = np.zeros(num.shape[0])
    some = den > 0
    out[some] = num[some] / den[some]
    return out


def _ideal_dcg_all(jw: NDArray[np.int64], jg: NDArray[np.int64], nw: int, k: int | None) -> NDArray[np.float64]:
    """:func:`_ideal_dcg` of every walked query: its positive judged grades, best first."""
    pos = jg > 0
    w, gains = jw[pos], jg[pos]
    order = np.lexsort((~gains, w))
    w, gains = w[order], gains[order]
    at = _nth(w) - 1  # the gain's place in the query's ideal list, 0-based
    m = np.ones(w.size, dtype=bool) if k is None else at < k
    return weighted_bincount(w[m], weights=gains[m].astype(np.float64) / log2_int(at[m] + 2), minlength=nw)


def _expected_all(kind: str, k: int | None, keep: NDArray[np.bool_], b_wq: NDArray[np.int64], b_s: NDArray[np.int64],
                  b_size: NDArray[np.int64], b_r: NDArray[np.int64], cut: NDArray[np.int64], n_rel: NDArray[np.int64],
                  idcg: NDArray[np.float64], grades: NDArray[np.int64], seg: NDArray[np.int64], place: NDArray[np.int64],
                  nw: int) -> NDArray[np.float64]:
    """:func:`expected_value` of every walked query: ``keep`` marks the blocks it walks (the
    tie groups starting inside the cut and the singletons of weight there), in place order."""
    out = np.zeros(nw)
    bq, bs, bn, br = b_wq[keep], b_s[keep], b_size[keep], b_r[keep]
    if kind in ("p", "recall"):
        m = np.minimum(cut[bq], bs + bn) - bs
        count = weighted_bincount(bq, weights=m.astype(np.float64) * br.astype(np.float64) / bn.astype(np.float64),
                            minlength=nw)
        return count / float(k or 1) if kind == "p" else _ratio(count, n_rel)
    if kind in ("hit", "rr"):
        # the first block holding a relevant hit decides; the chances are ratios of exact
        # integers (math.comb), one block per query, so this stays a loop
        has = br > 0
        hq = bq[has]
        first = _nth(hq) == 1
        for w, s, size, r, c in zip(hq[first].tolist(), bs[has][first].tolist(), bn[has][first].tolist(),
                                    br[has][first].tolist(), cut[hq[first]].tolist()):
            if kind == "hit":
                m = max(0, min(c, s + size) - s)
                out[w] = 1.0 - comb(size - r, m) / comb(size, m)
                continue
            total = 0.0
            for j in range(1, size - r + 2):
                if s + j > c:
                    break
                total += comb(size - j, r - 1) / comb(size, r) / (s + j)
            out[w] = total
        return out
    if kind == "ndcg":
        # each kept block's places inside the cut, each at the block's mean gain
        b_of_seg = np.full(keep.shape[0], -1, dtype=np.int64)
        b_of_seg[np.flatnonzero(keep)] = np.arange(bq.size, dtype=np.int64)
        gain_sum = np.bincount(seg, weights=np.maximum(grades, 0), minlength=keep.shape[0])[keep]
        mean_gain = gain_sum / bn.astype(np.float64)
        blk = b_of_seg[seg]
        rows = (blk >= 0) & (place < cut[b_wq[seg]])
        inner = weighted_bincount(blk[rows], weights=mean_gain[blk[rows]] / log2_int(place[rows] + 2), minlength=bq.size)
        dcg = weighted_bincount(bq, weights=inner, minlength=nw)
        return _ratio(dcg, idcg)
    raise ValueError(f"tie exposure does not cover {kind}")


#: the per-query columns a bucket stores for one measure key (``scale.bucket``)
COLUMNS = ("worst", "best", "expected", "depends", "straddles")


def as_columns(t: LaneTies) -> dict[str, NDArray[np.float64]]:
    """``{"tie:<part>:<key>": float64[n_queries]}`` and ``"tie:tied"``: a lane's tie
    exposure as per-query columns (booleans as 0/1), read back by :func:`from_columns`."""
    out = {"tie:tied": t.tied.astype(np.float64)}
    for key in t.worst:
        for part in COLUMNS:
            out[f"tie:{part}:{key}"] = np.asarray(getattr(t, part)[key], dtype=np.float64)
    return out


def from_columns(cols: dict[str, NDArray[np.float64]], keys: Sequence[str]) -> LaneTies:
    """The inverse of :func:`as_columns` for the measure ``keys``."""
    def part(name: str) -> dict[str, NDArray[np.float64]]:
        return {k: np.asarray(cols[f"tie:{name}:{k}"], dtype=np.float64) for k in keys}

    return LaneTies(part("worst"), part("best"), part("expected"),
                    {k: v > 0 for k, v in part("depends").items()}, {k: v > 0 for k, v in part("straddles").items()},
                    np.asarray(cols["tie:tied"]) > 0)


__all__ = ["COLUMNS", "SUPPORTED", "TOLERANCE", "LaneTies", "as_columns", "from_columns", "QueryTies", "expected_value", "lane_ties", "query_ties",
           "straddles", "tie_groups", "value_of"]
