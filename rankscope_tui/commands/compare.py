"""`rankscope compare`: paired comparisons with the one verdict algorithm (SPEC §7)."""

from __future__ import annotations

import sys
from typing import Any


def register(sub) -> None:
    from ..kernel.settings import CompareSettings
    from .options import add_engine_options, add_fusion_options, add_loading_options

    d = CompareSettings()
    p = sub.add_parser("compare", help="paired tests: is the candidate better than the baseline?")
    add_loading_options(p, tables=True)
    add_fusion_options(p)
    add_engine_options(p)
    p.add_argument("--baseline", default=None, help="a lane (default: the first --lane), or 'best' (exploratory)")
    p.add_argument("--candidate", action="append", default=[],
                   help="a lane, rrf or convex; repeatable (default: every other input lane; rrf and convex only when named)")
    p.add_argument("--metric", action="append", default=[], help="repeatable; default ndcg@10")
    p.add_argument("--level", choices=["doc", "group"], default=d.level)
    p.add_argument("--min-delta", type=float, default=d.min_delta, help="smallest mean delta worth calling better")
    p.add_argument("--correction", choices=["holm", "bonferroni", "none"], default=d.correction)
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default=d.alternative)
    p.add_argument("--test", choices=["randomization", "t", "bootstrap"], default=d.test,
                   help="the deciding test (default randomization; bootstrap: the null-centred paired bootstrap test); "
                        "the t-test or the randomization test beside it is reported as an agreement flag")
    p.add_argument("--unit", default=None, metavar="FILE",
                   help="qid<TAB>unit: queries of one unit (variants of a topic) count once; statistics run on unit means")
    p.add_argument("--seed-runs", action="store_true",
                   help="lanes named SYSTEM@SEED are runs of SYSTEM retrained under SEED: adds the retraining column")
    p.add_argument("--shared-seeds", action="store_true",
                   help="with --seed-runs: the seed controls something both systems share, so pair runs by seed")
    p.add_argument("--exploratory", action="store_true", help="label every row exploratory (chosen after seeing results)")
    p.add_argument("--primary", default=None, metavar="METRIC", help="only this metric's rows form the tested family")
    p.add_argument("--all-pairs", action="store_true",
                   help="the randomised Tukey HSD over every pair of lanes on one metric, with a letters table")
    p.add_argument("--plan", metavar="plan.json", default=None,
                   help="a pre-registered family: its pairs (different baselines allowed) are one corrected family; "
                        "rows asked for beyond it are exploratory, corrected apart (README: Planned families)")
    p.add_argument("--pair", action="append", default=[], metavar="CANDIDATE:BASELINE",
                   help="repeatable: a pair of the planned family (beside --plan: a row asked for beyond the plan)")
    p.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    p.add_argument("--log", metavar="FILE",
                   help="append this call to this log of comparisons on the same qrels (default: the per-user log "
                        "$XDG_CACHE_HOME/rankscope/comparisons/QRELS-SHA256.jsonl)")
    p.add_argument("--no-log", action="store_true", help="do not log this call (test-set reuse is not counted)")
    p.add_argument("--reuse-correct", action="store_true",
                   help="adjust the tested family together with every earlier logged comparison row on these qrels "
                        "(J = earlier rows + this call's family)")
    p.add_argument("--out", metavar="FILE.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from dataclasses import replace

    from ..kernel import compare, prepare, read_comparison_log
    from ..kernel.errors import InputError
    from ..kernel.report.output import StagedOutputs, check_outputs, dumps_strict_parts
    from ..render.formats import render_compare
    from ..render.sentences import with_sentences
    from .options import UNUSED_ATTRIBUTION_OPTIONS, UNUSED_GATE_OPTIONS, engine_settings, input_paths, load_workspace, refuse_unused_options, run_buckets

    settings = compare_settings(args)  # first: a setting out of range (--min-delta -1) is named before any file is read
    refuse_unused_options(args, "compare", UNUSED_GATE_OPTIONS, "the gate (evaluate and calibrate do)")
    refuse_unused_options(args, "compare", UNUSED_ATTRIBUTION_OPTIONS, "miss attribution (evaluate does)")
    if args.log and args.no_log:
        raise InputError("--log FILE and --no-log contradict each other", "--no-log")
    inputs = input_paths(args) + ([args.unit] if args.unit else [])
    check_outputs([("--out", args.out), ("--log", args.log)], inputs + ([args.plan] if args.plan else []))
    if args.log:
        read_comparison_log(args.log)  # a log that is not one is refused before any work
    engine = engine_settings(args)
    if engine.bucketed:
        if not args.lane:
            raise InputError("at least one --lane is needed", "--lane")
        ws, plan, engine = run_buckets(args, engine, metrics=settings.metrics)
        th = plan.thresholds
    elif args.per_query_in:  # values computed elsewhere: no derived lanes, no thresholds
        if args.log and not args.qrels:
            raise InputError("--log with --per-query-in needs --qrels (the log counts calls on one qrels file)", "--log")
        if args.reuse_correct and not args.qrels:
            raise InputError("--reuse-correct with --per-query-in needs --qrels (earlier calls are found by the qrels' "
                             "sha256)", "--reuse-correct")
        ws, th = load_workspace(args), None
    else:
        if not args.lane:
            raise InputError("at least one --lane is needed", "--lane")
        ws = load_workspace(args)
        ws, th = prepare(ws, args.thresholds)
    if args.all_pairs:
        return run_all_pairs(args, ws, th, settings, engine)
    reuse = ReuseLog(args, next((f.sha256 for f in ws.inputs if f.role == "qrels"), None))
    if args.reuse_correct:
        settings = replace(settings, earlier_p=reuse.earlier_p())
    comparison = compare(ws, th, settings)
    if args.plan:  # a plan is evidence only when committed before the runs and any earlier report
        from ..kernel.inputs.formats import shard_paths
        from ..kernel.instruments.family_plan import commit_warnings

        # the runs (not the qrels: a test collection's judgments predate any plan made for it)
        runs = [p for _, spec in args.lane for p in shard_paths(spec)] + [p for _, p in args.per_query_in]
        said = tuple(commit_warnings(args.plan, "plan", runs, args.out))
        comparison = replace(comparison, result=replace(comparison.result, warnings=comparison.result.warnings + said))
    payload = with_engine(with_sentences(comparison.as_dict()), engine)
    text = render_compare(comparison, args.format)
    if args.per_query_in and args.format == "text":
        text = tables_header(ws) + text
    out: list[tuple[str, str | bytes | list[Any]]] = [(args.out, dumps_strict_parts(payload))] if args.out else []
    # --out's temporary file is complete before the log is appended to, and renamed
    # only after the append worked: a failure of either leaves both as they were
    with StagedOutputs(out) as outs:
        # an explicit --log's count is part of the output text; the per-user log's goes to stderr
        text += reuse.append(payload, args.format) if reuse.explicit else reuse.output_lines(args.format)
        try:  # the text first: a stdout that fails leaves --out as it was (an explicit log is already appended)
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            outs.commit()
            raise
        if not reuse.explicit:  # the per-user log counts calls whose results were shown: after the text
            reuse.append(payload, args.format)  # its output lines are in the text already
        outs.commit()
    return 0


def compare_settings(args):
    """``kernel.settings.CompareSettings`` of the command line (resamples, seed and
    confidence: the workspace's, from --resamples, --seed, --confidence). ``--plan`` is
    read here, before any run: a plan that is not one is refused first."""
    from ..kernel.errors import InputError
    from ..kernel.instruments.family_plan import family_settings
    from ..kernel.settings import CompareSettings

    metrics: dict[str, Any] = {"metrics": tuple(args.metric)} if args.metric else {}  # none given: the default
    if getattr(args, "plan", None) or getattr(args, "pair", None):
        if args.all_pairs:
            raise InputError("does not apply to --all-pairs (the Tukey HSD's family is every pair)",
                             "--plan" if args.plan else "--pair")
        metrics = family_settings(args.plan, args.pair, tuple(args.metric))
    return CompareSettings(
        baseline=args.baseline, candidates=tuple(args.candidate), level=args.level, min_delta=args.min_delta,
        correction=args.correction, alternative=args.alternative, test=args.test, units=args.unit,
        seed_runs=args.seed_runs, shared_seeds=args.shared_seeds, exploratory=args.exploratory, primary=args.primary,
        **metrics,
    )


class ReuseLog:
    """Where this call is logged (``--log FILE``, else the per-user cache, none with
    ``--no-log`` or without a qrels fingerprint), the earlier rows ``--reuse-correct``
    folds in, and the line the text ends with. The per-user cache never fails a call: a
    cache that cannot be read or written is said in that line; an explicit ``--log``
    that cannot be is an error (exit 2), as it always was."""

    def __init__(self, args, qrels_sha: str | None) -> None:
        from ..kernel.instruments.comparison_log import default_log_path

        self.sha = qrels_sha
        self.explicit = bool(args.log)
        self.write = not args.no_log and qrels_sha is not None
        self.path = args.log or (default_log_path(qrels_sha) if qrels_sha else None)
        self.problems: list[str] = []
        self.folded = 0
        self.reuse_correct = bool(args.reuse_correct)

    def earlier_p(self) -> tuple[float, ...]:
        from ..kernel import read_comparison_log
        from ..kernel.errors import InputError
        from ..kernel.instruments.comparison_log import earlier_p

        if self.path is None or self.sha is None:
            return ()
        try:
            entries = read_comparison_log(self.path)
        except InputError as exc:
            if self.explicit:
                raise
            self.problems.append(f"the comparison cache could not be read ({exc}); no earlier comparison was folded in")
            return ()
        p = earlier_p(entries, self.sha)
        self.folded = len(p)
        return p

    def output_lines(self, fmt: str) -> str:
        """The lines that go with the output whatever the log says (``--reuse-correct``'s)."""
        from ..render.compare import log_lines

        return log_lines(fmt, sha=self.sha, path=self.path, before=None, written=True, explicit=self.explicit,
                         problems=[], folded=self.folded, reuse_correct=self.reuse_correct)[0]

    def append(self, payload: dict, fmt: str) -> str:
        """Log the call (unless not logging), write what stderr is told about it and return
        the lines for the output (``render.compare.log_lines``)."""
        from ..kernel import append_comparison_log
        from ..kernel.errors import InputError
        from ..render.compare import log_lines

        before = None
        if self.sha is not None and self.write:
            assert self.path is not None
            try:
                before = append_comparison_log(self.path, self.sha, payload, create_dirs=not self.explicit)
            except InputError as exc:
                if self.explicit:
                    raise
                self.problems.append(f"the comparison cache could not be written ({exc}); this call was not logged")
        out, err = log_lines(fmt, sha=self.sha, path=self.path, before=before, written=self.write,
                             explicit=self.explicit, problems=self.problems, folded=self.folded,
                             reuse_correct=self.reuse_correct)
        if err:
            from ..render.escaping import terminal_safe

            sys.stderr.write(terminal_safe(err))  # a path never drives the terminal
        return out


def with_engine(payload: dict, engine) -> dict:
    """The payload with its settings naming the engine, when the work ran in query buckets
    (the in-memory payload is left as it is, byte for byte)."""
    if engine.bucketed:
        payload["settings"] = {**payload["settings"], "engine": engine.as_dict()}
    return payload


#: compare options --all-pairs does not use, with their defaults: given, they are refused
#: (the Tukey HSD holds the family-wise rate itself and has no baseline, primary or min-delta)
_NOT_WITH_ALL_PAIRS = (("--correction", "correction", "holm"), ("--primary", "primary", None),
                       ("--min-delta", "min_delta", 0.0), ("--exploratory", "exploratory", False),
                       ("--log", "log", None), ("--reuse-correct", "reuse_correct", False),
                       ("--seed-runs", "seed_runs", False),
                       ("--shared-seeds", "shared_seeds", False))


def run_all_pairs(args, ws, th, settings, engine) -> int:
    from ..kernel import compare_all_pairs
    from ..kernel.errors import InputError
    from ..kernel.instruments.compare import ALL_PAIRS_SCHEMA
    from ..kernel.report.output import dumps_strict
    from ..render.tukey import render_all_pairs
    from .options import write_with_text

    for flag, attr, default in _NOT_WITH_ALL_PAIRS:
        if getattr(args, attr) != default:
            raise InputError("does not apply to --all-pairs (the randomised Tukey HSD controls the family-wise "
                             "rate over every pair itself)", flag)
    result = compare_all_pairs(ws, th, settings)
    text = render_all_pairs(result, args.format)
    payload = {"schema": ALL_PAIRS_SCHEMA, **result.as_dict()}
    write_with_text([(args.out, dumps_strict(with_engine(payload, engine)))] if args.out else [], text)
    return 0


def tables_header(ws) -> str:
    """What ``compare --per-query-in`` says before its table: the tables read, what a table
    cannot give, the notes (rows skipped, measures left out) and the input warnings."""
    from ..render.escaping import terminal_safe
    from ..render.report import warning_line

    lines = [f"per-query tables: {', '.join(t.path for t in ws.tables)} ({ws.n_queries} queries"
             + (", the positives of --qrels)" if ws.qrels_sha256 else
                ": every query of the tables; --qrels compares its positive queries, as compare on the runs does)"),
             "not shown: the judged@10 of the largest losses and gains (it needs the rankings)"]
    lines += [f"note: {n}" for n in ws.notes] + [warning_line(w.as_dict()) for w in ws.warnings]
    return terminal_safe("\n".join(lines) + "\n\n")  # a path never drives the terminal
