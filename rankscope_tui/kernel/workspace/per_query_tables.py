"""Per-query tables as input: metric values computed elsewhere, given rankscope's statistics.

A per-query table holds one value per (run, query, measure): what ``trec_eval -q``,
``ir_measures -q`` (TSV or JSONL), PyTerrier's ``perquery=True`` experiment, rankscope's
own ``--per-query`` CSV or a warehouse export (``run, query_id, measure, value``) write.
:func:`read_per_query_table` reads one file; :class:`TableWorkspace` holds the tables
and keeps :class:`~.contract.PerQuery` (per-query values, the compared queries, lanes,
levels: what ``compare`` and ``report.lanes_block`` / ``strata_block`` ask), so compare,
the interval tables and strata run the same code as on runs; ``instruments.tables``
builds its report. Nothing that needs the rankings (miss attribution, fusion, the gate,
ceilings, judged@k of the largest losses) exists here, and the report says so.

Formats (detected from the content; ``fmt`` overrides; an undecidable file is an
error, never a guess):

========================  ==================================================  ==========
format                    a line                                              runs
========================  ==================================================  ==========
``trec_eval``             ``measure<ws>qid<ws>value`` (``trec_eval -q``)      one a file
``ir_measures``           ``qid<TAB>measure<TAB>value`` (``ir_measures -q``)  one a file
``jsonl``                 ``{"query_id": .., "measure": .., "value": ..}``    a ``run``
                          (ir_measures ``-o jsonl``; ``qid`` also read)       key, or one
``long``                  a header naming run, query, measure and value       a run
                          columns (CSV or TSV): PyTerrier's ``name, qid,      column, or
                          measure, value`` (with or without pandas' index     one
                          column), a warehouse's ``run, query_id, measure,
                          value``
``rankscope``             ``lane,level,qid,<metric>...`` (``--per-query``)    a column
========================  ==================================================  ==========

Skipped, and counted in a note: summary rows (qid ``all``, as trec_eval and ir_measures
write them), trec_eval's ``runid`` and its counts (``num_q``, ``num_ret``, ``num_rel``,
``num_rel_ret``, ``num_nonrel_judged_ret``) and ``relstring``. A blank line or a ``#``
line is skipped everywhere, as in runs.

Measure names go through the resolver every face uses (``measures.parse_name``, the
README's Measures table): a name another tool gives to a measure rankscope computes
identically is read as rankscope's canonical key (trec_eval ``map``, ``ndcg_cut_10``,
``P_10``, ``recall_100``, ``success_10``, ``recip_rank``, ``Rprec``; ir_measures ``AP``,
``nDCG@10``, ``P@10``, ``R@100``, ``Success@10``, ``RR``; rankscope's own keys), so a
trec_eval table's ``map`` and an ir_measures table's ``AP`` are one measure, ``ap``,
and ``--metric map`` finds either. Any other name is kept as written and compared as
given (ir_measures' ``Judged@10`` divides by min(k, retrieved), so it is not
rankscope's ``judged@10`` and keeps its name).
"""

from __future__ import annotations

import csv
import functools
import io
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, cast

import numpy as np
from numpy.typing import NDArray

from .. import measures as M
from ..errors import InputError, InputWarning
from ..inputs.files import Digest, decode_text, read_bytes
from ..inputs.formats import PER_QUERY_FORMATS as FORMATS
from ..ranking import judgments as J
from ..settings import LoadSettings
from .base import WorkspaceBase

if TYPE_CHECKING:
    from ..inputs.formats import InputOptions
    from .loaded import InputFile

    #: What a table's measure is: one rankscope computes, read under another name, or one it does not.
    AnyMeasure = Union["ReadMeasure", "TableMeasure"]

#: What the report says in place of the blocks a per-query table cannot give.
NOT_AVAILABLE = ("attribution, fusion, the gate and ceilings need the rankings and the qrels; "
                 "a per-query table holds only metric values")
SUMMARY_QID = "all"
#: trec_eval output names that are counts or strings, not per-query measures.
TREC_EVAL_SKIPPED = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "relstring")

_RUN_COLUMNS = ("run", "name", "system", "run_id", "runid", "lane", "model")
_QUERY_COLUMNS = ("query_id", "qid", "q_id", "query-id", "topic", "query")
_MEASURE_COLUMNS = ("measure", "metric")
_VALUE_COLUMNS = ("value", "score")


# --------------------------------------------------------------------------- measures


@dataclass(frozen=True)
class TableMeasure:
    """A measure known only by its name in a table (rankscope did not compute it).

    Duck-types :class:`metrics.MetricKey` where the report reads one: its mean gets a
    percentile bootstrap interval (never a Wilson interval: nothing says it is 0/1)."""

    name: str
    source: str = ""

    kind = "table"
    k = None
    is_proportion = False
    needs_relevant = False

    @property
    def key(self) -> str:
        return self.name

    def definition(self, relevant: int) -> str:
        return f"{self.name}: as the per-query table gives it ({self.source}); rankscope did not compute it"


@dataclass(frozen=True)
class ReadMeasure:
    """A rankscope measure read from a table under another tool's name."""

    metric: M.MetricKey
    names: tuple[str, ...]

    kind = property(lambda self: self.metric.kind)
    k = property(lambda self: self.metric.k)
    is_proportion = property(lambda self: self.metric.is_proportion)
    needs_relevant = property(lambda self: self.metric.needs_relevant)

    @property
    def key(self) -> str:
        return self.metric.key

    def definition(self, relevant: int) -> str:
        return (f"{self.metric.definition(relevant)}; read from the per-query table as {', '.join(self.names)} "
                "(computed by the tool that wrote it)")


def measure_key(name: str) -> tuple[str, bool]:
    """(key, known): rankscope's key for a measure a table names ``name`` and True, read by
    the one resolver every face uses (``measures.parse_name``: trec_eval's ``map``,
    ``P_10``, ``ndcg_cut_10``, ir_measures' ``AP``, ``nDCG@10``, rankscope's keys, ...), or
    (``name``, False) for a name that is not a measure rankscope computes the same way
    (trec_eval's ``gm_map``, ir_measures' ``Judged@10``, which divides by min(k, retrieved))."""
    try:
        return M.parse_name(name).key, True
    except InputError:
        return name, False


@functools.cache
def _unit_interval(key: str) -> bool:
    """Whether a known measure's values lie in [0, 1] (all but the counts)."""
    return M.parse_name(key).measure.unit_interval


# --------------------------------------------------------------------------- one table


@dataclass
class PerQueryTable:
    """One file's values: ``values[(run, level, measure key)] = {qid: (value, line)}``."""

    path: str
    format: str
    values: dict[tuple[str, str, str], dict[str, tuple[float, int]]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)  # measure key -> the names it was read as
    known: set[str] = field(default_factory=set)  # the keys that are rankscope measures
    runs: list[str] = field(default_factory=list)  # in file order
    skipped: dict[str, int] = field(default_factory=dict)  # what was skipped -> how many rows
    digest: Digest | None = None
    _measures: dict[str, tuple[str, bool]] = field(default_factory=dict, repr=False)  # name -> (key, known)

    def sha256(self) -> str:
        return self.digest.hexdigest() if self.digest else ""

    def add(self, run: str, level: str, name: str, qid: str, value: object, line: int) -> None:
        """One value: ``line`` is its line (or row) for errors; summary rows are counted and skipped."""
        if qid == SUMMARY_QID:
            self.skipped["summary rows (qid 'all')"] = self.skipped.get("summary rows (qid 'all')", 0) + 1
            return
        if not run:
            raise InputError("empty run name", self.path, line)
        if not qid:
            raise InputError("empty query id", self.path, line)
        if not name:
            raise InputError("empty measure name", self.path, line)
        if "\r" in qid or "\n" in qid:
            raise InputError("a query id may not contain a line break", self.path, line)
        x = _value(value, self.path, line, name)
        resolved = self._measures.get(name)
        if resolved is None:  # once per measure name, not per row
            resolved = self._measures[name] = measure_key(name)
        key, known = resolved
        if known:
            # read as rankscope's measure, it must be one: a proportion, and 0 or 1 for hit@k
            # (its mean gets a Wilson interval); a mislabelled column is refused, not averaged
            if not _unit_interval(key):  # a count (num_ret, num_rel, num_rel_ret)
                if x < 0.0:
                    raise InputError(f"{name} (rankscope's {key}) is a count >= 0, not {x!r}", self.path, line)
            elif not 0.0 <= x <= 1.0:
                raise InputError(f"{name} (rankscope's {key}) is a proportion in [0, 1], not {x!r}", self.path, line)
            if key.startswith("hit@") and x not in (0.0, 1.0):
                raise InputError(f"{name} (rankscope's {key}) is 0 or 1 per query, not {x!r}", self.path, line)
            self.known.add(key)
        cell = self.values.get((run, level, key))
        if cell is None:  # a new (run, level, measure)
            cell = self.values[(run, level, key)] = {}
            seen = self.names.setdefault(key, [])
            if name not in seen:
                seen.append(name)
            if run not in self.runs:  # a run name is a lane name (report paths, printed tables)
                from ..inputs.readers import check_lane_name

                check_lane_name(run, f"{self.path}:{line}")
                self.runs.append(run)
        if qid in cell:
            first = cell[qid][1]
            raise InputError(f"two values of {name} for query {qid!r} of run {run!r} (first at line {first})",
                             self.path, line)
        cell[qid] = (x, line)


def _value(value: object, path: str, line: int, name: str) -> float:
    if isinstance(value, bool):
        raise InputError(f"value of {name} must be a number, not {value!r}", path, line)
    if isinstance(value, str):
        text = value.strip()
        try:
            x = float(text)
        except ValueError:
            raise InputError(f"value of {name} must be a number, not {text[:40]!r}", path, line) from None
    elif isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:
            raise InputError(f"value of {name} is too large", path, line) from None
    else:
        raise InputError(f"value of {name} must be a number, not {value!r}"[:200], path, line)
    if not math.isfinite(x):
        raise InputError(f"value of {name} must be finite, not {value!r}", path, line)
    return x


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line that is not blank or a ``#`` comment."""
    for i, raw in enumerate(text.split("\n"), start=1):
        if raw.strip() and not raw.lstrip().startswith("#"):
            yield i, raw.rstrip("\r")


def _header_names(line: str) -> list[str] | None:
    delim = "\t" if "\t" in line else ","
    try:
        cells = next(csv.reader([line], delimiter=delim))
    except (csv.Error, StopIteration):
        return None
    return [c.strip().lower() for c in cells]


def _pick(names: list[str], choices: Sequence[str]) -> int | None:
    hits = [i for i, n in enumerate(names) if n in choices]
    return hits[0] if len(hits) == 1 else (None if not hits else -1)


def detect_format(text: str, path: str) -> str:
    """The format of a per-query table from its content (see the module docstring)."""
    lines = list(_lines(text))
    if not lines:
        raise InputError("empty file (only blank or comment lines)", path)
    first = lines[0][1].lstrip("\ufeff")
    if first.lstrip().startswith("{"):
        return "jsonl"
    names = _header_names(first) or []
    if names[:3] == ["lane", "level", "qid"]:
        return "rankscope"
    if _pick(names, _QUERY_COLUMNS) is not None and _pick(names, _MEASURE_COLUMNS) is not None \
            and _pick(names, _VALUE_COLUMNS) is not None:
        return "long"
    fields = [ln.split() for _, ln in lines]
    if any(len(f) != 3 for f in fields):
        i = next(k for k, f in enumerate(fields) if len(f) != 3)
        raise InputError(f"not a per-query table: expected 3 fields ('measure qid value' as trec_eval -q writes, or "
                         f"'qid measure value' as ir_measures -q does) or a header naming query, measure and value "
                         f"columns, found {len(fields[i])} fields", path, lines[i][0])
    col0 = {f[0] for f in fields}
    col1 = {f[1] for f in fields}
    trec = bool(col0 & set(TREC_EVAL_SKIPPED)) or SUMMARY_QID in col1
    irm = SUMMARY_QID in col0
    if trec != irm:
        return "trec_eval" if trec else "ir_measures"
    known0 = all(measure_key(n)[1] for n in col0 - set(TREC_EVAL_SKIPPED))
    known1 = all(measure_key(n)[1] for n in col1)
    if known0 != known1:
        return "trec_eval" if known0 else "ir_measures"
    raise InputError("cannot tell which column holds the measure (trec_eval -q writes 'measure qid value', "
                     "ir_measures -q 'qid measure value'); give the format (--per-query-format trec_eval or "
                     "ir_measures)", path)


def read_per_query_table(path: str, name: str | None = None, fmt: str | None = None) -> PerQueryTable:
    """Read one per-query table. ``name`` names the run of a one-run format (default: the
    file's stem, as for a lane); a file that carries run names refuses one."""
    from ..inputs.readers import file_lane_name

    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"unknown per-query table format {fmt!r} (known: {', '.join(FORMATS)})", "--per-query-format")
    stored, raw = read_bytes(path)
    digest = Digest(stored)
    del stored
    text = decode_text(raw, path)
    del raw
    fmt = fmt or detect_format(text, path)
    table = PerQueryTable(path, fmt, digest=digest)
    # the lanes' naming rule (``bm25.q`` -> ``bm25``; ``bm25.trec_eval.q`` is refused: --per-query-in bm25=PATH),
    # which matters only when the file does not name its runs
    refused: InputError | None = None
    default_run = name
    if default_run is None:
        try:
            default_run = file_lane_name(path, "--per-query-in")
        except InputError as exc:
            refused, default_run = exc, "run"
    reader = {"trec_eval": _read_trec_eval, "ir_measures": _read_ir_measures, "jsonl": _read_jsonl,
              "long": _read_long, "rankscope": _read_rankscope}[fmt]
    carries_names = reader(table, text, default_run)
    if refused is not None and not carries_names:
        raise refused
    if carries_names and name is not None:
        raise InputError(f"the table names its runs ({', '.join(table.runs)}); give it without NAME=", path)
    if not table.values:
        raise InputError("no per-query value in the table (only summary or count rows)", path)
    return table


def _read_trec_eval(table: PerQueryTable, text: str, run: str) -> bool:
    for i, line in _lines(text):
        f = line.split()
        if len(f) != 3:
            raise InputError(f"expected 3 fields 'measure qid value' (trec_eval -q), found {len(f)}", table.path, i)
        measure, qid, value = f
        if measure in TREC_EVAL_SKIPPED:
            table.skipped[measure] = table.skipped.get(measure, 0) + 1
            continue
        table.add(run, "doc", measure, qid, value, i)
    return False


def _read_ir_measures(table: PerQueryTable, text: str, run: str) -> bool:
    for i, line in _lines(text):
        f = line.split("\t") if "\t" in line else line.split()
        if len(f) != 3:
            raise InputError(f"expected 3 fields 'qid<TAB>measure<TAB>value' (ir_measures -q), found {len(f)}",
                             table.path, i)
        qid, measure, value = (x.strip() for x in f)
        table.add(run, "doc", measure, qid, value, i)
    return False


def _read_jsonl(table: PerQueryTable, text: str, run: str) -> bool:
    from ..inputs.files import load_json

    named = None
    for i, line in _lines(text):
        try:
            obj = load_json(line, table.path)
        except InputError as exc:
            raise InputError(exc.detail, table.path, i) from None
        if not isinstance(obj, dict):
            raise InputError("expected one JSON object a line", table.path, i)
        q = _one_key(obj, _QUERY_COLUMNS, "query id", table.path, i)
        m = _one_key(obj, _MEASURE_COLUMNS, "measure", table.path, i)
        v = _one_key(obj, _VALUE_COLUMNS, "value", table.path, i)
        r = next((k for k in _RUN_COLUMNS if k in obj), None)
        if named is None:
            named = r is not None
        elif named != (r is not None):
            raise InputError("some lines name their run and some do not", table.path, i)
        for what, x in (("query id", obj[q]), ("measure", obj[m])) + ((("run", obj[r]),) if r else ()):
            if not isinstance(x, (str, int)) or isinstance(x, bool):
                raise InputError(f"{what} must be a string, not {x!r}"[:200], table.path, i)
        table.add(str(obj[r]) if r else run, "doc", str(obj[m]), str(obj[q]), obj[v], i)
    return bool(named)


def _one_key(obj: dict[str, Any], choices: Sequence[str], what: str, path: str, line: int) -> str:
    keys = [k for k in choices if k in obj]
    if len(keys) != 1:
        found = "none" if not keys else " and ".join(keys)
        raise InputError(f"expected one {what} key ({', '.join(choices)}), found {found}", path, line)
    return keys[0]


def _csv_rows(text: str, path: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(line, cells) of a CSV/TSV table after its header (the delimiter is the header's:
    a tab if it has one, else a comma), with RFC 4180 quoting."""
    lines = list(_lines(text))
    if not lines:  # a format given, so detect_format (which says the same) did not look
        raise InputError("empty file (only blank or comment lines)", path)
    header_line, header = lines[0]
    delim = "\t" if "\t" in header else ","
    body = "\n".join(ln for _, ln in lines)
    reader = csv.reader(io.StringIO(body, newline=""), delimiter=delim)
    numbers = [n for n, _ in lines]
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise InputError(f"not a CSV table: {exc}", path, numbers[min(reader.line_num, len(numbers)) - 1]) from None
    if len(rows) != len(lines):  # a quoted field held a line end: lines no longer match rows
        raise InputError("a quoted field holds a line break (not a per-query table)", path, header_line)
    names = [c.strip().lstrip("\ufeff").lower() for c in rows[0]]
    return names, list(zip(numbers[1:], rows[1:]))


def _read_long(table: PerQueryTable, text: str, run: str) -> bool:
    names, rows = _csv_rows(text, table.path)
    q, m, v = (_pick(names, c) for c in (_QUERY_COLUMNS, _MEASURE_COLUMNS, _VALUE_COLUMNS))
    r = _pick(names, _RUN_COLUMNS)
    for col, what in ((q, "query"), (m, "measure"), (v, "value"), (r, "run")):
        if col == -1:
            raise InputError(f"the header names more than one {what} column", table.path, 1)
    for col, what, choices in ((q, "query", _QUERY_COLUMNS), (m, "measure", _MEASURE_COLUMNS),
                               (v, "value", _VALUE_COLUMNS)):
        if col is None:  # a format given as long need not have been detected from these columns
            raise InputError(f"the header names no {what} column (one of {', '.join(choices)})", table.path, 1)
    assert q is not None and m is not None and v is not None  # each checked just above
    for line, cells in rows:
        if len(cells) != len(names):
            raise InputError(f"expected {len(names)} fields as in the header, found {len(cells)}", table.path, line)
        table.add(cells[r].strip() if r is not None else run, "doc", cells[m].strip(), cells[q].strip(), cells[v], line)
    return r is not None


def _drop_quote(text: str) -> str:
    """rankscope's CSV writes a text field that a spreadsheet would run as a formula with a
    leading ``'`` (render.report.csv_text_field): drop one to get the id back."""
    return text[1:] if text[:1] == "'" and len(text) > 1 and text[1] in "=+-@\t\r'" else text


def _read_rankscope(table: PerQueryTable, text: str, run: str) -> bool:
    names, rows = _csv_rows(text, table.path)
    header_line, header = next(_lines(text))
    # the header's cells as written (names are lowercased), split as _csv_rows split them
    written = next(csv.reader([header], delimiter="\t" if "\t" in header else ","))
    # a format given as rankscope need not have been detected from this header; its rows
    # are read by position, so a header of other columns (or fewer) is refused here
    if names[:3] != ["lane", "level", "qid"]:
        found = ", ".join(repr(c.strip().lstrip("\ufeff")) for c in written[:3])
        raise InputError(f"the header must begin lane, level, qid (rankscope's --per-query table), found {found}"[:300],
                         table.path, header_line)
    metrics = [_drop_quote(n) for n in written][3:]
    for line, cells in rows:
        if len(cells) != len(names):
            raise InputError(f"expected {len(names)} fields as in the header, found {len(cells)}", table.path, line)
        lane, level, qid = (_drop_quote(c) for c in cells[:3])
        if level not in ("doc", "group"):
            raise InputError(f"level must be doc or group, not {level!r}"[:200], table.path, line)
        for name, value in zip(metrics, cells[3:]):
            if name.strip() in LIST_COLUMNS or name.startswith(CEILING_PREFIX):
                continue  # the list length and its ceilings (report.short_lists) describe the run, not a measure
            table.add(lane, level, name.strip(), qid, value, line)
    return True


#: the columns ``--per-query`` writes after the metrics (render.report.per_query_csv)
LIST_COLUMNS = ("length",)
CEILING_PREFIX = "ceiling "


# --------------------------------------------------------------------------- the workspace


@dataclass
class TableLane:
    """A run known only by its per-query values (no ranking)."""

    name: str
    path: str
    n_rows: int = 0


def qrels_classes(qrels_path: str, relevant: int,
                  options: InputOptions | None = None) -> tuple[set[str], dict[str, int], str]:
    """The positive queries of a qrels file (a judgment with grade >= ``relevant``), how many
    queries fall in each class (``positives``, ``negatives``, ``partial``, ``unjudged``:
    ``judgments.query_classes``, as on runs) and the file's sha256; ``options``: how it is
    read (``formats.InputOptions``, as for runs)."""
    from ..inputs.readers import read_qrels

    raw = read_qrels(qrels_path, options)
    grade = np.asarray(raw.grade, dtype=np.int64)
    qids = np.asarray(raw.qid.to_pylist(), dtype=object)
    names, codes = np.unique(qids.astype(str), return_inverse=True)
    j = J.Judgments(codes.astype(np.int32), np.zeros(codes.size, np.int64), grade, 1)
    cls = J.query_classes(j, int(names.size), relevant)
    counts = {"positives": int((cls == J.POSITIVE).sum()), "negatives": int((cls == J.NEGATIVE).sum()),
              "partial": int((cls == J.PARTIAL).sum()), "unjudged": int((cls == J.UNJUDGED).sum())}
    return set(qids[grade >= relevant].tolist()), counts, raw.sha256()


def load_tables(tables: list[tuple[str | None, str]], settings: LoadSettings = LoadSettings(), *,
                qrels: str | None = None, strata: Sequence[str] = (), fmt: str | None = None) -> "TableWorkspace":
    """The workspace over per-query tables ``[(run name or None, path), ...]``.

    The compared queries: with ``qrels``, its positive queries (table rows of other
    queries are left out and counted; a positive a run's table lacks scores 0 on a
    measure rankscope knows, like a positive missing from a lane, and is an error on any
    other); without, every query of the tables, and each (run, level, measure) must hold
    every one of them (pairing needs a value on both sides)."""
    if not tables:
        raise InputError("at least one --per-query-in is needed", "--per-query-in")
    read = [read_per_query_table(p, n, fmt) for n, p in tables]
    owner: dict[str, str] = {}
    for t in read:
        for run in t.runs:
            if run in owner:
                raise InputError(f"run {run!r} is in two tables (first in {owner[run]}); name one with NAME=PATH",
                                 t.path)
            owner[run] = t.path
    return TableWorkspace.from_tables(read, settings, qrels=qrels, strata=strata)


@dataclass
class TableWorkspace(WorkspaceBase):
    """Per-query tables, answering :class:`~.contract.PerQuery` (what ``compare`` and the
    report's interval and strata blocks ask): query codes index ``qids`` sorted as bytes;
    every query is a positive (the compared queries). Nothing of
    :class:`~.contract.RankedPerQuery` exists without rankings (``NOT_AVAILABLE``)."""

    settings: LoadSettings
    qids: NDArray[np.object_]
    classes: NDArray[np.int8]
    lanes: dict[str, TableLane]
    input_lanes: list[str]
    inputs: list[InputFile]
    warnings: list[InputWarning]
    values: dict[tuple[str, str, str], NDArray[np.float64]]  # (run, level, key) -> float64[n_queries] (NaN: no value)
    measures: tuple[AnyMeasure, ...]  # TableMeasure | ReadMeasure, in first-seen order
    table_levels: tuple[str, ...]
    tables: list[PerQueryTable]
    strata: dict[str, NDArray[np.object_]] = field(default_factory=dict)
    lane_origin: dict[str, str] = field(default_factory=dict)
    qrels_sha256: str | None = None
    #: the qrels' query classes (``qrels_classes``), or None without qrels
    qrels_counts: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)
    synthetic: bool = False
    group_of = None
    groups = None
    sources = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_tables(cls, tables: list[PerQueryTable], settings: LoadSettings = LoadSettings(), *,
                    qrels: str | None = None, strata: Sequence[str] = ()) -> "TableWorkspace":
        from dataclasses import replace

        from .loaded import InputFile

        names: dict[str, list[str]] = {}
        for t in tables:
            for key, ns in t.names.items():
                names.setdefault(key, [])
                names[key] += [n for n in ns if n not in names[key]]
        known = set().union(*(t.known for t in tables))
        measures: list[AnyMeasure] = []
        for key, ns in names.items():
            mk = M.parse_metrics(key)[0] if key in known else None
            if mk is not None and mk.key == key:
                measures.append(ReadMeasure(mk, tuple(ns)))
            else:
                measures.append(TableMeasure(key, ", ".join(t.path for t in tables if key in t.names)))
        runs = [r for t in tables for r in t.runs]
        levels = tuple(lv for lv in ("doc", "group") if any(k[1] == lv for t in tables for k in t.values))
        cells: dict[tuple[str, str, str], dict[str, tuple[float, int]]] = {}
        for t in tables:
            cells.update(t.values)
        # only what every run holds at every level can be paired: the rest is left out, and said
        partial = [m for m in measures if any((r, lv, m.key) not in cells for r in runs for lv in levels)]
        notes_left = [f"{m.key} left out: not in every run's table at every level "
                      f"(missing for {', '.join(sorted({r for r in runs for lv in levels if (r, lv, m.key) not in cells}))})"
                      for m in partial]
        measures = [m for m in measures if m not in partial]
        if not measures:
            raise InputError("the per-query tables share no measure (every run needs a value of one measure)",
                             tables[-1].path)
        warnings: list[InputWarning] = []
        sha = None
        qrels_counts: dict[str, int] | None = None
        if qrels is not None:
            pos, qrels_counts, sha = qrels_classes(qrels, settings.relevant, getattr(settings, "inputs", None))
            table_q = {q for c in cells.values() for q in c}
            extra = table_q - pos
            if extra:
                warnings.append(InputWarning("table_queries_not_positive", len(extra),
                                             "queries in the per-query tables that are not positive in the qrels "
                                             "(left out)", qrels))
            compared = sorted(pos, key=str.encode)
        else:
            compared = sorted({q for c in cells.values() for q in c}, key=str.encode)
        qids = np.asarray(compared, dtype=object)
        index = {q: i for i, q in enumerate(compared)}
        n = len(compared)
        values: dict[tuple[str, str, str], NDArray[np.float64]] = {}
        for run in runs:
            for level in levels:
                for m in measures:
                    cell = cells[(run, level, m.key)]
                    arr = np.full(n, np.nan)
                    for q, (v, _) in cell.items():
                        i = index.get(q)
                        if i is not None:
                            arr[i] = v
                    missing = np.isnan(arr)
                    if missing.any():
                        path = next(t.path for t in tables if run in t.runs)
                        q = compared[int(np.flatnonzero(missing)[0])]
                        if qrels is None or isinstance(m, TableMeasure):
                            how = ("" if qrels is not None else
                                   "; with --qrels, a positive a run lacks scores 0 on the measures rankscope knows")
                            raise InputError(f"run {run!r} has no {m.key} value for query {q!r} (a paired comparison "
                                             f"needs every query in every run{how})", path)
                        arr[missing] = 0.0
                        if m is measures[0] or not any(w.kind == "positives_missing_from_lane" and run in w.message
                                                       for w in warnings):
                            warnings.append(InputWarning("positives_missing_from_lane", int(missing.sum()),
                                                         f"lane {run}: positive queries absent from the per-query "
                                                         "table (scored 0)", path))
                    values[(run, level, m.key)] = arr
        lanes = {r: TableLane(r, next(t.path for t in tables if r in t.runs),
                              sum(len(c) for k, c in cells.items() if k[0] == r)) for r in runs}
        inputs = [InputFile("per_query_table", t.path, t.sha256(), sum(len(c) for c in t.values.values()))
                  for t in tables]
        notes = [f"{t.path}: {what} skipped ({count})" for t in tables for what, count in t.skipped.items()] + notes_left
        # the settings' metrics are the tables' measures (what the report's tables list)
        settings = replace(settings, metrics=cast("tuple[M.MetricKey, ...]", tuple(measures)))  # duck-typed MetricKeys
        ws = cls(settings, qids, np.full(n, J.POSITIVE, dtype=np.int8), lanes, runs, inputs, warnings, values,
                 tuple(measures), levels, tables, lane_origin={r: "input" for r in runs}, qrels_sha256=sha,
                 qrels_counts=qrels_counts, notes=notes)
        if qrels is not None and sha is not None:  # sha is set exactly when qrels is given
            ws.inputs.append(InputFile("qrels", qrels, sha, len(compared)))
        from .loaded import read_strata_labels

        ws.strata, files = read_strata_labels(strata, index, n)
        ws.inputs += files
        return ws

    # what comparison and report ask (the rest is WorkspaceBase's)

    def levels(self) -> tuple[str, ...]:
        return self.table_levels

    def missing_level(self, level: str) -> str:
        """Why ``level`` is not in the tables: they hold what was computed elsewhere, so
        --group-sep cannot add a level."""
        held = " and ".join(repr(x) for x in self.table_levels)
        return f"level {level!r} is not in the per-query tables (they hold level {held} only)"

    def metric_key(self, name: str) -> str:
        """A measure named on the command line: a table's measure as written, or a rankscope
        spelling of one (``ndcg@10``, or the tool's own name, ``ndcg_cut_10``)."""
        keys = [m.key for m in self.measures]
        if name in keys:
            return name
        parsed = measure_key(name)[0]  # the resolver the tables' own names went through
        if parsed in keys:
            return parsed
        raise InputError(f"measure {name!r} is not in every run's per-query table (every run holds: "
                         f"{', '.join(keys)})", "--metric")

    def metric_set(self, keys: Iterable[str]) -> tuple[str, ...]:
        return tuple(m.key for m in self.measures)

    def per_query(self, lane: str, level: str = "doc",
                  metrics: tuple[Any, ...] | None = None) -> dict[str, NDArray[np.float64]]:
        """``{measure key: float64[n_queries]}``; a measure the tables lack (judged@10 of the
        largest losses) is all NaN, which a row prints as undefined."""
        if level not in self.table_levels:
            raise InputError(f"level {level!r} is not in the per-query tables", "--level")

        class _Values(dict[str, NDArray[np.float64]]):
            def __missing__(inner, key: str) -> NDArray[np.float64]:
                return np.full(self.n_queries, np.nan)

        return _Values({m.key: self.values[(lane, level, m.key)] for m in self.measures})

    def mean(self, lane: str, level: str, metric: str, queries: np.ndarray | None = None) -> float:
        key = self.metric_key(metric)
        return self.means_of(self.per_query(lane, level), (key,), queries)[key]
