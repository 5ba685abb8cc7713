"""`rankscope diff`: did anything change beyond noise between two reports? (SPEC §8)"""

from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("diff", help="paired test of every lane/level/metric between two reports")
    p.add_argument("--before", required=True, metavar="A.json")
    p.add_argument("--after", required=True, metavar="B.json")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 on an established regression")
    p.add_argument("--min-delta", type=float, default=0.0)
    p.add_argument("--metric", action="append", default=[], help="only these metrics (repeatable)")
    p.add_argument("--resamples", type=int, default=9999)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel.compare import check_resamples, diff_rows
    from ..kernel.diffing import comparable, diff_inputs
    from ..kernel.output import check_output_path, dumps_strict, write_atomic
    from .verdict import load_report

    check_resamples(args.resamples)
    if args.out:
        check_output_path(args.out, [args.before, args.after])
    before, after = load_report(args.before), load_report(args.after)
    comparable(before, after, args.before, args.after)
    items = diff_inputs(before, after, args.metric, args.before, args.after)
    rows = diff_rows(items, resamples=args.resamples, seed=args.seed, confidence=args.confidence, min_delta=args.min_delta)
    out = sys.stdout
    header = f"{'lane':14} {'level':6} {'metric':11} {'n':>5} {'before':>8} {'after':>8} {'delta':>8} {'p':>8} {'adj p':>8}  status"
    out.write(header + "\n")
    for r in rows:
        status = "REGRESSION" if r.regression else "improvement" if r.improvement else "no change shown"
        p = "n/a" if r.randomization_p is None else f"{r.randomization_p:.4f}"
        ap = "n/a" if r.adjusted_p is None else f"{r.adjusted_p:.4f}"
        out.write(f"{r.lane:14} {r.level:6} {r.metric:11} {r.n:5d} {r.before_mean:8.4f} {r.after_mean:8.4f} "
                  f"{r.difference:+8.4f} {p:>8} {ap:>8}  {status}\n")
    regressions = [r for r in rows if r.regression]
    out.write(f"{len(rows)} rows tested (Holm over the rows); {len(regressions)} established regression(s)\n")
    if args.out:
        write_atomic(args.out, dumps_strict({"schema": "rankscope.diff/1", "before": args.before, "after": args.after,
                                             "resamples": args.resamples, "seed": args.seed, "confidence": args.confidence,
                                             "min_delta": args.min_delta, "correction": "holm",
                                             "rows": [r.as_dict() for r in rows], "regressions": len(regressions)}))
    return 1 if (regressions and args.fail_on_regression) else 0
