"""`rankscope agree`: two sets of labels for the same pairs (κ, systems under both, PPI)."""

from __future__ import annotations


def _grades(text: str) -> tuple[int, int]:
    import argparse

    lo, sep, hi = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(lo), int(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO:HI (two integers), got {text!r}") from None


def register(sub) -> None:
    from ..kernel.inputs.formats import QRELS_FORMATS, RUN_FORMATS
    from ..kernel.settings import DEFAULT_CONFIDENCE, DEFAULT_METRIC, DEFAULT_RESAMPLES, DEFAULT_SEED, AgreeSettings
    from .options import lane_arg

    d = AgreeSettings()
    p = sub.add_parser("agree", help="two sets of labels for the same pairs: kappa, the systems under both, PPI means")
    p.add_argument("runs", nargs="*", type=lane_arg, metavar="RUN",
                   help="[NAME=]PATH of a run: its means under both labels (also --lane)")
    p.add_argument("--lane", action="append", type=lane_arg, default=[], metavar="[NAME=]PATH",
                   help="a run, as evaluate takes it; repeatable")
    p.add_argument("--qrels", required=True, metavar="A", help="the reference labels (e.g. people's)")
    p.add_argument("--qrels-b", required=True, metavar="B", help="the other labels of the same pairs (e.g. a model's)")
    p.add_argument("--strata", action="append", default=[], metavar="PATH",
                   help="qid<TAB>label: agreement per stratum; repeatable")
    p.add_argument("--weights", choices=["linear", "quadratic"], default=d.weights,
                   help=f"the weighted kappa the strata table shows (default {d.weights}; the kappa table has both)")
    p.add_argument("--grades", type=_grades, default=None, metavar="LO:HI",
                   help="declare the common grade scale (default: both qrels must use the same lowest and highest grade)")
    p.add_argument("--ppi", action="store_true",
                   help="A labels a random subset of B's pairs: prediction-powered means of each run over B's queries")
    p.add_argument("--metrics", default=None, help=f"comma list of measures for the runs (default {DEFAULT_METRIC})")
    p.add_argument("--relevant", type=int, default=1, help="a doc is relevant when grade >= this (default 1)")
    p.add_argument("--depth", type=int, default=None, help="cut every run to its first D hits")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                   help="bootstrap resamples of queries for the kappa intervals; 0 skips them")
    p.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE)
    p.add_argument("--qrels-format", choices=QRELS_FORMATS, default="auto", help="the format of both qrels")
    p.add_argument("--run-format", choices=RUN_FORMATS, default="auto", help="the format of every run")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    p.add_argument("--out", metavar="FILE.json", help="write the result (strict JSON, atomic)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import agree
    from ..kernel.inputs.formats import InputOptions, shard_paths
    from ..kernel.measures import parse_metrics
    from ..kernel.report.output import check_outputs, dumps_strict
    from ..kernel.settings import DEFAULT_METRIC, AgreeSettings, LoadSettings
    from ..render.agree import render_agree
    from ..render.escaping import terminal_safe
    from .options import write_with_text

    names = [m.strip() for m in (args.metrics if args.metrics is not None else DEFAULT_METRIC).split(",") if m.strip()]
    settings = AgreeSettings(weights=args.weights, ppi=args.ppi, grades=args.grades, metrics=tuple(names))
    load = LoadSettings(metrics=tuple(parse_metrics(",".join(settings.metrics))), depth=args.depth,
                        relevant=args.relevant, seed=args.seed, resamples=args.resamples, confidence=args.confidence,
                        inputs=InputOptions(run_format=args.run_format, qrels_format=args.qrels_format))
    lanes = list(args.lane) + list(args.runs)
    inputs = [args.qrels, args.qrels_b, *args.strata] + [p for _, spec in lanes for p in shard_paths(spec)]
    check_outputs([("--out", args.out)], inputs)
    result = agree(args.qrels, args.qrels_b, settings, load, lanes, args.strata).as_dict()
    text = terminal_safe(render_agree(result, args.format))
    write_with_text([(args.out, dumps_strict(result))] if args.out else [], text)
    return 0
