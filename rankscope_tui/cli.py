"""The command line: parse options, ask the kernel, write. Nothing is computed here."""

from __future__ import annotations

import argparse
import os
import sys

from .kernel.errors import InputError

PROG = "rankscope"


class CliError(InputError):
    """A usage problem: printed as one line, exit status 2, like every input error."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other input error
        raise CliError(message)


def _lane_arg(text: str) -> tuple[str | None, str]:
    """``NAME=PATH`` or ``PATH``. Text before the first '=' is a lane name unless it holds
    a '/' (then the whole text is a path), or the whole text names an existing file."""
    if "=" in text:
        name, path = text.split("=", 1)
        if "/" not in name and not (os.path.exists(text) and not os.path.exists(path)):
            if not path:
                raise argparse.ArgumentTypeError(f"{text}: empty path after NAME= (give --lane NAME=PATH)")
            return name, path
    if not text:
        raise argparse.ArgumentTypeError("empty path (give --lane [NAME=]PATH)")
    return None, text


def add_loading_options(p: argparse.ArgumentParser, qrels_required: bool = True) -> None:
    from dataclasses import fields

    from .kernel.settings import LoadSettings

    d = {f.name: f.default for f in fields(LoadSettings)}  # (the metric set's default is a factory)
    g = p.add_argument_group("inputs")
    g.add_argument("--lane", action="append", type=_lane_arg, default=[], metavar="[NAME=]PATH",
                   help="a run file (TREC or JSON, optionally .gz); repeatable")
    g.add_argument("--qrels", required=qrels_required, metavar="PATH", help="judgments (TREC or JSON, optionally .gz)")
    g.add_argument("--strata", action="append", default=[], metavar="PATH", help="qid<TAB>label; repeatable")
    g.add_argument("--corpus", metavar="PATH", help="doc ids in the index (one per line or first TSV column)")
    g.add_argument("--queries", metavar="PATH", help="qid<TAB>text, for the drill-down")
    g.add_argument("--docs", metavar="PATH", help="docid<TAB>text, for the drill-down")
    g.add_argument("--ood-negatives", metavar="PATH", help="qrels whose queries are all out-of-domain negatives")
    g.add_argument("--thresholds", metavar="PATH", help="thresholds.json written by `rankscope calibrate`")
    s = p.add_argument_group("settings")
    s.add_argument("--metrics", default=None, help="comma list, e.g. ndcg@10,rr,p@10,recall@100")
    s.add_argument("--relevant", type=int, default=d["relevant"], help="a doc is relevant when grade >= this (default 1)")
    s.add_argument("--depth", type=int, default=None, help="cut every lane to its first D hits after ordering")
    s.add_argument("--group-sep", default=None, metavar="SEP", help="doc id up to the first SEP is its group")
    s.add_argument("--window", type=int, default=d["window"], help="candidates the next stage sees (attribution)")
    s.add_argument("--blind", default=None, metavar="[STRAT=]LABEL", help="the stratum attribution singles out")
    s.add_argument("--seed", type=int, default=d["seed"])
    s.add_argument("--resamples", type=int, default=d["resamples"], help="bootstrap resamples; 0 skips resampled intervals")
    s.add_argument("--confidence", type=float, default=d["confidence"])
    s.add_argument("--rrf-k", type=int, default=None, help="RRF k (default 60, or the calibrated one)")
    s.add_argument("--cap", type=int, default=None, help="variant lanes keeping at most N hits per group")
    s.add_argument("--document-first", action="store_true", help="variant lanes ordering the top hit's group first")
    from .kernel.settings import GateSettings as GS

    gate = p.add_argument_group("gate")
    gate.add_argument("--gate-on", default=GS.gate_on, metavar="LANE", help="the lane whose top score is gated")
    gate.add_argument("--fpir", type=float, default=GS.fpir, help="target false-positive identification rate")
    gate.add_argument("--conservative", action="store_true", help="pick the floor on the Wilson upper bound of FPIR")
    gate.add_argument("--miss-rate", type=float, default=GS.miss_rate, help="conformal miss rate alpha")
    gate.add_argument("--margin", type=float, default=GS.margin, help="accept only when top minus runner-up >= this")
    gate.add_argument("--mutual", type=int, default=GS.mutual, metavar="R", help="mutual nearest neighbour condition")


def settings_from(args):
    from .kernel.errors import InputError
    from .kernel.metrics import parse_metrics
    from .kernel.settings import DEFAULT_METRICS, DEFAULT_RRF_K, LoadSettings

    if args.depth is not None and args.depth < 1:
        raise InputError("--depth must be at least 1", "--depth")
    if not 0 < args.confidence < 1:
        raise InputError("--confidence must be between 0 and 1", "--confidence")
    if args.resamples < 0:
        raise InputError("--resamples must be >= 0", "--resamples")
    if args.window < 1:
        raise InputError("--window must be at least 1", "--window")
    if (args.cap is not None or args.document_first) and not args.group_sep:
        raise InputError("--cap and --document-first need --group-sep", "--cap")
    if args.group_sep == "":
        raise InputError("--group-sep must not be empty (a doc id up to the first SEP is its group)", "--group-sep")
    if args.cap is not None and args.cap < 1:
        raise InputError("--cap must be at least 1", "--cap")
    rrf_k, rrf_src = (args.rrf_k, "chosen on the command line") if args.rrf_k is not None else (DEFAULT_RRF_K, "default")
    if rrf_k < 1:
        raise InputError("--rrf-k must be at least 1", "--rrf-k")
    return LoadSettings(
        metrics=tuple(parse_metrics(args.metrics or DEFAULT_METRICS)),
        depth=args.depth, relevant=args.relevant, group_sep=args.group_sep or None, window=args.window,
        seed=args.seed, resamples=args.resamples, confidence=args.confidence, rrf_k=rrf_k, rrf_k_source=rrf_src,
        blind=args.blind, cap=args.cap, document_first=args.document_first,
    )


def input_paths(args) -> list[str]:
    paths = [p for _, p in args.lane] + [args.qrels, args.corpus, args.queries, args.docs, args.ood_negatives, args.thresholds]
    return [p for p in paths + list(args.strata) if p]


def load_workspace(args):
    """Load every input named on the command line into one Workspace."""
    from .kernel.workspace import Workspace

    return Workspace.load(
        list(args.lane), args.qrels, settings_from(args), strata=list(args.strata), corpus=args.corpus,
        queries=args.queries, docs=args.docs, ood_negatives=args.ood_negatives,
    )


# ---------------------------------------------------------------------------
# commands


def cmd_evaluate(args) -> int:
    from .kernel.output import check_output_path, dumps_strict, write_atomic
    from .kernel.pipeline import evaluate_report
    from .render import report as R

    outs = [p for p in (args.out, args.per_query) if p]
    for p in outs:
        check_output_path(p, input_paths(args))
    progress = StageProgress()
    ws = load_workspace(args)
    progress.done(f"loaded {len(ws.input_lanes)} lane(s), {sum(ws.lanes[n].n_rows for n in ws.input_lanes):,} hits")
    report = evaluate_report(ws, gate_options(args), thresholds_path=args.thresholds)
    progress.done("computed the report")
    text = R.RENDERERS[args.format](report)
    payloads = []
    if args.out:
        payloads.append((args.out, dumps_strict(report)))
    if args.per_query:
        payloads.append((args.per_query, R.per_query_csv(report)))
    for path, data in payloads:
        write_atomic(path, data)
    sys.stdout.write(text)
    return 0


class StageProgress:
    """One stderr line per finished stage, once a run has taken more than a couple of
    seconds, and only when stderr is a terminal (never in pipes, logs or CI)."""

    def __init__(self) -> None:
        import time

        self._clock = time.perf_counter
        self._start = self._clock()
        self._on = sys.stderr.isatty()
        self._after = float(os.environ.get("RANKSCOPE_PROGRESS_AFTER_S", "2"))

    def done(self, stage: str) -> None:
        elapsed = self._clock() - self._start
        if self._on and elapsed >= self._after:
            sys.stderr.write(f"{PROG}: {stage} ({elapsed:.1f} s)\n")


def gate_options(args):
    """The gate settings named on the command line (``kernel.settings.GateSettings``)."""
    import math

    from .kernel.errors import InputError
    from .kernel.settings import GateSettings

    if args.margin is not None and not (math.isfinite(args.margin) and args.margin >= 0):
        raise InputError(f"--margin must be a finite number >= 0, not {args.margin}", "--margin")
    if args.mutual is not None and args.mutual < 1:
        raise InputError(f"--mutual must be at least 1, not {args.mutual}", "--mutual")
    return GateSettings(gate_on=args.gate_on, fpir=args.fpir, conservative=args.conservative,
                        miss_rate=args.miss_rate, margin=args.margin, mutual=args.mutual)


def cmd_demo(args) -> int:
    from .demo import write_demo

    if os.path.exists(args.out) and not os.path.isdir(args.out):
        from .kernel.errors import InputError

        raise InputError("exists and is not a directory", args.out)
    os.makedirs(args.out, exist_ok=True)
    paths = write_demo(args.out, seed=args.seed)
    for role, p in paths.items():
        print(f"{role}: {p}")
    print("synthetic demo data written by rankscope's generator")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Every command: evaluate and demo here, the others from their modules in ``commands/``."""
    from .commands import calibrate, compare, diff, goldens, tui, verdict

    p = _Parser(prog=PROG, description="Look inside retrieval rankings: intervals, strata, attribution, fusion, the gate.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="metrics with intervals, strata, attribution, fusion and the gate")
    add_loading_options(ev)
    ev.add_argument("--out", metavar="report.json", help="write the report (strict JSON, atomic)")
    ev.add_argument("--format", choices=["text", "markdown", "latex"], default="text")
    ev.add_argument("--per-query", metavar="FILE.csv", help="one row per (lane, level, positive qid)")
    ev.set_defaults(func=cmd_evaluate)

    de = sub.add_parser("demo", help="write the built-in synthetic demo data set")
    de.add_argument("--out", required=True, metavar="DIR")
    de.add_argument("--seed", type=int, default=7)
    de.set_defaults(func=cmd_demo)

    for command in (calibrate, compare, diff, verdict, goldens, tui):
        command.register(sub)
    return p


def process_setup() -> None:
    """Process-wide memory settings for a rankscope run (never applied on a library import)."""
    # pyarrow's default pool (mimalloc) costs more page-fault time on the large numpy
    # arrays that follow a big read (benchmarks/README.md); only a default, set before
    # pyarrow loads, so an explicit ARROW_DEFAULT_MEMORY_POOL wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # numpy asks for transparent huge pages on large arrays; where the kernel then
    # compacts memory on the page fault, a first evaluation measured up to 1 s slower
    # and far more variable (benchmarks/README.md). Read by numpy at import.
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    from .startup import tune_allocator

    tune_allocator()


def main(argv: list[str] | None = None) -> int:
    import signal

    process_setup()

    from .kernel.errors import InputError

    def _terminate(signum, frame):  # SIGTERM unwinds like Ctrl-C: temp files are removed
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (e.g. called from a test runner's worker)
        pass
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except (InputError, CliError) as exc:
        from .render.escaping import escape_control

        msg = escape_control(" ".join(str(exc).split("\n")))  # a name or path never drives the terminal
        sys.stderr.write(f"{PROG}: error: {msg}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
