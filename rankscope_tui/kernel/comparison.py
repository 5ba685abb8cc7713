"""The comparison instrument: one ``compare`` call over a workspace, as the command line,
the report and the dashboard all run it (SPEC §7).

``compare(ws, thresholds, settings)`` resolves the rows (``plan_compare``), computes the
paired statistics of every (baseline, candidate, metric) over the positives and the
verdicts (``run_compare``), and returns a ``Comparison`` whose ``as_dict()`` is the
``compare --out`` payload. ``query_deltas`` is the per-query list behind one row.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from . import metrics as M
from .errors import InputError
from .paired import paired_statistics
from .thresholds import Thresholds, in_sample_overlap
from .randomization import check_resamples
from .settings import CompareSettings
from .verdict import CompareResult, ComparisonRow, RowInput, decide
from .workspace import Workspace

#: The judged@k both lanes' largest losses and gains carry (SPEC §7).
JUDGED = "judged@10"


@dataclass(frozen=True)
class ComparePlan:
    """Which rows one ``compare`` call tests, and why a row is exploratory."""

    baseline: str
    candidates: tuple[str, ...]
    metrics: tuple[str, ...]
    level: str = "doc"
    exploratory_reasons: dict = field(default_factory=dict)  # candidate or "*" -> reason


def plan_compare(ws: Workspace, th: Thresholds | None, settings: CompareSettings) -> ComparePlan:
    """Resolve names; ``--baseline best`` and anything tuned on the compared queries are exploratory.

    No baseline = the first input lane; no candidates = every other lane but the variants.
    """
    baseline, candidates, metrics, level = settings.baseline, settings.candidates, settings.metrics, settings.level
    reasons: dict = {}
    if settings.exploratory:
        reasons["*"] = "labelled exploratory on the command line"
    if baseline in (None, ""):
        base = ws.input_lanes[0]
    elif baseline == "best":
        m = metrics[0]
        base = max(ws.lanes, key=lambda n: (ws.mean(n, level, m), n))
        reasons["*"] = f"baseline chosen as the best lane on {m} over the compared queries"
    else:
        base = baseline
    for name in [base] + list(candidates):
        if name not in ws.lanes:
            hint = " (convex needs --thresholds)" if name == "convex" else ""
            raise InputError(f"unknown lane {name!r}{hint}; loaded: {', '.join(ws.lanes)}", "--candidate")
    cands = list(candidates) or [n for n in ws.lanes if n != base and ws.lane_origin.get(n) != "variant"]
    if not cands:
        raise InputError("nothing to compare: give --candidate or a second --lane", "--candidate")
    for c in cands + [base]:
        if c == "convex" and th is not None and in_sample_overlap(ws, th, ws.positives):
            reasons[c] = "convex weights were fitted on the compared queries"
    if level not in ws.levels():
        raise InputError(f"level {level!r} needs --group-sep", "--level")
    return ComparePlan(base, tuple(cands), tuple(metrics), level, reasons)


def resolve_settings(ws: Workspace, settings: CompareSettings) -> CompareSettings:
    """Resamples, seed and confidence left None are the workspace's (``LoadSettings``)."""
    s = ws.settings
    return replace(
        settings,
        resamples=s.resamples if settings.resamples is None else settings.resamples,
        seed=s.seed if settings.seed is None else settings.seed,
        confidence=s.confidence if settings.confidence is None else settings.confidence,
    )


def run_compare(ws: Workspace, plan: ComparePlan, settings: CompareSettings) -> CompareResult:
    """Paired statistics for every (baseline, candidate, metric) over the positives, then the verdicts.

    A row is exploratory when every row is (``*``) or its candidate or baseline was tuned
    on the compared queries.
    """
    settings = resolve_settings(ws, settings)
    check_resamples(settings.resamples)
    keys = [ws.metric_key(m) for m in plan.metrics]
    primary = settings.primary
    if primary is not None:
        primary = ws.metric_key(primary)
        if primary not in keys:
            raise InputError(f"--primary {primary} is not among the compared metrics", "--primary")
    q = ws.positives
    qids = ws.qids[q].tolist()
    rows = []
    needed = ws.metric_set(keys + [JUDGED])
    base_pq = ws.per_query(plan.baseline, plan.level, needed)
    reasons = plan.exploratory_reasons
    for metric in keys:
        base_v = base_pq[metric][q]
        for cand in plan.candidates:
            cand_pq = ws.per_query(cand, plan.level, needed)
            stats = paired_statistics(base_v, cand_pq[metric][q], qids, resamples=settings.resamples,
                                      seed=settings.seed, confidence=settings.confidence,
                                      alternative=settings.alternative,
                                      judged=(base_pq[JUDGED][q], cand_pq[JUDGED][q]))
            expl = "*" in reasons or cand in reasons or plan.baseline in reasons
            rows.append(RowInput(plan.baseline, cand, metric, stats, expl))
    return decide(rows, correction=settings.correction, primary=primary, min_delta=settings.min_delta)


@dataclass(frozen=True)
class Comparison:
    """One ``compare`` call: its plan, its (resolved) settings, the rows with their verdicts."""

    plan: ComparePlan
    settings: CompareSettings  # resamples, seed and confidence resolved
    result: CompareResult
    queries: int  # the positives compared
    qrels_sha256: str

    @property
    def rows(self) -> tuple[ComparisonRow, ...]:
        return self.result.rows

    def settings_dict(self) -> dict:
        """The ``settings`` block of ``compare --out``: the family's, then the call's."""
        s = self.settings
        return {
            **self.result.settings_dict(),
            "baseline": self.plan.baseline,
            "level": self.plan.level,
            "resamples": s.resamples,
            "seed": s.seed,
            "alternative": s.alternative,
            "exploratory_reasons": dict(self.plan.exploratory_reasons),
            "queries": self.queries,
            "qrels_sha256": self.qrels_sha256,
        }

    def as_dict(self) -> dict:
        """The ``compare --out`` payload: comparisons (with ``*_reason`` siblings), settings,
        warnings, caption."""
        return {**self.result.as_dict(reasons=True), "settings": self.settings_dict()}


def compare(ws: Workspace, thresholds: Thresholds | None, settings: CompareSettings) -> Comparison:
    """The comparison entry point: plan, paired statistics, verdicts.

    ``ws`` has its derived lanes (``pipeline.prepare``); ``thresholds`` are the ones it
    was prepared with (they make an in-sample ``convex`` exploratory).
    """
    settings = resolve_settings(ws, settings)

    def compute() -> Comparison:
        plan = plan_compare(ws, thresholds, settings)
        result = run_compare(ws, plan, settings)
        qrels_sha = next((f.sha256 for f in ws.inputs if f.role == "qrels"), None)  # None: per-query tables alone
        return Comparison(plan, settings, result, int(ws.positives.size), qrels_sha)

    # computed once per settings on this workspace (the CLI, the report and the Compare view
    # share it): the key holds the resolved settings, the lanes present and the thresholds
    return ws.derived("compare", (settings, _lanes_key(ws), _thresholds_key(thresholds)), compute)


def _lanes_key(ws: Workspace) -> tuple:
    return tuple((name, ws.lane_origin.get(name)) for name in ws.lanes)


def _thresholds_key(th: Thresholds | None) -> tuple | None:
    if th is None:
        return None
    import json

    return (th.path, json.dumps(th.data, sort_keys=True, default=str), tuple(sorted(th.calibration_qids)))


def query_deltas(ws: Workspace, baseline: str, candidate: str, metric: str, level: str = "doc") -> list[tuple[str, float, float, float]]:
    """(qid, baseline value, candidate value, Δ = candidate − baseline) per positive, largest losses first
    (ties by qid as bytes) — the per-query list behind a comparison."""
    key = M.parse_metrics(metric)[0]
    needed = tuple(dict.fromkeys(list(ws.settings.metrics) + [key]))
    q = ws.positives
    b = ws.per_query(baseline, level, needed)[key.key][q]
    c = ws.per_query(candidate, level, needed)[key.key][q]
    d = c - b
    qids = ws.qids[q]
    order = sorted(range(q.size), key=lambda i: (d[i], qids[i].encode()))
    return [(qids[i], float(b[i]), float(c[i]), float(d[i])) for i in order]
