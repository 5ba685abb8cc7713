"""The error types bad input raises (a setting out of range is one kind), and the warnings the kernel collects."""

from __future__ import annotations

from collections.abc import Mapping
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


#: What every face says when memory runs out (a MemoryError, or a thread that cannot get
#: its stack), at whatever stage: the message after ``rankscope: error: ``.
OUT_OF_MEMORY = "out of memory: the inputs need more than this process may use (a run takes about 3.5 times its text)"


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is memory running out: a MemoryError (numpy's and pyarrow's are
    subclasses), the RuntimeError of a thread that could not get its stack, or the
    ImportError of a compiled module whose library could not be mapped (the loader's
    "failed to map segment" / "cannot allocate memory": a module imported late, under an
    address-space limit)."""
    if isinstance(exc, ImportError):
        text = str(exc)
        return "failed to map segment" in text or "cannot allocate memory" in text.lower()
    return isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "can't start new thread" in str(exc))


@dataclass(frozen=True)
class InputWarning:
    """A counted warning: ``kind`` groups them, ``count`` says how many, ``where`` is FILE[:LINE]."""

    kind: str
    count: int
    message: str
    where: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "count": self.count, "message": self.message, "where": self.where}


class SettingError(InputError, ValueError):
    """A setting outside its range, refused where the settings are built (``kernel/settings.py``).

    ``setting`` is the field name (``min_delta``). The message is a template in which
    ``{field}`` stands for each setting it mentions (``mentions``, the setting itself
    always), so each face words it with its own names through :meth:`named`: the command
    line's ``--min-delta``, the Python API's ``min_delta``. Unnamed, the field names show.
    ``prefixed``: the text starts ``NAME: `` (as ``InputError``'s path), else the name
    appears only where the template puts it. A ``ValueError`` too, as a bad argument is.
    """

    def __init__(self, setting: str, template: str, *, mentions: tuple[str, ...] = (), prefixed: bool = True,
                 names: Mapping[str, str] | None = None):
        chosen = dict(names or {})
        text = template
        for name in (setting, *mentions):
            text = text.replace("{" + name + "}", chosen.get(name, name))
        super().__init__(text, chosen.get(setting, setting) if prefixed else None)
        self.setting = setting
        self.template = template
        self.mentions = mentions
        self.prefixed = prefixed
        self.names = chosen

    def named(self, names: Mapping[str, str]) -> SettingError:
        """The same error in a face's words: ``names`` maps field names to the face's; a
        name chosen earlier (a face's own alias, e.g. ``--alpha``) is kept."""
        return SettingError(self.setting, self.template, mentions=self.mentions, prefixed=self.prefixed,
                            names={**names, **self.names})
