"""The not-found gate: score floors, margins, mutual nearest neighbours, FNIR and FPIR.

SPEC §6 (lessons 09–11). numpy and the standard library, Wilson intervals from
:mod:`.intervals`; never imports textual.

Conventions
-----------
* Every per-query array is indexed by **query code** (length ``n_queries`` of the gate
  lane's ``offsets``). Query sets (positives, each negative set, the queries mutual
  lists are built from) are boolean masks over query codes.
* The gate lane is a :class:`~rankscope_tui.kernel.ranking.RankedLane`, already ordered
  by trec_eval's rule and cut to depth, so "position 1" is row ``offsets[q]``.
* Top score ``t(q)``: the score at position 1; ``-inf`` when the lane lacks q or its list
  is empty. Such a query is **always rejected**, whatever the floor (even a floor of
  ``-inf``): acceptance is ``present & (t >= floor) & conditions``.
* Margin: ``t1 - t2`` (positions 1 and 2); exactly 0 on a tie; ``+inf`` for a lone hit
  (so a lone hit passes every margin); ``-inf`` for an absent query.
* A query is accepted at floor f iff ``t >= f`` (a floor exactly at a score accepts it).
* Outcomes (1:N identification convention): a negative accepted is a false accept,
  FPIR = accepted negatives / negatives. A positive is *correct* iff accepted with a
  relevant top hit; otherwise it is ``rejected`` (including a relevant top hit below the
  floor, and an absent positive) or ``wrong_accept`` (accepted, top hit not relevant).
  FNIR = (rejected + wrong_accept) / positives.
* Proportions carry Wilson score intervals (never a normal-approximation tail: top
  scores are maxima and skewed, and 0/n must not collapse to a zero-width interval).
* Results are frozen dataclasses; ``as_dict()`` gives strict JSON (``allow_nan=False``):
  ±inf and undefined values are ``None`` with a sibling ``<key>_reason``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Mapping

import numpy as np

from . import intervals as _iv
from .errors import InputError
from .ranking import RankedLane, distinct

__all__ = [
    "Rate",
    "TopScores",
    "top_scores",
    "NullFloor",
    "null_floor",
    "null_floors",
    "ConformalFloor",
    "conformal_k",
    "conformal_min_n",
    "conformal_floor",
    "MutualNN",
    "mutual_nn",
    "batch_size_warning",
    "Outcome",
    "GateOutcome",
    "gate_outcome",
    "Sweep",
    "sweep",
    "sweep_brute_force",
    "margin_sweep",
    "OperatingPoint",
    "operating_point",
    "OperatingMargin",
    "operating_margin",
    "negatives_needed",
    "rule_of_three_table",
    "wilson_interval",
]

INF = math.inf


# ---------------------------------------------------------------------------
# Wilson score interval and small JSON helpers
# ---------------------------------------------------------------------------

def _z(confidence: float) -> float:
    """Two-sided normal quantile z = Φ⁻¹(1 − (1 − c)/2) (raises InputError unless 0 < c < 1)."""
    return _iv.z_value(confidence)


def _wilson_arrays(k, n, confidence: float):
    """Vectorised Wilson interval: (point, low, high) arrays; NaN where n == 0.

    Same operations in the same order as :func:`intervals.wilson`, so a sweep's arrays
    and the scalar interval quoted at its operating point agree bit for bit (the
    conservative choice and the printed upper bound can never disagree).
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = _z(confidence)
    z2 = z * z
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
        low = np.where(k == 0, 0.0, np.maximum(0.0, centre - half))
        high = np.where(k == n, 1.0, np.minimum(1.0, centre + half))
    empty = n == 0
    p = np.where(empty, np.nan, p)
    low = np.where(empty, np.nan, low)
    high = np.where(empty, np.nan, high)
    return p, low, high


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """(low, high) of :func:`intervals.wilson` as floats; NaNs when n == 0."""
    iv = _iv.wilson(int(k), int(n), confidence)
    return (math.nan, math.nan) if iv.low is None else (float(iv.low), float(iv.high))


def _num(x) -> float | None:
    """A finite float, or None (strict JSON has no inf/nan)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _put(d: dict, key: str, x, reason: str | None = None) -> None:
    """d[key] = finite number, or None plus d[key + '_reason'] explaining why."""
    v = _num(x)
    d[key] = v
    if v is None:
        if reason is None:
            if x is None or (isinstance(x, float) and math.isnan(x)):
                reason = "undefined"
            elif float(x) > 0:
                reason = "+inf"
            else:
                reason = "-inf"
        d[key + "_reason"] = reason


def _num_list(a: np.ndarray) -> list:
    return [v if math.isfinite(v) else None for v in np.asarray(a, dtype=np.float64).tolist()]


@dataclass(frozen=True)
class Rate:
    """k events in n trials with a Wilson interval at ``confidence`` (intervals.wilson)."""

    k: int
    n: int
    confidence: float = 0.95

    @property
    def wilson(self) -> "_iv.Interval":
        return _iv.wilson(self.k, self.n, self.confidence)

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.k, self.n, self.confidence)

    @property
    def low(self) -> float:
        return self.interval[0]

    @property
    def high(self) -> float:
        return self.interval[1]

    def as_dict(self) -> dict:
        """``k`` plus the Interval's strict-JSON dict (value, low, high, method, n, level)."""
        return {"k": int(self.k), **self.wilson.as_dict()}


# ---------------------------------------------------------------------------
# Per-query top scores, margins, relevance of the top hit, first relevant hit
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class TopScores:
    """Per-query-code view of the gate lane (see module conventions).

    ``first_relevant_score`` is the score of the first relevant hit within depth
    (``-inf`` when none is retrieved or the query is absent); ``first_relevant_rank`` is
    its 1-based rank (0 = miss). ``top_doc`` is -1 for an absent query.
    """

    lane: str
    present: np.ndarray  # bool
    n_hits: np.ndarray  # int64
    top: np.ndarray  # float64, -inf absent
    second: np.ndarray  # float64, -inf when fewer than 2 hits
    margin: np.ndarray  # float64, +inf lone hit, -inf absent
    top_doc: np.ndarray  # int64, -1 absent
    top_relevant: np.ndarray  # bool
    first_relevant_score: np.ndarray  # float64, -inf miss
    first_relevant_rank: np.ndarray  # int32, 0 miss

    @property
    def n_queries(self) -> int:
        return int(self.present.shape[0])


def top_scores(
    lane: RankedLane,
    judgments=None,
    relevant: int = 1,
    hit_relevant: np.ndarray | None = None,
) -> TopScores:
    """Top score, runner-up, margin, top-hit relevance and first relevant hit per query.

    Relevance of a hit is ``judgments.grade_of(qid, doc) >= relevant`` unless
    ``hit_relevant`` (a bool per lane row) is given — use that for the group level,
    where a hit is relevant when its group is. Vectorised over rows; no loop per query.
    """
    n_q = int(lane.offsets.shape[0] - 1)
    starts = lane.offsets[:-1]
    n_hits = np.diff(lane.offsets).astype(np.int64)
    present = n_hits > 0
    has2 = n_hits >= 2

    top = np.full(n_q, -INF)
    top[present] = lane.score[starts[present]]
    second = np.full(n_q, -INF)
    second[has2] = lane.score[starts[has2] + 1]
    margin = np.full(n_q, -INF)
    margin[present] = INF  # lone hit: infinite gap
    # Equal scores subtract to exactly 0.0, so a tie has margin 0.
    margin[has2] = top[has2] - second[has2]
    top_doc = np.full(n_q, -1, dtype=np.int64)
    top_doc[present] = lane.doc[starts[present]]

    if hit_relevant is None:
        if judgments is None:
            raise ValueError("top_scores needs judgments or hit_relevant")
        hit_relevant = judgments.grade_of(lane.qid, lane.doc) >= relevant
    hit_relevant = np.asarray(hit_relevant, dtype=bool)
    if hit_relevant.shape[0] != lane.n_rows:
        raise ValueError("hit_relevant must have one entry per lane row")

    top_relevant = np.zeros(n_q, dtype=bool)
    top_relevant[present] = hit_relevant[starts[present]]

    # First relevant row per query: rows are sorted by qid then rank, so it is the
    # first relevant row of each run of equal qid codes.
    rel_rows = np.flatnonzero(hit_relevant)
    first_score = np.full(n_q, -INF)
    first_rank = np.zeros(n_q, dtype=np.int32)
    if rel_rows.size:
        rq = lane.qid[rel_rows]
        first = np.ones(rel_rows.size, dtype=bool)
        first[1:] = rq[1:] != rq[:-1]
        rows = rel_rows[first]
        first_score[lane.qid[rows]] = lane.score[rows]
        first_rank[lane.qid[rows]] = lane.rank[rows]

    return TopScores(lane.name, present, n_hits, top, second, margin, top_doc, top_relevant, first_score, first_rank)


def _mask(m, n: int, what: str) -> np.ndarray:
    m = np.asarray(m)
    if m.dtype != bool:  # accept an array of query codes too
        out = np.zeros(n, dtype=bool)
        out[m.astype(np.int64)] = True
        return out
    if m.shape[0] != n:
        raise ValueError(f"{what}: mask has {m.shape[0]} entries, expected {n} query codes")
    return m


def _neg_sets(negatives, n: int) -> dict[str, np.ndarray]:
    if negatives is None:
        return {}
    if not isinstance(negatives, Mapping):
        negatives = {"in_domain": negatives}
    return {str(k): _mask(v, n, f"negatives[{k}]") for k, v in negatives.items()}


# ---------------------------------------------------------------------------
# Null floor (lesson 09)
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class NullFloor:
    """mean + 3·sd (ddof = 1) of the top scores of one negative set's present queries.

    ``floor`` is None when fewer than 2 negatives are present (``reason`` says so).
    ``fpir`` is its empirical FPIR on every negative set given, with Wilson intervals.
    """

    negative_set: str
    n: int  # negatives present in the gate lane (the sample the floor is fitted on)
    n_absent: int  # negatives of the set missing from the gate lane (never accepted)
    mean: float | None
    sd: float | None
    floor: float | None
    reason: str | None
    fpir: dict[str, Rate] = field(default_factory=dict)

    def as_dict(self) -> dict:
        d: dict = {"negative_set": self.negative_set, "n": self.n, "n_absent": self.n_absent, "method": "mean + 3*sd of negative top scores (sample sd, ddof=1)"}
        _put(d, "mean", self.mean, self.reason)
        _put(d, "sd", self.sd, self.reason)
        _put(d, "floor", self.floor, self.reason)
        d["fpir"] = {k: r.as_dict() for k, r in self.fpir.items()}
        d["note"] = (
            "a top score below the floor is relative evidence only; the floor is a property of the "
            "negatives it was fitted on (negatives from another domain give a floor that looks safe and is not)"
        )
        return d


def null_floor(
    top: TopScores,
    negatives: np.ndarray,
    name: str = "in_domain",
    evaluate_on: Mapping[str, np.ndarray] | None = None,
    confidence: float = 0.95,
) -> NullFloor:
    """Null floor fitted on one negative set, with its FPIR on each set in ``evaluate_on``
    (default: the fitting set itself)."""
    n_q = top.n_queries
    neg = _mask(negatives, n_q, "negatives")
    here = neg & top.present
    vals = top.top[here]
    n = int(vals.size)
    n_absent = int(np.count_nonzero(neg & ~top.present))
    sets = _neg_sets(evaluate_on, n_q) if evaluate_on is not None else {name: neg}
    if n < 2:
        reason = f"needs at least 2 negatives present in the gate lane, have {n}"
        fpir = {}
        return NullFloor(name, n, n_absent, None, None, None, reason, fpir)
    mean = float(vals.mean())
    with np.errstate(over="ignore"):  # absurd scores (~1e300) give an infinite sd, reported as such
        sd = float(vals.std(ddof=1))
    floor = mean + 3.0 * sd
    fpir = {k: Rate(int(np.count_nonzero(m & top.present & (top.top >= floor))), int(np.count_nonzero(m)), confidence) for k, m in sets.items()}
    return NullFloor(name, n, n_absent, mean, sd, floor, None, fpir)


def null_floors(top: TopScores, negatives: Mapping[str, np.ndarray], confidence: float = 0.95) -> dict[str, NullFloor]:
    """One null floor per negative set, each evaluated on every set (the lesson-09 table:
    an out-of-domain floor quoted on in-domain negatives, and vice versa)."""
    sets = _neg_sets(negatives, top.n_queries)
    return {k: null_floor(top, m, k, sets, confidence) for k, m in sets.items()}


# ---------------------------------------------------------------------------
# Conformal floor (lesson 10)
# ---------------------------------------------------------------------------

def _alpha(alpha) -> Fraction:
    try:
        a = Fraction(str(alpha))
    except (ValueError, ZeroDivisionError) as exc:
        raise InputError(f"miss rate must be a number in (0, 1), got {alpha!r}") from exc
    if not 0 < a < 1:
        raise InputError(f"miss rate must be in (0, 1), got {alpha!r}")
    return a


def conformal_k(n: int, alpha) -> int:
    """k = ⌈(1 − α)(n + 1)⌉ in exact rational arithmetic (α read via ``str``: 0.18 is 18/100)."""
    a = _alpha(alpha)
    return math.ceil((1 - a) * (n + 1))


def conformal_min_n(alpha) -> int:
    """Smallest n with k ≤ n, i.e. n ≥ 1/α − 1 (19 at α = 0.05)."""
    a = _alpha(alpha)
    return max(1, math.ceil(1 / a - 1))


@dataclass(frozen=True)
class ConformalFloor:
    """Split-conformal floor on the score of the first relevant hit.

    ``floor`` = −s_(k) with s_i = −(first relevant score of calibration positive i), or
    ``-inf`` (accept everything, decide nothing) when k > n or s_(k) = +inf.
    """

    alpha: str
    n: int  # calibration positives (all of them, absent ones included)
    n_unretrieved: int  # positives with no relevant hit within depth (s = +inf)
    k: int
    floor: float  # may be -inf
    reason: str | None
    min_n: int
    in_sample: bool = False

    BOUNDS = (
        "on average over calibration draws, the share of new in-distribution positives whose first "
        "relevant hit is missing or scores below the floor (rejected positives) is at most alpha; it "
        "bounds neither wrong top hits (wrong accepts) nor false accepts of negatives"
    )

    def as_dict(self) -> dict:
        d: dict = {
            "method": "split conformal, k = ceil((1 - alpha)(n + 1)) exact, floor = -s_(k)",
            "alpha": self.alpha,
            "n": self.n,
            "n_unretrieved": self.n_unretrieved,
            "k": self.k,
            "min_n": self.min_n,
        }
        _put(d, "floor", self.floor, self.reason or "-inf")
        if self.reason:
            d["reason"] = self.reason
        d["bounds"] = self.BOUNDS
        if self.in_sample:
            d["label"] = "in-sample, no guarantee"
        return d


def conformal_floor(top: TopScores, positives: np.ndarray, miss_rate=0.05, in_sample: bool = False) -> ConformalFloor:
    """Conformal floor over **every** calibration positive (SPEC §6).

    Never falls back to the sample minimum (coverage n/(n+1) only): when the order
    statistic does not exist or is +inf the floor is -inf and ``reason`` says why.
    """
    a = _alpha(miss_rate)
    pos = _mask(positives, top.n_queries, "positives")
    # s = -(first relevant score); +inf for an unretrieved or absent positive.
    s = -top.first_relevant_score[pos]
    n = int(s.size)
    n_unret = int(np.count_nonzero(~np.isfinite(s)))
    k = math.ceil((1 - a) * (n + 1))
    min_n = max(1, math.ceil(1 / a - 1))
    if k > n:
        reason = (
            f"k = {k} > n = {n}: no finite floor carries the guarantee at alpha = {a} "
            f"(the sample minimum would cover only n/(n+1)); needs n >= 1/alpha - 1 = {min_n} positives"
        )
        return ConformalFloor(str(miss_rate), n, n_unret, k, -INF, reason, min_n, in_sample)
    s_k = float(np.partition(s, k - 1)[k - 1])
    if not math.isfinite(s_k):
        reason = (
            f"s_(k) = +inf: {n_unret} of {n} positives have no relevant hit within depth, more than "
            f"n - k = {n - k}; no finite floor carries the guarantee (more positives do not help; "
            f"retrieval depth or recall must)"
        )
        return ConformalFloor(str(miss_rate), n, n_unret, k, -INF, reason, min_n, in_sample)
    return ConformalFloor(str(miss_rate), n, n_unret, k, -s_k, None, min_n, in_sample)


# ---------------------------------------------------------------------------
# Mutual nearest neighbour (lesson 11)
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MutualNN:
    """Reverse lists L(d) from the gate lane, read by rank (scores never compared
    across queries).

    ``row_position[i]`` is the position of row i's query in L(doc_i) and
    ``row_list_size[i]`` is |L(doc_i)| (0 for rows of queries outside ``among``).
    ``position[q]`` / ``list_size[q]`` are the same for q's top doc (0 when q is absent
    or outside ``among``).

    ``tie_rule``: ``"share"`` (SPEC §6: 1 + #{q' : rank_q'(d) < rank_q(d)}) or ``"count"``
    (#{q' : rank_q'(d) <= rank_q(d)}, ties count against you). Note that under
    ``"share"`` a top doc has rank 1, so position(q) is always 1 and the mutual condition
    on the top doc always passes; ``"count"`` makes it reject hub docs that are the top
    hit of more than r queries.
    """

    row_position: np.ndarray
    row_list_size: np.ndarray
    position: np.ndarray
    list_size: np.ndarray
    among: np.ndarray
    n_queries: int  # queries the lists were built from (in ``among`` and present in the lane)
    tie_rule: str

    def passes(self, r: int) -> np.ndarray:
        """Bool per query code: position(q) <= r for q's top doc (False outside ``among``)."""
        return (self.position >= 1) & (self.position <= r)

    def vacuous(self, r: int, mask: np.ndarray | None = None) -> tuple[int, int]:
        """(queries whose top doc has |L(d)| <= r, queries considered): the condition
        cannot reject those. Default ``mask``: the queries the lists were built from."""
        m = (self.list_size >= 1) if mask is None else (np.asarray(mask, dtype=bool) & (self.list_size >= 1))
        return int(np.count_nonzero(m & (self.list_size <= r))), int(np.count_nonzero(m))

    def summary(self, r: int) -> dict:
        v, n = self.vacuous(r)
        d: dict = {"r": int(r), "tie_rule": self.tie_rule, "built_from": self.n_queries, "vacuous_queries": v}
        _put(d, "vacuous_share", v / n if n else math.nan, None if n else "no queries")
        return d


def mutual_nn(lane: RankedLane, among: np.ndarray, tie_rule: str = "share") -> MutualNN:
    """Build L(d) for every doc from the queries in ``among`` (positives, negatives and
    out-of-domain negatives being evaluated), vectorised: sort hits by (doc, rank)."""
    if tie_rule not in ("share", "count"):
        raise ValueError(f"tie_rule must be 'share' or 'count', got {tie_rule!r}")
    n_q = int(lane.offsets.shape[0] - 1)
    among = _mask(among, n_q, "among")
    rows = np.flatnonzero(among[lane.qid]) if lane.n_rows else np.zeros(0, dtype=np.int64)
    row_pos = np.zeros(lane.n_rows, dtype=np.int64)
    row_size = np.zeros(lane.n_rows, dtype=np.int64)
    if rows.size:
        d = lane.doc[rows]
        rk = lane.rank[rows]
        order = np.lexsort((rk, d))  # doc asc, then rank asc
        ds, rs = d[order], rk[order]
        m = ds.size
        idx = np.arange(m, dtype=np.int64)
        new_doc = np.ones(m, dtype=bool)
        new_doc[1:] = ds[1:] != ds[:-1]
        new_run = new_doc.copy()
        new_run[1:] |= rs[1:] != rs[:-1]
        doc_first = np.maximum.accumulate(np.where(new_doc, idx, 0))
        run_first = np.maximum.accumulate(np.where(new_run, idx, 0))
        doc_id = np.cumsum(new_doc) - 1
        run_id = np.cumsum(new_run) - 1
        doc_size = np.bincount(doc_id)
        run_size = np.bincount(run_id)
        if tie_rule == "share":
            pos = run_first - doc_first + 1
        else:
            pos = run_first + run_size[run_id] - doc_first
        # A doc occurs at most once per query (duplicates are input errors), so rows = queries.
        row_pos[rows[order]] = pos
        row_size[rows[order]] = doc_size[doc_id]
    present = np.diff(lane.offsets) > 0
    tops = lane.offsets[:-1][present]
    position = np.zeros(n_q, dtype=np.int64)
    list_size = np.zeros(n_q, dtype=np.int64)
    position[present] = row_pos[tops]
    list_size[present] = row_size[tops]
    n_built = int(np.count_nonzero(among & present))
    return MutualNN(row_pos, row_size, position, list_size, among, n_built, tie_rule)


def batch_size_warning(calibration_queries: int, evaluation_queries: int) -> str | None:
    """Warning text when the mutual lists were built from batches differing by more than 2×
    (list positions grow with the number of queries, so r does not transfer)."""
    a, b = int(calibration_queries), int(evaluation_queries)
    if min(a, b) <= 0:
        return None if a == b else "mutual: one of the batches is empty"
    if max(a, b) > 2 * min(a, b):
        return f"mutual: calibration lists built from {a} queries, evaluation from {b} (more than 2x apart); r does not transfer"
    return None


# ---------------------------------------------------------------------------
# Gate outcome at one configuration
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """FNIR (with its parts) and FPIR per negative set for one acceptance rule."""

    condition: str
    positives: int
    correct: int
    rejected: int
    wrong_accept: int
    fpir: dict[str, Rate]
    confidence: float = 0.95

    @property
    def fnir(self) -> Rate:
        return Rate(self.rejected + self.wrong_accept, self.positives, self.confidence)

    def as_dict(self) -> dict:
        return {
            "condition": self.condition,
            "positives": self.positives,
            "correct": self.correct,
            "rejected": self.rejected,
            "wrong_accept": self.wrong_accept,
            "fnir": self.fnir.as_dict(),
            "rejected_rate": Rate(self.rejected, self.positives, self.confidence).as_dict(),
            "wrong_accept_rate": Rate(self.wrong_accept, self.positives, self.confidence).as_dict(),
            "fpir": {k: r.as_dict() for k, r in self.fpir.items()},
        }


def _outcome(name: str, accept: np.ndarray, top: TopScores, pos: np.ndarray, negs: dict[str, np.ndarray], confidence: float) -> Outcome:
    n_pos = int(np.count_nonzero(pos))
    acc_pos = accept & pos
    correct = int(np.count_nonzero(acc_pos & top.top_relevant))
    wrong = int(np.count_nonzero(acc_pos & ~top.top_relevant))
    fpir = {k: Rate(int(np.count_nonzero(accept & m)), int(np.count_nonzero(m)), confidence) for k, m in negs.items()}
    return Outcome(name, n_pos, correct, n_pos - correct - wrong, wrong, fpir, confidence)


@dataclass(frozen=True)
class GateOutcome:
    """Each active condition alone, and their AND (``combined``)."""

    floor: float | None
    margin: float | None
    mutual_r: int | None
    alone: dict[str, Outcome]
    combined: Outcome

    def as_dict(self) -> dict:
        d: dict = {}
        if self.floor is None:
            d["floor"] = None
            d["floor_reason"] = "no floor condition"
        else:
            _put(d, "floor", self.floor, "+inf: reject all" if self.floor > 0 else "-inf: accept every retrieved query")
        if self.margin is None:
            d["margin"] = None
            d["margin_reason"] = "no margin condition"
        else:
            _put(d, "margin", self.margin, "+inf: only lone hits pass")
        d["mutual_r"] = self.mutual_r
        d["alone"] = {k: o.as_dict() for k, o in self.alone.items()}
        d["combined"] = self.combined.as_dict()
        return d


def gate_outcome(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    floor: float | None = None,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = 0.95,
) -> GateOutcome:
    """Outcome of the gate ``t >= floor AND margin >= m AND position <= r`` (inactive
    conditions are None). Absent queries are rejected by every condition."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    conds: dict[str, np.ndarray] = {}
    if floor is not None:
        conds["floor"] = top.present & (top.top >= floor)
    if margin is not None:
        conds["margin"] = top.present & (top.margin >= margin)
    if r is not None:
        if mutual is None:
            raise ValueError("mutual r needs a MutualNN (see mutual_nn)")
        conds["mutual"] = top.present & mutual.passes(r)
    combined = top.present.copy()
    for c in conds.values():
        combined &= c
    alone = {k: _outcome(k, c, top, pos, negs, confidence) for k, c in conds.items()}
    name = " AND ".join(conds) if conds else "none (every retrieved query accepted)"
    return GateOutcome(floor, margin, r, alone, _outcome(name, combined, top, pos, negs, confidence))


# ---------------------------------------------------------------------------
# Sweeps (sort once, bisect per candidate)
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Sweep:
    """A sweep over candidate thresholds of one ``variable`` ("floor" or "margin").

    ``threshold`` is ascending and ends with +inf. At threshold x a query is accepted
    iff present, its key (top score or margin) is >= x, and the fixed ``conditions``
    pass. ``accepted[name]`` / ``n_negatives[name]`` per negative set. Wilson
    intervals at ``confidence``.
    """

    variable: str
    conditions: str
    threshold: np.ndarray
    positives: int
    correct: np.ndarray
    wrong_accept: np.ndarray
    rejected: np.ndarray
    accepted: dict[str, np.ndarray]
    n_negatives: dict[str, int]
    confidence: float = 0.95

    @property
    def floor(self) -> np.ndarray:
        return self.threshold

    @property
    def fnir(self) -> np.ndarray:
        return _wilson_arrays(self.rejected + self.wrong_accept, self.positives, self.confidence)[0]

    def fnir_interval(self) -> tuple[np.ndarray, np.ndarray]:
        _, lo, hi = _wilson_arrays(self.rejected + self.wrong_accept, self.positives, self.confidence)
        return lo, hi

    def fpir(self, negative_set: str | None = None) -> np.ndarray:
        name = negative_set or self.default_set
        return _wilson_arrays(self.accepted[name], self.n_negatives[name], self.confidence)[0]

    def fpir_interval(self, negative_set: str | None = None, confidence: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        name = negative_set or self.default_set
        _, lo, hi = _wilson_arrays(self.accepted[name], self.n_negatives[name], confidence or self.confidence)
        return lo, hi

    @property
    def default_set(self) -> str:
        if not self.accepted:
            raise ValueError("the sweep has no negative set")
        return next(iter(self.accepted))

    def __len__(self) -> int:
        return int(self.threshold.shape[0])

    def as_dict(self, max_points: int | None = None) -> dict:
        """Strict-JSON arrays. ``max_points`` thins the curve evenly (always keeping the
        first and last candidates) for report.json; None keeps every candidate."""
        n = len(self)
        idx = np.arange(n)
        if max_points is not None and n > max_points >= 2:
            idx = distinct(np.round(np.linspace(0, n - 1, max_points)).astype(np.int64))
        fnir = self.fnir
        lo, hi = self.fnir_interval()
        d: dict = {
            "variable": self.variable,
            "conditions": self.conditions,
            "candidates": n,
            "points": int(idx.size),
            "confidence": self.confidence,
            "positives": self.positives,
            "threshold": _num_list(self.threshold[idx]),
            "threshold_reason": "the last candidate is +inf, written as null"
            + (" (reject all)" if self.variable == "floor" else " (only lone hits pass)"),
            "correct": self.correct[idx].tolist(),
            "rejected": self.rejected[idx].tolist(),
            "wrong_accept": self.wrong_accept[idx].tolist(),
            "fnir": _num_list(fnir[idx]),
            "fnir_low": _num_list(lo[idx]),
            "fnir_high": _num_list(hi[idx]),
            "negatives": {},
        }
        if not self.positives:
            d["fnir_reason"] = "no positives"
        for name, acc in self.accepted.items():
            f = self.fpir(name)
            flo, fhi = self.fpir_interval(name)
            nd = {"n": self.n_negatives[name], "accepted": acc[idx].tolist(), "fpir": _num_list(f[idx]), "fpir_low": _num_list(flo[idx]), "fpir_high": _num_list(fhi[idx])}
            if not self.n_negatives[name]:
                nd["fpir_reason"] = "no negatives"
            d["negatives"][name] = nd
        return d


def _candidates(key: np.ndarray, evaluated: np.ndarray) -> np.ndarray:
    vals = key[evaluated]
    vals = vals[np.isfinite(vals)]
    return np.concatenate([distinct(vals), [INF]])


def _at_least(sorted_vals: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """#{v >= x} for each x: one bisection per threshold on a sorted array."""
    return sorted_vals.size - np.searchsorted(sorted_vals, thresholds, side="left")


def _sweep(variable: str, key: np.ndarray, ok: np.ndarray, cond_name: str, top: TopScores, pos, negs, confidence, candidates=None) -> Sweep:
    evaluated = pos.copy()
    for m in negs.values():
        evaluated |= m
    cand = _candidates(key, evaluated & top.present) if candidates is None else np.asarray(candidates, dtype=np.float64)
    live = ok & top.present  # absent queries are never accepted
    n_pos = int(np.count_nonzero(pos))
    correct = _at_least(np.sort(key[live & pos & top.top_relevant]), cand).astype(np.int64)
    wrong = _at_least(np.sort(key[live & pos & ~top.top_relevant]), cand).astype(np.int64)
    accepted = {k: _at_least(np.sort(key[live & m]), cand).astype(np.int64) for k, m in negs.items()}
    n_neg = {k: int(np.count_nonzero(m)) for k, m in negs.items()}
    return Sweep(variable, cond_name, cand, n_pos, correct, wrong, n_pos - correct - wrong, accepted, n_neg, confidence)


def _fixed_conditions(top: TopScores, margin, mutual, r) -> tuple[np.ndarray, str]:
    ok = np.ones(top.n_queries, dtype=bool)
    names = []
    if margin is not None:
        ok &= top.margin >= margin
        names.append(f"margin >= {margin}")
    if r is not None:
        if mutual is None:
            raise ValueError("mutual r needs a MutualNN (see mutual_nn)")
        ok &= mutual.passes(r)
        names.append(f"mutual position <= {r}")
    return ok, " AND ".join(names) if names else "none"


def sweep(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = 0.95,
) -> Sweep:
    """Floor sweep. Candidates: the distinct finite top scores of every evaluated query
    (positives and every negative set) plus +inf. Optional margin / mutual conditions are
    ANDed at every floor. O((n + m) log(n + m)): each outcome class is sorted once and
    each candidate is one ``searchsorted``."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    ok, name = _fixed_conditions(top, margin, mutual, r)
    return _sweep("floor", top.top, ok, name, top, pos, negs, confidence)


def sweep_brute_force(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = 0.95,
    candidates: np.ndarray | None = None,
    variable: str = "floor",
) -> Sweep:
    """Reference implementation: re-evaluate the gate from scratch at every candidate
    (O(candidates × queries)). For tests and the benchmark only."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    if variable == "floor":
        ok, name = _fixed_conditions(top, margin, mutual, r)
        key = top.top
    else:
        ok, name = np.ones(n_q, dtype=bool), "none"
        key = top.margin
    evaluated = pos.copy()
    for m in negs.values():
        evaluated |= m
    cand = _candidates(key, evaluated & top.present) if candidates is None else np.asarray(candidates, dtype=np.float64)
    n_pos = int(np.count_nonzero(pos))
    correct = np.zeros(cand.size, dtype=np.int64)
    wrong = np.zeros(cand.size, dtype=np.int64)
    accepted = {k: np.zeros(cand.size, dtype=np.int64) for k in negs}
    for i, x in enumerate(cand.tolist()):
        acc = top.present & ok & (key >= x)
        correct[i] = np.count_nonzero(acc & pos & top.top_relevant)
        wrong[i] = np.count_nonzero(acc & pos & ~top.top_relevant)
        for k, m in negs.items():
            accepted[k][i] = np.count_nonzero(acc & m)
    n_neg = {k: int(np.count_nonzero(m)) for k, m in negs.items()}
    return Sweep(variable, name, cand, n_pos, correct, wrong, n_pos - correct - wrong, accepted, n_neg, confidence)


def margin_sweep(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    confidence: float = 0.95,
) -> Sweep:
    """Sweep of the margin **alone** (no floor): candidates are the distinct finite
    margins of the evaluated queries plus +inf; accept iff present and margin >= m.
    Lone hits (margin +inf) are accepted at every candidate, +inf included."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    return _sweep("margin", top.margin, np.ones(n_q, dtype=bool), "none", top, pos, negs, confidence)


# ---------------------------------------------------------------------------
# Operating points
# ---------------------------------------------------------------------------

def negatives_needed(target: float, confidence: float = 0.95) -> int:
    """Smallest n whose Wilson upper bound after 0 false accepts in n is <= target:
    n >= z²(1 − t)/t (73 at t = 0.05, c = 0.95). See :func:`intervals.negatives_needed`."""
    return _iv.negatives_needed(target, confidence)[0]


def rule_of_three_table(targets: Iterable[float] = (0.1, 0.05, 0.02, 0.01, 0.005, 0.001), confidence: float = 0.95) -> list[dict]:
    """Negatives needed to bound a false-accept rate t with zero false accepts: Wilson
    (one-sided (1+c)/2 bound, ⌈z²(1−t)/t⌉) beside the rule of three (one-sided 95 %, ⌈3/t⌉)."""
    z = _z(confidence)
    rows = []
    for t in targets:
        wilson_n, three_n = _iv.negatives_needed(t, confidence)
        rows.append(
            {
                "target": float(t),
                "wilson_n": wilson_n,
                "wilson_level": f"one-sided {100 * (1 + confidence) / 2:g}% (Wilson upper z^2/(n+z^2), z = {z:.6f})",
                "rule_of_three_n": three_n,
                "rule_of_three_level": "one-sided 95% (3/n)",
            }
        )
    return rows


def _rates_at(sw: Sweep, i: int) -> tuple[Rate, dict[str, Rate]]:
    fnir = Rate(int(sw.rejected[i] + sw.wrong_accept[i]), sw.positives, sw.confidence)
    fpir = {k: Rate(int(a[i]), sw.n_negatives[k], sw.confidence) for k, a in sw.accepted.items()}
    return fnir, fpir


def _qualifying(sw: Sweep, name: str, target: float, conservative: bool, confidence: float) -> np.ndarray:
    acc = sw.accepted[name]
    n = sw.n_negatives[name]
    if conservative:
        _, _, hi = _wilson_arrays(acc, n, confidence)
        return hi <= target
    # The same float as the reported FPIR; rounding is monotone, so a k/n equal to the
    # decimal target (1/20 vs 0.05) rounds to the same double and qualifies.
    return acc / n <= target


@dataclass(frozen=True)
class OperatingPoint:
    """The smallest candidate floor meeting the FPIR target on one negative set.

    ``floor`` is +inf (reject all) when no finite candidate qualifies; then
    ``attainable`` is False and ``reason`` says so. ``index`` points into the sweep.
    """

    floor: float
    index: int
    negative_set: str
    n_negatives: int
    target_fpir: float
    conservative: bool
    confidence: float
    attainable: bool
    reason: str | None
    positives: int
    rejected: int
    wrong_accept: int
    fnir: Rate
    fpir: dict[str, Rate]

    def as_dict(self) -> dict:
        d: dict = {}
        _put(d, "floor", self.floor, "+inf: reject all")
        d.update(
            {
                "negative_set": self.negative_set,
                "n_negatives": self.n_negatives,
                "target_fpir": self.target_fpir,
                "basis": f"Wilson upper bound at {self.confidence:g}" if self.conservative else "point estimate",
                "attainable": self.attainable,
                "positives": self.positives,
                "rejected": self.rejected,
                "wrong_accept": self.wrong_accept,
                "fnir": self.fnir.as_dict(),
                "fpir": {k: r.as_dict() for k, r in self.fpir.items()},
            }
        )
        if self.reason:
            d["reason"] = self.reason
        return d


def operating_point(
    sw: Sweep,
    target_fpir: float = 0.05,
    conservative: bool = False,
    confidence: float = 0.95,
    negative_set: str | None = None,
) -> OperatingPoint:
    """Smallest candidate floor whose FPIR on ``negative_set`` (default: the first set,
    by convention in-domain) is <= target: on the point estimate, or with
    ``conservative`` on the Wilson upper bound at ``confidence``. FPIR is non-increasing
    in the floor, so the first qualifying candidate is the answer. Whether it is a
    threshold (picked on calibration negatives) or tuning (picked on the negatives you
    report) is for the caller to label."""
    if sw.variable != "floor":
        raise ValueError("operating_point needs a floor sweep (use operating_margin for margins)")
    if not 0 < target_fpir < 1:
        raise InputError(f"target FPIR must be in (0, 1), got {target_fpir!r}")
    name = negative_set or sw.default_set
    n = sw.n_negatives[name]
    need = negatives_needed(target_fpir, confidence)
    last = len(sw) - 1
    q = _qualifying(sw, name, target_fpir, conservative, confidence) if n else np.zeros(len(sw), dtype=bool)
    finite_q = np.flatnonzero(q[:last])
    if finite_q.size:
        i, attainable, reason = int(finite_q[0]), True, None
    else:
        i, attainable = last, False
        if n == 0:
            reason = "no negatives: FPIR is undefined; reject all"
        else:
            basis = f"Wilson upper bound at {confidence:g}" if conservative else "point estimate"
            reason = (
                f"unattainable with {n} negatives; zero false accepts needs n >= {need} "
                f"(ceil(z^2(1-t)/t) at t = {target_fpir:g}); no finite floor has FPIR <= {target_fpir:g} "
                f"on the {basis}; the floor is +inf (reject all)"
            )
    fnir, fpir = _rates_at(sw, i)
    fpir = {k: Rate(r.k, r.n, confidence) for k, r in fpir.items()}
    return OperatingPoint(
        float(sw.threshold[i]), i, name, n, float(target_fpir), conservative, confidence, attainable, reason,
        sw.positives, int(sw.rejected[i]), int(sw.wrong_accept[i]), Rate(fnir.k, fnir.n, confidence), fpir,
    )


@dataclass(frozen=True)
class OperatingMargin:
    """Smallest candidate margin meeting the FPIR target from the margin alone.

    ``margin`` is None when even +inf fails (lone hits among negatives exceed the
    target, or too few negatives for the Wilson bound); +inf means only lone hits pass.
    """

    margin: float | None
    index: int | None
    negative_set: str
    n_negatives: int
    lone_negatives: int
    target_fpir: float
    conservative: bool
    confidence: float
    reason: str | None
    fnir: Rate | None
    fpir: dict[str, Rate]

    def as_dict(self) -> dict:
        d: dict = {}
        if self.margin is None:
            d["margin"] = None
            d["margin_reason"] = self.reason or "unattainable"
        else:
            _put(d, "margin", self.margin, "+inf: only lone hits pass")
        d.update(
            {
                "negative_set": self.negative_set,
                "n_negatives": self.n_negatives,
                "lone_negatives": self.lone_negatives,
                "target_fpir": self.target_fpir,
                "basis": f"Wilson upper bound at {self.confidence:g}" if self.conservative else "point estimate",
                "fnir": self.fnir.as_dict() if self.fnir else None,
                "fpir": {k: r.as_dict() for k, r in self.fpir.items()},
            }
        )
        if self.fnir is None:
            d["fnir_reason"] = "no operating margin"
        if self.reason:
            d["reason"] = self.reason
        return d


def operating_margin(
    msw: Sweep,
    target_fpir: float = 0.05,
    conservative: bool = False,
    confidence: float = 0.95,
    negative_set: str | None = None,
) -> OperatingMargin:
    """Operating margin from a :func:`margin_sweep`. At m = +inf the accepted negatives
    are exactly the lone hits, the least a margin can do; when that already exceeds the
    target the answer is None ("unattainable: lone candidates")."""
    if msw.variable != "margin":
        raise ValueError("operating_margin needs a margin sweep")
    name = negative_set or msw.default_set
    n = msw.n_negatives[name]
    lone = int(msw.accepted[name][-1])
    q = _qualifying(msw, name, target_fpir, conservative, confidence) if n else np.zeros(len(msw), dtype=bool)
    hit = np.flatnonzero(q)
    if not hit.size:
        if n == 0:
            reason = "no negatives: FPIR is undefined"
        elif conservative and n < negatives_needed(target_fpir, confidence):
            reason = f"unattainable with {n} negatives; zero false accepts needs n >= {negatives_needed(target_fpir, confidence)}"
            if lone:
                reason += f"; and {lone} lone candidates pass every margin"
        else:
            # At m = +inf only lone hits pass; they already break the target.
            reason = f"unattainable: lone candidates ({lone} of {n} negatives have a single hit, and a lone hit passes every margin)"
        return OperatingMargin(None, None, name, n, lone, float(target_fpir), conservative, confidence, reason, None, {})
    i = int(hit[0])
    fnir, fpir = _rates_at(msw, i)
    fpir = {k: Rate(r.k, r.n, confidence) for k, r in fpir.items()}
    m = float(msw.threshold[i])
    reason = "only lone hits pass (+inf margin)" if not math.isfinite(m) else None
    return OperatingMargin(m, i, name, n, lone, float(target_fpir), conservative, confidence, reason, Rate(fnir.k, fnir.n, confidence), fpir)
