"""What the dashboard knows, in one place: the options it was started with, the base
workspace and its report, and the wording of errors. Screens read this (``self.app.state``);
they never read argparse, the app module or the command line.

Two objects:

- ``DashboardOptions`` (frozen): every path the dashboard was started with and the typed
  settings of ``kernel/settings.py``; built once, from the command line, by ``commands/tui.py``
  (or directly, by a library user or a test: no argparse needed);
- ``DashboardState``: the options plus what the app learns while it runs — the base workspace
  (loaded exactly as ``evaluate`` loads it), its report (``evaluate``'s report, so the export
  is byte-identical to ``evaluate --out``) or the error that stopped it, the thresholds file
  (parsed once), the Compare view's last comparison, and what the user chose after seeing
  the data (``Exploratory``: the export labels it and keeps it apart from the report).
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from .kernel.settings import CalibrationSettings, CompareSettings, GateSettings, LoadSettings

if TYPE_CHECKING:
    from .kernel.fusion.calibration import CalibrationComparison
    from .kernel.gate.thresholds import Thresholds
    from .kernel.instruments.rules import Rule
    from .kernel.workspace.loaded import Workspace


def error_line(exc: BaseException) -> str:
    """The command line's one-line wording for an error (``rankscope: error: FILE:LINE: what``)."""
    from .kernel.errors import OUT_OF_MEMORY, InputError, is_out_of_memory

    msg = " ".join(str(exc).split("\n"))
    if isinstance(exc, InputError):
        return f"rankscope: error: {msg}"
    if is_out_of_memory(exc):  # the inputs, not a fault of ours (the command line says the same)
        return f"rankscope: error: {OUT_OF_MEMORY}"
    return f"rankscope: internal error: {type(exc).__name__}: {msg}"


@dataclass(frozen=True)
class DashboardOptions:
    """Everything ``rankscope tui`` was started with. Paths are as given (None = not given)."""

    lanes: tuple[tuple[str | None, str], ...] = ()  # (name or None, path), in command-line order
    qrels: str | None = None
    strata: tuple[str, ...] = ()
    corpus: str | None = None
    queries: tuple[str, ...] = ()  # qid<TAB>text files, merged in order
    docs: tuple[str, ...] = ()  # docid<TAB>text files, merged in order
    ood_negatives: str | None = None
    thresholds: str | None = None  # thresholds.json of `rankscope calibrate`
    dev_qrels: str | None = None  # the Calibrate view's fitting judgments
    gates: str | None = None  # the Verdicts view's rules
    qrels_b: str | None = None  # a second set of labels: the Judgments view's agreement tables
    load: LoadSettings = field(default_factory=LoadSettings)
    gate: GateSettings = field(default_factory=GateSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)
    calibration: CalibrationSettings = field(default_factory=CalibrationSettings)
    demo_dir: str | None = None  # tui-only: where the demo was written when no input was given

    def __post_init__(self) -> None:  # one path given as a string is a one-file tuple
        for name in ("queries", "docs"):
            v = getattr(self, name)
            if v is None or isinstance(v, str):
                object.__setattr__(self, name, () if v is None else (v,))
            elif not isinstance(v, tuple):
                object.__setattr__(self, name, tuple(v))

    def input_paths(self) -> tuple[str, ...]:
        """Every file the dashboard reads: an output must never overwrite one of them. The
        paths of ``evaluate`` (lanes, qrels, corpus, texts, negatives, thresholds, strata) and
        the dashboard's own (dev qrels, gates)."""
        paths = [p for _, spec in self.lanes for p in _lane_files(spec)] + [self.qrels, self.corpus, *self.queries, *self.docs,
                                              self.ood_negatives, self.thresholds]
        paths += list(self.strata) + [self.dev_qrels, self.gates, self.qrels_b]
        return tuple(p for p in paths if p)

    def with_qrels(self, qrels: str | None) -> DashboardOptions:
        """The same options judged by other qrels (the dev set of the Calibrate view)."""
        return replace(self, qrels=qrels)


def _lane_files(spec: str) -> tuple[str, ...]:
    """A lane's files (each shard of ``a.run,b.run`` or a glob); the spec itself when it
    does not expand (the load reports that)."""
    from .kernel.errors import InputError
    from .kernel.inputs.formats import shard_paths

    try:
        return shard_paths(spec)
    except InputError:
        return (spec,)


def load_workspace(options: DashboardOptions) -> Workspace:
    """The workspace of ``options``, loaded as ``rankscope evaluate`` loads it: the kernel's
    ``Workspace.load`` with the same paths and ``LoadSettings``."""
    from .kernel.workspace.loaded import Workspace

    return Workspace.load(
        list(options.lanes), cast(str, options.qrels), options.load, strata=list(options.strata), corpus=options.corpus,
        queries=options.queries, docs=options.docs, ood_negatives=options.ood_negatives,
    )


class LoadingWorkspace(Future["Workspace"]):
    """A future workspace, with the options it is loaded for."""

    def __init__(self, options: DashboardOptions) -> None:
        super().__init__()
        self.options = options  # what it loads (``DashboardState.take_preload`` matches on it)


def start_loading(options: DashboardOptions) -> LoadingWorkspace:
    """A ``concurrent.futures.Future`` of :func:`load_workspace` (``options``), read in a
    daemon thread started now (the dashboard starts it once its first frame is drawn, so the
    reading never holds that frame back). An input that
    blocks (a FIFO with no writer) only holds that thread: quitting abandons it. Once
    loaded, the per-query values the Overview shows first (each input lane, doc level) and
    the doc dictionary its parsed order reads are made in the same thread (cached in the
    workspace), so the first frame with numbers asks the event loop for no computation."""
    future = LoadingWorkspace(options)

    def read() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            ws = load_workspace(options)
            for lane in ws.input_lanes:
                ws.per_query(lane, "doc")
            # the doc ids the Overview's parsed order shows: built here, not on the event loop
            # (there the first lookup waited for the dictionary's lock, 0.1 s at 7M lines)
            ws.doc_ids
        except BaseException as exc:  # handed to whoever waits (the app's load worker reports it)
            future.set_exception(exc)
        else:
            future.set_result(ws)

    threading.Thread(target=read, name="rankscope-load", daemon=True).start()
    return future


def load_dev_workspace(options: DashboardOptions) -> Workspace:
    """The dev set loaded exactly as `rankscope calibrate --qrels DEV` would load it: the same
    loader and every other option of the main workspace (lanes, strata, corpus, texts,
    out-of-domain negatives, depth, relevant level, group separator, …)."""
    return load_workspace(options.with_qrels(options.dev_qrels))


class ParsedThresholds:
    """thresholds.json (``rankscope calibrate``'s output), parsed once per path by the kernel's
    ``read_thresholds`` and shared by the report and every view (Gate, Compare, Query).
    Thread-safe: workers ask for it. A file that does not parse raises the kernel's
    ``InputError`` to each caller (each shows it) and is not remembered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: str | None = None
        self._value: Thresholds | None = None

    def get(self, path: str | None) -> Thresholds | None:
        """The parsed file at ``path`` (None without one)."""
        if not path:
            return None
        with self._lock:
            if self._path != path:
                from .kernel.gate.thresholds import read_thresholds  # only a run with thresholds pays its import

                self._value = read_thresholds(path)
                self._path = path
            return self._value

    def seed(self, path: str | None, value: Thresholds | None) -> None:
        """``value`` is ``path`` parsed already (the report's ``prepare`` read it): keep it
        unless a parse of that path is kept."""
        if path and value is not None:
            with self._lock:
                if self._path != path:
                    self._path, self._value = path, value


def evaluate(options: DashboardOptions, workspace: Workspace,
             parsed: ParsedThresholds | None = None) -> tuple[Workspace, dict[str, Any]]:
    """``(workspace, report)``: ``rankscope evaluate``'s report (the kernel's ``prepare``
    then ``report_of``, with the options' gate settings and thresholds) and the prepared
    workspace it was computed on (a calibrated RRF k makes a new one; derived lanes
    added). ``prepare`` reads the thresholds file; ``parsed`` (the state's) keeps that
    parse for the views."""
    from .kernel import prepare, report_of  # the report's modules load in its worker, not at start-up

    ws, th = prepare(workspace, options.thresholds)
    if parsed is not None:
        parsed.seed(options.thresholds, th)
    return ws, report_of(ws, options.gate, th)


EXPLORATORY_LABEL = ("exploratory: chosen interactively in the dashboard after seeing the data; "
                     "not pre-registered, not part of the numbers above")


def _finite(x: object) -> float | None:
    """``x`` as a float, or None when it is not a finite number (strict JSON has no nan)."""
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


@dataclass
class RRFChoice:
    """The RRF k on the slider, away from the pre-registered one."""

    k: int
    pre_registered_k: int
    means: dict[str, float | None] | None = None  # the fused lane's means at ``k``, once computed


@dataclass
class Exploratory:
    """What the user chose in the dashboard after seeing the data. The views write it as it
    changes (the RRF slider, the Verdicts view's edited thresholds, the Calibrate view's fit
    on the test set); the export reads :meth:`block`."""

    rrf: RRFChoice | None = None
    verdict_rules: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # (edited, file): described rules
    fit_on_test: CalibrationComparison | None = None  # the comparison shown while fitting on test

    def move_rrf_k(self, k: int, pre_registered_k: int) -> None:
        """The slider is at ``k``; the report's k is ``pre_registered_k``."""
        if k == pre_registered_k:
            self.rrf = None
        elif self.rrf is None or self.rrf.k != k or self.rrf.pre_registered_k != pre_registered_k:
            self.rrf = RRFChoice(k, pre_registered_k)

    def rrf_fused(self, k: float, means: dict[str, float]) -> None:
        """The fused lane's means at ``k`` arrived (kept only while the slider is at ``k``)."""
        if self.rrf is not None and self.rrf.k == k:
            self.rrf.means = {m: _finite(v) for m, v in means.items()}

    def edit_rules(self, rules: list[Rule], file_rules: list[Rule]) -> None:
        """The rules judged now and the file's; equal (or none): nothing was edited."""
        edited = bool(rules) and rules != file_rules
        self.verdict_rules = (tuple(r.describe() for r in rules), tuple(r.describe() for r in file_rules)) if edited else None

    def block(self) -> dict[str, Any]:
        """The export's ``exploratory`` block: the label, then each choice; empty when the
        user changed nothing."""
        out: dict[str, Any] = {}
        if self.rrf is not None:
            entry: dict[str, Any] = {"k": self.rrf.k, "pre_registered_k": self.rrf.pre_registered_k}
            if self.rrf.means is not None:
                entry["means"] = dict(self.rrf.means)
            out["rrf"] = entry
        if self.verdict_rules is not None:
            edited, file = self.verdict_rules
            out["verdict_rules"] = {"edited": list(edited), "file": list(file)}
        r = self.fit_on_test
        if r is not None:
            m = r.settings.objective
            t = r.fit_test
            fit: dict[str, Any] = {"fitted_on": "test (in-sample: flattering)", "step": r.settings.step, "objective": m,
                                   "weights": dict(zip(t.lanes, map(float, t.weights))),
                                   "test_" + m: _finite(t.objective)}
            if r.fit_dev is not None:
                fit["optimism"] = _finite(r.optimism)
            out["fit_on_test"] = fit
        return {"label": EXPLORATORY_LABEL, **out} if out else {}


@dataclass
class DashboardState:
    """The dashboard's state. Changed only on the event loop (workers hand results back)."""

    options: DashboardOptions = field(default_factory=DashboardOptions)
    synthetic: bool = False  # the built-in demo (labelled SYNTHETIC wherever it is shown)
    source_label: str = ""  # what the header says the data is
    base_workspace: Workspace | None = None  # the kernel Workspace the report is computed on
    report: dict | None = None  # ``evaluate(base_workspace)``
    report_error: BaseException | None = None  # why the report could not be computed
    load_error: BaseException | None = None  # why the inputs could not be loaded (the last load)
    preload: LoadingWorkspace | None = None  # ``start_loading(options)`` begun before the app started, or None
    compare_payload: dict | None = None  # the Compare view's `compare --out` payload, once computed
    exploratory: Exploratory = field(default_factory=Exploratory)
    parsed_thresholds: ParsedThresholds = field(default_factory=ParsedThresholds, repr=False, compare=False)
    theme: str | None = None  # a Textual theme name (--theme or a config file); None = Textual's default
    keymap: tuple[tuple[str, str], ...] = ()  # (binding id, keys) from a config file, for ``App.set_keymap``

    def thresholds(self) -> Thresholds | None:
        """The options' thresholds.json, parsed once (None without one)."""
        return self.parsed_thresholds.get(self.options.thresholds)

    def take_preload(self, options: DashboardOptions) -> LoadingWorkspace | None:
        """The load begun for ``options`` before the app started (once; None when there is
        none or it was for other options)."""
        pre, self.preload = self.preload, None
        return pre if pre is not None and pre.options is options else None

    @property
    def error_wording(self) -> str | None:
        """The report error as the command line words it (None when there is none)."""
        return error_line(self.report_error) if self.report_error is not None else None

    @property
    def protected_paths(self) -> tuple[str, ...]:
        """The inputs every output must not overwrite."""
        return self.options.input_paths()

    @property
    def has_inputs(self) -> bool:
        return bool(self.options.lanes)
