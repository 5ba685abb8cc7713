"""`rankscope diff`: did anything change beyond noise between two reports? (SPEC §8)"""

from __future__ import annotations

import sys


def register(sub) -> None:
    from ..kernel.settings import DiffSettings

    d = DiffSettings()
    p = sub.add_parser("diff", help="paired test of every lane/level/metric between two reports")
    p.add_argument("--before", required=True, metavar="A.json")
    p.add_argument("--after", required=True, metavar="B.json")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 on an established regression")
    p.add_argument("--min-delta", type=float, default=d.min_delta)
    p.add_argument("--metric", action="append", default=[], help="only these metrics (repeatable)")
    p.add_argument("--resamples", type=int, default=d.resamples)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--confidence", type=float, default=d.confidence)
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel.diffing import diff_reports
    from ..kernel.output import check_output_path, dumps_strict, write_atomic
    from ..kernel.randomization import check_resamples
    from ..kernel.report import read_report
    from ..kernel.settings import DiffSettings
    from ..render.diff import render_diff

    check_resamples(args.resamples)
    if args.out:
        check_output_path(args.out, [args.before, args.after])
    before, after = read_report(args.before), read_report(args.after)
    for path, report in ((args.before, before), (args.after, after)):
        _check_positives(report, path)
    settings = DiffSettings(metrics=tuple(args.metric), min_delta=args.min_delta, resamples=args.resamples,
                            seed=args.seed, confidence=args.confidence)
    diff = diff_reports(before, after, settings, args.before, args.after)
    sys.stdout.write(render_diff(diff))
    if args.out:
        write_atomic(args.out, dumps_strict(diff.as_dict()))
    return 1 if (diff.regressions and args.fail_on_regression) else 0


def _check_positives(report: dict, path: str) -> None:
    """A report over no positive query holds no per-query value to pair: say so, once."""
    from ..kernel.errors import InputError

    positives = (report.get("summary") or {}).get("positives")
    if positives == 0:
        raise InputError("the report has no positive query (summary.positives = 0): nothing to diff", path)
