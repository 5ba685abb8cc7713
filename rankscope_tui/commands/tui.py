"""`rankscope tui`: the Textual dashboard over the same loading options as `evaluate`.

With no inputs at all it writes the built-in synthetic demo (cached per generator
version and seed) and opens it, labelled SYNTHETIC in the header.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
from pathlib import Path

from ..state import DashboardOptions, DashboardState

DEMO_SEED = 7


def add_tui_options(p: argparse.ArgumentParser) -> None:
    from .options import add_loading_options

    add_loading_options(p, qrels_required=False)
    t = p.add_argument_group("dashboard")
    t.add_argument("--gates", metavar="gates.json", help="pre-registered rules for the Verdicts view (as rankscope verdict --gates)")
    t.add_argument("--dev-qrels", metavar="PATH",
                   help="calibration judgments for the Calibrate view (weights fitted here, scored on --qrels)")
    t.add_argument("--qrels-b", metavar="PATH",
                   help="a second set of labels for the same pairs: the Judgments view shows their agreement "
                        "(as rankscope agree --qrels-b)")
    t.add_argument("--demo-dir", metavar="DIR", help="where to write the demo when no inputs are given (default: a cache dir)")


def register(sub) -> None:
    p = sub.add_parser("tui", help="the interactive dashboard (no inputs: the built-in synthetic demo)")
    add_tui_options(p)
    p.set_defaults(func=run)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The dashboard's options as `rankscope tui` parses them (tests and benchmarks use this)."""
    from .options import Parser

    p = Parser(prog="rankscope tui")
    add_tui_options(p)
    return p.parse_args(argv)


def demo_argv(d: str | os.PathLike) -> list[str]:
    """The command line that opens the demo written in ``d`` (also what `evaluate` gets in the export test)."""
    from ..demo import FILES

    f = {k: str(Path(d) / v) for k, v in FILES.items()}
    return [
        "--lane", f["lexical"], "--lane", f["dense"], "--qrels", f["qrels_test"],
        "--ood-negatives", f["qrels_ood"], "--strata", f["strata"], "--corpus", f["corpus"],
        "--queries", f["queries"], "--docs", f["docs"], "--group-sep", "#", "--blind", "no-overlap",
        "--gate-on", "dense", "--cap", "5", "--document-first",
        "--gates", f["gates"], "--dev-qrels", f["qrels_dev"],
    ]


def evaluate_argv(argv: list[str]) -> list[str]:
    """Drop the dashboard-only options, leaving what `rankscope evaluate` accepts."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--gates", "--dev-qrels", "--demo-dir"):
            skip = True
            continue
        if a.split("=", 1)[0] in ("--gates", "--dev-qrels", "--demo-dir"):
            continue
        out.append(a)
    return out


def ensure_demo(seed: int = DEMO_SEED, where: str | None = None) -> Path:
    """Write the demo once per generator version and seed; reuse it afterwards."""
    from .. import demo

    if where:  # new, empty or a previous demo: never anyone's own files (cli.write_demo_dir)
        from .demo import write_demo_dir

        write_demo_dir(where, demo.write_demo, demo.FILES, seed=seed)
        return Path(where)
    version = hashlib.sha256(Path(demo.__file__).read_bytes()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rankscope"
    d = base / f"demo-seed{seed}-{version}"
    if (d / demo.FILES["gates"]).exists() and all((d / f).exists() for f in demo.FILES.values()):
        return d
    try:
        base.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".demo-", dir=base))
    except OSError:  # read-only home: a temp dir then
        tmp = Path(tempfile.mkdtemp(prefix="rankscope-demo-"))
        demo.write_demo(tmp, seed=seed)
        return tmp
    demo.write_demo(tmp, seed=seed)
    import shutil

    try:
        os.replace(tmp, d)
    except OSError:  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)
    for old in base.glob(f"demo-seed{seed}-*"):  # demos written by earlier generator versions
        if old != d and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return d


def options_from_args(args: argparse.Namespace) -> DashboardOptions:
    """The dashboard's options, built once from the parsed command line (settings checked
    and typed here, as `evaluate` checks them)."""
    from .options import gate_options, settings_from

    return DashboardOptions(
        lanes=tuple(args.lane), qrels=args.qrels, strata=tuple(args.strata), corpus=args.corpus,
        queries=tuple(args.queries), docs=tuple(args.docs), ood_negatives=args.ood_negatives, thresholds=args.thresholds,
        dev_qrels=args.dev_qrels, gates=args.gates, qrels_b=args.qrels_b, load=settings_from(args),
        gate=gate_options(args),
        demo_dir=args.demo_dir,
    )


def state_from_args(args: argparse.Namespace, *, synthetic: bool = False, source_label: str = "") -> DashboardState:
    """The dashboard's state before loading: the options and what the header says."""
    return DashboardState(options_from_args(args), synthetic=synthetic, source_label=source_label)


def resolve(args: argparse.Namespace) -> DashboardState:
    """The state the dashboard opens on: the demo when no input was given."""
    from .options import CliError

    if not args.lane and not args.qrels:
        d = ensure_demo(where=args.demo_dir)
        return state_from_args(parse_args(demo_argv(d)), synthetic=True, source_label=f"built-in demo in {d}")
    if not args.lane:
        raise CliError("--qrels needs at least one --lane (or give no inputs for the demo)")
    if not args.qrels:
        raise CliError("--lane needs --qrels (or give no inputs for the demo)")
    return state_from_args(args, source_label=args.qrels)


def run(args: argparse.Namespace) -> int:
    from ..startup import pause_collector

    pause_collector()  # until the first frame with data (app.py resumes it)
    state = resolve(args)
    # the inputs are read once the first frame is drawn (``RankscopeApp.on_mount``), not
    # while Textual is imported: a busy machine shows a live app at once
    from ..app import run as run_app

    return run_app(state)
