"""The columnar qrels fast path reads exactly what the general reader reads.

Every input is read twice, once as usual and once with the fast path switched off;
both must give the same columns or the same one-line error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs import readers, trec


def _read_both(tmp_path, data: bytes, monkeypatch):
    p = tmp_path / "qrels.txt"
    p.write_bytes(data)

    def read():
        try:
            q = readers.read_qrels(str(p))
        except InputError as exc:
            return ("error", str(exc))
        return (q.qid.to_pylist(), q.doc.to_pylist(), q.grade.tolist(), np.asarray(q.line).tolist(), q.sha256())

    fast = read()
    with monkeypatch.context() as m:
        m.setattr(trec, "_read_qrels_fast", lambda raw: None)
        general = read()
    return fast, general


@pytest.mark.parametrize("text", [
    "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n",
    "q1\t0\td1\t1\nq2\t0\td9\t-1\n",
    "q1 0 d1 +1\n",  # a sign the fast path leaves to the general reader
    "q1 0 d1 0x1\n",
    "q1 0 d1 1.5\n",
    "q1 0 d1 2147483647\nq1 0 d2 2147483648\n",
    "q1 0 d1 -2147483648\n",
    "q1 0 d1 007\n",
    "q1 0 d1 1\n# comment\nq2 0 d2 1\n",
    "q1 0 d1 1\n\nq2 0 d2 1\n",
    "q1 0 d1 1 extra\n",
    "q1 0 d1\n",
    "q1  0 d1 1\n",
    "q1 0 d1 1\r\n",
    "q1 0 d1 1",
    "q1 0 dé 1\nq2 0 d2 1\n",
    "q1 0 d1 -\n",
    "q1 0 d1 1-\n",
    "q1 0 d1 --1\n",
])
def test_fast_and_general_agree(tmp_path, monkeypatch, text):
    fast, general = _read_both(tmp_path, text.encode(), monkeypatch)
    assert fast == general


def test_fast_path_is_taken_for_clean_qrels(tmp_path):
    p = tmp_path / "qrels.txt"
    p.write_bytes(b"q1 0 d1 1\nq1 0 d2 -3\nq2 0 d1 123456789\n")
    fast = trec._read_qrels_fast(p.read_bytes())
    assert fast is not None
    assert fast[2].tolist() == [1, -3, 123456789]


_token = st.text(alphabet="ab1-+0x.é", min_size=0, max_size=4)
_line = st.lists(_token, min_size=3, max_size=5).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(_line, min_size=1, max_size=6))
def test_fast_and_general_agree_on_random_lines(tmp_path_factory, lines):
    tmp = tmp_path_factory.mktemp("q")
    mp = pytest.MonkeyPatch()
    try:
        fast, general = _read_both(tmp, ("\n".join(lines) + "\n").encode(), mp)
    finally:
        mp.undo()
    assert fast == general


# ---------------------------------------------------------------------------
# the run scan: two halves checked side by side give the one-pass verdict


def _lines(n: int) -> list[bytes]:
    return [b"q%d Q0 d%d %d %d.5 run" % (i // 7, i, i % 7 + 1, 100 - i % 7) for i in range(n)]


_DEFECTS = {
    "clean": lambda ls: ls,
    "comment": lambda ls: ls[:1] + [b"# note"] + ls[1:],
    "blank": lambda ls: ls[:1] + [b""] + ls[1:],
    "double_space": lambda ls: ls[:1] + [ls[1].replace(b" ", b"  ", 1)] + ls[2:],
    "cr": lambda ls: ls[:1] + [ls[1] + b"\r"] + ls[2:],
    "tab": lambda ls: ls[:1] + [ls[1].replace(b" ", b"\t", 1)] + ls[2:],
    "leading_space": lambda ls: ls[:1] + [b" " + ls[1]] + ls[2:],
    "utf8": lambda ls: ls[:1] + [ls[1].replace(b"run", "rün".encode())] + ls[2:],
    "bad_utf8": lambda ls: ls[:1] + [ls[1].replace(b"run", b"r\xc3")] + ls[2:],
}


@pytest.mark.parametrize("defect", sorted(_DEFECTS))
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_scan_halves_agree_with_one_pass(tmp_path, monkeypatch, defect, where):
    lines = _lines(400)
    cut = {"start": 0, "middle": 200, "end": 398}[where]
    lines = lines[:cut] + _DEFECTS[defect](lines[cut:])
    p = tmp_path / "x.run"
    p.write_bytes(b"\n".join(lines) + b"\n")
    size = p.stat().st_size
    one = trec._scan_plain(str(p))
    monkeypatch.setattr(trec, "_PARALLEL_SCAN_BYTES", 0)
    monkeypatch.setattr(trec, "_SCAN_STEP", 97)  # many slices per half, borders everywhere
    two = trec._scan_plain(str(p))
    assert (two.delim, two.clean, two.tag) == (one.delim, one.clean, one.tag), (defect, where, size)


def test_scan_split_lands_on_every_line(tmp_path, monkeypatch):
    """Whatever line the split lands on, a comment line there is still found."""
    lines = _lines(60)
    monkeypatch.setattr(trec, "_PARALLEL_SCAN_BYTES", 0)
    for k in range(1, 59):
        bad = lines[:k] + [b"#x"] + lines[k:]
        p = tmp_path / f"r{k}.run"
        p.write_bytes(b"\n".join(bad) + b"\n")
        assert trec._scan_plain(str(p)).clean is False, k


# formerly a known gap: the format is told from the content before any fast path runs
@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_a_one_line_json_run_is_read_as_json(tmp_path, suffix):
    import gzip

    data = b'{"q": {"d": 1, "e": 2 }}\n'
    p = tmp_path / f"lane{suffix}"
    p.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    lane = readers.read_lane(str(p), "lane")
    assert (lane.qid.to_pylist(), lane.doc.to_pylist(), lane.score.tolist()) == (["q", "q"], ["d", "e"], [1.0, 2.0])


# ---------------------------------------------------------------------------
# three-field formats (MS MARCO runs, BEIR qrels): the fast path and the general reader agree


def _read_three_both(tmp_path, data: bytes, monkeypatch, what: str):
    p = tmp_path / ("run.tsv" if what == "run" else "qrels.tsv")
    p.write_bytes(data)

    def read():
        try:
            if what == "run":
                r = readers.read_lane(str(p), "lane")
                vals = r.score.tolist()
            else:
                r = readers.read_qrels(str(p))
                vals = r.grade.tolist()
        except InputError as exc:
            return ("error", str(exc))
        return (r.qid.to_pylist(), r.doc.to_pylist(), vals, np.asarray(r.line).tolist(), r.format)

    fast = read()
    with monkeypatch.context() as m:
        m.setattr(trec, "_read_beir_fast", lambda raw, path: None)
        m.setattr(trec, "_parse_msmarco", lambda *a: None)
        general = read()
    return fast, general


@pytest.mark.parametrize("text", [
    "q1\td1\t1\nq1\td2\t2\nq2\td1\t1\n",
    "q1 d1 1\nq1 d2 2\n",
    "q1\td1\t1\nq1\td2\t1\n",  # a repeated rank
    "q1\td1\t0\n",  # rank below 1
    "q1\td1\t+1\n",
    "q1\td1\t1\n\nq1\td2\t2\n",
    "q1\td1\t1\r\nq1\td2\t2\r\n",
    "q1\td1\t1\nq1\td2\t2\tx\n",
    "q1\td1\t1\nq1\td2\tx\n",
    "q1\td1\t1234567890\n",
    "q1\tdé\t1\n",
])
def test_msmarco_fast_and_general_agree(tmp_path, monkeypatch, text):
    fast, general = _read_three_both(tmp_path, text.encode(), monkeypatch, "run")
    assert fast == general


@pytest.mark.parametrize("text", [
    "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n",
    "q1\td1\t1\nq1\td2\t0\n",
    "query-id corpus-id score\nq1 d1 2\n",
    "query-id\tcorpus-id\tscore\nq1\td1\t1.5\n",
    "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\textra\n",
    "query-id\tcorpus-id\tscore\n# comment\nq1\td1\t1\n",
    "q1\td1\t-2\nq2\td1\t2147483648\n",
    "query-id\tcorpus-id\tscore\n",
])
def test_beir_fast_and_general_agree(tmp_path, monkeypatch, text):
    fast, general = _read_three_both(tmp_path, text.encode(), monkeypatch, "qrels")
    assert fast == general


def test_beir_header_lines_are_counted(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_bytes(b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t0\n")
    q = readers.read_qrels(str(p))
    assert np.asarray(q.line).tolist() == [2, 3] and q.format == "beir"
