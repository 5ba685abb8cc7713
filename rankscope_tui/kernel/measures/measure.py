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
    # a higher mean is a better ranking; False for a measure that describes the judgments
    # (judged@k), whose "best" mean names no better lane
    ranks_lanes: bool = True


def ceiling_min_r_over_k(n_rel: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """min(R, k) / k: the best p@k given R relevant docs."""
    return np.minimum(n_rel, k) / k


def ceiling_min_r_over_r(n_rel: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """min(R, k) / R (0 when R = 0): the best recall@k and ap@k given R relevant docs."""
    return np.divide(np.minimum(n_rel, k), n_rel, out=np.zeros(n_rel.shape[0]), where=n_rel > 0)
