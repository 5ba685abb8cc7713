"""`diff` of two reports (SPEC §8): did anything change beyond noise?

Lanes are matched by name, then level and metric, on the qids present in both
``per_query`` blocks (sorted as bytes); Δ = after − before is tested with the
``compare`` randomization test (same protocol), Holm over the rows tested. A
regression is adjusted p ≤ α, Δ̄ < 0 and −Δ̄ ≥ min_delta (an improvement symmetrically).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, DiffSettings
from ..statistics.intervals import check_confidence, finite_or_none
from ..statistics.multiplicity import adjust_p
from ..statistics.paired import aligned
from ..statistics.randomization import check_resamples, randomization_test

SCHEMA = "rankscope.diff/1"
#: The correction over the rows of a diff (SPEC §8).
CORRECTION = "holm"
#: How the state of a diff row is said, in every face (the text table, the step summary):
#: an established regression, an established improvement, or neither.
STATUS_WORDS: dict[str, str] = {"regression": "REGRESSION", "improvement": "improvement", "none": "no change shown"}
#: Said under a diff shown with each report's intervals beside the paired test's decision.
INTERVALS_NOTE = "the intervals are each report's own (unpaired); the status is decided by the paired test"


def _shape_error(path: str, what: str) -> InputError:
    return InputError(f"not a rankscope report: {what}", path, 1)


def _finite_number(v: object) -> bool:
    """A JSON number that is a finite float (an integer like 10**400 overflows: not one)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def check_report(report: dict[str, Any], path: str) -> None:
    """The parts of a report `diff` reads, checked before use."""
    inputs = report.get("inputs")
    if not isinstance(inputs, dict):
        raise _shape_error(path, "'inputs' is missing or not an object")
    if not isinstance(inputs.get("qrels"), dict):
        raise _shape_error(path, "'inputs.qrels' is missing or not an object")
    if not isinstance(inputs.get("settings"), dict):
        raise _shape_error(path, "'inputs.settings' is missing or not an object")
    pq = report.get("per_query")
    if not isinstance(pq, dict):
        raise _shape_error(path, "'per_query' is missing or not an object")
    for lane, levels in pq.items():
        if not isinstance(levels, dict):
            raise _shape_error(path, f"per_query.{lane} is not an object")
        for level, rows in levels.items():
            if not isinstance(rows, dict):
                raise _shape_error(path, f"per_query.{lane}.{level} is not an object")
            for qid, vals in rows.items():
                if not isinstance(vals, dict):
                    raise _shape_error(path, f"per_query.{lane}.{level}.{qid} is not an object")
                for m, v in vals.items():
                    if not _finite_number(v):
                        raise _shape_error(path, f"per_query.{lane}.{level}.{qid}.{m} is not a finite number")


def comparable(before: dict[str, Any], after: dict[str, Any], path_a: str, path_b: str) -> None:
    """nDCG and friends compare only on the same judgments and settings: refuse otherwise."""
    check_report(before, path_a)
    check_report(after, path_b)
    qa, qb = before["inputs"]["qrels"].get("sha256"), after["inputs"]["qrels"].get("sha256")
    if qa != qb:
        raise InputError(f"the reports were computed on different qrels (sha256 {str(qa)[:12]}… vs {str(qb)[:12]}…)", path_b)
    sa, sb = before["inputs"]["settings"], after["inputs"]["settings"]
    for key in ("depth", "relevant", "group_sep"):
        if sa.get(key) != sb.get(key):
            raise InputError(f"setting {key} differs between the reports ({sa.get(key)!r} vs {sb.get(key)!r})", path_b)


@dataclass(frozen=True)
class DiffInput:
    """One (lane, level, metric) matched between two reports, on the qids present in both (sorted as bytes)."""

    lane: str
    level: str
    metric: str
    qids: tuple[str, ...]
    before: np.ndarray
    after: np.ndarray


@dataclass(frozen=True)
class DiffRow:
    lane: str
    level: str
    metric: str
    n: int
    before_mean: float
    after_mean: float
    difference: float
    randomization_p: float | None
    adjusted_p: float | None
    regression: bool
    improvement: bool

    @property
    def status(self) -> str:
        """``regression``, ``improvement`` or ``none`` (a key of :data:`STATUS_WORDS`)."""
        return "regression" if self.regression else "improvement" if self.improvement else "none"

    def as_dict(self) -> dict[str, Any]:
        return {
            "lane": self.lane,
            "level": self.level,
            "metric": self.metric,
            "n": self.n,
            "before_mean": self.before_mean,
            "after_mean": self.after_mean,
            "difference": self.difference,
            "randomization_p": finite_or_none(self.randomization_p),
            "adjusted_p": finite_or_none(self.adjusted_p),
            "regression": self.regression,
            "improvement": self.improvement,
        }


def diff_rows(
    items: Sequence[DiffInput],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    min_delta: float = 0.0,
    chunk: int | None = None,
    threads: int | None = None,
) -> tuple[DiffRow, ...]:
    """Δ = after − before per (lane, level, metric), the compare randomization test, Holm over the rows.

    Rows with fewer than 2 shared queries raise ``InputError``.
    """
    alpha = 1.0 - check_confidence(confidence)
    B = check_resamples(resamples)
    results = []
    for it in items:
        before, after, _ = aligned(it.before, it.after, it.qids)
        d = after - before
        results.append((it, before, after, d, randomization_test(d, B, seed, "two-sided", chunk, threads) if B else None))
    raw: list[float] = []
    for r in results:
        if r[4] is not None:
            assert r[4].p is not None  # B > 0: the test ran
            raw.append(r[4].p)
    adj = adjust_p(raw, CORRECTION) if raw else np.empty(0)
    rows = []
    for k, (it, before, after, d, test) in enumerate(results):
        mean_d = float(np.mean(d))
        a = float(adj[k]) if test is not None else None
        sig = a is not None and a <= alpha
        rows.append(
            DiffRow(
                lane=it.lane,
                level=it.level,
                metric=it.metric,
                n=int(d.size),
                before_mean=float(np.mean(before)),
                after_mean=float(np.mean(after)),
                difference=mean_d,
                randomization_p=None if test is None else test.p,
                adjusted_p=a,
                regression=bool(sig and mean_d < 0 and -mean_d >= min_delta),
                improvement=bool(sig and mean_d > 0 and mean_d >= min_delta),
            )
        )
    return tuple(rows)


def diff_inputs(before: dict[str, Any], after: dict[str, Any], metrics: Sequence[str], path_a: str = "--before", path_b: str = "--after") -> list[DiffInput]:
    """Every (lane, level, metric) both reports hold, on their shared qids (≥ 2), ``metrics`` only when given."""
    items = []
    pa, pb = before["per_query"], after["per_query"]
    for lane in [n for n in pa if n in pb]:
        for level in [lv for lv in pa[lane] if lv in pb[lane]]:
            qa, qb = pa[lane][level], pb[lane][level]
            shared = sorted(set(qa) & set(qb), key=lambda q: q.encode())
            if len(shared) < 2:
                continue
            keys = [k for k in qa[shared[0]] if k != "rank" and (not metrics or k in metrics)]
            for m in keys:
                for rows, path in ((qa, path_a), (qb, path_b)):
                    missing = next((q for q in shared if m not in rows[q]), None)
                    if missing is not None:
                        raise InputError(f"not a rankscope report: per_query.{lane}.{level}.{missing} has no {m}", path, 1)
                items.append(DiffInput(lane, level, m, tuple(shared),
                                       np.array([qa[q][m] for q in shared], dtype=np.float64),
                                       np.array([qb[q][m] for q in shared], dtype=np.float64)))
    if not items:
        raise InputError("the reports share no lane, level and metric with at least two common queries", "--after")
    return items


@dataclass(frozen=True)
class Diff:
    """One ``diff`` call: the rows and what ``diff --out`` records."""

    before: str  # the reports' paths, as given
    after: str
    settings: DiffSettings
    rows: tuple[DiffRow, ...]

    @property
    def regressions(self) -> tuple[DiffRow, ...]:
        return tuple(r for r in self.rows if r.regression)

    def as_dict(self) -> dict[str, Any]:
        s = self.settings
        return {"schema": SCHEMA, "before": self.before, "after": self.after, "resamples": s.resamples, "seed": s.seed,
                "confidence": s.confidence, "min_delta": s.min_delta, "correction": CORRECTION,
                "rows": [r.as_dict() for r in self.rows], "regressions": len(self.regressions)}


def diff_reports(before: dict[str, Any], after: dict[str, Any], settings: DiffSettings, before_path: str = "--before",
                 after_path: str = "--after") -> Diff:
    """The diff of two report dicts: refuse incomparable reports, match, test every row."""
    if not (isinstance(settings.min_delta, (int, float)) and math.isfinite(settings.min_delta)
            and settings.min_delta >= 0):
        raise InputError(f"--min-delta must be a finite number >= 0, not {settings.min_delta}", "--min-delta")
    comparable(before, after, before_path, after_path)
    items = diff_inputs(before, after, settings.metrics, before_path, after_path)
    rows = diff_rows(items, resamples=settings.resamples, seed=settings.seed, confidence=settings.confidence,
                     min_delta=settings.min_delta)
    return Diff(before_path, after_path, settings, rows)


@dataclass(frozen=True)
class Loss:
    """One query's paired difference Δ = after − before of a metric."""

    qid: str
    before: float
    after: float

    @property
    def difference(self) -> float:
        return self.after - self.before


def largest_losses(qids: Sequence[str], before: Sequence[float], after: Sequence[float], n: int) -> tuple[Loss, ...]:
    """The ``n`` queries that lost most: Δ = after − before < 0, most negative first, equal
    Δ in qid order (as bytes), so the same inputs list the same queries. A query that did not
    lose (Δ ≥ 0) is never listed, so fewer than ``n`` may come back."""
    if n < 0:
        raise InputError(f"the number of largest losses must be >= 0, not {n}", "--largest-losses")
    losses = [Loss(q, float(b), float(a)) for q, b, a in zip(qids, before, after) if float(a) - float(b) < 0]
    losses.sort(key=lambda x: (x.difference, x.qid.encode()))
    return tuple(losses[:n])


def row_losses(before: dict[str, Any], after: dict[str, Any], row: DiffRow, n: int) -> tuple[Loss, ...]:
    """The largest losses of one diff row, on the per-query values of the two reports the
    row was tested on (the qids present in both)."""
    qa, qb = before["per_query"][row.lane][row.level], after["per_query"][row.lane][row.level]
    shared = sorted(set(qa) & set(qb), key=lambda q: q.encode())
    return largest_losses(shared, [qa[q][row.metric] for q in shared], [qb[q][row.metric] for q in shared], n)
