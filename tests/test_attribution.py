"""Miss attribution (SPEC §4; lessons 05-06): labels, counts, unique share, the blind
stratum, coverage and judged queries missing from lanes. Expected values are worked
out by hand from the definitions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope_tui.kernel.attribution import misses as A
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.ranking.judgments import Judgments
from rankscope_tui.kernel.workspace import loaded as ws_mod

LANES = ("bm25", "dense", "splade")

# One positive per row; ranks per lane (0 = miss), window 10.
HAND = {
    "q01": (1, 0, 0),     # bm25
    "q02": (0, 4, 0),     # dense
    "q03": (0, 0, 10),    # splade (10 is inside the window)
    "q04": (2, 3, 0),     # bm25+dense
    "q05": (5, 0, 9),     # bm25+splade
    "q06": (0, 7, 7),     # dense+splade
    "q07": (1, 1, 1),     # bm25+dense+splade
    "q08": (11, 0, 0),    # beyond_window
    "q09": (0, 0, 0),     # not_retrieved
    "q10": (0, 50, 12),   # beyond_window
    "q11": (3, 0, 0),     # not_indexed (no relevant doc in the corpus) despite bm25's rank
    "q12": (0, 0, 0),     # not_indexed
    "q13": (4, 0, 0),     # bm25
}
NOT_IN_CORPUS = {"q11", "q12"}
STRATUM = {"q01": "lexical", "q02": "no-overlap", "q03": "no-overlap", "q04": "lexical", "q08": "no-overlap",
           "q09": "no-overlap", "q10": "lexical", "q12": "no-overlap"}  # the rest: (none)


def hand_case(with_corpus=True, blind=("kind", "no-overlap")):
    qids = list(HAND)
    ranks = np.array([HAND[q] for q in qids])
    indexed = np.array([q not in NOT_IN_CORPUS for q in qids]) if with_corpus else None
    strata = {"kind": np.array([STRATUM.get(q, "(none)") for q in qids], dtype=object)}
    return qids, A.attribute(ranks, LANES, np.arange(len(qids)), 10, indexed, strata, blind)


def test_every_label_by_hand():
    qids, at = hand_case()
    labels = dict(zip(qids, at.labels))
    assert labels == {
        "q01": "bm25", "q02": "dense", "q03": "splade", "q04": "bm25+dense", "q05": "bm25+splade",
        "q06": "dense+splade", "q07": "bm25+dense+splade", "q08": "beyond_window", "q09": "not_retrieved",
        "q10": "beyond_window", "q11": "not_indexed", "q12": "not_indexed", "q13": "bm25",
    }
    counts = dict(at.overall.counts)
    assert counts == {"not_indexed": 2, "beyond_window": 2, "not_retrieved": 1, "bm25": 2, "dense": 1,
                      "splade": 1, "bm25+dense": 1, "bm25+splade": 1, "dense+splade": 1, "bm25+dense+splade": 1}
    assert at.overall.not_surfaced == 3
    assert sum(counts.values()) == len(qids)  # the labels partition the positives


def test_unique_share_counts_lane_alone():
    _, at = hand_case()
    shares = {s.lane: (s.count, s.n, s.share) for s in at.overall.unique}
    assert shares == {"bm25": (2, 13, 2 / 13), "dense": (1, 13, 1 / 13), "splade": (1, 13, 1 / 13)}


def test_strata_counts_and_shares():
    _, at = hand_case()
    per = dict(dict(at.strata)["kind"])
    assert list(per) == ["lexical", "no-overlap", "(none)"]  # sorted, unlabelled last
    assert per["lexical"].n == 3 and dict(per["lexical"].counts)["bm25+dense"] == 1
    assert dict(per["lexical"].counts)["beyond_window"] == 1
    no = dict(per["no-overlap"].counts)
    assert per["no-overlap"].n == 5
    assert (no["dense"], no["splade"], no["beyond_window"], no["not_retrieved"], no["not_indexed"]) == (1, 1, 1, 1, 1)
    assert {s.lane: s.count for s in per["no-overlap"].unique} == {"bm25": 0, "dense": 1, "splade": 1}
    assert sum(c.n for c in per.values()) == 13
    for c in per.values():
        assert sum(dict(c.counts).values()) == c.n


def test_blind_block_misses_in_stratum_and_overall():
    _, at = hand_case()
    b = at.blind
    assert (b.stratification, b.label, b.size) == ("kind", "no-overlap", 5)
    # misses: not 0 < rank <= 10; no-overlap = q02 q03 q08 q09 q12
    assert dict(b.misses_in_stratum) == {"bm25": 5, "dense": 4, "splade": 4}
    assert dict(b.misses_overall) == {"bm25": 7, "dense": 9, "splade": 9}


def test_without_corpus_not_indexed_is_never_assigned():
    qids, at = hand_case(with_corpus=False)
    labels = dict(zip(qids, at.labels))
    assert labels["q11"] == "bm25" and labels["q12"] == "not_retrieved"
    d = at.as_dict()
    assert d["labels"]["not_indexed"] is None and "not assessed" in d["labels"]["not_indexed_reason"]
    assert d["coverage"]["assessed"] is False and d["coverage"]["reason"]
    assert sum(v for k, v in d["labels"].items() if k not in ("not_indexed", "not_indexed_reason", "not_surfaced")) == 13


def test_as_dict_is_strict_json_and_lists_queries():
    qids, at = hand_case()
    d = at.as_dict(qids=qids)
    json.dumps(d, allow_nan=False)
    assert d["labels"]["not_surfaced"] == 3 and d["positives"] == 13
    assert d["unique_share"]["bm25"] == {"count": 2, "n": 13, "share": 2 / 13}
    assert d["blind"]["lanes"]["dense"] == {"misses_in_stratum": 4, "misses_overall": 9}
    assert d["per_query"]["q07"] == "bm25+dense+splade"
    empty = A.attribute(np.zeros((0, 2), int), ("a", "b"), np.zeros(0, int))
    e = empty.as_dict()
    json.dumps(e, allow_nan=False)
    assert e["unique_share"]["a"] == {"count": 0, "n": 0, "share": None, "share_reason": "no positives"}


def test_label_of_spreads_labels_over_query_codes():
    _, at = hand_case()
    out = at.label_of(20)
    assert out[0] == "bm25" and out[19] == ""


def test_coverage_line_and_indexed_flags():
    # q0: relevant d0 (in corpus) and d1 (not); q1: relevant d2 (not); q2: relevant d3 (in); q3 is a negative
    j = Judgments(np.array([0, 0, 0, 1, 2, 3], np.int32), np.array([0, 1, 4, 2, 3, 0], np.int64),
                  np.array([1, 2, 0, 1, 3, 0], np.int64), 5)
    corpus = np.array([True, False, False, True, True])
    indexed, cov = A.coverage(j, 1, np.array([0, 1, 2]), corpus)
    assert list(indexed) == [True, False, True]
    assert (cov.relevant_pairs, cov.not_in_corpus, cov.queries_not_indexed) == (4, 2, 1)
    assert A.coverage(j, 1, np.array([0, 1, 2]), None) == (None, A.Coverage(False))
    # relevant level 2: q0 keeps only d1 (outside the corpus)
    indexed2, cov2 = A.coverage(j, 2, np.array([0, 2]), corpus)
    assert list(indexed2) == [False, True] and (cov2.relevant_pairs, cov2.not_in_corpus) == (2, 1)


def test_missing_from_lanes_counts_judged_queries():
    present = [np.array([True, True, False, True, False]), np.array([True, False, False, True, True])]
    m = A.missing_from_lanes(np.array([0, 1, 2, 4]), ("bm25", "dense"), present)
    assert (m.judged, m.missing_from_any) == (4, 3)
    assert dict(m.per_lane) == {"bm25": 2, "dense": 2}
    assert m.as_dict() == {"judged_queries": 4, "missing_from_any": 3, "per_lane": {"bm25": 2, "dense": 2}}


def test_resolve_blind():
    strata = {"kind": np.array(["a", "b", "(none)"], dtype=object), "len": np.array(["short", "b", "long"], dtype=object)}
    assert A.resolve_blind("a", strata) == ("kind", "a")
    assert A.resolve_blind("len=b", strata) == ("len", "b")
    for bad in ("b", "zzz", "nope=a", "kind=short"):
        with pytest.raises(InputError):
            A.resolve_blind(bad, strata)


def test_window_and_shape_are_checked():
    with pytest.raises(InputError):
        A.attribute(np.zeros((1, 1), int), ("a",), np.zeros(1, int), window=0)
    with pytest.raises(ValueError):
        A.attribute(np.zeros((2, 1), int), ("a", "b"), np.zeros(2, int))


def test_many_lanes_list_singles_and_seen_combinations():
    lanes = tuple(f"l{i}" for i in range(6))
    ranks = np.zeros((3, 6), int)
    ranks[0, [1, 4]] = 2
    ranks[1, 5] = 1
    at = A.attribute(ranks, lanes, np.arange(3))
    names = [n for n, _ in at.overall.counts]
    assert names == ["not_indexed", "beyond_window", "not_retrieved", *lanes, "l1+l4"]
    assert dict(at.overall.counts)["l1+l4"] == 1 and dict(at.overall.counts)["l5"] == 1


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_property_labels_partition_and_match_definition(data):
    n_lanes = data.draw(st.integers(1, 5))
    n = data.draw(st.integers(0, 40))
    window = data.draw(st.integers(1, 12))
    ranks = np.array(data.draw(st.lists(st.lists(st.integers(0, 20), min_size=n_lanes, max_size=n_lanes),
                                        min_size=n, max_size=n)), dtype=int).reshape(n, n_lanes)
    indexed = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool) \
        if data.draw(st.booleans()) else None
    lanes = tuple(f"L{i}" for i in range(n_lanes))
    strata = {"s": np.array(data.draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n)), dtype=object)}
    at = A.attribute(ranks, lanes, np.arange(n), window, indexed, strata, ("s", "x") if n else None)
    for i, lab in enumerate(at.labels):
        r = ranks[i]
        if indexed is not None and not indexed[i]:
            want = "not_indexed"
        elif not ((r > 0) & (r <= window)).any():
            want = "beyond_window" if (r > window).any() else "not_retrieved"
        else:
            want = "+".join(lanes[j] for j in range(n_lanes) if 0 < r[j] <= window)
        assert lab == want
    counts = {k: v for k, v in at.overall.counts}
    assert sum(v for v in counts.values() if v is not None) == n
    assert sum(c.n for _, c in dict(at.strata)["s"]) == n
    for s in at.overall.unique:
        assert s.count == int(np.sum(at.labels == s.lane))


# ----------------------------------------------------------- workspace adaptor


def test_workspace_attribution(tmp_path: Path):
    (tmp_path / "bm25.run").write_text(
        "q1 Q0 a 1 3.0 x\nq1 Q0 r1 2 2.0 x\n"
        "q2 Q0 z 1 1.0 x\n"
        "q3 Q0 r3 1 5.0 x\n"
        "n1 Q0 a 1 1.0 x\n")
    (tmp_path / "dense.run").write_text(
        "q1 Q0 r1 1 0.9 y\n"
        "q2 Q0 b 1 0.9 y\n" + "".join(f"q2 Q0 f{i} {i + 2} {0.8 - i / 100} y\n" for i in range(12)) + "q2 Q0 r2 14 0.1 y\n")
    (tmp_path / "qrels.txt").write_text("q1 0 r1 1\nq2 0 r2 2\nq3 0 r3 1\nq4 0 r4 1\nn1 0 a 0\n")
    (tmp_path / "kind.tsv").write_text("q1\tlexical\nq2\tlong\n")
    (tmp_path / "corpus.txt").write_text("a\nr1\nr2\nr3\nz\nb\n")
    from rankscope_tui.kernel.settings import LoadSettings

    settings_ = LoadSettings(window=10, blind="long")
    ws = ws_mod.Workspace.load([(None, str(tmp_path / "bm25.run")), (None, str(tmp_path / "dense.run"))],
                               str(tmp_path / "qrels.txt"), settings_, strata=[str(tmp_path / "kind.tsv")],
                               corpus=str(tmp_path / "corpus.txt"))
    at = A.attribute_workspace(ws)
    labels = dict(zip((ws.qids[q] for q in at.positives), at.labels))
    assert labels == {"q1": "bm25+dense", "q2": "beyond_window", "q3": "bm25", "q4": "not_indexed"}
    assert at.coverage.as_dict() == {"assessed": True, "relevant_pairs": 4, "not_in_corpus": 1, "queries_not_indexed": 1}
    # judged queries: q1..q4 and the negative n1; dense lacks q3, q4 and n1, bm25 lacks q4
    assert at.missing.as_dict() == {"judged_queries": 5, "missing_from_any": 3, "per_lane": {"bm25": 1, "dense": 3}}
    assert at.blind.label == "long" and at.blind.size == 1
    assert dict(at.blind.misses_in_stratum) == {"bm25": 1, "dense": 1}
    per_code = A.query_labels(ws)
    assert per_code[ws.qid_index["q3"]] == "bm25" and per_code[ws.qid_index["n1"]] == ""
    json.dumps(at.as_dict(qids=ws.qids), allow_nan=False)
