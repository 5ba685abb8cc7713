"""What every instrument asks of a workspace: the per-query contract, declared once.

Three workspaces answer the same questions: :class:`~.loaded.Workspace` (runs and qrels
read whole), :class:`~.per_query_tables.TableWorkspace` (metric values computed
elsewhere) and :class:`~..scale.bucket.QueryWorkspace` (per-query tables merged from
query buckets). The report, ``compare``, the gate analysis and the fusion dilution are
written against these protocols, never against one of the classes, so a question the
report starts to ask is added here first and every workspace must answer it (mypy checks
each class against the protocol; ``tests/test_workspace_contract.py`` checks the members
and their signatures).

Two levels:

- :class:`PerQuery` -- per-query metric values over query codes, the compared queries
  and the strata: what ``compare``, the interval tables (``report.lanes_block``) and the
  strata tables ask. All three workspaces.
- :class:`RankedPerQuery` -- adds what only rankings give (first relevant rank, ceilings,
  the gate lane's top scores, mutual lists, corpus coverage, miss attribution): what the
  whole report (``report.build``), the gate analysis and the fusion dilution ask.
  ``Workspace`` and ``QueryWorkspace``; a per-query table holds no ranking and says so
  in its report (``per_query_tables.NOT_AVAILABLE``).

Conventions every implementation keeps: query codes index ``qids``, which are sorted as
bytes (the resampling protocol's query order); per-query arrays have one entry per query
code; ``positives`` are the queries means are taken over (at least one doc with a grade
>= ``settings.relevant``); a mean over no query is NaN.

Members are read-only properties here: a workspace may hold them as plain attributes,
and a protocol over read-only members lets each class keep its own element types (a
``dict[str, RankedLane]`` is a ``Mapping[str, object]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # types only: the protocol module loads nothing at run time
    from ..attribution.misses import Attribution
    from ..errors import InputWarning
    from ..gate.mutual import MutualNN
    from ..gate.scores import TopScores
    from ..settings import LoadSettings
    from .loaded import InputFile

T = TypeVar("T")

#: Per-query values of one lane at one level: metric key (and ``"rank"``) -> one value per query code.
Values = Mapping[str, np.ndarray]


@runtime_checkable
class PerQuery(Protocol):
    """Per-query values over query codes: the contract of every workspace."""

    @property
    def settings(self) -> LoadSettings:
        """The settings every number was computed under (metrics, relevance level, resamples, seed, confidence)."""

    @property
    def qids(self) -> np.ndarray:
        """Object array of query ids, sorted as bytes: query code -> qid."""

    @property
    def classes(self) -> np.ndarray:
        """int8 query class per query code (``ranking.judgments``: POSITIVE, NEGATIVE, PARTIAL, ...)."""

    @property
    def lanes(self) -> Mapping[str, Any]:
        """Every lane by name: input lanes first (in ``--lane`` order), then derived ones."""

    @property
    def input_lanes(self) -> Sequence[str]:
        """The names of the lanes read from inputs, in the order given."""

    @property
    def lane_origin(self) -> Mapping[str, str]:
        """Lane -> ``"input"``, ``"fused"`` or ``"variant"``."""

    @property
    def inputs(self) -> Sequence[InputFile]:
        """One record per file read (role, path, sha256, rows), in the report's order."""

    @property
    def warnings(self) -> Sequence[InputWarning]:
        """What was noticed while reading, in the report's order."""

    @property
    def strata(self) -> Mapping[str, np.ndarray]:
        """Stratification name -> label per query code (``loaded.NONE_LABEL`` where unlisted)."""

    @property
    def synthetic(self) -> bool:
        """The inputs are rankscope's own demo data (the report says so)."""

    @property
    def n_queries(self) -> int:
        """The number of query codes."""

    @property
    def positives(self) -> np.ndarray:
        """int32 codes of the queries means are taken over, ascending."""

    @property
    def negatives(self) -> np.ndarray:
        """int32 codes of the judged queries with no positive grade (in-domain negatives)."""

    @property
    def qid_index(self) -> Mapping[str, int]:
        """qid -> query code."""

    def levels(self) -> tuple[str, ...]:
        """The levels values exist at: ``("doc",)`` or ``("doc", "group")``."""
        ...

    def missing_level(self, level: str) -> str:
        """Why ``level`` is not one of :meth:`levels`, in words for an error."""
        ...

    def metric_key(self, name: str) -> str:
        """The key of a metric a person named (what ``compare --metric`` tests)."""
        ...

    def metric_set(self, keys: Iterable[str]) -> tuple[Any, ...]:
        """The metrics :meth:`per_query` computes for ``keys`` besides the workspace's own."""
        ...

    def per_query(self, lane: str, level: str = "doc", metrics: tuple[Any, ...] | None = None) -> Values:
        """``{metric key: float64[n_queries]}`` of ``lane`` at ``level`` (``metrics``: the settings' by default)."""
        ...

    def means_of(self, per_query: Values, metrics: Iterable[str] | None = None,
                 queries: np.ndarray | None = None) -> dict[str, float]:
        """``{key: arithmetic mean over queries}`` (the positives by default); NaN over no query."""
        ...

    def mean(self, lane: str, level: str, metric: str, queries: np.ndarray | None = None) -> float:
        """:meth:`means_of` of one metric of one lane."""
        ...

    def derived(self, kind: str, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """``compute()``, computed once per workspace for ``(kind, key)`` and kept."""
        ...

    def in_display_order(self, codes: Any) -> np.ndarray:
        """Query codes in the order a person reads their qids (numeric when every qid is an integer)."""
        ...


@runtime_checkable
class RankedPerQuery(PerQuery, Protocol):
    """Per-query values of rankings: what the whole report, the gate and the fusion dilution ask."""

    @property
    def ood_negatives(self) -> np.ndarray | None:
        """int32 codes of the out-of-domain negatives, None when none were loaded."""

    @property
    def group_of(self) -> np.ndarray | None:
        """Doc code -> group code (``--group-sep``), None without groups or without rows."""

    def first_relevant_rank(self, lane: str, level: str = "doc") -> np.ndarray:
        """int32 per query code: rank of the first doc with a grade >= relevant, 0 for a miss."""
        ...

    def list_lengths(self, lane: str, level: str = "doc") -> np.ndarray:
        """int64 hits per query code in the lane at ``level`` (0 where the lane lacks the query)."""
        ...

    def relevant_count(self, level: str = "doc", rel: int | None = None) -> np.ndarray:
        """float64 R per query code: judged units at ``level`` with a grade >= ``rel`` (``relevant`` when None)."""
        ...

    def ceilings(self, level: str = "doc") -> dict[str, np.ndarray]:
        """Per metric key, the best value any ranking of the judged docs reaches, per query code."""
        ...

    def present(self, lane: str) -> np.ndarray:
        """Bool per query code: the lane lists the query."""
        ...

    def top_relevant(self, lane: str) -> np.ndarray:
        """Bool per query code: the lane's rank-1 doc has a grade >= relevant."""
        ...

    def top_scores(self, lane: str) -> TopScores:
        """The lane's per-query top score, runner-up, margin and top doc (``gate.top_scores``)."""
        ...

    def mutual(self, lane: str, among: np.ndarray) -> MutualNN:
        """The mutual-nearest-neighbour lists of the lane over the queries ``among``."""
        ...

    def coverage(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Per query code (indexed, relevant pairs, pairs whose doc is not in the corpus); None without a corpus."""
        ...

    def attribution(self, level: str = "doc") -> Attribution:
        """Miss attribution of the input lanes at ``level``."""
        ...
