"""Per-query parity with pytrec_eval-terrier on generated TREC files (SPEC §3).

The oracle is pytrec_eval's C core (trec_eval 9.x). Inputs are generated with a
seeded numpy generator and stress everything the trec_eval ordering and parsing
rules touch: exact score ties, doc ids whose byte order differs from their numeric
order (``d9`` vs ``d10``), negative and zero grades, judged queries missing from a
lane, lane queries without judgments, lists shorter than k, scores in scientific
notation, a shuffled rank column and file order, and tab/space separators.

Depth cuts: pytrec_eval has no ``-M``, so it is fed the run cut by the test itself
(score descending, doc id descending as bytes, as trec_eval's ``comp_sim_docno``).

Group level: compared with the equivalent trec_eval construction of SPEC §3 — the
first occurrence of a group in a list gets the group's id, each later occurrence a
fresh unjudged id, qrels become group grades (max grade >= 0 per group) — scored by
pytrec_eval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Workspace

KS = (1, 3, 5, 10, 20)
OURS = ",".join([f"ndcg@{k}" for k in KS] + ["rr"] + [f"p@{k}" for k in KS] + [f"recall@{k}" for k in KS] + [f"hit@{k}" for k in KS])
PYTREC_MEASURES = {f"ndcg_cut.{','.join(map(str, KS))}", "recip_rank", f"P.{','.join(map(str, KS))}",
                   f"recall.{','.join(map(str, KS))}", f"success.{','.join(map(str, KS))}"}
TOL = 1e-9


def pytrec_name(key: str) -> str:
    if key == "rr":
        return "recip_rank"
    kind, k = key.split("@")
    return {"ndcg": "ndcg_cut", "p": "P", "recall": "recall", "hit": "success"}[kind] + f"_{k}"


# ------------------------------------------------------------------ generation


def _score_text(rng: np.random.Generator) -> str:
    """A score as text: a few exact values (ties) written in several notations, or a continuous one."""
    if rng.random() < 0.15:
        return repr(float(rng.normal()))
    v = int(rng.integers(-4, 21)) / 4.0  # exactly representable: ties compare equal however written
    form = int(rng.integers(0, 6))
    if form == 0:
        return repr(v)
    if form == 1:
        return f"{v:e}"  # 1.250000e+00
    if form == 2:
        return f"{v:.3E}"  # 1.250E+00
    if form == 3:
        return f"{v * 1000:g}e-3"  # 1250e-3
    if form == 4 and v == int(v):
        return str(int(v))
    return f"{v:.6f}"


def _doc_pool(rng: np.random.Generator, group_sep: bool) -> list[str]:
    if group_sep:
        pool = []
        for g in range(1, 9):
            for p in range(1, int(rng.integers(2, 5)) + 1):
                pool.append(f"D{g}#p{p}")
        pool += ["D3", "D10", "D9#p1#x", "E1"]  # an id without '#' is its own group; D3 shares group D3
        return pool
    # byte order differs from numeric order, upper case sorts before lower case
    return [f"d{i}" for i in range(1, 31)] + ["D5", "D50", "doc-7", "x", "X9", "aa", "a"]


def generate(seed: int, group_sep: bool = False, clean: bool = False):
    """(qrels dict, [lane dicts], [lane texts]). Lane dicts hold the float each score text parses to.

    ``clean``: each lane file uses one separator throughout (lane 0 a tab, lane 1 a
    single space), the shape of most real run files (and of the reader's fast path).
    """
    rng = np.random.default_rng(seed)
    pool = _doc_pool(rng, group_sep)
    judged_qids = ["1", "2", "10", "q9", "q10", "Q3", "300", "31", "a", "b", "c", "d"]
    qrels: dict[str, dict[str, int]] = {}
    grades = np.array([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4])
    for q in judged_qids:
        n = int(rng.integers(1, 16))
        docs = rng.choice(pool, size=min(n, len(pool)), replace=False)
        qrels[q] = {str(d): int(rng.choice(grades)) for d in docs}
    # make sure of every class: a sure positive at level 2, a negative, an unjudged-only query
    qrels["1"][pool[0]] = 3
    qrels["c"] = {pool[1]: 0, pool[2]: -1}
    qrels["d"] = {pool[3]: -1}
    lanes, texts = [], []
    for lane_i in range(2):
        present = [q for q in judged_qids if rng.random() > 0.2]  # some judged queries missing
        if "1" not in present:
            present.append("1")
        present += ["zz", "999"]  # lane queries without judgments
        lane: dict[str, dict[str, tuple[str, float]]] = {}
        lines = []
        for q in present:
            n = int(rng.integers(1, 26))  # many lists shorter than k = 10 or 20
            docs = rng.choice(pool, size=min(n, len(pool)), replace=False)
            # bias towards judged docs so metrics are non-trivial
            judged = list(qrels.get(q, {}))
            if judged and rng.random() < 0.8:
                extra = rng.choice(judged, size=min(len(judged), int(rng.integers(1, 6))), replace=False)
                docs = list(dict.fromkeys([*map(str, extra), *map(str, docs)]))
            ranks = rng.permutation(len(docs)) + 1  # the rank column is noise
            lane[q] = {}
            for d, r in zip(docs, ranks):
                text = _score_text(rng)
                lane[q][str(d)] = (text, float(text))
                sep = ("\t", " ")[lane_i] if clean else [" ", "\t", "  ", " \t "][int(rng.integers(0, 4))]
                lines.append(sep.join([q, "Q0", str(d), str(int(r)), text, f"run{lane_i}"]))
        order = rng.permutation(len(lines))
        texts.append("\n".join(lines[i] for i in order) + "\n")
        lanes.append({q: {d: v for d, (_, v) in hits.items()} for q, hits in lane.items()})
    return qrels, lanes, texts


def write(tmp_path: Path, qrels: dict, texts: list[str]) -> tuple[str, list[tuple[str, str]]]:
    qp = tmp_path / "qrels.txt"
    qlines = [f"{q}{' ' if i % 2 else chr(9)}0 {d} {g}" for i, (q, d, g) in
              enumerate((q, d, g) for q, docs in qrels.items() for d, g in docs.items())]
    qp.write_text("\n".join(qlines) + "\n")
    lanes = []
    for i, t in enumerate(texts):
        p = tmp_path / f"lane{i}.run"
        p.write_text(t)
        lanes.append((f"lane{i}", str(p)))
    return str(qp), lanes


def trec_sorted(hits: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then doc id descending as bytes."""
    return [d for d, _ in sorted(hits.items(), key=lambda x: (x[1], x[0].encode()), reverse=True)]


def cut(run: dict[str, dict[str, float]], depth: int | None) -> dict[str, dict[str, float]]:
    if depth is None:
        return run
    return {q: {d: hits[d] for d in trec_sorted(hits)[:depth]} for q, hits in run.items()}


def oracle_qrels(qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Qrels as fed to pytrec_eval: grades below -1 become -1.

    pytrec_eval-terrier 0.5.11 segfaults on some inputs holding a grade of -2 or lower
    (e.g. qrels {q9: {d22: 0}, 300: {d25: -2}}, run {q9: {d22: 0.25}, 300: {aa: -0.75}}):
    its trec_eval core uses -1/-2 as internal sentinels. Every negative grade means the
    same thing (in the pool, unjudged: never relevant, never a gain), so the mapping
    changes no value; the files rankscope reads keep the original grades.
    """
    return {q: {d: max(g, -1) for d, g in docs.items()} for q, docs in qrels.items()}


def positives_of(qrels: dict, relevant: int) -> set[str]:
    return {q for q, docs in qrels.items() if any(g >= relevant for g in docs.values())}


# ------------------------------------------------------------------ doc level

SEEDS = [0, 1, 2, 3, 7, 42, 2026]


@pytest.mark.parametrize("clean", [False, True], ids=["mixed_separators", "one_separator"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relevant", [1, 2])
@pytest.mark.parametrize("depth", [None, 4, 12])
def test_doc_level_matches_pytrec_eval(tmp_path, seed, relevant, depth, clean):
    qrels, lanes, texts = generate(seed, clean=clean)
    qpath, lane_args = write(tmp_path, qrels, texts)
    settings = LoadSettings(metrics=tuple(parse_metrics(OURS)), relevant=relevant, depth=depth)
    ws = Workspace.load(lanes=lane_args, qrels=qpath, settings=settings)

    expected_pos = positives_of(qrels, relevant)
    got_pos = {ws.qids[c] for c in ws.positives.tolist()}
    assert got_pos == expected_pos

    evaluator = pytrec_eval.RelevanceEvaluator(oracle_qrels(qrels), PYTREC_MEASURES, relevance_level=relevant)
    keys = [m.key for m in parse_metrics(OURS) if m.kind != "judged"]
    mismatches = []
    compared = 0
    for (name, _), run in zip(lane_args, lanes):
        oracle = evaluator.evaluate(cut(run, depth))
        pq = ws.per_query(name, "doc")
        for q in sorted(expected_pos):
            code = ws.qid_index[q]
            for key in keys:
                want = oracle.get(q, {}).get(pytrec_name(key), 0.0)
                got = float(pq[key][code])
                compared += 1
                if abs(got - want) > TOL:
                    mismatches.append(f"{name} q={q} {key}: pytrec_eval {want!r}, rankscope {got!r}")
    assert compared > 0
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("depth", [None, 6])
def test_doc_level_judged_matches_plain_python(tmp_path, seed, depth):
    """judged@k has no pytrec_eval counterpart (no unj in 9.x): a plain loop is the oracle."""
    qrels, lanes, texts = generate(seed)
    qpath, lane_args = write(tmp_path, qrels, texts)
    ws = Workspace.load(lanes=lane_args, qrels=qpath,
                        settings=LoadSettings(metrics=tuple(parse_metrics("judged@5,judged@10,judged@20")), depth=depth))
    for (name, _), run in zip(lane_args, lanes):
        pq = ws.per_query(name, "doc")
        for q in positives_of(qrels, 1):
            order = trec_sorted(run.get(q, {}))[: depth or None]
            for k in (5, 10, 20):
                n = sum(1 for d in order[:k] if qrels[q].get(d, -1) >= 0)
                assert pq[f"judged@{k}"][ws.qid_index[q]] == pytest.approx(n / k, abs=TOL), (name, q, k)


def test_generated_inputs_really_have_the_hard_cases():
    """Guard against a generator that silently stops producing the cases it claims to."""
    ties = short = sci = neg = missing = extra = 0
    for seed in SEEDS:
        qrels, lanes, texts = generate(seed)
        for run, text in zip(lanes, texts):
            for q, hits in run.items():
                vals = list(hits.values())
                ties += len(vals) - len(set(vals))
                short += len(hits) < 10
            missing += len(set(qrels) - set(run))
            extra += len(set(run) - set(qrels))
            sci += text.count("e+") + text.count("E+") + text.count("e-")
            assert "\t" in text and "  " in text
        neg += sum(g < 0 for docs in qrels.values() for g in docs.values())
    assert min(ties, short, sci, neg, missing, extra) > 0


# ------------------------------------------------------------------ group level


def group_construction(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]], depth: int | None, sep: str):
    """SPEC §3's equivalent trec_eval construction for group-level metrics."""
    g_run: dict[str, dict[str, float]] = {}
    for q, hits in run.items():
        order = trec_sorted(hits)[: depth or None]
        seen: set[str] = set()
        out: dict[str, float] = {}
        for i, d in enumerate(order):
            g = d.split(sep, 1)[0]
            ident = f"G:{g}" if g not in seen else f"later:{i}"
            seen.add(g)
            out[ident] = float(len(order) - i)  # distinct scores keep the order
        g_run[q] = out
    g_qrels: dict[str, dict[str, int]] = {}
    for q, docs in qrels.items():
        best: dict[str, int] = {}
        for d, grade in docs.items():
            if grade >= 0:
                g = f"G:{d.split(sep, 1)[0]}"
                best[g] = max(best.get(g, grade), grade)
        if best:
            g_qrels[q] = best
    return g_run, g_qrels


@pytest.mark.parametrize("clean", [False, True], ids=["mixed_separators", "one_separator"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relevant", [1, 2])
@pytest.mark.parametrize("depth", [None, 5])
def test_group_level_matches_the_trec_eval_construction(tmp_path, seed, relevant, depth, clean):
    qrels, lanes, texts = generate(seed, group_sep=True, clean=clean)
    qpath, lane_args = write(tmp_path, qrels, texts)
    settings = LoadSettings(metrics=tuple(parse_metrics(OURS + ",judged@10")), relevant=relevant, depth=depth, group_sep="#")
    ws = Workspace.load(lanes=lane_args, qrels=qpath, settings=settings)
    keys = [m.key for m in parse_metrics(OURS) if m.kind != "judged"]
    mismatches = []
    compared = 0
    for (name, _), run in zip(lane_args, lanes):
        g_run, g_qrels = group_construction(run, qrels, depth, "#")
        oracle = pytrec_eval.RelevanceEvaluator(g_qrels, PYTREC_MEASURES, relevance_level=relevant).evaluate(g_run)
        pq = ws.per_query(name, "group")
        for q in sorted(positives_of(qrels, relevant)):
            code = ws.qid_index[q]
            for key in keys:
                want = oracle.get(q, {}).get(pytrec_name(key), 0.0)
                got = float(pq[key][code])
                compared += 1
                if abs(got - want) > TOL:
                    mismatches.append(f"{name} q={q} {key}: construction {want!r}, rankscope {got!r}")
            # judged@10 at group level: later occurrences count as judged when their group is
            order = trec_sorted(run.get(q, {}))[: depth or None]
            judged_groups = {d.split("#", 1)[0] for d, g in qrels[q].items() if g >= 0}
            n = sum(1 for d in order[:10] if d.split("#", 1)[0] in judged_groups)
            if abs(pq["judged@10"][code] - n / 10) > TOL:
                mismatches.append(f"{name} q={q} judged@10: by hand {n / 10}, rankscope {pq['judged@10'][code]!r}")
    assert compared > 0
    assert not mismatches, "\n".join(mismatches[:20])


def test_group_level_credits_the_right_document_found_through_another_passage(tmp_path):
    (tmp_path / "qrels.txt").write_text(
        "q1 0 D1#p1 1\n"
        "q1 0 D2#p1 0\n"
        "q2 0 D1#p1 1\n"
    )
    (tmp_path / "lane.run").write_text(
        # q1: the relevant passage D1#p1 is never retrieved, another passage of D1 is, at rank 2
        "q1 Q0 D2#p1 1 3.0 t\n"
        "q1 Q0 D1#p2 2 2.0 t\n"
        "q1 Q0 D3#p1 3 1.0 t\n"
        # q2: D1 first surfaces through p3; its judged passage p1 comes later
        "q2 Q0 D1#p3 1 3.0 t\n"
        "q2 Q0 D1#p1 2 2.0 t\n"
        "q2 Q0 D1#p2 3 1.0 t\n"
    )
    settings = LoadSettings(metrics=tuple(parse_metrics("rr,hit@1,hit@10,p@2,recall@10,ndcg@10,judged@2")), group_sep="#")
    ws = Workspace.load(lanes=[("lane", str(tmp_path / "lane.run"))], qrels=str(tmp_path / "qrels.txt"), settings=settings)
    doc, grp = ws.per_query("lane", "doc"), ws.per_query("lane", "group")
    q1, q2 = ws.qid_index["q1"], ws.qid_index["q2"]
    # q1: a miss at doc level, found at rank 2 at group level
    assert doc["rr"][q1] == 0.0 and doc["hit@10"][q1] == 0.0 and doc["ndcg@10"][q1] == 0.0
    assert grp["rr"][q1] == pytest.approx(0.5)
    assert grp["hit@10"][q1] == 1.0 and grp["hit@1"][q1] == 0.0
    assert grp["recall@10"][q1] == pytest.approx(1.0)
    assert grp["ndcg@10"][q1] == pytest.approx(1.0 / np.log2(3), abs=1e-12)  # ideal: group D1 grade 1 at rank 1
    assert int(ws.per_query("lane", "doc")["rank"][q1]) == 0 and int(grp["rank"][q1]) == 2
    # q2: rank 2 at doc level; rank 1 at group level, where the later passage p1 is not counted again
    assert doc["rr"][q2] == pytest.approx(0.5) and grp["rr"][q2] == pytest.approx(1.0)
    assert doc["p@2"][q2] == pytest.approx(0.5) and grp["p@2"][q2] == pytest.approx(0.5)
    assert grp["recall@10"][q2] == pytest.approx(1.0)
    assert grp["ndcg@10"][q2] == pytest.approx(1.0, abs=1e-12)
    # judged@2: doc level only p1 is judged; group level both occurrences of the judged group D1 count
    assert doc["judged@2"][q2] == pytest.approx(0.5) and grp["judged@2"][q2] == pytest.approx(1.0)


# ------------------------------------------------------------------ issue 15: ap, ap@k, rprec, bpref, ndcg, rr@k

NEW_KS = (1, 3, 5, 10, 20)
NEW = ",".join(["ap", "rprec", "bpref", "ndcg"] + [f"ap@{k}" for k in NEW_KS] + [f"rr@{k}" for k in NEW_KS])
NEW_PYTREC = {"map", "Rprec", "bpref", "ndcg", f"map_cut.{','.join(map(str, NEW_KS))}", "recip_rank"}
NEW_NAME = {"ap": "map", "rprec": "Rprec", "bpref": "bpref", "ndcg": "ndcg"}


def _strip_rel(key: str) -> str:
    return key.replace("(rel=2)", "")


def new_oracle(qrels: dict, run: dict, relevant: int) -> dict[str, dict[str, float]]:
    """{qid: {our key: pytrec_eval value}}: map/Rprec/bpref/ndcg/map_cut on the run, and
    rr@k as recip_rank on the run cut at k in trec_eval order."""
    ev = pytrec_eval.RelevanceEvaluator(oracle_qrels(qrels), NEW_PYTREC, relevance_level=relevant)
    full = ev.evaluate(run)
    out: dict[str, dict[str, float]] = {}
    for q, vals in full.items():
        d = out.setdefault(q, {})
        for ours, theirs in NEW_NAME.items():
            d[ours] = vals[theirs]
        for k in NEW_KS:
            d[f"ap@{k}"] = vals[f"map_cut_{k}"]
    for k in NEW_KS:
        for q, vals in ev.evaluate(cut(run, k)).items():
            out.setdefault(q, {})[f"rr@{k}"] = vals["recip_rank"]
    return out


def _compare_new(ws, lane_args, lanes, oracles, positives, level, keys) -> tuple[int, list[str]]:
    compared, bad = 0, []
    for (name, _), oracle in zip(lane_args, oracles):
        pq = ws.per_query(name, level)
        for q in sorted(positives):
            code = ws.qid_index[q]
            for key in keys:
                want = oracle.get(q, {}).get(_strip_rel(key), 0.0)
                got = float(pq[key][code])
                compared += 1
                if abs(got - want) > TOL:
                    bad.append(f"{name} {level} q={q} {key}: pytrec_eval {want!r}, rankscope {got!r}")
    return compared, bad


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relevant", [1, 2])
@pytest.mark.parametrize("depth", [None, 4, 12])
def test_new_measures_doc_level_match_pytrec_eval(tmp_path, seed, relevant, depth):
    """ap, ap@k, rprec, bpref, ndcg, rr@k per query at 1e-9, on the adversarial generator
    (ties, byte vs numeric ids, negative and zero grades, short lists, missing queries)."""
    qrels, lanes, texts = generate(seed)
    qpath, lane_args = write(tmp_path, qrels, texts)
    keys = [m.key for m in parse_metrics(NEW)]
    ws = Workspace.load(lanes=lane_args, qrels=qpath,
                        settings=LoadSettings(metrics=tuple(parse_metrics(NEW)), relevant=relevant, depth=depth))
    oracles = [new_oracle(qrels, cut(run, depth), relevant) for run in lanes]
    compared, bad = _compare_new(ws, lane_args, lanes, oracles, positives_of(qrels, relevant), "doc", keys)
    assert compared > 0
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("depth", [None, 6])
@pytest.mark.parametrize("level", ["doc", "group"])
def test_per_measure_rel_overrides_relevant(tmp_path, seed, depth, level):
    """``AP(rel=2)``-style keys at --relevant 1 equal pytrec_eval at relevance_level 2
    (group level: through SPEC §3's construction), on the queries positive at level 2."""
    group = level == "group"
    qrels, lanes, texts = generate(seed, group_sep=group)
    qpath, lane_args = write(tmp_path, qrels, texts)
    spec = "AP(rel=2),Rprec(rel=2),Bpref(rel=2)," + ",".join(f"AP(rel=2)@{k},RR(rel=2)@{k}" for k in NEW_KS)
    metrics = tuple(parse_metrics(spec))
    keys = [m.key for m in metrics]
    assert "ap(rel=2)" in keys and "rr(rel=2)@10" in keys
    ws = Workspace.load(lanes=lane_args, qrels=qpath, settings=LoadSettings(
        metrics=metrics, relevant=1, depth=depth, group_sep="#" if group else None))
    if group:
        oracles = [new_oracle(gq, gr, 2) for gr, gq in (group_construction(run, qrels, depth, "#") for run in lanes)]
    else:
        oracles = [new_oracle(qrels, cut(run, depth), 2) for run in lanes]
    compared, bad = _compare_new(ws, lane_args, lanes, oracles, positives_of(qrels, 2), level, keys)
    assert compared > 0
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relevant", [1, 2])
@pytest.mark.parametrize("depth", [None, 5])
def test_new_measures_group_level_match_the_trec_eval_construction(tmp_path, seed, relevant, depth):
    """SPEC §3's construction (later occurrences get fresh ids): for bpref those ids are
    unjudged, i.e. skipped, which is bpref's stated group rule."""
    qrels, lanes, texts = generate(seed, group_sep=True)
    qpath, lane_args = write(tmp_path, qrels, texts)
    keys = [m.key for m in parse_metrics(NEW)]
    ws = Workspace.load(lanes=lane_args, qrels=qpath, settings=LoadSettings(
        metrics=tuple(parse_metrics(NEW)), relevant=relevant, depth=depth, group_sep="#"))
    oracles = []
    for run in lanes:
        g_run, g_qrels = group_construction(run, qrels, depth, "#")
        oracles.append(new_oracle(g_qrels, g_run, relevant))
    compared, bad = _compare_new(ws, lane_args, lanes, oracles, positives_of(qrels, relevant), "group", keys)
    assert compared > 0
    assert not bad, "\n".join(bad[:20])


def test_new_measure_generators_reach_the_cases_that_separate_the_measures():
    """bpref needs judged non-relevant docs above relevant ones, rr@k misses below k, and
    ap@k cuts some relevant docs: the generator produces all three."""
    nonrel_above = rr_cut = ap_cut = 0
    for seed in SEEDS:
        qrels, lanes, _ = generate(seed)
        for run in lanes:
            for q, hits in run.items():
                grades = qrels.get(q, {})
                order = [grades.get(d, -9) for d in trec_sorted(hits)]
                rel = [i for i, g in enumerate(order) if g >= 1]
                if rel and any(0 <= g < 1 for g in order[: rel[-1]]):
                    nonrel_above += 1
                if rel and rel[0] >= 3:
                    rr_cut += 1
                if rel and rel[-1] >= 5:
                    ap_cut += 1
    assert min(nonrel_above, rr_cut, ap_cut) > 5


# ------------------------------------------------------------------ issue 15 on real data (Cranfield)


def _plain_run(path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if f:
            run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


def _plain_qrels(path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if f:
            qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    return qrels


def _float32_distinct(hits: dict[str, float]) -> bool:
    """pytrec_eval orders by float32 scores: compare only where float32 keeps float64's order."""
    v = np.array(list(hits.values()))
    return np.unique(v.astype(np.float32)).size == np.unique(v).size


@pytest.mark.parametrize("level", ["doc", "group"])
def test_new_measures_on_cranfield_match_pytrec_eval(level):
    """The Cranfield lanes (passages D<n>#p<m>, graded qrels): every new measure per query
    at 1e-9, doc level directly and group level through SPEC §3's construction."""
    from support import shared_path

    c = shared_path("cranfield")
    qrels = _plain_qrels(c / "qrels-test.txt")
    names = ["bm25", "dense"]
    lanes = [_plain_run(c / "lanes" / f"{n}.run") for n in names]
    keys = [m.key for m in parse_metrics(NEW)]
    ws = Workspace.load(lanes=[(n, str(c / "lanes" / f"{n}.run")) for n in names], qrels=str(c / "qrels-test.txt"),
                        settings=LoadSettings(metrics=tuple(parse_metrics(NEW)), group_sep="#" if level == "group" else None,
                                              resamples=0))
    compared, bad = 0, []
    for name, run in zip(names, lanes):
        if level == "group":
            g_run, g_qrels = group_construction(run, qrels, None, "#")
            oracle = new_oracle(g_qrels, g_run, 1)
        else:
            oracle = new_oracle(qrels, run, 1)
        pq = ws.per_query(name, level)
        for q in sorted(positives_of(qrels, 1)):
            if q in run and not _float32_distinct(run[q]):
                continue
            code = ws.qid_index[q]
            for key in keys:
                want = oracle.get(q, {}).get(key, 0.0)
                compared += 1
                if abs(float(pq[key][code]) - want) > TOL:
                    bad.append(f"{name} {level} q={q} {key}: pytrec_eval {want!r}, rankscope {float(pq[key][code])!r}")
    assert compared > 1000
    assert not bad, "\n".join(bad[:20])
