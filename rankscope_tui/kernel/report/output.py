"""Writing outputs: checked before any work, written all-or-nothing, strict JSON.

An output path is checked up front (its directory exists and is writable, it is not
a directory, it is not one of the inputs, no two outputs of one call name the same
file) so a long run never fails at its last step. Where the output lands:

- a new path or a regular file: a temporary file beside it, fsynced, then renamed into
  place, so a reader never sees half a report;
- a symbolic link: followed -- the file it points to is replaced as above (beside the
  target, so the rename stays on one file system) and the link stays a link;
- a FIFO or a character device (``/dev/null``, a terminal, ``/dev/stdout`` of a pipe),
  or the process's own stdout/stderr: written in place, never renamed over (a rename
  would put a regular file where the device or FIFO was). A FIFO nobody reads is refused
  rather than waited on;
- a directory, a block device or a socket: refused.

Several outputs of one call (:func:`write_outputs`) are all-or-nothing: every temporary
file is written first, and only when all of them are complete are they renamed into
place. Every failure is an :class:`InputError` naming the path.

The temporary files are named ``.rankscope-HOST-PID-RANDOM.tmp``. One left behind by a
process killed without a chance to clean up (SIGKILL, a power cut) is removed by the
next rankscope run that writes into the same directory, once the process that made it is
gone (on the same host; a PID now used by a process started after the file was written
counts as gone).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Iterator, Literal

from ..errors import InputError
from ..inputs.files import TEMP_PREFIX

TEMP_SUFFIX = ".tmp"


def _host_tag() -> str:
    import socket  # only a run that writes a file needs it (pyarrow imports it anyway)

    return re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:32] or "host"


def _mkstemp(prefix: str, suffix: str, directory: str) -> tuple[int, str]:
    """``tempfile.mkstemp`` (imported here: only a run that writes a file needs it)."""
    import tempfile

    return tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)


def _temp_prefix() -> str:
    return f"{TEMP_PREFIX}{_host_tag()}-{os.getpid()}-"


_TEMP_RE = re.compile(re.escape(TEMP_PREFIX) + r"(?P<host>[A-Za-z0-9]+)-(?P<pid>\d+)-[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX) + "$")


def _started_after(pid: int, mtime: float) -> bool:
    """Whether the process now holding ``pid`` started after ``mtime`` (so it did not write the file)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        start_ticks = int(fields[19])
        with open("/proc/stat", encoding="ascii") as fh:
            btime = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        return btime + start_ticks / os.sysconf("SC_CLK_TCK") > mtime + 1.0
    except (OSError, ValueError, IndexError, StopIteration):
        return False  # cannot tell: keep the file


def remove_stale_temps(directory: str) -> list[str]:
    """Remove the temporary files of rankscope processes that are gone (killed before they
    could clean up); return the names removed. Only files of this naming pattern, made on
    this host, by a PID that is not running (or is running a process started after the
    file was last written). Never raises."""
    removed: list[str] = []
    host = _host_tag()
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        m = _TEMP_RE.match(name)
        if not m or m.group("host") != host:
            continue
        pid = int(m.group("pid"))
        if pid == os.getpid():
            continue
        path = os.path.join(directory, name)
        try:
            st = os.lstat(path)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):  # (a directory: the demo's)
                continue
            try:
                os.kill(pid, 0)
                alive = not _started_after(pid, st.st_mtime)
            except ProcessLookupError:
                alive = False
            except PermissionError:  # a process of another user holds the PID
                alive = not _started_after(pid, st.st_mtime)
            if not alive:
                if stat.S_ISDIR(st.st_mode):
                    import shutil

                    shutil.rmtree(path)
                else:
                    os.unlink(path)
                removed.append(name)
        except OSError:
            continue
    return removed


# ---------------------------------------------------------------------------- where a write lands


_STREAM, _REPLACE = "stream", "replace"


def _std_stream_fd(st: os.stat_result) -> int | None:
    """1 or 2 when ``st`` is this process's own stdout or stderr (``--out /dev/stdout``)."""
    for fd in (1, 2):
        try:
            s = os.fstat(fd)
        except OSError:
            continue
        if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
            return fd
    return None


def _target(out: str) -> tuple[str, str, tuple[int, int] | None]:
    """``(how, where, identity)``: ``replace`` a regular file at ``where`` (symbolic links
    followed), or write a ``stream`` (FIFO, character device, own stdout/stderr) in place."""
    try:
        st = os.stat(out)  # follows symbolic links
    except FileNotFoundError:
        if os.path.islink(out):  # a dangling link: the file it names is created
            return _REPLACE, os.path.realpath(out), None
        return _REPLACE, os.path.abspath(out), None
    except OSError as exc:  # a link loop, a path through a regular file, no permission
        raise InputError(f"cannot use as an output: {exc.strerror or exc}", out) from None
    ident = (st.st_dev, st.st_ino)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise InputError("output path is a directory", out)
    if stat.S_ISREG(mode):
        if _std_stream_fd(st) is not None:
            return _STREAM, out, ident
        return _REPLACE, os.path.realpath(out), ident
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return _STREAM, out, ident
    kind = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
    raise InputError(f"output path is {kind}; refusing to write to it", out)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_path(out: str, inputs: list[str]) -> None:
    """Refuse an output whose directory is missing or cannot be written, which is not a
    file one can write (a directory, a block device, a socket), or which would overwrite
    an input (the same path, a symbolic link to it, or a hard link) -- before any work is
    done. Stale temporary files of killed runs in its directory are removed."""
    how, where, ident = _target(out)
    for p in inputs:
        if p and os.path.exists(p) and (_same_file(p, out) or os.path.realpath(p) == where):
            raise InputError("output path is an input file; refusing to overwrite an input", out)
    if how == _STREAM:
        if not os.access(out, os.W_OK):
            raise InputError("output is not writable", out)
        return
    d = os.path.dirname(where)
    if not os.path.isdir(d):
        raise InputError("output directory does not exist", out)
    remove_stale_temps(d)
    try:  # the same temporary file the write will make, made and removed now
        fd, tmp = _mkstemp(_temp_prefix(), TEMP_SUFFIX, d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise InputError(f"output directory is not writable: {exc.strerror or exc}", out) from None


def check_outputs(outputs: list[tuple[str, str | None]], inputs: list[str]) -> None:
    """Check every output of one call (``(option, path)``; None paths skipped) as
    :func:`check_output_path` does, and refuse two outputs naming one file (each would
    clobber the other). ``/dev/null`` (any character device) may take several."""
    seen: list[tuple[str, str, str, tuple[int, int] | None]] = []
    for option, path in outputs:
        if not path:
            continue
        check_output_path(path, inputs)
        how, where, ident = _target(path)
        for o_option, o_path, o_where, o_ident in seen:
            same = (ident is not None and ident == o_ident) or where == o_where
            if same and not (ident is not None and stat.S_ISCHR(os.stat(path).st_mode)):
                raise InputError(f"{option} and {o_option} name the same file; give each output its own path", path)
        seen.append((option, path, where, ident))


# ---------------------------------------------------------------------------- writing


#: Text is encoded this many characters at a time as it is written: a report of a million
#: queries (hundreds of MB) is never held twice, as text and as bytes.
_ENCODE_CHARS = 1 << 22


def _encoded(payload: str | bytes | list[str]) -> Iterator[bytes]:
    """The UTF-8 bytes of ``payload`` in pieces (bytes as they are; a list of str, such as
    :func:`dumps_strict_parts` gives, piece after piece). A cut never splits a character:
    the pieces are cut from the str."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        yield payload
        return
    for text in payload if isinstance(payload, list) else (payload,):
        for i in range(0, len(text), _ENCODE_CHARS):
            yield text[i:i + _ENCODE_CHARS].encode("utf-8")


class _Staged:
    """One output, staged: a complete temporary file beside its target, or an open stream."""

    def __init__(self, path: str, payload: str | bytes | list[str]):
        self.path, self.payload = path, payload
        self.how, self.where, _ = _target(path)
        self.tmp: str | None = None
        self.fd: int | None = None

    def stage(self) -> None:
        if self.how == _STREAM:
            self._open_stream()
            return
        d = os.path.dirname(self.where)
        try:
            fd, self.tmp = _mkstemp(_temp_prefix(), TEMP_SUFFIX, d)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", self.path) from None
        try:
            try:  # the mode of the file replaced, else what an ordinary open() would give
                mode = stat.S_IMODE(os.stat(self.where).st_mode)
            except OSError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(self.tmp, mode)
            with os.fdopen(fd, "wb") as fh:
                for chunk in _encoded(self.payload):
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", self.path) from None

    def _open_stream(self) -> None:
        st = os.stat(self.path)
        std = _std_stream_fd(st)
        if std is not None:
            self.fd = os.dup(std)
            return
        flags = os.O_WRONLY | (os.O_NONBLOCK if stat.S_ISFIFO(st.st_mode) else 0)
        try:
            self.fd = os.open(self.path, flags)
        except OSError as exc:
            import errno

            if exc.errno == errno.ENXIO:
                raise InputError("a FIFO that no process is reading; start the reader first", self.path) from None
            raise InputError(f"cannot write: {exc.strerror or exc}", self.path) from None
        if flags & os.O_NONBLOCK:
            os.set_blocking(self.fd, True)

    def write_stream(self) -> None:
        assert self.fd is not None  # stage() opened the stream
        try:
            for chunk in _encoded(self.payload):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(self.fd, view):]
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", self.path) from None

    def commit(self) -> None:
        if self.tmp is not None:
            try:
                os.replace(self.tmp, self.where)
            except OSError as exc:
                raise InputError(f"cannot write: {exc.strerror or exc}", self.path) from None
            self.tmp = None

    def discard(self) -> None:
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None


class StagedOutputs:
    """``with StagedOutputs([(path, data), ...]) as outs: ...; outs.commit()``: on entry
    every regular output is written to a complete, fsynced temporary file beside its
    target (every FIFO/device opened); ``commit()`` writes the streams and then renames
    every temporary file into place. Leaving the block without ``commit()`` (an error,
    an interrupt) replaces nothing and leaves no temporary file. Work that must succeed
    before any output is replaced (``compare``'s log append) goes inside the block."""

    def __init__(self, items: list[tuple[str, str | bytes | list[str]]]):
        self.staged = [_Staged(p, d) for p, d in items]

    def __enter__(self) -> "StagedOutputs":
        try:
            for s in self.staged:
                s.stage()
        except BaseException:
            self._discard()
            raise
        return self

    def commit(self) -> None:
        for s in self.staged:
            if s.how == _STREAM:
                s.write_stream()
        for s in self.staged:
            s.commit()

    def _discard(self) -> None:
        for s in self.staged:
            s.discard()

    def __exit__(self, *exc: object) -> Literal[False]:
        self._discard()
        return False


def write_outputs(items: list[tuple[str, str | bytes | list[str]]]) -> None:
    """Write several outputs all-or-nothing: every regular file goes to a complete,
    fsynced temporary file first (and every FIFO/device is opened); then the streams are
    written and, only when all that worked, every temporary file is renamed into place.
    On any failure (or an interrupt) no output is replaced and no temporary file stays."""
    with StagedOutputs(items) as outs:
        outs.commit()


def write_atomic(path: str, data: str | bytes) -> None:
    """One output: a temporary file in the target's directory, fsync, then a rename into
    place (a FIFO or device is written in place; see the module docstring)."""
    write_outputs([(path, data)])


def output_bytes(payload: str | bytes | list[str]) -> bytes:
    """The bytes :func:`write_atomic` puts in a file for ``payload`` (UTF-8, nothing
    translated), for an output that leaves the process another way: the dashboard served
    in a browser hands them over as a download, byte for byte the file ``--out`` writes."""
    return b"".join(_encoded(payload))


def dumps_strict(obj: object) -> str:
    """Strict JSON (no NaN/Infinity), sorted keys off: key order is the report's order.
    The text of ``json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)``, written
    a column at a time (``json_text``) and a newline."""
    from .json_text import dumps

    return dumps(obj) + "\n"


def dumps_strict_parts(obj: object) -> list[str]:
    """:func:`dumps_strict`'s text as pieces in order (``json_text.dumps_parts``), which
    :func:`write_outputs` writes one after another: a large report is never joined into
    one string, nor copied to add the newline."""
    from .json_text import dumps_parts

    return dumps_parts(obj) + ["\n"]
