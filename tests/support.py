"""What the tests share: the one way to run the CLI, the one way to find ``../shared``.

Fixtures (the demo directory, the shared-data finder) are in ``conftest.py``; the
plain functions are here so that module-level code and fixtures can call them too.

- :func:`run_cli`: ``python -m rankscope_tui.cli ARGS`` in a fresh interpreter;
- :func:`cli_many`: many CLI calls at once, forked from one warm interpreter (the
  reliability tests make hundreds of calls; a cold start each would take minutes);
- :func:`shared_path`: a path under ``<repo>/../shared/data``, or a skip that names it.
  Only the shared data may skip: every test dependency is imported plainly, so a broken
  environment fails the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
WORKERS = max(2, min(6, (os.cpu_count() or 2) * 2))


def without_engine(raw: bytes, engine: str, n: int, block=("inputs", "settings")) -> bytes:
    """report.json (or compare/calibrate output) with its settings block's engine entry,
    which must name ``engine`` and ``n`` buckets, removed: written as the CLI writes JSON, so
    it compares byte for byte with the in-memory command's output."""
    from rankscope_tui.kernel.report.output import dumps_strict

    data = json.loads(raw)
    settings = data
    for k in block:
        settings = settings[k]
    assert settings.pop("engine") == {"name": engine, "buckets": n}
    return dumps_strict(data).encode("utf-8")


def cli_env(extra: dict | None = None) -> dict:
    """The environment of a CLI call: this checkout first on PYTHONPATH, no inherited
    PYTHONHASHSEED (tests that vary it pass their own), then ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONHASHSEED", None)
    env.update(extra or {})
    return env


def run_cli(*args: str, cwd: Path | str | None = None, env: dict | None = None, timeout: float = 300,
            stderr=subprocess.PIPE, text: bool = True) -> subprocess.CompletedProcess:
    """``python -m rankscope_tui.cli ARGS`` in a fresh interpreter; the completed process
    (stdout captured; stderr captured unless another file is given, e.g. a terminal)."""
    return subprocess.run([sys.executable, "-m", "rankscope_tui.cli", *map(str, args)], stdout=subprocess.PIPE,
                          stderr=stderr, text=text, cwd=None if cwd is None else str(cwd), env=cli_env(env),
                          timeout=timeout)


def shared_path(*parts: str) -> Path:
    """``<repo>/../shared/data/PARTS``; skips (the whole module when called at import) if absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        reason = f"shared data not found: {p}"
        print(reason, file=sys.stderr)
        pytest.skip(reason, allow_module_level=True)
    return p


# A fork server: one interpreter imports numpy, pyarrow, scipy and rankscope once
# (computing nothing, so no thread pool exists yet) and forks one child per call.
# Each child is a separate process that runs ``python -m rankscope_tui.cli ARGV``
# exactly as the interpreter would (runpy, __main__, uncaught exceptions printed as a
# traceback with exit status 1) with its own stdout/stderr files and exit status, at a
# twentieth of the cost of a cold start.
_FORK_SERVER = r"""
import json, os, runpy, sys, time, traceback
import numpy, scipy.special, scipy.stats, pyarrow, pyarrow.compute, pyarrow.csv, pandas
for m in ("calibrate", "compare", "diff", "verdict", "goldens", "tui"):
    __import__("rankscope_tui.commands." + m)
import mmap
for m in ("instruments.evaluate", "report.payload", "instruments.rules", "instruments.diff", "instruments.compare",
          "statistics.intervals", "statistics.resampling", "gate", "gate.analysis", "gate.thresholds", "fusion.methods",
          "attribution.misses", "instruments.goldens"):
    __import__("rankscope_tui.kernel." + m)
for m in ("report", "compare", "diff", "rules", "calibrate"):
    __import__("rankscope_tui.render." + m)
sys.modules.pop("rankscope_tui.cli", None)  # as under `python -m`: __main__ first, the module on demand

jobs = json.load(sys.stdin)
limit = int(os.environ.get("RS_FORK_LIMIT", "4"))
sys.stdout.flush(); sys.stderr.flush()


def child(job):
    code = 1
    try:
        os.chdir(job["cwd"])
        for fd, name in ((1, "stdout"), (2, "stderr")):
            f = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.argv = ["rankscope", *job["argv"]]
        try:
            runpy.run_module("rankscope_tui.cli", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush(); sys.stderr.flush()
        finally:
            os._exit(code)


status, took, running, queue = {}, {}, {}, list(jobs.items())
while queue or running:
    while queue and len(running) < limit:
        name, job = queue.pop(0)
        pid = os.fork()
        if pid == 0:
            child(job)
        running[pid] = (name, time.monotonic())
    pid, st = os.wait()
    name, t0 = running.pop(pid)
    status[name] = os.waitstatus_to_exitcode(st)
    took[name] = time.monotonic() - t0
json.dump(status, sys.stdout)
if os.environ.get("RS_FORK_TIMES"):
    print(json.dumps(sorted(took.items(), key=lambda kv: -kv[1])[:15]), file=sys.stderr)
"""


def cli_many(jobs: dict[str, tuple[list[str], Path, dict | None]]) -> dict[str, subprocess.CompletedProcess]:
    """Run several CLI calls, each its own process; results by job name. Calls with an
    environment of their own get a cold interpreter; the others are forked together."""
    import tempfile

    out: dict[str, subprocess.CompletedProcess] = {}
    cold = {k: v for k, v in jobs.items() if v[2]}
    warm = {k: v for k, v in jobs.items() if not v[2]}
    with tempfile.TemporaryDirectory(prefix="rs-fork-") as tmp, ThreadPoolExecutor(max(1, min(4, len(cold)))) as pool:
        futs = {k: pool.submit(run_cli, *a, cwd=cwd, env=env) for k, (a, cwd, env) in cold.items()}
        if warm:
            spec = {k: {"argv": a, "cwd": str(cwd), "stdout": os.path.join(tmp, f"{i}.out"), "stderr": os.path.join(tmp, f"{i}.err")}
                    for i, (k, (a, cwd, _)) in enumerate(warm.items())}
            server = subprocess.run([sys.executable, "-c", _FORK_SERVER], input=json.dumps(spec), capture_output=True, text=True,
                                    cwd=tmp, env=cli_env({"RS_FORK_LIMIT": str(WORKERS), "OPENBLAS_NUM_THREADS": "1",
                                                         "RS_FORK_TIMES": os.environ.get("RS_FORK_TIMES", "")}), timeout=600)
            assert server.returncode == 0, server.stderr[-3000:]
            if os.environ.get("RS_FORK_TIMES"):
                print(server.stderr, file=sys.stderr)
            codes = json.loads(server.stdout)
            for k, job in spec.items():
                out[k] = subprocess.CompletedProcess(job["argv"], codes[k], Path(job["stdout"]).read_text(errors="replace"),
                                                     Path(job["stderr"]).read_text(errors="replace"))
        for k, f in futs.items():
            out[k] = f.result()
    return out


async def picture_ready(app, pilot) -> None:
    """Before a snapshot: settle, then wait until the view has drawn every part it draws in
    a later frame (``ViewScreen.drawing``: the Overview draws the parsed order and the
    warnings after the lane means, Compare its per-query list after the panel), then settle
    again. Waiting on the view's own account, not on a pause, holds on a busy machine too."""
    await settle(app, pilot)
    for _ in range(200):  # 200 × 50 ms: a view still drawing after 10 s is a failure to show
        if not getattr(app.screen, "drawing", False):
            break
        await pilot.pause(0.05)
    else:
        raise AssertionError(f"{app.screen!r} still drawing after 10 s")
    await pilot.pause()
    await settle(app, pilot)


async def settle(app, pilot, extra: float = 0.0) -> None:
    """Wait for timers (debounce), then every worker and the messages they posted, until two
    rounds in a row start no new worker (a result may start the next step: dev set → fit →
    draw). A failed or cancelled worker is the app's to show; tests assert on that."""
    from textual.worker import WorkerCancelled, WorkerFailed

    if extra:
        await pilot.pause(extra)
    quiet = 0
    for _ in range(40):
        try:
            await app.workers.wait_for_complete()
        except (WorkerFailed, WorkerCancelled):
            pass
        await pilot.pause()
        quiet = quiet + 1 if not any(w.is_running for w in app.workers) else 0
        if quiet == 2:
            return


def ranx_dict(run) -> dict[str, dict[str, float]]:
    """A ``ranx.Run`` as plain dicts. ``Run.to_dict`` copies each query's numba dict twice
    (``dict(self[q])`` over a ``__getitem__`` that already copies); one copy gives the same
    dicts in a third of the time, which the parity tests over Cranfield's 53 fusions feel."""
    return {q: dict(run.run[q]) for q in run.keys()}
