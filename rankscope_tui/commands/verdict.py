"""`rankscope verdict`: judge a report against pre-registered rules (SPEC §8)."""

from __future__ import annotations


def register(sub) -> None:
    from ..kernel.inputs.formats import PER_QUERY_FORMATS as FORMATS
    from ..kernel.settings import LoadSettings
    from .options import add_measures_from, lane_arg

    d = LoadSettings()
    p = sub.add_parser("verdict", help="judge a report against rules written before the run")
    p.add_argument("--report", metavar="report.json", help="a report.json (or give --per-query-in)")
    p.add_argument("--per-query-in", action="append", type=lane_arg, default=[], metavar="[NAME=]PATH",
                   help="per-query tables in place of --report (judged on evaluate --per-query-in's report); repeatable")
    p.add_argument("--per-query-format", choices=FORMATS, default=None, help="the format of the per-query tables")
    p.add_argument("--qrels", metavar="PATH", help="with per-query tables: the positive queries of these qrels")
    p.add_argument("--strata", action="append", default=[], metavar="PATH", help="with per-query tables: qid<TAB>label")
    p.add_argument("--resamples", type=int, default=d.resamples, help="with per-query tables: bootstrap resamples")
    p.add_argument("--seed", type=int, default=d.seed, help="with per-query tables")
    p.add_argument("--confidence", type=float, default=d.confidence, help="with per-query tables")
    p.add_argument("--gates", required=True, metavar="gates.json")
    p.add_argument("--on", choices=["interval", "point"], default="interval", help="the column that decides the exit status")
    p.add_argument("--strict", action="store_true", help="an undecided rule fails too")
    p.add_argument("--out", metavar="FILE.json")
    p.add_argument("--format", choices=["text", "github"], default="text",
                   help="github: print the markdown of --step-summary instead of the text")
    p.add_argument("--step-summary", metavar="FILE",
                   help="append the verdict as markdown to FILE (a CI job summary: $GITHUB_STEP_SUMMARY)")
    add_measures_from(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import judge
    from ..kernel.errors import InputError
    from ..kernel.report.output import check_output_path, dumps_strict
    from ..kernel.report.payload import read_report
    from ..render.escaping import terminal_safe
    from ..render.rules import render_verdict
    from .options import CliError, write_with_text

    tables = [p for _, p in args.per_query_in]
    if not args.report and not tables:
        raise CliError("the following arguments are required: --report")
    if args.report and tables:
        raise InputError("give --report or --per-query-in, not both", "--report")
    if not tables:
        given = [flag for flag, v in (("--qrels", args.qrels), ("--strata", args.strata),
                                      ("--per-query-format", args.per_query_format)) if v]
        if given:
            raise InputError(f"{given[0]} is for per-query tables (--per-query-in); a report carries its own", given[0])
    for out in (args.out, args.step_summary):
        if out:
            check_output_path(out, [p for p in (args.report, args.gates, args.qrels) if p] + tables + args.strata)
    if tables:
        from ..kernel import load_tables, table_report
        from ..kernel.settings import LoadSettings

        settings = LoadSettings(resamples=args.resamples, seed=args.seed, confidence=args.confidence)
        report = table_report(load_tables(list(args.per_query_in), settings, qrels=args.qrels, strata=args.strata,
                                          fmt=args.per_query_format))
        where = ", ".join(tables)
    else:
        report, where = read_report(args.report), args.report
    verdict = judge(report, where, args.gates, on=args.on, strict=args.strict, written=tables or [args.report])
    if verdict.errors:  # a rule the report cannot answer is bad input: exit 2, no --out written
        write_with_text([], render_verdict(verdict))
        raise InputError(verdict.errors[0][1] + (f" (and {len(verdict.errors) - 1} more rule(s) not judged)"
                                                 if len(verdict.errors) > 1 else ""))
    outputs: list[tuple[str, str | bytes]] = [(args.out, dumps_strict(verdict.as_dict()))] if args.out else []
    if args.step_summary:
        from ..render.github import appended, verdict_summary

        outputs.append((args.step_summary, appended(args.step_summary, verdict_summary(verdict))))
    if args.format == "github":
        from ..render.github import verdict_summary

        text = terminal_safe(verdict_summary(verdict))
    else:
        text = render_verdict(verdict)
    write_with_text(outputs, text)
    return 1 if verdict.failures else 0
