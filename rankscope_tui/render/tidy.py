"""Tidy (long) tables of a report, for pandas, R, PyTerrier and ir_measures users.

The column names are the kernel's one vocabulary (``kernel.report.tidy``), shared with
the API's ``Evaluation.table()`` and ``Evaluation.per_query()``, which build their frames
from these rows.

- :func:`summary_rows`: one row per run x level x stratum x measure with the mean
  (``value``), its interval (``low``, ``high``, the interval's ``method``), ``n`` and the
  kernel's ``note`` on the interval (empty when none). The
  overall section is written with stratification and stratum ``(all)``.
- :func:`long_rows`: one row per run x level x positive query x measure, the shape of
  ``ir_measures -q`` / PyTerrier's per-query frame: ``run, level, query_id, measure, value``.

The file kind is told by the suffix: ``.csv`` (comma, RFC 4180), ``.tsv`` (tab, the same
quoting) or ``.parquet`` (typed columns, undefined numbers as nulls). CSV and TSV write
floats with ``repr`` (the shortest text that reads back to the same double, as
``pandas.read_csv`` does by default from pandas 3), undefined
numbers as empty fields, and text that a spreadsheet would run as a formula with a
leading ``'`` (as the wide per-query CSV, ``report.csv_text_field``).
"""

from __future__ import annotations

import io

from ..kernel.report.caveats import cell_note
from ..kernel.report.tidy import LONG_COLUMNS, NUMERIC_COLUMNS, OVERALL, SUMMARY_COLUMNS

__all__ = ["LONG_COLUMNS", "OVERALL", "SUMMARY_COLUMNS", "check_suffix", "long_rows", "summary_rows", "tidy_bytes"]

#: columns holding names (text a spreadsheet might run as a formula)
_TEXT = (set(SUMMARY_COLUMNS) | set(LONG_COLUMNS)) - NUMERIC_COLUMNS
SUFFIXES = (".csv", ".tsv", ".parquet")


def summary_rows(report: dict) -> list[dict]:
    metrics = report["inputs"]["settings"]["metrics"]
    sections = [(OVERALL, OVERALL, report["lanes"])]
    sections += [(s, label, block) for s, labels in report.get("strata", {}).items() for label, block in labels.items()]
    rows = []
    for strat, label, block in sections:
        for lane, levels in block.items():
            for level, cells in levels.items():
                for m in metrics:
                    c = cells[m]
                    rows.append({"run": lane, "level": level, "stratification": strat, "stratum": label, "measure": m,
                                 "value": c.get("value"), "low": c.get("low"), "high": c.get("high"),
                                 "method": c.get("method") or "", "n": c.get("n"), "note": cell_note(c)})
    return rows


def long_rows(report: dict) -> list[dict]:
    metrics = report["inputs"]["settings"]["metrics"]
    rows = []
    for lane, levels in report["per_query"].items():
        for level, per in levels.items():
            for qid, vals in per.items():
                for m in metrics:
                    rows.append({"run": lane, "level": level, "query_id": qid, "measure": m, "value": vals[m]})
    return rows


def check_suffix(path: str, option: str) -> None:
    from ..kernel.errors import InputError

    if not path.lower().endswith(SUFFIXES):
        raise InputError(f"{option} writes .csv, .tsv or .parquet (told by the suffix)", path)


def tidy_bytes(rows: list[dict], columns: tuple[str, ...], path: str) -> bytes:
    """The table in the format of ``path``'s suffix."""
    if path.lower().endswith(".parquet"):
        return _parquet(rows, columns)
    return _delimited(rows, columns, "\t" if path.lower().endswith(".tsv") else ",").encode("utf-8")


def _field(col: str, v) -> str:
    from .report import csv_text_field

    if v is None:
        return ""
    if col in _TEXT:
        return csv_text_field(str(v))
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _delimited(rows: list[dict], columns: tuple[str, ...], sep: str) -> str:
    buf = io.StringIO()
    specials = (sep, '"', "\r", "\n")

    def line(fields: list[str]) -> None:
        # csv.writer quotes only its own line terminator: a CR in an id is quoted by hand
        buf.write(sep.join('"' + f.replace('"', '""') + '"' if any(c in f for c in specials) else f for f in fields) + "\n")

    line(list(columns))
    for r in rows:
        line([_field(c, r[c]) for c in columns])
    return buf.getvalue()


def _parquet(rows: list[dict], columns: tuple[str, ...]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"low": pa.float64(), "high": pa.float64(), "value": pa.float64(), "n": pa.int64()}
    table = pa.table({c: pa.array([r[c] for r in rows], type=types.get(c, pa.string())) for c in columns})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()

