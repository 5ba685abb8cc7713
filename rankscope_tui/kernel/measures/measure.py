"""What a measure is: one ``Measure`` entry (cutoff rule, per-query function, definition,
ceiling, the names other tools use) and the ceilings several measures share.

Each measure module (``hit``, ``recall``, ``ap`` …) builds its ``MEASURE`` from these
types; ``registry`` lists the modules. The types live apart from the registry so that a
measure module never imports the list that imports it.

References
----------
- trec_eval (NIST), the TREC evaluation program, version 10.0: cutoffs, relevance levels
  and the ceilings the best ranking reaches (``P.k``, ``recall.k``, ``map_cut.k``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

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
class Param:
    """A measure's real parameter: its ``name`` (``p``), where the name carries it
    (``paren``: ``rbp(p=0.8)``; ``suffix``: ``iprec_at_recall_0.10``), its default (None =
    it must be given), and the open/closed range it must lie in."""

    name: str
    style: str  # paren | suffix
    default: float | None
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def check(self, value: float) -> str | None:
        """None when ``value`` is allowed, else why not (for the one-line error)."""
        below = value <= self.low if self.low_open else value < self.low
        above = value >= self.high if self.high_open else value > self.high
        if below or above or value != value:
            lo = "(" if self.low_open else "["
            hi = ")" if self.high_open else "]"
            return f"{self.name} must lie in {lo}{self.low:g}, {self.high:g}{hi}, not {value:g}"
        return None

    def shown(self, value: float) -> str:
        """The value as the canonical key writes it: two decimals for a suffix (as trec_eval
        prints ``iprec_at_recall_0.10``) when that is exact, else the shortest repr."""
        if self.style == "suffix" and round(value, 2) == value:
            return f"{value:.2f}"
        return repr(float(value))


@dataclass(frozen=True)
class Measure:
    kind: str
    cutoff: str  # REQUIRED | OPTIONAL | NONE
    takes_rel: bool
    # (columns, k, rel[, param]) -> one value per query code; k is an int for a measure whose
    # cutoff is required, int or None when it is optional, None when it has none; a measure
    # with a real parameter (``param``) gets its value as a fourth argument
    per_query: Callable[..., NDArray[np.float64]]

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
    # a higher mean is a better ranking; False for a measure that describes the judgments
    # (judged@k), whose "best" mean names no better lane
    ranks_lanes: bool = True
    # a real parameter in the name: RBP's persistence ``rbp(p=0.8)`` (style "paren") or the
    # recall level / multiple of R trec_eval writes after the name, ``iprec_at_recall_0.10``
    # (style "suffix", printed with two decimals as trec_eval prints it)
    param: Param | None = None
    # values lie in [0, 1] (every measure but the counts num_ret, num_rel, num_rel_ret)
    unit_interval: bool = True
    # a measure always reported beside this one (RBP's residual): its kind; the companion
    # gets the same cutoff, level and parameter and is listed right after it
    companion: str | None = None
    # a measure the user defined (``measures.user``): where its definition came from (a file's
    # path, or "python" for ``rankscope_tui.define``) and the file's sha256; its values are
    # checked (length, finite, 0/1 when a proportion) before anything else reads them
    defined_in: str | None = None
    defined_sha256: str | None = None


def ceiling_min_r_over_k(n_rel: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """min(R, k) / k: the best p@k given R relevant docs."""
    return np.minimum(n_rel, k) / k


def ceiling_min_r_over_r(n_rel: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """min(R, k) / R (0 when R = 0): the best recall@k and ap@k given R relevant docs."""
    return np.divide(np.minimum(n_rel, k), n_rel, out=np.zeros(n_rel.shape[0]), where=n_rel > 0)
