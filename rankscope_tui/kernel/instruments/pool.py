"""``rankscope pool --budget N``: the unjudged pairs whose judgment would narrow the bounds most.

The rule
--------
Candidates are the unjudged (query, doc) pairs (no grade >= 0) that are **holes**
(``measures.coverage``): inside the top k of a pooled lane (every input lane, or those
named) for one of the workspace's ``@k`` measures, on a positive query. Each candidate gets a
priority: for every pooled lane and ``@k`` measure where it is a hole, its equal share of
that query's bound gap,

    priority(q, d) = sum over lanes L and @k measures m with d a hole of (L, m) on q
                     of  gap_{L,m}(q) / holes_{L,m}(q)

where ``gap`` is ``as_relevant - as_nonrelevant`` (the value with every hole counted
relevant, minus counted non-relevant) and ``holes`` the number of holes of (L, m) on q. So
pairs that many lanes rank high, on queries whose values are most open, and that few other
holes share, come first. Ties are broken by the pair's best rank in any pooled lane, then by
query id and doc id (byte order), so the same inputs give the same file. The first ``budget``
pairs are suggested.

Baseline: depth-k pooling (judge every hole of every pooled lane within the largest k)
would judge all the candidates; ``candidates`` says how many that is, so a budget can be set
against it.

What it would change (per pooled lane and measure): the mean holes before and after, and the
mean bound gap before and after. The gap after is computed with the suggested pairs judged
non-relevant (grade 0) and the remaining holes bounded as before; with other outcomes the
values move, the holes left do not. For p@k the gap after is exact whatever the outcome
(each hole is worth 1/k).

The file to judge
-----------------
TREC qrels lines ``qid 0 docid -1`` in priority order: grade ``-1`` is trec_eval's "in the
pool, not judged", which rankscope and trec_eval read as unjudged, so the file is valid qrels
as it stands and a judge replaces each ``-1`` with a grade.

References
----------
- Sparck Jones, K. & van Rijsbergen, C. J. (1975). Report on the need for and provision of an
  "ideal" information retrieval test collection. British Library Research and Development
  Report 5266, University of Cambridge Computer Laboratory. (depth-k pooling)
- Moffat, A., Webber, W. & Zobel, J. (2007). Strategic system comparisons via targeted
  relevance judgments. *SIGIR 2007*, 375-382. (choosing what to judge by its effect on the
  measured values)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..measures.coverage import hole_rows, lane_coverage, with_pairs
from ..settings import PoolSettings

if TYPE_CHECKING:
    from ..workspace.loaded import Workspace

SCHEMA = "rankscope.pool/1"

#: The grade written for every suggested pair: trec_eval's "in the pool, not judged".
PLACEHOLDER_GRADE = -1


@dataclass(frozen=True)
class PoolPair:
    """One suggested pair: its ids, its priority (module docstring), its best rank in a
    pooled lane and the pooled lanes holding it within some cutoff."""

    qid: str
    doc: str
    priority: float
    best_rank: int
    lanes: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"qid": self.qid, "doc": self.doc, "priority": self.priority, "best_rank": self.best_rank,
                "lanes": list(self.lanes)}


@dataclass(frozen=True)
class LaneChange:
    """One pooled lane and measure: mean holes and mean bound gap over the positives, before
    and after judging the suggested pairs (the gap after with them judged non-relevant)."""

    lane: str
    metric: str
    holes_before: float
    holes_after: float
    gap_before: float
    gap_after: float

    def as_dict(self) -> dict[str, Any]:
        return {"lane": self.lane, "metric": self.metric, "holes_before": self.holes_before,
                "holes_after": self.holes_after, "gap_before": self.gap_before, "gap_after": self.gap_after}


RULE = ("candidates: unjudged pairs inside the top k of a pooled lane for an @k measure, on a positive query; "
        "priority: the sum over pooled lanes and @k measures of the query's bound gap (value with every hole counted "
        "relevant minus counted non-relevant) divided by its number of holes; ties by best rank, query id, doc id; "
        "gap after: with the suggested pairs judged non-relevant")


@dataclass(frozen=True)
class PoolResult:
    settings: PoolSettings
    lanes: tuple[str, ...]
    metrics: tuple[str, ...]
    queries: int  # positives
    candidates: int  # pairs depth-k pooling would judge
    pairs: tuple[PoolPair, ...]
    changes: tuple[LaneChange, ...]

    def qrels_text(self) -> str:
        """The file to judge: ``qid 0 docid -1`` per suggested pair, in priority order."""
        return "".join(f"{p.qid} 0 {p.doc} {PLACEHOLDER_GRADE}\n" for p in self.pairs)

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "rule": RULE, "placeholder_grade": PLACEHOLDER_GRADE, "settings": self.settings.as_dict(),
                "lanes": list(self.lanes), "metrics": list(self.metrics), "queries": self.queries,
                "candidates": self.candidates, "suggested": len(self.pairs),
                "pairs": [p.as_dict() for p in self.pairs], "changes": [c.as_dict() for c in self.changes]}


def _writable(text: str, what: str) -> str:
    if not text or any(c.isspace() for c in text):
        raise InputError(f"{what} {text!r} cannot be written as a qrels field (empty or holding white space)")
    return text


def suggest(ws: Workspace, settings: PoolSettings) -> PoolResult:
    """The ``budget`` unjudged pairs to judge next, by the rule of the module docstring."""
    if ws.settings.condensed:
        raise InputError("pool suggests unjudged hits to judge, and --condensed removes every one of them: give the "
                         "lanes as they are", "--condensed")
    lanes = settings.lanes or tuple(ws.input_lanes)
    for name in lanes:
        if name not in ws.lanes:
            raise InputError(f"unknown lane {name!r}; loaded: {', '.join(ws.lanes)}", "--pool-lane")
    metrics = tuple(m for m in ws.settings.metrics if m.k is not None)
    if not metrics:
        raise InputError("pool needs a measure with a cutoff (@k) among the measures: holes are counted within it",
                         "--metrics")
    j, n_q, n_docs = ws.judgments, ws.n_queries, np.int64(ws.n_docs)
    positive = np.zeros(n_q, dtype=bool)
    positive[ws.positives] = True
    keys, scores, ranks, owners = [], [], [], []
    for i, name in enumerate(lanes):
        L = ws.lanes[name]
        cov = ws.judgment_coverage(name, metrics)
        grade = j.grade_of(L.qid, L.doc)
        for m in metrics:
            rows = np.flatnonzero(hole_rows(L, grade, m.k) & positive[L.qid])
            q = L.qid[rows]
            share = cov.gap(m.key)[q] / np.maximum(cov.holes[m.key][q], 1)
            keys.append(q.astype(np.int64) * n_docs + L.doc[rows])
            scores.append(share)
            ranks.append(L.rank[rows].astype(np.int64))
            owners.append(np.full(rows.shape[0], i, dtype=np.int64))
    k_all, s_all, r_all, o_all = (np.concatenate(x) for x in (keys, scores, ranks, owners))
    uniq, inv = np.unique(k_all, return_inverse=True)
    priority = np.bincount(inv, weights=s_all, minlength=uniq.shape[0])
    best = np.full(uniq.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, inv, r_all)
    held = np.zeros((uniq.shape[0], len(lanes)), dtype=bool)
    held[inv, o_all] = True
    qc, dc = (uniq // n_docs).astype(np.int32), uniq % n_docs
    docs = ws.docs
    qid_s = [str(ws.qids[q]) for q in qc.tolist()]
    doc_s = [str(docs[d]) for d in dc.tolist()]
    order = sorted(range(uniq.shape[0]), key=lambda i: (-round(float(priority[i]), 12), int(best[i]),
                                                        qid_s[i].encode(), doc_s[i].encode()))
    chosen = order[:settings.budget]
    pairs = tuple(PoolPair(_writable(qid_s[i], "query id"), _writable(doc_s[i], "doc id"), float(priority[i]),
                           int(best[i]), tuple(n for n, h in zip(lanes, held[i]) if h)) for i in chosen)
    sel = np.asarray(chosen, dtype=np.int64)
    after_j = with_pairs(j, qc[sel], dc[sel], 0)
    pos = ws.positives

    def mean(x: NDArray[Any]) -> float:
        return float(x[pos].mean()) if pos.size else 0.0

    changes = []
    for name in lanes:
        before = ws.judgment_coverage(name, metrics)
        after = lane_coverage(ws.lanes[name], after_j, metrics, n_q, ws.settings.relevant)
        for m in metrics:
            changes.append(LaneChange(name, m.key, mean(before.holes[m.key]), mean(after.holes[m.key]),
                                      mean(before.gap(m.key)), mean(after.gap(m.key))))
    return PoolResult(settings, lanes, tuple(m.key for m in metrics), int(pos.size), int(uniq.shape[0]), pairs,
                      tuple(changes))


__all__ = ["PLACEHOLDER_GRADE", "RULE", "SCHEMA", "LaneChange", "PoolPair", "PoolResult", "suggest"]
