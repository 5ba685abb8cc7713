"""rankscope: an instrument for looking inside retrieval rankings.

The Python API (``rankscope_tui.api``, Textual-free) is reachable from the package:
``rankscope_tui.evaluate``, ``compare``, ``paired``, ``plan``, ``agree``, ``iter_calc``, ``calc_aggregate``,
``canonical_key``, ``define`` / ``unregister`` / ``defined_measures`` (measures the user
defines: README, Measures you define), and the lesson page's functions ``rank_of`` (lesson 02), ``sweep``,
``margin_sweep``, ``operating_point`` (lesson 11), ``calibrate`` (lessons 08 and 11) and
``run_from`` (a run made by asking a retriever, README: Runs straight from a retriever).
It is imported on first use, so ``import rankscope_tui`` (and the command line's start)
loads nothing but this file.
"""

#: The one place the version is written: pyproject.toml reads it from here (``dynamic``).
__version__ = "0.1.0"

#: The public names of the API, loaded from ``rankscope_tui.api`` when first asked for.
__all__ = ["evaluate", "compare", "paired", "plan", "pool", "pool_qrels", "agree", "rank_of", "sweep", "margin_sweep", "operating_point",
           "calibrate", "iter_calc", "calc_aggregate", "canonical_key", "tables", "Evaluation", "Comparison",
           "Paired", "Metric", "InputError", "define", "unregister", "defined_measures", "run_from", "RetrievedRun"]


def __getattr__(name: str):
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'rankscope_tui' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
