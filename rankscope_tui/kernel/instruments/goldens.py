"""Reference vectors (SPEC §8, lesson 14): one case a line, ``kind args -> answer``.

Every answer is computed through the kernel's public functions (ranking, judgments,
metrics, intervals, compare, fusion, gate); no Workspace is needed. A second,
independent implementation (``goldens_reference``, installed beside this module and
sharing no code with the kernel) reads the same lines and prints its own answers;
``check`` recomputes a file and reports every line whose answer differs by more than
1e-9; ``side_by_side`` computes every case with both implementations (the dashboard's
Goldens view).

File format
-----------
* ``kind args -> answer``: ``kind`` is one word, ``args`` and ``answer`` are compact
  JSON (``args`` an object with sorted keys). Lines starting with ``#`` and blank lines
  are comments.
* An answer is a number or a list of numbers. ``+inf`` and ``-inf`` are written as the
  strings ``"inf"`` and ``"-inf"``; ``null`` means undefined (no value exists: a null
  floor from fewer than 2 negatives, a t-test on differences with sd = 0, a degenerate
  BCa interval, an FPIR over no negatives).
* Runs are ``{qid: [[doc, score], ...]}`` in any order (the rank column is never
  trusted); qrels are ``{qid: {doc: grade}}``. Optional ``depth`` cuts every lane
  after ordering; ``relevant`` defaults to 1.
* Per-query answers are lists over the qrels qids sorted as bytes. Flattened
  per-hit answers run over those qids, each in ranked order.
* An *order* answer lists, position by position, the index of the doc id in the
  byte-sorted list of every distinct doc id appearing in the case's run(s) (so tie
  runs read as descending indices: doc id descending as bytes, trec_eval's rule).

Kinds (answer):
  rbp, rbp_resid, err, nerr, infap, iprec_at_recall, 11pt_avg, rprec_mult, num_ret, num_rel,
  num_rel_ret, set_p, set_recall, set_f, f1   per-query values of issue 33's measures; ``k``
                    for rbp, rbp_resid (optional), err, nerr, f1; ``p`` RBP's persistence
                    (0.9 when absent); ``x`` the recall level of iprec_at_recall and the
                    multiple of R of rprec_mult (0.5 when absent); the hand-worked cases
                    carry their arithmetic in the comment lines above them
  rank_of, hit, recall, p, rr, ndcg, judged   per-query values; ``level`` doc|group
                                               (group needs ``sep``); ``k`` except rr/rank_of
  ap, rprec, bpref, ndcg_exp, calibrated_recall  per-query values of the issue-15 measures;
                    ``k`` optional for rr, ndcg and ap (absent = uncut), ignored by rprec and
                    bpref; ``rel`` = the measure's own level (``P(rel=2)@10``), else ``relevant
  trec_order        order of each query's ranked, depth-cut list
  wilson, wald      [low, high] for k of n at ``confidence``
  wilson_upper_zero z²/(n+z²); rule_of_three 3/n; negatives_needed [wilson n, 3/t n]
  rrf, rrf_order    fused scores / order, per query (k, depth)
  minmax            normalised score of every hit, per query in input order
  convex, convex_order  weighted min-max fusion scores / order
  convex_fit        [c_1..c_L, objective]: first maximum of the grid (objective = mean
                    over positives of ``metric`` of the fused lane, exact sum)
  grid_size         C(1/step + L − 1, L − 1)
  null_floor        [floor, its FPIR on the negatives]
  conformal_k       ⌈(1−α)(n+1)⌉ exact; conformal_min_n ⌈1/α − 1⌉
  conformal_floor   [k, floor]
  sweep             flattened [floor, FNIR, FPIR] per candidate (last floor "inf")
  operating_point   [floor, FNIR, FPIR] (``conservative``: on the Wilson upper bound)
  mutual_nn         position of each evaluated query in L(doc) of each of its hits
  bootstrap_mean    [mean, low, high] percentile bootstrap
  paired_bootstrap  [ci_low, ci_high, p_superiority]; unpaired_bootstrap [low, high]
  bca               [low, high] at ``level``
  randomization_p   sign-flip p; t_test paired t p
  holm, bonferroni  adjusted p in call order; holm_thresholds α/(J − j + 1)
Resampling cases follow SPEC §3: a fresh ``numpy.random.default_rng(seed)`` per
procedure over the n values in the order given (queries sorted as bytes).
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..measures import REGISTRY

if TYPE_CHECKING:
    from ..ranking.ranks import RankedLane

TOLERANCE = 1e-9

#: One per-query kind per registered measure (a new measure needs its golden cases), plus rank_of.
METRIC_KINDS: tuple[str, ...] = ("rank_of", *REGISTRY)
KINDS: tuple[str, ...] = (
    *METRIC_KINDS, "trec_order",
    "wilson", "wald", "wilson_upper_zero", "rule_of_three", "negatives_needed",
    "rrf", "rrf_order", "minmax", "convex", "convex_order", "convex_fit", "grid_size",
    "null_floor", "conformal_k", "conformal_min_n", "conformal_floor", "sweep", "operating_point",
    "mutual_nn", "bootstrap_mean", "paired_bootstrap", "unpaired_bootstrap", "bca",
    "randomization_p", "t_test", "holm", "bonferroni", "holm_thresholds",
)  # fmt: skip

HEADER = """\
# rankscope goldens: reference vectors (SPEC §8). One case a line: kind args -> answer.
# args and answer are compact JSON; answers are numbers or lists of numbers;
# +inf/-inf are the strings "inf"/"-inf"; null = undefined. Lines starting with # are comments.
# Per-query answers run over the qrels qids sorted as bytes; per-hit answers over those
# qids, each in ranked order (score desc, doc id desc as bytes, cut at depth).
# Order answers give each position's index in the byte-sorted distinct doc ids of the case.
# Resampling: fresh numpy.random.default_rng(seed) per procedure; bootstrap indices
# rng.integers(0, n, size=(B, n)); sign flips 1 - 2*rng.integers(0, 2, size=(B, n));
# unpaired: I then J from one fresh generator; numpy linear quantiles;
# exceedance |flipped mean| >= |obs| - 100*eps*|obs|. Check: rankscope goldens --check FILE.
"""


# ---------------------------------------------------------------------------
# JSON encoding of answers


def _enc(x: Any) -> Any:
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_enc(v) for v in x]
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, allow_nan=False)


def format_line(kind: str, args: dict[str, Any], ans: Any) -> str:
    return f"{kind} {dumps(args)} -> {dumps(_enc(ans))}"


# ---------------------------------------------------------------------------
# building kernel inputs from a case


def _sorted_bytes(items: Iterable[str]) -> list[str]:
    return sorted(set(items), key=lambda s: s.encode("utf-8"))


class _Setup:
    """Query and doc vocabularies for one case, lanes and judgments as the kernel wants them.

    Query codes follow the qids sorted as bytes; doc codes follow first-seen order
    (runs, then qrels), as a Workspace assigns them, so the tie rule must look the ids up.
    """

    def __init__(self, runs: list[dict[str, Any]], qrels: dict[str, Any] | None):
        import pyarrow as pa

        qrels = qrels or {}
        self.qids = _sorted_bytes([q for r in runs for q in r] + list(qrels))
        self.qcode = {q: i for i, q in enumerate(self.qids)}
        self.docs: list[str] = []
        self.dcode: dict[str, int] = {}
        for r in runs:
            for q in sorted(r, key=lambda s: s.encode()):
                for d, _ in r[q]:
                    self._doc(d)
        for q in sorted(qrels, key=lambda s: s.encode()):
            for d in qrels[q]:
                self._doc(d)
        self.doc_ids = pa.array(self.docs, pa.string())
        self.run_docs = _sorted_bytes([d for r in runs for hits in r.values() for d, _ in hits])
        self.run_index = {d: i for i, d in enumerate(self.run_docs)}
        self.qrels_qids = _sorted_bytes(qrels)
        from ..ranking.judgments import Judgments

        rows = sorted((self.qcode[q], self.dcode[d], int(g)) for q, m in qrels.items() for d, g in m.items())
        if rows:
            jq, jd, jg = (np.array(c) for c in zip(*rows))
        else:
            jq, jd, jg = np.zeros(0), np.zeros(0), np.zeros(0)
        self.judgments = Judgments(jq.astype(np.int32), jd.astype(np.int64), jg.astype(np.int64), max(len(self.docs), 1))

    def _doc(self, d: str) -> None:
        if d not in self.dcode:
            self.dcode[d] = len(self.docs)
            self.docs.append(d)

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    def lane(self, run: dict[str, Any], depth: int | None = None, name: str = "lane") -> RankedLane:
        from ..ranking.ranks import rank_lane

        q: list[int] = []
        d: list[int] = []
        s: list[float] = []
        for qid, hits in run.items():
            for doc, score in hits:
                q.append(self.qcode[qid])
                d.append(self.dcode[doc])
                s.append(float(score))
        return rank_lane(
            name, np.array(q, dtype=np.int32), np.array(d, dtype=np.int64), np.array(s, dtype=np.float64),
            self.n_queries, depth, self.doc_ids,
        )

    def qrels_codes(self) -> list[int]:
        return [self.qcode[q] for q in self.qrels_qids]

    def classes(self, relevant: int) -> np.ndarray:
        from ..ranking.judgments import query_classes

        return query_classes(self.judgments, self.n_queries, relevant)

    def mask(self, cls: int, relevant: int) -> np.ndarray:
        is_cls: np.ndarray = self.classes(relevant) == cls
        return is_cls

    def per_row(self, lane: RankedLane, values: np.ndarray, codes: list[int]) -> list[Any]:
        """Row values of ``lane`` for the query codes ``codes``, each in ranked order."""
        out: list[Any] = []
        for c in codes:
            out.extend(values[lane.rows_of(c)].tolist())
        return out

    def order(self, lane: RankedLane, codes: list[int]) -> list[int]:
        out: list[int] = []
        for c in codes:
            for dc in lane.doc[lane.rows_of(c)].tolist():
                out.append(self.run_index[self.docs[dc]])
        return out


# ---------------------------------------------------------------------------
# answers


def _metric(kind: str, args: dict[str, Any]) -> list[float]:
    from .. import measures as M
    from ..ranking.ranks import group_codes

    su = _Setup([args["run"]], args["qrels"])
    rel = int(args.get("relevant", 1))
    lane = su.lane(args["run"], args.get("depth"))
    j = su.judgments
    if args.get("level", "doc") == "group":
        groups, group_of = group_codes(su.doc_ids, args["sep"])
        hits, ideal = M.group_level(lane.qid, lane.doc, lane.rank, j.qid, j.doc, j.grade, group_of, len(groups))
    else:
        hits, ideal = M.doc_level(lane.qid, lane.doc, lane.rank, j.qid, j.doc, j.grade, j.n_docs)
    if kind == "rank_of":
        key, keys = "rank", [M.MetricKey("rr", None)]
    else:
        measure = M.REGISTRY[kind]
        k = args.get("k")
        k = None if k is None or measure.cutoff == "none" else int(k)
        spec = measure.param
        param = None if spec is None else float(args.get("p" if spec.style == "paren" else "x",
                                                          spec.default if spec.default is not None else 0.5))
        mk = M.MetricKey(kind, k, args.get("rel"), param)
        key, keys = mk.key, [mk]
    values = M.compute(hits, ideal, su.n_queries, keys, rel)[key]
    return [values[c].item() for c in su.qrels_codes()]


def _trec_order(args: dict[str, Any]) -> list[int]:
    su = _Setup([args["run"]], None)
    lane = su.lane(args["run"], args.get("depth"))
    return su.order(lane, [su.qcode[q] for q in su.qids])


def _fusion(kind: str, args: dict[str, Any]) -> Any:  # the answer, as answer() returns it
    from ..fusion import methods as F

    runs = args["lanes"]
    su = _Setup(runs, args.get("qrels"))
    depth = args.get("depth")
    lanes = [su.lane(r, depth, f"l{i}") for i, r in enumerate(runs)]
    codes = [su.qcode[q] for q in su.qids]
    if kind == "minmax":
        lane = lanes[0]
        norm = F.minmax(lane)
        out: list[Any] = []
        for q in su.qids:
            c = su.qcode[q]
            rows = lane.rows_of(c)
            by_doc = {su.docs[d]: v for d, v in zip(lane.doc[rows].tolist(), norm[rows].tolist())}
            out.extend(by_doc[d] for d, _ in runs[0].get(q, []) if d in by_doc)
        return out
    if kind in ("rrf", "rrf_order"):
        fused = F.rrf(lanes, k=args.get("k", 60), n_queries=su.n_queries, depth=depth, doc_ids=su.doc_ids)
    elif kind in ("convex", "convex_order"):
        fused = F.convex(lanes, args["weights"], n_queries=su.n_queries, depth=depth, doc_ids=su.doc_ids)
    else:  # convex_fit
        return _convex_fit(su, lanes, args)
    if kind.endswith("_order"):
        return su.order(fused, codes)
    return su.per_row(fused, fused.score, codes)


def _convex_fit(su: _Setup, lanes: list[RankedLane], args: dict[str, Any]) -> list[float]:
    from .. import measures as M
    from ..fusion import methods as F
    from ..ranking.judgments import POSITIVE

    rel = int(args.get("relevant", 1))
    (key,) = [k for k in M.parse_metrics(args["metric"]) if k.key == args["metric"]]
    pos = np.flatnonzero(su.mask(POSITIVE, rel))
    j = su.judgments

    def objective(lane: RankedLane) -> float:
        hits, ideal = M.doc_level(lane.qid, lane.doc, lane.rank, j.qid, j.doc, j.grade, j.n_docs)
        v = M.compute(hits, ideal, su.n_queries, [key], rel)[key.key]
        return math.fsum(v[pos].tolist()) / pos.size

    fit = F.calibrate_convex(lanes, objective, n_queries=su.n_queries, step=args["step"], depth=args.get("depth"),
                             objective_depth=key.k, doc_ids=su.doc_ids)
    return [*fit.composition, fit.objective]


def _gate(kind: str, args: dict[str, Any]) -> Any:  # the answer, as answer() returns it
    from .. import gate as G
    from ..ranking.judgments import NEGATIVE, POSITIVE

    su = _Setup([args["run"]], args["qrels"])
    rel = int(args.get("relevant", 1))
    lane = su.lane(args["run"], args.get("depth"), "gate")
    top = G.top_scores(lane, su.judgments, rel)
    pos = su.mask(POSITIVE, rel)
    neg = su.mask(NEGATIVE, rel)
    conf = args.get("confidence", 0.95)
    if kind == "null_floor":
        nf = G.null_floor(top, neg, confidence=conf)
        if nf.floor is None:
            return [None, None]
        return [nf.floor, nf.fpir["in_domain"].value]
    if kind == "conformal_floor":
        cf = G.conformal_floor(top, pos, args["alpha"])
        return [cf.k, cf.floor]
    if kind == "mutual_nn":
        among = pos | neg
        mn = G.mutual_nn(lane, among, tie_rule=args.get("tie_rule", "share"))
        codes = [c for c in su.qrels_codes() if among[c]]
        return su.per_row(lane, mn.row_position, codes)
    sw = G.sweep(top, pos, {"in_domain": neg}, margin=args.get("margin"), confidence=conf)
    if kind == "sweep":
        fnir = sw.fnir
        fpir = sw.fpir("in_domain")
        out = []
        for i in range(len(sw)):
            out.extend([sw.threshold[i], fnir[i], fpir[i]])
        return out
    op = G.operating_point(sw, args["target"], bool(args.get("conservative", False)), conf, "in_domain")
    return [op.floor, op.fnir.value, op.fpir["in_domain"].value]


def _qids(n: int) -> list[str]:
    return [f"q{i:03d}" for i in range(n)]


def _stats(kind: str, args: dict[str, Any]) -> Any:  # the answer, as answer() returns it
    from ..statistics import intervals as I
    from ..statistics import multiplicity as MT
    from ..statistics import paired as PA
    from ..statistics import randomization as RZ

    conf = args.get("confidence", 0.95)
    if kind == "wilson":
        iv = I.wilson(args["k"], args["n"], conf)
        return [iv.low, iv.high]
    if kind == "wald":
        iv = I.wald(args["k"], args["n"], conf)
        return [iv.low, iv.high]
    if kind == "wilson_upper_zero":
        return I.wilson_upper_zero(args["n"], conf)
    if kind == "rule_of_three":
        return I.rule_of_three(args["n"])
    if kind == "negatives_needed":
        return list(I.negatives_needed(args["t"], conf))
    if kind == "bootstrap_mean":
        (iv,) = I.bootstrap_intervals(args["values"], args["B"], args["seed"], conf)
        return [iv.value, iv.low, iv.high]
    if kind in ("paired_bootstrap", "unpaired_bootstrap", "bca"):
        b, c = args["baseline"], args["candidate"]
        st = PA.paired_statistics(b, c, _qids(len(b)), resamples=args["B"], seed=args["seed"], confidence=conf)
        if kind == "paired_bootstrap":
            return [st.ci_low, st.ci_high, st.p_superiority]
        if kind == "unpaired_bootstrap":
            return [st.unpaired_ci_low, st.unpaired_ci_high]
        bca = st.bca_interval(args["level"])
        return [None, None] if bca is None else list(bca)
    if kind == "randomization_p":
        r = RZ.randomization_test(args["deltas"], args["B"], args["seed"], args.get("alternative", "two-sided"))
        return r.p
    if kind == "t_test":
        return PA.paired_t_test(np.asarray(args["deltas"], dtype=np.float64), args.get("alternative", "two-sided"))
    if kind in ("holm", "bonferroni"):
        return MT.adjust_p(args["p"], kind).tolist()
    if kind == "holm_thresholds":
        return MT.thresholds(args["p"], args.get("alpha", 0.05), "holm").tolist()
    raise KeyError(kind)


def answer(kind: str, args: dict[str, Any]) -> Any:
    """The kernel's answer to one case (numbers, lists of numbers, None, ±inf floats)."""
    if kind in METRIC_KINDS:
        return _metric(kind, args)
    if kind == "trec_order":
        return _trec_order(args)
    if kind in ("rrf", "rrf_order", "minmax", "convex", "convex_order", "convex_fit"):
        return _fusion(kind, args)
    if kind == "grid_size":
        from ..fusion.methods import grid_size

        return grid_size(args["n_lanes"], args["step"])
    if kind == "conformal_k":
        from ..gate import conformal_k

        return conformal_k(args["n"], args["alpha"])
    if kind == "conformal_min_n":
        from ..gate import conformal_min_n

        return conformal_min_n(args["alpha"])
    if kind in ("null_floor", "conformal_floor", "sweep", "operating_point", "mutual_nn"):
        return _gate(kind, args)
    if kind in KINDS:
        return _stats(kind, args)
    raise KeyError(f"unknown kind {kind!r}")


# ---------------------------------------------------------------------------
# the cases


def _r(rng: random.Random, lo: float, hi: float, digits: int) -> float:
    return round(rng.uniform(lo, hi), digits)


def _random_run_qrels(seed: int, n_q: int = 3, n_hits: int = 7, pool: int = 10, digits: int = 1,
                      ids: str = "d{}", grades: tuple[int, ...] = (-1, 0, 0, 1, 1, 2, 3)) -> tuple[dict[str, Any], dict[str, Any]]:
    """Small seeded run and qrels; coarse scores make ties; some qrels docs unretrieved."""
    rng = random.Random(seed)
    run: dict[str, Any] = {}
    qrels: dict[str, Any] = {}
    for i in range(n_q):
        q = f"q{i + 1}"
        docs = rng.sample([ids.format(j) for j in range(1, pool + 1)], n_hits)
        run[q] = [[d, _r(rng, 0, 3, digits)] for d in docs]
        judged = rng.sample([ids.format(j) for j in range(1, pool + 1)], max(2, pool // 2))
        qrels[q] = {d: rng.choice(grades) for d in judged}
    return run, qrels


# A hand-made fixture: ties, an unjudged (-1) hit, an unretrieved relevant doc,
# a positive absent from the run, a negative, a run query missing from qrels.
_RUN_A = {
    "q1": [["d1", 0.9], ["d2", 0.8], ["d3", 0.8], ["d4", 0.5], ["d5", 0.4], ["d6", 0.1]],
    "q2": [["d7", 2.0], ["d3", 1.0], ["d8", 1.0], ["d10", 1.0], ["d9", 0.5]],
    "q4": [["d1", 0.3]],
    "q5": [["d2", 5.0], ["d1", 4.0]],
}
_QRELS_A = {
    "q1": {"d3": 2, "d5": 1, "d9": 3, "d2": -1, "d4": 0},
    "q2": {"d10": 1, "d8": 3, "d7": 0},
    "q3": {"d1": 1},
    "q4": {"d1": 0, "d2": 0},
}
# Group fixture: passages D<n>#p<m> of documents; sep "#".
_RUN_G = {
    "q1": [["D1#p1", 0.9], ["D1#p2", 0.85], ["D2#p1", 0.8], ["D3", 0.7], ["D2#p2", 0.6], ["D4#p1", 0.5], ["D1#p3", 0.4]],
    "q2": [["D5#p2", 3.0], ["D5#p1", 3.0], ["D6", 2.0], ["D7#p1", 1.0]],
}
_QRELS_G = {
    "q1": {"D1#p2": 1, "D1#p3": 2, "D2#p1": 0, "D3": 3, "D4#p9": 1, "D4#p1": -1},
    "q2": {"D5#p1": 2, "D6": 0, "D8#p1": 1},
}
# Tie-order fixture: byte order differs from numeric and from case-insensitive order.
_RUN_T = {"q": [["d9", 1.0], ["d10", 1.0], ["D2", 1.0], ["d1", 1.0], ["é", 1.0], ["z", 1.0], ["d11", 0.5], ["d2", 2.0]]}


def _metric_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    fixtures = [("doc", _RUN_A, _QRELS_A, None)]
    for seed in (11, 12, 13):
        run, qrels = _random_run_qrels(seed)
        fixtures.append(("doc", run, qrels, None))
    g_fixtures = [("group", _RUN_G, _QRELS_G, "#")]
    run, qrels = _random_run_qrels(21, n_q=3, n_hits=8, pool=12, ids="D{}")
    # passages: D<j> -> G<j % 4>#D<j>
    def regroup(d: str) -> str:
        return f"G{int(d[1:]) % 4}#{d}"
    run = {q: [[regroup(d), s] for d, s in hits] for q, hits in run.items()}
    qrels = {q: {regroup(d): g for d, g in m.items()} for q, m in qrels.items()}
    g_fixtures.append(("group", run, qrels, "#"))

    def base(level: str, run: dict[str, Any], qrels: dict[str, Any], sep: str | None, **extra: Any) -> dict[str, Any]:
        a = {"level": level, "run": run, "qrels": qrels, **extra}
        if sep:
            a["sep"] = sep
        return a

    for level, run, qrels, sep in fixtures + g_fixtures:
        out.append(("rank_of", base(level, run, qrels, sep)))
        out.append(("rr", base(level, run, qrels, sep)))
        for k in (1, 3, 5) if level == "doc" else (2, 5):
            for kind in ("hit", "recall", "p", "ndcg", "judged"):
                out.append((kind, base(level, run, qrels, sep, k=k)))
    # depth and relevance-level variants
    out.append(("rank_of", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "depth": 2}))
    out.append(("recall", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 10, "depth": 3}))
    out.append(("ndcg", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 10, "relevant": 2}))
    out.append(("hit", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 2, "relevant": 2}))
    out.append(("p", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 10}))
    out.append(("judged", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 10}))
    out.append(("rr", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "relevant": 2}))
    out.append(("ndcg", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "k": 3, "depth": 4}))
    # issue 15: ap, ap@k, rprec, bpref, uncut ndcg, rr@k, ndcg_exp@k, calibrated_recall@k, rel=N
    for level, run, qrels, sep in fixtures + g_fixtures:
        for kind, extra in (("ap", {}), ("ap", {"k": 3}), ("rprec", {}), ("bpref", {}), ("ndcg", {}), ("rr", {"k": 2}),
                            ("ndcg_exp", {"k": 3}), ("calibrated_recall", {"k": 2})):
            out.append((kind, base(level, run, qrels, sep, **extra)))
    out.append(("ap", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "relevant": 2}))
    out.append(("bpref", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "relevant": 2}))
    out.append(("bpref", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "depth": 3}))
    out.append(("rprec", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "rel": 2}))
    out.append(("p", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 3, "rel": 2}))
    out.append(("rr", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 3, "rel": 2}))
    out.append(("ap", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "k": 5, "rel": 2}))
    out.append(("bpref", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "rel": 2}))
    out.append(("calibrated_recall", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "k": 1, "relevant": 2}))
    out.append(("ndcg_exp", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "k": 2, "depth": 3}))
    # issue 33: every new measure at doc and group level on the shared fixtures, and its variants
    new: tuple[tuple[str, dict[str, Any]], ...] = (
        ("rbp", {}), ("rbp", {"k": 3, "p": 0.8}), ("rbp_resid", {}), ("rbp_resid", {"k": 3, "p": 0.8}),
        ("err", {"k": 3}), ("nerr", {"k": 3}), ("infap", {}), ("iprec_at_recall", {"x": 0.3}),
        ("11pt_avg", {}), ("rprec_mult", {"x": 0.6}), ("num_ret", {}), ("num_rel", {}),
        ("num_rel_ret", {}), ("set_p", {}), ("set_recall", {}), ("set_f", {}), ("f1", {"k": 3}))
    for level, run, qrels, sep in fixtures + g_fixtures:
        for kind, extra in new:
            out.append((kind, base(level, run, qrels, sep, **extra)))
    out.append(("rbp", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "rel": 2, "p": 0.7}))
    out.append(("infap", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "relevant": 2, "depth": 4}))
    out.append(("iprec_at_recall", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "x": 0.0}))
    out.append(("11pt_avg", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "rel": 2}))
    out.append(("set_f", {"level": "doc", "run": _RUN_A, "qrels": _QRELS_A, "depth": 2}))
    out.append(("nerr", {"level": "group", "run": _RUN_G, "qrels": _QRELS_G, "sep": "#", "k": 2}))
    return out


# Hand-worked fixture for issue 33's measures. q1 ranks d1 (grade 2), d2 (grade -1: pooled,
# unjudged), d3 (grade 0), d4 (not in the qrels), d5 (grade 1); R = 2 at level 1, highest
# grade 2. q2 ranks d8 (not in the qrels), d6 (grade 1); R = 2 (d7 is never retrieved).
_RUN_H = {"q1": [["d1", 0.9], ["d2", 0.8], ["d3", 0.7], ["d4", 0.6], ["d5", 0.5]], "q2": [["d8", 0.9], ["d6", 0.5]]}
_QRELS_H = {"q1": {"d1": 2, "d2": -1, "d3": 0, "d5": 1}, "q2": {"d6": 1, "d7": 1}}

#: (the arithmetic, kind, extra args) of each hand-worked case; answers are over [q1, q2]
_HAND: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("rbp p=0.5: q1 gains 2/2 at rank 1, 1/2 at rank 5: 0.5*(1 + 0.5*0.5^4) = 33/64 = 0.515625; "
     "q2 gain 1 at rank 2: 0.5*0.5 = 0.25", "rbp", {"p": 0.5}),
    ("rbp_resid p=0.5: q1 unjudged at ranks 2, 4, n = 5: 0.5^5 + 0.5*(0.5 + 0.125) = 11/32 = 0.34375; "
     "q2 unjudged at rank 1, n = 2: 0.25 + 0.5*1 = 0.75", "rbp_resid", {"p": 0.5}),
    ("err@5: R(g) = (2^g - 1)/16; q1 3/16 at rank 1, then 1/16 at rank 5 reached with 13/16: "
     "3/16 + 13/1280 = 0.19765625; q2 1/16 at rank 2: 1/32 = 0.03125", "err", {"k": 5}),
    ("nerr@5: ideal q1 [2, 1]: 3/16 + 13/512 = 109/512, 0.19765625 / (109/512) = 506/545 = 0.928440366972477; "
     "ideal q2 [1, 1]: 1/16 + 15/512 = 47/512, (1/32) / (47/512) = 16/47 = 0.3404255319148936", "nerr", {"k": 5}),
    ("infap: q1 d1 at j = 0 gives 1; d5 at j = 4 with r = 1, n = 1 (d3), u = 1 (d2), d4 outside the pool: "
     "1/5 + 4/5 * 3/4 * (1 + eps)/(2 + 2 eps) = 0.2 + 0.6 * 0.5 = 0.5; (1 + 0.5)/2 = 0.75; "
     "q2 d6 at j = 1, nothing judged above: 1/2 + 1/2 * 0/1 * ... = 0.5; 0.5/2 = 0.25", "infap", {}),
    ("iprec_at_recall_1.00: c = 2; q1 precision at the 2nd relevant (rank 5) 2/5 = 0.4; "
     "q2 retrieves 1 relevant < c: 0", "iprec_at_recall", {"x": 1.0}),
    ("iprec_at_recall_0.50: c = 1; q1 max(1/1, 2/5) = 1.0; q2 1/2 = 0.5", "iprec_at_recall", {"x": 0.5}),
    ("11pt_avg: c = round(2x) is 0 or 1 for x <= 0.7 (8 levels), 2 for x >= 0.8 (3 levels); "
     "q1 (8*1 + 3*0.4)/11 = 9.2/11 = 0.8363636363636363; q2 (8*0.5 + 3*0)/11 = 4/11 = 0.36363636363636365",
     "11pt_avg", {}),
    ("rprec_mult_1.50: c = floor(1.5*2 + 0.9) = 3; q1 top 3 holds d1: 1/3; q2 (2 hits, padded) holds d6: 1/3",
     "rprec_mult", {"x": 1.5}),
    ("num_ret: q1 5, q2 2", "num_ret", {}),
    ("num_rel: q1 2 (d1, d5), q2 2 (d6, d7)", "num_rel", {}),
    ("num_rel_ret: q1 2, q2 1", "num_rel_ret", {}),
    ("set_p: q1 2/5 = 0.4; q2 1/2 = 0.5", "set_p", {}),
    ("set_recall: q1 2/2 = 1.0; q2 1/2 = 0.5", "set_recall", {}),
    ("set_f: q1 2*0.4*1/(0.4 + 1) = 4/7 = 0.5714285714285714; q2 2*0.5*0.5/1 = 0.5", "set_f", {}),
    ("f1@3: q1 P 1/3, R 1/2: 2*(1/6)/(5/6) = 0.4; q2 P 1/3, R 1/2: 0.4", "f1", {"k": 3}),
)


def _hand_cases() -> list[tuple[str, dict[str, Any]]]:
    return [(kind, {"level": "doc", "run": _RUN_H, "qrels": _QRELS_H, **extra}) for _, kind, extra in _HAND]


def _order_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        ("trec_order", {"run": _RUN_T}), ("trec_order", {"run": _RUN_T, "depth": 4}), ("trec_order", {"run": _RUN_A})]
    for seed in (31, 32):
        run, _ = _random_run_qrels(seed, n_q=2, n_hits=9, pool=12)
        out.append(("trec_order", {"run": run}))
    return out


def _fusion_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    # SPEC §5: rank 1 alone = 1/61; ranks 3 and 5 = 1/63 + 1/65.
    spec_a = {"q": [["a", 9.0], ["x1", 8.0], ["b", 7.0], ["x2", 6.0]]}
    spec_b = {"q": [["y1", 0.9], ["y2", 0.8], ["y3", 0.7], ["y4", 0.6], ["b", 0.5]]}
    out.append(("rrf", {"lanes": [spec_a, spec_b], "k": 60}))
    out.append(("rrf_order", {"lanes": [spec_a, spec_b], "k": 60}))
    # equal rank multisets tie exactly and fall to the doc id rule
    tie_a = {"q": [["m", 3.0], ["n", 2.0], ["o", 1.0]]}
    tie_b = {"q": [["o", 3.0], ["n", 2.0], ["m", 1.0]]}
    out.append(("rrf", {"lanes": [tie_a, tie_b], "k": 60}))
    out.append(("rrf_order", {"lanes": [tie_a, tie_b], "k": 60}))
    tie_c = {"q": [["n", 5.0], ["m", 4.0], ["o", 3.0]]}
    out.append(("rrf_order", {"lanes": [tie_a, tie_b, tie_c], "k": 1}))
    for seed, n_l, k, depth in ((41, 2, 60, None), (42, 3, 10, None), (43, 2, 60, 4), (44, 3, 0, 5)):
        lanes = [_random_run_qrels(seed * 10 + i, n_q=2, n_hits=6, pool=9, digits=2)[0] for i in range(n_l)]
        a = {"lanes": lanes, "k": k}
        if depth:
            a["depth"] = depth
        out.append(("rrf", a))
        out.append(("rrf_order", a))
    # min-max: constant list -> ones, negative scores, a lone hit
    out.append(("minmax", {"lanes": [{"q1": [["a", 2.0], ["b", -1.0], ["c", 0.5]], "q2": [["a", 3.0], ["b", 3.0]], "q3": [["z", -7.5]]}]}))
    out.append(("minmax", {"lanes": [_RUN_A]}))
    out.append(("minmax", {"lanes": [_random_run_qrels(51, digits=3)[0]], "depth": 5}))
    # convex
    ca = {"q1": [["a", 10.0], ["b", 5.0], ["c", 0.0]], "q2": [["a", 1.0], ["d", 1.0]]}
    cb = {"q1": [["c", 0.9], ["b", 0.6], ["e", 0.3]], "q2": [["e", 2.0], ["a", 1.0]]}
    for w in ([0.5, 0.5], [0.3, 0.7], [0.0, 1.0]):
        out.append(("convex", {"lanes": [ca, cb], "weights": w}))
        out.append(("convex_order", {"lanes": [ca, cb], "weights": w}))
    lanes = [_random_run_qrels(61 + i, n_q=3, n_hits=6, pool=9, digits=2)[0] for i in range(3)]
    out.append(("convex", {"lanes": lanes, "weights": [0.2, 0.7, 0.1], "depth": 4}))
    out.append(("convex_order", {"lanes": lanes, "weights": [0.2, 0.7, 0.1]}))
    # grid
    for n_lanes, step in ((2, 0.1), (3, 0.1), (3, 0.05), (4, 0.25), (1, 0.5)):
        out.append(("grid_size", {"n_lanes": n_lanes, "step": step}))
    # convex fit: first maximum in lexicographic order wins
    fa = {"q1": [["r1", 0.9], ["n1", 0.5]], "q2": [["n2", 0.8], ["r2", 0.1]], "q3": [["n3", 1.0], ["r3", 0.0]]}
    fb = {"q1": [["n1", 0.9], ["r1", 0.2]], "q2": [["r2", 0.7], ["n2", 0.6]], "q3": [["r3", 1.0], ["n3", 0.1]]}
    fq = {"q1": {"r1": 1, "n1": 0}, "q2": {"r2": 1}, "q3": {"r3": 2, "n3": 0}}
    out.append(("convex_fit", {"lanes": [fa, fb], "qrels": fq, "metric": "hit@1", "step": 0.1}))
    lanes3 = [_random_run_qrels(71 + i, n_q=4, n_hits=6, pool=8, digits=2)[0] for i in range(3)]
    q3 = _random_run_qrels(74, n_q=4, n_hits=6, pool=8)[1]
    out.append(("convex_fit", {"lanes": lanes3, "qrels": q3, "metric": "p@3", "step": 0.25}))
    out.append(("convex_fit", {"lanes": lanes3[:2], "qrels": q3, "metric": "recall@2", "step": 0.2}))
    return out


def _gate_fixture(seed: int, n_pos: int, n_neg: int, absent: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """Positives score higher on average; a few queries absent from the lane."""
    rng = random.Random(seed)
    run: dict[str, Any] = {}
    qrels: dict[str, Any] = {}
    for i in range(n_pos + n_neg):
        q = f"q{i:02d}"
        is_pos = i < n_pos
        qrels[q] = {"r": 1, "x": 0} if is_pos else {"x": 0}
        if i % 7 == 3 and absent:
            continue  # absent from the gate lane
        top = round(rng.gauss(0.7 if is_pos else 0.45, 0.15), 3)
        hits = [["r" if (is_pos and rng.random() < 0.7) else "w", top]]
        for j in range(rng.randint(0, 3)):
            hits.append([f"o{j}", round(top - rng.uniform(0, 0.2), 3)])
        if is_pos and hits[0][0] == "w" and rng.random() < 0.6:
            hits.append(["r", round(top - 0.25, 3)])
        run[q] = hits
    return run, qrels


def _gate_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    g1 = _gate_fixture(81, 12, 10)
    g2 = _gate_fixture(82, 20, 25)
    g3 = _gate_fixture(83, 6, 4, absent=0)
    out.append(("null_floor", {"run": g1[0], "qrels": g1[1]}))
    out.append(("null_floor", {"run": g2[0], "qrels": g2[1]}))
    one_neg = {"run": {"p": [["r", 1.0]], "n": [["x", 0.4]]}, "qrels": {"p": {"r": 1}, "n": {"x": 0}, "m": {"x": 0}}}
    out.append(("null_floor", one_neg))  # one negative present: no floor
    for n, alpha in ((149, 0.18), (9, 0.7), (19, 0.05), (18, 0.05), (99, 0.1), (1000, 0.01)):
        out.append(("conformal_k", {"n": n, "alpha": alpha}))
    for alpha in (0.05, 0.1, 0.3):
        out.append(("conformal_min_n", {"alpha": alpha}))
    out.append(("conformal_floor", {"run": g1[0], "qrels": g1[1], "alpha": 0.2}))
    out.append(("conformal_floor", {"run": g1[0], "qrels": g1[1], "alpha": 0.05}))  # k > n: -inf
    out.append(("conformal_floor", {"run": g2[0], "qrels": g2[1], "alpha": 0.3}))
    g9 = _gate_fixture(84, 9, 0, absent=0)
    out.append(("conformal_floor", {"run": g9[0], "qrels": g9[1], "alpha": 0.7}))  # exact k = 3
    out.append(("conformal_floor", {"run": g2[0], "qrels": g2[1], "alpha": 0.1, "depth": 1}))  # s_(k) = +inf
    out.append(("sweep", {"run": g1[0], "qrels": g1[1]}))
    out.append(("sweep", {"run": g3[0], "qrels": g3[1]}))
    out.append(("sweep", {"run": g1[0], "qrels": g1[1], "margin": 0.05}))
    out.append(("operating_point", {"run": g1[0], "qrels": g1[1], "target": 0.1}))
    out.append(("operating_point", {"run": g1[0], "qrels": g1[1], "target": 0.2, "conservative": True}))  # unattainable
    out.append(("operating_point", {"run": g2[0], "qrels": g2[1], "target": 0.05}))
    out.append(("operating_point", {"run": g2[0], "qrels": g2[1], "target": 0.2}))
    out.append(("operating_point", {"run": g2[0], "qrels": g2[1], "target": 0.3, "conservative": True}))
    out.append(("operating_point", {"run": g2[0], "qrels": g2[1], "target": 0.25, "conservative": True, "confidence": 0.9}))
    mrun = {"a": [["d1", 0.9], ["d2", 0.8], ["d3", 0.1]], "b": [["d2", 0.7], ["d1", 0.6]], "c": [["d2", 0.95], ["d3", 0.5]],
            "d": [["d1", 0.2], ["d3", 0.1]], "e": [["d4", 0.4]]}
    mq = {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"x": 0}, "d": {"x": 0}, "e": {"x": 0}, "f": {"d9": 1}}
    out.append(("mutual_nn", {"run": mrun, "qrels": mq}))
    out.append(("mutual_nn", {"run": mrun, "qrels": mq, "tie_rule": "count"}))
    out.append(("mutual_nn", {"run": g2[0], "qrels": g2[1], "tie_rule": "count"}))
    return out


def _dyadic(rng: random.Random, n: int, lo: int = -8, hi: int = 8, den: int = 16) -> list[float]:
    return [rng.randint(lo, hi) / den for _ in range(n)]


def _stat_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for k, n, c in ((8, 12, 0.95), (0, 10, 0.95), (10, 10, 0.95), (1, 50, 0.9), (37, 40, 0.99), (3, 7, 0.8)):
        out.append(("wilson", {"k": k, "n": n, "confidence": c}))
    for k, n in ((0, 20), (5, 20)):
        out.append(("wald", {"k": k, "n": n, "confidence": 0.95}))
    for n, c in ((20, 0.95), (73, 0.95), (100, 0.9)):
        out.append(("wilson_upper_zero", {"n": n, "confidence": c}))
    for n in (20, 60, 300):
        out.append(("rule_of_three", {"n": n}))
    for t, c in ((0.05, 0.95), (0.1, 0.95), (0.01, 0.95), (0.001, 0.95), (0.05, 0.9)):
        out.append(("negatives_needed", {"t": t, "confidence": c}))
    rng = random.Random(91)
    out.append(("bootstrap_mean", {"values": [1, 0, 1, 1, 0, 1, 0, 1, 1, 1], "B": 500, "seed": 0, "confidence": 0.95}))
    out.append(("bootstrap_mean", {"values": [round(rng.random(), 4) for _ in range(15)], "B": 999, "seed": 7, "confidence": 0.9}))
    out.append(("bootstrap_mean", {"values": [0.5, 0.25], "B": 200, "seed": 3, "confidence": 0.95}))
    # paired comparisons: dyadic per-query values keep every replicate mean exact
    pairs = []
    for seed, n in ((92, 10), (93, 17), (94, 25)):
        r = random.Random(seed)
        base = [r.randint(0, 16) / 16 for _ in range(n)]
        cand = [min(1.0, max(0.0, b + r.choice([-2, -1, 0, 0, 1, 2, 3]) / 16)) for b in base]
        pairs.append((base, cand))
    for (base, cand), B, seed in zip(pairs, (999, 1999, 999), (0, 1, 42)):
        out.append(("paired_bootstrap", {"baseline": base, "candidate": cand, "B": B, "seed": seed, "confidence": 0.95}))
    r = random.Random(95)
    base = [round(r.random(), 4) for _ in range(12)]
    cand = [round(min(1.0, b + r.uniform(-0.1, 0.3)), 4) for b in base]
    out.append(("paired_bootstrap", {"baseline": base, "candidate": cand, "B": 999, "seed": 5, "confidence": 0.9}))
    out.append(("unpaired_bootstrap", {"baseline": pairs[0][0], "candidate": pairs[0][1], "B": 999, "seed": 0, "confidence": 0.95}))
    out.append(("unpaired_bootstrap", {"baseline": base, "candidate": cand, "B": 999, "seed": 5, "confidence": 0.9}))
    out.append(("bca", {"baseline": pairs[1][0], "candidate": pairs[1][1], "B": 1999, "seed": 1, "level": 0.95}))
    out.append(("bca", {"baseline": pairs[2][0], "candidate": pairs[2][1], "B": 999, "seed": 42, "level": 0.9875}))
    out.append(("bca", {"baseline": [0.0, 0.5, 1.0], "candidate": [0.25, 0.75, 1.25], "B": 999, "seed": 0, "level": 0.95}))  # all deltas equal
    # randomization
    rq = random.Random(96)
    d1 = _dyadic(rq, 12)
    d2 = [x + 0.125 for x in _dyadic(rq, 20, -4, 4, 16)]
    d3 = [0.0] * 6 + [0.5, -0.25, 0.25, 1.0]
    d4 = [0.25] * 15 + [0.5]
    d5 = [round(rq.uniform(-0.2, 0.4), 4) for _ in range(16)]
    out.append(("randomization_p", {"deltas": d1, "B": 999, "seed": 0}))
    out.append(("randomization_p", {"deltas": d2, "B": 1999, "seed": 3}))
    out.append(("randomization_p", {"deltas": d3, "B": 999, "seed": 11}))
    out.append(("randomization_p", {"deltas": d4, "B": 999, "seed": 0}))  # at the floor 1/(B+1)
    out.append(("randomization_p", {"deltas": d5, "B": 1999, "seed": 8}))
    out.append(("randomization_p", {"deltas": d2, "B": 999, "seed": 3, "alternative": "greater"}))
    out.append(("randomization_p", {"deltas": d2, "B": 999, "seed": 3, "alternative": "less"}))
    out.append(("randomization_p", {"deltas": [0.0, 0.0, 0.0], "B": 999, "seed": 0}))  # no difference: p = 1
    # t-test
    out.append(("t_test", {"deltas": d1}))
    out.append(("t_test", {"deltas": d2}))
    out.append(("t_test", {"deltas": d5}))
    out.append(("t_test", {"deltas": [0.1, 0.3]}))  # df = 1
    out.append(("t_test", {"deltas": d2, "alternative": "greater"}))
    out.append(("t_test", {"deltas": d4[:5]}))  # sd = 0: null
    out.append(("t_test", {"deltas": d5, "alternative": "less"}))
    # multiplicity
    ps = [0.01, 0.04, 0.03, 0.005]
    out.append(("holm", {"p": ps}))
    out.append(("holm", {"p": [0.02, 0.02, 0.5, 0.001, 0.3]}))  # ties keep call order
    out.append(("holm", {"p": [0.4, 0.6, 0.7]}))  # capped at 1
    out.append(("bonferroni", {"p": ps}))
    out.append(("bonferroni", {"p": [0.2, 0.5]}))
    out.append(("holm_thresholds", {"p": [0.02, 0.02, 0.5, 0.001, 0.3], "alpha": 0.05}))
    return out


def cases() -> list[tuple[str, dict[str, Any]]]:
    """Every golden case, in file order (deterministic)."""
    return _metric_cases() + _order_cases() + _fusion_cases() + _gate_cases() + _stat_cases() + _hand_cases()


def _layout(every: list[tuple[str, dict[str, Any]]]) -> list[str | int]:
    """The goldens file's body, a line at a time: a comment line's text, or the index in
    ``every`` of the case written there (the plain cases, then each hand-worked case after
    its arithmetic). One layout for the writer and for the line numbers the Goldens view shows."""
    n_plain = len(every) - len(_HAND)
    out: list[str | int] = list(range(n_plain))
    out.append("# Hand-worked cases (issue 33's measures) on one fixture: q1 ranks d1 (grade 2), d2 (grade -1:")
    out.append("# pooled, unjudged), d3 (grade 0), d4 (not in the qrels), d5 (grade 1); q2 ranks d8 (not in")
    out.append("# the qrels), d6 (grade 1), with d7 (grade 1) never retrieved. Answers over [q1, q2].")
    for j, (why, _, _) in enumerate(_HAND):
        out.append(f"# {why}")
        out.append(n_plain + j)
    return out


def write_lines() -> str:
    """The whole goldens file: header comments, then one ``kind args -> answer`` line per case;
    each hand-worked case is preceded by its arithmetic as comment lines."""
    every = cases()
    lines = [e if isinstance(e, str) else format_line(*every[e], answer(*every[e])) for e in _layout(every)]
    return HEADER + "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# checking a file


def parse_line(line: str) -> tuple[str, dict[str, Any], Any]:
    """``kind args -> answer`` → (kind, args, answer); raises ValueError when malformed."""
    head, sep, tail = line.rpartition(" -> ")
    if not sep:
        raise ValueError("no ' -> ' separator")
    kind, _, raw_args = head.strip().partition(" ")
    if not kind or not raw_args.strip():
        raise ValueError("expected 'kind args -> answer'")
    args = json.loads(raw_args)
    if not isinstance(args, dict):
        raise ValueError("args must be a JSON object")
    return kind, args, json.loads(tail)


def _flat(x: Any) -> list[float | None] | None:
    """Answer as a flat list of (float | None); None when it is not numbers."""
    items = x if isinstance(x, list) else [x]
    out: list[float | None] = []
    for v in items:
        if v is None:
            out.append(None)
        elif v in ("inf", "-inf"):
            out.append(math.inf if v == "inf" else -math.inf)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        else:
            out.append(float(v))
    return out


def differs(expected: Any, got: Any, tol: float = TOLERANCE) -> str | None:
    """Why two encoded answers disagree (None when they agree within ``tol``)."""
    return _mismatch(expected, got, tol)[0]


def _mismatch(expected: Any, got: Any, tol: float = TOLERANCE) -> tuple[str | None, int | None]:
    """(why two encoded answers disagree or None, the index of the first differing entry
    of a list answer or None)."""
    a, b = _flat(expected), _flat(got)
    if a is None:
        return "the file's answer is not a number or a list of numbers", None
    if b is None:
        return "the recomputed answer is not a number or a list of numbers", None
    if isinstance(expected, list) != isinstance(got, list):
        return "one answer is a list, the other a number", None
    if len(a) != len(b):
        return f"list lengths differ ({len(a)} in the file, {len(b)} recomputed)", None
    for i, (x, y) in enumerate(zip(a, b)):
        where = f" at index {i}" if isinstance(expected, list) else ""
        at = i if isinstance(expected, list) else None
        if x is None or y is None:
            if x is not y:
                return f"null vs number{where}", at
        elif math.isinf(x) or math.isinf(y):
            if x != y:
                return f"infinite vs different value{where}", at
        elif abs(x - y) > tol:
            return f"|difference| = {abs(x - y):.3g} > {tol:g}{where}", at
    return None, None


def check_parsable(text: str, path: str = "<goldens>") -> None:
    """Raise an ``InputError`` naming the first line (counted in LF line ends, as every
    reader counts them) that is not ``kind {args} -> answer``
    JSON (malformed, or nested too deeply to read); comments and blank lines are skipped."""
    from ..errors import InputError

    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            parse_line(line)
        except RecursionError:
            raise InputError("not a goldens line (JSON nested too deeply)", path, lineno) from None
        except ValueError as exc:
            raise InputError(f"not a goldens line ({str(exc)[:200]})", path, lineno) from None


def _show(x: Any) -> str:
    """A value for a mismatch message: compact JSON (a file's 1e400 or NaN shown as read)."""
    return json.dumps(x, separators=(",", ":"), sort_keys=True, allow_nan=True)


def check(text: str, path: str = "<goldens>") -> list[str]:
    """Recompute every case of a goldens file; one message per mismatching line."""
    problems: list[str] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            kind, args, expected = parse_line(line)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            problems.append(f"{path}:{lineno}: unparsable line ({exc})")
            continue
        except RecursionError:
            problems.append(f"{path}:{lineno}: unparsable line (JSON nested too deeply)")
            continue
        if kind not in KINDS:
            problems.append(f"{path}:{lineno}: unknown kind {kind!r}")
            continue
        try:
            got = _enc(answer(kind, args))
        except Exception as exc:  # any failure to recompute is a mismatch of that line
            problems.append(f"{path}:{lineno}: {kind}: cannot recompute ({type(exc).__name__}: {exc})")
            continue
        why = differs(expected, got)
        if why:
            problems.append(f"{path}:{lineno}: {kind}: {why}: file {_show(expected)}, kernel {_show(got)}")
    return problems


def count_cases(text: str) -> int:
    return sum(1 for raw in text.split("\n") if raw.strip() and not raw.strip().startswith("#"))


# ---------------------------------------------------------------------------
# both implementations, case by case (the dashboard's Goldens view)


@dataclass(frozen=True)
class GoldenRow:
    """One case computed by both implementations. Answers are encoded as in the file
    (numbers, lists of numbers, ``"inf"``/``"-inf"``, None for undefined); an answer that
    could not be computed is None and ``problem`` says why."""

    line: int  # the case's line in the file ``rankscope goldens`` writes
    kind: str
    label: str  # what the case measures: the kind, its cutoff and level
    kernel: Any
    reference: Any
    problem: str | None  # why the two disagree; None when they agree within the tolerance
    position: int | None  # the first differing entry of a list answer

    @property
    def agree(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class GoldensSideBySide:
    """Every golden case computed by the kernel and by ``goldens_reference``."""

    rows: tuple[GoldenRow, ...]
    tolerance: float

    @property
    def disagreeing(self) -> tuple[GoldenRow, ...]:
        return tuple(r for r in self.rows if not r.agree)

    @property
    def summary(self) -> str:
        """One line: how many cases agree, or which disagree (the first three named)."""
        n, bad = len(self.rows), self.disagreeing
        if not bad:
            return (f"all {n} cases agree: the kernel and the independent implementation give the same answers "
                    f"within {self.tolerance:g}")
        named = ", ".join(f"line {r.line} {r.label}" for r in bad[:3]) + (", …" if len(bad) > 3 else "")
        return f"{len(bad)} of {n} cases disagree beyond {self.tolerance:g} between the kernel and the independent implementation: {named}"


def case_label(kind: str, args: dict[str, Any]) -> str:
    """What a case measures, for a person: ``ndcg@3 group``, ``rrf k=60``, ``wilson``."""
    label = kind
    if kind in METRIC_KINDS and args.get("k") is not None:
        label += f"@{args['k']}"
    if kind in ("rrf", "rrf_order") and "k" in args:
        label += f" k={args['k']}"
    if args.get("level") == "group":
        label += " group"
    if args.get("depth") is not None:
        label += f" depth {args['depth']}"
    return label


def _answer_or_why(compute: Any, kind: str, args: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        return compute(kind, args), None
    except Exception as exc:  # a case one implementation cannot compute is a disagreement, not a crash
        return None, f"{type(exc).__name__}: {exc}"


def side_by_side(cases_: list[tuple[str, dict[str, Any]]] | None = None) -> GoldensSideBySide:
    """Every case (default: ``cases()``, the lines ``rankscope goldens`` writes) answered by
    this kernel and by the independent ``goldens_reference``, compared as ``check``
    compares a file with the kernel (``differs``, tolerance 1e-9)."""
    from . import goldens_reference as R

    todo = cases() if cases_ is None else cases_
    first = HEADER.count("\n") + 1  # the first body line of the written file
    if cases_ is None:  # each case's line in the file `rankscope goldens` writes
        where = {e: first + n for n, e in enumerate(_layout(todo)) if isinstance(e, int)}
    else:
        where = {i: first + i for i in range(len(todo))}
    rows = []
    for i, (kind, args) in enumerate(todo):
        args = json.loads(dumps(args))  # exactly what a line carries (the reference reads JSON)
        mine, my_err = _answer_or_why(lambda k, a: _enc(answer(k, a)), kind, args)
        ref, ref_err = _answer_or_why(lambda k, a: R.encode(R.answer(k, a)), kind, args)
        problem: str | None
        position: int | None
        if my_err or ref_err:
            problem = "; ".join(f"{who} cannot compute it ({err})" for who, err in (("kernel", my_err), ("reference", ref_err)) if err)
            position = None
        else:
            problem, position = _mismatch(ref, mine)
        rows.append(GoldenRow(where[i], kind, case_label(kind, args), mine, ref, problem, position))
    return GoldensSideBySide(tuple(rows), TOLERANCE)
