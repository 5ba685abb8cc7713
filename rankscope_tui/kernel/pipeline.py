"""What `evaluate` computes, in order, over one workspace: derived lanes, then every block of the report."""

from __future__ import annotations

from . import report as R
from .workspace import Workspace


def evaluate_report(ws: Workspace, gate_options: dict | None = None, thresholds_path: str | None = None) -> dict:
    """The full report dict for ``rankscope evaluate`` (and the dashboard's export)."""
    extra: dict = {}
    return R.build(ws, extra)
