"""The comparison log: every ``compare`` call on a qrels file, one JSON line each, so the
reuse of a test set can be counted (each call on the same test queries is one more test:
multiple testing that no per-call correction sees).

A line is ``{"time", "qrels_sha256", "rows": [{baseline, candidate, metric,
randomization_p, verdict}]}``; calls on the same qrels are those with the same sha256.
Appends hold an exclusive ``flock`` while the log is re-read, counted and appended to,
so concurrent calls never lose a line and each counts the calls logged before it.
"""

from __future__ import annotations

import json
import os
import stat
import time
from typing import Any

from ..errors import InputError
from ..inputs.files import load_json

#: What the log keeps of each row (a subset of ``statistics.verdict.ROW_KEYS``).
LOG_KEYS = ("baseline", "candidate", "metric", "randomization_p", "verdict")

#: The words for a log that is not a regular file (a FIFO would block, a directory cannot be appended to).
_NOT_REGULAR = "the log is not a regular file (a comparison log is appended to in place)"


def read_log(path: str) -> list[dict[str, Any]]:
    """The entries of a log file (none when it does not exist yet): one JSON object a
    line, each with the ``qrels_sha256`` it was computed on. Anything else is refused
    with its line (the log counts test-set reuse: a line it cannot read would undercount)."""
    if not os.path.exists(path):  # (a symlink to a file not yet there: the append creates it)
        return []
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # before opening: a FIFO would block the open
            raise InputError(_NOT_REGULAR, path)
        with open(path, "rb") as fh:
            _check_log_file(fh.fileno(), path)
            raw = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read the log: {exc.strerror or exc}", path) from None
    return _parse_log(raw, path)


def _check_log_file(fd: int, path: str) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise InputError(_NOT_REGULAR, path)


def _parse_log(raw: bytes, path: str) -> list[dict[str, Any]]:
    if raw[:2] == b"\x1f\x8b":
        raise InputError("the log is gzip-compressed; a comparison log is plain text appended to in place", path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", path, raw.count(b"\n", 0, exc.start) + 1) from None
    entries = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = load_json(line, path)
        except InputError as exc:
            raise InputError(f"not a comparison log line: {exc.detail}", path, lineno) from None
        if not isinstance(entry, dict) or not isinstance(entry.get("qrels_sha256"), str):
            raise InputError("not a comparison log line (a JSON object with a 'qrels_sha256' string expected)", path, lineno)
        entries.append(entry)
    return entries


def default_log_path(qrels_sha: str, environ: dict[str, str] | None = None) -> str:
    """The per-user log of the comparisons on the qrels of ``qrels_sha`` (compare logs there
    unless ``--log FILE`` or ``--no-log``): ``$XDG_CACHE_HOME/rankscope/comparisons/<sha256>.jsonl``,
    with ``~/.cache`` when ``XDG_CACHE_HOME`` is unset, empty or relative (the XDG base
    directory rule)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rankscope", "comparisons", f"{qrels_sha}.jsonl")


def earlier_p(entries: list[dict[str, Any]], qrels_sha: str) -> tuple[float, ...]:
    """The raw p of every row of the logged calls on these qrels, in log order, for
    ``--reuse-correct``: each logged row is one more hypothesis tested on the same test
    queries. A row logged without a usable p (no test ran) enters as p = 1: it still
    counts in J, and p = 1 never lowers another row's adjusted p below what J alone gives."""
    out: list[float] = []
    for e in entries:
        if e.get("qrels_sha256") != qrels_sha:
            continue
        rows = e.get("rows")
        for r in rows if isinstance(rows, list) else []:
            p = r.get("randomization_p") if isinstance(r, dict) else None
            if isinstance(p, (int, float)) and not isinstance(p, bool) and 0.0 <= float(p) <= 1.0:
                out.append(float(p))
            else:
                out.append(1.0)
    return tuple(out)


def log_count(entries: list[dict[str, Any]], qrels_sha: str) -> int:
    """How many logged calls were on the qrels of this sha256."""
    return sum(1 for e in entries if e.get("qrels_sha256") == qrels_sha)


def log_entry(qrels_sha: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The log line of one call: its UTC time, the qrels' sha256 and :data:`LOG_KEYS` of each row."""
    return {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "qrels_sha256": qrels_sha,
            "rows": [{k: r[k] for k in LOG_KEYS} for r in payload["comparisons"]]}


def append_log(path: str, qrels_sha: str, payload: dict[str, Any], create_dirs: bool = False) -> int:
    """Append this call's entry (``payload``: the ``compare --out`` dict) to the log as one
    whole line, under an exclusive lock (``flock``) held while the log is re-read, counted
    and appended to. Returns how many calls on these qrels were logged before this one.
    ``create_dirs``: make the log's directory first (the per-user cache)."""
    import fcntl

    line = json.dumps(log_entry(qrels_sha, payload), allow_nan=False, ensure_ascii=False).encode("utf-8") + b"\n"
    if create_dirs:
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot write the log: {exc.strerror or exc}", path) from None
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise InputError(f"cannot write the log: {exc.strerror or exc}", path) from None
    try:
        _check_log_file(fd, path)
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as fh:
            fh.seek(0)
            raw = fh.read()
        before = log_count(_parse_log(raw, path), qrels_sha)
        if raw and not raw.endswith(b"\n"):  # a last line without its newline: end it first
            line = b"\n" + line
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, len(raw))  # never leave half a line (e.g. the disk filled up)
            raise
        return before
    except OSError as exc:
        raise InputError(f"cannot write the log: {exc.strerror or exc}", path) from None
    finally:
        os.close(fd)  # releases the lock
