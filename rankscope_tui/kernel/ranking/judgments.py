"""Judgments as columns, and the query classes they define (SPEC §2).

A doc is relevant when ``grade >= relevant``. A negative grade means "in the pool,
not judged" (trec_eval): never relevant, never judged.

Query classes, from the judgments of one query:
- positive: at least one grade >= relevant;
- negative: at least one grade >= 0 and none > 0 (the corpus holds no answer);
- partial: some grade > 0 but none >= relevant (kept out of means and gate);
- unjudged: only negative grades (ignored, counted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

NOT_IN_QRELS = 0
POSITIVE = 1
NEGATIVE = 2
PARTIAL = 3
UNJUDGED = 4

CLASS_NAMES = {NOT_IN_QRELS: "not_in_qrels", POSITIVE: "positive", NEGATIVE: "negative", PARTIAL: "partial", UNJUDGED: "unjudged"}

# Grade given to a hit whose doc has no judgment for the query.
NO_JUDGMENT = np.iinfo(np.int64).min


@dataclass(frozen=True)
class Judgments:
    """Qrels as columns sorted by (qid code, doc code); unique (qid, doc) pairs."""

    qid: NDArray[np.int32]  # query codes
    doc: NDArray[np.int64]  # doc codes
    grade: NDArray[np.int64]
    n_docs: int  # size of the doc vocabulary the codes index

    def keys(self) -> NDArray[np.int64]:
        return self.qid.astype(np.int64) * np.int64(self.n_docs) + self.doc

    def grade_of(self, qid: NDArray[np.integer[Any]], doc: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
        """Grade of each (qid, doc) pair; ``NO_JUDGMENT`` where there is none.

        Vectorised join on the int64 key qid * n_docs + doc (qrels keys are sorted).
        """
        keys = self.keys()
        probe = np.asarray(qid, dtype=np.int64) * np.int64(self.n_docs) + np.asarray(doc, dtype=np.int64)
        out = np.full(probe.shape, NO_JUDGMENT, dtype=np.int64)
        if keys.size == 0 or probe.size == 0:
            return out
        pos = np.searchsorted(keys, probe)
        pos_c = np.minimum(pos, keys.size - 1)
        found = keys[pos_c] == probe
        out[found] = self.grade[pos_c[found]]
        return out


def query_classes(j: Judgments, n_queries: int, relevant: int) -> NDArray[np.int8]:
    """Class code (see module constants) of every query code."""
    cls = np.zeros(n_queries, dtype=np.int8)
    if j.qid.size == 0:
        return cls
    q = j.qid
    has_any = np.bincount(q, minlength=n_queries) > 0
    has_rel = np.bincount(q, weights=(j.grade >= relevant), minlength=n_queries) > 0
    has_pos_grade = np.bincount(q, weights=(j.grade > 0), minlength=n_queries) > 0
    has_judged = np.bincount(q, weights=(j.grade >= 0), minlength=n_queries) > 0
    cls[has_any] = UNJUDGED
    cls[has_judged & ~has_pos_grade] = NEGATIVE
    cls[has_pos_grade & ~has_rel] = PARTIAL
    cls[has_rel] = POSITIVE
    return cls


def relevant_counts(j: Judgments, n_queries: int, relevant: int) -> NDArray[np.int64]:
    """Number of relevant docs judged for each query code (trec_eval num_rel)."""
    return np.bincount(j.qid, weights=(j.grade >= relevant), minlength=n_queries).astype(np.int64)
