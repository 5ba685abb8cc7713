#!/usr/bin/env python3
"""Coverage-guided fuzzing of rankscope's readers, command line and API (not part of the test suite).

Every input is written to a file and read the way the command line reads it; the
only exception a reader may raise is ``InputError`` (a one-line error, exit 2), naming
a line its file has (LF, CRLF and a lone CR each end a line; compressed files are not
line-counted on their stored bytes). Accepted input must also make sense downstream:
finite scores, integer grades that fit 32 bits, and metrics in [0, 1].

Targets (``--target``; fuzz/README.md says what each reads and checks):

  trec_lane, json_lane, trec_qrels, json_qrels   runs and qrels in TREC and JSON
  strata, gates, thresholds, report, diff, compare_log, goldens   the other files
  parquet, jsonl, mteb, msmarco, beir, header_tsv, compressed     the other formats
  per_query, units, texts, columns, shards   --per-query-in, --unit, --corpus/--queries/--docs,
                                             --run-columns/--qrels-columns, shard files
  options      every option of every batch command with mutated values (exit 0/1, or one line and 2)
  api          calc_aggregate / iter_calc / evaluate on hostile dicts and DataFrames
  out_paths    --out and the other outputs to odd paths (links, FIFO, devices, directories)

With atheris installed (``pip install atheris``) the fuzzing is coverage-guided
(libFuzzer, rankscope's modules instrumented); without it a seeded mutation loop
runs for the same time. Each target starts from a seed corpus of small valid files
(the built-in demo and hand-written cases) and a dictionary of format tokens.

Every exception other than InputError is recorded, not fatal: one finding per
(exception type, innermost rankscope frame), keeping the smallest input that raised
it, written to OUT/TARGET/finding-*.bin with a summary in OUT/TARGET/summary.json.

Usage:
  python fuzz/fuzz_readers.py --target gates --seconds 120
  python fuzz/fuzz_readers.py --all --seconds 120 --jobs 2     # every target, 120 s each
  python fuzz/fuzz_readers.py --replay OUT/gates/finding-1.bin --target gates
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

TARGETS = ["trec_lane", "json_lane", "trec_qrels", "json_qrels", "strata", "gates", "thresholds", "report", "diff",
           "compare_log", "goldens", "parquet", "jsonl", "mteb", "msmarco", "beir", "header_tsv", "compressed",
           "per_query", "units", "texts", "columns", "shards", "options", "api", "out_paths"]
DEFAULT_OUT = HERE / "out"

# ---------------------------------------------------------------------------- imports (instrumented when atheris is there)

try:
    import atheris  # type: ignore
except ImportError:  # pragma: no cover - the fallback loop
    atheris = None

import numpy as np  # noqa: E402  (not instrumented: C code)
import pyarrow  # noqa: E402,F401
import pyarrow.compute  # noqa: E402,F401
import pyarrow.csv  # noqa: E402,F401

try:
    import pandas  # noqa: F401  (pyarrow's pa.array imports it on first use: do it once, here)
except ImportError:
    pass


def _import_kernel():
    global CAL, GD, CMP, FILES, OUT, READ, TAB, RU, PL, WS, MET, ERR, REPORT, DIFFING, LoadSettings, TH, GateSettings, CalibrationSettings
    from rankscope_tui.kernel import errors as ERR
    from rankscope_tui.kernel import measures as MET
    from rankscope_tui.kernel.gate import thresholds as TH
    from rankscope_tui.kernel.inputs import files as FILES
    from rankscope_tui.kernel.inputs import readers as READ
    from rankscope_tui.kernel.inputs import tables as TAB
    from rankscope_tui.kernel.instruments import calibrate as CAL
    from rankscope_tui.kernel.instruments import comparison_log as CMP
    from rankscope_tui.kernel.instruments import diff as DIFFING
    from rankscope_tui.kernel.instruments import evaluate as PL
    from rankscope_tui.kernel.instruments import goldens as GD
    from rankscope_tui.kernel.instruments import rules as RU
    from rankscope_tui.kernel.report import output as OUT
    from rankscope_tui.kernel.report import payload as REPORT
    from rankscope_tui.kernel.settings import CalibrationSettings, GateSettings, LoadSettings
    from rankscope_tui.kernel.workspace import loaded as WS


if atheris is not None:
    with atheris.instrument_imports(include=["rankscope_tui"]):
        _import_kernel()
else:
    _import_kernel()

InputError = ERR.InputError

# ---------------------------------------------------------------------------- fixtures shared by the harnesses

SCRATCH = Path(tempfile.mkdtemp(prefix="rs-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))


def _cleanup() -> None:
    import shutil

    shutil.rmtree(SCRATCH, ignore_errors=True)


import atexit  # noqa: E402

atexit.register(_cleanup)
METRICS = tuple(MET.parse_metrics("hit@1,hit@5,recall@10,p@5,rr,ndcg@10"))
FIX_RUN = ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 2.0 t\nq2 Q0 d1 1 1.5 t\nq2 Q0 d4 2 0.5 t\n"
           "q3 Q0 d2 1 0.9 t\nq4 Q0 d5 1 0.1 t\n")
FIX_RUN2 = "q1 Q0 d3 1 9 t\nq1 Q0 d1 2 8 t\nq2 Q0 d4 1 7 t\nq3 Q0 d9 1 6 t\nq4 Q0 d1 1 5 t\n"
FIX_QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d1 0\nq3 0 d7 0\nq4 0 d5 -1\n"


def _fixture_file(name: str, text: str) -> str:
    p = SCRATCH / name
    p.write_text(text, encoding="utf-8")
    return str(p)


_FIX: dict = {}


def fixtures() -> dict:
    """Raw lanes, qrels and a real report, read once."""
    if not _FIX:
        _FIX["lane"] = READ.read_lane(_fixture_file("fix-a.run", FIX_RUN), "a")
        _FIX["lane2"] = READ.read_lane(_fixture_file("fix-b.run", FIX_RUN2), "b")
        _FIX["qrels"] = READ.read_qrels(_fixture_file("fix-qrels.txt", FIX_QRELS))
        ws = WS.Workspace.from_raw([_FIX["lane"], _FIX["lane2"]], _FIX["qrels"], LoadSettings(metrics=METRICS, resamples=50))
        _FIX["report"] = json.loads(OUT.dumps_strict(PL.evaluate_report(ws, GateSettings(gate_on="a"))))
    return _FIX


def _input_file(data: bytes, suffix: str, content: bytes | None = None) -> str:
    # a new inode each time (write, then rename over): a reader that maps the previous
    # input never sees it shrink under it
    p, tmp = SCRATCH / f"input{suffix}", SCRATCH / f"input{suffix}.new"
    tmp.write_bytes(data)
    os.replace(tmp, p)
    CURRENT[str(p)] = data if content is None else content
    return str(p)


def _check_metrics(ws) -> None:
    for lane in ws.lanes:
        for level in ws.levels():
            pq = ws.per_query(lane, level)
            for k, v in pq.items():
                if k == "rank":
                    assert (v >= 0).all(), ("negative rank", lane, level)
                    continue
                assert np.isfinite(v).all(), ("non-finite metric", lane, level, k)
                assert ((v >= 0) & (v <= 1)).all(), ("metric out of [0, 1]", lane, level, k, v[(v < 0) | (v > 1)][:3])


def _check_lane(raw) -> None:
    score = np.asarray(raw.score)
    assert score.dtype.kind == "f" and np.isfinite(score).all(), "accepted lane with a non-finite score"
    assert len(raw.qid) == len(raw.doc) == score.shape[0] == len(raw.line) > 0, "column lengths differ"
    f = fixtures()
    for group_sep in (None, "#"):
        ws = WS.Workspace.from_raw([raw], f["qrels"], LoadSettings(metrics=METRICS, resamples=0, group_sep=group_sep, depth=3 if group_sep else None))
        _check_metrics(ws)


def _check_qrels(raw) -> None:
    g = np.asarray(raw.grade)
    assert g.dtype.kind == "i", f"grades of dtype {g.dtype}"
    assert ((g >= -(2**31)) & (g <= 2**31 - 1)).all(), "accepted grade outside 32 bits"
    assert len(raw.qid) == len(raw.doc) == g.shape[0] > 0
    f = fixtures()
    ws = WS.Workspace.from_raw([f["lane"], f["lane2"]], raw, LoadSettings(metrics=METRICS, resamples=0, relevant=1))
    _check_metrics(ws)


# ---------------------------------------------------------------------------- harnesses: bytes -> None, raising only InputError


def h_lane(data: bytes, suffix: str) -> None:
    raw = READ.read_lane(_input_file(data, suffix), "x")
    _check_lane(raw)


def h_trec_lane(data: bytes) -> None:
    h_lane(data, ".run")


def h_json_lane(data: bytes) -> None:
    h_lane(data, ".json")


def h_qrels(data: bytes) -> None:
    _check_qrels(READ.read_qrels(_input_file(data, ".txt")))


def h_strata(data: bytes) -> None:
    path = _input_file(data, ".tsv")
    labels = TAB.read_strata(path)
    assert labels and all(isinstance(k, str) and isinstance(v, str) and k and v for k, v in labels.items())
    f = fixtures()
    ws = WS.Workspace.from_raw([f["lane"]], f["qrels"], LoadSettings(metrics=METRICS, resamples=0), strata=[path])
    from rankscope_tui.kernel.report import payload as R

    R.strata_block(ws)


def h_gates(data: bytes) -> None:
    path = _input_file(data, ".json")
    rules = RU.parse_rules(FILES.read_text(path), path)
    assert rules
    report = fixtures()["report"]
    results = []
    for r in rules:
        try:
            results.append(RU.judge(r, report))
        except InputError:
            continue
    for on in ("interval", "point"):
        RU.failed(results, on, strict=True)
    json.dumps([r.as_dict() for r in results], allow_nan=False)


def h_thresholds(data: bytes) -> None:
    path = _input_file(data, ".json")
    TH.read_thresholds(path)  # the reader alone first: its own errors
    f = fixtures()
    ws = WS.Workspace.from_raw([f["lane"], f["lane2"]], f["qrels"], LoadSettings(metrics=METRICS, resamples=0))
    report = PL.evaluate_report(ws, GateSettings(gate_on="a", fpir=0.1), thresholds_path=path)
    OUT.dumps_strict(report)


def h_report(data: bytes) -> None:
    path = _input_file(data, ".json")
    rep = REPORT.read_report(path)
    good = fixtures()["report"]
    for a, b in ((good, rep), (rep, good)):
        try:
            DIFFING.comparable(a, b, "before", path)
            items = DIFFING.diff_inputs(a, b, [])
        except InputError:
            continue
        assert items
    for rule in RU.parse_rules('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5},'
                               ' {"path": "lanes.a.doc.hit@1", "op": "<=", "against": "lanes.b.doc.hit@1"}]', "gates"):
        try:
            RU.judge(rule, rep)
        except InputError:
            pass


def h_diff(data: bytes) -> None:
    """The whole of `diff`: read_report, then diff_reports both ways and the rendered text."""
    from rankscope_tui.kernel.settings import DiffSettings
    from rankscope_tui.render.diff import render_diff

    path = _input_file(data, ".json")
    rep = REPORT.read_report(path)
    good = fixtures()["report"]
    for a, b, pa, pb in ((good, rep, "good", path), (rep, good, path, "good")):
        try:
            diff = DIFFING.diff_reports(a, b, DiffSettings(resamples=99, min_delta=0.0), pa, pb)
        except InputError as exc:
            check_input_error(exc, data) if exc.path == path else None
            continue
        text = render_diff(diff)
        import re

        assert not re.search(r"\b(nan|None|null)\b", text, re.I), "nan/None in the diff's text"
        json.dumps(diff.as_dict(), allow_nan=False)


_LOG_SHA = "ab" * 32
_LOG_PAYLOAD = {"comparisons": [{"baseline": "a", "candidate": "b", "metric": "ndcg@10", "randomization_p": 0.5,
                                 "verdict": "not shown"}]}


def h_compare_log(data: bytes) -> None:
    """`compare --log`: the log is read (its count of calls on these qrels), appended to
    under the lock, and read again: exactly one more entry, every earlier one kept."""
    path = _input_file(data, ".jsonl")
    LF_ONLY.add(path)
    entries = CMP.read_log(path)
    n = CMP.log_count(entries, _LOG_SHA)
    before = CMP.append_log(path, _LOG_SHA, _LOG_PAYLOAD)
    assert before == n, ("count under the lock differs from the count read", before, n)
    again = CMP.read_log(path)
    assert len(again) == len(entries) + 1 and again[:-1] == entries, "the append changed earlier entries"
    assert CMP.log_count(again, _LOG_SHA) == n + 1


def h_goldens(data: bytes) -> None:
    """`goldens --check FILE`: every line recomputed; problems are one line each, naming the file."""
    path = _input_file(data, ".txt")
    text = FILES.read_text(path)
    GD.check_parsable(text, path)  # what `goldens --check` refuses first (one line, exit 2)
    problems = GD.check(text, path)
    n = GD.count_cases(text)
    assert len(problems) <= n, (len(problems), n)
    for msg in problems:
        assert "\n" not in msg and msg.startswith(path + ":"), msg[:200]


# ---------------------------------------------------------------------------- the other inputs: formats, compression, tables


def _read_both(path: str, opts=None, run: bool = True, qrels: bool = True) -> None:
    """The file read as a run and as qrels (each refusal checked), accepted readings checked downstream."""
    from rankscope_tui.kernel.inputs.formats import InputOptions

    opts = opts or InputOptions()
    if run:
        lane = refused(READ.read_lane, path, "x", opts)
        if lane is not None:
            _check_lane(lane)
    if qrels:
        q = refused(READ.read_qrels, path, opts)
        if q is not None:
            _check_qrels(q)


def _formats(fmt_run: str, fmt_qrels: str):
    from rankscope_tui.kernel.inputs.formats import InputOptions

    return InputOptions(run_format=fmt_run, qrels_format=fmt_qrels)


def _table_to_parquet(data: bytes) -> bytes | None:
    """A Parquet file from a text table (header line, comma- or tab-separated): the first
    byte picks column types (dictionary, large_string, string_view, integers, floats,
    nulls) and the writer's options, so mutating the text explores Parquet's types."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    if len(data) < 2:
        return None
    # pyarrow decodes a skipped row for its handler: bytes that are not UTF-8 would raise
    # inside the handler (and surface later, far from it), so the text is made UTF-8 first
    mode, text = data[0], data[1:].decode("utf-8", "replace").encode("utf-8")
    delim = "\t" if b"\t" in text.split(b"\n", 1)[0] else ","
    try:
        table = pcsv.read_csv(pyarrow.BufferReader(pyarrow.py_buffer(text)),
                              parse_options=pcsv.ParseOptions(delimiter=delim, invalid_row_handler=lambda row: "skip"),
                              read_options=pcsv.ReadOptions(autogenerate_column_names=bool(mode & 0x40)))
    except Exception:  # noqa: BLE001 - text pyarrow cannot read as a table: no Parquet to make
        return None
    cols = []
    for i, col in enumerate(table.columns):
        kind = (mode >> (i % 3)) & 7
        try:
            if kind == 1:
                col = col.cast(pyarrow.string()).dictionary_encode()
            elif kind == 2:
                col = col.cast(pyarrow.large_string())
            elif kind == 3 and hasattr(pyarrow, "string_view"):
                col = col.cast(pyarrow.string_view())
            elif kind == 4:
                col = col.cast(pyarrow.float32())
            elif kind == 5:
                col = col.cast(pyarrow.int8())
            elif kind == 6:
                col = col.cast(pyarrow.binary())
        except Exception:  # noqa: BLE001 - a cast that does not fit these values: keep the column as read
            pass
        cols.append(col)
    table = pyarrow.table(cols, names=table.column_names)
    sink = pyarrow.BufferOutputStream()
    try:
        pq.write_table(table, sink, use_dictionary=bool(mode & 0x80), row_group_size=max(1, (mode & 0x30) or 1024))
    except Exception:  # noqa: BLE001 - a table pyarrow cannot write: nothing to read
        return None
    return sink.getvalue().to_pybytes()


def h_parquet(data: bytes) -> None:
    """Parquet runs and qrels: the input's own bytes when they start with PAR1 (mutated
    files), else a text table written as Parquet with mutated types (_table_to_parquet)."""
    pq_bytes = data if data[:4] == b"PAR1" else _table_to_parquet(data)
    if pq_bytes is None:
        SKIPS["n"] += 1
        return
    _read_both(_input_file(pq_bytes, ".parquet"))


def h_jsonl(data: bytes) -> None:
    path = _input_file(data, ".jsonl")
    _read_both(path)
    _read_both(path, _formats("jsonl", "jsonl"))


def h_mteb(data: bytes) -> None:
    from rankscope_tui.kernel.inputs.formats import InputOptions

    path = _input_file(data, ".json")
    for opts in (InputOptions(), InputOptions(run_format="mteb"), InputOptions(mteb_subset="default", mteb_split="test")):
        _read_both(path, opts, qrels=False)


def h_msmarco(data: bytes) -> None:
    path = _input_file(data, ".tsv")
    _read_both(path, qrels=False)
    _read_both(path, _formats("msmarco", "auto"), qrels=False)


def h_beir(data: bytes) -> None:
    path = _input_file(data, ".tsv")
    _read_both(path, run=False)
    _read_both(path, _formats("auto", "beir"), run=False)


def h_header_tsv(data: bytes) -> None:
    path = _input_file(data, ".tsv")
    _read_both(path)
    _read_both(path, _formats("tsv", "tsv"))


CODECS = ("gzip", "bzip2", "xz", "zstd", "lz4")


def compress(name: str, data: bytes) -> bytes:
    import bz2
    import lzma

    if name == "gzip":
        return gzip.compress(data)
    if name == "bzip2":
        return bz2.compress(data)
    if name == "xz":
        return lzma.compress(data)
    return pyarrow.Codec("zstd" if name == "zstd" else "lz4").compress(data, asbytes=True)


def h_compressed(data: bytes) -> None:
    """Compressed runs and qrels. The first byte picks the codec and the mode: even, the
    rest is content compressed here (its lines are counted on that content); odd, the rest
    is the stored bytes themselves (mutated streams, trailing bytes, truncation)."""
    if not data:
        return
    mode, rest = data[0], data[1:]
    name = CODECS[(mode >> 1) % len(CODECS)]
    if mode & 1:
        stored, content = rest, None
    else:
        stored, content = compress(name, rest), rest
    _read_both(_input_file(stored, ".gz", content=content))


def h_per_query(data: bytes) -> None:
    """`--per-query-in` tables: read (told from content, and as each format), then the
    table workspace and its report, strict JSON."""
    from rankscope_tui.kernel.instruments.tables import table_report
    from rankscope_tui.kernel.workspace import per_query_tables as PQ

    path = _input_file(data, ".tsv")
    for fmt in (None,) + tuple(PQ.FORMATS):
        refused(PQ.read_per_query_table, path, None, fmt)
    ws = refused(PQ.load_tables, [(None, path)], LoadSettings(resamples=20))
    if ws is not None:
        OUT.dumps_strict(refused(table_report, ws) or {})
    f = fixtures()
    ws = refused(PQ.load_tables, [("t", path)], LoadSettings(resamples=0), qrels=f["qrels"].path)
    if ws is not None:
        OUT.dumps_strict(refused(table_report, ws) or {})


def h_units(data: bytes) -> None:
    """`compare --unit`: the file read, then the units of the fixture's queries and their means."""
    from rankscope_tui.kernel.statistics import units as U

    uf = U.read_units(_input_file(data, ".tsv"))
    m = uf.mapping()
    assert all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in m.items())
    qids = [q for q, _ in uf.pairs][:50]
    means = refused(U.unit_means, uf.units_of(qids), np.arange(len(qids), dtype=float))
    if means is not None:
        assert means.n_units >= 2 and int(means.rows.sum()) == len(qids)
        assert np.isfinite(np.asarray(means.columns[0])).all()


def h_texts(data: bytes) -> None:
    """`--corpus`, `--queries`, `--docs`: each reader, then a workspace that shows them."""
    path = _input_file(data, ".tsv")
    corpus = refused(TAB.read_corpus, path)
    texts = refused(TAB.read_texts, path)
    other = _fixture_file("fix-texts.tsv", "q1\tfirst query\nd9\tnine\n")
    refused(TAB.read_text_files, [other, path])
    if corpus is not None:
        assert corpus and all(isinstance(d, str) and d for d in corpus)
    if texts is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items())
    f = fixtures()
    for kw in ({"corpus": path}, {"queries": (path,)}, {"docs": (path,)}):
        refused(WS.Workspace.from_raw, [f["lane"], f["lane2"]], f["qrels"], LoadSettings(metrics=METRICS, resamples=0), **kw)


def h_columns(data: bytes) -> None:
    """`--run-columns`/`--qrels-columns`: the first line is the mapping, the rest a table
    (header TSV, JSON Lines, or Parquet when the table starts with PAR1)."""
    from rankscope_tui.kernel.inputs.formats import ColumnMapping, InputOptions

    head, _, body = data.partition(b"\n")
    mapping = refused(ColumnMapping.parse, head.decode("utf-8", "replace"), "--run-columns")
    path = _input_file(body, ".tsv")
    if mapping is None:
        return
    assert isinstance(mapping, ColumnMapping)
    _read_both(path, InputOptions(run_columns=mapping), qrels=False)
    _read_both(path, InputOptions(qrels_columns=mapping), run=False)
    _read_both(path, InputOptions(run_format="tsv", qrels_format="tsv", run_columns=mapping, qrels_columns=mapping))


SHARD_BREAK = b"\n=====\n"


def h_shards(data: bytes) -> None:
    """A lane in shard files (`--lane NAME=a.run,b.run` and a glob): the input split at
    ===== lines into up to four shard files, read and merged; a doc in two shards is an
    error naming the later place."""
    from rankscope_tui.kernel.inputs.formats import InputOptions, shard_paths

    parts = data.split(SHARD_BREAK)[:4]
    d = SCRATCH / "shards"
    if d.exists():
        for p in d.iterdir():
            p.unlink()
    d.mkdir(exist_ok=True)
    paths = []
    for i, part in enumerate(parts):
        p, tmp = d / f"s{i}.run", d / f".s{i}.tmp"
        tmp.write_bytes(part)
        os.replace(tmp, p)
        CURRENT[str(p)] = part
        paths.append(str(p))
    for spec in (",".join(paths), str(d / "s*.run"), ",".join(paths + paths[:1])):
        files = refused(shard_paths, spec)
        if not files:
            continue
        lanes = refused(READ.read_lanes, [("x", spec)], [files], InputOptions())
        if lanes:
            _check_lane(lanes[0])


# ---------------------------------------------------------------------------- the command line: option values and output paths

import io  # noqa: E402
import signal  # noqa: E402


class CliTimeout(BaseException):
    """A command line that ran past the harness's time (a legitimately slow setting, e.g. a
    huge --resamples): counted, not a finding."""


TIMEOUTS = {"n": 0}
CLI_COMMANDS = ("evaluate", "compare", "calibrate", "diff", "verdict", "plot", "goldens")


def cli_dir() -> Path:
    """The working directory of the command-line targets: small inputs and the outputs
    the other commands read (a report, thresholds, a comparison), made once."""
    d = SCRATCH / "cli"
    if (d / "report.json").exists():
        return d
    d.mkdir(exist_ok=True)
    (d / "a.run").write_text(FIX_RUN)
    (d / "b.run").write_text(FIX_RUN2)
    (d / "qrels.txt").write_text(FIX_QRELS)
    (d / "strata.tsv").write_text("q1\tshort\nq2\tlong\nq3\tshort\nq4\tlong\n")
    (d / "units.tsv").write_text("q1\tu1\nq2\tu1\nq3\tu2\nq4\tu2\n")
    (d / "texts.tsv").write_text("q1\tone\nq2\ttwo\nd1\tdoc one\n")
    (d / "gates.json").write_text('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.1}]')
    (d / "pq.tsv").write_text("q1\trr\t0.5\nq2\trr\t1\nq3\trr\t0\n")
    base = ["--lane", "a.run", "--lane", "b.run", "--qrels", "qrels.txt", "--resamples", "20"]
    with _in_dir(d):
        for words in (["evaluate", *base, "--out", "report.json"], ["calibrate", *base, "--gate-on", "a", "--out", "thresholds.json"],
                      ["compare", *base[:-1], "999", "--out", "compare.json"]):
            rc, _, err = run_cli(words, seconds=120)
            assert rc == 0, (words, err)
    return d


class _in_dir:
    def __init__(self, d: Path):
        self.d = d

    def __enter__(self):
        self.old = os.getcwd()
        os.chdir(self.d)

    def __exit__(self, *exc):
        os.chdir(self.old)


def run_cli(words: list[str], seconds: float = 5.0) -> tuple[int, str, str]:
    """``rankscope WORDS`` in this process: (exit status, stdout, stderr). ``--help`` exits 0
    through SystemExit; any other exception escapes (the finding); past ``seconds`` of CPU
    time, :class:`CliTimeout`."""
    from rankscope_tui import cli

    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr

    def on_alarm(signum, frame):
        raise CliTimeout

    # a CPU-time timer (SIGVTALRM): libFuzzer keeps SIGALRM for its own -timeout
    prev = signal.signal(signal.SIGVTALRM, on_alarm)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    sys.stdout, sys.stderr = out, err
    try:
        rc = cli.main(words)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, prev if prev is not None else signal.SIG_DFL)
        sys.stdout, sys.stderr = old
    return rc, out.getvalue(), err.getvalue()


def check_cli(words: list[str], rc: int, err: str) -> None:
    """The command line's promise: 0; 1 for a judgement that failed (verdict, diff,
    goldens --check); 2 with exactly one ``rankscope: error:`` line, the last; never a
    traceback."""
    assert "Traceback (most recent call last)" not in err, f"traceback on stderr: {err[-400:]}"
    lines = err.rstrip("\n").split("\n") if err.strip() else []
    errors = [ln for ln in lines if ln.startswith("rankscope: error:")]
    if rc == 0:
        return
    if rc == 1 and words and words[0] in ("verdict", "diff", "goldens") and not errors:
        return
    assert rc == 2, f"exit status {rc}: {err[-300:]!r}"
    assert len(errors) == 1 and lines[-1] == errors[0], f"exit 2 without exactly one error line last: {err[-300:]!r}"


_UNSAFE_OPTIONS = ("--scheduler", "--engine", "--buckets", "--memory-limit")


def _safe_words(words: list[str]) -> bool:
    """Option values the harness will not run: paths outside its directory (a '/' or '..'
    beyond /dev/null and /dev/full), the dask engine and its scheduler address (network),
    more than two bucket workers, and the interactive or writing-a-tree commands."""
    if not words or words[0] in ("tui", "demo"):
        return False
    for w in words:
        if w in ("/dev/null", "/dev/full"):
            continue
        if "/" in w or ".." in w or "\x00" in w or "dask" in w:
            return False
        flag = w.split("=", 1)[0]
        if len(flag) > 3 and flag.startswith("--") and any(u.startswith(flag) for u in _UNSAFE_OPTIONS):
            if not any(u.startswith(flag) for u in ("--buckets",)):
                return False
    for i, w in enumerate(words):
        flag, eq, val = w.partition("=")
        if len(flag) > 3 and "--buckets".startswith(flag) and flag.startswith("--"):
            v = val if eq else (words[i + 1] if i + 1 < len(words) else "")
            if not v.strip().isdigit() or int(v) > 2:
                return False
    return True


def h_options(data: bytes) -> None:
    """Every option of every batch command, with mutated values: the words are the input's
    lines (the first the command); the run gives exit 0 (1 for a failed judgement) or one
    line and exit 2, never a traceback."""
    words = [w for w in data.decode("utf-8", "surrogateescape").split("\n")]
    while words and words[-1] == "":
        words.pop()
    if not _safe_words(words):
        SKIPS["n"] += 1
        return
    d = cli_dir()
    CURRENT["<cli>"] = b""
    try:
        with _in_dir(d):
            rc, _, err = run_cli(words)
    except CliTimeout:
        TIMEOUTS["n"] += 1
        SKIPS["n"] += 1
        return
    check_cli(words, rc, err)
    REFUSALS["n"] += rc == 2


OUT_OPTIONS = (("evaluate", "--out"), ("evaluate", "--per-query"), ("evaluate", "--summary"), ("compare", "--out"),
               ("calibrate", "--out"), ("goldens", "--out"), ("diff", "--out"), ("verdict", "--out"))


def _tree(d: Path) -> dict[str, object]:
    """Every entry under ``d``: a link's target, a file's bytes, a directory or a FIFO by kind."""
    import stat as st

    out: dict[str, object] = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = os.path.join(root, name)
            m = os.lstat(p).st_mode
            key = os.path.relpath(p, d)
            if st.S_ISLNK(m):
                out[key] = ("link", os.readlink(p))
            elif st.S_ISREG(m):
                out[key] = ("file", Path(p).read_bytes())
            else:
                out[key] = ("other", st.S_IFMT(m))
    return out


def _out_dir() -> Path:
    import shutil

    d = SCRATCH / "outs"
    if d.exists():
        for p in (d / "ro",):
            if p.exists():
                os.chmod(p, 0o700)
        shutil.rmtree(d)
    d.mkdir()
    (d / "file").write_text("old")
    (d / "dir").mkdir()
    (d / "ro").mkdir()
    (d / "ro" / "x").write_text("old")
    os.chmod(d / "ro", 0o500)
    os.symlink("file", d / "link-file")
    os.symlink("dir", d / "link-dir")
    os.symlink("missing/x", d / "dangling")
    os.symlink("loop", d / "loop")
    os.symlink(str(cli_dir() / "a.run"), d / "link-input")
    os.link(cli_dir() / "qrels.txt", d / "hardlink-input")
    os.mkfifo(d / "fifo")
    return d


def h_out_paths(data: bytes) -> None:
    """Outputs to odd paths: the first byte picks the command and output option, the rest
    is the path (relative to a directory of odd entries: links, a dangling link, a loop, a
    FIFO with no reader, a read-only directory, links to inputs; or /dev/null, /dev/full).
    Exit 0 writes a whole file; exit 2 is one line and leaves every entry as it was; the
    inputs never change."""
    if not data:
        return
    cmd, opt = OUT_OPTIONS[data[0] % len(OUT_OPTIONS)]
    target = data[1:].decode("utf-8", "surrogateescape").replace("\x00", "_")
    if not target or "\n" in target or (target.startswith("/") and target not in ("/dev/null", "/dev/full")) \
            or any(part == ".." for part in target.split("/")):
        SKIPS["n"] += 1
        return
    c = cli_dir()
    inputs = {p.name: p.read_bytes() for p in c.iterdir() if p.is_file()}
    d = _out_dir()
    before = _tree(d)
    base = ["--lane", f"{c}/a.run", "--lane", f"{c}/b.run", "--qrels", f"{c}/qrels.txt", "--resamples", "10"]
    words = {"evaluate": ["evaluate", *base], "compare": ["compare", *base[:-1], "999"], "goldens": ["goldens"],
             "calibrate": ["calibrate", *base, "--gate-on", "a"],
             "diff": ["diff", "--before", f"{c}/report.json", "--after", f"{c}/report.json", "--resamples", "10"],
             "verdict": ["verdict", "--report", f"{c}/report.json", "--gates", f"{c}/gates.json"]}[cmd] + [opt, target]
    try:
        with _in_dir(d):
            rc, _, err = run_cli(words, seconds=20)
    except CliTimeout:
        TIMEOUTS["n"] += 1
        SKIPS["n"] += 1
        return
    check_cli(words, rc, err)
    REFUSALS["n"] += rc == 2
    after = _tree(d)
    now = {p.name: p.read_bytes() for p in c.iterdir() if p.is_file() and p.name in inputs}
    read = {"diff": ("report.json",), "verdict": ("report.json", "gates.json"), "goldens": ()}.get(
        cmd, ("a.run", "b.run", "qrels.txt"))
    written = None
    if rc == 0 and opt == "--out" and cmd != "goldens" and not target.startswith("/dev/"):
        # read before the inputs are put back: the target may be a link to one of them
        real = os.path.realpath(d / target)
        written = Path(real).read_text(encoding="utf-8") if os.path.isfile(real) else None
    for name in inputs:  # a file this call does not read may be written through a link: put it back for the next
        if now.get(name) != inputs[name]:
            (c / name).write_bytes(inputs[name])
    assert all(now.get(n) == inputs[n] for n in read), "an input of the call changed"
    left = [k for k in after if os.path.basename(k).startswith(".rankscope-")]
    assert not left, f"temporary files left: {left}"
    if rc == 2:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        assert not changed, f"exit 2 but the output directory changed: {changed[:5]}"
    elif not target.startswith("/dev/"):
        real = os.path.realpath(d / target)
        assert os.path.isfile(real) and os.path.getsize(real) > 0, f"exit 0 but {target!r} holds no output"
        if opt == "--out" and cmd != "goldens":
            json.loads(written or "")


# ---------------------------------------------------------------------------- the Python API: hostile DataFrames and dicts


def _hostile(obj, mode: int):
    """A run or qrels for the API from decoded JSON: a ``{qid: {doc: value}}`` dict as it is
    or with numpy scalars (the first byte picks the type); a dict of columns as a DataFrame
    with column dtypes the first byte picks (categorical, object, pyarrow strings,
    nullable integers; now and then the first column as the index)."""
    import pandas as pd

    columnar = isinstance(obj, dict) and obj and all(isinstance(v, list) for v in obj.values())
    if mode % 4 == 0 and not columnar:
        return obj
    if not columnar and isinstance(obj, dict):  # numpy scalars in a dict (model scores)
        kinds = (np.float32, np.float64, np.int64, np.int8, np.bool_)
        k = kinds[(mode >> 2) % len(kinds)]
        out = {}
        for q, docs in obj.items():
            if isinstance(docs, dict):
                inner = {}
                for doc, v in docs.items():
                    try:
                        inner[doc] = k(v)
                    except Exception:  # noqa: BLE001 - a value numpy will not make this type: keep it
                        inner[doc] = v
                out[q] = inner
            else:
                out[q] = docs
        return out
    try:
        df = pd.DataFrame(obj)
    except Exception:  # noqa: BLE001 - no frame from this value: hand it over as is
        return obj
    for i, col in enumerate(list(df.columns)):
        kind = (mode >> (2 + i % 3)) & 3
        try:
            if kind == 1:
                df[col] = df[col].astype("category")
            elif kind == 2:
                df[col] = df[col].astype("string[pyarrow]")
            elif kind == 3:
                df[col] = df[col].astype("Int64")
        except Exception:  # noqa: BLE001 - a dtype these values do not fit: keep the column
            pass
    if mode & 0xC0 == 0xC0 and len(df.columns):  # the query column as the index: not a column any more
        df = df.set_index(df.columns[0])
    return df


def _api_value(v: str) -> object:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def _api_from_lines(text: bytes) -> dict:
    """Input that is not JSON, read as ``qid doc value`` lines: the run as
    ``{qid: {doc: value}}`` and the qrels as records (values as int, float or text,
    whatever they parse as), so mutated text still reaches the API."""
    run: dict = {}
    records: dict = {"query_id": [], "doc_id": [], "relevance": []}
    for line in text.decode("utf-8", "replace").splitlines():
        f = line.split()
        if len(f) >= 3:
            run.setdefault(f[0], {})[f[1]] = _api_value(f[2])
            records["query_id"].append(f[0])
            records["doc_id"].append(f[1])
            records["relevance"].append(_api_value(f[-1]))
    return {"run": run, "qrels": records}


def h_api(data: bytes) -> None:
    """`rankscope_tui.calc_aggregate`/`evaluate`/`iter_calc` on hostile inputs: the input is
    JSON ``{"run": .., "qrels": .., "measures": ..}`` (NaN and huge numbers allowed), each
    part made a dict or a DataFrame (:func:`_hostile`). Only InputError (SettingError is one)
    may leave the API; accepted results are finite and in [0, 1]."""
    import warnings

    import rankscope_tui as api

    CURRENT["<api>"] = b""  # the API's rows are not lines of a file: no line check
    if not data:
        return
    mode, text = data[0], data[1:]
    try:
        obj = json.loads(text.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        obj = _api_from_lines(text)
    if not isinstance(obj, dict):
        SKIPS["n"] += 1
        return
    run = _hostile(obj.get("run"), mode)
    qrels = _hostile(obj.get("qrels"), mode >> 1)
    measures = obj.get("measures", "ndcg@10,rr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning is a finding too
        agg = refused(api.calc_aggregate, measures, qrels, run)
        if agg is not None:
            for k, v in agg.items():
                assert isinstance(v, float) and (0 <= v <= 1), ("calc_aggregate", k, v)
        rows = refused(lambda: list(api.iter_calc(measures, qrels, run)))
        if rows is not None:
            assert all(0 <= r.value <= 1 for r in rows)
        ev = refused(api.evaluate, qrels, {"a": run, "b": run} if mode & 0x40 else run, measures if mode & 0x20 else None,
                     resamples=20)
        if ev is not None:
            OUT.dumps_strict(ev.report())
            text = ev.to_markdown()
            import re

            assert not re.search(r"\b(nan|None|null)\b", text), "nan/None in the API's markdown"




HARNESSES = {"trec_lane": h_trec_lane, "json_lane": h_json_lane, "trec_qrels": h_qrels, "json_qrels": h_qrels,
             "strata": h_strata, "gates": h_gates, "thresholds": h_thresholds, "report": h_report,
             "diff": h_diff, "compare_log": h_compare_log, "goldens": h_goldens,
             "parquet": h_parquet, "jsonl": h_jsonl, "mteb": h_mteb, "msmarco": h_msmarco, "beir": h_beir,
             "header_tsv": h_header_tsv, "compressed": h_compressed, "per_query": h_per_query, "units": h_units,
             "texts": h_texts, "columns": h_columns, "shards": h_shards, "options": h_options, "api": h_api,
             "out_paths": h_out_paths}

# ---------------------------------------------------------------------------- seeds and dictionaries


def seeds(target: str) -> list[bytes]:
    from rankscope_tui.demo import write_demo

    demo = SCRATCH / "demo"
    if not demo.exists():
        write_demo(demo)

    def head(name: str, n: int) -> str:
        return "".join((demo / name).read_text(encoding="utf-8").splitlines(keepends=True)[:n])

    run = head("lexical.run", 25)
    qrels = head("qrels-test.txt", 25)
    if target == "trec_lane":
        out = [run, FIX_RUN, FIX_RUN.replace(" ", "\t"), "# c\n\n" + FIX_RUN.replace("\n", " x\r\n"), "\ufeff" + FIX_RUN2,
               "q1 Q0 D1#p2 1 1e3 t\nq1 Q0 D1#p1 2 -0 t\nq1 Q0 é€ 3 0x1p3 t\n"]
        return [s.encode() for s in out] + [gzip.compress(FIX_RUN.encode())]
    if target == "json_lane":
        lane = {"q1": {"d1": 1.5, "d2": -0.0, "D#1": 1e300}, "q2": {"d3": 3}}
        out = [json.dumps(lane), json.dumps(lane, indent=2), '{"q1": {"d1": 1}}', '{"q\\u00e9": {"d\\"x": 2.5e-3}}']
        return [s.encode() for s in out] + [gzip.compress(json.dumps(lane).encode())]
    if target == "trec_qrels":
        out = [qrels, FIX_QRELS, FIX_QRELS.replace(" ", "\t"), "q1 0 d1 2147483647\nq1 0 d2 -2147483648\n",
               "# c\n\nq1 0 D#1 1\r\n"]
        return [s.encode() for s in out] + [gzip.compress(FIX_QRELS.encode())]
    if target == "json_qrels":
        out = ['{"q1": {"d1": 1, "d3": 2}, "q2": {"d4": 1, "d1": 0}}', '{"q1": {"d1": 2.0}}', '{"q1": {"d1": -1, "d2": 0}}',
               json.dumps({"q3": {"d7": 0}, "q1": {"d1": 2147483647}}, indent=1)]
        return [s.encode() for s in out]
    if target == "strata":
        out = [head("strata.tsv", 20), "q1\tA\nq2\tB\n", "q1\tA b c\r\n\nq3\t(none)\n", "\ufeffq1\t\u00e9\t\n"]
        return [s.encode() for s in out]
    if target == "gates":
        out = [(demo / "gates.json").read_text(), '{"rules": [{"path": "lanes.a.doc.rr", "op": "<=", "threshold": 1}]}',
               '[{"path": "lanes.a.doc.hit@1", "op": ">=", "against": "lanes.b.doc.hit@1", "note": "x"}]',
               '[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5, "name": "n"}]']
        return [s.encode() for s in out]
    if target == "thresholds":
        f = fixtures()
        ws = WS.Workspace.from_raw([f["lane"], f["lane2"]], f["qrels"], LoadSettings(metrics=METRICS, resamples=0))
        th = CAL.calibrate(ws, GateSettings(gate_on="a", fpir=0.1, miss_rate=0.1, mutual=1),
                           CalibrationSettings(step=0.5, objective="rr"))
        small = {"schema": TH.THRESHOLDS_SCHEMA, "fusion": {"rrf_k": 10, "convex": {"weights": {"a": 0.25, "b": 0.75}}},
                 "gate": {"floor": 1.0, "margin": 0.5, "mutual_r": 2}, "calibration": {"qids": ["q1", "q9"]}}
        return [OUT.dumps_strict(th).encode(), json.dumps(small).encode(),
                json.dumps({"schema": TH.THRESHOLDS_SCHEMA, "gate": {"floor": None, "floor_reason": "-inf: accept all"}}).encode()]
    if target == "compare_log":
        entry = CMP.log_entry(_LOG_SHA, _LOG_PAYLOAD)
        other = dict(entry, qrels_sha256="cd" * 32)
        return [b"", (json.dumps(entry) + "\n").encode(), (json.dumps(entry) + "\n" + json.dumps(other) + "\n").encode(),
                json.dumps(other).encode(), b"\n\n" + json.dumps(entry, indent=None).encode() + b"\r\n"]
    if target == "goldens":
        lines = (REPO / "goldens" / "reference.txt").read_text(encoding="utf-8").splitlines(keepends=True)
        comments = [x for x in lines if x.startswith("#")]
        cases = [x for x in lines if x.strip() and not x.startswith("#")]
        picks = [cases[i] for i in range(0, len(cases), max(1, len(cases) // 40))]
        return [("".join(comments[:3]) + c).encode() for c in picks] + ["".join(picks[:5]).encode()]
    if target in ("report", "diff"):
        rep = fixtures()["report"]
        small = {"schema": rep["schema"], "inputs": rep["inputs"], "lanes": rep["lanes"], "per_query": rep["per_query"]}
        return [json.dumps(small).encode(), json.dumps(small, indent=1).encode()]
    if target in MORE_SEEDS:
        return [s if isinstance(s, bytes) else s.encode("utf-8", "surrogateescape") for s in MORE_SEEDS[target]()]
    raise KeyError(target)


def _seeds_parquet() -> list[bytes]:
    tables = ["qid,docno,score\nq1,d1,3.0\nq1,d2,2.5\nq2,d4,1\n", "query_id\tdoc_id\trelevance\nq1\td1\t1\nq2\td4\t2\n",
              "q_id,doc_id,score\n1,7,0.5\n1,8,0.25\n", "qid,docno,rank\nq1,d1,1\nq1,d2,2\n",
              "query-id,corpus-id,score\nq1,d1,1\nq1,d3,0\n,,\n"]
    out = [bytes([m]) + t.encode() for t in tables for m in (0, 0x09, 0x92, 0x1b, 0x24)]
    return out + [b for b in (_table_to_parquet(s) for s in out[::3]) if b]


def _seeds_options() -> list[str]:
    """A valid call of every batch command, then each with one more option and a value."""
    from rankscope_tui.commands import build_parser

    base = ["--lane", "a.run", "--lane", "b.run", "--qrels", "qrels.txt", "--resamples", "20"]
    calls = {"evaluate": ["evaluate", *base], "compare": ["compare", *base[:-1], "999"], "calibrate": ["calibrate", *base, "--gate-on", "a",
                                                                                        "--out", "t.json"],
             "diff": ["diff", "--before", "report.json", "--after", "report.json", "--resamples", "20"],
             "verdict": ["verdict", "--report", "report.json", "--gates", "gates.json"],
             "plot": ["plot", "forest", "--report", "report.json", "--out", "f.svg"],
             "goldens": ["goldens", "--out", "g.txt"]}
    values = {"--strata": "strata.tsv", "--corpus": "texts.tsv", "--queries": "texts.tsv", "--docs": "texts.tsv",
              "--unit": "units.tsv", "--per-query-in": "pq.tsv", "--thresholds": "thresholds.json", "--gates": "gates.json",
              "--compare": "compare.json", "--metrics": "ndcg@10,rr", "--metric": "rr", "--gate-on": "a", "--baseline": "a",
              "--candidate": "b", "--fpir": "0.1", "--confidence": "0.9", "--run-columns": "query=qid,doc=docno,score=score",
              "--qrels-columns": "query=qid,doc=docno,relevance=label", "--group-sep": "#", "--blind": "short",
              "--out": "o.json", "--per-query": "pq.csv", "--summary": "s.parquet", "--per-query-long": "l.tsv",
              "--log": "log.jsonl", "--check": "g.txt", "--memory-limit": "1G", "--buckets": "2", "--step": "0.5",
              "--min-delta": "0.01", "--alpha": "0.05", "--primary": "rr", "--mteb-subset": "default"}
    out = ["\n".join(words) for words in calls.values()]
    for cmd, words in calls.items():
        parser = build_parser(cmd)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[cmd]
        for action in sub._actions:
            if not action.option_strings or action.option_strings[0] in ("-h", "--scheduler", "--engine"):
                continue
            opt = action.option_strings[-1]
            if action.nargs == 0:
                extra = [opt]
            elif action.choices:
                extra = [opt, str(list(action.choices)[-1])]
            else:
                extra = [opt, values.get(opt, "3")]
            out.append("\n".join(words + extra))
    return out + ["evaluate\n--resamples\n-1", "compare\n--lane\na.run\n--qrels\nqrels.txt\n--confidence\nnan", "verdict", "",
                  "evaluate\n--lane\n=a.run\n--qrels\nqrels.txt", "evaluate\n--help"]


MORE_SEEDS = {
    "parquet": _seeds_parquet,
    "jsonl": lambda: ['{"query_id": "q1", "doc_id": "d1", "score": 1.5}\n{"query_id": "q1", "doc_id": "d2", "score": 0.5}\n'
                      '{"query_id": "q2", "doc_id": "d4", "score": 2}\n',
                      '{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n{"query_id": "q2", "doc_id": "d4", "relevance": 2}\n',
                      '{"qid": "q1", "docno": "d1", "score": 1}\r\n\n{"qid": "q1", "docno": "d2", "score": 1e300}\n',
                      '{"query-id": 1, "corpus-id": 7, "score": 1}\n'],
    "mteb": lambda: [json.dumps({"mteb_model_meta": {"model_name": "m"}, "default": {"test": {"q1": {"d1": 0.5, "d2": 0.25},
                                                                                             "q2": {"d4": 1.0}}}}),
                     json.dumps({"mteb_model_meta": {}, "en": {"test": {"q1": {"d1": 1}}, "dev": {"q1": {"d2": 1}}},
                                 "de": {"test": {"q1": {"d1": 2}}}}, indent=1),
                     json.dumps({"mteb_model_meta": None, "default": {"test": {}}})],
    "msmarco": lambda: ["q1\td1\t1\nq1\td2\t2\nq2\td4\t1\n", "1 7 1\n1 8 2\n2 9 1\n", "q1\td1\t1\r\nq1\td2\t1\r\n"],
    "beir": lambda: ["query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td4\t2\n", "q1\td1\t1\nq1\td3\t0\n",
                     "query-id\tcorpus-id\tscore\r\n1\t7\t2\r\n"],
    "header_tsv": lambda: ["qid\tdocno\tscore\trank\nq1\td1\t3\t1\nq1\td2\t2\t2\n", "q_id doc_id score\nq1 d1 1.5\nq2 d4 1\n",
                           "query_id\tdoc_id\trelevance\nq1\td1\t1\n", "qid\tdocno\tlabel\nq1\td1\t2\nq3\td7\t0\n",
                           "qid\tdocno\trank\nq1\td1\t1\nq1\td2\t2\n", "query-id\tcorpus-id\tscore\nq1\td1\t1\n"],
    "compressed": lambda: ([bytes([2 * i]) + t.encode() for i in range(len(CODECS)) for t in (FIX_RUN, FIX_QRELS)]
                           + [bytes([2 * i + 1]) + compress(c, FIX_RUN.encode()) for i, c in enumerate(CODECS)]
                           + [bytes([2 * i + 1]) + compress(c, FIX_QRELS.encode()) + b"junk" for i, c in enumerate(CODECS)]
                           + [b"\x00q1 Q0 d1 1 1 t\rq1 Q0 d2 2 x t\r"]),
    "per_query": lambda: ["ndcg_cut_10\tq1\t0.5\nndcg_cut_10\tq2\t0.25\nrecip_rank\tq1\t1\nndcg_cut_10\tall\t0.4\nrunid\tall\tbm25\n",
                          "q1\tnDCG@10\t0.5\nq2\tnDCG@10\t1\nq3\tRR\t0.5\n",
                          '{"query_id": "q1", "measure": "nDCG@10", "value": 0.5, "run": "a"}\n'
                          '{"query_id": "q2", "measure": "nDCG@10", "value": 1, "run": "a"}\n',
                          "run,query_id,measure,value\na,q1,rr,0.5\na,q2,rr,1\nb,q1,rr,0\nb,q2,rr,0.25\n",
                          ",name,qid,measure,value\n0,a,q1,rr,0.5\n1,a,q2,rr,1\n",
                          "lane,level,qid,rr,ndcg@10\na,doc,q1,0.5,0.5\na,doc,q2,1,1\nb,doc,q1,0,0\nb,doc,q2,1,0.5\n"],
    "units": lambda: ["q1\tu1\nq2\tu1\nq3\tu2\nq4\tu2\n", "# units\nq1\tA\r\nq2\tB\r\n", "q1\tu\rq2\tv\rq1\tu\r"],
    "texts": lambda: ["d1\tdoc one\nd2\ttwo\n", "d1\nd2\nd3\n", "# c\nq1\tquery text\r\nq2\t\n", "q1\ta\rq2\tb\r"],
    "columns": lambda: ["query=Q,doc=D,score=S\nQ\tD\tS\nq1\td1\t1\nq1\td2\t2\n", "query=Q,doc=D,relevance=R\nQ D R\nq1 d1 1\n",
                        "rank=r\nqid\tdocno\tr\nq1\td1\t1\nq1\td2\t2\n",
                        'query=a,doc=b,score=c\n{"a": "q1", "b": "d1", "c": 1}\n{"a": "q1", "b": "d2", "c": 0.5}\n',
                        "doc=docno\nqid\tdocno\tscore\tdocno2\nq1\td1\t1\td9\n"],
    "shards": lambda: [FIX_RUN.replace("q2 Q0 d1", "=====\nq2 Q0 d1"), FIX_RUN + "=====\n" + FIX_RUN2,
                       "q1 Q0 d1 1 1 t\n=====\nq1 Q0 d1 1 2 t\n", '{"q1": {"d1": 1}}\n=====\n{"q2": {"d2": 1}}'],
    "options": _seeds_options,
    "api": lambda: [bytes([m]) + json.dumps(o).encode() for m in (0, 1, 2, 3, 0x46, 0xb7, 0x2a, 0x5)
                    for o in ({"run": {"q1": {"d1": 1.5, "d2": 0.5}, "q2": {"d4": 1}}, "qrels": {"q1": {"d1": 1}, "q2": {"d4": 2}}},
                              {"run": {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d4"], "score": [1, 2, 3]},
                               "qrels": {"query_id": ["q1", "q2"], "doc_id": ["d1", "d4"], "relevance": [1, 2]},
                               "measures": "ap,p@5"},
                              {"run": {"qid": ["q1"], "docno": ["d1"], "score": [0.5]},
                               "qrels": {"qid": ["q1"], "docno": ["d1"], "label": [1]}, "measures": ["rr", "ndcg@10"]})],
    "out_paths": lambda: [bytes([i]) + n.encode() for i in range(len(OUT_OPTIONS))
                          for n in ("new.json", "file", "link-file", "link-dir", "dangling", "loop", "fifo", "dir", "dir/",
                                    "ro/new", "link-input", "hardlink-input", "/dev/null", "/dev/full", "missing/x", "é x",
                                    "-", "x" * 300, "dir/new.csv", "new.parquet")],
}


TOKENS = {
    "common": ["\n", "\r\n", "\t", " ", "#", "\ufeff", "\x00", "\xff", "\\", '"', "\x1f\x8b"],
    "trec": ["Q0", " 0 ", "1e308", "1e309", "-0", "nan", "inf", "-Infinity", "0x1p3", "1_000", "2147483648", "-2147483649",
             "99999999999999999999", "1.5", "+1", ".5", "5.", "1e-400", "\u00a0", "\x0b", "\x0c", "\u2028"],
    "json": ["{", "}", "[", "]", ":", ",", '""', '"q1"', '"d1"', "null", "true", "false", "NaN", "Infinity", "-Infinity",
             "1e400", "-1e400", "1" + "0" * 60, "2147483648", "-0.0", "1.0", "0.5", "\\u0000", "\\ud800", '"rules"',
             '"path"', '"op"', '">="', '"<="', '"threshold"', '"against"', '"schema"', '"rankscope.thresholds/1"',
             '"rankscope.report/1"', '"fusion"', '"convex"', '"weights"', '"rrf_k"', '"gate"', '"floor"', '"margin"',
             '"mutual_r"', '"calibration"', '"qids"', '"floor_reason"', '"inputs"', '"qrels"', '"sha256"', '"settings"',
             '"depth"', '"relevant"', '"group_sep"', '"per_query"', '"lanes"', '"doc"', '"value"', '"low"', '"high"',
             '"lanes.a.doc.rr"', '"lanes.b.doc.rr"', '"lanes.a\\\\.x"', '"a"', '"b"', '"qrels_sha256"', '"rows"',
             '"time"', '"verdict"'],
    "goldens": [" -> ", '"seed"', '"resamples"', '"n"', '"alpha"', '"step"', '"n_lanes"', '"k"', '"depth"', '"run"',
                '"qrels"', '"p"', '"x"', '"y"', '"confidence"', "1000000000", "[[[[[[[[", "bootstrap_mean", "randomization_p", "rrf",
                "convex_fit", "grid_size", "ndcg", "holm", "conformal_k", "sweep", "paired_bootstrap", "bca", "null_floor"],
}


def _dict_escape(token: str) -> str:
    """A token in libFuzzer's dictionary syntax: printable ASCII as is, every other byte as \\xNN."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else f"\\x{b:02x}" for b in token.encode("utf-8"))


TEXT_TARGETS = ("trec_lane", "trec_qrels", "strata", "parquet", "msmarco", "beir", "header_tsv", "compressed", "per_query",
                "units", "texts", "columns", "shards")


def dictionary(target: str) -> list[str]:
    kinds = ["common"] + (["trec"] if target in TEXT_TARGETS else ["json"])
    if target == "goldens":
        kinds += ["goldens"]
    extra = {"parquet": ["qid", "docno", "score", "rank", "label", "query_id", "doc_id", "relevance", "q_id", "query-id",
                         "corpus-id", "PAR1", ","],
             "header_tsv": ["qid", "docno", "score", "rank", "label", "query_id", "doc_id", "relevance", "q_id", "query-id",
                            "corpus-id"],
             "columns": ["query=", "doc=", "score=", "rank=", "relevance=", ",", "qid", "docno", "label"],
             "jsonl": ['"query_id"', '"doc_id"', '"relevance"', '"qid"', '"docno"', '"query-id"', '"corpus-id"'],
             "mteb": ['"mteb_model_meta"', '"default"', '"test"', '"dev"'],
             "per_query": ["ndcg_cut_10", "P_10", "recip_rank", "nDCG@10", "RR", "all", "runid", "num_q", "run,", "measure",
                           "value", "lane,level,qid", "ndcg@10", ","],
             "shards": [SHARD_BREAK.decode()],
             "compressed": ["\x1f\x8b", "BZh", "\xfd7zXZ\x00", "\x28\xb5\x2f\xfd", "\x04\x22\x4d\x18"],
             "api": ['"run"', '"qrels"', '"measures"', '"query_id"', '"doc_id"', '"score"', '"relevance"', '"label"',
                     '"docno"', "1e308", "-1", "[]", "{}", '"ap"', '"ndcg@10"'],
             "options": ["\n--", "\n-", "=", "nan", "inf", "-1", "0", "1e9", "99999999999999999999", ",", "@", "#", " ",
                         "\n/dev/null", "\n/dev/full", "a.run", "b.run", "qrels.txt", "report.json"],
             "out_paths": ["/", "dir", "file", "link-file", "link-dir", "dangling", "fifo", ".json", ".csv", ".parquet",
                           ".tsv", "~", " ", "*", "\x1b", "\u202e"]}.get(target, [])
    if target == "options":
        from rankscope_tui.commands import build_parser

        parser = build_parser()
        subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        extra += sorted({"\n" + o for p in subs.values() for a in p._actions for o in a.option_strings})
    return [t for k in kinds for t in TOKENS[k]] + extra


# ---------------------------------------------------------------------------- bookkeeping


class Findings:
    """Every exception other than InputError: one per (type, innermost rankscope frame)."""

    def __init__(self, target: str, out: Path):
        self.target, self.dir = target, out / target
        self.dir.mkdir(parents=True, exist_ok=True)
        for p in self.dir.glob("finding-*.bin"):
            p.unlink()
        self.runs = self.accepted = self.refused = self.skipped = 0
        self.found: dict[str, dict] = {}
        self.start = time.monotonic()
        self.last_save = 0.0

    @staticmethod
    def signature(exc: BaseException) -> tuple[str, str]:
        # a bad InputError is located where the InputError was raised
        tb = traceback.extract_tb((exc.__cause__ if isinstance(exc, BadErrorMessage) and exc.__cause__ else exc).__traceback__)
        ours = [f for f in tb if "rankscope_tui" in f.filename or f.filename.endswith("fuzz_readers.py")]
        frame = (ours or tb)[-1] if (ours or tb) else None
        where = f"{Path(frame.filename).name}:{frame.lineno} ({frame.name})" if frame else "?"
        return f"{type(exc).__name__} at {where}", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])

    def record(self, data: bytes, exc: BaseException) -> None:
        sig, tb = self.signature(exc)
        cur = self.found.get(sig)
        if cur is None or len(data) < cur["size"]:
            n = cur["n"] if cur else len(self.found) + 1
            path = self.dir / f"finding-{n}.bin"
            path.write_bytes(data)
            self.found[sig] = {"n": n, "signature": sig, "message": f"{type(exc).__name__}: {str(exc)[:300]}", "size": len(data),
                               "file": str(path), "count": (cur["count"] if cur else 0) + 1, "traceback": tb,
                               "input_preview": data[:200].decode("utf-8", "backslashreplace")}
            if cur is None:
                print(f"[{self.target}] NEW {sig}: {type(exc).__name__}: {str(exc)[:160]} ({len(data)} bytes)", flush=True)
            self.save()
        else:
            cur["count"] += 1

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_save > 5:
            self.save()

    def save(self) -> None:
        self.last_save = time.monotonic()
        summary = {"target": self.target, "engine": "atheris" if atheris else "random-mutation", "runs": self.runs,
                   "accepted": self.accepted, "refused_with_input_error": self.refused, "skipped": self.skipped,
                   "timeouts": TIMEOUTS["n"],
                   "seconds": round(time.monotonic() - self.start, 1), "findings": sorted(self.found.values(), key=lambda f: f["n"])}
        tmp = self.dir / "summary.json.tmp"
        tmp.write_text(json.dumps(summary, indent=2))
        os.replace(tmp, self.dir / "summary.json")

    def report(self) -> str:
        lines = [f"{self.target}: {self.runs} inputs ran ({self.accepted} accepted, {self.refused} refused with InputError"
                 + (f", {self.skipped} not run by the harness" if self.skipped else "")
                 + (f", {TIMEOUTS['n']} command line(s) stopped at the harness's time limit" if TIMEOUTS["n"] else "")
                 + f"), {len(self.found)} distinct exception(s) other than InputError"]
        for f in sorted(self.found.values(), key=lambda f: f["n"]):
            lines.append(f"  - {f['signature']}: {f['message'][:200]} [{f['count']}x; smallest {f['size']} bytes: {f['file']}]")
        return "\n".join(lines)


class BadErrorMessage(AssertionError):
    """An InputError that names a line the input does not have, or no value."""


#: Magic bytes of every compression a reader decompresses (files.COMPRESSIONS), and the lz4
#: legacy frame: the line of an error in such a file is a line of its content, which the
#: stored bytes cannot count.
COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"\x04\x22\x4d\x18", b"\x02\x21\x4c\x18")


def is_compressed(data: bytes) -> bool:
    """Whether ``data`` starts like a compressed stream (a zstd skippable frame too: 0x184D2A5?)."""
    return data.startswith(COMPRESSED_MAGIC) or (len(data) >= 4 and data[1:4] == b"\x2a\x4d\x18"
                                                 and data[0] & 0xF0 == 0x50)


def line_count(data: bytes, lf_only: bool = False) -> int:
    """Lines of ``data`` by the readers' rule (files.decode_text): LF, CRLF and a lone CR each
    end a line; the text after the last line end is a line too (counted even when empty,
    so a file ending in a line end may be named one past its last line). ``lf_only``: LF
    alone ends a line (the comparison log, one JSON object a line, split at LF)."""
    if lf_only:
        return data.count(b"\n") + 1
    crlf = data.count(b"\r\n")
    return data.count(b"\n") + (data.count(b"\r") - crlf) + 1


def parquet_rows(data: bytes) -> int | None:
    """Rows of a Parquet file as pyarrow's metadata counts them (None when unreadable)."""
    try:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(pyarrow.BufferReader(pyarrow.py_buffer(data))).metadata.num_rows)
    except Exception:  # noqa: BLE001 - a corrupt file: no row count to hold the error to
        return None


def bad_byte_line(content: bytes, message: str, lf_only: bool = False) -> int | None:
    """The line of the byte a NUL or not-UTF-8 error is about (None for other errors):
    where the oracle knows the exact line, it holds the error to it."""
    if "binary file (NUL byte)" in message:
        pos = content.find(b"\x00")
    elif "not UTF-8" in message:
        try:
            content.decode("utf-8")
            return None
        except UnicodeDecodeError as exc:
            pos = exc.start
    else:
        return None
    return line_count(content[:pos], lf_only) if pos >= 0 else None


#: The files of the input being run: path -> the content its lines are counted on (the
#: bytes written, or the text a harness compressed itself), so an error naming one of a
#: harness's several files (shards, a table beside a run) is held to that file's lines.
CURRENT: dict[str, bytes] = {}
#: Files whose reader ends a line at LF alone (its own rule, kept consistently)
LF_ONLY: set[str] = set()


def check_input_error(exc: InputError, data: bytes) -> None:
    """The one-line error must name a line its file has (counted by the readers' rule, on
    the content; a compressed file's lines are not counted, a Parquet file's rows are),
    and carry the offending value."""
    content = CURRENT.get(str(exc.path)) if CURRENT else data
    if exc.line is not None and content is not None and not is_compressed(content):
        if content[:4] == b"PAR1":
            n_lines, unit = parquet_rows(content), "row"
        else:
            n_lines, unit = line_count(content, str(exc.path) in LF_ONLY), "line"
        if n_lines is not None and not 1 <= exc.line <= max(n_lines, 1):
            raise BadErrorMessage(f"InputError names {unit} {exc.line} of a {n_lines}-{unit} input: {exc}") from exc
        at = bad_byte_line(content, str(exc), str(exc.path) in LF_ONLY) if unit == "line" else None
        if at is not None and exc.line != at:
            raise BadErrorMessage(f"InputError names line {exc.line}, the offending byte is on line {at}: {exc}") from exc
    everything = data + b"".join(CURRENT.values())
    if "'?'" in str(exc) and b"?" not in everything:  # '?' is what the reader prints when it lost the value
        raise BadErrorMessage(f"InputError without the offending value: {exc}") from exc


def refused(fn, *a, **kw):
    """``fn(*a, **kw)``, an InputError checked and swallowed (a harness that tries several
    readings of one input goes on to the next); returns None when refused."""
    try:
        return fn(*a, **kw)
    except InputError as exc:
        REFUSALS["n"] += 1
        check_input_error(exc, b"")
        return None


REFUSALS = {"n": 0}  # readings refused inside a harness (refused())
SKIPS = {"n": 0}  # inputs a harness does not run (an unsafe command line, no table to write as Parquet)


def one_input(harness, findings: Findings, data: bytes) -> None:
    findings.runs += 1
    CURRENT.clear()
    before, skips = REFUSALS["n"], SKIPS["n"]
    try:
        try:
            harness(data)
            if SKIPS["n"] > skips:
                findings.skipped += 1
            elif REFUSALS["n"] > before:  # every reading the harness tried, or some, refused it
                findings.refused += 1
            else:
                findings.accepted += 1
        except InputError as exc:
            findings.refused += 1
            check_input_error(exc, data)
    except Exception as exc:  # noqa: BLE001 - every other exception is the finding
        findings.record(data, exc)
    findings.tick()


# ---------------------------------------------------------------------------- engines


def run_atheris(target: str, seconds: int, out: Path, seed: int) -> Findings:
    harness = HARNESSES[target]
    findings = Findings(target, out)
    corpus = out / target / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for i, s in enumerate(seeds(target)):
        (corpus / f"seed-{i}").write_bytes(s)
    dict_path = out / target / "tokens.dict"
    dict_path.write_text("".join(f'"{_dict_escape(t)}"\n' for t in dictionary(target)))
    fixtures()
    deadline = time.monotonic() + seconds

    def test_one_input(data: bytes) -> None:
        one_input(harness, findings, data)
        if time.monotonic() >= deadline:  # libFuzzer's own exit would skip the summary
            findings.save()
            print(findings.report(), flush=True)
            sys.stdout.flush()
            _cleanup()
            os._exit(0)

    # libFuzzer's -max_total_time only as a backstop
    atheris.Setup([sys.argv[0], str(corpus), f"-max_total_time={seconds + 60}", f"-seed={seed}", "-max_len=8192", "-timeout=20",
                   f"-dict={dict_path}", "-rss_limit_mb=4096", "-print_final_stats=1"], test_one_input)
    atheris.Fuzz()
    return findings


def mutate(rng: random.Random, data: bytes, tokens: list[bytes], pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(8)
        pos = rng.randint(0, len(b))
        if op == 0 and b:
            del b[rng.randrange(len(b))]
        elif op == 1:
            b[pos:pos] = bytes([rng.randrange(256)])
        elif op == 2 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 3:
            b[pos:pos] = rng.choice(tokens)
        elif op == 4 and b:
            i, j = sorted(rng.randrange(len(b)) for _ in range(2))
            b[pos:pos] = b[i:j + 1] * rng.randint(1, 50)
        elif op == 5 and b:
            i, j = sorted(rng.randrange(len(b)) for _ in range(2))
            del b[i:j + 1]
        elif op == 6:
            other = rng.choice(pool)
            i = rng.randint(0, len(other))
            b[pos:] = other[i:]
        else:
            b[pos:pos] = rng.choice(tokens) * rng.randint(1, 200)
    return bytes(b[:8192])


def run_count(target: str, n_seeds: int, n_mutations: int, out: Path, seed: int = 1) -> Findings:
    """A fixed, small run (the test suite's): the first ``n_seeds`` seeds, then
    ``n_mutations`` seeded mutations of them; the same inputs every time."""
    harness = HARNESSES[target]
    findings = Findings(target, out)
    rng = random.Random(seed)
    pool = seeds(target)[:n_seeds]
    tokens = [t.encode() for t in dictionary(target)]
    for s in pool:
        one_input(harness, findings, s)
    for _ in range(n_mutations):
        one_input(harness, findings, mutate(rng, rng.choice(pool), tokens, pool))
    return findings


def run_random(target: str, seconds: int, out: Path, seed: int) -> Findings:
    harness = HARNESSES[target]
    findings = Findings(target, out)
    rng = random.Random(seed)
    pool = seeds(target)
    tokens = [t.encode() for t in dictionary(target)]
    end = time.monotonic() + seconds
    # the seeds in a seeded shuffle, for at most half the time: a target with many slow
    # seeds (options: a whole command each) still samples every command and mutates
    order = list(pool)
    rng.shuffle(order)
    half = time.monotonic() + seconds / 2
    for s in order:
        if time.monotonic() >= half:
            break
        one_input(harness, findings, s)
    while time.monotonic() < end:
        data = mutate(rng, rng.choice(pool), tokens, pool)
        before = len(findings.found)
        one_input(harness, findings, data)
        if len(findings.found) > before or (rng.random() < 0.01 and len(pool) < 500):
            pool.append(data)
    findings.save()
    print(findings.report(), flush=True)
    return findings


# ---------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=TARGETS)
    ap.add_argument("--all", action="store_true", help="every target, one process each")
    ap.add_argument("--targets", default=",".join(TARGETS), help="with --all: a comma list of targets (default: all)")
    ap.add_argument("--seconds", type=int, default=120, help="fuzzing time per target (default 120)")
    ap.add_argument("--jobs", type=int, default=1, help="with --all: targets fuzzed at the same time")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", choices=["auto", "atheris", "random"], default="auto")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="findings, corpora and summaries (default fuzz/out)")
    ap.add_argument("--replay", metavar="FILE", help="run one input through --target and show what it raises")
    args = ap.parse_args(argv)
    out = Path(args.out)

    if args.replay:
        if not args.target:
            ap.error("--replay needs --target")
        data = Path(args.replay).read_bytes()
        try:
            HARNESSES[args.target](data)
            print("accepted")
        except InputError as exc:
            try:
                check_input_error(exc, data)
            except BadErrorMessage as bad:
                print(f"BadErrorMessage: {bad}")
                return 1
            print(f"InputError (fine): {exc}")
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            return 1
        return 0

    if args.all:
        chosen = [t.strip() for t in args.targets.split(",") if t.strip()]
        unknown = [t for t in chosen if t not in TARGETS]
        if unknown:
            ap.error(f"unknown targets: {unknown}")
        procs, pending, results = [], list(chosen), {}
        while pending or procs:
            while pending and len(procs) < max(1, args.jobs):
                t = pending.pop(0)
                cmd = [sys.executable, __file__, "--target", t, "--seconds", str(args.seconds), "--seed", str(args.seed),
                       "--engine", args.engine, "--out", str(out)]
                out.mkdir(parents=True, exist_ok=True)
                log = open(out / f"{t}.log", "w")
                procs.append((t, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL), log))
            time.sleep(1)
            for item in list(procs):
                t, p, log = item
                if p.poll() is not None:
                    log.close()
                    procs.remove(item)
                    results[t] = p.returncode
        total, found, failed = 0, 0, []
        print(f"\nfuzzing summary ({args.seconds} s per target, engine {args.engine}):")
        for t in chosen:
            if results.get(t) != 0 or not (out / t / "summary.json").exists():
                failed.append(t)
                print(f"{t:11} did not finish (exit status {results.get(t)}): see {out / (t + '.log')}")
                continue
            s = json.loads((out / t / "summary.json").read_text())
            found += len(s["findings"])
            total += s["runs"]
            print(f"{t:11} {s['runs']:>9} inputs  {s['accepted']:>8} accepted  {s['refused_with_input_error']:>8} InputError  "
                  f"{s.get('skipped', 0):>6} not run  {len(s['findings'])} finding(s)  [{s['engine']}, {s['seconds']} s]")
            for f in s["findings"]:
                print(f"    - {f['signature']}: {f['message'][:160]} (smallest {f['size']} bytes: {f['file']})")
        print(f"total {total} inputs, {found} finding(s)" + (f", {len(failed)} target(s) did not finish" if failed else ""))
        return 1 if found or failed else 0  # `make fuzz` fails on a finding

    if not args.target:
        ap.error("give --target or --all")
    engine = args.engine
    if engine == "auto":
        engine = "atheris" if atheris is not None else "random"
    if engine == "atheris":
        if atheris is None:
            ap.error("atheris is not installed (pip install atheris), use --engine random")
        run_atheris(args.target, args.seconds, out, args.seed)
    else:
        run_random(args.target, args.seconds, out, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
