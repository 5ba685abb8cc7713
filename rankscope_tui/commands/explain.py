"""`rankscope explain QID`: the dashboard's query drill-down as text or markdown (for a CI
log or an issue); ``--largest-losses N`` explains the N queries a candidate lane lost most
on against a baseline lane."""

from __future__ import annotations


def register(sub) -> None:
    from .options import add_loading_options

    p = sub.add_parser("explain", help="one query's drill-down (the Query view) as text or markdown")
    p.add_argument("qid", nargs="?", metavar="QID", help="the query to explain (or give --largest-losses N)")
    add_loading_options(p)
    e = p.add_argument_group("explain")
    e.add_argument("--format", choices=["text", "markdown"], default="text")
    e.add_argument("--rows", type=int, default=10, metavar="N", help="the first N rows of each lane's ranking (default 10)")
    e.add_argument("--largest-losses", type=int, metavar="N",
                   help="explain the N queries the candidate lane lost most on against the baseline lane")
    e.add_argument("--baseline", metavar="LANE", help="--largest-losses: the baseline lane (default: the first of two)")
    e.add_argument("--candidate", metavar="LANE", help="--largest-losses: the candidate lane (default: the second of two)")
    e.add_argument("--metric", metavar="NAME", help="--largest-losses: the metric (default: the first that ranks lanes)")
    e.add_argument("--level", choices=["doc", "group"], default="doc", help="--largest-losses: the level")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import prepare
    from ..kernel.errors import InputError
    from ..render.explain import explain, render
    from .options import CliError, gate_options, load_workspace, write_with_text

    if args.qid is None and args.largest_losses is None:
        raise CliError("give a QID or --largest-losses N")
    if args.qid is not None and args.largest_losses is not None:
        raise CliError("give a QID or --largest-losses N, not both")
    if args.rows < 0:
        raise InputError(f"--rows must be >= 0, not {args.rows}", "--rows")
    if args.largest_losses is not None and args.largest_losses < 1:
        raise InputError(f"--largest-losses must be >= 1, not {args.largest_losses}", "--largest-losses")
    for flag in ("baseline", "candidate", "metric"):
        if getattr(args, flag) is not None and args.largest_losses is None:
            raise CliError(f"--{flag} is for --largest-losses")
    gate = gate_options(args)
    ws, th = prepare(load_workspace(args), args.thresholds)
    if args.qid is not None:
        if args.qid not in ws.qid_index:  # before any other work: one line, exit 2
            raise InputError(f"unknown query id {args.qid!r}: in neither the qrels nor a lane", "QID")
        write_with_text([], render(explain(ws, args.qid, gate, th, args.rows), args.format))
        return 0
    base, cand, metric, losses = largest_losses(ws, args)
    parts = [loss_heading(base, cand, metric, args.level, losses, args.largest_losses, args.format)]
    for i, x in enumerate(losses, 1):
        line = f"loss {i}: query {x.qid}: {base} {x.before:.4f} → {cand} {x.after:.4f} (Δ {x.difference:+.4f})"
        parts.append((f"## {_md(line)}\n\n" if args.format == "markdown" else f"{'=' * 8} {line}\n")
                     + render(explain(ws, x.qid, gate, th, args.rows), args.format))
    from ..render.escaping import terminal_safe

    text = "\n".join(parts)
    write_with_text([], terminal_safe(text) if args.format == "text" else text)
    return 0


def _md(text: str) -> str:
    from ..render.markdown import md_prose

    return md_prose(text)


def largest_losses(ws, args):
    """(baseline, candidate, metric, losses): the kernel's ``largest_losses`` over the positive
    queries on the per-query values of the two lanes at ``--level``."""
    from ..kernel.errors import InputError
    from ..kernel.instruments.diff import largest_losses as losses_of
    from ..kernel.report.caveats import ranks_lanes

    lanes = list(ws.lanes)
    inputs = list(ws.input_lanes)
    base, cand = args.baseline, args.candidate
    if base is None or cand is None:
        if len(inputs) != 2 and (base is None and cand is None):
            raise InputError(f"--largest-losses compares two lanes: name them with --baseline and --candidate "
                             f"({len(inputs)} input lanes: {', '.join(inputs)})", "--largest-losses")
        if base is None:
            base = next(n for n in inputs if n != cand) if len(inputs) == 2 else None
        if cand is None:
            cand = next((n for n in inputs if n != base), None) if len(inputs) == 2 else None
        if base is None or cand is None:
            raise InputError("--largest-losses compares two lanes: name both with --baseline and --candidate", "--largest-losses")
    for flag, name in (("--baseline", base), ("--candidate", cand)):
        if name not in lanes:
            raise InputError(f"no lane {name!r} (the lanes: {', '.join(lanes)})", flag)
    if base == cand:
        raise InputError("--baseline and --candidate name the same lane", "--candidate")
    if args.level not in ws.levels():
        raise InputError(f"no {args.level} level here (the levels: {', '.join(ws.levels())}; "
                         "the group level needs --group-sep)", "--level")
    keys = [m.key for m in ws.settings.metrics]
    metric = args.metric or next((k for k in keys if ranks_lanes(k)), None)
    if metric not in keys:
        raise InputError(f"no metric {metric!r} in this evaluation (the metrics: {', '.join(keys)})", "--metric")
    pos = ws.positives
    qids = [str(ws.qids[int(q)]) for q in pos]
    b = ws.per_query(base, args.level)[metric][pos]
    c = ws.per_query(cand, args.level)[metric][pos]
    return base, cand, metric, losses_of(qids, b, c, args.largest_losses)


def loss_heading(base: str, cand: str, metric: str, level: str, losses, n: int, fmt: str) -> str:
    what = (f"the {len(losses)} largest loss{'es' if len(losses) != 1 else ''} of {cand} against {base} on "
            f"{metric} ({level} level, positive queries)" + ("" if len(losses) == n else f"; fewer than {n} queries lost"))
    return f"# {_md(what)}\n" if fmt == "markdown" else what + "\n"
