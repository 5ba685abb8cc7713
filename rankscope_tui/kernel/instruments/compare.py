"""The comparison instrument: one ``compare`` call over a workspace, as the command line,
the report and the dashboard all run it (SPEC §7).

``compare(ws, thresholds, settings)`` resolves the rows (``plan_compare``), computes the
paired statistics of every (baseline, candidate, metric) over the positives and the
verdicts (``run_compare``), and returns a ``Comparison`` whose ``as_dict()`` is the
``compare --out`` payload. ``query_deltas`` is the per-query list behind one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import measures as M
from ..errors import InputError
from ..gate.thresholds import Thresholds, in_sample_overlap
from ..settings import CompareSettings
from ..statistics.paired import paired_statistics
from ..statistics.randomization import check_resamples
from ..statistics.units import UnitFile, read_units, unit_means
from ..statistics.verdict import CompareResult, ComparisonRow, RowInput, check_test, decide

if TYPE_CHECKING:  # the contract a workspace keeps: compare runs on runs, per-query tables and buckets alike
    from ..statistics.seeds import RetrainingSpread
    from ..statistics.tukey import TukeyResult
    from ..workspace.contract import PerQuery

SCHEMA = "rankscope.compare/1"
ALL_PAIRS_SCHEMA = "rankscope.all_pairs/1"  # compare --all-pairs --out
#: The judged@k both lanes' largest losses and gains carry (SPEC §7).
JUDGED = "judged@10"


@dataclass(frozen=True)
class ComparePlan:
    """Which rows one ``compare`` call tests, and why a row is exploratory."""

    baseline: str
    candidates: tuple[str, ...]
    metrics: tuple[str, ...]
    level: str = "doc"
    exploratory_reasons: dict[str, str] = field(default_factory=dict)  # candidate or "*" -> reason
    seed_runs: dict[str, dict[int, str]] = field(default_factory=dict)  # system -> {seed: lane} (with --seed-runs)
    # a planned call (--plan / --pair): every (candidate, baseline) pair compared, in order,
    # and the planned (candidate, baseline, metric) rows; () and None without a plan
    pairs: tuple[tuple[str, str], ...] = ()
    planned: frozenset[tuple[str, str, str]] | None = None
    plan_source: str | None = None

    def row_pairs(self) -> tuple[tuple[str, str], ...]:
        """(candidate, baseline) of every compared pair, in row order within a metric."""
        return self.pairs or tuple((c, self.baseline) for c in self.candidates)

    def is_planned(self, candidate: str, baseline: str, metric: str) -> bool:
        """Whether the row is in the plan (every row is, without a plan)."""
        return self.planned is None or (candidate, baseline, metric) in self.planned

    def runs_of(self, lane: str) -> dict[int, str]:
        """{seed: lane} of the system whose representative ``lane`` is, or {} for a plain lane."""
        for runs in self.seed_runs.values():
            if lane == next(iter(runs.values())):
                return runs
        return {}


def default_candidates(ws: PerQuery, baseline: str | None, hidden: frozenset[str] | set[str] = frozenset()) -> tuple[str, ...]:
    """The lanes compared when none is named: every input lane but ``baseline`` (and the
    retraining runs in ``hidden``), in workspace order. A derived lane (``rrf``, ``convex``,
    any fused lane, a cap or document-first variant) takes part only when it is named
    (SPEC §13, "Compare candidates"): the CLI, the API and the Compare view share this."""
    return tuple(n for n in ws.lanes
                 if n != baseline and ws.lane_origin.get(n, "input") == "input" and n not in hidden)


def plan_compare(ws: PerQuery, th: Thresholds | None, settings: CompareSettings) -> ComparePlan:
    """Resolve names; ``--baseline best`` and anything tuned on the compared queries are exploratory.

    No baseline = the first input lane; no candidates = ``default_candidates`` (the input
    lanes: a derived lane only when named). ``best`` is the lane with the highest mean on the
    first metric among the input lanes and the named candidates; it is never compared with
    itself (a named candidate that is chosen as the best becomes the baseline only). A
    baseline named as a candidate too is refused.
    With ``seed_runs`` a system of ``SYSTEM@SEED`` lanes is named by SYSTEM and compared
    through its smallest seed's run (the one trained model the interval describes); its
    other runs feed the retraining column, never rows of their own.
    """
    if settings.planned:
        return _planned_compare(ws, th, settings)
    baseline, candidates, metrics, level = settings.baseline, settings.candidates, settings.metrics, settings.level
    groups: dict[str, dict[int, str]] = {}
    hidden: set[str] = set()
    if settings.seed_runs:
        from ..statistics.seeds import seed_groups

        groups = seed_groups(list(ws.lanes))
        if not groups:
            raise InputError("no lane is named SYSTEM@SEED (give --lane NAME@SEED=PATH for each retraining run)",
                             "--seed-runs")
        if all(len(runs) < 2 for runs in groups.values()):
            # one run per system has no retraining spread: the option would change nothing
            shown = ", ".join(f"{system} ({next(iter(runs.values()))})" for system, runs in groups.items())
            raise InputError(f"every system has one run ({shown}); the retraining spread needs at least two "
                             "SYSTEM@SEED runs of a system", "--seed-runs")
        rep = {system: next(iter(runs.values())) for system, runs in groups.items()}
        hidden = {lane for runs in groups.values() for lane in list(runs.values())[1:]}
        baseline = rep.get(baseline, baseline) if baseline not in (None, "", "best") else baseline
        candidates = tuple(rep.get(c, c) for c in candidates)
    elif settings.shared_seeds:
        raise InputError("--shared-seeds needs --seed-runs", "--shared-seeds")
    named = tuple(dict.fromkeys(candidates))
    for name in named:
        _known_lane(ws, name)
    reasons: dict[str, str] = {}
    if settings.exploratory:
        reasons["*"] = "labelled exploratory on the command line"
    if baseline in (None, ""):
        base = ws.input_lanes[0]
    elif baseline == "best":
        m = metrics[0]
        pool = list(dict.fromkeys([*default_candidates(ws, None, hidden), *named]))
        base = max(pool, key=lambda n: (ws.mean(n, level, m), n))
        reasons["*"] = f"baseline chosen as the best lane on {m} over the compared queries"
    else:
        base = baseline
        _known_lane(ws, base)
        if base in named:
            raise InputError(f"{base!r} is the baseline and a candidate: a lane is never compared with itself",
                             "--candidate")
    cands = [c for c in named if c != base] if named else list(default_candidates(ws, base, hidden))
    if not cands:
        if baseline == "best" and named:
            raise InputError(f"the best lane on {metrics[0]} is {base}, the only candidate: name another candidate",
                             "--baseline")
        raise InputError("nothing to compare: give --candidate or a second --lane", "--candidate")
    for c in cands + [base]:
        if c == "convex" and th is not None and in_sample_overlap(ws, th, ws.positives):
            reasons[c] = "convex weights were fitted on the compared queries"
    if level not in ws.levels():
        raise InputError(ws.missing_level(level), "--level")
    return ComparePlan(base, tuple(cands), tuple(metrics), level, reasons, groups)


def _known_lane(ws: PerQuery, name: str, option: str = "--candidate") -> None:
    if name not in ws.lanes:
        hint = " (convex needs --thresholds)" if name == "convex" else ""
        raise InputError(f"unknown lane {name!r}{hint}; loaded: {', '.join(ws.lanes)}", option)


def _planned_compare(ws: PerQuery, th: Thresholds | None, settings: CompareSettings) -> ComparePlan:
    """The plan of a planned call (``settings.planned``, ``instruments.family_plan``): the
    planned pairs first, then the pairs asked for beyond them (``--candidate`` against
    ``--baseline`` or the first lane); the metrics the plan's, then ``--metric``'s others.
    Every row not in the plan is exploratory (its reason says so). ``--seed-runs`` and
    ``--baseline best`` do not combine with a plan (a plan names its baselines)."""
    source = settings.plan_source or "the plan"
    if settings.seed_runs:
        raise InputError("does not combine with a planned family (--plan / --pair)", "--seed-runs")
    if settings.baseline == "best":
        raise InputError("a planned family names its baselines: 'best' is chosen after the results", "--baseline")
    if settings.baseline not in (None, "") and not settings.candidates:
        raise InputError("with a plan, name the extra rows' candidates with --candidate", "--baseline")
    option = "--pair" if source == "--pair" else source
    planned = tuple((c, b, ws.metric_key(m)) for c, b, m in settings.planned)  # as the rows name them
    pairs = list(dict.fromkeys((c, b) for c, b, _ in planned))
    for c, b in pairs:
        _known_lane(ws, c, option)
        _known_lane(ws, b, option)
    metrics = list(dict.fromkeys([m for _, _, m in planned] + [ws.metric_key(m) for m in settings.metrics]))
    for c, b in settings.pairs:  # --pair beside --plan: asked for beyond the plan
        _known_lane(ws, c, "--pair")
        _known_lane(ws, b, "--pair")
        if (c, b) not in pairs:
            pairs.append((c, b))
    if settings.candidates:
        base = settings.baseline or ws.input_lanes[0]
        _known_lane(ws, base, "--baseline")
        for c in settings.candidates:
            _known_lane(ws, c)
            if c == base:
                raise InputError(f"{c} is the baseline; a lane is not compared with itself", "--candidate")
        pairs += [(c, base) for c in settings.candidates if (c, base) not in pairs]
    reasons: dict[str, str] = {}
    if settings.exploratory:
        reasons["*"] = "labelled exploratory on the command line"
    planned_set = frozenset(planned)
    for m in metrics:
        for c, b in pairs:
            if (c, b, m) not in planned_set:
                reasons[f"{c} vs {b} on {m}"] = f"not in the plan ({source}): corrected apart, with the other unplanned rows"
    lanes = list(dict.fromkeys(x for pair in pairs for x in pair))
    for c in lanes:
        if c == "convex" and th is not None and in_sample_overlap(ws, th, ws.positives):
            reasons[c] = "convex weights were fitted on the compared queries"
    if settings.level not in ws.levels():
        raise InputError(ws.missing_level(settings.level), "--level")
    cands = tuple(dict.fromkeys(c for c, _ in pairs))
    return ComparePlan(pairs[0][1], cands, tuple(metrics), settings.level, reasons, {}, tuple(pairs), planned_set,
                       settings.plan_source)


def resolve_settings(ws: PerQuery, settings: CompareSettings) -> CompareSettings:
    """Resamples, seed and confidence left None are the workspace's (``LoadSettings``)."""
    s = ws.settings
    return replace(
        settings,
        resamples=s.resamples if settings.resamples is None else settings.resamples,
        seed=s.seed if settings.seed is None else settings.seed,
        confidence=s.confidence if settings.confidence is None else settings.confidence,
    )


def _resampling(settings: CompareSettings) -> tuple[int, int, float]:
    """(resamples, seed, confidence) of settings ``resolve_settings`` returned."""
    resamples, seed, confidence = settings.resamples, settings.seed, settings.confidence
    assert resamples is not None and seed is not None and confidence is not None  # resolve_settings fills each
    return resamples, seed, confidence


def run_compare(ws: PerQuery, plan: ComparePlan, settings: CompareSettings, unit_file: UnitFile | None = None) -> CompareResult:
    """Paired statistics for every (baseline, candidate, metric) over the positives, then the verdicts.

    A row is exploratory when every row is (``*``) or its candidate or baseline was tuned
    on the compared queries. With ``settings.units`` (or ``unit_file``, already read) every
    statistic runs on unit means (``units``).
    """
    settings = resolve_settings(ws, settings)
    resamples, seed, confidence = _resampling(settings)
    check_resamples(resamples)
    check_test(settings.test)
    keys = [ws.metric_key(m) for m in plan.metrics]
    primary = settings.primary
    if primary is not None:
        primary = ws.metric_key(primary)
        if primary not in keys:
            raise InputError(f"--primary {primary} is not among the compared metrics", "--primary")
    q = ws.positives
    qids = ws.qids[q].tolist()
    if unit_file is None and settings.units is not None:
        unit_file = read_units(settings.units)
    units = None if unit_file is None else unit_file.units_of(qids)
    if units is not None:
        unit_means(units, np.zeros(len(qids)))  # fewer than two units: refused before any resampling
    rows = []
    needed = ws.metric_set(keys + [JUDGED])
    reasons = plan.exploratory_reasons
    for metric in keys:
        for cand, base in plan.row_pairs():
            base_pq = ws.per_query(base, plan.level, needed)
            cand_pq = ws.per_query(cand, plan.level, needed)
            stats = paired_statistics(base_pq[metric][q], cand_pq[metric][q], qids, resamples=resamples,
                                      seed=seed, confidence=confidence,
                                      alternative=settings.alternative,
                                      judged=(base_pq[JUDGED][q], cand_pq[JUDGED][q]), units=units)
            expl = ("*" in reasons or cand in reasons or base in reasons
                    or not plan.is_planned(cand, base, metric))
            spread = _retraining(ws, plan, settings, cand, metric, needed, qids, units)
            rows.append(RowInput(base, cand, metric, stats, expl, spread))
    result = _decide(rows, settings, primary, plan)
    result = _tie_flips(ws, plan, settings, rows, result, qids, units)
    result = _judgment_bounds(ws, plan, settings, rows, result, qids, units)
    result = replace(result, warnings=result.warnings + _residual_notes(ws, plan, keys))
    fused = [n for n in dict.fromkeys([plan.baseline, *plan.candidates]) if ws.lane_origin.get(n) == "fused"]
    if plan.seed_runs and fused:
        runs = sum(len(r) for r in plan.seed_runs.values())
        result = replace(result, warnings=result.warnings + (
            f"{', '.join(fused)} fuse{'s' if len(fused) == 1 else ''} every input lane, the {runs} retraining runs "
            f"({', '.join(f'{s}@SEED' for s in plan.seed_runs)}) included, one lane per seed",))
    return result


def _residual_notes(ws: PerQuery, plan: ComparePlan, keys: Sequence[str]) -> tuple[str, ...]:
    """One line per compared measure that has a companion (RBP: its residual): the companion's
    mean for each lane over the compared queries, so that a lower bound is never read
    without the most it could rise. Inputs without the companion (a per-query table holding
    rbp only) say so."""
    out = []
    q = ws.positives
    for key in keys:
        try:
            mk = M.parse_name(key)
        except InputError:  # a measure a per-query table holds that rankscope does not compute
            continue
        if not mk.measure.companion:
            continue
        mate = M.MetricKey(mk.measure.companion, mk.k, mk.rel, mk.param)
        lanes = list(dict.fromkeys([plan.baseline, *plan.candidates]))
        try:
            means = {n: float(np.mean(ws.per_query(n, plan.level, ws.metric_set([mate.key]))[mate.key][q])) for n in lanes}
        except (InputError, KeyError):
            means = {}
        # a per-query table without the column gives no values (NaN) rather than an error
        if not means or not all(np.isfinite(v) for v in means.values()):
            out.append(f"{key} is a lower bound (unjudged hits gain 0) and its residual {mate.key} is not in the inputs")
            continue
        shown = ", ".join(f"{n} {v:.4f}" for n, v in means.items())
        out.append(f"{key} is a lower bound (unjudged hits gain 0): its residual {mate.key}, the most it could rise, "
                   f"averages {shown}; a difference within the residuals may change with more judgments")
    return tuple(out)


def _decide(rows: Sequence[RowInput], settings: CompareSettings, primary: str | None, plan: ComparePlan) -> CompareResult:
    """``decide`` with the call's settings: a planned call corrects its unplanned rows apart;
    ``--reuse-correct``'s earlier p join the tested family."""
    return decide(rows, correction=settings.correction, primary=primary, min_delta=settings.min_delta,
                  test=settings.test, planned=plan.planned is not None, earlier_p=settings.earlier_p)


def _tie_flips(ws: PerQuery, plan: ComparePlan, settings: CompareSettings, rows: list[RowInput], result: CompareResult,
               qids: Sequence[str], units: Sequence[str] | None) -> CompareResult:
    """Each row with its :class:`~..statistics.verdict.TieFlip`: the family decided again at
    the low extreme (every candidate at its worst tie order, the baseline at its best) and at
    the high one. Rows whose lanes have no tie-dependent positive keep their statistics in
    both families (their values do not move). Only at doc level on a workspace with ranked
    rows and for the measures ``measures.ties`` covers; other rows keep ``tie_order=None``."""
    from ..measures.ties import SUPPORTED
    from ..statistics.verdict import TieFlip

    ties_of = getattr(ws, "ties", None)
    if ties_of is None or plan.level != "doc":
        return result
    q = ws.positives
    resamples, seed, confidence = _resampling(settings)
    kinds = {m.key: m.kind for m in ws.settings.metrics}
    extremes: dict[str, list[RowInput]] = {"low": [], "high": []}
    moved: list[int] = []
    for r in rows:
        if kinds.get(r.metric) not in SUPPORTED:
            moved.append(-1)
            extremes["low"].append(r)
            extremes["high"].append(r)
            continue
        bt, ct = ties_of(r.baseline), ties_of(r.candidate)
        dep = int((bt.depends[r.metric][q] | ct.depends[r.metric][q]).sum())
        moved.append(dep)
        for side, (cand, base) in (("low", (ct.worst, bt.best)), ("high", (ct.best, bt.worst))):
            if not dep:
                extremes[side].append(r)
                continue
            stats = paired_statistics(base[r.metric][q], cand[r.metric][q], qids, resamples=resamples, seed=seed,
                                      confidence=confidence, alternative=settings.alternative, units=units)
            extremes[side].append(replace(r, stats=stats))
    decided = {side: _decide(extremes[side], settings, result.primary, plan) for side in extremes}
    out = []
    for i, row in enumerate(result.rows):
        if moved[i] < 0:
            out.append(row)
            continue
        lo, hi = decided["low"].rows[i], decided["high"].rows[i]
        flip = (np.sign(lo.difference) != np.sign(hi.difference) or lo.verdict != row.verdict
                or hi.verdict != row.verdict)
        tf = TieFlip(moved[i], float(lo.difference), float(hi.difference), lo.verdict_text, hi.verdict_text, bool(flip))
        note = () if not flip else (
            f"another order of tied scores could change this row: over {tf.dependent_queries} tie-dependent queries "
            f"Δ ranges from {tf.delta_low:.4f} to {tf.delta_high:.4f} (verdicts {tf.verdict_low} / {tf.verdict_high})",)
        out.append(replace(row, tie_order=tf, warnings=row.warnings + note))
    return replace(result, rows=tuple(out))


def _judgment_bounds(ws: PerQuery, plan: ComparePlan, settings: CompareSettings, rows: list[RowInput],
                     result: CompareResult, qids: Sequence[str], units: Sequence[str] | None) -> CompareResult:
    """Each row with its :class:`~..statistics.verdict.JudgmentBounds`: the family decided
    again with both lanes' unjudged hits (within each measure's cutoff) counted non-relevant
    and counted relevant (``measures.coverage``). Only at doc level on a workspace with
    ranked rows, for every compared measure; other rows keep ``judgment_bounds=None``. A
    row whose lanes have no hole on any positive keeps its statistics at both bounds."""
    from ..statistics.verdict import JudgmentBounds

    cov_of = getattr(ws, "judgment_coverage", None)
    if cov_of is None or plan.level != "doc":
        return result
    q = ws.positives
    resamples, seed, confidence = _resampling(settings)
    mset = ws.metric_set(dict.fromkeys(r.metric for r in rows))  # the workspace's measures and the compared ones
    known = {m.key for m in mset}
    bounds: dict[str, list[RowInput]] = {"nonrelevant": [], "relevant": []}
    holes: list[int] = []
    for r in rows:
        if r.metric not in known:
            holes.append(-1)
            bounds["nonrelevant"].append(r)
            bounds["relevant"].append(r)
            continue
        bc, cc = cov_of(r.baseline, mset), cov_of(r.candidate, mset)
        n = int(((bc.holes[r.metric][q] > 0) | (cc.holes[r.metric][q] > 0)).sum())
        holes.append(n)
        for side in bounds:
            values = (getattr(bc, "as_" + side)[r.metric][q], getattr(cc, "as_" + side)[r.metric][q])
            if not n or (np.array_equal(values[0], ws.per_query(r.baseline, "doc", mset)[r.metric][q])
                         and np.array_equal(values[1], ws.per_query(r.candidate, "doc", mset)[r.metric][q])):
                bounds[side].append(r)  # the bound is the observed value: the observed statistics
                continue
            stats = paired_statistics(values[0], values[1], qids, resamples=resamples, seed=seed,
                                      confidence=confidence, alternative=settings.alternative, units=units)
            bounds[side].append(replace(r, stats=stats))
    # decided as the rows themselves are (a planned family, --reuse-correct's earlier p)
    decided = {side: _decide(bounds[side], settings, result.primary, plan) for side in bounds}
    out = []
    for i, row in enumerate(result.rows):
        if holes[i] < 0:
            out.append(row)
            continue
        lo, hi = decided["nonrelevant"].rows[i], decided["relevant"].rows[i]
        jb = JudgmentBounds(holes[i], float(lo.difference), float(hi.difference), lo.verdict_text, hi.verdict_text,
                            bool(lo.verdict != hi.verdict))
        note = () if not jb.one_bound_only else (
            f"the verdict holds under one bound of the unjudged hits only: over {jb.holes_queries} queries with "
            f"unjudged hits within the cutoff, Δ is {jb.delta_nonrelevant:.4f} with them counted non-relevant "
            f"({jb.verdict_nonrelevant}) and {jb.delta_relevant:.4f} counted relevant ({jb.verdict_relevant})",)
        out.append(replace(row, judgment_bounds=jb, warnings=row.warnings + note))
    return replace(result, rows=tuple(out))


def _retraining(ws: PerQuery, plan: ComparePlan, settings: CompareSettings, cand: str, metric: str,
                needed: tuple[Any, ...], qids: Sequence[str], units: Sequence[str] | None) -> RetrainingSpread | None:
    """The retraining column of one row (``seeds``), or None when neither lane has seed runs."""
    b_runs, c_runs = plan.runs_of(plan.baseline), plan.runs_of(cand)
    if len(b_runs) < 2 and len(c_runs) < 2:
        return None
    from ..statistics.seeds import retraining_spread

    q = ws.positives
    resamples, seed, confidence = _resampling(settings)

    def values(runs: dict[int, str], lane: str) -> dict[int, np.ndarray]:
        return {s: ws.per_query(n, plan.level, needed)[metric][q] for s, n in (runs or {0: lane}).items()}

    return retraining_spread(values(b_runs, plan.baseline), values(c_runs, cand), qids, shared=settings.shared_seeds,
                             resamples=resamples, seed=seed, confidence=confidence, units=units)


@dataclass(frozen=True)
class Comparison:
    """One ``compare`` call: its plan, its (resolved) settings, the rows with their verdicts."""

    plan: ComparePlan
    settings: CompareSettings  # resamples, seed and confidence resolved
    result: CompareResult
    queries: int  # the positives compared
    qrels_sha256: str | None  # None: per-query tables alone
    definitions: dict[str, str] = field(default_factory=dict)  # metric key -> its definition (the checklist's first point)

    @property
    def rows(self) -> tuple[ComparisonRow, ...]:
        return self.result.rows

    def settings_dict(self) -> dict[str, Any]:
        """The ``settings`` block of ``compare --out``: the family's, then the call's."""
        s = self.settings
        return {
            **self.result.settings_dict(),
            "baseline": self.plan.baseline,
            "level": self.plan.level,
            "resamples": s.resamples,
            "seed": s.seed,
            "alternative": s.alternative,
            "units": s.units,
            "seed_runs": {system: list(runs) for system, runs in self.plan.seed_runs.items()},
            "shared_seeds": s.shared_seeds,
            "sampling_unit": "unit" if s.units is not None else "query",
            "exploratory_reasons": dict(self.plan.exploratory_reasons),
            "queries": self.queries,
            "qrels_sha256": self.qrels_sha256,
            "definitions": dict(self.definitions),
            **({} if self.plan.planned is None else {"plan": {
                "source": self.plan.plan_source,
                "rows": [{"candidate": c, "baseline": b, "metric": m} for c, b, m in sorted(
                    self.plan.planned, key=lambda r: (self.plan.metrics.index(r[2]), self.plan.pairs.index(r[:2])))]}}),
        }

    def as_dict(self) -> dict[str, Any]:
        """The ``compare --out`` payload: comparisons (with ``*_reason`` siblings), settings,
        warnings, caption."""
        return {"schema": SCHEMA, **self.result.as_dict(reasons=True), "settings": self.settings_dict()}


def _definitions(ws: PerQuery, metrics: Sequence[str]) -> dict[str, str]:
    """Each compared metric's definition (the registry's); a measure read from per-query
    tables is defined by the tool that computed it."""
    if not getattr(ws, "tables", None):
        return {k.key: k.definition(ws.settings.relevant) for k in M.parse_metrics(",".join(metrics))}
    out: dict[str, str] = {}
    for m in metrics:  # a table's measure read as rankscope's own key has that key's definition
        try:
            keys = M.parse_metrics(m)
        except InputError:
            keys = []
        if keys and keys[0].key == m:
            out.update({k.key: k.definition(ws.settings.relevant) for k in keys})
        else:
            out[m] = "read from per-query tables: as computed by the tool that wrote them"
    return out


def compare(ws: PerQuery, thresholds: Thresholds | None, settings: CompareSettings) -> Comparison:
    """The comparison entry point: plan, paired statistics, verdicts.

    ``ws`` has its derived lanes (``instruments.evaluate.prepare``); ``thresholds`` are the ones it
    was prepared with (they make an in-sample ``convex`` exploratory).
    """
    settings = resolve_settings(ws, settings)

    unit_file = None if settings.units is None else read_units(settings.units)

    def compute() -> Comparison:
        plan = plan_compare(ws, thresholds, settings)
        result = run_compare(ws, plan, settings, unit_file)
        qrels_sha = next((f.sha256 for f in ws.inputs if f.role == "qrels"), None)  # None: per-query tables alone
        return Comparison(plan, settings, result, int(ws.positives.size), qrels_sha, _definitions(ws, plan.metrics))

    # computed once per settings on this workspace (the CLI, the report and the Compare view
    # share it): the key holds the resolved settings, the lanes present and the thresholds
    # (the unit file's pairs too: the file may change between two calls on one workspace)
    units_key = None if unit_file is None else unit_file.pairs
    return ws.derived("compare", (settings, _lanes_key(ws), _thresholds_key(thresholds), units_key), compute)


def _lanes_key(ws: PerQuery) -> tuple[tuple[str, str | None], ...]:
    return tuple((name, ws.lane_origin.get(name)) for name in ws.lanes)


def _thresholds_key(th: Thresholds | None) -> tuple[str, str, tuple[str, ...]] | None:
    if th is None:
        return None
    import json

    return (th.path, json.dumps(th.data, sort_keys=True, default=str), tuple(sorted(th.calibration_qids)))


def query_deltas(ws: PerQuery, baseline: str, candidate: str, metric: str, level: str = "doc") -> list[tuple[str, float, float, float]]:
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


def all_pairs_lanes(ws: PerQuery, settings: CompareSettings) -> tuple[str, ...]:
    """The lanes ``--all-pairs`` compares: the baseline (default the first lane) and the
    candidates when given, else the baseline and ``default_candidates`` (the input lanes:
    a derived lane only when named), in workspace order. The limit of ``MAX_SYSTEMS`` is
    on these: nine input lanes are compared (the fused lanes are not counted unless named)."""
    if settings.baseline == "best":
        raise InputError("--all-pairs compares every pair: there is no baseline to choose as the best", "--baseline")
    if settings.candidates:
        base = settings.baseline or ws.input_lanes[0]
        names = list(dict.fromkeys([base, *settings.candidates]))
    else:
        names = list(default_candidates(ws, None))
        if settings.baseline:
            names = list(dict.fromkeys([settings.baseline, *names]))
    for name in names:
        _known_lane(ws, name)
    if len(names) < 2:
        raise InputError("--all-pairs needs at least two lanes", "--lane")
    return tuple(names)


def compare_all_pairs(ws: PerQuery, thresholds: Thresholds | None, settings: CompareSettings) -> TukeyResult:
    """``compare --all-pairs``: the randomised Tukey HSD (``tukey``) over the lanes of
    ``all_pairs_lanes`` on the one metric of ``settings.metrics``, over the positives
    (unit means with ``settings.units``). Resamples, seed and confidence as ``compare``.
    The test is two-sided and controls the family-wise rate itself: a one-sided
    alternative or ``--test t`` is refused rather than ignored."""
    from ..statistics.tukey import tukey_hsd

    settings = resolve_settings(ws, settings)
    resamples, seed, confidence = _resampling(settings)
    check_resamples(resamples)
    if len(settings.metrics) != 1:
        raise InputError(f"--all-pairs compares the lanes on one metric, got {len(settings.metrics)}", "--metric")
    if settings.alternative != "two-sided":
        raise InputError("--all-pairs is two-sided (the range of the system means): drop --alternative", "--alternative")
    if settings.test != "randomization":
        raise InputError(f"--all-pairs runs the randomised Tukey HSD; --test {settings.test} does not apply", "--test")
    if settings.level not in ws.levels():
        raise InputError(ws.missing_level(settings.level), "--level")
    unit_file = None if settings.units is None else read_units(settings.units)
    key = M.parse_metrics(settings.metrics[0])[0]
    names = all_pairs_lanes(ws, settings)

    def compute() -> TukeyResult:
        needed = tuple(dict.fromkeys(list(ws.settings.metrics) + [key]))
        q = ws.positives
        qids = ws.qids[q].tolist()
        units = None if unit_file is None else unit_file.units_of(qids)
        x = np.column_stack([ws.per_query(n, settings.level, needed)[key.key][q] for n in names])
        res = tukey_hsd(x, names, metric=key.key, resamples=resamples, seed=seed, confidence=confidence, units=units)
        return res

    units_key = None if unit_file is None else unit_file.pairs
    return ws.derived("all_pairs", (settings, names, _lanes_key(ws), units_key), compute)
