"""`rankscope pool --budget N`: the unjudged pairs to judge next (``kernel.instruments.pool``)."""

from __future__ import annotations


def register(sub) -> None:
    from ..kernel.settings import PoolSettings
    from .options import add_loading_options

    p = sub.add_parser("pool", help="the unjudged (query, doc) pairs whose judgment would narrow the bounds most")
    add_loading_options(p)
    p.add_argument("--budget", type=int, default=PoolSettings.budget, metavar="N",
                   help=f"pairs to suggest (default {PoolSettings.budget})")
    p.add_argument("--pool-lane", action="append", default=[], metavar="NAME",
                   help="a lane whose top k the pairs come from; repeatable (default: every --lane)")
    p.add_argument("--out", metavar="FILE", help="the pairs to judge as TREC qrels lines 'qid 0 docid -1'")
    p.add_argument("--json", metavar="FILE.json", help="the suggestion and its per-lane summary as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import suggest_pool as suggest
    from ..kernel.errors import SettingError
    from ..kernel.report.output import check_outputs, dumps_strict
    from ..kernel.settings import PoolSettings
    from ..render.escaping import terminal_safe
    from ..render.pool import render_pool
    from .options import (
        UNUSED_ATTRIBUTION_OPTIONS,
        UNUSED_GATE_OPTIONS,
        in_flags,
        input_paths,
        load_workspace,
        refuse_unused_options,
        write_with_text,
    )

    try:
        settings = PoolSettings(budget=args.budget, lanes=tuple(args.pool_lane))
    except SettingError as exc:
        raise in_flags(exc) from None
    refuse_unused_options(args, "pool", UNUSED_GATE_OPTIONS, "the gate (evaluate and calibrate do)")
    refuse_unused_options(args, "pool", UNUSED_ATTRIBUTION_OPTIONS, "miss attribution (evaluate does)")
    check_outputs([("--out", args.out), ("--json", args.json)], input_paths(args))
    ws = load_workspace(args)
    result = suggest(ws, settings)
    payloads = []
    if args.out:
        payloads.append((args.out, result.qrels_text()))
    if args.json:
        payloads.append((args.json, dumps_strict(result.as_dict())))
    write_with_text(payloads, terminal_safe(render_pool(result, args.out)))
    return 0
