"""Reliability at the edges (issue 30, the medium items): signals during exit, memory
errors, the bucket engine's pool and temporary folder, the dashboard's loading thread at
shutdown. Every error is one stderr line ``rankscope: error: ...``, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import cli_env

# ============================================================================ signals during exit

# A CLI run that waits on a FIFO nobody writes to. Its stderr sends the process a signal
# when the "waiting for a writer" note appears (the first: the run unwinds) and another
# when a line holding TRIGGER is written (the second, while the run is unwinding or once
# the command has returned), as `timeout`, `docker stop` or systemd do.
_SIGNAL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from rankscope_tui import cli

    first, second, trigger, fifo, qrels = sys.argv[1:6]

    class Stderr:
        def __init__(self, real):
            self.real = real

        def write(self, text):
            self.real.write(text)
            self.real.flush()
            if "waiting for a writer" in text:
                os.kill(os.getpid(), getattr(signal, first))
            elif trigger in text:
                os.kill(os.getpid(), getattr(signal, second))
            return len(text)

        def flush(self):
            self.real.flush()

        def __getattr__(self, name):
            return getattr(self.real, name)

    sys.stderr = Stderr(sys.stderr)
    if trigger == "LEAVE":  # the second signal once the command has returned (cli._leave runs next)
        leave = cli._leave

        def late(rc):
            os.kill(os.getpid(), getattr(signal, second))
            leave(rc)

        cli._leave = late
    sys.argv = ["rankscope", "evaluate", "--lane", "a=" + fifo, "--qrels", qrels]
    sys.exit(cli.main())
""")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("first,second,trigger", [
    ("SIGTERM", "SIGTERM", "interrupted"),  # the second while "interrupted" is written
    ("SIGTERM", "SIGINT", "interrupted"),
    ("SIGINT", "SIGHUP", "interrupted"),
    ("SIGTERM", "SIGTERM", "LEAVE"),  # the second after the command returned
])
def test_a_second_signal_during_exit_prints_no_traceback(tmp_path, first, second, trigger):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-c", _SIGNAL_SCRIPT, first, second, trigger, str(fifo), str(tmp_path / "q.txt")],
                         capture_output=True, text=True, env=cli_env(), timeout=60)
    assert "Traceback" not in res.stderr and "KeyboardInterrupt" not in res.stderr, res.stderr[-2000:]
    assert res.returncode == 130, (res.returncode, res.stderr[-2000:])
    assert res.stderr.splitlines()[-1] == "rankscope: interrupted", res.stderr


# ============================================================================ the dashboard's loading thread at shutdown

_LOAD_THEN_QUIT = textwrap.dedent("""
    import sys, time
    from rankscope_tui.state import DashboardOptions, start_loading

    start_loading(DashboardOptions(lanes=((None, sys.argv[1]),), qrels=sys.argv[2]))
    time.sleep(2.0)  # the load blocks on the FIFO; its "waiting for a writer" note comes at 1 s
    sys.exit(0)
""")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_daemon_thread_blocked_on_stderr_does_not_abort_the_interpreter_at_shutdown(tmp_path):
    """The dashboard's load is blocked on a FIFO when the program ends (the user quit). Its
    note goes to a stderr that takes no more bytes (a full pipe: deterministic, where a busy
    terminal is a race), so the thread writing it stays blocked during shutdown. Written
    under the stderr object's lock, that made the interpreter abort ("Fatal Python error:
    _enter_buffered_busy", status -6) or, before the interpreter is finalizing, wait on that
    lock for ever; the program must end with its own status."""
    import fcntl

    fifo = tmp_path / "lane.run"
    os.mkfifo(fifo)
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        while True:
            os.write(w, b"x" * 65536)
    except BlockingIOError:  # the pipe is full
        pass
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    try:
        env = cli_env()
        env.pop("PYTHONUNBUFFERED", None)  # stderr as a program normally has it: a buffered stream with a lock
        proc = subprocess.run([sys.executable, "-c", _LOAD_THEN_QUIT, str(fifo), str(tmp_path / "q.txt")],
                              stdout=subprocess.PIPE, stderr=w, env=env, timeout=30)
    except subprocess.TimeoutExpired:  # the exit's flush of stderr waited on the thread's lock
        pytest.fail("the program did not end: its stderr lock was held by the loading thread's note")
    finally:
        os.close(w)
        os.close(r)
    assert proc.returncode == 0, proc.returncode


# ============================================================================ memory: the input limit and running out

# The child maps what a run maps before it reads (the interpreter, numpy, pyarrow, the
# kernel), then limits its address space to that plus HEADROOM: a run of T bytes of text
# needs about 3.5 T more, so a quarter of the whole limit (the old rule) let through a
# run that could not fit.
HEADROOM = 150 * 10**6
_LIMITED = textwrap.dedent("""
    import os, resource, sys
    import numpy, pyarrow  # noqa: F401
    import rankscope_tui.kernel.workspace.loaded  # noqa: F401
    from rankscope_tui import cli

    mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (mapped + int(sys.argv[1]), resource.getrlimit(resource.RLIMIT_AS)[1]))
    sys.exit(cli.main(sys.argv[2:]))
""")


@pytest.fixture(scope="module")
def compressed_run(tmp_path_factory):
    """A gzip run of 66 MB of text (1,500 queries of 1,000 docs) and its qrels."""
    import gzip

    d = tmp_path_factory.mktemp("mem")
    block = [f" Q0 doc{j:07d} {j + 1} {1000 - j}.25 memtest\n".encode() for j in range(1000)]
    text = b"".join(b"".join(b"query%05d" % q + line for line in block) for q in range(1500))
    assert 60 * 10**6 < len(text) < 70 * 10**6
    (d / "run.gz").write_bytes(gzip.compress(text, compresslevel=1))
    (d / "qrels.txt").write_text("".join(f"query{q:05d} 0 doc{q % 1000:07d} 1\n" for q in range(1500)), encoding="utf-8")
    return d, len(text)


def _limited(d: Path, extra_env: dict | None = None, headroom: int = HEADROOM) -> subprocess.CompletedProcess:
    env = cli_env(extra_env)
    return subprocess.run([sys.executable, "-c", _LIMITED, str(headroom), "evaluate", "--lane", f"a={d / 'run.gz'}",
                           "--qrels", str(d / "qrels.txt"), "--resamples", "0", "--out", str(d / "report.json")],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm, sets RLIMIT_AS")
def test_a_compressed_run_that_cannot_fit_is_refused_by_the_size_limit(compressed_run):
    """66 MB of text is under a quarter of the limit (the mapped ~300 MB + 150 MB), but needs
    about 230 MB more than the process has mapped: refused before it is read further, in
    one line naming the file and the limit, exit 2."""
    d, size = compressed_run
    assert size < (HEADROOM + 250 * 10**6) / 4 and 3.5 * size > HEADROOM  # what the old rule let through
    res = _limited(d)
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith(f"rankscope: error: {d / 'run.gz'}: decompresses "
                                                                       "(gzip) to more than "), res.stderr
    assert "the input size limit" in res.stderr and not (d / "report.json").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm, sets RLIMIT_AS")
# 230 MB is left out: there the memory can run out inside pyarrow's CSV parser, which
# aborts the process (a C++ "Check failed", status -6) instead of raising; an open defect
# (issue 30, item 4), not a case this test can hold steady
@pytest.mark.parametrize("headroom_mb", [260])
def test_running_out_of_memory_at_any_stage_is_one_line_exit_2(compressed_run, headroom_mb):
    """The limit raised by RANKSCOPE_MAX_INPUT_BYTES: the run is read and runs out of memory
    later (a MemoryError while decoding or ranking; a thread that cannot get its stack,
    "can't start new thread"): one line, exit 2, nothing written."""
    d, _ = compressed_run
    res = _limited(d, {"RANKSCOPE_MAX_INPUT_BYTES": str(10**12)}, headroom_mb * 10**6)
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert res.stderr.startswith("rankscope: error: ") and "out of memory" in res.stderr, res.stderr
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert not (d / "report.json").exists() and not [p for p in d.iterdir() if p.name.startswith(".rankscope-")]


_IGNORED_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading
    from rankscope_tui import cli

    fifo, qrels = sys.argv[1:3]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as nohup or a script's background job starts it

    class Stderr:
        def __init__(self, real):
            self.real = real

        def write(self, text):
            self.real.write(text)
            if "waiting for a writer" in text:  # Ctrl-C, then the run arrives: it must be read, not interrupted
                os.kill(os.getpid(), signal.SIGINT)
                def feed():
                    with open(fifo, "w") as fh:
                        fh.write("q1 Q0 d1 1 2.0 t\\\\nq1 Q0 d2 2 1.0 t\\\\n")
                threading.Thread(target=feed).start()
            return len(text)

        def flush(self):
            self.real.flush()

        def __getattr__(self, name):
            return getattr(self.real, name)

    sys.stderr = Stderr(sys.stderr)
    sys.exit(cli.main(["evaluate", "--lane", "a=" + fifo, "--qrels", qrels, "--metrics", "rr", "--resamples", "0"]))
""")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_signal_ignored_at_start_stays_ignored(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-c", _IGNORED_SCRIPT, str(fifo), str(tmp_path / "q.txt")],
                         capture_output=True, text=True, env=cli_env(), timeout=60)
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert "interrupted" not in res.stderr and "rr" in res.stdout


def test_the_dashboard_says_out_of_memory_as_the_command_line_does():
    """A load that runs out of memory ends the dashboard with the command line's line (it
    said "internal error: MemoryError: " with nothing after it)."""
    from rankscope_tui.kernel.errors import OUT_OF_MEMORY
    from rankscope_tui.state import error_line

    for exc in (MemoryError(), RuntimeError("can't start new thread")):
        assert error_line(exc) == f"rankscope: error: {OUT_OF_MEMORY}"
    assert error_line(RuntimeError("a fault")) == "rankscope: internal error: RuntimeError: a fault"
