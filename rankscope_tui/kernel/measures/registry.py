"""The measure registry: one ``Measure`` entry per kind, and the ``MetricKey`` naming one use.

An entry carries everything the rest of rankscope asks about a measure: its cutoff
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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from .columns import Columns


REQUIRED, OPTIONAL, NONE = "required", "optional", "none"


@dataclass(frozen=True)
class Name:
    """A spelling of the measure in some tool: ``base`` as that tool writes it, the
    cutoff rule for that spelling (None = the measure's), and the form shown in the
    README (``k`` stands for the cutoff)."""

    base: str
    source: str  # rankscope | ir_measures | trec_eval | ranx | MTEB
    shown: str
    cutoff: str | None = None


@dataclass(frozen=True)
class Measure:
    kind: str
    cutoff: str  # REQUIRED | OPTIONAL | NONE
    takes_rel: bool
    # (columns, k, rel) -> one value per query code; k is an int for a measure whose cutoff
    # is required, int or None when it is optional, None when it has none
    per_query: Callable[[Columns, Any, int | None], NDArray[np.float64]]

    definition: str  # "{key}: ..." with {k}, {rel}; the cut form when the cutoff is optional
    definition_uncut: str | None = None  # the form without a cutoff (OPTIONAL)
    formula: str = ""  # one line for the README table
    peers: str = ""  # the peer values it equals, for the README table
    proportion: bool = False  # per-query 0/1: the mean gets a Wilson interval
    needs_relevant: bool = True  # undefined on a query with no relevant doc
    # (n_rel per query, k) -> best attainable value per query, None where the form has none;
    # k is an int for a measure whose cutoff is required, int or None when it is optional
    ceiling: Callable[[NDArray[np.float64], Any], NDArray[np.float64] | None] | None = None
    names: tuple[Name, ...] = field(default_factory=tuple)
    brings_judged: bool = False  # requesting it at k brings judged@k (seed 000)


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


def ceiling_min_r_over_k(n_rel: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """min(R, k) / k: the best p@k given R relevant docs."""
    return np.minimum(n_rel, k) / k


def ceiling_min_r_over_r(n_rel: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """min(R, k) / R (0 when R = 0): the best recall@k and ap@k given R relevant docs."""
    return np.divide(np.minimum(n_rel, k), n_rel, out=np.zeros(n_rel.shape[0]), where=n_rel > 0)


def _entries() -> list[Measure]:
    # one module per measure; each defines MEASURE (imported here, after the classes above exist)
    from . import ap, bpref, calibrated_recall, hit, judged, ndcg, ndcg_exp, precision, recall, rprec, rr

    return [m.MEASURE for m in (hit, recall, precision, rr, ndcg, judged, ap, rprec, bpref, ndcg_exp, calibrated_recall)]


#: Every measure, in the order the README's table lists them.
ENTRIES: tuple[Measure, ...] = tuple(_entries())
#: ``{kind: Measure}``.
REGISTRY: dict[str, Measure] = {m.kind: m for m in ENTRIES}
