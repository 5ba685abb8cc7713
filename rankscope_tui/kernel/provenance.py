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
from dataclasses import dataclass, field

#: The file that marks a folder's data as rankscope's synthetic demo.
MARKER = "rankscope-synthetic.json"


@dataclass(frozen=True)
class Provenance:
    """What the marker says about the loaded files."""

    synthetic: bool = False
    showcase: dict = field(default_factory=dict)  # lesson -> qid (or list of qids), only when synthetic


def provenance(inputs: list) -> Provenance:
    """Synthetic when every lane and qrels file among ``inputs`` (``workspace.InputFile``)
    is listed, by sha256, in the marker file of its own folder."""
    checked = [f for f in inputs if f.role in ("lane", "qrels")]
    showcase: dict = {}
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
