"""Qrels and texts by ir_datasets id: ``irds:DATASET`` wherever a qrels path or a
``--queries`` / ``--docs`` path is read.

ir_datasets (the optional extra ``rankscope[irds]``) is asked for what its local cache
holds, never for a download: ir_datasets 0.6 has no offline switch, so while a dataset
is read its download steps are replaced by a refusal (:func:`_offline`) -- a
``Download`` whose cached file is absent, a direct HTTP stream and a Google Cloud
stream stop before any byte is fetched, and the reader says how to fetch the data
(``python -m ir_datasets export DATASET qrels``) instead. A dataset ir_datasets does
not know, one without qrels (or queries, docs), ir_datasets missing, data that must be
obtained by hand (a licence) and any failure inside ir_datasets each give one
:class:`InputError` naming ``irds:DATASET``.

Qrels become a :class:`rows.RawQrels` through ``columns.qrels_table`` -- the reader of a
table given in memory -- so their grades and ids are checked exactly as a file's are;
"line" N in a message is the dataset's N-th qrel in ir_datasets' order. The digest is
the content digest of that table (``columns.table_digest``). ``origin`` records the
dataset id, ir_datasets' version and, where ir_datasets documents the dataset, its
name and documentation page; ir_datasets gives datasets no version of their own (a
revised dataset gets a new id, e.g. ``msmarco-passage-v2``), so the id is the version.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from .rows import RawQrels

#: What marks a dataset id where a path is expected.
PREFIX = "irds:"

#: The install hint when ir_datasets cannot be imported.
INSTALL_HINT = "pip install 'rankscope[irds]' (or pip install ir_datasets)"

# ir_datasets' download classes are patched for the duration of one read; two reads at
# once (the dashboard loads in a thread) must not restore each other's patches early.
_LOCK = threading.RLock()


def is_dataset(spec: object) -> bool:
    """Whether ``spec`` names a dataset (``irds:DATASET``) rather than a file."""
    return isinstance(spec, str) and spec.startswith(PREFIX)


@dataclass(frozen=True)
class Texts:
    """Texts of one dataset: id -> text, in ir_datasets' order, with where they came from."""

    spec: str  # irds:DATASET
    texts: dict[str, str]
    origin: dict[str, str]
    sha256: str


class _WouldDownload(BaseException):
    """Raised inside ir_datasets where it would fetch data. A BaseException, so that
    ir_datasets' ``except Exception`` around each mirror (which logs and tries the
    next) lets it through unchanged."""


def _dataset_id(spec: str) -> str:
    ds = spec[len(PREFIX):]
    if not ds.strip():
        raise InputError("no dataset id after 'irds:' (give irds:DATASET, e.g. irds:cranfield)", spec)
    return ds


def _module(spec: str) -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise InputError(f"reading a dataset by id needs ir_datasets, which is not installed: {INSTALL_HINT}",
                         spec) from None
    return ir_datasets


def _fetch_hint(ds: str, what: str) -> str:
    return f"fetch it first with: python -m ir_datasets export {ds} {what} > /dev/null"


@contextlib.contextmanager
def _offline(irds: Any, spec: str) -> Iterator[None]:
    """ir_datasets with every download step refused (:class:`_WouldDownload`) and its
    INFO lines (progress, data-use notices) held back; restored on exit."""
    try:
        dl = irds.util.download
        local = dl.LocalDownload
        log = irds.log.easy().logger()
        orig_path, orig_stream = dl.Download.path, dl.Download.stream
    except AttributeError:
        raise InputError(f"ir_datasets {getattr(irds, '__version__', '')} is not one rankscope can keep from "
                         "downloading; install ir_datasets 0.6", spec) from None
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        # a class's own entry (the plain function), so that restoring it leaves the class as it was
        saved.append((owner, name, vars(owner)[name]))
        setattr(owner, name, value)

    def refuse(*_: object, **__: object) -> Any:
        raise _WouldDownload()

    def only_local(self: Any) -> bool:
        return all(isinstance(m, local) for m in self.mirrors)

    def path(self: Any, force: bool = True) -> Any:
        cached = (self._path is not None or not force or
                  (self._cache_path is not None and os.path.exists(self._cache_path)
                   and self._cache_path != os.devnull))
        if not cached and not only_local(self):
            raise _WouldDownload()
        return orig_path(self, force)

    def stream(self: Any) -> Any:
        if self._stream and not only_local(self):
            raise _WouldDownload()
        return orig_stream(self)

    import logging

    # ir_datasets sets its logger to INFO when first used: made above first, so the level set below holds
    level = log.level
    with _LOCK:
        try:
            try:
                patch(dl.Download, "path", path)
                patch(dl.Download, "stream", stream)
                for cls_name in ("RequestsDownload", "GoogleDriveDownload", "GoogleCloudBucketStream"):
                    cls = getattr(dl, cls_name, None)
                    if cls is not None:
                        patch(cls, "stream", refuse)
                patch(irds.lazy_libs, "requests", refuse)  # any other HTTP ir_datasets would make
            except (AttributeError, KeyError):  # another layout than ir_datasets 0.6's: refuse rather than risk a download
                raise InputError(f"ir_datasets {getattr(irds, '__version__', '')} is not one rankscope can keep "
                                 "from downloading; install ir_datasets 0.6", spec) from None
            log.setLevel(logging.WARNING)
            yield
        finally:
            log.setLevel(level)
            for owner, name, value in reversed(saved):
                setattr(owner, name, value)


def _origin(irds: Any, ds: str, dataset: Any) -> dict[str, str]:
    out = {"id": ds, "ir_datasets": str(getattr(irds, "__version__", "unknown"))}
    try:
        doc = dataset.documentation() if hasattr(dataset, "documentation") else {}
    except Exception:  # noqa: BLE001 - documentation is optional; a dataset without it is still read
        doc = {}
    if isinstance(doc, dict) and doc:
        if isinstance(doc.get("pretty_name"), str):
            out["name"] = doc["pretty_name"]
        # ir_datasets documents each dataset on the page of its top-level id, anchored by the full id
        out["documentation"] = f"https://ir-datasets.com/{ds.split('/')[0]}.html#{ds}"
    return out


def _read(spec: str, what: str, take: Any) -> tuple[Any, dict[str, str]]:
    """``take(dataset)`` inside :func:`_offline`, every failure an InputError naming ``spec``."""
    ds = _dataset_id(spec)
    irds = _module(spec)
    with _offline(irds, spec):
        try:
            dataset = irds.load(ds)
        except KeyError:
            raise InputError(f"ir_datasets {irds.__version__} knows no dataset {ds!r} "
                             "(python -m ir_datasets list names them)", spec) from None
        except _WouldDownload:
            raise InputError(f"dataset {ds!r} is not in the local ir_datasets cache and rankscope does not "
                             f"download; {_fetch_hint(ds, what)}", spec) from None
        if not dataset.has(what):
            has = [k for k in ("docs", "queries", "qrels") if dataset.has(k)]
            raise InputError(f"dataset {ds!r} has no {what} (it provides {', '.join(has) or 'none of docs, queries, qrels'}); "
                             "give the id of one of its splits (python -m ir_datasets list shows them)", spec)
        try:
            return take(dataset), _origin(irds, ds, dataset)
        except _WouldDownload:
            raise InputError(f"the {what} of dataset {ds!r} are not in the local ir_datasets cache and rankscope "
                             f"does not download; {_fetch_hint(ds, what)}", spec) from None
        except FileNotFoundError as exc:  # a file ir_datasets cannot download (licensed data) is missing
            raise InputError(f"the {what} of dataset {ds!r} need a file ir_datasets does not download "
                             f"({exc.filename or exc}); see https://ir-datasets.com for how to obtain it", spec) from None
        except InputError:
            raise
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - ir_datasets' own failures (a corrupt cache, a parse error)
            raise InputError(f"ir_datasets could not read the {what} of {ds!r}: {type(exc).__name__}: {exc}"[:400],
                             spec) from None


def read_qrels(spec: str) -> RawQrels:
    """The qrels of dataset ``irds:DATASET`` (ids as strings, grades as ints), read as a
    table held in memory is read (``columns.qrels_table``); ``format`` is ``irds``."""
    import numpy as np
    import pyarrow as pa

    from .columns import qrels_table

    def take(dataset: Any) -> pa.Table:
        qid: list[str] = []
        doc: list[str] = []
        grade: list[int] = []
        for r in dataset.qrels_iter():
            qid.append(r.query_id)
            doc.append(r.doc_id)
            grade.append(r.relevance)
        try:
            return pa.table({"query_id": pa.array(qid, pa.string()), "doc_id": pa.array(doc, pa.string()),
                             "relevance": pa.array(np.asarray(grade, dtype=np.int64))})
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"qrels with ids that are not strings or grades that are not integers: {exc}"[:300],
                             spec) from None

    table, origin = _read(spec, "qrels", take)
    raw = qrels_table(table, spec)
    raw.format, raw.columns, raw.origin = "irds", None, origin
    return raw


def _text_of(record: Any) -> str:
    """A record's text as ir_datasets defines it (``default_text``), else its ``text``
    field, else its string fields other than the id joined by a space."""
    fn = getattr(record, "default_text", None)
    if callable(fn):
        return str(fn())
    text = getattr(record, "text", None)
    if isinstance(text, str):
        return text
    return " ".join(v for k, v in zip(record._fields[1:], record[1:]) if isinstance(v, str) and k != "doc_id")


def read_texts(spec: str, what: str) -> Texts:
    """The query (``what="queries"``) or doc (``"docs"``) texts of dataset ``irds:DATASET``,
    id -> text; an id given twice is an error naming its two positions."""
    import hashlib

    def take(dataset: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        first: dict[str, int] = {}
        records = dataset.queries_iter() if what == "queries" else dataset.docs_iter()
        for i, r in enumerate(records, start=1):
            k = str(r[0]).strip()
            if k in first:
                raise InputError(f"id {k!r} is defined twice (first at record {first[k]})", spec, i)
            first[k] = i
            out[k] = " ".join(_text_of(r).split("\n")).strip()
        if not out:
            raise InputError(f"dataset holds no {what}", spec)
        return out

    texts, origin = _read(spec, what, take)
    h = hashlib.sha256()
    for k, v in texts.items():
        h.update(f"{k}\t{v}\n".encode("utf-8", "surrogatepass"))
    return Texts(spec, texts, origin, h.hexdigest())
