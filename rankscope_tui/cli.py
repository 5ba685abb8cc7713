"""The command line: parse options, ask the kernel, write. Nothing is computed here."""

from __future__ import annotations

import argparse
import os
import sys

from .kernel.errors import InputError

PROG = "rankscope"

#: The largest --confidence: beyond it the two-sided tail (1 - c)/2 is lost in rounding.
MAX_CONFIDENCE = 1 - 1e-12
#: The largest --rrf-k (RRF with k = 10^9 already weighs every rank the same to 1e-9).
MAX_RRF_K = 10**9


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


class _Parser(argparse.ArgumentParser):
    """Every rankscope parser: errors are one line (exit 2), and a single-valued option
    given twice is an error (every option added with the default ``store`` action)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str):  # one line, exit 2, like every other input error
        raise CliError(message)

    def parse_known_args(self, args=None, namespace=None):
        ns, rest = super().parse_known_args(args, namespace)
        ns.__dict__.pop(_StoreOnce._SEEN, None)
        return ns, rest


def _lane_arg(text: str) -> tuple[str | None, str]:
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

    from .kernel.settings import LoadSettings

    d = {f.name: f.default for f in fields(LoadSettings)}  # (the metric set's default is a factory)
    g = p.add_argument_group("inputs")
    g.add_argument("--lane", action="append", type=_lane_arg, default=[], metavar="[NAME=]PATH",
                   help="a run file (format and compression told by content; see --run-format); a lane in "
                        "several shard files: NAME=a.run,b.run or NAME='shards/*.run'; repeatable")
    g.add_argument("--qrels", required=qrels_required and not tables, metavar="PATH",
                   help="judgments (format and compression told by content; see --qrels-format)")
    if tables:
        from .kernel.inputs.formats import PER_QUERY_FORMATS as FORMATS

        g.add_argument("--per-query-in", action="append", type=_lane_arg, default=[], metavar="[NAME=]PATH",
                       help="per-query values computed elsewhere (trec_eval -q, ir_measures -q, PyTerrier perquery, "
                            "rankscope --per-query, or a run,query_id,measure,value table) instead of --lane; repeatable")
        g.add_argument("--per-query-format", choices=FORMATS, default=None,
                       help="the format of the --per-query-in tables (default: told from the content)")
    g.add_argument("--strata", action="append", default=[], metavar="PATH", help="qid<TAB>label; repeatable")
    g.add_argument("--corpus", metavar="PATH", help="doc ids in the index (one per line or first TSV column)")
    g.add_argument("--queries", action="append", default=[], metavar="PATH",
                   help="qid<TAB>text, for the drill-down; repeatable (the files are merged, an id in two is an error)")
    g.add_argument("--docs", action="append", default=[], metavar="PATH",
                   help="docid<TAB>text, for the drill-down; repeatable (the files are merged, an id in two is an error)")
    g.add_argument("--ood-negatives", metavar="PATH", help="qrels whose queries are all out-of-domain negatives")
    g.add_argument("--thresholds", metavar="PATH", help="thresholds.json written by `rankscope calibrate`")
    from .kernel.inputs.formats import QRELS_FORMATS, RUN_FORMATS

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


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--buckets``, ``--memory-limit``, ``--engine``, ``--scheduler``: per-query work in
    query-id buckets (``kernel.engine``; README: Out of core on one machine)."""
    from .kernel.scale.engine import MAX_BUCKETS

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
    from .kernel.scale.engine import EngineSettings

    given = [f for f, a in (("--buckets", "buckets"), ("--memory-limit", "memory_limit"), ("--engine", "engine"),
                            ("--scheduler", "scheduler")) if getattr(args, a, None) is not None]
    if not given:
        return EngineSettings()
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

    from .kernel.scale.bucket import QueryWorkspace
    from .kernel.scale.engine import bucket_count, run_engine
    from .kernel.workspace.loaded import Sources

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

    from .kernel.errors import InputError
    from .kernel.settings import LoadSettings

    defaults = {f.name: f.default for f in fields(LoadSettings)}  # --window's default is LoadSettings'
    for dest in dests:
        value = getattr(args, dest, None)
        if value is None or value is False or value == defaults.get(dest):
            continue
        raise InputError(f"{command} does not use {belongs}: the option would change nothing here",
                         "--" + dest.replace("_", "-"))


def _gate_defaults() -> str:
    from .kernel.settings import GateSettings as GS

    return f"--fpir {GS.fpir:g}, --miss-rate {GS.miss_rate:g}, no margin, no mutual condition"


def settings_from(args):
    from .kernel.errors import InputError
    from .kernel.measures import parse_metrics
    from .kernel.settings import DEFAULT_METRICS, DEFAULT_RRF_K, LoadSettings
    from .kernel.statistics.resampling import MAX_RESAMPLES, MAX_SEED, too_many_resamples
    from .kernel.workspace.loaded import check_relevant

    check_relevant(args.relevant)
    if args.depth is not None and args.depth < 1:
        raise InputError("--depth must be at least 1", "--depth")
    if not 0 < args.confidence <= MAX_CONFIDENCE:  # (nan fails too)
        raise InputError(f"must be between 0 and 1 (at most 1 - 1e-12), got {args.confidence!r}", "--confidence")
    if args.resamples < 0:
        raise InputError("--resamples must be >= 0", "--resamples")
    if args.resamples > MAX_RESAMPLES:
        raise InputError(too_many_resamples(args.resamples), "--resamples")
    if not 0 <= args.seed <= MAX_SEED:
        raise InputError(f"must be an integer from 0 to 2^64 - 1, got {args.seed}"[:200], "--seed")
    if args.window < 1:
        raise InputError("--window must be at least 1", "--window")
    if (args.cap is not None or args.document_first) and not args.group_sep:
        raise InputError("--cap and --document-first need --group-sep", "--cap")
    if args.group_sep == "":
        raise InputError("--group-sep must not be empty (a doc id up to the first SEP is its group)", "--group-sep")
    if args.cap is not None and args.cap < 1:
        raise InputError("--cap must be at least 1", "--cap")
    rrf_k, rrf_src = (args.rrf_k, "chosen on the command line") if args.rrf_k is not None else (DEFAULT_RRF_K, "default")
    if not 1 <= rrf_k <= MAX_RRF_K:
        raise InputError(f"must be an integer from 1 to {MAX_RRF_K:,}, got {rrf_k}"[:200], "--rrf-k")
    return LoadSettings(
        metrics=tuple(parse_metrics(args.metrics or DEFAULT_METRICS)),
        depth=args.depth, relevant=args.relevant, group_sep=args.group_sep or None, window=args.window,
        seed=args.seed, resamples=args.resamples, confidence=args.confidence, rrf_k=rrf_k, rrf_k_source=rrf_src,
        blind=args.blind, cap=args.cap, document_first=args.document_first, inputs=input_options(args),
    )


def input_options(args):
    """How input files are read (``kernel.formats.InputOptions``) from the format options."""
    from .kernel.inputs.formats import ColumnMapping, InputOptions

    return InputOptions(
        run_format=args.run_format, qrels_format=args.qrels_format,
        run_columns=ColumnMapping.parse(args.run_columns, "--run-columns") if args.run_columns is not None else None,
        qrels_columns=(ColumnMapping.parse(args.qrels_columns, "--qrels-columns")
                       if args.qrels_columns is not None else None),
        mteb_subset=args.mteb_subset, mteb_split=args.mteb_split,
    )


def settings_of(**given):
    """``settings_from`` over the given values and the defaults of the rest (for callers
    without the loading options: verdict on per-query tables, the Python API): the same
    checks, the same words."""
    from dataclasses import fields
    from types import SimpleNamespace

    from .kernel.settings import LoadSettings

    values = {f.name: f.default for f in fields(LoadSettings) if f.name not in ("metrics", "rrf_k_source", "inputs")}
    values.update(metrics=None, rrf_k=None, run_format="auto", qrels_format="auto", run_columns=None,
                  qrels_columns=None, mteb_subset=None, mteb_split=None)
    values.update(given)
    return settings_from(SimpleNamespace(**values))


def input_paths(args) -> list[str]:
    from .kernel.inputs.formats import shard_paths

    paths = [p for _, spec in args.lane for p in shard_paths(spec)] + [p for _, p in getattr(args, "per_query_in", [])]
    paths += [args.qrels, args.corpus, args.ood_negatives, args.thresholds]
    return [p for p in paths + list(args.queries) + list(args.docs) + list(args.strata) if p]


#: Options that act on rankings or qrels only: refused with --per-query-in rather than ignored.
RANKING_ONLY = (("--lane", "lane", []), ("--depth", "depth", None), ("--group-sep", "group_sep", None),
                ("--corpus", "corpus", None), ("--queries", "queries", []), ("--docs", "docs", []),
                ("--ood-negatives", "ood_negatives", None), ("--thresholds", "thresholds", None),
                ("--cap", "cap", None), ("--document-first", "document_first", False), ("--rrf-k", "rrf_k", None),
                ("--blind", "blind", None), ("--gate-on", "gate_on", None), ("--fpir", "fpir", None),
                ("--conservative", "conservative", None), ("--miss-rate", "miss_rate", None),
                ("--margin", "margin", None), ("--mutual", "mutual", None), ("--metrics", "metrics", None),
                ("--run-format", "run_format", "auto"), ("--run-columns", "run_columns", None),
                ("--mteb-subset", "mteb_subset", None), ("--mteb-split", "mteb_split", None))


def load_tables(args):
    """The per-query-table workspace of ``--per-query-in`` (``kernel.per_query_in``)."""
    from .kernel.workspace.per_query_tables import load_tables as load

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
    from .kernel.workspace.loaded import Workspace

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


# ---------------------------------------------------------------------------
# commands


def cmd_evaluate(args) -> int:
    from .kernel.instruments.evaluate import evaluate_report
    from .kernel.report.output import check_outputs, dumps_strict_parts, write_outputs
    from .render import report as R
    from .render import tidy

    for option, path in (("--summary", args.summary), ("--per-query-long", args.per_query_long)):
        if path:
            tidy.check_suffix(path, option)
    check_outputs([("--out", args.out), ("--per-query", args.per_query), ("--summary", args.summary),
                   ("--per-query-long", args.per_query_long)], input_paths(args))
    engine = engine_settings(args)
    if args.per_query_in:
        return evaluate_tables(args)
    if engine.bucketed:
        from .kernel.instruments.evaluate import report_of

        ws, plan, engine = run_buckets(args, engine)
        report = report_of(ws, gate_options(args), plan.thresholds)
        report["inputs"]["settings"]["engine"] = engine.as_dict()
    else:
        progress = StageProgress()
        ws = load_workspace(args)
        progress.done(f"loaded {len(ws.input_lanes)} lane(s), {sum(ws.lanes[n].n_rows for n in ws.input_lanes):,} hits")
        report = evaluate_report(ws, gate_options(args), thresholds_path=args.thresholds)
        progress.done("computed the report")
    text = R.RENDERERS[args.format](report)
    payloads = []
    if args.out:
        payloads.append((args.out, dumps_strict_parts(report)))
    if args.per_query:
        payloads.append((args.per_query, R.per_query_csv(report)))
    payloads += tidy_payloads(args, report)
    write_outputs(payloads)  # all or nothing
    sys.stdout.write(text)
    return 0


def evaluate_tables(args) -> int:
    """``evaluate --per-query-in``: the interval tables per run, level and stratum of values
    computed elsewhere; what needs rankings is said, never silently left out."""
    from .kernel import table_report
    from .kernel.report.output import dumps_strict_parts, write_outputs
    from .kernel.workspace.per_query_tables import NOT_AVAILABLE
    from .render import report as R

    report = table_report(load_tables(args))
    head = f"per-query tables: {', '.join(t['path'] for t in report['inputs']['per_query_tables'])}\n"
    head += f"not computed: {NOT_AVAILABLE}\n"
    for note in report["summary"]["notes"]:
        head += f"note: {note}\n"
    from .render.escaping import escape_markdown, terminal_safe

    if args.format == "markdown":
        head = "".join(f"*{escape_markdown(line)}*\n\n" for line in head.splitlines())
    elif args.format == "latex":  # comments: the table compiles as before
        head = "".join(f"% {line}\n" for line in head.splitlines())

    text = terminal_safe(head) + R.RENDERERS[args.format](report)  # a path never drives the terminal
    payloads = [(args.out, dumps_strict_parts(report))] if args.out else []
    if args.per_query:
        payloads.append((args.per_query, R.per_query_csv(report)))
    payloads += tidy_payloads(args, report)
    write_outputs(payloads)
    sys.stdout.write(text)
    return 0


def tidy_payloads(args, report: dict) -> list[tuple[str, bytes]]:
    """``--summary`` and ``--per-query-long`` of a report (``render.tidy``)."""
    from .render import tidy

    out = []
    if args.summary:
        out.append((args.summary, tidy.tidy_bytes(tidy.summary_rows(report), tidy.SUMMARY_COLUMNS, args.summary)))
    if args.per_query_long:
        out.append((args.per_query_long, tidy.tidy_bytes(tidy.long_rows(report), tidy.LONG_COLUMNS, args.per_query_long)))
    return out


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
    import math
    from dataclasses import replace

    from .kernel.errors import InputError
    from .kernel.settings import GateSettings

    given = {flag: getattr(args, attr) for flag, attr in GATE_OPTIONS if getattr(args, attr, None) is not None}
    values = {"fpir": given.get("--fpir"), "conservative": given.get("--conservative"),
              "miss_rate": given.get("--alpha", given.get("--miss-rate")), "margin": given.get("--margin"),
              "mutual": given.get("--mutual")}
    for flag in ("--fpir", "--miss-rate", "--alpha"):
        if flag in given and not 0 < given[flag] < 1:
            raise InputError(f"{flag} must be between 0 and 1 (exclusive), got {given[flag]:g}")
    if "--margin" in given and not math.isfinite(given["--margin"]):
        raise InputError("--margin must be a finite number")
    if "--alpha" in given and "--miss-rate" in given and given["--alpha"] != given["--miss-rate"]:
        raise InputError(f"--alpha {given['--alpha']:g} and --miss-rate {given['--miss-rate']:g} disagree (they are one setting)")
    if "--mutual" in given and given["--mutual"] < 1:
        raise InputError(f"--mutual must be at least 1, got {given['--mutual']}")
    settings = replace(GateSettings(gate_on=args.gate_on), **{k: v for k, v in values.items() if v is not None})
    if getattr(args, "thresholds", None):
        from .kernel.gate.analysis import gate_settings_with_thresholds
        from .kernel.gate.thresholds import read_thresholds

        settings = gate_settings_with_thresholds(settings, read_thresholds(args.thresholds))
    lanes = getattr(args, "lane", None) or []
    if settings.gate_on is None and len(lanes) > 1 and given:
        flag = next(iter(given))
        raise InputError(f"{flag} needs a gate lane: {len(lanes)} lanes are loaded; name the gated one with "
                         f"--gate-on LANE (or apply thresholds.json written by `calibrate --gate-on`)")
    return settings


def cmd_demo(args) -> int:
    from .demo import FILES, write_demo

    paths = write_demo_dir(args.out, write_demo, FILES, seed=args.seed)
    for role, p in paths.items():
        print(f"{role}: {p}")
    print("synthetic demo data written by rankscope's generator")
    return 0


def write_demo_dir(out: str, write_demo, files: dict, seed: int = 7) -> dict:
    """Write the demo (``demo.write_demo``, writing ``demo.FILES``; passed in, as only the demo
    commands import the generator) into ``out`` (created when missing) without touching anyone's
    files: ``out`` must be new, empty, or a previous demo (``kernel.provenance.check_demo_dir``).
    The files are generated in a temporary directory inside ``out`` and moved into place,
    the marker last; ``{role: path}`` as ``demo.write_demo`` returns it."""
    import shutil
    import tempfile

    from .kernel.inputs.files import sha256_of
    from .kernel.inputs.provenance import MARKER, check_demo_dir
    from .kernel.report.output import TEMP_SUFFIX, _temp_prefix, remove_stale_temps

    if os.path.lexists(out) and not os.path.isdir(out):
        raise InputError("exists and is not a directory", out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the directory: {exc.strerror or exc}", out) from None
    remove_stale_temps(out)
    check_demo_dir(out)  # before any work: a directory of someone's own files is refused now
    try:
        tmp = tempfile.mkdtemp(prefix=_temp_prefix(), suffix=TEMP_SUFFIX, dir=out)
    except OSError as exc:
        raise InputError(f"cannot write into the directory: {exc.strerror or exc}", out) from None
    try:
        made = write_demo(tmp, seed=seed)
        names = sorted(files.values(), key=lambda n: n == MARKER)  # the marker last
        check_demo_dir(out, {n: sha256_of(os.path.join(tmp, n)) for n in names})
        for n in names:
            os.replace(os.path.join(tmp, n), os.path.join(out, n))
    except OSError as exc:
        raise InputError(f"cannot write the demo: {exc.strerror or exc}", out) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {role: type(p)(os.path.join(out, os.path.basename(p))) for role, p in made.items()}


#: The commands, in the order ``rankscope --help`` lists them; all but evaluate and demo
#: live in their modules in ``commands/``.
COMMANDS = ("evaluate", "demo", "calibrate", "compare", "diff", "verdict", "goldens", "plot", "tui")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command: evaluate and demo here, the others from their modules in ``commands/``.
    With ``command`` (the first word of a command line that names one) only that command's
    parser is built: the others' modules (the dashboard's among them) are not imported,
    and that command parses and reports errors exactly as in the full parser."""
    import importlib

    def wanted(name: str) -> bool:
        return command is None or command == name

    p = _Parser(prog=PROG, description="Look inside retrieval rankings: intervals, strata, attribution, fusion, the gate.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    if wanted("evaluate"):
        _evaluate_parser(sub)
    if wanted("demo"):
        _demo_parser(sub)
    for name in COMMANDS[2:]:
        if wanted(name):
            importlib.import_module(f".commands.{name}", __package__).register(sub)
    return p


def _evaluate_parser(sub) -> None:
    ev = sub.add_parser("evaluate", help="metrics with intervals, strata, attribution, fusion and the gate")
    add_loading_options(ev, tables=True)
    add_engine_options(ev)
    ev.add_argument("--out", metavar="report.json", help="write the report (strict JSON, atomic)")
    ev.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    ev.add_argument("--per-query", metavar="FILE.csv", help="one row per (lane, level, positive qid)")
    ev.add_argument("--summary", metavar="FILE.csv|.tsv|.parquet",
                    help="tidy means: one row per lane x level x stratum x measure (mean, low, high, interval, n)")
    ev.add_argument("--per-query-long", metavar="FILE.csv|.tsv|.parquet",
                    help="long per-query values: run, level, query_id, measure, value")
    ev.set_defaults(func=cmd_evaluate)


def _demo_parser(sub) -> None:
    de = sub.add_parser("demo", help="write the built-in synthetic demo data set")
    de.add_argument("--out", required=True, metavar="DIR")
    de.add_argument("--seed", type=int, default=7)
    de.set_defaults(func=cmd_demo)


def process_setup() -> None:
    """Process-wide memory settings for a rankscope run (never applied on a library import)."""
    # pyarrow's default pool (mimalloc) costs more page-fault time on the large numpy
    # arrays that follow a big read (benchmarks/README.md); only a default, set before
    # pyarrow loads, so an explicit ARROW_DEFAULT_MEMORY_POOL wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # numpy asks for transparent huge pages on large arrays; where the kernel then
    # compacts memory on the page fault, a first evaluation measured up to 1 s slower
    # and far more variable (benchmarks/README.md). Read by numpy at import.
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    # numpy's OpenBLAS starts a worker thread per CPU at import, and they spin-wait for a
    # while: about 0.1 s of CPU in every process (half the CPU of `import numpy`), taken
    # from the work's own threads on a busy machine. The kernel makes no BLAS call (no
    # float matrix product, no linalg), so one BLAS thread changes no result. Only a
    # default, set before numpy loads: an explicit OPENBLAS_NUM_THREADS wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .startup import tune_allocator

    tune_allocator()


class StdoutError(InputError):
    """Writing the text output failed (a full disk, a closed or broken stream)."""


class _GuardedStdout:
    """``sys.stdout`` while a command runs: a failed write or flush becomes a
    :class:`StdoutError` (one line, exit 2) instead of a traceback; a reader that went
    away (``| head``) is a :class:`BrokenPipeError` as before."""

    def __init__(self, stream):
        self._stream = stream

    def _guard(self, op, *a):
        try:
            return op(*a)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            raise StdoutError(f"cannot write the output text: {getattr(exc, 'strerror', None) or exc}", "stdout") from None

    def write(self, text):
        return self._guard(self._stream.write, text)

    def flush(self):
        return self._guard(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's own flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


#: Signals that unwind like Ctrl-C (temporary files removed, exit 130): SIGTERM (kill,
#: a service manager) and SIGHUP (the terminal or ssh session closed).
UNWIND_SIGNALS = ("SIGTERM", "SIGHUP")


#: Commands that run to completion and exit: their process may skip the interpreter's
#: teardown once their outputs are in place (``tui`` is interactive and left alone).
BATCH_COMMANDS = ("evaluate", "demo", "calibrate", "compare", "diff", "verdict", "goldens", "plot")


def main(argv: list[str] | None = None) -> int:
    """The ``rankscope`` command: its exit status. Run as the program (``argv`` None), a batch
    command leaves through :func:`_leave` once it returned: its outputs are renamed into
    place and its streams flushed by then, so only the interpreter's teardown is skipped."""
    import gc

    words = sys.argv[1:] if argv is None else list(argv)
    # The run's objects live until it ends: the collector finds no cycle worth its passes
    # over the imported modules' objects, so those are frozen and passes are rarer.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 50_000), *threshold[1:])
    try:
        rc = _main(words)
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
    if argv is None and words and words[0] in BATCH_COMMANDS:
        _leave(rc)
    return rc


def _leave(rc: int) -> None:
    """End the process now with status ``rc``, without the interpreter's teardown (freeing
    every object one by one, hundreds of milliseconds after a large run). Not while a
    tracer or profiler is attached, a thread of ours or a child process still runs, or a
    stream does not flush (then the ordinary exit reports it as before)."""
    import threading

    if sys.gettrace() is not None or sys.getprofile() is not None or threading.active_count() > 1:
        return
    mp = sys.modules.get("multiprocessing")
    if mp is not None and mp.active_children():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(rc)


def _main(words: list[str]) -> int:
    import signal

    process_setup()

    from .kernel.errors import InputError

    def _terminate(signum, frame):  # unwinds like Ctrl-C: temp files are removed
        raise KeyboardInterrupt

    for name in UNWIND_SIGNALS:
        try:
            signal.signal(getattr(signal, name), _terminate)
        except (ValueError, AttributeError):  # not the main thread (e.g. a test runner's worker); no such signal
            pass
    real_stdout = sys.stdout
    try:
        if real_stdout is None or _closed(real_stdout):
            raise StdoutError("stdout is closed; redirect it (> /dev/null) to discard the text output", "stdout")
        sys.stdout = _GuardedStdout(real_stdout)
        parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
        args = parser.parse_args(words)
        rc = int(args.func(args) or 0)
        sys.stdout.flush()
        return rc
    except (InputError, CliError) as exc:
        if isinstance(exc, StdoutError):
            _silence_stdout()
        from .render.escaping import escape_control

        msg = escape_control(" ".join(str(exc).split("\n")))  # a name or path never drives the terminal
        sys.stderr.write(f"{PROG}: error: {msg}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        _silence_stdout()
        return 0
    finally:
        sys.stdout = real_stdout


def _closed(stream) -> bool:
    """Whether stdout is closed (``>&-``): Python then has no stream, or one on a dead descriptor."""
    import io

    try:
        if stream.closed:
            return True
        fd = stream.fileno()
    except io.UnsupportedOperation:  # a stream without a descriptor (a test's capture): open
        return False
    except (OSError, ValueError, AttributeError):
        return True
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


if __name__ == "__main__":
    sys.exit(main())
