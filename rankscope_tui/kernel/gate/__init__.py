"""The not-found gate: score floors, margins, mutual nearest neighbours, FNIR and FPIR.

One idea per module: :mod:`.rates` (Wilson rates, negatives needed), :mod:`.scores`
(per-query top scores), :mod:`.floors` (null and conformal floors), :mod:`.mutual`
(the mutual-nearest-neighbour condition), :mod:`.outcome` (FNIR / FPIR of one
configuration), :mod:`.sweep` (the sweep, operating point and operating margin). The
whole analysis of one workspace is :func:`rankscope_tui.kernel.gate.analysis.analyse_gate`.

SPEC §6 (lessons 09–11). numpy and the standard library, Wilson intervals from
:mod:`..intervals`; never imports textual.

Conventions
-----------
* Every per-query array is indexed by **query code** (length ``n_queries`` of the gate
  lane's ``offsets``). Query sets (positives, each negative set, the queries mutual
  lists are built from) are boolean masks over query codes.
* The gate lane is a :class:`~rankscope_tui.kernel.ranking.ranks.RankedLane`, already ordered
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


from .floors import ConformalFloor, NullFloor, conformal_floor, conformal_k, conformal_min_n, null_floor, null_floors
from .mutual import MutualNN, batch_size_warning, doc_reach, mutual_nn, mutual_of_tops
from .outcome import GateOutcome, Outcome, condition_outcomes, gate_outcome
from .rates import Rate, negatives_needed, rule_of_three_table, wilson_interval
from .scores import TopScores, top_scores
from .sweep import OperatingMargin, OperatingPoint, Sweep, margin_sweep, operating_margin, operating_point, sweep

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
    "doc_reach",
    "mutual_of_tops",
    "batch_size_warning",
    "Outcome",
    "GateOutcome",
    "gate_outcome",
    "condition_outcomes",
    "Sweep",
    "sweep",
    "margin_sweep",
    "OperatingPoint",
    "operating_point",
    "OperatingMargin",
    "operating_margin",
    "negatives_needed",
    "rule_of_three_table",
    "wilson_interval",
]
