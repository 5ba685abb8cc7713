"""Issue 14, items 10-12 and 15-19: what reading inputs refuses, what it reads, and what it says.

- 10: character devices refused; compressed content decompressed in steps up to the
  stated input size limit; a gzip bomb under a 2 GiB address-space limit ends in one
  line, exit 2, no MemoryError;
- 11/12: pipes (``/dev/fd/N``, as ``<(zcat x.gz)`` gives) and named FIFOs are read, for
  lanes as for qrels and tables; a FIFO with no writer says it waits and Ctrl-C stops it;
- 15: a lone CR is a line end everywhere (runs, qrels, strata, corpus);
- 16: ``+`` is refused in lane names (variant lanes own it);
- 17: in-sample evaluation is told from the thresholds file's own fingerprints;
- 18: nonsense options and file contents refused with one line;
- 19: permission problems, ``--lane x=`` and bz2/xz/zstd/lz4 lanes say what they are.

Each CLI refusal: exit 2, exactly one stderr line ``rankscope: error: WHERE: what``, no traceback.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import json
import lzma
import os
import re
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
import support

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs import files
from rankscope_tui.kernel.inputs.readers import read_lane, read_qrels
from rankscope_tui.kernel.inputs.tables import read_corpus, read_strata

RUN = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 1.0 t\nq2 Q0 d1 1 1.5 t\nq2 Q0 d4 2 0.5 t\n"
QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d1 0\n"
ROWS = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q1", "d3", 1.0), ("q2", "d1", 1.5), ("q2", "d4", 0.5)]


def one_line_error(res: subprocess.CompletedProcess, prefix: str, *contains: str) -> str:
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, res.stderr[-2000:]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"rankscope: error: {prefix}"), lines[0]
    for c in contains:
        assert c in lines[0], (c, lines[0])
    return lines[0]


def rows_of(lane) -> list[tuple[str, str, float]]:
    return list(zip(lane.qid.to_pylist(), lane.doc.to_pylist(), lane.score.tolist()))


@pytest.fixture
def data(tmp_path):
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def cli(*args, cwd):
    return support.run_cli(*args, cwd=cwd, timeout=120)


# ============================================================================ 10: devices, bombs


def test_character_devices_are_refused(data):
    res = cli("evaluate", "--lane", "/dev/zero", "--qrels", "qrels.txt", cwd=data)
    one_line_error(res, "/dev/zero: ", "character device")
    res = cli("evaluate", "--lane", "a.run", "--qrels", "/dev/urandom", cwd=data)
    one_line_error(res, "/dev/urandom: ", "character device")
    with pytest.raises(InputError, match="character device"):
        read_strata("/dev/null")


def test_a_nul_byte_stops_the_read_at_the_first_step(tmp_path):
    """A sparse 4 GiB file of zeros (no disk used) is refused after one 1 MiB step."""
    p = tmp_path / "sparse.run"
    with open(p, "wb") as fh:
        fh.truncate(4 << 30)
    t = time.perf_counter()
    with pytest.raises(InputError, match=r"sparse.run:1: binary file \(NUL byte\)"):
        read_lane(str(p))
    assert time.perf_counter() - t < 5


def test_decompressed_content_is_capped_with_the_limit_in_the_message(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKSCOPE_MAX_INPUT_BYTES", str(1 << 20))
    p = tmp_path / "big.run.gz"
    p.write_bytes(gzip.compress(RUN.encode() * 20000))  # ~1.9 MB of text
    with pytest.raises(InputError) as exc:
        read_lane(str(p))
    msg = str(exc.value)
    assert msg.startswith(f"{p}: decompresses (gzip) to more than 1 MiB, the input size limit")
    assert "RANKSCOPE_MAX_INPUT_BYTES" in msg and "physical memory" in msg
    monkeypatch.setenv("RANKSCOPE_MAX_INPUT_BYTES", str(8 << 20))
    assert len(read_lane(str(p)).score) == 5 * 20000


def test_the_limit_follows_the_machine(monkeypatch):
    import resource

    monkeypatch.delenv("RANKSCOPE_MAX_INPUT_BYTES", raising=False)
    phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        assert files.input_size_limit() == min(32 << 30, phys // 4)
    else:  # a quarter of what the limit leaves beyond this process's own mapping (which moves a little)
        mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        assert abs(files.input_size_limit() - min(32 << 30, phys // 4, (soft - mapped) // 4)) < 16 << 20
    monkeypatch.setenv("RANKSCOPE_MAX_INPUT_BYTES", "lots")
    with pytest.raises(InputError, match="RANKSCOPE_MAX_INPUT_BYTES: must be a positive integer"):
        files.input_size_limit()


BOMB_SCRIPT = r"""
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
sys.argv = ["rankscope"] + sys.argv[1:]
runpy.run_module("rankscope_tui.cli", run_name="__main__")
"""


def test_gzip_bomb_under_a_memory_limit_is_one_line(tmp_path):
    """~3 MB of gzip holding ~1.3 GB of run lines, read under RLIMIT_AS = 2 GiB: the limit
    (a quarter of the address space left) stops decompression; no MemoryError traceback."""
    block = b"q1 Q0 d1 1 3.0 t\n" * 4096
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [co.compress(block) for _ in range(20000)] + [co.flush()]
    (tmp_path / "bomb.run.gz").write_bytes(b"".join(parts))
    (tmp_path / "qrels.txt").write_text(QRELS)
    env = support.cli_env()
    env.pop("RANKSCOPE_MAX_INPUT_BYTES", None)
    res = subprocess.run([sys.executable, "-c", BOMB_SCRIPT, "evaluate", "--lane", "bomb.run.gz", "--qrels", "qrels.txt"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    one_line_error(res, "bomb.run.gz: decompresses (gzip) to more than ")
    # a quarter of what the 2 GiB leave beyond the process's own mapping (a few hundred MB)
    limit = int(re.search(r"to more than (\d+) MiB, the input size limit", res.stderr).group(1))
    assert 256 < limit < 512, res.stderr
    assert "MemoryError" not in res.stderr


# ============================================================================ 11/12: pipes and FIFOs


def _writer(fd: int, data: bytes, delay: float = 0.0):
    def go():
        time.sleep(delay)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("payload", [RUN.encode(), gzip.compress(RUN.encode())], ids=["plain", "gzip"])
def test_a_lane_through_a_pipe_reads_as_the_file(payload):
    r, w = os.pipe()
    t = _writer(w, payload * 1)
    try:
        lane = read_lane(f"/dev/fd/{r}", name="piped")
    finally:
        os.close(r)
    t.join(5)
    assert rows_of(lane) == ROWS
    import hashlib

    assert lane.sha256() == hashlib.sha256(payload).hexdigest()  # the bytes read, not a re-read


def test_a_big_lane_through_a_pipe_is_read_whole():
    """More than one pipe buffer and one read step (the fast path's 1 MiB slices)."""
    text = "".join(f"q{i % 97} Q0 d{i} {i} {1.0 / (i + 1):.6f} t\n" for i in range(120000)).encode()
    r, w = os.pipe()
    t = _writer(w, text)
    try:
        lane = read_lane(f"/dev/fd/{r}", name="big")
    finally:
        os.close(r)
    t.join(5)
    assert len(lane.score) == 120000 and lane.doc[119999].as_py() == "d119999"


def test_lanes_qrels_and_strata_through_pipes_on_the_command_line(data):
    """As ``--lane <(cat a.run) --qrels <(cat qrels.txt) --strata <(...)``: the report equals the files'."""
    ref = cli("evaluate", "--lane", "a=a.run", "--qrels", "qrels.txt", "--resamples", "0", cwd=data)
    assert ref.returncode == 0, ref.stderr
    fds, threads = [], []
    for payload in (RUN.encode(), QRELS.encode()):
        r, w = os.pipe()
        fds.append(r)
        threads.append(_writer(w, payload))
    try:
        res = subprocess.run([sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", f"a=/dev/fd/{fds[0]}",
                              "--qrels", f"/dev/fd/{fds[1]}", "--resamples", "0"], cwd=data, env=support.cli_env(),
                             capture_output=True, text=True, timeout=120, pass_fds=fds)
    finally:
        for r in fds:
            os.close(r)
    assert res.returncode == 0, res.stderr
    assert res.stdout == ref.stdout


def _line_within(proc: subprocess.Popen, seconds: float) -> str:
    """The first stderr line of ``proc``, or a failure (and the process killed) after ``seconds``."""
    import select

    ready, _, _ = select.select([proc.stderr], [], [], seconds)
    if not ready:
        proc.kill()
        proc.communicate()
        pytest.fail(f"no stderr line within {seconds} s (a FIFO without a writer must say it waits)")
    return proc.stderr.readline()


def test_a_fifo_waits_for_its_writer_with_a_note(data):
    """The writer comes only once the note is shown; then the FIFO is read as the file."""
    ref = cli("evaluate", "--lane", "a=a.run", "--qrels", "qrels.txt", "--resamples", "0", cwd=data)
    os.mkfifo(data / "lane.fifo")
    proc = subprocess.Popen([sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", "a=lane.fifo", "--qrels",
                             "qrels.txt", "--resamples", "0"], cwd=data, env=support.cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    note = _line_within(proc, 60)
    assert note == "rankscope: note: lane.fifo: waiting for a writer on this pipe (Ctrl-C to stop)\n"
    with open(data / "lane.fifo", "wb") as fh:
        fh.write(RUN.encode())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == "", err
    assert out == ref.stdout.replace("a.run", "lane.fifo")


def test_a_fifo_without_a_writer_stops_on_ctrl_c(data):
    os.mkfifo(data / "never.fifo")
    proc = subprocess.Popen([sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", "never.fifo", "--qrels",
                             "qrels.txt"], cwd=data, env=support.cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    err = _line_within(proc, 60)  # the note (the open still waits)
    assert "waiting for a writer" in err
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=30)
    assert proc.returncode == 130, (proc.returncode, err + (rest or ""))
    assert "Traceback" not in err + (rest or "")


# ============================================================================ 15: CR line ends


def test_cr_only_files_read_as_their_lf_twins(tmp_path):
    cr = tmp_path / "cr.run"
    cr.write_bytes(RUN.replace("\n", "\r").encode())
    assert rows_of(read_lane(str(cr))) == ROWS
    q = tmp_path / "cr.qrels"
    q.write_bytes(QRELS.replace("\n", "\r").encode())
    got = read_qrels(str(q))
    assert list(zip(got.qid.to_pylist(), got.doc.to_pylist(), got.grade.tolist())) == [
        ("q1", "d1", 1), ("q1", "d3", 2), ("q2", "d4", 1), ("q2", "d1", 0)]
    assert got.line.tolist() == [1, 2, 3, 4]
    s = tmp_path / "strata.tsv"
    s.write_bytes(b"q1\tA\rq2\tB\r")
    assert read_strata(str(s)) == {"q1": "A", "q2": "B"}
    c = tmp_path / "corpus.tsv"
    c.write_bytes(b"d1\rd2\rd3\r")
    assert read_corpus(str(c)) == {"d1", "d2", "d3"}


def test_a_cr_only_error_names_its_line(tmp_path):
    p = tmp_path / "bad.run"
    p.write_bytes(b"q1 Q0 d1 1 3.0 t\rq1 Q0 d2 2 x t\r")
    with pytest.raises(InputError, match=r"bad.run:2: score is not a number: 'x'"):
        read_lane(str(p))


def test_a_cr_only_corpus_makes_positives_indexed(data):
    (data / "corpus.tsv").write_bytes(b"d1\rd2\rd3\rd4\r")
    res = cli("evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--corpus", "corpus.tsv", "--resamples", "0",
              "--out", "r.json", cwd=data)
    assert res.returncode == 0, res.stderr
    report = json.loads((data / "r.json").read_text())
    assert "not_indexed" not in json.dumps(report["attribution"]) or all(
        v == 0 for k, v in _find(report["attribution"], "not_indexed"))


def _find(obj, key):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                yield k, v
            else:
                yield from _find(v, key)
    elif isinstance(obj, list):
        for v in obj:
            yield from _find(v, key)


# ============================================================================ 16: '+' in lane names


def test_a_plus_in_a_lane_name_is_refused(data):
    (data / "dense.run").write_text(RUN)
    res = cli("evaluate", "--lane", "bm25=a.run", "--lane", "bm25+cap2=dense.run", "--qrels", "qrels.txt",
              "--group-sep", "#", "--cap", "2", cwd=data)
    one_line_error(res, "dense.run: lane name 'bm25+cap2'", "'+'", "variant")
    (data / "x+y.run").write_text(RUN)
    res = cli("evaluate", "--lane", "x+y.run", "--qrels", "qrels.txt", cwd=data)
    one_line_error(res, "x+y.run: lane name 'x+y'", "variant")


# ============================================================================ 17: in-sample by fingerprints


@pytest.fixture(scope="module")
def calibrated(demo_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("cal")
    args = ["--lane", str(demo_dir / "lexical.run"), "--lane", str(demo_dir / "dense.run"), "--gate-on", "dense"]
    res = support.run_cli("calibrate", *args, "--qrels", str(demo_dir / "qrels-dev.txt"), "--out", str(d / "th.json"),
                          "--resamples", "0")
    assert res.returncode == 0, res.stderr
    return d, args


def test_thresholds_without_their_query_list_are_in_sample_by_fingerprint(calibrated, demo_dir):
    d, args = calibrated
    th = json.loads((d / "th.json").read_text())
    del th["calibration"]["qids"]
    (d / "noqids.json").write_text(json.dumps(th))
    res = support.run_cli("evaluate", *args, "--qrels", str(demo_dir / "qrels-dev.txt"), "--thresholds",
                          str(d / "noqids.json"), "--resamples", "0", "--out", str(d / "r.json"))
    assert res.returncode == 0, res.stderr
    report = json.loads((d / "r.json").read_text())
    assert report["fusion"]["convex"]["label"] == "in-sample"
    assert "in-sample" in res.stdout and "picked on other negatives" not in res.stdout


def test_thresholds_that_cannot_say_which_queries_are_refused(calibrated, demo_dir):
    d, args = calibrated
    th = json.loads((d / "th.json").read_text())
    del th["calibration"]["qids"]
    del th["fingerprints"]
    (d / "blind.json").write_text(json.dumps(th))
    res = support.run_cli("evaluate", *args, "--qrels", str(demo_dir / "qrels-test.txt"), "--thresholds",
                          str(d / "blind.json"), "--resamples", "0")
    one_line_error(res, f"{d / 'blind.json'}:1: 'calibration.qids' is missing", "unknown")
    th = json.loads((d / "th.json").read_text())
    th["calibration"]["qids"] = th["calibration"]["qids"][:3]
    (d / "short.json").write_text(json.dumps(th))
    res = support.run_cli("evaluate", *args, "--qrels", str(demo_dir / "qrels-test.txt"), "--thresholds",
                          str(d / "short.json"), "--resamples", "0")
    one_line_error(res, f"{d / 'short.json'}:1: 'calibration.qids' lists 3 queries", "edited or is incomplete")


# ============================================================================ 18: nonsense refused


def _report(tmp: Path) -> dict:
    res = cli("evaluate", "--lane", "a.run", "--qrels", "qrels.txt", "--resamples", "0", "--out", "r.json", cwd=tmp)
    assert res.returncode == 0, res.stderr
    return json.loads((tmp / "r.json").read_text())


def test_nonsense_options_and_contents_are_refused(data):
    rep = _report(data)
    (data / "gates.json").write_text(json.dumps({"schema": "rankscope.gates/1", "rules": []}))
    bad = {}
    for schema in ("rankscope.report/0", "rankscope.report/2"):
        r = dict(rep, schema=schema)
        (data / f"s{schema[-1]}.json").write_text(json.dumps(r))
        bad[f"schema {schema}"] = (["diff", "--before", "r.json", "--after", f"s{schema[-1]}.json"],
                                   f"s{schema[-1]}.json:1: report schema", "rankscope.report/1")
    for value, name in ((7.5, "big"), (-3, "neg")):
        r = json.loads(json.dumps(rep))
        r["per_query"]["a"]["doc"]["q1"]["rr"] = value
        (data / f"{name}.json").write_text(json.dumps(r))
        bad[f"per-query {value} (diff)"] = (["diff", "--before", "r.json", "--after", f"{name}.json"],
                                             f"{name}.json:1: not a rankscope report: per_query.a.doc.q1.rr", "[0, 1]")
        bad[f"per-query {value} (verdict)"] = (["verdict", "--report", f"{name}.json", "--gates", "gates.json"],
                                                f"{name}.json:1: not a rankscope report: per_query.a.doc.q1.rr", "[0, 1]")
    r = json.loads(json.dumps(rep))
    cell = r["lanes"]["a"]["doc"]["hit@1"]
    cell["low"], cell["high"] = 0.9, 0.1
    (data / "lowhigh.json").write_text(json.dumps(r))
    bad["low > high"] = (["verdict", "--report", "lowhigh.json", "--gates", "gates.json"],
                         "lowhigh.json:1: not a rankscope report: lanes.a.doc.hit@1 has low 0.9 above high 0.1", "")
    bad["--min-delta nan"] = (["diff", "--before", "r.json", "--after", "r.json", "--min-delta", "nan"], "--min-delta: ",
                              "finite")
    base = ["evaluate", "--lane", "a.run", "--qrels", "qrels.txt"]
    bad["--margin nan"] = (base + ["--margin", "nan"], "--margin must be a finite number", "")
    bad["--mutual 0"] = (base + ["--mutual", "0"], "--mutual must be at least 1", "")
    bad["--mutual -1"] = (base + ["--mutual", "-1"], "--mutual must be at least 1", "")
    bad["--group-sep ''"] = (base + ["--group-sep", ""], "--group-sep: ", "empty")
    (data / "none.tsv").write_text("q1\t(none)\nq2\tB\n")
    bad["strata (none)"] = (base + ["--strata", "none.tsv"], "none.tsv:1: label '(none)' is reserved", "")
    (data / "bom.tsv").write_bytes(b"\xef\xbb\xbf")
    bad["BOM-only queries"] = (base + ["--queries", "bom.tsv"], "bom.tsv: empty file", "")
    (data / "two.qrels").write_bytes(QRELS.encode() + b"\xef\xbb\xbf" + b"q3 0 d1 1\n")
    bad["BOM mid qrels"] = (["evaluate", "--lane", "a.run", "--qrels", "two.qrels"], "two.qrels:5: a byte-order mark",
                            "concatenated")
    (data / "two.run").write_bytes(RUN.encode() + b"\xef\xbb\xbf" + b"q4 Q0 d1 1 1.0 t\n")
    bad["BOM mid run"] = (["evaluate", "--lane", "two.run", "--qrels", "qrels.txt"], "two.run:6: a byte-order mark", "")
    th = {"schema": "rankscope.thresholds/1", "calibration": {"qids": ["q9"]}, "fusion": {"rrf_k": 0}}
    (data / "k0.json").write_text(json.dumps(th))
    bad["rrf_k 0"] = (base + ["--thresholds", "k0.json"], "k0.json:1: 'fusion.rrf_k' must be between 1", "")
    results = support.cli_many({k: (a, data, None) for k, (a, _, _) in bad.items()})
    for k, (_, prefix, contains) in bad.items():
        one_line_error(results[k], prefix, *([contains] if contains else []))


def test_hash_lines_in_a_corpus_are_comments(tmp_path):
    p = tmp_path / "corpus.tsv"
    p.write_text("# doc ids of the index\nd1\n#d2\nd3\n")
    assert read_corpus(str(p)) == {"d1", "d3"}


# ============================================================================ 19: messages that say what is wrong


def test_permission_denied_is_not_no_such_file(tmp_path, monkeypatch):
    p = tmp_path / "locked.run"
    p.write_text(RUN)
    real_stat = os.stat

    def denied(path, *a, **kw):
        if str(path) == str(p):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_stat(path, *a, **kw)

    monkeypatch.setattr(os, "stat", denied)
    with pytest.raises(InputError, match=r"locked.run: permission denied$"):
        read_lane(str(p))


def test_a_path_through_a_file_says_so(data):
    res = cli("evaluate", "--lane", "a.run/inner", "--qrels", "qrels.txt", cwd=data)
    one_line_error(res, "a.run/inner: not a file: a part of this path before the last '/' is not a directory")


def test_empty_path_after_name(data):
    res = cli("evaluate", "--lane", "x=", "--qrels", "qrels.txt", cwd=data)
    one_line_error(res, "argument --lane: x=: empty path after NAME=")


def test_bz2_xz_lanes_are_read_and_zstd_lz4_by_pyarrow(tmp_path):
    import pyarrow as pa

    (tmp_path / "r.run.bz2").write_bytes(bz2.compress(RUN.encode()))
    (tmp_path / "r.run.xz").write_bytes(lzma.compress(RUN.encode()))
    for p in ("r.run.bz2", "r.run.xz"):
        lane = read_lane(str(tmp_path / p))
        assert lane.name == "r" and rows_of(lane) == ROWS
    for codec, suffix in (("zstd", "zst"), ("lz4", "lz4")):
        if not pa.Codec.is_available(codec):
            continue
        buf = pa.BufferOutputStream()
        with pa.CompressedOutputStream(buf, codec) as out:
            out.write(RUN.encode())
        (tmp_path / f"r.run.{suffix}").write_bytes(buf.getvalue().to_pybytes())
        lane = read_lane(str(tmp_path / f"r.run.{suffix}"))
        assert lane.name == "r" and rows_of(lane) == ROWS


@pytest.mark.parametrize("magic,name", [(b"BZh91AY&SY", "bzip2"), (b"\xfd7zXZ\x00\x00", "xz"),
                                        (b"\x28\xb5\x2f\xfd\x00\x00", "zstd"), (b"\x04\x22\x4d\x18\x00\x00", "lz4")])
def test_a_corrupt_compressed_lane_names_its_compression(tmp_path, magic, name):
    p = tmp_path / "bad.run"
    p.write_bytes(magic + b"garbage")
    with pytest.raises(InputError, match=rf"bad.run: truncated or corrupt {name}"):
        read_lane(str(p))


@pytest.mark.parametrize("name, text", [
    ("gates.json", '[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.9,\n  "threshold": 0.1}]'),
    ("thresholds.json", '{"schema": "rankscope.thresholds/1",\n "gate": {"floor": 3.0},\n "gate": {"floor": 1.0}}'),
])
def test_a_json_file_repeating_a_key_is_refused(tmp_path, name, text):
    """json.loads keeps the last of two equal keys: a rule's threshold (or a fitted floor)
    would be weakened invisibly. The second key's line is named."""
    from rankscope_tui.kernel.errors import InputError
    from rankscope_tui.kernel.inputs.files import load_json

    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_json(text, str(p))
    assert str(e.value) == f"{p}:{2 if name == 'gates.json' else 3}: key {'threshold' if name == 'gates.json' else 'gate'!r} appears twice in one object"


@pytest.mark.parametrize("role", ["lane", "qrels"])
def test_an_id_with_a_line_break_is_refused(tmp_path, role):
    """Only JSON can carry a line break inside an id; it would split a printed row, a CSV
    row or a terminal line, so it is refused with the file and line."""
    from rankscope_tui.kernel.errors import InputError
    from rankscope_tui.kernel.inputs.readers import read_lane, read_qrels

    p = tmp_path / f"{role}.json"
    value = "1.5" if role == "lane" else "1"
    p.write_text('{"q1": {"d1": %s},\n "q\\nx": {"d2": %s}}' % (value, value))
    with pytest.raises(InputError) as e:
        (read_lane if role == "lane" else read_qrels)(str(p))
    assert str(e.value).startswith(f"{p}:2: ") and "may not contain a line break" in str(e.value)
