"""`rankscope compare`: paired comparisons with the one verdict algorithm (SPEC §7)."""

from __future__ import annotations

import json
import os
import sys
import time


def register(sub) -> None:
    from ..cli import add_loading_options

    p = sub.add_parser("compare", help="paired tests: is the candidate better than the baseline?")
    add_loading_options(p)
    p.add_argument("--baseline", default=None, help="a lane (default: the first --lane), or 'best' (exploratory)")
    p.add_argument("--candidate", action="append", default=[], help="a lane, rrf or convex; repeatable (default: every other lane)")
    p.add_argument("--metric", action="append", default=[], help="repeatable; default ndcg@10")
    p.add_argument("--level", choices=["doc", "group"], default="doc")
    p.add_argument("--min-delta", type=float, default=0.0, help="smallest mean delta worth calling better")
    p.add_argument("--correction", choices=["holm", "bonferroni", "none"], default="holm")
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default="two-sided")
    p.add_argument("--exploratory", action="store_true", help="label every row exploratory (chosen after seeing results)")
    p.add_argument("--primary", default=None, metavar="METRIC", help="only this metric's rows form the tested family")
    p.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    p.add_argument("--log", metavar="FILE", help="append this call to a log of comparisons on the same qrels")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..cli import input_paths, load_workspace
    from ..kernel.output import check_output_path, dumps_strict, write_atomic
    from ..kernel.pipeline import plan_compare, prepare, run_compare
    from ..kernel.render import render_compare

    for p in (args.out, args.log):
        if p:
            check_output_path(p, input_paths(args))
    if not args.lane:
        from ..kernel.errors import InputError

        raise InputError("at least one --lane is needed", "--lane")
    ws = load_workspace(args)
    ws, th = prepare(ws, args.thresholds)
    metrics = args.metric or ["ndcg@10"]
    plan = plan_compare(ws, th, args.baseline, args.candidate, metrics, args.level, args.exploratory)
    result = run_compare(ws, plan, resamples=args.resamples, seed=args.seed, confidence=args.confidence,
                         alternative=args.alternative, correction=args.correction, primary=args.primary,
                         min_delta=args.min_delta)
    qrels_sha = next(f.sha256 for f in ws.inputs if f.role == "qrels")
    before = _log_count(args.log, qrels_sha) if args.log else None
    payload = result.as_dict(reasons=True)
    payload["settings"].update({
        "baseline": plan.baseline, "level": plan.level, "resamples": args.resamples, "seed": args.seed,
        "alternative": args.alternative, "exploratory_reasons": dict(plan.exploratory_reasons),
        "queries": int(ws.positives.size), "qrels_sha256": qrels_sha,
    })
    text = render_compare(result, args.format, plan.exploratory_reasons)
    if before is not None:
        text += (f"{before} earlier comparison call(s) were logged on these test queries (qrels sha256 {qrels_sha[:12]}…); "
                 "reusing test queries is multiple testing\n")
    if args.out:
        write_atomic(args.out, dumps_strict(payload))
    if args.log:
        _append_log(args.log, qrels_sha, payload)
    sys.stdout.write(text)
    return 0


def _log_count(path: str, qrels_sha: str) -> int:
    if not os.path.exists(path):
        return 0
    n = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                if json.loads(line).get("qrels_sha256") == qrels_sha:
                    n += 1
            except json.JSONDecodeError:
                continue
    return n


def _append_log(path: str, qrels_sha: str, payload: dict) -> None:
    from ..kernel.output import write_atomic

    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "qrels_sha256": qrels_sha,
             "rows": [{k: r[k] for k in ("baseline", "candidate", "metric", "randomization_p", "verdict")} for r in payload["comparisons"]]}
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    write_atomic(path, old + json.dumps(entry, allow_nan=False) + "\n")
