"""The Python API: rankscope from a notebook or a script, without Textual.

A thin front over the kernel the command line runs (one road): inputs become the
readers' ``RawLane`` / ``RawQrels`` (a path through ``readers``, a DataFrame, pyarrow
Table, ``{qid: {doc: value}}`` dict or iterable of named tuples through
``kernel.columns``), a ``Workspace`` is built from them, and ``evaluate`` / ``compare``
call ``instruments.evaluate.evaluate_report`` and ``instruments.compare.compare`` as ``rankscope evaluate`` and
``rankscope compare`` do; markdown and LaTeX come from ``render``. Bad input raises the
kernel's :class:`~rankscope_tui.kernel.errors.InputError`, in the command line's words; a
setting out of range (``min_delta=-1``) a ``SettingError`` (an ``InputError`` and a
``ValueError``) that names the parameter, as ``min_delta: must be ...``.

Inputs, for ``qrels`` and each run:

- a path (``str`` or ``os.PathLike``): every format the command line reads;
- ``{qid: {doc: value}}`` (scores for a run, integer grades for qrels);
- a pandas DataFrame or a pyarrow Table with the columns of ranx (``q_id, doc_id,
  score``), PyTerrier (``qid, docno, score`` / ``label``), ir_measures (``query_id,
  doc_id, score`` / ``relevance``) or BEIR/MTEB (``query-id, corpus-id, score``);
- an iterable of ir_measures-style named tuples: ``ScoredDoc(query_id, doc_id, score)``,
  ``Qrel(query_id, doc_id, relevance)`` (any object with those attributes);
- for a run, a :class:`RetrievedRun` made by :func:`run_from` (named after its ``name``; it
  carries per-query seconds, which ``evaluate`` reports as ``response_time``).

``runs`` is one run, a list of runs (paths are named after their files, others
``run1``, ``run2``, ...) or a ``{name: run}`` dict. Conventions are the command line's:
means over the positive queries (a positive missing from a run scores 0), ties by doc
id descending as bytes, intervals by the fixed-seed protocol (README, Conventions).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

from .kernel.errors import InputError, SettingError
from .kernel.settings import DEFAULT_CONFIDENCE, DEFAULT_METRIC, DEFAULT_RESAMPLES, DEFAULT_SEED  # (defaults written once)

if TYPE_CHECKING:
    from .kernel.inputs.retrieve import RetrievedRun as KernelRetrievedRun
    from .kernel.instruments.compare import Comparison as KernelComparison
    from .kernel.statistics.verdict import ComparisonRow
    from .kernel.workspace.loaded import Workspace
    from .kernel.workspace.per_query_tables import TableWorkspace

__all__ = ["evaluate", "compare", "paired", "plan", "pool", "pool_qrels", "agree", "rank_of", "sweep", "margin_sweep", "operating_point",
           "calibrate", "iter_calc", "calc_aggregate", "canonical_key", "tables", "Evaluation", "Comparison",
           "Paired", "Metric", "InputError", "define", "unregister", "defined_measures", "run_from", "RetrievedRun"]


class Metric(NamedTuple):
    """One per-query value, as ``ir_measures.iter_calc`` yields it; ``measure`` is what was
    asked for, ``key`` its canonical key."""

    query_id: str
    measure: Any
    value: float

    @property
    def key(self) -> str:
        """The canonical key of ``measure`` (``'map'`` → ``'ap'``)."""
        return canonical_key(self.measure)


# --------------------------------------------------------------------------- inputs


def _is_path(x) -> bool:
    return isinstance(x, (str, bytes)) or hasattr(x, "__fspath__")


def _as_arrow(x, role: str, source: str):
    """A pyarrow Table for a DataFrame, a Table, a dict or named tuples; None for a path."""
    import pyarrow as pa

    if _is_path(x):
        return None
    if isinstance(x, pa.Table):
        return x
    if isinstance(x, pa.RecordBatch):
        return pa.Table.from_batches([x])
    mod = type(x).__module__.split(".")[0]
    if mod == "pandas" and hasattr(x, "columns"):
        try:
            return pa.Table.from_pandas(x, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise InputError(f"cannot read the DataFrame's columns: {exc}"[:300], source) from None
    value = "score" if role == "run" else "relevance"
    if isinstance(x, dict):
        return _dict_table(x, value, source)
    if isinstance(x, Iterable):
        return _records_table(x, value, source)
    raise InputError(f"a {role} must be a path, a {{qid: {{doc: {value}}}}} dict, a DataFrame, a pyarrow Table or "
                     f"named tuples, not {type(x).__name__}", source)


def _id(x, what: str, source: str, row: int) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return str(int(x))  # an integer id (numpy's too) reads as its decimal text, as in a TREC file
    raise InputError(f"{what} must be a string (or an integer), not {x!r}"[:200], source, row)


def _column_table(qids, docs, values, value: str, source: str):
    import pyarrow as pa

    if not qids:
        raise InputError("empty (no query holds any doc)", source)
    for i, v in enumerate(values):
        # numpy's numbers (np.float32 scores, np.int64 grades: what dicts built from model
        # outputs hold) register as numbers.Real; bool (and numpy's bool, not a Real) is no number
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InputError(f"{value} for query {qids[i]!r}, doc {docs[i]!r} is not a number: {v!r}"[:300], source, i + 1)
        if not isinstance(v, (int, float)):
            values[i] = int(v) if isinstance(v, numbers.Integral) else float(v)
    typ = pa.float64() if value == "score" or any(isinstance(v, float) for v in values) else pa.int64()
    try:
        vals = pa.array(values, type=typ)
    except (pa.ArrowInvalid, OverflowError) as exc:
        raise InputError(f"{value} out of range: {exc}"[:200], source) from None
    try:
        return pa.table({"query_id": pa.array(qids, pa.string()), "doc_id": pa.array(docs, pa.string()), value: vals})
    except UnicodeEncodeError:  # a lone surrogate (text decoded with errors="surrogateescape") is no UTF-8 text
        for i, (q, d) in enumerate(zip(qids, docs)):
            for what, text in (("query id", q), ("doc id", d)):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(f"{what} {text!r} is not valid Unicode text (a lone surrogate)"[:300],
                                     source, i + 1) from None
        raise


def _dict_table(d: dict, value: str, source: str):
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for q, inner in d.items():
        q = _id(q, "a query id", source, len(qids) + 1)
        if not isinstance(inner, dict):
            raise InputError(f"the value for query {q!r} must be a {{doc: {value}}} dict, not {type(inner).__name__}",
                             source, len(qids) + 1)
        for doc, v in inner.items():
            docs.append(_id(doc, "a doc id", source, len(qids) + 1))
            qids.append(q)
            values.append(v)
    return _column_table(qids, docs, values, value, source)


def _records_table(records, value: str, source: str):
    qids, docs, values = [], [], []
    for i, r in enumerate(records, start=1):
        try:
            q, doc, v = r.query_id, r.doc_id, getattr(r, value)
        except AttributeError:
            raise InputError(f"expected named tuples with query_id, doc_id and {value} "
                             f"({'ScoredDoc' if value == 'score' else 'Qrel'}), not {r!r}"[:300], source, i) from None
        qids.append(_id(q, "query_id", source, i))
        docs.append(_id(doc, "doc_id", source, i))
        values.append(v)
    return _column_table(qids, docs, values, value, source)


def raw_run(run, name: str | None = None, options=None):
    """A run as the readers' ``RawLane`` (see the module docstring for what ``run`` may be);
    ``options``: how files and tables are read (``formats.InputOptions``: formats, columns)."""
    from .kernel.inputs.columns import run_table
    from .kernel.inputs.readers import read_lane

    if isinstance(run, RetrievedRun):
        return run.run.raw_lane(name)
    if _is_path(run):
        return read_lane(os.fsdecode(run), name, options)
    source = f"<run {name}>" if name else "<run>"
    columns = options.run_columns if options is not None else None
    return run_table(_as_arrow(run, "run", source), source, columns, name=name or "run")


def raw_qrels(qrels, options=None):
    """Qrels as the readers' ``RawQrels``."""
    from .kernel.inputs.columns import qrels_table
    from .kernel.inputs.readers import read_qrels

    if _is_path(qrels):
        return read_qrels(os.fsdecode(qrels), options)
    columns = options.qrels_columns if options is not None else None
    return qrels_table(_as_arrow(qrels, "qrels", "<qrels>"), "<qrels>", columns)


def _named_runs(runs) -> list[tuple[str | None, object]]:
    """``runs`` as [(name or None, run)]: one run, a list, or a {name: run} dict."""
    from .kernel.inputs.readers import check_lane_name

    def one_run_dict(d: dict) -> bool:  # {qid: {doc: score}}: its values' values are numbers
        inner = next(iter(d.values()), None)
        return isinstance(inner, dict) and not any(isinstance(v, dict) for v in inner.values())

    if isinstance(runs, dict) and runs and not one_run_dict(runs):
        out: list[tuple[str | None, object]] = []
        for name, run in runs.items():
            if not isinstance(name, str):
                raise InputError(f"a run's name must be a string, not {name!r}"[:200], "runs")
            check_lane_name(name, "runs")
            out.append((name, run))
        return out
    if isinstance(runs, (list, tuple)) and runs and not _looks_like_records(runs):
        return [(None if _is_path(r) else r.name if isinstance(r, RetrievedRun) else f"run{i}", r)
                for i, r in enumerate(runs, start=1)]
    return [(None if _is_path(runs) else runs.name if isinstance(runs, RetrievedRun) else "run", runs)]


def _looks_like_records(x) -> bool:
    first = x[0]
    return hasattr(first, "query_id") and hasattr(first, "doc_id")


#: The API's parameter for each setting whose name differs from it (every other setting
#: is the parameter of its own name: ``min_delta``, ``relevant``, ``confidence``, ...).
PARAMETERS = {"metrics": "measures"}  # (the other settings' fields are the API's parameter names)
#: The command line's options the kernel's name checks name (``measures.names``), as the
#: API's parameters: an API error never tells the caller to use a flag.
OPTION_PARAMETERS = {"--metrics": "measures", "--metric": "measures", "--pair": "pairs"}


@contextmanager
def _parameter_words() -> Iterator[None]:
    """A setting refused by the settings (``SettingError``) re-raised naming the parameter;
    an error the name checks place at a command-line option, placed at the parameter."""
    try:
        yield
    except SettingError as exc:
        raise exc.named(PARAMETERS) from None
    except InputError as exc:
        if exc.path in OPTION_PARAMETERS and exc.line is None:
            raise InputError(exc.detail, OPTION_PARAMETERS[exc.path]) from None
        raise


def _settings(measures, relevant, depth, group_sep, resamples, seed, confidence, run_columns=None, qrels_columns=None,
              condensed=False):
    """The ``LoadSettings`` of these arguments; every range is checked by ``LoadSettings``
    itself (the command line's checks and words, with the parameter's name in place of the
    option's: ``relevant: must be at least 1 ...``)."""
    from dataclasses import replace

    from .kernel.inputs.formats import ColumnMapping, InputOptions
    from .kernel.measures import parse_metrics
    from .kernel.settings import DEFAULT_METRICS, LoadSettings

    def mapping(m, name: str):  # {"query": "qid", "doc": "docno", "score": "s"} or the text "query=qid,..."
        if m is None:
            return None
        if not isinstance(m, (str, Mapping)):
            raise InputError(f"a column mapping is the text 'query=COL,doc=COL,score=COL' or a dict "
                             f"{{role: column}}, not a {type(m).__name__}", name)
        return ColumnMapping.parse(m if isinstance(m, str) else ",".join(f"{k}={v}" for k, v in m.items()), name)

    with _parameter_words():  # the ranges first, then the names read, as on the command line
        checked = LoadSettings(metrics=(), relevant=relevant, depth=depth, group_sep=group_sep, resamples=resamples,
                               seed=seed, confidence=confidence, condensed=bool(condensed))
    inputs = InputOptions(run_columns=mapping(run_columns, "run_columns"),
                          qrels_columns=mapping(qrels_columns, "qrels_columns"))
    # None: the command line's default set; an empty list names nothing and is refused
    metrics = parse_metrics(DEFAULT_METRICS if measures is None else measures, "measures")
    return replace(checked, metrics=tuple(metrics), inputs=inputs)


def _with_fusion(settings, fuse=(), ignore_self: bool = False, per_query=None):
    """``settings`` with the fused lanes ``fuse`` (``METHOD[:NORM]`` strings, as ``--fuse``)
    and ``ignore_self`` (as ``--ignore-self``); both need runs, not per-query tables."""
    from dataclasses import replace

    fuse = (fuse,) if isinstance(fuse, str) else tuple(fuse or ())
    if per_query is not None and (fuse or ignore_self):
        raise InputError(f"{'fuse' if fuse else 'ignore_self'} cannot be used with per_query tables (it needs rankings)",
                         "per_query")
    if fuse:
        from .kernel.fusion.combine import parse_fuse_list

        fuse = parse_fuse_list(fuse, "fuse")
    return replace(settings, fuse=fuse, ignore_self=bool(ignore_self)) if settings is not None else None


def workspace(qrels, runs, settings=None, strata=()):
    """The kernel's :class:`~rankscope_tui.kernel.workspace.loaded.Workspace` over in-memory or file inputs."""
    from .kernel.settings import LoadSettings
    from .kernel.workspace.loaded import Workspace, check_lane_names

    if runs is None or qrels is None:
        raise InputError(f"{'runs' if runs is None else 'qrels'} must be given (a path, a dict, a DataFrame, a pyarrow "
                         "Table or named tuples)" + (", or per_query tables instead of runs" if runs is None else ""))
    named = _named_runs(runs)
    options = getattr(settings, "inputs", None)
    raws = [raw_run(r, n, options) for n, r in named]
    check_lane_names(raws, "name runs with a {name: run} dict")
    strata = [strata] if _is_path(strata) else list(strata or ())
    return Workspace.from_raw(raws, raw_qrels(qrels, options), settings or LoadSettings(),
                              [os.fsdecode(s) for s in strata])


# --------------------------------------------------------------------------- runs from a retriever


def _version() -> str:
    """rankscope's version (``rankscope_tui.__version__``, its one written place). The package
    is always loaded before this module, and importing it here would make an import circle."""
    import sys

    return str(getattr(sys.modules.get(__name__.rpartition(".")[0]), "__version__", "0+unknown"))


@dataclass(frozen=True)
class RetrievedRun:
    """A run made by :func:`run_from` (the kernel's ``inputs.retrieve.RetrievedRun`` in
    ``.run``): pass it to :func:`evaluate` or :func:`compare` as a run, or write it with
    :meth:`write`."""

    run: KernelRetrievedRun

    @property
    def name(self) -> str:
        return str(self.run.name)

    @property
    def latency(self) -> dict[str, float]:
        """Seconds per query id (wall clock, the whole answer read), in the order asked."""
        return dict(self.run.latency)

    def provenance(self) -> dict:
        """What the sidecar holds: the retriever's qualified name, the UTC start time,
        rankscope's version, ``k``, the run's sha256 and the seconds per query."""
        return self.run.provenance()

    def trec_text(self) -> str:
        """The run as TREC text (``qid Q0 doc rank score name``), ranked as any TREC reader ranks it."""
        return str(self.run.trec_text())

    def write(self, path) -> list[str]:
        """Write the run to ``path`` and its provenance to ``path + '.provenance.json'``,
        atomically (both or neither); the paths written. ``rankscope evaluate`` reads the
        latency back from the sidecar while the run's bytes are unchanged."""
        from .kernel import write_run

        return list(write_run(self.run, os.fsdecode(path)))

    def __repr__(self) -> str:
        return (f"RetrievedRun(name={self.name!r}, retriever={self.run.retriever!r}, queries={len(self.run.answers)}, "
                f"k={self.run.k})")


def run_from(retriever, queries, k: int = 100, name: str = "run") -> RetrievedRun:
    """Ask ``retriever(query_text)`` once per query and keep its ``(doc_id, score)`` pairs as a
    run: ranked by score descending, ties by doc id descending as bytes (trec_eval's order,
    the one every TREC reader gives the written file), cut at ``k``; with the time each
    query took (``time.perf_counter``, the whole answer read) and the provenance (the
    callable's qualified name, the UTC start time, rankscope's version).

    ``queries``: a ``{qid: text}`` dict, ``(qid, text)`` pairs, or a path to a
    ``qid<TAB>text`` file. An exception from the retriever, or an answer that is not
    ``(doc_id, score)`` pairs (a doc id with whitespace, a score that is not a finite
    number, a doc returned twice), raises :class:`InputError` naming the query."""
    from .kernel import retrieve
    from .kernel.inputs.retrieve import as_queries, qualified_name

    if not callable(retriever):
        raise InputError(f"the retriever must be callable (query text -> (doc_id, score) pairs), not "
                         f"{type(retriever).__name__}", "retriever")
    qs = as_queries(queries)
    run = retrieve(lambda q: retriever(q.text), qs, k, name, qualified_name(retriever), "callable", _version())
    return RetrievedRun(run)


# --------------------------------------------------------------------------- evaluate


@dataclass
class Evaluation:
    """What ``rankscope evaluate`` computes for these inputs; every number is the report's."""

    ws: Workspace | TableWorkspace  # the prepared kernel workspace
    _report: dict | None = None

    def report(self) -> dict:
        """The report.json dict (``instruments.evaluate.evaluate_report``), as ``rankscope evaluate --out`` writes it."""
        if self._report is None:
            from .kernel import evaluate as evaluate_report
            from .kernel import table_report
            from .kernel.workspace.per_query_tables import TableWorkspace

            # per-query tables: ``evaluate --per-query-in``'s report (no attribution, fusion or gate)
            self._report = table_report(self.ws) if isinstance(self.ws, TableWorkspace) else evaluate_report(self.ws)
        return self._report

    def per_query(self):
        """A long DataFrame ``run, level, query_id, measure, value``: every positive query,
        as report.json's ``per_query`` block and ``evaluate --per-query-long`` hold them (the
        tidy tables' one vocabulary, ``kernel.report.tidy``)."""
        import pandas as pd

        from .render.tidy import LONG_COLUMNS, long_rows

        return pd.DataFrame(long_rows(self.report()), columns=list(LONG_COLUMNS)).astype({"value": float})

    def table(self):
        """Means with intervals, the rows of ``evaluate --summary``: ``run, level,
        stratification, stratum, measure, value, low, high, method, n``, one row per run ×
        level × stratum × measure (``stratification`` and ``stratum`` are ``(all)`` for the
        overall table). Undefined bounds are NaN."""
        import pandas as pd

        from .render.tidy import SUMMARY_COLUMNS, summary_rows

        df = pd.DataFrame(summary_rows(self.report()), columns=list(SUMMARY_COLUMNS))
        return df.astype({"value": float, "low": float, "high": float})

    def coverage(self):
        """Judgment coverage per run, measure and positive query (the report's ``coverage``
        block, per query): ``run, query_id, measure, holes, value, as_nonrelevant,
        as_relevant`` -- the unjudged hits within the measure's cutoff and the value with
        them added to the qrels as grade 0 / as relevant (``kernel.measures.coverage``).
        Empty for per-query tables (no rankings)."""
        import pandas as pd

        cols = ["run", "query_id", "measure", "holes", "value", "as_nonrelevant", "as_relevant"]
        cov_of = getattr(self.ws, "judgment_coverage", None)
        if cov_of is None:
            return pd.DataFrame(columns=cols)
        pos = self.ws.positives
        qids = self.ws.qids[pos].tolist()
        rows: list[tuple] = []
        for run in self.ws.lanes:
            c, pq = cov_of(run), self.ws.per_query(run, "doc")
            for m in self.ws.settings.metrics:
                k = m.key
                rows += zip([run] * len(qids), qids, [k] * len(qids), c.holes[k][pos].tolist(), pq[k][pos].tolist(),
                            c.as_nonrelevant[k][pos].tolist(), c.as_relevant[k][pos].tolist())
        return pd.DataFrame(rows, columns=cols)

    def latency(self):
        """Response time per run that carries per-query seconds (a :func:`run_from` run, or a
        file written by ``rankscope run`` with its sidecar): ``run, queries, mean, median,
        p95`` in seconds (report.json's ``latency`` block; not a relevance measure, no
        interval). Empty when no run carries latency."""
        import pandas as pd

        cols = ["run", "queries", "mean", "median", "p95"]
        lanes = (self.report().get("latency") or {}).get("lanes", {})
        return pd.DataFrame([[run, c["queries"], c["mean"], c["median"], c["p95"]] for run, c in lanes.items()],
                            columns=cols)

    def to_markdown(self) -> str:
        from .render.formats import RENDERERS

        return RENDERERS["markdown"](self.report())

    def to_latex(self) -> str:
        from .render.formats import RENDERERS

        return RENDERERS["latex"](self.report())

    def __str__(self) -> str:
        from .render.formats import RENDERERS

        return RENDERERS["text"](self.report())

    def _repr_html_(self) -> str:
        from .render.report import caption

        return _html_table(self.table(), caption(self.report()))

    def __repr__(self) -> str:
        """One line (the notebook's rich view is ``_repr_html_``; ``str()`` is the text report):
        the runs, the measures, the positive queries and the stratifications."""
        ws = self.ws
        runs = list(getattr(ws, "input_lanes", None) or getattr(ws, "lanes", {}))
        metrics = [getattr(m, "key", m) for m in getattr(ws.settings, "metrics", ())]
        strata = list(getattr(ws, "strata", None) or {})
        return (f"Evaluation(runs={runs!r}, measures={metrics!r}, positives={int(ws.positives.size)}"
                + (f", strata={strata!r}" if strata else "") + ")")


def evaluate(qrels=None, runs=None, measures=None, relevant: int = 1, depth: int | None = None,
             group_sep: str | None = None, strata=(), resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
             *, per_query=None, per_query_format: str | None = None, run_columns=None,
             qrels_columns=None, fuse=(), ignore_self: bool = False, condensed: bool = False) -> Evaluation:
    """Evaluate ``runs`` against ``qrels`` as ``rankscope evaluate`` does (fusion of two or
    more runs, miss attribution, intervals per stratum); ``measures`` a comma list or a list
    (``"ndcg@10,rr"``; default the command line's set); ``strata`` paths of ``qid<TAB>label``.

    ``per_query`` instead of ``runs``: per-query tables (``evaluate --per-query-in``): see
    :func:`tables`; ``qrels`` is then optional (its positives are the queries).
    ``run_columns`` / ``qrels_columns``: the columns of a table in no known convention,
    ``{"query": COL, "doc": COL, "score": COL}`` (``rank`` for a ranks-only run,
    ``relevance`` for qrels), as ``--run-columns`` / ``--qrels-columns``. ``fuse``: more fused
    lanes, ``METHOD[:NORM]`` as ``--fuse`` (``["combmnz:zmuv", "isr"]``; README: Fusion);
    ``ignore_self``: drop hits whose doc id is the query id, as ``--ignore-self``.. ``condensed``:
    every run's unjudged hits removed before any cutoff (trec_eval ``-J``, ``--condensed``).
    The report's ``coverage`` block (also :meth:`Evaluation.coverage`) holds the unjudged
    hits within each cutoff and the bounds with them counted non-relevant / relevant."""
    from .kernel import prepare

    _with_fusion(None, fuse, ignore_self, per_query)
    if per_query is not None:
        _no_runs(runs, measures, depth, group_sep, condensed)
        return Evaluation(tables(per_query, qrels, strata=strata, relevant=relevant, resamples=resamples, seed=seed,
                                 confidence=confidence, fmt=per_query_format))
    ws = workspace(qrels, runs, _with_fusion(_settings(measures, relevant, depth, group_sep, resamples, seed, confidence,
                                                       run_columns, qrels_columns, condensed), fuse, ignore_self), strata)
    ws, _ = prepare(ws)
    return Evaluation(ws)


def _no_runs(runs, measures, depth, group_sep, condensed=False) -> None:
    given = [name for name, v in (("runs", runs), ("measures", measures), ("depth", depth), ("group_sep", group_sep),
                                  ("condensed", condensed or None)) if v is not None]
    if given:
        raise InputError(f"{given[0]} cannot be used with per_query tables (they hold metric values, not rankings; "
                         "their measures are what is reported)", "per_query")


def tables(per_query, qrels=None, *, strata=(), relevant: int = 1, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
           confidence: float = DEFAULT_CONFIDENCE, fmt: str | None = None):
    """The kernel's per-query-table workspace (``kernel.workspace.per_query_tables``) over ``per_query``: a
    path, a long DataFrame (``run, query_id, measure, value``, any column names the long
    format reads), a list of them, or a ``{name: path}`` dict for one-run files."""
    from .kernel import load_tables
    from .kernel.workspace.per_query_tables import TableWorkspace, read_per_query_table

    settings = _settings(None, relevant, None, None, resamples, seed, confidence)
    items = list(per_query.items()) if isinstance(per_query, dict) else \
        [(None, t) for t in (per_query if isinstance(per_query, (list, tuple)) else [per_query])]
    if all(_is_path(t) for _, t in items):
        strata = [strata] if _is_path(strata) else list(strata or ())
        return load_tables([(n, os.fsdecode(t)) for n, t in items], settings, qrels=None if qrels is None else
                           os.fsdecode(qrels), strata=[os.fsdecode(x) for x in strata], fmt=fmt)
    read = []
    for i, (name, t) in enumerate(items, start=1):
        read.append(read_per_query_table(os.fsdecode(t), name, fmt) if _is_path(t) else _frame_table(t, name, i))
    strata = [strata] if _is_path(strata) else list(strata or ())
    return TableWorkspace.from_tables(read, settings, qrels=None if qrels is None else os.fsdecode(qrels),
                                      strata=[os.fsdecode(x) for x in strata])


def _frame_table(df, name, i: int):
    """A long DataFrame of per-query values as a ``PerQueryTable`` (rows numbered from 1)."""
    from .kernel.workspace.per_query_tables import _MEASURE_COLUMNS, _QUERY_COLUMNS, _RUN_COLUMNS, _VALUE_COLUMNS, PerQueryTable

    source = f"<per-query table {name or i}>"
    if not hasattr(df, "columns"):
        raise InputError(f"a per-query table must be a path or a DataFrame, not {type(df).__name__}", source)
    cols = {str(c).strip().lower(): c for c in df.columns}

    def col(choices, what, required=True):
        hits = [cols[c] for c in choices if c in cols]
        if len(hits) > 1 or (required and not hits):
            raise InputError(f"expected one {what} column ({', '.join(choices)}), found "
                             f"{' and '.join(map(str, hits)) or 'none'}", source)
        return hits[0] if hits else None

    q, m, v, r = (col(_QUERY_COLUMNS, "query"), col(_MEASURE_COLUMNS, "measure"), col(_VALUE_COLUMNS, "value"),
                  col(_RUN_COLUMNS, "run", required=False))
    if r is None and name is None:
        name = f"run{i}"
    if r is not None and name is not None:
        raise InputError("the table names its runs; give it without a name", source)
    t = PerQueryTable(source, "long")
    runs = df[r].tolist() if r is not None else [name] * len(df)
    for row, (run, qid, measure, value) in enumerate(zip(runs, df[q].tolist(), df[m].tolist(), df[v].tolist()),
                                                      start=1):
        t.add(_id(run, "a run name", source, row), "doc", _id(measure, "a measure", source, row),
              _id(qid, "a query id", source, row), value, row)
    if not t.values:
        raise InputError("no per-query value in the table", source)
    return t


# --------------------------------------------------------------------------- compare


@dataclass
class Comparison:
    """One ``compare`` call (``kernel.comparison.Comparison`` in ``.result``)."""

    result: KernelComparison

    @property
    def rows(self):
        return self.result.rows

    def as_dict(self) -> dict:
        """The ``rankscope compare --out`` payload (with its results sentences, methods and
        checklist, ``render.sentences``)."""
        from .render.sentences import with_sentences

        return with_sentences(self.result.as_dict())

    def to_frame(self):
        """One row per comparison, the ``compare --out`` row keys as columns (largest losses
        and gains as lists of dicts)."""
        import pandas as pd

        rows = self.as_dict()["comparisons"]
        from .kernel.statistics.verdict import ROW_KEYS

        return pd.DataFrame([{k: r[k] for k in ROW_KEYS} for r in rows], columns=list(ROW_KEYS))

    def to_markdown(self) -> str:
        from .render.formats import render_compare

        return render_compare(self.result, "markdown")

    def to_latex(self) -> str:
        from .render.formats import render_compare

        return render_compare(self.result, "latex")

    def __str__(self) -> str:
        from .render.formats import render_compare

        return render_compare(self.result, "text")

    def __repr__(self) -> str:
        """One line: the baseline, and per row the candidate, metric, difference and verdict."""
        plan = self.result.plan
        rows = ", ".join(f"{r.candidate} {r.metric} {r.difference:+.4f} {r.verdict}" for r in self.rows)
        return f"Comparison(baseline={plan.baseline!r}, rows=[{rows}])"

    def _repr_html_(self) -> str:
        cols = ["baseline", "candidate", "metric", "n", "baseline_mean", "candidate_mean", "difference", "ci_low",
                "ci_high", "randomization_p", "adjusted_p", "verdict_text"]  # the verdict in the words every face uses
        return _html_table(self.to_frame()[cols], self.result.result.caption)


def compare(qrels=None, runs=None, baseline: str | None = None, candidates=(), measures=DEFAULT_METRIC, level: str = "doc",
            min_delta: float = 0.0, correction: str = "holm", alternative: str = "two-sided",
            primary: str | None = None, exploratory: bool = False, relevant: int = 1, depth: int | None = None,
            group_sep: str | None = None, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
            *, per_query=None, per_query_format: str | None = None, run_columns=None,
            qrels_columns=None, test: str = "randomization", plan=None, pairs=(), fuse=(),
            ignore_self: bool = False, condensed: bool = False) -> Comparison:
    """Paired comparisons as ``rankscope compare`` makes them: the same plan (baseline the first
    run, candidates every other run; a derived lane such as ``rrf`` only when named in
    ``candidates``), statistics and verdicts, so ``.as_dict()`` is ``compare --out``. ``per_query`` instead of ``runs``:
    per-query tables (:func:`tables`), as ``compare --per-query-in``. ``test``: the deciding
    test, as ``--test`` (``randomization``, ``t`` or ``bootstrap``).

    ``plan`` (a plan.json path, as ``--plan``) and ``pairs`` (``"CANDIDATE:BASELINE"``
    strings or (candidate, baseline) tuples, as repeated ``--pair``): a planned family whose
    pairs may have different baselines, corrected as one family; rows beyond the plan are
    exploratory and corrected apart (``kernel.instruments.family_plan``). ``measures`` left
    at its default takes the plan's metrics when the plan names some. The library does not
    log to the per-user comparison log (the command line does). ``fuse`` and ``ignore_self``
    as in :func:`evaluate` (a fused lane is compared when named in ``candidates``)."""
    from .kernel import compare as kernel_compare
    from .kernel import prepare
    from .kernel.instruments.family_plan import family_settings
    from .kernel.settings import CompareSettings

    metrics = tuple(measures.split(",")) if isinstance(measures, str) else tuple(measures)
    candidates = (candidates,) if isinstance(candidates, str) else tuple(candidates)
    pairs = (pairs,) if isinstance(pairs, str) else tuple(pairs)
    with _parameter_words():  # checked before any input is read
        planned: dict = {}
        if plan is not None or pairs:
            given = () if measures == DEFAULT_METRIC else metrics
            planned = family_settings(None if plan is None else os.fspath(plan), pairs, given)
            metrics = planned.pop("metrics")
        settings = CompareSettings(baseline=baseline, candidates=candidates, metrics=metrics, level=level,
                                   min_delta=min_delta, correction=correction, alternative=alternative,
                                   exploratory=exploratory, primary=primary, test=test, **planned)
    _with_fusion(None, fuse, ignore_self, per_query)
    if per_query is not None:  # values computed elsewhere: compare --per-query-in
        _no_runs(runs, None, depth, group_sep, condensed)
        ws, th = tables(per_query, qrels, relevant=relevant, resamples=resamples, seed=seed, confidence=confidence,
                        fmt=per_query_format), None
    else:
        ws = workspace(qrels, runs, _with_fusion(_settings(None, relevant, depth, group_sep, resamples, seed, confidence,
                                                           run_columns, qrels_columns, condensed), fuse, ignore_self))
        ws, th = prepare(ws)
    with _parameter_words():  # a measure name is checked as the comparison reads it
        return Comparison(kernel_compare(ws, th, settings))


def plan(qrels=None, runs=None, baseline: str | None = None, candidate: str | None = None, measure: str = DEFAULT_METRIC,
         deltas=(), powers=(0.8,), family_size: int = 1, confidence: float = DEFAULT_CONFIDENCE,
         alternative: str = "two-sided", units=None, level: str = "doc", relevant: int = 1, depth: int | None = None,
         *, per_query=None, per_query_format: str | None = None) -> dict:
    """``rankscope plan``: the queries (units with ``units``) a study needs over ``deltas`` ×
    ``powers`` for a family of ``family_size`` tests, from a pilot pair (Sakai's topic set
    size design; ``kernel.instruments.plan``). Returns the ``plan --out`` dict; ``deltas``
    () plans the pilot's observed difference. ``per_query`` instead of ``runs``: per-query
    tables (:func:`tables`)."""
    from .kernel import plan_queries, prepare
    from .kernel.settings import PlanSettings

    deltas = (deltas,) if isinstance(deltas, (int, float)) else tuple(deltas)
    powers = (powers,) if isinstance(powers, (int, float)) else tuple(powers)
    with _parameter_words():  # checked before any input is read
        settings = PlanSettings(baseline=baseline, candidate=candidate, metric=measure, level=level, deltas=deltas,
                                powers=powers, family_size=family_size, confidence=confidence,
                                alternative=alternative, units=None if units is None else os.fsdecode(units))
    if per_query is not None:
        _no_runs(runs, None, depth, None)
        ws = tables(per_query, qrels, relevant=relevant, confidence=confidence, fmt=per_query_format)
    else:
        ws, _ = prepare(workspace(qrels, runs, _settings(None, relevant, depth, None, DEFAULT_RESAMPLES, DEFAULT_SEED,
                                                         confidence)))
    return plan_queries(ws, settings).as_dict()


# --------------------------------------------------------------------------- pool


def pool(qrels=None, runs=None, budget: int = 100, measures=None, pool_lanes=(), relevant: int = 1,
         depth: int | None = None, *, run_columns=None, qrels_columns=None) -> dict:
    """``rankscope pool``: the ``budget`` unjudged (query, doc) pairs whose judgment would
    narrow the bounds most (the rule: ``kernel.instruments.pool``), inside the top k of the
    runs (``pool_lanes``: only those) for the ``@k`` measures. Returns the ``pool --json``
    dict (``pairs`` in priority order, ``changes`` per run and measure, ``candidates``: what
    depth-k pooling would judge); ``rankscope_tui.api.pool_qrels(result)`` gives the file to
    judge."""
    from .kernel import suggest_pool
    from .kernel.settings import PoolSettings

    pool_lanes = (pool_lanes,) if isinstance(pool_lanes, str) else tuple(pool_lanes)
    with _parameter_words():  # checked before any input is read
        settings = PoolSettings(budget=budget, lanes=pool_lanes)
    ws = workspace(qrels, runs, _settings(measures, relevant, depth, None, DEFAULT_RESAMPLES, DEFAULT_SEED,
                                          DEFAULT_CONFIDENCE, run_columns, qrels_columns))
    return suggest_pool(ws, settings).as_dict()


def pool_qrels(result: dict) -> str:
    """The file to judge of a :func:`pool` result: ``qid 0 docid -1`` per pair, in priority order."""
    g = result["placeholder_grade"]
    return "".join(f"{p['qid']} 0 {p['doc']} {g}\n" for p in result["pairs"])
# --------------------------------------------------------------------------- agree


def agree(qrels_a, qrels_b, runs=None, measures=DEFAULT_METRIC, *, strata=(), weights: str = "linear",
          grades: tuple[int, int] | None = None, ppi: bool = False, relevant: int = 1, depth: int | None = None,
          resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """``rankscope agree``: how far the labels of ``qrels_b`` agree with the reference
    ``qrels_a`` (paths), and, with ``runs`` (a path, a list of paths or ``{name: path}``),
    each run's mean of ``measures`` under both, Kendall's τ and τ_AP between the orders and,
    with ``ppi``, prediction-powered means (``kernel.instruments.agree``). Returns the
    ``agree --out`` dict. ``weights``: the weighted κ the strata table shows ("linear" or
    "quadratic"); ``grades``: a declared common scale (lo, hi)."""
    from .kernel import agree as run_agree
    from .kernel.measures import parse_metrics
    from .kernel.settings import AgreeSettings, LoadSettings

    names = [measures] if isinstance(measures, str) else list(measures)
    with _parameter_words():
        settings = AgreeSettings(weights=weights, ppi=ppi, grades=grades, metrics=tuple(names))
        load = LoadSettings(metrics=tuple(parse_metrics(",".join(settings.metrics), "measures")), relevant=relevant,
                            depth=depth, resamples=resamples, seed=seed, confidence=confidence)
    lanes: list[tuple[str | None, str]] = []
    for name, run in ([] if runs is None else _named_runs(runs)):
        if not isinstance(run, (str, bytes, os.PathLike)):
            raise InputError("agree reads runs from files: give a path, a list of paths or {name: path}", "runs")
        lanes.append((name, os.fsdecode(run)))
    strata = [strata] if _is_path(strata) else list(strata or ())
    return run_agree(os.fsdecode(qrels_a), os.fsdecode(qrels_b), settings, load, lanes,
                     [os.fsdecode(s) for s in strata]).as_dict()


# --------------------------------------------------------------------------- the lessons' functions
# Thin fronts over the kernel for the functions the lesson page (seed 003) names; each
# builds a workspace from API inputs exactly as ``evaluate`` does and returns the kernel's
# own result, so the numbers are the command line's.


def _one_run(qrels, run, relevant: int, depth: int | None, group_sep: str | None = None,
             confidence: float = DEFAULT_CONFIDENCE, strata=()) -> tuple[Workspace, str]:
    """A workspace over one run (any API input, or a ``{name: run}`` dict of one), and its lane name."""
    ws = workspace(qrels, run, _settings(None, relevant, depth, group_sep, DEFAULT_RESAMPLES, DEFAULT_SEED,
                                         confidence), strata)
    if len(ws.input_lanes) != 1:
        raise InputError(f"one run is needed here, got {len(ws.input_lanes)}", "run")
    return ws, ws.input_lanes[0]


def rank_of(qrels, run, level: str = "doc", *, relevant: int = 1, depth: int | None = None,
            group_sep: str | None = None) -> dict[str, int]:
    """Lesson 02 ("A rank has a level"): per judged query (positives and in-domain
    negatives, ids as the qrels write them), the 1-based position of the first relevant
    hit in ``run``, and 0 for a miss (a sentinel: test ``0 < r <= k``).

    The run is ordered by score, descending, ties broken on the doc id descending (as
    bytes), as trec_eval does; the rank column is not trusted (lesson 01). A hit is
    relevant when its grade is at least ``relevant``. ``level="group"`` (with
    ``group_sep``): the first hit whose group (the doc id up to ``group_sep``) holds a
    relevant document, so "right document?" rather than "right passage?". Kernel:
    ``measures.first_relevant_rank`` through ``Workspace.first_relevant_rank``."""
    if level not in ("doc", "group"):
        raise InputError(f"level must be 'doc' or 'group', not {level!r}", "level")
    if level == "group" and not group_sep:
        raise InputError("level='group' needs group_sep (the separator between a group and its passages)", "group_sep")
    import numpy as np

    ws, lane = _one_run(qrels, run, relevant, depth, group_sep)
    ranks = ws.first_relevant_rank(lane, level)
    judged = np.sort(np.concatenate([ws.positives, ws.negatives]))
    return {str(ws.qids[q]): int(ranks[q]) for q in judged.tolist()}


def sweep(qrels, run, *, relevant: int = 1, depth: int | None = None, margin: float | None = None,
          confidence: float = DEFAULT_CONFIDENCE):
    """Lesson 11 ("The gate: FNIR at a fixed FPIR"): the floor sweep of ``run``'s top scores
    (``kernel.gate.sweep``, a ``Sweep``). Candidates are the distinct finite top scores of
    the positives and in-domain negatives, then +inf. At floor x a query is accepted when
    it is retrieved and its top score is >= x (and, with ``margin``, top minus runner-up
    >= margin); FNIR = (rejected + wrong accepts) / positives (a wrong accept, a relevant
    answer missing from position 1, counts as a miss: 1:N identification) and FPIR =
    accepted negatives / negatives, each with a Wilson interval at ``confidence``. Each
    outcome class is sorted once and each floor is one bisection: O((n + m) log(n + m))."""
    from .kernel import gate as G

    ws, lane = _one_run(qrels, run, relevant, depth, confidence=confidence)
    with _parameter_words():
        from .kernel.settings import GateSettings

        GateSettings(margin=margin)  # the command line's check of a margin
    return G.sweep(ws.top_scores(lane), ws.positives, {"in_domain": ws.negatives}, margin=margin, confidence=confidence)


def margin_sweep(qrels, run, *, relevant: int = 1, depth: int | None = None, confidence: float = DEFAULT_CONFIDENCE):
    """Lesson 11 ("The gate: FNIR at a fixed FPIR"): the sweep of the margin alone (top score minus runner-up; no floor),
    ``kernel.gate.margin_sweep``. Candidates are the distinct finite margins of the
    positives and in-domain negatives, then +inf; a lone hit has an infinite margin and
    passes every candidate, +inf included, which is why a margin alone cannot drive FPIR
    to zero."""
    from .kernel import gate as G

    ws, lane = _one_run(qrels, run, relevant, depth, confidence=confidence)
    return G.margin_sweep(ws.top_scores(lane), ws.positives, {"in_domain": ws.negatives}, confidence=confidence)


def operating_point(sweep, target_fpir: float = 0.05, conservative: bool = False,
                    confidence: float = DEFAULT_CONFIDENCE):
    """Lesson 11 ("The gate: FNIR at a fixed FPIR"): the lowest floor of a :func:`sweep` whose FPIR is at most ``target_fpir``,
    on the point estimate or, ``conservative``, on the Wilson upper bound at
    ``confidence`` (``kernel.gate.operating_point``). FPIR does not increase with the
    floor, so the first qualifying candidate is the answer; none qualifying gives +inf
    (reject all) with the reason. Picked on calibration negatives it is a threshold;
    picked on the negatives reported, tuning."""
    from .kernel import gate as G
    from .kernel.settings import GateSettings

    try:
        GateSettings(fpir=target_fpir)  # the command line's range for --fpir
    except SettingError as exc:
        raise exc.named({"fpir": "target_fpir"}) from None
    return G.operating_point(sweep, target_fpir, conservative, confidence)


def calibrate(qrels=None, runs=None, *, gate_on: str | None = None, fpir: float = 0.05, conservative: bool = False,
              miss_rate: float = 0.05, mutual: int | None = None, step: float = 0.1, objective: str = DEFAULT_METRIC,
              folds: int | None = None, strata=(), relevant: int = 1, depth: int | None = None,
              group_sep: str | None = None, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """``rankscope calibrate`` (lessons 08 "Convex fusion, and fitting weights without
    lying" and 11 "The gate"): the thresholds.json dict fitted on these calibration
    queries: convex weights (the grid of weight vectors in multiples of ``step``, the
    first with the best mean ``objective`` over the positives), the RRF k in force, and
    with a gate (``gate_on``, or negatives in the qrels) the operating floor at
    ``fpir``, the operating margin, the null and conformal floors, mutual r.

    ``folds`` K: K-fold cross-validation of every fitted value (``calibrate --folds``):
    the calibration queries are dealt into K folds from ``seed``, stratified by query
    class and the ``strata`` labels; the result's ``folds`` block holds, per fold, the
    values fitted on the other folds and their score on it, the spread over folds and
    the pooled held-out scores. The values outside ``folds`` are always the fit on all
    queries."""
    from .kernel import calibrate as kernel_calibrate
    from .kernel.settings import CalibrationSettings, GateSettings

    with _parameter_words():  # checked before any input is read
        gate = GateSettings(gate_on=gate_on, fpir=fpir, conservative=conservative, miss_rate=miss_rate, mutual=mutual)
        cal = CalibrationSettings(step=step, objective=objective, folds=folds)
    ws = workspace(qrels, runs, _settings(None, relevant, depth, group_sep, DEFAULT_RESAMPLES, seed, confidence), strata)
    with _parameter_words():
        return kernel_calibrate(ws, gate, cal)


# --------------------------------------------------------------------------- paired


@dataclass
class Paired:
    """One paired comparison of two per-query value sets: a family of one row."""

    row: ComparisonRow
    caption: str

    def as_dict(self) -> dict:
        """The ``compare --out`` row, with its results sentence (``render.sentences``)."""
        from .render.sentences import results_sentence

        d = self.row.as_dict(reasons=True)
        d["sentence"] = results_sentence(d, {"alternative": self.row.alternative})
        return d

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "row":
            raise AttributeError(name)
        return getattr(self.row, name)

    def __repr__(self) -> str:
        r = self.row
        return f"Paired({r.candidate} − {r.baseline} on {r.metric}: {r.difference:+.4f}, {r.verdict})"

    def _repr_html_(self) -> str:
        import pandas as pd

        d = self.as_dict()
        keys = ["n", "baseline_mean", "candidate_mean", "difference", "ci_low", "ci_high", "randomization_p", "verdict"]
        return _html_table(pd.DataFrame([{k: d[k] for k in keys}]), self.caption)


def _aligned_values(baseline, candidate, ids):
    """(baseline, candidate, ids) sorted by id as bytes; Series align on their index."""
    import numpy as np

    def is_series(x):
        return type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "index") and not hasattr(x, "columns")

    if ids is None and is_series(baseline) and is_series(candidate):
        b_ids = [str(i) for i in baseline.index]
        c_index = {str(i): k for k, i in enumerate(candidate.index)}
        if len(c_index) != len(candidate) or len(set(b_ids)) != len(b_ids):
            raise InputError("ids must be unique (a Series index repeats an id)")
        if set(b_ids) != set(c_index):
            only = sorted(set(b_ids) ^ set(c_index), key=str.encode)[:3]
            raise InputError(f"the two Series hold different ids (e.g. {', '.join(map(repr, only))}): pair them first")
        ids = b_ids
        cand = np.asarray(candidate, dtype=np.float64)[[c_index[i] for i in b_ids]]
        base = np.asarray(baseline, dtype=np.float64)
    else:
        base = np.asarray(baseline, dtype=np.float64)
        cand = np.asarray(candidate, dtype=np.float64)
        if ids is None:  # positions, written so byte order is position order
            width = len(str(max(base.size - 1, 0)))
            ids = [f"{i:0{width}d}" for i in range(base.size)]
        else:
            ids = [_id(i, "an id", "ids", k + 1) for k, i in enumerate(ids)]
        if len(set(ids)) != len(ids):
            raise InputError("ids must be unique")
    if base.shape != cand.shape or base.ndim != 1 or len(ids) != base.size:
        raise InputError(f"baseline, candidate and ids must be aligned 1-D arrays of one length "
                         f"(got {base.shape}, {cand.shape}, {len(ids)})")
    order = sorted(range(len(ids)), key=lambda k: ids[k].encode("utf-8"))
    return base[order], cand[order], [ids[k] for k in order]


def paired(baseline_values, candidate_values, ids=None, *, metric: str = "value", baseline: str = "baseline",
           candidate: str = "candidate", min_delta: float = 0.0, alternative: str = "two-sided",
           resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> Paired:
    """The paired statistics and verdict of one comparison, from per-query values computed
    anywhere: arrays (with ``ids``, in any order) or two pandas Series (aligned on their
    index). The values are sorted by id as bytes inside, so the numbers equal ``compare``'s
    for the same queries whatever order they come in."""
    from .kernel.settings import CompareSettings
    from .kernel.statistics.paired import paired_statistics
    from .kernel.statistics.verdict import RowInput, decide

    b, c, q = _aligned_values(baseline_values, candidate_values, ids)
    with _parameter_words():  # compare's settings: min_delta finite >= 0, resamples 0 or >= 999, ...
        s = CompareSettings(min_delta=min_delta, alternative=alternative, resamples=resamples, seed=seed,
                            confidence=confidence)
    stats = paired_statistics(b, c, q, resamples=resamples, seed=seed, confidence=confidence, alternative=alternative)
    result = decide([RowInput(baseline, candidate, metric, stats)], correction="holm", min_delta=s.min_delta)
    return Paired(result.rows[0], result.caption)


# --------------------------------------------------------------------------- ir_measures-style calls


def _asked(measures) -> list:
    """The measures as asked (``kernel.measures.resolve_measures``: the command line's names,
    ir_measures' objects); none, an empty list or an unknown name raise ``InputError``."""
    from .kernel.measures import resolve_measures

    if measures is None:
        raise InputError("no measure given (name one or more: 'ndcg@10', 'map', ir_measures.AP, ...)", "measures")
    return resolve_measures(measures, "measures")


def _lane_values(asked: list, qrels, run):
    """(workspace, per-query values) of one run under the asked measures only."""
    keys = ",".join(dict.fromkeys(a.key for a in asked))
    ws = workspace(qrels, run, _settings(keys, 1, None, None, 0, 0, DEFAULT_CONFIDENCE))
    return ws, ws.per_query(ws.input_lanes[0], "doc")


def iter_calc(measures, qrels, run):
    """``Metric(query_id, measure, value)`` for every positive query of ``qrels`` and every
    measure, as ``ir_measures.iter_calc`` yields them — by rankscope's conventions: a positive
    the run lacks is yielded with 0, queries without a relevant doc are not yielded.
    ``measure`` is what was asked (the typed name, ``'map'``, or the measure object,
    ``ir_measures.AP``); ``Metric.key`` is its canonical key (``'ap'``)."""
    asked = _asked(measures)  # at the call, not at the first next(): a bad name raises here
    ws, pq = _lane_values(asked, qrels, run)
    order = ws.in_display_order(ws.positives)
    return (Metric(q, a.asked, float(pq[a.key][code])) for q, code in zip(ws.qids[order].tolist(), order.tolist())
            for a in asked)


def calc_aggregate(measures, qrels, run) -> dict:
    """``{measure: mean over the positive queries}``, the value report.json gives each, keyed
    by what was asked (``{'map': ..., 'P.10': ...}``; an ir_measures object keys its own
    value, as ``ir_measures.calc_aggregate`` does). :func:`canonical_key` turns a key into
    the canonical one report.json uses (``canonical_key('map') == 'ap'``)."""
    asked = _asked(measures)
    ws, pq = _lane_values(asked, qrels, run)
    means = ws.means_of(pq, list(dict.fromkeys(a.key for a in asked)))
    return {a.asked: means[a.key] for a in asked}


def canonical_key(measure) -> str:
    """The canonical key of a measure as any face takes it: a typed name (``'map'``,
    ``'P.10'``, ``'ndcg_cut.10'``, ``'R@100'``) or an ir_measures object (``nDCG@10``) →
    ``'ap'``, ``'p@10'``, ``'ndcg@10'``, ``'recall@100'``. Unknown names raise ``InputError``."""
    from .kernel.measures import resolve_measures

    (a,) = resolve_measures([measure], "measures")
    return str(a.key)


def define(name: str, per_query, definition: str | None = None, aliases=(), proportion: bool = False, *,
           cutoff: str = "optional", needs_relevant: bool = False) -> str:
    """Register a measure of your own; returns its name. ``per_query(cols, k, rel)`` gets the
    columns every built-in measure gets (``kernel.measures.columns.Columns``: one lane's judged
    hits, every query at once), the cutoff ``k`` (None when the name has none) and the
    relevance level ``rel`` (None = ``relevant``), and returns one value per query code. The
    measure is then asked for by name (``'p_graded@5'``) in ``evaluate``, ``compare`` and
    every other face. ``proportion=True`` (values 0 or 1) gives the mean a Wilson interval,
    otherwise a bootstrap one. A name or alias that clashes with a built-in one is refused
    (``InputError``); ``unregister(name)`` or ``with defined_measures():`` takes it back out.
    A file of such calls is what ``--measures-from FILE.py`` loads."""
    from .kernel import define_measure

    return str(define_measure(name, per_query, definition, aliases, proportion, cutoff, needs_relevant).kind)


def unregister(name: str) -> None:
    """Take a measure made by :func:`define` back out of the registry."""
    from .kernel import unregister_measure

    unregister_measure(name)


@contextmanager
def defined_measures():
    """``with defined_measures(): define(...)``: the definitions made inside end with the block."""
    from .kernel import measures_scope

    with measures_scope():
        yield


# --------------------------------------------------------------------------- HTML


def _html_table(df, caption: str) -> str:
    """A notebook's table: the frame's HTML (pandas escapes every cell) with the caption below."""
    import html

    return df.to_html(index=False, na_rep="—", float_format=lambda x: f"{x:.4f}") + \
        f"<p><em>{html.escape(caption)}</em></p>"
