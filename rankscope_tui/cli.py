"""The ``rankscope`` program: start-up, the guarded stdout, the signals, and ``main``,
which hands the command line to its command (``commands/``). Nothing is computed here,
and nothing heavy is imported until a command runs (``import rankscope_tui.cli`` stays light)."""

from __future__ import annotations

import os
import sys

from .kernel.errors import InputError


def process_setup() -> None:
    """Process-wide memory settings for a rankscope run (never applied on a library import)."""
    # pyarrow's default pool (mimalloc) costs more page-fault time on the large numpy
    # arrays that follow a big read (benchmarks/README.md); only a default, set before
    # pyarrow loads, so an explicit ARROW_DEFAULT_MEMORY_POOL wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # numpy asks for transparent huge pages on large arrays; where the kernel then
    # compacts memory on the page fault, a first evaluation measured up to 1 s slower
    # and far more variable (benchmarks/README.md). Read by numpy at import.
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    # numpy's OpenBLAS starts a worker thread per CPU at import, and they spin-wait for a
    # while: about 0.1 s of CPU in every process (half the CPU of `import numpy`), taken
    # from the work's own threads on a busy machine. The kernel's one BLAS call (the
    # bootstrap's counts @ values, resampling.bootstrap_means_counted) sums integers
    # exactly and is cut small enough to run on the calling thread anyway, so one BLAS
    # thread changes no result. Only a default, set before numpy loads: an explicit
    # OPENBLAS_NUM_THREADS wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .startup import tune_allocator

    tune_allocator()


class StdoutError(InputError):
    """Writing the text output failed (a full disk, a closed or broken stream)."""


class _GuardedStdout:
    """``sys.stdout`` while a command runs: a failed write or flush becomes a
    :class:`StdoutError` (one line, exit 2) instead of a traceback; a reader that went
    away (``| head``) is a :class:`BrokenPipeError` as before."""

    def __init__(self, stream):
        self._stream = stream

    def _guard(self, op, *a):
        try:
            return op(*a)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            raise StdoutError(f"cannot write the output text: {getattr(exc, 'strerror', None) or exc}", "stdout") from None

    def write(self, text):
        return self._guard(self._stream.write, text)

    def flush(self):
        return self._guard(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's own flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


#: Signals that unwind like Ctrl-C (temporary files removed, exit 130): SIGTERM (kill,
#: a service manager) and SIGHUP (the terminal or ssh session closed).
UNWIND_SIGNALS = ("SIGTERM", "SIGHUP")


def _set_handlers(handler) -> dict:
    """Set ``handler`` for SIGINT and :data:`UNWIND_SIGNALS`; the previous handlers by number
    (none outside the main thread, e.g. a test runner's worker, where no handler can be set).
    A signal ignored when the process started stays ignored (``nohup``; a background job
    of a script, which its shell starts with SIGINT ignored)."""
    import signal

    previous = {}
    for name in ("SIGINT", *UNWIND_SIGNALS):
        num = getattr(signal, name, None)
        if num is None:  # no such signal here
            continue
        if signal.getsignal(num) is signal.SIG_IGN:
            continue
        try:
            previous[num] = signal.signal(num, handler)
        except ValueError:
            break
    return previous


def _restore_handlers(previous: dict) -> None:
    import signal

    for num, handler in previous.items():
        if handler is not None:  # None: set outside Python, cannot be put back from here
            signal.signal(num, handler)


def _noted(signum, frame) -> None:
    """A signal while the run unwinds from an earlier one: nothing more to do. (A Python
    handler, not SIG_IGN, which a spawned worker process would inherit.)"""


def _unwind(signum, frame):
    """The first signal unwinds like Ctrl-C (temporary files removed, "interrupted", exit
    130). Later ones (``timeout``, ``docker stop`` and systemd send two; a second Ctrl-C)
    are noted only: raised again they would cut that clean-up short and end in a traceback."""
    _set_handlers(_noted)
    raise KeyboardInterrupt


def _exit_now(signum, frame):
    """A signal once the command has returned: its outputs are in place or removed, so the
    process ends at once, quietly, with the status of an interrupted run."""
    os._exit(130)


#: Commands that run to completion and exit: their process may skip the interpreter's
#: teardown once their outputs are in place (``tui`` is interactive and left alone).
BATCH_COMMANDS = ("evaluate", "demo", "calibrate", "compare", "diff", "verdict", "explain", "goldens", "plot", "agree", "run", "config")


def main(argv: list[str] | None = None) -> int:
    """The ``rankscope`` command: its exit status. Run as the program (``argv`` None), a batch
    command leaves through :func:`_leave` once it returned: its outputs are renamed into
    place and its streams flushed by then, so only the interpreter's teardown is skipped."""
    import gc

    words = sys.argv[1:] if argv is None else list(argv)
    # The run's objects live until it ends: the collector finds no cycle worth its passes
    # over the imported modules' objects, so those are frozen and passes are rarer.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 50_000), *threshold[1:])
    previous = _set_handlers(_unwind)
    try:
        rc = _main(words)
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
        if argv is None:  # the program: a signal from here to the end leaves at once, without a traceback
            _set_handlers(_exit_now)
        else:  # a call (a test, an embedding program): its own handlers back
            _restore_handlers(previous)
    if argv is None and words and words[0] in BATCH_COMMANDS:
        _leave(rc)
    return rc


def _leave(rc: int) -> None:
    """End the process now with status ``rc``, without the interpreter's teardown (freeing
    every object one by one, hundreds of milliseconds after a large run). Not while a
    tracer or profiler is attached, a thread of ours or a child process still runs, or a
    stream does not flush (then the ordinary exit reports it as before)."""
    import threading

    if sys.gettrace() is not None or sys.getprofile() is not None or threading.active_count() > 1:
        return
    mp = sys.modules.get("multiprocessing")
    if mp is not None and mp.active_children():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(rc)


def _main(words: list[str]) -> int:
    process_setup()

    from .commands import COMMANDS, build_parser
    from .commands.options import PROG, in_flags
    from .kernel.errors import SettingError

    real_stdout = sys.stdout
    try:
        if real_stdout is None or _closed(real_stdout):
            raise StdoutError("stdout is closed; redirect it (> /dev/null) to discard the text output", "stdout")
        sys.stdout = _GuardedStdout(real_stdout)
        parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
        args = parser.parse_args(words)
        if getattr(args, "measures_from", None):
            from .kernel import load_measures, measures_scope

            with measures_scope():  # the definitions live for this command only
                for path in args.measures_from:
                    load_measures(path)
                rc = int(args.func(args) or 0)
        else:
            rc = int(args.func(args) or 0)
        sys.stdout.flush()
        return rc
    except InputError as exc:  # a usage error (CliError) is one too
        if isinstance(exc, SettingError):  # a setting out of range, named by its option
            exc = in_flags(exc)
        if isinstance(exc, StdoutError):
            _silence_stdout()
        from .render.escaping import escape_control

        msg = escape_control(" ".join(str(exc).split("\n")))  # a name or path never drives the terminal
        sys.stderr.write(f"{PROG}: error: {msg}\n")
        return 2
    except (MemoryError, RuntimeError, ImportError) as exc:  # at any stage (reading, ranking, resampling, a late import): nothing renamed into place
        from .kernel.errors import OUT_OF_MEMORY, is_out_of_memory

        if not is_out_of_memory(exc):
            raise
        sys.stderr.write(f"{PROG}: error: {OUT_OF_MEMORY}; --buckets N evaluates in query buckets\n")
        return 2
    except KeyboardInterrupt:
        try:
            sys.stderr.write(f"{PROG}: interrupted\n")
        except OSError:  # a SIGHUP: the terminal hung up, and nobody is left to tell
            pass
        return 130
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        _silence_stdout()
        return 0
    finally:
        sys.stdout = real_stdout


def _closed(stream) -> bool:
    """Whether stdout is closed (``>&-``): Python then has no stream, or one on a dead descriptor."""
    import io

    try:
        if stream.closed:
            return True
        fd = stream.fileno()
    except io.UnsupportedOperation:  # a stream without a descriptor (a test's capture): open
        return False
    except (OSError, ValueError, AttributeError):
        return True
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


if __name__ == "__main__":
    sys.exit(main())
