"""The fuzzer's targets and its oracle (fuzz/fuzz_readers.py), run briefly so a broken
target or a stale oracle fails here rather than in a ten-minute fuzzing run.

The oracle's line rule is held to hand-worked inputs: a reader counts LF, CRLF and a
lone CR each as one line end (files.decode_text), so an error on the third line of a
CR-only file is a correct error, not a finding."""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fz():
    spec = importlib.util.spec_from_file_location("rankscope_fuzz_readers", REPO / "fuzz" / "fuzz_readers.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# hand-worked: three lines ended by lone CRs, the third with a score that is not a number
CR_RUN = b"q1 Q0 d1 1 1.0 t\rq1 Q0 d2 2 1.0 t\rq1 Q0 d3 3 x t\r"
CR_STRATA = b"q1\tA\rq2\tB\rq3\r"


@pytest.mark.parametrize("data,lines", [(b"a\nb\n", 3), (b"a\r\nb\r\n", 3), (b"a\rb\r", 3), (b"a\rb\nc\r\nd", 4),
                                        (b"", 1), (b"\r\r\n\n", 4)])
def test_line_count_follows_the_readers_rule(fz, data, lines):
    assert fz.line_count(data) == lines


@pytest.mark.parametrize("target,data,line", [("trec_lane", CR_RUN, 3), ("strata", CR_STRATA, 3)])
def test_an_error_on_a_later_line_of_a_cr_file_is_not_a_finding(fz, tmp_path, target, data, line):
    # the reader names the right line; counting LF alone, the file would have one
    assert data.count(b"\n") + 1 < line
    findings = fz.Findings(target, tmp_path)
    fz.one_input(fz.HARNESSES[target], findings, data)
    assert findings.refused == 1 and not findings.found, findings.report()


def test_a_line_past_the_end_is_still_a_finding(fz):
    fz.CURRENT.clear()
    exc = fz.InputError("bad", "x.run", 5)
    with pytest.raises(fz.BadErrorMessage):
        fz.check_input_error(exc, b"a\rb\rc\r")  # 4 lines


@pytest.mark.parametrize("compress", [gzip.compress, __import__("bz2").compress, __import__("lzma").compress])
def test_compressed_inputs_skip_the_line_check(fz, compress):
    fz.CURRENT.clear()
    data = compress(b"one line\n" * 3)
    assert fz.is_compressed(data)
    fz.check_input_error(fz.InputError("bad", "x.run", 3), data)  # line 3 of the content, one stored line


# inputs per target in the suite's run: every target's harness, seeds and dictionary are
# exercised; the command-line targets run a whole command per input, so fewer
FAST = {"options": (2, 1), "out_paths": (3, 2), "thresholds": (2, 3), "diff": (1, 2), "per_query": (3, 4)}


#: Product defects these seeded runs reach, routed for fixing (the fuzzer's oracle is right
#: about them): (signature prefix, text of the message, what is wrong). A finding that
#: matches one is tolerated here; any other fails.
KNOWN_PRODUCT: tuple[tuple[str, str, str], ...] = ()  # product findings the suite tolerates: none


def _known(finding: dict) -> bool:
    return any(finding["signature"].startswith(sig) and text in finding["message"] for sig, text, _ in KNOWN_PRODUCT)


def test_every_target_is_listed_and_documented(fz):
    assert set(fz.TARGETS) == set(fz.HARNESSES)
    readme = (REPO / "fuzz" / "README.md").read_text(encoding="utf-8")
    missing = [t for t in fz.TARGETS if f"`{t}`" not in readme]
    assert not missing, f"targets missing from fuzz/README.md: {missing}"


@pytest.mark.parametrize("target", [
    "trec_lane", "json_lane", "trec_qrels", "json_qrels", "strata", "gates", "thresholds", "report", "diff", "compare_log",
    "goldens", "parquet", "jsonl", "mteb", "msmarco", "beir", "header_tsv", "compressed", "per_query", "units", "texts",
    "columns", "shards", "options", "api", "out_paths"])
def test_target_runs_its_seeds_clean(fz, tmp_path, target):
    n_seeds, n_mut = FAST.get(target, (3, 9))
    findings = fz.run_count(target, n_seeds, n_mut, tmp_path)
    assert findings.runs == n_seeds + n_mut or findings.runs == len(fz.seeds(target)[:n_seeds]) + n_mut
    new = [f["signature"] for f in findings.found.values() if not _known(f)]
    assert not new, findings.report()


@pytest.mark.parametrize("data,message,line", [(b"a\nb\n\x00", "binary file (NUL byte)", 3),
                                               (b"a\rb\rc\x00", "binary file (NUL byte)", 3),
                                               (b"a\r\nb\xff", "not UTF-8 (byte 0xff)", 2),
                                               (b"x y\n", "expected 6 fields", None)])
def test_the_line_of_a_bad_byte_is_known_exactly(fz, data, message, line):
    assert fz.bad_byte_line(data, message) == line
