"""Runs shorter than k (seed 000: "check that every run holds at least k products before
comparing"): decided here once, shown by every face.

A lane whose list for a query holds L < k hits cannot score that query as well at an @k
measure as a full list could. For each lane, level and measure with a cutoff k this module
counts the positive queries with L < k, and for p@k, recall@k and ap@k gives each positive
query's ceiling: the best value that query could reach given its list length L and its
number R of relevant docs (at the measure's relevance level), with m = min(R, L, k) the
most relevant docs the first k ranks of that list can hold:

- p@k ceiling      = m / k   (trec_eval's ``P.k`` divides by k whatever the list length)
- recall@k ceiling = m / R
- ap@k ceiling     = m / R   (the m relevant docs at ranks 1..m, each at precision 1;
  ``map_cut.k`` divides by R)

R = 0 gives 0 (the query is not averaged over: means are over positive queries). With
L >= k these are the ceilings of ``measures.ceilings`` (min(R, k)/k and min(R, k)/R). A
query "cannot reach 1" when its ceiling is below 1.

The warning (one per lane with a short list, at doc level: a group-level list has the same
ranks) joins the report's warnings, so text, JSON, the API and the dashboard say it alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputWarning

if TYPE_CHECKING:
    from ..workspace.contract import RankedPerQuery

#: the measure kinds that get a list-length ceiling (the others are counted only)
CEILING_KINDS = ("p", "recall", "ap")


def list_ceiling(kind: str, n_rel: np.ndarray, length: np.ndarray, k: int) -> np.ndarray:
    """The best ``kind``@k per query given R = ``n_rel`` relevant docs and L = ``length``
    hits: min(R, L, k)/k for p, min(R, L, k)/R for recall and ap (0 when R = 0)."""
    if kind not in CEILING_KINDS:
        raise ValueError(f"no list-length ceiling for {kind!r}")
    m = np.minimum(np.minimum(n_rel.astype(np.float64), length.astype(np.float64)), float(k))
    if kind == "p":
        return np.asarray(m / k, dtype=np.float64)
    return np.asarray(np.divide(m, n_rel, out=np.zeros(m.shape[0]), where=n_rel > 0), dtype=np.float64)


def short_lists(ws: RankedPerQuery) -> dict[str, Any]:
    """``{lane: {level: {"fewer_than_k": {key: n}, "cannot_reach_1": {key: n},
    "per_query": {qid: {"length": L, key: ceiling, ...}}}}}`` over the positive queries,
    for every measure with a cutoff (``fewer_than_k``) and the p@k, recall@k and ap@k among
    them (``cannot_reach_1`` and the per-query ceilings; :func:`list_ceiling`)."""
    pos = ws.positives
    qids = ws.qids[pos].tolist()
    # judged@k describes the judgments, not the lane: it has no best to fall short of
    cut = [m for m in ws.settings.metrics if m.k is not None and m.measure.ranks_lanes]
    out: dict[str, Any] = {}
    for lane in ws.lanes:
        out[lane] = {}
        for level in ws.levels():
            length = ws.list_lengths(lane, level)[pos]
            fewer = {m.key: int((length < m.k).sum()) for m in cut}
            ceilings: dict[str, np.ndarray] = {}
            for m in cut:
                if m.kind in CEILING_KINDS and m.k is not None:
                    n_rel = ws.relevant_count(level, m.rel)[pos]
                    ceilings[m.key] = list_ceiling(m.kind, n_rel, length, m.k)
            rows = {q: {"length": int(L), **{k: float(v[i]) for k, v in ceilings.items()}}
                    for i, (q, L) in enumerate(zip(qids, length.tolist()))}
            out[lane][level] = {"fewer_than_k": fewer,
                                "cannot_reach_1": {k: int((v < 1).sum()) for k, v in ceilings.items()},
                                "per_query": rows}
    return out


def short_list_summary(block: dict[str, Any], n_positives: int) -> dict[str, Any]:
    """The summary's view of :func:`short_lists` at doc level: ``{"positives": n, "lanes":
    {lane: {"fewer_than_k": {...}, "cannot_reach_1": {...}}}}``, lanes with no short list
    and no unreachable 1 left out (an empty ``lanes`` says every list is long enough)."""
    lanes = {}
    for lane, levels in block.items():
        doc = levels.get("doc", {})
        fewer, cannot = doc.get("fewer_than_k", {}), doc.get("cannot_reach_1", {})
        if any(fewer.values()) or any(cannot.values()):
            lanes[lane] = {"fewer_than_k": fewer, "cannot_reach_1": cannot}
    return {"positives": n_positives, "lanes": lanes}


def short_list_lines(summary: dict[str, Any]) -> list[str]:
    """The summary's sentences, one per lane (what text, markdown and the dashboard print):
    ``lane bm25: 3 of 114 positive queries list fewer than k hits (ndcg@10 3, p@10 3);
    cannot reach 1: p@10 40, recall@10 12``."""
    n = summary.get("positives", 0)
    out = []
    for lane, v in summary.get("lanes", {}).items():
        fewer = {k: c for k, c in v["fewer_than_k"].items() if c}
        cannot = {k: c for k, c in v["cannot_reach_1"].items() if c}
        parts = []
        if fewer:
            parts.append(f"{max(fewer.values())} of {n} positive queries list fewer than k hits ("
                         + ", ".join(f"{k} {c}" for k, c in fewer.items()) + ")")
        if cannot:
            parts.append("queries whose ceiling is below 1: " + ", ".join(f"{k} {c}" for k, c in cannot.items()))
        out.append(f"lane {lane}: " + "; ".join(parts))
    return out


def short_list_line(summary: dict[str, Any]) -> str:
    """The summary in one short line (the dashboard's Overview, which must leave room for
    the means at 80×24): how many lanes list fewer than k hits for some positive query, and
    the lane with the most such queries; "" when there is nothing to say. The per-lane
    counts and the ceilings are in the text report and report.json's ``short_lists``."""
    n = summary.get("positives", 0)
    lanes = summary.get("lanes", {})
    short = {lane: max(v["fewer_than_k"].values()) for lane, v in lanes.items() if any(v["fewer_than_k"].values())}
    if not short:
        return ""
    worst = max(short, key=lambda lane: (short[lane], lane))
    return (f"{len(short)} of {len(lanes)} lanes list fewer than k hits for some positive query "
            f"(most: {worst}, {short[worst]} of {n}); ceilings in the report")


def short_list_warnings(ws: RankedPerQuery, block: dict[str, Any] | None = None) -> list[InputWarning]:
    """One warning per lane whose list holds fewer than k hits for some positive query at
    some @k measure (doc level), its count the queries short of the largest such k."""
    block = short_lists(ws) if block is None else block
    out = []
    for lane, levels in block.items():
        fewer = levels.get("doc", {}).get("fewer_than_k", {})
        short = {k: n for k, n in fewer.items() if n}
        if not short:
            continue
        worst = max(short.values())
        parts = ", ".join(f"{k}: {n}" for k, n in short.items())
        out.append(InputWarning("short_lists", worst,
                                f"lane {lane}: positive queries whose list holds fewer than k hits ({parts}); "
                                "an @k measure cannot reach its best there (ceilings in the report's short_lists)",
                                # a count over the lane's queries, not a place in a file: the message
                                # names the lane (report.json's inputs name its file)
                                ""))
    return out
