"""The printed minimum detectable effect and ``plan``'s queries needed, checked by simulation
on Cranfield's per-query differences: studies drawn at the printed MDE are established by
the randomization test in 80 % of cases, and studies of ``plan``'s size reach 80 % power.

Each simulated study resamples n differences with replacement from the pilot's
differences, centred and scaled so their population sd is the pilot's sd (ddof = 1), then
shifted to the mean under test. Each study gets the product's protocol written plainly:
p = (1 + e)/(B + 1), e = the sign-flip means at least as extreme as the observed mean
(two-sided), and "established" = p ≤ the row's α with a positive mean. The B sign rows are
shared by the studies of one setting (one matrix product for all of them). 2,000 studies
give a Monte Carlo sd of 0.009 at 0.8, against a tolerance of 0.05.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import shared_path

from rankscope_tui import api
from rankscope_tui.kernel import plan_queries, query_deltas
from rankscope_tui.kernel.settings import PlanSettings
from rankscope_tui.kernel.statistics import paired as pa
from rankscope_tui.kernel.statistics import verdict as vd

STUDIES = 2000
B = 999
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def ws():
    c = shared_path("cranfield")
    return api.workspace(c / "qrels-test.txt", {n: c / "lanes" / f"{n}.run" for n in ("bm25", "dense", "tfidf")})


def deltas(ws, candidate: str, metric: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    rows = sorted(query_deltas(ws, "bm25", candidate, metric), key=lambda r: r[0].encode())
    return [r[0] for r in rows], np.array([r[1] for r in rows]), np.array([r[2] for r in rows])


def established_share(pilot: np.ndarray, n: int, mean: float, alpha: float, seed: int) -> float:
    """The share of STUDIES simulated studies of n differences with the given mean that the
    randomization test establishes as better at alpha (module doc)."""
    rng = np.random.default_rng(seed)
    pop = (pilot - pilot.mean()) * np.sqrt(pilot.size / (pilot.size - 1)) + mean
    studies = pop[rng.integers(0, pilot.size, size=(STUDIES, n))]
    signs = (1 - 2 * rng.integers(0, 2, size=(B, n))).astype(np.float64)
    observed = studies.mean(axis=1)
    flipped = studies @ signs.T / n  # (STUDIES, B) sign-flip means
    tol = 100 * np.finfo(np.float64).eps * np.abs(observed)
    e = np.count_nonzero(np.abs(flipped) >= (np.abs(observed) - tol)[:, None], axis=1)
    p = (1 + e) / (B + 1)
    return float(np.mean((p <= alpha) & (observed > 0)))


# (candidate, metric, the rows of its family, queries of the pilot used, seed)
MDE_SETTINGS = [
    ("dense", "ndcg@10", 1, 114, 1),
    ("tfidf", "ndcg@10", 3, 114, 2),  # a Bonferroni family of three: the row's α is 0.05/3
    ("dense", "recall@100", 1, 60, 3),  # the first 60 queries alone
]


@pytest.mark.parametrize("candidate,metric,family,queries,seed", MDE_SETTINGS)
def test_printed_mde_is_established_with_80_percent_power(ws, candidate, metric, family, queries, seed):
    qids, b, c = deltas(ws, candidate, metric)
    qids, b, c = qids[:queries], b[:queries], c[:queries]
    stats = pa.paired_statistics(b, c, qids, resamples=B)
    rows = [vd.RowInput("bm25", candidate, metric, stats)] * family
    row = vd.decide(rows, correction="bonferroni").rows[0]
    mde, alpha = row.power.mde, row.power.alpha
    assert alpha == pytest.approx(0.05 / family)
    share = established_share(c - b, queries, mde, alpha, seed)
    print(f"{candidate} vs bm25 on {metric}, n = {queries}, sd = {row.sd:.4f}, α = {alpha:.4g}: "
          f"MDE {mde:.4f} established in {share:.3f} of {STUDIES} studies")
    assert abs(share - 0.8) <= TOLERANCE


# (candidate, metric, target Δ, family size, seed)
PLAN_SETTINGS = [
    ("dense", "ndcg@10", 0.03, 1, 4),
    ("tfidf", "ndcg@10", 0.04, 3, 5),
    ("dense", "recall@100", 0.05, 1, 6),
]


@pytest.mark.parametrize("candidate,metric,delta,family,seed", PLAN_SETTINGS)
def test_plans_queries_reach_80_percent_power(ws, candidate, metric, delta, family, seed):
    plan = plan_queries(ws, PlanSettings(baseline="bm25", candidate=candidate, metric=metric, deltas=(delta,),
                                         family_size=family))
    n = plan.cells[0].needed
    assert n is not None and n > 2
    _, b, c = deltas(ws, candidate, metric)
    share = established_share(c - b, n, delta, 0.05 / family, seed)
    print(f"plan: {candidate} vs bm25 on {metric}, Δ = {delta}, J = {family}: n = {n}, power {share:.3f}")
    assert abs(share - 0.8) <= TOLERANCE
