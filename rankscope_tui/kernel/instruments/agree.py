"""The agreement instrument: two sets of labels for the same pairs (``rankscope agree``).

A holds the reference labels (e.g. people's), B the other (e.g. a model's). Three questions:

1. **Do the labels agree?** Over the pairs both judge (``judgments.pairs``): the share
   of equal grades, Cohen's κ, linear and quadratic weighted κ, and κ on relevant /
   not relevant at ``--relevant``, each with a cluster-bootstrap interval over queries
   (``judgments.kappa``); the confusion matrix of grades (rows A, columns B); and κ per
   stratum (``--strata`` files, read as ``evaluate`` reads them).
2. **Would B change a decision?** Given runs: each lane's mean of each measure under A
   and under B over the queries both judge, Kendall's τ and τ_AP between the two orders
   (``judgments.rank_correlation``; A is the truth for τ_AP) and the pairs of lanes the
   two orders put the other way round.
3. **Can B stretch A?** With ``ppi``: A labels a random subset of B's pairs; each lane's
   prediction-powered mean over every query B judges (``judgments.ppi``).

Means here: over every query of the set, a query with no relevant document under a
qrels scoring 0 there (the measure of a judged query with nothing to find, as trec_eval
averages), so A and B average the same queries; ``evaluate`` averages positive queries
only, so its means can differ from these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..inputs.readers import read_qrels
from ..inputs.tables import NONE_LABEL, read_strata, stratification_name
from ..judgments.kappa import WEIGHTS, KappaInterval, bootstrap_kappas, confusion, query_tables
from ..judgments.pairs import GradedPairs, Judged, check_scale, common_pairs, first_not_in, judged_pairs
from ..judgments.ppi import REFERENCE, PPIMean, method_words, ppi_mean
from ..judgments.rank_correlation import kendall_tau_b, order, tau_ap, tied_pairs
from ..ranking import judgments as J
from ..settings import AgreeSettings, LoadSettings
from ..workspace.loaded import Workspace, check_read_once

SCHEMA = "rankscope.agree/1"
MEANS_RULE = ("over every query of the set; a query with no relevant document under a qrels scores 0 there "
              "(trec_eval's averaging; evaluate averages positive queries only)")
#: What the second labels change in a system decision (``SystemAgreement.change``).
CHANGE_NONE = "same order under both"
CHANGE_TOP = "the top lane changes"
CHANGE_BELOW = "the order changes below the top lane"
INTERVAL_RULE = ("percentile interval of a bootstrap over queries (whole queries resampled: the pairs of one query "
                 "are not independent)")


@dataclass(frozen=True)
class StratumAgreement:
    stratification: str
    label: str
    pairs: int
    queries: int
    exact: float  # share of pairs with equal grades
    kappa: KappaInterval  # unweighted
    weighted: KappaInterval  # under AgreeSettings.weights

    def as_dict(self) -> dict[str, Any]:
        return {"stratification": self.stratification, "label": self.label, "pairs": self.pairs,
                "queries": self.queries, "exact": self.exact, "kappa": self.kappa.as_dict(),
                "weighted": self.weighted.as_dict()}


@dataclass(frozen=True)
class SystemAgreement:
    """One measure: each lane's mean under A and under B and how the two orders agree."""

    metric: str
    lanes: tuple[str, ...]
    mean_a: tuple[float, ...]
    mean_b: tuple[float, ...]
    queries: int
    tau: float
    tau_ap: float
    ties_a: int
    ties_b: int
    swapped: tuple[tuple[str, str], ...]  # (x, y): A puts x above y, B puts y above x

    @property
    def top_a(self) -> str:
        return self.lanes[order(self.mean_a)[0]]

    @property
    def top_b(self) -> str:
        return self.lanes[order(self.mean_b)[0]]

    def as_dict(self) -> dict[str, Any]:
        from ..statistics.intervals import finite_or_none

        oa, ob = order(self.mean_a), order(self.mean_b)
        rank_a = {i: r + 1 for r, i in enumerate(oa)}
        rank_b = {i: r + 1 for r, i in enumerate(ob)}
        return {
            "metric": self.metric, "queries": self.queries,
            "lanes": [{"lane": n, "mean_a": self.mean_a[i], "mean_b": self.mean_b[i], "rank_a": rank_a[i],
                       "rank_b": rank_b[i]} for i, n in enumerate(self.lanes)],
            "kendall_tau": finite_or_none(self.tau), "tau_ap": finite_or_none(self.tau_ap),
            "tied_pairs_a": self.ties_a, "tied_pairs_b": self.ties_b,
            "top_a": self.top_a, "top_b": self.top_b,
            "swapped": [list(p) for p in self.swapped],
            "change": self.change,
        }

    @property
    def change(self) -> str:
        """What B's labels change in the decision: the words every face shows."""
        if self.top_a != self.top_b:
            return CHANGE_TOP
        return CHANGE_BELOW if self.swapped else CHANGE_NONE


@dataclass(frozen=True)
class LanePPI:
    lane: str
    metric: str
    ppi: PPIMean
    b_mean_all: float  # B alone over every query B judges (the uncorrected estimate)

    def as_dict(self) -> dict[str, Any]:
        return {"lane": self.lane, "metric": self.metric, **self.ppi.as_dict(), "b_mean_all": self.b_mean_all}


@dataclass(frozen=True)
class Agreement:
    """One ``agree`` call: the numbers of the module docstring's three questions."""

    settings: AgreeSettings
    load: LoadSettings
    inputs: tuple[dict[str, Any], ...]
    pairs: GradedPairs
    exact: float
    kappas: tuple[KappaInterval, ...]  # none, linear, quadratic
    binary: KappaInterval  # unweighted κ on grade >= relevant
    confusion: NDArray[np.int64]
    strata: tuple[StratumAgreement, ...] = ()
    systems: tuple[SystemAgreement, ...] = ()
    ppi: tuple[LanePPI, ...] = ()
    ppi_queries: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def headline(self) -> KappaInterval:
        """The weighted κ ``settings.weights`` names."""
        return next(k for k in self.kappas if k.weights == self.settings.weights)

    def as_dict(self) -> dict[str, Any]:
        cats = self.pairs.categories.tolist()
        d: dict[str, Any] = {
            "schema": SCHEMA,
            "inputs": list(self.inputs),
            "settings": {**self.settings.as_dict(), "relevant": self.load.relevant, "seed": self.load.seed,
                         "resamples": self.load.resamples, "confidence": self.load.confidence,
                         },
            "pairs": self.pairs.as_dict(),
            "interval": INTERVAL_RULE,
            "exact_agreement": self.exact,
            "kappa": [k.as_dict() for k in self.kappas],
            "binary_kappa": {"relevant": self.load.relevant, **self.binary.as_dict()},
            "confusion": {"rows": "A", "columns": "B", "grades": cats, "counts": self.confusion.tolist()},
            "strata": [s.as_dict() for s in self.strata],
            "systems": {"means": MEANS_RULE, "measures": [s.as_dict() for s in self.systems]},
            "notes": list(self.notes),
        }
        if self.settings.ppi:
            d["ppi"] = {"method": method_words(self.load.resamples, self.load.seed), "reference": REFERENCE,
                        "assumption": "the queries A labels are a random sample of the queries B labels",
                        "queries": dict(self.ppi_queries), "lanes": [p.as_dict() for p in self.ppi]}
        return d


def _strata(paths: Sequence[str], pairs: GradedPairs, tables: NDArray[np.int64], settings: AgreeSettings,
            load: LoadSettings) -> list[StratumAgreement]:
    out: list[StratumAgreement] = []
    names: set[str] = set()
    for path in paths:
        labels = read_strata(path)
        name = stratification_name(path)
        if name in names:
            raise InputError(f"two stratifications named {name!r}", path)
        names.add(name)
        per_query = np.asarray([labels.get(q, NONE_LABEL) for q in pairs.qids.tolist()], dtype=object)
        pair_label = per_query[pairs.query]
        for label in sorted(set(per_query.tolist()), key=lambda s: (s == NONE_LABEL, s)):
            qmask = per_query == label
            pmask = pair_label == label
            k = bootstrap_kappas(tables[qmask], ("none", settings.weights), load.resamples, load.seed, load.confidence)
            exact = float(np.mean(pairs.grade_a[pmask] == pairs.grade_b[pmask]))
            out.append(StratumAgreement(name, str(label), int(pmask.sum()), int(qmask.sum()), exact, k[0], k[1]))
    return out


def _values(ws: Workspace, lane: str, metric: str, qids: Sequence[str]) -> NDArray[np.float64]:
    """Per-query values of ``lane`` on ``qids``: 0 where the query has no relevant document."""
    pq = ws.per_query(lane, "doc", ws.metric_set([metric]))[metric]
    index = ws.qid_index
    out = np.zeros(len(qids), dtype=np.float64)
    for i, q in enumerate(qids):
        c = index.get(q)
        if c is not None and ws.classes[c] == J.POSITIVE:
            out[i] = float(pq[c])
    return out


def _systems(ws_a: Workspace, ws_b: Workspace, qids: list[str], metrics: Sequence[str]) -> list[SystemAgreement]:
    lanes = tuple(ws_a.input_lanes)
    out = []
    for m in metrics:
        ma = tuple(float(_values(ws_a, n, m, qids).mean()) for n in lanes)
        mb = tuple(float(_values(ws_b, n, m, qids).mean()) for n in lanes)
        out.append(SystemAgreement(m, lanes, ma, mb, len(qids), kendall_tau_b(ma, mb), tau_ap(ma, mb),
                                   tied_pairs(ma), tied_pairs(mb), _order_swaps(lanes, ma, mb)))
    return out


def _order_swaps(lanes: Sequence[str], ma: Sequence[float], mb: Sequence[float]) -> tuple[tuple[str, str], ...]:
    """(x, y) for each pair A puts strictly above and B strictly below, in A's order."""
    oa = order(ma)
    return tuple((lanes[x], lanes[y]) for i, x in enumerate(oa) for y in oa[i + 1:] if ma[x] > ma[y] and mb[x] < mb[y])


def _check_subset(a: Judged, b: Judged) -> None:
    """With PPI, A labels a subset of B's pairs, and B some query A does not."""
    missing = first_not_in(a, b)
    if missing is not None:
        (q, d), line = missing
        raise InputError(f"pair ({q}, {d}) is not judged in {b.path}: with --ppi the first qrels must label a "
                         "subset of the second's pairs", a.path, line)
    n = len(b.queries - a.queries)
    if n < 2:
        raise InputError(f"with --ppi the second qrels must judge queries the first does not (found {n}): "
                         "the correction needs queries labelled by the second qrels only", b.path)


def _ppi(ws_a: Workspace, ws_b: Workspace, a: Judged, b: Judged, metrics: Sequence[str],
         load: LoadSettings) -> tuple[list[LanePPI], dict[str, int], list[str]]:
    labelled = sorted(a.queries, key=lambda s: s.encode())
    unlabelled = sorted(b.queries - a.queries, key=lambda s: s.encode())
    everything = labelled + unlabelled
    lab = set(labelled)
    skipped = sum(1 for k in b.pairs if k[0] in lab and k not in a.pairs)
    notes = []
    if skipped:
        notes.append(f"{skipped:,} pair(s) the second qrels judges in the queries the first labels are not judged in the "
                     "first: they count as not relevant under it")
    out = []
    for m in metrics:
        for lane in ws_a.input_lanes:
            va = _values(ws_a, lane, m, labelled)
            vb_l = _values(ws_b, lane, m, labelled)
            vb_u = _values(ws_b, lane, m, unlabelled)
            est = ppi_mean(va, vb_l, vb_u, load.confidence, load.resamples, load.seed)
            out.append(LanePPI(lane, m, est, float(_values(ws_b, lane, m, everything).mean())))
    return out, {"labelled": len(labelled), "unlabelled": len(unlabelled)}, notes


def agree(qrels_a: str, qrels_b: str, settings: AgreeSettings = AgreeSettings(), load: LoadSettings = LoadSettings(),
          lanes: Sequence[tuple[str | None, str]] = (), strata: Sequence[str] = (),
          ws_a: Workspace | None = None) -> Agreement:
    """The agreement of ``qrels_b`` with ``qrels_a`` (the reference), and with ``lanes``
    (``[(name or None, path)]``) their means under both. ``ws_a``: a workspace already
    loaded over ``lanes`` and ``qrels_a`` (the dashboard's), reused for A's side."""
    if settings.ppi and not lanes:
        raise InputError("--ppi needs runs: it corrects a system's mean", "--ppi")
    check_read_once([("qrels", qrels_a), ("second qrels", qrels_b)] + [("strata", p) for p in strata])
    raw_a, raw_b = read_qrels(qrels_a, load.inputs), read_qrels(qrels_b, load.inputs)
    a, b = judged_pairs(raw_a), judged_pairs(raw_b)
    if settings.ppi:
        _check_subset(a, b)
    scale = check_scale(a, b, settings.grades, subset=settings.ppi)
    pairs = common_pairs(a, b, scale)
    k = len(pairs.categories)
    ia, ib = pairs.grade_a - scale[0], pairs.grade_b - scale[0]
    tables = query_tables(pairs.query, ia, ib, pairs.qids.size, k)
    kap = bootstrap_kappas(tables, WEIGHTS, load.resamples, load.seed, load.confidence)
    rel = load.relevant
    btables = query_tables(pairs.query, (pairs.grade_a >= rel).astype(np.int64), (pairs.grade_b >= rel).astype(np.int64),
                           pairs.qids.size, 2)
    binary = bootstrap_kappas(btables, ("none",), load.resamples, load.seed, load.confidence)[0]
    notes = []
    if pairs.only_a or pairs.only_b:
        notes.append(f"pairs judged in one qrels only are left out of the agreement: {pairs.only_a:,} in {a.path}, "
                     f"{pairs.only_b:,} in {b.path}")
    systems: list[SystemAgreement] = []
    ppi: list[LanePPI] = []
    ppi_queries: dict[str, int] = {}
    if lanes:
        if ws_a is None:
            ws_a = Workspace.load(list(lanes), qrels_a, load)
        ws_b = Workspace.load(list(lanes), qrels_b, load)
        systems = _systems(ws_a, ws_b, pairs.qids.tolist(), settings.metrics)
        if any(s.ties_a or s.ties_b for s in systems):
            notes.append("tied means are ordered as the lanes were given (tau_AP assumes no ties)")
        if settings.ppi:
            ppi, ppi_queries, more = _ppi(ws_a, ws_b, a, b, settings.metrics, load)
            notes += more
    inputs = ({"role": "qrels", "path": raw_a.path, "sha256": raw_a.sha256(), "pairs": len(a.pairs)},
              {"role": "second qrels", "path": raw_b.path, "sha256": raw_b.sha256(), "pairs": len(b.pairs)})
    return Agreement(settings, load, inputs, pairs, float(np.mean(pairs.grade_a == pairs.grade_b)), tuple(kap), binary,
                     confusion(ia, ib, k), tuple(_strata(strata, pairs, tables, settings, load)), tuple(systems),
                     tuple(ppi), ppi_queries, tuple(notes))


def agreement_tables(ws: Workspace, qrels_b: str, settings: AgreeSettings = AgreeSettings()) -> Agreement:
    """The agreement tables of a loaded workspace (its lanes, qrels and strata are A's
    side) with a second qrels file: what the dashboard shows when two qrels are given."""
    src = ws.sources
    if src is None:
        raise InputError("the workspace was not loaded from files: give the qrels paths to agree", qrels_b)
    return agree(src.qrels, qrels_b, settings, ws.settings, src.lanes, src.strata, ws_a=ws)
