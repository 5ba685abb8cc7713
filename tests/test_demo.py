"""The built-in demo data set (SPEC section 11).

Everything here reads the written files with plain Python and recomputes each lesson
by hand (trec_eval ordering, RRF, caps, Wilson): no rankscope kernel code is used, so
a bug in the kernel cannot hide a bug in the demo and the other way round.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from rankscope_tui.demo import FILES, SHOWCASE, write_demo

SEEDS = (7, 1, 2024)  # 7 is the default; the lessons must not depend on a lucky draw
LANE_NAMES = ("lexical", "dense")
DOC_RE = re.compile(r"^d[0-9]+#p[0-9]+$")
SCORE_RE = re.compile(r"^-?[0-9]+\.[0-9]{6}$")
Z95 = 1.959963984540054


# --------------------------------------------------------------------------------------
# plain readers and hand computations
# --------------------------------------------------------------------------------------

def read_run(path):
    """{qid: [(doc, score, rank_column), ...]} in file order."""
    out: dict[str, list] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        qid, _q0, doc, rank, score, _tag = line.split()
        out.setdefault(qid, []).append((doc, float(score), int(rank)))
    return out


def trec_order(hits):
    """trec_eval: score descending, then doc id descending as bytes."""
    return [d for d, s, _ in sorted(hits, key=lambda h: (h[1], h[0].encode()), reverse=True)]


def read_qrels(path):
    out: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        qid, _zero, doc, grade = line.split()
        out.setdefault(qid, {})[doc] = int(grade)
    return out


def read_tsv(path):
    return dict(line.split("\t", 1) for line in Path(path).read_text(encoding="utf-8").splitlines())


def group(doc):
    return doc.split("#", 1)[0]


def first_rel(ranking, rels, level="doc"):
    """1-based rank of the first relevant hit, 0 for a miss."""
    if level == "group":
        rels = {group(d) for d in rels}
        ranking = [group(d) for d in ranking]
    for i, d in enumerate(ranking, 1):
        if d in rels:
            return i
    return 0


def rrf(rankings, k=60):
    """RRF by hand: terms added largest first, then trec_eval order on the sums."""
    terms: dict[str, list[float]] = {}
    for ranking in rankings:
        for r, d in enumerate(ranking, 1):
            terms.setdefault(d, []).append(1.0 / (k + r))
    scored = []
    for d, ts in terms.items():
        total = 0.0
        for x in sorted(ts, reverse=True):
            total += x
        scored.append((d, total, 0))
    return trec_order(scored)


def cap(ranking, n):
    seen: dict[str, int] = {}
    out = []
    for d in ranking:
        g = group(d)
        if seen.get(g, 0) < n:
            out.append(d)
        seen[g] = seen.get(g, 0) + 1
    return out


def document_first(ranking, n=None):
    if not ranking:
        return []
    top = group(ranking[0])
    head = [d for d in ranking if group(d) == top]
    rest = [d for d in ranking if group(d) != top]
    return head + (cap(rest, n) if n else rest)


def ndcg10(ranking, judged):
    dcg = sum(judged.get(d, 0) / math.log2(i + 1) for i, d in enumerate(ranking[:10], 1) if judged.get(d, 0) > 0)
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def convex(lists, weights):
    """Min-max per lane over its own list (absent = 0, constant list = 1), weighted sum."""
    total: dict[str, float] = {}
    for hits, w in zip(lists, weights):
        if not hits:
            continue
        lo, hi = min(s for _, s, _ in hits), max(s for _, s, _ in hits)
        for d, s, _ in hits:
            v = 1.0 if hi == lo else (s - lo) / (hi - lo)
            total[d] = total.get(d, 0.0) + w * v
    return trec_order([(d, v, 0) for d, v in total.items()])


def wilson(k, n, z=Z95):
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def positives(qrels):
    return sorted(q for q, j in qrels.items() if any(g >= 1 for g in j.values()))


def negatives(qrels):
    return sorted(q for q, j in qrels.items() if not any(g >= 1 for g in j.values()))


class Demo:
    def __init__(self, root: Path, paths: dict):
        self.root = root
        self.paths = paths
        self.runs = {lane: read_run(paths[lane]) for lane in LANE_NAMES}
        self.ranked = {lane: {q: trec_order(h) for q, h in run.items()} for lane, run in self.runs.items()}
        self.dev = read_qrels(paths["qrels_dev"])
        self.test = read_qrels(paths["qrels_test"])
        self.ood = read_qrels(paths["qrels_ood"])
        self.strata = read_tsv(paths["strata"])
        self.corpus = read_tsv(paths["corpus"])
        self.docs = read_tsv(paths["docs"])
        self.queries = read_tsv(paths["queries"])
        self.gates = json.loads(Path(paths["gates"]).read_text(encoding="utf-8"))
        self.judged = {**self.dev, **self.test, **self.ood}

    def lane(self, name, q):
        if name == "rrf":
            return rrf([self.ranked[lane].get(q, []) for lane in LANE_NAMES])
        return self.ranked[name].get(q, [])

    def rels(self, q):
        return {d for d, g in self.judged[q].items() if g >= 1}


def _written(root: Path) -> Demo:
    return Demo(root, {role: root / name for role, name in FILES.items()})


@pytest.fixture(scope="module", params=SEEDS)
def demo(request, tmp_path_factory, demo_dir):
    if request.param == 7:  # the session's demo (conftest) is seed 7
        return _written(demo_dir)
    root = tmp_path_factory.mktemp(f"demo{request.param}")
    return Demo(root, write_demo(root, seed=request.param))


@pytest.fixture(scope="module")
def demo7(demo_dir):
    return _written(demo_dir)


# --------------------------------------------------------------------------------------
# determinism, files, formats
# --------------------------------------------------------------------------------------

def _bytes(paths):
    return {role: Path(p).read_bytes() for role, p in paths.items()}


def test_same_seed_same_bytes(tmp_path):
    a = _bytes(write_demo(tmp_path / "a", seed=7))
    b = _bytes(write_demo(tmp_path / "b", seed=7))
    assert a == b


def test_other_seed_other_bytes(tmp_path):
    a = _bytes(write_demo(tmp_path / "a", seed=7))
    b = _bytes(write_demo(tmp_path / "b", seed=8))
    for role in ("lexical", "dense", "qrels_dev", "qrels_test"):
        assert a[role] != b[role], role


def test_default_seed_is_7(tmp_path):
    assert _bytes(write_demo(tmp_path / "a")) == _bytes(write_demo(tmp_path / "b", seed=7))


def test_returned_paths(tmp_path):
    paths = write_demo(tmp_path)
    assert set(paths) == set(FILES)
    for role, p in paths.items():
        assert Path(p) == tmp_path / FILES[role]
        assert Path(p).stat().st_size > 0, role
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted(FILES.values())


def test_import_is_light():
    code = "import sys, rankscope_tui.demo; print(sorted(m for m in ('numpy', 'pandas', 'scipy', 'textual') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_run_format(demo7):
    for lane in LANE_NAMES:
        text = Path(demo7.paths[lane]).read_text(encoding="utf-8")
        assert text.endswith("\n")
        seen = set()
        n_queries = set()
        for line in text.splitlines():
            f = line.split(" ")
            assert len(f) == 6, line
            qid, q0, doc, rank, score, tag = f
            assert q0 == "Q0" and tag == lane, line
            assert DOC_RE.match(doc), line
            assert rank.isdigit() and int(rank) >= 1, line
            assert SCORE_RE.match(score) and math.isfinite(float(score)), line
            assert (qid, doc) not in seen, line
            seen.add((qid, doc))
            n_queries.add(qid)
        assert 120 <= len(n_queries) <= 200
        assert max(len(h) for h in demo7.runs[lane].values()) <= 100


def test_qrels_format(demo7):
    for role in ("qrels_dev", "qrels_test", "qrels_ood"):
        seen = set()
        for line in Path(demo7.paths[role]).read_text(encoding="utf-8").splitlines():
            f = line.split(" ")
            assert len(f) == 4, line
            qid, zero, doc, grade = f
            assert zero == "0" and DOC_RE.match(doc), line
            assert re.fullmatch(r"[0-9]+", grade) and 0 <= int(grade) <= 3, line
            assert (qid, doc) not in seen, line
            seen.add((qid, doc))


def test_tsv_formats(demo7):
    allowed = {"keyword", "paraphrase", "no-overlap", "negative", "negative-ood"}
    for line in Path(demo7.paths["strata"]).read_text(encoding="utf-8").splitlines():
        assert line.count("\t") == 1, line
        assert line.split("\t")[1] in allowed, line
    for role in ("corpus", "docs", "queries"):
        for line in Path(demo7.paths[role]).read_text(encoding="utf-8").splitlines():
            key, text = line.split("\t", 1)
            assert key and text.strip() and "\t" not in text, (role, line)
    for d in demo7.corpus:
        assert DOC_RE.match(d)


def test_texts_cover_everything(demo7):
    run_qids = set(demo7.runs["lexical"]) | set(demo7.runs["dense"])
    assert run_qids | set(demo7.judged) <= set(demo7.queries)
    for lane in LANE_NAMES:
        for hits in demo7.runs[lane].values():
            for d, _, _ in hits:
                assert d in demo7.corpus, d  # a lane can only return indexed docs
    for j in demo7.judged.values():
        assert set(j) <= set(demo7.docs)
    assert set(demo7.corpus) <= set(demo7.docs)


def test_readme_and_gates(demo7):
    readme = Path(demo7.paths["readme"]).read_text(encoding="utf-8").lower()
    assert "synthetic" in readme and "generator" in readme
    for name in FILES.values():
        if name != "README.txt":
            assert name.lower() in readme, name
    assert isinstance(demo7.gates, list) and demo7.gates
    for rule in demo7.gates:
        assert rule["op"] in (">=", "<=")
        assert ("threshold" in rule) != ("against" in rule)
    assert any("against" in r for r in demo7.gates)


# --------------------------------------------------------------------------------------
# the lessons
# --------------------------------------------------------------------------------------

def _num(doc):
    return int(doc[1:].split("#p")[0]), int(doc.split("#p")[1])


def test_ties_in_top10_order_differently_as_bytes_and_numbers(demo):
    discordant = set()
    tied_queries = set()
    for lane in LANE_NAMES:
        for q, hits in demo.runs[lane].items():
            ranked = trec_order(hits)
            score = {d: s for d, s, _ in hits}
            for i in range(len(ranked) - 1):
                a, b = ranked[i], ranked[i + 1]
                if score[a] == score[b]:
                    tied_queries.add((lane, q))
                    # a before b as bytes (descending); numerically the other way round?
                    if i < 9 and _num(a) < _num(b):
                        discordant.add((lane, q))
    assert len(tied_queries) >= 15
    assert len(discordant) >= 3


def test_tie_showcase(demo):
    q = SHOWCASE["tie"]
    hits = demo.runs["lexical"][q]
    ranked = trec_order(hits)
    score = {d: s for d, s, _ in hits}
    assert ranked[:2] == ["d9#p1", "d10#p1"]
    assert score["d9#p1"] == score["d10#p1"]
    assert demo.test[q]["d10#p1"] == 3 and demo.test[q]["d9#p1"] == 0
    assert first_rel(ranked, demo.rels(q)) == 2  # trec_eval: hit@1 = 0
    file_order = [d for d, _, _ in hits]
    assert first_rel(file_order, demo.rels(q)) == 1  # trusting the file gives hit@1 = 1
    by_rank_column = [d for d, _, _ in sorted(hits, key=lambda h: h[2])]
    assert by_rank_column == file_order


def test_file_order_disagrees_with_trec_eval_on_ties(demo):
    disagree = sum(
        [d for d, _, _ in hits] != trec_order(hits)
        for lane in LANE_NAMES for hits in demo.runs[lane].values()
    )
    assert disagree >= 10


def test_lanes_fail_on_different_strata(demo):
    def hit10(lane, label):
        qs = [q for q in positives({**demo.dev, **demo.test}) if demo.strata[q] == label]
        assert len(qs) >= 30
        return sum(0 < first_rel(demo.lane(lane, q), demo.rels(q)) <= 10 for q in qs) / len(qs)

    assert hit10("lexical", "no-overlap") <= 0.3
    assert hit10("dense", "no-overlap") >= 0.75
    assert hit10("dense", "keyword") <= 0.4
    assert hit10("lexical", "keyword") >= 0.85
    assert hit10("lexical", "paraphrase") >= 0.6 and hit10("dense", "paraphrase") >= 0.6


def test_rrf_dilutes_a_correct_top_hit(demo):
    q = SHOWCASE["dilution"]
    assert q in demo.test and demo.strata[q] == "keyword"
    rels = demo.rels(q)
    assert first_rel(demo.lane("lexical", q), rels) == 1
    assert first_rel(demo.lane("dense", q), rels) == 0
    assert first_rel(demo.lane("rrf", q), rels) == 4
    # and it is not the only one: fusion dilutes other test queries too
    diluted = [p for p in positives(demo.test)
               if any(first_rel(demo.lane(lane, p), demo.rels(p)) == 1 for lane in LANE_NAMES)
               and first_rel(demo.lane("rrf", p), demo.rels(p)) != 1]
    assert q in diluted and len(diluted) >= 2


def test_rrf_presence_beats_a_single_first_place(demo):
    q = SHOWCASE["dilution"]
    fused = demo.lane("rrf", q)
    lex, den = demo.lane("lexical", q), demo.lane("dense", q)
    # the top fused hit is in both lanes; the lexical number one is not in dense
    assert fused[0] in lex and fused[0] in den
    assert lex[0] not in den


@pytest.mark.parametrize("lane", ["lexical", "dense", "rrf"])
def test_flooding_manual_cap_cuts_the_right_page(demo, lane):
    q = SHOWCASE["flood_cap_hurts"]
    assert q in demo.test
    ranking = demo.lane(lane, q)
    rels = demo.rels(q)
    r = first_rel(ranking, rels)
    assert r == 7
    assert len({group(d) for d in ranking[:7]}) == 1  # six pages of the same manual above it
    assert first_rel(cap(ranking, 5), rels) == 0  # the cap cuts the right page
    assert first_rel(cap(ranking, 5), rels, "group") == 1  # group level does not notice
    assert first_rel(document_first(ranking, 5), rels) == 7  # document-first keeps it


@pytest.mark.parametrize("lane", ["lexical", "dense", "rrf"])
def test_flooding_catalogue_cap_helps(demo, lane):
    q = SHOWCASE["flood_cap_helps"]
    assert q in demo.test
    ranking = demo.lane(lane, q)
    rels = demo.rels(q)
    assert first_rel(ranking, rels) == 14
    assert len({group(d) for d in ranking[:13]}) == 1
    assert first_rel(cap(ranking, 5), rels) == 6
    assert first_rel(document_first(ranking, 5), rels) > 10


def test_a_judged_query_is_missing_from_dense(demo):
    for q, qrels in ((SHOWCASE["missing_from_dense"], demo.test), (SHOWCASE["missing_from_dense_dev"], demo.dev)):
        assert q in positives(qrels)
        assert q in demo.runs["lexical"] and q not in demo.runs["dense"]
    missing = [q for q in demo.judged if q not in demo.runs["dense"]]
    assert sorted(missing) == sorted([SHOWCASE["missing_from_dense"], SHOWCASE["missing_from_dense_dev"]])
    assert all(q in demo.runs["lexical"] for q in demo.judged)


def test_lane_queries_without_judgments(demo):
    unjudged = sorted(set(demo.runs["lexical"]) - set(demo.judged))
    assert unjudged == sorted(SHOWCASE["unjudged"])
    assert set(unjudged) <= set(demo.runs["dense"])
    assert not set(unjudged) & set(demo.strata)


def test_not_indexed_positives_and_coverage(demo):
    for qrels in (demo.test, demo.dev):
        none_indexed = [q for q in positives(qrels) if not (demo.rels(q) & set(demo.corpus))]
        partly = [q for q in positives(qrels) if demo.rels(q) & set(demo.corpus) and demo.rels(q) - set(demo.corpus)]
        assert none_indexed and partly
    assert SHOWCASE["not_indexed"] in demo.test and not (demo.rels(SHOWCASE["not_indexed"]) & set(demo.corpus))
    assert SHOWCASE["partly_not_indexed"] in demo.test
    pairs = sum(1 for j in demo.judged.values() for d, g in j.items() if g >= 1 and d not in demo.corpus)
    assert pairs >= 5
    # not-indexed docs still have text for the drill-down
    assert all(d in demo.docs for j in demo.judged.values() for d in j)


def test_splits(demo):
    dev, test, ood = set(demo.dev), set(demo.test), set(demo.ood)
    assert not dev & test and not dev & ood and not test & ood
    for qrels in (demo.dev, demo.test):
        assert len(positives(qrels)) >= 50 and len(negatives(qrels)) >= 12
        for q in negatives(qrels):
            assert set(qrels[q].values()) == {0}
            assert demo.strata[q] == "negative"
        for q in positives(qrels):
            assert demo.strata[q] in ("keyword", "paraphrase", "no-overlap")
    assert len(ood) >= 20 and not positives(demo.ood)
    assert all(demo.strata[q] == "negative-ood" for q in ood)
    assert set(demo.strata) == dev | test | ood
    assert 120 <= len(set(demo.runs["lexical"]) | set(demo.runs["dense"])) <= 200


def _top(lane_run, q):
    hits = lane_run.get(q)
    return max(s for _, s, _ in hits) if hits else None


def test_ood_negatives_score_differently_on_dense(demo):
    ind = [_top(demo.runs["dense"], q) for q in negatives(demo.dev) + negatives(demo.test)]
    ood = [_top(demo.runs["dense"], q) for q in demo.ood]
    assert None not in ind and None not in ood
    gap = statistics.mean(ind) - statistics.mean(ood)
    pooled = math.sqrt((statistics.variance(ind) + statistics.variance(ood)) / 2)
    assert gap > 4 * pooled
    # a null floor fitted on the OOD negatives looks safe and is not: most in-domain
    # negatives clear it, while the in-domain floor rejects every OOD negative
    floor_ood = statistics.mean(ood) + 3 * statistics.stdev(ood)
    floor_ind = statistics.mean(ind) + 3 * statistics.stdev(ind)
    assert sum(t >= floor_ood for t in ind) / len(ind) >= 0.5
    assert all(t < floor_ind for t in ood)


def test_ood_lexical_lists_are_short(demo):
    lengths = [len(demo.runs["lexical"][q]) for q in demo.ood]
    assert min(lengths) == 1 and max(lengths) < 100
    assert all(len(demo.runs["lexical"][q]) == 100 for q in positives(demo.test))


def _mean_ndcg(demo, qrels, weights):
    qs = positives(qrels)
    return sum(
        ndcg10(convex([demo.runs[lane].get(q, []) for lane in LANE_NAMES], weights), qrels[q]) for q in qs
    ) / len(qs)


def test_convex_weights_fitted_on_dev_transfer_to_test(demo):
    grid = [(i / 10, (10 - i) / 10) for i in range(11)]
    dev_scores = [_mean_ndcg(demo, demo.dev, w) for w in grid]
    best = max(range(len(grid)), key=lambda i: (dev_scores[i], -i))  # first maximum
    assert 0 < best < 10, "fusion should beat both single lanes on dev"
    test_scores = [_mean_ndcg(demo, demo.test, w) for w in grid]
    assert test_scores[best] > max(test_scores[0], test_scores[10])  # transfers
    assert max(test_scores) - test_scores[best] < 0.05  # and the optimism of refitting is small


def _hit_values(demo, path):
    _, lane, level, metric = path.split(".")
    k = int(metric.split("@")[1])
    qs = positives(demo.test)
    hits = sum(0 < first_rel(demo.lane(lane, q), demo.rels(q), level) <= k for q in qs)
    return hits / len(qs), *wilson(hits, len(qs))


def test_gates_point_and_interval_disagree(demo7):
    disagreements = 0
    for rule in demo7.gates:
        assert rule["op"] == ">="
        v, lo, hi = _hit_values(demo7, rule["path"])
        if "threshold" in rule:
            point, interval = v >= rule["threshold"], lo >= rule["threshold"]
        else:
            bv, blo, bhi = _hit_values(demo7, rule["against"])
            point = v >= bv
            interval = True if lo > bhi else False if hi < blo else "undecided"
        disagreements += point != interval
    assert disagreements >= 2
    rrf_rule = next(r for r in demo7.gates if r["path"] == "lanes.rrf.doc.hit@5" and "threshold" in r)
    v, lo, _ = _hit_values(demo7, rrf_rule["path"])
    assert lo < rrf_rule["threshold"] <= v  # passes on the point, fails on the interval


# --------------------------------------------------------------------------------------
# issue 13.25: what the instrument shows on the demo (through the kernel, on purpose: the
# lesson is the number the Calibrate and Compare views print), plus a hand check of the cause
# --------------------------------------------------------------------------------------

def _kernel_ws(root, qrels_role):
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    return Workspace.load([(lane, str(Path(root) / FILES[lane])) for lane in LANE_NAMES],
                          str(Path(root) / FILES[qrels_role]), LoadSettings())


def test_fitting_on_test_is_optimistic(demo7):
    """Seed 003, lesson 'fit on test': the test-fitted convex weights differ from the dev-fitted
    ones and score higher on test, so the cheat shows a positive optimism."""
    from rankscope_tui.kernel.fusion.calibration import compare_calibration

    cmp = compare_calibration(_kernel_ws(demo7.root, "qrels_test"), _kernel_ws(demo7.root, "qrels_dev"))
    assert cmp.fit_dev.weights != cmp.fit_test.weights
    assert cmp.optimism > 0.005
    # the same on the hand-computed grid (independent of the kernel's fusion and metrics)
    grid = [(i / 10, (10 - i) / 10) for i in range(11)]
    dev = [_mean_ndcg(demo7, demo7.dev, w) for w in grid]
    test = [_mean_ndcg(demo7, demo7.test, w) for w in grid]
    best_dev = max(range(11), key=lambda i: (dev[i], -i))
    assert max(test) - test[best_dev] > 0.005


def _per_query_ndcg(demo, lane):
    return [ndcg10(demo.lane(lane, q), demo.test[q]) for q in positives(demo.test)]


@pytest.mark.parametrize("baseline,candidate", [("lexical", "dense"), ("lexical", "rrf")])
def test_pairing_narrows_the_compare_interval(demo7, baseline, candidate):
    """Seed 003, lesson 12: pairing removes query difficulty, so the paired bootstrap interval
    of mean delta (ndcg@10, test) is narrower than the unpaired one."""
    from rankscope_tui.kernel.instruments import compare as comparison
    from rankscope_tui.kernel.instruments import evaluate as pipeline
    from rankscope_tui.kernel.settings import CompareSettings

    ws, th = pipeline.prepare(_kernel_ws(demo7.root, "qrels_test"))
    row = comparison.compare(ws, th, CompareSettings(baseline=baseline, candidates=(candidate,),
                                                     metrics=("ndcg@10",))).result.rows[0]
    assert (row.candidate, row.metric) == (candidate, "ndcg@10")
    assert row.ci_high - row.ci_low < row.unpaired_ci_high - row.unpaired_ci_low
    # the cause, by hand: per-query scores of the two lanes are positively correlated
    b, c = _per_query_ndcg(demo7, baseline), _per_query_ndcg(demo7, candidate)
    assert statistics.covariance(b, c) > 0
