"""Issue 30, the "Low" section: one test per defect, each against a hand-worked
expectation (what the README promises, the bytes a file holds, a count done by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

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
    assert "rrf" not in stdout  # a fused lane takes part only when named
    # ten input lanes are still refused, in one line
    lanes10, _ = _runs(tmp_path, 10)
    rc, _, err = cli_run(*argv[:-2], "--lane", lanes10[-1])
    assert rc == 2 and "got 10" in err and err.count("\n") == 1


class _FullStdout:
    """A stdout on a full device: every write and flush fails as ``/dev/full`` does."""

    closed = False

    def fileno(self):
        import io

        raise io.UnsupportedOperation("a test's stream")

    def write(self, text):
        raise OSError(28, "No space left on device")

    def flush(self):
        raise OSError(28, "No space left on device")


def test_a_failing_stdout_leaves_every_output_unwritten(demo_dir, tmp_path, monkeypatch, capsys):
    """Item 21: exit 2 means nothing written; with ``--out`` and a stdout on /dev/full the
    report used to be in place before the text failed."""
    import subprocess
    import sys

    from support import cli_env

    from rankscope_tui import cli

    d = demo_dir
    lanes = ["--lane", d / "lexical.run", "--lane", d / "dense.run", "--qrels", d / "qrels-test.txt"]
    report = tmp_path / "report.json"
    rc = cli.main([str(a) for a in ["evaluate", *lanes, "--out", report]])
    assert rc == 0 and report.exists()
    gates = d / "gates.json"
    calls = {
        "evaluate": ["evaluate", *lanes, "--per-query", "{out}.csv", "--out"],
        "compare": ["compare", *lanes, "--resamples", "999", "--out"],
        "all-pairs": ["compare", *lanes, "--all-pairs", "--metric", "ndcg@10", "--resamples", "999", "--out"],
        "calibrate": ["calibrate", *lanes, "--gate-on", "rrf", "--out"],
        "diff": ["diff", "--before", report, "--after", report, "--out"],
        "verdict": ["verdict", "--report", report, "--gates", gates, "--out"],
        "plot": ["plot", "rrf-k", "--report", report, "--out"],
    }
    for name, argv in calls.items():
        out = tmp_path / f"{name}.{'svg' if name == 'plot' else 'json'}"
        argv = [str(a).replace("{out}", str(out)) for a in argv] + [str(out)]
        capsys.readouterr()
        monkeypatch.setattr(cli, "_silence_stdout", lambda: None)  # would point this process's fd 1 at /dev/null
        monkeypatch.setattr(sys, "stdout", _FullStdout())
        rc = cli.main(argv)
        monkeypatch.undo()
        err = capsys.readouterr().err
        assert rc == 2 and "No space left on device" in err and err.count("\n") == 1, (name, rc, err)
        left = sorted(p.name for p in tmp_path.iterdir() if p.name != "report.json")
        assert left == [], (name, left)  # no output and no temporary file
    # the real device, in a fresh interpreter
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "rankscope_tui.cli", "evaluate", *map(str, lanes), "--out",
                            str(tmp_path / "r2.json")], stdout=full, stderr=subprocess.PIPE, text=True, env=cli_env(),
                           timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "r2.json").exists()


def test_a_mapping_naming_the_header_columns_selects_the_table_reading(tmp_path, cli_run):
    """Item 13: a header TSV with unknown column names was sniffed as an MS MARCO run (and
    refused) unless ``--run-format tsv`` was added; the mapping now selects the table.
    Hand-worked: q1 ranks d1 (relevant) first, q2 ranks d2 over the relevant d1, so
    P@1 = (1 + 0)/2 = 0.5 and RR = (1 + 1/2)/2 = 0.75."""
    import gzip

    run = tmp_path / "odd.tsv"
    run.write_text("question\tpassage\tsim\nq1\td1\t0.9\nq1\td2\t0.5\nq2\td2\t0.8\nq2\td1\t0.3\n")
    qrels = tmp_path / "judged.tsv"
    qrels.write_text("qq\tdd\trel\nq1\td1\t1\nq2\td1\t1\n")
    zipped = tmp_path / "odd.tsv.gz"
    zipped.write_bytes(gzip.compress(run.read_bytes()))
    cols = ["--run-columns", "query=question,doc=passage,score=sim", "--qrels-columns", "query=qq,doc=dd,relevance=rel"]
    for lane in (run, zipped):
        out = tmp_path / "r.json"
        rc, _, err = cli_run("evaluate", "--lane", lane, "--qrels", qrels, *cols, "--metrics", "P@1,rr", "--out", out)
        assert rc == 0, err
        doc = json.loads(out.read_text())["lanes"][lane.name.split(".")[0]]["doc"]
        assert doc["p@1"]["value"] == 0.5 and doc["rr"]["value"] == 0.75
    # a mapping naming a column the header lacks still says which
    rc, _, err = cli_run("evaluate", "--lane", run, "--qrels", qrels, "--run-columns", "query=question,doc=nope",
                         "--qrels-columns", "query=qq,doc=dd,relevance=rel")
    assert rc == 2 and err.count("\n") == 1


def test_seed_runs_with_one_run_per_system_is_refused(tmp_path, cli_run):
    """Item 23: ``--seed-runs`` with one ``SYSTEM@SEED`` run per system exited 0 doing
    nothing (and the checklist said no seeds were given); it is refused in one line."""
    lanes, qrels = _runs(tmp_path, 2)
    argv = ["compare", "--lane", f"a@1={lanes[0]}", "--lane", f"b@1={lanes[1]}", "--qrels", qrels,
            "--seed-runs", "--resamples", "999"]
    rc, out, err = cli_run(*argv)
    assert rc == 2 and err.count("\n") == 1 and "--seed-runs" in err and "one run" in err, (rc, out, err)
    # two runs of one system: accepted, with its retraining spread
    extra = tmp_path / "a2.run"
    extra.write_text(lanes[0].read_text().replace("d0 ", "dX ", 1))
    rc, out, err = cli_run(*argv[:3], "--lane", f"a@2={extra}", *argv[3:])
    assert rc == 0, err
    assert "6. seeds: the intervals describe one trained model" in out and "no retraining seeds given" not in out


def test_api_edges_are_refused_in_the_api_words():
    """Item 24: a list as a column mapping raised AttributeError; ``measures=''`` was read
    as the defaults; values near 1e308 gave numpy RuntimeWarnings and nan; API errors told
    the caller to use ``--run-columns`` / ``--metrics``."""
    import warnings

    import pandas as pd
    import pytest

    import rankscope_tui as rs
    from rankscope_tui.kernel.errors import InputError

    qrels = {"q1": {"d1": 1}, "q2": {"d1": 1}}
    run = {"q1": {"d1": 1.0, "d2": 0.5}, "q2": {"d2": 1.0, "d1": 0.5}}
    with pytest.raises(InputError, match=r"^run_columns: .*not a list"):
        rs.evaluate(qrels, run, run_columns=["A", "B", "C"])
    for empty in ("", [], " , "):
        with pytest.raises(InputError, match="^measures: no metric given"):
            rs.evaluate(qrels, run, measures=empty)
    with pytest.raises(InputError, match="^measures: no metric given"):
        rs.compare(qrels, {"a": run, "b": run}, measures="")
    odd = pd.DataFrame({"A": ["q1", "q2"], "B": ["d1", "d1"], "C": [1.0, 2.0]})
    for call in (lambda: rs.evaluate(qrels, odd), lambda: rs.evaluate(qrels, run, measures="bogus"),
                 lambda: rs.compare(qrels, {"a": run, "b": run}, measures="bogus")):
        with pytest.raises(InputError) as info:
            call()
        assert "--" not in str(info.value), str(info.value)
    with pytest.raises(InputError, match="name them with run_columns"):
        rs.evaluate(qrels, odd)
    # the squares of differences near 1e308 overflow: refused, with no numpy warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="overflow the statistics over 4 queries"):
            rs.paired([1e308, -1e308, 1e308, 5.0], [-1e308, 1e308, -1e308, 6.0], ["a", "b", "c", "d"], resamples=999)
        # 1e101 over 4 queries stays within the bound (max/(8·4^1.5))^(1/3) ≈ 1.41e102: computed, finite
        res = rs.paired([1e101, -1e101, 0.0, 5.0], [-1e101, 1e101, 1.0, 6.0], ["a", "b", "c", "d"], resamples=999)
        assert res.row.stats.difference == pytest.approx((-2e101 + 2e101 + 1 + 1) / 4, abs=1e87)
        assert np.isfinite(res.row.stats.ci_low) and np.isfinite(res.row.stats.ci_high)


def test_line_and_paragraph_separators_print_escaped(demo_dir, tmp_path, cli_run):
    """Item 16: U+2028/U+2029 in a stratum label reached text output and
    LaTeX raw (a line break in a terminal or editor; pdflatex stops). They print as
    ``\\u2028``/``\\u2029`` as the other controls do, and the LaTeX compiles."""
    from test_latex_paper import compile_tex

    labels = (demo_dir / "strata.tsv").read_text(encoding="utf-8")
    strata = tmp_path / "strata.tsv"
    strata.write_text(labels.replace("paraphrase", "para\u2028phrase").replace("no-overlap", "no\u2029overlap"),
                      encoding="utf-8")
    argv = ["evaluate", "--lane", demo_dir / "lexical.run", "--lane", demo_dir / "dense.run",
            "--qrels", demo_dir / "qrels-test.txt", "--strata", strata, "--metrics", "rr,ndcg@10", "--resamples", "200"]
    for fmt in ("text", "markdown", "latex"):
        rc, out, err = cli_run(*argv, "--format", fmt)
        assert rc == 0, err
        assert "\u2028" not in out and "\u2029" not in out, fmt
        assert "u2028" in out and "u2029" in out, fmt  # shown, not dropped
        if fmt == "latex":
            compile_tex(out, tmp_path)


def test_empty_ids_are_refused_from_json_json_lines_and_parquet(tmp_path, cli_run):
    """Item 19: an empty query or doc id was read from JSON, JSON Lines and Parquet (a TREC
    line cannot hold one; the per-query CSV then had an empty cell). Refused naming the
    file and the line (the row, for Parquet) that holds it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\n")
    runs = {
        "a.json": ('{"q1": {"d1": 1.0},\n "q2": {"": 0.5}}', 2),
        "b.json": ('{"q1": {"d1": 1.0},\n "": {"d1": 0.5}}', 2),
        "c.jsonl": ('{"qid": "q1", "docno": "d1", "score": 1.0}\n{"qid": "q2", "docno": "", "score": 0.5}\n', 2),
        "d.jsonl": ('{"qid": "", "docno": "d1", "score": 1.0}\n', 1),
    }
    for name, (text, line) in runs.items():
        (tmp_path / name).write_text(text)
    pq.write_table(pa.table({"qid": ["q1", "q2", ""], "docno": ["d1", "d1", "d2"], "score": [1.0, 0.5, 0.2]}),
                   tmp_path / "e.parquet")
    runs["e.parquet"] = ("", 3)
    for name, (_, line) in runs.items():
        rc, _, err = cli_run("evaluate", "--lane", tmp_path / name, "--qrels", qrels, "--resamples", "0")
        assert rc == 2 and err.count("\n") == 1 and "empty" in err, (name, err)
        assert f"{tmp_path / name}:{line}:" in err, (name, err)
    # a qrels file: the same rule
    (tmp_path / "q.json").write_text('{"q1": {"d1": 1, "": 1}}')
    (tmp_path / "ok.json").write_text('{"q1": {"d1": 1.0}}')
    rc, _, err = cli_run("evaluate", "--lane", tmp_path / "ok.json", "--qrels", tmp_path / "q.json")
    assert rc == 2 and f"{tmp_path / 'q.json'}:1:" in err and "empty" in err, err


def test_cr_only_files_name_the_line_of_a_nul_or_non_utf8_byte(tmp_path, cli_run):
    """Item 22: in a file whose lines end in a lone CR, the NUL and non-UTF-8 errors named
    line 1 whatever the line; the readers split lines at CR, so the bad byte on the third
    CR-ended line is on line 3 (and on line 2 of the qrels below)."""
    import gzip

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    good = b"q1 Q0 d1 1 1.0 x\rq1 Q0 d2 2 0.5 x\r"
    cases = {"nul.run": good + b"q2 Q0 d\x001 1 1.0 x\r", "bad.run": good + b"q2 Q0 d\xff1 1 1.0 x\r",
             "crlf.run": good.replace(b"\r", b"\r\n") + b"q2 Q0 d\xff1 1 1.0 x\r\n"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        (tmp_path / (name + ".gz")).write_bytes(gzip.compress(data))
        for lane, extra in ((name, []), (name + ".gz", []), (name, ["--buckets", "2"])):
            rc, _, err = cli_run("evaluate", "--lane", tmp_path / lane, "--qrels", qrels, "--resamples", "0", *extra)
            assert rc == 2 and f"{tmp_path / lane}:3: " in err, (lane, extra, err)
    bad_qrels = tmp_path / "cr.qrels"
    bad_qrels.write_bytes(b"q1 0 d1 1\rq2 0 d\xff1 1\r")
    (tmp_path / "ok.run").write_bytes(good)
    rc, _, err = cli_run("evaluate", "--lane", tmp_path / "ok.run", "--qrels", bad_qrels)
    assert rc == 2 and f"{bad_qrels}:2: not UTF-8" in err, err


def test_compressed_trailing_bytes_skippable_zstd_frames_and_lz4_legacy(tmp_path, cli_run):
    """Item 15: bz2 and xz with bytes after the last stream were read silently without
    them (gzip refuses); a zstd file starting with a skippable frame and lz4's legacy
    format were refused as "binary file (NUL byte)". Now: trailing bytes refused, two
    concatenated streams read as one content (as ``bzip2 -d``/``xz -d`` do), the
    skippable frame skipped, the legacy format refused by name."""
    import bz2
    import lzma
    import struct

    import pyarrow as pa

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d3 1\n")
    first, second = b"q1 Q0 d1 1 1.0 x\nq1 Q0 d2 2 0.5 x\n", b"q2 Q0 d3 1 0.9 x\n"
    skippable = struct.pack("<II", 0x184D2A53, 4) + b"meta"
    files = {
        "trail.bz2": bz2.compress(first + second) + b"garbage",
        "trail.xz": lzma.compress(first + second) + b"garbage",
        "two.bz2": bz2.compress(first) + bz2.compress(second),
        "two.xz": lzma.compress(first) + b"\0" * 4 + lzma.compress(second) + b"\0" * 8,
        "skip.zst": skippable + pa.compress(first + second, codec="zstd", asbytes=True),
        # lz4 -l of the two lines: the legacy magic, a block size, one raw LZ4 block (all literals)
        "legacy.lz4": b"\x02\x21\x4c\x18" + struct.pack("<I", 1 + len(first + second))
                      + bytes([0xF0, len(first + second) - 15]) + first + second,
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    # the streamed bucket road reads compressed TREC runs itself: one case of each kind there
    for extra, names in (([], files), (["--buckets", "2"], ("trail.xz", "two.bz2"))):
        for name in {"trail.bz2", "trail.xz"} & set(names):
            rc, _, err = cli_run("evaluate", "--lane", tmp_path / name, "--qrels", qrels, "--resamples", "0", *extra)
            assert rc == 2 and "trailing bytes after the last" in err and err.count("\n") == 1, (name, err)
        if "legacy.lz4" in names:
            rc, _, err = cli_run("evaluate", "--lane", tmp_path / "legacy.lz4", "--qrels", qrels, *extra)
            assert rc == 2 and "lz4 legacy format" in err, err
        for name in {"two.bz2", "two.xz", "skip.zst"} & set(names):
            out = tmp_path / "r.json"
            rc, _, err = cli_run("evaluate", "--lane", tmp_path / name, "--qrels", qrels, "--metrics", "P@1",
                                 "--resamples", "0", "--out", out, *extra)
            assert rc == 0, (name, err)
            lane = json.loads(out.read_text())["lanes"][name.split(".")[0]]["doc"]
            assert lane["p@1"]["value"] == 1.0, name  # both queries read: d1 and d3 first, both relevant


def test_table_value_errors_show_plain_numbers_and_their_row(tmp_path):
    """Item 17: Parquet and DataFrame errors showed ``np.float64(nan)``, ``np.float64(2.5)``
    and pyarrow's range message without the row."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pytest

    import rankscope_tui as rs
    from rankscope_tui.kernel.errors import InputError

    qrels, run = {"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}
    ids = {"qid": ["q1", "q1", "q1"], "docno": ["d1", "d2", "d3"]}
    cases = [
        ("score", [1.0, 0.5, float("nan")], "run", "3: score is not finite: nan"),
        ("label", [1.0, 0.0, 2.5], "qrels", "3: grade is not an integer: 2.5"),
        ("rank", [1.0, 2.0, 1e20], "run", "3: rank out of range (must fit a 32-bit integer): 1e+20"),
        ("score", pa.array([1, 2, 2**62], pa.int64()), "run", "3: score 4611686018427387904 is beyond ±2^53"),
    ]
    for col, values, role, expected in cases:
        path = tmp_path / f"{col}.parquet"
        pq.write_table(pa.table({**ids, col: values}), path)
        for given in (str(path), pd.DataFrame({**ids, col: pa.array(values).to_pylist()})):
            with pytest.raises(InputError) as info:
                if role == "run":
                    rs.evaluate(qrels, given)
                else:
                    rs.evaluate(given, run)
            text = str(info.value)
            # pandas turns NaN into a null on the way to arrow: the DataFrame says "missing"
            nan_as_null = isinstance(given, pd.DataFrame) and "missing (null)" in text
            assert (expected in text or nan_as_null) and "np." not in text, text


def test_parquet_string_view_columns_are_read(tmp_path, cli_run):
    """Item 18: Parquet ``string_view`` columns (Polars writes them) were refused. Hand-worked:
    q1 ranks d1 then the relevant d2 (RR 1/2), q2 ranks the relevant d3 first (RR 1): MRR 0.75."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    view = pa.string_view()
    run = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": pa.array(["q1", "q1", "q2"], view), "docno": pa.array(["d1", "d2", "d3"], view),
                             "score": pa.array(["0.9", "0.5", "0.7"], view)}), run)
    qrels = tmp_path / "qrels.parquet"
    pq.write_table(pa.table({"qid": pa.array(["q1", "q2"], view), "docno": pa.array(["d2", "d3"], view),
                             "label": [1, 1]}), qrels)
    assert pq.read_schema(run).field("qid").type == view  # the file holds views, not plain strings
    out = tmp_path / "r.json"
    rc, _, err = cli_run("evaluate", "--lane", run, "--qrels", qrels, "--metrics", "rr", "--resamples", "0", "--out", out)
    assert rc == 0, err
    assert json.loads(out.read_text())["lanes"]["run"]["doc"]["rr"]["value"] == 0.75


def test_vega_lite_specs_escape_the_less_than_sign(demo_dir, tmp_path, cli_run):
    """Item 28: a spec carried ``</script`` raw (a stratum label, a lane name), which ends an
    HTML ``<script>`` block the spec is pasted into. Every ``<`` is written ``\\u003c``:
    the JSON reads back the same names."""
    report = tmp_path / "report.json"
    strata = tmp_path / "strata.tsv"
    strata.write_text((demo_dir / "strata.tsv").read_text().replace("paraphrase", "</script>"))
    rc, _, err = cli_run("evaluate", "--lane", f"lex<i>={demo_dir / 'lexical.run'}", "--lane", demo_dir / "dense.run",
                         "--qrels", demo_dir / "qrels-test.txt", "--strata", strata, "--metrics", "rr",
                         "--resamples", "200", "--out", report)
    assert rc == 0, err
    spec = tmp_path / "forest.vl.json"
    rc, _, err = cli_run("plot", "forest", "--report", report, "--out", spec)
    assert rc == 0, err
    raw = spec.read_bytes()
    assert b"<" not in raw and b"\\u003c/script>" in raw and b"lex\\u003ci>" in raw
    text = json.dumps(json.loads(raw), ensure_ascii=False)
    assert "</script>" in text and "lex<i>" in text  # read back as the names given


def test_the_export_dialog_takes_what_the_command_line_writes(tmp_path, cli_run):
    """Item 29: the dashboard's export refused a symlinked output and ``/dev/null`` ("exists
    and is not a regular file") where ``--out`` writes through the link and into the device.
    Each target is tried on both faces: the dialog accepts exactly what ``evaluate --out``
    writes, and the link stays a link."""
    import os

    from rankscope_tui.widgets.dialogs import check_output_path

    lanes, qrels = _runs(tmp_path, 1)
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "made-by-the-write.json")
    (tmp_path / "folder").mkdir()
    cases = {str(link): True, "/dev/null": True, str(dangling): True, str(tmp_path / "new.json"): True,
             str(tmp_path / "folder"): False, str(tmp_path / "missing" / "r.json"): False}
    for path, writable in cases.items():
        rc, _, err = cli_run("evaluate", "--lane", lanes[0], "--qrels", qrels, "--metrics", "rr", "--resamples", "0",
                             "--out", path)
        assert (rc == 0) is writable, (path, err)
        problem = check_output_path(path)
        assert (problem is None) is writable, (path, problem)
    assert link.is_symlink() and json.loads(target.read_text())["lanes"]  # written through the link
    assert os.path.exists(tmp_path / "made-by-the-write.json")


def test_plot_refuses_a_lane_that_became_a_fifo(tmp_path, cli_run):
    """Item 20: ``plot rrf-k`` waited, with no note, on a lane that became a FIFO after the
    report was written (nothing will write it). It is refused at once, naming the path."""
    import os
    import threading

    lanes, qrels = _runs(tmp_path, 2)
    report = tmp_path / "report.json"
    rc, _, err = cli_run("evaluate", "--lane", lanes[0], "--lane", lanes[1], "--qrels", qrels, "--resamples", "0",
                         "--out", report)
    assert rc == 0, err
    lanes[1].unlink()
    os.mkfifo(lanes[1])
    # a writer that never comes: should the open block, this one unblocks it after the test failed
    unblock = threading.Timer(20.0, lambda: os.close(os.open(lanes[1], os.O_WRONLY | os.O_NONBLOCK)))
    unblock.daemon = True
    unblock.start()
    try:
        rc, _, err = cli_run("plot", "rrf-k", "--report", report, "--out", tmp_path / "k.vl.json")
    finally:
        unblock.cancel()
    assert rc == 2 and f"{lanes[1]}: is a pipe now" in err and err.count("\n") == 1, err
    assert not (tmp_path / "k.vl.json").exists()


def test_the_status_line_never_lists_the_palette_workers(demo_dir):
    """Item 26: after palette use the title bar listed the palette's internal workers
    (``_gather_commands('dark')``). A palette worker held running (an event it waits on)
    is left out of what the status line lists; the app's own work is listed."""
    import asyncio

    from textual.command import CommandPalette
    from textual.worker import WorkerState

    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import demo_argv, parse_args, state_from_args
    from rankscope_tui.state import DashboardState

    options = state_from_args(parse_args(demo_argv(demo_dir) + ["--resamples", "999"]), synthetic=True).options

    async def scenario():
        app = RankscopeApp(DashboardState(options, synthetic=True, source_label="test"))
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("ctrl+p")
            for _ in range(100):
                if isinstance(app.screen, CommandPalette):
                    break
                await pilot.pause(0.02)
            palette = app.screen
            assert isinstance(palette, CommandPalette)
            hold, app_hold = asyncio.Event(), asyncio.Event()
            palette.run_worker(hold.wait(), name="_gather_commands('dark')", group=palette._GATHER_COMMANDS_GROUP)
            app.run_worker(app_hold.wait(), description="app work")
            for _ in range(100):
                if sum(w.state == WorkerState.RUNNING for w in app.workers if w.name != "load") >= 2:
                    break
                await pilot.pause(0.02)
            shown = app.busy_workers()
            assert "app work" in shown and not any("_gather_commands" in s for s in shown), shown
            hold.set()
            app_hold.set()
            await pilot.press("escape")

    asyncio.run(scenario())


def test_a_whitespace_bomb_is_refused_without_a_copy_of_its_size(tmp_path, cli_run):
    """Item 25: whitespace-only content cost about twice its size before "empty file" (the
    bytes, then the same again as text). 64 MB of spaces and newlines: refused with at
    most a few MB allocated on top of the bytes (tracemalloc counts every Python buffer)."""
    import tracemalloc

    import pytest

    from rankscope_tui.kernel.errors import InputError
    from rankscope_tui.kernel.inputs.files import decode_text

    size = 64 * 2**20
    raw = bytearray(b"  \n\t" * (size // 4))
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="empty file"):
            decode_text(raw, "bomb.run")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, peak  # a decoded copy would be 64 MiB
    blank = tmp_path / "blank.run"
    blank.write_bytes(b" \n" * 1000)
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    rc, _, err = cli_run("evaluate", "--lane", blank, "--qrels", qrels)
    assert rc == 2 and "empty file" in err and err.count("\n") == 1, err


class _GoneReader(_FullStdout):
    """A stdout whose reader went away (``| head``): writes raise BrokenPipeError."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_went_away_still_gets_the_files_written(demo_dir, tmp_path, monkeypatch):
    """Item 21's other side: the text written before the files are renamed must not make
    ``| head`` (not a failure of ours: exit 0) lose the report."""
    import sys

    from rankscope_tui import cli

    d = demo_dir
    out = tmp_path / "r.json"
    monkeypatch.setattr(cli, "_silence_stdout", lambda: None)  # would point this process's fd 1 at /dev/null
    monkeypatch.setattr(sys, "stdout", _GoneReader())
    rc = cli.main([str(a) for a in ["evaluate", "--lane", d / "lexical.run", "--qrels", d / "qrels-test.txt",
                                    "--metrics", "rr", "--resamples", "0", "--out", out]])
    monkeypatch.undo()
    assert rc == 0 and json.loads(out.read_text())["lanes"]["lexical"]["doc"]["rr"]["value"] > 0


def test_an_id_with_a_lone_surrogate_is_refused_in_the_api():
    """Text decoded with errors="surrogateescape" can hold a lone surrogate, which is no
    UTF-8: the API refuses it as an InputError naming the id and the row (it raised
    UnicodeEncodeError from pyarrow); found by the fuzzer's api target."""
    import rankscope_tui as rs
    from rankscope_tui.kernel.errors import InputError

    with pytest.raises(InputError, match=r"query id 'q\\udc80' is not valid Unicode text"):
        rs.evaluate({"q1": {"d1": 1}}, {"q\udc80": {"d1": 1.0}})
    with pytest.raises(InputError, match=r"doc id 'd\\udcff' is not valid Unicode text"):
        rs.evaluate({"q1": {"d\udcff": 1}}, {"q1": {"d1": 1.0}})
