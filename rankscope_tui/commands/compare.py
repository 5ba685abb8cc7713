"""`rankscope compare`: paired comparisons with the one verdict algorithm (SPEC §7)."""

from __future__ import annotations

import json
import os
import sys
import time

#: What the ``--log`` keeps of each row (a subset of ``kernel.verdict.ROW_KEYS``).
LOG_KEYS = ("baseline", "candidate", "metric", "randomization_p", "verdict")


def register(sub) -> None:
    from ..cli import add_loading_options
    from ..kernel.settings import CompareSettings

    d = CompareSettings()
    p = sub.add_parser("compare", help="paired tests: is the candidate better than the baseline?")
    add_loading_options(p)
    p.add_argument("--baseline", default=None, help="a lane (default: the first --lane), or 'best' (exploratory)")
    p.add_argument("--candidate", action="append", default=[], help="a lane, rrf or convex; repeatable (default: every other lane)")
    p.add_argument("--metric", action="append", default=[], help="repeatable; default ndcg@10")
    p.add_argument("--level", choices=["doc", "group"], default=d.level)
    p.add_argument("--min-delta", type=float, default=d.min_delta, help="smallest mean delta worth calling better")
    p.add_argument("--correction", choices=["holm", "bonferroni", "none"], default=d.correction)
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default=d.alternative)
    p.add_argument("--exploratory", action="store_true", help="label every row exploratory (chosen after seeing results)")
    p.add_argument("--primary", default=None, metavar="METRIC", help="only this metric's rows form the tested family")
    p.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    p.add_argument("--log", metavar="FILE", help="append this call to a log of comparisons on the same qrels")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..cli import input_paths, load_workspace
    from ..kernel.comparison import compare
    from ..kernel.errors import InputError
    from ..kernel.output import check_output_path, dumps_strict, write_atomic
    from ..kernel.pipeline import prepare
    from ..kernel.settings import CompareSettings
    from ..render.compare import log_reuse_line, render_compare

    for p in (args.out, args.log):
        if p:
            check_output_path(p, input_paths(args))
    if not args.lane:
        raise InputError("at least one --lane is needed", "--lane")
    ws = load_workspace(args)
    ws, th = prepare(ws, args.thresholds)
    settings = CompareSettings(
        baseline=args.baseline, candidates=tuple(args.candidate), level=args.level, min_delta=args.min_delta,
        correction=args.correction, alternative=args.alternative, exploratory=args.exploratory, primary=args.primary,
        **({"metrics": tuple(args.metric)} if args.metric else {}),
    )  # resamples, seed and confidence: the workspace's (--resamples, --seed, --confidence)
    comparison = compare(ws, th, settings)
    before = _log_count(args.log, comparison.qrels_sha256) if args.log else None
    payload = comparison.as_dict()
    text = render_compare(comparison, args.format)
    if before is not None:
        text += log_reuse_line(before, comparison.qrels_sha256)
    if args.out:
        write_atomic(args.out, dumps_strict(payload))
    if args.log:
        _append_log(args.log, comparison.qrels_sha256, payload)
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
             "rows": [{k: r[k] for k in LOG_KEYS} for r in payload["comparisons"]]}
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    write_atomic(path, old + json.dumps(entry, allow_nan=False) + "\n")
