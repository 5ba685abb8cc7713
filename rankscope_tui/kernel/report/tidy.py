"""The one column vocabulary of rankscope's tidy tables.

Three tables are tidy (one value a row): the summary of means (``evaluate --summary``
and the API's ``Evaluation.table()``) and the long per-query table
(``evaluate --per-query-long`` and ``Evaluation.per_query()``). They share one set of
names, decided here and used by every face:

- ``run``: the lane (ir_measures, PyTerrier and ranx call a system's output a run);
- ``level``: ``doc`` or ``group``;
- ``stratification`` and ``stratum``: the strata file and its label, ``(all)`` for the
  overall rows;
- ``query_id``: the query (ir_measures' name);
- ``measure``: the canonical key (``ap``, ``ndcg@10``; ``measures.canonical_key``);
- ``value``: the number (a per-query value, or a mean over the queries);
- ``low``, ``high``, ``method``, ``n``: the mean's interval, the interval's method and the
  number of queries, as report.json's cells name them;
- ``note``: the kernel's flags on the interval (``report.caveats.cell_note``: coverage below
  nominal on a small stratum, not informative when nothing varies), empty when none.
"""

from __future__ import annotations

#: stratification and stratum of the overall rows of the summary
OVERALL = "(all)"
#: means with intervals: one row per run x level x stratum x measure
SUMMARY_COLUMNS = ("run", "level", "stratification", "stratum", "measure", "value", "low", "high", "method", "n", "note")
#: per-query values: one row per run x level x query x measure
LONG_COLUMNS = ("run", "level", "query_id", "measure", "value")
#: the columns holding numbers (the rest hold names)
NUMERIC_COLUMNS = frozenset({"value", "low", "high", "n"})
