"""Reading input files: their bytes, their text, their digest, strict JSON.

A file is read whole: gzip is recognised by its magic bytes (never by the name) and
decompressed; text is UTF-8, strict, with a leading BOM dropped. Every refusal is an
:class:`InputError` naming the file (and the line, when one is known): a missing
path, a directory, a truncated or corrupt gzip, an empty file, a NUL byte, bytes
that are not UTF-8, JSON that does not parse or holds NaN/Infinity.

The digest of an input is the sha256 of its bytes *as stored* (compressed if it is
gzip), so a report names exactly the file that was read.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import zlib

from .errors import InputError


def check_file(p: str) -> None:
    if not os.path.exists(p):
        raise InputError("no such file", p)
    if os.path.isdir(p):
        raise InputError("is a directory, not a file", p)


def read_bytes(p: str) -> tuple[bytes, bytes]:
    """(bytes of the file as stored, content bytes): gzip by magic bytes, decompressed."""
    check_file(p)
    try:
        with open(p, "rb") as fh:
            stored = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", p) from None
    raw = stored
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"truncated or corrupt gzip ({exc})", p) from None
    return stored, raw


def decode_text(raw: bytes, p: str) -> str:
    """Content bytes as text: UTF-8 strict, BOM dropped; refuses empty, binary and non-UTF-8 input."""
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


def read_text(path: str | os.PathLike) -> str:
    """Whole file as text: gzip by magic bytes, UTF-8 strict, BOM dropped.

    Refuses a missing path, a directory, an empty file, a truncated or corrupt
    gzip, a binary file (NUL bytes) and non-UTF-8 bytes (naming the line).
    """
    p = str(path)
    return decode_text(read_bytes(p)[1], p)


class Digest:
    """sha256 of a file's stored bytes: taken from bytes already in memory when the file
    was read whole (gzip, the general reader), else computed from the file on first
    ``hexdigest()`` -- which ``Workspace.from_raw`` asks for on a background thread
    while it encodes (``parallel.in_background``, joined before it returns), so a large
    plain run's hash overlaps the sorting instead of preceding it.

    Thread-safe: a second caller waits for the first caller's result."""

    def __init__(self, data=None, path: str | None = None, hexdigest: str | None = None):
        import threading

        self._path = path
        self._hex: str | None = hexdigest
        self._lock = threading.Lock()
        if data is not None:
            self._hex = hashlib.sha256(data).hexdigest()

    @property
    def pending(self) -> bool:
        return self._hex is None

    def hexdigest(self) -> str:
        with self._lock:
            if self._hex is None:
                try:
                    self._hex = sha256_of(self._path)
                except OSError as exc:  # e.g. removed between parsing and hashing
                    raise InputError(f"cannot read: {exc.strerror or exc}", self._path) from None
            return self._hex


def sha256_of(path: str) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_json(text: str, path: str):
    """``json.loads`` whose every failure is an ``InputError`` naming the file and line:
    syntax errors, integer literals past Python's digit limit, nesting too deep, and
    NaN/Infinity literals (not JSON)."""
    def no_constants(name: str):
        raise InputError(f"{name} is not a JSON number", path, 1)

    try:
        return json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path, 1) from None
    except ValueError as exc:  # e.g. an integer literal with more than 4300 digits
        raise InputError(f"invalid JSON: {exc}", path, 1) from None


def as_finite_number(value, what: str, path: str, line: int) -> float:
    """A JSON number as a finite float, or an InputError (bools, strings, huge integers refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, not {value!r}"[:200], path, line)
    try:
        x = float(value)
    except OverflowError:
        raise InputError(f"{what} is too large", path, line) from None
    if not math.isfinite(x):
        raise InputError(f"{what} must be finite", path, line)
    return x
