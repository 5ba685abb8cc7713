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

from . import ap, bpref, calibrated_recall, err, f1, hit, infap, iprec, judged, ndcg, ndcg_exp, precision, rbp, recall, rprec, rprec_mult, rr, set_measures
from .measure import Measure


@dataclass(frozen=True)
class MetricKey:
    """One measure at one cutoff and relevance level: ``kind``, ``k`` (None = uncut)
    and ``rel`` (None = the workspace's ``--relevant``). ``key`` is the canonical name
    the per-query CSV, report.json and the library use: ``kind[(rel=N)][@k]``."""

    kind: str
    k: int | None
    rel: int | None = None
    # the measure's real parameter (RBP's p, the recall level of iprec_at_recall, the multiple
    # of R of rprec_mult); None for a measure without one
    param: float | None = None

    @property
    def key(self) -> str:
        spec = REGISTRY[self.kind].param if self.param is not None else None
        inside = [] if spec is None or spec.style != "paren" else [f"{spec.name}={spec.shown(self.param or 0.0)}"]
        if self.rel is not None:
            inside.append(f"rel={self.rel}")
        base = self.kind + (f"({','.join(inside)})" if inside else "")
        if spec is not None and spec.style == "suffix":
            base += f"_{spec.shown(self.param or 0.0)}"
        return base if self.k is None else f"{base}@{self.k}"

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
        param = "" if self.param is None else (m.param.shown(self.param) if m.param is not None else repr(self.param))
        out = text.format(key=self.key, k=self.k, rel=relevant if self.rel is None else self.rel, param=param)
        if self.rel is not None:
            out += f"; the level rel={self.rel} is set by the name and overrides --relevant for this measure"
        return out


#: Every measure, in the order the README's table lists them (one module per measure,
#: each defining ``MEASURE``).
#: A module holding a family (RBP and its residual, ERR and nERR, the set measures) lists
#: them in ``MEASURES``.
ENTRIES: tuple[Measure, ...] = tuple(
    e for m in (hit, recall, precision, rr, ndcg, judged, ap, rprec, bpref, ndcg_exp, calibrated_recall, rbp, err, infap,
                iprec, rprec_mult, set_measures, f1)
    for e in (m.MEASURES if hasattr(m, "MEASURES") else (m.MEASURE,)))
#: ``{kind: Measure}``.
REGISTRY: dict[str, Measure] = {m.kind: m for m in ENTRIES}
