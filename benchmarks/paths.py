"""Where the benchmarks find their data, and how their results files name a path.

Everything is relative to the checkout: ``ROOT`` is the repository (this file's
parent's parent), ``SHARED`` the ``shared/`` folder beside it (``../shared``: the
synthetic-run generator ``tools/synth.py``, trec_eval's sources, the Cranfield set), as
the tests find it (``tests/support.py``). A results file never holds a machine's
absolute path: ``shown`` writes a path relative to the checkout (``benchmarks/data/...``,
``../shared/data/...``), so the same run on another machine writes the same text.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SYNTH = SHARED / "tools" / "synth.py"
TREC_EVAL_SRC = SHARED / "tools" / "trec_eval"
CRANFIELD = SHARED / "data" / "cranfield"


def shown(path: str | os.PathLike) -> str:
    """``path`` as a results file writes it: relative to the checkout (``.`` for the
    checkout itself, ``../shared/...`` beside it), or ``<scratch>/NAME`` for a file in a
    scratch folder under the temporary directory; a relative path is taken from the
    current directory, as the command line takes it."""
    p = Path(os.path.abspath(path))  # not resolve(): a shared/ that is a link stays ../shared
    scratch = Path(tempfile.gettempdir()).resolve()
    if scratch in p.parents and ROOT.parent not in p.parents:
        return f"<scratch>/{p.name}"
    return os.path.relpath(p, ROOT)


def shown_argv(argv: list[str]) -> list[str]:
    """A command line as a results file writes it: each argument that is an absolute path
    (or ``NAME=PATH``, a lane) is ``shown``; the rest as given."""
    out = []
    for a in argv:
        name, eq, value = a.rpartition("=") if "=" in a else ("", "", a)
        if os.path.isabs(value):
            value = shown(value)
        out.append(f"{name}{eq}{value}")
    return out
