"""Ranking metrics for every query at once, on columns (SPEC §3, trec_eval parity).

Conventions, matching trec_eval 10.0 per query (and pytrec_eval-terrier to 1e-9 where
the scores are distinct as float32: pytrec_eval stores scores as float32, so two
scores that differ only in float64 tie there and are ordered by doc id; ranx breaks
ties by input order, not by doc id):

- ``rank``: 1-based position of the first relevant hit within depth, 0 for a miss.
- ``hit@k`` = 1 if 0 < rank <= k (trec_eval ``success.k``).
- ``recall@k`` = relevant in the top k / all relevant judged for the query (not min(k, R)).
- ``p@k`` = relevant in the top k / k; missing places of a short list are non-relevant.
- ``rr`` = 1/rank, 0 for a miss; no cutoff beyond depth (``recip_rank``).
- ``ndcg@k``: linear gain (the grade; grades <= 0 add nothing), discount log2(i+1),
  ideal = every judged doc with grade > 0 in descending grade order, cut at k; 0 when
  the ideal is 0. Independent of the relevance level (``ndcg_cut.k``).
- ``judged@k``: hits in the top k judged with grade >= 0, divided by k. Equal to
  1 − ``unj.k`` only when the list holds at least k hits and the query is in the run:
  trec_eval counts the missing places of a short list (and a missing query) as
  judged, rankscope as not judged.

Relevant means grade >= ``relevant``; a negative grade is never relevant nor judged.
Sums run in rank order (``np.bincount`` adds in array order), as trec_eval's loops do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .errors import InputError
from .judgments import NO_JUDGMENT


_KEY = re.compile(r"^(hit|recall|p|ndcg|judged)@([1-9][0-9]*)$|^(rr)$")

DEFINITIONS = {
    "hit": "hit@{k}: 1 if a relevant doc is in the top {k} (trec_eval success.{k}); relevant = grade >= {rel}",
    "recall": "recall@{k}: relevant docs in the top {k} / all relevant docs judged for the query (trec_eval recall.{k}); relevant = grade >= {rel}",
    "p": "p@{k}: relevant docs in the top {k} / {k}, short lists padded with non-relevant (trec_eval P.{k}); relevant = grade >= {rel}",
    "rr": "rr: 1 / rank of the first relevant doc within depth, 0 for a miss; mean = MRR (trec_eval recip_rank); relevant = grade >= {rel}",
    "ndcg": "ndcg@{k}: linear gain (grade, grades <= 0 add nothing), discount log2(i+1), ideal over all judged docs cut at {k} (trec_eval ndcg_cut.{k}); independent of the relevant level",
    "judged": ("judged@{k}: hits in the top {k} judged with grade >= 0, divided by {k}; a short list's missing places and "
               "a query missing from the lane count as not judged (equals 1 - trec_eval unj.{k} only when the list holds "
               "at least {k} hits and the query is in the run: trec_eval counts missing places as judged; ir_measures' "
               "Judged@k divides by min(k, retrieved) instead)"),
}


@dataclass(frozen=True)
class MetricKey:
    kind: str  # hit | recall | p | rr | ndcg | judged
    k: int | None

    @property
    def key(self) -> str:
        return self.kind if self.k is None else f"{self.kind}@{self.k}"

    @property
    def is_proportion(self) -> bool:
        """Per-query 0/1 values: the mean gets a Wilson interval."""
        return self.kind == "hit"

    @property
    def needs_relevant(self) -> bool:
        """Undefined on a query with no relevant doc (recall, rr and nDCG divide by or look for
        one); hit, precision and judged are defined on every query."""
        return self.kind in ("recall", "rr", "ndcg")

    def definition(self, relevant: int) -> str:
        return DEFINITIONS[self.kind].format(k=self.k, rel=relevant)


def parse_metrics(spec: str | list[str]) -> list[MetricKey]:
    """``'ndcg@10,rr'`` → keys; every ``ndcg@k`` brings ``judged@k`` with it. Order kept, no repeats."""
    items = spec.split(",") if isinstance(spec, str) else [x for s in spec for x in s.split(",")]
    out: list[MetricKey] = []
    for raw in items:
        item = raw.strip().lower()
        if not item:
            continue
        m = _KEY.match(item)
        if not m:
            raise InputError(f"unknown metric {raw.strip()!r} (known: hit@k, recall@k, p@k, rr, ndcg@k, judged@k)", "--metrics")
        key = MetricKey("rr", None) if m.group(3) else MetricKey(m.group(1), int(m.group(2)))
        if key not in out:
            out.append(key)
    for key in list(out):
        if key.kind == "ndcg" and MetricKey("judged", key.k) not in out:
            out.append(MetricKey("judged", key.k))
    if not out:
        raise InputError("no metric given", "--metrics")
    return out


@dataclass(frozen=True)
class Hits:
    """Hits of one lane at one level, in (qid, rank) order, with their judgments."""

    qid: np.ndarray  # int32 query codes
    rank: np.ndarray  # int32 1-based
    grade: np.ndarray  # int64; NO_JUDGMENT when unjudged


@dataclass(frozen=True)
class Ideal:
    """Judged grades per query at one level, for recall denominators and ideal DCG."""

    qid: np.ndarray  # int32
    grade: np.ndarray  # int64 (only grades >= 0: judged units)


def first_relevant_rank(hits: Hits, n_queries: int, relevant: int) -> np.ndarray:
    """Rank of the first relevant hit for every query code; 0 = miss."""
    return _first_relevant(hits.qid, hits.rank, hits.grade, n_queries, relevant)


def _first_relevant(qid: np.ndarray, rank: np.ndarray, grade: np.ndarray, n_queries: int, relevant: int) -> np.ndarray:
    out = np.zeros(n_queries, dtype=np.int32)
    rel = grade >= relevant
    q = qid[rel]
    if q.size:
        # rows are in (qid, rank) order: the first row of each query is its first relevant hit
        first = np.r_[True, q[1:] != q[:-1]]
        out[q[first]] = rank[rel][first]
    return out


def _ideal_dcg(ideal: Ideal, n_queries: int, k: int) -> np.ndarray:
    gain = ideal.grade.astype(np.float64)
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
    m = pos <= k
    return np.bincount(q[m], weights=g[m] / np.log2(pos[m] + 1.0), minlength=n_queries)


def compute(hits: Hits, ideal: Ideal, n_queries: int, metrics: list[MetricKey], relevant: int) -> dict[str, np.ndarray]:
    """Per-query values over every query code (queries without hits score 0).

    Returns ``{metric key: float64[n_queries]}`` plus ``"rank"`` (int32).
    """
    out: dict[str, np.ndarray] = {}
    # Unjudged hits add to no metric: work on the judged rows only (order kept, so the
    # sums run in rank order as before).
    sel = np.flatnonzero(hits.grade != NO_JUDGMENT)
    qid, rank, grade = hits.qid[sel], hits.rank[sel], hits.grade[sel]
    rank1 = _first_relevant(qid, rank, grade, n_queries, relevant)
    out["rank"] = rank1
    rel = grade >= relevant
    n_rel = np.bincount(ideal.qid, weights=(ideal.grade >= relevant), minlength=n_queries)
    gain = np.where(grade > 0, grade, 0).astype(np.float64)
    judged = grade >= 0
    for key in metrics:
        kind, k = key.kind, key.k
        if kind == "rr":
            out[key.key] = np.where(rank1 > 0, 1.0 / np.maximum(rank1, 1), 0.0)
            continue
        top = rank <= k
        if kind == "hit":
            out[key.key] = ((rank1 > 0) & (rank1 <= k)).astype(np.float64)
        elif kind == "p":
            out[key.key] = np.bincount(qid[top & rel], minlength=n_queries) / float(k)
        elif kind == "recall":
            cnt = np.bincount(qid[top & rel], minlength=n_queries).astype(np.float64)
            out[key.key] = np.divide(cnt, n_rel, out=np.zeros(n_queries), where=n_rel > 0)
        elif kind == "judged":
            out[key.key] = np.bincount(qid[top & judged], minlength=n_queries) / float(k)
        elif kind == "ndcg":
            m = top & (gain > 0)
            dcg = np.bincount(qid[m], weights=gain[m] / np.log2(rank[m] + 1.0), minlength=n_queries)
            idcg = _ideal_dcg(ideal, n_queries, k)
            out[key.key] = np.divide(dcg, idcg, out=np.zeros(n_queries), where=idcg > 0)
    return out


def ceilings(ideal: Ideal, n_queries: int, metrics: list[MetricKey], relevant: int) -> dict[str, np.ndarray]:
    """Best attainable p@k and recall@k per query given its number of relevant docs R:
    min(R, k)/k and min(R, k)/R."""
    n_rel = np.bincount(ideal.qid, weights=(ideal.grade >= relevant), minlength=n_queries)
    out = {}
    for key in metrics:
        if key.kind == "p":
            out[key.key] = np.minimum(n_rel, key.k) / key.k
        elif key.kind == "recall":
            out[key.key] = np.divide(np.minimum(n_rel, key.k), n_rel, out=np.zeros(n_queries), where=n_rel > 0)
    return out


def doc_level(qid: np.ndarray, doc: np.ndarray, rank: np.ndarray, j_qid, j_doc, j_grade, n_docs: int) -> tuple[Hits, Ideal]:
    """Doc-level hits and ideal from a ranked lane's columns and the judgments' columns."""
    from .judgments import Judgments

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
    qid: np.ndarray, doc: np.ndarray, rank: np.ndarray, j_qid, j_doc, j_grade, group_of: np.ndarray, n_groups: int
) -> tuple[Hits, Ideal]:
    """Group-level hits and ideal (SPEC §3).

    A group's grade is the maximum grade >= 0 of its judged docs; positions stay the
    doc-level positions; a hit counts for its group only at the group's first
    occurrence, later occurrences are non-relevant with gain 0 and judged iff the
    group is judged.
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
    if gkeys.size and hit_keys.size:
        pos = np.minimum(np.searchsorted(gkeys, hit_keys), gkeys.size - 1)
        found = gkeys[pos] == hit_keys
        grade[found] = ggrade[pos[found]]
        # rows are in (qid, rank) order, so the first index of each key is its first occurrence
        _, first = np.unique(hit_keys, return_index=True)
        later = np.ones(qid.shape, dtype=bool)
        later[first] = False
        grade[later & found] = 0
    ideal = Ideal((gkeys // n_groups).astype(np.int32), ggrade)
    return Hits(qid, rank, grade), ideal
