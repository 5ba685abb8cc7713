"""The workspace: loaded inputs, encoded once, and everything derived from them, cached.

The CLI and every dashboard screen ask one Workspace; nothing is computed twice.
Query ids become integer codes into a vocabulary sorted as bytes, so "queries
sorted by qid as bytes" (the resampling protocol) is "query code order". Doc ids
become codes into one shared dictionary ordered by (length, hash) — no string sort of
millions of ids; the trec_eval tie rule looks up the ids of tied rows only, or uses
``doc_order`` (byte-order rank per doc code) where many ties are expected (fusion).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, Union, cast, overload

import numpy as np
from numpy.typing import NDArray

from .. import measures as M
from ..errors import InputError, InputWarning
from ..inputs.files import sha256_of
from ..inputs.irds import Texts
from ..inputs.readers import RawLane, RawQrels, read_qrels
from ..inputs.tables import NONE_LABEL, read_corpus, read_strata, read_text_files, stratification_name
from ..measures.coverage import LaneCoverage, lane_coverage
from ..measures.ties import LaneTies, lane_ties
from ..parallel import in_background, started
from ..ranking import judgments as J
from ..ranking.encoding import DocEncoding, LazyDictionary
from ..ranking.encoding import encode_docs as _encode_docs  # noqa: F401
from ..ranking.encoding import encode_sorted_runs as _encode_sorted_runs
from ..ranking.ranks import RankedLane, condense, group_codes, rank_lane
from ..settings import LoadSettings
from .base import WorkspaceBase

if TYPE_CHECKING:
    import pyarrow as pa

    from ..attribution.misses import Attribution
    from ..gate.mutual import MutualNN
    from ..gate.scores import TopScores
    from ..inputs.rows import Lines

    #: A text-file option (``queries``, ``docs``): None, one path or a sequence of paths.
    TextPaths = Union[str, Sequence[str], None]

T = TypeVar("T")
LEVELS = ("doc", "group")


@dataclass
class InputFile:
    role: str
    path: str
    sha256: str
    rows: int
    queries: int | None = None
    format: str | None = None  # the format a lane or qrels file was read as (formats.RUN_FORMATS)
    columns: dict[str, str] | None = None  # a table's columns read, by role (kernel/inputs/columns.py)
    self_hits_removed: int | None = None  # hits dropped by ignore_self (None: the setting is off)
    dataset: dict[str, str] | None = None  # read by ir_datasets id: the id, ir_datasets' version (inputs.irds)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "sha256": self.sha256, "rows": self.rows}
        if self.queries is not None:
            d["queries"] = self.queries
        if self.format:
            d["format"] = self.format
        if self.columns:
            d["columns"] = dict(self.columns)
        if self.self_hits_removed is not None:
            d["self_hits_removed"] = self.self_hits_removed
        if self.dataset:
            d["dataset"] = dict(self.dataset)
        return d


def _lane_duplicate(enc: DocEncoding, i: int, qc: NDArray[np.int32], n_queries: int,
                    starts: NDArray[np.int64] | None = None) -> tuple[int, int] | None | Literal[False]:
    """First (first, second) rows of lane column ``i`` holding the same doc twice in one
    query, None if there is none, or False when this check cannot decide (the lane
    does not list each query as one block) and the general one must run. ``starts``:
    the rows where a run of equal ``qc`` begins (0 first), when known."""
    if enc.pairs is None or qc.size < 2:
        return False if enc.pairs is None else None
    if starts is None:
        starts = np.r_[0, np.flatnonzero(qc[1:] != qc[:-1]) + 1]
    if np.bincount(qc[starts], minlength=n_queries).max() > 1:
        return False
    a, b = enc.bounds[i]
    r1, r2 = enc.pairs  # same doc, r1 < r2, no row between them holds it
    if a == 0:  # r1 < r2 < b: both in the column
        m = r2 < b
    else:
        m = (r2 >= a) & (r2 < b) & (r1 >= a)
    if not m.any():
        return None
    if not m.all():
        r1, r2 = r1[m], r2[m]
    if a:
        r1, r2 = r1 - a, r2 - a
    hit = qc[r1] == qc[r2]  # the rows between them are the same query's: one block
    if not hit.any():
        return None
    j = int(np.argmin(np.where(hit, r2, np.iinfo(np.int64).max)))
    return int(r1[j]), int(r2[j])


_SIDE_BY_SIDE_ROWS = 1 << 18  # from this many lane rows the duplicate check runs beside the ordering


def _duplicate_error(dup: tuple[int, int], doc: str, qids: NDArray[np.object_], qc: NDArray[np.int32],
                     r: RawLane) -> InputError:
    a, b = dup
    return InputError(f"doc {doc!r} appears twice in query {qids[qc[b]]!r} (first at line {int(r.line[a])})", r.path,
                      int(r.line[b]))


def _first_duplicate(keys: NDArray[np.int64]) -> tuple[int, int] | None:
    """Indices (first, second) of the first repeated key in file order, or None."""
    if keys.size < 2:
        return None
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1])
    if dup.size == 0:
        return None
    seconds = order[dup + 1]
    i = int(np.argmin(seconds))
    return int(order[dup[i]]), int(seconds[i])


@dataclass(frozen=True)
class Sources:
    """Where a workspace was loaded from: the files and settings of :func:`load`.

    Recorded on the workspace, so another split (a dev qrels file) is loaded exactly
    like it: ``load(replace(ws.sources, qrels=dev))``.
    """

    lanes: tuple[tuple[str | None, str], ...]  # ((name or None, path), ...) in --lane order
    qrels: str
    settings: LoadSettings = LoadSettings()
    strata: tuple[str, ...] = ()
    corpus: str | None = None
    queries: tuple[str, ...] = ()  # qid<TAB>text files, merged in order
    docs: tuple[str, ...] = ()  # docid<TAB>text files, merged in order
    ood_negatives: str | None = None


def _paths(p: TextPaths) -> tuple[str, ...]:
    """A text-file option as a tuple of paths: None, one path or a sequence of paths."""
    if p is None:
        return ()
    if isinstance(p, (str, bytes)) or hasattr(p, "__fspath__"):
        return (cast(str, p),)  # one path (a bytes or path-like one is kept as given: it opens the same)
    return tuple(p)


class _NamedInput(Protocol):
    """A lane as :func:`check_lane_names` reads it: its name and where it came from."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...


def check_lane_names(raw_lanes: Sequence[_NamedInput], how: str = "name lanes with NAME=PATH") -> None:
    """Lane names are unique and not a fused lane's (``rrf``, ``convex``); ``how`` says how to
    name them (the command line's NAME=PATH, the API's {name: run})."""
    names = [r.name for r in raw_lanes]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise InputError(f"duplicate lane name {n!r} ({how})", raw_lanes[i].path)
    for reserved in ("rrf", "convex"):
        if reserved in names:
            raise InputError(f"lane name {reserved!r} is reserved for a fused lane", raw_lanes[names.index(reserved)].path)


def check_read_once(roles: Iterable[tuple[str, str | None]]) -> None:
    """Each input file is read once: a path given twice, in the same or another role
    (``(role, path)`` pairs; a None path is skipped), is an error naming both roles."""
    import os

    seen: dict[str, str] = {}
    for role, p in roles:
        if p is None:
            continue
        real = os.path.realpath(p)
        if real in seen:
            raise InputError(f"file given twice (as {seen[real]} and as {role})", p)
        seen[real] = role


def read_inputs(lanes: Sequence[tuple[str | None, str]], qrels: str, settings: LoadSettings,
                ood_negatives: str | None = None) -> tuple[list[RawLane], RawQrels, RawQrels | None]:
    """Read the lane, qrels and out-of-domain negatives files (each file once: a path given
    twice is an error) as ``Workspace.load`` does before encoding them."""
    if not lanes:
        raise InputError("at least one --lane is needed", "--lane")
    from ..inputs.formats import check_options_used, shard_paths
    from ..inputs.readers import read_lanes

    shards = [shard_paths(p) for _, p in lanes]
    check_read_once([("lane", p) for ps in shards for p in ps] + [("qrels", qrels), ("ood negatives", ood_negatives)])
    raw_lanes = read_lanes(lanes, shards, settings.inputs)
    check_lane_names(raw_lanes)
    raw_q = read_qrels(qrels, settings.inputs)
    raw_ood = read_qrels(ood_negatives, settings.inputs) if ood_negatives else None
    check_options_used(settings.inputs, raw_lanes, [raw_q] + ([raw_ood] if raw_ood else []))
    return raw_lanes, raw_q, raw_ood


def load(sources: Sources) -> "Workspace":
    """The workspace over ``sources`` (what every command and the dashboard load)."""
    return Workspace.load(list(sources.lanes), sources.qrels, sources.settings, list(sources.strata), sources.corpus,
                          sources.queries, sources.docs, sources.ood_negatives)


@dataclass
class Loaded:
    """The inputs of a workspace, read and encoded once: what every derived number reads.

    Held by a :class:`Workspace` (``ws.loaded``) and shared by its snapshots and its
    copies under other settings; nothing here depends on a setting that
    :meth:`Workspace.with_settings` may change.
    """

    qids: NDArray[np.object_]  # object array of qid strings, sorted as bytes
    doc_ids: pa.Array | LazyDictionary  # pyarrow string array, or a LazyDictionary of one: doc code -> doc id (see ``Workspace.doc_ids``)
    judgments: J.Judgments
    classes: NDArray[np.int8]  # int8 query class per qid code
    inputs: list[InputFile]
    warnings: list[InputWarning]
    strata: dict[str, NDArray[np.object_]] = field(default_factory=dict)  # name -> label per qid code
    group_of: NDArray[np.int64] | None = None  # doc code -> group code
    groups: NDArray[np.object_] | None = None  # group vocabulary
    corpus_mask: NDArray[np.bool_] | None = None  # doc code -> in corpus
    ood_judgments: J.Judgments | None = None
    ood_negatives: NDArray[np.int32] | None = None  # qid codes of out-of-domain negatives
    query_text: dict[str, str] = field(default_factory=dict)
    doc_text: dict[str, str] = field(default_factory=dict)
    synthetic: bool = False  # the inputs are rankscope's own demo (kernel/inputs/provenance.py)
    showcase: dict[str, str] = field(default_factory=dict)  # demo only: lesson -> qid, from the demo's marker file
    sources: Sources | None = None  # set by ``load``; None for a workspace built from raw inputs
    latency: dict[str, dict[str, float]] = field(default_factory=dict)  # input lane -> qid -> seconds (inputs.retrieve)


class _FromLoaded(Generic[T]):
    """A workspace attribute that is its :class:`Loaded` record's (``ws.qids`` is
    ``ws.loaded.qids``), so callers keep reading and setting it on the workspace."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name.lstrip("_")  # ``_doc_ids`` is ``Loaded.doc_ids``

    @overload
    def __get__(self, ws: None, owner: type) -> _FromLoaded[T]: ...

    @overload
    def __get__(self, ws: Workspace, owner: type) -> T: ...

    def __get__(self, ws: Workspace | None, owner: type) -> T | _FromLoaded[T]:
        if ws is None:
            return self
        return cast(T, getattr(ws.loaded, self.name))

    def __set__(self, ws: Workspace, value: T) -> None:
        setattr(ws.loaded, self.name, value)


@dataclass
class Workspace(WorkspaceBase):
    """Loaded inputs (:class:`Loaded`) and what is derived from them.

    Derived results (hits, per-query metrics, ceilings, attribution, the doc tie key, a
    gate analysis, ...) are computed on first use and kept in a cache only this class
    reads or writes, each behind a named method. Settings never change on a workspace:
    :meth:`with_settings` makes a new one. Lanes are only added (derived lanes, by the
    pipeline), never replaced; exploratory lanes (RRF at another k, a convex lane with
    other weights) are never added: :meth:`metrics_of` scores a lane without keeping it.
    """

    settings: LoadSettings
    loaded: Loaded
    lanes: dict[str, RankedLane]  # every lane: input lanes first (in --lane order), then derived
    input_lanes: list[str]
    lane_origin: dict[str, str] = field(default_factory=dict)  # lane -> "input" | "fused" | "variant"
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    qids = _FromLoaded["NDArray[np.object_]"]()
    _doc_ids = _FromLoaded["pa.Array | LazyDictionary"]()
    judgments = _FromLoaded[J.Judgments]()
    classes = _FromLoaded["NDArray[np.int8]"]()
    inputs = _FromLoaded[list[InputFile]]()
    warnings = _FromLoaded[list[InputWarning]]()
    strata = _FromLoaded["dict[str, NDArray[np.object_]]"]()
    group_of = _FromLoaded["NDArray[np.int64] | None"]()
    groups = _FromLoaded["NDArray[np.object_] | None"]()
    corpus_mask = _FromLoaded["NDArray[np.bool_] | None"]()
    ood_judgments = _FromLoaded[J.Judgments | None]()
    ood_negatives = _FromLoaded["NDArray[np.int32] | None"]()
    query_text = _FromLoaded[dict[str, str]]()
    doc_text = _FromLoaded[dict[str, str]]()
    synthetic = _FromLoaded[bool]()
    showcase = _FromLoaded[dict[str, str]]()
    sources = _FromLoaded[Sources | None]()
    latency = _FromLoaded[dict[str, dict[str, float]]]()

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(
        cls,
        lanes: list[tuple[str | None, str]],
        qrels: str,
        settings: LoadSettings = LoadSettings(),
        strata: Sequence[str] = (),
        corpus: str | None = None,
        queries: TextPaths = (),
        docs: TextPaths = (),
        ood_negatives: str | None = None,
    ) -> "Workspace":
        """``queries`` and ``docs``: a path or a sequence of paths (merged in order)."""
        raw_lanes, raw_q, raw_ood = read_inputs(lanes, qrels, settings, ood_negatives)
        ws = cls.from_raw(raw_lanes, raw_q, settings, strata, corpus, queries, docs, raw_ood, release=True)
        from ..inputs.provenance import provenance

        prov = provenance(ws.inputs)
        ws.synthetic, ws.showcase = prov.synthetic, prov.showcase
        ws.sources = Sources(tuple((n, p) for n, p in lanes), qrels, settings, tuple(strata), corpus, _paths(queries),
                             _paths(docs), ood_negatives)
        return ws

    @classmethod
    def from_raw(
        cls,
        raw_lanes: list[RawLane],
        raw_q: RawQrels,
        settings: LoadSettings = LoadSettings(),
        strata: Sequence[str] = (),
        corpus: str | None = None,
        queries: TextPaths = (),
        docs: TextPaths = (),
        raw_ood: RawQrels | None = None,
        *,
        release: bool = False,
    ) -> "Workspace":
        """Encode, order and judge raw inputs (a raw input without a digest that is not a file
        is fingerprinted by its content: ``columns.table_digest``). With ``release`` (``load`` owns its raw
        lanes) each lane's string columns are dropped once encoded, so the largest
        inputs are not held through the rest of the work. Input fingerprints not yet
        taken are hashed on a background thread meanwhile."""
        import os

        from ..inputs.columns import table_digest

        # an input that is not a file (built in memory) is fingerprinted by its content
        raws: list[RawLane | RawQrels] = [*raw_lanes, raw_q, *([raw_ood] if raw_ood is not None else [])]
        for r in raws:
            if r.digest is None and not os.path.isfile(r.path):
                r.digest = table_digest(r.qid, r.doc, np.asarray(r.score if isinstance(r, RawLane) else r.grade))
        digests = [r.digest for r in raw_lanes if r.digest is not None and r.digest.pending]
        with in_background([d.hexdigest for d in digests]):
            return cls._build(raw_lanes, raw_q, settings, strata, corpus, queries, docs, raw_ood, release)

    @classmethod
    def _build(cls, raw_lanes: list[RawLane], raw_q: RawQrels, settings: LoadSettings, strata: Sequence[str],
               corpus: str | None, queries: TextPaths, docs: TextPaths, raw_ood: RawQrels | None,
               release: bool) -> "Workspace":
        warnings: list[InputWarning] = []
        qcols = [r.qid for r in raw_lanes] + [raw_q.qid] + ([raw_ood.qid] if raw_ood else [])
        dcols = [r.doc for r in raw_lanes] + [raw_q.doc] + ([raw_ood.doc] if raw_ood else [])
        lane_rows = [len(r.score) for r in raw_lanes]
        qids, qcodes, qstarts = _encode_sorted_runs(qcols)
        del qcols
        if release:
            for r in raw_lanes:
                r.qid = None
        if release:  # dcols holds the lanes' doc columns now: encode_docs may free them early
            for r in raw_lanes:
                r.doc = None
        denc = _encode_docs(dcols, release=release)
        del dcols
        dcodes = denc.codes
        nq, nd = len(qids), denc.n_codes
        # The dictionary strings are rebuilt from the words only when asked for (no
        # evaluation reads a doc id); the tie rule reads the ids' words (same byte order).
        lazy = LazyDictionary(denc.build, nd)
        dictionary = lazy.get
        tie_ids = denc.words if denc.words is not None else dictionary()

        judgments, dup_warn = _judgments(raw_q, qcodes[len(raw_lanes)], dcodes[len(raw_lanes)], nd)
        warnings += raw_q.warnings + dup_warn
        classes = J.query_classes(judgments, nq, settings.relevant)
        ood_j, ood_neg = None, None
        if raw_ood is not None:
            ood_j, w = _judgments(raw_ood, qcodes[-1], dcodes[-1], nd)
            warnings += w
            ood_cls = J.query_classes(ood_j, nq, settings.relevant)
            bad = (ood_cls != J.NOT_IN_QRELS) & (ood_cls != J.NEGATIVE)
            if bad.any():
                q = int(np.flatnonzero(bad)[0])
                line = int(raw_ood.line[np.flatnonzero(qcodes[-1] == q)[0]])
                raise InputError(f"out-of-domain negatives must have no positive grade (query {qids[q]!r})", raw_ood.path, line)
            overlap = (ood_cls == J.NEGATIVE) & (classes != J.NOT_IN_QRELS)
            if overlap.any():
                q = int(np.flatnonzero(overlap)[0])
                raise InputError(f"query {qids[q]!r} is in both the qrels and the out-of-domain negatives", raw_ood.path)
            ood_neg = np.flatnonzero(ood_cls == J.NEGATIVE).astype(np.int32)

        ranked: dict[str, RankedLane] = {}
        inputs: list[InputFile] = []
        in_qrels = classes != J.NOT_IN_QRELS
        if ood_neg is not None:
            in_qrels = in_qrels.copy()
            in_qrels[ood_neg] = True
        # ignore_self: the doc code whose id equals each query id (-1: none), read before any lane is ordered
        self_doc = _self_docs(qids, lazy.get()) if settings.ignore_self else None
        removed: dict[str, int] = {}
        for i, (r, qc, dc, rows, st) in enumerate(zip(raw_lanes, qcodes, dcodes, lane_rows, qstarts)):
            warnings += r.warnings
            qc = np.asarray(qc, dtype=np.int32)

            def duplicate(i: int = i, qc: NDArray[np.int32] = qc, dc: NDArray[np.int64] = dc,
                          st: NDArray[np.int64] | None = st) -> tuple[int, int] | None:
                dup = _lane_duplicate(denc, i, qc, nq, st)
                if dup is False:
                    dup = _first_duplicate(qc * np.int64(nd) + dc)
                return dup

            # The duplicate check runs beside the ordering when it only reads the rows' query
            # codes and the factorization's pairs: the tie fix may reorder the doc codes
            # (this load's own) in place meanwhile, so a duplicate's id is read from the
            # words of its row; a duplicate is an error before the lane is used.
            beside = (denc.pairs is not None and denc.words is not None and rows >= _SIDE_BY_SIDE_ROWS
                      and self_doc is None)
            with started(duplicate, background=beside) as dup_of:
                if not beside:
                    dup = dup_of()
                    if dup is not None:
                        raise _duplicate_error(dup, lazy.get()[int(dc[dup[1]])].as_py(), qids, qc, r)
                if self_doc is not None:  # the lane's rows without the hits of a query's own id
                    keep = np.asarray(dc) != self_doc[qc]
                    removed[r.name] = int(keep.size - np.count_nonzero(keep))
                    lane = rank_lane(r.name, qc[keep], np.asarray(dc)[keep], np.asarray(r.score)[keep], nq,
                                     settings.depth, tie_ids)
                else:
                    lane = rank_lane(r.name, qc, dc, r.score, nq, settings.depth, tie_ids, starts=st,
                                     overwrite=beside)
                dup = dup_of()
            if dup is not None:
                row = np.array([denc.bounds[i][0] + dup[1]], dtype=np.int64)
                assert denc.words is not None  # a duplicate found beside the ordering: only with the words
                raise _duplicate_error(dup, denc.words.sw.strings(row)[0].as_py(), qids, qc, r)
            ranked[r.name] = lane
            present = lane.present()
            inputs.append(InputFile("lane", r.path, r.sha256(), rows, int(present.sum()), r.format or None,
                                  r.columns, removed.get(r.name)))
            if self_doc is not None and rows and removed[r.name] == rows:
                warnings.append(InputWarning("ignore_self_removed_everything", rows,
                                             f"lane {r.name}: --ignore-self removed every hit (each doc id equals "
                                             "its query id)", r.path))
            extra_q = present & ~in_qrels
            if extra_q.any():
                q, where = _first_place(qc, extra_q, r.line, r.path, r.shards)
                warnings.append(InputWarning("lane_queries_without_judgments", int(extra_q.sum()),
                                             f"lane {r.name}: queries absent from the qrels (ignored)", where))
            missing = (classes == J.POSITIVE) & ~present
            if missing.any():
                q, where = _first_place(qcodes[len(raw_lanes)], missing, raw_q.line, raw_q.path)
                warnings.append(InputWarning("positives_missing_from_lane", int(missing.sum()),
                                             f"lane {r.name}: positive queries absent from the lane "
                                             "(scored 0)", where))
        if self_doc is not None and not any(removed.values()):
            warnings.append(InputWarning("ignore_self_removed_nothing", 0, "--ignore-self removed no hit: no lane "
                                         "lists a doc whose id equals its query id", ""))
        if settings.condensed:  # after the lane checks, which read the lists as given
            ranked = {n: condense(L, judgments.grade_of(L.qid, L.doc)) for n, L in ranked.items()}
        inputs.append(InputFile("qrels", raw_q.path, raw_q.sha256(), int(len(raw_q.qid)), format=raw_q.format or None,
                                  columns=raw_q.columns, dataset=raw_q.origin))
        if raw_ood is not None:
            inputs.append(InputFile("ood_negatives", raw_ood.path, raw_ood.sha256(), int(len(raw_ood.qid)),
                                    format=raw_ood.format or None, columns=raw_ood.columns, dataset=raw_ood.origin))
        for cls_code, kind, msg in (
            (J.PARTIAL, "partial_queries", f"queries with a positive grade but none >= {settings.relevant} (left out of means and the gate)"),
            (J.UNJUDGED, "unjudged_queries", "queries whose only judgments have negative grades (ignored)"),
        ):
            c = int((classes == cls_code).sum())
            if c:
                q, where = _first_place(qcodes[len(raw_lanes)], classes == cls_code, raw_q.line, raw_q.path)
                warnings.append(InputWarning(kind, c, msg, where))
        warnings += unreached_levels(settings.metrics, top_grade(judgments), raw_q.path)

        ws = cls(settings, Loaded(qids, lazy, judgments, classes, inputs, warnings), ranked, [r.name for r in raw_lanes],
                 {r.name: "input" for r in raw_lanes})
        ws.ood_judgments, ws.ood_negatives = ood_j, ood_neg
        ws.loaded.latency = {r.name: dict(r.latency) for r in raw_lanes if r.latency}
        if settings.group_sep:
            ws.groups, ws.group_of = group_codes(ws.doc_ids, settings.group_sep)
        ws.strata, files = read_strata_labels(strata, ws.qid_index, nq)
        ws.inputs += files
        if corpus:
            ids = read_corpus(corpus)
            ws.corpus_mask = corpus_mask(ws.doc_ids, ids)
            ws.inputs.append(InputFile("corpus", corpus, sha256_of(corpus), len(ids)))
        # texts read by dataset id are recorded (the id and ir_datasets' version); text files are not
        datasets: list[Texts] = []
        if _paths(queries):
            ws.query_text = read_text_files(_paths(queries), "queries", datasets)
            ws.inputs += [InputFile("queries", t.spec, t.sha256, len(t.texts), format="irds", dataset=t.origin)
                          for t in datasets]
        if _paths(docs):
            datasets.clear()
            ws.doc_text = read_text_files(_paths(docs), "docs", datasets)
            ws.inputs += [InputFile("docs", t.spec, t.sha256, len(t.texts), format="irds", dataset=t.origin)
                          for t in datasets]
        return ws

    # ------------------------------------------------------------------ lookups

    @property
    def doc_ids(self) -> pa.Array:
        """pyarrow string array: doc code -> doc id (hash order, not byte order); a
        loaded workspace builds it on first use."""
        d = self._doc_ids
        return d.get() if isinstance(d, LazyDictionary) else d

    @property
    def docs(self) -> NDArray[np.object_]:
        """Doc ids as a numpy object array indexed by doc code (built on first use)."""
        if "docs" not in self._cache:
            self._cache["docs"] = np.asarray(self.doc_ids.to_pylist(), dtype=object)
        docs: NDArray[np.object_] = self._cache["docs"]
        return docs

    @property
    def doc_order(self) -> NDArray[np.int64]:
        """Byte-order rank of every doc code (built on first use): the tie key for fused lanes."""
        if "doc_order" not in self._cache:
            from ..ranking.ranks import byte_order

            self._cache["doc_order"] = byte_order(self.doc_ids)
        order: NDArray[np.int64] = self._cache["doc_order"]
        return order

    def doc_id(self, code: int) -> str:
        doc: str = self.doc_ids[int(code)].as_py()
        return doc

    @property
    def n_docs(self) -> int:
        return len(self._doc_ids)

    def levels(self) -> tuple[str, ...]:
        return LEVELS if self.group_of is not None else ("doc",)

    def add_lane(self, lane: RankedLane, origin: str) -> None:
        """Register a derived lane (fused or a cap/docfirst variant). A name is given once:
        snapshots share this cache, which is keyed by lane name."""
        if lane.name in self.lanes and self.lanes[lane.name] is not lane:
            raise ValueError(f"lane {lane.name!r} is already loaded")
        self.lanes[lane.name] = lane
        self.lane_origin[lane.name] = origin

    # ------------------------------------------------------------------ metrics

    def _hits_of(self, L: RankedLane, level: str) -> tuple[M.Hits, M.Ideal]:
        j = self.judgments
        if level == "doc":
            return M.doc_level(L.qid, L.doc, L.rank, j.qid, j.doc, j.grade, self.n_docs)
        if self.group_of is None:
            raise InputError("group level needs --group-sep", "--group-sep")
        assert self.groups is not None  # set with group_of
        return M.group_level(L.qid, L.doc, L.rank, j.qid, j.doc, j.grade, self.group_of, len(self.groups))

    def hits(self, lane: str, level: str) -> tuple[M.Hits, M.Ideal]:
        key = ("hits", lane, level)
        if key not in self._cache:
            self._cache[key] = self._hits_of(self.lanes[lane], level)
        hits: tuple[M.Hits, M.Ideal] = self._cache[key]
        return hits

    def per_query(self, lane: str, level: str = "doc", metrics: tuple[M.MetricKey, ...] | None = None) -> dict[str, np.ndarray]:
        """Per-query values over every query code: ``{metric key: float64[n_queries], "rank": int32[n_queries]}``."""
        metrics = tuple(metrics or self.settings.metrics)
        key = ("pq", lane, level, metrics)
        if key not in self._cache:
            hits, ideal = self.hits(lane, level)
            self._cache[key] = M.compute(hits, ideal, self.n_queries, list(metrics), self.settings.relevant, self.qids)
        values: dict[str, np.ndarray] = self._cache[key]
        return values

    def metrics_of(self, lane: RankedLane, level: str = "doc", metrics: tuple[M.MetricKey, ...] | None = None) -> dict[str, np.ndarray]:
        """:meth:`per_query` of a lane that is not in the workspace (an exploratory fused
        lane), computed the same way and not kept."""
        metrics = tuple(metrics or self.settings.metrics)
        hits, ideal = self._hits_of(lane, level)
        return M.compute(hits, ideal, self.n_queries, list(metrics), self.settings.relevant, self.qids)

    def list_lengths(self, lane: str, level: str = "doc") -> NDArray[np.int64]:
        """Hits per query code in the lane at ``level`` (after --depth; at group level every
        ranked row, a repeated group included, as it takes a rank); 0 where the lane lacks the query."""
        hits, _ = self.hits(lane, level)
        return np.bincount(hits.qid, minlength=self.n_queries).astype(np.int64)

    def ties(self, lane: str, metrics: tuple[M.MetricKey, ...] | None = None) -> LaneTies:
        """Tie exposure of a lane at doc level (``measures.ties.lane_ties``) for the
        metrics (the workspace's by default) that it covers; computed once."""
        metrics = tuple(metrics or self.settings.metrics)
        key = ("ties", lane, metrics)
        if key not in self._cache:
            self._cache[key] = lane_ties(self.lanes[lane], self.judgments, self.per_query(lane, "doc", metrics),
                                         metrics, self.settings.relevant)
        out: LaneTies = self._cache[key]
        return out

    def judgment_coverage(self, lane: str, metrics: tuple[M.MetricKey, ...] | None = None) -> LaneCoverage:
        """Holes (unjudged hits within each measure's cutoff) and the bounds with them counted
        relevant / non-relevant (``measures.coverage.lane_coverage``), at doc level, for the
        metrics (the workspace's by default); computed once."""
        metrics = tuple(metrics or self.settings.metrics)
        key = ("coverage", lane, metrics)
        if key not in self._cache:
            # the doc-level hits' grades are the lane's grades under the judgments (one join)
            self._cache[key] = lane_coverage(self.lanes[lane], self.judgments, metrics, self.n_queries,
                                             self.settings.relevant, self.per_query(lane, "doc", metrics),
                                             self.hits(lane, "doc")[0].grade)
        out: LaneCoverage = self._cache[key]
        return out

    def first_relevant_rank(self, lane: str, level: str = "doc") -> np.ndarray:
        hits, _ = self.hits(lane, level)
        return M.first_relevant_rank(hits, self.n_queries, self.settings.relevant)

    def present(self, lane: str) -> np.ndarray:
        """Bool per query code: the lane lists the query (``RankedLane.present``)."""
        return self.lanes[lane].present()

    def top_scores(self, lane: str) -> TopScores:
        """The lane's per-query top score, runner-up, top doc and top-hit relevance at doc
        level (``gate.top_scores``): what the gate and the fusion dilution read."""
        key = ("top", lane)
        if key not in self._cache:
            from ..gate import top_scores

            s = self.settings
            hits, _ = self.hits(lane, "doc")  # grades already joined for the metrics: reuse them
            self._cache[key] = top_scores(self.lanes[lane], self.judgments, s.relevant, hit_relevant=hits.grade >= s.relevant)
        top: TopScores = self._cache[key]
        return top

    def mutual(self, lane: str, among: np.ndarray) -> MutualNN:
        """The mutual-nearest-neighbour lists of the lane over the queries ``among`` (tie
        rule "count"): each query's top doc (``top_scores``) and how many of ``among``
        list that doc (``gate.doc_reach``), put together by ``gate.mutual_of_tops``."""
        from ..gate import doc_reach, mutual_of_tops

        t = self.top_scores(lane)
        docs, counts = doc_reach(self.lanes[lane], among)
        reach = np.zeros(self.n_docs, dtype=np.int64)
        reach[docs] = counts
        return mutual_of_tops(t.top_doc, t.present, among, np.where(t.present, reach[np.maximum(t.top_doc, 0)], 0))

    def top_relevant(self, lane: str) -> np.ndarray:
        """Bool per query code: the lane's rank-1 doc has a grade >= relevant (what fusion dilutes)."""
        return self.top_scores(lane).top_relevant

    def coverage(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Per query code (indexed, relevant pairs, pairs whose doc is not in the corpus) of
        the corpus (``attribution.coverage_per_query``), or None without a corpus."""
        if self.corpus_mask is None:
            return None
        if "coverage" not in self._cache:
            from ..attribution.misses import coverage_per_query

            self._cache["coverage"] = coverage_per_query(self.judgments, self.settings.relevant, self.corpus_mask,
                                                         self.n_queries)
        cov: tuple[np.ndarray, np.ndarray, np.ndarray] = self._cache["coverage"]
        return cov

    def relevant_count(self, level: str = "doc", rel: int | None = None) -> NDArray[np.float64]:
        """R per query code: judged units at ``level`` with a grade >= ``rel`` (the workspace's
        ``relevant`` when None), the recall denominator."""
        _, ideal = self.hits(self.input_lanes[0], level)
        at = self.settings.relevant if rel is None else rel
        return np.bincount(ideal.qid, weights=(ideal.grade >= at), minlength=self.n_queries).astype(np.float64)

    def ceilings(self, level: str = "doc") -> dict[str, np.ndarray]:
        key = ("ceil", level)
        if key not in self._cache:
            _, ideal = self.hits(self.input_lanes[0], level)
            self._cache[key] = M.ceilings(ideal, self.n_queries, list(self.settings.metrics), self.settings.relevant)
        ceil: dict[str, np.ndarray] = self._cache[key]
        return ceil

    def attribution(self, level: str = "doc") -> Attribution:
        """Miss attribution of the input lanes at ``level`` (``attribution.Attribution``)."""
        from ..attribution import misses as A

        key = ("attribution", level, self.settings.window, self.settings.blind)
        if key not in self._cache:
            self._cache[key] = A.compute_attribution(self, level)
        att: Attribution = self._cache[key]
        return att

    def snapshot(self) -> "Workspace":
        """The same workspace with its own lane list and the same cache: a reader (a
        dashboard screen) sees the lanes present now, while the pipeline may go on adding
        derived lanes here, and both share every computed number."""
        ws = replace(self)
        ws.lanes = dict(self.lanes)
        ws.lane_origin = dict(self.lane_origin)
        return ws

    def with_settings(self, **changes: Any) -> "Workspace":
        """A workspace over the same loaded inputs with other settings (fresh cache)."""
        fixed = {"depth", "relevant", "group_sep", "ignore_self"} & set(changes)
        if fixed:  # these shape the loaded lanes, classes and groups: reload instead
            raise ValueError(f"cannot change {', '.join(sorted(fixed))} on a loaded workspace")
        s = replace(self.settings, **changes)
        keep = {k: v for k, v in self._cache.items() if k in ("qid_index", "docs", "doc_order")}  # settings-free
        ws = replace(self, settings=s, _cache=keep)
        ws.lanes = dict(self.lanes)
        ws.lane_origin = dict(self.lane_origin)
        return ws


def top_grade(judgments: J.Judgments) -> int | None:
    """The highest grade in the judgments, None without any."""
    return int(judgments.grade.max()) if judgments.grade.size else None


def unreached_levels(metrics: Iterable[M.MetricKey], top: int | None, path: str) -> list[InputWarning]:
    """A measure's own relevance level (``rel=N``) above every grade in the qrels (``top``,
    the highest) makes it 0 on every query: said once per measure rather than left to
    read as a result. Last among the workspace warnings."""
    out: list[InputWarning] = []
    for m in metrics:
        rel = getattr(m, "rel", None)
        if rel is not None and (top is None or rel > top):
            highest = "no judgments" if top is None else f"the highest grade is {top}"
            out.append(InputWarning("relevance_level_unreached", 1,
                                    f"{m.key}: no judged doc has grade >= {rel} ({highest}); it is 0 on every query",
                                    path))
    return out


def corpus_mask(doc_ids: pa.Array, ids: Iterable[str]) -> NDArray[np.bool_]:
    """Bool per doc code (``doc_ids``: the workspace's dictionary): the doc is in ``ids``."""
    import pyarrow.compute as pc

    from ..inputs.arrow import arrow_strings, to_numpy

    return to_numpy(pc.is_in(doc_ids, value_set=arrow_strings(sorted(ids))))


def read_strata_labels(paths: Iterable[str], qid_index: Mapping[str, int],
                       n_queries: int) -> tuple[dict[str, NDArray[np.object_]], list[InputFile]]:
    """The ``--strata`` files as {stratification: label per query code} (``(none)`` for a
    query a file does not list) and their input records."""
    out: dict[str, NDArray[np.object_]] = {}
    files: list[InputFile] = []
    for path in paths:
        labels = read_strata(path)
        name = stratification_name(path)
        if name in out:
            raise InputError(f"two stratifications named {name!r}", path)
        arr = np.full(n_queries, NONE_LABEL, dtype=object)
        for q, lab in labels.items():
            c = qid_index.get(q)
            if c is not None:
                arr[c] = lab
        out[name] = arr
        files.append(InputFile("strata", path, sha256_of(path), len(labels)))
    return out, files


def _first_place(qc: NDArray[np.integer[Any]], mask: NDArray[np.bool_], lines: Lines, path: str,
                 shards: Sequence[tuple[str, int]] = ()) -> tuple[int, str]:
    """(query code, ``FILE:LINE``) of the first row of ``qc`` (query codes per file row)
    whose query is in ``mask`` (bool per query code), in file order (the shard's file,
    for a lane of several)."""
    rows = np.flatnonzero(np.asarray(mask)[np.asarray(qc)])
    if rows.size == 0:
        return int(np.flatnonzero(mask)[0]), path
    i = int(rows.min())
    if shards:
        from ..inputs.formats import shard_place

        return int(np.asarray(qc)[i]), shard_place(shards, lines, i, path)
    return int(np.asarray(qc)[i]), f"{path}:{int(lines[i])}"


def _self_docs(qids: NDArray[np.object_], doc_ids: pa.Array) -> NDArray[np.int64]:
    """Per query code, the doc code whose id is the query id, or -1 (``ignore_self``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(doc_ids, pa.ChunkedArray):
        doc_ids = doc_ids.combine_chunks()
    if len(qids) == 0:
        return np.zeros(0, dtype=np.int64)
    found = pc.index_in(pa.array(list(qids), type=doc_ids.type), value_set=doc_ids)
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _judgments(raw: RawQrels, qc: NDArray[np.int32], dc: NDArray[np.int64], n_docs: int) -> tuple[J.Judgments, list[InputWarning]]:
    """Sorted, de-duplicated judgments; conflicting duplicates are an error."""
    keys = qc * np.int64(n_docs) + dc
    order = np.argsort(keys, kind="stable")
    sk, sg = keys[order], raw.grade[order]
    same = sk[1:] == sk[:-1]
    warnings: list[InputWarning] = []
    if same.any():
        conflict = same & (sg[1:] != sg[:-1])
        if conflict.any():
            i = int(np.flatnonzero(conflict)[0])
            a, b = order[i], order[i + 1]
            first, second = sorted((int(raw.line[a]), int(raw.line[b])))
            raise InputError(f"same (qid, doc) judged twice with different grades (first at line {first})", raw.path, second)
        i = int(np.flatnonzero(same)[0])
        warnings.append(InputWarning("duplicate_qrels_lines", int(same.sum()), "identical duplicate qrels lines (kept once)",
                                     f"{raw.path}:{int(raw.line[order[i + 1]])}"))
        keep = np.r_[True, ~same]
        order = order[keep]
        sk = sk[keep]
    j = J.Judgments((sk // n_docs).astype(np.int32), (sk % n_docs).astype(np.int64), raw.grade[order].astype(np.int64), n_docs)
    return j, warnings
