"""Issue 30, the "Low" section: one test per defect, each against a hand-worked
expectation (what the README promises, the bytes a file holds, a count done by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from rankscope_tui.kernel.statistics import tukey as tk


def _runs(tmp_path: Path, k: int, queries: int = 6, docs: int = 4) -> tuple[list[Path], Path]:
    """``k`` small runs over ``queries`` queries and a qrels judging d0 and d1 relevant;
    lane i ranks the docs rotated by i (so the lanes differ)."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(queries) for d in (0, 1)))
    lanes = []
    for i in range(k):
        p = tmp_path / f"s{i}.run"
        rows = []
        for q in range(queries):
            order = [(d + i + q) % docs for d in range(docs)]
            rows += [f"q{q} Q0 d{doc} {r + 1} {docs - r} s{i}\n" for r, doc in enumerate(order)]
        p.write_text("".join(rows))
        lanes.append(p)
    return lanes, qrels


def test_all_pairs_takes_nine_lanes_without_counting_the_added_rrf(tmp_path, cli_run):
    """Item 14: the README says at most 9 lanes; nine input lanes were refused as "got 10"."""
    lanes, qrels = _runs(tmp_path, tk.MAX_SYSTEMS)
    out = tmp_path / "t.json"
    argv = ["compare", *[x for p in lanes for x in ("--lane", p)], "--qrels", qrels, "--all-pairs",
            "--metric", "ndcg@10", "--resamples", "999", "--out", out]
    rc, stdout, err = cli_run(*argv)
    assert rc == 0, err
    payload = json.loads(out.read_text())
    assert [x["lane"] for x in payload["lanes"]] == [f"s{i}" for i in range(9)]
    assert any("rrf" in w and "at most 9" in w for w in payload["warnings"])
    assert "rrf left out" in stdout
    # ten input lanes are still refused, in one line
    lanes10, _ = _runs(tmp_path, 10)
    rc, _, err = cli_run(*argv[:-2], "--lane", lanes10[-1])
    assert rc == 2 and "got 10" in err and err.count("\n") == 1
