"""Every setting that changes a number, as frozen dataclasses, each default written once.

``LoadSettings`` shapes the loaded workspace (levels, depth, metrics, resampling);
``GateSettings`` the gate analysis; ``CompareSettings`` a paired comparison;
``DiffSettings`` a diff of two reports; ``CalibrationSettings`` what ``calibrate`` fits;
``DashboardConfig`` what a config file sets for the dashboard (read and checked here, each
refusal naming the file, the line and the key). The command line, the dashboard and
the library build these and nothing else crosses a module boundary as options:
a default is read from here, never restated.

Every range is checked here, when a settings object is built (``__post_init__``, so
``dataclasses.replace`` checks too): a value out of range raises
:class:`~rankscope_tui.kernel.errors.SettingError` naming the field, and each face words
it with its own name for the setting (the command line's ``--min-delta``, the Python
API's ``min_delta``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .errors import InputError, SettingError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from .inputs.formats import InputOptions
    from .measures import MetricKey

#: The metric set of ``evaluate`` when ``--metrics`` is not given.
DEFAULT_METRICS = "hit@1,hit@5,hit@10,recall@10,recall@100,rr,ndcg@10,p@10,judged@10"
#: The metric a comparison, a calibration objective and the dashboard's pickers start on.
DEFAULT_METRIC = "ndcg@10"
#: Two-sided 95 %: intervals at this level, alpha = 1 - confidence for verdicts.
DEFAULT_CONFIDENCE = 0.95
#: Bootstrap and sign-flip resamples.
DEFAULT_RESAMPLES = 9999
DEFAULT_SEED = 0
DEFAULT_RRF_K = 60
#: The gate's target false-positive identification rate and conformal miss rate.
DEFAULT_FPIR = 0.05
DEFAULT_MISS_RATE = 0.05
#: The convex weight grid's step (1/step points per lane axis).
DEFAULT_STEP = 0.1

#: The largest confidence: beyond it the two-sided tail (1 - c)/2 is lost in rounding.
MAX_CONFIDENCE = 1 - 1e-12
#: The largest RRF k (RRF with k = 10^9 already weighs every rank the same to 1e-9).
MAX_RRF_K = 10**9
#: The most resamples one procedure draws. The draws stream in blocks (memory flat in
#: B), but the replicates are kept for the percentile and BCa intervals: 8 bytes per
#: resample per column, so 1,000,000 resamples of 17 metrics hold 136 MB (10^9 would
#: need 136 GB). A p-value's resolution at the maximum is 1e-6.
MAX_RESAMPLES = 1_000_000
#: The fewest resamples of a comparison's randomization test (0 skips it; SPEC §3): with
#: fewer, the p floor 1/(B+1) swamps any multiplicity correction.
MIN_RESAMPLES = 999
#: Seeds are non-negative integers below 2^64 (numpy's ``default_rng`` refuses negative ones).
MAX_SEED = 2**64 - 1


def too_many_resamples(B: int) -> str:
    """The words for a resample count above :data:`MAX_RESAMPLES`."""
    return (f"resamples = {B} is more than the {MAX_RESAMPLES:,} rankscope draws (the replicates are kept: "
            f"8 bytes per resample and metric; p resolves to 1e-6 at the maximum)")


def canonical_keys(names: Iterable[Any], option: str = "--metric") -> tuple[str, ...]:
    """Each typed metric name (or measure object) as its canonical key, order kept, read by the
    one resolver (``measures.resolve_measures``); no names give ``()`` (the caller decides
    what none means); an unknown name raises ``InputError`` naming ``option``."""
    names = list(names)
    if not names:
        return ()
    from .measures import resolve_measures  # measures load numpy: not on `import rankscope_tui.cli`

    return tuple(dict.fromkeys(a.key for a in resolve_measures(names, option)))


def _default_metrics() -> tuple[MetricKey, ...]:
    from .measures import parse_metrics  # (as canonical_keys: kept off the start-up path)

    return tuple(parse_metrics(DEFAULT_METRICS))


def _default_inputs() -> InputOptions:
    from .inputs.formats import InputOptions

    return InputOptions()


# --------------------------------------------------------------------------- the checks


def _is_int(x: object) -> bool:
    """An integer (Python or numpy), never a bool."""
    import numbers

    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _real(x: object) -> float | None:
    """``x`` as a float when it is a real number (not a bool), else None."""
    import numbers

    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    return float(x)


def _at_least_one(name: str, value: object) -> None:
    """``{name} must be at least 1`` (depth, window, cap): the command line's words."""
    if not _is_int(value) or value < 1:  # type: ignore[operator]
        raise SettingError(name, "{" + name + "} must be at least 1")


def _seed(name: str, value: object, prefixed: bool) -> None:
    """0 <= seed <= 2^64 - 1; ``prefixed``: the workspace's words, else the statistics' (compare, diff)."""
    if _is_int(value) and 0 <= value <= MAX_SEED:  # type: ignore[operator]
        return
    if prefixed:
        raise SettingError(name, f"must be an integer from 0 to 2^64 - 1, got {value}"[:200])
    raise SettingError(name, f"seed must be an integer from 0 to 2^64 - 1, got {value!r}"[:200], prefixed=False)


def _test_confidence(name: str, value: object) -> None:
    """0 < c < 1 with a two-sided tail 1 - (1 - c)/2 < 1 (compare, diff: the statistics' words)."""
    c = _real(value)
    if c is None or not (0.0 < c < 1.0) or 1.0 - (1.0 - c) / 2 >= 1.0:  # nan fails too
        raise SettingError(name, "confidence must be strictly between 0 and 1 (with a tail 1 - (1 - c)/2 < 1), "
                                 f"got {value!r}", prefixed=False)


def _test_resamples(name: str, value: object) -> None:
    """B of a randomization test: 0 (skip it) or :data:`MIN_RESAMPLES` to :data:`MAX_RESAMPLES`."""
    if not _is_int(value) or value < 0:  # type: ignore[operator]
        raise SettingError(name, f"resamples must be a non-negative integer, got {value!r}"[:200], prefixed=False)
    B = int(value)  # type: ignore[call-overload]
    if B > MAX_RESAMPLES:
        raise SettingError(name, too_many_resamples(B), prefixed=False)
    if 0 < B < MIN_RESAMPLES:
        raise SettingError(name, f"resamples = {B} is too few for a comparison: use at least {MIN_RESAMPLES} "
                                 f"(the p floor 1/(B+1) = {1 / (B + 1):.4g} would swamp any correction)", prefixed=False)


def _rate(name: str, value: object) -> None:
    """A rate strictly between 0 and 1 (fpir, miss_rate)."""
    x = _real(value)
    if x is None or not 0 < x < 1:  # nan fails too
        shown = f"{x:g}" if x is not None else repr(value)
        raise SettingError(name, "{" + name + "} must be between 0 and 1 (exclusive), got " + shown, prefixed=False)


# --------------------------------------------------------------------------- the settings


@dataclass(frozen=True)
class LoadSettings:
    """Settings of one workspace; recorded in report.json's ``settings`` block."""

    metrics: tuple[MetricKey, ...] = field(default_factory=_default_metrics)  # parse_metrics' keys
    depth: int | None = None
    relevant: int = 1
    group_sep: str | None = None
    window: int = 10
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE
    rrf_k: float = DEFAULT_RRF_K  # an int on the command line; thresholds.json may hold any number in range
    rrf_k_source: str = "default"  # "default" | "chosen on the command line" | "calibration"
    blind: str | None = None
    cap: int | None = None
    document_first: bool = False
    # trec_eval -J: every lane's unjudged hits removed (after ordering and --depth) before any measure cuts
    condensed: bool = False
    inputs: InputOptions = field(default_factory=_default_inputs)  # how input files are read
    fuse: tuple[str, ...] = ()  # more fused lanes, METHOD[:NORM] as fusion.combine.parse_fuse spells them
    ignore_self: bool = False  # drop hits whose doc id equals the query id (BEIR's ignore_identical_ids)

    def __post_init__(self) -> None:
        # grade 0 is judged non-relevant and a negative grade means "in the pool, not
        # judged": a level below 1 would count those docs as relevant
        if not _is_int(self.relevant) or self.relevant < 1:
            raise SettingError("relevant", f"must be at least 1, not {self.relevant} (grade 0 is judged non-relevant; "
                                           "a negative grade means in the pool but not judged)")
        if self.depth is not None:
            _at_least_one("depth", self.depth)
        c = _real(self.confidence)
        if c is None or not 0 < c <= MAX_CONFIDENCE:  # (nan fails too)
            raise SettingError("confidence", f"must be between 0 and 1 (at most 1 - 1e-12), got {self.confidence!r}")
        if not _is_int(self.resamples) or self.resamples < 0:
            raise SettingError("resamples", "{resamples} must be >= 0")
        if self.resamples > MAX_RESAMPLES:
            raise SettingError("resamples", too_many_resamples(int(self.resamples)))
        _seed("seed", self.seed, prefixed=True)
        _at_least_one("window", self.window)
        if (self.cap is not None or self.document_first) and not self.group_sep:
            raise SettingError("cap", "{cap} and {document_first} need {group_sep}", mentions=("document_first", "group_sep"))
        if self.group_sep == "":
            raise SettingError("group_sep", "{group_sep} must not be empty (a doc id up to the first SEP is its group)")
        if self.cap is not None:
            _at_least_one("cap", self.cap)
        k = _real(self.rrf_k)
        if k is None or not 1 <= k <= MAX_RRF_K:  # (nan fails too)
            raise SettingError("rrf_k", f"must be an integer from 1 to {MAX_RRF_K:,}, got {self.rrf_k}"[:200])

    def as_dict(self) -> dict[str, Any]:
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
            "fuse": list(self.fuse),
            "ignore_self": self.ignore_self,
            "condensed": self.condensed,
            **self._user_measures(),
        }

    def _user_measures(self) -> dict[str, Any]:
        """``user_measures``: where each user-defined measure in the set came from (the file's
        path and sha256, or "python" for ``rankscope_tui.define``), so a reader knows the
        definition that made the numbers; absent when the set has none."""
        out: dict[str, Any] = {}
        for m in self.metrics:
            # (per-query tables hold their read measures here, which name no registry entry)
            e: Any = getattr(m, "measure", None)
            if getattr(e, "defined_in", None) is not None and e.kind not in out:
                out[e.kind] = {"file": e.defined_in, "sha256": e.defined_sha256}
        return {"user_measures": out} if out else {}


@dataclass(frozen=True)
class GateSettings:
    """The gate's conditions and how its operating point is picked (SPEC §6)."""

    gate_on: str | None = None  # the gate lane; None = the only input lane
    fpir: float = DEFAULT_FPIR  # target false-positive identification rate
    conservative: bool = False  # pick on the Wilson upper bound of FPIR
    miss_rate: float = DEFAULT_MISS_RATE  # conformal alpha
    margin: float | None = None  # top minus runner-up must be >= this
    mutual: int | None = None  # mutual-nearest-neighbour r

    def __post_init__(self) -> None:
        _rate("fpir", self.fpir)
        _rate("miss_rate", self.miss_rate)
        if self.margin is not None:
            m = _real(self.margin)
            if m is None or not math.isfinite(m):
                raise SettingError("margin", "{margin} must be a finite number", prefixed=False)
        if self.mutual is not None and (not _is_int(self.mutual) or self.mutual < 1):
            raise SettingError("mutual", "{mutual} must be at least 1, got " + str(self.mutual), prefixed=False)

    def as_dict(self) -> dict[str, Any]:
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
    # a planned family (compare --plan / --pair): the (candidate, baseline, metric) rows tested
    # together whatever their baselines; every other row asked for is exploratory, corrected apart
    planned: tuple[tuple[str, str, str], ...] = ()
    plan_source: str | None = None  # the plan file's path, or "--pair" (None: no plan)
    pairs: tuple[tuple[str, str], ...] = ()  # (candidate, baseline) asked for beyond the plan: exploratory
    # compare --reuse-correct: the raw p of earlier comparisons logged on these qrels, adjusted
    # together with this call's tested family (each one more hypothesis on the same test queries)
    earlier_p: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        d = _real(self.min_delta)
        if d is None or not (math.isfinite(d) and d >= 0):  # nan fails too
            raise SettingError("min_delta", "must be a finite number >= 0 (the smallest mean difference worth calling "
                                            f"better), got {self.min_delta!r}")
        object.__setattr__(self, "min_delta", d)
        if self.resamples is not None:
            _test_resamples("resamples", self.resamples)
        if self.seed is not None:
            _seed("seed", self.seed, prefixed=False)
        if self.confidence is not None:
            _test_confidence("confidence", self.confidence)
        # names as other tools write them (AP, RR@10, ndcg_cut.10) become the canonical keys rows carry
        if not self.metrics:
            raise InputError("no metric given", "--metric")
        object.__setattr__(self, "metrics", canonical_keys(self.metrics))
        if self.primary is not None:
            object.__setattr__(self, "primary", canonical_keys([self.primary], "--primary")[0])
        if self.planned:  # the plan's metric names as the rows carry them
            key = {m: canonical_keys([m], "--plan")[0] for m in dict.fromkeys(m for _, _, m in self.planned)}
            object.__setattr__(self, "planned", tuple(dict.fromkeys(
                (str(c), str(b), key[m]) for c, b, m in self.planned)))
        if self.pairs and not self.planned:
            raise InputError("pairs beyond a plan need the plan (--plan)", "--pair")
        for p in self.earlier_p:
            r = _real(p)
            if r is None or not (0.0 <= r <= 1.0):
                raise SettingError("earlier_p", f"an earlier comparison's p must be in [0, 1], got {p!r}")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["candidates"] = list(self.candidates)
        d["metrics"] = list(self.metrics)
        d["planned"] = [list(r) for r in self.planned]
        d["pairs"] = [list(r) for r in self.pairs]
        d["earlier_p"] = list(self.earlier_p)
        return d


@dataclass(frozen=True)
class DiffSettings:
    """One ``diff`` call (SPEC §8): which metrics, the randomization test and the smallest
    mean Δ worth calling a regression."""

    metrics: tuple[str, ...] = ()  # () = every metric both reports hold
    min_delta: float = 0.0
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = DEFAULT_CONFIDENCE

    def __post_init__(self) -> None:
        _test_resamples("resamples", self.resamples)
        d = _real(self.min_delta)
        if d is None or not (math.isfinite(d) and d >= 0):  # nan fails too
            raise SettingError("min_delta", "{min_delta} must be a finite number >= 0, not " + str(self.min_delta))
        _seed("seed", self.seed, prefixed=False)
        _test_confidence("confidence", self.confidence)
        # a name as another tool writes it (map_cut.10, nDCG@10) selects the report's canonical key
        object.__setattr__(self, "metrics", canonical_keys(self.metrics))

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["metrics"] = list(self.metrics)
        return d


@dataclass(frozen=True)
class AgreeSettings:
    """One ``agree`` call (``kernel.instruments.agree``) beside the workspace's
    ``LoadSettings`` (metrics, relevant, seed, resamples, confidence).

    ``weights``: the weighted κ the summary and the strata table show ("linear", the
    default: a disagreement costs its grade distance; or "quadratic"); every weighting is
    in the κ table either way. ``ppi``: A labels a random subset of B's pairs (the
    prediction-powered means). ``grades``: a declared common scale (lo, hi), instead of
    the rule that both qrels use the same lowest and highest grade. ``metrics``: the
    measures the system tables show (canonical keys; the workspace computes them)."""

    weights: str = "linear"
    ppi: bool = False
    grades: tuple[int, int] | None = None
    metrics: tuple[str, ...] = (DEFAULT_METRIC,)

    def __post_init__(self) -> None:
        if not self.metrics:
            raise InputError("no metric given", "--metrics")
        object.__setattr__(self, "metrics", canonical_keys(self.metrics, "--metrics"))
        if self.weights not in ("linear", "quadratic"):
            raise SettingError("weights", f"must be linear or quadratic, got {self.weights!r}")
        if self.grades is not None:
            g = tuple(self.grades)
            if len(g) != 2 or not (_is_int(g[0]) and _is_int(g[1])) or g[0] >= g[1]:
                raise SettingError("grades", f"must be two integers LO:HI with LO < HI, got {self.grades!r}"[:200])
            object.__setattr__(self, "grades", (int(g[0]), int(g[1])))

    def as_dict(self) -> dict[str, Any]:
        return {"weights": self.weights, "ppi": self.ppi,
                "grades": None if self.grades is None else list(self.grades), "metrics": list(self.metrics)}


@dataclass(frozen=True)
class CalibrationSettings:
    """What ``calibrate`` fits besides the gate: the convex grid and its objective.

    The grid holds the weight vectors with coordinates in multiples of ``step`` summing
    to 1, so 1/step must be a whole number N (within 1e-9) and 0 < step <= 1.

    ``folds`` K (None: no cross-validation) asks for K-fold cross-validation of every
    fitted value (``instruments.calibrate.cross_validate``): an integer K >= 2; that K is
    at most the number of calibration queries is checked where they are known."""

    step: float = DEFAULT_STEP
    objective: str = DEFAULT_METRIC
    folds: int | None = None

    def __post_init__(self) -> None:
        if self.folds is not None:
            import numbers

            if isinstance(self.folds, bool) or not isinstance(self.folds, numbers.Integral) or self.folds < 2:
                raise SettingError("folds", "must be an integer >= 2 (K-fold cross-validation needs a fold "
                                   f"to fit on and one to score on), got {self.folds!r}")
            object.__setattr__(self, "folds", int(self.folds))
        s = _real(self.step)
        if s is None or not (math.isfinite(s) and 0 < s <= 1):
            raise SettingError("step", f"step must be in (0, 1], got {self.step!r}")
        inv = 1.0 / s
        if abs(inv - round(inv)) > 1e-9:
            raise SettingError("step", f"1/step must be an integer (within 1e-9); 1/{self.step!r} = {inv!r}")
        object.__setattr__(self, "objective", canonical_keys([self.objective], "--objective")[0])

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PlanSettings:
    """One ``plan`` call (``kernel.instruments.plan``): the pilot pair, the target
    differences and powers, and the family the planned study will be tested in.

    α per test = (1 − confidence)/family_size (Bonferroni for planning: Holm's first step
    is this strict, its later steps less). ``deltas`` () = the pilot's observed |Δ̄|."""

    baseline: str | None = None  # None = the first lane
    candidate: str | None = None  # None = the second lane
    metric: str = DEFAULT_METRIC
    level: str = "doc"
    deltas: tuple[float, ...] = ()
    powers: tuple[float, ...] = (0.8,)
    family_size: int = 1
    confidence: float = DEFAULT_CONFIDENCE
    alternative: str = "two-sided"
    units: str | None = None  # a qid<TAB>unit file: plan units, not queries

    def __post_init__(self) -> None:
        for d in self.deltas:
            v = _real(d)
            if v is None or not (math.isfinite(v) and v > 0):
                raise SettingError("deltas", f"a target difference must be a finite number > 0, got {d!r}")
        object.__setattr__(self, "deltas", tuple(float(d) for d in self.deltas))
        if not self.powers:
            raise SettingError("powers", "give at least one power")
        for p in self.powers:
            v = _real(p)
            if v is None or not (0.0 < v < 1.0):
                raise SettingError("powers", f"a power must be strictly between 0 and 1, got {p!r}")
        object.__setattr__(self, "powers", tuple(float(p) for p in self.powers))
        if not _is_int(self.family_size) or self.family_size < 1:
            raise SettingError("family_size", f"the family size must be an integer >= 1, got {self.family_size!r}")
        _test_confidence("confidence", self.confidence)
        if self.alternative not in ("two-sided", "greater", "less"):
            raise SettingError("alternative", f"must be two-sided, greater or less, got {self.alternative!r}")
        object.__setattr__(self, "metric", canonical_keys([self.metric])[0])

    @property
    def alpha(self) -> float:
        """α per planned test: (1 − confidence)/family_size."""
        return (1.0 - self.confidence) / self.family_size


@dataclass(frozen=True)
class PoolSettings:
    """One ``pool`` call (``kernel.instruments.pool``): how many (query, doc) pairs to
    suggest for judging, and the lanes whose top k they are drawn from (() = every input
    lane)."""

    budget: int = 100
    lanes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _at_least_one("budget", self.budget)

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "lanes": list(self.lanes)}


# --------------------------------------------------------------------------- the config file

#: The keys a config file may set: ``~/.config/rankscope/config.toml`` (``$XDG_CONFIG_HOME``
#: honoured) or ``[tool.rankscope]`` in a project's ``pyproject.toml``.
CONFIG_KEYS: tuple[str, ...] = ("metrics", "relevant", "strata", "theme", "keymap")
#: The table of a project's ``pyproject.toml`` that holds its settings.
PYPROJECT_TABLE = "tool.rankscope"


@dataclass(frozen=True)
class DashboardConfig:
    """What a config file sets for ``rankscope tui``: the metric set, the relevant level, the
    strata files, the theme and a keymap (binding id -> Textual key list, ``"x"`` or
    ``"ctrl+n,n"``, as ``App.set_keymap`` takes it). None / () = not set by any file.

    ``sources`` says which file set each key (``("keymap.app.quit", path)`` for a keymap
    entry); ``files`` lists the files read, the user's first. Metric names are the
    canonical keys of the one resolver; strata paths are absolute (a relative path in a
    file is read from the file's directory, as a project's pyproject may sit above the
    working directory). The checks are those of the command line: types here, the metric
    names by ``measures.resolve_measures``, the level as ``LoadSettings`` checks it."""

    metrics: tuple[str, ...] | None = None
    relevant: int | None = None
    strata: tuple[str, ...] = ()
    theme: str | None = None
    keymap: tuple[tuple[str, str], ...] = ()
    sources: tuple[tuple[str, str], ...] = ()
    files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.metrics is not None:
            if not self.metrics or not all(isinstance(m, str) for m in self.metrics):
                raise SettingError("metrics", "must be a list of metric names (or one comma list), e.g. "
                                              "[\"ndcg@10\", \"rr\"]", prefixed=False)
            object.__setattr__(self, "metrics", canonical_keys(self.metrics, "metrics"))
        if self.relevant is not None and (not _is_int(self.relevant) or self.relevant < 1):
            raise SettingError("relevant", f"must be an integer >= 1, got {_toml_repr(self.relevant)} (grade 0 is "
                                           "judged non-relevant)", prefixed=False)
        if not all(isinstance(s, str) and s for s in self.strata):
            raise SettingError("strata", "must be a path or a list of paths (strings)", prefixed=False)
        if self.theme is not None and (not isinstance(self.theme, str) or not self.theme):
            raise SettingError("theme", f"must be a theme name (a string), got {_toml_repr(self.theme)}", prefixed=False)
        for binding, keys in self.keymap:
            if not isinstance(keys, str) or not _keys_ok(keys):
                raise SettingError("keymap", f"keymap.{binding}: must be a key or a comma list of keys (\"x\", "
                                             f"\"ctrl+n,n\"), got {_toml_repr(keys)}", prefixed=False)

    def source(self, key: str) -> str | None:
        """The file that set ``key`` (None: no file did)."""
        return dict(self.sources).get(key)


def _keys_ok(keys: str) -> bool:
    """A Textual key list: comma-separated names with no blank one and no space inside."""
    return all(k.strip() and " " not in k.strip() for k in keys.split(","))


def _toml_repr(value: object) -> str:
    """A value as TOML would write it (what the person typed), cut to 60 characters."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = '"' + value + '"'
    elif isinstance(value, dict):
        text = "a table"
    elif isinstance(value, list):
        text = "a list"
    else:
        text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _line_of(text: str, key: str, after: int = 0) -> int | None:
    """The first line (1-based) after line ``after`` that assigns ``key`` (bare or quoted;
    for a dotted key ``a.b.c``, else ``b.c`` or ``c`` as a nested table spells it, else
    ``a``: the line of an inline table), so an error points at it; None when it is
    not found."""
    import re

    lines = text.splitlines()
    parts = key.split(".")
    for name in dict.fromkeys([".".join(parts[i:]) for i in range(len(parts))] + [parts[0]]):
        q = re.escape(name)
        pattern = re.compile(r"^\s*(?:" + q + r"|\"" + q + r"\"|'" + q + r"')\s*=")
        for i, line in enumerate(lines[after:], after + 1):
            if pattern.match(line):
                return i
    return None


def _table_line(text: str, table: str) -> int:
    """The line of ``[table]`` (0 when the table has no header of its own)."""
    import re

    pattern = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in table.split(".")) + r"\s*\]")
    for i, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return i
    return 0


def read_config(path: str, *, pyproject: bool = False) -> DashboardConfig | None:
    """The settings of one config file: the whole file (the user's config.toml), or its
    ``[tool.rankscope]`` table (``pyproject``; None when the file has none). Bad TOML, an
    unknown key, a wrong type or an unknown metric raises :class:`InputError` as
    ``FILE:LINE: KEY: what is wrong`` (the line when it can be found)."""
    import tomllib
    from pathlib import Path

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the config file: {exc.strerror or exc}", path) from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text (TOML files are UTF-8)", path) from None
    except tomllib.TOMLDecodeError as exc:
        import re

        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(m.group(1)) if m else None
        if line is None and "(at end of document)" in str(exc):  # the last line: where the reader ran out
            line = max(len(raw.decode("utf-8", "replace").splitlines()), 1)
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc)) or "not valid TOML"
        raise InputError(f"not valid TOML: {msg}", path, line) from None
    prefix = ""
    start = 0
    if pyproject:
        table: Any = data.get("tool", {})
        table = table.get("rankscope") if isinstance(table, dict) else None
        if table is None:
            return None
        prefix = PYPROJECT_TABLE + "."
        start = _table_line(text, PYPROJECT_TABLE)
        if not isinstance(table, dict):
            raise InputError(f"{PYPROJECT_TABLE}: must be a table", path, _line_of(text, "rankscope") or None)
    else:
        table = data

    def fail(key: str, problem: str, line_key: str | None = None) -> InputError:
        line = _line_of(text, line_key or key, max(start - 1, 0))
        return InputError(f"{prefix}{key}: {problem}", path, line)

    for key in table:
        if key not in CONFIG_KEYS:
            raise fail(key, "unknown key (the keys are " + ", ".join(CONFIG_KEYS) + ")")
    base = Path(path).resolve().parent
    values: dict[str, Any] = {}
    if "metrics" in table:
        names: Any = table["metrics"]
        if isinstance(names, str):
            names = [p.strip() for p in names.split(",")]
        if not isinstance(names, list):
            raise fail("metrics", f"must be a list of metric names (or one comma list), got {_toml_repr(names)}")
        values["metrics"] = tuple(names)
    if "relevant" in table:
        values["relevant"] = table["relevant"]
    if "strata" in table:
        s = table["strata"]
        s = [s] if isinstance(s, str) else s
        if not isinstance(s, list) or not all(isinstance(p, str) and p for p in s):
            raise fail("strata", f"must be a path or a list of paths (strings), got {_toml_repr(table['strata'])}")
        values["strata"] = tuple(str(base / Path(p).expanduser()) for p in s)
    if "theme" in table:
        values["theme"] = table["theme"]
    if "keymap" in table:
        k = table["keymap"]
        if not isinstance(k, dict):
            raise fail("keymap", f"must be a table of binding id = keys, got {_toml_repr(k)}")
        keymap = []
        for binding, keys in _flatten(k):
            if not isinstance(keys, str) or not _keys_ok(keys):
                raise fail(f"keymap.{binding}", "must be a key or a comma list of keys (\"x\", \"ctrl+n,n\"), "
                                                f"got {_toml_repr(keys)}", f"keymap.{binding}")
            keymap.append((binding, keys))
        values["keymap"] = tuple(keymap)
    try:
        config = DashboardConfig(**values)
    except InputError as exc:
        setting = getattr(exc, "setting", None) or "metrics"
        raise fail(setting, exc.detail) from None
    sources = [(key, path) for key in values if key != "keymap"]
    sources += [(f"keymap.{b}", path) for b, _ in config.keymap]
    return replace(config, sources=tuple(sources), files=(path,))


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A keymap's entries as (binding id, value): ``app.quit = "x"`` in TOML is a nested
    table (``{"app": {"quit": "x"}}``), the quoted ``"app.quit" = "x"`` a flat key."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out += _flatten(value, name + ".")
        else:
            out.append((name, value))
    return out


def user_config_path(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_CONFIG_HOME/rankscope/config.toml``, or ``~/.config/rankscope/config.toml`` when
    the variable is unset, empty or relative (the XDG Base Directory rule)."""
    import os
    from pathlib import Path

    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(env.get("HOME") or Path.home()) / ".config"
    return str(base / "rankscope" / "config.toml")


def project_config_path(cwd: str) -> str | None:
    """The nearest ``pyproject.toml`` in ``cwd`` or a parent that has a ``[tool.rankscope]``
    table (None: none has). A pyproject that does not mention rankscope is not parsed, so an
    unrelated broken one above the project stops nothing."""
    from pathlib import Path

    here = Path(cwd).resolve()
    for d in (here, *here.parents):
        p = d / "pyproject.toml"
        try:
            raw = p.read_bytes()
        except OSError:
            continue
        if b"rankscope" in raw and read_config(str(p), pyproject=True) is not None:
            return str(p)
    return None


def load_config(cwd: str, env: Mapping[str, str] | None = None) -> DashboardConfig:
    """The effective config: the user's file, then the project's ``[tool.rankscope]`` over it
    key by key (a keymap entry by binding id). Command-line options beat both; the face
    applies them. No file: every field unset."""
    import os

    user_path = user_config_path(env)
    layers = []
    if os.path.isfile(user_path):
        user = read_config(user_path)
        if user is not None:
            layers.append(user)
    project = project_config_path(cwd)
    if project is not None:
        p = read_config(project, pyproject=True)
        if p is not None:
            layers.append(p)
    return merge_configs(*layers)


def merge_configs(*layers: DashboardConfig) -> DashboardConfig:
    """``layers`` merged, each later one beating the earlier ones key by key (the keymap by
    binding id); the sources follow the value that won."""
    out: dict[str, Any] = {}
    sources: dict[str, str] = {}
    keymap: dict[str, str] = {}
    files: list[str] = []
    for layer in layers:
        files += list(layer.files)
        src = dict(layer.sources)
        for key in ("metrics", "relevant", "theme"):
            if getattr(layer, key) is not None:
                out[key] = getattr(layer, key)
                sources[key] = src.get(key, "")
        if layer.strata:
            out["strata"] = layer.strata
            sources["strata"] = src.get("strata", "")
        for b, k in layer.keymap:
            keymap[b] = k
            sources[f"keymap.{b}"] = src.get(f"keymap.{b}", "")
    return DashboardConfig(**out, keymap=tuple(keymap.items()), sources=tuple(sources.items()), files=tuple(files))


def check_config_names(config: DashboardConfig, *, binding_ids: Iterable[str], themes: Iterable[str]) -> None:
    """Refuse a keymap entry naming no binding of the dashboard and a theme it does not have,
    naming the file and the key that set it (the faces own their binding ids and themes;
    the words are said here once)."""
    ids = set(binding_ids)
    names = sorted(themes)
    for binding, _ in config.keymap:
        if binding not in ids:
            raise _in_file(config, f"keymap.{binding}", "no dashboard binding has this id (the ids are in the README's "
                                                        "key tables)")
    if config.theme is not None and config.theme not in names:
        raise _in_file(config, "theme", unknown_theme(config.theme, names))


def unknown_theme(name: str, themes: Iterable[str]) -> str:
    """The words for a theme the dashboard does not have, listing those it has."""
    return f"unknown theme {name!r} (the themes are {', '.join(sorted(themes))})"


def _in_file(config: DashboardConfig, key: str, problem: str, line_key: str | None = None) -> InputError:
    """``FILE:LINE: KEY: problem`` for ``key`` of the file that set it (under
    ``tool.rankscope.`` in a pyproject; the line when it can be found)."""
    from pathlib import Path

    src = config.source(key)
    if not src:  # set by no file (a caller's own config): the key alone
        return InputError(f"{key}: {problem}")
    pyproject = src.endswith("pyproject.toml")
    try:
        text = Path(src).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    start = _table_line(text, PYPROJECT_TABLE) if pyproject else 0
    line = _line_of(text, line_key or key, max(start - 1, 0))
    return InputError(f"{PYPROJECT_TABLE + '.' if pyproject else ''}{key}: {problem}", src, line)
