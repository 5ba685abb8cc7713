"""Progress lines on stderr: shown on a terminal once a run is slow, never in a pipe."""

from __future__ import annotations

import os
import pty
import subprocess

from support import run_cli


def _evaluate(demo, stderr, env_after: str):
    return run_cli("evaluate", "--lane", demo / "lexical.run", "--qrels", demo / "qrels-test.txt", "--resamples", "0",
                   stderr=stderr, text=False, env={"RANKSCOPE_PROGRESS_AFTER_S": env_after}, timeout=120)


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode()


def test_progress_goes_to_a_terminal_once_the_run_is_slow(demo_dir):
    master, slave = pty.openpty()
    res = _evaluate(demo_dir, slave, "0")
    os.close(slave)
    err = _read_all(master)
    os.close(master)
    assert res.returncode == 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert any(line.startswith("rankscope: loaded 1 lane(s)") for line in lines), err
    assert any(line.startswith("rankscope: computed the report") for line in lines), err


def test_no_progress_on_a_terminal_when_the_run_is_quick(demo_dir):
    master, slave = pty.openpty()
    res = _evaluate(demo_dir, slave, "3600")
    os.close(slave)
    err = _read_all(master)
    os.close(master)
    assert res.returncode == 0 and err.strip() == ""


def test_no_progress_when_stderr_is_not_a_terminal(demo_dir):
    res = _evaluate(demo_dir, subprocess.PIPE, "0")
    assert res.returncode == 0 and res.stderr == b""
