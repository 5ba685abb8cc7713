#!/usr/bin/env python3
"""Coverage-guided fuzzing of rankscope's readers (not part of the test suite).

Every input is written to a file and read the way the command line reads it; the
only exception a reader may raise is ``InputError`` (a one-line error, exit 2).
Accepted input must also make sense downstream: finite scores, integer grades that
fit 32 bits, and metrics in [0, 1] when the lane or qrels is evaluated.

Targets (``--target``):

  trec_lane    readers.read_lane on TREC runs, then Workspace.from_raw + per-query metrics
  json_lane    readers.read_lane on JSON {qid: {doc: score}}, then the same
  trec_qrels   readers.read_qrels on TREC qrels, then Workspace.from_raw + per-query metrics
  json_qrels   readers.read_qrels on JSON {qid: {doc: grade}}, then the same
  strata       tables.read_strata, then Workspace.from_raw with the stratification
  gates        files.read_text + rules.parse_rules, then rules.judge against a real report
  thresholds   thresholds.read_thresholds, then prepare + evaluate_report + strict JSON dump
  report       report.read_report + diffing.comparable/diff_inputs + rules.judge (the
               reports `verdict` and `diff` read)

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
           "compare_log", "goldens"]
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
    global GD, CMP, FILES, OUT, READ, TAB, RU, PL, WS, MET, ERR, REPORT, DIFFING, LoadSettings, TH, GateSettings, CalibrationSettings
    from rankscope_tui.commands import compare as CMP
    from rankscope_tui.kernel import errors as ERR
    from rankscope_tui.kernel import measures as MET
    from rankscope_tui.kernel.gate import thresholds as TH
    from rankscope_tui.kernel.inputs import files as FILES
    from rankscope_tui.kernel.inputs import readers as READ
    from rankscope_tui.kernel.inputs import tables as TAB
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


HARNESSES = {"trec_lane": h_trec_lane, "json_lane": h_json_lane, "trec_qrels": h_qrels, "json_qrels": h_qrels,
             "strata": h_strata, "gates": h_gates, "thresholds": h_thresholds, "report": h_report,
             "diff": h_diff, "compare_log": h_compare_log, "goldens": h_goldens}

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
        th = TH.calibrate(ws, GateSettings(gate_on="a", fpir=0.1, miss_rate=0.1, mutual=1),
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
    raise KeyError(target)


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


def dictionary(target: str) -> list[str]:
    kinds = ["common"] + (["trec"] if target in ("trec_lane", "trec_qrels", "strata") else ["json"])
    if target == "goldens":
        kinds += ["goldens"]
    return [t for k in kinds for t in TOKENS[k]]


# ---------------------------------------------------------------------------- bookkeeping


class Findings:
    """Every exception other than InputError: one per (type, innermost rankscope frame)."""

    def __init__(self, target: str, out: Path):
        self.target, self.dir = target, out / target
        self.dir.mkdir(parents=True, exist_ok=True)
        for p in self.dir.glob("finding-*.bin"):
            p.unlink()
        self.runs = self.accepted = self.refused = 0
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
                   "accepted": self.accepted, "refused_with_input_error": self.refused,
                   "seconds": round(time.monotonic() - self.start, 1), "findings": sorted(self.found.values(), key=lambda f: f["n"])}
        tmp = self.dir / "summary.json.tmp"
        tmp.write_text(json.dumps(summary, indent=2))
        os.replace(tmp, self.dir / "summary.json")

    def report(self) -> str:
        lines = [f"{self.target}: {self.runs} inputs ran ({self.accepted} accepted, {self.refused} refused with InputError), "
                 f"{len(self.found)} distinct exception(s) other than InputError"]
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


def line_count(data: bytes) -> int:
    """Lines of ``data`` by the readers' rule (files.decode_text): LF, CRLF and a lone CR each
    end a line; the text after the last line end is a line too (counted even when empty,
    so a file ending in a line end may be named one past its last line)."""
    crlf = data.count(b"\r\n")
    return data.count(b"\n") + (data.count(b"\r") - crlf) + 1


def parquet_rows(data: bytes) -> int | None:
    """Rows of a Parquet file as pyarrow's metadata counts them (None when unreadable)."""
    try:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(pyarrow.BufferReader(pyarrow.py_buffer(data))).metadata.num_rows)
    except Exception:  # noqa: BLE001 - a corrupt file: no row count to hold the error to
        return None


#: The files of the input being run: path -> the content its lines are counted on (the
#: bytes written, or the text a harness compressed itself), so an error naming one of a
#: harness's several files (shards, a table beside a run) is held to that file's lines.
CURRENT: dict[str, bytes] = {}


def check_input_error(exc: InputError, data: bytes) -> None:
    """The one-line error must name a line its file has (counted by the readers' rule, on
    the content; a compressed file's lines are not counted, a Parquet file's rows are),
    and carry the offending value."""
    content = CURRENT.get(str(exc.path)) if CURRENT else data
    if exc.line is not None and content is not None and not is_compressed(content):
        if content[:4] == b"PAR1":
            n_lines, unit = parquet_rows(content), "row"
        else:
            n_lines, unit = line_count(content), "line"
        if n_lines is not None and not 1 <= exc.line <= max(n_lines, 1):
            raise BadErrorMessage(f"InputError names {unit} {exc.line} of a {n_lines}-{unit} input: {exc}") from exc
    everything = data + b"".join(CURRENT.values())
    if "'?'" in str(exc) and b"?" not in everything:  # '?' is what the reader prints when it lost the value
        raise BadErrorMessage(f"InputError without the offending value: {exc}") from exc


def refused(fn, *a, **kw):
    """``fn(*a, **kw)``, an InputError checked and swallowed (a harness that tries several
    readings of one input goes on to the next); returns None when refused."""
    try:
        return fn(*a, **kw)
    except InputError as exc:
        check_input_error(exc, b"")
        return None


def one_input(harness, findings: Findings, data: bytes) -> None:
    findings.runs += 1
    CURRENT.clear()
    try:
        try:
            harness(data)
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


def run_random(target: str, seconds: int, out: Path, seed: int) -> Findings:
    harness = HARNESSES[target]
    findings = Findings(target, out)
    rng = random.Random(seed)
    pool = seeds(target)
    tokens = [t.encode() for t in dictionary(target)]
    end = time.monotonic() + seconds
    for s in pool:
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
                procs.append((t, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
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
                  f"{len(s['findings'])} finding(s)  [{s['engine']}, {s['seconds']} s]")
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
