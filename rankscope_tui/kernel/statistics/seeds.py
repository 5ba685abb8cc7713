"""Retraining seeds: the interval describes one trained model, not the method (seed 001,
"One trained model is not the method").

Runs of one system retrained under different seeds are lanes named ``SYSTEM@SEED``
(``--lane dense@0=run0 --lane dense@1=run1 ...``, SEED a non-negative integer), read as
such when ``compare --seed-runs`` is given. Per comparison and metric:

* **mean** — the mean difference over seeds;
* **SD (queries)** — the paired bootstrap standard error of the difference
  (sd of the B replicates, ddof = 1, as ``scipy.stats.bootstrap(...).standard_error``),
  averaged over the seed pairs;
* **SD (retraining)** — the sd (ddof = 1) of the per-seed differences;
* **ratio** = SD (retraining) / SD (queries), and **widens by**
  = √(SDq² + SDr²)/SDq − 1 (the two sources roughly independent, so in quadrature);
* **reversals** — how many seed differences have the other sign than the mean
  ("did any seed reverse the sign").

Which differences: when only one side has several runs, each run against the other
side's single run. When both do and the seeds are declared shared (``--shared-seeds``:
the seed controls something both share, e.g. batch order) runs are paired by seed
(the seed sets must match). Otherwise the seed index is an arbitrary matching, so SD
(retraining) is each system's own spread over its runs (sd of its run means, ddof = 1)
combined in quadrature, the mean is the difference of the two systems' mean over runs,
SD (queries) averages the runs matched in seed order (a per-pair query-sampling spread
that the matching does not bias), and reversals count over every (baseline run,
candidate run) combination. Five runs give an sd with roughly 35 % relative error
(1/√(2(r − 1))); fewer than five is warned about.

References
----------
- Bouthillier, X., Delaunay, P., Bronzi, M. et al. (2021). Accounting for variance in
  machine learning benchmarks. *Proceedings of MLSys* 3. (variation across training
  seeds beside variation across test queries)
- Efron, B. (1979). Bootstrap methods: another look at the jackknife. *Annals of
  Statistics* 7(1), 1-26. (the percentile bootstrap)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..settings import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

#: ``SYSTEM@SEED``: the separator and the form of a seed run's lane name.
SEED_SEP = "@"
_SEED_LANE = re.compile(r"^(?P<system>.+)@(?P<seed>[0-9]+)$")
#: Fewer runs than this give a retraining sd too rough to read (seed 001: ~35 % at five).
MIN_SEEDS = 5


def parse_seed_lane(name: str) -> tuple[str, int] | None:
    """(system, seed) for a lane named ``SYSTEM@SEED``, else None."""
    m = _SEED_LANE.match(name)
    return None if m is None else (m["system"], int(m["seed"]))


def seed_groups(lanes: Sequence[str]) -> dict[str, dict[int, str]]:
    """{system: {seed: lane}} for the lanes named ``SYSTEM@SEED``, seeds ascending.
    A system name that is also a plain lane is an error (which would a name mean?)."""
    groups: dict[str, dict[int, str]] = {}
    for lane in lanes:
        parsed = parse_seed_lane(lane)
        if parsed is not None:
            system, seed = parsed
            if seed in groups.setdefault(system, {}):
                raise InputError(f"seed {seed} of {system!r} given twice ({groups[system][seed]!r} and {lane!r})", "--lane")
            groups[system][seed] = lane
    for system in groups:
        if system in lanes:
            raise InputError(f"{system!r} is both a lane and the system of seed runs {system}@SEED", "--lane")
    return {s: dict(sorted(g.items())) for s, g in groups.items()}


def relative_sd_error(runs: int) -> float:
    """The approximate relative standard error of an sd from ``runs`` values, 1/√(2(r − 1))."""
    return 1.0 / math.sqrt(2.0 * (runs - 1))


@dataclass(frozen=True)
class RetrainingSpread:
    """The retraining column of one comparison (module doc)."""

    baseline_seeds: tuple[int, ...]
    candidate_seeds: tuple[int, ...]
    rule: str  # "one side retrained" | "paired by shared seed" | "own spreads in quadrature"
    differences: tuple[float, ...]  # the per-seed (or per-combination) differences the reversals count
    mean_difference: float
    sd_queries: float
    sd_retraining: float
    ratio: float | None
    widens_by: float | None
    reversals: int
    reversals_out_of: int
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline_seeds": list(self.baseline_seeds),
            "candidate_seeds": list(self.candidate_seeds),
            "rule": self.rule,
            "differences": list(self.differences),
            "mean_difference": self.mean_difference,
            "sd_queries": self.sd_queries,
            "sd_retraining": self.sd_retraining,
            "ratio": self.ratio,
            "widens_by": self.widens_by,
            "reversals": self.reversals,
            "reversals_out_of": self.reversals_out_of,
            "warnings": list(self.warnings),
        }


def _pair(b: np.ndarray | Sequence[float], c: np.ndarray | Sequence[float], qids: Sequence[str],
          kw: dict[str, Any]) -> tuple[float, float]:
    """(difference, bootstrap standard error) of one run pair."""
    from .paired import paired_statistics

    s = paired_statistics(b, c, qids, **kw)
    if s.replicates is None:
        raise InputError("the retraining spread needs resamples > 0 (its SD over queries is a bootstrap standard error)",
                         "--resamples")
    return s.difference, float(np.std(s.replicates, ddof=1))


def _other_sign(values: Sequence[float], mean: float) -> int:
    if mean == 0:
        return 0
    return int(sum(1 for v in values if v * mean < 0))


def retraining_spread(
    baseline_runs: Mapping[int, np.ndarray],
    candidate_runs: Mapping[int, np.ndarray],
    qids: Sequence[str],
    *,
    shared: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    units: Sequence[str] | None = None,
) -> RetrainingSpread:
    """The retraining column for one (baseline, candidate, metric): ``*_runs`` map a seed to
    the run's per-query values (a deterministic side has one run, its key immaterial),
    aligned with ``qids`` (sorted as bytes). Each pair's statistics are ``paired_statistics``
    with these settings (``units`` as there)."""
    b_seeds, c_seeds = tuple(sorted(baseline_runs)), tuple(sorted(candidate_runs))
    if len(b_seeds) < 2 and len(c_seeds) < 2:
        raise InputError("a retraining spread needs at least two runs of one of the systems")
    kw: dict[str, Any] = dict(resamples=resamples, seed=seed, confidence=confidence, units=units)
    if len(b_seeds) == 1 or len(c_seeds) == 1:
        rule = "one side retrained"
        pairs = [(b_seeds[0], s) for s in c_seeds] if len(b_seeds) == 1 else [(s, c_seeds[0]) for s in b_seeds]
    elif shared:
        if b_seeds != c_seeds:
            raise InputError(f"--shared-seeds pairs runs by seed, but the seeds differ ({list(b_seeds)} and "
                             f"{list(c_seeds)})", "--shared-seeds")
        rule = "paired by shared seed"
        pairs = [(s, s) for s in b_seeds]
    else:
        rule = "own spreads in quadrature"
        pairs = list(zip(b_seeds, c_seeds))  # matched in seed order: for the query-sampling SE only
    per_pair = [_pair(baseline_runs[bs], candidate_runs[cs], qids, kw) for bs, cs in pairs]
    sd_q = float(np.mean([se for _, se in per_pair]))
    if rule == "own spreads in quadrature":
        b_means = np.array([_mean(baseline_runs[s], units) for s in b_seeds])
        c_means = np.array([_mean(candidate_runs[s], units) for s in c_seeds])
        mean = float(np.mean(c_means) - np.mean(b_means))
        sd_r = float(math.sqrt(np.var(b_means, ddof=1) + np.var(c_means, ddof=1)))
        diffs = tuple(float(c - b) for b in b_means for c in c_means)
        runs = min(len(b_seeds), len(c_seeds))
    else:
        diffs = tuple(float(d) for d, _ in per_pair)
        mean = float(np.mean(diffs))
        sd_r = float(np.std(diffs, ddof=1))
        runs = len(diffs)
    ratio = sd_r / sd_q if sd_q > 0 else None
    widens = math.hypot(sd_q, sd_r) / sd_q - 1.0 if sd_q > 0 else None
    warnings = []
    if runs < MIN_SEEDS:
        warnings.append(f"only {runs} retraining runs: their sd has roughly {relative_sd_error(runs):.0%} relative error "
                        f"(run at least {MIN_SEEDS} seeds before reading the ratio)")
    return RetrainingSpread(b_seeds, c_seeds, rule, diffs, mean, sd_q, sd_r, ratio, widens,
                            _other_sign(diffs, mean), len(diffs), tuple(warnings))


def _mean(values: np.ndarray, units: Sequence[str] | None) -> float:
    """A run's mean as the comparison takes it: over queries, or over unit means."""
    if units is None:
        return float(np.mean(values))
    from .units import unit_means

    return float(np.mean(unit_means(units, values).columns[0]))
