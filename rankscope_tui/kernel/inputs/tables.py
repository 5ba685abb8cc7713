"""Small tables beside the runs: strata (``qid<TAB>label``), a corpus (doc ids) and
texts (``id<TAB>text``), read whole by the line.

Lines are numbered from 1 counting every line end (LF, CRLF, or a lone CR: see
``files.decode_text``); a trailing CR is dropped; blank lines and ``#`` comment lines
are skipped in every table (as in runs and qrels), so a corpus line ``# header`` is not
a doc id. A strata label may not be ``(none)``: that names the unlabelled bucket.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from ..errors import InputError
from .files import read_text, strip_compressed_suffix
from .irds import Texts, is_dataset
from .irds import read_texts as read_dataset_texts

NONE_LABEL = "(none)"  # the bucket of queries without a label (workspace.NONE_LABEL)


def _tab_lines(path: str) -> Iterator[tuple[int, str]]:
    text = read_text(path)
    for i, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):  # blank, or a comment
            continue
        yield i, line


def read_strata(path: str) -> dict[str, str]:
    """``qid<TAB>label`` per line; a line without a tab, or a qid given two labels, is an error."""
    out: dict[str, str] = {}
    for i, line in _tab_lines(path):
        if "\t" not in line:
            raise InputError("expected 'qid<TAB>label' (no tab on this line)", path, i)
        q, label = line.split("\t", 1)
        q, label = q.strip(), label.strip()
        if not q or not label:
            raise InputError("empty qid or label", path, i)
        if label == NONE_LABEL:
            raise InputError(f"label {NONE_LABEL!r} is reserved for queries without a label; use another word",
                             path, i)
        if out.get(q, label) != label:
            raise InputError(f"query {q!r} has two labels: {out[q]!r} and {label!r}", path, i)
        out[q] = label
    if not out:
        raise InputError("empty file", path)
    return out


def qid_display_order(qids: Iterable[object]) -> list[int]:
    """Indices of ``qids`` in the order a person reads them: runs of digits compare as
    numbers, the rest as text (``1, 2, 10, 100``; ``q2, q9, q10, q102``; ``cisi-2, cisi-10``),
    ties (``7`` and ``007``) by the bytes. Files and report.json keep byte order (the
    order of the resampling protocol)."""
    ids = [str(q) for q in qids]
    runs = re.compile(r"([0-9]+)")

    def key(i: int) -> tuple[list[tuple[int, int, str]], bytes]:
        parts = runs.split(ids[i])  # text, number, text, number, ..., text
        return ([(0, int(p), "") if k % 2 else (1, 0, p) for k, p in enumerate(parts) if p],
                ids[i].encode("utf-8", "surrogatepass"))

    return sorted(range(len(ids)), key=key)


def stratification_name(path: str) -> str:
    base = strip_compressed_suffix(os.path.basename(path))
    return base.rsplit(".", 1)[0] if "." in base else base


def read_corpus(path: str) -> set[str]:
    """Doc ids: one per line, or the first column of a TSV (``#`` lines are comments)."""
    ids = {line.split("\t", 1)[0].strip() for _, line in _tab_lines(path)}
    ids.discard("")
    if not ids:
        raise InputError("empty file", path)
    return ids


def read_texts(path: str) -> dict[str, str]:
    """``id<TAB>text`` per line; an id given twice is an error naming both lines."""
    return read_text_files([path])


def read_text_files(paths: Iterable[str], what: str = "queries", datasets: list[Texts] | None = None) -> dict[str, str]:
    """``id<TAB>text`` files merged in order (``--docs a --docs b``: the Cranfield
    passages come in two files). An id defined twice, in one file or in two, is an
    error naming both places: a merge that kept one text silently would show the
    other file's text for it.

    A path ``irds:DATASET`` is the ``what`` (``queries`` or ``docs``) of an ir_datasets
    dataset (``irds.read_texts``), merged by the same rule; each such dataset's
    :class:`irds.Texts` is appended to ``datasets`` when given (report.json records it)."""
    out: dict[str, str] = {}
    where: dict[str, tuple[str, int]] = {}
    for path in paths:
        if is_dataset(path):
            got = read_dataset_texts(path, what)
            for i, (k, v) in enumerate(got.texts.items(), start=1):
                if k in where:
                    fp, fl = where[k]
                    raise InputError(f"id {k!r} is defined twice (first at {fp}:{fl})", path, i)
                where[k] = (path, i)
                out[k] = v
            if datasets is not None:
                datasets.append(got)
            continue
        for i, line in _tab_lines(path):
            if "\t" not in line:
                raise InputError("expected 'id<TAB>text' (no tab on this line)", path, i)
            k, v = line.split("\t", 1)
            k = k.strip()
            if k in where:
                fp, fl = where[k]
                first = f"line {fl}" if fp == path else f"{fp}:{fl}"
                raise InputError(f"id {k!r} is defined twice (first at {first})", path, i)
            where[k] = (path, i)
            out[k] = v.strip()
    return out
