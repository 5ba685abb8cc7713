"""`rankscope diff`: did anything change beyond noise between two reports? (SPEC §8)"""

from __future__ import annotations


def register(sub) -> None:
    from ..kernel.inputs.formats import PER_QUERY_FORMATS as FORMATS
    from ..kernel.settings import DiffSettings
    from .options import lane_arg

    d = DiffSettings()

    p = sub.add_parser("diff", help="paired test of every lane/level/metric between two reports")
    p.add_argument("--before", metavar="A.json", help="a report.json (or give --before-per-query-in)")
    p.add_argument("--after", metavar="B.json", help="a report.json (or give --after-per-query-in)")
    for side in ("before", "after"):
        p.add_argument(f"--{side}-per-query-in", action="append", type=lane_arg, default=[], metavar="[NAME=]PATH",
                       help=f"per-query tables in place of --{side} (as evaluate --per-query-in); repeatable")
    p.add_argument("--per-query-format", choices=FORMATS, default=None, help="the format of the per-query tables")
    p.add_argument("--qrels", metavar="PATH", help="with per-query tables: compare the positive queries of these qrels")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 on an established regression")
    p.add_argument("--min-delta", type=float, default=d.min_delta)
    p.add_argument("--metric", action="append", default=[], help="only these metrics (repeatable)")
    p.add_argument("--resamples", type=int, default=d.resamples)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--confidence", type=float, default=d.confidence)
    p.add_argument("--out", metavar="FILE.json")
    p.add_argument("--format", choices=["text", "github"], default="text",
                   help="github: print the markdown of --step-summary instead of the text")
    p.add_argument("--step-summary", metavar="FILE",
                   help="append the diff as markdown to FILE (a CI job summary: $GITHUB_STEP_SUMMARY)")
    p.add_argument("--losses", type=int, default=5, metavar="N",
                   help="--step-summary: the N largest-loss queries of each regression (default 5)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import diff
    from ..kernel.errors import InputError
    from ..kernel.report.output import check_output_path, dumps_strict
    from ..kernel.settings import DiffSettings
    from ..render.diff import render_diff
    from ..render.escaping import terminal_safe
    from .options import CliError, write_with_text

    # first, as a setting out of range (--resamples 5) was always named before anything else
    settings = DiffSettings(metrics=tuple(args.metric), min_delta=args.min_delta, resamples=args.resamples,
                            seed=args.seed, confidence=args.confidence)
    missing = [f"--{side}" for side in ("before", "after") if not getattr(args, side)
               and not getattr(args, f"{side}_per_query_in")]
    if missing:
        raise CliError(f"the following arguments are required: {', '.join(missing)}")
    tables = [p for side in ("before", "after") for _, p in getattr(args, f"{side}_per_query_in")]
    if args.losses < 0:
        raise InputError(f"--losses must be >= 0, not {args.losses}", "--losses")
    inputs = [p for p in (args.before, args.after, args.qrels) if p] + tables
    for out in (args.out, args.step_summary):
        if out:
            check_output_path(out, inputs)
    if (args.qrels or args.per_query_format) and not tables:
        raise InputError(f"{'--qrels' if args.qrels else '--per-query-format'} is for per-query tables "
                         "(--before-per-query-in, --after-per-query-in); a report carries its own", "--qrels")
    (before, before_path), (after, after_path) = (_report_of(args, side) for side in ("before", "after"))
    for path, report in ((before_path, before), (after_path, after)):
        _check_positives(report, path)
    result = diff(before, after, settings, before_path, after_path)
    outputs: list[tuple[str, str | bytes]] = [(args.out, dumps_strict(result.as_dict()))] if args.out else []
    if args.step_summary:
        from ..render.github import appended, diff_summary

        outputs.append((args.step_summary, appended(args.step_summary, diff_summary(result, before, after, args.losses))))
    if args.format == "github":
        from ..render.github import diff_summary

        text = terminal_safe(diff_summary(result, before, after, args.losses))
    else:
        text = render_diff(result)
    write_with_text(outputs, text)
    return 1 if (result.regressions and args.fail_on_regression) else 0


def _report_of(args, side: str) -> tuple[dict, str]:
    """(report, where) of one side: ``--SIDE report.json``, or the report of
    ``--SIDE-per-query-in`` tables (``evaluate --per-query-in``'s, no resampling: diff reads
    only the per-query values)."""
    from ..kernel import load_tables, table_report
    from ..kernel.errors import InputError
    from ..kernel.report.payload import read_report
    from ..kernel.settings import LoadSettings

    path, tables = getattr(args, side), getattr(args, f"{side}_per_query_in")
    if path and tables:
        raise InputError(f"give --{side} or --{side}-per-query-in, not both", f"--{side}")
    if path:
        return read_report(path), path
    ws = load_tables(list(tables), LoadSettings(resamples=0), qrels=args.qrels, fmt=args.per_query_format)
    return table_report(ws), ", ".join(p for _, p in tables)


def _check_positives(report: dict, path: str) -> None:
    """A report over no positive query holds no per-query value to pair: say so, once."""
    from ..kernel.errors import InputError

    positives = (report.get("summary") or {}).get("positives")
    if positives == 0:
        raise InputError("the report has no positive query (summary.positives = 0): nothing to diff", path)
