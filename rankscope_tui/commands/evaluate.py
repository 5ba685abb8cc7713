"""`rankscope evaluate`: metrics with intervals, strata, attribution, fusion and the gate."""

from __future__ import annotations

import sys
from typing import Any

from .options import (
    StageProgress,
    add_engine_options,
    add_fusion_options,
    add_loading_options,
    engine_settings,
    gate_options,
    input_paths,
    load_tables,
    load_workspace,
    run_buckets,
    write_with_text,
)


def register(sub) -> None:
    ev = sub.add_parser("evaluate", help="metrics with intervals, strata, attribution, fusion and the gate")
    add_loading_options(ev, tables=True)
    add_fusion_options(ev)
    add_engine_options(ev)
    ev.add_argument("--out", metavar="report.json", help="write the report (strict JSON, atomic)")
    ev.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    ev.add_argument("--wide", action="store_true",
                    help="text: one line per lane and level with every metric (the text otherwise fits the terminal's "
                         "width, or 80 columns when stdout is not a terminal)")
    ev.add_argument("--per-query", metavar="FILE.csv", help="one row per (lane, level, positive qid)")
    ev.add_argument("--summary", metavar="FILE.csv|.tsv|.parquet",
                    help="tidy means: one row per run x level x stratum x measure (value, low, high, method, n, note)")
    ev.add_argument("--per-query-long", metavar="FILE.csv|.tsv|.parquet",
                    help="long per-query values: run, level, query_id, measure, value")
    ev.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import evaluate as evaluate_report
    from ..kernel.report.output import check_outputs, dumps_strict_parts
    from ..render import report as R
    from ..render import tidy

    for option, path in (("--summary", args.summary), ("--per-query-long", args.per_query_long)):
        if path:
            tidy.check_suffix(path, option)
    check_outputs([("--out", args.out), ("--per-query", args.per_query), ("--summary", args.summary),
                   ("--per-query-long", args.per_query_long)], input_paths(args))
    engine = engine_settings(args)
    if args.per_query_in:
        return evaluate_tables(args)
    if engine.bucketed:
        from ..kernel import report_of

        ws, plan, engine = run_buckets(args, engine)
        report = report_of(ws, gate_options(args), plan.thresholds)
        report["inputs"]["settings"]["engine"] = engine.as_dict()
    else:
        progress = StageProgress()
        ws = load_workspace(args)
        progress.done(f"loaded {len(ws.input_lanes)} lane(s), {sum(ws.lanes[n].n_rows for n in ws.input_lanes):,} hits")
        report = evaluate_report(ws, gate_options(args), thresholds_path=args.thresholds)
        progress.done("computed the report")
    # the renderers are imported once the inputs are read: they bring the statistics'
    # imports (scipy), whose memory the input size limit would otherwise not count
    from ..render.formats import render_report, text_width

    text = render_report(report, args.format, None if args.wide else text_width(sys.stdout))
    payloads: list[tuple[str, str | bytes | list[Any]]] = []
    if args.out:
        payloads.append((args.out, dumps_strict_parts(report)))
    if args.per_query:
        payloads.append((args.per_query, R.per_query_csv(report)))
    payloads += tidy_payloads(args, report)
    write_with_text(payloads, text)  # all or nothing, the text before the files are renamed into place
    return 0


def evaluate_tables(args) -> int:
    """``evaluate --per-query-in``: the interval tables per run, level and stratum of values
    computed elsewhere; what needs rankings is said, never silently left out."""
    from ..kernel import table_report
    from ..kernel.report.output import dumps_strict_parts
    from ..kernel.workspace.per_query_tables import NOT_AVAILABLE
    from ..render import report as R
    from ..render.formats import render_report, text_width

    report = table_report(load_tables(args))
    head = f"per-query tables: {', '.join(t['path'] for t in report['inputs']['per_query_tables'])}\n"
    head += f"not computed: {NOT_AVAILABLE}\n"
    for note in report["summary"]["notes"]:
        head += f"note: {note}\n"
    from ..render.escaping import escape_markdown, terminal_safe

    if args.format == "markdown":
        head = "".join(f"*{escape_markdown(line)}*\n\n" for line in head.splitlines())
    elif args.format == "latex":  # comments: the table compiles as before
        head = "".join(f"% {line}\n" for line in head.splitlines())

    text = terminal_safe(head) + render_report(report, args.format, None if args.wide else text_width(sys.stdout))  # a path never drives the terminal
    payloads: list[tuple[str, str | bytes | list[Any]]] = [(args.out, dumps_strict_parts(report))] if args.out else []
    if args.per_query:
        payloads.append((args.per_query, R.per_query_csv(report)))
    payloads += tidy_payloads(args, report)
    write_with_text(payloads, text)
    return 0


def tidy_payloads(args, report: dict) -> list[tuple[str, bytes]]:
    """``--summary`` and ``--per-query-long`` of a report (``render.tidy``)."""
    from ..render import tidy

    out = []
    if args.summary:
        out.append((args.summary, tidy.tidy_bytes(tidy.summary_rows(report), tidy.SUMMARY_COLUMNS, args.summary)))
    if args.per_query_long:
        out.append((args.per_query_long, tidy.tidy_bytes(tidy.long_rows(report), tidy.LONG_COLUMNS, args.per_query_long)))
    return out

