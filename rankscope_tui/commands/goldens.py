"""`rankscope goldens`: write or check the reference vectors (SPEC §8, lesson 14)."""

from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("goldens", help="write reference vectors, or check a file of them against this kernel")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--out", metavar="FILE", help="write the vectors to FILE (atomically) instead of stdout")
    g.add_argument("--check", metavar="FILE", help="recompute every line of FILE; exit 1 on any mismatch (tolerance 1e-9)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel.inputs.files import read_text
    from ..kernel.instruments import goldens as GD
    from ..kernel.report.output import check_output_path, write_atomic

    if args.check:
        text = read_text(args.check)
        GD.check_parsable(text, args.check)  # a file that is not a goldens file: one line, exit 2
        problems = GD.check(text, args.check)
        n = GD.count_cases(text)
        for msg in problems:
            sys.stdout.write(msg + "\n")
        if problems:
            sys.stdout.write(f"{len(problems)} of {n} cases disagree with this kernel (tolerance {GD.TOLERANCE:g})\n")
            return 1
        sys.stdout.write(f"all {n} cases agree with this kernel (tolerance {GD.TOLERANCE:g})\n")
        return 0
    text = GD.write_lines()
    if args.out:
        check_output_path(args.out, [])
        write_atomic(args.out, text)
        sys.stderr.write(f"wrote {GD.count_cases(text)} cases to {args.out}\n")
    else:
        sys.stdout.write(text)
    return 0
