"""Ranking measures for every query at once, on columns (SPEC §3, trec_eval parity).

The registry (``registry.py``) holds one entry per measure kind, each in its own module
(``hit``, ``recall``, ``precision``, ``rr``, ``ndcg``, ``judged``, ``ap``, ``rprec``,
``bpref``, ``ndcg_exp``, ``calibrated_recall``); ``names.py`` maps the names users type
(ir_measures, trec_eval/pytrec_eval, ranx, MTEB) to canonical keys; ``columns.py`` builds
the doc- and group-level hit tables and the work measures share.

Conventions, matching trec_eval 10.0 per query (and pytrec_eval-terrier to 1e-9 where
the scores are distinct as float32: pytrec_eval stores scores as float32, so two
scores that differ only in float64 tie there and are ordered by doc id; ranx breaks
ties by input order, not by doc id). ``rank`` is the 1-based position of the first
relevant hit within depth, 0 for a miss. Relevant means grade >= the measure's level
(``rel=N`` in its name, else ``--relevant``); a negative grade is never relevant nor
judged. Sums run in rank order (``np.bincount`` adds in array order), as trec_eval's
loops do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import user
from .columns import Columns, Hits, Ideal, doc_level, group_level
from .measure import Measure, Name
from .names import REFUSED, AskedMeasure, canonical_key, known_spellings, parse_metrics, parse_name, resolve_measures, resolve_metric_path
from .registry import ENTRIES, REGISTRY, MetricKey

#: ``{kind: definition template}`` (the cut form where a cutoff is optional).
DEFINITIONS = {m.kind: m.definition for m in ENTRIES}


def first_relevant_rank(hits: Hits, n_queries: int, relevant: int) -> np.ndarray:
    """Rank of the first relevant hit for every query code; 0 = miss."""
    return Columns(hits, Ideal(np.zeros(0, np.int32), np.zeros(0, np.int64)), n_queries, relevant).first_rank()


def compute(hits: Hits, ideal: Ideal, n_queries: int, metrics: list[MetricKey], relevant: int,
            query_ids: Sequence[Any] | np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per-query values over every query code (queries without hits score 0).

    Returns ``{metric key: float64[n_queries]}`` plus ``"rank"`` (int32, at ``relevant``).
    A user-defined measure's values are checked first (``user.checked_values``; its errors
    name the query by ``query_ids[code]`` when given).
    """
    cols = Columns(hits, ideal, n_queries, relevant)
    out: dict[str, np.ndarray] = {"rank": cols.first_rank()}
    for key in metrics:
        if key.measure.defined_in is not None:
            out[key.key] = user.checked_values(key.measure, cols, hits, ideal, key.k, key.rel, key.key, query_ids)
        elif key.param is None:
            out[key.key] = key.measure.per_query(cols, key.k, key.rel)
        else:
            out[key.key] = key.measure.per_query(cols, key.k, key.rel, key.param)
    return out


def ceilings(ideal: Ideal, n_queries: int, metrics: list[MetricKey], relevant: int) -> dict[str, np.ndarray]:
    """Best attainable value per query given its number of relevant docs R, for the
    measures whose entry has a ceiling: p@k min(R, k)/k, recall@k and ap@k min(R, k)/R."""
    out = {}
    cache: dict[int, np.ndarray] = {}
    for key in metrics:
        fn = key.measure.ceiling
        if fn is None:
            continue
        L = relevant if key.rel is None else key.rel
        if L not in cache:
            cache[L] = np.bincount(ideal.qid, weights=(ideal.grade >= L), minlength=n_queries)
        v = fn(cache[L], key.k)
        if v is not None:
            out[key.key] = v
    return out


def defined_on(metrics: list[MetricKey], ideal: Ideal, n_queries: int, relevant: int) -> dict[str, np.ndarray]:
    """``{key: bool[n_queries]}``: where each measure is defined. A measure that needs a
    relevant doc (recall, rr, ndcg, ap, rprec, bpref, ...) is undefined on a query with none
    at its own level (``rel=N`` or ``relevant``); the others are defined everywhere."""
    out = {}
    cache: dict[int, np.ndarray] = {}
    for key in metrics:
        if not key.needs_relevant:
            out[key.key] = np.ones(n_queries, dtype=bool)
            continue
        L = relevant if key.rel is None or not key.measure.takes_rel else key.rel
        if L not in cache:
            cache[L] = np.bincount(ideal.qid, weights=(ideal.grade >= L), minlength=n_queries) > 0
        out[key.key] = cache[L]
    return out


__all__ = [
    "AskedMeasure", "Columns", "DEFINITIONS", "ENTRIES", "Hits", "Ideal", "Measure", "MetricKey", "Name", "REFUSED", "REGISTRY",
    "canonical_key", "ceilings", "compute", "defined_on", "doc_level", "first_relevant_rank", "group_level", "known_spellings",
    "parse_metrics", "parse_name", "resolve_measures", "resolve_metric_path",
]
