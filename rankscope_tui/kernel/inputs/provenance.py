"""Provenance of the loaded data: is it rankscope's own synthetic demo?

The demo generator writes a marker file (:data:`MARKER`) beside its files. It lists the
sha256 of every file written and, under ``showcase``, the query that demonstrates each
lesson. A workspace whose every lane and qrels file is listed there, by sha256, is
labelled synthetic everywhere it is shown (SPEC §11); an edited file loses the label.
The kernel reads the marker; it never imports the generator.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InputError
from .files import TEMP_PREFIX, sha256_of

#: The file that marks a folder's data as rankscope's synthetic demo.
MARKER = "rankscope-synthetic.json"


class ListedFile(Protocol):
    """What provenance reads of a loaded file (``workspace.InputFile`` has it)."""

    @property
    def role(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def sha256(self) -> str: ...


@dataclass(frozen=True)
class Provenance:
    """What the marker says about the loaded files."""

    synthetic: bool = False
    showcase: dict[str, Any] = field(default_factory=dict)  # lesson -> qid (or list of qids), only when synthetic


def provenance(inputs: Sequence[ListedFile]) -> Provenance:
    """Synthetic when every lane and qrels file among ``inputs`` (``workspace.InputFile``)
    is listed, by sha256, in the marker file of its own folder."""
    checked = [f for f in inputs if f.role in ("lane", "qrels")]
    showcase: dict[str, Any] = {}
    for f in checked:
        marker = os.path.join(os.path.dirname(os.path.abspath(f.path)), MARKER)
        try:
            with open(marker, encoding="utf-8") as fh:
                data = json.load(fh)
            listed = set(data.get("files", {}).values())
            shown = data.get("showcase", {})
        except (OSError, ValueError, AttributeError):
            return Provenance()
        if f.sha256 not in listed:
            return Provenance()
        if isinstance(shown, dict):
            showcase.update(shown)
    return Provenance(True, showcase) if checked else Provenance()


def read_marker(directory: str) -> dict[str, Any] | None:
    """The demo marker of ``directory`` as a dict, or None when there is none (or it is not one)."""
    try:
        with open(os.path.join(directory, MARKER), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("synthetic") is not True or not isinstance(data.get("files"), dict):
        return None
    return data


def check_demo_dir(directory: str, written: dict[str, str] | None = None) -> None:
    """Refuse to write the demo into ``directory`` unless it is empty or holds a previous
    demo (its :data:`MARKER`), so a user's own files are never overwritten.

    With ``written`` (file name -> sha256 of the bytes about to be written), also refuse
    when a file of that name is there but is neither the one the marker lists (edited
    since the demo was written) nor the one about to be written (a demo of the same
    seed, written again). rankscope's own temporary entries (``.rankscope-*``) are not
    counted."""
    try:
        entries = [n for n in os.listdir(directory) if not n.startswith(TEMP_PREFIX)]
    except OSError as exc:
        raise InputError(f"cannot list the directory: {exc.strerror or exc}", directory) from None
    if not entries:
        return
    marker = read_marker(directory)
    if marker is None:
        raise InputError(f"the directory is not empty and holds no rankscope demo (no {MARKER}); refusing to "
                         "overwrite files in it: give a new or empty directory", directory)
    listed = marker["files"]
    for name, sha in (written or {}).items():
        p = os.path.join(directory, name)
        if name == MARKER or not os.path.lexists(p):
            continue
        if os.path.islink(p) or not os.path.isfile(p):
            raise InputError("is not a regular file written by the demo; refusing to replace it", p)
        try:
            current = sha256_of(p)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", p) from None
        if current != listed.get(name) and current != sha:
            raise InputError("was changed since the demo was written; refusing to overwrite it "
                             "(move it away, or give a new directory)", p)
