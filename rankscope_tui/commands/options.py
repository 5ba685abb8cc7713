"""The command line's shared pieces: the parser class, the input and settings options
(argparse parents every loading command adds), the settings those options make, the
workspace they load, and the table that words a setting's error with its option.

Every range is checked by the settings themselves (``kernel/settings.py``); this module
only maps option values to settings and a setting's name to its ``--flag``."""

from __future__ import annotations

import argparse
import os
import sys

from ..kernel.errors import InputError, SettingError

PROG = "rankscope"

#: Each checked setting's option, for the one-line error of a setting out of range
#: (``SettingError.setting`` holds the field name; the message names the option instead).
FLAGS = {
    "relevant": "--relevant", "depth": "--depth", "confidence": "--confidence", "resamples": "--resamples",
    "seed": "--seed", "window": "--window", "cap": "--cap", "document_first": "--document-first",
    "group_sep": "--group-sep", "rrf_k": "--rrf-k", "fpir": "--fpir", "miss_rate": "--miss-rate",
    "margin": "--margin", "mutual": "--mutual", "min_delta": "--min-delta", "step": "--step",
    "metrics": "--metrics", "objective": "--objective", "run_columns": "--run-columns",
    "qrels_columns": "--qrels-columns",
    "deltas": "--delta", "powers": "--power", "family_size": "--family-size", "folds": "--folds", "budget": "--budget",
    "weights": "--weights", "grades": "--grades",
}


def in_flags(exc: SettingError) -> SettingError:
    """``exc`` in the command line's words: each setting named by its option."""
    return exc.named(FLAGS)


class CliError(InputError):
    """A usage problem: printed as one line, exit status 2, like every input error."""


class _StoreOnce(argparse._StoreAction):
    """``store`` that refuses a second value: argparse keeps the last of ``--qrels a
    --qrels b`` silently, which evaluates something other than what was asked."""

    _SEEN = "_rankscope_options_given"

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault(self._SEEN, {})
        if self.dest in seen:
            name = "/".join(self.option_strings) if self.option_strings else self.dest
            raise CliError(f"{name} given twice ({seen[self.dest]!r} and {values!r}); it takes one value")
        seen[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


class Parser(argparse.ArgumentParser):
    """Every rankscope parser: errors are one line (exit 2), and a single-valued option
    given twice is an error (every option added with the default ``store`` action)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str):  # one line, exit 2, like every other input error
        raise CliError(message)

    #: The attribute that keeps the words this parser was given (None: not kept): `rankscope
    #: tui --serve` starts the same command line again for each browser that connects.
    keep_words: str | None = None

    def parse_known_args(self, args=None, namespace=None):
        words = list(sys.argv[1:] if args is None else args)
        ns, rest = super().parse_known_args(args, namespace)
        ns.__dict__.pop(_StoreOnce._SEEN, None)
        if self.keep_words:
            setattr(ns, self.keep_words, words)
        return ns, rest


def lane_arg(text: str) -> tuple[str | None, str]:
    """``NAME=PATH`` or ``PATH``. Text before the first '=' is a lane name unless it holds
    a '/' (then the whole text is a path), or the whole text names an existing file."""
    if "=" in text:
        name, path = text.split("=", 1)
        if "/" not in name and not (os.path.exists(text) and not os.path.exists(path)):
            if not path:
                raise argparse.ArgumentTypeError(f"{text}: empty path after NAME= (give --lane NAME=PATH)")
            return name, path
    if not text:
        raise argparse.ArgumentTypeError("empty path (give --lane [NAME=]PATH)")
    return None, text


def add_loading_options(p: argparse.ArgumentParser, qrels_required: bool = True, tables: bool = False) -> None:
    """The input and settings options; ``tables`` adds ``--per-query-in`` (and --qrels is
    then required unless tables are given: ``load_workspace`` checks)."""
    from dataclasses import fields

    from ..kernel.settings import LoadSettings

    d = {f.name: f.default for f in fields(LoadSettings)}  # (the metric set's default is a factory)
    g = p.add_argument_group("inputs")
    g.add_argument("--lane", action="append", type=lane_arg, default=[], metavar="[NAME=]PATH",
                   help="a run file (format and compression told by content; see --run-format); a lane in "
                        "several shard files: NAME=a.run,b.run or NAME='shards/*.run'; repeatable")
    g.add_argument("--qrels", required=qrels_required and not tables, metavar="PATH",
                   help="judgments (format and compression told by content; see --qrels-format), or irds:DATASET "
                        "for an ir_datasets dataset's qrels from its local cache (never downloaded; extra [irds])")
    if tables:
        from ..kernel.inputs.formats import PER_QUERY_FORMATS as FORMATS

        g.add_argument("--per-query-in", action="append", type=lane_arg, default=[], metavar="[NAME=]PATH",
                       help="per-query values computed elsewhere (trec_eval -q, ir_measures -q, PyTerrier perquery, "
                            "rankscope --per-query, or a run,query_id,measure,value table) instead of --lane; repeatable")
        g.add_argument("--per-query-format", choices=FORMATS, default=None,
                       help="the format of the --per-query-in tables (default: told from the content)")
    g.add_argument("--strata", action="append", default=[], metavar="PATH", help="qid<TAB>label; repeatable")
    g.add_argument("--corpus", metavar="PATH", help="doc ids in the index (one per line or first TSV column)")
    g.add_argument("--queries", action="append", default=[], metavar="PATH",
                   help="qid<TAB>text, for the drill-down, or irds:DATASET (its queries); repeatable (the files are "
                        "merged, an id in two is an error)")
    g.add_argument("--docs", action="append", default=[], metavar="PATH",
                   help="docid<TAB>text, for the drill-down, or irds:DATASET (its docs, read whole); repeatable (the "
                        "files are merged, an id in two is an error)")
    g.add_argument("--ood-negatives", metavar="PATH", help="qrels whose queries are all out-of-domain negatives")
    g.add_argument("--thresholds", metavar="PATH", help="thresholds.json written by `rankscope calibrate`")
    g.add_argument("--ignore-self", action="store_true",
                   help="drop every hit whose doc id equals its query id before anything is computed "
                        "(BEIR/MTEB ignore_identical_ids, e.g. ArguAna, Quora)")
    from ..kernel.inputs.formats import QRELS_FORMATS, RUN_FORMATS

    f = p.add_argument_group("input formats", "told by content unless given (README: Input formats)")
    f.add_argument("--run-format", choices=RUN_FORMATS, default="auto", help="the format of every --lane file")
    f.add_argument("--qrels-format", choices=QRELS_FORMATS, default="auto",
                   help="the format of --qrels (and --ood-negatives)")
    f.add_argument("--run-columns", default=None, metavar="ROLE=COL,...",
                   help="columns of a run table: query=COL,doc=COL,score=COL (or rank=COL)")
    f.add_argument("--qrels-columns", default=None, metavar="ROLE=COL,...",
                   help="columns of a qrels table: query=COL,doc=COL,relevance=COL")
    f.add_argument("--mteb-subset", default=None, metavar="NAME", help="the subset of MTEB predictions to read")
    f.add_argument("--mteb-split", default=None, metavar="NAME", help="the split of MTEB predictions to read")
    s = p.add_argument_group("settings")
    s.add_argument("--metrics", default=None, help="comma list, e.g. ndcg@10,rr,p@10,recall@100 (also ap, rprec, bpref, ndcg, rr@10, "
                   "p(rel=2)@10, and trec_eval, ir_measures, ranx and MTEB spellings: see the README's Measures)")
    add_measures_from(s)
    s.add_argument("--relevant", type=int, default=d["relevant"], help="a doc is relevant when grade >= this (default 1)")
    s.add_argument("--depth", type=int, default=None, help="cut every lane to its first D hits after ordering")
    s.add_argument("--group-sep", default=None, metavar="SEP", help="doc id up to the first SEP is its group")
    s.add_argument("--window", type=int, default=d["window"], help="candidates the next stage sees (attribution)")
    s.add_argument("--blind", default=None, metavar="[STRAT=]LABEL", help="the stratum attribution singles out")
    s.add_argument("--seed", type=int, default=d["seed"])
    s.add_argument("--resamples", type=int, default=d["resamples"], help="bootstrap resamples; 0 skips resampled intervals")
    s.add_argument("--confidence", type=float, default=d["confidence"])
    s.add_argument("--rrf-k", type=int, default=None, help="RRF k (default 60, or the calibrated one)")
    s.add_argument("--cap", type=int, default=None, help="variant lanes keeping at most N hits per group")
    s.add_argument("--document-first", action="store_true", help="variant lanes ordering the top hit's group first")
    s.add_argument("--condensed", action="store_true",
                   help="condensed lists (trec_eval -J): every lane's unjudged hits removed before any cutoff")
    gate = p.add_argument_group("gate", "defaults: " + _gate_defaults())
    gate.add_argument("--gate-on", default=None, metavar="LANE",
                      help="the lane whose top score is gated (default: the lane recorded in --thresholds, or the only lane)")
    # None = not given: the defaults of GateSettings apply after (gate_options), so that a
    # gate option given without a gate lane is refused instead of silently ignored
    gate.add_argument("--fpir", type=float, default=None, help="target false-positive identification rate")
    gate.add_argument("--conservative", action="store_true", default=None, help="pick the floor on the Wilson upper bound of FPIR")
    gate.add_argument("--miss-rate", type=float, default=None, help="conformal miss rate alpha")
    gate.add_argument("--margin", type=float, default=None, help="accept only when top minus runner-up >= this")
    gate.add_argument("--mutual", type=int, default=None, metavar="R", help="mutual nearest neighbour condition")


def add_measures_from(g) -> None:
    """``--measures-from FILE.py`` (repeatable): measures the user defines (README: Measures you define)."""
    g.add_argument("--measures-from", action="append", default=[], metavar="FILE.py",
                   help="a Python file calling rankscope_tui.define(name, per_query, ...): its measures can then be "
                        "named in --metrics (README: Measures you define); repeatable")


def add_fusion_options(p: argparse.ArgumentParser) -> None:
    """``--fuse METHOD[:NORM]`` (repeatable): more fused lanes beside rrf (README: Fusion)."""
    p.add_argument("--fuse", action="append", default=[], metavar="METHOD[:NORM]",
                   help="add a fused lane named METHOD[:NORM], e.g. combmnz:zmuv, wsum:zmuv, borda, isr, wrrf "
                        "(README: Fusion); repeatable")


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--buckets``, ``--memory-limit``, ``--engine``, ``--scheduler``: per-query work in
    query-id buckets (``kernel.engine``; README: Out of core on one machine)."""
    from ..kernel.scale.engine import MAX_BUCKETS

    e = p.add_argument_group("larger than memory", "per-query work in query-id buckets (needs rankscope[scale])")
    e.add_argument("--buckets", type=int, default=None, metavar="N",
                   help=f"split the rows into N query-id buckets on disk, evaluated one per worker (1 to {MAX_BUCKETS})")
    e.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="memory for the whole run, e.g. 2GB; without --buckets it sets their number")
    e.add_argument("--engine", choices=["local", "dask"], default=None,
                   help="where the buckets run: local worker processes (the default with --buckets) or a Dask cluster")
    e.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="the Dask scheduler to connect to (with --engine dask), e.g. tcp://host:8786")


def engine_settings(args):
    """The engine named on the command line (``kernel.engine.EngineSettings``): the memory
    engine unless a bucket option is given; ``--buckets`` with ``--per-query-in`` is refused
    (the tables are per-query values already)."""
    from ..kernel.scale.engine import EngineSettings
    from ..kernel.scale.given import is_dataset

    given = [f for f, a in (("--buckets", "buckets"), ("--memory-limit", "memory_limit"), ("--engine", "engine"),
                            ("--scheduler", "scheduler")) if getattr(args, a, None) is not None]
    if not given:
        # an input given as a directory of query buckets (bucket=K/) is evaluated in its buckets
        paths = [p for _, p in getattr(args, "lane", None) or []] + [getattr(args, "qrels", None),
                                                                      getattr(args, "ood_negatives", None)]
        given = [f"{p} (a directory of query buckets)" for p in paths if isinstance(p, str) and is_dataset(p)][:1]
        if not given:
            return EngineSettings()
    if getattr(args, "ignore_self", False):
        raise InputError(f"--ignore-self cannot be used with {given[0]} yet (its warnings are counted over the "
                         "whole lane, not per bucket)", "--ignore-self")
    if getattr(args, "per_query_in", None):
        raise InputError(f"{given[0]} cannot be used with --per-query-in (the tables are per-query values already; "
                         "buckets split rankings)", given[0])
    return EngineSettings(engine=args.engine or "local", buckets=args.buckets, memory_limit=args.memory_limit,
                          scheduler=args.scheduler)


def run_buckets(args, engine, metrics=(), calibration=None):
    """(``bucket.QueryWorkspace``, ``bucket.BucketPlan``, the engine with its bucket count)
    of the inputs on the command line, computed in query buckets; progress on stderr on a
    terminal."""
    from dataclasses import replace

    from ..kernel import evaluate_in_buckets as run_engine
    from ..kernel.scale.bucket import QueryWorkspace
    from ..kernel.scale.engine import bucket_count
    from ..kernel.workspace.loaded import Sources

    if getattr(args, "per_query_format", None):
        raise InputError("--per-query-format needs --per-query-in", "--per-query-format")
    if not args.qrels:
        raise CliError("the following arguments are required: --qrels")
    src = Sources(tuple(args.lane), args.qrels, settings_from(args), tuple(args.strata), args.corpus,
                  tuple(args.queries), tuple(args.docs), args.ood_negatives)
    paths = [p for _, p in src.lanes] + [src.qrels] + ([src.ood_negatives] if src.ood_negatives else [])
    engine = replace(engine, buckets=bucket_count(paths, engine))
    progress = StageProgress()
    gate = gate_options(args)
    merged, plan, facts = run_engine(src, engine, gate, args.thresholds, metrics, calibration,
                                     progress=progress.done)
    progress.done(f"evaluated {engine.buckets} bucket(s), {len(merged.qids):,} queries")
    return QueryWorkspace(merged, plan, facts), plan, engine


#: Loading options a command reads nothing from, with what they belong to (given anyway,
#: they are refused: a setting that changes nothing must not look applied).
UNUSED_GATE_OPTIONS = ("gate_on", "fpir", "conservative", "miss_rate", "margin", "mutual")
UNUSED_ATTRIBUTION_OPTIONS = ("window", "blind")


def refuse_unused_options(args, command: str, dests: tuple[str, ...], belongs: str) -> None:
    """Refuse each of ``dests`` given on the command line (a value other than its default)."""
    from dataclasses import fields

    from ..kernel.settings import LoadSettings

    defaults = {f.name: f.default for f in fields(LoadSettings)}  # --window's default is LoadSettings'
    for dest in dests:
        value = getattr(args, dest, None)
        if value is None or value is False or value == defaults.get(dest):
            continue
        raise InputError(f"{command} does not use {belongs}: the option would change nothing here",
                         "--" + dest.replace("_", "-"))


def _gate_defaults() -> str:
    from ..kernel.settings import GateSettings as GS

    return f"--fpir {GS.fpir:g}, --miss-rate {GS.miss_rate:g}, no margin, no mutual condition"


def settings_from(args):
    """The workspace's ``LoadSettings`` of the parsed options; every range is checked by
    ``LoadSettings`` itself (a ``SettingError``, worded with the option by ``in_flags``).
    The ranges are checked before the metric names and column mappings are read (a
    first build without them), so a command line with several faults names the same one
    first as it always did."""
    from dataclasses import replace

    from ..kernel.measures import parse_metrics
    from ..kernel.settings import DEFAULT_METRICS, DEFAULT_RRF_K, LoadSettings

    rrf_k, rrf_src = (args.rrf_k, "chosen on the command line") if args.rrf_k is not None else (DEFAULT_RRF_K, "default")
    checked = LoadSettings(
        # relevant None: not given where a config file may set it (`tui`): LoadSettings' level
        metrics=(), depth=args.depth, relevant=LoadSettings.relevant if args.relevant is None else args.relevant,
        group_sep=args.group_sep, window=args.window,
        seed=args.seed, resamples=args.resamples, confidence=args.confidence, rrf_k=rrf_k, rrf_k_source=rrf_src,
        blind=args.blind, cap=args.cap, document_first=args.document_first,
        condensed=getattr(args, "condensed", False),
    )
    # not given: the default set; given empty (--metrics ''), it names nothing and is refused
    metrics = parse_metrics(DEFAULT_METRICS if args.metrics is None else args.metrics)
    fuse: tuple[str, ...] = ()
    if getattr(args, "fuse", None):  # the fusion room loads only when a run asks for it (start-up time)
        from ..kernel.fusion.combine import parse_fuse_list

        fuse = parse_fuse_list(args.fuse)
    return replace(checked, metrics=tuple(metrics), inputs=input_options(args), fuse=fuse,
                   ignore_self=bool(getattr(args, "ignore_self", False)))


def input_options(args):
    """How input files are read (``kernel.formats.InputOptions``) from the format options."""
    from ..kernel.inputs.formats import ColumnMapping, InputOptions

    return InputOptions(
        run_format=args.run_format, qrels_format=args.qrels_format,
        run_columns=ColumnMapping.parse(args.run_columns, "--run-columns") if args.run_columns is not None else None,
        qrels_columns=(ColumnMapping.parse(args.qrels_columns, "--qrels-columns")
                       if args.qrels_columns is not None else None),
        mteb_subset=args.mteb_subset, mteb_split=args.mteb_split,
    )


def input_paths(args) -> list[str]:
    from ..kernel.inputs.formats import shard_paths

    paths = [p for _, spec in args.lane for p in shard_paths(spec)] + [p for _, p in getattr(args, "per_query_in", [])]
    paths += [args.qrels, args.corpus, args.ood_negatives, args.thresholds]
    return [p for p in paths + list(args.queries) + list(args.docs) + list(args.strata) if p]


#: Options that act on rankings or qrels only: refused with --per-query-in rather than ignored.
RANKING_ONLY: tuple[tuple[str, str, object], ...] = (("--lane", "lane", []), ("--depth", "depth", None), ("--group-sep", "group_sep", None),
                ("--corpus", "corpus", None), ("--queries", "queries", []), ("--docs", "docs", []),
                ("--ood-negatives", "ood_negatives", None), ("--thresholds", "thresholds", None),
                ("--cap", "cap", None), ("--document-first", "document_first", False), ("--condensed", "condensed", False), ("--rrf-k", "rrf_k", None),
                ("--blind", "blind", None), ("--gate-on", "gate_on", None), ("--fpir", "fpir", None),
                ("--conservative", "conservative", None), ("--miss-rate", "miss_rate", None),
                ("--margin", "margin", None), ("--mutual", "mutual", None), ("--metrics", "metrics", None),
                ("--run-format", "run_format", "auto"), ("--run-columns", "run_columns", None),
                ("--mteb-subset", "mteb_subset", None), ("--mteb-split", "mteb_split", None),
                ("--fuse", "fuse", []), ("--ignore-self", "ignore_self", False))


def load_tables(args):
    """The per-query-table workspace of ``--per-query-in`` (``kernel.workspace.per_query_tables``)."""
    from ..kernel import load_tables as load

    for flag, attr, default in RANKING_ONLY:
        if getattr(args, attr, default) not in (default, None):
            what = ("the tables' measures are what is reported" if flag == "--metrics" else
                    "it needs rankings, and a per-query table holds only metric values")
            raise InputError(f"{flag} cannot be used with --per-query-in ({what})", flag)
    return load(list(args.per_query_in), settings_from(args), qrels=args.qrels, strata=list(args.strata),
                fmt=args.per_query_format)


def load_workspace(args):
    """Load every input named on the command line into one Workspace (or, with
    ``--per-query-in``, the per-query-table workspace)."""
    from ..kernel.workspace.loaded import Workspace

    if getattr(args, "per_query_in", None):
        return load_tables(args)
    if getattr(args, "per_query_format", None):
        raise InputError("--per-query-format needs --per-query-in", "--per-query-format")
    if not args.qrels:
        raise CliError("the following arguments are required: --qrels")
    return Workspace.load(
        list(args.lane), args.qrels, settings_from(args), strata=list(args.strata), corpus=args.corpus,
        queries=tuple(args.queries), docs=tuple(args.docs), ood_negatives=args.ood_negatives,
    )


class StageProgress:
    """One stderr line per finished stage, once a run has taken more than a couple of
    seconds, and only when stderr is a terminal (never in pipes, logs or CI)."""

    def __init__(self) -> None:
        import time

        self._clock = time.perf_counter
        self._start = self._clock()
        self._on = sys.stderr.isatty()
        self._after = progress_after()

    def done(self, stage: str) -> None:
        elapsed = self._clock() - self._start
        if self._on and elapsed >= self._after:
            sys.stderr.write(f"{PROG}: {stage} ({elapsed:.1f} s)\n")


def progress_after() -> float:
    """``RANKSCOPE_PROGRESS_AFTER_S``: seconds before the stage lines start (default 2)."""
    import math

    raw = os.environ.get("RANKSCOPE_PROGRESS_AFTER_S", "2")
    try:
        after = float(raw)
    except ValueError:
        after = math.nan
    if math.isnan(after):
        raise InputError(f"must be a number of seconds, got {raw!r}"[:200], "RANKSCOPE_PROGRESS_AFTER_S")
    return after


#: the gate options (flag, attribute of the parsed arguments) whose value the gate lane needs
GATE_OPTIONS = (("--fpir", "fpir"), ("--conservative", "conservative"), ("--miss-rate", "miss_rate"),
                ("--margin", "margin"), ("--mutual", "mutual"), ("--alpha", "alpha"))


def gate_options(args):
    """The gate settings named on the command line (``kernel.settings.GateSettings``).

    The gate lane is ``--gate-on``, else the lane ``calibrate`` recorded in ``--thresholds``
    (a ``--gate-on`` that disagrees with it is an error), else the only loaded lane. A gate
    option given while no gate lane is known (several lanes, none named) is an error: it
    would otherwise be silently ignored. Options not given take GateSettings' defaults."""
    from ..kernel.settings import GateSettings

    given = {flag: getattr(args, attr) for flag, attr in GATE_OPTIONS if getattr(args, attr, None) is not None}
    values = {"fpir": given.get("--fpir"), "conservative": given.get("--conservative"),
              "miss_rate": given.get("--alpha", given.get("--miss-rate")), "margin": given.get("--margin"),
              "mutual": given.get("--mutual")}
    if "--alpha" in given and "--miss-rate" in given and given["--alpha"] != given["--miss-rate"]:
        raise InputError(f"--alpha {given['--alpha']:g} and --miss-rate {given['--miss-rate']:g} disagree (they are one setting)")
    try:  # the ranges are GateSettings' own; --alpha (calibrate's name for the miss rate) is worded as given
        settings = GateSettings(gate_on=args.gate_on, **{k: v for k, v in values.items() if v is not None})
    except SettingError as exc:
        raise exc.named({"miss_rate": "--alpha"} if "--alpha" in given else {}) from None
    if getattr(args, "thresholds", None):
        from ..kernel.gate.analysis import gate_settings_with_thresholds
        from ..kernel.gate.thresholds import read_thresholds

        settings = gate_settings_with_thresholds(settings, read_thresholds(args.thresholds))
    lanes = getattr(args, "lane", None) or []
    if settings.gate_on is None and len(lanes) > 1 and given:
        flag = next(iter(given))
        raise InputError(f"{flag} needs a gate lane: {len(lanes)} lanes are loaded; name the gated one with "
                         f"--gate-on LANE (or apply thresholds.json written by `calibrate --gate-on`)")
    return settings



def write_with_text(items, text: str) -> None:
    """The outputs ``items`` (``kernel.report.output.StagedOutputs``) and the text output,
    so that exit status 2 still means nothing was written: the files are staged, the text
    is written and flushed, and only then are the files renamed into place. A stdout that
    fails (``> /dev/full``, a closed stream) leaves every file as it was; a reader that
    went away (``| head``) is not a failure of ours, so the files are still put in place."""
    from ..kernel.report.output import StagedOutputs

    with StagedOutputs(list(items)) as outs:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            outs.commit()
            raise
        outs.commit()
