"""Readers for lanes, qrels, strata, corpus and text files (SPEC §2), and atomic writers.

Every reader returns string columns plus the 1-based source line of each row, so
that later checks (duplicates, conflicting grades) can still name a line. Every
malformed input raises :class:`InputError` as ``FILE:LINE: what is wrong``.

Parsing is columnar: the whole file is decoded once and split into lines and
whitespace-separated fields by pyarrow compute kernels (no Python loop per line on
the hot path). A slow, line-by-line pass runs only after a problem was detected, to
name the line.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import InputError, InputWarning

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def _pa():
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


# ---------------------------------------------------------------------------
# raw text


def _check_file(p: str) -> None:
    if not os.path.exists(p):
        raise InputError("no such file", p)
    if os.path.isdir(p):
        raise InputError("is a directory, not a file", p)


def read_text(path: str | os.PathLike) -> str:
    """Whole file as text: gzip by magic bytes, UTF-8 strict, BOM dropped.

    Refuses a missing path, a directory, an empty file, a truncated or corrupt
    gzip, a binary file (NUL bytes) and non-UTF-8 bytes (naming the line).
    """
    p = str(path)
    _check_file(p)
    try:
        with open(p, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", p) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"truncated or corrupt gzip ({exc})", p) from None
    if not raw.strip():
        raise InputError("empty file", p)
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise InputError("binary file (NUL byte)", p, raw.count(b"\n", 0, nul) + 1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", p, line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


# ---------------------------------------------------------------------------
# whitespace-separated tables


@dataclass
class Fields:
    """Kept (non-blank, non-comment) lines of a whitespace-separated file."""

    tokens: object  # pyarrow ListArray of strings, one list per kept line
    n_tokens: np.ndarray  # int64 per kept line
    line: np.ndarray  # int64 1-based source line per kept line


def split_fields(text: str) -> Fields:
    """Split text into lines and ASCII-whitespace fields; drop blank and ``#`` lines.

    Line numbers count every ``\\n`` (CRLF is fine: ``\\r`` is whitespace).
    """
    pa, pc = _pa()
    lines = pc.ascii_trim_whitespace(pc.split_pattern(pa.array([text], pa.large_string()), "\n").flatten())
    blank = pc.equal(lines, "").to_numpy(zero_copy_only=False)
    comment = pc.starts_with(lines, "#").to_numpy(zero_copy_only=False)
    keep = ~blank & ~comment
    if not keep.all():
        lines = lines.filter(pa.array(keep))
    tokens = pc.ascii_split_whitespace(lines)
    n_tok = pc.list_value_length(tokens).to_numpy(zero_copy_only=False).astype(np.int64)
    line_no = np.flatnonzero(keep).astype(np.int64) + 1
    return Fields(tokens, n_tok, line_no)


def _column(fields: Fields, i: int):
    _, pc = _pa()
    return pc.list_element(fields.tokens, i)


def _first_bad(values: list, line: np.ndarray, check) -> tuple[int, str] | None:
    for v, ln in zip(values, line.tolist()):
        if not check(v):
            return ln, v
    return None


def _parse_float_col(col, line: np.ndarray, path: str, what: str) -> np.ndarray:
    pa, pc = _pa()
    try:
        out = pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        def ok(v: str) -> bool:
            try:
                float(v)
                return True
            except ValueError:
                return False

        bad = _first_bad(col.to_pylist(), line, ok)
        ln, v = bad if bad else (int(line[0]), "?")
        raise InputError(f"{what} is not a number: {v!r}", path, ln) from None
    finite = np.isfinite(out)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(f"{what} is not finite: {col[i].as_py()!r}", path, int(line[i]))
    return out


def _parse_int_col(col, line: np.ndarray, path: str, what: str) -> np.ndarray:
    pa, pc = _pa()
    try:
        out = pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        def ok(v: str) -> bool:
            try:
                return INT32_MIN <= int(v) <= INT32_MAX
            except ValueError:
                return False

        bad = _first_bad(col.to_pylist(), line, ok)
        ln, v = bad if bad else (int(line[0]), "?")
        try:
            int(v)
            msg = f"{what} out of range (must fit a 32-bit integer): {v!r}"
        except ValueError:
            msg = f"{what} is not an integer: {v!r}"
        raise InputError(msg, path, ln) from None
    bad = (out < INT32_MIN) | (out > INT32_MAX)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what} out of range (must fit a 32-bit integer): {col[i].as_py()!r}", path, int(line[i]))
    return out


# ---------------------------------------------------------------------------
# lanes


@dataclass
class RawLane:
    """A lane as read: string qid and doc columns, float scores, source lines."""

    name: str
    path: str
    qid: object  # pyarrow string array
    doc: object  # pyarrow string array
    score: np.ndarray
    line: np.ndarray
    warnings: list[InputWarning] = field(default_factory=list)
    tag: str = ""


def lane_name_from_path(path: str) -> str:
    """``bm25.run.gz`` → ``bm25``: drop ``.gz`` and then one suffix."""
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    stem, dot, _ = base.rpartition(".")
    return stem if dot and stem else base


def check_lane_name(name: str, where: str) -> None:
    if not name or any(c in name for c in ".=") or any(c.isspace() for c in name):
        raise InputError(f"lane name {name!r} must be non-empty and contain no '.', '=' or whitespace", where)


def read_lane(path: str, name: str | None = None) -> RawLane:
    """Read a TREC run (``qid Q0 docid rank score tag``) or JSON ``{qid: {docid: score}}``."""
    lane_name = name if name is not None else lane_name_from_path(path)
    check_lane_name(lane_name, path)
    _check_file(path)
    fast = _read_run_fast(path)
    if fast is not None:
        qid, doc, score, tag = fast
        return RawLane(lane_name, path, qid, doc, score, np.arange(1, len(score) + 1, dtype=np.int64), [], tag)
    text = read_text(path)
    if looks_like_json(text):
        qid, doc, score, line = _json_pairs(text, path, "score")
        pa, _ = _pa()
        return RawLane(lane_name, path, pa.array(qid, pa.string()), pa.array(doc, pa.string()),
                       np.asarray(score, dtype=np.float64), np.asarray(line, dtype=np.int64))
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    short = fields.n_tokens < 6
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise InputError(
            f"expected 6 fields 'qid Q0 docid rank score tag', found {int(fields.n_tokens[i])}", path, int(fields.line[i])
        )
    warnings: list[InputWarning] = []
    extra = fields.n_tokens > 6
    if extra.any():
        i = int(np.flatnonzero(extra)[0])
        warnings.append(InputWarning("extra_columns", int(extra.sum()),
                                     "lines with fields after the 6th (ignored, as trec_eval does)",
                                     f"{path}:{int(fields.line[i])}"))
    score = _parse_float_col(_column(fields, 4), fields.line, path, "score")
    tag = _column(fields, 5)[-1].as_py() if fields.line.size else ""
    return RawLane(lane_name, path, _column(fields, 0), _column(fields, 2), score, fields.line, warnings, tag)


def _read_run_fast(path: str):
    """Columnar fast path for a clean run file: one delimiter (a single space or a tab),
    exactly 6 fields, no comment or blank lines, finite scores. Returns None whenever
    anything is unusual, and the general reader (which can name lines) takes over."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    if head[:2] == b"\x1f\x8b":
        return None
    first = head.split(b"\n", 1)[0]
    if b"\t" in first and b" " not in first:
        delim = "\t"
    elif b" " in first and b"\t" not in first:
        delim = " "
    else:
        return None
    if head.startswith((b"#", b"\xef\xbb\xbf", b"\n", b"\r")) or b"\x00" in head:
        return None
    names = ["qid", "q0", "doc", "rank", "score", "tag"]
    try:
        # Blank lines must fail the parse (ignore_empty_lines=False): the general
        # reader keeps line numbers right.
        tab = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False, escape_char=False,
                                            ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"qid": pa.string(), "doc": pa.string(), "score": pa.float64(), "tag": pa.string()},
                include_columns=["qid", "doc", "score", "tag"], null_values=[], strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None
    if tab.num_rows == 0:
        return None
    score_col = tab.column("score")
    if score_col.null_count:
        return None
    score = score_col.to_numpy()
    if not np.isfinite(score).all():
        return None
    import pyarrow.compute as pc

    qid = tab.column("qid")
    if pc.any(pc.starts_with(qid, "#")).as_py():  # comment lines
        return None
    for c in (qid, tab.column("doc")):
        if pc.min(pc.binary_length(c)).as_py() == 0:
            return None
    tag_col = tab.column("tag")
    return tab.column("qid"), tab.column("doc"), score, tag_col[len(tag_col) - 1].as_py()


def _json_line_of(text: str, key: str) -> int:
    pos = text.find(json.dumps(key))
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 1


def _json_pairs(text: str, path: str, what: str):
    """Flatten ``{qid: {docid: value}}``; ``what`` is 'score' (finite number) or 'grade' (integer)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    if not isinstance(obj, dict):
        raise InputError("JSON must be an object {qid: {docid: " + what + "}}", path, 1)
    qids: list[str] = []
    docs: list[str] = []
    vals: list = []
    lines: list[int] = []
    for q, inner in obj.items():
        if not isinstance(inner, dict):
            raise InputError(f"JSON value for query {q!r} must be an object {{docid: {what}}}", path, _json_line_of(text, q))
        for d, v in inner.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InputError(f"{what} for query {q!r}, doc {d!r} is not a number: {v!r}", path, _json_line_of(text, d))
            if what == "score":
                if not math.isfinite(v):
                    raise InputError(f"score for query {q!r}, doc {d!r} is not finite", path, _json_line_of(text, d))
                vals.append(float(v))
            else:
                if isinstance(v, float) and not v.is_integer():
                    raise InputError(f"grade for query {q!r}, doc {d!r} is not an integer: {v!r}", path, _json_line_of(text, d))
                if not INT32_MIN <= int(v) <= INT32_MAX:
                    raise InputError(f"grade for query {q!r}, doc {d!r} out of range (must fit a 32-bit integer)", path, _json_line_of(text, d))
                vals.append(int(v))
            qids.append(str(q))
            docs.append(str(d))
            lines.append(len(lines) + 1)  # JSON has no per-pair lines; ordinal position instead
    if not qids:
        raise InputError("empty file (no query holds any doc)", path)
    return qids, docs, vals, lines


# ---------------------------------------------------------------------------
# qrels


@dataclass
class RawQrels:
    path: str
    qid: object
    doc: object
    grade: np.ndarray
    line: np.ndarray
    warnings: list[InputWarning] = field(default_factory=list)


def read_qrels(path: str) -> RawQrels:
    """Read TREC qrels ``qid 0 docid grade`` or JSON ``{qid: {docid: grade}}``."""
    text = read_text(path)
    if looks_like_json(text):
        qid, doc, grade, line = _json_pairs(text, path, "grade")
        pa, _ = _pa()
        return RawQrels(path, pa.array(qid, pa.string()), pa.array(doc, pa.string()),
                        np.asarray(grade, dtype=np.int64), np.asarray(line, dtype=np.int64))
    fields = split_fields(text)
    if fields.line.size == 0:
        raise InputError("empty file (only blank or comment lines)", path)
    wrong = fields.n_tokens != 4
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise InputError(f"expected 4 fields 'qid 0 docid grade', found {int(fields.n_tokens[i])}", path, int(fields.line[i]))
    grade = _parse_int_col(_column(fields, 3), fields.line, path, "grade")
    return RawQrels(path, _column(fields, 0), _column(fields, 2), grade, fields.line)


# ---------------------------------------------------------------------------
# strata, corpus, texts


def _tab_lines(path: str):
    text = read_text(path)
    for i, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
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
        if out.get(q, label) != label:
            raise InputError(f"query {q!r} has two labels: {out[q]!r} and {label!r}", path, i)
        out[q] = label
    if not out:
        raise InputError("empty file", path)
    return out


def stratification_name(path: str) -> str:
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    return base.rsplit(".", 1)[0] if "." in base else base


def read_corpus(path: str) -> set[str]:
    """Doc ids: one per line, or the first column of a TSV."""
    ids = {line.split("\t", 1)[0].strip() for _, line in _tab_lines(path)}
    ids.discard("")
    if not ids:
        raise InputError("empty file", path)
    return ids


def read_texts(path: str) -> dict[str, str]:
    """``id<TAB>text`` per line."""
    out: dict[str, str] = {}
    for i, line in _tab_lines(path):
        if "\t" not in line:
            raise InputError("expected 'id<TAB>text' (no tab on this line)", path, i)
        k, v = line.split("\t", 1)
        out[k.strip()] = v.strip()
    return out


# ---------------------------------------------------------------------------
# fingerprints and atomic output


def sha256_of(path: str) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_output_path(out: str, inputs: list[str]) -> None:
    """Refuse an output whose directory is missing or which would overwrite an input."""
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise InputError("output directory does not exist", out)
    if os.path.isdir(out):
        raise InputError("output path is a directory", out)
    real = os.path.realpath(out)
    for p in inputs:
        if p and os.path.exists(p) and os.path.realpath(p) == real:
            raise InputError("output path is an input file; refusing to overwrite an input", out)


def write_atomic(path: str, data: str | bytes) -> None:
    """Write to a temporary file in the same directory, fsync, then rename into place."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".rankscope-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def dumps_strict(obj) -> str:
    """Strict JSON (no NaN/Infinity), sorted keys off: key order is the report's order."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def path_exists(p: str | None) -> bool:
    return bool(p) and Path(p).exists()
