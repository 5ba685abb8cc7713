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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

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
