"""The one error type bad input raises, and the warnings the kernel collects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class InputError(Exception):
    """Malformed input. The CLI prints ``rankscope: error: <message>`` and exits 2.

    ``message`` is already in the ``FILE:LINE: what is wrong`` form when a line is known.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        if path is not None and line is not None:
            text = f"{path}:{line}: {message}"
        elif path is not None:
            text = f"{path}: {message}"
        else:
            text = message
        super().__init__(text)
        self.path = path
        self.line = line
        self.detail = message


@dataclass(frozen=True)
class InputWarning:
    """A counted warning: ``kind`` groups them, ``count`` says how many, ``where`` is FILE[:LINE]."""

    kind: str
    count: int
    message: str
    where: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "count": self.count, "message": self.message, "where": self.where}
