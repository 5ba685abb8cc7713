"""`evaluate`'s text fits the terminal (issue 29.18): 80 columns when stdout is not a
terminal, the terminal's width when it is, the old one-line-per-lane layout with `--wide`;
the same inputs and width give the same bytes. Oracle: report.json's own cells, written by
the same run (the numbers are tested elsewhere; here: every one reaches the text whole).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import REPO, cli_env

FAST = ("--resamples", "999")


def _demo_args(demo_dir, out) -> list[str]:
    return ["evaluate", "--lane", str(demo_dir / "lexical.run"), "--lane", str(demo_dir / "dense.run"),
            "--qrels", str(demo_dir / "qrels-test.txt"), "--strata", str(demo_dir / "strata.tsv"), *FAST, "--out", str(out)]


def _cells(report: dict) -> list[tuple[str, str, str, dict]]:
    metrics = report["inputs"]["settings"]["metrics"]
    return [(lane, level, m, cells[m]) for lane, levels in report["lanes"].items() for level, cells in levels.items()
            for m in metrics]


def test_default_text_fits_80_columns_and_holds_every_number(cli_run, demo_dir, tmp_path):
    rc, text, err = cli_run(*_demo_args(demo_dir, tmp_path / "r.json"))
    assert rc == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    lines = text.splitlines()
    # the tables (Overall, the judged means, every stratum) and the definitions paragraph
    # fit 80 columns; a statement line (attribution, gate, a warning) stays one line
    tables = lines[lines.index("Overall"):next(i for i, ln in enumerate(lines) if ln.startswith("Attribution"))]
    caption = lines[len(lines) - 1 - lines[::-1].index(""):]
    assert max(map(len, tables + caption)) <= 80, max(tables + caption, key=len)
    assert len(caption) > 1 and len(tables) > 20
    assert not any(ln != ln.rstrip() for ln in lines)  # no trailing blanks
    for lane, level, m, c in _cells(report):
        # the mean on the lane's line, its interval on the line below, in the metric's column
        i = next(i for i, ln in enumerate(lines) if ln.split()[:2] == [lane, level] and m in lines[_header(lines, i)])
        col = lines[_header(lines, i)].index(m)
        assert lines[i][col:].split()[0] == f"{c['value']:.4f}", (lane, m)
        below = lines[i + 1][col:]
        want = "no variation" if c["low"] == c["high"] else f"[{c['low']:.4f}, {c['high']:.4f}]"
        assert below.startswith(want), (lane, m, below)
    jm = report["summary"]["judged_means"]
    assert f"Means over all {jm['queries']} judged queries" in text
    # the same inputs and width: the same bytes
    rc, again, _ = cli_run(*_demo_args(demo_dir, tmp_path / "r2.json"))
    assert again == text


def _header(lines: list[str], i: int) -> int:
    """The header line of the block that holds line ``i`` (the last line starting 'lane')."""
    return max(j for j in range(i + 1) if lines[j].startswith("lane "))


def test_wide_keeps_one_line_per_lane(cli_run, demo_dir, tmp_path):
    rc, text, err = cli_run(*_demo_args(demo_dir, tmp_path / "r.json"), "--wide")
    assert rc == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    metrics = report["inputs"]["settings"]["metrics"]
    lines = text.splitlines()
    assert max(map(len, lines)) > 200  # the old layout: every metric on the lane's line
    for lane, levels in report["lanes"].items():
        row = next(ln for ln in lines if ln.split()[:2] == [lane, "doc"])
        for m in metrics:
            c = levels["doc"][m]
            cell = (f"{c['value']:.4f} (not informative: no variation)" if c["low"] == c["high"]
                    else f"{c['value']:.4f} [{c['low']:.4f}, {c['high']:.4f}]")
            assert cell in row, (lane, m)


def test_a_terminal_gets_its_own_width(demo_dir, tmp_path):
    """stdout a terminal (a pty) of 100 columns (COLUMNS, as a shell sets it): lines up to 100,
    and wider than the 80 of a pipe."""
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "rankscope_tui.cli", *_demo_args(demo_dir, tmp_path / "r.json")],
                                stdout=slave, stderr=subprocess.PIPE, env=cli_env({"COLUMNS": "100", "LINES": "40"}),
                                cwd=str(REPO))
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        os.close(master)
    lines = b"".join(chunks).decode("utf-8").replace("\r\n", "\n").splitlines()
    tables = lines[lines.index("Overall"):next(i for i, ln in enumerate(lines) if ln.startswith("Attribution"))]
    assert max(map(len, tables)) <= 100 and max(map(len, tables)) > 80
