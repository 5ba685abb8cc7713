"""Which reader an input needs: the formats, told apart by content, never by name.

Formats of a run (``--run-format``) and of qrels (``--qrels-format``):

==========  ===================================================  =====================
format      content                                              told by
==========  ===================================================  =====================
trec        ``qid Q0 docid rank score tag`` / ``qid 0 docid      6 (run) or 4 (qrels)
            grade``                                              fields, and the rest
msmarco     run ``qid<TAB>docid<TAB>rank`` (no score: score =    3 fields, no header
            -rank, see ``columns.score_from_rank``)
beir        qrels ``query-id<TAB>corpus-id<TAB>score``, with or  3 fields (header or
            without the header line                              not)
tsv         whitespace-separated columns under a header line     a first line naming
            naming them in a known convention (``columns``)      known columns
json        ``{qid: {docid: value}}``                            ``{"`` or ``{}``
jsonl       JSON Lines rows ``{"query_id": .., "doc_id": ..,     a first line that is
            "score"|"relevance": ..}`` (ir_datasets exports)     one flat JSON object
mteb        run: MTEB's predictions JSON ``{"mteb_model_meta":   a top-level key
            .., SUBSET: {SPLIT: {qid: {docid: score}}}}``        ``mteb_model_meta``
parquet     Parquet, columns as in ``columns``                   magic bytes ``PAR1``
==========  ===================================================  =====================

Compression (gzip, bzip2, xz, zstd, lz4) is recognised first, by magic bytes
(``files``); the format is told from the decompressed content. "Told by" looks at the
first line that is not blank or a ``#`` comment. Where the content does not decide,
the reader refuses rather than guesses: a 3-field run whose third field is not an
integer (a rank) needs a header line naming its columns or ``--run-format``; a table
or header whose columns fit two conventions needs ``--run-columns``/``--qrels-columns``;
an MTEB file with several subsets or splits needs ``--mteb-subset``/``--mteb-split``.
An explicit format is obeyed (and its reader's errors name the line where the file
does not fit it).

A lane may be several shard files (``--lane NAME=a.run,b.run`` or a glob, see
:func:`shard_paths`): read one by one and merged (:func:`merge_shards`); a (qid,
doc) in two shards is an error naming both places.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .columns import ColumnMapping

RUN_FORMATS = ("auto", "trec", "msmarco", "tsv", "json", "jsonl", "mteb", "parquet")
QRELS_FORMATS = ("auto", "trec", "beir", "tsv", "json", "jsonl", "parquet")
#: The formats of per-query tables (``--per-query-in``; read by ``per_query_in``). Here, so
#: that the command line lists them without importing that module on every start.
PER_QUERY_FORMATS = ("trec_eval", "ir_measures", "jsonl", "long", "rankscope")

#: bytes of content looked at to tell the format
HEAD_BYTES = 1 << 16


@dataclass(frozen=True)
class InputOptions:
    """How input files are read: the formats (``auto``: told by content), column
    mappings for tables, and the MTEB subset and split."""

    run_format: str = "auto"
    qrels_format: str = "auto"
    run_columns: ColumnMapping | None = None
    qrels_columns: ColumnMapping | None = None
    mteb_subset: str | None = None
    mteb_split: str | None = None

    def __post_init__(self):
        if self.run_format not in RUN_FORMATS:
            raise InputError(f"unknown run format {self.run_format!r} (one of: {', '.join(RUN_FORMATS)})"[:300],
                             "--run-format")
        if self.qrels_format not in QRELS_FORMATS:
            raise InputError(f"unknown qrels format {self.qrels_format!r} (one of: {', '.join(QRELS_FORMATS)})"[:300],
                             "--qrels-format")

    @property
    def is_default(self) -> bool:
        return self == InputOptions()


# ---------------------------------------------------------------------------
# telling the format from content


def _first_content_line(text: str) -> tuple[str, int] | None:
    for i, raw in enumerate(text.split("\n")[:1000], start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            return line, i
    return None


def _jsonl_first(text: str) -> bool:
    """The first line alone is a JSON object whose values are not objects (a JSON Lines
    row); a ``{qid: {docid: value}}`` file written on one line has object values."""
    import json

    s = text.lstrip("\ufeff").lstrip()
    first = s.split("\n", 1)[0].strip()
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and bool(obj) and not any(isinstance(v, dict) for v in obj.values())


def detect(head: bytes, what: str, path: str) -> str:
    """The format of content starting with ``head`` (decompressed): ``what`` is "run" or
    "qrels". Never "auto"; refuses (InputError) where the first line is ambiguous."""
    from .readers import looks_like_json

    if head[:4] == b"PAR1":
        return "parquet"
    if b"\x00" in head:
        return "trec"  # binary: the TREC reader refuses it, naming the line of the NUL byte
    text = bytes(head).decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if looks_like_json(text):
        if _jsonl_first(text):
            return "jsonl"
        return "json"  # the JSON reader tells an MTEB file by its key
    first = _first_content_line(text)
    if first is None:
        return "trec"  # the TREC reader names what is wrong (empty, binary, ...)
    line, no = first
    fields = line.split()
    if len(fields) < 4 and len(head) >= HEAD_BYTES and "\n" not in text.split(line, 1)[1]:
        # the first line runs past the bytes sniffed (a very long id): its field count is
        # unknown here, so it is read as TREC, whose reader sees the whole line
        return "trec"
    if what == "qrels" and fields == ["query-id", "corpus-id", "score"]:
        return "beir"  # BEIR's own header
    if "\x00" not in line and len(fields) >= 2 and header_columns(fields, what, path) is not None:
        return "tsv"
    if len(fields) == 3:
        if what == "qrels":
            return "beir"
        if not _is_int(fields[2]):
            raise InputError(
                f"3 fields read as an MS MARCO run 'qid docid rank', but {fields[2]!r} is not a rank (an integer); "
                "a run of (qid, docid, score) needs a header line naming its columns (e.g. 'qid docno score'), "
                "or give --run-format"[:400], path, no)
        return "msmarco"
    return "trec"


def _is_int(s: str) -> bool:
    t = s[1:] if s[:1] in "+-" else s
    return t.isascii() and t.isdigit()


def header_columns(fields: list[str], what: str, path: str, columns: ColumnMapping | None = None):
    """``columns.Resolved`` when ``fields`` (a first line) name known columns (or those of
    ``columns``), else None; a header fitting two conventions is an error."""
    from .columns import resolve_columns

    if any(_is_number(f) for f in fields):
        return None
    try:
        return resolve_columns(fields, columns, what, path)
    except InputError as exc:
        if "ambiguous" in exc.detail or columns is not None:
            raise
        return None


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------------------
# a lane in several shard files


def shard_paths(spec: str) -> tuple[str, ...]:
    """The files of a lane: ``spec`` itself when it names an existing file, else its
    comma-separated parts, each a path or a glob (``*``, ``?``, ``[...]``) expanded in
    sorted order. A glob matching nothing, or a file named twice, is an error."""
    import glob
    import os

    if os.path.exists(spec) or ("," not in spec and not glob.has_magic(spec)):
        return (spec,)
    out: list[str] = []
    for part in spec.split(","):
        if not part:
            raise InputError("empty shard path (two commas, or a comma at an end)", spec)
        if glob.has_magic(part) and not os.path.exists(part):
            hits = sorted(glob.glob(part))
            if not hits:
                raise InputError("no file matches this pattern", part)
            out.extend(hits)
        else:
            out.append(part)
    seen: set[str] = set()
    for p in out:
        real = os.path.realpath(p)
        if real in seen:
            raise InputError("shard given twice in one lane", p)
        seen.add(real)
    return tuple(out)


def merge_shards(name: str, spec: str, shards: list) -> "object":
    """One lane from its shards' ``RawLane``s (in order): rows concatenated, each row
    keeping its shard's line. A (qid, doc) present twice -- in two shards, or twice in
    one -- is an error naming both places; the digest is the sha256 of the shards'
    digests in order (``path<TAB>sha256`` lines)."""
    import hashlib

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .arrow import first_repeat, to_numpy
    from .files import Digest
    from .readers import RawLane

    qid = pa.chunked_array([c for s in shards for c in (s.qid.chunks if isinstance(s.qid, pa.ChunkedArray) else [s.qid])],
                           pa.string())
    doc = pa.chunked_array([c for s in shards for c in (s.doc.chunks if isinstance(s.doc, pa.ChunkedArray) else [s.doc])],
                           pa.string())
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


def shard_place(shards, lines, i: int, spec: str) -> str:
    """``FILE:LINE`` of row ``i`` of a lane of several shards (``((path, rows), ...)``)."""
    start = 0
    for path, n in shards:
        if i < start + n:
            return f"{path}:{int(lines[i])}"
        start += n
    return spec


def read_lanes(lanes, shards, options: InputOptions) -> list:
    """The ``RawLane`` of each ``(name, spec)`` of ``lanes``; ``shards[i]`` are the files
    of lane i (:func:`shard_paths`). A lane of several files must be named."""
    from .readers import check_lane_name, read_lane

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


_TABLES = ("parquet", "jsonl", "tsv")


def check_options_used(options: InputOptions, lanes, judgments) -> None:
    """An option that no input used is an error, not silently ignored: column mappings
    when no input is a table, an MTEB subset or split when no lane is MTEB predictions."""
    def formats(raws):
        return {f for r in raws for f in (r.format or "").split(",")}

    run_f, qrels_f = formats(lanes), formats(judgments)
    if options.run_columns is not None and not run_f & set(_TABLES):
        raise InputError("names table columns, but no lane was read as a table (Parquet, JSON Lines or a "
                         "header-named file)", "--run-columns")
    if options.qrels_columns is not None and not qrels_f & set(_TABLES):
        raise InputError("names table columns, but the qrels were not read as a table (Parquet, JSON Lines or a "
                         "header-named file)", "--qrels-columns")
    for flag, value in (("--mteb-subset", options.mteb_subset), ("--mteb-split", options.mteb_split)):
        if value is not None and "mteb" not in run_f:
            raise InputError("chooses among MTEB predictions, but no lane is an MTEB predictions file", flag)
