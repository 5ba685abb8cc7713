"""The out-of-core engine (kernel/partition.py, kernel/engine.py, ``--buckets``) against the
in-memory path, byte for byte, and its failures.

Every comparison is with the in-memory command on the same inputs: report.json and the
per-query CSV of ``evaluate --buckets 1`` and ``--buckets 7`` equal the in-memory files
except the settings block naming the engine; compare's and calibrate's outputs likewise.
A failing bucket or a killed worker fails the command with one line, writes nothing,
and leaves no temporary bucket directory; so does SIGTERM.

The worker pool is spawned once for the module (spawned interpreters are slow to start)
and handed to the engine through ``engine.new_pool``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope_tui.kernel import bucket as B
from rankscope_tui.kernel import engine as E
from rankscope_tui.kernel.output import dumps_strict
from rankscope_tui.kernel.pipeline import evaluate_report
from rankscope_tui.kernel.workspace import load

from test_bucket import _generate, _lane_args, _sources


class _SharedPool:
    """One spawned pool for every run of the module; the engine's shutdown leaves it running."""

    def __init__(self, pool):
        self._pool = pool

    def submit(self, *a, **k):
        return self._pool.submit(*a, **k)

    def shutdown(self, *a, **k):
        pass


@pytest.fixture(scope="module")
def shared_pool():
    pool = E.new_pool(2)
    yield _SharedPool(pool)
    pool.shutdown(wait=True)


@pytest.fixture
def pooled(shared_pool, monkeypatch):
    monkeypatch.setattr(E, "new_pool", lambda workers: shared_pool)
    return shared_pool


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    return _generate(tmp_path_factory.mktemp("generated"))


@pytest.fixture
def workdirs(tmp_path, monkeypatch) -> list:
    """The engine's temporary directories go under ``tmp_path/tmp``; the list gets each one."""
    import tempfile

    from rankscope_tui.kernel import partition as P

    parent = tmp_path / "tmp"
    parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    seen: list = []
    real = P.partition_files

    def recording(plan, n, workdir, memory_limit=None):
        seen.append(Path(workdir))
        assert Path(workdir).parent == parent and Path(workdir).is_dir()
        return real(plan, n, workdir, memory_limit)

    monkeypatch.setattr(P, "partition_files", recording)
    return seen


def _gone(workdirs) -> bool:
    return bool(workdirs) and not any(d.exists() for d in workdirs) and not any(workdirs[0].parent.iterdir())


def test_run_engine_is_the_in_memory_report(generated, pooled, workdirs):
    g = generated
    argv = [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"], "--ood-negatives", g["ood"],
            "--corpus", g["corpus"], "--gate-on", "gamma", "--mutual", "1", "--resamples", "99"]
    src, gate, th = _sources(argv)
    want = dumps_strict(evaluate_report(load(src), gate, th))
    for n in (1, 7):
        merged, p, facts = E.run_engine(src, E.EngineSettings("local", n, workers=2), gate, th)
        assert dumps_strict(B.evaluate_merged(merged, p, facts, gate)) == want, n
    assert len(workdirs) == 2 and _gone(workdirs)  # the bucket directories are gone
