"""The JSON and JSON Lines fast paths give what the strict readers give, table for table
and refusal for refusal.

The oracle is the strict reader each fast path stands in front of: the character
scanner of ``json_pairs`` (``_JsonPairs``) and the row-by-row reader of JSON Lines
(``_strict_table``), whose error messages the reader tests pin down. Inputs are
generated with tricky ids (quotes, backslashes, escapes, non-ASCII, line breaks),
numbers written many ways (exponents, ``-0``, integers beyond 64 bits, NaN), repeated
keys, blank and indented lines, several layouts; and hand-worked files fix the lines.
"""

from __future__ import annotations

import contextlib
import json
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs import json_lines, json_pairs
from rankscope_tui.kernel.inputs.files import Digest

# valid ids mostly (so most files take the fast road), refused ones now and then
GOOD_IDS = st.one_of(
    st.sampled_from(["q1", "1", "01", "1.0", "D 2", 'a"b', "a\\b", "\\u0041", "é", "日本", "\u2028", "\t", "a/b",
                     "😀", "\x00", "2020-01-01"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), min_size=1,
            max_size=6))
IDS = st.one_of(GOOD_IDS, GOOD_IDS, GOOD_IDS, GOOD_IDS, st.sampled_from(["", "x\ny", "a\rb", "\ud800"]))
GOOD_NUMBERS = st.one_of(
    st.integers(-5, 5).map(str),
    st.sampled_from(["-0", "-0.0", "0.0", "1E5", "1e-7", "2.50", "1.0", "3.0e0", "-2147483648", "2147483647",
                     "2147483648", "99999999999999999999", "-9223372036854775809", "9007199254740993",
                     "1.00000000000000011102230246251565404236316680908203125", "1e-400"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-2**70, 2**70).map(str))
NUMBERS = st.one_of(GOOD_NUMBERS, GOOD_NUMBERS, GOOD_NUMBERS, GOOD_NUMBERS, GOOD_NUMBERS, GOOD_NUMBERS,
                    st.sampled_from(["1e400", "NaN", "Infinity", "-Infinity", "true", "null", '"1"', "[1]", "{}"]))
RARELY = st.integers(0, 19).map(lambda i: i == 0)


def _key(s: object, ascii_: bool) -> str:
    """JSON text of ``s``; a lone surrogate always as its escape (a file read as UTF-8
    cannot hold one raw)."""
    return json.dumps(s, ensure_ascii=ascii_ or (isinstance(s, str) and not _utf8(s)))


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@st.composite
def pair_files(draw) -> str:
    """A ``{qid: {docid: value}}`` text; half the files clean, the others with refused
    ids and values, and repeats, now and then."""
    clean = draw(st.booleans())
    ids, numbers = (GOOD_IDS, GOOD_NUMBERS) if clean else (IDS, NUMBERS)
    queries = draw(st.lists(st.tuples(ids, st.lists(st.tuples(ids, numbers), min_size=int(clean), max_size=5)),
                            min_size=int(clean), max_size=5, unique_by=(lambda x: x[0]) if clean else None))
    if clean:
        queries = [(q, list(dict(docs).items())) for q, docs in queries]
    ascii_ = draw(st.booleans())
    ws = draw(st.sampled_from(["", " ", "\n", "\n  ", "\r\n", "\t"]))
    qsep = draw(st.sampled_from([", ", ",\n", ",\n\n  "]))
    body = []
    for q, docs in queries:
        inner = (f",{ws}").join(f"{_key(d, ascii_)}{draw(st.sampled_from([':', ': ', ' :']))}{v}" for d, v in docs)
        body.append(f"{_key(q, ascii_)}:{ws}{{{ws}{inner}{ws}}}")
    text = "{" + ws + qsep.join(body) + ws + "}"
    return text + (draw(st.sampled_from([" x", "{}"])) if not clean and draw(RARELY) else draw(st.sampled_from(["", "\n", " \n"])))


def outcome_pairs(fn, text: str, what: str):
    try:
        q, d, v, line = fn(text, "run.json", what)
    except InputError as exc:
        return ("refused", str(exc), exc.line)
    dtype = np.float64 if what == "score" else np.int64
    return (list(q), list(d), np.asarray(v, dtype=dtype).tobytes(), np.asarray(line, dtype=np.int64).tolist())


def strict_pairs(text: str, path: str, what: str):
    return json_pairs._JsonPairs(text, path, what).parse()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair_files(), st.sampled_from(["score", "grade"]))
def test_json_pairs_as_the_scanner(text, what):
    assert outcome_pairs(json_pairs.json_pairs, text, what) == outcome_pairs(strict_pairs, text, what)


@pytest.mark.parametrize("what", ["score", "grade"])
@pytest.mark.parametrize("text", [
    '{"q1": {"d1": 1, "d2": 2},\n "q2": {"d1": 3}}',
    '{\n  "q\\"1": {\n    "d\\\\": 1.0,\n    "\\u00e9": -0,\n    "x\\\\\\"y": 2E0\n  },\n  "q2": {}\n}\n',
    '{"日本": {"é": 1, "😀": 2}}',
    '\r\n{"1":\r\n{"2":99999999999999999999,\r\n"3":-1e-7}}',
])
def test_json_pairs_fast_road_taken_and_equal(text, what):
    """These files take the fast road (not the scanner's), and give the scanner's pairs."""
    if what == "grade":
        text = text.replace("99999999999999999999", "7").replace("-1e-7", "-3").replace("2E0", "2")
    assert json_pairs._fast_pairs(text, what) is not None
    assert outcome_pairs(json_pairs.json_pairs, text, what) == outcome_pairs(strict_pairs, text, what)


def test_json_pairs_lines_hand_worked():
    """Each pair's line is the line of its doc key (worked by hand)."""
    text = '{"a": {"x": 1,\n"y": 2}, "b":\n\n{"x\\"\\\\": 3}}\n'
    assert json_pairs._fast_pairs(text, "score") is not None
    q, d, v, line = json_pairs.json_pairs(text, "f", "score")
    assert (list(q), list(d), list(v), list(line)) == (["a", "a", "b"], ["x", "y", 'x"\\'], [1.0, 2.0, 3.0], [1, 2, 4])


@pytest.mark.parametrize("text,message", [
    ('{"q": {"d": 1, "d": 2}}', "run.json:1: doc 'd' appears twice in query 'q' (first at line 1)"),
    ('{"q": {"d": 1},\n"q": {"e": 2}}', "run.json:2: query 'q' appears twice as a key (first at line 1); give each "
                                       "query one object"),
    ('{"q": {"d": NaN}}', "run.json:1: score for query 'q', doc 'd' is not finite"),
    ('{"q": {"d": 1e400}}', "run.json:1: score for query 'q', doc 'd' is not finite"),
    ('{"q": {"d": "1"}}', "run.json:1: score for query 'q', doc 'd' is not a number: '1'"),
    ('{"q": {"d": true}}', "run.json:1: score for query 'q', doc 'd' is not a number: True"),
    ('{"q": {"": 1}}', "run.json:1: query 'q', doc '': an id may not be empty"),
    ('{"q": {"a\\nb": 1}}', "run.json:1: query 'q', doc 'a\\nb': an id may not contain a line break"),
    ('{"q": {"d": 1}} x', "run.json:1: invalid JSON: extra data after the object"),
    ('{"q": {}}', "run.json: empty file (no query holds any doc)"),
])
def test_json_pairs_refusals_word_for_word(text, message):
    with pytest.raises(InputError) as exc:
        json_pairs.json_pairs(text, "run.json", "score")
    assert str(exc.value) == message


# ---------------------------------------------------------------------------
# JSON Lines

ODD_IDS = st.one_of(st.integers(-2**64, 2**64), st.sampled_from([1.0, True, None, [1], "", "\ud800"]))


@st.composite
def jsonl_files(draw) -> str:
    """JSON Lines rows: ids text or integers (and now and then not), values of many
    spellings, extra keys, a repeated key, blank or indented lines, CRLF, two rows a line."""
    value_key = draw(st.sampled_from(["score", "relevance"]))
    clean = draw(st.booleans())
    good = GOOD_IDS if draw(st.booleans()) else st.integers(-2**63, 2**63 - 1)
    ids = good if clean else st.one_of(*[good] * 9, ODD_IDS)
    numbers = GOOD_NUMBERS if clean else NUMBERS
    rarely = st.just(False) if clean else RARELY
    iteration = draw(st.sampled_from(['"Q0"', "0", "null", '{"a": 1}', '"2020-01-01"']))
    ascii_ = draw(st.booleans())
    lines = []
    for _ in range(draw(st.integers(int(clean), 6))):
        keys = [("query_id", _key(draw(ids), ascii_)), ("doc_id", _key(draw(ids), ascii_)),
                (value_key, draw(numbers))]
        if draw(st.booleans()):
            keys.append(("iteration", iteration))
        if draw(rarely):
            keys.append(draw(st.sampled_from(keys)))  # a key twice
        if draw(rarely):
            keys.pop(draw(st.integers(0, len(keys) - 1)))
        keys = draw(st.permutations(keys)) if draw(rarely) else keys
        row = "{" + draw(st.sampled_from([",", ", "])).join(f'"{k}":{draw(st.sampled_from(["", " "]))}{v}'
                                                        for k, v in keys) + "}"
        row = row.replace('"}', '",}') if draw(rarely) else row
        lines.append((draw(st.sampled_from([" ", "\n", "\ufeff"])) if draw(rarely) else "") + row)
        if draw(rarely):
            lines[-1] += draw(st.sampled_from([" " + row, row, " x", "\r" + row]))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return end.join(lines) + draw(st.sampled_from(["", end] if clean else ["", end, end + " "]))


def outcome_lines(text: str, what: str, fast: bool):
    with contextlib.ExitStack() as stack:
        if not fast:
            stack.enter_context(mock.patch.object(json_lines, "_fast_table", lambda *a: None))
        try:
            got = json_lines.read_json_lines(text, "rows.jsonl", what, None, Digest(b""))
        except InputError as exc:
            return ("refused", str(exc), exc.line)
    values = got.score if what == "run" else got.grade
    return (got.qid.to_pylist(), got.doc.to_pylist(), values.dtype.str, values.tobytes(),
            np.asarray(got.line).tolist(), got.format, got.columns)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jsonl_files())
def test_json_lines_as_the_row_reader(text):
    what = "run" if '"score"' in text else "qrels"
    assert outcome_lines(text, what, True) == outcome_lines(text, what, False)


@pytest.mark.parametrize("what", ["run", "qrels"])
@pytest.mark.parametrize("text", [
    '{"query_id": "q1", "doc_id": "d\\"1", "score": 2, "relevance": 1}\n{"query_id": "q1", "doc_id": "日本", '
    '"score": -1.5, "relevance": 2.0}\n',
    '{"query_id": 1, "doc_id": -7, "score": 1E5, "relevance": 3, "iteration": "Q0"}\r\n'
    '{"query_id": 2, "doc_id": 9223372036854775807, "score": 99999999999999999999, "relevance": 0}',
    '{"query_id": "2020-01-01", "doc_id": "1.0", "score": 0.5, "relevance": 1}\n',
])
def test_json_lines_fast_road_taken_and_equal(text, what):
    assert json_lines._fast_table(text, "rows.jsonl", what, None) is not None
    assert outcome_lines(text, what, True) == outcome_lines(text, what, False)


def test_json_lines_negative_zero_as_written():
    """The integer literal -0 is the score 0.0 and -0.0 is -0.0 (as ``float(int("-0"))``
    and ``float("-0.0")``), also in one column holding both."""
    text = '{"query_id": "q", "doc_id": "a", "score": -0}\n{"query_id": "q", "doc_id": "b", "score": -0.0}\n'
    got = json_lines.read_json_lines(text, "rows.jsonl", "run", None, Digest(b""))
    assert np.signbit(got.score).tolist() == [False, True]


@pytest.mark.parametrize("text,message", [
    ('{"query_id": "q", "doc_id": "d", "score": 1, "score": 2}\n', "rows.jsonl:1: key 'score' appears twice in one "
                                                                    "object"),
    ('{"query_id": "q", "doc_id": "d", "score": 1}\n{"query_id": "q", "doc_id": "e", "score": NaN}\n',
     "rows.jsonl:2: NaN is not a JSON number"),
    ('{"query_id": "q", "doc_id": "d", "score": 1}\n\n{"query_id": "q", "doc_id": 1.5, "score": 1}\n',
     "rows.jsonl:3: doc_id must be a string or an integer, not 1.5"),
    ('{"query_id": "q", "doc_id": "d", "score": 1}\n{"query_id": "q", "score": 1}\n',
     "rows.jsonl:2: row without the key 'doc_id'"),
    ('{"query_id": "q", "doc_id": "d", "score": 1} {"query_id": "q", "doc_id": "e", "score": 1}\n',
     "rows.jsonl:1: invalid JSON: Extra data"),
])
def test_json_lines_refusals_word_for_word(text, message):
    with pytest.raises(InputError) as exc:
        json_lines.read_json_lines(text, "rows.jsonl", "run", None, Digest(b""))
    assert str(exc.value) == message
