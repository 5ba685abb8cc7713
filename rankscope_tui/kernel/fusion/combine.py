"""Fusion methods beyond RRF and convex min-max, with their score normalisations.

A method is named ``METHOD`` or ``METHOD:NORM`` (the fused lane's name, the
``--fuse`` value and the API's spelling alike): ``combmnz:zmuv``, ``isr``,
``wrrf``. Rank methods read each lane's ranks and take no normalisation; score
methods combine normalised scores, min-max when no ``:NORM`` is given (the lane is
then still named with it: ``combsum`` -> ``combsum:minmax``).

Common conventions
------------------
Ranks and lists
    ``r_l(d)`` is d's rank in lane l after the lane's own ordering (score
    descending, doc id descending as bytes) and depth cut; ``n_l`` is lane l's list
    length for the query; ``m`` is the number of candidates, the docs of the union
    of the lanes for the query. A lane holding none of the query's docs has
    ``n_l = 0``.
Absent documents
    A doc is *absent* from a lane that does not list it for the query. Each method
    says what an absent doc contributes; the count ``|L(d)|`` is the number of lanes
    listing d. Normalisation ``borda`` gives every absent doc a value (see below),
    after which no doc is absent from any lane (so ``|L(d)|`` is the number of lanes).
Arithmetic
    Terms are added in lane order in float64, starting from the first lane's term
    (``x + 0.0 == x``, so absent terms change nothing); weights multiply a lane's
    term before it is added.
Tie rule (one for every method)
    The fused lane is ordered like any lane: fused score descending, then doc id
    descending as bytes (trec_eval's rule), then cut to ``depth`` per query. Two
    docs with equal fused floats are tied whatever produced them.

Normalisations (per lane and per query, over the lane's own list)
    ``minmax``  ``(s - min) / (max - min)``; a constant list -> all 1.0.
    ``max``     ``s / |max|``; a list whose maximum is 0 is left as it is (dividing
                by ``|max|`` keeps the order of an all-negative list).
    ``sum``     ``(s - min) / Σ(s - min)``; a constant list -> ``1 / n_l`` each.
    ``zmuv``    ``(s - mean) / sd`` with the population sd (ddof 0); a constant
                list -> all 0.0 (every score is the mean).
    ``rank``    ``1 - (r - 1) / n_l``.
    ``borda``   ``1 - (r - 1) / m``; an absent doc gets the mean of the positions
                ``n_l + 1 .. m`` it could take: ``1/2 - (n_l - 1) / (2m)``.
    ``none``    the raw scores.

Methods (``w_l`` are weights, ``k`` the RRF constant; sums run over the lanes
listing d unless normalisation ``borda`` filled the absent docs in)
    ``wrrf``     ``Σ w_l / (k + r_l(d))``; absent: adds nothing. With every
                 ``w_l = 1`` this is RRF.
    ``wsum``     ``Σ w_l · n_l(d)``; absent: adds nothing (score 0).
                 ``wsum:minmax`` is the convex lane.
    ``combsum``  ``Σ n_l(d)``; absent: adds nothing.
    ``combmnz``  ``|L(d)| · Σ n_l(d)``; absent: not counted.
    ``combanz``  ``Σ n_l(d) / |L(d)|``; absent: not counted.
    ``combmax``  ``max n_l(d)`` over the lanes listing d.
    ``combmin``  ``min n_l(d)`` over the lanes listing d.
    ``combmed``  the median of ``n_l(d)`` over the lanes listing d (the mean of the
                 two middle values for an even count).
    ``borda``    ``Σ (m - r_l(d) + 1)``; an absent doc gets the mean of the points
                 left, ``(m - n_l + 1) / 2``.
    ``isr``      ``|L(d)| · Σ 1 / r_l(d)²``; absent: not counted.
    ``logisr``   ``ln |L(d)| · Σ 1 / r_l(d)²``; a doc listed by one lane scores 0.

Where ranx (``ranx.fuse``) differs
    ranx floors the min-max, sum, max and z-score denominators at 1e-9, so a constant
    list normalises to 0 under min-max and sum (here 1 and ``1/n_l``: a lane that
    cannot tell its docs apart gives each the same, full or equal, share) and an
    all-negative list is scaled by 1e9 under max (here divided by ``|max|``). ranx's
    CombMAX and CombMIN give an absent doc -1e9 and 1e9 rather than leaving it out
    (the same unless scores pass those values). ranx has no tie rule: its sort may
    leave a lane's tied docs in any order; here they are ordered by the tie rule
    before ranks are read, so a lane means one ranking whatever its file's order.

References
----------
- Fox, E. A. & Shaw, J. A. (1994). Combination of multiple searches. *TREC-2*, NIST
  SP 500-215, 243-252. (CombSUM, CombMNZ, CombANZ, CombMAX, CombMIN, CombMED)
- Bruch, S., Gai, S. & Ingber, A. (2023). An analysis of fusion functions for hybrid
  retrieval. *ACM TOIS* 42(1), article 20. (weighted sums of normalised scores)
- Aslam, J. A. & Montague, M. (2001). Models for metasearch. *SIGIR 2001*, 276-284.
  (Borda fusion)
- Cormack, G. V., Clarke, C. L. A. & Büttcher, S. (2009). Reciprocal rank fusion
  outperforms Condorcet and individual rank learning methods. *SIGIR 2009*, 758-759.
  (RRF; weighted RRF weights its terms)
- Mourão, A., Martins, F. & Magalhães, J. (2015). Multimodal medical information
  retrieval with unsupervised rank fusion. *Computerized Medical Imaging and
  Graphics* 39, 35-45. (ISR and log-ISR)
- Montague, M. & Aslam, J. A. (2001). Relevance score normalization for metasearch.
  *CIKM 2001*, 427-433. (min-max, sum and z-score normalisation)
- Renda, M. E. & Straccia, U. (2003). Web metasearch: rank vs. score based rank
  aggregation methods. *SAC 2003*, 841-846. (rank and Borda normalisation)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..measures.portable import log_int
from ..ranking.ranks import RankedLane

__all__ = ["METHODS", "NORMS", "RANK_METHODS", "WEIGHTED", "FuseSpec", "parse_fuse", "parse_fuse_list", "normalise",
           "fused_scores",
           "check_weights", "weighted_sum"]


class Union(Protocol):
    """The union of the lanes' docs per query (``methods._Union``): qid-grouped rows."""

    @property
    def qid(self) -> NDArray[np.int32]: ...

    @property
    def offsets(self) -> NDArray[np.int64]: ...

    @property
    def size(self) -> int: ...

    def column(self, lane_index: int, values: np.ndarray, fill: float, dtype: type[np.generic]) -> np.ndarray: ...

#: Methods that read ranks only (no normalisation).
RANK_METHODS = ("rrf", "wrrf", "borda", "isr", "logisr")
#: Methods with the constant k (``1/(k + rank)``): their fused lane changes with the k slider.
K_METHODS = ("rrf", "wrrf")
#: Methods that combine normalised scores.
SCORE_METHODS = ("wsum", "combsum", "combmnz", "combanz", "combmax", "combmin", "combmed")
METHODS = RANK_METHODS + SCORE_METHODS
#: Methods with one weight per lane.
WEIGHTED = ("wrrf", "wsum")
NORMS = ("minmax", "max", "sum", "zmuv", "rank", "borda", "none")
DEFAULT_NORM = "minmax"

#: One line per method: its formula and what an absent doc contributes (the module docstring says more).
DEFINITIONS = {
    "rrf": "sum over lanes of 1/(k + rank); an absent doc adds nothing",
    "wrrf": "sum over lanes of w/(k + rank); an absent doc adds nothing",
    "wsum": "sum over lanes of w * normalised score; an absent doc adds nothing",
    "combsum": "sum of normalised scores; an absent doc adds nothing",
    "combmnz": "sum of normalised scores times the number of lanes listing the doc",
    "combanz": "sum of normalised scores divided by the number of lanes listing the doc",
    "combmax": "largest normalised score among the lanes listing the doc",
    "combmin": "smallest normalised score among the lanes listing the doc",
    "combmed": "median normalised score among the lanes listing the doc",
    "borda": "sum over lanes of m - rank + 1 (m candidates); an absent doc gets the mean of the points left",
    "isr": "sum of 1/rank^2 times the number of lanes listing the doc",
    "logisr": "sum of 1/rank^2 times ln(number of lanes listing the doc); one lane alone scores 0",
}
NORM_DEFINITIONS = {
    "minmax": "(s - min)/(max - min) per lane and query; a constant list gives 1",
    "max": "s/|max| per lane and query; a maximum of 0 leaves the list as it is",
    "sum": "(s - min)/sum(s - min) per lane and query; a constant list gives 1/n",
    "zmuv": "(s - mean)/sd (population sd) per lane and query; a constant list gives 0",
    "rank": "1 - (rank - 1)/n per lane and query",
    "borda": "1 - (rank - 1)/m over the query's m candidates; an absent doc gets the mean of the positions left",
    "none": "the raw scores",
}

_METHOD_ALIASES = {
    "comb_sum": "combsum", "comb_mnz": "combmnz", "comb_anz": "combanz", "comb_max": "combmax",
    "comb_min": "combmin", "comb_med": "combmed", "bordafuse": "borda", "log_isr": "logisr", "log-isr": "logisr",
    "weighted_rrf": "wrrf", "weighted-rrf": "wrrf",
}
_NORM_ALIASES = {"min-max": "minmax", "min_max": "minmax", "z-score": "zmuv", "zscore": "zmuv", "z": "zmuv"}


@dataclass(frozen=True)
class FuseSpec:
    """One fusion method and its normalisation (``None`` for a rank method)."""

    method: str
    norm: str | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown fusion method {self.method!r}")
        if (self.norm is None) != (self.method in RANK_METHODS) or (self.norm is not None and self.norm not in NORMS):
            raise ValueError(f"fusion method {self.method!r} with normalisation {self.norm!r}")

    @property
    def name(self) -> str:
        """The fused lane's name: ``METHOD`` or ``METHOD:NORM``."""
        return self.method if self.norm is None else f"{self.method}:{self.norm}"

    @property
    def definition(self) -> str:
        """The method's one-line definition, with its normalisation's."""
        text = DEFINITIONS[self.method]
        return text if self.norm is None else f"{text}; normalised by {self.norm}: {NORM_DEFINITIONS[self.norm]}"

    @property
    def weighted(self) -> bool:
        return self.method in WEIGHTED


def parse_fuse(text: str, option: str = "--fuse") -> FuseSpec:
    """``METHOD[:NORM]`` (case-insensitive; ranx's spellings ``comb_mnz``, ``min-max``,
    ``log_isr`` are accepted) as a :class:`FuseSpec`; one-line ``InputError`` otherwise."""
    raw = str(text).strip().lower()
    method, sep, norm = raw.partition(":")
    method = _METHOD_ALIASES.get(method, method)
    if method not in METHODS:
        raise InputError(f"unknown fusion method {method!r} in {text!r}; known: {', '.join(METHODS)}", option)
    if method in RANK_METHODS:
        if sep:
            raise InputError(f"{method} reads ranks and takes no normalisation (got {text!r})", option)
        return FuseSpec(method)
    norm = _NORM_ALIASES.get(norm, norm) if sep else DEFAULT_NORM
    if norm not in NORMS:
        raise InputError(f"unknown normalisation {norm!r} in {text!r}; known: {', '.join(NORMS)}", option)
    return FuseSpec(method, norm)


def parse_fuse_list(texts: Sequence[str], option: str = "--fuse") -> tuple[str, ...]:
    """The canonical names of several ``METHOD[:NORM]`` (in order, each once): what
    ``LoadSettings.fuse`` holds. ``rrf`` is refused: the rrf lane is added whenever two
    or more lanes are loaded, unchanged."""
    out: list[str] = []
    for text in texts:
        spec = parse_fuse(text, option)
        if spec.method == "rrf":
            raise InputError("the rrf lane is added whenever two or more lanes are loaded; "
                             "--fuse names the other methods (wrrf for weighted RRF)", option)
        if spec.name in out:
            raise InputError(f"{spec.name} given twice", option)
        out.append(spec.name)
    return tuple(out)


# ----------------------------------------------------------------------- normalisation


def _segments(lane: RankedLane) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(row counts of the non-empty queries, their first rows, count of each row's query)."""
    counts = np.diff(lane.offsets)
    nz = np.flatnonzero(counts)
    return counts[nz], lane.offsets[nz], np.repeat(counts[nz], counts[nz])


def normalise(lane: RankedLane, norm: str, candidates: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """The normalised score of every row of ``lane`` (module conventions).

    ``candidates`` (per query code, ``m``) is needed by ``borda`` only; the value of an
    absent doc under ``borda`` is :func:`borda_absent`."""
    n = lane.n_rows
    if n == 0:
        return np.zeros(0)
    s = lane.score
    counts, starts, n_r = _segments(lane)
    if norm == "none":
        return s.astype(np.float64, copy=True)
    if norm == "rank":
        out: NDArray[np.float64] = 1.0 - (lane.rank - 1) / n_r
        return out
    if norm == "borda":
        assert candidates is not None  # the union's size per query
        m = candidates[lane.qid].astype(np.float64)
        out = 1.0 - (lane.rank - 1) / m
        return out
    if norm in ("minmax", "sum"):
        lo = np.repeat(np.minimum.reduceat(s, starts), counts)
        d = s - lo
        if norm == "minmax":
            span = np.repeat(np.maximum.reduceat(s, starts), counts) - lo
        else:
            span = np.repeat(np.add.reduceat(d, starts), counts)
        out = np.ones(n) if norm == "minmax" else 1.0 / n_r  # a constant list (span 0)
        var = span > 0
        out[var] = d[var] / span[var]
        return out
    if norm == "max":
        hi = np.abs(np.repeat(np.maximum.reduceat(s, starts), counts))
        out = s.astype(np.float64, copy=True)
        var = hi > 0
        out[var] = s[var] / hi[var]
        return out
    if norm == "zmuv":
        mean = np.repeat(np.add.reduceat(s, starts) / counts, counts)
        d = s - mean
        sd = np.sqrt(np.repeat(np.add.reduceat(d * d, starts) / counts, counts))
        out = np.zeros(n)
        var = sd > 0
        out[var] = d[var] / sd[var]
        return out
    raise ValueError(f"unknown normalisation {norm!r}")


def borda_absent(n_listed: NDArray[np.int64], candidates: NDArray[np.int64]) -> NDArray[np.float64]:
    """Normalisation ``borda``'s value of a doc absent from a lane of ``n_listed`` docs
    among ``candidates``: the mean of ``1 - (i - 1)/m`` over ``i = n_l + 1 .. m``."""
    m = np.maximum(candidates, 1).astype(np.float64)
    out: NDArray[np.float64] = 0.5 - (n_listed - 1) / (2.0 * m)
    return out


# ---------------------------------------------------------------------------- methods


def check_weights(weights: Sequence[float], n_lanes: int) -> tuple[float, ...]:
    """One finite weight >= 0 per lane, not all 0."""
    w = tuple(float(x) for x in weights)
    if len(w) != n_lanes:
        raise ValueError(f"{len(w)} weights for {n_lanes} lanes")
    if not all(math.isfinite(x) and x >= 0 for x in w) or not any(x > 0 for x in w):
        raise ValueError(f"weights must be finite, >= 0 and not all 0: {w}")
    return w


def weighted_sum(columns: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Σ w_l · n_l in lane order, zero weights skipped (exact); the one formula for
    convex fusion and every weighted method, used by the calibration grid alike."""
    out = None
    for col, w in zip(columns, weights):
        if w == 0.0:
            continue
        if out is None:
            out = col * w
        else:
            out += col * w
    assert out is not None  # check_weights: some weight is > 0
    return out


def _weights_of(weights: Sequence[float] | None, n_lanes: int, spec: FuseSpec) -> tuple[float, ...] | None:
    if weights is None:
        return tuple(1.0 / n_lanes for _ in range(n_lanes)) if spec.weighted else None
    if not spec.weighted:
        raise ValueError(f"{spec.name} takes no weights")
    return check_weights(weights, n_lanes)


@dataclass(frozen=True)
class _Terms:
    """Every lane's term of every union row: ``cols[l]`` (0.0 where lane l does not list
    the doc, unless a Borda rule filled it in) and ``present[l]`` (lane l lists it, or was
    filled in)."""

    cols: tuple[NDArray[np.float64], ...]
    present: tuple[NDArray[np.bool_], ...]

    def count(self) -> NDArray[np.float64]:
        """|L(d)|: the number of lanes listing each row's doc."""
        out = np.zeros(self.cols[0].shape[0])
        for p in self.present:
            out += p
        return out

    def total(self, weights: Sequence[float] | None = None) -> NDArray[np.float64]:
        """``Σ (w_l ·) term_l`` in lane order; a zero weight's term is skipped (exact:
        ``x + 0 == x``), the arithmetic of the convex lane."""
        if weights is not None:
            return weighted_sum(self.cols, weights)
        out = self.cols[0].copy()
        for c in self.cols[1:]:
            out += c
        return out

    def among_listed(self, reduce: str) -> NDArray[np.float64]:
        """max, min or median of the terms of the lanes listing each row's doc."""
        stack = np.stack(self.cols, axis=1)
        held = np.stack(self.present, axis=1)
        if reduce == "max":
            out: NDArray[np.float64] = np.where(held, stack, -np.inf).max(axis=1)
        elif reduce == "min":
            out = np.where(held, stack, np.inf).min(axis=1)
        else:
            out = np.nanmedian(np.where(held, stack, np.nan), axis=1) if stack.shape[1] > 1 else stack[:, 0].copy()
        return out


@dataclass(frozen=True)
class _Inputs:
    """What a method reads: the union ``u`` of ``lanes``, the candidates per query ``m``,
    RRF's ``k``, the weights (a weighted method) and the normalisation (a score method)."""

    u: Union
    lanes: tuple[RankedLane, ...]
    m: NDArray[np.int64]
    k: float
    weights: tuple[float, ...] | None
    norm: str | None
    method: str = ""
    cache: dict[tuple[str, str | None, float], _Terms] | None = None  # terms do not depend on the weights

    def _present(self) -> list[NDArray[np.bool_]]:
        return [self.u.column(i, np.ones(lane.n_rows, dtype=bool), False, np.bool_) for i, lane in enumerate(self.lanes)]

    def _fill(self, cols: list[NDArray[np.float64]], present: list[NDArray[np.bool_]],
              absent_value: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]]) -> None:
        """Give each doc absent from a lane ``absent_value(n_l, m)`` there; it then counts as listed."""
        for i, lane in enumerate(self.lanes):
            listed = np.diff(lane.offsets)
            absent = ~present[i]
            q = self.u.qid[absent]
            cols[i][absent] = absent_value(listed[q], self.m[q])
            present[i] = np.ones(self.u.size, dtype=bool)

    def rank_terms(self, term: Callable[[NDArray[np.float64], NDArray[np.int32]], NDArray[np.float64]],
                   absent_value: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]] | None = None
                   ) -> _Terms:
        """``term(rank, query code)`` of every listed doc (``absent_value`` fills the others in)."""
        key = (self.method, None, self.k)
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        cols = [self.u.column(i, term(lane.rank.astype(np.float64), lane.qid), 0.0, np.float64)
                for i, lane in enumerate(self.lanes)]
        present = self._present()
        if absent_value is not None:
            self._fill(cols, present, absent_value)
        return self._keep(key, _Terms(tuple(cols), tuple(present)))

    def _keep(self, key: tuple[str, str | None, float], terms: _Terms) -> _Terms:
        if self.cache is not None:
            self.cache[key] = terms
        return terms

    def score_terms(self) -> _Terms:
        """Every listed doc's normalised score (:func:`normalise`; ``borda`` fills the others in)."""
        assert self.norm is not None  # a score method
        key = ("", self.norm, 0.0)
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        cols = [self.u.column(i, normalise(lane, self.norm, self.m), 0.0, np.float64) for i, lane in enumerate(self.lanes)]
        present = self._present()
        if self.norm == "borda":
            self._fill(cols, present, borda_absent)
        return self._keep(key, _Terms(tuple(cols), tuple(present)))


# Each method below: its definition, what a doc absent from a lane contributes, and its source.


def _wrrf(x: _Inputs) -> NDArray[np.float64]:
    """Weighted reciprocal rank fusion, ``Σ_l w_l / (k + r_l(d))``; an absent doc adds
    nothing. With equal weights it orders as RRF. Cormack, Clarke & Büttcher (2009),
    SIGIR 758-759, each lane's term weighted."""
    return x.rank_terms(lambda r, q: 1.0 / (x.k + r)).total(x.weights)


def _rrf(x: _Inputs) -> NDArray[np.float64]:
    """Reciprocal rank fusion, ``Σ_l 1 / (k + r_l(d))`` added in lane order; an absent doc
    adds nothing. Cormack, Clarke & Büttcher (2009). (``methods.rrf`` is the rrf lane.)"""
    return x.rank_terms(lambda r, q: 1.0 / (x.k + r)).total()


def _wsum(x: _Inputs) -> NDArray[np.float64]:
    """Weighted sum of normalised scores, ``Σ_l w_l · n_l(d)``; an absent doc adds nothing
    (``wsum:minmax`` is the convex lane). Bruch, Gai & Ingber (2023), ACM TOIS 42(1)."""
    return x.score_terms().total(x.weights)


def _combsum(x: _Inputs) -> NDArray[np.float64]:
    """CombSUM, ``Σ_l n_l(d)``; an absent doc adds nothing. Fox & Shaw (1994), TREC-2."""
    return x.score_terms().total()


def _combmnz(x: _Inputs) -> NDArray[np.float64]:
    """CombMNZ, ``|L(d)| · Σ_l n_l(d)``; an absent lane neither adds nor counts. Fox & Shaw (1994)."""
    t = x.score_terms()
    return t.total() * t.count()


def _combanz(x: _Inputs) -> NDArray[np.float64]:
    """CombANZ, ``Σ_l n_l(d) / |L(d)|`` (the mean over the lanes listing d); an absent lane
    neither adds nor counts. Fox & Shaw (1994)."""
    t = x.score_terms()
    return t.total() / t.count()


def _combmax(x: _Inputs) -> NDArray[np.float64]:
    """CombMAX, ``max_l n_l(d)`` over the lanes listing d (absent lanes left out). Fox & Shaw (1994)."""
    return x.score_terms().among_listed("max")


def _combmin(x: _Inputs) -> NDArray[np.float64]:
    """CombMIN, ``min_l n_l(d)`` over the lanes listing d (absent lanes left out). Fox & Shaw (1994)."""
    return x.score_terms().among_listed("min")


def _combmed(x: _Inputs) -> NDArray[np.float64]:
    """CombMED, the median of ``n_l(d)`` over the lanes listing d (the mean of the two middle
    values for an even count; absent lanes left out). Fox & Shaw (1994)."""
    return x.score_terms().among_listed("median")


def _borda(x: _Inputs) -> NDArray[np.float64]:
    """Borda fusion, ``Σ_l (m - r_l(d) + 1)`` over the m candidates; a doc absent from a lane
    of n_l docs gets the mean of the points left there, ``(m - n_l + 1) / 2``. Aslam &
    Montague (2001), SIGIR 276-284."""
    return x.rank_terms(lambda r, q: x.m[q] - r + 1.0, lambda n, m: (m - n + 1) / 2.0).total()


def _isr(x: _Inputs) -> NDArray[np.float64]:
    """Inverse square rank, ``|L(d)| · Σ_l 1 / r_l(d)²``; an absent lane neither adds nor
    counts. Mourão, Martins & Magalhães (2015), Comput. Med. Imaging Graph. 39, 35-45."""
    t = x.rank_terms(lambda r, q: 1.0 / r**2)
    return t.total() * t.count()


def _logisr(x: _Inputs) -> NDArray[np.float64]:
    """Log inverse square rank, ``ln|L(d)| · Σ_l 1 / r_l(d)²``; an absent lane neither adds
    nor counts, so a doc listed by one lane scores 0. Mourão, Martins & Magalhães (2015)."""
    t = x.rank_terms(lambda r, q: 1.0 / r**2)
    return t.total() * log_int(t.count())


_METHOD_FUNCTIONS: dict[str, Callable[[_Inputs], NDArray[np.float64]]] = {
    "rrf": _rrf, "wrrf": _wrrf, "wsum": _wsum, "combsum": _combsum, "combmnz": _combmnz, "combanz": _combanz,
    "combmax": _combmax, "combmin": _combmin, "combmed": _combmed, "borda": _borda, "isr": _isr, "logisr": _logisr,
}


def fused_scores(u: Union, lanes: Sequence[RankedLane], spec: FuseSpec, weights: Sequence[float] | None = None,
                 k: float = 60, cache: dict[tuple[str, str | None, float], _Terms] | None = None
                 ) -> NDArray[np.float64]:
    """The fused score of every row of the union ``u`` of ``lanes`` by ``spec``'s method
    (each method's function states its definition, absent-doc rule and source).

    ``weights`` (one per lane, >= 0, not all 0) only for a weighted method; None gives
    each lane ``1/L``. ``cache`` (a dict kept by the caller for the same ``u`` and
    ``lanes``) keeps each lane's terms across calls with other weights."""
    w = _weights_of(weights, len(lanes), spec)
    if spec.method in K_METHODS and not (k >= 0 and math.isfinite(k)):
        raise InputError(f"--rrf-k must be a finite number >= 0, got {k!r}", "--rrf-k")
    x = _Inputs(u, tuple(lanes), np.diff(u.offsets), float(k), w, spec.norm, spec.method, cache)
    return _METHOD_FUNCTIONS[spec.method](x)
