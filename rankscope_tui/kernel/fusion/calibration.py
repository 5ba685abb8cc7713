"""Calibration comparison: convex fusion weights fitted on one split, scored on another.

Lesson 08. Weights are fitted on the grid of ``fusion.calibrate_convex`` (what
`rankscope calibrate` writes to thresholds.json) over one workspace's positives, the
objective being a metric's mean over them at doc level. The honest estimate fits on the
dev split and scores the convex lane on the test split; fitting on the test split
itself ("fit on test") reports an in-sample score, and the **optimism** of doing so is

    optimism = objective(test weights, on test) - objective(dev weights, on test)

which is >= 0 on the same grid (the test fit maximises the test objective).

References
----------
- Bruch, S., Gai, S. & Ingber, A. (2023). An analysis of fusion functions for hybrid
  retrieval. *ACM TOIS* 42(1), article 20. (convex combination against RRF, and tuning
  its weight)
- Efron, B. (1986). How biased is the apparent error rate of a prediction rule? *JASA*
  81(394), 461-470. (optimism: a fit scored on its own data)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..settings import CalibrationSettings

if TYPE_CHECKING:
    from ..measures import MetricKey
    from ..ranking.ranks import RankedLane
    from ..workspace.loaded import Workspace
    from .methods import ConvexFit


def per_query_objective(ws: Workspace, metric: str) -> tuple[Callable[[RankedLane], np.ndarray], MetricKey]:
    """``g(lane) -> metric per query code`` (doc level, via the metrics kernel), and the metric's key."""
    from .. import measures as M

    key = M.parse_metrics(metric)[0]
    j, s = ws.judgments, ws.settings

    def g(lane: RankedLane) -> np.ndarray:
        hits, ideal = M.doc_level(lane.qid, lane.doc, lane.rank, j.qid, j.doc, j.grade, ws.n_docs)
        return M.compute(hits, ideal, ws.n_queries, [key], s.relevant)[key.key]

    return g, key


def mean_over(values: np.ndarray, queries: np.ndarray) -> float:
    """The objective: the mean of per-query values over the queries (0 over none)."""
    return float(values[queries].mean()) if queries.size else 0.0


def objective(ws: Workspace, metric: str,
              queries: np.ndarray | None = None) -> tuple[Callable[[RankedLane], float], MetricKey]:
    """``f(lane) -> mean metric over the queries`` (positives by default), via the metrics kernel."""
    g, key = per_query_objective(ws, metric)
    q = ws.positives if queries is None else queries
    return (lambda lane: mean_over(g(lane), q)), key


def fit_convex(ws: Workspace, step: float, metric: str, queries: np.ndarray | None = None) -> ConvexFit:
    """Convex fusion weights (``fusion.ConvexFit``) fitted on ``queries`` (positives by default)
    of this workspace. A workspace of merged query buckets (``bucket.QueryWorkspace``, which
    borrows the loaded workspace's members) brings every grid point's per-query values from
    the buckets (``grid_values``)."""
    from . import methods as F

    grid_of = getattr(ws, "convex_grid", None)
    if grid_of is not None:
        from ..measures import parse_metrics

        lanes, values, fused = grid_of(step, metric)
        q = ws.positives if queries is None else queries
        return F.fit_of_values(lanes, step, F.grid_weights(len(lanes), step), (mean_over(v, q) for v in values),
                               fused, parse_metrics(metric)[0].key)
    f, key = objective(ws, metric, queries)
    return F.calibrate_convex([ws.lanes[n] for n in ws.input_lanes], f, n_queries=ws.n_queries, step=step,
                              depth=ws.settings.depth, objective_depth=key.k, doc_ids=ws.doc_order, objective_name=key.key)


def grid_values(ws: Workspace, step: float, metric: str) -> tuple[tuple[str, ...], list[np.ndarray], int]:
    """(lanes, per grid point the objective per query code, queries with a fused hit): what
    :func:`fit_convex` takes the means of, kept per query (a bucket's share of a fit)."""
    from . import methods as F

    g, key = per_query_objective(ws, metric)
    table = F.FusionTable.build([ws.lanes[n] for n in ws.input_lanes], ws.n_queries, ws.doc_order, None,
                                by_best_rank=False)
    values = [g(lane) for lane in F.grid_lanes(table, step, ws.settings.depth, key.k)]
    return table.lanes, values, table.fused_queries


def convex_means(ws: Workspace, weights: Sequence[float]) -> dict[str, float]:
    """Means over ``ws``'s positives (doc level, the workspace's metrics) of the convex
    lane of its input lanes with ``weights``; the lane is scored, not added."""
    from . import methods as F

    lane = F.convex([ws.lanes[n] for n in ws.input_lanes], weights, ws.n_queries, ws.settings.depth, name="convex",
                    doc_ids=ws.doc_order)
    return ws.means_of(ws.metrics_of(lane, "doc"))


@dataclass(frozen=True)
class CalibrationComparison:
    """Weights fitted on dev and on test, and the convex lane's means on test with each."""

    settings: CalibrationSettings
    lanes: tuple[str, ...]
    fit_dev: ConvexFit | None  # on the dev positives (None without a dev split)
    fit_test: ConvexFit  # on the test positives (in-sample)
    test_at_dev: dict[str, float] | None  # metric -> mean on test with the dev-fitted weights (held out)
    test_at_test: dict[str, float]  # metric -> mean on test with the test-fitted weights (in-sample)
    dev_at_dev: dict[str, float] | None  # metric -> mean on dev with the dev-fitted weights (in-sample)
    n_dev: int  # dev positives
    n_test: int  # test positives

    @property
    def optimism(self) -> float | None:
        """Objective on test, test-fitted minus dev-fitted weights (None without dev)."""
        if self.fit_dev is None:
            return None
        assert self.test_at_dev is not None  # scored whenever there is a dev fit
        return self.fit_test.objective - self.test_at_dev[self.fit_test.objective_name]


def compare_calibration(test_ws: Workspace, dev_ws: Workspace | None = None,
                        settings: CalibrationSettings = CalibrationSettings()) -> CalibrationComparison:
    """Fit convex weights on ``dev_ws`` (when given) and on ``test_ws``, score both on
    ``test_ws`` (and the dev fit on dev). The workspaces must hold the same input lanes."""
    step, metric = settings.step, settings.objective
    lanes = tuple(test_ws.input_lanes)
    fit_test = fit_convex(test_ws, step, metric)
    test_at_test = convex_means(test_ws, fit_test.weights)
    fit_dev: ConvexFit | None = None
    test_at_dev: dict[str, float] | None = None
    dev_at_dev: dict[str, float] | None = None
    if dev_ws is not None:
        if tuple(dev_ws.input_lanes) != lanes:
            raise ValueError("dev and test workspaces must hold the same lanes")
        fit_dev = fit_convex(dev_ws, step, metric)
        test_at_dev = convex_means(test_ws, fit_dev.weights)
        dev_at_dev = convex_means(dev_ws, fit_dev.weights)
    return CalibrationComparison(settings, lanes, fit_dev, fit_test, test_at_dev, test_at_test, dev_at_dev,
                                 int(dev_ws.positives.size) if dev_ws is not None else 0, int(test_ws.positives.size))


# ------------------------------------------------------------ several fusion methods


@dataclass(frozen=True)
class MethodScore:
    """One fusion method (``combine``'s ``METHOD[:NORM]``) fitted on dev and scored on test."""

    name: str
    weights: dict[str, float] | None  # fitted on dev on the integer simplex grid (a weighted method), else None
    grid_points: int  # grid points tried (1 for a method without weights)
    dev: float  # mean objective on the dev positives (in-sample for a fitted method)
    test: float | None  # mean objective on the test positives, with the dev weights (held out); None without test

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dev": self.dev, "grid_points": self.grid_points}
        if self.weights is not None:
            out["weights"] = dict(self.weights)
        if self.test is not None:
            out["test"] = self.test
        return out


@dataclass(frozen=True)
class MethodComparison:
    """Fusion methods side by side: each fitted (weights, where it has them) and scored on
    dev, then scored on held-out test.

    The method chosen on dev is the first with the highest dev mean (exact comparison,
    methods in the order given). Choosing it on dev is a fit too, so its dev mean is
    optimistic; ``optimism`` is the held-out price of choosing on dev: the best test mean
    of any method minus the test mean of the method chosen on dev (>= 0)."""

    objective: str
    step: float
    n_dev: int
    n_test: int | None
    methods: tuple[MethodScore, ...]

    @property
    def chosen_on_dev(self) -> MethodScore:
        return self.methods[_first_max([m.dev for m in self.methods])]

    @property
    def best_on_test(self) -> MethodScore | None:
        if self.n_test is None:
            return None
        return self.methods[_first_max([m.test if m.test is not None else -math.inf for m in self.methods])]

    @property
    def optimism(self) -> float | None:
        best, chosen = self.best_on_test, self.chosen_on_dev
        if best is None or best.test is None or chosen.test is None:
            return None
        return best.test - chosen.test

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "objective": self.objective, "step": self.step, "dev_positives": self.n_dev,
            "methods": {m.name: m.as_dict() for m in self.methods},
            "chosen_on_dev": self.chosen_on_dev.name,
            "rule": "weights fitted on dev on the integer simplex grid (first best point); the method chosen on dev "
                    "is the first with the highest dev mean",
        }
        if self.n_test is not None:
            best = self.best_on_test
            assert best is not None
            out["test_positives"] = self.n_test
            out["best_on_test"] = best.name
            out["optimism"] = self.optimism
            out["optimism_definition"] = ("best test mean of any method minus the test mean of the method chosen on "
                                          "dev: what choosing the method on dev costs on held-out queries")
        return out


def _first_max(values: Sequence[float]) -> int:
    best_i, best_v = 0, -math.inf
    for i, v in enumerate(values):
        if v > best_v:  # strict: the first maximum wins
            best_i, best_v = i, v
    return best_i


def fit_method(ws: Workspace, spec: str, step: float, metric: str) -> tuple[tuple[float, ...] | None, float, int]:
    """(weights, mean objective over ``ws``'s positives, grid points) of one fusion method on
    ``ws``'s input lanes: a weighted method's weights are the first best point of the
    integer simplex grid (``methods.grid_weights``, as the convex fit), each point scored at
    the objective's depth; a method without weights is scored once."""
    from . import methods as F
    from .combine import parse_fuse

    fs = parse_fuse(spec)
    f, key = objective(ws, metric)
    s = ws.settings
    table = F.FusionTable.build([ws.lanes[n] for n in ws.input_lanes], ws.n_queries, ws.doc_order, None,
                                by_best_rank=False)
    depth = s.depth if key.k is None else key.k if s.depth is None else min(s.depth, key.k)
    if not fs.weighted:
        return None, f(table.fuse(fs, None, s.rrf_k, depth)), 1
    grid = F.grid_weights(len(table.lanes), step)
    best_i, best_v, _ = F._first_best(grid, lambda w: f(table.fuse(fs, w, s.rrf_k, depth)))
    return grid[best_i][1], best_v, len(grid)


def method_mean(ws: Workspace, spec: str, weights: Sequence[float] | None, metric: str) -> float:
    """Mean objective over ``ws``'s positives of one fusion method's lane (weights given)."""
    from . import methods as F

    f, _ = objective(ws, metric)
    lane = F.fuse([ws.lanes[n] for n in ws.input_lanes], spec, weights, ws.settings.rrf_k, ws.n_queries,
                  ws.settings.depth, doc_ids=ws.doc_order)
    return f(lane)


def compare_methods(dev_ws: Workspace, specs: Sequence[str], test_ws: Workspace | None = None,
                    settings: CalibrationSettings = CalibrationSettings()) -> MethodComparison:
    """Each of ``specs`` fitted and scored on ``dev_ws`` (:func:`fit_method`), then scored on
    ``test_ws`` with the dev weights. The workspaces must hold the same input lanes."""
    if test_ws is not None and tuple(test_ws.input_lanes) != tuple(dev_ws.input_lanes):
        raise ValueError("dev and test workspaces must hold the same lanes")
    rows = []
    for spec in specs:
        w, dev, points = fit_method(dev_ws, spec, settings.step, settings.objective)
        test = method_mean(test_ws, spec, w, settings.objective) if test_ws is not None else None
        rows.append(MethodScore(spec, dict(zip(dev_ws.input_lanes, w)) if w is not None else None, points, dev, test))
    return MethodComparison(settings.objective, settings.step, int(dev_ws.positives.size),
                            int(test_ws.positives.size) if test_ws is not None else None, tuple(rows))
