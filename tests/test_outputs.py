"""Outputs and secondary inputs under hostile conditions (issue 14: items 1-6, 13, 14, 21).

- a symlink, a FIFO or a character device as an output is never replaced by a rename;
- every input of every command is protected from every output of that command;
- ``demo --out`` / ``tui --demo-dir`` never overwrite a user's files;
- several outputs of one call are all-or-nothing, and two outputs may not share a path;
- concurrent ``compare --log`` calls lose no line;
- SIGHUP unwinds like SIGINT; temp files of a SIGKILLed run are removed by the next run;
- options that would ask for unbounded work are refused with the bound in the message;
- option values and secondary files that used to escape as tracebacks are one line, exit 2;
- the per-query CSV quotes a bare CR and neutralises spreadsheet formulas, reversibly.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import cli_env, run_cli
from test_reliability import _INTERRUPTIBLE, METRICS, _wait_for, clean_set, leftovers, write

from rankscope_tui import cli as C
from rankscope_tui.kernel.report import output as IO


def one_error(capsys, argv: list[str]) -> str:
    """Run the CLI in-process: exit 2, exactly one stderr line ``rankscope: error: ...``, no traceback."""
    rc = C.main(argv)
    cap = capsys.readouterr()
    assert rc == 2, (rc, cap.err)
    assert "Traceback" not in cap.err and len(cap.err.splitlines()) == 1, cap.err
    assert cap.err.startswith("rankscope: error: "), cap.err
    return cap.err.strip()


def assert_one_line_error(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    lines = res.stderr.splitlines()
    assert "Traceback" not in res.stderr and len(lines) == 1 and lines[0].startswith("rankscope: error: "), res.stderr[-2000:]
    return lines[0]


@pytest.fixture()
def small(tmp_path) -> dict:
    f = clean_set(tmp_path / "in")
    f["lanes"] = ["--lane", f"a={f['a']}", "--lane", f"b={f['b']}", "--qrels", f["qrels"]]
    return f


def evaluate(f: dict, *extra: str) -> list[str]:
    return ["evaluate", *f["lanes"], "--metrics", METRICS, "--resamples", "0", *extra]


# ============================================================================ 1. non-regular output paths


def test_a_symlinked_output_is_written_through_to_its_target_and_stays_a_link(small, tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    target = runs / "2026-12-01.json"
    target.write_text("old\n")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    dangling = tmp_path / "next.json"
    dangling.symlink_to(runs / "not-yet.json")
    assert C.main(evaluate(small, "--out", str(link), "--per-query", str(dangling))) == 0
    capsys.readouterr()
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["schema"].startswith("rankscope.report/")
    assert dangling.is_symlink() and (runs / "not-yet.json").read_text().startswith("lane,level,qid")
    assert leftovers(runs) == ["2026-12-01.json", "not-yet.json"]  # the temp files were made beside the targets


def test_a_fifo_output_is_written_in_place_and_stays_a_fifo(small, tmp_path, capsys):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(Path(fifo).read_bytes()), daemon=True)
    reader.start()
    try:
        # the writer retries until the reader has the FIFO open (before, it is refused: no reader)
        deadline = time.monotonic() + 10
        rc = None
        while time.monotonic() < deadline:
            rc = C.main(evaluate(small, "--out", str(fifo)))
            err = capsys.readouterr().err
            if rc == 0 or "no process is reading" not in err:
                break
            time.sleep(0.05)
        assert rc == 0, err
    finally:
        reader.join(30)
    assert got, "the reader got nothing"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert json.loads(got[0])["schema"].startswith("rankscope.report/")
    assert leftovers(tmp_path) == ["in", "report.fifo"]


def test_a_fifo_nobody_reads_is_refused_not_waited_on(small, tmp_path, capsys):
    fifo = tmp_path / "nobody.fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    msg = one_error(capsys, evaluate(small, "--out", str(fifo)))
    assert time.monotonic() - t0 < 60
    assert str(fifo) in msg and "no process is reading" in msg, msg
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_character_device_output_is_written_in_place(small, tmp_path, capsys):
    """A private /dev/null (mknod in the temp dir, never the real /dev): still a device afterwards."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(dev, "wb") as fh:
            fh.write(b"x")
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a character device here: {exc}")
    assert C.main(evaluate(small, "--out", str(dev), "--per-query", str(dev))) == 0  # /dev/null may take both
    capsys.readouterr()
    assert stat.S_ISCHR(os.lstat(dev).st_mode), "the device was replaced by a regular file"
    assert leftovers(tmp_path) == ["in", "null"]


def test_a_socket_or_a_path_through_a_file_is_refused(small, tmp_path, capsys):
    sock_path = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    try:
        assert "socket" in one_error(capsys, evaluate(small, "--out", str(sock_path)))
    finally:
        s.close()
    plain = tmp_path / "file.txt"
    plain.write_text("x")
    one_error(capsys, evaluate(small, "--out", str(plain / "sub" / "r.json")))
    assert plain.read_text() == "x"


# ============================================================================ 2. inputs protected from outputs


def test_every_input_of_every_command_is_protected_from_every_output(small, tmp_path, capsys):
    f = small
    th = tmp_path / "th.json"
    assert C.main(["calibrate", *f["lanes"], "--gate-on", "a", "--resamples", "0", "--out", str(th)]) == 0
    rep = tmp_path / "rep.json"
    assert C.main(evaluate(f, "--out", str(rep))) == 0
    gates = Path(write(tmp_path, "gates.json", '[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.1}]'))
    queries = Path(write(tmp_path, "queries.tsv", "q1\tone\nq2\ttwo\n"))
    docs = Path(write(tmp_path, "docs.tsv", "d10\tten\n"))
    hard = tmp_path / "hardlink-to-qrels.txt"
    os.link(f["qrels"], hard)
    sym = tmp_path / "symlink-to-a.run"
    sym.symlink_to(f["a"])
    capsys.readouterr()
    loading = [*f["lanes"], "--strata", f["strata"], "--corpus", f["corpus"], "--ood-negatives", f["ood"],
               "--queries", str(queries), "--docs", str(docs)]
    inputs = [f["a"], f["b"], f["qrels"], f["strata"], f["corpus"], f["ood"], str(queries), str(docs), str(hard), str(sym)]
    before = {p: Path(p).read_bytes() for p in inputs + [str(th), str(rep), str(gates)]}
    calls = []
    for p in inputs:
        calls += [["evaluate", *loading, "--metrics", METRICS, "--resamples", "0", "--out", p],
                  ["evaluate", *loading, "--metrics", METRICS, "--resamples", "0", "--per-query", p],
                  ["calibrate", *loading, "--gate-on", "a", "--resamples", "0", "--out", p],
                  ["compare", *loading, "--resamples", "0", "--out", p],
                  ["compare", *loading, "--resamples", "0", "--log", p]]
    calls += [["evaluate", *loading, "--thresholds", str(th), "--resamples", "0", "--out", str(th)],
              ["compare", *loading, "--thresholds", str(th), "--resamples", "0", "--log", str(th)],
              ["diff", "--before", str(rep), "--after", str(rep), "--resamples", "0", "--out", str(rep)],
              ["verdict", "--report", str(rep), "--gates", str(gates), "--out", str(gates)],
              ["verdict", "--report", str(rep), "--gates", str(gates), "--out", str(rep)]]
    for argv in calls:
        msg = one_error(capsys, argv)
        assert "input" in msg, (argv, msg)
    for p, data in before.items():
        assert Path(p).read_bytes() == data, p
    assert sym.is_symlink()


def test_the_dashboard_export_protects_the_dashboard_only_inputs(demo_dir, tmp_path):
    """--gates and --dev-qrels are given only to the dashboard: its export refuses them too."""
    from rankscope_tui.commands import tui as T

    state = T.state_from_args(T.parse_args(T.demo_argv(demo_dir)))
    assert str(demo_dir / "gates.json") in state.protected_paths
    assert str(demo_dir / "qrels-dev.txt") in state.protected_paths
    for p in state.protected_paths:
        with pytest.raises(IO.InputError, match="input"):
            IO.check_output_path(p, list(state.protected_paths))
    link = tmp_path / "gates-link.json"
    link.symlink_to(demo_dir / "gates.json")
    with pytest.raises(IO.InputError, match="input"):
        IO.check_output_path(str(link), list(state.protected_paths))


# ============================================================================ 3. demo --out


def test_demo_out_refuses_a_directory_of_the_users_own_files(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "lexical.run").write_text("my own run\n")
    (mine / "notes.txt").write_text("notes\n")
    msg = one_error(capsys, ["demo", "--out", str(mine)])
    assert "not empty" in msg and "rankscope-synthetic.json" in msg, msg
    assert (mine / "lexical.run").read_text() == "my own run\n"
    assert sorted(p.name for p in mine.iterdir()) == ["lexical.run", "notes.txt"]
    msg = one_error(capsys, ["tui", "--demo-dir", str(mine)])
    assert (mine / "lexical.run").read_text() == "my own run\n"


def test_demo_out_writes_into_a_new_an_empty_or_a_previous_demo_directory(tmp_path, capsys):
    from rankscope_tui.demo import FILES

    empty = tmp_path / "empty"
    empty.mkdir()
    for d in (tmp_path / "new" / "deeper", empty):
        assert C.main(["demo", "--out", str(d)]) == 0
        assert sorted(p.name for p in d.iterdir()) == sorted(FILES.values())
    d = tmp_path / "new" / "deeper"
    (d / "my-notes.txt").write_text("kept\n")
    assert C.main(["demo", "--out", str(d), "--seed", "3"]) == 0  # a previous demo: written again
    assert C.main(["demo", "--out", str(d)]) == 0
    capsys.readouterr()
    assert (d / "my-notes.txt").read_text() == "kept\n"
    assert (d / "lexical.run").read_bytes() == (empty / "lexical.run").read_bytes()
    # a demo file edited by the user is not overwritten
    with open(d / "dense.run", "a") as fh:
        fh.write("q1 Q0 mine 1 1 edited\n")
    edited = (d / "dense.run").read_bytes()
    msg = one_error(capsys, ["demo", "--out", str(d)])
    assert "dense.run" in msg and "changed" in msg, msg
    assert (d / "dense.run").read_bytes() == edited


def test_demo_out_and_tui_demo_dir_in_an_unwritable_place_are_one_line(tmp_path, capsys):
    plain = tmp_path / "file.txt"
    plain.write_text("x")
    for argv in (["demo", "--out", str(plain / "sub")], ["tui", "--demo-dir", str(plain / "sub")], ["demo", "--out", str(plain)]):
        msg = one_error(capsys, argv)
        assert str(plain) in msg, msg
    assert plain.read_text() == "x"


# ============================================================================ 4. several outputs: all or nothing


def test_when_the_second_output_fails_the_first_is_untouched(small, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("OLD REPORT\n")
    (out / "pq.csv").write_text("OLD CSV\n")
    real_stage = IO._Staged.stage

    def stage(self):
        if self.path.endswith("pq.csv"):
            import errno

            raise IO.InputError(f"cannot write: {os.strerror(errno.ENOSPC)}", self.path)
        return real_stage(self)

    monkeypatch.setattr(IO._Staged, "stage", stage)
    msg = one_error(capsys, evaluate(small, "--out", str(out / "report.json"), "--per-query", str(out / "pq.csv")))
    assert "No space left" in msg
    assert (out / "report.json").read_text() == "OLD REPORT\n"
    assert (out / "pq.csv").read_text() == "OLD CSV\n"
    assert leftovers(out) == ["pq.csv", "report.json"]


def test_a_full_device_as_second_output_leaves_the_first_untouched(small, tmp_path, capsys):
    """A private /dev/full (mknod in the temp dir): the stream fails before any rename."""
    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        open(full, "wb").close()
    except OSError as exc:
        pytest.skip(f"cannot make a character device here: {exc}")
    (tmp_path / "report.json").write_text("OLD\n")
    msg = one_error(capsys, evaluate(small, "--out", str(tmp_path / "report.json"), "--per-query", str(full)))
    assert "No space left" in msg, msg
    assert (tmp_path / "report.json").read_text() == "OLD\n"
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert leftovers(tmp_path) == ["full", "in", "report.json"]


def test_two_outputs_with_one_path_are_refused(small, tmp_path, capsys):
    x = tmp_path / "x.json"
    x.write_text("MINE\n")
    alias = tmp_path / "alias.json"
    alias.symlink_to(x)
    for argv in (evaluate(small, "--out", str(x), "--per-query", str(x)),
                 evaluate(small, "--out", str(x), "--per-query", str(alias)),
                 ["compare", *small["lanes"], "--resamples", "0", "--out", str(x), "--log", str(x)],
                 ["compare", *small["lanes"], "--resamples", "0", "--out", str(tmp_path / "new.json"),
                  "--log", str(tmp_path / "new.json")]):
        msg = one_error(capsys, argv)
        assert "same file" in msg, msg
    assert x.read_text() == "MINE\n"
    assert not (tmp_path / "new.json").exists()


# ============================================================================ 5. concurrent compare --log


_CONCURRENT_LOG = r"""
import json, os, sys, time
from rankscope_tui import cli
argv, go, n = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
import rankscope_tui.commands.compare, rankscope_tui.kernel.instruments.compare  # warm, then fork
kids = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        while not os.path.exists(go):
            time.sleep(0.001)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os._exit(cli.main(argv))
    kids.append(pid)
open(go, "w").close()
codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in kids]
print(json.dumps(codes))
"""


def test_concurrent_compare_log_calls_lose_no_line(small, tmp_path):
    """12 compare calls at once, 3 rounds: 36 lines, every one a whole entry."""
    log = tmp_path / "log.jsonl"
    script = write(tmp_path, "log_race.py", _CONCURRENT_LOG)
    argv = ["compare", *small["lanes"], "--resamples", "0", "--log", str(log)]
    for rnd in range(3):
        go = tmp_path / f"go{rnd}"
        res = subprocess.run([sys.executable, script, json.dumps(argv), str(go), "12"], capture_output=True, text=True,
                             env=cli_env(), timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        assert json.loads(res.stdout) == [0] * 12, res.stderr[-3000:]
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 36
    entries = [json.loads(x) for x in lines]
    assert all(isinstance(e, dict) and e["rows"] for e in entries)
    assert len({e["qrels_sha256"] for e in entries}) == 1


def test_the_log_count_shown_is_the_count_before_this_call(small, tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    for i in range(3):
        assert C.main(["compare", *small["lanes"], "--resamples", "0", "--log", str(log)]) == 0
        out = capsys.readouterr().out
        assert f"{i} earlier comparison call(s)" in out, out
    assert len(log.read_text().splitlines()) == 3


# ============================================================================ 6. signals and stale temp files


def _start_mid_write(demo_dir, out: Path, marker: Path, tmp_path: Path) -> subprocess.Popen:
    script = write(tmp_path, "interruptible.py", _INTERRUPTIBLE)
    d = demo_dir
    return subprocess.Popen(
        [sys.executable, script, "evaluate", "--lane", str(d / "lexical.run"), "--qrels", str(d / "qrels-test.txt"),
         "--resamples", "0", "--out", str(out / "report.json")],
        cwd=str(tmp_path), env=cli_env({"RS_MARKER": str(marker), "RS_WHERE": "mid_write"}), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def test_sighup_unwinds_like_sigint(demo_dir, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_bytes(b"old")
    marker = tmp_path / "ready"
    proc = _start_mid_write(demo_dir, out, marker, tmp_path)
    try:
        assert _wait_for(lambda: marker.exists() or proc.poll() is not None, 90) and marker.exists()
        assert len(leftovers(out)) == 2  # the report and the half-written temp file
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.splitlines() == ["rankscope: interrupted"], err
    assert (out / "report.json").read_bytes() == b"old"
    assert leftovers(out) == ["report.json"]


def test_a_later_run_removes_the_temp_file_of_a_killed_run(demo_dir, small, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_bytes(b"old")
    marker = tmp_path / "ready"
    proc = _start_mid_write(demo_dir, out, marker, tmp_path)
    try:
        assert _wait_for(lambda: marker.exists() or proc.poll() is not None, 90) and marker.exists()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stale = [n for n in leftovers(out) if n != "report.json"]
    assert len(stale) == 1 and stale[0].startswith(".rankscope-") and f"-{proc.pid}-" in stale[0], stale
    assert (out / "report.json").read_bytes() == b"old"
    # temp files that are not stale: a live process's (this one's parent: alive, started before the
    # file), another host's, and a file that is not of the pattern
    live = out / f".rankscope-{IO._host_tag()}-{os.getppid()}-abc123.tmp"
    other_host = out / f".rankscope-otherhost-{proc.pid}-abc123.tmp"
    not_ours = out / ".rankscope-notes.tmp"
    for p in (live, other_host, not_ours):
        p.write_text("keep")
    assert C.main(evaluate(small, "--out", str(out / "report.json"))) == 0
    capsys.readouterr()
    assert sorted(leftovers(out)) == sorted(["report.json", live.name, other_host.name, not_ours.name])
    assert json.loads((out / "report.json").read_text())["schema"].startswith("rankscope.report/")


# ============================================================================ 13. unbounded work from options


def test_resamples_beyond_the_bound_are_refused_at_once(small, capsys):
    from rankscope_tui.kernel.statistics.resampling import MAX_RESAMPLES, bootstrap_means

    assert MAX_RESAMPLES == 1_000_000
    for b in ("1000000000", "99999999999999999999", "1000001"):
        t0 = time.monotonic()
        msg = one_error(capsys, ["evaluate", *small["lanes"], "--resamples", b])
        assert time.monotonic() - t0 < 30
        assert "--resamples" in msg and "1,000,000" in msg and b in msg, msg
        msg = one_error(capsys, ["compare", *small["lanes"], "--resamples", b])
        assert "1,000,000" in msg
        msg = one_error(capsys, ["diff", "--before", small["a"], "--after", small["a"], "--resamples", b])
        assert "1,000,000" in msg
    with pytest.raises(IO.InputError, match="1,000,000"):
        bootstrap_means([1.0, 2.0, 3.0], resamples=10**9)


def test_a_convex_grid_beyond_the_bound_is_refused_with_its_size(small, tmp_path, capsys):
    from rankscope_tui.kernel.fusion.methods import MAX_GRID_POINTS, grid_weights

    f = small
    c = write(tmp_path, "c.run", "q1 Q0 d9 1 3 c\nq2 Q0 d2 1 2 c\nq3 Q0 d5 1 1 c\n")
    three = [*f["lanes"], "--lane", f"c={c}", "--gate-on", "a", "--resamples", "0"]
    for step in ("0.0001", "0.001", "0.005"):
        size = math.comb(round(1 / float(step)) + 2, 2)  # compositions of 1/step into 3 parts
        t0 = time.monotonic()
        msg = one_error(capsys, ["calibrate", *three, "--step", step, "--out", str(tmp_path / "th.json")])
        assert time.monotonic() - t0 < 60
        assert f"{size:,} points" in msg and f"{MAX_GRID_POINTS:,}" in msg, msg
    assert not (tmp_path / "th.json").exists()
    assert C.main(["calibrate", *three, "--step", "0.01", "--out", str(tmp_path / "th.json")]) == 0  # 5,151 points
    capsys.readouterr()
    assert len(grid_weights(3, 0.01)) == math.comb(102, 2) <= MAX_GRID_POINTS


# ============================================================================ 14. one line, exit 2


def test_option_values_that_escaped_as_tracebacks_are_one_line(small, capsys):
    lanes = small["lanes"]
    cases = {
        ("evaluate", "--seed", "-1"): "--seed",
        ("evaluate", "--seed", str(2**64)): "--seed",
        ("evaluate", "--confidence", "0.9999999999999999"): "--confidence",
        ("evaluate", "--confidence", "nan"): "--confidence",
        ("evaluate", "--rrf-k", "99999999999999999999"): "--rrf-k",
        ("compare", "--seed", "-1"): "--seed",
        ("compare", "--min-delta", "nan"): "--min-delta",
        ("compare", "--min-delta", "inf"): "--min-delta",
        ("compare", "--min-delta", "-0.1"): "--min-delta",
    }
    for (cmd, opt, value), name in cases.items():
        msg = one_error(capsys, [cmd, *lanes, "--resamples", "999" if cmd == "compare" else "200", opt, value])
        assert name in msg, (opt, value, msg)
    # the kernel refuses them too, for callers that do not go through the command line
    from rankscope_tui.kernel.statistics.intervals import check_confidence
    from rankscope_tui.kernel.statistics.resampling import HalfStream

    with pytest.raises(IO.InputError):
        HalfStream(-1)
    with pytest.raises(IO.InputError):
        check_confidence(0.9999999999999999)
    assert check_confidence(1 - 1e-12) == 1 - 1e-12


def test_a_log_that_is_not_a_comparison_log_is_one_line_and_left_alone(small, tmp_path, capsys):
    entry = json.dumps({"time": "t", "qrels_sha256": "ab" * 32, "rows": []})
    cases = {
        "array.jsonl": (entry + "\n[1, 2]\n").encode(), "number.jsonl": b"42\n", "string.jsonl": b'"x"\n',
        "no-sha.jsonl": b'{"rows": []}\n', "latin1.jsonl": (entry + "\n").encode() + b'{"q": "caf\xe9"}\n',
        "truncated.jsonl": (entry + "\n" + entry[:20]).encode(), "deep.jsonl": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "gzip.jsonl": b"\x1f\x8b\x08\x00rest",
    }
    for name, data in cases.items():
        log = tmp_path / name
        log.write_bytes(data)
        msg = one_error(capsys, ["compare", *small["lanes"], "--resamples", "0", "--log", str(log)])
        assert msg.startswith(f"rankscope: error: {log}"), msg
        assert log.read_bytes() == data, name
    assert "array.jsonl:2:" in one_error(capsys, ["compare", *small["lanes"], "--resamples", "0", "--log",
                                                  str(tmp_path / "array.jsonl")])
    assert "latin1.jsonl:2:" in one_error(capsys, ["compare", *small["lanes"], "--resamples", "0", "--log",
                                                   str(tmp_path / "latin1.jsonl")])
    # an empty log, and a last line without its newline, are fine
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "open-end.jsonl").write_text(entry)
    for name in ("empty.jsonl", "open-end.jsonl"):
        assert C.main(["compare", *small["lanes"], "--resamples", "0", "--log", str(tmp_path / name)]) == 0
    capsys.readouterr()
    lines = (tmp_path / "open-end.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(x)["qrels_sha256"] for x in lines)


def test_a_goldens_file_nested_100k_deep_is_one_line(tmp_path, capsys):
    deep = tmp_path / "deep.txt"
    deep.write_text("# comment\nhit {\"run\": " + "[" * 100_000 + "]" * 100_000 + "} -> 1\n")
    msg = one_error(capsys, ["goldens", "--check", str(deep)])
    assert f"{deep}:2:" in msg and "nested too deeply" in msg, msg
    answer = tmp_path / "answer.txt"
    answer.write_text('rule_of_three {"n":10} -> ' + "[" * 100_000 + "]" * 100_000 + "\n")
    assert f"{answer}:1:" in one_error(capsys, ["goldens", "--check", str(answer)])


def test_a_goldens_answer_of_1e400_is_a_mismatch_not_a_crash(tmp_path, capsys):
    f = tmp_path / "g.txt"
    f.write_text('rule_of_three {"n":10} -> 1e400\n')
    assert C.main(["goldens", "--check", str(f)]) == 1
    out = capsys.readouterr().out
    assert f"{f}:1:" in out and "Traceback" not in out


def test_diff_on_a_report_holding_10_to_the_400_is_one_line(tmp_path, capsys, small):
    rep = tmp_path / "r.json"
    assert C.main(evaluate(small, "--out", str(rep))) == 0
    capsys.readouterr()
    data = json.loads(rep.read_text())
    lane = next(iter(data["per_query"]))
    level = next(iter(data["per_query"][lane]))
    qid = next(iter(data["per_query"][lane][level]))
    metric = next(iter(data["per_query"][lane][level][qid]))
    data["per_query"][lane][level][qid][metric] = 10**400  # json.dumps writes the integer literal, 401 digits
    bad = tmp_path / "huge.json"
    bad.write_text(json.dumps(data))
    assert "1" + "0" * 400 in bad.read_text()
    msg = one_error(capsys, ["diff", "--before", str(rep), "--after", str(bad), "--resamples", "0"])
    assert str(bad) in msg and "finite" in msg, msg


def test_stdout_on_a_full_device_or_closed_is_one_line(small):
    argv = evaluate(small)
    with open("/dev/full", "w") as full:  # used as stdout only: never an output path
        res = subprocess.run([sys.executable, "-m", "rankscope_tui.cli", *argv], stdout=full, stderr=subprocess.PIPE,
                             text=True, env=cli_env(), timeout=300)
    msg = assert_one_line_error(res)
    assert "stdout" in msg and "No space left" in msg, msg
    res = subprocess.run([sys.executable, "-c", "import os, sys, runpy; os.close(1); sys.argv = ['rankscope'] + sys.argv[1:];"
                          " runpy.run_module('rankscope_tui.cli', run_name='__main__')", *argv],
                         stderr=subprocess.PIPE, text=True, env=cli_env(), timeout=300)
    msg = assert_one_line_error(res)
    assert "stdout is closed" in msg, msg


def test_a_bad_progress_setting_is_one_line(small):
    res = run_cli(*evaluate(small), env={"RANKSCOPE_PROGRESS_AFTER_S": "abc"})
    assert "RANKSCOPE_PROGRESS_AFTER_S" in assert_one_line_error(res)


# ============================================================================ 21. CSV injection


HOSTILE_IDS = ["=cmd|' /C calc'!A0", "+1+1", "@SUM(1+1)*cmd|' /C calc'!A0", "-2+3", "\tq-tab", "\rq-cr", "q\rbare-cr",
               "q\nlf", "q\r\ncrlf", "'already-quoted", "a,b", 'a"b', '"', "=", "plain", "q=1", "é€"]


def _read_back(text: str) -> list[list[str]]:
    from rankscope_tui.render.report import csv_text_value

    rows = list(csv.reader(io.StringIO(text, newline="")))
    return [r[:3] and [csv_text_value(x) for x in r[:3]] + r[3:] for r in rows]


def test_the_per_query_csv_round_trips_every_hostile_id_and_runs_no_formula():
    from rankscope_tui.render.report import per_query_csv

    report = {"inputs": {"settings": {"metrics": ["rr", "ndcg@10"]}},
              "per_query": {"=lane": {"doc": {q: {"rr": 0.5, "ndcg@10": 0.25} for q in HOSTILE_IDS}}}}
    text = per_query_csv(report)
    raw = list(csv.reader(io.StringIO(text, newline="")))
    assert len(raw) == 1 + len(HOSTILE_IDS)
    for row in raw:
        assert len(row) == 5, row
        for field in row[:3]:  # no field a spreadsheet would evaluate
            assert not field.startswith(("=", "+", "-", "@", "\t", "\r")), field
    back = _read_back(text)
    assert back[0] == ["lane", "level", "qid", "rr", "ndcg@10"]
    assert [r[2] for r in back[1:]] == HOSTILE_IDS
    assert {r[0] for r in back[1:]} == {"=lane"}
    # every physical line break inside a field is inside quotes (RFC 4180): no row is split
    for line_no, r in enumerate(back[1:], 1):
        assert r[3:] == ["0.5", "0.25"], (line_no, r)


def test_the_cli_per_query_csv_neutralises_formula_qids(tmp_path, capsys):
    ids = ["=cmd|'/C;calc'!A0", "+1+1", "@SUM(A1)", "-5", "'q"]
    run = "".join(f"{q} Q0 d{i} 1 1.0 t\n" for i, q in enumerate(ids))
    qrels = "".join(f"{q} 0 d{i} 1\n" for i, q in enumerate(ids))
    rp, qp = write(tmp_path, "r.run", run), write(tmp_path, "q.txt", qrels)
    pq = tmp_path / "pq.csv"
    assert C.main(["evaluate", "--lane", f"x={rp}", "--qrels", qp, "--resamples", "0", "--metrics", "rr",
                   "--per-query", str(pq)]) == 0
    capsys.readouterr()
    text = pq.read_text(encoding="utf-8")
    for line in text.splitlines()[1:]:
        assert line.split(",")[2].startswith("'") or not line.split(",")[2].startswith(("=", "+", "-", "@")), line
    assert sorted(r[2] for r in _read_back(text)[1:]) == sorted(ids)


def test_a_fifo_as_the_compare_log_is_refused_without_waiting(small, tmp_path, capsys):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    msg = one_error(capsys, ["compare", *small["lanes"], "--resamples", "0", "--log", str(fifo)])
    assert time.monotonic() - t0 < 60 and "not a regular file" in msg, msg
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_relevant_level_above_every_grade_prints_a_dash_not_a_traceback(small, capsys):
    """(found while bounding option values) no positive query: the unique share is undefined."""
    assert C.main(["evaluate", *small["lanes"], "--relevant", "99999999999999999999", "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert "unique share" in out and "—" in out.split("unique share", 1)[1].splitlines()[0]
    assert "None" not in out and "nan" not in out


def test_a_goldens_error_names_the_line_counted_in_line_feeds(tmp_path, capsys):
    """(fuzzer finding) str.splitlines() also splits at VT, FF, U+2028...: the line named must be
    the file's own line, as an editor counts it."""
    f = tmp_path / "g.txt"
    f.write_text("# a comment with\x0b a vertical tab and \u2028 a line separator\n"
                 'rule_of_three {"n":10} -> 0.3\n'
                 "not a goldens line\n", encoding="utf-8")
    assert f"{f}:3:" in one_error(capsys, ["goldens", "--check", str(f)])


def test_the_dashboard_export_protects_every_shard_of_a_lane(demo_dir, tmp_path):
    """A lane given as shards (`NAME=a.run,b.run` or a glob): each shard is an input."""
    from rankscope_tui.commands import tui as T

    a, b = tmp_path / "part-1.run", tmp_path / "part-2.run"
    lines = (demo_dir / "dense.run").read_text().splitlines(keepends=True)
    a.write_text("".join(lines[: len(lines) // 2]))
    b.write_text("".join(lines[len(lines) // 2:]))
    for spec in (f"{a},{b}", str(tmp_path / "part-*.run")):
        argv = ["--lane", f"dense={spec}", "--qrels", str(demo_dir / "qrels-test.txt")]
        state = T.state_from_args(T.parse_args(argv))
        for shard in (a, b):
            assert str(shard) in state.protected_paths, (spec, state.protected_paths)
            with pytest.raises(IO.InputError, match="input"):
                IO.check_output_path(str(shard), list(state.protected_paths))
