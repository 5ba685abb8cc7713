"""The behaviour the three workspaces share, written once.

:class:`WorkspaceBase` holds what :class:`~.contract.PerQuery` asks that does not depend
on where the per-query values come from: the query sets from the classes, the qid index,
means, the derived-results cache and the display order. ``Workspace``,
``TableWorkspace`` and ``QueryWorkspace`` inherit it and add how they get per-query
values (:meth:`per_query`) and which levels they hold (:meth:`levels`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from .. import measures as M
from ..ranking import judgments as J

if TYPE_CHECKING:
    from ..settings import LoadSettings

T = TypeVar("T")


class WorkspaceBase(ABC):
    """Shared answers of every workspace over per-query values (see :mod:`.contract`).

    A subclass holds ``settings``, ``qids`` (sorted as bytes), ``classes`` and a cache
    dict ``_cache`` that only the workspace reads or writes; the derived results are
    kept there, each under a key its method names.
    """

    settings: LoadSettings
    qids: np.ndarray
    classes: np.ndarray
    _cache: dict[Any, Any]

    # ------------------------------------------------------------------ queries

    @property
    def n_queries(self) -> int:
        return int(self.qids.shape[0])

    @property
    def positives(self) -> np.ndarray:
        """int32 codes of the positive queries (the queries means are taken over), ascending."""
        return np.flatnonzero(self.classes == J.POSITIVE).astype(np.int32)

    @property
    def negatives(self) -> np.ndarray:
        """int32 codes of the in-domain negatives (judged, no positive grade), ascending."""
        return np.flatnonzero(self.classes == J.NEGATIVE).astype(np.int32)

    @property
    def qid_index(self) -> dict[str, int]:
        """qid -> query code (built on first use; settings-free, so kept by ``with_settings``)."""
        if "qid_index" not in self._cache:
            self._cache["qid_index"] = {q: i for i, q in enumerate(self.qids.tolist())}
        return cast("dict[str, int]", self._cache["qid_index"])

    def in_display_order(self, codes: Any) -> np.ndarray:
        """Query codes reordered as a person reads their qids (``tables.qid_display_order``:
        numerically when every one of these qids is an integer, else as bytes, as
        trec_eval lists them). Code order itself stays byte order (the resampling protocol)."""
        from ..inputs.tables import qid_display_order

        codes = np.asarray(codes, dtype=np.int64)
        order: np.ndarray = codes[np.asarray(qid_display_order(self.qids[codes].tolist()), dtype=np.int64)]
        return order

    # ------------------------------------------------------------------ levels and metrics

    @abstractmethod
    def levels(self) -> tuple[str, ...]:
        """The levels per-query values exist at, ``"doc"`` first."""

    def missing_level(self, level: str) -> str:
        """Why ``level`` is not one of :meth:`levels` (the group level is built by --group-sep)."""
        return f"level {level!r} needs --group-sep"

    def metric_key(self, name: str) -> str:
        """The key of a metric named by a user (``parse_metrics``' spelling): what a
        comparison tests. A per-query-table workspace reads the tables' names too."""
        return M.parse_metrics(name)[0].key

    def metric_set(self, keys: Iterable[str]) -> tuple[Any, ...]:
        """The metrics to compute for ``keys`` besides the workspace's own (for ``per_query``)."""
        return tuple(dict.fromkeys(list(self.settings.metrics) + M.parse_metrics(",".join(keys))))

    @abstractmethod
    def per_query(self, lane: str, level: str = "doc", metrics: tuple[Any, ...] | None = None) -> Mapping[str, np.ndarray]:
        """``{metric key: float64[n_queries]}`` of ``lane`` at ``level``: computed, read or merged."""

    # ------------------------------------------------------------------ means

    def means_of(self, per_query: Mapping[str, np.ndarray], metrics: Iterable[str] | None = None,
                 queries: np.ndarray | None = None) -> dict[str, float]:
        """``{metric key: mean over the queries}`` (positives by default) of per-query values
        (``metrics``: keys, the workspace's by default); NaN over no query. The one
        definition of a lane's mean (:meth:`mean` uses it)."""
        q = self.positives if queries is None else queries
        out = {}
        for m in (metrics or [k.key for k in self.settings.metrics]):
            v = per_query[m][q]
            out[m] = float(v.mean()) if v.size else float("nan")
        return out

    def mean(self, lane: str, level: str, metric: str, queries: np.ndarray | None = None) -> float:
        """Mean of ``metric`` (a key of the workspace's metrics) over the queries (positives by default)."""
        return self.means_of(self.per_query(lane, level), (metric,), queries)[metric]

    # ------------------------------------------------------------------ derived results

    def derived(self, kind: str, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """A derived result named ``kind`` (e.g. "gate") for ``key``, computed once by
        ``compute()`` -- for analyses whose module owns the computation."""
        k = (kind, "\0derived") + tuple(key)  # k[1] is never a lane name: add_lane leaves it alone
        if k not in self._cache:
            self._cache[k] = compute()
        return cast(T, self._cache[k])
