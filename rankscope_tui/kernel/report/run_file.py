"""A run made by asking a retriever (``inputs.retrieve``), written as files.

Two files, all-or-nothing (``output.write_outputs``): the TREC run at the path given, and
its sidecar ``RUN.provenance.json`` (``inputs.sidecar``) with the provenance and the
seconds per query. The run's bytes depend only on the answers; the sidecar also holds the
time and the seconds, which differ from one asking to the next.
"""

from __future__ import annotations

from ..inputs.retrieve import RetrievedRun
from ..inputs.sidecar import SIDECAR_SUFFIX
from .output import check_outputs, dumps_strict, write_outputs


def run_file_paths(out: str) -> list[tuple[str, str]]:
    """``(what, path)`` of the two files written for ``out``."""
    return [("--out", out), ("the provenance sidecar", out + SIDECAR_SUFFIX)]


def check_run_outputs(out: str, inputs: list[str]) -> None:
    """Refuse, before any query is asked, an ``out`` (or its sidecar) that cannot be written
    or would overwrite an input (``output.check_outputs``)."""
    check_outputs([(what, path) for what, path in run_file_paths(out)], inputs)


def write_run(run: RetrievedRun, out: str, inputs: list[str] | None = None) -> list[str]:
    """Write ``run`` to ``out`` and its sidecar, atomically; the paths written."""
    check_run_outputs(out, list(inputs or []))
    paths = [p for _, p in run_file_paths(out)]
    write_outputs([(paths[0], run.trec_text()), (paths[1], dumps_strict(run.provenance()))])
    return paths
