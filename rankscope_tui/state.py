"""What the dashboard knows, in one place: the options it was started with, the base
workspace and its report, and the wording of errors. Screens read this; they never
read argparse, the app module or the command line."""

from __future__ import annotations


def error_line(exc: BaseException) -> str:
    """The command line's one-line wording for an error (``rankscope: error: FILE:LINE: what``)."""
    from .kernel.errors import InputError

    msg = " ".join(str(exc).split("\n"))
    if isinstance(exc, InputError):
        return f"rankscope: error: {msg}"
    return f"rankscope: internal error: {type(exc).__name__}: {msg}"
