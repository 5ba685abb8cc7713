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

Column conventions of a table or a header line (the first three names of each; a
table's other columns are ignored):

=============  ===============================  ===============================
convention     run                              qrels
=============  ===============================  ===============================
ranx           ``q_id, doc_id, score``          ``q_id, doc_id, score``
PyTerrier      ``qid, docno, score`` (+rank)    ``qid, docno, label``
ir_measures    ``query_id, doc_id, score``      ``query_id, doc_id, relevance``
BEIR/MTEB      ``query-id, corpus-id, score``   ``query-id, corpus-id, score``
=============  ===============================  ===============================

A run table with a rank column and no score column (``qid, docno, rank``) is read as
an MS MARCO run is: score = -rank (see ``columns.score_from_rank``). Anything else
is named with a :class:`ColumnMapping` (``--run-columns`` / ``--qrels-columns``:
``query=COL,doc=COL,score=COL`` or ``rank=COL`` for a run, ``relevance=COL`` for
qrels). A table whose columns fit two conventions with different columns is an
error, not a guess.

A lane may be several shard files (``--lane NAME=a.run,b.run`` or a glob, see
:func:`shard_paths`): read one by one and merged (``readers.merge_shards``); a (qid,
doc) in two shards is an error naming both places.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..errors import InputError, SettingError

if TYPE_CHECKING:
    from .rows import Lines

RUN_FORMATS = ("auto", "trec", "msmarco", "tsv", "json", "jsonl", "mteb", "parquet")
QRELS_FORMATS = ("auto", "trec", "beir", "tsv", "json", "jsonl", "parquet")
#: The formats of per-query tables (``--per-query-in``; read by ``workspace.per_query_tables``). Here, so
#: that the command line lists them without importing that module on every start.
PER_QUERY_FORMATS = ("trec_eval", "ir_measures", "jsonl", "long", "rankscope")

#: bytes of content looked at to tell the format
HEAD_BYTES = 1 << 16


# ---------------------------------------------------------------------------
# the column conventions of tables and header lines


#: (convention, query column, doc column, score column) of a run table
RUN_CONVENTIONS = (
    ("ranx", "q_id", "doc_id", "score"),
    ("PyTerrier", "qid", "docno", "score"),
    ("ir_measures", "query_id", "doc_id", "score"),
    ("BEIR/MTEB", "query-id", "corpus-id", "score"),
)
#: (convention, query column, doc column, relevance column) of a qrels table
QRELS_CONVENTIONS = (
    ("ranx", "q_id", "doc_id", "score"),
    ("PyTerrier", "qid", "docno", "label"),
    ("ir_measures", "query_id", "doc_id", "relevance"),
    ("BEIR/MTEB", "query-id", "corpus-id", "score"),
)

_ROLES = ("query", "doc", "score", "rank", "relevance")


@dataclass(frozen=True)
class ColumnMapping:
    """Explicit column names of a table: ``query`` and ``doc``, and ``score`` (or
    ``rank``) for a run, ``relevance`` for qrels. A name left None is looked up among
    the conventions' names."""

    query: str | None = None
    doc: str | None = None
    score: str | None = None
    rank: str | None = None
    relevance: str | None = None

    @classmethod
    def parse(cls, text: str, where: str) -> ColumnMapping:
        """``query=qid,doc=docno,score=s`` (roles: query, doc, score, rank, relevance)."""
        got: dict[str, str] = {}
        for part in text.split(","):
            role, eq, col = part.partition("=")
            role = role.strip()
            if not eq or not col:
                raise InputError(f"expected ROLE=COLUMN pairs separated by commas (roles: {', '.join(_ROLES)}), "
                                 f"not {part!r}"[:300], where)
            if role not in _ROLES:
                raise InputError(f"unknown role {role!r} (roles: {', '.join(_ROLES)})"[:300], where)
            if role in got:
                raise InputError(f"role {role!r} given twice", where)
            got[role] = col
        return cls(**got)

    def describe(self) -> str:
        return ",".join(f"{r}={getattr(self, r)}" for r in _ROLES if getattr(self, r) is not None)


@dataclass(frozen=True)
class Resolved:
    """The columns chosen for one table: query, doc and value column, and what the value is."""

    query: str
    doc: str
    value: str
    kind: str  # "score" | "rank" | "relevance"
    convention: str  # the convention's name, or "mapping"

    def as_dict(self) -> dict[str, str]:
        """The columns read, by role (report.json's ``inputs``)."""
        return {"query": self.query, "doc": self.doc, self.kind: self.value}


def _pick(names: list[str], columns: ColumnMapping | None, what: str, source: str) -> Resolved:
    present = set(names)
    listed = ", ".join(names) if names else "(none)"
    conventions = RUN_CONVENTIONS if what == "run" else QRELS_CONVENTIONS
    m = columns or ColumnMapping()
    if what == "run" and m.relevance is not None:
        raise InputError("a run's columns are query, doc and score (or rank); relevance names a qrels column",
                         source)
    if what == "qrels" and (m.score is not None or m.rank is not None):
        raise InputError("a qrels table's columns are query, doc and relevance (score and rank name run columns)",
                         source)
    if what == "run" and m.score is not None and m.rank is not None:
        raise InputError("give score or rank for a run, not both", source)
    for role in _ROLES:
        col = getattr(m, role)
        if col is not None and col not in present:
            raise InputError(f"no column {col!r} (given as {role}); the columns are: {listed}"[:400], source)
    # a mapping may name some roles; the conventions fill the others
    fits = []
    for conv, q, d, v in conventions:
        qq, dd = m.query or q, m.doc or d
        if what == "run":
            if m.rank is not None:
                vv, kind = m.rank, "rank"
            elif m.score is not None or v in present:
                vv, kind = m.score or v, "score"
            elif "rank" in present:
                vv, kind = "rank", "rank"  # PyTerrier's rank column, no score: ordered by rank
            else:
                vv, kind = v, "score"
        else:
            vv, kind = m.relevance or v, "relevance"
        if {qq, dd, vv} <= present:
            fits.append((conv, Resolved(qq, dd, vv, kind, conv)))
    distinct = {(r.query, r.doc, r.value, r.kind) for _, r in fits}  # ranx and ir_measures share doc_id, score
    if len(distinct) > 1:
        shown = "; ".join(f"{c} ({r.query}, {r.doc}, {r.value})" for c, r in fits)
        raise _unnamed_columns(f"ambiguous columns: they fit {shown}"[:400], what, source)
    if not fits:
        known = "; ".join(f"{c} ({q}, {d}, {v})" for c, q, d, v in conventions)
        raise _unnamed_columns(f"no known {what} columns among: {listed} (known: {known})"[:500], what, source)
    conv, r = fits[0]
    return Resolved(r.query, r.doc, r.value, r.kind, "mapping" if columns is not None else conv)


def _unnamed_columns(problem: str, what: str, source: str) -> SettingError:
    """Columns no convention settles: a :class:`SettingError` of the mapping's setting
    (``run_columns``/``qrels_columns``), so each face names its own way to give it (the
    command line's ``--run-columns``, the Python API's ``run_columns``)."""
    setting = f"{what}_columns"
    value = "score" if what == "run" else "relevance"
    return SettingError(setting, f"{source}: {problem}; name them with {{{setting}}} "
                                 f"(query=COL,doc=COL,{value}=COL)", prefixed=False)


def resolve_columns(names: Iterable[object], columns: ColumnMapping | None, what: str, source: str) -> Resolved:
    """The query, doc and value columns among ``names`` (``what``: "run" or "qrels"). A chosen
    column whose name the table holds more than once is refused: which of them is meant
    cannot be told (a TSV header or a DataFrame refuses any repeated name before this)."""
    listed = [str(n) for n in names]
    r = _pick(listed, columns, what, source)
    for c in dict.fromkeys((r.query, r.doc, r.value)):
        if listed.count(c) > 1:
            raise InputError(f"column {c!r} appears {listed.count(c)} times in the table; rename all but one"[:300],
                             source)
    return r


# ---------------------------------------------------------------------------
# how inputs are read


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

    def __post_init__(self) -> None:
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


def looks_like_json(text: str) -> bool:
    """JSON starts with '{' then '"' or '}' (an object), or '[' then a JSON value; a TREC
    file whose first qid merely starts with '{' or '[' (``{q}1 Q0 ...``) does not."""
    t = text.lstrip()
    if t[:1] not in ("{", "["):
        return False
    nxt = t[1:].lstrip()[:1]
    if t[0] == "{":
        return nxt in ('"', "}", "")
    return nxt == "" or nxt in '[]{}"-0123456789tfn'


def _jsonl_first(text: str) -> bool:
    """The first line alone is a JSON object whose values are not objects (a JSON Lines
    row); a ``{qid: {docid: value}}`` file written on one line has object values."""
    s = text.lstrip("\ufeff").lstrip()
    first = s.split("\n", 1)[0].strip()
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and bool(obj) and not any(isinstance(v, dict) for v in obj.values())


def detect(head: bytes, what: str, path: str, columns: ColumnMapping | None = None) -> str:
    """The format of content starting with ``head`` (decompressed): ``what`` is "run" or
    "qrels". Never "auto"; refuses (InputError) where the first line is ambiguous. A
    column mapping (``--run-columns``/``--qrels-columns``) every column of which the
    first line names makes it a header: the file is read as a table, whatever the
    conventions make of those names."""
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
    if columns is not None and "\x00" not in line and _names_mapped_columns(fields, columns):
        return "tsv"
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


def _names_mapped_columns(fields: list[str], columns: ColumnMapping) -> bool:
    """Whether a first line holds every column ``columns`` names (and names at least one)."""
    named = [getattr(columns, role) for role in _ROLES if getattr(columns, role) is not None]
    return bool(named) and set(named) <= set(fields)


def _is_int(s: str) -> bool:
    t = s[1:] if s[:1] in "+-" else s
    return t.isascii() and t.isdigit()


def header_columns(fields: list[str], what: str, path: str, columns: ColumnMapping | None = None) -> Resolved | None:
    """:class:`Resolved` when ``fields`` (a first line) name known columns (or those of
    ``columns``), else None; a header fitting two conventions is an error."""
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


def shard_place(shards: Sequence[tuple[str, int]], lines: Lines, i: int, spec: str) -> str:
    """``FILE:LINE`` of row ``i`` of a lane of several shards (``((path, rows), ...)``)."""
    start = 0
    for path, n in shards:
        if i < start + n:
            return f"{path}:{int(lines[i])}"
        start += n
    return spec


_TABLES = ("parquet", "jsonl", "tsv")


class Told(Protocol):
    """An input read, as far as :func:`check_options_used` looks: the format(s) it was read
    as (``RawLane.format``, ``RawQrels.format``; comma-separated for a lane of shards)."""

    @property
    def format(self) -> str: ...


def check_options_used(options: InputOptions, lanes: Sequence[Told], judgments: Sequence[Told]) -> None:
    """An option that no input used is an error, not silently ignored: column mappings
    when no input is a table, an MTEB subset or split when no lane is MTEB predictions,
    a qrels format when the qrels were read by dataset id (``irds``)."""
    def formats(raws: Sequence[Told]) -> set[str]:
        return {f for r in raws for f in (r.format or "").split(",")}

    run_f, qrels_f = formats(lanes), formats(judgments)
    if options.run_columns is not None and not run_f & set(_TABLES):
        raise InputError("names table columns, but no lane was read as a table (Parquet, JSON Lines or a "
                         "header-named file)", "--run-columns")
    if options.qrels_columns is not None and not qrels_f & set(_TABLES):
        raise InputError("names table columns, but the qrels were not read as a table (Parquet, JSON Lines or a "
                         "header-named file)", "--qrels-columns")
    if options.qrels_format != "auto" and qrels_f == {"irds"}:
        raise InputError("names a file format, but the qrels were read by dataset id (irds:DATASET), whose "
                         "format ir_datasets knows", "--qrels-format")
    for flag, value in (("--mteb-subset", options.mteb_subset), ("--mteb-split", options.mteb_split)):
        if value is not None and "mteb" not in run_f:
            raise InputError("chooses among MTEB predictions, but no lane is an MTEB predictions file", flag)
