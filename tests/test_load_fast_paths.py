"""The load's shortcuts against the plain computations they replace.

* ``encoding.encode_sorted_runs``: the run starts it returns per column are
  ``flatnonzero(codes[1:] != codes[:-1]) + 1`` after a 0, computed here from the codes;
* ``ranking.rank_lane`` given those starts and ``overwrite=True`` gives the lane it
  gives without them (every column compared);
* the doc dictionary is built on first use and is the dictionary of the codes;
* a lane large enough for the duplicate check to run beside the ordering, with a doc
  repeated inside one query among tied scores, is refused naming that doc and both
  lines, as a small lane is.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.ranking import encoding
from rankscope_tui.kernel.ranking import ranks as ranking
from rankscope_tui.kernel.workspace import loaded as W


def _starts_oracle(codes: np.ndarray) -> np.ndarray:
    if codes.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1]


@pytest.mark.parametrize("cols", [
    [["a", "a", "b", "b", "b", "c"], ["c", "c", "a"]],  # a run going on across the columns
    [["q1"], ["q2", "q2"], []],
    [["x" * 20, "x" * 20, "y"], ["y", "x" * 20]],  # ids of several words
    [[], ["a"]],
])
def test_run_starts_match_the_codes(cols):
    arrays = [pa.array(c, pa.string()) for c in cols]
    vocab, codes, starts = encoding.encode_sorted_runs(arrays)
    v2, c2 = encoding.encode_sorted(arrays)
    assert list(vocab) == list(v2) == sorted(set(s for c in cols for s in c), key=str.encode)
    for c, cc, st, strings in zip(codes, c2, starts, cols):
        assert np.array_equal(c, cc)
        assert [vocab[k] for k in c.tolist()] == strings
        assert np.array_equal(st, _starts_oracle(np.asarray(c)))


def test_run_starts_over_many_chunks():
    rng = np.random.default_rng(3)
    q = np.repeat(rng.integers(0, 40, 300), rng.integers(1, 9, 300)).astype(str).tolist()
    chunked = pa.chunked_array([pa.array(q[:123], pa.string()), pa.array(q[123:], pa.string())])
    qrels = pa.array(q[-5:] + q[:7], pa.string())
    _, codes, starts = encoding.encode_sorted_runs([chunked, qrels])
    for c, st in zip(codes, starts):
        assert np.array_equal(st, _starts_oracle(np.asarray(c)))


def _same_lane(a: ranking.RankedLane, b: ranking.RankedLane) -> None:
    for col in ("qid", "doc", "score", "rank", "offsets"):
        x, y = getattr(a, col), getattr(b, col)
        assert x.dtype == y.dtype and np.array_equal(x, y), col


@pytest.mark.parametrize("shape", ["sorted blocks", "blocks out of order", "unsorted", "split query"])
def test_rank_lane_with_starts_and_overwrite(shape):
    rng = np.random.default_rng(7)
    nq, per = 30, 12
    qid = np.repeat(np.arange(nq, dtype=np.int32), per)
    score = np.round(rng.random(qid.size) * 4) / 4  # many ties
    doc = rng.permutation(qid.size * 3)[:qid.size].astype(np.int64)
    if shape != "unsorted":
        order = np.lexsort((-score, qid))
        qid, score, doc = qid[order], score[order], doc[order]
    if shape == "blocks out of order":
        blocks = rng.permutation(nq)
        rows = np.concatenate([np.arange(b * per, (b + 1) * per) for b in blocks])
        qid, score, doc = qid[rows], score[rows], doc[rows]
    if shape == "split query":
        qid = qid.copy()
        qid[:per // 2] = 5
    doc_ids = np.asarray([f"d{k:05d}" for k in range(qid.size * 3)], dtype=object)
    want = ranking.rank_lane("l", qid, doc.copy(), score, nq, None, doc_ids)
    mine = doc.copy()
    got = ranking.rank_lane("l", qid, mine, score, nq, None, doc_ids, starts=_starts_oracle(qid), overwrite=True)
    _same_lane(got, want)
    cut = ranking.rank_lane("l", qid, doc.copy(), score, nq, 3, doc_ids, starts=_starts_oracle(qid), overwrite=True)
    _same_lane(cut, ranking.rank_lane("l", qid, doc.copy(), score, nq, 3, doc_ids))


def _write(path, lines):
    path.write_text("".join(lines))
    return str(path)


def test_dictionary_built_on_first_use(tmp_path):
    run = _write(tmp_path / "r.txt", ["q1 Q0 zz 1 3.0 t\n", "q1 Q0 a 2 2.0 t\n", "q2 Q0 zz 1 1.0 t\n"])
    qrels = _write(tmp_path / "q.txt", ["q1 0 a 1\n", "q2 0 b 1\n"])
    ws = W.Workspace.load([("r", run)], qrels)
    assert ws.n_docs == 3
    assert not ws._doc_ids.built
    ids = ws.doc_ids.to_pylist()
    assert ws._doc_ids.built and sorted(ids) == ["a", "b", "zz"]
    lane = ws.lanes["r"]
    assert [ids[d] for d in lane.doc.tolist()] == ["zz", "a", "zz"]
    assert ws.doc_id(int(lane.doc[1])) == "a"


def _big_lane(tmp_path, dup: bool):
    """2**18 + a few rows: 300 queries, scores descending in each with ties; with ``dup``
    the doc of query 7's row 40 is repeated at its row 60 (both tied with neighbours)."""
    lines, nq = [], 300
    per = -(-W._SIDE_BY_SIDE_ROWS // nq)
    for q in range(nq):
        for r in range(per):
            d = f"D{q}x{r}"
            if dup and q == 7 and r == 60:
                d = "D7x40"
            lines.append(f"{q} Q0 {d} {r + 1} {1000 - r // 3}.5 t\n")
    run = _write(tmp_path / "big.txt", lines)
    qrels = _write(tmp_path / "q.txt", [f"{q} 0 D{q}x0 1\n" for q in range(nq)])
    return run, qrels, per


def test_duplicate_beside_the_ordering_named(tmp_path):
    run, qrels, per = _big_lane(tmp_path, dup=True)
    with pytest.raises(InputError) as e:
        W.Workspace.load([("big", run)], qrels)
    first, second = 7 * per + 40 + 1, 7 * per + 60 + 1
    assert str(e.value) == f"{run}:{second}: doc 'D7x40' appears twice in query '7' (first at line {first})"


def test_big_lane_without_duplicate_loads(tmp_path):
    run, qrels, per = _big_lane(tmp_path, dup=False)
    ws = W.Workspace.load([("big", run)], qrels)
    lane = ws.lanes["big"]
    ids = ws.doc_ids.to_pylist()
    rows = lane.rows_of(int(np.flatnonzero(ws.qids == "7")[0]))
    got = [ids[d] for d in lane.doc[rows][:6].tolist()]
    # scores 1000.5 x3, 999.5 x3, ...: ties in doc id descending as bytes
    assert got == ["D7x2", "D7x1", "D7x0", "D7x5", "D7x4", "D7x3"]


def _run_lines(n: int, extra: dict | None = None) -> bytes:
    extra = extra or {}
    return "".join(extra.get(i, f"q{i // 50} Q0 d{i}#p{i % 3} {i % 50 + 1} {100 - i % 50}.25 t\n")
                   for i in range(n)).encode()


@pytest.mark.parametrize("where", ["first slice", "past the first MiB", "second half"])
def test_comment_line_declines_the_fast_path(tmp_path, where):
    """A '#' first on a line sends the file to the general reader wherever it is; a '#'
    inside an id does not (the ids here all hold one)."""
    from rankscope_tui.kernel.inputs import trec as R

    n = 60_000  # about 2.3 MB: several 1 MiB slices
    line = {"first slice": 10, "past the first MiB": 30_000, "second half": 55_000}[where]
    clean = _run_lines(n)
    bad = _run_lines(n, {line: "#comment\n"})
    for content, want in ((clean, True), (bad, False)):
        p = tmp_path / "r.txt"
        p.write_bytes(content)
        scan = R._scan_plain(str(p))
        assert (scan.clean is not False) is want
        assert R._check_range(str(p), 0, len(content), 32)[0].result() is (True if want else False)
        for raw in (content, bytearray(content), memoryview(content)):
            assert (R._bytes_clean(raw, 32) is not False) is want
