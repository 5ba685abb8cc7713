"""Fixtures every test module may use: the demo directory and ``cli_run`` (the command line in this process).

The plain helpers (the CLI runner ``support.run_cli``, the fork server
``support.cli_many``, the shared-data path ``support.shared_path``) are in
``tests/support.py``, so that module-level code can call them too.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from rankscope_tui import cli
from rankscope_tui.demo import write_demo

DEMO_SEED = 7  # the demo's default seed: what `rankscope demo` and `rankscope tui` write


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    """The demo data set (seed 7), written once per session by the demo generator. Read only:
    a test that writes puts its outputs in its own tmp_path."""
    d = tmp_path_factory.mktemp("demo")
    write_demo(d, seed=DEMO_SEED)
    return d


@pytest.fixture
def cli_run(capsys):
    """``cli.main`` in this process: (exit status, stdout, stderr); the signal handlers it
    installs are put back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}

    def run(*argv):
        capsys.readouterr()
        rc = cli.main([str(a) for a in argv])
        out = capsys.readouterr()
        return rc, out.out, out.err

    yield run
    for s, h in saved.items():
        signal.signal(s, h)


@pytest.fixture(autouse=True)
def _signal_dispositions_put_back():
    """Each test starts with the signal dispositions the session had: a test that leaves
    SIGINT ignored in this process (an in-process run of code made for a pool worker, which
    leaves Ctrl-C to its driver) would make every child started later ignore Ctrl-C too,
    and the interrupt tests would wait on it. A leak is put back, and said on stderr with
    the test's name."""
    nums = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)]
    before = {n: signal.getsignal(n) for n in nums}
    yield
    for n, handler in before.items():
        now = signal.getsignal(n)
        if now is not handler and handler is not None:
            if now is signal.SIG_IGN:
                import os
                import warnings

                # a warning, so the summary at the end of the run names the test
                warnings.warn(f"{os.environ.get('PYTEST_CURRENT_TEST', '?')} left "
                              f"{signal.Signals(n).name} ignored; put back", stacklevel=1)
            signal.signal(n, handler)


@pytest.fixture(scope="session", autouse=True)
def _session_cache_in_tmp(tmp_path_factory):
    """The per-user cache (``compare``'s comparison log) of the whole session in a temporary
    directory, set before any fixture runs: a module- or session-scoped fixture that runs
    ``compare`` is set up before the per-test fixture below, and must not write to the
    real home either. Set in ``os.environ``, so children inherit it. The config home too:
    a config.toml of the person running the tests must not change what `rankscope tui`
    and `rankscope config` do in them (tests/test_config.py sets its own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache-session")))
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config-session")))
        yield


@pytest.fixture(autouse=True)
def _cache_in_tmp(_session_cache_in_tmp, tmp_path_factory, monkeypatch):
    """Every test's per-user cache in a temporary directory of its own: no test sees
    another's comparison log (the counts it prints start at 0)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
