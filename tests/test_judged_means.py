"""Means over every judged query beside the means over positives (issue 29.19).

rankscope averages over positive queries; trec_eval ``-c``, ir_measures, pytrec_eval and
ranx average over every query of the qrels. The report carries that figure too
(``summary.judged_means``, decided in ``kernel/report/payload.py``), and every face shows
it. Oracles: ir_measures' ``calc_aggregate`` on Cranfield (every judged query is in each
run there, so its mean is trec_eval ``-c``'s), pytrec_eval's per-query values averaged
with a missing judged query counted 0 (trec_eval ``-c``) on a hand-made case, and the
hand-made case itself.
"""

from __future__ import annotations

import json

import ir_measures
import pytest
import pytrec_eval
from ir_measures import RR, P, R, Success, nDCG
from support import shared_path

TOL = 1e-9
# our key -> ir_measures' measure (the README's Measures table)
PEERS = {"hit@1": Success @ 1, "hit@5": Success @ 5, "recall@10": R @ 10, "recall@100": R @ 100, "rr": RR,
         "ndcg@10": nDCG @ 10, "p@10": P @ 10}


def test_judged_means_match_ir_measures_on_cranfield(cli_run, tmp_path):
    c = shared_path("cranfield")
    out = tmp_path / "report.json"
    lanes = ("bm25", "tfidf", "dense")
    argv = ["evaluate", *[a for n in lanes for a in ("--lane", c / "lanes" / f"{n}.run")], "--qrels",
            c / "qrels-test.txt", "--resamples", "999", "--out", out]
    rc, text, err = cli_run(*argv)
    assert rc == 0, err
    report = json.loads(out.read_text())
    jm = report["summary"]["judged_means"]
    qrels = list(ir_measures.read_trec_qrels(str(c / "qrels-test.txt")))
    assert jm["queries"] == len({q.query_id for q in qrels}) == 134
    assert report["summary"]["positives"] == 114  # the two figures differ on this set
    for lane in lanes:
        run = list(ir_measures.read_trec_run(str(c / "lanes" / f"{lane}.run")))
        peer = ir_measures.calc_aggregate(list(PEERS.values()), qrels, run)
        for key, measure in PEERS.items():
            assert jm["lanes"][lane]["doc"][key] == pytest.approx(peer[measure], abs=TOL), (lane, key)
    # the newcomer's first surprise: ndcg@10 of bm25, ours over positives and the peers' over judged
    ours = report["lanes"]["bm25"]["doc"]["ndcg@10"]["value"]
    assert f"{ours:.4f}" == "0.3056" and f"{jm['lanes']['bm25']['doc']['ndcg@10']:.4f}" == "0.2600"
    # the text says both, next to each other
    assert "0.3056" in text and "0.2600" in text and "134 judged queries" in text


def _write(path, lines):
    path.write_text("".join(" ".join(map(str, ln)) + "\n" for ln in lines))
    return path


def test_judged_means_count_a_missing_judged_query_as_zero(cli_run, tmp_path):
    """Hand case: q1 positive (d1 grade 1 at rank 2), q2 negative (judged 0 only), q3 positive
    but absent from the run, q4 in the run but not in the qrels. Over judged queries
    q1, q2, q3: rr = (1/2 + 0 + 0) / 3, p@10 = (1/10) / 3, judged@10 = (2/10 + 1/10 + 0) / 3;
    over positives q1, q3: rr = 1/4. pytrec_eval's per-query values, with q3 filled in as 0
    (trec_eval -c), give the same judged means."""
    qrels = _write(tmp_path / "qrels.txt", [("q1", 0, "d1", 1), ("q1", 0, "d2", 0), ("q2", 0, "d5", 0),
                                            ("q3", 0, "d9", 2)])
    run = _write(tmp_path / "a.run", [("q1", "Q0", "d2", 1, 3.0, "a"), ("q1", "Q0", "d1", 2, 2.0, "a"),
                                      ("q1", "Q0", "d3", 3, 1.0, "a"), ("q2", "Q0", "d5", 1, 2.0, "a"),
                                      ("q2", "Q0", "d6", 2, 1.0, "a"), ("q4", "Q0", "d1", 1, 1.0, "a")])
    out = tmp_path / "report.json"
    rc, text, err = cli_run("evaluate", "--lane", f"a={run}", "--qrels", qrels, "--metrics", "rr,p@10,judged@10",
                            "--resamples", "999", "--out", out)
    assert rc == 0, err
    report = json.loads(out.read_text())
    jm = report["summary"]["judged_means"]
    assert jm["queries"] == 3
    got = jm["lanes"]["a"]["doc"]
    assert got["rr"] == pytest.approx((1 / 2) / 3, abs=1e-15)
    assert got["p@10"] == pytest.approx((1 / 10) / 3, abs=1e-15)
    assert got["judged@10"] == pytest.approx((2 / 10 + 1 / 10) / 3, abs=1e-15)
    assert report["lanes"]["a"]["doc"]["rr"]["value"] == pytest.approx(1 / 4, abs=1e-15)
    # pytrec_eval (trec_eval's C core) per query, q3 missing from the run counted 0 as -c does
    q = {"q1": {"d1": 1, "d2": 0}, "q2": {"d5": 0}, "q3": {"d9": 2}}
    r = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}, "q2": {"d5": 2.0, "d6": 1.0}, "q4": {"d1": 1.0}}
    per = pytrec_eval.RelevanceEvaluator(q, {"recip_rank", "P"}).evaluate(r)
    for ours, theirs in (("rr", "recip_rank"), ("p@10", "P_10")):
        assert got[ours] == pytest.approx(sum(per.get(qid, {}).get(theirs, 0.0) for qid in q) / len(q), abs=1e-15)
    assert "over 3 judged queries" in text or "3 judged queries" in text
