"""Key storms through a real terminal: `rankscope tui` in tmux, keys and pastes sent as a
person's terminal sends them, the screen read back.

Each storm starts the dashboard in a fresh tmux session (the demo, or Cranfield with texts
when ``--cranfield DIR`` is given), sends ``--keys`` seeded actions (single keys, strings
typed as literal keys, bracketed pastes of 40 digits and of markup), checks every 50 actions
that the app still draws its footer and no traceback is on screen, then quits with ``q`` and
reads the exit status. A storm fails on a traceback, a screen without the app, a quit that
does not end the app within 20 s, or a non-zero exit status.

    python fuzz/tmux_storm.py --storms 10 --keys 500
    python fuzz/tmux_storm.py --storms 10 --keys 500 --cranfield ../shared/data/cranfield
"""

from __future__ import annotations

import argparse
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

KEYS = (list("123456789") + ["C-p", "Tab", "BTab", "Enter", "Escape", "Up", "Down", "Left", "Right", "/", "e", "o",
        "?", "c", "a", "f", "v", "t", "r", "[", "]", "+", "-", "Space", "0", "x", "BSpace", "Home", "End", "NPage",
        "PPage", "S-Left", "S-Right"])
STRINGS = ("1234567890123456789012345678901234567890", "1234567890123456789012345678901234567890x",
           "see [/] here", "[@click=app.quit]press[/]", "array[i] = x[/i]", "[citation needed]", "0.05", "-1e309",
           "set k = 99999999999999999999999999", "theme", "export")
TYPED = tuple(s for s in STRINGS if "q" not in s)  # typed outside a field, `q` quits


def tmux(*args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=check).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session, check=False)


def cranfield_args(c: Path) -> list[str]:
    argv = [a for n in ("bm25", "tfidf", "dense") for a in ("--lane", str(c / "lanes" / f"{n}.run"))]
    return argv + ["--qrels", str(c / "qrels-test.txt"), "--group-sep", "#", "--corpus", str(c / "passages.tsv"),
                   "--queries", str(c / "queries.tsv"), "--docs", str(c / "passages.tsv"), "--gate-on", "dense",
                   "--ood-negatives", str(c / "qrels-ood-negatives.txt"), "--dev-qrels", str(c / "qrels-dev.txt"),
                   "--strata", str(c / "strata.tsv")]


def stacks(session: str) -> str:
    """The app's thread stacks, by py-spy when it is installed (what a stuck app is doing)."""
    import shutil

    if shutil.which("py-spy") is None:
        return ""
    shell = tmux("list-panes", "-t", session, "-F", "#{pane_pid}", check=False).strip()
    kids = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True).stdout.split()
    out = [subprocess.run(["py-spy", "dump", "--pid", k], capture_output=True, text=True).stdout for k in kids]
    return "\n".join(["", "py-spy:", *out])


def tasks(session: str, dump: Path) -> str:
    """The app's asyncio tasks (``RANKSCOPE_TASK_DUMP``: SIGUSR1 writes them to ``dump``)."""
    import os
    import signal

    shell = tmux("list-panes", "-t", session, "-F", "#{pane_pid}", check=False).strip()
    for k in subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True).stdout.split():
        os.kill(int(k), signal.SIGUSR1)
    time.sleep(2)
    return "\ntasks:\n" + (dump.read_text(errors="replace") if dump.exists() else "(none written)")


def storm(seed: int, n_keys: int, argv: list[str], size: tuple[int, int], workdir: Path) -> str | None:
    """One storm; None when it passed, else what went wrong."""
    rng = random.Random(seed)
    session = f"rankscope-storm-{seed}"
    tmux("kill-session", "-t", session, check=False)
    status = workdir / f"status-{seed}"
    status.unlink(missing_ok=True)
    # the dashboard draws on stderr (Textual's driver): it stays on the terminal, and what
    # the app prints after it ends (a traceback) is read back from the pane
    exe = str(Path(sys.executable).parent / "rankscope")
    dump = workdir / f"tasks-{seed}.txt"
    dump.unlink(missing_ok=True)
    cmd = (f"cd {shlex.quote(str(workdir))} && RANKSCOPE_TASK_DUMP={shlex.quote(str(dump))} "
           f"{shlex.join([exe, 'tui', *argv])}; echo $? > {shlex.quote(str(status))}; sleep 30")
    tmux("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), cmd)
    try:
        deadline = time.monotonic() + 60
        while "^p" not in screen(session) and "palette" not in screen(session):  # the footer is drawn
            if time.monotonic() > deadline or status.exists():
                return f"no dashboard within 60 s:\n{screen(session)}"
            time.sleep(0.2)
        for i in range(n_keys):
            r = rng.random()
            if r < 0.80:
                tmux("send-keys", "-t", session, rng.choice(KEYS), check=False)
            elif r < 0.90:
                tmux("send-keys", "-t", session, "-l", "--", rng.choice(TYPED), check=False)
            else:  # a bracketed paste, as a terminal sends one
                tmux("set-buffer", "-b", "storm", "--", rng.choice(STRINGS))
                tmux("paste-buffer", "-p", "-b", "storm", "-t", session, check=False)
            time.sleep(rng.choice((0.0, 0.005, 0.02)))
            if i % 50 == 49:
                shown = screen(session)
                if status.exists():
                    return f"the app ended after action {i + 1}:\n{shown}"
                if "Traceback" in shown:
                    return f"a traceback after action {i + 1}:\n{shown}"
        # close what the storm opened, then quit. A palette command the storm chose (the theme
        # picker, the export dialog) can open after the keys that follow it were handled, as
        # it would for a person typing ahead: Escape, `1` and `q` are sent again (up to three
        # rounds, 20 s each) while the app is still there; a storm fails only when no round ends it
        asked = time.monotonic()
        for attempt in range(3):
            deadline = time.monotonic() + 20
            for _ in range(6):
                tmux("send-keys", "-t", session, "Escape", check=False)
                time.sleep(0.2)
            while "🔎" in screen(session) and time.monotonic() < deadline:
                tmux("send-keys", "-t", session, "Escape", check=False)
                time.sleep(0.5)
            tmux("send-keys", "-t", session, "1", check=False)
            time.sleep(0.5)
            tmux("send-keys", "-t", session, "q", check=False)
            while not status.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            if status.exists():
                if attempt:
                    print(f"storm {seed}: ended in round {attempt + 1} of Escape, 1, q (a dialog opened late)", flush=True)
                break
        if not status.exists():
            shown = screen(session) + stacks(session) + tasks(session, dump)
            return f"three rounds of Escape, `1` and `q` did not end the app ({time.monotonic() - asked:.0f} s):\n{shown}"
        code = status.read_text().strip()
        time.sleep(0.3)
        after = screen(session)
        if code != "0" or "Traceback" in after or "Error" in after:
            return f"exit status {code}; the terminal after the app:\n{after}"
        return None
    finally:
        tmux("kill-session", "-t", session, check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--storms", type=int, default=10)
    ap.add_argument("--keys", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1, help="the first storm's seed (the next ones count up)")
    ap.add_argument("--cranfield", type=Path, help="Cranfield's folder (default: the built-in demo)")
    ap.add_argument("--size", default="120x36", help="terminal size, COLSxROWS")
    ap.add_argument("--workdir", type=Path, default=Path("fuzz/out/tmux"))
    a = ap.parse_args()
    cols, rows = (int(x) for x in a.size.split("x"))
    argv = cranfield_args(a.cranfield.resolve()) if a.cranfield else []
    a.workdir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for seed in range(a.seed, a.seed + a.storms):
        t0 = time.monotonic()
        problem = storm(seed, a.keys, argv, (cols, rows), a.workdir.resolve())
        took = time.monotonic() - t0
        print(f"storm {seed}: {'ok' if problem is None else 'FAILED'} ({a.keys} actions, {took:.0f} s)", flush=True)
        if problem is not None:
            failed += 1
            print(problem, flush=True)
    print(f"{a.storms - failed} of {a.storms} storms passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
