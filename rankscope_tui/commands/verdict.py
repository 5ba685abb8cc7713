"""`rankscope verdict`: judge a report against pre-registered rules (SPEC §8)."""

from __future__ import annotations

import sys



def register(sub) -> None:
    p = sub.add_parser("verdict", help="judge a report against rules written before the run")
    p.add_argument("--report", required=True, metavar="report.json")
    p.add_argument("--gates", required=True, metavar="gates.json")
    p.add_argument("--on", choices=["interval", "point"], default="interval", help="the column that decides the exit status")
    p.add_argument("--strict", action="store_true", help="an undecided rule fails too")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel.output import check_output_path, dumps_strict, write_atomic
    from ..kernel.report import read_report
    from ..kernel.rules import judge_gates
    from ..render.rules import render_verdict

    if args.out:
        check_output_path(args.out, [args.report, args.gates])
    report = read_report(args.report)
    verdict = judge_gates(report, args.report, args.gates, on=args.on, strict=args.strict)
    sys.stdout.write(render_verdict(verdict))
    if args.out:
        write_atomic(args.out, dumps_strict(verdict.as_dict()))
    return 1 if verdict.failures else 0
