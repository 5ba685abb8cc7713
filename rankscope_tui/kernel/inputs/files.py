"""Reading input files: their bytes, their text, their digest, strict JSON.

What may be read: a regular file, or a pipe -- ``<(zcat x.gz)`` (``/dev/fd/N``),
``/dev/stdin`` fed by a pipe, or a named FIFO (read as it streams; when no writer has
opened a FIFO yet a note "waiting for a writer" goes to stderr, and Ctrl-C stops the
wait). A directory, a character or block device (``/dev/zero``, a terminal) and a
socket are refused. A pipe is read once: its digest is taken from the bytes read.

Compression is recognised by its magic bytes (never by the name): gzip, bzip2 and xz
(the standard library), zstd and lz4 frames (pyarrow's codecs). Content is
decompressed in 1 MiB steps and may not exceed the input size limit
(:func:`input_size_limit`: min(32 GiB, a quarter of physical memory, a quarter of the
address space the process's limit leaves, when one is set), or ``RANKSCOPE_MAX_INPUT_BYTES``); the same
limit applies to a file or pipe read whole. A NUL byte stops the read at once (a
binary file), so ``/dev/zero``-like content costs one step, not the whole file --
except in content starting with Parquet's magic bytes ``PAR1`` (binary by design).

Text is UTF-8, strict, with a leading BOM dropped; a BOM anywhere else (two files
concatenated) is refused; a lone CR (classic Mac line ends) is a line end, as LF and
CRLF are. Every refusal is an :class:`InputError` naming the file (and the line, when
one is known): a missing path, a permission problem, a directory, a device, a
truncated or corrupt compressed file, content over the limit, an empty file, a NUL
byte, bytes that are not UTF-8, JSON that does not parse, holds NaN/Infinity or
repeats a key within one object.

The digest of an input is the sha256 of its bytes *as stored* (compressed if it is),
so a report names exactly the file that was read.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import io
import json
import lzma
import math
import os
import stat
import sys
import threading
import zlib
from types import TracebackType
from typing import Any, NoReturn, Protocol

from ..errors import InputError

_STEP = 1 << 20

#: The name every temporary entry rankscope writes starts with (``report.output`` makes
#: them; the demo writer skips them). Here, at the bottom of the kernel, so that reading
#: inputs never imports the report room.
TEMP_PREFIX = ".rankscope-"

# magic bytes -> compression name
COMPRESSIONS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
                (b"\x28\xb5\x2f\xfd", "zstd"), (b"\x04\x22\x4d\x18", "lz4"))
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4")
PARQUET_MAGIC = b"PAR1"  # binary content read whole (formats.detect), not refused for its NUL bytes


#: lz4's legacy format (``lz4 -l``): recognised, to be refused by name (pyarrow reads frames only)
LZ4_LEGACY_MAGIC = b"\x02\x21\x4c\x18"


def compression_of(head: bytes) -> str | None:
    """The compression whose magic bytes start ``head`` (gzip, bzip2, xz, zstd, lz4), else None.
    A zstd file may start with a skippable frame (magic 0x184D2A50-0x184D2A5F, little-endian);
    ``"lz4-legacy"`` names lz4's legacy format."""
    for magic, name in COMPRESSIONS:
        if head[:len(magic)] == magic:
            return name
    if len(head) >= 4 and 0x50 <= head[0] <= 0x5F and head[1:4] == b"\x2a\x4d\x18":
        return "zstd"
    if head[:4] == LZ4_LEGACY_MAGIC:
        return "lz4-legacy"
    return None


class Streams:
    """The content of bzip2 or xz data of one or more streams (as ``bzip2``/``xz -d``
    read concatenated streams), decompressed in steps of at most ``n`` bytes. Bytes
    after the last stream that do not start another are refused (``OSError``), as gzip
    refuses them: the standard library's readers drop them silently. xz's stream padding
    (NUL bytes in groups of four) is allowed between and after streams."""

    _MAGIC = {"bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}

    def __init__(self, name: str, fh: Any):
        self.name, self.fh = name, fh
        self.pending = b""  # input read but not yet given to a decompressor
        self.dec: Any = self._new()
        self.done = False

    def _new(self) -> Any:
        return bz2.BZ2Decompressor() if self.name == "bzip2" else lzma.LZMADecompressor(format=lzma.FORMAT_XZ)

    def _more(self) -> bytes:
        if self.pending:
            piece, self.pending = self.pending, b""
            return piece
        return bytes(self.fh.read(_STEP))

    def _next_stream(self) -> None:
        """After a stream's end: the next stream, or the end of the content."""
        rest = self.dec.unused_data
        while True:
            if not rest:
                rest = self._more()
                if not rest:
                    self.done = True
                    return
            if self.name == "xz":
                k = 0
                while rest[k:k + 4] == b"\x00\x00\x00\x00":
                    k += 4
                rest = rest[k:]
                if not rest:
                    continue
            magic = self._MAGIC[self.name]
            if len(rest) < len(magic):
                extra = self._more()
                if extra:
                    rest += extra
                    continue
            if rest[:len(magic)] != magic:
                raise OSError(f"trailing bytes after the last {self.name} stream")
            self.pending, self.dec = rest, self._new()
            return

    def read(self, n: int = _STEP) -> bytes:
        while not self.done:
            if self.dec.eof:
                self._next_stream()
                continue
            if self.dec.needs_input:
                piece = self._more()
                if not piece:
                    raise EOFError(f"the {self.name} content ends before its end-of-stream marker")
                out = self.dec.decompress(piece, n)
            else:
                out = self.dec.decompress(b"", n)
            if out:
                return bytes(out)
        return b""

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> "Streams":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def strip_compressed_suffix(base: str) -> str:
    for suf in COMPRESSED_SUFFIXES:
        if base.endswith(suf) and len(base) > len(suf):
            return base[:-len(suf)]
    return base


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


LIMIT_RULE = ("min(32 GiB, 1/4 of physical memory, 1/4 of the address space left under its limit); "
              "RANKSCOPE_MAX_INPUT_BYTES sets it")


def _address_space_in_use() -> int:
    """This process's mapped address space in bytes (``VmSize``: the interpreter, numpy,
    pyarrow and their thread stacks already hold several hundred MB of it), 0 where
    ``/proc`` does not say."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def input_size_limit() -> int:
    """Most content bytes one input read whole into memory may hold (compressed content once
    decompressed, a pipe, a file the general reader takes): min(32 GiB, a quarter of
    physical memory, a quarter of the address space RLIMIT_AS leaves, when set, beyond
    what the process maps already) -- reading, decompressing, encoding and ordering a run
    takes about 3.5 times its text (measured: 3.7x for a gzip run of 93 MB of text; a
    quarter of the whole limit let a 700 MB run through under a 3 GB limit, which the
    process's own 300 MB then left short). ``RANKSCOPE_MAX_INPUT_BYTES`` overrides it. (A
    clean uncompressed run is streamed by pyarrow, not held whole.)"""
    env = os.environ.get("RANKSCOPE_MAX_INPUT_BYTES")
    if env:
        try:
            v = int(env)
        except ValueError:
            v = 0
        if v < 1:
            raise InputError(f"must be a positive integer (bytes), not {env!r}"[:200], "RANKSCOPE_MAX_INPUT_BYTES")
        return v
    cap = 32 << 30
    try:
        cap = min(cap, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4)
    except (ValueError, OSError, AttributeError):
        pass
    try:
        import resource  # Unix only: elsewhere the ImportError below skips this cap

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            cap = min(cap, max(0, soft - _address_space_in_use()) // 4)
    except (ImportError, ValueError, OSError):
        pass
    return max(cap, 1 << 20)


def _stat_error(exc: OSError, p: str) -> InputError:
    if exc.errno == errno.ENOENT:
        return InputError("no such file", p)
    if exc.errno == errno.EACCES or exc.errno == errno.EPERM:
        return InputError("permission denied", p)
    if exc.errno == errno.ENOTDIR:
        return InputError("not a file: a part of this path before the last '/' is not a directory", p)
    if exc.errno == errno.ENAMETOOLONG:
        return InputError("file name too long", p)
    if exc.errno == errno.ELOOP:
        return InputError("too many levels of symbolic links", p)
    return InputError(f"cannot read: {exc.strerror or exc}", p)


def file_kind(p: str) -> str:
    """``"regular"`` or ``"pipe"`` (an anonymous pipe or a named FIFO); anything else is refused."""
    if p == "":
        raise InputError("empty path", "''")
    try:
        st = os.stat(p)
    except OSError as exc:
        raise _stat_error(exc, p) from None
    except ValueError:  # e.g. an embedded NUL
        raise InputError("not a valid path", repr(p)) from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return "regular"
    if stat.S_ISFIFO(mode):
        return "pipe"
    if stat.S_ISDIR(mode):
        if any(name.startswith("bucket=") for name in _names_in(p)):  # scale/given.py's datasets
            raise InputError("is a directory of query buckets (bucket=K/): evaluate, compare and calibrate read it "
                             "in buckets; here a file is needed", p)
        raise InputError("is a directory, not a file", p)
    if stat.S_ISCHR(mode):
        raise InputError("is a character device (e.g. /dev/zero or a terminal), not a file; "
                         "give a file or a pipe", p)
    if stat.S_ISBLK(mode):
        raise InputError("is a block device, not a file", p)
    if stat.S_ISSOCK(mode):
        raise InputError("is a socket, not a file", p)
    raise InputError("is not a regular file", p)


def _names_in(p: str) -> list[str]:
    try:
        return os.listdir(p)
    except OSError:
        return []


def check_file(p: str) -> str:
    """Refuse what cannot be read as an input (see :func:`file_kind`); returns the kind."""
    return file_kind(p)


class _Stream(Protocol):
    """What :func:`_read_all` reads: a file, a decompressing file, a pyarrow input stream."""

    def read(self, size: int = ..., /) -> bytes: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> Any: ...


def _note_from_a_thread(text: str) -> None:
    """Write ``text`` to stderr from a daemon thread (the FIFO note's timer, perhaps in the
    dashboard's loading thread). Through ``sys.stderr`` only while something stands in for
    it (the dashboard's print capture, a test's); the process's own stderr gets the bytes
    with ``os.write``, which takes no lock of the interpreter's: a daemon thread blocked
    while holding the stderr object's lock (a full pipe, a stopped terminal) would make
    the interpreter abort at shutdown ("could not acquire lock for <stderr>"). Nothing is
    written once the interpreter is shutting down."""
    if sys.is_finalizing():
        return
    err: Any = sys.stderr
    if err is None:
        return
    stand_in = err is not sys.__stderr__
    try:
        if stand_in:
            err.write(text)
            err.flush()
            return
        os.write(err.fileno(), text.encode("utf-8", "backslashreplace"))
    except (OSError, ValueError, io.UnsupportedOperation):  # a closed or detached stderr: the note is not essential
        pass


def _open_input(p: str, kind: str) -> io.BufferedReader:
    """Open for reading; a FIFO with no writer yet gets a stderr note after a moment
    (the open blocks until one comes; Ctrl-C interrupts it)."""
    timer = None
    if kind == "pipe":
        def note() -> None:
            shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in p)
            _note_from_a_thread(f"rankscope: note: {shown}: waiting for a writer on this pipe (Ctrl-C to stop)\n")

        timer = threading.Timer(1.0, note)
        timer.daemon = True
        timer.start()
    try:
        return open(p, "rb")
    except OSError as exc:
        raise _stat_error(exc, p) from None
    finally:
        if timer is not None:
            timer.cancel()


def _too_large(p: str, limit: int, what: str) -> InputError:
    return InputError(f"{what} more than {_gib(limit)}, the input size limit ({LIMIT_RULE})", p)


def line_number(buf: bytes | bytearray | memoryview, pos: int) -> int:
    """The 1-based line of byte ``pos``, lines ended by LF, CRLF or a lone CR (as the
    readers split them: a CR-only file has as many lines as CRs)."""
    data = buf if isinstance(buf, (bytes, bytearray)) else bytes(buf[:pos])
    return data.count(b"\n", 0, pos) + data.count(b"\r", 0, pos) - data.count(b"\r\n", 0, pos) + 1


def _nul_error(buf: bytearray, start: int, p: str) -> InputError | None:
    nul = buf.find(b"\x00", start)
    if nul < 0:
        return None
    return InputError("binary file (NUL byte)", p, line_number(buf, nul))


def _read_all(fh: _Stream, p: str, limit: int, what: str, check_nul: bool | None = True) -> bytearray:
    """Read ``fh`` to its end in 1 MiB steps, at most ``limit`` bytes; a NUL byte stops it.
    ``check_nul=None``: check unless the first step starts with a compression's (or
    Parquet's) magic bytes."""
    out = bytearray()
    while True:
        chunk = fh.read(_STEP)
        if not chunk:
            return out
        start = len(out)
        if start + len(chunk) > limit:
            raise _too_large(p, limit, what)
        out += chunk
        if check_nul is None:
            check_nul = compression_of(bytes(out[:6])) is None and bytes(out[:4]) != PARQUET_MAGIC
        if check_nul:
            err = _nul_error(out, start, p)
            if err is not None:
                raise err


def _decompressor(name: str, stored: bytearray) -> _Stream | None:
    if name == "gzip":
        return gzip.GzipFile(fileobj=io.BytesIO(stored))
    if name in ("bzip2", "xz"):
        return Streams(name, io.BytesIO(stored))
    import pyarrow as pa  # zstd and lz4 only: the files room serves light processes (demo, rules) without pyarrow

    codec = "zstd" if name == "zstd" else "lz4"
    if not pa.Codec.is_available(codec):
        return None
    stream: _Stream = pa.CompressedInputStream(pa.BufferReader(pa.py_buffer(stored)), codec)
    return stream


_PIPE_DIGESTS: dict[str, str] = {}  # sha256 of the bytes read from a pipe (it cannot be read twice)


def read_bytes(p: str) -> tuple[bytearray, bytearray]:
    """(bytes of the file as stored, content bytes): compression by magic bytes, decompressed
    in steps up to :func:`input_size_limit`; a NUL byte in the content is refused at once."""
    kind = check_file(p)
    limit = input_size_limit()
    try:
        if kind == "regular":
            size = os.path.getsize(p)
            if size > limit:
                raise _too_large(p, limit, "holds")
        with _open_input(p, kind) as fh:
            stored = _read_all(fh, p, limit, "holds", check_nul=None)
    except MemoryError:
        raise InputError("out of memory while reading it", p) from None
    except OSError as exc:
        raise _stat_error(exc, p) from None
    if kind == "pipe":
        _PIPE_DIGESTS[p] = hashlib.sha256(stored).hexdigest()
    name = compression_of(bytes(stored[:6]))
    if name is None:
        return stored, stored
    if name == "lz4-legacy":
        raise InputError("lz4 legacy format (written by lz4 -l): not read; recompress it as an lz4 frame "
                         "(lz4 without -l)", p)
    dec = _decompressor(name, stored)
    if dec is None:
        raise InputError(f"{name}-compressed, and this pyarrow has no {name} codec: decompress it first", p)
    try:
        with dec:
            raw = _read_all(dec, p, limit, f"decompresses ({name}) to", check_nul=None)
    except InputError:
        raise
    except MemoryError:
        raise InputError(f"out of memory while decompressing it ({name})", p) from None
    except (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise InputError(f"truncated or corrupt {name} ({exc})"[:300], p) from None
    except Exception as exc:  # pyarrow's codec errors (ArrowInvalid, ...)
        if type(exc).__module__.startswith("pyarrow"):
            raise InputError(f"truncated or corrupt {name} ({exc})"[:300], p) from None
        raise
    return stored, raw


def _blank(raw: bytes | bytearray) -> bool:
    """Whether content holds only ASCII whitespace, looked at a step at a time (content
    with a record stops at its first step; nothing the size of the content is made)."""
    view = memoryview(raw)
    for i in range(0, len(view), _STEP):
        if bytes(view[i:i + _STEP]).strip():
            return False
    return True


def decode_text(raw: bytes | bytearray, p: str) -> str:
    """Content bytes as text: UTF-8 strict, a leading BOM dropped, a lone CR read as a line
    end; refuses empty (or BOM-only), binary and non-UTF-8 input and a BOM past the start."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise InputError("binary file (NUL byte)", p, line_number(raw, nul))
    if _blank(raw):  # before decoding: a whitespace bomb would cost its size again as text
        raise InputError("empty file", p)
    try:
        text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_number(raw, exc.start)
        raise InputError(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", p, line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    bom = text.find("\ufeff")
    if bom >= 0:
        raise InputError("a byte-order mark (U+FEFF) inside the file, not at its start (two files "
                         "concatenated?): remove it", p, text.count("\n", 0, bom) + 1)
    if not text.strip():
        raise InputError("empty file", p)
    if "\r" in text and text.count("\r") != text.count("\r\n"):  # lone CRs: line ends too
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_text(path: str | os.PathLike[str]) -> str:
    """Whole file as text (:func:`read_bytes`, then :func:`decode_text`)."""
    p = str(path)
    return decode_text(read_bytes(p)[1], p)


class Digest:
    """sha256 of a file's stored bytes: taken from bytes already in memory when the file
    was read whole (gzip, the general reader), else computed from the file on first
    ``hexdigest()`` -- which ``Workspace.from_raw`` asks for on a background thread
    while it encodes (``parallel.in_background``, joined before it returns), so a large
    plain run's hash overlaps the sorting instead of preceding it.

    Thread-safe: a second caller waits for the first caller's result."""

    def __init__(self, data: bytes | bytearray | memoryview | None = None, path: str | None = None,
                 hexdigest: str | None = None) -> None:
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
                assert self._path is not None, "a Digest is made from bytes, a path or a hex digest"
                try:
                    self._hex = sha256_of(self._path)
                except OSError as exc:  # e.g. removed between parsing and hashing
                    raise InputError(f"cannot read: {exc.strerror or exc}", self._path) from None
            return self._hex


def sha256_of(path: str) -> str:
    """sha256 of a file's bytes; of a pipe already read, the digest of what was read."""
    if path in _PIPE_DIGESTS and not os.path.isfile(path):
        return _PIPE_DIGESTS[path]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_json(text: str, path: str) -> Any:
    """``json.loads`` whose every failure is an ``InputError`` naming the file and line:
    syntax errors, integer literals past Python's digit limit, nesting too deep, and
    NaN/Infinity literals (not JSON)."""
    def no_constants(name: str) -> NoReturn:
        raise InputError(f"{name} is not a JSON number", path, 1)

    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # json.loads keeps the last of two equal keys: a pre-registered rule or a fitted
        # threshold could be weakened invisibly, so a repeat is refused.
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise InputError(f"key {key!r} appears twice in one object"[:200], path, _line_of_repeat(text, key))
            out[key] = value
        return out

    try:
        return json.loads(text, parse_constant=no_constants, object_pairs_hook=no_repeats)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path, 1) from None
    except ValueError as exc:  # e.g. an integer literal with more than 4300 digits
        raise InputError(f"invalid JSON: {exc}", path, 1) from None


def _line_of_repeat(text: str, key: str) -> int:
    """The line of the second occurrence of ``key`` as a JSON string (1 when not found as written)."""
    quoted = json.dumps(key)
    first = text.find(quoted)
    second = text.find(quoted, first + 1) if first >= 0 else -1
    return text.count("\n", 0, second) + 1 if second >= 0 else 1


def as_finite_number(value: object, what: str, path: str, line: int) -> float:
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
