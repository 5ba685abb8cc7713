"""Judgment coverage: unjudged hits inside a measure's cutoff, and how far they could move it.

A measure reads only judged hits: an unjudged hit (no grade >= 0 for its query; a negative
grade means "in the pool, not judged" and counts as unjudged, as in trec_eval) adds nothing,
which is the same as judging it non-relevant. Where a lane's top k holds many unjudged hits
its value is a guess about what the pool left out. This module counts those hits and
bounds the measure over the two ways of filling them in.

Holes
-----
The holes of a lane for a measure on a query are its unjudged hits within the measure's
cutoff: ranks ``1 .. k`` for an ``@k`` measure, the whole (depth-cut) list for an uncut one.

Bounds (the convention)
-----------------------
Each bound is the measure evaluated on **modified qrels**: the original judgments with
every hole of the lane for that measure added

- ``as_relevant``: with grade = the measure's relevance level (``rel=N`` in its name, else
  ``--relevant``); a hole already in the qrels with a negative grade gets that grade instead;
- ``as_nonrelevant``: with grade 0.

Everything else follows from the modified qrels, as trec_eval would compute on them: in
particular a hole counted relevant also adds one to the query's number of relevant docs R
(the recall and average-precision denominator) and a gain to the ideal DCG, and a hole
counted non-relevant is a judged non-relevant doc for ``bpref`` and ``judged@k``. For the
measures that only read relevant hits (hit, p, recall, rr, ap, ndcg, rprec) ``as_nonrelevant``
equals the observed value. ``as_relevant`` is the optimistic reading and is not always the
maximum over every way of judging the holes (a relevant hole raises an ideal DCG, and a deep
relevant hole can lower an average precision); it is the number a person gets by assuming
the pool missed only relevant docs. Means run over the workspace's positive queries (those
of the original qrels).

Condensed lists (``--condensed``) are trec_eval's ``-J``: ``ranking.ranks.condense`` removes
the unjudged hits before any cutoff, so a condensed lane has no holes.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: judged grades, ``-J``.
- Buckley, C. & Voorhees, E. M. (2004). Retrieval evaluation with incomplete information.
  *SIGIR 2004*, 25-32. (unjudged documents in the top ranks and measures on judged docs only)
- Sakai, T. (2007). Alternatives to bpref. *SIGIR 2007*, 71-78. (condensed lists)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..ranking.judgments import Judgments
from ..ranking.ranks import RankedLane, distinct
from .columns import doc_level
from .registry import MetricKey


def level_of(key: MetricKey, relevant: int) -> int:
    """The relevance level a measure reads: its ``rel=N`` when it takes one, else ``relevant``."""
    return relevant if key.rel is None or not key.measure.takes_rel else key.rel


def hole_rows(lane: RankedLane, grade: NDArray[np.int64], k: int | None) -> NDArray[np.bool_]:
    """Rows of the lane that are holes for a cutoff ``k`` (None = the whole list):
    unjudged (``grade < 0``) and ranked within ``k``."""
    m = grade < 0
    return m if k is None else m & (lane.rank <= k)


def with_pairs(j: Judgments, qid: NDArray[np.integer[Any]], doc: NDArray[np.integer[Any]], grade: int) -> Judgments:
    """The judgments with each ``(qid, doc)`` pair given ``grade``: a pair already present
    (with a negative grade, as holes are) takes the new grade, the others are added."""
    n = np.int64(j.n_docs)
    keys = j.keys()
    new = distinct(np.asarray(qid, dtype=np.int64) * n + np.asarray(doc, dtype=np.int64))
    g = j.grade.copy()
    if keys.size and new.size:
        pos = np.minimum(np.searchsorted(keys, new), keys.size - 1)
        found = keys[pos] == new
        g[pos[found]] = grade
        new = new[~found]
    # the keys are sorted and distinct, the new ones too and none among them: each goes in
    # at its place in the sorted order (what sorting the two together gives)
    at = np.searchsorted(keys, new)
    return Judgments(np.insert(j.qid, at, (new // n).astype(j.qid.dtype)), np.insert(j.doc, at, new % n),
                     np.insert(g, at, np.int64(grade)), j.n_docs)


def values_with(lane: RankedLane, j: Judgments, metrics: Sequence[MetricKey], n_queries: int,
                relevant: int, grade: NDArray[np.int64] | None = None) -> dict[str, NDArray[np.float64]]:
    """Per-query values of ``metrics`` on the lane under judgments ``j`` (``measures.compute``);
    ``grade``: the lane's row grades under ``j`` when the caller knows them (no join)."""
    from . import compute
    from .columns import Hits, Ideal

    if grade is None:
        hits, ideal = doc_level(lane.qid, lane.doc, lane.rank, j.qid, j.doc, j.grade, j.n_docs)
    else:
        judged = j.grade >= 0
        hits, ideal = Hits(lane.qid, lane.rank, grade), Ideal(j.qid[judged], j.grade[judged])
    out = compute(hits, ideal, n_queries, list(metrics), relevant)
    return {m.key: np.asarray(out[m.key], dtype=np.float64) for m in metrics}


#: Measures that read only relevant hits (and R and the ideal gains from grades > 0 or >= the
#: level): a hole judged 0 leaves them as observed, so the non-relevant bound is the observed
#: value (the test against pytrec_eval on the modified qrels checks it).
NONRELEVANT_IS_OBSERVED = frozenset({"hit", "p", "recall", "rr", "ap", "ndcg", "rprec", "ndcg_exp"})


def bounds(lane: RankedLane, j: Judgments, metrics: Sequence[MetricKey], n_queries: int, relevant: int,
           holes_of: dict[str, NDArray[np.bool_]], observed: dict[str, NDArray[np.float64]] | None = None,
           grade: NDArray[np.int64] | None = None) -> tuple[dict[str, NDArray[np.float64]], dict[str, NDArray[np.float64]]]:
    """``(as_relevant, as_nonrelevant)`` per-query values of each measure, the holes
    ``holes_of[key]`` (a row mask over ``lane``) added to the qrels as relevant / as grade 0.
    Measures sharing a hole set and a level share one modified qrels. ``observed``: the
    lane's per-query values, taken as the non-relevant bound where that is the same
    (``NONRELEVANT_IS_OBSERVED``) instead of computing it again. ``grade``: the lane's row
    grades under ``j`` (``j.grade_of(lane.qid, lane.doc)``), when known. A lane lists a doc
    at most once per query (the reader refuses a repeat), so under the modified qrels only
    the hole rows change grade: the rows' grades follow without a second join."""
    hi: dict[str, NDArray[np.float64]] = {}
    lo: dict[str, NDArray[np.float64]] = {}
    groups: dict[tuple[bytes, int], list[MetricKey]] = {}
    for m in metrics:
        groups.setdefault((np.packbits(holes_of[m.key]).tobytes(), level_of(m, relevant)), []).append(m)
    for (_, level), keys in groups.items():
        rows = holes_of[keys[0].key]
        q, d = lane.qid[rows], lane.doc[rows]
        # a level beyond int64 (--relevant 99999999999999999999) is reached by no grade: the
        # largest grade stored stands for it (it is below the level, as every grade is)
        as_rel = min(level, int(np.iinfo(np.int64).max))
        hi.update(values_with(lane, with_pairs(j, q, d, as_rel), keys, n_queries, relevant,
                              _holes_given(grade, rows, as_rel)))
        same = [m for m in keys if observed is not None and m.kind in NONRELEVANT_IS_OBSERVED and m.key in observed]
        lo.update({m.key: np.asarray(observed[m.key], dtype=np.float64) for m in same} if observed else {})
        rest = [m for m in keys if m not in same]
        if rest:
            lo.update(values_with(lane, with_pairs(j, q, d, 0), rest, n_queries, relevant,
                                  _holes_given(grade, rows, 0)))
    return hi, lo


def _holes_given(grade: NDArray[np.int64] | None, rows: NDArray[np.bool_], value: int) -> NDArray[np.int64] | None:
    """The row grades with the hole ``rows`` given ``value`` (None when ``grade`` is)."""
    if grade is None:
        return None
    out = grade.copy()
    out[rows] = value
    return out


@dataclass(frozen=True)
class LaneCoverage:
    """Judgment coverage of one lane: per measure key, per query code, the holes (unjudged
    hits within the cutoff) and the measure under the two bounds (module docstring)."""

    holes: dict[str, NDArray[np.int64]]
    as_relevant: dict[str, NDArray[np.float64]]
    as_nonrelevant: dict[str, NDArray[np.float64]]

    def gap(self, key: str) -> NDArray[np.float64]:
        """``|as_relevant - as_nonrelevant|`` per query: how much the holes could move the value."""
        out: NDArray[np.float64] = np.abs(self.as_relevant[key] - self.as_nonrelevant[key])
        return out


def lane_coverage(lane: RankedLane, j: Judgments, metrics: Sequence[MetricKey], n_queries: int,
                  relevant: int, observed: dict[str, NDArray[np.float64]] | None = None,
                  grade: NDArray[np.int64] | None = None) -> LaneCoverage:
    """Holes and bounds of every measure in ``metrics`` on one lane at doc level
    (``observed``: the lane's per-query values under ``j``, see :func:`bounds`; ``grade``:
    ``j.grade_of(lane.qid, lane.doc)`` when the caller has it already)."""
    if grade is None:
        grade = j.grade_of(lane.qid, lane.doc)
    # measures sharing a cutoff share their hole rows and counts (the same arrays)
    by_k: dict[int | None, tuple[NDArray[np.bool_], NDArray[np.int64]]] = {}
    for m in metrics:
        if m.k not in by_k:
            r = hole_rows(lane, grade, m.k)
            by_k[m.k] = (r, np.bincount(lane.qid[r], minlength=n_queries).astype(np.int64))
    rows = {m.key: by_k[m.k][0] for m in metrics}
    holes = {m.key: by_k[m.k][1] for m in metrics}
    hi, lo = bounds(lane, j, metrics, n_queries, relevant, rows, observed, grade)
    return LaneCoverage(holes, hi, lo)


#: the per-query columns a bucket stores for one measure key (``scale.bucket``)
COLUMNS = ("holes", "as_relevant", "as_nonrelevant")


def as_columns(c: LaneCoverage) -> dict[str, NDArray[np.float64]]:
    """``{"cov:<part>:<key>": float64[n_queries]}``: a lane's coverage as per-query columns,
    read back by :func:`from_columns`."""
    return {f"cov:{part}:{key}": np.asarray(getattr(c, part)[key], dtype=np.float64)
            for key in c.holes for part in COLUMNS}


def from_columns(cols: dict[str, NDArray[np.float64]], keys: Sequence[str]) -> LaneCoverage:
    """The inverse of :func:`as_columns` for the measure ``keys``."""
    def part(name: str) -> dict[str, NDArray[np.float64]]:
        return {k: np.asarray(cols[f"cov:{name}:{k}"], dtype=np.float64) for k in keys}

    return LaneCoverage({k: v.astype(np.int64) for k, v in part("holes").items()}, part("as_relevant"),
                        part("as_nonrelevant"))


__all__ = ["COLUMNS", "NONRELEVANT_IS_OBSERVED", "LaneCoverage", "as_columns", "bounds", "from_columns", "hole_rows",
           "lane_coverage", "level_of", "values_with", "with_pairs"]
