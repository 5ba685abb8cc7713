"""Judgment coverage: holes, bounds, condensed lists (trec_eval -J) and ``pool``.

Oracles: a trec_eval binary built from the shared source (``/work/shared/tools/trec_eval``)
run with ``-J`` on its own test suite and on Cranfield; pytrec_eval on qrels modified by
hand (every hole added as relevant / as non-relevant); hand-worked cases.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support import shared_path

from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace

# trec_eval output name -> the rankscope key
TREC_EVAL_MEASURES = {
    "P_5": "p@5", "P_10": "p@10", "recall_10": "recall@10", "recall_100": "recall@100", "ndcg_cut_10": "ndcg@10",
    "recip_rank": "rr", "map": "ap", "map_cut_10": "ap@10", "ndcg": "ndcg", "bpref": "bpref", "Rprec": "rprec",
    "success_10": "hit@10",
}
# the -m arguments asking for them (one -m per measure: a second -m P.k replaces the first's cutoffs)
TREC_EVAL_M = ("P.5,10", "recall.10,100", "ndcg_cut.10", "recip_rank", "map", "map_cut.10", "ndcg", "bpref", "Rprec",
               "success.10")
TOL = 1e-9


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory) -> Path:
    """trec_eval 10.0 built from the shared source into a temporary folder. Its printing
    is changed from 4 to 12 decimals (``%6.4f`` -> ``%.12f`` in the two print files, nothing
    else), so the comparison can be tight; skips, saying why, without the source or a C
    compiler."""
    src = Path("/work/shared/tools/trec_eval")
    if not (src / "Makefile").is_file():
        pytest.skip(f"trec_eval source not found at {src}")
    if shutil.which("make") is None or (shutil.which("cc") is None and shutil.which("gcc") is None):
        pytest.skip("no make or C compiler to build trec_eval")
    build = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(src, build)
    for name in ("meas_print_single.c", "meas_print_final.c"):
        p = build / name
        p.write_text(p.read_text().replace("%6.4f", "%.12f"))
    done = subprocess.run(["make"], cwd=build, capture_output=True, text=True)
    if done.returncode != 0 or not (build / "trec_eval").is_file():
        pytest.skip(f"trec_eval did not build: {done.stderr.strip()[-300:]}")
    return build / "trec_eval"


def run_trec_eval(binary: Path, qrels: Path, run: Path, *flags: str) -> dict[tuple[str, str], float]:
    """``{(output name, qid): value}`` of ``trec_eval -q FLAGS -m ...`` (per-query lines)."""
    args = [str(binary), "-q", *flags]
    for spec in TREC_EVAL_M:
        args += ["-m", spec]
    done = subprocess.run(args + [str(qrels), str(run)], capture_output=True, text=True, check=True)
    out = {}
    for line in done.stdout.splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        if qid != "all":
            out[(name, qid)] = float(value)
    return out


def condensed_mismatches(binary, qrels: Path, lanes: dict[str, Path], relevant: int) -> tuple[list[str], int]:
    keys = list(TREC_EVAL_MEASURES.values())
    ws = Workspace.load([(n, str(p)) for n, p in lanes.items()], str(qrels),
                        LoadSettings(metrics=tuple(parse_metrics(",".join(keys))), relevant=relevant, condensed=True))
    bad, checked = [], 0
    for lane, path in lanes.items():
        want = run_trec_eval(binary, qrels, path, "-J", f"-l{relevant}")
        pq = ws.per_query(lane)
        for code in ws.positives.tolist():
            qid = ws.qids[code]
            for name, key in TREC_EVAL_MEASURES.items():
                if (name, qid) not in want:  # a query the run lacks: trec_eval skips it without -c
                    continue
                checked += 1
                got = float(pq[key][code])
                if abs(got - want[(name, qid)]) > TOL:
                    bad.append(f"{lane} {name} {qid}: trec_eval -J {want[(name, qid)]:.12f}, rankscope {got:.12f}")
    return bad, checked


@pytest.mark.parametrize("qrels, relevant", [("qrels.test", 1), ("qrels.rel_level", 1), ("qrels.rel_level", 2)])
def test_condensed_lists_equal_trec_eval_J_on_its_test_suite(trec_eval_binary, qrels, relevant):
    """``condensed=True`` equals ``trec_eval -J`` on the suite's run, for every measure both
    have, on binary and graded qrels (the graded file holds grade -1: in the pool, not judged,
    removed like an unjudged doc) and at two relevance levels."""
    suite = shared_path("trec_eval_test")
    bad, checked = condensed_mismatches(trec_eval_binary, suite / qrels, {"run": suite / "results.test"}, relevant)
    assert checked == 3 * len(TREC_EVAL_MEASURES)
    assert not bad, "\n".join(bad[:20])


def test_condensed_lists_equal_trec_eval_J_on_cranfield(trec_eval_binary):
    C = shared_path("cranfield")
    lanes = {n: C / "lanes" / f"{n}.run" for n in ("bm25", "tfidf", "dense")}
    bad, checked = condensed_mismatches(trec_eval_binary, C / "qrels-test.txt", lanes, 1)
    assert checked > 3 * 100 * len(TREC_EVAL_MEASURES)
    assert not bad, "\n".join(bad[:20])


def test_condensed_differs_from_the_plain_lists_on_cranfield(trec_eval_binary):
    """The option does something: without it rankscope equals plain trec_eval, and the two
    disagree on Cranfield (its qrels hold few judged docs per query)."""
    C = shared_path("cranfield")
    qrels, run = C / "qrels-test.txt", C / "lanes" / "bm25.run"
    plain = run_trec_eval(trec_eval_binary, qrels, run)
    cond = run_trec_eval(trec_eval_binary, qrels, run, "-J")
    assert sum(abs(plain[k] - cond[k]) > 1e-6 for k in plain) > 100
    ws = Workspace.load([("bm25", str(run))], str(qrels), LoadSettings(metrics=tuple(parse_metrics("p@10,ap"))))
    pq = ws.per_query("bm25")
    for code in ws.positives.tolist():
        q = ws.qids[code]
        assert pq["p@10"][code] == pytest.approx(plain[("P_10", q)], abs=TOL)
        assert pq["ap"][code] == pytest.approx(plain[("map", q)], abs=TOL)


def test_condense_by_hand(tmp_path):
    """q1: d1 unjudged, d2 relevant, d3 grade -1 (pool, not judged), d4 non-relevant, d5
    relevant. Condensed: d2 d4 d5 at ranks 1-3, so p@2 = 1/2, rr = 1, ap = (1 + 2/3) / 2;
    plain: p@2 = 1/2, rr = 1/2, ap = (1/2 + 2/5) / 2. ``--depth 3`` cuts before condensing
    (trec_eval -M before -J): d2 alone is left, p@2 = 1/2, ap = 1/2."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d2 1\nq1 0 d3 -1\nq1 0 d4 0\nq1 0 d5 1\n")
    run = tmp_path / "run"
    run.write_text("".join(f"q1 Q0 d{i} {i} {10 - i} r\n" for i in range(1, 6)))
    metrics = tuple(parse_metrics("p@2,rr,ap"))
    for condensed, depth, want in ((True, None, (0.5, 1.0, (1 + 2 / 3) / 2)), (False, None, (0.5, 0.5, (0.5 + 0.4) / 2)),
                                   (True, 3, (0.5, 1.0, 0.5))):
        ws = Workspace.load([("r", str(run))], str(qrels), LoadSettings(metrics=metrics, condensed=condensed, depth=depth))
        pq = ws.per_query("r")
        assert (pq["p@2"][0], pq["rr"][0], pq["ap"][0]) == pytest.approx(want), (condensed, depth)


# --------------------------------------------------------------------------- bounds against pytrec_eval


def _read(path: Path, cols: tuple[int, int]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts:
            out.setdefault(parts[0], []).append((parts[cols[0]], parts[cols[1]]))
    return out


def ordered(rows: list[tuple[str, str]]) -> list[str]:
    """trec_eval's order: score descending, ties by doc id descending as bytes."""
    by_doc = sorted(rows, key=lambda r: r[0].encode(), reverse=True)
    return [d for d, _ in sorted(by_doc, key=lambda r: -float(r[1]))]


PYTREC = {"p@10": "P_10", "recall@100": "recall_100", "ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "ap": "map",
          "ndcg": "ndcg", "bpref": "bpref", "hit@10": "success_10", "ap@10": "map_cut_10", "p@5": "P_5"}


def test_bounds_equal_pytrec_eval_on_the_modified_qrels():
    """On Cranfield's three lanes, each bound equals pytrec_eval on the qrels with the lane's
    unjudged hits within the measure's cutoff (top k, or the whole list for an uncut measure)
    added with grade 1 (``as_relevant``) or 0 (``as_nonrelevant``); the holes equal the count
    of those hits, found here from the files alone."""
    import pytrec_eval

    C = shared_path("cranfield")
    lanes = ("bm25", "tfidf", "dense")
    ws = Workspace.load([(n, str(C / "lanes" / f"{n}.run")) for n in lanes], str(C / "qrels-test.txt"),
                        LoadSettings(metrics=tuple(parse_metrics(",".join(PYTREC)))))
    qrels = {q: {d: int(g) for d, g in rows} for q, rows in _read(C / "qrels-test.txt", (2, 3)).items()}
    positives = [ws.qids[c] for c in ws.positives.tolist()]
    for lane in lanes:
        run = {q: ordered(rows) for q, rows in _read(C / "lanes" / f"{lane}.run", (2, 4)).items()}
        scored = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items()}
        cov = ws.judgment_coverage(lane)
        for key, name in PYTREC.items():
            k = ws.settings.metrics[list(PYTREC).index(key)].k
            holes = {q: [d for d in run.get(q, [])[:k] if qrels.get(q, {}).get(d, -1) < 0] for q in qrels}
            for grade, got in ((1, cov.as_relevant[key]), (0, cov.as_nonrelevant[key])):
                modified = {q: {**j, **{d: grade for d in holes[q]}} for q, j in qrels.items()}
                want = pytrec_eval.RelevanceEvaluator(modified, {name}).evaluate(scored)
                for q in positives:
                    c = ws.qid_index[q]
                    assert got[c] == pytest.approx(want[q][name], abs=TOL), (lane, key, grade, q)
            for q in positives:
                assert cov.holes[key][ws.qid_index[q]] == len(holes[q]), (lane, key, q)


def test_bounds_by_hand(tmp_path):
    """q1 ranks u1 (unjudged), r1 (relevant), u2, n1 (non-relevant); R = 2 (r1, r2).
    p@2: 1/2 observed, 2/2 with u1 relevant; recall@4: 1/2 observed, with u1 and u2 relevant
    3/4 (R grows to 4); rr: 1/2 and 1."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 r1 1\nq1 0 r2 1\nq1 0 n1 0\n")
    run = tmp_path / "run"
    run.write_text("".join(f"q1 Q0 {d} {i + 1} {10 - i} r\n" for i, d in enumerate(("u1", "r1", "u2", "n1"))))
    ws = Workspace.load([("r", str(run))], str(qrels), LoadSettings(metrics=tuple(parse_metrics("p@2,recall@4,rr"))))
    cov = ws.judgment_coverage("r")
    assert [int(cov.holes[k][0]) for k in ("p@2", "recall@4", "rr")] == [1, 2, 2]
    assert [float(cov.as_nonrelevant[k][0]) for k in ("p@2", "recall@4", "rr")] == pytest.approx([0.5, 0.5, 0.5])
    assert [float(cov.as_relevant[k][0]) for k in ("p@2", "recall@4", "rr")] == pytest.approx([1.0, 0.75, 1.0])
    assert float(cov.gap("recall@4")[0]) == pytest.approx(0.25)
    np.testing.assert_array_equal(ws.judgment_coverage("r", tuple(parse_metrics("p@2"))).holes["p@2"], [1])


# --------------------------------------------------------------------------- faces


def _write(path: Path, lines) -> str:
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def _hand_case(tmp_path):
    """8 queries; r relevant, n judged non-relevant, u unjudged. The baseline ranks r first
    (rr = 1); the candidate ranks u, then r (rr = 1/2). Observed Δrr = -1/2 on every query;
    with u counted relevant the candidate's rr is 1 and Δ = 0."""
    qs = [f"q{i}" for i in range(8)]
    qrels = _write(tmp_path / "qrels", [f"{q} 0 {d} {g}" for q in qs for d, g in (("r", 1), ("n", 0))])
    base = _write(tmp_path / "base", [f"{q} Q0 {d} {i + 1} {3 - i} b" for q in qs for i, d in enumerate(("r", "n"))])
    cand = _write(tmp_path / "cand", [f"{q} Q0 {d} {i + 1} {3 - i} c" for q in qs for i, d in enumerate(("u", "r"))])
    return qrels, base, cand


def test_compare_warns_when_a_verdict_holds_under_one_bound_only(tmp_path):
    """Hand-worked (``_hand_case``): at the non-relevant bound Δ = -1/2 on all 8 queries
    (exact randomization p = 2/256, the candidate is worse); at the relevant bound Δ = 0 (no
    difference): the verdict holds under one bound only, and the row says so."""
    from rankscope_tui.kernel.instruments.compare import compare
    from rankscope_tui.kernel.instruments.evaluate import prepare
    from rankscope_tui.kernel.settings import CompareSettings

    qrels, base, cand = _hand_case(tmp_path)
    ws = Workspace.load([("base", base), ("cand", cand)], qrels, LoadSettings(metrics=tuple(parse_metrics("rr,p@2"))))
    ws, th = prepare(ws)
    rows = {r.metric: r for r in compare(ws, th, CompareSettings(baseline="base", candidates=("cand",),
                                                                 metrics=("rr", "p@2"))).rows}
    jb = rows["rr"].judgment_bounds
    assert jb is not None and jb.holes_queries == 8
    assert (jb.delta_nonrelevant, jb.delta_relevant) == pytest.approx((-0.5, 0.0))
    assert jb.one_bound_only and jb.verdict_nonrelevant != jb.verdict_relevant
    assert any(n.startswith("the verdict holds under one bound") for n in rows["rr"].notes)
    assert rows["rr"].as_dict()["judgment_bounds"]["one_bound_only"] is True
    # p@2: 1/2 for both lanes observed (Δ = 0); with u relevant the candidate has 2/2 (Δ = +1/2)
    p2 = rows["p@2"].judgment_bounds
    assert (p2.delta_nonrelevant, p2.delta_relevant) == pytest.approx((0.0, 0.5)) and p2.one_bound_only
    # the baseline has no hole: its bounds are its observed values
    bc = ws.judgment_coverage("base")
    assert int(bc.holes["rr"].sum()) == 0 and np.array_equal(bc.as_relevant["rr"], ws.per_query("base")["rr"])


def test_evaluate_prints_and_writes_the_coverage_block(tmp_path):
    """The CLI: evaluate's text has the Judgment coverage lines, report.json the block (the
    hand-worked numbers) and ``settings.condensed``; with ``--condensed`` the candidate's rr
    is 1 (u removed) and the block says the lists are condensed."""
    import json

    from support import run_cli

    qrels, base, cand = _hand_case(tmp_path)
    out = tmp_path / "report.json"
    p = run_cli("evaluate", "--lane", f"base={base}", "--lane", f"cand={cand}", "--qrels", qrels, "--metrics", "rr,p@2",
                "--resamples", "0", "--out", out)
    assert p.returncode == 0, p.stderr
    assert "Judgment coverage (means over 8 positives" in p.stdout
    assert "  cand: rr 1.00 holes, 0.5000..1.0000; p@2 1.00 holes, 0.5000..1.0000" in p.stdout
    report = json.loads(out.read_text())
    assert report["inputs"]["settings"]["condensed"] is False
    cell = report["coverage"]["lanes"]["cand"]["rr"]
    assert cell["holes"] == 1.0 and cell["as_relevant"] == 1.0 and cell["as_nonrelevant"] == 0.5 and cell["gap"] == 0.5
    assert cell["holes_by_query"] == {f"q{i}": 1 for i in range(8)} and cell["cutoff"] == "list"
    assert report["coverage"]["lanes"]["base"]["p@2"]["queries_with_holes"] == 0
    p = run_cli("evaluate", "--lane", f"base={base}", "--lane", f"cand={cand}", "--qrels", qrels, "--metrics", "rr,p@2",
                "--resamples", "0", "--condensed", "--out", out)
    assert p.returncode == 0, p.stderr
    report = json.loads(out.read_text())
    assert report["inputs"]["settings"]["condensed"] is True and report["coverage"]["condensed"] is True
    assert report["per_query"]["cand"]["doc"]["q0"]["rr"] == 1.0
    assert "condensed lists (trec_eval -J)" in p.stdout


def test_condensed_with_per_query_tables_is_refused(tmp_path):
    from support import run_cli

    table = _write(tmp_path / "t.tsv", ["p@10\tq1\t0.5"])
    qrels = _write(tmp_path / "qrels", ["q1 0 d1 1"])
    p = run_cli("evaluate", "--per-query-in", f"a={table}", "--qrels", qrels, "--condensed")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--condensed" in p.stderr


def test_api_coverage_frame_and_condensed(tmp_path):
    import rankscope_tui as rs

    qrels, base, cand = _hand_case(tmp_path)
    ev = rs.evaluate(qrels, {"base": base, "cand": cand}, measures="rr", resamples=0)
    df = ev.coverage()
    c = df[(df.run == "cand") & (df.measure == "rr")]
    assert len(c) == 8 and (c.holes == 1).all() and (c.value == 0.5).all() and (c.as_relevant == 1.0).all()
    assert ev.report()["coverage"]["lanes"]["cand"]["rr"]["gap"] == 0.5
    cond = rs.evaluate(qrels, {"base": base, "cand": cand}, measures="rr", resamples=0, condensed=True)
    assert cond.report()["per_query"]["cand"]["doc"]["q3"]["rr"] == 1.0
    row = rs.compare(qrels, {"base": base, "cand": cand}, measures="rr").rows[0]
    assert row.judgment_bounds.one_bound_only


# --------------------------------------------------------------------------- pool


def test_pool_budget_200_on_cranfield_writes_valid_qrels_of_unjudged_top_k_pairs(tmp_path):
    """``pool --budget 200``: 200 lines ``qid 0 docid -1``, distinct pairs, each unjudged in
    the qrels and inside the top 10 (the largest cutoff asked) of some lane, on a positive
    query (checked from the files alone); the file reads back as qrels through rankscope's
    reader and adds no judged pair; ``--json`` holds the same pairs and a row per lane and
    measure whose holes do not grow."""
    import json

    from support import run_cli

    from rankscope_tui.kernel.inputs.readers import read_qrels

    C = shared_path("cranfield")
    lanes = ("bm25", "tfidf", "dense")
    out, js = tmp_path / "judge.qrels", tmp_path / "pool.json"
    args = ["pool", *[x for n in lanes for x in ("--lane", f"{n}={C / 'lanes' / f'{n}.run'}")],
            "--qrels", str(C / "qrels-test.txt"), "--metrics", "p@10,ndcg@10,recall@5", "--budget", "200"]
    p = run_cli(*args, "--out", out, "--json", js)
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 200
    qrels = {(q, d): int(g) for q, _, d, g in (x.split() for x in (C / "qrels-test.txt").read_text().splitlines())}
    positive = {q for (q, _), g in qrels.items() if g >= 1}
    top = {n: {q: ordered(rows)[:10] for q, rows in _read(C / "lanes" / f"{n}.run", (2, 4)).items()} for n in lanes}
    pairs = []
    for line in lines:
        fields = line.split(" ")
        assert len(fields) == 4 and fields[1] == "0" and fields[3] == "-1", line
        q, d = fields[0], fields[2]
        assert qrels.get((q, d), -1) < 0, line  # unjudged
        assert q in positive, line
        assert any(d in top[n].get(q, []) for n in lanes), line
        pairs.append((q, d))
    assert len(set(pairs)) == 200
    raw = read_qrels(str(out))
    assert len(raw.qid) == 200 and set(np.asarray(raw.grade).tolist()) == {-1}
    ws = Workspace.load([("bm25", str(C / "lanes" / "bm25.run"))], str(out), LoadSettings())
    assert int((ws.judgments.grade >= 0).sum()) == 0  # nothing in it counts as judged
    d = json.loads(js.read_text())
    assert [(x["qid"], x["doc"]) for x in d["pairs"]] == pairs and d["candidates"] >= 200
    assert {"p@10", "ndcg@10", "recall@5"} <= set(d["metrics"]) and len(d["changes"]) == 3 * len(d["metrics"])
    assert all(c["holes_after"] <= c["holes_before"] and c["gap_after"] <= c["gap_before"] + 1e-12 for c in d["changes"])
    assert sum(c["holes_before"] - c["holes_after"] for c in d["changes"]) > 0
    # the same inputs give the same bytes
    p2 = run_cli(*args, "--out", tmp_path / "again.qrels")
    assert p2.returncode == 0 and (tmp_path / "again.qrels").read_bytes() == out.read_bytes()


def _judged(j, pairs, truth):
    """``j`` with each (qid code, doc code) of ``pairs`` given its grade in ``truth`` (0 when
    the full qrels do not hold it)."""
    from rankscope_tui.kernel.measures.coverage import with_pairs

    by_grade: dict[int, list[tuple[int, int]]] = {}
    for p in pairs:
        by_grade.setdefault(truth.get(p, 0), []).append(p)
    for g, ps in sorted(by_grade.items()):
        a = np.asarray(ps, dtype=np.int64)
        j = with_pairs(j, a[:, 0], a[:, 1], g)
    return j


def test_judging_the_suggested_pairs_narrows_the_bounds_more_than_random_pairs(tmp_path):
    """Simulation: half of Cranfield's test judgments (seed 7) are hidden and serve as the
    truth. With the visible half, ``pool`` suggests 200 pairs; judging them from the truth
    (a pair the full qrels lack is non-relevant) leaves a smaller total bound gap (sum over
    lanes and measures of the mean gap over the visible positives) than judging 200 pairs
    drawn at random from the same candidates (depth-k pooling's set), for each of 5 seeds."""
    import random

    from rankscope_tui.kernel.instruments.pool import suggest
    from rankscope_tui.kernel.measures.coverage import hole_rows, lane_coverage
    from rankscope_tui.kernel.settings import PoolSettings

    C = shared_path("cranfield")
    full = [x.split() for x in (C / "qrels-test.txt").read_text().splitlines()]
    rng = random.Random(7)
    visible = [x for x in full if rng.random() < 0.5]
    qrels = tmp_path / "visible.qrels"
    qrels.write_text("".join(" ".join(x) + "\n" for x in visible))
    lanes = ("bm25", "tfidf", "dense")
    metrics = tuple(parse_metrics("p@10,ndcg@10,recall@10,hit@10"))
    ws = Workspace.load([(n, str(C / "lanes" / f"{n}.run")) for n in lanes], str(qrels), LoadSettings(metrics=metrics))
    idx, docs = ws.qid_index, {str(d): i for i, d in enumerate(ws.docs)}
    truth = {(idx[q], docs[d]): int(g) for q, _, d, g in full if q in idx and d in docs}
    pos = ws.positives

    def total_gap(j) -> float:
        return sum(float(lane_coverage(ws.lanes[n], j, metrics, ws.n_queries, 1).gap(m.key)[pos].mean())
                   for n in lanes for m in metrics)

    result = suggest(ws, PoolSettings(budget=200))
    chosen = [(idx[p.qid], docs[p.doc]) for p in result.pairs]
    before, suggested = total_gap(ws.judgments), total_gap(_judged(ws.judgments, chosen, truth))
    positive = np.zeros(ws.n_queries, dtype=bool)
    positive[pos] = True
    candidates = set()
    for n in lanes:
        L = ws.lanes[n]
        rows = np.flatnonzero(hole_rows(L, ws.judgments.grade_of(L.qid, L.doc), 10) & positive[L.qid])
        candidates |= set(zip(L.qid[rows].tolist(), L.doc[rows].tolist()))
    assert set(chosen) <= candidates and len(candidates) == result.candidates
    randoms = []
    for seed in range(5):
        picked = random.Random(seed).sample(sorted(candidates), 200)
        randoms.append(total_gap(_judged(ws.judgments, picked, truth)))
    print(f"total bound gap: before {before:.4f}, suggested {suggested:.4f}, random {[round(r, 4) for r in randoms]}")
    assert suggested < min(randoms) < before


def test_pool_bad_input_is_one_line_exit_2(tmp_path):
    from support import run_cli

    qrels, base, cand = _hand_case(tmp_path)
    for extra, words in ((["--budget", "0"], "--budget"), (["--pool-lane", "nope"], "unknown lane 'nope'"),
                         (["--metrics", "rr"], "cutoff"), (["--condensed"], "--condensed")):
        p = run_cli("pool", "--lane", f"base={base}", "--qrels", qrels, *extra, "--out", tmp_path / "x.qrels")
        assert p.returncode == 2, (extra, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and words in p.stderr, p.stderr
        assert not (tmp_path / "x.qrels").exists()


def test_api_pool_equals_the_command_line(tmp_path):
    """``rs.pool`` gives the pairs ``pool --json`` writes, and ``pool_qrels`` the --out file."""
    import json

    from support import run_cli

    import rankscope_tui as rs

    qrels, base, cand = _hand_case(tmp_path)
    got = rs.pool(qrels, {"base": base, "cand": cand}, budget=5, measures="p@2,rr@2")
    p = run_cli("pool", "--lane", f"base={base}", "--lane", f"cand={cand}", "--qrels", qrels, "--metrics", "p@2,rr@2",
                "--budget", "5", "--json", tmp_path / "p.json", "--out", tmp_path / "p.qrels")
    assert p.returncode == 0, p.stderr
    assert got == json.loads((tmp_path / "p.json").read_text())
    assert rs.pool_qrels(got) == (tmp_path / "p.qrels").read_text()
    # every candidate's u is the only hole of its query (equal shares): ties by rank, then query id
    assert [(x["qid"], x["doc"]) for x in got["pairs"]] == [(f"q{i}", "u") for i in range(5)]
    assert got["candidates"] == 8


def test_compare_bounds_cover_a_measure_outside_the_workspace_set(tmp_path):
    """A compared measure the workspace was not loaded with (ap here) gets its bounds too."""
    import rankscope_tui as rs

    qrels, base, cand = _hand_case(tmp_path)
    row = rs.compare(qrels, {"base": base, "cand": cand}, measures="ap").rows[0]
    jb = row.judgment_bounds
    # ap = rr here (one relevant doc): 1 vs 1/2 observed, 1 vs 1 with u relevant (R grows to 2:
    # the candidate's ap is (1/1 + 2/2) / 2 = 1)
    assert jb is not None and (jb.delta_nonrelevant, jb.delta_relevant) == pytest.approx((-0.5, 0.0))
