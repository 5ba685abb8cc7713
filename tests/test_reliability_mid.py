"""Reliability at the edges (issue 30, the medium items): signals during exit, memory
errors, the bucket engine's pool and temporary folder, the dashboard's loading thread at
shutdown. Every error is one stderr line ``rankscope: error: ...``, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

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
