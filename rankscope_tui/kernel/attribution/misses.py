"""Miss attribution: which input lane surfaced each positive's answer (SPEC §4, lessons 05-06).

Input: for every positive query, each **input** lane's first-relevant ``rank`` at one
level (doc or group; 1-based, 0 = miss, within depth), as a (positives × lanes) int
matrix in ``--lane`` order, and the window W (how many candidates the next stage
sees). Fused lanes and cap/docfirst variants are never attributed.

Labels (a partition of the positives):

- ``not_indexed`` -- only when a corpus is given: no relevant doc of the query is in
  the corpus (coverage; no lane can help). It takes precedence over everything else.
  Without a corpus it is never assigned and the report says coverage was not assessed.
- ``beyond_window`` -- no lane has ``0 < rank <= W``, but some lane has it deeper
  (that lane retrieves it and does not carry it to the next stage);
- ``not_retrieved`` -- no lane retrieves it within depth;
  (``not_surfaced`` = beyond_window + not_retrieved)
- otherwise the ``+``-joined names, in lane order, of the lanes with ``0 < rank <= W``.

A lane's **unique share** is #{positives labelled with that lane alone} / #positives.
A lane's **misses** are #{positives with not 0 < rank <= W} (not_indexed included).
Labels are computed with bit masks: bit l is set when lane l has the answer in the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..ranking.ranks import distinct

if TYPE_CHECKING:
    from ..ranking.judgments import Judgments
    from ..scale.bucket import QueryWorkspace
    from ..workspace.loaded import Workspace

NOT_INDEXED = "not_indexed"
NOT_SURFACED = "not_surfaced"
BEYOND_WINDOW = "beyond_window"
NOT_RETRIEVED = "not_retrieved"

# label codes that are not lane bit masks (masks are >= 1)
_CODE_NOT_INDEXED = -1
_CODE_BEYOND = -2
_CODE_NOT_RETRIEVED = -3
_SPECIAL = {_CODE_NOT_INDEXED: NOT_INDEXED, _CODE_BEYOND: BEYOND_WINDOW, _CODE_NOT_RETRIEVED: NOT_RETRIEVED}
NONE_LABEL = "(none)"
_ALL_COMBOS_UP_TO = 4  # list every lane combination (zeros included) for at most this many lanes

__all__ = [
    "NOT_INDEXED", "NOT_SURFACED", "BEYOND_WINDOW", "NOT_RETRIEVED",
    "label_codes", "label_names", "lane_combination",
    "Coverage", "coverage", "coverage_per_query", "coverage_of", "MissingQueries", "missing_from_lanes",
    "LaneShare", "LabelCounts", "BlindBlock", "Attribution",
    "resolve_blind", "attribute", "attribute_workspace", "compute_attribution", "query_labels",
]


# ------------------------------------------------------------------------ labels


def label_codes(ranks: np.ndarray, window: int = 10, indexed: np.ndarray | None = None) -> np.ndarray:
    """Label code per positive: a lane bit mask (>= 1), or -1 not_indexed, -2 beyond_window,
    -3 not_retrieved. ``indexed`` (bool per positive) is None when coverage is not assessed."""
    if window < 1:
        raise InputError(f"--window must be >= 1, got {window}", "--window")
    r = np.asarray(ranks)
    if r.ndim != 2:
        raise ValueError("ranks must be a (positives × lanes) matrix")
    if r.shape[1] > 62:
        raise ValueError("at most 62 lanes can be attributed")
    inside = (r > 0) & (r <= window)
    bits = np.left_shift(np.int64(1), np.arange(r.shape[1], dtype=np.int64))
    code = (inside.astype(np.int64) * bits).sum(axis=1) if r.shape[1] else np.zeros(r.shape[0], np.int64)
    none = code == 0
    deeper = (r > window).any(axis=1)
    code[none & deeper] = _CODE_BEYOND
    code[none & ~deeper] = _CODE_NOT_RETRIEVED
    if indexed is not None:
        code[~np.asarray(indexed, dtype=bool)] = _CODE_NOT_INDEXED
    return code


def lane_combination(mask: int, lanes: Sequence[str]) -> str:
    """``bm25+dense`` for the bit mask of lanes 0 and 1."""
    return "+".join(name for i, name in enumerate(lanes) if mask >> i & 1)


def label_names(codes: np.ndarray, lanes: Sequence[str]) -> np.ndarray:
    """Object array of label names for label codes."""
    out = np.empty(codes.shape[0], dtype=object)
    for c in distinct(codes):
        out[codes == c] = _SPECIAL.get(int(c)) or lane_combination(int(c), lanes)
    return out


def _label_order(lanes: Sequence[str], present_masks: np.ndarray) -> list[int]:
    """Partition labels in report order: the three special ones, then lane combinations
    by size, then lane order (all combinations for a few lanes, else singles + seen)."""
    n = len(lanes)
    if n <= _ALL_COMBOS_UP_TO:
        masks = list(range(1, 1 << n))
    else:
        masks = sorted({1 << i for i in range(n)} | {int(m) for m in present_masks if m > 0})
    masks.sort(key=lambda m: (bin(m).count("1"), [i for i in range(n) if m >> i & 1]))
    return [_CODE_NOT_INDEXED, _CODE_BEYOND, _CODE_NOT_RETRIEVED] + masks


# ----------------------------------------------------------------- side counts


@dataclass(frozen=True)
class Coverage:
    """Relevant (query, doc) pairs of the positives whose doc is not in the corpus."""

    assessed: bool
    relevant_pairs: int | None = None
    not_in_corpus: int | None = None
    queries_not_indexed: int | None = None  # positives with no relevant doc in the corpus

    def as_dict(self) -> dict[str, Any]:
        if not self.assessed:
            return {"assessed": False, "relevant_pairs": None, "not_in_corpus": None, "queries_not_indexed": None,
                    "reason": "coverage not assessed (no --corpus): not_indexed is never assigned"}
        return {"assessed": True, "relevant_pairs": self.relevant_pairs, "not_in_corpus": self.not_in_corpus,
                "queries_not_indexed": self.queries_not_indexed}


def coverage_per_query(judgments: Judgments, relevant: int, corpus_mask: np.ndarray,
                       n_queries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query code: (indexed, relevant pairs, relevant pairs whose doc is not in the corpus).

    ``judgments`` has ``qid``, ``doc`` and ``grade`` columns; ``corpus_mask`` is a bool per
    doc code. A query is indexed when at least one of its relevant docs (grade >=
    ``relevant``) is in the corpus (the same at group level: a relevant group needs a
    relevant doc). One query's values read only its own judgments, so they can be taken
    bucket by bucket (``kernel.bucket``) and summed over the positives after.
    """
    corpus_mask = np.asarray(corpus_mask, dtype=bool)
    rel = judgments.grade >= relevant
    q, d = judgments.qid[rel].astype(np.int64), judgments.doc[rel]
    inside = np.zeros(d.shape[0], dtype=bool)
    known = d < corpus_mask.shape[0]
    inside[known] = corpus_mask[d[known]]
    pairs = np.bincount(q, minlength=n_queries).astype(np.int64)
    outside = np.bincount(q[~inside], minlength=n_queries).astype(np.int64)
    indexed = np.zeros(n_queries, dtype=bool)
    indexed[q[inside]] = True
    return indexed, pairs, outside


def coverage_of(per_query: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
                positives: np.ndarray) -> tuple[np.ndarray | None, Coverage]:
    """(indexed flag per positive or None, coverage line) from :func:`coverage_per_query`'s
    arrays (None: no corpus, coverage not assessed)."""
    if per_query is None:
        return None, Coverage(False)
    positives = np.asarray(positives, dtype=np.int64)
    indexed, pairs, outside = per_query
    ind = indexed[positives]
    return ind, Coverage(True, int(pairs[positives].sum()), int(outside[positives].sum()), int((~ind).sum()))


def coverage(judgments: Judgments, relevant: int, positives: np.ndarray,
             corpus_mask: np.ndarray | None) -> tuple[np.ndarray | None, Coverage]:
    """(indexed flag per positive or None, coverage line): :func:`coverage_of` over
    :func:`coverage_per_query` (see there)."""
    positives = np.asarray(positives, dtype=np.int64)
    if corpus_mask is None:
        return None, Coverage(False)
    n_q = int(max(int(judgments.qid.max(initial=-1)), int(positives.max(initial=-1)))) + 1
    return coverage_of(coverage_per_query(judgments, relevant, corpus_mask, n_q), positives)


@dataclass(frozen=True)
class MissingQueries:
    """Judged queries (positives and negatives) absent from at least one input lane."""

    judged: int
    missing_from_any: int
    per_lane: tuple[tuple[str, int], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"judged_queries": self.judged, "missing_from_any": self.missing_from_any,
                "per_lane": dict(self.per_lane)}


def missing_from_lanes(judged: np.ndarray, lanes: Sequence[str], present: Sequence[np.ndarray]) -> MissingQueries:
    """``judged``: query codes; ``present``: per lane, bool mask over query codes
    (``RankedLane.present()``)."""
    judged = np.asarray(judged, dtype=np.int64)
    miss = np.stack([~np.asarray(p, dtype=bool)[judged] for p in present], axis=1) if present else \
        np.zeros((judged.shape[0], 0), dtype=bool)
    return MissingQueries(int(judged.shape[0]), int(miss.any(axis=1).sum()),
                          tuple((name, int(miss[:, i].sum())) for i, name in enumerate(lanes)))


# --------------------------------------------------------------------- results


@dataclass(frozen=True)
class LaneShare:
    lane: str
    count: int  # positives labelled with this lane alone
    n: int  # positives
    only_lane: bool = False  # the only input lane: every surfaced positive is "unique" to it

    @property
    def share(self) -> float | None:
        return self.count / self.n if self.n else None

    @property
    def meaningful(self) -> bool:
        """False with one input lane (nothing to be unique against) or no positives."""
        return bool(self.n) and not self.only_lane

    @property
    def reason(self) -> str | None:
        """Why the share means nothing, or None."""
        if self.n == 0:
            return "no positives"
        if self.only_lane:
            return "not meaningful with one lane"
        return None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"count": self.count, "n": self.n, "share": self.share}
        if self.reason:
            d["share_reason"] = self.reason
        return d


@dataclass(frozen=True)
class LabelCounts:
    """Label counts over one set of positives (all of them, or one stratum)."""

    n: int
    counts: tuple[tuple[str, int | None], ...]  # partition labels in report order; None = not assessed
    unique: tuple[LaneShare, ...]

    def count(self, label: str) -> int | None:
        return dict(self.counts)[label]

    @property
    def not_surfaced(self) -> int:
        c = dict(self.counts)
        beyond, unretrieved = c[BEYOND_WINDOW], c[NOT_RETRIEVED]
        assert beyond is not None and unretrieved is not None  # only not_indexed can go unassessed
        return int(beyond) + int(unretrieved)

    def as_dict(self) -> dict[str, Any]:
        labels: dict[str, Any] = {}
        for name, c in self.counts:
            labels[name] = c
            if name == NOT_INDEXED and c is None:
                labels["not_indexed_reason"] = "coverage not assessed (no --corpus)"
            if name == NOT_RETRIEVED:
                labels[NOT_SURFACED] = self.not_surfaced
        return {"positives": self.n, "labels": labels, "unique_share": {s.lane: s.as_dict() for s in self.unique}}


@dataclass(frozen=True)
class BlindBlock:
    """Per lane, its misses in the blind stratum and overall, and the stratum's size."""

    stratification: str
    label: str
    size: int
    misses_in_stratum: tuple[tuple[str, int], ...]
    misses_overall: tuple[tuple[str, int], ...]

    def as_dict(self) -> dict[str, Any]:
        inside, overall = dict(self.misses_in_stratum), dict(self.misses_overall)
        return {"stratification": self.stratification, "label": self.label, "size": self.size,
                "lanes": {lane: {"misses_in_stratum": inside[lane], "misses_overall": overall[lane]} for lane in inside}}


@dataclass(frozen=True)
class Attribution:
    level: str
    window: int
    lanes: tuple[str, ...]
    positives: np.ndarray  # query codes, aligned with codes/labels
    codes: np.ndarray  # label code per positive
    overall: LabelCounts
    strata: tuple[tuple[str, tuple[tuple[str, LabelCounts], ...]], ...]
    coverage: Coverage
    blind: BlindBlock | None = None
    missing: MissingQueries | None = None

    @property
    def labels(self) -> np.ndarray:
        """Label name per positive (object array)."""
        return label_names(self.codes, self.lanes)

    def label_of(self, n_queries: int, fill: str = "") -> np.ndarray:
        """Label name per query code (``fill`` for queries that are not positives)."""
        out = np.full(n_queries, fill, dtype=object)
        out[self.positives] = self.labels
        return out

    def as_dict(self, qids: Sequence[str] | np.ndarray | None = None) -> dict[str, Any]:
        """Strict-JSON dict; with ``qids`` (code -> id) the per-query labels are listed."""
        d: dict[str, Any] = {
            "level": self.level,
            "window": self.window,
            "lanes": list(self.lanes),
            "definition": (f"per positive, from each input lane's first relevant rank at {self.level} level: "
                           f"not_indexed (no relevant doc in the corpus), not_surfaced (no lane has 0 < rank <= "
                           f"{self.window}: beyond_window if some lane has it deeper, else not_retrieved), "
                           f"otherwise the lanes with 0 < rank <= {self.window} joined with '+'"),
            "coverage": self.coverage.as_dict(),
            **self.overall.as_dict(),
            "strata": {s: {lab: c.as_dict() for lab, c in per} for s, per in self.strata},
            "blind": self.blind.as_dict() if self.blind else None,
            "missing_from_lanes": self.missing.as_dict() if self.missing else None,
        }
        if qids is not None:
            # {str(qids[int(q)]): label for q, label in zip(positives, labels)}, read column-wise
            pos = np.asarray(self.positives, dtype=np.int64)
            names = qids[pos].tolist() if isinstance(qids, np.ndarray) else [qids[q] for q in pos.tolist()]
            d["per_query"] = dict(zip(map(str, names), self.labels.tolist()))
        return d


# ---------------------------------------------------------------------- compute


def _counts(codes: np.ndarray, order: list[int], lanes: Sequence[str], assessed: bool) -> LabelCounts:
    uniq, cnt = np.unique(codes, return_counts=True)
    found = dict(zip(uniq.tolist(), cnt.tolist()))
    counts = []
    for c in order:
        name = _SPECIAL.get(c) or lane_combination(c, lanes)
        counts.append((name, None if (c == _CODE_NOT_INDEXED and not assessed) else int(found.get(c, 0))))
    n = int(codes.shape[0])
    unique = tuple(LaneShare(lane, int(found.get(1 << i, 0)), n, len(lanes) == 1) for i, lane in enumerate(lanes))
    return LabelCounts(n, tuple(counts), unique)


def _sorted_labels(values: Iterable[object]) -> list[str]:
    labs = sorted({str(v) for v in values})
    if NONE_LABEL in labs:  # unlabelled queries last
        labs.remove(NONE_LABEL)
        labs.append(NONE_LABEL)
    return labs


def _some(values: Iterable[object], limit: int = 8) -> str:
    vals = list(values)
    shown = ", ".join(repr(v) for v in vals[:limit])
    return shown + (f", … ({len(vals)} in all)" if len(vals) > limit else "")


def resolve_blind(blind: str, strata: Mapping[str, np.ndarray]) -> tuple[str, str]:
    """``LABEL`` or ``STRAT=LABEL`` -> (stratification, label), checked against the
    labels of every query (``strata``: name -> label per query). Errors name the option
    once (``--blind: ...``) and say when no ``--strata`` file is loaded."""
    if not strata:
        raise InputError(f"{blind!r} needs a --strata file and none is loaded (it names a label, or STRAT=LABEL, "
                         "of a --strata file)", "--blind")

    def labels_of(name: str) -> list[str]:
        return [lab for lab in _sorted_labels(np.asarray(strata[name], dtype=object).tolist()) if lab != NONE_LABEL]

    if "=" in blind:
        name, label = blind.split("=", 1)
        if name not in strata:
            raise InputError(f"no stratification named {name!r} (loaded: {_some(strata)})", "--blind")
        if not np.any(np.asarray(strata[name], dtype=object) == label):
            raise InputError(f"stratification {name!r} has no label {label!r} (its labels: {_some(labels_of(name))})",
                             "--blind")
        return name, label
    hits = [name for name, labels in strata.items() if np.any(np.asarray(labels, dtype=object) == blind)]
    if not hits:
        known = "; ".join(f"{name}: {_some(labels_of(name))}" for name in strata)
        raise InputError(f"no stratification has the label {blind!r} (labels of {known})", "--blind")
    if len(hits) > 1:
        raise InputError(f"the label {blind!r} is in several stratifications ({', '.join(hits)}); "
                         f"write STRAT=LABEL", "--blind")
    return hits[0], blind


def attribute(
    ranks: np.ndarray,
    lanes: Sequence[str],
    positives: np.ndarray,
    window: int = 10,
    indexed: np.ndarray | None = None,
    strata: Mapping[str, np.ndarray] | None = None,
    blind: tuple[str, str] | None = None,
    level: str = "doc",
    coverage_line: Coverage | None = None,
    missing: MissingQueries | None = None,
) -> Attribution:
    """Attribute every positive (see the module conventions).

    ``ranks``: (positives × lanes) first-relevant ranks (0 = miss) in lane order;
    ``positives``: their query codes; ``indexed``: bool per positive, None when no
    corpus was given; ``strata``: stratification -> label per positive; ``blind``:
    (stratification, label), see :func:`resolve_blind`.
    """
    lanes = tuple(lanes)
    ranks = np.asarray(ranks)
    positives = np.asarray(positives)
    if ranks.shape != (positives.shape[0], len(lanes)):
        raise ValueError(f"ranks has shape {ranks.shape}, expected ({positives.shape[0]}, {len(lanes)})")
    assessed = indexed is not None
    codes = label_codes(ranks, window, indexed)
    order = _label_order(lanes, codes)
    overall = _counts(codes, order, lanes, assessed)
    per: list[tuple[str, tuple[tuple[str, LabelCounts], ...]]] = []
    for name, labels in (strata or {}).items():
        labels = np.asarray(labels, dtype=object)
        if labels.shape[0] != codes.shape[0]:
            raise ValueError(f"stratification {name!r} has {labels.shape[0]} labels for {codes.shape[0]} positives")
        per.append((name, tuple((lab, _counts(codes[labels == lab], order, lanes, assessed))
                                for lab in _sorted_labels(labels))))
    block = None
    if blind is not None:
        name, label = blind
        if strata is None or name not in strata:
            raise InputError(f"no stratification named {name!r}", "--blind")
        in_blind = np.asarray(strata[name], dtype=object) == label
        miss = ~((ranks > 0) & (ranks <= window))
        block = BlindBlock(name, label, int(in_blind.sum()),
                           tuple((lane, int(miss[in_blind, i].sum())) for i, lane in enumerate(lanes)),
                           tuple((lane, int(miss[:, i].sum())) for i, lane in enumerate(lanes)))
    cov = coverage_line if coverage_line is not None else \
        Coverage(assessed, queries_not_indexed=int((codes == _CODE_NOT_INDEXED).sum()) if assessed else None)
    return Attribution(level, int(window), lanes, positives, codes, overall, tuple(per), cov, block, missing)


# ---------------------------------------------------------- workspace adaptors


def attribute_workspace(ws: Workspace | QueryWorkspace, level: str = "doc") -> Attribution:
    """Attribution over a kernel workspace's input lanes, positives, strata, blind
    stratum, corpus and settings (window, relevant); computed once per workspace
    (``Workspace.attribution`` keeps it)."""
    kept: Attribution = ws.attribution(level)
    return kept


def compute_attribution(ws: Workspace | QueryWorkspace, level: str = "doc") -> Attribution:
    """What :func:`attribute_workspace` returns, computed afresh (``Workspace.attribution``
    calls this and keeps the result)."""
    from ..ranking import judgments as J

    lanes = list(ws.input_lanes)
    pos = np.asarray(ws.positives, dtype=np.int64)
    ranks = np.stack([np.asarray(ws.first_relevant_rank(lane, level))[pos] for lane in lanes], axis=1) if lanes \
        else np.zeros((pos.shape[0], 0), dtype=np.int32)
    # the workspace's cached coverage_per_query arrays (None without a corpus)
    per_query: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray] | None] = ws.coverage
    indexed, cov = coverage_of(per_query(), pos)
    strata = {name: np.asarray(labels, dtype=object)[pos] for name, labels in ws.strata.items()}
    blind = resolve_blind(ws.settings.blind, ws.strata) if ws.settings.blind else None
    judged = np.flatnonzero((ws.classes == J.POSITIVE) | (ws.classes == J.NEGATIVE))
    missing = missing_from_lanes(judged, lanes, [ws.present(lane) for lane in lanes])
    return attribute(ranks, lanes, pos, ws.settings.window, indexed, strata, blind, level, cov, missing)


def query_labels(ws: Workspace, level: str = "doc") -> np.ndarray:
    """Attribution label per query code ("" for queries that are not positives)."""
    return attribute_workspace(ws, level).label_of(ws.n_queries)


@dataclass(frozen=True)
class JudgedDoc:
    """One judged doc of one query, for the drill-down: its grade, whether it is relevant at
    the workspace's level, the rank each input lane gives it (0 = not retrieved within the
    lane's depth), and whether it is in the corpus (None when no corpus was given)."""

    doc: str
    grade: int
    relevant: bool
    ranks: dict[str, int]  # lane -> rank (0: not retrieved)
    indexed: bool | None

    @property
    def retrieved(self) -> bool:
        return any(r > 0 for r in self.ranks.values())


def judged_docs(ws: Workspace, q: int, lanes: Sequence[str] | None = None) -> list[JudgedDoc]:
    """The judged docs of query code ``q`` (grades >= 0; a negative grade is "in the pool, not
    judged"), relevant first then by grade and doc id, with each lane's rank of them."""
    j = ws.judgments
    lo, hi = np.searchsorted(j.qid, [q, q + 1])
    docs, grades = j.doc[lo:hi], j.grade[lo:hi]
    keep = grades >= 0
    docs, grades = docs[keep], grades[keep]
    lanes = list(ws.input_lanes) if lanes is None else list(lanes)
    rank_of: dict[str, dict[int, int]] = {}
    for lane in lanes:
        L = ws.lanes[lane]
        rows = L.rows_of(q)
        rank_of[lane] = dict(zip(L.doc[rows].tolist(), L.rank[rows].tolist()))
    rel = ws.settings.relevant
    out = []
    for d, g in zip(docs.tolist(), grades.tolist()):
        indexed = None if ws.corpus_mask is None else bool(ws.corpus_mask[d]) if d < ws.corpus_mask.size else False
        out.append(JudgedDoc(str(ws.doc_id(d)), int(g), g >= rel, {lane: int(rank_of[lane].get(d, 0)) for lane in lanes},
                             indexed))
    out.sort(key=lambda x: (not x.relevant, -x.grade, x.doc))
    return out
