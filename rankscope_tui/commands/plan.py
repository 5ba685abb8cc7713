"""`rankscope plan`: the queries a study needs, from a pilot (topic set size design, Sakai 2016)."""

from __future__ import annotations

import sys


def register(sub) -> None:
    from ..kernel.settings import PlanSettings
    from .options import add_loading_options

    d = PlanSettings()
    p = sub.add_parser("plan", help="how many queries a study needs to establish a difference, from a pilot")
    add_loading_options(p, tables=True)
    p.add_argument("--baseline", default=None, help="the pilot's baseline lane (default: the first)")
    p.add_argument("--candidate", default=None, help="the pilot's candidate lane (default: the second)")
    p.add_argument("--metric", default=d.metric, help=f"the metric the study will test (default {d.metric})")
    p.add_argument("--level", choices=["doc", "group"], default=d.level)
    p.add_argument("--delta", action="append", type=float, default=[], metavar="D",
                   help="a target difference worth detecting; repeatable (default: the pilot's observed |mean delta|)")
    p.add_argument("--power", action="append", type=float, default=[], metavar="P",
                   help="a target power; repeatable (default 0.8)")
    p.add_argument("--family-size", type=int, default=d.family_size, metavar="J",
                   help="tests in the planned family: each is planned at alpha/J (Bonferroni; default 1)")
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default=d.alternative)
    p.add_argument("--unit", default=None, metavar="FILE",
                   help="qid<TAB>unit: plan units (queries of one unit count once), and the queries they hold")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import plan_queries, prepare
    from ..kernel.report.output import check_outputs, dumps_strict, write_outputs
    from ..kernel.settings import PlanSettings
    from ..render.escaping import terminal_safe
    from ..render.plan import render_plan
    from .options import UNUSED_ATTRIBUTION_OPTIONS, UNUSED_GATE_OPTIONS, input_paths, load_workspace, refuse_unused_options

    settings = PlanSettings(baseline=args.baseline, candidate=args.candidate, metric=args.metric, level=args.level,
                            deltas=tuple(args.delta), powers=tuple(args.power) or (0.8,),
                            family_size=args.family_size, confidence=args.confidence,
                            alternative=args.alternative, units=args.unit)
    refuse_unused_options(args, "plan", UNUSED_GATE_OPTIONS, "the gate (evaluate and calibrate do)")
    refuse_unused_options(args, "plan", UNUSED_ATTRIBUTION_OPTIONS, "miss attribution (evaluate does)")
    check_outputs([("--out", args.out)], input_paths(args) + ([args.unit] if args.unit else []))
    ws = load_workspace(args)
    if not args.per_query_in:
        ws, _ = prepare(ws, args.thresholds)
    plan = plan_queries(ws, settings)
    text = render_plan(plan, args.format)
    write_outputs([(args.out, dumps_strict(plan.as_dict()))] if args.out else [])
    sys.stdout.write(terminal_safe(text))
    return 0
