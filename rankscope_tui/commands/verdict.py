"""`rankscope verdict`: judge a report against pre-registered rules (SPEC §8)."""

from __future__ import annotations

import sys

from ..kernel.rules import git_state


def register(sub) -> None:
    p = sub.add_parser("verdict", help="judge a report against rules written before the run")
    p.add_argument("--report", required=True, metavar="report.json")
    p.add_argument("--gates", required=True, metavar="gates.json")
    p.add_argument("--on", choices=["interval", "point"], default="interval", help="the column that decides the exit status")
    p.add_argument("--strict", action="store_true", help="an undecided rule fails too")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def load_report(path: str) -> dict:
    from ..kernel.errors import InputError
    from ..kernel.files import load_json, read_text

    report = load_json(read_text(path), path)
    if not isinstance(report, dict) or not str(report.get("schema", "")).startswith("rankscope.report/"):
        raise InputError("not a rankscope report (no 'schema': 'rankscope.report/1')", path, 1)
    return report


def run(args) -> int:
    from ..kernel import rules as RU
    from ..kernel.files import read_text, sha256_of
    from ..kernel.output import check_output_path, dumps_strict, write_atomic

    if args.out:
        check_output_path(args.out, [args.report, args.gates])
    report = load_report(args.report)
    rules = RU.parse_rules(read_text(args.gates), args.gates)
    results = [RU.judge(r, report, args.gates) for r in rules]
    failures = RU.failed(results, args.on, args.strict)
    sha = sha256_of(args.gates)
    state = git_state(args.gates)
    out = sys.stdout
    out.write(f"gates {args.gates} sha256 {sha}\n")
    if state:
        out.write(f"warning: the gates file is {state} in git; write the rules before the run and commit them\n")
    width = max(len(r.rule.describe()) for r in results)
    out.write(f"{'rule'.ljust(width)}  {'point':9}  {'interval':9}\n")
    for r in results:
        out.write(f"{r.rule.describe().ljust(width)}  {r.point:9}  {r.interval:9}\n")
    if any(r.rule.against for r in results):
        out.write(RU.AGAINST_NOTE + "\n")
    out.write(f"deciding column: {args.on}{' (strict: undecided fails)' if args.strict else ''}; "
              f"{len(failures)} of {len(results)} rules fail\n")
    if args.out:
        payload = {"schema": "rankscope.verdict/1", "report": args.report, "gates": {"path": args.gates, "sha256": sha, "git": state},
                   "on": args.on, "strict": args.strict, "rules": [r.as_dict() for r in results],
                   "failed": len(failures), "passed": not failures}
        write_atomic(args.out, dumps_strict(payload))
    return 1 if failures else 0
