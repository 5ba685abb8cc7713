"""Caveats that travel with a number (SPEC §13): decided here once, translated by every face.

A report cell is the strict-JSON dict of an ``Interval`` (value, low, high, method, n,
level, note). Its ``note`` holds the flags the statistics room attached ("; "-joined).
This module says which of them a table marks beside the number, with which mark and
which footnote, so that text, markdown, LaTeX, the tidy tables, the API and the
dashboard show the same thing:

- small sample: a bootstrapped interval on fewer than
  :data:`~..statistics.intervals.MIN_QUERIES_FOR_COVERAGE` queries (the percentile
  bootstrap under-covers on few queries; SPEC §3) is marked with a dagger;
- the best mean of a column is marked only when the column ranks lanes (not for
  judged@k, which describes the judgments) and only when the means differ at the
  printed precision (an all-tied column has no best).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..measures import parse_name
from ..statistics.intervals import MIN_QUERIES_FOR_COVERAGE, NOTE_COVERAGE

#: the mark beside a small-sample cell (a dagger; LaTeX writes it as ``\dag``)
SMALL_SAMPLE_MARK = "†"
#: the footnote under a table that holds a marked cell (the mark in front)
SMALL_SAMPLE_FOOTNOTE = f"coverage below nominal: the interval rests on fewer than {MIN_QUERIES_FOR_COVERAGE} queries"


def cell_notes(cell: Mapping[str, Any] | None) -> list[str]:
    """The flags the kernel attached to a cell, one string each (empty when none)."""
    note = (cell or {}).get("note")
    return [part for part in str(note).split("; ") if part] if note else []


def cell_note(cell: Mapping[str, Any] | None) -> str:
    """The cell's flags as one phrase for a ``note`` column ("" when none)."""
    return "; ".join(cell_notes(cell))


def small_sample(cell: Mapping[str, Any] | None) -> bool:
    """True when the cell's interval carries the small-sample flag ("coverage below nominal")."""
    return NOTE_COVERAGE in cell_notes(cell)


def ranks_lanes(metric: str) -> bool:
    """Whether a higher mean of ``metric`` (a report key such as ``ndcg@10``) is a better
    ranking; False for judged@k and for a key no measure reads."""
    try:
        return parse_name(metric).measure.ranks_lanes
    except InputError:  # a key of a per-query table the registry does not know: no claim
        return False


def best_marks(values: Sequence[float | None], metric: str, digits: int = 4) -> list[bool]:
    """Which means a table marks as the column's best: the highest at ``digits`` decimals,
    none when the column does not rank lanes (:func:`ranks_lanes`) or when every shown
    mean is the same (a tie across the column, or a single mean, names no best)."""
    shown = [None if v is None else round(float(v), digits) for v in values]
    present = [v for v in shown if v is not None]
    if not ranks_lanes(metric) or len(set(present)) < 2:
        return [False] * len(values)
    best = max(present)
    return [v is not None and v == best for v in shown]
