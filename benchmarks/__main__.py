"""Run every benchmark module in ``benchmarks/`` (``bench_*.py``), one after another.

    .venv/bin/python -m benchmarks [eval gate ...] [--only eval gate ...] [--skip tui ...] [--list]
                                   [-- ARGS passed to every module]

Each module runs as its own subprocess (``python benchmarks/bench_X.py``), so one
module's imports, threads or memory never bias another's numbers, and a module that
fails (or is missing) is reported without stopping the others. Each writes its own
``benchmarks/results/X.md`` / ``X.json``; this runner prints a summary of exit
statuses and wall times, and exits non-zero if any module failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Preferred order (cheap and most-asked first); any other bench_*.py found runs after these.
ORDER = ["eval", "stats", "gate", "fusion", "tui"]


def discover() -> dict[str, Path]:
    found = {p.stem[len("bench_"):]: p for p in sorted(HERE.glob("bench_*.py"))}
    names = [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]
    return {n: found[n] for n in names}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="run only these (the same as --only)")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help="run only these (e.g. eval gate)")
    ap.add_argument("--skip", nargs="+", default=[], metavar="NAME", help="skip these")
    ap.add_argument("--list", action="store_true", help="list the benchmark modules and exit")
    a = ap.parse_args(argv)
    mods = discover()
    if a.list:
        for name, path in mods.items():
            print(f"{name:10s} {path.relative_to(ROOT)}")
        return 0
    wanted = (a.names + (a.only or [])) or list(mods)
    results = []
    for name in wanted:
        if name in a.skip:
            continue
        path = mods.get(name)
        if path is None:
            print(f"== {name}: no benchmarks/bench_{name}.py (skipped)", flush=True)
            results.append((name, None, 0.0))
            continue
        print(f"== {name}: {path.relative_to(ROOT)} {' '.join(extra)}".rstrip(), flush=True)
        t = time.perf_counter()
        try:
            rc = subprocess.call([sys.executable, str(path), *extra], cwd=str(ROOT))
        except KeyboardInterrupt:
            rc = 130
        results.append((name, rc, time.perf_counter() - t))
        if rc == 130:
            break
    print("\n== summary")
    failed = False
    for name, rc, secs in results:
        status = "missing" if rc is None else ("ok" if rc == 0 else f"FAILED (exit {rc})")
        failed |= rc not in (0, None)
        print(f"  {name:10s} {status:18s} {secs:8.1f} s")
    print(f"results in {(HERE / 'results').relative_to(ROOT)}/")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
