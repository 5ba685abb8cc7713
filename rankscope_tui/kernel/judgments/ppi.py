"""A prediction-powered mean: cheap labels on every query, corrected on a random subset.

The cheap labels (B) judge every query; the reference labels (A) judge a random subset
of them, the labelled queries L (n of them). The other N queries U carry B's labels
only. With m_A(q), m_B(q) a system's measure on query q under A and under B,

    θ̂_PP = mean_{q∈U} m_B(q) + mean_{q∈L} (m_A(q) − m_B(q)),

the B-based mean corrected by the mean A − B difference (the rectifier) on the labelled
queries, and its interval, by the normal approximation,

    θ̂_PP ± z_{1−α/2} · √(σ̂²_B / N + σ̂²_Δ / n),

with σ̂²_B the variance (ddof 1) of m_B over U and σ̂²_Δ that of m_A − m_B over L
(Angelopoulos et al. 2023, the mean estimator). It estimates the mean under A over the
population the queries come from, with no assumption on how good B is: a biased B
costs width, never coverage. The assumption it does need: L is a random sample of the
queries, drawn independently of the labels and the systems; a subset chosen for being
hard, recent or disputed breaks the correction. Beside it, the classical interval from
A alone (mean of m_A over L, ± z·s/√n) shows what B's labels buy.

References
----------
- Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023).
  Prediction-powered inference. *Science* 382(6671), 669-674.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from ..statistics.intervals import finite_or_none, z_value

APPROXIMATION = "normal approximation, z quantile"
REFERENCE = ("Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). "
             "Prediction-powered inference. Science 382(6671), 669-674.")


@dataclass(frozen=True)
class PPIMean:
    """One prediction-powered mean and the classical mean from A alone."""

    estimate: float
    se: float
    low: float
    high: float
    labelled: int  # n: queries labelled by A (and B)
    unlabelled: int  # N: queries labelled by B only
    b_mean: float  # mean of m_B over the unlabelled queries
    rectifier: float  # mean of m_A - m_B over the labelled queries
    classical: float  # mean of m_A over the labelled queries
    classical_low: float
    classical_high: float

    def as_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def ppi_mean(a_labelled: ArrayLike, b_labelled: ArrayLike, b_unlabelled: ArrayLike,
             confidence: float) -> PPIMean:
    """The prediction-powered mean and interval of the module docstring. ``a_labelled``,
    ``b_labelled``: per-query values on L (same order); ``b_unlabelled``: on U."""
    a = np.asarray(a_labelled, dtype=np.float64)
    bl = np.asarray(b_labelled, dtype=np.float64)
    bu = np.asarray(b_unlabelled, dtype=np.float64)
    if a.shape != bl.shape:
        raise ValueError("a_labelled and b_labelled must be paired per query")
    if a.size < 2 or bu.size < 2:
        raise InputError(f"a prediction-powered interval needs at least 2 queries labelled by both and 2 by the "
                         f"cheap labels only; got {a.size} and {bu.size}")
    z = z_value(confidence)
    delta = a - bl
    b_mean, rect = float(bu.mean()), float(delta.mean())
    se = math.sqrt(float(bu.var(ddof=1)) / bu.size + float(delta.var(ddof=1)) / a.size)
    est = b_mean + rect
    classical = float(a.mean())
    cse = math.sqrt(float(a.var(ddof=1)) / a.size)
    return PPIMean(est, se, est - z * se, est + z * se, int(a.size), int(bu.size), b_mean, rect, classical,
                   classical - z * cse, classical + z * cse)
