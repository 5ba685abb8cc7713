"""Query-id buckets (kernel/scale/bucket.py) against the in-memory path, byte for byte.

report.json (``output.dumps_strict``, what ``evaluate --out`` writes) and the per-query CSV
(``render.report.per_query_csv``) computed in 1 and in 7 buckets by the in-process engine
(``bucket.evaluate_in_process``) must equal ``pipeline.evaluate_report`` on the whole
workspace, on the demo, the Cranfield set and generated runs with ties, missing queries,
negatives, partial and unjudged queries, lane-only queries, duplicate qrels lines and
comment lines (so file lines are not row numbers). The in-memory side of the demo case
is the file the CLI writes.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from support import run_cli, shared_path

from rankscope_tui.commands import build_parser
from rankscope_tui.commands.options import gate_options, settings_from
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.instruments.evaluate import evaluate_report
from rankscope_tui.kernel.report.output import dumps_strict
from rankscope_tui.kernel.scale import bucket as B
from rankscope_tui.kernel.workspace.loaded import Sources, load, read_inputs
from rankscope_tui.render.report import per_query_csv

BUCKETS = (1, 7)


# --------------------------------------------------------------------------- inputs


def _sources(argv: list[str]):
    """(Sources, GateSettings, thresholds path) exactly as ``rankscope evaluate ARGV`` builds them."""
    args = build_parser().parse_args(["evaluate", *map(str, argv)])
    src = Sources(tuple(args.lane), args.qrels, settings_from(args), tuple(args.strata), args.corpus,
                  tuple(args.queries), tuple(args.docs), args.ood_negatives)
    return src, gate_options(args), args.thresholds


def _in_memory(argv):
    src, gate, th = _sources(argv)
    return evaluate_report(load(src), gate, th)


def _assert_same(argv, buckets=BUCKETS):
    src, gate, th = _sources(argv)
    want = evaluate_report(load(src), gate, th)
    want_json, want_csv = dumps_strict(want), per_query_csv(want)
    for n in buckets:
        got = B.evaluate_in_process(src, n, gate, th)
        assert dumps_strict(got) == want_json, f"report.json differs with {n} buckets"
        assert per_query_csv(got) == want_csv, f"per-query CSV differs with {n} buckets"
    return want


def _generate(out: Path, seed: int = 3, n_queries: int = 240) -> dict:
    """Three lanes and qrels with what the bucket merge must get right: exact score ties,
    queries missing from one lane and from every lane, negatives (grade 0 only), partial
    queries at --relevant 2, unjudged queries (negative grades only), queries only in the
    lanes, identical duplicate qrels lines, comment and blank lines, lines with extra fields
    (a reader's warning), qids whose byte order
    is not their numeric or insertion order, and grouped doc ids (DOC#PASSAGE)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    qids = [str(i) for i in range(1, n_queries // 2)] + [f"q{i}" for i in range(n_queries // 4)] + \
           [f"é{i}" for i in range(n_queries // 8)] + [f"Z{i}" for i in range(n_queries - n_queries // 2 + 1 - n_queries // 4 - n_queries // 8)]
    rng.shuffle(qids)
    docs = [f"d{g}#p{p}" for g in range(60) for p in range(4)]
    qrels, ood, strata = [], [], []
    kinds = {}
    for i, q in enumerate(qids):
        kind = ("negative" if i % 11 == 0 else "unjudged" if i % 17 == 0 else "partial" if i % 13 == 0 else
                "lane_only" if i % 19 == 0 else "ood" if i % 23 == 0 else "positive")
        kinds[q] = kind
        judged = rng.sample(docs, rng.randint(1, 8))
        for j, d in enumerate(judged):
            g = {"negative": 0, "unjudged": -1, "partial": rng.choice([0, 1]), "ood": 0}.get(kind, rng.choice([0, 1, 2, 3]))
            if kind == "positive" and j == 0:
                g = max(g, 2)
            line = f"{q} 0 {d} {g}"
            if kind == "ood":
                ood.append(line)
            elif kind != "lane_only":
                qrels.append(line)
                if i % 29 == 0 and j == 0:
                    qrels.append(line)  # an identical duplicate line
        if i % 3:
            strata.append(f"{q}\t{'short' if i % 2 else 'long'}")
        kinds[q] = (kind, judged)
    rng.shuffle(qrels)
    qrels.insert(5, "# a comment line")
    (out / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (out / "ood.txt").write_text("\n".join(ood) + "\n")
    (out / "strata.tsv").write_text("\n".join(strata) + "\n")
    (out / "corpus.tsv").write_text("\n".join(d for d in docs if not d.startswith("d1#")) + "\n")
    missing_everywhere = {q for i, q in enumerate(qids) if i % 31 == 5}
    lanes = {}
    for li, name in enumerate(("alpha", "beta", "gamma")):
        lines = ["# run " + name, ""]
        for i, q in enumerate(qids):
            if q in missing_everywhere or (i + li) % 9 == 0:
                continue  # absent from this lane (or from every lane)
            kind, judged = kinds[q]
            hits = rng.sample(docs, rng.randint(1, 30))
            if rng.random() < 0.6:
                hits = list(dict.fromkeys(judged[:2] + hits))
            rank = 0
            for d in hits:
                rank += 1
                score = round(rng.uniform(0, 3), 1) if name != "gamma" else float(rng.randint(0, 4))  # many ties
                lines.append(f"{q} Q0 {d} {rank} {score} {name}" + (" extra" if name == "beta" and i % 37 == 3 else ""))
            if i % 7 == 0:
                lines.append("")
        (out / f"{name}.run").write_text("\n".join(lines) + "\n")
        lanes[name] = out / f"{name}.run"
    return {"lanes": lanes, "qrels": out / "qrels.txt", "ood": out / "ood.txt", "strata": out / "strata.tsv",
            "corpus": out / "corpus.tsv", "missing": sorted(missing_everywhere), "kinds": kinds}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    return _generate(tmp_path_factory.mktemp("generated"))


def _lane_args(lanes: dict) -> list[str]:
    return [a for name, p in lanes.items() for a in ("--lane", f"{name}={p}")]


# --------------------------------------------------------------------------- the hash


def test_bucket_of_is_the_documented_md5_prefix():
    """The formula the SQL partitioners reproduce: the first 60 bits of md5(utf8 qid)."""
    qids = ["1", "10", "q7", "é1", "Z", "", "a b", "x" * 300]
    for n in (1, 2, 7, 64):
        for q in qids:
            first60 = int.from_bytes(hashlib.md5(q.encode("utf-8")).digest()[:8], "big") >> 4
            assert B.bucket_of(q, n) == first60 % n
        assert B.buckets_of(pa.array(qids), n).tolist() == [B.bucket_of(q, n) for q in qids]
    assert B.SQL_BUCKET.format(qid="qid", n=7) == "(('0x' || substr(md5(qid), 1, 15))::BIGINT % 7)"


# --------------------------------------------------------------------------- byte for byte


def test_demo_defaults_match_the_file_evaluate_writes(demo_dir, tmp_path):
    argv = ["--lane", f"lexical={demo_dir / 'lexical.run'}", "--lane", f"dense={demo_dir / 'dense.run'}",
            "--qrels", demo_dir / "qrels-test.txt", "--resamples", "999"]
    out, pq = tmp_path / "report.json", tmp_path / "pq.csv"
    r = run_cli("evaluate", *argv, "--out", out, "--per-query", pq)
    assert r.returncode == 0, r.stderr
    src, gate, th = _sources(argv)
    for n in BUCKETS:
        got = B.evaluate_in_process(src, n, gate, th)
        assert dumps_strict(got).encode("utf-8") == out.read_bytes()
        assert per_query_csv(got).encode("utf-8") == pq.read_bytes()


def test_demo_with_strata_negatives_corpus_and_gate(demo_dir):
    d = demo_dir
    report = _assert_same(["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}",
                           "--qrels", d / "qrels-test.txt", "--strata", d / "strata.tsv",
                           "--ood-negatives", d / "qrels-ood-negatives.txt", "--corpus", d / "corpus.tsv",
                           "--gate-on", "dense", "--margin", "0.01", "--resamples", "999"])
    assert not report["gate"].get("skipped") and report["attribution"]["doc"]["coverage"]["assessed"]


def test_demo_groups_variants_and_thresholds(demo_dir, tmp_path):
    d = demo_dir
    lanes = ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}"]
    th = tmp_path / "thresholds.json"
    r = run_cli("calibrate", *lanes, "--qrels", d / "qrels-dev.txt", "--gate-on", "dense", "--out", th,
                "--resamples", "99")
    assert r.returncode == 0, r.stderr
    report = _assert_same([*lanes, "--qrels", d / "qrels-test.txt", "--thresholds", th, "--strata", d / "strata.tsv",
                           "--ood-negatives", d / "qrels-ood-negatives.txt", "--resamples", "999"])
    assert "convex" in report["lanes"] and report["gate"]["applied"]
    _assert_same([*lanes, "--qrels", d / "qrels-test.txt", "--group-sep", "#", "--cap", "1", "--document-first",
                  "--depth", "50", "--strata", d / "strata.tsv", "--blind", "no-overlap", "--gate-on", "rrf",
                  "--metrics", "ndcg@10,rr,recall@100,p@10,ap,bpref,judged@10", "--resamples", "999"])


def test_cranfield():
    c = shared_path("cranfield")
    lanes = _lane_args({n: c / "lanes" / f"{n}.run" for n in ("bm25", "tfidf", "dense")})
    _assert_same([*lanes, "--qrels", c / "qrels-test.txt", "--strata", c / "strata.tsv", "--strata",
                  c / "strata-length.tsv", "--ood-negatives", c / "qrels-ood-negatives.txt", "--corpus",
                  c / "passages.tsv", "--resamples", "999"])
    _assert_same(["--lane", f"bm25={c / 'lanes' / 'bm25.run'}", "--qrels", c / "qrels-dev.txt", "--ood-negatives",
                  c / "qrels-ood-negatives.txt", "--margin", "0.5", "--fpir", "0.1", "--resamples", "999"])
    want, got = _calibrate_both([*lanes, "--qrels", c / "qrels-dev.txt", "--ood-negatives", c / "qrels-ood-negatives.txt",
                                 "--gate-on", "bm25", "--resamples", "99"])
    assert got == want and '"convex"' in want


def test_generated_runs_with_ties_missing_queries_and_negatives(generated):
    g = generated
    report = _assert_same([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"],
                           "--resamples", "999"])
    kinds = {w["kind"] for w in report["summary"]["warnings"]}
    assert {"duplicate_qrels_lines", "lane_queries_without_judgments", "positives_missing_from_lane",
            "unjudged_queries", "extra_columns"} <= kinds
    assert report["summary"]["negatives"] > 0 and report["summary"]["unjudged"] > 0


def test_generated_with_every_bucketable_option(generated):
    g = generated
    _assert_same([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--strata", g["strata"], "--ood-negatives", g["ood"],
                  "--corpus", g["corpus"], "--relevant", "2", "--group-sep", "#", "--cap", "2", "--document-first",
                  "--depth", "12", "--window", "5", "--blind", "short", "--gate-on", "gamma", "--margin", "0.5",
                  "--rrf-k", "7", "--seed", "11", "--resamples", "499"])


def test_a_relevance_level_above_every_grade_is_said_once(generated):
    """rel=9 is above every grade of the whole qrels (the highest is 3): one warning, in the
    place the in-memory path gives it, whichever buckets hold the high grades."""
    g = generated
    report = _assert_same([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--metrics", "p(rel=9)@5,p(rel=3)@5,rr",
                           "--resamples", "0"])
    said = [w for w in report["summary"]["warnings"] if w["kind"] == "relevance_level_unreached"]
    assert [w["message"] for w in said] == [
        "p(rel=9)@5: no judged doc has grade >= 9 (the highest grade is 3); it is 0 on every query"]
    assert report["summary"]["warnings"][-1] == said[0]


def test_the_mutual_condition_from_one_row_per_query(demo_dir, generated, tmp_path):
    d, g = demo_dir, generated
    lanes = ["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}"]
    report = _assert_same([*lanes, "--qrels", d / "qrels-test.txt", "--ood-negatives", d / "qrels-ood-negatives.txt",
                           "--strata", d / "strata.tsv", "--gate-on", "dense", "--mutual", "2", "--resamples", "99"])
    assert report["gate"]["mutual"]["built_from"] > 0
    th = tmp_path / "thresholds.json"
    r = run_cli("calibrate", *lanes, "--qrels", d / "qrels-dev.txt", "--gate-on", "lexical", "--mutual", "3",
                "--out", th, "--resamples", "99")
    assert r.returncode == 0, r.stderr
    _assert_same([*lanes, "--qrels", d / "qrels-test.txt", "--thresholds", th, "--resamples", "99"])
    _assert_same([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--ood-negatives", g["ood"], "--gate-on", "gamma",
                  "--mutual", "1", "--margin", "0.5", "--depth", "8", "--resamples", "99"])


def test_mutual_of_tops_is_mutual_nn_under_the_count_rule(generated):
    """The one-row-per-query lists (what the driver builds) against the row-level
    reverse lists of ``gate.mutual_nn`` (hand-worked in test_gate.py)."""
    from rankscope_tui.kernel import gate as G

    g = generated
    src, _, _ = _sources([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--ood-negatives", g["ood"]])
    ws = load(src)
    rng = np.random.default_rng(1)
    for lane in ws.input_lanes:
        for among in (ws.classes > 0, rng.random(ws.n_queries) < 0.5, np.arange(ws.n_queries)):
            a, b = G.mutual_nn(ws.lanes[lane], among, tie_rule="count"), ws.mutual(lane, among)
            assert np.array_equal(a.position, b.position) and np.array_equal(a.list_size, b.list_size)
            assert np.array_equal(a.among, b.among) and a.n_queries == b.n_queries and a.tie_rule == b.tie_rule


def test_single_lane_gate_with_many_empty_buckets(generated, tmp_path):
    """Three queries in 7 buckets: most buckets are empty; one lane, so it is gated."""
    g = generated
    keep = ("1", "q1", "é1")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(l + "\n" for l in g["qrels"].read_text().splitlines() if l.split(" ")[0] in keep))
    run = tmp_path / "one.run"
    run.write_text("".join(l + "\n" for l in g["lanes"]["alpha"].read_text().splitlines() if l.split(" ")[0] in keep))
    _assert_same(["--lane", run, "--qrels", qrels, "--resamples", "99"])


# --------------------------------------------------------------------------- the merge


def _buckets(g, n: int, argv_extra=()):
    src, gate, th = _sources([*_lane_args(g["lanes"]), "--qrels", g["qrels"], *argv_extra])
    p = B.plan(src, gate, th)
    raw_lanes, raw_q, raw_ood = read_inputs(list(src.lanes), src.qrels, src.settings, src.ood_negatives)
    facts = {r.path: B.file_facts(r) for r in [*raw_lanes, raw_q]}
    return src, gate, p, facts, B.partition(raw_lanes, raw_q, n, raw_ood)


def test_a_query_in_two_buckets_is_refused(generated):
    _, _, p, _, parts = _buckets(generated, 3)
    results = [B.run_bucket(lanes, q, p, o) for lanes, q, o in parts]
    with pytest.raises(InputError, match="is in two buckets"):
        B.merge(results + [results[1]])


def test_a_judged_query_absent_from_every_run_scores_zero(generated):
    """Its bucket holds only qrels rows (no lane has a row of it): it is merged in, a
    positive scored 0 in every lane, as in memory."""
    g = generated
    src, gate, p, facts, parts = _buckets(g, 1)
    (lanes, qrels, _), = parts
    absent = [q for q in g["missing"] if g["kinds"][q][0] == "positive"]
    assert absent
    mask = np.isin(np.asarray(qrels.column("qid").to_pylist(), dtype=object), absent)
    only = B.run_bucket({}, qrels.filter(pa.array(mask)), p)  # no lane table at all
    rest = B.run_bucket({n: t for n, t in lanes.items()}, qrels.filter(pa.array(~mask)), p)
    report = B.evaluate_merged(B.merge([rest, only]), p, facts, gate)
    assert dumps_strict(report) == dumps_strict(evaluate_report(load(src), gate, None))
    for lane in ("alpha", "beta", "gamma", "rrf"):
        for q in absent:
            row = report["per_query"][lane]["doc"][q]
            assert row["rank"] == 0 and all(v == 0.0 for k, v in row.items() if k != "rank")
    assert report["summary"]["judged_queries_missing_from_any_lane"]["missing_from_any"] >= len(absent)


def test_row_order_within_a_bucket_does_not_matter(generated):
    src, gate, p, facts, parts = _buckets(generated, 2)
    rng = np.random.default_rng(5)
    shuffled = []
    for lanes, q, o in parts:
        lanes = {n: t.take(pa.array(rng.permutation(t.num_rows))) for n, t in lanes.items()}
        shuffled.append(B.run_bucket(lanes, q.take(pa.array(rng.permutation(q.num_rows))), p, o))
    report = B.evaluate_merged(B.merge(shuffled[::-1]), p, facts, gate)
    assert dumps_strict(report) == dumps_strict(evaluate_report(load(src), gate, None))


# --------------------------------------------------------------------------- refusals


def test_options_that_do_not_split_by_query_are_refused(generated, tmp_path):
    g = generated
    lanes = _lane_args(g["lanes"])
    src, gate, th = _sources([*lanes, "--qrels", g["qrels"], "--queries", g["strata"]])
    with pytest.raises(InputError, match="--queries"):
        B.plan(src, gate, th)
    src, gate, th = _sources(["--lane", f"ab={g['lanes']['alpha']},{g['lanes']['beta']}", "--qrels", g["qrels"]])
    with pytest.raises(InputError, match="shard"):
        B.plan(src, gate, th)


def test_a_duplicate_doc_in_a_bucket_names_file_and_line(generated, tmp_path):
    g = generated
    run = tmp_path / "dup.run"
    lines = g["lanes"]["alpha"].read_text().splitlines()
    first = next(l for l in lines if l and not l.startswith("#"))
    run.write_text("\n".join(lines + [first]) + "\n")
    src, gate, th = _sources(["--lane", run, "--qrels", g["qrels"]])
    with pytest.raises(InputError) as mem:
        load(src)
    with pytest.raises(InputError) as buck:
        B.evaluate_in_process(src, 7, gate, th)
    assert str(buck.value) == str(mem.value)


# --------------------------------------------------------------------------- compare


def _compare_payloads(argv, compare_argv):
    """``compare --out``'s JSON in memory and from 7 buckets (the driver's QueryWorkspace)."""
    from rankscope_tui.kernel.instruments.compare import compare, compare_all_pairs
    from rankscope_tui.kernel.instruments.evaluate import prepare
    from rankscope_tui.kernel.settings import CompareSettings
    from rankscope_tui.kernel.workspace.loaded import read_inputs
    from rankscope_tui.render.sentences import with_sentences

    args = build_parser().parse_args(["compare", *map(str, argv), *compare_argv])
    src = Sources(tuple(args.lane), args.qrels, settings_from(args), tuple(args.strata), args.corpus)
    settings = CompareSettings(baseline=args.baseline, candidates=tuple(args.candidate), level=args.level,
                               **({"metrics": tuple(args.metric)} if args.metric else {}))
    run = (lambda ws, th: compare_all_pairs(ws, th, settings).as_dict()) if args.all_pairs else \
        (lambda ws, th: with_sentences(compare(ws, th, settings).as_dict()))
    want = run(*prepare(load(src), args.thresholds))
    p = B.plan(src, None, args.thresholds, metrics=settings.metrics)
    raw_lanes, raw_q, _ = read_inputs(list(src.lanes), src.qrels, src.settings)
    facts = {r.path: B.file_facts(r) for r in [*raw_lanes, raw_q]}
    merged = B.merge(B.run_bucket(lanes, q, p, o) for lanes, q, o in B.partition(raw_lanes, raw_q, 7))
    got = run(B.QueryWorkspace(merged, p, facts), p.thresholds)
    return dumps_strict(want), dumps_strict(got)


def test_compare_on_buckets_is_compare_in_memory(generated):
    g = generated
    base = [*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--resamples", "999", "--group-sep", "#"]
    for extra in ([], ["--metric", "ap", "--metric", "rr", "--level", "group", "--candidate", "rrf"],
                  ["--all-pairs", "--metric", "ndcg@10"]):
        want, got = _compare_payloads(base, extra)
        assert got == want, extra


# --------------------------------------------------------------------------- calibrate


def _calibrate_both(argv, step="0.1", objective="ndcg@10"):
    """thresholds.json's content in memory and from 7 buckets."""
    from rankscope_tui.kernel import calibrate
    from rankscope_tui.kernel.settings import CalibrationSettings

    args = build_parser().parse_args(["calibrate", *map(str, argv), "--out", "unused.json", "--step", step,
                                      "--objective", objective])
    src = Sources(tuple(args.lane), args.qrels, settings_from(args), tuple(args.strata), args.corpus,
                  ood_negatives=args.ood_negatives)
    gate, cal = gate_options(args), CalibrationSettings(step=args.step, objective=args.objective)
    want = calibrate(load(src), gate, cal)
    p = B.plan(src, gate, None, calibration=cal)
    raw_lanes, raw_q, raw_ood = read_inputs(list(src.lanes), src.qrels, src.settings, src.ood_negatives)
    facts = {r.path: B.file_facts(r) for r in [*raw_lanes, raw_q] + ([raw_ood] if raw_ood else [])}
    merged = B.merge(B.run_bucket(lanes, q, p, o) for lanes, q, o in B.partition(raw_lanes, raw_q, 7, raw_ood))
    got = calibrate(B.QueryWorkspace(merged, p, facts), gate, cal)
    return dumps_strict(want), dumps_strict(got)


def test_calibrate_on_buckets_is_calibrate_in_memory(demo_dir, generated):
    d, g = demo_dir, generated
    want, got = _calibrate_both(["--lane", f"lexical={d / 'lexical.run'}", "--lane", f"dense={d / 'dense.run'}",
                                 "--qrels", d / "qrels-dev.txt", "--gate-on", "dense", "--resamples", "99"])
    assert got == want and '"convex"' in want and '"gate"' in want
    want, got = _calibrate_both([*_lane_args(g["lanes"]), "--qrels", g["qrels"], "--ood-negatives", g["ood"],
                                 "--gate-on", "rrf", "--depth", "20", "--resamples", "99"], step="0.25", objective="rr")
    assert got == want and '"convex"' in want


def test_the_gate_lanes_top_scores_come_back_whole(generated):
    """Every field of the gate lane's TopScores (top docs as doc ids) and the other
    per-query extractions equal the in-memory workspace's."""
    g = generated
    src, gate, p, facts, parts = _buckets(g, 7, ["--gate-on", "beta", "--corpus", g["corpus"]])
    merged = B.merge(B.run_bucket(lanes, q, p, o) for lanes, q, o in parts)
    qws = B.QueryWorkspace(merged, p, facts)
    from rankscope_tui.kernel.instruments.evaluate import prepare

    ws, _ = prepare(load(src))
    assert qws.qids.tolist() == ws.qids.tolist() and qws.classes.tolist() == ws.classes.tolist()
    a, b = ws.top_scores("beta"), qws.top_scores("beta")
    for f in ("present", "n_hits", "top", "second", "margin", "top_relevant", "first_relevant_score",
              "first_relevant_rank"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    docs_a = [ws.doc_id(d) if d >= 0 else None for d in a.top_doc.tolist()]
    top_b = merged.queries.column("gate/top_doc").to_pylist()
    assert docs_a == top_b and np.array_equal(a.top_doc < 0, b.top_doc < 0)
    for x, y in zip(ws.coverage(), qws.coverage()):
        assert np.array_equal(x, y)
    for lane in ws.lanes:
        assert np.array_equal(ws.present(lane), qws.present(lane)) and np.array_equal(ws.top_relevant(lane),
                                                                                      qws.top_relevant(lane))


def test_the_readme_example_runs(demo_dir, tmp_path, monkeypatch):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Query buckets", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "demo").symlink_to(demo_dir, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # its last line asserts the two reports are equal
    assert scope["report"]["per_query"]


def test_lane_names_are_checked_as_the_readers_check_them(generated, tmp_path):
    g = generated
    bad = tmp_path / "a.b.run"
    bad.write_text(g["lanes"]["alpha"].read_text())
    for argv in (["--lane", f"x={g['lanes']['alpha']}", "--lane", f"x={g['lanes']['beta']}"],
                 ["--lane", f"rrf={g['lanes']['alpha']}"], ["--lane", f"a+b={g['lanes']['alpha']}"], ["--lane", bad]):
        src, gate, th = _sources([*argv, "--qrels", g["qrels"]])
        with pytest.raises(InputError) as mem:
            load(src)
        with pytest.raises(InputError) as buck:
            B.plan(src, gate, th)
        assert str(buck.value) == str(mem.value)
