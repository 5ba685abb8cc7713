"""The dashboard leaves when its terminal hangs up, also when the SIGHUP goes elsewhere.

Closing a terminal (or an ssh session) sends SIGHUP to the terminal's session leader. Under
``make demo`` that leader is make, which catches the signal and waits for its child: the
dashboard gets no signal, reads end-of-file from the hung-up terminal and, before the
terminal watch, spun at full CPU for ever. Here a shell that traps SIGHUP (as make does)
leads a session on a pseudo-terminal and runs the dashboard on the built-in demo; the
terminal's master side is closed once the first frame is drawn, and the dashboard must be
gone within seconds, with the status of an interrupted run.
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest
from support import cli_env

#: run ARGV in a session of its own whose controlling terminal is its stdin (a launcher, not
#: ``preexec_fn``, which is unsafe in a test process that runs threads)
SESSION = ("import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
           "os.execvp(sys.argv[1], sys.argv[1:])")


def _read_until(fd: int, needle: bytes, seconds: float) -> bytes:
    seen = b""
    end = time.monotonic() + seconds
    while needle not in seen and time.monotonic() < end:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
    return seen


@pytest.mark.parametrize("trap", [":", ""], ids=["leader-handles-sighup", "sighup-ignored-nohup"])
def test_the_dashboard_leaves_when_its_terminal_hangs_up_and_the_leader_keeps_the_signal(tmp_path, trap):
    """``trap ":" HUP``: the shell handles SIGHUP as make does (the dashboard's own handler
    stays). ``trap "" HUP``: ignored, which the dashboard inherits, as under ``nohup``."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    status = tmp_path / "status"
    # the shell leads the session, keeps SIGHUP from the dashboard and waits for it
    script = f'trap "{trap}" HUP; "$@"; echo "$?" > ' + str(status)
    argv = [sys.executable, "-c", SESSION, "sh", "-c", script, "sh", sys.executable, "-m", "rankscope_tui.cli", "tui",
            "--demo-dir", str(tmp_path / "demo")]
    env = cli_env({"TERM": "xterm-256color", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path, close_fds=True)
    os.close(slave)
    try:
        shown = _read_until(master, b"Overview", 60)
        assert b"Overview" in shown, shown[-2000:]
        os.close(master)  # the terminal hangs up: SIGHUP to the shell only
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:  # still spinning: end the whole session before failing
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # the dashboard took the SIGHUP it missed (or, with SIGHUP ignored, left on its own) and
    # ended as an interrupted run does (exit status 130)
    assert status.read_text().strip() == "130"
