"""``--fuse METHOD[:NORM]`` in evaluate and compare (and the API's ``fuse=``), and
``--ignore-self`` (BEIR/MTEB's ``ignore_identical_ids``). Oracles: ranx's fused run
scored by pytrec_eval; the same inputs with the self hits deleted from the files."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import pytrec_eval
import ranx
from support import ranx_dict, run_cli, shared_path

import rankscope_tui as api

C = shared_path("cranfield")
LANES = {n: str(C / "lanes" / f"{n}.run") for n in ("bm25", "dense", "tfidf")}
QRELS = str(C / "qrels-test.txt")


def read_trec(path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            out.setdefault(q, {})[d] = float(s)
    return out


def read_qrels(path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, g = line.split()
            out.setdefault(q, {})[d] = int(g)
    return out


# ---------------------------------------------------------------------------- --fuse


def test_fused_lane_matches_ranx_scored_by_pytrec_eval():
    # the fused lane's per-query ndcg@10 and rr against ranx's CombMNZ over z-scores, scored by
    # pytrec_eval (trec_eval's tie rule, as ours): z-scores of real-valued lanes hold no near ties
    ev = api.evaluate(QRELS, LANES, measures="ndcg@10,rr", resamples=0, fuse=["combmnz:zmuv", "combsum:max"])
    ws = ev.ws
    runs = [ranx.Run.from_dict(read_trec(p)) for p in LANES.values()]
    qrels = read_qrels(QRELS)
    for ours, method, norm in (("combmnz:zmuv", "mnz", "zmuv"), ("combsum:max", "sum", "max")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fused = ranx_dict(ranx.fuse(runs, norm=norm, method=method))
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut", "recip_rank"}).evaluate(
            {q: dict(d) for q, d in fused.items() if q in qrels})
        pq = ws.per_query(ours)
        checked = 0
        for code in range(len(ws.qids)):
            q = str(ws.qids[code])
            if q not in theirs or not any(g >= 1 for g in qrels[q].values()):
                continue
            assert pq["ndcg@10"][code] == pytest.approx(theirs[q]["ndcg_cut_10"], abs=1e-12), (ours, q)
            assert pq["rr"][code] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12), (ours, q)
            checked += 1
        assert checked >= 100


def test_fuse_adds_lanes_and_leaves_rrf_as_it_was(tmp_path):
    base = ["evaluate", "--qrels", QRELS, *[f"--lane={n}={p}" for n, p in LANES.items()], "--resamples", "0"]
    plain = run_cli(*base, "--out", tmp_path / "a.json")
    fused = run_cli(*base, "--fuse", "combmnz:zmuv", "--fuse", "borda", "--fuse", "wsum:zmuv",
                    "--out", tmp_path / "b.json")
    assert plain.returncode == 0 and fused.returncode == 0, fused.stderr
    a, b = json.loads((tmp_path / "a.json").read_text()), json.loads((tmp_path / "b.json").read_text())
    assert list(b["lanes"]) == ["bm25", "dense", "tfidf", "rrf", "combmnz:zmuv", "borda", "wsum:zmuv"]
    assert json.dumps(a["lanes"]["rrf"]) == json.dumps(b["lanes"]["rrf"])  # byte for byte
    assert a["fusion"]["rrf"] == b["fusion"]["rrf"]
    assert b["inputs"]["settings"]["fuse"] == ["combmnz:zmuv", "borda", "wsum:zmuv"]
    assert a["inputs"]["settings"]["fuse"] == []
    m = b["fusion"]["methods"]
    assert m["combmnz:zmuv"]["normalisation"] == "zmuv" and "normalisation" not in m["borda"]
    assert m["wsum:zmuv"]["weights"] == {"bm25": 1 / 3, "dense": 1 / 3, "tfidf": 1 / 3}
    assert "combmnz:zmuv: sum of normalised scores times the number of lanes" in fused.stdout


@pytest.mark.parametrize("args, words", [
    (["--fuse", "combfoo"], "unknown fusion method 'combfoo'"),
    (["--fuse", "rrf"], "the rrf lane is added whenever two or more lanes are loaded"),
    (["--fuse", "isr:zmuv"], "isr reads ranks and takes no normalisation"),
    (["--fuse", "combsum", "--fuse", "combsum:min-max"], "combsum:minmax given twice"),
])
def test_bad_fuse_is_one_line_exit_2(tmp_path, args, words):
    p = run_cli("evaluate", "--qrels", QRELS, f"--lane=bm25={LANES['bm25']}", f"--lane=dense={LANES['dense']}",
                *args, "--out", tmp_path / "o.json")
    assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "--fuse" in p.stderr and not (tmp_path / "o.json").exists()


def test_fuse_needs_two_lanes(tmp_path):
    p = run_cli("evaluate", "--qrels", QRELS, f"--lane=bm25={LANES['bm25']}", "--fuse", "isr")
    assert p.returncode == 2 and "--fuse needs two or more lanes (1 loaded)" in p.stderr


def test_compare_takes_a_fused_lane_as_a_named_candidate():
    c = api.compare(QRELS, LANES, baseline="bm25", candidates=["combmnz:zmuv"], fuse="CombMNZ:z-score",
                    resamples=0).as_dict()
    assert [r["candidate"] for r in c["comparisons"]] == ["combmnz:zmuv"]
    p = run_cli("compare", "--qrels", QRELS, *[f"--lane={n}={p}" for n, p in LANES.items()], "--fuse", "isr",
                "--candidate", "isr", "--resamples", "0")
    assert p.returncode == 0 and "isr" in p.stdout, p.stderr


# --------------------------------------------------------------------- --ignore-self


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_ignore_self_by_hand(tmp_path):
    qrels = _write(tmp_path, "qrels", "q1 0 d2 1\nq2 0 d3 1\n")
    a = _write(tmp_path, "a.run", "q1 Q0 q1 1 9 a\nq1 Q0 d9 2 8.5 a\nq1 Q0 d2 3 8 a\nq2 Q0 q2 1 5 a\nq2 Q0 d3 2 4 a\n")
    plain = api.evaluate(qrels, {"a": a}, measures="rr", resamples=0).ws.per_query("a")["rr"]
    kept = api.evaluate(qrels, {"a": a}, measures="rr", resamples=0, ignore_self=True)
    # q1: q1 (self), d9, d2 -> d2 at rank 2 once q1 is gone; q2: d3 from rank 2 to 1
    assert list(plain) == [1 / 3, 1 / 2]
    assert list(kept.ws.per_query("a")["rr"]) == [1 / 2, 1.0]
    rep = kept.report()
    assert rep["inputs"]["settings"]["ignore_self"] is True
    assert rep["inputs"]["lanes"]["a"]["self_hits_removed"] == 2
    assert not [w for w in rep["summary"]["warnings"] if "ignore" in w["kind"]]


def test_ignore_self_equals_deleting_the_lines(tmp_path):
    # the oracle: the same run files with every line whose doc id is its query id deleted
    rng = np.random.default_rng(3)
    lines = {n: [] for n in ("a", "b")}
    kept = {n: [] for n in ("a", "b")}
    for n in lines:
        for q in range(20):
            docs = [f"y{int(d)}" for d in rng.choice(30, 12, replace=False)] + ([f"x{q}"] if q % 3 else [])
            for d, s in zip(docs, rng.random(len(docs))):
                line = f"x{q} Q0 {d} 0 {s:.6f} {n}\n"
                lines[n].append(line)
                if d != f"x{q}":
                    kept[n].append(line)
    qrels = _write(tmp_path, "qrels", "".join(f"x{q} 0 y{(q * 7) % 30} 1\nx{q} 0 x{q} 1\n" for q in range(20)))
    full = {n: _write(tmp_path, f"{n}.run", "".join(v)) for n, v in lines.items()}
    cut = {n: _write(tmp_path, f"{n}-cut.run", "".join(v)) for n, v in kept.items()}
    m = "ndcg@10,rr,p@5,recall@10"
    ours = api.evaluate(qrels, full, measures=m, resamples=0, ignore_self=True, fuse=["combsum:zmuv"]).ws
    oracle = api.evaluate(qrels, cut, measures=m, resamples=0, fuse=["combsum:zmuv"]).ws
    removed = {n: len(lines[n]) - len(kept[n]) for n in lines}
    assert all(v > 0 for v in removed.values())
    for lane in ("a", "b", "rrf", "combsum:zmuv"):
        for key, v in ours.per_query(lane).items():
            assert v.tolist() == oracle.per_query(lane)[key].tolist(), (lane, key)
    assert [f.self_hits_removed for f in ours.inputs if f.role == "lane"] == [removed["a"], removed["b"]]


def test_ignore_self_warns_when_it_removed_nothing_or_a_whole_lane(tmp_path):
    qrels = _write(tmp_path, "qrels", "q1 0 d2 1\n")
    none = _write(tmp_path, "none.run", "q1 Q0 d2 1 9 a\n")
    only = _write(tmp_path, "only.run", "q1 Q0 q1 1 9 a\n")
    p = run_cli("evaluate", "--qrels", qrels, f"--lane=n={none}", "--ignore-self", "--resamples", "0",
                "--out", tmp_path / "o.json")
    assert p.returncode == 0 and "--ignore-self removed no hit" in p.stdout + p.stderr
    kinds = [w["kind"] for w in json.loads((tmp_path / "o.json").read_text())["summary"]["warnings"]]
    assert "ignore_self_removed_nothing" in kinds
    p = run_cli("evaluate", "--qrels", qrels, f"--lane=n={none}", f"--lane=o={only}", "--ignore-self",
                "--resamples", "0", "--out", tmp_path / "o.json")
    assert p.returncode == 0 and "lane o: --ignore-self removed every hit" in p.stdout + p.stderr
    kinds = [w["kind"] for w in json.loads((tmp_path / "o.json").read_text())["summary"]["warnings"]]
    assert "ignore_self_removed_everything" in kinds and "ignore_self_removed_nothing" not in kinds
    # without the option nothing is dropped and nothing is said
    p = run_cli("evaluate", "--qrels", qrels, f"--lane=o={only}", "--resamples", "0", "--out", tmp_path / "o.json")
    rep = json.loads((tmp_path / "o.json").read_text())
    assert rep["inputs"]["settings"]["ignore_self"] is False and "self_hits_removed" not in rep["inputs"]["lanes"]["o"]


def test_ignore_self_refused_where_it_cannot_apply(tmp_path):
    qrels = _write(tmp_path, "qrels", "q1 0 d2 1\n")
    run = _write(tmp_path, "a.run", "q1 Q0 d2 1 9 a\n")
    p = run_cli("evaluate", "--qrels", qrels, f"--lane=a={run}", "--ignore-self", "--buckets", "2")
    assert p.returncode == 2 and "--ignore-self cannot be used with --buckets" in p.stderr
    pq = _write(tmp_path, "pq.csv", "run,query_id,measure,value\na,q1,rr,1\n")
    p = run_cli("evaluate", "--qrels", qrels, f"--per-query-in={pq}", "--ignore-self")
    assert p.returncode == 2 and "--ignore-self cannot be used with --per-query-in" in p.stderr


# ------------------------------------------------------------ calibrate with several methods


def _ranx_mean(runs, qrels, method: str, norm: str | None, **params) -> float:
    """The objective (ndcg@10 mean over the positive queries) of ranx's fused run, by pytrec_eval."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = ranx_dict(ranx.fuse(runs, norm=norm, method=method, params=params or None))
    positives = {q for q, d in qrels.items() if any(g >= 1 for g in d.values())}
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate({q: dict(fused.get(q, {})) for q in positives})
    return sum(got[q]["ndcg_cut_10"] for q in positives) / len(positives)


def test_calibrate_compares_methods_on_dev_and_held_out_test(tmp_path):
    # two lanes (an 11-point grid at step 0.1): the oracle fits wsum:zmuv by brute force
    # over ranx's weighted sums scored by pytrec_eval, first best point as rankscope's rule
    lanes = {n: LANES[n] for n in ("bm25", "dense")}
    dev_path, test_path = str(C / "qrels-dev.txt"), QRELS
    out = tmp_path / "th.json"
    p = run_cli("calibrate", "--qrels", dev_path, "--held-out", test_path, *[f"--lane={n}={v}" for n, v in lanes.items()],
                "--fuse", "wsum:zmuv", "--fuse", "combmnz:zmuv", "--fuse", "isr", "--gate-on", "bm25",
                "--resamples", "0", "--out", out)
    assert p.returncode == 0, p.stderr
    m = json.loads(out.read_text())["fusion"]["methods"]
    assert list(m["methods"]) == ["wsum:zmuv", "combmnz:zmuv", "isr"]
    runs = [ranx.Run.from_dict(read_trec(v)) for v in lanes.values()]
    dev, test = read_qrels(dev_path), read_qrels(test_path)
    grid = [(i / 10, 1 - i / 10) for i in range(11)]
    values = [_ranx_mean(runs, dev, "wsum", "zmuv", weights=list(w)) for w in grid]
    best = values.index(max(values))  # the first maximum
    w = m["methods"]["wsum:zmuv"]
    assert (w["weights"]["bm25"], w["weights"]["dense"]) == pytest.approx(grid[best], abs=1e-12)
    assert w["grid_points"] == 11
    assert w["dev"] == pytest.approx(values[best], abs=1e-12)
    assert w["test"] == pytest.approx(_ranx_mean(runs, test, "wsum", "zmuv", weights=list(grid[best])), abs=1e-12)
    for name, method in (("combmnz:zmuv", "mnz"), ("isr", "isr")):
        norm = "zmuv" if method == "mnz" else None
        assert m["methods"][name]["dev"] == pytest.approx(_ranx_mean(runs, dev, method, norm), abs=1e-12)
        assert m["methods"][name]["test"] == pytest.approx(_ranx_mean(runs, test, method, norm), abs=1e-12)
        assert "weights" not in m["methods"][name]
    devs = {k: v["dev"] for k, v in m["methods"].items()}
    tests = {k: v["test"] for k, v in m["methods"].items()}
    chosen = max(devs, key=lambda k: devs[k])
    assert m["chosen_on_dev"] == chosen and m["best_on_test"] == max(tests, key=lambda k: tests[k])
    assert m["optimism"] == max(tests.values()) - tests[chosen] >= 0
    assert "optimism of choosing on dev" in p.stdout and "wsum:zmuv" in p.stdout


def test_calibrate_held_out_needs_fuse(tmp_path):
    p = run_cli("calibrate", "--qrels", str(C / "qrels-dev.txt"), "--held-out", QRELS, f"--lane=bm25={LANES['bm25']}",
                "--out", tmp_path / "th.json")
    assert p.returncode == 2 and "--held-out needs --fuse" in p.stderr and not (tmp_path / "th.json").exists()


def test_evaluate_applies_the_calibrated_method_weights(tmp_path):
    lanes = [f"--lane={n}={LANES[n]}" for n in ("bm25", "dense")]
    th = tmp_path / "th.json"
    p = run_cli("calibrate", "--qrels", str(C / "qrels-dev.txt"), "--held-out", QRELS, *lanes, "--fuse", "wrrf",
                "--gate-on", "bm25", "--resamples", "0", "--out", th)
    assert p.returncode == 0, p.stderr
    fitted = json.loads(th.read_text())["fusion"]["methods"]["methods"]["wrrf"]
    out = tmp_path / "r.json"
    p = run_cli("evaluate", "--qrels", QRELS, *lanes, "--thresholds", th, "--fuse", "wrrf", "--fuse", "wsum:zmuv",
                "--metrics", "ndcg@10", "--resamples", "0", "--out", out)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    m = r["fusion"]["methods"]
    assert m["wrrf"]["weights"] == fitted["weights"] and m["wrrf"]["weights_source"].startswith("calibration")
    assert m["wrrf"]["label"] == "held-out" and m["wrrf"]["overlap_queries"] == 0
    # the lane evaluate adds is the lane calibrate scored on the held-out queries
    assert r["lanes"]["wrrf"]["doc"]["ndcg@10"]["value"] == fitted["test"]
    # a weighted method calibrate did not fit: 1/L each, said so
    assert m["wsum:zmuv"]["weights"] == {"bm25": 0.5, "dense": 0.5} and m["wsum:zmuv"]["weights_source"].startswith("equal")


def test_the_readme_method_table_is_what_calibrate_prints(tmp_path):
    """The README's Fusion table (three Cranfield lanes, dev/test, step 0.1) as calibrate writes it."""
    from support import REPO

    th = tmp_path / "th.json"
    methods = ["wsum:minmax", "wsum:zmuv", "wrrf", "combmnz:zmuv", "borda", "isr"]
    p = run_cli("calibrate", "--qrels", str(C / "qrels-dev.txt"), "--held-out", QRELS,
                *[f"--lane={n}={v}" for n, v in LANES.items()], *[a for m in methods for a in ("--fuse", m)],
                "--gate-on", "bm25", "--resamples", "0", "--out", th)
    assert p.returncode == 0, p.stderr
    got = json.loads(th.read_text())["fusion"]["methods"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name, r in got["methods"].items():
        row = f"| `{name}`" + (" (the convex lane)" if name == "wsum:minmax" else "") + f" | {r['dev']:.4f} | {r['test']:.4f} |"
        if "weights" in r:
            row += " " + " / ".join(f"{r['weights'][n]:g}" for n in LANES) + " |"
        assert row in readme, row
    assert got["chosen_on_dev"] == got["best_on_test"] == "wrrf" and got["optimism"] == 0
    assert "There `wrrf` is chosen on dev and is also best on test (optimism 0)" in readme


def test_ignore_self_cannot_change_on_a_loaded_workspace(tmp_path):
    # it shapes the loaded lanes (like depth): a copy under other settings must reload instead
    qrels = _write(tmp_path, "qrels", "q1 0 d2 1\n")
    run = _write(tmp_path, "a.run", "q1 Q0 q1 1 9 a\nq1 Q0 d2 2 8 a\n")
    ws = api.evaluate(qrels, {"a": run}, measures="rr", resamples=0).ws
    with pytest.raises(ValueError, match="cannot change ignore_self"):
        ws.with_settings(ignore_self=True)


def test_thresholds_fitted_with_ignore_self_warn_when_applied_without(tmp_path):
    qrels = _write(tmp_path, "qrels", "q1 0 d2 1\nq2 0 d3 1\n")
    a = _write(tmp_path, "a.run", "q1 Q0 q1 1 9 a\nq1 Q0 d2 2 8 a\nq2 Q0 d3 1 5 a\n")
    b = _write(tmp_path, "b.run", "q1 Q0 d2 1 9 b\nq2 Q0 q2 1 5 b\nq2 Q0 d3 2 4 b\n")
    th = tmp_path / "th.json"
    p = run_cli("calibrate", "--qrels", qrels, f"--lane=a={a}", f"--lane=b={b}", "--ignore-self", "--gate-on", "a",
                "--out", th)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "r.json"
    p = run_cli("evaluate", "--qrels", qrels, f"--lane=a={a}", f"--lane=b={b}", "--thresholds", th, "--resamples", "0",
                "--out", out)
    assert p.returncode == 0, p.stderr
    msgs = [w["message"] for w in json.loads(out.read_text())["summary"]["warnings"] if w["kind"] == "thresholds_settings"]
    assert msgs == ["thresholds fitted with --ignore-self are applied with no --ignore-self: the fitted floors and "
                    "weights may not hold under these settings"]


def test_plot_reloads_a_report_with_its_ignore_self(tmp_path):
    # plot's figures reload the report's lanes: with the lists the report saw, not the raw files
    from rankscope_tui.commands.plot import workspace_of_report

    qrels = _write(tmp_path, "qrels", "q1 0 d2 1\n")
    run = _write(tmp_path, "a.run", "q1 Q0 q1 1 9 a\nq1 Q0 d2 2 8 a\n")
    out = tmp_path / "r.json"
    p = run_cli("evaluate", "--qrels", qrels, f"--lane=a={run}", "--ignore-self", "--metrics", "rr", "--resamples", "0",
                "--out", out)
    assert p.returncode == 0, p.stderr
    ws = workspace_of_report(json.loads(out.read_text()), str(out))
    assert ws.settings.ignore_self and ws.lanes["a"].n_rows == 1
    assert list(ws.per_query("a")["rr"]) == [1.0]


def test_fuse_in_query_buckets_is_the_in_memory_report(tmp_path):
    from support import without_engine

    base = ["evaluate", "--qrels", QRELS, *[f"--lane={n}={LANES[n]}" for n in ("bm25", "dense")], "--fuse",
            "combmnz:zmuv", "--fuse", "wrrf", "--metrics", "ndcg@10", "--resamples", "0"]
    mem = run_cli(*base, "--out", tmp_path / "m.json")
    buck = run_cli(*base, "--buckets", "2", "--out", tmp_path / "b.json")
    assert mem.returncode == 0 and buck.returncode == 0, buck.stderr
    assert without_engine((tmp_path / "b.json").read_bytes(), "local", 2) == (tmp_path / "m.json").read_bytes()
