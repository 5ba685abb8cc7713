"""What the tests share: the one way to run the CLI, the one way to find ``../shared``.

Fixtures (the demo directory, the shared-data finder) are in ``conftest.py``; the
plain functions are here so that module-level code and fixtures can call them too.

- :func:`run_cli`: ``python -m rankscope_tui.cli ARGS`` as its own process: forked from a
  warm interpreter this test process keeps (imports paid once), or a cold interpreter
  when the call's environment differs in what an interpreter reads at start-up, when
  stderr goes elsewhere than a pipe, or when asked (``fresh=True``);
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
            stderr=subprocess.PIPE, text: bool = True, fresh: bool = False) -> subprocess.CompletedProcess:
    """``python -m rankscope_tui.cli ARGS`` as its own process; the completed process (stdout
    captured; stderr captured unless another file is given, e.g. a terminal).

    The process is forked from this test process's warm interpreter (:class:`WarmCli`) when
    that gives what a cold start would: stderr a pipe, and the call's environment equal to
    the warm interpreter's in every variable an interpreter or numpy/pyarrow reads while
    starting (``STARTUP_KEYS``). Otherwise, and with ``fresh=True``, a cold interpreter."""
    argv, full_env = [str(a) for a in args], cli_env(env)
    if not fresh and stderr is subprocess.PIPE and os.environ.get("RS_COLD_CLI") != "1":
        warm = WarmCli.get()
        if warm.serves(full_env):
            return warm.run(argv, cwd=os.getcwd() if cwd is None else str(cwd), env=full_env, timeout=timeout, text=text)
    return subprocess.run([sys.executable, "-m", "rankscope_tui.cli", *argv], stdout=subprocess.PIPE,
                          stderr=stderr, text=text, cwd=None if cwd is None else str(cwd), env=full_env,
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
_PRELOAD = r"""
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

"""

_CHILD = r"""
def child(job):
    code = 1
    try:
        if "env" in job:  # the call's own environment (start-up variables equal: WarmCli.serves)
            os.environ.clear()
            os.environ.update(job["env"])
            null = os.open(os.devnull, os.O_RDONLY)  # a cold call under pytest reads no terminal either
            os.dup2(null, 0)
            os.close(null)
            sys.stdin = open(0, closefd=False)
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
        try:  # what the interpreter does at exit: atexit functions, then the streams flushed
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush(); sys.stderr.flush()
        finally:
            os._exit(code)


"""

_FORK_SERVER = _PRELOAD + r"""
jobs = json.load(sys.stdin)
limit = int(os.environ.get("RS_FORK_LIMIT", "4"))
sys.stdout.flush(); sys.stderr.flush()
""" + _CHILD + r"""
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

_WARM_SERVER = _PRELOAD + "\nsys.stdout.flush(); sys.stderr.flush()\n" + _CHILD + r"""
import select

# one job per line on stdin: {"id", "argv", "cwd", "env", "stdout", "stderr"}; answers
# {"id", "pid"} once forked and {"id", "code"} once ended, one line each on stdout (a
# single write each: no Python-level lock is ever held across a fork)
names, buf = {}, b""
while True:
    ready, _, _ = select.select([0], [], [], 0.005 if names else None)
    if ready:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            job = json.loads(line)
            pid = os.fork()
            if pid == 0:
                child(job)
            names[pid] = job["id"]
            os.write(1, (json.dumps({"id": job["id"], "pid": pid}) + "\n").encode())
    while names:
        pid, st = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            break
        os.write(1, (json.dumps({"id": names.pop(pid), "code": os.waitstatus_to_exitcode(st)}) + "\n").encode())
"""


#: what a cold ``python -m rankscope_tui.cli`` has set before numpy and pyarrow load
#: (``cli.process_setup``'s defaults: an explicit value wins, as it does there)
CLI_START_DEFAULTS = {"ARROW_DEFAULT_MEMORY_POOL": "system", "NUMPY_MADVISE_HUGEPAGE": "0", "OPENBLAS_NUM_THREADS": "1"}
#: variables read while an interpreter and numpy/pyarrow start (not later, per call): a call
#: whose values differ from the warm interpreter's is run cold
STARTUP_PREFIXES = ("PYTHON", "LC_", "LANG", "MALLOC_", "GLIBC_", "OMP_", "MKL_", "OPENBLAS_", "NUMPY_", "NPY_", "ARROW_",
                    "NUMBA_", "TZ")


def _startup_view(env: dict) -> dict:
    view = {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES)}
    for k, v in CLI_START_DEFAULTS.items():
        view.setdefault(k, v)
    return view


class WarmCli:
    """One warm interpreter per test process (``_WARM_SERVER``: numpy, pyarrow, scipy and
    the commands imported once) that forks a child per :func:`run_cli` call. The child
    takes the call's environment, working directory, argv and a /dev/null stdin, writes
    stdout and stderr to files, runs the CLI as ``python -m`` does (runpy, atexit at the
    end) and exits with its status. Calls may overlap (threads): each is its own child."""

    _instance: "WarmCli | None" = None
    _lock = __import__("threading").Lock()

    @classmethod
    def get(cls) -> "WarmCli":
        with cls._lock:
            if cls._instance is None or cls._instance.proc.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def __init__(self) -> None:
        import atexit
        import itertools
        import tempfile
        import threading

        self.tmp = tempfile.mkdtemp(prefix="rs-warm-")
        self.env = cli_env(CLI_START_DEFAULTS)
        self.startup = _startup_view(self.env)
        self.err = open(os.path.join(self.tmp, "server.err"), "w+b")
        self.proc = subprocess.Popen([sys.executable, "-c", _WARM_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, cwd=self.tmp, env=self.env)
        self.ids = itertools.count()
        self.pending: dict[int, dict] = {}
        self.plock = threading.Lock()
        threading.Thread(target=self._read, name="rs-warm-cli", daemon=True).start()
        atexit.register(self.close)

    def serves(self, env: dict) -> bool:
        """A fork gives what a cold start would: the start-up variables are the server's."""
        return _startup_view(env) == self.startup

    def _read(self) -> None:
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self.plock:
                entry = self.pending.get(msg["id"])
            if entry is None:
                continue
            entry.update(msg)
            if "code" in msg:
                entry["done"].set()
        with self.plock:  # the server is gone: every call still waiting learns it
            for entry in self.pending.values():
                entry["done"].set()

    def run(self, argv: list[str], *, cwd: str, env: dict, timeout: float, text: bool) -> subprocess.CompletedProcess:
        import threading

        i = next(self.ids)
        out, err = os.path.join(self.tmp, f"{i}.out"), os.path.join(self.tmp, f"{i}.err")
        entry: dict = {"done": threading.Event()}
        with self.plock:
            self.pending[i] = entry
        job = {"id": i, "argv": argv, "cwd": cwd, "env": env, "stdout": out, "stderr": err}
        try:
            with self.plock:  # one writer at a time on the server's stdin
                self.proc.stdin.write((json.dumps(job) + "\n").encode())
                self.proc.stdin.flush()
            finished = entry["done"].wait(timeout)
            cmd = [sys.executable, "-m", "rankscope_tui.cli", *argv]
            if not finished:
                if "pid" in entry:
                    os.kill(entry["pid"], 9)
                raise subprocess.TimeoutExpired(cmd, timeout)
            if "code" not in entry:
                self.err.seek(0)
                raise RuntimeError(f"the warm CLI server ended: {self.err.read()[-3000:].decode(errors='replace')}")
            # as subprocess.run(text=True) decodes: the locale's encoding, strict, universal newlines
            read = (lambda p: Path(p).read_text()) if text else (lambda p: Path(p).read_bytes())
            return subprocess.CompletedProcess(cmd, entry["code"], read(out), read(err))
        finally:
            with self.plock:
                self.pending.pop(i, None)
            for p in (out, err):
                try:
                    os.unlink(p)
                except OSError:
                    pass

    def close(self) -> None:
        import shutil

        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
        self.err.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


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
