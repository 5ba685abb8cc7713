"""Doc-id factorization (encoding.factorize_words) against a plain dict oracle.

The partitioned, threaded path normally runs only above a million rows; here the
threshold is lowered so small inputs take it, and the hash is weakened so the
collision repair runs too.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rankscope_tui.kernel.ranking import encoding


def _oracle(strings: list[str]):
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    pairs = set()
    for i, s in enumerate(strings):
        if s in last:
            pairs.add((last[s], i))
        else:
            first[s] = i
        last[s] = i
    return first, pairs


def _check(strings: list[str], threads: int):
    sw = encoding.string_words([pa.array(strings, pa.string())], max_words=8)
    codes, firsts, (earlier, later) = encoding.factorize_words(sw, threads=threads)
    first, pairs = _oracle(strings)
    # equal strings <-> equal codes, and the codes are dense
    by_code: dict[int, str] = {}
    for s, c in zip(strings, codes.tolist()):
        assert by_code.setdefault(c, s) == s
    assert len(by_code) == len(first)
    assert sorted(by_code) == list(range(len(first)))
    # firsts: the first row of each code, listed in code order
    all_first = np.concatenate(firsts)
    assert all_first.tolist() == [first[by_code[c]] for c in range(len(first))]
    assert set(zip(earlier.tolist(), later.tolist())) == pairs
    # each partition's firsts are in ascending length (the dictionary rebuild relies on it)
    for f in firsts:
        lengths = np.array([len(strings[i].encode()) for i in f.tolist()])
        assert np.all(np.diff(lengths) >= 0)
    rebuilt = pa.concat_arrays([sw.strings(f) for f in firsts]).to_pylist()
    assert rebuilt == [by_code[c] for c in range(len(first))]


def _strings(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    pool = [f"D{int(x)}" for x in rng.integers(0, 10**7, n // 3)] + ["", "é", "a\x00b", "x" * 40, "ab", "ba"]
    return [pool[int(i)] for i in rng.integers(0, len(pool), n)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("partitioned", [False, True])
def test_factorize_matches_dict(monkeypatch, threads, partitioned):
    if partitioned:
        monkeypatch.setattr(encoding, "_PARTITION_MIN_ROWS", 0)
    _check(_strings(1, 5000), threads)


@pytest.mark.parametrize("partitioned", [False, True])
def test_factorize_repairs_hash_collisions(monkeypatch, partitioned):
    """With a hash that keeps only a few bits, most distinct strings collide; the
    exact comparison of neighbours must still give one code per distinct string."""
    if partitioned:
        monkeypatch.setattr(encoding, "_PARTITION_MIN_ROWS", 0)
    real = encoding.StringWords.hash64

    def weak(self, length_bits=0, row_bits=0):
        h = real(self, length_bits=length_bits, row_bits=row_bits)
        return h & np.uint64(0xF000_0000_0000_0003)  # length bits and 2 hash bits (one picks the partition)

    monkeypatch.setattr(encoding.StringWords, "hash64", weak)
    _check(_strings(2, 3000), threads=2)


def test_codes_do_not_depend_on_threads(monkeypatch):
    monkeypatch.setattr(encoding, "_PARTITION_MIN_ROWS", 0)
    sw = encoding.string_words([pa.array(_strings(3, 4000), pa.string())], max_words=8)
    one = encoding.factorize_words(sw, threads=1)
    two = encoding.factorize_words(sw, threads=2)
    assert np.array_equal(one[0], two[0])
    assert all(np.array_equal(a, b) for a, b in zip(one[1], two[1]))


# ---------------------------------------------------------------------------
# byte order from words: the tie key and the query vocabulary


_HOSTILE = ["", "a", "a\x00", "a\x00b", "ab", "b", "é", "e\u0301", "z" * 9, "z" * 8, "z" * 8 + "\x00", "\U0001f600", "A", "~"]


def test_tie_key_orders_pyarrow_ids_as_bytes():
    from rankscope_tui.kernel.ranking.ranks import tie_key

    ids = pa.array(_HOSTILE, pa.string())
    codes = np.array([3, 0, 7, 7, 12, 1, 2, 5, 6, 9, 8, 10, 11, 13, 4], dtype=np.int64)
    key = tie_key(ids, codes)
    by_bytes = sorted(range(len(_HOSTILE)), key=lambda c: _HOSTILE[c].encode())
    rank = {c: r for r, c in enumerate(by_bytes)}
    assert key.tolist() == [rank[int(c)] for c in codes]
    # the same ranks as the plain-Python path over a list of str
    assert np.array_equal(key, tie_key(list(_HOSTILE), codes))
    # and as the words the workspace keeps while the dictionary is rebuilt (codes -> rows
    # of a longer column holding each id)
    col = pa.array(_HOSTILE[::-1] + _HOSTILE, pa.string())
    sw = encoding.string_words([col], max_words=8)
    first_row = np.array([len(_HOSTILE) + i for i in range(len(_HOSTILE))])
    assert np.array_equal(key, tie_key(encoding.CodeWords(sw, first_row), codes))


def test_query_vocabulary_is_sorted_as_bytes():
    from rankscope_tui.kernel.ranking.encoding import encode_sorted

    col_a = pa.array(["b", "b", "a\x00", "a\x00", "é", "a", "a", "b"], pa.string())
    col_b = pa.array(["z" * 9, "a", "\U0001f600"], pa.string())
    vocab, (ca, cb) = encode_sorted([col_a, col_b])
    assert vocab.tolist() == sorted({*col_a.to_pylist(), *col_b.to_pylist()}, key=str.encode)
    assert [vocab[c] for c in ca.tolist()] == col_a.to_pylist()
    assert [vocab[c] for c in cb.tolist()] == col_b.to_pylist()


def test_gather_index_and_spread_runs_equal_numpy_repeat():
    """The two lock-free spellings of ``np.repeat`` the id encoding uses (issue 35: the
    dashboard's loop froze 0.36 s in one ``np.repeat`` at 7M ids) give np.repeat's answer,
    empty rows and runs of one included."""
    from rankscope_tui.kernel.ranking.runs import gather_index, running_count, spread_runs

    rng = np.random.default_rng(5)
    for _ in range(500):
        n = int(rng.integers(1, 60))
        ln = rng.integers(0, 6, n).astype(np.int64)
        ln[rng.random(n) < 0.3] = 0
        start = rng.integers(0, 200, n).astype(np.int64)
        new_off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(ln, out=new_off[1:])
        total = int(new_off[-1])
        want = np.repeat(start - new_off[:-1], ln) + np.arange(total)
        assert np.array_equal(gather_index(start, ln, new_off, total), want)
        values = rng.integers(0, 2**31 - 1, n).astype(np.int32)
        run_len = rng.integers(1, 5, n)
        run_start = np.r_[0, np.cumsum(run_len)[:-1]].astype(np.int64)
        got = spread_runs(values, run_start, int(run_len.sum()))
        assert got.dtype == np.int32 and np.array_equal(got, np.repeat(values, run_len))
        mask = rng.random(n) < 0.4
        assert np.array_equal(running_count(mask), np.cumsum(mask, dtype=np.int64))
        assert np.array_equal(running_count(values), np.cumsum(values, dtype=np.int64))


def test_distinct_inverse_equals_numpy_unique():
    """``ranks.distinct_inverse`` (the lock-free spelling the fusion views use) against
    ``np.unique(..., return_inverse=True)``: ints, floats with ties and NaNs, empty."""
    from rankscope_tui.kernel.ranking.ranks import distinct_inverse

    rng = np.random.default_rng(9)
    cases = [rng.integers(-3, 5, 1000), rng.integers(0, 10**9, 5000), np.round(rng.random(3000), 2),
             np.r_[np.nan, 1.0, np.nan, -0.0, 0.0, 2.5, np.nan], np.zeros(0), np.array([7])]
    for v in cases:
        want_u, want_inv = np.unique(v, return_inverse=True)
        got_u, got_inv = distinct_inverse(v)
        assert np.array_equal(got_u, want_u, equal_nan=True) and np.array_equal(got_inv, want_inv.ravel())
