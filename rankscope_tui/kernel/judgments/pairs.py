"""The (query, doc) pairs two qrels both judge, and whether their grades share one scale.

A pair is judged in a qrels when it has a grade >= 0 there: a negative grade means "in
the pool, not judged" (trec_eval), so such pairs take part in no agreement. An identical
line given twice counts once; one pair given two different grades is an error, as when
``evaluate`` reads qrels.

The scale rule (``check_scale``): two sets of labels are compared grade for grade only
when they use one scale. Without a declared scale the judged grades of each file must
run over the same range: the same lowest and the same highest grade (A on 0..4 and B on
0..1 are different scales, and a binary B against a graded A would make every grade
above 1 a disagreement). A declared scale ``LO..HI`` (``--grades``) replaces the rule
when one set of labels never uses an end of the scale: then every judged grade of both
files must lie inside it. When A labels a random subset of B's pairs (PPI) the subset
may miss an end of the scale by chance, so there A's grades need only lie inside B's
range. The categories of κ are the integers ``LO..HI``, so a grade
nobody used is an empty row and column, and weighted κ weighs a disagreement by the
grade distance itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..inputs.rows import RawQrels


@dataclass(frozen=True)
class Judged:
    """One qrels' judged pairs: ``{(qid, doc): (grade, line)}`` and its path."""

    path: str
    pairs: dict[tuple[str, str], tuple[int, int]]

    @property
    def queries(self) -> set[str]:
        return {q for q, _ in self.pairs}

    def grade_range(self) -> tuple[int, int]:
        grades = [g for g, _ in self.pairs.values()]
        return min(grades), max(grades)


def judged_pairs(raw: RawQrels) -> Judged:
    """The pairs ``raw`` judges (grade >= 0), each once; a pair with two grades is an error."""
    qids = raw.qid.to_pylist()
    docs = raw.doc.to_pylist()
    grades = np.asarray(raw.grade).tolist()
    lines = np.asarray(raw.line).tolist()
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for q, d, g, line in zip(qids, docs, grades, lines):
        key = (str(q), str(d))
        old = seen.get(key)
        if old is not None:
            if old[0] != g:
                raise InputError(f"same (qid, doc) judged twice with different grades (first at line {old[1]})",
                                 raw.path, int(line))
            continue
        seen[key] = (int(g), int(line))
    judged = {k: v for k, v in seen.items() if v[0] >= 0}
    if not judged:
        raise InputError("no judged pair (every grade is negative: in the pool, not judged)", raw.path)
    return Judged(raw.path, judged)


def _first_outside(j: Judged, lo: int, hi: int) -> tuple[int, int] | None:
    """(line, grade) of the first judged pair of ``j`` outside ``lo..hi``, in file order."""
    out = [(line, g) for g, line in j.pairs.values() if not lo <= g <= hi]
    return min(out) if out else None


def check_scale(a: Judged, b: Judged, declared: tuple[int, int] | None = None, subset: bool = False) -> tuple[int, int]:
    """The common scale ``(lo, hi)`` of ``a`` and ``b`` under the module's rule, or an
    ``InputError`` naming the file and line of the first grade that breaks it. ``subset``:
    ``a`` labels a sample of ``b``'s pairs, which may by chance miss an end of the scale,
    so ``a``'s grades need only lie inside ``b``'s range (the scale is ``b``'s)."""
    if declared is not None:
        lo, hi = declared
        for j in (a, b):
            bad = _first_outside(j, lo, hi)
            if bad is not None:
                raise InputError(f"grade {bad[1]} is outside the declared scale {lo}..{hi} (--grades)", j.path, bad[0])
        return lo, hi
    ra, rb = a.grade_range(), b.grade_range()
    if ra == rb:
        return ra
    if subset:
        bad = _first_outside(a, *rb)
        if bad is None:
            return rb
        raise InputError(f"grades on different scales: grade {bad[1]} is outside {b.path}'s grades {rb[0]}..{rb[1]} "
                         "(the rule for a labelled subset: its grades lie inside the other's range; map one scale "
                         "onto the other, or declare it with --grades LO:HI)", a.path, bad[0])
    # name the first line of the file reaching beyond the other's range
    for j, (lo, hi) in ((b, ra), (a, rb)):
        bad = _first_outside(j, lo, hi)
        if bad is not None:
            raise InputError(f"grades on different scales: {a.path} grades {ra[0]}..{ra[1]}, {b.path} grades "
                             f"{rb[0]}..{rb[1]} (grade {bad[1]} here); the rule: both use the same lowest and highest "
                             "grade; map one onto the other, or declare the scale with --grades LO:HI", j.path, bad[0])
    raise AssertionError("unreachable: two different ranges, each inside the other")  # pragma: no cover


@dataclass(frozen=True)
class GradedPairs:
    """The pairs both qrels judge: a query code per pair (codes into ``qids``, sorted as
    bytes: the resampling protocol's order) and the two grades."""

    qids: NDArray[np.object_]
    query: NDArray[np.int64]
    docs: tuple[str, ...]
    grade_a: NDArray[np.int64]
    grade_b: NDArray[np.int64]
    scale: tuple[int, int]
    only_a: int  # pairs judged in A only
    only_b: int  # pairs judged in B only

    @property
    def n(self) -> int:
        return int(self.query.size)

    @property
    def categories(self) -> NDArray[np.int64]:
        return np.arange(self.scale[0], self.scale[1] + 1, dtype=np.int64)

    def as_dict(self) -> dict[str, Any]:
        return {"pairs": self.n, "queries": int(self.qids.size), "only_a": self.only_a, "only_b": self.only_b,
                "scale": {"low": self.scale[0], "high": self.scale[1]}}


def common_pairs(a: Judged, b: Judged, scale: tuple[int, int]) -> GradedPairs:
    """The pairs judged in both ``a`` and ``b``; none in common is an ``InputError``."""
    common = sorted(set(a.pairs) & set(b.pairs), key=lambda k: (k[0].encode(), k[1].encode()))
    if not common:
        raise InputError(f"no (query, doc) pair is judged in both qrels ({len(a.pairs):,} pairs in {a.path}, "
                         f"{len(b.pairs):,} here): agreement needs labels of the same pairs", b.path)
    qids = sorted({q for q, _ in common}, key=lambda s: s.encode())
    code = {q: i for i, q in enumerate(qids)}
    return GradedPairs(
        qids=np.asarray(qids, dtype=object),
        query=np.asarray([code[q] for q, _ in common], dtype=np.int64),
        docs=tuple(d for _, d in common),
        grade_a=np.asarray([a.pairs[k][0] for k in common], dtype=np.int64),
        grade_b=np.asarray([b.pairs[k][0] for k in common], dtype=np.int64),
        scale=scale,
        only_a=len(a.pairs) - len(common),
        only_b=len(b.pairs) - len(common),
    )


def first_not_in(a: Judged, b: Judged) -> tuple[tuple[str, str], int] | None:
    """(pair, line in ``a``) of the first pair ``a`` judges that ``b`` does not, in ``a``'s file order."""
    missing = [(line, k) for k, (_, line) in a.pairs.items() if k not in b.pairs]
    if not missing:
        return None
    line, k = min(missing)
    return k, line
