"""Every setting that changes a number, as frozen dataclasses, each default written once.

``LoadSettings`` shapes the loaded workspace (levels, depth, metrics, resampling);
``GateSettings`` the gate analysis; ``CompareSettings`` a paired comparison;
``DiffSettings`` a diff of two reports; ``CalibrationSettings`` what ``calibrate`` fits. The command line, the dashboard and
the library build these and nothing else crosses a module boundary as options:
a default is read from here, never restated.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: The metric set of ``evaluate`` when ``--metrics`` is not given.
DEFAULT_METRICS = "hit@1,hit@5,hit@10,recall@10,recall@100,rr,ndcg@10,p@10,judged@10"
#: The metric a comparison, a calibration objective and the dashboard's pickers start on.
DEFAULT_METRIC = "ndcg@10"
#: Two-sided 95 %: intervals at this level, alpha = 1 - confidence for verdicts.
DEFAULT_CONFIDENCE = 0.95
#: Bootstrap and sign-flip resamples.
DEFAULT_RESAMPLES = 9999
DEFAULT_RRF_K = 60
#: The gate's target false-positive identification rate and conformal miss rate.
DEFAULT_FPIR = 0.05
DEFAULT_MISS_RATE = 0.05


def canonical_keys(names) -> tuple[str, ...]:
    """Each typed metric name as its canonical key (``measures.canonical_key``), order kept."""
    from .measures import canonical_key

    return tuple(dict.fromkeys(canonical_key(n) for n in names))


def _default_metrics() -> tuple:
    from .measures import parse_metrics

    return tuple(parse_metrics(DEFAULT_METRICS))


def _default_inputs():
    from .inputs.formats import InputOptions

    return InputOptions()


@dataclass(frozen=True)
class LoadSettings:
    """Settings of one workspace; recorded in report.json's ``settings`` block."""

    metrics: tuple = field(default_factory=_default_metrics)  # tuple[measures.MetricKey, ...] (parse_metrics)
    depth: int | None = None
    relevant: int = 1
    group_sep: str | None = None
    window: int = 10
    seed: int = 0
    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE
    rrf_k: int = DEFAULT_RRF_K
    rrf_k_source: str = "default"  # "default" | "chosen on the command line" | "calibration"
    blind: str | None = None
    cap: int | None = None
    document_first: bool = False
    inputs: object = field(default_factory=_default_inputs)  # formats.InputOptions: how input files are read

    def as_dict(self) -> dict:
        return {
            "depth": self.depth,
            "relevant": self.relevant,
            "window": self.window,
            "metrics": [m.key for m in self.metrics],
            "seed": self.seed,
            "resamples": self.resamples,
            "confidence": self.confidence,
            "group_sep": self.group_sep,
            "rrf_k": self.rrf_k,
            "rrf_k_source": self.rrf_k_source,
            "blind": self.blind,
            "cap": self.cap,
            "document_first": self.document_first,
        }


@dataclass(frozen=True)
class GateSettings:
    """The gate's conditions and how its operating point is picked (SPEC §6)."""

    gate_on: str | None = None  # the gate lane; None = the only input lane
    fpir: float = DEFAULT_FPIR  # target false-positive identification rate
    conservative: bool = False  # pick on the Wilson upper bound of FPIR
    miss_rate: float = DEFAULT_MISS_RATE  # conformal alpha
    margin: float | None = None  # top minus runner-up must be >= this
    mutual: int | None = None  # mutual-nearest-neighbour r

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CompareSettings:
    """One ``compare`` call's test settings (SPEC §7). Resamples, seed and confidence
    default to the workspace's ``LoadSettings`` when left None."""

    baseline: str | None = None  # None = the first lane; "best" = exploratory
    candidates: tuple[str, ...] = ()  # () = every other non-variant lane
    metrics: tuple[str, ...] = (DEFAULT_METRIC,)
    level: str = "doc"
    min_delta: float = 0.0
    correction: str = "holm"  # holm | bonferroni | none
    alternative: str = "two-sided"  # two-sided | greater | less
    exploratory: bool = False
    primary: str | None = None
    resamples: int | None = None
    seed: int | None = None
    confidence: float | None = None
    test: str = "randomization"  # the deciding test: randomization | t (the other is a check)
    units: str | None = None  # a qid<TAB>unit file: every paired statistic runs on unit means
    seed_runs: bool = False  # lanes named SYSTEM@SEED are retraining runs of SYSTEM
    shared_seeds: bool = False  # both systems' seeds control something shared: pair runs by seed

    def __post_init__(self):
        # names as other tools write them (AP, RR@10, ndcg_cut.10) become the canonical keys rows carry
        object.__setattr__(self, "metrics", canonical_keys(self.metrics))
        if self.primary is not None:
            object.__setattr__(self, "primary", canonical_keys([self.primary])[0])

    def as_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = list(self.candidates)
        d["metrics"] = list(self.metrics)
        return d


@dataclass(frozen=True)
class DiffSettings:
    """One ``diff`` call (SPEC §8): which metrics, the randomization test and the smallest
    mean Δ worth calling a regression."""

    metrics: tuple[str, ...] = ()  # () = every metric both reports hold
    min_delta: float = 0.0
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE

    def __post_init__(self):
        # a name as another tool writes it (map_cut.10, nDCG@10) selects the report's canonical key
        object.__setattr__(self, "metrics", canonical_keys(self.metrics))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["metrics"] = list(self.metrics)
        return d


@dataclass(frozen=True)
class CalibrationSettings:
    """What ``calibrate`` fits besides the gate: the convex grid and its objective."""

    step: float = 0.1
    objective: str = DEFAULT_METRIC

    def __post_init__(self):
        object.__setattr__(self, "objective", canonical_keys([self.objective])[0])

    def as_dict(self) -> dict:
        return asdict(self)
