"""`rankscope compare`: paired comparisons with the one verdict algorithm (SPEC §7)."""

from __future__ import annotations

import sys
from typing import Any


def register(sub) -> None:
    from ..kernel.settings import CompareSettings
    from .options import add_engine_options, add_fusion_options, add_loading_options

    d = CompareSettings()
    p = sub.add_parser("compare", help="paired tests: is the candidate better than the baseline?")
    add_loading_options(p, tables=True)
    add_fusion_options(p)
    add_engine_options(p)
    p.add_argument("--baseline", default=None, help="a lane (default: the first --lane), or 'best' (exploratory)")
    p.add_argument("--candidate", action="append", default=[],
                   help="a lane, rrf or convex; repeatable (default: every other input lane; rrf and convex only when named)")
    p.add_argument("--metric", action="append", default=[], help="repeatable; default ndcg@10")
    p.add_argument("--level", choices=["doc", "group"], default=d.level)
    p.add_argument("--min-delta", type=float, default=d.min_delta, help="smallest mean delta worth calling better")
    p.add_argument("--correction", choices=["holm", "bonferroni", "none"], default=d.correction)
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default=d.alternative)
    p.add_argument("--test", choices=["randomization", "t", "bootstrap"], default=d.test,
                   help="the deciding test (default randomization; bootstrap: the null-centred paired bootstrap test); "
                        "the t-test or the randomization test beside it is reported as an agreement flag")
    p.add_argument("--unit", default=None, metavar="FILE",
                   help="qid<TAB>unit: queries of one unit (variants of a topic) count once; statistics run on unit means")
    p.add_argument("--seed-runs", action="store_true",
                   help="lanes named SYSTEM@SEED are runs of SYSTEM retrained under SEED: adds the retraining column")
    p.add_argument("--shared-seeds", action="store_true",
                   help="with --seed-runs: the seed controls something both systems share, so pair runs by seed")
    p.add_argument("--exploratory", action="store_true", help="label every row exploratory (chosen after seeing results)")
    p.add_argument("--primary", default=None, metavar="METRIC", help="only this metric's rows form the tested family")
    p.add_argument("--all-pairs", action="store_true",
                   help="the randomised Tukey HSD over every pair of lanes on one metric, with a letters table")
    p.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    p.add_argument("--log", metavar="FILE", help="append this call to a log of comparisons on the same qrels")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import append_comparison_log, compare, prepare, read_comparison_log
    from ..kernel.errors import InputError
    from ..kernel.report.output import StagedOutputs, check_outputs, dumps_strict_parts
    from ..render.compare import log_reuse_line
    from ..render.formats import render_compare
    from ..render.sentences import with_sentences
    from .options import UNUSED_ATTRIBUTION_OPTIONS, UNUSED_GATE_OPTIONS, engine_settings, input_paths, load_workspace, refuse_unused_options, run_buckets

    settings = compare_settings(args)  # first: a setting out of range (--min-delta -1) is named before any file is read
    refuse_unused_options(args, "compare", UNUSED_GATE_OPTIONS, "the gate (evaluate and calibrate do)")
    refuse_unused_options(args, "compare", UNUSED_ATTRIBUTION_OPTIONS, "miss attribution (evaluate does)")
    check_outputs([("--out", args.out), ("--log", args.log)], input_paths(args) + ([args.unit] if args.unit else []))
    if args.log:
        read_comparison_log(args.log)  # a log that is not one is refused before any work
    engine = engine_settings(args)
    if engine.bucketed:
        if not args.lane:
            raise InputError("at least one --lane is needed", "--lane")
        ws, plan, engine = run_buckets(args, engine, metrics=settings.metrics)
        th = plan.thresholds
    elif args.per_query_in:  # values computed elsewhere: no derived lanes, no thresholds
        if args.log and not args.qrels:
            raise InputError("--log with --per-query-in needs --qrels (the log counts calls on one qrels file)", "--log")
        ws, th = load_workspace(args), None
    else:
        if not args.lane:
            raise InputError("at least one --lane is needed", "--lane")
        ws = load_workspace(args)
        ws, th = prepare(ws, args.thresholds)
    if args.all_pairs:
        return run_all_pairs(args, ws, th, settings, engine)
    comparison = compare(ws, th, settings)
    payload = with_engine(with_sentences(comparison.as_dict()), engine)
    text = render_compare(comparison, args.format)
    if args.per_query_in and args.format == "text":
        text = tables_header(ws) + text
    out: list[tuple[str, str | bytes | list[Any]]] = [(args.out, dumps_strict_parts(payload))] if args.out else []
    # --out's temporary file is complete before the log is appended to, and renamed
    # only after the append worked: a failure of either leaves both as they were
    with StagedOutputs(out) as outs:
        if args.log:
            assert comparison.qrels_sha256 is not None  # --log requires --qrels (checked with the options)
            before = append_comparison_log(args.log, comparison.qrels_sha256, payload)
            text += log_reuse_line(before, comparison.qrels_sha256)
        try:  # the text first: a stdout that fails leaves --out as it was (the log line is already appended)
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            outs.commit()
            raise
        outs.commit()
    return 0


def compare_settings(args):
    """``kernel.settings.CompareSettings`` of the command line (resamples, seed and
    confidence: the workspace's, from --resamples, --seed, --confidence)."""
    from ..kernel.settings import CompareSettings

    metrics: dict[str, Any] = {"metrics": tuple(args.metric)} if args.metric else {}  # none given: the default
    return CompareSettings(
        baseline=args.baseline, candidates=tuple(args.candidate), level=args.level, min_delta=args.min_delta,
        correction=args.correction, alternative=args.alternative, test=args.test, units=args.unit,
        seed_runs=args.seed_runs, shared_seeds=args.shared_seeds, exploratory=args.exploratory, primary=args.primary,
        **metrics,
    )


def with_engine(payload: dict, engine) -> dict:
    """The payload with its settings naming the engine, when the work ran in query buckets
    (the in-memory payload is left as it is, byte for byte)."""
    if engine.bucketed:
        payload["settings"] = {**payload["settings"], "engine": engine.as_dict()}
    return payload


#: compare options --all-pairs does not use, with their defaults: given, they are refused
#: (the Tukey HSD holds the family-wise rate itself and has no baseline, primary or min-delta)
_NOT_WITH_ALL_PAIRS = (("--correction", "correction", "holm"), ("--primary", "primary", None),
                       ("--min-delta", "min_delta", 0.0), ("--exploratory", "exploratory", False),
                       ("--log", "log", None), ("--seed-runs", "seed_runs", False),
                       ("--shared-seeds", "shared_seeds", False))


def run_all_pairs(args, ws, th, settings, engine) -> int:
    from ..kernel import compare_all_pairs
    from ..kernel.errors import InputError
    from ..kernel.instruments.compare import ALL_PAIRS_SCHEMA
    from ..kernel.report.output import dumps_strict
    from ..render.tukey import render_all_pairs
    from .options import write_with_text

    for flag, attr, default in _NOT_WITH_ALL_PAIRS:
        if getattr(args, attr) != default:
            raise InputError("does not apply to --all-pairs (the randomised Tukey HSD controls the family-wise "
                             "rate over every pair itself)", flag)
    result = compare_all_pairs(ws, th, settings)
    text = render_all_pairs(result, args.format)
    payload = {"schema": ALL_PAIRS_SCHEMA, **result.as_dict()}
    write_with_text([(args.out, dumps_strict(with_engine(payload, engine)))] if args.out else [], text)
    return 0


def tables_header(ws) -> str:
    """What ``compare --per-query-in`` says before its table: the tables read, what a table
    cannot give, the notes (rows skipped, measures left out) and the input warnings."""
    from ..render.escaping import terminal_safe
    from ..render.report import warning_line

    lines = [f"per-query tables: {', '.join(t.path for t in ws.tables)} ({ws.n_queries} queries"
             + (", the positives of --qrels)" if ws.qrels_sha256 else
                ": every query of the tables; --qrels compares its positive queries, as compare on the runs does)"),
             "not shown: the judged@10 of the largest losses and gains (it needs the rankings)"]
    lines += [f"note: {n}" for n in ws.notes] + [warning_line(w.as_dict()) for w in ws.warnings]
    return terminal_safe("\n".join(lines) + "\n\n")  # a path never drives the terminal
