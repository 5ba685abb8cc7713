"""`rankscope config`: the settings `rankscope tui` would use here, and where each came from.

The config files are the user's ``config.toml`` (``$XDG_CONFIG_HOME/rankscope/``, else
``~/.config/rankscope/``) and ``[tool.rankscope]`` in the nearest ``pyproject.toml`` of the
working directory or a parent; the command line beats the project, the project the user
(``kernel.settings.load_config``). Bad files are refused as `rankscope tui` refuses them.
"""

from __future__ import annotations

import argparse


def register(sub) -> None:
    p = sub.add_parser("config", help="the settings the dashboard would use here, and the file each came from")
    p.add_argument("--metrics", default=None, help="as rankscope tui --metrics (shown as from the command line)")
    p.add_argument("--relevant", type=int, default=None, help="as rankscope tui --relevant")
    p.add_argument("--strata", action="append", default=[], metavar="PATH", help="as rankscope tui --strata")
    p.add_argument("--theme", metavar="NAME", default=None, help="as rankscope tui --theme")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..kernel.settings import PYPROJECT_TABLE, user_config_path
    from ..render.escaping import escape_control
    from .tui import check_theme, effective_settings, read_config, theme_names

    check_theme(args)
    config = read_config()
    if args.relevant is not None:  # checked as the dashboard checks it
        from ..kernel.settings import LoadSettings

        LoadSettings(relevant=args.relevant)
    files = [escape_control(f"{f} [{PYPROJECT_TABLE}]" if f.endswith("pyproject.toml") else f) for f in config.files]
    lines = ["files read: " + (", ".join(files) if files else
                               f"none (looked for {escape_control(user_config_path())} and [{PYPROJECT_TABLE}] in pyproject.toml "
                               "here and above)")]
    # a path or a key holding a control character prints escaped, never drives the terminal
    rows = [(escape_control(k), escape_control(v), escape_control(src)) for k, v, src in effective_settings(args, config)]
    width = max(len(k) for k, _, _ in rows)
    vwidth = max(len(v) for _, v, _ in rows)
    lines += ["", f"{'setting'.ljust(width)}  {'value'.ljust(vwidth)}  from"]
    lines += [f"{k.ljust(width)}  {v.ljust(vwidth)}  {src}" for k, v, src in rows]
    lines += ["", "themes: " + ", ".join(theme_names())]
    print("\n".join(lines))
    return 0
