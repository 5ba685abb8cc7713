"""Per-query work in query-id buckets: evaluate runs larger than memory, bucket by bucket.

Everything rankscope computes from raw rows is computed per query: a query's metrics,
first relevant rank, top score and runner-up, top-hit relevance, ceilings and corpus
coverage read only that query's run rows and judgments. Everything after (intervals,
strata, attribution counts, the fusion dilution, the gate's floors and sweeps, compare,
rules, the report) reads per-query arrays. So the rows are split by query id into
buckets, each bucket is evaluated alone by the kernel's own code, and the per-query
tables come back to one place where the statistics run unchanged:

1. **partition** every lane and the qrels (and out-of-domain negatives) by
   :func:`bucket_of` -- an engine's job: DuckDB to Parquet, Dask, Spark, or
   :func:`partition` here, in process;
2. :func:`run_bucket` per bucket: its rows -> one :class:`BucketResult` (per-query tables);
3. :func:`merge` the results -> :class:`Merged` (a qid in two buckets is refused; qids
   ordered as bytes, so query codes are the in-memory path's);
4. :func:`evaluate_merged` on the driver: report.json's dict, the same as
   ``instruments.evaluate.evaluate_report`` on the whole workspace, byte for byte once written
   (``output.dumps_strict``); the per-query CSV is ``render.report.per_query_csv`` of it.

:func:`plan` decides, once, what every bucket is told (:class:`BucketPlan`) and refuses
the options whose work does not split by query; :func:`evaluate_in_process` runs the
four steps serially in this process (the reference engine the tests compare against).

Bucket tables (pyarrow, one per lane and one for the qrels; the rows of one bucket's qids):

=========  ======================================  ===================================
table      columns                                 notes
=========  ======================================  ===================================
lane       ``qid`` string, ``doc`` string,         ``line``: the row's source line as
           ``score`` float64, ``line`` int64        the readers count it (RawLane.line)
qrels      ``qid`` string, ``doc`` string,         the same for the qrels file (and the
           ``grade`` int64, ``line`` int64          out-of-domain negatives)
=========  ======================================  ===================================

Rows may come in any order (they are put back in line order); ``line`` is what the
warnings' ``FILE:LINE`` and the errors name. Input fingerprints, a file's format and
columns and the readers' own warnings are properties of whole files: the engine, which
streams them, passes them to the driver as :class:`FileFacts` (``file_facts`` of a file
read whole gives them in tests).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ..errors import InputError, InputWarning
from ..measures.coverage import COLUMNS as COVERAGE_COLUMNS
from ..measures.coverage import LaneCoverage
from ..measures.coverage import as_columns as coverage_columns
from ..measures.coverage import from_columns as coverage_from_columns
from ..measures.ties import COLUMNS, SUPPORTED, LaneTies, as_columns, from_columns
from ..ranking import judgments as J
from ..settings import GateSettings, LoadSettings
from ..workspace.base import WorkspaceBase

if TYPE_CHECKING:
    import pyarrow as pa

    from ..attribution.misses import Attribution
    from ..gate.mutual import MutualNN
    from ..gate.scores import TopScores
    from ..gate.thresholds import Thresholds
    from ..inputs.files import Digest
    from ..inputs.rows import RawLane, RawQrels
    from ..measures import MetricKey
    from ..settings import CalibrationSettings
    from ..workspace.contract import RankedPerQuery
    from ..workspace.loaded import InputFile, Sources, Workspace

#: one (lane, level) block of a bucket's measures: lane, level, present, top_relevant, per-query values
_Block = tuple[str, str, np.ndarray, np.ndarray, Mapping[str, np.ndarray]]

__all__ = [
    "SQL_BUCKET", "SPARK_SQL_BUCKET", "bucket_of", "buckets_of", "BucketPlan", "plan", "run_bucket", "BucketResult", "BucketWarning",
    "merge", "Merged", "FileFacts", "file_facts", "QueryWorkspace", "evaluate_merged", "partition",
    "evaluate_in_process",
]

#: :func:`bucket_of` in SQL (DuckDB; ``{qid}`` a VARCHAR expression, ``{n}`` the bucket count).
SQL_BUCKET = "(('0x' || substr(md5({qid}), 1, 15))::BIGINT % {n})"
#: :func:`bucket_of` in Spark SQL (``{qid}`` a string column expression, ``{n}`` the bucket
#: count): ``conv`` gives the 60-bit prefix as a decimal string, cast to BIGINT so that
#: ``pmod`` works on an exact integer.
SPARK_SQL_BUCKET = "pmod(cast(conv(substr(md5({qid}), 1, 15), 16, 10) as bigint), {n})"

LANE_COLUMNS = ("qid", "doc", "score", "line")
QRELS_COLUMNS = ("qid", "doc", "grade", "line")


# --------------------------------------------------------------------------- the hash


def bucket_of(qid: str, n: int) -> int:
    """The bucket of a query id among ``n``: ``int(md5(utf8(qid)).hexdigest()[:15], 16) % n``.

    The first 15 hex digits (60 bits) of the MD5 of the qid's UTF-8 bytes, read as an
    unsigned integer, modulo ``n``. Stable across processes, machines and versions (no
    salted ``hash()``), and the same in SQL: :data:`SQL_BUCKET`, in DuckDB
    ``(('0x' || substr(md5(qid), 1, 15))::BIGINT % n)``; 60 bits fit a signed BIGINT, so
    Spark SQL's :data:`SPARK_SQL_BUCKET` agrees too.
    """
    if n < 1:
        raise ValueError("at least one bucket")
    return int(hashlib.md5(qid.encode("utf-8")).hexdigest()[:15], 16) % n


def buckets_of(qids: pa.Array | pa.ChunkedArray, n: int) -> NDArray[np.int64]:
    """:func:`bucket_of` of every entry of a pyarrow string array (int64 per row); each
    distinct qid is hashed once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qids = qids.combine_chunks() if isinstance(qids, pa.ChunkedArray) else qids
    enc = pc.dictionary_encode(qids)
    per = np.fromiter((bucket_of(q, n) for q in enc.dictionary.to_pylist()), dtype=np.int64, count=len(enc.dictionary))
    return per[np.asarray(enc.indices, dtype=np.int64)] if len(qids) else np.zeros(0, dtype=np.int64)


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class BucketPlan:
    """What every bucket is told: the lanes (name, path) in ``--lane`` order, the qrels and
    out-of-domain negatives paths (warnings name them), the workspace settings (an RRF k
    from thresholds already applied), the thresholds read on the driver (convex weights),
    the corpus file (read by each bucket), the strata files (read on the driver) and the
    gate lane whose top scores the buckets keep (None: no lane to gate)."""

    lanes: tuple[tuple[str, str], ...]  # ((name, path), ...)
    qrels: str
    settings: LoadSettings = LoadSettings()
    thresholds: Thresholds | None = None
    ood_negatives: str | None = None
    corpus: str | None = None
    strata: tuple[str, ...] = ()
    gate_lane: str | None = None
    extra_metrics: tuple[str, ...] = ()  # metric keys computed besides the settings' (a comparison's --metric)
    calibration: CalibrationSettings | None = None  # keep the convex grid's per-query values (calibrate)
    mutual: bool = False  # the gate's mutual condition is on: count how many gated queries list each doc
    # files of user-defined measures in the set, (path, sha256): a worker starts clean and loads them
    measure_files: tuple[tuple[str, str], ...] = ()

    @property
    def lane_names(self) -> list[str]:
        return [name for name, _ in self.lanes]


def plan(sources: Sources, gate: GateSettings | None = None, thresholds_path: str | None = None,
         metrics: Sequence[str] = (), calibration: CalibrationSettings | None = None) -> BucketPlan:
    """The plan of ``sources`` (``workspace.Sources``) under the gate settings and the
    thresholds file ``evaluate`` would use; ``metrics``: names of metrics to compute
    besides the settings' (what ``compare --metric`` tests); ``calibration``
    (``settings.CalibrationSettings``, for ``calibrate``): the buckets keep every convex
    grid point's per-query objective. Refuses, naming the option, what does not split
    by query: a lane in several shard files, ``--queries`` / ``--docs`` (the dashboard's
    drill-down). The mutual-nearest-neighbour condition groups a document's hits across
    queries: the buckets count, per doc, the gated queries listing it
    (``gate.doc_reach``, summed on merging) and the driver puts the lists together from
    one top doc per query (``gate.mutual_of_tops``)."""
    from ..gate.analysis import calibrated_lane, gate_settings_with_thresholds
    from ..gate.thresholds import read_thresholds
    from ..inputs.formats import shard_paths
    from ..inputs.readers import file_lane_name

    s = sources.settings  # its relevance level was checked when it was made (LoadSettings)
    gate = gate or GateSettings()
    if not sources.lanes:
        raise InputError("at least one --lane is needed", "--lane")
    for _, spec in sources.lanes:
        if len(shard_paths(spec)) > 1:
            raise InputError("a lane in several shard files cannot be bucketed: give it as one file", spec)
    if sources.queries or sources.docs:
        raise InputError("query and doc texts are read by the dashboard's drill-down, not in buckets",
                         "--queries" if sources.queries else "--docs")
    th = read_thresholds(thresholds_path) if thresholds_path else None
    if th is not None and th.rrf_k is not None and s.rrf_k_source == "default":
        from dataclasses import replace

        s = replace(s, rrf_k=th.rrf_k, rrf_k_source="calibration")
    gate = gate_settings_with_thresholds(gate, th)
    g = th.gate if th is not None else None
    mutual = (g.mutual_r_or(gate.mutual) if g is not None else gate.mutual) is not None  # as analyse_gate reads it
    lanes = tuple((name if name is not None else file_lane_name(path), path) for name, path in sources.lanes)
    from types import SimpleNamespace

    from ..inputs.readers import check_lane_name
    from ..workspace.loaded import check_lane_names

    for name, path in lanes:
        check_lane_name(name, path)  # as the readers check it
    check_lane_names([SimpleNamespace(name=n, path=p) for n, p in lanes])
    gate_lane = gate.gate_on or calibrated_lane(th) or (lanes[0][0] if len(lanes) == 1 else None)
    from ..measures import parse_metrics

    known = {m.key for m in s.metrics}
    extra = tuple(dict.fromkeys(k.key for k in parse_metrics(",".join(metrics)) if k.key not in known)) if metrics else ()
    if calibration is not None:
        from ..fusion.methods import check_grid

        if th is not None:
            raise InputError("calibrate fits thresholds; it does not read them", "--thresholds")
        if len(lanes) >= 2:
            check_grid(len(lanes), calibration.step)
            parse_metrics(calibration.objective)
    files: dict[str, str] = {}
    for key in [*s.metrics, *(parse_metrics(",".join(extra)) if extra else [])]:
        m = key.measure
        if m.defined_in == "python":
            raise InputError(f"measure {key.key!r} was defined in Python, and bucket workers start clean: put its "
                             "definition in a file and give it with --measures-from", "--buckets")
        if m.defined_in is not None:
            files[m.defined_in] = m.defined_sha256 or ""
    return BucketPlan(lanes, sources.qrels, s, th, sources.ood_negatives, sources.corpus, tuple(sources.strata),
                      gate_lane, extra, calibration, mutual, tuple(files.items()))


# --------------------------------------------------------------------------- one bucket


@dataclass(frozen=True)
class BucketWarning:
    """A workspace warning of one bucket, with where it sits in the report's list
    (``slot``) and which bucket's place wins on merging (``key``: the smallest; a source
    line, or for a duplicate qrels line the qid, as the in-memory path picks them)."""

    kind: str
    count: int
    message: str
    where: str
    slot: tuple[int, ...]
    key: float | str  # a source line (inf: none) or a qid


@dataclass(frozen=True)
class BucketResult:
    """What one bucket gives back.

    ``queries``: one row per qid of the bucket, in qid byte order: ``qid``, ``class``
    (``judgments`` class code) and, per level and metric with a ceiling,
    ``ceiling/LEVEL/KEY``; with a corpus ``indexed``, ``relevant_pairs``,
    ``not_in_corpus``; with out-of-domain negatives ``ood_negative``; with a gate lane
    ``gate/present``, ``gate/n_hits``, ``gate/top``, ``gate/second``, ``gate/margin``,
    ``gate/top_doc`` (doc id, null when absent), ``gate/top_relevant``,
    ``gate/first_relevant_score``, ``gate/first_relevant_rank``.

    ``measures``: per lane (input, fused, variant; in the report's order) and level, one
    row per qid in the same order as ``queries``: ``qid``, ``lane``, ``level`` (both
    dictionary-encoded strings),
    ``present``, ``top_relevant``, ``rank`` (first relevant rank, 0 = miss) and one
    float64 column per metric key.

    ``lanes``: ((name, origin), ...); ``lane_rows`` / ``lane_queries``: per input lane,
    rows read and queries listed; ``qrels_rows``, ``ood_rows``; ``warnings``."""

    queries: pa.Table
    measures: pa.Table
    lanes: tuple[tuple[str, str], ...] = ()
    levels: tuple[str, ...] = ()
    lane_rows: tuple[int, ...] = ()
    lane_queries: tuple[int, ...] = ()
    qrels_rows: int = 0
    ood_rows: int = 0
    warnings: tuple[BucketWarning, ...] = ()
    convex_grid: pa.Table | None = None  # column i = grid point i's objective per qid (plan.calibration)
    fused_queries: int = 0  # queries with a hit in some input lane (the convex fit's count)
    doc_reach: pa.Table | None = None  # doc, queries: gated queries (positives, negatives) listing each doc (plan.mutual)
    top_grade: int | None = None  # the highest grade in the bucket's qrels rows (None: no rows)

    @property
    def n_queries(self) -> int:
        return int(self.queries.num_rows)


def _no_digest() -> Digest:
    """A digest that never reads the file: a bucket's fingerprints come from ``FileFacts``."""
    from ..inputs.files import Digest

    return Digest(hexdigest="")


def _column(table: pa.Table, name: str, where: str) -> pa.Array:
    import pyarrow as pa

    if name not in table.column_names:
        raise InputError(f"bucket table has no {name!r} column (columns: {', '.join(table.column_names)})", where)
    col = table.column(name)
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_large_string(col.type):
        col = col.cast(pa.string())
    return col


def _in_line_order(table: pa.Table, path: str) -> pa.Table:
    """The table in source-line order (an engine may hand rows over in any order)."""
    import pyarrow.compute as pc

    line = np.asarray(_column(table, "line", path), dtype=np.int64)
    if line.size > 1 and np.any(line[1:] < line[:-1]):
        table = table.take(pc.sort_indices(table, sort_keys=[("line", "ascending")]))
    return table


def _raw_lane(name: str, path: str, table: pa.Table) -> RawLane:
    from ..inputs.readers import RawLane

    t = _in_line_order(table, path)
    return RawLane(name, path, _column(t, "qid", path), _column(t, "doc", path),
                   np.asarray(_column(t, "score", path), dtype=np.float64),
                   np.asarray(_column(t, "line", path), dtype=np.int64), digest=_no_digest())


def _raw_qrels(path: str, table: pa.Table) -> RawQrels:
    from ..inputs.readers import RawQrels

    t = _in_line_order(table, path)
    return RawQrels(path, _column(t, "qid", path), _column(t, "doc", path),
                    np.asarray(_column(t, "grade", path), dtype=np.int64),
                    np.asarray(_column(t, "line", path), dtype=np.int64), digest=_no_digest())


def _empty_table(columns: Sequence[str]) -> pa.Table:
    import pyarrow as pa

    types = {"qid": pa.string(), "doc": pa.string(), "score": pa.float64(), "grade": pa.int64(), "line": pa.int64()}
    return pa.table({c: pa.array([], type=types[c]) for c in columns})


def run_bucket(lanes: Mapping[str, pa.Table | None], qrels: pa.Table | None, plan: BucketPlan,
               ood: pa.Table | None = None) -> BucketResult:
    """The per-query tables of one bucket (see :class:`BucketResult`).

    ``lanes``: lane name -> table of that lane's rows in this bucket (a lane without rows
    here may be left out); ``qrels`` (and ``ood``, with out-of-domain negatives): the
    judgments of this bucket's qids. The rows go through the kernel as a whole run would:
    ``Workspace.from_raw`` (duplicates refused, ordering, depth, classes), the derived
    lanes of ``instruments.evaluate.add_derived_lanes``, then each measure as ``Workspace.per_query``
    computes it. Pure: the same rows and plan give the same tables.
    """
    import pyarrow as pa

    from ..instruments.evaluate import add_derived_lanes
    from ..workspace.loaded import Workspace, corpus_mask, top_grade

    unknown = set(lanes) - set(plan.lane_names)
    if unknown:
        raise ValueError(f"bucket tables for lanes not in the plan: {sorted(unknown)}")
    raws = [_raw_lane(name, path, lanes.get(name) if lanes.get(name) is not None else _empty_table(LANE_COLUMNS))
            for name, path in plan.lanes]
    raw_q = _raw_qrels(plan.qrels, qrels if qrels is not None else _empty_table(QRELS_COLUMNS))
    raw_ood = None
    if plan.ood_negatives is not None:
        raw_ood = _raw_qrels(plan.ood_negatives, ood if ood is not None else _empty_table(QRELS_COLUMNS))
    rows = tuple(len(r.score) for r in raws)
    q_rows, o_rows = len(raw_q.grade), len(raw_ood.grade) if raw_ood is not None else 0
    if sum(rows) + q_rows + o_rows == 0:
        return BucketResult(_queries_table([], {}), _measures_table([], pa.array([], type=pa.string())), lane_rows=rows,
                            lane_queries=tuple(0 for _ in rows))
    ws = Workspace.from_raw(raws, raw_q, plan.settings, raw_ood=raw_ood)
    if plan.corpus:
        ws.corpus_mask = corpus_mask(ws.doc_ids, _corpus_ids(plan.corpus))
    add_derived_lanes(ws, plan.thresholds)
    queries = _queries_columns(ws, plan)
    measures: list[_Block] = []
    metrics = ws.metric_set(plan.extra_metrics) if plan.extra_metrics else None
    keys = [m.key for m in metrics or plan.settings.metrics]
    tie_keys: list[str] = []
    for lane in ws.lanes:
        present, top_rel = ws.present(lane), ws.top_relevant(lane)
        # tie exposure needs the rows, so each bucket computes it (doc level) as columns
        tie_cols = as_columns(ws.ties(lane, metrics))
        tie_cols.update(coverage_columns(ws.judgment_coverage(lane, metrics)))  # judgment coverage: rows too
        tie_keys = list(tie_cols)
        for level in ws.levels():
            # the list length travels beside the measures (the short-list check needs it), and
            # the tie columns at doc level
            pq = dict(ws.per_query(lane, level, metrics))
            pq["length"] = ws.list_lengths(lane, level)
            pq.update(tie_cols if level == "doc" else {k: np.full(ws.n_queries, np.nan) for k in tie_cols})
            measures.append((lane, level, present, top_rel, pq))
    qid = pa.array(ws.qids.tolist(), type=pa.string())
    lane_files = [f for f in ws.inputs if f.role == "lane"]
    grid, fused = None, 0
    if plan.calibration is not None and len(ws.input_lanes) >= 2:
        from ..fusion.calibration import grid_values

        _, values, fused = grid_values(ws, plan.calibration.step, plan.calibration.objective)
        grid = pa.table({str(i): v for i, v in enumerate(values)})
    reach = None
    if plan.mutual and plan.gate_lane in ws.lanes:
        from ..gate import doc_reach

        among = (ws.classes == J.POSITIVE) | (ws.classes == J.NEGATIVE)
        if ws.ood_negatives is not None:
            among[ws.ood_negatives] = True
        docs, counts = doc_reach(ws.lanes[plan.gate_lane], among)
        reach = pa.table({"doc": ws.doc_ids.take(pa.array(docs)), "queries": pa.array(counts)})
    return BucketResult(
        _queries_table(qid, queries), _measures_table(measures, qid, keys + tie_keys),
        lanes=tuple((n, ws.lane_origin[n]) for n in ws.lanes), levels=tuple(ws.levels()), lane_rows=rows,
        lane_queries=tuple(int(f.queries) for f in lane_files),  # type: ignore[arg-type]  # a lane's InputFile counts its queries
        qrels_rows=q_rows, ood_rows=o_rows,
        warnings=tuple(_bucket_warnings(ws.warnings, plan, raw_q, raw_ood)), convex_grid=grid, fused_queries=fused,
        doc_reach=reach, top_grade=top_grade(ws.judgments))


_CORPUS: dict[str, set[str]] = {}


def _corpus_ids(path: str) -> set[str]:
    """The corpus file's ids, read once per process (every bucket needs them)."""
    from ..inputs.tables import read_corpus

    if path not in _CORPUS:
        _CORPUS.clear()
        _CORPUS[path] = read_corpus(path)
    return _CORPUS[path]


def _queries_columns(ws: Workspace, plan: BucketPlan) -> dict[str, Any]:
    cols: dict[str, Any] = {"class": np.asarray(ws.classes, dtype=np.int8)}
    for level in ws.levels():
        for key, v in ws.ceilings(level).items():
            cols[f"ceiling/{level}/{key}"] = np.asarray(v, dtype=np.float64)
        for rel in sorted({ws.settings.relevant} | {m.rel for m in ws.settings.metrics if m.rel is not None}):
            cols[f"relevant/{level}/{rel}"] = ws.relevant_count(level, rel)  # the short-list ceilings' R
    ranked: RankedPerQuery = ws  # coverage() through the contract's typed signature
    cov = ranked.coverage()
    if cov is not None:
        cols["indexed"], cols["relevant_pairs"], cols["not_in_corpus"] = cov
    if plan.ood_negatives is not None:
        ood = np.zeros(ws.n_queries, dtype=bool)
        ood[ws.ood_negatives] = True
        cols["ood_negative"] = ood
    if plan.gate_lane is not None and plan.gate_lane in ws.lanes:
        t = ws.top_scores(plan.gate_lane)
        cols["gate/present"], cols["gate/n_hits"] = t.present, t.n_hits
        cols["gate/top"], cols["gate/second"], cols["gate/margin"] = t.top, t.second, t.margin
        import pyarrow as pa

        absent = t.top_doc < 0
        cols["gate/top_doc"] = ws.doc_ids.take(pa.array(np.where(absent, 0, t.top_doc), mask=absent))
        cols["gate/top_relevant"] = t.top_relevant
        cols["gate/first_relevant_score"], cols["gate/first_relevant_rank"] = t.first_relevant_score, t.first_relevant_rank
    return cols


def _queries_table(qid: pa.Array | Sequence[str], cols: Mapping[str, Any]) -> pa.Table:
    import pyarrow as pa

    if not len(qid):
        return pa.table({"qid": pa.array([], type=pa.string()), "class": pa.array([], type=pa.int8())})
    out = {"qid": qid}
    for name, v in cols.items():
        out[name] = v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v if isinstance(v, pa.Array) else pa.array(v)
    return pa.table(out)


def _measures_table(blocks: Sequence[_Block], qid: pa.Array, metric_keys: Sequence[str] = ()) -> pa.Table:
    import pyarrow as pa

    if not blocks:
        return pa.table({"qid": pa.array([], type=pa.string()), "lane": pa.array([], type=pa.string()),
                         "level": pa.array([], type=pa.string())})
    keys = ["rank"] + list(metric_keys)
    n = len(qid)
    cols: dict[str, pa.Array] = {
        "qid": pa.concat_arrays([qid] * len(blocks)),
        "lane": _repeated([b[0] for b in blocks], n),
        "level": _repeated([b[1] for b in blocks], n),
        "present": pa.array(np.concatenate([b[2] for b in blocks])),
        "top_relevant": pa.array(np.concatenate([b[3] for b in blocks])),
    }
    if all("length" in b[4] for b in blocks):
        keys.append("length")
    for k in keys:
        cols[k] = pa.array(np.concatenate([b[4][k] for b in blocks]))
    return pa.table(cols)


def _repeated(names: list[str], n: int) -> pa.DictionaryArray:
    """``names[i]`` repeated ``n`` times each, as a dictionary-encoded string column."""
    import pyarrow as pa

    values = list(dict.fromkeys(names))
    codes = np.repeat(np.array([values.index(x) for x in names], dtype=np.int32), n)
    return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(values, type=pa.string()))


def _line_of(where: str) -> int | None:
    head, sep, tail = where.rpartition(":")
    return int(tail) if sep and tail.isdigit() else None


def _bucket_warnings(warnings: Iterable[InputWarning], plan: BucketPlan, raw_q: RawQrels,
                     raw_ood: RawQrels | None) -> list[BucketWarning]:
    """Each workspace warning of a bucket with its slot in the report's order (the order
    ``Workspace._build`` appends them: the qrels' duplicates, the negatives', then per lane
    its queries without judgments and its missing positives, then partial and unjudged
    queries; the readers' own warnings -- from ``FileFacts`` -- go before the ones of
    their file) and its merge key."""
    names = plan.lane_names
    out: list[BucketWarning] = []
    for w in warnings:
        if w.kind == "relevance_level_unreached":  # a fact of the whole qrels: the driver says it (``_warnings``)
            continue
        line = _line_of(w.where)
        key: float | str = line if line is not None else float("inf")
        slot: tuple[int, ...]
        if w.kind == "duplicate_qrels_lines":
            raw = raw_ood if raw_ood is not None and w.where.startswith(f"{raw_ood.path}:") else raw_q
            slot = (2,) if raw is raw_ood else (1,)
            # the in-memory path names the duplicate of the first (qid, doc) in code order: qid first
            rows = np.flatnonzero(raw.line == line) if line is not None else np.zeros(0, dtype=np.int64)
            key = raw.qid[int(rows[0])].as_py() if rows.size else ""
        elif w.kind in ("lane_queries_without_judgments", "positives_missing_from_lane"):
            lane = w.message.split(":", 1)[0][len("lane "):]
            slot = (3, names.index(lane), 1 if w.kind == "lane_queries_without_judgments" else 2)
        elif w.kind == "partial_queries":
            slot = (4, 0)
        elif w.kind == "unjudged_queries":
            slot = (4, 1)
        else:
            raise ValueError(f"warning kind {w.kind!r} has no place in a bucket's merge")
        out.append(BucketWarning(w.kind, int(w.count), w.message, w.where, slot, key))
    return out


# --------------------------------------------------------------------------- the merge


@dataclass(frozen=True)
class Merged:
    """Every bucket's per-query tables as one, in qid byte order (the query codes of the
    in-memory workspace): ``queries`` (one row per qid), ``blocks`` ((lane, level) -> that
    block of ``measures``, aligned with ``queries``), and the buckets' sums and warnings."""

    queries: pa.Table
    blocks: dict[tuple[str, str], pa.Table]
    lanes: tuple[tuple[str, str], ...]
    levels: tuple[str, ...]
    lane_rows: tuple[int, ...]
    lane_queries: tuple[int, ...]
    qrels_rows: int
    ood_rows: int
    warnings: tuple[BucketWarning, ...]
    convex_grid: pa.Table | None = None  # aligned with ``queries`` (calibrate)
    fused_queries: int = 0
    doc_reach: pa.Table | None = None  # doc, queries: summed over the buckets
    top_grade: int | None = None  # the highest grade over the buckets

    @property
    def qids(self) -> pa.ChunkedArray:
        return self.queries.column("qid")


def merge(results: Iterable[BucketResult]) -> Merged:
    """Concatenate bucket results, refuse a qid in two buckets, order by qid as bytes.

    Every judged qid is in the bucket of its qrels rows, with or without run rows, so a
    judged query absent from every run is here (its measures 0, as in memory). Buckets
    without rows are skipped."""
    import pyarrow as pa
    import pyarrow.compute as pc

    results = list(results)
    if not results:
        raise ValueError("merge needs at least one bucket result")
    full = [r for r in results if r.n_queries]
    lane_rows = tuple(int(sum(x)) for x in zip(*[r.lane_rows for r in results]))
    lane_queries = tuple(int(sum(x)) for x in zip(*[r.lane_queries for r in results]))
    if not full:
        raise InputError("no rows in any bucket: the qrels and the lanes are empty")
    lanes, levels = full[0].lanes, full[0].levels
    for r in full[1:]:
        if r.lanes != lanes or r.levels != levels:
            raise ValueError(f"buckets disagree on their lanes: {lanes} and {r.lanes}")
    qid = pa.concat_arrays([r.queries.column("qid").combine_chunks() for r in full])
    order = pc.sort_indices(qid.cast(pa.binary()))
    sorted_qid = qid.take(order)
    if len(sorted_qid) > 1:
        same = pc.equal(sorted_qid[1:], sorted_qid[:-1])
        if pc.any(same).as_py():
            i = int(np.flatnonzero(np.asarray(same, dtype=bool))[0])
            which = np.repeat(np.arange(len(full)), [r.n_queries for r in full])[np.asarray(order)[[i, i + 1]]]
            raise InputError(f"query {sorted_qid[i].as_py()!r} is in two buckets (results {int(which[0])} and "
                             f"{int(which[1])} of the non-empty ones): a query's rows belong to one bucket")
    queries = pa.concat_tables([r.queries for r in full], promote_options="default").take(order)
    blocks: dict[tuple[str, str], pa.Table] = {}
    for lane, _ in lanes:
        for level in levels:
            parts: list[pa.Table] = []
            for r in full:
                m = r.measures
                i = _block_start(r, lane, level)
                parts.append(m.slice(i, r.n_queries).drop_columns(["qid", "lane", "level"]))
            blocks[(lane, level)] = pa.concat_tables(parts).take(order)
    grids = [r.convex_grid for r in full]
    grid = pa.concat_tables(grids).take(order) if grids and all(g is not None for g in grids) else None
    return Merged(queries, blocks, lanes, levels, lane_rows, lane_queries, int(sum(r.qrels_rows for r in results)),
                  int(sum(r.ood_rows for r in results)), tuple(_merge_warnings([w for r in results for w in r.warnings])),
                  grid, int(sum(r.fused_queries for r in results)), _reach([r.doc_reach for r in full]),
                  max((r.top_grade for r in results if r.top_grade is not None), default=None))


def _reach(tables: Sequence[pa.Table | None]) -> pa.Table | None:
    """The buckets' doc reach tables summed by doc (a doc is listed by queries of many buckets)."""
    import pyarrow as pa

    if not tables or any(t is None for t in tables):
        return None
    t = pa.concat_tables(tables).group_by("doc").aggregate([("queries", "sum")])
    return pa.table({"doc": t.column("doc"), "queries": t.column("queries_sum")})


def _block_start(r: BucketResult, lane: str, level: str) -> int:
    """Row of ``r.measures`` where the (lane, level) block starts (blocks: lane-major, in
    ``r.lanes`` order, then ``r.levels``)."""
    li = [n for n, _ in r.lanes].index(lane)
    return (li * len(r.levels) + r.levels.index(level)) * r.n_queries


def _merge_warnings(ws: list[BucketWarning]) -> list[BucketWarning]:
    """One warning per (slot, kind, message): counts summed, the place of the smallest key."""
    by: dict[tuple[tuple[int, ...], str, str], BucketWarning] = {}
    for w in ws:
        k = (w.slot, w.kind, w.message)
        if k not in by:
            by[k] = w
        else:
            old = by[k]
            best = w if _key_lt(w.key, old.key) else old
            by[k] = BucketWarning(w.kind, old.count + w.count, w.message, best.where, w.slot, best.key)
    return [by[k] for k in sorted(by, key=lambda k: k[0])]


def _key_lt(a: float | str, b: float | str) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.encode("utf-8") < b.encode("utf-8")
    return a < b  # type: ignore[operator]  # one slot's keys are all lines or all qids


# --------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class FileFacts:
    """What is known of a whole input file, from the engine that streamed it: its sha256,
    the format and columns it was read as, and the readers' warnings (``FILE:LINE``)."""

    path: str
    sha256: str
    format: str | None = None
    columns: dict[str, str] | None = None
    warnings: tuple[InputWarning, ...] = ()
    dataset: dict[str, str] | None = None  # qrels read by ir_datasets id (inputs.irds): the id and version


def file_facts(raw: RawLane | RawQrels) -> FileFacts:
    """The facts of a lane or qrels file read whole (``readers.RawLane`` / ``RawQrels``)."""
    return FileFacts(raw.path, raw.sha256(), raw.format or None, raw.columns, tuple(raw.warnings),
                     getattr(raw, "origin", None))  # a lane has none


@dataclass(frozen=True)
class QueryLane:
    """A lane of a :class:`QueryWorkspace`: its name, origin and rows read (input lanes)."""

    name: str
    origin: str
    n_rows: int = 0


class QueryWorkspace(WorkspaceBase):
    """The driver's workspace over merged per-query tables: it answers
    :class:`~..workspace.contract.RankedPerQuery` -- the per-query questions the report,
    attribution, the fusion dilution, the gate, strata, intervals and compare ask
    (``per_query``, ``first_relevant_rank``, ``ceilings``, ``present``, ``top_relevant``,
    ``top_scores``, ``coverage``, ``attribution``, the query classes and sets) -- from the
    buckets' columns, and nothing that needs rows.

    ``facts``: :class:`FileFacts` by path for every lane, qrels and negatives file.
    """

    def __init__(self, merged: Merged, plan: BucketPlan, facts: Mapping[str, FileFacts]):
        from ..inputs.files import sha256_of
        from ..inputs.provenance import provenance
        from ..inputs.tables import read_corpus
        from ..workspace.loaded import InputFile, read_strata_labels, unreached_levels

        self.settings = plan.settings
        self._merged = merged
        self._plan = plan
        self._cache = {}
        q = merged.queries
        self.qids = np.asarray(q.column("qid").to_pylist(), dtype=object)
        self.classes = np.asarray(q.column("class"), dtype=np.int8)
        self.input_lanes = plan.lane_names
        rows = dict(zip(self.input_lanes, merged.lane_rows))
        self.lane_origin = {name: origin for name, origin in merged.lanes}
        self.lanes = {name: QueryLane(name, origin, rows.get(name, 0)) for name, origin in merged.lanes}
        self.group_of: np.ndarray | None = None
        self.corpus_mask: NDArray[np.bool_] | None = None
        self.query_text: dict[str, str] = {}
        self.doc_text: dict[str, str] = {}
        self.sources: Sources | None = None

        def fact(path: str) -> FileFacts:
            if path not in facts:
                raise ValueError(f"no FileFacts for {path}")
            return facts[path]

        inputs: list[InputFile] = []
        for (name, path), n, nq in zip(plan.lanes, merged.lane_rows, merged.lane_queries):
            f = fact(path)
            inputs.append(InputFile("lane", path, f.sha256, n, nq, f.format, f.columns))
        f = fact(plan.qrels)
        inputs.append(InputFile("qrels", plan.qrels, f.sha256, merged.qrels_rows, format=f.format, columns=f.columns,
                                dataset=f.dataset))
        self.ood_negatives: NDArray[np.int32] | None = None
        if plan.ood_negatives is not None:
            f = fact(plan.ood_negatives)
            inputs.append(InputFile("ood_negatives", plan.ood_negatives, f.sha256, merged.ood_rows, format=f.format,
                                    columns=f.columns, dataset=f.dataset))
            self.ood_negatives = np.flatnonzero(np.asarray(q.column("ood_negative"), dtype=bool)).astype(np.int32)
        self.strata, files = read_strata_labels(plan.strata, self.qid_index, self.n_queries)
        inputs += files
        if plan.corpus:
            inputs.append(InputFile("corpus", plan.corpus, sha256_of(plan.corpus), len(read_corpus(plan.corpus))))
        self.inputs = inputs
        self.latency, sidecar_warnings = _sidecar_latency(plan, facts)
        self.warnings = _warnings(merged.warnings, plan, facts, sidecar_warnings) + unreached_levels(
            plan.settings.metrics, merged.top_grade, plan.qrels)
        prov = provenance(inputs)
        self.synthetic, self.showcase = prov.synthetic, prov.showcase

    # ------------------------------------------------------------------ per-query values

    def levels(self) -> tuple[str, ...]:
        return tuple(self._merged.levels)

    def _block(self, lane: str, level: str) -> pa.Table:
        if (lane, level) not in self._merged.blocks:
            if lane not in self.lanes:
                raise InputError(f"lane {lane!r} is not loaded ({', '.join(self.lanes)})")
            raise InputError("group level needs --group-sep", "--group-sep")
        return self._merged.blocks[(lane, level)]

    def per_query(self, lane: str, level: str = "doc", metrics: tuple[MetricKey, ...] | None = None) -> dict[str, np.ndarray]:
        """``{metric key: float64[n_queries], "rank": int32[n_queries]}`` as the buckets
        computed them (``Workspace.per_query``); a metric the buckets did not compute is
        an error naming it."""
        keys = [m.key for m in (metrics or self.settings.metrics)]
        cache_key = ("pq", lane, level, tuple(keys))
        if cache_key not in self._cache:
            b = self._block(lane, level)
            missing = [k for k in keys if k not in b.column_names]
            if missing:
                raise InputError(f"{', '.join(missing)} was not computed in the buckets (give it with --metrics)",
                                 "--metrics")
            out: dict[str, np.ndarray] = {"rank": np.asarray(b.column("rank"), dtype=np.int32)}
            for k in keys:
                out[k] = np.asarray(b.column(k), dtype=np.float64)
            self._cache[cache_key] = out
        values: dict[str, np.ndarray] = self._cache[cache_key]
        return values

    def ties(self, lane: str, metrics: tuple[MetricKey, ...] | None = None) -> LaneTies:
        """The lane's tie exposure (``Workspace.ties``) as the buckets computed it."""
        keys = [m.key for m in (metrics or self.settings.metrics) if m.kind in SUPPORTED]
        b = self._block(lane, "doc")
        names = ["tie:tied"] + [f"tie:{p}:{k}" for k in keys for p in COLUMNS]
        return from_columns({n: np.asarray(b.column(n), dtype=np.float64) for n in names}, keys)

    def judgment_coverage(self, lane: str, metrics: tuple[MetricKey, ...] | None = None) -> LaneCoverage:
        """The lane's judgment coverage (``Workspace.judgment_coverage``) as the buckets computed it."""
        keys = [m.key for m in (metrics or self.settings.metrics)]
        b = self._block(lane, "doc")
        names = [f"cov:{p}:{k}" for k in keys for p in COVERAGE_COLUMNS]
        return coverage_from_columns({n: np.asarray(b.column(n), dtype=np.float64) for n in names}, keys)

    def first_relevant_rank(self, lane: str, level: str = "doc") -> NDArray[np.int32]:
        return self.per_query(lane, level)["rank"]

    def list_lengths(self, lane: str, level: str = "doc") -> NDArray[np.int64]:
        """Hits per query code in the lane at ``level`` (``Workspace.list_lengths``), as the buckets counted them."""
        return np.asarray(self._block(lane, level).column("length"), dtype=np.int64)

    def relevant_count(self, level: str = "doc", rel: int | None = None) -> NDArray[np.float64]:
        """R per query code (``Workspace.relevant_count``), as the buckets counted it."""
        at = self.settings.relevant if rel is None else rel
        return np.asarray(self._merged.queries.column(f"relevant/{level}/{at}"), dtype=np.float64)

    def ceilings(self, level: str = "doc") -> dict[str, np.ndarray]:
        q = self._merged.queries
        out: dict[str, np.ndarray] = {}
        for m in self.settings.metrics:
            name = f"ceiling/{level}/{m.key}"
            if name in q.column_names:
                out[m.key] = np.asarray(q.column(name), dtype=np.float64)
        return out

    def present(self, lane: str) -> NDArray[np.bool_]:
        return np.asarray(self._block(lane, "doc").column("present"), dtype=bool)

    def top_relevant(self, lane: str) -> NDArray[np.bool_]:
        return np.asarray(self._block(lane, "doc").column("top_relevant"), dtype=bool)

    def top_scores(self, lane: str) -> TopScores:
        """The gate lane's ``gate.TopScores`` from the buckets' ``gate/`` columns (doc codes
        of the top docs: their order of first appearance; only the mutual condition,
        which buckets refuse, compares them)."""
        from ..gate import TopScores

        if lane != self._plan.gate_lane or "gate/top" not in self._merged.queries.column_names:
            raise InputError(f"the buckets kept top scores of {self._plan.gate_lane or 'no lane'}, not of {lane!r} "
                             "(name the gate lane before bucketing)", "--gate-on")
        if ("top", lane) not in self._cache:
            import pyarrow.compute as pc

            q = self._merged.queries

            def col(name: str, dtype: DTypeLike) -> NDArray[Any]:
                return np.asarray(q.column(name), dtype=dtype)

            enc = pc.dictionary_encode(q.column("gate/top_doc")).combine_chunks()
            top_doc = np.asarray(enc.indices.fill_null(-1), dtype=np.int64)
            self._cache[("top", lane)] = TopScores(
                lane, col("gate/present", bool), col("gate/n_hits", np.int64), col("gate/top", np.float64),
                col("gate/second", np.float64), col("gate/margin", np.float64), top_doc,
                col("gate/top_relevant", bool), col("gate/first_relevant_score", np.float64),
                col("gate/first_relevant_rank", np.int32))
        top: TopScores = self._cache[("top", lane)]
        return top

    def coverage(self) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]] | None:
        q = self._merged.queries
        if "indexed" not in q.column_names:
            return None
        return (np.asarray(q.column("indexed"), dtype=bool), np.asarray(q.column("relevant_pairs"), dtype=np.int64),
                np.asarray(q.column("not_in_corpus"), dtype=np.int64))

    def mutual(self, lane: str, among: np.ndarray) -> MutualNN:
        """``Workspace.mutual`` from one top doc per query and the buckets' summed doc reach."""
        import pyarrow.compute as pc

        from ..gate import mutual_of_tops

        reach = self._merged.doc_reach
        if reach is None:
            raise InputError("the buckets did not count the mutual lists (plan them with the gate's mutual r)", "--mutual")
        t = self.top_scores(lane)
        at = pc.index_in(self._merged.queries.column("gate/top_doc"), value_set=reach.column("doc").combine_chunks())
        counts = np.asarray(reach.column("queries").combine_chunks().take(at.fill_null(0)), dtype=np.int64) \
            if reach.num_rows else np.zeros(len(at), dtype=np.int64)
        reach_of_top = np.where(np.asarray(at.is_valid()) & t.present, counts, 0)
        return mutual_of_tops(t.top_doc, t.present, among, reach_of_top)

    def convex_grid(self, step: float, metric: str) -> tuple[tuple[str, ...], list[np.ndarray], int]:
        """``calibration.grid_values`` from the buckets: (lanes, per grid point the
        objective per query code, queries with a fused hit)."""
        c = self._plan.calibration
        if c is None or self._merged.convex_grid is None or (c.step, c.objective) != (step, metric):
            raise InputError(f"the buckets did not keep the convex grid at step {step:g} for {metric} "
                             "(plan the buckets with these calibration settings)", "--step")
        g = self._merged.convex_grid
        return (tuple(self.input_lanes), [np.asarray(g.column(i), dtype=np.float64) for i in range(g.num_columns)],
                self._merged.fused_queries)

    def attribution(self, level: str = "doc") -> Attribution:
        from ..attribution import misses as A

        key = ("attribution", level)
        if key not in self._cache:
            self._cache[key] = A.compute_attribution(self, level)
        found: Attribution = self._cache[key]
        return found


def _sidecar_latency(plan: BucketPlan, facts: Mapping[str, FileFacts]
                     ) -> tuple[dict[str, dict[str, float]], dict[str, InputWarning]]:
    """Per lane, the seconds per query of its run's sidecar (``inputs.sidecar``), read by
    the driver as ``readers.read_lane`` reads them in memory; and, by path, the warning of
    a sidecar that is not for the lane's bytes."""
    import os

    from ..inputs.sidecar import SIDECAR_SUFFIX, read_sidecar_latency

    latency: dict[str, dict[str, float]] = {}
    warnings: dict[str, InputWarning] = {}
    for name, path in plan.lanes:
        side = path + SIDECAR_SUFFIX
        if not os.path.isfile(side):
            continue
        seconds, why = read_sidecar_latency(path, facts[path].sha256)
        if seconds is not None:
            latency[name] = seconds
        elif why and not any(w.kind == "run_sidecar_not_used" for w in facts[path].warnings):
            # (a lane the partitioner read whole through ``read_lane`` has the warning already)
            warnings[path] = InputWarning("run_sidecar_not_used", 1, f"lane {name}: {why}", side)
    return latency, warnings


def _warnings(merged: Iterable[BucketWarning], plan: BucketPlan, facts: Mapping[str, FileFacts],
              sidecars: Mapping[str, InputWarning] | None = None) -> list[InputWarning]:
    """The workspace warnings in ``Workspace._build``'s order: the qrels reader's, the
    buckets' by slot, each lane's reader warnings (its sidecar's last, as ``read_lane``
    adds it) before the lane's bucket warnings.
    (The out-of-domain negatives' reader warnings are not listed, as in memory.)"""
    slotted: list[tuple[tuple[int, ...], InputWarning]] = [((0, i), w) for i, w in enumerate(facts[plan.qrels].warnings)]
    for li, (_, path) in enumerate(plan.lanes):
        lane_warnings = [*facts[path].warnings, *([sidecars[path]] if sidecars and path in sidecars else [])]
        slotted += [((3, li, 0, i), w) for i, w in enumerate(lane_warnings)]
    slotted += [(w.slot, InputWarning(w.kind, w.count, w.message, w.where)) for w in merged]
    return [w for _, w in sorted(slotted, key=lambda x: x[0])]


def evaluate_merged(merged: Merged, plan: BucketPlan, facts: Mapping[str, FileFacts],
                    gate: GateSettings | None = None) -> dict[str, Any]:
    """report.json's dict from merged buckets: ``instruments.evaluate.report_of`` over a
    :class:`QueryWorkspace` -- the report ``evaluate_report`` gives on the whole workspace."""
    from ..instruments.evaluate import report_of

    return report_of(QueryWorkspace(merged, plan, facts), gate, plan.thresholds)


# --------------------------------------------------------------------------- in process


def partition(raw_lanes: Iterable[RawLane], raw_q: RawQrels, n: int,
              raw_ood: RawQrels | None = None) -> list[tuple[dict[str, pa.Table], pa.Table, pa.Table | None]]:
    """Split lanes and qrels read whole (``readers.RawLane`` / ``RawQrels``) into ``n``
    buckets by :func:`bucket_of`: per bucket (lane name -> table, qrels table, negatives
    table or None), rows in file order (the in-process engine of the tests)."""
    import pyarrow as pa

    def split(qid: pa.Array | pa.ChunkedArray, cols: dict[str, Any]) -> list[pa.Table]:
        b = buckets_of(qid, n)
        t = pa.table({"qid": qid, **cols})
        order = np.argsort(b, kind="stable")
        cuts = np.searchsorted(b[order], np.arange(n + 1))
        return [t.take(pa.array(order[cuts[i]:cuts[i + 1]])) for i in range(n)]

    def qrels_split(r: RawQrels) -> list[pa.Table]:
        return split(r.qid, {"doc": r.doc, "grade": pa.array(np.asarray(r.grade, dtype=np.int64)),
                             "line": pa.array(np.asarray(r.line, dtype=np.int64))})

    lanes = {r.name: split(r.qid, {"doc": r.doc, "score": pa.array(np.asarray(r.score, dtype=np.float64)),
                                  "line": pa.array(np.asarray(r.line, dtype=np.int64))}) for r in raw_lanes}
    q = qrels_split(raw_q)
    o: list[pa.Table | None] = qrels_split(raw_ood) if raw_ood is not None else [None] * n
    return [({name: parts[i] for name, parts in lanes.items()}, q[i], o[i]) for i in range(n)]


def evaluate_in_process(sources: Sources, n: int, gate: GateSettings | None = None,
                        thresholds_path: str | None = None) -> dict[str, Any]:
    """``evaluate``'s report of ``sources`` computed in ``n`` buckets, one after another in
    this process: read every file whole (``workspace.read_inputs``), :func:`partition`,
    :func:`run_bucket`, :func:`merge`, :func:`evaluate_merged`."""
    from ..workspace.loaded import read_inputs

    p = plan(sources, gate, thresholds_path)
    raw_lanes, raw_q, raw_ood = read_inputs(list(sources.lanes), sources.qrels, sources.settings, sources.ood_negatives)
    raws: list[RawLane | RawQrels] = [*raw_lanes, raw_q, *([raw_ood] if raw_ood is not None else [])]
    facts = {r.path: file_facts(r) for r in raws}
    parts = partition(raw_lanes, raw_q, n, raw_ood)
    results = [run_bucket(lanes, q, p, o) for lanes, q, o in parts]
    return evaluate_merged(merge(results), p, facts, gate)
