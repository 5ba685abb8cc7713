"""``compare --all-pairs`` reads an omnibus test first (issue 31 item 6): Friedman's test
against scipy.stats.friedmanchisquare on Cranfield's three lanes, in text, markdown and
JSON, and the words when it does not reject."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import friedmanchisquare
from support import shared_path

from rankscope_tui import api
from rankscope_tui import cli as C
from rankscope_tui.kernel.statistics.friedman import friedman

LANES = ("bm25", "tfidf", "dense")


@pytest.fixture(scope="module")
def cranfield():
    return shared_path("cranfield")


def _argv(d, *extra):
    argv = ["compare", "--all-pairs", "--qrels", str(d / "qrels-test.txt"), "--metrics", "ndcg@10", "--resamples", "999"]
    for lane in LANES:
        argv += ["--lane", f"{lane}={d / 'lanes' / (lane + '.run')}"]
    return argv + list(extra)


def test_friedman_p_equals_scipy_on_cranfields_three_lanes(cranfield, tmp_path, capsys):
    ev = api.evaluate(str(cranfield / "qrels-test.txt"), {n: str(cranfield / "lanes" / f"{n}.run") for n in LANES},
                      measures="ndcg@10", resamples=0)
    pq = ev.report()["per_query"]
    qids = sorted(pq["bm25"]["doc"], key=str.encode)
    cols = [np.array([pq[n]["doc"][q]["ndcg@10"] for q in qids]) for n in LANES]
    want = friedmanchisquare(*cols)
    out = tmp_path / "all.json"
    assert C.main(_argv(cranfield, "--out", str(out))) == 0
    text = capsys.readouterr().out
    om = json.loads(out.read_text())["omnibus"]
    assert om["test"] == "Friedman" and om["df"] == 2 and om["n"] == len(qids)
    assert om["statistic"] == pytest.approx(want.statistic, rel=1e-12)
    assert om["p"] == pytest.approx(want.pvalue, rel=1e-9)
    # the omnibus sentence comes first, before the letters table
    assert text.splitlines()[0] == om["sentence"] and text.splitlines()[0].startswith("omnibus Friedman test")
    assert C.main(_argv(cranfield, "--format", "markdown")) == 0
    md = capsys.readouterr().out
    assert md.splitlines()[0].startswith("**omnibus Friedman test over 3 lanes")


def test_a_non_rejecting_omnibus_marks_the_table_exploratory():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 30)
    x = np.column_stack([base + rng.normal(0, 0.05, 30) for _ in range(3)])
    om = friedman(x, 0.05)
    want = friedmanchisquare(*x.T)
    assert om.p == pytest.approx(want.pvalue, rel=1e-9)
    assert om.p > 0.05 and not om.rejects
    assert "does not reject" in om.sentence and "exploratory" in om.sentence


def test_ties_follow_scipys_correction_and_all_ties_have_no_p():
    x = np.array([[0.5, 0.5, 0.2], [0.1, 0.3, 0.3], [1.0, 0.0, 0.0], [0.2, 0.4, 0.6], [0.0, 0.0, 1.0]])
    assert friedman(x, 0.05).p == pytest.approx(friedmanchisquare(*x.T).pvalue, rel=1e-12)
    om = friedman(np.ones((4, 3)), 0.05)
    assert om.p is None and "exploratory" in om.sentence and "none" not in om.sentence.lower()
