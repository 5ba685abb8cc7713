"""`rankscope tui`: the Textual dashboard over the same loading options as `evaluate`.

With no inputs at all it writes the built-in synthetic demo (cached per generator
version and seed) and opens it, labelled SYNTHETIC in the header.

The config files (``kernel.settings.load_config``: the user's config.toml, a project's
``[tool.rankscope]``) fill what the command line leaves unset: the metrics, relevant level
and strata of the user's own inputs, the theme and the keymap. ``rankscope config`` shows
the result (``effective_settings``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..state import DashboardOptions, DashboardState

if TYPE_CHECKING:
    from ..kernel.settings import DashboardConfig

DEMO_SEED = 7
#: Textual's own theme, used when neither --theme nor a config file names one.
DEFAULT_THEME = "textual-dark"


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
    t.add_argument("--theme", metavar="NAME", default=None,
                   help=f"a Textual theme (default: the config file's, else {DEFAULT_THEME}); `rankscope config` lists them")
    # None = not given, so a config file's level applies (README: Dashboard keys, themes and the config
    # file); neither given: LoadSettings' level (settings_from)
    p.set_defaults(relevant=None)
    from .serve import DEFAULT_HOST, serve_address

    w = p.add_argument_group("browser")
    w.add_argument("--serve", metavar="[HOST:]PORT", type=serve_address,
                   help=f"serve the dashboard to a web browser on PORT (host {DEFAULT_HOST} unless given; "
                        "needs the web extra: pip install 'rankscope[web]')")
    w.add_argument("--allow-remote", action="store_true",
                   help="let --serve listen on an address other machines reach (no password: anyone there drives it)")


def register(sub) -> None:
    p = sub.add_parser("tui", help="the interactive dashboard (no inputs: the built-in synthetic demo)")
    p.keep_words = "serve_words"  # --serve starts this command line again per browser
    add_tui_options(p)
    p.set_defaults(func=run)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The dashboard's options as `rankscope tui` parses them (tests and benchmarks use this)."""
    from .options import Parser

    p = Parser(prog="rankscope tui")
    p.keep_words = "serve_words"
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
        if a in ("--gates", "--dev-qrels", "--demo-dir", "--serve", "--theme"):
            skip = True
            continue
        if a.split("=", 1)[0] in ("--gates", "--dev-qrels", "--demo-dir", "--serve", "--theme") or a == "--allow-remote":
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


def theme_names() -> list[str]:
    """The themes ``--theme`` and a config file may name: Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    return sorted(BUILTIN_THEMES)


def read_config() -> DashboardConfig:
    """The config files' settings for the working directory (``kernel.settings.load_config``),
    their keymap ids and theme checked against the dashboard's."""
    from ..kernel.settings import check_config_names, load_config
    from ..screens import BINDING_IDS

    config = load_config(os.getcwd())
    if config.keymap or config.theme is not None:
        check_config_names(config, binding_ids=BINDING_IDS, themes=theme_names())
    return config


def check_theme(args: argparse.Namespace) -> None:
    """Refuse a ``--theme`` the dashboard does not have (one line listing the themes)."""
    from ..kernel.settings import unknown_theme
    from .options import CliError

    if args.theme is not None and args.theme not in theme_names():
        raise CliError(f"--theme: {unknown_theme(args.theme, theme_names())}")


def effective_settings(args: argparse.Namespace, config: DashboardConfig) -> list[tuple[str, str, str]]:
    """(setting, value, where it came from) of every setting a config file may hold, as
    `rankscope tui` would use them: the command line beats the project's pyproject, which
    beats the user's config.toml, which beats the default."""
    from ..kernel.settings import DEFAULT_METRICS, LoadSettings, canonical_keys

    def pick(key: str, cli: object, conf: object, default: str) -> tuple[str, str, str]:
        if cli not in (None, [], ()):
            return key, _shown(cli), "command line"
        if conf not in (None, ()):
            return key, _shown(conf), config.source(key) or "config"
        return key, default, "default"

    cli_metrics = ",".join(canonical_keys(args.metrics.split(","), "--metrics")) if args.metrics else None
    rows = [
        pick("metrics", cli_metrics, config.metrics, ",".join(canonical_keys(DEFAULT_METRICS.split(",")))),
        pick("relevant", args.relevant, config.relevant, str(LoadSettings.relevant)),
        pick("strata", list(args.strata), config.strata, "none"),
        pick("theme", args.theme, config.theme, DEFAULT_THEME),
    ]
    rows += [(f"keymap.{b}", k, config.source(f"keymap.{b}") or "config") for b, k in config.keymap]
    return rows


def _shown(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def with_config(args: argparse.Namespace, config: DashboardConfig | None) -> argparse.Namespace:
    """A copy of ``args`` with what the command line left unset (metrics, relevant level,
    strata) taken from ``config``; what neither sets keeps its default (``settings_from``)."""
    out = argparse.Namespace(**vars(args))
    if config is not None:
        if out.metrics is None and config.metrics is not None:
            out.metrics = ",".join(config.metrics)
        if out.relevant is None and config.relevant is not None:
            out.relevant = config.relevant
        if not out.strata and config.strata:
            out.strata = list(config.strata)
    return out


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


def resolve(args: argparse.Namespace, config: DashboardConfig | None = None) -> DashboardState:
    """The state the dashboard opens on: the demo when no input was given. ``config``'s
    metrics, level and strata fill what the command line left unset on the user's own
    inputs; the demo keeps its own (they describe the user's data, not the demo's); its
    theme and keymap hold for both."""
    from .options import CliError

    theme = args.theme if getattr(args, "theme", None) is not None else (config.theme if config else None)
    keymap = config.keymap if config else ()
    if not args.lane and not args.qrels:
        d = ensure_demo(where=args.demo_dir)
        state = state_from_args(parse_args(demo_argv(d)), synthetic=True, source_label=f"built-in demo in {d}")
    elif not args.lane:
        raise CliError("--qrels needs at least one --lane (or give no inputs for the demo)")
    elif not args.qrels:
        raise CliError("--lane needs --qrels (or give no inputs for the demo)")
    else:
        state = state_from_args(with_config(args, config), source_label=args.qrels)
    state.theme, state.keymap = theme, keymap
    return state


def run(args: argparse.Namespace) -> int:
    from ..startup import pause_collector
    from .options import CliError
    from .serve import SERVED_ENV, serve

    if args.allow_remote and args.serve is None:
        raise CliError("--allow-remote goes with --serve [HOST:]PORT")
    check_theme(args)
    config = read_config()
    if args.serve is not None and not os.environ.get(SERVED_ENV):
        resolve(args, config)  # the usage errors now, and the demo written once, before anyone connects
        return serve(args)
    pause_collector()  # until the first frame with data (app.py resumes it)
    state = resolve(args, config)
    # the inputs are read once the first frame is drawn (``RankscopeApp.on_mount``), not
    # while Textual is imported: a busy machine shows a live app at once
    from ..app import run as run_app

    return run_app(state)
