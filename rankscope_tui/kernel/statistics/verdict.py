"""The verdict: the one algorithm of SPEC §7 over the rows of one ``compare`` call.

α = 1 − confidence (shared by all rows). The family is the non-exploratory rows
(only the ``primary`` metric's rows when given; the others are ``descriptive``).
J = family size; the family's raw p of the deciding test (``test``: the randomization
test by default, or the paired t-test — seed 001's ``test_method``) are adjusted by
the correction (``multiplicity``); a row is ``better`` or ``worse`` only inside the
family, and an undecided row is "inconclusive", never a loss (the four states of a tested
row and their words: ``STATES``, ``VERDICT_TEXT``). The other test,
the BCa interval and p_superiority are checks compared with the deciding decision, and
every disagreement is put into words.

References
----------
- Holm, S. (1979). A simple sequentially rejective multiple test procedure.
  *Scandinavian Journal of Statistics* 6(2), 65-70.
- Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical
  significance tests for information retrieval evaluation. *CIKM 2007*, 623-632. (the
  paired randomization test)
- Efron, B. (1987). Better bootstrap confidence intervals. *JASA* 82(397), 171-185.
  (BCa)
- McGraw, K. O. & Wong, S. P. (1992). A common language effect size statistic.
  *Psychological Bulletin* 111(2), 361-365. (the probability of superiority)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..errors import InputError
from .intervals import MIN_QUERIES_FOR_COVERAGE, alpha_of, finite_or_none, null_reason
from .multiplicity import adjust_p, adjust_p_exact, check_correction, thresholds
from .paired import NOT_IN_ROW, PairedStats
from .power import RowPower, family_false_positive, row_power

if TYPE_CHECKING:
    from dataclasses import Field

    from .seeds import RetrainingSpread

#: The tests that can decide a verdict (``--test``); the other one is an agreement flag.
TESTS: tuple[str, ...] = ("randomization", "t", "bootstrap")


def _other(test: str) -> str:
    """The check beside the deciding test: the t-test beside the randomization test, the
    randomization test beside the t-test and beside the null-centred bootstrap test."""
    return "t" if test == "randomization" else "randomization"


def _resampling_test(test: str) -> bool:
    """The deciding test needs resamples (B > 0) and its p has the floor 1/(B + 1)."""
    return test != "t"

#: The four states of a row in the tested family, in the order a reader ranks them: the
#: difference established in the candidate's favour and at least ``--min-delta``;
#: established (in either direction) but smaller than ``--min-delta``; not established;
#: established against the candidate and at least ``--min-delta``.
STATES: tuple[str, ...] = ("better", "below_min_delta", "inconclusive", "worse")
VERDICTS: tuple[str, ...] = STATES + ("exploratory", "descriptive")
#: How each verdict is said, in every face (text, markdown, LaTeX, JSON's ``verdict_text``,
#: the results sentence, the dashboard): decided here once, the faces only print it.
VERDICT_TEXT: dict[str, str] = {
    "better": "established better",
    "below_min_delta": "established but below min-delta",
    "inconclusive": "inconclusive",
    "worse": "established worse",
    "exploratory": "exploratory (not a test)",
    "descriptive": "descriptive (outside the primary family)",
}
def verdict_words(verdict: str, min_delta: float = 0.0) -> str:
    """The words of ``verdict``; the below-min-delta state names the minimum effect it missed."""
    text = VERDICT_TEXT[verdict]
    return f"{text} {min_delta:g}" if verdict == "below_min_delta" else text


#: Why a check is undefined when every paired difference is 0.
NO_VARIATION = "no variation: every difference is 0"
#: Printed under every comparison table.
CAPTION = (
    "Intervals are per comparison, not simultaneous. They describe variation over queries "
    "for these fixed runs, not over training seeds."
)


def check_test(test: str) -> str:
    if test not in TESTS:
        raise InputError(f"test must be one of {', '.join(TESTS)}, got {test!r}", "--test")
    return test


@dataclass(frozen=True)
class RowInput:
    """One requested comparison: names, its paired statistics, and whether it is exploratory."""

    baseline: str
    candidate: str
    metric: str
    stats: PairedStats
    exploratory: bool = False
    retraining: RetrainingSpread | None = None  # with --seed-runs


def _after(key: str) -> dict[str, Any]:
    """Metadata: in a ``compare --out`` row this field comes right after ``key``."""
    return {"after": key}


#: Metadata of the field whose value's own row keys are spliced in at its place.
_SPLICED = {"splice": True}


@dataclass(frozen=True)
class TieFlip:
    """Whether a different order of tied scores could change a compare row.

    The row is recomputed twice with per-query values taken at the extremes over tie
    orders (``measures.ties``): ``low`` = candidate at its worst order, baseline at its
    best (the smallest Δ any tie orders give); ``high`` = candidate best, baseline worst
    (the largest). Each extreme family (every row of the call moved the same way) goes
    through the same paired statistics and ``decide`` as the observed one. ``could_flip``:
    the sign of the mean Δ differs between the two extremes, or either extreme's verdict
    differs from the row's.
    """

    dependent_queries: int  # positives where either lane's value depends on the tie order
    delta_low: float
    delta_high: float
    verdict_low: str
    verdict_high: str
    could_flip: bool

    def as_dict(self) -> dict[str, Any]:
        return {"dependent_queries": self.dependent_queries, "delta_low": self.delta_low, "delta_high": self.delta_high,
                "verdict_low": self.verdict_low, "verdict_high": self.verdict_high, "could_flip": self.could_flip}


@dataclass(frozen=True)
class JudgmentBounds:
    """Whether the unjudged hits could change a compare row.

    The row is recomputed twice with per-query values taken at the bounds of
    ``measures.coverage``: ``nonrelevant`` = both lanes with every unjudged hit within the
    measure's cutoff counted non-relevant (grade 0), ``relevant`` = counted relevant (each lane
    at its own bound, the one ``evaluate`` reports: its own holes added to the qrels). Each
    family goes through the same paired statistics and ``decide`` as the observed one.
    ``one_bound_only``: the verdict at one bound differs from the verdict at the other, so the
    row's conclusion holds only if the unjudged hits go one way.
    """

    holes_queries: int  # positives where either lane has a hole for the measure
    delta_nonrelevant: float
    delta_relevant: float
    verdict_nonrelevant: str
    verdict_relevant: str
    one_bound_only: bool

    def as_dict(self) -> dict[str, Any]:
        return {"holes_queries": self.holes_queries, "delta_nonrelevant": self.delta_nonrelevant,
                "delta_relevant": self.delta_relevant, "verdict_nonrelevant": self.verdict_nonrelevant,
                "verdict_relevant": self.verdict_relevant, "one_bound_only": self.one_bound_only}


@dataclass(frozen=True)
class ComparisonRow:
    """One row of ``compare``: its names, its paired statistics and the family's decision.

    A row holds its ``stats`` and reads as them too (``row.difference`` is
    ``row.stats.difference``). The ``compare --out`` keys (``ROW_KEYS``) are derived
    from the declarations: the row's fields in order, ``stats`` spliced as the
    ``PairedStats`` row fields, a field with ``after`` metadata placed after that key
    and the next ones after it; fields marked ``NOT_IN_ROW`` are for the printed tables.
    """

    baseline: str
    candidate: str
    metric: str
    stats: PairedStats = field(metadata=_SPLICED)
    adjusted_p: float | None = field(metadata=_after("randomization_p"))
    bca_level: float = field(metadata=_after("t_p"))
    bca_low: float | None
    bca_high: float | None
    correction: str = field(metadata=_after("seed"))
    exploratory: bool
    verdict: str
    t_agrees: bool | None
    interval_agrees: bool | None
    bootstrap_agrees: bool | None
    # the deciding test, and the randomization test's agreement when the t-test decides
    test: str = field(default="randomization", metadata=_after("bootstrap_agrees"))
    randomization_agrees: bool | None = None
    # the spread over retraining seeds, a separate quantity from the interval
    retraining: RetrainingSpread | None = None
    # the verdict in words (``verdict_words``): what every face prints for ``verdict``
    verdict_text: str = field(default="", metadata=_after("verdict"))
    # what the row could establish: MDE at 80 % power, the randomization floor, the queries a target needs
    power: RowPower | None = None
    # what another order of tied scores could do to the row; None without ranked rows
    tie_order: TieFlip | None = None
    # what the unjudged hits could do to the row; None without ranked rows
    judgment_bounds: JudgmentBounds | None = None
    threshold: float | None = field(default=None, metadata=NOT_IN_ROW)
    in_family: bool = field(default=False, metadata=NOT_IN_ROW)
    disagreements: tuple[str, ...] = field(default=(), metadata=NOT_IN_ROW)
    warnings: tuple[str, ...] = field(default=(), metadata=NOT_IN_ROW)
    reasons: tuple[tuple[str, str], ...] = field(default=(), metadata=NOT_IN_ROW)

    def __getattr__(self, name: str) -> Any:
        # only reached for names the row itself lacks: read them from the stats
        if name.startswith("__") or name == "stats":
            raise AttributeError(name)
        return getattr(self.stats, name)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the printed notes say of this row: the tests' disagreements, then its
        warnings (a coarse randomization null, an unattainable threshold, a small sample)."""
        return self.disagreements + self.warnings

    def __post_init__(self) -> None:
        if not self.verdict_text:  # a row made without its words says the verdict's own
            object.__setattr__(self, "verdict_text", VERDICT_TEXT[self.verdict])

    def as_dict(self, reasons: bool = False) -> dict[str, Any]:
        """Exactly ``ROW_KEYS``, strict-JSON (nan/±inf → None).

        ``reasons=True`` adds a sibling ``<key>_reason`` for every null value.
        """
        out: dict[str, Any] = {}
        why = dict(self.reasons)
        for key in ROW_KEYS:
            value = getattr(self, key)
            if key in ("largest_losses", "largest_gains"):
                out[key] = [x.as_dict() for x in value]
            elif key in ("retraining", "power", "tie_order", "judgment_bounds"):
                out[key] = None if value is None else value.as_dict()
            elif key == "notes":
                out[key] = list(value)
            elif isinstance(value, (bool, np.bool_)):
                out[key] = bool(value)
            elif isinstance(value, str):
                out[key] = value
            elif isinstance(value, (int, np.integer)):
                out[key] = int(value)
            else:
                out[key] = finite_or_none(value)
            if reasons and out[key] is None:
                out[f"{key}_reason"] = null_reason(value, why.get(key, "not computed"))
        return out


def _in_row(f: Field[Any]) -> bool:
    return bool(f.metadata.get("row", True))


def _row_keys() -> tuple[str, ...]:
    """The keys of one ``compare --out`` row, in order (SPEC §7), from the declarations."""
    keys: list[str] = []
    at = 0  # where the next field goes
    for f in filter(_in_row, fields(ComparisonRow)):
        if f.metadata.get("splice"):
            names = [g.name for g in filter(_in_row, fields(PairedStats))]
        else:
            names = [f.name]
        if "after" in f.metadata:
            at = keys.index(f.metadata["after"]) + 1
        keys[at:at] = names
        at += len(names)
    return tuple(keys)


#: keys after the declared ones: the bootstrap standard error, how the paired interval
#: was made and the null-centred bootstrap test's p (``PairedStats``), and the row's notes as the printed outputs show them
#: (issue 29.8: a caveat the text prints is in ``--out`` too)
EXTRA_ROW_KEYS: tuple[str, ...] = ("bootstrap_se", "interval_method", "bootstrap_p", "notes")
#: the keys of one ``compare --out`` row, in order (SPEC §7)
ROW_KEYS: tuple[str, ...] = _row_keys() + EXTRA_ROW_KEYS


@dataclass(frozen=True)
class CompareResult:
    """All rows of one ``compare`` call, the family size and call-level warnings."""

    rows: tuple[ComparisonRow, ...]
    family_size: int
    alpha: float
    correction: str
    primary: str | None
    min_delta: float
    warnings: tuple[str, ...]
    caption: str = CAPTION
    test: str = "randomization"
    # --reuse-correct: earlier comparisons' rows on these qrels adjusted with the family
    earlier_tests: int = 0
    # a planned call: the exploratory rows' own family (None: not a planned call, or none)
    exploratory_family_size: int | None = None

    def settings_dict(self) -> dict[str, Any]:
        """The family's settings as ``compare --out`` records them. ``family_false_positive``
        is of the whole adjusted family: this call's rows plus ``earlier_tests``."""
        out = {
            "test": self.test,
            "alpha": self.alpha,
            "confidence": alpha_of(self.alpha),  # 1 − α in decimal, as α is
            "correction": self.correction,
            "primary": self.primary,
            "min_delta": self.min_delta,
            "family_size": self.family_size,
            "family_false_positive": family_false_positive(self.alpha, self.family_size + self.earlier_tests,
                                                           self.correction),
        }
        if self.earlier_tests:
            out["earlier_tests"] = self.earlier_tests
        if self.exploratory_family_size is not None:
            out["exploratory_family_size"] = self.exploratory_family_size
            out["exploratory_family_false_positive"] = family_false_positive(
                self.alpha, self.exploratory_family_size, self.correction)
        return out

    def as_dict(self, reasons: bool = False) -> dict[str, Any]:
        return {
            "comparisons": [r.as_dict(reasons) for r in self.rows],
            "settings": self.settings_dict(),
            "warnings": list(self.warnings),
            "caption": self.caption,
        }


# ---------------------------------------------------------------------------
# the steps of decide
# ---------------------------------------------------------------------------


def _decision_words(flag: bool) -> str:
    return "established" if flag else "not established"


def _superiority_words(p_sup: float, conf: float) -> str:
    """What p_superiority (the share of bootstrap replicates with Δ* = candidate − baseline > 0)
    says, naming the tail it crosses the ``conf`` bar in, if any."""
    up, down = 100 * p_sup, 100 * (1 - p_sup)
    head = f"p_superiority = {p_sup:.4f} = P(Δ* > 0), the share of bootstrap replicates with candidate − baseline > 0: "
    if p_sup >= conf:
        return head + (f"{up:.1f} % of replicates favour the candidate (upper tail: past the {conf:g} bar "
                       "for the candidate)")
    if p_sup <= 1 - conf:
        return head + (f"{down:.1f} % of replicates favour the baseline or tie (lower tail: past the {conf:g} bar "
                       f"in the baseline's direction, P(Δ* > 0) <= {1 - conf:.2g})")
    return head + (f"{up:.1f} % of replicates favour the candidate and {down:.1f} % the baseline or tie "
                   f"(neither tail reaches the {conf:g} bar)")


def _check_rows(inputs: Sequence[RowInput], primary: str | None) -> PairedStats:
    """All rows share confidence, resamples, seed and alternative; ``primary`` is compared.
    Returns the first row's stats (the shared settings)."""
    first = inputs[0].stats
    shared = (first.confidence, first.resamples, first.seed, first.alternative)
    for r in inputs:
        s = r.stats
        if (s.confidence, s.resamples, s.seed, s.alternative) != shared:
            raise InputError("all rows of one compare call must share confidence, resamples, seed and alternative")
    if primary is not None and not any(r.metric == primary for r in inputs):
        raise InputError(f"--primary {primary!r} is not among the compared metrics")
    return first


@dataclass(frozen=True)
class _Family:
    """The tested family: row index → position k, and per position the adjusted p of the
    deciding test (NaN without a test), the raw-p threshold and the other test's adjusted p."""

    position: dict[int, int]
    adjusted: np.ndarray
    threshold: np.ndarray
    other_adjusted: np.ndarray
    tested: bool  # the deciding test ran (B > 0 for the randomization test) and J > 0

    @property
    def size(self) -> int:
        return len(self.position)


def _raw(s: PairedStats, test: str) -> float | None:
    if test == "bootstrap":
        return s.bootstrap_p
    return s.t_p if test == "t" else s.randomization_p


def _exact_p(s: PairedStats) -> Fraction | None:
    """The randomization p as the rational (1 + e)/(B + 1) it is (None when the test did not
    run, or when the row's p is not that rational)."""
    if not s.resamples or s.exceedances is None or s.randomization_p is None:
        return None
    p = Fraction(1 + int(s.exceedances), int(s.resamples) + 1)
    return p if float(p) == s.randomization_p else None


def _family(inputs: Sequence[RowInput], primary: str | None, alpha: float, correction: str, B: int,
            test: str = "randomization", members: Sequence[int] | None = None,
            earlier: Sequence[float] = ()) -> _Family:
    """Family = non-exploratory rows (of the primary metric when given), in call order
    (or the rows ``members``). adjusted p of the deciding test by ``correction``;
    threshold_i = α/J (Bonferroni) or α/(J − j_i + 1) (Holm), α/max(J, 1) without a test;
    the other test's p adjusted the same way. An undefined t p (sd = 0) counts as 1 in
    either role (it still counts in J).

    ``earlier``: raw p of earlier comparisons on the same test queries (``--reuse-correct``),
    adjusted together with the family's: J = len(earlier) + the family's rows, the earlier
    p taking their places in Holm's order like any other; only the family's rows get
    verdicts. With earlier p the adjustment runs on doubles (they are not the rationals)."""
    if members is None:
        members = [i for i, r in enumerate(inputs) if not r.exploratory and (primary is None or r.metric == primary)]
    J = len(members)
    extra = [float(x) for x in earlier] if J else []
    other = _other(test)

    def raws(which: str) -> list[float]:
        return [1.0 if (p := _raw(inputs[i].stats, which)) is None else p for i in members]

    tested = J > 0 and (not _resampling_test(test) or B > 0)
    raw = raws(test)
    exact = [_exact_p(inputs[i].stats) for i in members] if test == "randomization" and not extra else []
    if tested and exact and all(x is not None for x in exact):  # the rationals, adjusted exactly
        adj = adjust_p_exact([x for x in exact if x is not None], correction)
    else:
        adj = adjust_p(raw + extra, correction)[:J] if tested else np.full(J, np.nan)
    thr = thresholds(raw + extra, alpha, correction)[:J] if tested else np.full(J, alpha / max(J + len(extra), 1))
    other_ran = J > 0 and (other == "t" or B > 0)
    other_exact = [_exact_p(inputs[i].stats) for i in members] if other == "randomization" and not extra else []
    if other_ran and other_exact and all(x is not None for x in other_exact):
        other_adj = adjust_p_exact([x for x in other_exact if x is not None], correction)
    else:
        other_adj = adjust_p(raws(other) + extra, correction)[:J] if other_ran else np.full(J, np.nan)
    return _Family({i: k for k, i in enumerate(members)}, adj, thr, other_adj, tested)


def _call_warnings(B: int, J: int, alpha: float, test: str = "randomization") -> tuple[str, ...]:
    """Nothing can be established without the deciding test, or when the randomization
    floor J/(B + 1) exceeds α."""
    if test == "t":
        return ()
    if B == 0:
        return (f"no {'bootstrap' if test == 'bootstrap' else 'randomization'} test was run (resamples = 0): "
                "nothing can be established",)
    if J and J / (B + 1) > alpha:
        return (
            f"with B = {B:,} and {J} hypotheses the smallest attainable adjusted p is "
            f"{J / (B + 1):.4g} > α = {alpha:.4g}: nothing can be established",
        )
    return ()


#: How each test is named in a disagreement.
_TEST_WORDS = {"randomization": "the randomization test", "t": "the paired t-test",
               "bootstrap": "the null-centred bootstrap test"}


@dataclass(frozen=True)
class _Placement:
    """A row's place relative to the family and the decisions the checks are compared with."""

    in_family: bool
    threshold: float | None
    adjusted: float | None
    level: float  # bca_level
    decision: bool | None  # the deciding test's: adjusted p ≤ α in the family, raw p ≤ α outside
    check_decision: bool | None  # the other test's, the same way
    check_adjusted: float | None
    verdict: str
    adjusted_reason: str | None


def _verdict(adjusted: float, alpha: float, difference: float, min_delta: float) -> str:
    """Adjusted p ≤ α establishes the difference; then ``better`` iff Δ̄ > 0 and Δ̄ ≥ min_delta,
    ``worse`` iff Δ̄ < 0 and −Δ̄ ≥ min_delta, ``below_min_delta`` iff |Δ̄| < min_delta;
    ``inconclusive`` when adjusted p > α (or Δ̄ = 0, which no test establishes)."""
    if adjusted > alpha or difference == 0:
        return "inconclusive"
    if abs(difference) < min_delta:
        return "below_min_delta"
    return "better" if difference > 0 else "worse"


def _place(i: int, r: RowInput, fam: _Family, alpha: float, conf: float, min_delta: float, primary: str | None,
           test: str = "randomization", apart: _Family | None = None) -> _Placement:
    """In the family: threshold, adjusted p, bca_level = 1 − threshold and the verdict.
    Outside: no adjusted p, bca_level = 1 − α, verdict ``exploratory`` or ``descriptive``.
    An exploratory row of a planned call (``apart``, the exploratory rows' own family) has
    its adjusted p and threshold in that family, and stays ``exploratory``: never established."""
    s = r.stats
    other = _other(test)
    raw, other_raw = _raw(s, test), _raw(s, other)
    if apart is not None and i in apart.position:
        k = apart.position[i]
        threshold = float(apart.threshold[k])
        adjusted = None if not apart.tested or raw is None else float(apart.adjusted[k])
        other_adj = None if other_raw is None else finite_or_none(apart.other_adjusted[k])
        return _Placement(
            in_family=False, threshold=threshold, adjusted=adjusted, level=1.0 - threshold,
            decision=None if adjusted is None else adjusted <= alpha,
            check_decision=None if other_adj is None else bool(other_adj <= alpha),
            check_adjusted=other_adj, verdict="exploratory",
            adjusted_reason=None if adjusted is not None else "exploratory: no test to adjust",
        )
    if i in fam.position:
        k = fam.position[i]
        threshold = float(fam.threshold[k])
        adjusted = None if not fam.tested or raw is None else float(fam.adjusted[k])
        if not fam.tested:
            verdict, reason = "inconclusive", f"no {'bootstrap' if test == 'bootstrap' else 'randomization'} test (resamples = 0)"
        elif adjusted is None:
            verdict, reason = "inconclusive", "the deciding t-test is undefined: sd of the differences is 0"
        else:
            verdict, reason = _verdict(adjusted, alpha, s.difference, min_delta), None
        other_adj = None if other_raw is None else finite_or_none(fam.other_adjusted[k])
        return _Placement(
            in_family=True, threshold=threshold, adjusted=adjusted, level=1.0 - threshold,
            decision=None if adjusted is None else adjusted <= alpha,
            check_decision=None if other_adj is None else bool(other_adj <= alpha),
            check_adjusted=other_adj, verdict=verdict, adjusted_reason=reason,
        )
    reason = ("exploratory: raw p only, never adjusted or established" if r.exploratory
              else f"outside the primary family (--primary {primary})")
    return _Placement(
        in_family=False, threshold=None, adjusted=None, level=conf,
        decision=None if raw is None else raw <= alpha,
        check_decision=None if other_raw is None else other_raw <= alpha,
        check_adjusted=None, verdict="exploratory" if r.exploratory else "descriptive", adjusted_reason=reason,
    )


def _null_reasons(s: PairedStats, bca: tuple[float, float] | None, B: int) -> dict[str, str]:
    """Why each null number of the row is null."""
    reasons: dict[str, str] = {}
    if bca is None:
        reasons["bca_low"] = reasons["bca_high"] = (
            "no resampling (resamples = 0)" if not B else "degenerate: every difference is equal"
        )
    if s.t_p is None:
        reasons["t_p"] = "undefined: sd of the differences is 0"
    if s.effect_size is None:
        reasons["effect_size"] = "undefined: sd of the differences is 0"
    if s.relative_gain is None:
        reasons["relative_gain"] = "undefined: the baseline mean is 0"
    for key in ("ci_low", "ci_high", "p_superiority", "randomization_p", "unpaired_ci_low", "unpaired_ci_high",
                "bootstrap_se", "bootstrap_p"):
        if getattr(s, key) is None:
            reasons[key] = "no resampling (resamples = 0)"
    return reasons


@dataclass(frozen=True)
class _Agreement:
    t_agrees: bool | None
    interval_agrees: bool | None
    bootstrap_agrees: bool | None
    randomization_agrees: bool | None
    disagreements: tuple[str, ...]
    reasons: dict[str, str]


def _agreement(s: PairedStats, p: _Placement, bca: tuple[float, float] | None, alpha: float, conf: float,
               test: str = "randomization") -> _Agreement:
    """Each check's decision against the deciding test's decision: the other test —
    ``t_agrees`` when the randomization test decides, ``randomization_agrees`` when the
    t-test does (its p adjusted in the family, ≤ α); ``interval_agrees`` — the BCa interval
    at ``bca_level`` excludes 0; ``bootstrap_agrees`` — p_superiority ≥ confidence or
    ≤ 1 − confidence. A flag is None when its check is undefined (sd = 0, degenerate BCa,
    B = 0) or is the deciding test itself."""
    reasons: dict[str, str] = {}
    other = _other(test)
    flag_key = "t_agrees" if other == "t" else "randomization_agrees"
    if test == "t":
        reasons["t_agrees"] = "the t-test decides (--test t): the randomization test is the check"
    if test == "bootstrap":
        reasons["t_agrees"] = "the null-centred bootstrap test decides (--test bootstrap): the randomization test is the check"
    if p.decision is None:
        why = (f"no {test} decision to agree with (resamples = 0)" if _resampling_test(test)
               else "no t-test decision to agree with (sd of the differences is 0)")
        for key in (flag_key, "interval_agrees", "bootstrap_agrees"):
            reasons[key] = why
        return _Agreement(None, None, None, None, (), reasons)
    if p.check_decision is None:
        reasons[flag_key] = ("t-test undefined: sd of the differences is 0" if other == "t"
                             else "no randomization test (resamples = 0)")
    if bca is None:
        reasons["interval_agrees"] = "BCa interval undefined (degenerate)"
    decision = p.decision
    # adjusted in the family, or in a planned call's exploratory family (corrected apart)
    what = _TEST_WORDS[test] + (" (adjusted)" if p.adjusted is not None else "")
    disagreements: list[str] = []
    check_agrees = interval_agrees = boot_agrees = None
    if p.check_decision is not None:
        check_agrees = p.check_decision == decision
        if not check_agrees:
            head = (f"the paired t-test disagrees: t p = {s.t_p:.4g}" if other == "t"
                    else f"the randomization test disagrees: p = {s.randomization_p:.4g}")
            disagreements.append(
                head + (f" (adjusted {p.check_adjusted:.4g})" if p.check_adjusted is not None else "")
                + f" is {_decision_words(p.check_decision)} at α = {alpha:.4g}, {what} is {_decision_words(decision)}"
            )
    if bca is not None:
        bca_low, bca_high = bca
        excludes = bca_low > 0.0 or bca_high < 0.0
        interval_agrees = excludes == decision
        if not interval_agrees:
            disagreements.append(
                f"the BCa interval at level {p.level:.4f} {'excludes' if excludes else 'includes'} 0 "
                f"while {what} is {_decision_words(decision)}"
            )
    if s.p_superiority is not None and s.n_nonzero == 0:
        # every difference is 0: no replicate is > 0, so p_superiority is 0 without saying
        # anything about either lane; the check is undefined, not a disagreement
        reasons["bootstrap_agrees"] = NO_VARIATION
    elif s.p_superiority is not None:
        crossed = s.p_superiority >= conf or s.p_superiority <= 1.0 - conf
        boot_agrees = crossed == decision
        if not boot_agrees:
            disagreements.append(f"{_superiority_words(s.p_superiority, conf)} while {what} is {_decision_words(decision)}")
    t_agrees, rand_agrees = (check_agrees, None) if other == "t" else (None, check_agrees)
    return _Agreement(t_agrees, interval_agrees, boot_agrees, rand_agrees, tuple(disagreements), reasons)


def _row_warnings(s: PairedStats, p: _Placement, B: int, test: str = "randomization") -> tuple[str, ...]:
    """A coarse null (n_nonzero < 30), a threshold below the randomization floor 1/(B + 1)
    (when that test decides), a bootstrap on fewer than 30 queries."""
    warnings: list[str] = []
    if s.n_nonzero == 0:
        warnings.append(f"no variation: both lanes score every one of the {s.n_units} {s.sampled} the same "
                        "(every difference is 0)")
    elif s.n_nonzero < MIN_QUERIES_FOR_COVERAGE:
        warnings.append(
            f"only {s.n_nonzero} of {s.n_units} {s.sampled} differ: the randomization null distribution is coarse"
        )
    # in the family a row has a threshold (``_place``)
    if _resampling_test(test) and B and p.in_family and p.threshold is not None and 1.0 / (B + 1) > p.threshold:
        warnings.append(
            f"the smallest attainable p with B = {B:,} is {1 / (B + 1):.4g}, above this row's "
            f"threshold {p.threshold:.4g}: it cannot be established"
        )
    if s.n_units < MIN_QUERIES_FOR_COVERAGE:
        warnings.append(f"bootstrap intervals on {s.n_units} {s.sampled} cover less often than their level")
    return tuple(warnings)


def decide(
    inputs: Sequence[RowInput],
    *,
    correction: str = "holm",
    primary: str | None = None,
    min_delta: float = 0.0,
    test: str = "randomization",
    planned: bool = False,
    earlier_p: Sequence[float] = (),
) -> CompareResult:
    """The verdict algorithm of SPEC §7 over the rows of one ``compare`` call.

    ``test`` names the deciding test (``TESTS``): its p is adjusted and decides; the
    other test is an agreement flag.

    Check the rows (``_check_rows``), form the family and adjust its p (``_family``),
    then per row: its place and verdict (``_place``), the BCa interval at its
    ``bca_level``, the agreement flags (``_agreement``), the reasons for null numbers
    and the warnings.

    ``planned`` (a planned family, ``compare --plan``): the exploratory rows — asked for
    beyond the plan — are adjusted apart, as a family of their own by the same
    correction; they keep the verdict ``exploratory``. ``earlier_p`` (``--reuse-correct``):
    earlier comparisons' raw p adjusted together with the tested family (``_family``).
    """
    check_correction(correction)
    check_test(test)
    if not inputs:
        return CompareResult((), 0, 0.05, correction, primary, float(min_delta), (), test=test)
    first = _check_rows(inputs, primary)
    conf = first.confidence
    alpha = alpha_of(conf)
    B = first.resamples
    min_delta = float(min_delta)
    fam = _family(inputs, primary, alpha, correction, B, test, earlier=earlier_p)
    apart = None
    if planned:
        expl = [i for i, r in enumerate(inputs) if r.exploratory]
        apart = _family(inputs, None, alpha, correction, B, test, members=expl) if expl else None
    rows = []
    for i, r in enumerate(inputs):
        s = r.stats
        place = _place(i, r, fam, alpha, conf, min_delta, primary, test, apart)
        bca = s.bca_interval(place.level) if B else None
        agree = _agreement(s, place, bca, alpha, conf, test)
        if test == "randomization":
            agree.reasons.setdefault("randomization_agrees", "the randomization test decides (the t-test is the check)")
        reasons = {**_null_reasons(s, bca, B), **agree.reasons}
        if place.adjusted_reason is not None:
            reasons["adjusted_p"] = place.adjusted_reason
        if r.retraining is None:
            reasons["retraining"] = "no retraining runs of either lane (compare --seed-runs with SYSTEM@SEED lanes)"
        rows.append(ComparisonRow(
            baseline=r.baseline, candidate=r.candidate, metric=r.metric, stats=s,
            adjusted_p=place.adjusted, bca_level=place.level,
            bca_low=None if bca is None else bca[0], bca_high=None if bca is None else bca[1],
            correction=correction, exploratory=r.exploratory, verdict=place.verdict,
            t_agrees=agree.t_agrees, interval_agrees=agree.interval_agrees, bootstrap_agrees=agree.bootstrap_agrees,
            test=test, randomization_agrees=agree.randomization_agrees, retraining=r.retraining,
            verdict_text=verdict_words(place.verdict, min_delta),
            power=row_power(s.n_units, s.sd, s.n_nonzero, s.difference,
                            alpha if place.threshold is None else place.threshold, B, s.alternative,
                            min_delta, s.sampled, test=test),
            threshold=place.threshold, in_family=place.in_family, disagreements=agree.disagreements,
            warnings=_row_warnings(s, place, B, test) + (() if r.retraining is None else r.retraining.warnings), reasons=tuple(sorted(reasons.items())),
        ))
    earlier = len(earlier_p) if fam.size else 0
    return CompareResult(tuple(rows), fam.size, alpha, correction, primary, min_delta,
                         _call_warnings(B, fam.size + earlier, alpha, test), test=test, earlier_tests=earlier,
                         exploratory_family_size=None if apart is None else apart.size)
