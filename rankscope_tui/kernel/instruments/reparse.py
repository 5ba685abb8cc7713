"""Lesson 01 in the small: run and qrels lines as typed or pasted, parsed and ordered exactly
as a file with those lines would be, with each query's ranked list and first relevant rank.

The dashboard's Overview re-parses its edit box through :func:`reparse` on every pause in
typing. The text goes through the same readers as a file (``inputs.readers.read_lane_text``,
``read_qrels_text``: format told by content, every problem named by its line) and the
same workspace (``Workspace.from_raw``: trec_eval's order, judgments, per-query values), so
what the box shows, errors included, is what ``rankscope evaluate`` would make of a file
holding those lines; only the name differs (``pasted run``, ``pasted qrels``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..ranking.judgments import NO_JUDGMENT

#: The order the parsed list follows (trec_eval's; the file's rank column is never read).
TIE_RULE = "score descending, ties broken on the doc id descending as bytes (trec_eval); the rank column is ignored"
RUN_LABEL, QRELS_LABEL = "pasted run", "pasted qrels"


@dataclass(frozen=True)
class ParsedHit:
    rank: int
    doc: str
    score: float
    grade: int | None  # None: not judged for this query


@dataclass(frozen=True)
class ParsedQuery:
    qid: str
    hits: tuple[ParsedHit, ...]
    first_relevant: int  # rank of the first relevant hit; 0 when none is retrieved
    relevant_judged: int  # judged docs with grade >= relevant


@dataclass(frozen=True)
class Reparsed:
    """Every query of the pasted run (in byte order of the qid), ordered, judged, ranked."""

    queries: tuple[ParsedQuery, ...]
    relevant: int
    tie_rule: str = TIE_RULE

    @property
    def n_hits(self) -> int:
        return sum(len(q.hits) for q in self.queries)


def reparse(run_text: str, qrels_text: str, relevant: int = 1) -> Reparsed:
    """Parse ``run_text`` and ``qrels_text`` as a run file and a qrels file; raises the
    readers' ``InputError`` (one line naming ``pasted run`` or ``pasted qrels``, the line
    and the problem) on bad input, exactly as the command line would for such files."""
    from ..inputs.readers import read_lane_text, read_qrels_text
    from ..ranking.judgments import relevant_counts
    from ..settings import LoadSettings
    from ..workspace.loaded import Workspace

    if not run_text.strip():
        raise InputError("nothing to parse: paste run lines (qid Q0 docid rank score tag)", RUN_LABEL)
    if not qrels_text.strip():
        raise InputError("nothing to judge with: paste qrels lines (qid 0 docid grade)", QRELS_LABEL)
    lane = read_lane_text(run_text, RUN_LABEL, "pasted")
    qrels = read_qrels_text(qrels_text, QRELS_LABEL)
    ws = Workspace.from_raw([lane], qrels, LoadSettings(relevant=relevant))
    L = ws.lanes["pasted"]
    first = ws.first_relevant_rank("pasted", "doc")
    n_rel = relevant_counts(ws.judgments, ws.n_queries, relevant)
    out = []
    for q in np.flatnonzero(L.present()).tolist():
        rows = L.rows_of(q)
        doc, score, rank = L.doc[rows], L.score[rows], L.rank[rows]
        grades = ws.judgments.grade_of(np.full(doc.size, q), doc)
        out.append(ParsedQuery(
            str(ws.qids[q]),
            tuple(ParsedHit(int(r), str(ws.doc_id(d)), float(s), None if int(g) == NO_JUDGMENT else int(g))
                  for r, d, s, g in zip(rank.tolist(), doc.tolist(), score.tolist(), grades.tolist())),
            int(first[q]), int(n_rel[q])))
    return Reparsed(tuple(out), relevant)
