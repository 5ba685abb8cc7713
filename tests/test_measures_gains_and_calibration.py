"""Issue 15, must show 3: ndcg_exp@k against ranx ``ndcg_burges@k`` on tie-free data and by
hand on seed 000's gains (0, 1, 3 for grades 0, 1, 2); calibrated_recall@k by hand where it
differs from recall@k and where the two are equal (seed 001's @20 vs @50 observation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import ranx

from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace


def load(tmp_path, run: dict, qrels: dict, metrics: str, **kw) -> Workspace:
    rp, qp = tmp_path / "run.txt", tmp_path / "qrels.txt"
    rp.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, hits in run.items() for d, s in hits.items()))
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    return Workspace.load(lanes=[("lane", str(rp))], qrels=str(qp), settings=LoadSettings(metrics=tuple(parse_metrics(metrics)), **kw))


# ------------------------------------------------------------------ ndcg_exp@k


def test_ndcg_exp_by_hand_on_seed_000_gains(tmp_path):
    """Grades 0, 1, 2 gain 0, 1, 3 (2^g - 1). Ranked: partial (1), exact (2), non-relevant (0);
    judged: one more exact doc unretrieved.
    DCG@3 = 1/log2(2) + 3/log2(3); ideal@3 = 3/log2(2) + 3/log2(3) + 1/log2(4)."""
    run = {"q": {"partial": 3.0, "exact": 2.0, "none": 1.0}}
    qrels = {"q": {"partial": 1, "exact": 2, "none": 0, "exact2": 2}}
    ws = load(tmp_path, run, qrels, "ndcg_exp@3,ndcg@3,ndcg_exp@1")
    pq = ws.per_query("lane", "doc")
    q = ws.qid_index["q"]
    dcg = 1.0 + 3.0 / math.log2(3)
    ideal = 3.0 + 3.0 / math.log2(3) + 1.0 / 2.0
    assert pq["ndcg_exp@3"][q] == pytest.approx(dcg / ideal, abs=1e-12)
    assert pq["ndcg_exp@1"][q] == pytest.approx(1.0 / 3.0, abs=1e-12)  # gain 1 against the ideal's 3
    # linear gains weigh the same list differently (1 + 2/log2 3 over 2 + 2/log2 3 + 1/2)
    lin = (1.0 + 2.0 / math.log2(3)) / (2.0 + 2.0 / math.log2(3) + 0.5)
    assert pq["ndcg@3"][q] == pytest.approx(lin, abs=1e-12)
    assert pq["ndcg@3"][q] != pytest.approx(pq["ndcg_exp@3"][q], abs=1e-3)
    assert "judged@3" in pq  # ndcg_exp@k brings judged@k, as ndcg@k does


def _tie_free(seed: int):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for i in range(25):
        q = f"q{i}"
        docs = [f"d{j}" for j in rng.choice(60, size=int(rng.integers(3, 30)), replace=False)]
        scores = rng.permutation(len(docs)) + rng.random()  # distinct (and distinct as float32)
        run[q] = {d: float(s) for d, s in zip(docs, scores)}
        judged = set(rng.choice(docs, size=min(len(docs), int(rng.integers(1, 8))), replace=False).tolist())
        judged |= {f"d{j}" for j in rng.choice(60, size=3, replace=False)}
        qrels[q] = {d: int(rng.choice([0, 1, 1, 2, 3])) for d in sorted(judged)}
        if not any(g > 0 for g in qrels[q].values()):
            qrels[q][sorted(judged)[0]] = 2
    return run, qrels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ndcg_exp_matches_ranx_ndcg_burges(tmp_path, seed):
    run, qrels = _tie_free(seed)
    ks = (1, 3, 5, 10, 20)
    ws = load(tmp_path, run, qrels, ",".join(f"ndcg_burges@{k}" for k in ks))
    pq = ws.per_query("lane", "doc")
    r_run, r_qrels = ranx.Run(run), ranx.Qrels(qrels)
    names = [f"ndcg_burges@{k}" for k in ks]
    ranx.evaluate(r_qrels, r_run, names, save_results_in_run=True, make_comparable=True)
    compared = 0
    for k, name in zip(ks, names):
        theirs = r_run.scores[name]
        for q in qrels:
            assert pq[f"ndcg_exp@{k}"][ws.qid_index[q]] == pytest.approx(theirs[q], abs=1e-9), (q, k)
            compared += 1
    assert compared == len(qrels) * len(ks)
    assert len({round(float(v), 6) for v in pq["ndcg_exp@10"]}) > 5


# ------------------------------------------------------------------ calibrated_recall@k


def test_calibrated_recall_differs_where_a_query_has_more_relevant_than_k(tmp_path):
    """q_many: 4 relevant, 2 found in the top 3 -> recall@3 = 2/4, calibrated 2/min(3, 4) = 2/3.
    q_few: 2 relevant, 1 found -> both 1/2 (R <= k). At k = 5 (>= every R) the two are equal
    on every query, as seed 001's recall@50 and calibrated_recall@50."""
    run = {"many": {"r1": 5.0, "n1": 4.0, "r2": 3.0, "n2": 2.0, "r3": 1.0},
           "few": {"n1": 3.0, "r1": 2.0, "n2": 1.0}}
    qrels = {"many": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "n1": 0}, "few": {"r1": 1, "r2": 1}}
    ws = load(tmp_path, run, qrels, "recall@3,calibrated_recall@3,recall@5,calibrated_recall@5")
    pq = ws.per_query("lane", "doc")
    many, few = ws.qid_index["many"], ws.qid_index["few"]
    assert pq["recall@3"][many] == pytest.approx(2 / 4) and pq["calibrated_recall@3"][many] == pytest.approx(2 / 3)
    assert pq["recall@3"][few] == pytest.approx(1 / 2) and pq["calibrated_recall@3"][few] == pytest.approx(1 / 2)
    assert pq["recall@5"][many] == pytest.approx(3 / 4) and pq["calibrated_recall@5"][many] == pytest.approx(3 / 4)
    assert pq["recall@5"][few] == pytest.approx(1 / 2) and pq["calibrated_recall@5"][few] == pytest.approx(1 / 2)
    # the means over positives: differ at 3, equal at 5
    assert ws.mean("lane", "doc", "calibrated_recall@3") > ws.mean("lane", "doc", "recall@3")
    assert ws.mean("lane", "doc", "calibrated_recall@5") == ws.mean("lane", "doc", "recall@5")


def test_definitions_name_the_convention(tmp_path):
    run = {"q": {"a": 1.0}}
    qrels = {"q": {"a": 1}}
    ws = load(tmp_path, run, qrels, "calibrated_recall@20,ndcg_exp@10,ap@100,P(rel=2)@10")
    from rankscope_tui.kernel.report.payload import definitions

    d = definitions(ws)
    assert "min(20, R)" in d["calibrated_recall@20"]
    assert "2^grade - 1" in d["ndcg_exp@10"] and "ndcg_burges@10" in d["ndcg_exp@10"]
    assert "not min(100, R)" in d["ap@100"] and "map_cut.100" in d["ap@100"]
    assert "rel=2" in d["p(rel=2)@10"] and "overrides --relevant" in d["p(rel=2)@10"]
    assert "grade >= 2" in d["p(rel=2)@10"]
