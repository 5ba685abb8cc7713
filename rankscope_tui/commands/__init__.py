"""The ``rankscope`` commands, one module each, and the parser over them.

Each module has ``register(sub)`` (its sub-parser, with ``func`` set to what runs it).
A command's module is imported only when its parser is built: ``rankscope compare``
never imports the dashboard's.
"""

from __future__ import annotations

from importlib import import_module

from .options import PROG, Parser

#: The commands, in the order ``rankscope --help`` lists them: name -> module in this package.
COMMANDS: dict[str, str] = {
    "evaluate": "evaluate", "demo": "demo", "calibrate": "calibrate", "compare": "compare", "plan": "plan", "agree": "agree", "pool": "pool", "diff": "diff",
    "verdict": "verdict", "explain": "explain", "goldens": "goldens", "plot": "plot", "run": "run", "tui": "tui",
    "config": "config",
}


def build_parser(command: str | None = None) -> Parser:
    """Every command's parser. With ``command`` (the first word of a command line that names
    one) only that command's parser is built: the others' modules (the dashboard's among
    them) are not imported, and that command parses and reports errors exactly as in the
    full parser."""
    p = Parser(prog=PROG, description="Look inside retrieval rankings: intervals, strata, attribution, fusion, the gate.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, module in COMMANDS.items():
        if command is None or command == name:
            import_module(f".{module}", __name__).register(sub)
    return p
