"""`calibrate --folds K` on Cranfield, checked against an evaluation written here from scratch.

The oracle reads the TREC files itself, orders hits by score then doc id (descending, as
trec_eval), fuses (min-max convex, RRF) in plain Python, scores nDCG@10 with pytrec_eval
(fed ranks, so its own tie rule plays no part) and refits every fold by brute force on the
queries the fold report says were *not* held out. Each held-out score is then recomputed
from the fold's held-out query ids alone: if the product let a training query into a
held-out score, or a held-out query into a fit, the numbers would differ.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from support import shared_path

CRAN = shared_path("cranfield")
LANES = ("bm25", "dense", "tfidf")
STEP_N = 10  # --step 0.1


def _read_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run[q][d] = float(s)
    return dict(run)


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    return dict(qrels)


def _order(scores: dict[str, float]) -> list[str]:
    """Score descending, then doc id descending (trec_eval's tie rule)."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def _ndcg10(qrels, ranked: dict[str, list[str]], queries) -> dict[str, float]:
    import pytrec_eval

    sub = {q: qrels[q] for q in queries}
    run = {q: {d: float(-i) for i, d in enumerate(ranked.get(q, [])[:10])} for q in queries}
    run = {q: r for q, r in run.items() if r}
    got = pytrec_eval.RelevanceEvaluator(sub, {"ndcg_cut_10"}).evaluate(run)
    return {q: got[q]["ndcg_cut_10"] if q in got else 0.0 for q in queries}


def _convex(runs, weights, q) -> list[str]:
    fused: dict[str, float] = defaultdict(float)
    for run, w in zip(runs, weights):
        scores = run.get(q, {})
        if not scores:
            continue
        lo, hi = min(scores.values()), max(scores.values())
        for d, s in scores.items():
            fused[d] += w * ((s - lo) / (hi - lo) if hi > lo else 1.0)
    for run in runs:  # a doc absent from a lane scores 0 there
        for d in run.get(q, {}):
            fused.setdefault(d, 0.0)
    return _order(fused)


def _rrf(runs, k, q) -> list[str]:
    ranks: dict[str, list[int]] = defaultdict(list)
    for run in runs:
        for r, d in enumerate(_order(run.get(q, {})), start=1):
            ranks[d].append(r)
    return _order({d: sum(1.0 / (k + r) for r in sorted(rs)) for d, rs in ranks.items()})


def _first_best(points, score):
    best, best_v = None, -math.inf
    for p in points:
        v = score(p)
        if v > best_v:
            best, best_v = p, v
    return best, best_v


def _mean(per_query: dict[str, float], queries) -> float:
    return sum(per_query[q] for q in queries) / len(queries)


@pytest.fixture(scope="module")
def cranfield_folds(tmp_path_factory):
    from rankscope_tui import cli

    out = tmp_path_factory.mktemp("folds") / "thresholds.json"
    argv = ["calibrate", *[a for n in LANES for a in ("--lane", str(CRAN / "lanes" / f"{n}.run"))],
            "--qrels", str(CRAN / "qrels-dev.txt"), "--strata", str(CRAN / "strata.tsv"), "--gate-on", "dense",
            "--folds", "5", "--out", str(out)]
    assert cli.main(argv) == 0
    data = json.loads(out.read_text())
    qrels = _read_qrels(CRAN / "qrels-dev.txt")
    runs = [_read_run(CRAN / "lanes" / f"{n}.run") for n in LANES]
    return data, qrels, runs, out, argv


def _classes(qrels):
    pos = sorted(q for q, j in qrels.items() if any(g >= 1 for g in j.values()))
    neg = sorted(q for q, j in qrels.items() if not any(g >= 1 for g in j.values()))
    return pos, neg


def test_the_folds_partition_the_calibration_queries_by_class_and_stratum(cranfield_folds):
    data, qrels, _, _, _ = cranfield_folds
    f = data["folds"]
    pos, neg = _classes(qrels)
    held = [d["held_out"]["qids"] for d in f["per_fold"]]
    assert f["k"] == 5 and len(held) == 5
    assert sorted(q for h in held for q in h) == sorted(pos + neg)  # each query held out exactly once
    sizes = [len(h) for h in held]
    assert max(sizes) - min(sizes) <= 1
    strata = dict(line.split("\t") for line in (CRAN / "strata.tsv").read_text().splitlines())
    cells = Counter(("pos" if q in pos else "neg", strata.get(q)) for q in pos + neg)
    for cell, m in cells.items():
        per_fold = [sum(1 for q in h if ("pos" if q in pos else "neg", strata.get(q)) == cell) for h in held]
        assert set(per_fold) <= {m // 5, -(-m // 5)}, (cell, per_fold)
    for d, h in zip(f["per_fold"], held):
        assert d["held_out"]["positives"] == sum(q in pos for q in h)
        assert d["held_out"]["negatives"] == sum(q in neg for q in h)


def test_convex_fits_and_held_out_scores_match_an_independent_refit(cranfield_folds):
    data, qrels, runs, _, _ = cranfield_folds
    pos, _ = _classes(qrels)
    grid = [(a, b, STEP_N - a - b) for a in range(STEP_N + 1) for b in range(STEP_N + 1 - a)]  # ascending lex
    per_point = {c: _ndcg10(qrels, {q: _convex(runs, [x / STEP_N for x in c], q) for q in pos}, pos) for c in grid}
    cv = data["folds"]["convex"]
    pooled = {}
    for d in data["folds"]["per_fold"]:
        held = [q for q in d["held_out"]["qids"] if q in pos]
        train = [q for q in pos if q not in set(d["held_out"]["qids"])]
        best, v = _first_best(grid, lambda c: _mean(per_point[c], train))
        assert tuple(d["convex"]["weights"][n] for n in LANES) == tuple(x / STEP_N for x in best)
        assert d["convex"]["train_objective"] == pytest.approx(v, abs=1e-9)
        assert d["convex"]["held_out_objective"] == pytest.approx(_mean(per_point[best], held), abs=1e-9)
        assert d["convex"]["held_out_positives"] == len(held)
        pooled.update({q: per_point[best][q] for q in held})
    assert cv["held_out_pooled"] == pytest.approx(_mean(pooled, pos), abs=1e-9)
    best_all, v_all = _first_best(grid, lambda c: _mean(per_point[c], pos))
    assert tuple(cv["all"]["weights"][n] for n in LANES) == tuple(x / STEP_N for x in best_all)
    # the weights written for evaluate are the fit on every calibration query, not a fold's
    assert data["fusion"]["convex"]["weights"] == cv["all"]["weights"]
    assert cv["optimism"] == pytest.approx(v_all - _mean(pooled, pos), abs=1e-9)


def test_rrf_k_per_fold_matches_an_independent_refit(cranfield_folds):
    data, qrels, runs, _, _ = cranfield_folds
    pos, _ = _classes(qrels)
    rrf = data["folds"]["rrf"]
    ks = rrf["grid"]
    per_k = {k: _ndcg10(qrels, {q: _rrf(runs, k, q) for q in pos}, pos) for k in ks}
    for d in data["folds"]["per_fold"]:
        held = [q for q in d["held_out"]["qids"] if q in pos]
        train = [q for q in pos if q not in set(d["held_out"]["qids"])]
        k, _ = _first_best(sorted(ks), lambda k: _mean(per_k[k], train))
        assert d["rrf"]["k"] == k
        assert d["rrf"]["held_out_objective"] == pytest.approx(_mean(per_k[k], held), abs=1e-9)
    assert data["fusion"]["rrf_k"] == 60  # recorded, never replaced by a fitted k


def test_gate_floor_and_held_out_rates_match_a_hand_computation(cranfield_folds):
    data, qrels, runs, _, _ = cranfield_folds
    pos, neg = _classes(qrels)
    dense = runs[LANES.index("dense")]
    top = {q: max(s.values()) for q, s in dense.items() if s}
    top_rel = {q: qrels.get(q, {}).get(_order(s)[0], 0) >= 1 for q, s in dense.items() if s}
    misses = accepts = 0
    for d in data["folds"]["per_fold"]:
        held = set(d["held_out"]["qids"])
        tp, tn = [q for q in pos if q not in held], [q for q in neg if q not in held]
        cands = sorted({top[q] for q in tp + tn if q in top}) + [math.inf]
        floor = next(c for c in cands[:-1] if sum(top.get(q, -math.inf) >= c for q in tn) / len(tn) <= 0.05)
        assert d["gate"]["floor"] == floor
        hp, hn = [q for q in pos if q in held], [q for q in neg if q in held]
        miss = sum(not (q in top and top[q] >= floor and top_rel[q]) for q in hp)
        acc = sum(q in top and top[q] >= floor for q in hn)
        assert (d["gate"]["held_out"]["fnir"]["k"], d["gate"]["held_out"]["fnir"]["n"]) == (miss, len(hp))
        assert (d["gate"]["held_out"]["fpir"]["k"], d["gate"]["held_out"]["fpir"]["n"]) == (acc, len(hn))
        misses, accepts = misses + miss, accepts + acc
    pooled = data["folds"]["gate"]["held_out_pooled"]
    assert (pooled["fnir"]["k"], pooled["fnir"]["n"]) == (misses, len(pos))
    assert (pooled["fpir"]["k"], pooled["fpir"]["n"]) == (accepts, len(neg))


def test_the_text_prints_the_fold_report(cranfield_folds, cli_run, tmp_path):
    _, _, _, _, argv = cranfield_folds
    rc, out, err = cli_run(*argv[:-1], tmp_path / "t.json")
    assert rc == 0, err
    assert "cross-validation: 5 folds of the 91 calibration queries" in out
    for i in range(1, 6):
        assert f"  fold {i}: weights " in out
    assert "min / median / max" in out and "optimism" in out and "pooled" in out
    assert "None" not in out and "nan" not in out and "null" not in out.replace("null floor", "")


def test_same_seed_same_bytes_another_seed_other_folds(cranfield_folds, cli_run, tmp_path):
    _, _, _, out, argv = cranfield_folds
    again = tmp_path / "again.json"
    assert cli_run(*argv[:-1], again)[0] == 0
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "other.json"
    assert cli_run(*argv[:-1], other, "--seed", "7")[0] == 0
    held = [json.loads(p.read_text())["folds"]["per_fold"] for p in (out, other)]
    assert [d["held_out"]["qids"] for d in held[0]] != [d["held_out"]["qids"] for d in held[1]]


@pytest.mark.parametrize("k, words", [("1", "must be an integer >= 2"), ("0", "must be an integer >= 2"),
                                      ("92", "more than the 91 calibration queries"),
                                      ("78", "more than the 77 calibration positives")])
def test_a_k_out_of_range_is_refused_in_one_line(cli_run, tmp_path, k, words):
    out = tmp_path / "th.json"
    rc, stdout, err = cli_run("calibrate", "--lane", CRAN / "lanes" / "bm25.run", "--lane", CRAN / "lanes" / "dense.run",
                              "--qrels", CRAN / "qrels-dev.txt", "--gate-on", "dense", "--folds", k, "--out", out)
    assert rc == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("rankscope: error: --folds: ") and words in err
    assert not out.exists()


def test_folds_with_buckets_is_refused_in_one_line(cli_run, tmp_path):
    out = tmp_path / "th.json"
    rc, _, err = cli_run("calibrate", "--lane", CRAN / "lanes" / "bm25.run", "--lane", CRAN / "lanes" / "dense.run",
                         "--qrels", CRAN / "qrels-dev.txt", "--folds", "5", "--buckets", "2", "--out", out)
    assert rc == 2 and err.count("\n") == 1 and "--folds" in err and "--buckets" in err
    assert not out.exists()


def test_one_lane_without_a_gate_says_there_is_nothing_to_cross_validate(cli_run, tmp_path):
    qrels = _read_qrels(CRAN / "qrels-dev.txt")
    positives = tmp_path / "positives.txt"  # no negatives: no gate is asked for
    positives.write_text("".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() if max(j.values()) >= 1
                                 for d, g in j.items()))
    rc, out, err = cli_run("calibrate", "--lane", CRAN / "lanes" / "bm25.run", "--qrels", positives,
                           "--folds", "3", "--out", tmp_path / "th.json")
    assert rc == 0, err
    assert "nothing is fitted here (one lane and no gate), so there is nothing to score" in out


def test_the_api_takes_folds_and_refuses_them_by_the_parameter_name():
    import rankscope_tui as rs
    from rankscope_tui.kernel.errors import SettingError

    runs = {n: str(CRAN / "lanes" / f"{n}.run") for n in ("bm25", "dense")}
    res = rs.calibrate(str(CRAN / "qrels-dev.txt"), runs, gate_on="dense", folds=3)
    assert res["folds"]["k"] == 3 and len(res["folds"]["per_fold"]) == 3
    assert res["fusion"]["convex"]["weights"] == res["folds"]["convex"]["all"]["weights"]
    for bad, words in ((1, "folds: must be an integer >= 2"), (92, "folds: K = 92 is more than")):
        with pytest.raises(SettingError, match=words):
            rs.calibrate(str(CRAN / "qrels-dev.txt"), runs, gate_on="dense", folds=bad)


def test_the_api_and_the_command_line_write_the_same_fold_report(cranfield_folds):
    import rankscope_tui as rs

    data, _, _, _, _ = cranfield_folds
    res = rs.calibrate(str(CRAN / "qrels-dev.txt"), {n: str(CRAN / "lanes" / f"{n}.run") for n in LANES},
                       gate_on="dense", folds=5, strata=str(CRAN / "strata.tsv"))
    assert res["folds"] == data["folds"]
