"""Reading lanes (runs) and qrels (SPEC §2) in every format of ``formats``: the
dispatch from a path to the reader of its format, and a lane of several shard files.

A file passes the room's modules in one direction: ``files`` checks it and reads
its bytes (decompressed, with their digest), ``formats.detect`` tells the format from
the content (after decompression) unless given, then one reader parses it --
``trec`` (TREC text, MS MARCO runs, BEIR qrels, header-named tables), ``json_pairs``
(``{qid: {docid: value}}`` and MTEB predictions), ``json_lines`` or ``columns``
(Parquet) -- into the loaded table of ``rows`` (:class:`RawLane`, :class:`RawQrels`).
``format`` on the result says which format it was read as.

A plain uncompressed TREC or MS MARCO run is read by the fast path straight from the
file (pyarrow reads it; nothing is held whole); a pipe (``<(zcat x.gz)``, a FIFO) is
read once, into memory, like compressed content.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import pyarrow as pa

from ..errors import InputError, InputWarning
from .arrow import arrow_strings, first_repeat, to_numpy
from .columns import read_parquet
from .files import Digest, check_file, compression_of, decode_text, read_bytes
from .formats import HEAD_BYTES, InputOptions, detect
from .irds import is_dataset
from .irds import read_qrels as read_dataset_qrels
from .json_lines import read_json_lines
from .json_pairs import json_pairs, mteb_pairs, top_level_has
from .rows import RawLane as RawLane
from .rows import RawQrels as RawQrels
from .rows import RowLines as RowLines
from .rows import check_lane_name as check_lane_name
from .rows import file_lane_name as file_lane_name
from .rows import lane_name_from_path as lane_name_from_path
from .trec import qrels_from_bytes, qrels_from_text, run_from_bytes, run_from_plain_file, run_from_text

_Raw = TypeVar("_Raw", RawLane, RawQrels)


def _plain_head(path: str) -> bytes | None:
    """The first bytes of a regular, uncompressed file (None for a pipe or compressed content)."""
    if check_file(path) != "regular":
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
    return None if compression_of(head[:6]) is not None else head


def _as(raw: _Raw, fmt: str) -> _Raw:
    raw.format = fmt
    return raw


def read_lane(path: str, name: str | None = None, options: InputOptions | None = None) -> RawLane:
    """Read a run in any format of ``formats`` (``options.run_format``; ``auto``: told
    by content): TREC ``qid Q0 docid rank score tag``, JSON ``{qid: {docid: score}}``,
    an MS MARCO run, a header-named table, JSON Lines, MTEB predictions or Parquet.
    ``format`` on the lane says which it was read as."""
    opts = options if options is not None else InputOptions()
    lane_name = name if name is not None else file_lane_name(path)
    check_lane_name(lane_name, path)
    fmt = opts.run_format
    # a pipe (``<(zcat x.gz)``, a FIFO) is read once, into memory, like compressed content
    head = _plain_head(path)
    if head is not None:
        if fmt == "auto":
            fmt = detect(head, "run", path, opts.run_columns)
        if fmt == "parquet":
            return _with_latency(_as(read_parquet(path, path, "run", opts.run_columns, Digest(path=path), name=lane_name), fmt))
        if fmt in ("trec", "msmarco"):
            fast = run_from_plain_file(path, lane_name, fmt)
            if fast is not None:
                return _with_latency(_as(fast, fmt))
        raw = read_bytes(path)[1]
        digest = Digest(path=path)
    else:
        stored, raw = read_bytes(path)
        digest = Digest(stored)
        del stored
        if fmt == "auto":
            fmt = detect(bytes(raw[:HEAD_BYTES]), "run", path, opts.run_columns)
    lane = _lane_from_content(raw, path, lane_name, fmt, opts, digest)
    return _with_latency(_as(lane, "mteb" if lane.format == "mteb" else fmt))


def _with_latency(lane: RawLane) -> RawLane:
    """``lane`` with the per-query seconds of its sidecar (``sidecar``), when a run written
    by ``rankscope run`` lies beside it unchanged; a sidecar for other bytes is a warning."""
    from .sidecar import SIDECAR_SUFFIX, read_sidecar_latency

    side = lane.path + SIDECAR_SUFFIX
    if not os.path.isfile(side):  # the usual case: one stat, no read
        return lane
    latency, why = read_sidecar_latency(lane.path, lane.sha256())
    if latency is not None:
        lane.latency = latency
    elif why:
        lane.warnings.append(InputWarning("run_sidecar_not_used", 1, f"lane {lane.name}: {why}", side))
    return lane


def _lane_from_content(raw: bytearray, path: str, lane_name: str, fmt: str, opts: InputOptions, digest: Digest) -> RawLane:
    if fmt == "parquet":
        return read_parquet(raw, path, "run", opts.run_columns, digest, name=lane_name)
    fast = run_from_bytes(raw, path, lane_name, fmt, digest)
    if fast is not None:
        return fast
    text = decode_text(raw, path)
    del raw
    if fmt in ("json", "mteb"):
        if fmt == "json" and opts.run_format == "auto" and top_level_has(text, "mteb_model_meta"):
            fmt = "mteb"
        if fmt == "mteb":
            qid, doc, score, line = mteb_pairs(text, path, opts.mteb_subset, opts.mteb_split)
            return RawLane(lane_name, path, arrow_strings(qid), arrow_strings(doc), np.asarray(score, dtype=np.float64),
                           np.asarray(line, dtype=np.int64), digest=digest, format="mteb")
        else:
            if top_level_has(text, "mteb_model_meta"):
                raise InputError("this is an MTEB predictions file (a key 'mteb_model_meta'): give --run-format "
                                 "mteb (or auto)", path)
            qid, doc, score, line = json_pairs(text, path, "score")
        return RawLane(lane_name, path, arrow_strings(qid), arrow_strings(doc),
                       np.asarray(score, dtype=np.float64), np.asarray(line, dtype=np.int64), digest=digest)
    if fmt == "jsonl":
        return read_json_lines(text, path, "run", opts.run_columns, digest, name=lane_name)
    return run_from_text(text, path, lane_name, fmt, opts.run_columns, digest)


def read_qrels(path: str, options: InputOptions | None = None) -> RawQrels:
    """Read qrels in any format of ``formats`` (``options.qrels_format``; ``auto``: told
    by content): TREC ``qid 0 docid grade``, JSON ``{qid: {docid: grade}}``, BEIR/MTEB
    ``query-id corpus-id score`` (with or without its header), a header-named table,
    JSON Lines or Parquet. ``format`` on the qrels says which it was read as. ``irds:DATASET``
    reads the qrels of an ir_datasets dataset from its local cache (``irds``)."""
    if is_dataset(path):  # irds:DATASET, from the local ir_datasets cache (inputs.irds)
        return read_dataset_qrels(path)
    opts = options if options is not None else InputOptions()
    told = [opts.qrels_format]
    q = _read_qrels(path, opts, told)
    return _as(q, told[0])


def _read_qrels(path: str, opts: InputOptions, told: list[str]) -> RawQrels:
    fmt = opts.qrels_format
    head = _plain_head(path)
    if head is not None and (fmt == "parquet" or (fmt == "auto" and head[:4] == b"PAR1")):
        told[0] = "parquet"
        return read_parquet(path, path, "qrels", opts.qrels_columns, Digest(path=path))
    stored, raw = read_bytes(path)
    digest = Digest(stored)
    del stored
    if fmt == "auto":
        fmt = detect(bytes(raw[:HEAD_BYTES]), "qrels", path, opts.qrels_columns)
    told[0] = fmt
    return _qrels_from_content(raw, path, fmt, opts, digest)


def _qrels_from_content(raw: bytearray, path: str, fmt: str, opts: InputOptions, digest: Digest) -> RawQrels:
    if fmt == "parquet":
        return read_parquet(raw, path, "qrels", opts.qrels_columns, digest)
    fast = qrels_from_bytes(raw, path, fmt, digest)
    if fast is not None:
        return fast
    text = decode_text(raw, path)
    del raw
    if fmt == "json":
        qid, doc, grade, line = json_pairs(text, path, "grade")
        return RawQrels(path, arrow_strings(qid), arrow_strings(doc),
                        np.asarray(grade, dtype=np.int64), np.asarray(line, dtype=np.int64), digest=digest)
    if fmt == "jsonl":
        return read_json_lines(text, path, "qrels", opts.qrels_columns, digest)
    return qrels_from_text(text, path, fmt, opts.qrels_columns, digest)


def read_lane_text(text: str, label: str, name: str = "pasted", options: InputOptions | None = None) -> RawLane:
    """A run given as text (pasted lines), read exactly as ``read_lane`` reads a file with
    that content: the format told by content (or ``options.run_format``), the same readers,
    the same errors, each naming ``label`` where a file's would name its path."""
    opts = options if options is not None else InputOptions()
    raw = bytearray(text.encode("utf-8"))
    fmt = opts.run_format
    if fmt == "auto":
        fmt = detect(bytes(raw[:HEAD_BYTES]), "run", label, opts.run_columns)
    lane = _lane_from_content(raw, label, name, fmt, opts, Digest(raw))
    return _as(lane, "mteb" if lane.format == "mteb" else fmt)


def read_qrels_text(text: str, label: str, options: InputOptions | None = None) -> RawQrels:
    """Qrels given as text, read exactly as ``read_qrels`` reads a file with that content
    (errors name ``label``)."""
    opts = options if options is not None else InputOptions()
    raw = bytearray(text.encode("utf-8"))
    fmt = opts.qrels_format
    if fmt == "auto":
        fmt = detect(bytes(raw[:HEAD_BYTES]), "qrels", label, opts.qrels_columns)
    return _as(_qrels_from_content(raw, label, fmt, opts, Digest(raw)), fmt)


# ---------------------------------------------------------------------------
# a lane in several shard files


def _joined_strings(columns: Sequence[pa.Array | pa.ChunkedArray]) -> pa.ChunkedArray:
    """The id columns of several shards as one chunked array. Shards of one lane may come
    from different readers, whose ids differ in type (the fast path's ``string``, the
    general reader's ``large_string``); a chunked array holds one type, so when they
    differ every chunk is cast to ``large_string``, which holds any string column (64-bit
    offsets: no cast can overflow)."""
    chunks = [c for col in columns for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col])]
    kind = pa.large_string() if any(c.type != pa.string() for c in chunks) else pa.string()
    return pa.chunked_array([c if c.type == kind else c.cast(kind) for c in chunks], kind)


def merge_shards(name: str, spec: str, shards: Sequence[RawLane]) -> RawLane:
    """One lane from its shards' ``RawLane``s (in order): rows concatenated, each row
    keeping its shard's line. A (qid, doc) present twice -- in two shards, or twice in
    one -- is an error naming both places; the digest is the sha256 of the shards'
    digests in order (``path<TAB>sha256`` lines)."""
    import pyarrow.compute as pc  # lazy: ~30 ms of wrappers built at import, which a lane of one file never needs

    qid = _joined_strings([s.qid for s in shards])
    doc = _joined_strings([s.doc for s in shards])
    score = np.concatenate([s.score for s in shards])
    line = np.concatenate([np.asarray(s.line, dtype=np.int64) for s in shards])
    shard_of = np.concatenate([np.full(len(s.score), k, dtype=np.int32) for k, s in enumerate(shards)])
    qc = to_numpy(pc.dictionary_encode(qid.combine_chunks()).indices).astype(np.int64)
    dcode = to_numpy(pc.dictionary_encode(doc.combine_chunks()).indices).astype(np.int64)
    repeat = first_repeat(qc * (int(dcode.max(initial=0)) + 1) + dcode)
    if repeat is not None:
        a, b = repeat
        pa_, pb = shards[shard_of[a]].path, shards[shard_of[b]].path
        raise InputError(f"doc {doc[b].as_py()!r} of query {qid[b].as_py()!r} is in two shards of lane {name!r}: "
                         f"{pa_}:{int(line[a])} and here"[:400] if pa_ != pb else
                         f"doc {doc[b].as_py()!r} appears twice in query {qid[b].as_py()!r} "
                         f"(first at line {int(line[a])})"[:400], pb, int(line[b]))
    h = hashlib.sha256("".join(f"{s.path}\t{s.sha256()}\n" for s in shards).encode("utf-8"))
    warnings = [w for s in shards for w in s.warnings]
    lane = RawLane(name, spec, qid, doc, score, line, warnings, shards[-1].tag, Digest(hexdigest=h.hexdigest()))
    lane.shards = tuple((s.path, len(s.score)) for s in shards)
    return lane


def read_lanes(lanes: Sequence[tuple[str | None, str]], shards: Sequence[Sequence[str]],
               options: InputOptions) -> list[RawLane]:
    """The ``RawLane`` of each ``(name, spec)`` of ``lanes``; ``shards[i]`` are the files
    of lane i (``formats.shard_paths``). A lane of several files must be named."""
    out = []
    for (name, spec), paths in zip(lanes, shards):
        if len(paths) == 1:
            out.append(read_lane(paths[0], name, options))
            continue
        if name is None:
            raise InputError("a lane of several shard files needs a name: --lane NAME=a.run,b.run", spec)
        check_lane_name(name, spec)
        parts = [read_lane(p, name, options) for p in paths]
        lane = merge_shards(name, ",".join(paths), parts)
        lane.format = ",".join(dict.fromkeys(p.format for p in parts))
        cols = [p.columns for p in parts if p.columns]
        lane.columns = cols[0] if cols and all(c == cols[0] for c in cols) and len(cols) == len(parts) else None
        out.append(lane)
    return out
