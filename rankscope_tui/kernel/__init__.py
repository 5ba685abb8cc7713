"""The kernel's front door: every number the faces show starts at one of these entry points.

The command line, the Python API and the dashboard call the instruments through this
module, never through the rooms behind it. Each name is loaded on first use (PEP 562),
so ``import rankscope_tui.kernel`` costs nothing at start-up; a type checker sees the
real signatures through the ``TYPE_CHECKING`` block below.

The rooms, in the order a number passes through them (a room imports only the rooms
before it; ``tests/test_architecture.py`` holds the order):

- ``errors``, ``parallel``: the one error type; running pieces on the available CPUs.
- ``inputs``: bytes, compression, format detection, one reader per format.
- ``ranking``: judgments as columns, ids as codes, hits in trec_eval's order.
- ``measures``: one module per measure, the registry and the names users type.
- ``settings``: every setting that changes a number, checked where it is made.
- ``statistics``: intervals, resampling, paired tests, multiplicity, the verdict.
- ``judgments``: two sets of labels for the same pairs: κ, rank correlations, PPI.
- ``fusion``: RRF and convex fusion, and their calibration.
- ``gate``: score floors, FNIR and FPIR, thresholds.json, the gate analysis.
- ``attribution``: which lane found each positive's answer.
- ``workspace``: loaded rows and the per-query values derived from them.
- ``report``: report.json as a dict, strict JSON text, atomic output, figure numbers.
- ``instruments``: what each command computes over one workspace.
- ``scale``: query buckets on disk, local and Dask workers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real signatures, for the type checker only
    from .gate.analysis import analyse_gate
    from .inputs.retrieve import retrieve
    from .instruments.agree import agree, agreement_tables
    from .instruments.calibrate import calibrate
    from .instruments.compare import compare, compare_all_pairs, default_candidates, plan_compare, query_deltas
    from .instruments.comparison_log import append_log as append_comparison_log
    from .instruments.comparison_log import read_log as read_comparison_log
    from .instruments.diff import diff_reports as diff
    from .instruments.evaluate import evaluate_report as evaluate
    from .instruments.evaluate import prepare, report_of
    from .instruments.goldens import check as check_goldens
    from .instruments.goldens import side_by_side as goldens_side_by_side
    from .instruments.goldens import write_lines as write_goldens
    from .instruments.plan import plan_queries
    from .instruments.reparse import reparse
    from .instruments.rules import git_state, read_rules
    from .instruments.rules import judge as judge_rule
    from .instruments.rules import judge_gates as judge
    from .instruments.rules import tally as tally_rules
    from .instruments.tables import table_report
    from .report.run_file import write_run
    from .scale.engine import run_engine as evaluate_in_buckets
    from .workspace.loaded import load, read_inputs
    from .workspace.per_query_tables import load_tables

#: The rooms, bottom first: a room imports only rooms before it (``tests/test_architecture.py``).
#: Each is a sub-package whose docstring says what it owns, or one loose module (named in
#: ``LOOSE`` with the reason it stands alone).
ROOMS: tuple[str, ...] = ("errors", "parallel", "inputs", "ranking", "measures", "settings", "statistics", "judgments",
                          "fusion", "gate", "attribution", "workspace", "report", "instruments", "scale")

#: The kernel's loose modules, and why each is not in a room of its own stage.
LOOSE: dict[str, str] = {
    "errors": "the one error type and the warnings every room raises or collects",
    "parallel": "the CPU pool the readers, the encoding and the resampling share",
    "settings": "the frozen settings every stage reads; it checks itself where it is made",
}

#: entry point -> (module under the kernel, name in it). One verb per instrument.
ENTRY_POINTS: dict[str, tuple[str, str]] = {
    "read_inputs": ("workspace.loaded", "read_inputs"),
    "load": ("workspace.loaded", "load"),
    "load_tables": ("workspace.per_query_tables", "load_tables"),
    "prepare": ("instruments.evaluate", "prepare"),
    "report_of": ("instruments.evaluate", "report_of"),
    "evaluate": ("instruments.evaluate", "evaluate_report"),
    "evaluate_in_buckets": ("scale.engine", "run_engine"),
    "table_report": ("instruments.tables", "table_report"),
    "compare": ("instruments.compare", "compare"),
    "compare_all_pairs": ("instruments.compare", "compare_all_pairs"),
    "plan_compare": ("instruments.compare", "plan_compare"),
    "default_candidates": ("instruments.compare", "default_candidates"),
    "query_deltas": ("instruments.compare", "query_deltas"),
    "read_comparison_log": ("instruments.comparison_log", "read_log"),
    "append_comparison_log": ("instruments.comparison_log", "append_log"),
    "calibrate": ("instruments.calibrate", "calibrate"),
    "analyse_gate": ("gate.analysis", "analyse_gate"),
    "diff": ("instruments.diff", "diff_reports"),
    "judge": ("instruments.rules", "judge_gates"),
    "read_rules": ("instruments.rules", "read_rules"),
    "judge_rule": ("instruments.rules", "judge"),
    "tally_rules": ("instruments.rules", "tally"),
    "git_state": ("instruments.rules", "git_state"),
    "write_goldens": ("instruments.goldens", "write_lines"),
    "check_goldens": ("instruments.goldens", "check"),
    "goldens_side_by_side": ("instruments.goldens", "side_by_side"),
    "plan_queries": ("instruments.plan", "plan_queries"),
    "suggest_pool": ("instruments.pool", "suggest"),
    "agree": ("instruments.agree", "agree"),
    "agreement_tables": ("instruments.agree", "agreement_tables"),
    "reparse": ("instruments.reparse", "reparse"),
    "define_measure": ("measures.user", "define"),
    "unregister_measure": ("measures.user", "unregister"),
    "measures_scope": ("measures.user", "scope"),
    "load_measures": ("measures.user", "load_file"),
    "retrieve": ("inputs.retrieve", "retrieve"),
    "write_run": ("report.run_file", "write_run"),
}

__all__ = [  # the keys of ENTRY_POINTS, written out so linters and readers see them
    "agree", "agreement_tables", "define_measure", "load_measures", "measures_scope", "unregister_measure",
    "analyse_gate", "append_comparison_log", "calibrate", "check_goldens", "compare", "compare_all_pairs", "default_candidates", "diff",
    "evaluate", "evaluate_in_buckets", "git_state", "goldens_side_by_side", "judge", "judge_rule", "load", "load_tables", "plan_compare",
    "plan_queries", "prepare", "suggest_pool", "query_deltas", "reparse", "read_comparison_log", "read_inputs", "read_rules", "report_of", "table_report",
    "tally_rules", "write_goldens", "retrieve", "write_run",
]
assert sorted(__all__) == sorted(ENTRY_POINTS), "the front door's __all__ and ENTRY_POINTS disagree"


def __getattr__(name: str) -> Any:
    try:
        module, attr = ENTRY_POINTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
