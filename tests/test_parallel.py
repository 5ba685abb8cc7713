"""parallel: thread defaults, ordered results, joined background work; lazy fingerprints."""

from __future__ import annotations

import hashlib
import threading

import pytest
from support import run_cli

from rankscope_tui.kernel import parallel
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs.readers import read_lane
from rankscope_tui.kernel.workspace.loaded import Workspace


def test_default_threads_env(monkeypatch):
    monkeypatch.setenv("RANKSCOPE_THREADS", "3")
    assert parallel.default_threads() == 3
    monkeypatch.setenv("RANKSCOPE_THREADS", "0")
    with pytest.raises(InputError, match="RANKSCOPE_THREADS"):
        parallel.default_threads()
    monkeypatch.delenv("RANKSCOPE_THREADS")
    assert 1 <= parallel.default_threads() <= parallel.MAX_DEFAULT_THREADS
    assert parallel.default_threads() <= parallel.available_cpus()


def test_run_all_keeps_order_and_raises():
    seen = set()

    def task(i):
        def f():
            seen.add(threading.current_thread().name)
            return i * i

        return f

    assert parallel.run_all([task(i) for i in range(6)], threads=3) == [0, 1, 4, 9, 16, 25]
    assert any(name.startswith("rankscope") for name in seen)

    def boom():
        raise ValueError("task failed")

    with pytest.raises(ValueError, match="task failed"):
        parallel.run_all([task(1), boom], threads=2)


def test_in_background_is_joined_even_on_error(monkeypatch):
    monkeypatch.setenv("RANKSCOPE_THREADS", "2")
    started, finished = threading.Event(), threading.Event()

    def slow():
        started.set()
        finished.wait(0.2)
        finished.set()

    with pytest.raises(RuntimeError):
        with parallel.in_background([slow]):
            started.wait(5)
            raise RuntimeError("body failed")
    assert finished.is_set()
    assert not [t for t in threading.enumerate() if t.name.startswith("rankscope-bg")]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_lane_fingerprint_is_the_file_sha256(tmp_path, monkeypatch, threads):
    monkeypatch.setenv("RANKSCOPE_THREADS", threads)
    run = tmp_path / "a.run"
    run.write_bytes(b"".join(b"q%d Q0 d%d %d %d.5 t\n" % (q, d, d + 1, 10 - d) for q in range(3) for d in range(5)))
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q0 0 d1 1\nq1 0 d2 1\n")
    raw = read_lane(str(run))
    assert raw.digest is not None and raw.digest.pending  # a plain run is hashed later, not while read
    ws = Workspace.load([(None, str(run))], str(qrels))
    lane = next(f for f in ws.inputs if f.role == "lane")
    assert lane.sha256 == hashlib.sha256(run.read_bytes()).hexdigest()


def test_error_exit_after_threads_is_one_line(tmp_path):
    """A quick error exit right after the worker threads ran (scan halves, hash
    partitions, fingerprint, dictionary rebuild) still ends with status 2 and one
    stderr line: no thread is alive at exit for pyarrow's runtime to trip over."""
    n_q, per_q = 1200, 500  # 600k rows (> the partition threshold), 17.4 MiB (> the 16 MiB scan split)
    lines = [b"q%d Q0 d%d %d %d.25 run" % (q, q * per_q + i, i + 1, per_q - i) for q in range(n_q) for i in range(per_q)]
    bad = len(lines) - 3
    parts = lines[bad].split(b" ")
    parts[2] = lines[bad - 1].split(b" ")[2]  # the previous line's doc, in the same query
    lines[bad] = b" ".join(parts)
    run = tmp_path / "big.run"
    run.write_bytes(b"\n".join(lines) + b"\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q0 0 d1 1\nq5 0 d2600 1\n")
    for _ in range(6):
        res = run_cli("evaluate", "--lane", run, "--qrels", qrels, "--resamples", "0", env={"RANKSCOPE_THREADS": "2"},
                      timeout=120)
        assert res.returncode == 2, res.stderr
        assert res.stderr.count("\n") == 1 and f"big.run:{bad + 1}:" in res.stderr and "appears twice" in res.stderr, res.stderr
