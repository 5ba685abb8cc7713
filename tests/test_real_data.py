"""End to end on the real Cranfield lanes in ../shared/data (skipped when absent).

Oracles: pytrec_eval-terrier on the same files for the per-lane means, and plain
Python counts over the qrels and the passage list for attribution's coverage.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from support import run_cli, shared_path

C = shared_path("cranfield")  # skips this module, naming the path, when absent
LANES = ("bm25", "tfidf", "dense")


def _lane_args() -> list[str]:
    return [a for name in LANES for a in ("--lane", str(C / "lanes" / f"{name}.run"))]


def _read_run(path: Path) -> dict:
    run: dict = defaultdict(dict)
    for line in path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run[q][d] = float(s)
    return run


def _read_qrels(path: Path) -> dict:
    qrels: dict = defaultdict(dict)
    for line in path.read_text().splitlines():
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    return qrels


@pytest.fixture(scope="module")
def test_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("cran") / "report.json"
    res = run_cli("evaluate", *_lane_args(), "--qrels", str(C / "qrels-test.txt"), "--strata", str(C / "strata.tsv"),
               "--strata", str(C / "strata-length.tsv"), "--group-sep", "#", "--corpus", str(C / "passages.tsv"),
               "--metrics", "ndcg@10,rr,recall@100", "--resamples", "199", "--gate-on", "dense",
               "--ood-negatives", str(C / "qrels-ood-negatives.txt"), "--blind", "no-overlap", "--out", str(out))
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text())


@pytest.mark.parametrize("split", ["test", "dev"])
def test_lane_means_equal_pytrec_eval(split, tmp_path):
    qrels = _read_qrels(C / f"qrels-{split}.txt")
    out = tmp_path / "r.json"
    res = run_cli("evaluate", *_lane_args(), "--qrels", str(C / f"qrels-{split}.txt"), "--metrics", "ndcg@10,rr,recall@100",
               "--resamples", "0", "--out", str(out))
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    positives = [q for q, docs in qrels.items() if any(g >= 1 for g in docs.values())]
    ev = pytrec_eval.RelevanceEvaluator(dict(qrels), {"ndcg_cut.10", "recip_rank", "recall.100"})
    for lane in LANES:
        per = ev.evaluate(dict(_read_run(C / "lanes" / f"{lane}.run")))
        for ours, theirs in (("ndcg@10", "ndcg_cut_10"), ("rr", "recip_rank"), ("recall@100", "recall_100")):
            expected = np.mean([per.get(q, {}).get(theirs, 0.0) for q in positives])
            assert report["lanes"][lane]["doc"][ours]["value"] == pytest.approx(expected, abs=1e-12), (lane, ours)
            pq = report["per_query"][lane]["doc"]
            for q in positives:
                assert pq[q][ours] == pytest.approx(per.get(q, {}).get(theirs, 0.0), abs=1e-9)


def test_attribution_partitions_positives_and_counts_coverage(test_report):
    qrels = _read_qrels(C / "qrels-test.txt")
    corpus = {line.split("\t", 1)[0] for line in (C / "passages.tsv").read_text().splitlines() if line.strip()}
    relevant_pairs = [(q, d) for q, docs in qrels.items() for d, g in docs.items() if g >= 1]
    missing = sum(1 for _, d in relevant_pairs if d not in corpus)
    assert missing > 0  # the data removed some relevant passages from the index
    for level in ("doc", "group"):
        a = test_report["attribution"][level]
        assert a["coverage"]["relevant_pairs"] == len(relevant_pairs)
        assert a["coverage"]["not_in_corpus"] == missing
        labels = {k: v for k, v in a["labels"].items() if not k.endswith("_reason") and k != "not_surfaced"}
        assert sum(labels.values()) == a["positives"] == test_report["summary"]["positives"]
        assert a["labels"]["not_surfaced"] == a["labels"]["beyond_window"] + a["labels"]["not_retrieved"]
        per_query = a["per_query"]
        assert len(per_query) == a["positives"]
        for label, count in labels.items():
            assert sum(1 for v in per_query.values() if v == label) == count, label
        shares = a["unique_share"]
        for lane in LANES:
            assert shares[lane]["count"] == labels.get(lane, 0)


def test_gate_blocks_per_negative_set(test_report):
    g = test_report["gate"]
    assert g["lane"] == "dense"
    assert g["negatives"] == {"in_domain": 20, "out_of_domain": 30}
    floors = {k: v["floor"] for k, v in g["null_floor"].items()}
    # out-of-domain negatives give a lower floor: one that looks safe and is not
    assert floors["out_of_domain"] < floors["in_domain"]
    ood_fpir_on_in_domain = g["null_floor"]["out_of_domain"]["fpir"]["in_domain"]["value"]
    assert ood_fpir_on_in_domain > 0.5


def test_calibrate_on_dev_with_fourteen_negatives_is_unattainable_conservatively(tmp_path):
    th = tmp_path / "th.json"
    res = run_cli("calibrate", *_lane_args(), "--qrels", str(C / "qrels-dev.txt"), "--gate-on", "dense", "--conservative",
               "--out", str(th))
    assert res.returncode == 0, res.stderr
    data = json.loads(th.read_text())
    assert data["calibration"]["negatives"] == 14
    assert data["gate"]["floor"] is None and "73" in json.dumps(data["gate"]["operating_point"])
    conv = data["fusion"]["convex"]
    assert conv["grid"]["points"] == 66 and abs(sum(conv["weights"].values()) - 1) < 1e-12
    ev = tmp_path / "e.json"
    res = run_cli("evaluate", *_lane_args(), "--qrels", str(C / "qrels-test.txt"), "--thresholds", str(th), "--gate-on", "dense",
               "--resamples", "0", "--out", str(ev))
    assert res.returncode == 0, res.stderr
    report = json.loads(ev.read_text())
    assert report["fusion"]["convex"]["label"] == "held-out"
    assert report["gate"]["outcome"]["combined"]["fnir"]["value"] == 1.0  # reject all: every positive is a miss
