"""The first-use check of numpy's ``default_rng`` stream (``kernel/statistics/resampling.py``).

The known values are checked against Lemire's rule computed here in plain Python from the
raw PCG64 words (numpy's ``buffered_bounded_lemire_uint32``: 32-bit halves, low first, a
draw x rejected when (x·n) mod 2**32 < (2**32 − n) mod n), so they are not merely numpy's
earlier output copied back.
"""

from __future__ import annotations

import numpy as np
import pytest

from rankscope_tui.kernel.statistics import resampling as rs


def lemire_calls(words: list[int], calls: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], ...]:
    halves = iter(h for w in words for h in (w & 0xFFFFFFFF, w >> 32))
    out = []
    for n, k in calls:
        threshold = (2**32 - n) % n
        got: list[int] = []
        while len(got) < k:
            m = next(halves) * n
            if m & 0xFFFFFFFF >= threshold:
                got.append(m >> 32)
        out.append(tuple(got))
    return tuple(out)


def test_known_values_are_lemire_on_the_raw_pcg64_words():
    words = [int(w) for w in np.random.default_rng(rs._KNOWN_SEED).bit_generator.random_raw(8)]
    assert tuple(words[:2]) == rs._KNOWN_RAW
    assert lemire_calls(words, rs._KNOWN_CALLS) == rs._KNOWN_INTEGERS
    # the calls share a 64-bit word: 3 + 2 draws leave a high half that the third call starts with
    assert sum(k for _, k in rs._KNOWN_CALLS[:2]) % 2 == 1


def test_the_installed_numpy_passes_and_the_check_runs_once(monkeypatch):
    monkeypatch.setattr(rs, "_stream_checked", False)
    rs.check_numpy_stream()
    assert rs._stream_checked is True
    calls = []
    monkeypatch.setattr(rs.np.random, "default_rng", lambda *a: calls.append(a))
    rs.check_numpy_stream()  # checked already: no generator is made
    assert calls == []


@pytest.mark.parametrize("bitgen", [np.random.MT19937, np.random.Philox])
def test_another_stream_is_refused_naming_numpys_version(monkeypatch, bitgen):
    real = np.random.default_rng
    monkeypatch.setattr(rs, "_stream_checked", False)
    monkeypatch.setattr(rs.np.random, "default_rng", lambda seed=None: np.random.Generator(bitgen(seed)))
    with pytest.raises(rs.NumpyStreamError, match=rf"numpy {np.__version__} draws a different stream") as err:
        rs.HalfStream(0)
    assert "numpy>=1.26,<3" in str(err.value)
    assert rs._stream_checked is False  # a refused stream is checked again next time
    with pytest.raises(rs.NumpyStreamError):
        rs.bootstrap_means([0.1, 0.2, 0.3], resamples=10, seed=1, threads=1)
    monkeypatch.setattr(rs.np.random, "default_rng", real)
    rs.HalfStream(0)
    assert rs._stream_checked is True


def test_same_raw_words_but_another_integers_rule_is_refused(monkeypatch):
    """numpy keeping PCG64 but changing how ``integers`` reads it (here: masked rejection
    instead of Lemire) is caught too."""

    class MaskedIntegers(np.random.Generator):
        def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
            x = self.bit_generator.random_raw(size) & 0xFFFFFFFF
            return (x % np.uint64(high)).astype(np.int64)

    monkeypatch.setattr(rs, "_stream_checked", False)
    monkeypatch.setattr(rs.np.random, "default_rng", lambda seed=None: MaskedIntegers(np.random.PCG64(seed)))
    with pytest.raises(rs.NumpyStreamError, match=np.__version__):
        rs.check_numpy_stream()
