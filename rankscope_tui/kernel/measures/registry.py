"""The measure registry: one ``Measure`` entry per kind, and the ``MetricKey`` naming one use.

An entry (``measure.Measure``) carries everything the rest of rankscope asks about a measure: its cutoff
(required, optional or none) and whether it takes a relevance level ``rel=N``; the
per-query function on columns (every query at once); its definition text, which
report.json's ``definitions`` block and the captions quote; whether its mean gets a
Wilson interval; whether it is undefined on a query without a relevant doc; its ceiling;
the names other tools give it (``names.py`` parses them). Adding a measure is a module
with one entry, listed in ``ENTRIES`` below, plus its tests.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: the measure's definition
  and its conventions (judged grades, relevance level, tie order).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ap, bpref, calibrated_recall, hit, judged, ndcg, ndcg_exp, precision, recall, rprec, rr
from .measure import Measure


@dataclass(frozen=True)
class MetricKey:
    """One measure at one cutoff and relevance level: ``kind``, ``k`` (None = uncut)
    and ``rel`` (None = the workspace's ``--relevant``). ``key`` is the canonical name
    the per-query CSV, report.json and the library use: ``kind[(rel=N)][@k]``."""

    kind: str
    k: int | None
    rel: int | None = None

    @property
    def key(self) -> str:
        rel = "" if self.rel is None else f"(rel={self.rel})"
        return f"{self.kind}{rel}" if self.k is None else f"{self.kind}{rel}@{self.k}"

    @property
    def measure(self) -> Measure:
        return REGISTRY[self.kind]

    @property
    def is_proportion(self) -> bool:
        """Per-query 0/1 values: the mean gets a Wilson interval."""
        return self.measure.proportion

    @property
    def needs_relevant(self) -> bool:
        """Undefined on a query with no relevant doc (recall, rr and nDCG divide by or look
        for one); hit, precision and judged are defined on every query."""
        return self.measure.needs_relevant

    def definition(self, relevant: int) -> str:
        m = self.measure
        text = m.definition if (self.k is not None or m.definition_uncut is None) else m.definition_uncut
        out = text.format(key=self.key, k=self.k, rel=relevant if self.rel is None else self.rel)
        if self.rel is not None:
            out += f"; the level rel={self.rel} is set by the name and overrides --relevant for this measure"
        return out


#: Every measure, in the order the README's table lists them (one module per measure,
#: each defining ``MEASURE``).
ENTRIES: tuple[Measure, ...] = tuple(m.MEASURE for m in (hit, recall, precision, rr, ndcg, judged, ap, rprec, bpref,
                                                         ndcg_exp, calibrated_recall))
#: ``{kind: Measure}``.
REGISTRY: dict[str, Measure] = {m.kind: m for m in ENTRIES}
