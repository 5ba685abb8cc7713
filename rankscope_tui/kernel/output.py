"""Writing outputs: checked before any work, written atomically, strict JSON.

An output path is checked up front (its directory exists and is writable, it is not
a directory, it is not one of the inputs) so a long run never fails at its last
step; the file is then written to a temporary file beside it, fsynced and renamed
into place, so a reader never sees half a report. Every failure is an
:class:`InputError` naming the path.
"""

from __future__ import annotations

import json
import os
import tempfile

from .errors import InputError


def check_output_path(out: str, inputs: list[str]) -> None:
    """Refuse an output whose directory is missing or cannot be written, or which would
    overwrite an input -- before any work is done."""
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise InputError("output directory does not exist", out)
    if os.path.isdir(out):
        raise InputError("output path is a directory", out)
    real = os.path.realpath(out)
    for p in inputs:
        if p and os.path.exists(p) and os.path.realpath(p) == real:
            raise InputError("output path is an input file; refusing to overwrite an input", out)
    try:  # the same temporary file write_atomic will make, made and removed now
        fd, tmp = tempfile.mkstemp(prefix=".rankscope-", suffix=".tmp", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise InputError(f"output directory is not writable: {exc.strerror or exc}", out) from None


def write_atomic(path: str, data: str | bytes) -> None:
    """Write to a temporary file in the same directory, fsync, then rename into place."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankscope-", suffix=".tmp", dir=d)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path) from None
    try:
        # mkstemp creates 0600; give the file the mode an ordinary open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(f"cannot write: {exc.strerror or exc}", path) from None
        raise


def dumps_strict(obj) -> str:
    """Strict JSON (no NaN/Infinity), sorted keys off: key order is the report's order."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
