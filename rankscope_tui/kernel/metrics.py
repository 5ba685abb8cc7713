"""Ranking metrics: a thin front over ``kernel.measures`` (the registry, one module per
measure, the names users type). Kept so ``from .metrics import ...`` keeps working."""

from __future__ import annotations

from .measures import (  # noqa: F401
    DEFINITIONS, ENTRIES, REFUSED, REGISTRY, Columns, Hits, Ideal, Measure, MetricKey, Name, canonical_key, ceilings,
    compute, defined_on, doc_level, first_relevant_rank, group_level, known_spellings, parse_metrics, parse_name,
)
