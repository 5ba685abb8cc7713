"""Progress lines on stderr: shown on a terminal once a run is slow, never in a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from rankscope_tui.demo import write_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    write_demo(d)
    return d


def _evaluate(demo, stderr, env_after: str):
    env = {**os.environ, "RANKSCOPE_PROGRESS_AFTER_S": env_after}
    return subprocess.run(
        [sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", str(demo / "lexical.run"),
         "--qrels", str(demo / "qrels-test.txt"), "--resamples", "0"],
        stdout=subprocess.PIPE, stderr=stderr, env=env, timeout=120,
    )


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


def test_progress_goes_to_a_terminal_once_the_run_is_slow(demo):
    master, slave = pty.openpty()
    res = _evaluate(demo, slave, "0")
    os.close(slave)
    err = _read_all(master)
    os.close(master)
    assert res.returncode == 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert any(line.startswith("rankscope: loaded 1 lane(s)") for line in lines), err
    assert any(line.startswith("rankscope: computed the report") for line in lines), err


def test_no_progress_on_a_terminal_when_the_run_is_quick(demo):
    master, slave = pty.openpty()
    res = _evaluate(demo, slave, "3600")
    os.close(slave)
    err = _read_all(master)
    os.close(master)
    assert res.returncode == 0 and err.strip() == ""


def test_no_progress_when_stderr_is_not_a_terminal(demo):
    res = _evaluate(demo, subprocess.PIPE, "0")
    assert res.returncode == 0 and res.stderr == b""
