"""Units with several rows: query variants of one topic, several evaluation draws of one user.

A unit file (``--unit FILE``) is ``qid<TAB>unit`` per line. When one is given, every
paired statistic first reduces each unit's rows to their means (seed 001, "When one
user owns several rows"):

    d̄_u = (1/r_u) Σ_j d_uj,   Δ̂ = (1/U) Σ_u d̄_u,

and the effect, the bootstrap, the sign-flip test, the t-test, BCa and the effect size
all run on d̄_1 … d̄_U, so a unit with five rows is one observation, not five. The
units are ordered by their label as bytes (the resampling protocol's order, as qids
are without units). Weighting by rows instead would let the evaluation protocol decide
which topics count for more; the two agree exactly when every r_u is the same.
(The statistics literature calls this cluster sampling.)

Fewer than two units is an error: several rows of one unit cannot estimate variation
across units, and a bootstrap over one unit would print a zero-width interval.

References
----------
- Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Wiley, chapter 9. (cluster
  sampling: the unit, not the row, is the observation)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..inputs.files import read_text


@dataclass(frozen=True)
class UnitFile:
    """A ``qid<TAB>unit`` file as read: its path and the (qid, unit) pairs in file order."""

    path: str
    pairs: tuple[tuple[str, str], ...]

    def mapping(self) -> dict[str, str]:
        return dict(self.pairs)

    def units_of(self, qids: Sequence[str]) -> list[str]:
        """The unit of every qid; a compared query without a unit is an error (it would
        otherwise be silently made a unit of its own)."""
        m = self.mapping()
        missing = [q for q in qids if q not in m]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise InputError(f"compared query {missing[0]!r}{more} has no unit in this file", self.path)
        return [m[q] for q in qids]


def read_units(path: str) -> UnitFile:
    """``qid<TAB>unit`` per line (blank and ``#`` lines skipped); a line without a tab, an
    empty field, or a qid given two units is an error naming the line."""
    text = read_text(path)
    seen: dict[str, tuple[str, int]] = {}
    pairs: list[tuple[str, str]] = []
    for i, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" not in line:
            raise InputError("expected 'qid<TAB>unit' (no tab on this line)", path, i)
        q, unit = (x.strip() for x in line.split("\t", 1))
        if not q or not unit:
            raise InputError("empty qid or unit", path, i)
        if q in seen:
            if seen[q][0] != unit:
                raise InputError(f"query {q!r} has two units: {seen[q][0]!r} (line {seen[q][1]}) and {unit!r}", path, i)
            continue
        seen[q] = (unit, i)
        pairs.append((q, unit))
    if not pairs:
        raise InputError("empty file (expected 'qid<TAB>unit' lines)", path)
    return UnitFile(path, tuple(pairs))


@dataclass(frozen=True)
class UnitMeans:
    """Per-unit means of aligned per-row arrays, units sorted by label as bytes.

    ``columns[k][u]`` = ``np.mean`` of column k over unit u's rows (row order kept);
    ``rows[u]`` = how many rows unit u has.
    """

    labels: tuple[str, ...]
    columns: tuple[np.ndarray, ...]
    rows: np.ndarray

    @property
    def n_units(self) -> int:
        return len(self.labels)


def unit_means(units: Sequence[str], *columns: np.ndarray) -> UnitMeans:
    """Reduce each column to its unit means (see the module doc); < 2 units is an error."""
    labels = [str(u) for u in units]
    n = len(labels)
    cols = [np.asarray(c, dtype=np.float64) for c in columns]
    if any(c.ndim != 1 or c.size != n for c in cols):
        raise InputError(f"units must be aligned with the per-query values ({n} units for {[c.size for c in cols]} values)")
    order = sorted(set(labels), key=lambda x: x.encode("utf-8", "surrogatepass"))
    if len(order) < 2:
        raise InputError(
            f"the {n} compared queries fall in {len(order)} unit(s): a comparison over units needs at least 2 "
            "(one unit cannot show variation across units)"
        )
    index = {u: k for k, u in enumerate(order)}
    code = np.fromiter((index[u] for u in labels), dtype=np.intp, count=n)
    members = np.argsort(code, kind="stable")  # rows grouped by unit, row order kept inside a unit
    counts = np.bincount(code, minlength=len(order))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    out = []
    for c in cols:
        grouped = c[members]
        out.append(np.array([np.mean(grouped[s:s + r]) for s, r in zip(starts, counts)], dtype=np.float64))
    return UnitMeans(tuple(order), tuple(out), counts)
