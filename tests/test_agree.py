"""``rankscope agree``: two sets of labels for the same pairs.

Oracles: scikit-learn's ``cohen_kappa_score`` for κ and weighted κ (the bootstrap too,
replayed pair by pair with it), ``scipy.stats.kendalltau`` for τ, hand-worked cases for
τ_AP and the prediction-powered mean, pytrec_eval for the lanes' per-query values on
Cranfield (a second qrels made there by perturbing the grades with a fixed seed). Bad
input (no pair in common, grades on different scales, a PPI subset that is not one) is
refused in one line with status 2 and nothing written.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import pytrec_eval
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score
from support import shared_path

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.judgments.kappa import bootstrap_kappas, confusion, kappa, query_tables
from rankscope_tui.kernel.judgments.ppi import ppi_mean
from rankscope_tui.kernel.judgments.rank_correlation import kendall_tau_b, tau_ap
from rankscope_tui.kernel.settings import AgreeSettings

SK_WEIGHTS = {"none": None, "linear": "linear", "quadratic": "quadratic"}


# ----------------------------------------------------------------------------- kappa


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_kappa_equals_sklearn(seed, weights):
    """Random graded labels, a second labeller agreeing often, biased up sometimes; grade 3
    never used on seeds 3..5 (an empty row and column of the 0..4 scale)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, 300)
    b = np.where(rng.random(300) < 0.6, a, np.clip(a + rng.integers(-1, 3, 300), 0, 4))
    if seed >= 3:
        a[a == 3], b[b == 3] = 4, 2
    got = kappa(confusion(a, b, 5), weights)
    want = cohen_kappa_score(a, b, labels=list(range(5)), weights=SK_WEIGHTS[weights])
    assert got == pytest.approx(want, abs=1e-12)
    if seed < 3:  # every grade used: sklearn's own labels are the scale
        assert got == pytest.approx(cohen_kappa_score(a, b, weights=SK_WEIGHTS[weights]), abs=1e-12)


def test_kappa_undefined_when_both_give_one_grade():
    assert math.isnan(kappa(confusion(np.zeros(5, int), np.zeros(5, int), 3), "none"))


def test_the_bootstrap_resamples_whole_queries():
    """The interval replayed independently: the protocol's query draws, the drawn queries'
    pairs gathered, sklearn's κ on each replicate, numpy's percentiles."""
    rng = np.random.default_rng(11)
    q = np.repeat(np.arange(12), rng.integers(3, 9, 12))
    a = rng.integers(0, 4, q.size)
    b = np.where(rng.random(q.size) < 0.7, a, rng.integers(0, 4, q.size))
    B, seed = 300, 5
    got = bootstrap_kappas(query_tables(q, a, b, 12, 4), ("none", "quadratic"), B, seed, 0.9)
    draws = np.random.default_rng(seed).integers(0, 12, size=(B, 12))
    for k, w in zip(got, ("none", "quadratic")):
        reps = []
        for row in draws:
            rows = np.concatenate([np.flatnonzero(q == j) for j in row])
            reps.append(cohen_kappa_score(a[rows], b[rows], labels=list(range(4)), weights=SK_WEIGHTS[w]))
        lo, hi = np.quantile(reps, [0.05, 0.95])
        assert k.estimate == pytest.approx(cohen_kappa_score(a, b, weights=SK_WEIGHTS[w]), abs=1e-12)
        assert (k.low, k.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))


# ----------------------------------------------------------------------------- rank correlation


@pytest.mark.parametrize("seed", range(8))
def test_kendall_tau_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    x = rng.integers(0, 5, n).astype(float) if seed % 2 else rng.random(n)  # odd seeds: ties
    y = x + rng.normal(0, 0.5, n) if seed % 3 else rng.integers(0, 4, n).astype(float)
    assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)


def test_tau_ap_hand_worked():
    """Truth A > B > C > D (scores 4, 3, 2, 1).

    Estimate B > A > C > D (the top pair swapped): walking the estimate, position 2 (A)
    has B above it, wrong: 0/1; position 3 (C): 2/2; position 4 (D): 3/3; τ_AP =
    2/3 · (0 + 1 + 1) − 1 = 1/3.
    Estimate A > B > D > C (the bottom pair swapped): 1/1, 2/2, then C has A, B, D above
    it, two right: 2/3; τ_AP = 2/3 · (1 + 1 + 2/3) − 1 = 7/9.
    Kendall's τ is 2/3 for both (one discordant pair of six)."""
    truth = [4, 3, 2, 1]
    top = [3, 4, 2, 1]
    bottom = [4, 3, 1, 2]
    assert tau_ap(truth, top) == pytest.approx(1 / 3, abs=1e-15)
    assert tau_ap(truth, bottom) == pytest.approx(7 / 9, abs=1e-15)
    assert kendall_tau_b(truth, top) == kendall_tau_b(truth, bottom) == pytest.approx(2 / 3)
    assert tau_ap(truth, truth) == 1.0 and tau_ap(truth, truth[::-1]) == -1.0


# ----------------------------------------------------------------------------- PPI


def test_ppi_hand_worked():
    """L: A = 1 0 1 1, B = 1 1 1 0 (Δ = 0 −1 0 1, mean 0, variance 2/3); U: B = 1 0 0 1 1
    (mean 3/5, variance 0.3). θ̂ = 0.6 + 0 = 0.6; se = √(0.3/5 + (2/3)/4) = √(0.06 + 1/6);
    at 95 % the interval is 0.6 ± 1.959963984540054 · se. A alone: mean 3/4, variance 1/4,
    se √(1/16) = 1/4."""
    est = ppi_mean([1, 0, 1, 1], [1, 1, 1, 0], [1, 0, 0, 1, 1], 0.95)
    se = math.sqrt(0.06 + 1 / 6)
    z = 1.959963984540054
    assert est.estimate == pytest.approx(0.6, abs=1e-15)
    assert est.se == pytest.approx(se, abs=1e-15)
    assert (est.low, est.high) == (pytest.approx(0.6 - z * se, abs=1e-12), pytest.approx(0.6 + z * se, abs=1e-12))
    assert (est.labelled, est.unlabelled, est.b_mean, est.rectifier) == (4, 5, pytest.approx(0.6), pytest.approx(0.0))
    assert est.classical == 0.75
    assert (est.classical_low, est.classical_high) == (pytest.approx(0.75 - z / 4), pytest.approx(0.75 + z / 4))


def _bootstrap_t_oracle(est, se, reps, rep_se, c):
    t = (reps - est) / rep_se
    lo, hi = np.quantile(t, [(1 - c) / 2, (1 + c) / 2])
    return est - hi * se, est - lo * se


def test_ppi_bootstrap_t_against_the_stated_draws():
    """With resamples B > 0 the interval is the equal-tailed bootstrap-t: recomputed here
    from the draws the docstring states (default_rng(seed): L's indices (B, n), then U's
    (B, N)) with plain numpy, for the PPI mean and for A alone."""
    rng = np.random.default_rng(11)
    n, N, B, seed = 23, 57, 1999, 5
    a = rng.beta(0.6, 1.4, n)
    bl = np.clip(a + rng.normal(0.1, 0.2, n), 0, 1)
    bu = rng.beta(0.8, 1.2, N)
    est = ppi_mean(a, bl, bu, 0.9, resamples=B, seed=seed)
    d = a - bl
    draws = np.random.default_rng(seed)
    li = draws.integers(0, n, (B, n))
    ui = draws.integers(0, N, (B, N))
    reps = bu[ui].mean(1) + d[li].mean(1)
    rep_se = np.sqrt(bu[ui].var(1, ddof=1) / N + d[li].var(1, ddof=1) / n)
    se = math.sqrt(bu.var(ddof=1) / N + d.var(ddof=1) / n)
    assert est.se == pytest.approx(se, rel=1e-14)
    lo, hi = _bootstrap_t_oracle(bu.mean() + d.mean(), se, reps, rep_se, 0.9)
    assert (est.low, est.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    clo, chi = _bootstrap_t_oracle(a.mean(), math.sqrt(a.var(ddof=1) / n), a[li].mean(1),
                                   np.sqrt(a[li].var(1, ddof=1) / n), 0.9)
    assert (est.classical_low, est.classical_high) == (pytest.approx(clo, abs=1e-12), pytest.approx(chi, abs=1e-12))
    # skewed differences: the bootstrap-t interval is not the symmetric normal one
    z = ppi_mean(a, bl, bu, 0.9)
    assert z.low != pytest.approx(est.low, abs=1e-6)


def test_ppi_bootstrap_t_blocks_do_not_change_the_numbers(monkeypatch):
    from rankscope_tui.kernel.judgments import ppi as ppi_module

    rng = np.random.default_rng(2)
    a, bl, bu = rng.random(31), rng.random(31), rng.random(90)
    whole = ppi_mean(a, bl, bu, 0.95, resamples=500, seed=3)
    monkeypatch.setattr(ppi_module, "_BLOCK_ELEMENTS", 97)  # a few rows per block, blocks of odd size
    assert ppi_mean(a, bl, bu, 0.95, resamples=500, seed=3) == whole
    assert ppi_mean(a, bl, bu, 0.95, resamples=500, seed=4) != whole


def test_ppi_bootstrap_t_with_nothing_varying():
    """Δ and U constant: every replicate is 0/0, the interval collapses to the estimate."""
    est = ppi_mean([1, 1, 1], [1, 1, 1], [0.5, 0.5], 0.95, resamples=99)
    assert (est.low, est.high) == (0.5, 0.5)


def test_ppi_needs_two_queries_on_each_side():
    with pytest.raises(InputError, match="at least 2"):
        ppi_mean([1.0], [1.0], [0.0, 1.0], 0.95)


def test_settings_refuse_bad_values():
    from rankscope_tui.kernel.errors import SettingError

    with pytest.raises(SettingError, match="linear or quadratic"):
        AgreeSettings(weights="cubic")
    with pytest.raises(SettingError, match="LO < HI"):
        AgreeSettings(grades=(3, 1))


# ----------------------------------------------------------------------------- Cranfield, end to end


def _read(path, kind):
    out: dict = {}
    for line in open(path):
        f = line.split()
        if f:
            out.setdefault(f[0], {})[f[2]] = float(f[4]) if kind == "run" else int(f[3])
    return out


def _write_qrels(path, qrels):
    with open(path, "w") as fh:
        for q, docs in qrels.items():
            for d, g in docs.items():
                fh.write(f"{q} 0 {d} {g}\n")


@pytest.fixture(scope="module")
def cran(tmp_path_factory):
    """Cranfield's test qrels (A) and a second qrels (B): each grade moved up one with
    probability 0.25 and down one with 0.1 (clipped to 0..4), seed 20261203."""
    d = shared_path("cranfield")
    a = _read(d / "qrels-test.txt", "qrels")
    rng = np.random.default_rng(20261203)
    b = {}
    for q, docs in a.items():
        b[q] = {}
        for doc, g in docs.items():
            u = rng.random()
            b[q][doc] = min(4, g + 1) if u < 0.25 else max(0, g - 1) if u < 0.35 else g
    out = tmp_path_factory.mktemp("agree")
    _write_qrels(out / "b.txt", b)
    runs = {n: _read(d / "lanes" / f"{n}.run", "run") for n in ("bm25", "dense", "tfidf")}
    return {"dir": d, "a": a, "b": b, "out": out, "runs": runs, "qa": d / "qrels-test.txt", "qb": out / "b.txt"}


def _lanes(cran):
    d = cran["dir"]
    return [f"{n}={d / 'lanes' / (n + '.run')}" for n in ("bm25", "dense", "tfidf")]


def _oracle_values(qrels, run, qids, measure):
    res = pytrec_eval.RelevanceEvaluator(qrels, {measure.split("_cut_")[0] + ("_cut.10" if "_cut_" in measure else "")}
                                         ).evaluate(run)
    return np.array([res.get(q, {}).get(measure, 0.0) for q in qids])


def test_agree_on_cranfield(cli_run, cran, tmp_path):
    out = tmp_path / "agree.json"
    strata = cran["dir"] / "strata.tsv"
    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", cran["qb"], *_lanes(cran), "--strata", strata,
                            "--metrics", "ndcg@10,p@10", "--resamples", "999", "--out", out)
    assert rc == 0, err
    d = json.loads(out.read_text())
    a, b = cran["a"], cran["b"]
    keys = [(q, doc) for q in a for doc in a[q]]
    ga, gb = np.array([a[q][k] for q, k in keys]), np.array([b[q][k] for q, k in keys])
    assert d["pairs"]["pairs"] == len(keys) and d["pairs"]["scale"] == {"low": 0, "high": 4}
    for k in d["kappa"]:
        assert k["estimate"] == pytest.approx(cohen_kappa_score(ga, gb, weights=SK_WEIGHTS[k["weights"]]), abs=1e-12)
        assert k["low"] < k["estimate"] < k["high"]
    assert d["binary_kappa"]["estimate"] == pytest.approx(cohen_kappa_score(ga >= 1, gb >= 1), abs=1e-12)
    assert d["exact_agreement"] == pytest.approx(np.mean(ga == gb))
    assert np.array_equal(np.array(d["confusion"]["counts"]),
                          np.array([[np.sum((ga == i) & (gb == j)) for j in range(5)] for i in range(5)]))
    labels = dict(line.rstrip("\n").split("\t") for line in open(strata) if line.strip())
    for st in d["strata"]:
        rows = [i for i, (q, _) in enumerate(keys) if labels.get(q, "(none)") == st["label"]]
        assert st["pairs"] == len(rows)
        assert st["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(ga[rows], gb[rows]), abs=1e-12)
        assert st["weighted"]["estimate"] == pytest.approx(
            cohen_kappa_score(ga[rows], gb[rows], labels=list(range(5)), weights="linear"), abs=1e-12)
    # the lanes' means under both: pytrec_eval per query over every judged query, 0 where nothing is relevant
    qids = sorted(a)
    for m, measure in (("ndcg@10", "ndcg_cut_10"), ("p@10", "P_10")):
        block = next(x for x in d["systems"]["measures"] if x["metric"] == m)
        ma, mb = [], []
        for ln in block["lanes"]:
            run = cran["runs"][ln["lane"]]
            want_a = _oracle_values(a, run, qids, measure).mean()
            want_b = _oracle_values(b, run, qids, measure).mean()
            assert ln["mean_a"] == pytest.approx(want_a, abs=1e-9), (m, ln["lane"])
            assert ln["mean_b"] == pytest.approx(want_b, abs=1e-9), (m, ln["lane"])
            ma.append(want_a)
            mb.append(want_b)
        assert block["kendall_tau"] == pytest.approx(kendalltau(ma, mb).statistic, abs=1e-12)
    for word in ("nan", "None", "null", "inf"):
        assert word not in text
    assert "Cohen's kappa" in text and "weighted kappa, linear (the default weighting)" in text


def _half_labelled(cran, path):
    """A labels a random half of Cranfield's queries (seed 3): all query ids and the chosen ones."""
    rng = np.random.default_rng(3)
    qids = sorted(cran["a"])
    chosen = sorted(rng.choice(qids, size=len(qids) // 2, replace=False).tolist())
    _write_qrels(path, {q: cran["a"][q] for q in chosen})
    return qids, chosen


def test_ppi_on_cranfield(cli_run, cran, tmp_path):
    """A labels a random half of the queries (seed 3), B labels every query: the PPI mean
    of each lane recomputed from pytrec_eval's per-query values and the formula."""
    qids, chosen = _half_labelled(cran, tmp_path / "a.txt")
    out = tmp_path / "ppi.json"
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", cran["qb"], "--ppi", *_lanes(cran),
                            "--resamples", "0", "--out", out)
    assert rc == 0, err
    d = json.loads(out.read_text())["ppi"]
    rest = [q for q in qids if q not in set(chosen)]
    assert d["queries"] == {"labelled": len(chosen), "unlabelled": len(rest)}
    z = 1.959963984540054
    for r in d["lanes"]:
        run = cran["runs"][r["lane"]]
        va = _oracle_values(cran["a"], run, chosen, "ndcg_cut_10")
        vbl = _oracle_values(cran["b"], run, chosen, "ndcg_cut_10")
        vbu = _oracle_values(cran["b"], run, rest, "ndcg_cut_10")
        est = vbu.mean() + (va - vbl).mean()
        se = math.sqrt(vbu.var(ddof=1) / len(rest) + (va - vbl).var(ddof=1) / len(chosen))
        assert r["estimate"] == pytest.approx(est, abs=1e-9)
        assert (r["low"], r["high"]) == (pytest.approx(est - z * se, abs=1e-9), pytest.approx(est + z * se, abs=1e-9))
        assert r["classical"] == pytest.approx(va.mean(), abs=1e-9)
    assert "prediction-powered means" in text and "random sample" in text


def test_ppi_default_interval_is_the_bootstrap_t(cli_run, cran, tmp_path):
    """Without --resamples 0 the PPI interval is the bootstrap-t of ppi_mean with the run's
    resamples and seed, and every face names the method."""
    qids, chosen = _half_labelled(cran, tmp_path / "a.txt")
    out = tmp_path / "ppi.json"
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", cran["qb"], "--ppi", *_lanes(cran),
                            "--resamples", "499", "--seed", "7", "--out", out)
    assert rc == 0, err
    d = json.loads(out.read_text())["ppi"]
    words = "studentized bootstrap (bootstrap-t, equal-tailed), 499 resamples, seed 7"
    assert d["method"] == words and words in text
    rest = [q for q in qids if q not in set(chosen)]
    for r in d["lanes"]:
        run = cran["runs"][r["lane"]]
        va = _oracle_values(cran["a"], run, chosen, "ndcg_cut_10")
        vbl = _oracle_values(cran["b"], run, chosen, "ndcg_cut_10")
        vbu = _oracle_values(cran["b"], run, rest, "ndcg_cut_10")
        want = ppi_mean(va, vbl, vbu, 0.95, resamples=499, seed=7)
        assert (r["low"], r["high"]) == (pytest.approx(want.low, abs=1e-9), pytest.approx(want.high, abs=1e-9))
        assert r["low"] < r["estimate"] < r["high"]


# ----------------------------------------------------------------------------- bad input


def _one_line_error(rc, out, err, *words):
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("rankscope: error: "), err
    assert "Traceback" not in err
    for w in words:
        assert w in err, err


def test_no_pair_in_common(cli_run, cran, tmp_path):
    out = tmp_path / "x.json"
    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", cran["dir"] / "qrels-dev.txt", "--out", out)
    _one_line_error(rc, text, err, "qrels-dev.txt", "no (query, doc) pair is judged in both")
    assert not out.exists()


def test_grades_on_different_scales(cli_run, cran, tmp_path):
    """B binary (0..1) against A graded 0..4: refused at A's first grade above 1 (the first
    line reaching past B's range); declared as one scale with --grades 0:4 it is read."""
    binary = {q: {d: int(g >= 1) for d, g in docs.items()} for q, docs in cran["a"].items()}
    _write_qrels(tmp_path / "bin.txt", binary)
    first = next(i for i, line in enumerate(open(cran["qa"]), 1) if int(line.split()[3]) > 1)
    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", tmp_path / "bin.txt", "--resamples", "0")
    _one_line_error(rc, text, err, f"qrels-test.txt:{first}", "grades on different scales", "0..4", "0..1", "--grades")
    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", tmp_path / "bin.txt", "--resamples", "0",
                            "--grades", "0:4")
    assert rc == 0, err
    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", tmp_path / "bin.txt", "--resamples", "0",
                            "--grades", "0:3")
    _one_line_error(rc, text, err, "qrels-test.txt:", "outside the declared scale 0..3")


def test_ppi_subset_that_is_not_a_subset(cli_run, cran, tmp_path):
    lines = open(cran["qa"]).read().splitlines()
    extra = "1 0 not-in-b-doc 1"
    (tmp_path / "a.txt").write_text("\n".join(lines[:40] + [extra]) + "\n")
    out = tmp_path / "x.json"
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", cran["qb"], "--ppi", *_lanes(cran),
                            "--out", out)
    _one_line_error(rc, text, err, "a.txt:41", "not-in-b-doc", "subset")
    assert not out.exists()


def test_ppi_needs_runs(cli_run, cran):
    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", cran["qb"], "--ppi")
    _one_line_error(rc, text, err, "--ppi", "needs runs")


def test_api_agree(cran):
    import rankscope_tui as rs

    d = rs.agree(cran["qa"], cran["qb"], resamples=0)
    a, b = cran["a"], cran["b"]
    keys = [(q, doc) for q in a for doc in a[q]]
    ga, gb = [a[q][k] for q, k in keys], [b[q][k] for q, k in keys]
    assert d["kappa"][2]["estimate"] == pytest.approx(cohen_kappa_score(ga, gb, weights="quadratic"), abs=1e-12)
    assert d["kappa"][0]["low"] is None  # no resamples: no interval


def test_ppi_subset_scale_rule(cli_run, cran, tmp_path):
    """A subset that never reaches grade 4 is read on B's scale; a subset grade beyond B's
    range is refused at its line."""
    lines = [ln for ln in open(cran["qa"]).read().splitlines() if ln.split()[0] in ("1", "2", "3")]
    low = [" ".join(ln.split()[:3] + [str(min(int(ln.split()[3]), 3))]) for ln in lines]
    b_low = [ln for ln in open(cran["qb"]).read().splitlines() if ln.split()[0] in ("1", "2", "3")]
    (tmp_path / "a.txt").write_text("\n".join(low) + "\n")
    # B keeps every query; in queries 1..3 A's grades (capped at 3) lie inside B's 0..4
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", cran["qb"], "--ppi", *_lanes(cran),
                            "--resamples", "0")
    assert rc == 0, err
    assert "grades 0..4" in text
    # B capped at 2 everywhere: A's first grade 3 is beyond B's range
    capped = [" ".join(ln.split()[:3] + [str(min(int(ln.split()[3]), 2))]) for ln in open(cran["qb"]).read().splitlines()]
    (tmp_path / "b2.txt").write_text("\n".join(capped) + "\n")
    first = next(i for i, ln in enumerate(low, 1) if int(ln.split()[3]) > 2)
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", tmp_path / "b2.txt", "--ppi",
                            *_lanes(cran))
    _one_line_error(rc, text, err, f"a.txt:{first}", "grades on different scales", "0..2")
    assert b_low  # (the fixture's B judges queries 1..3)


def test_undefined_kappa_is_said_in_words(cli_run, tmp_path):
    """Both labellers give every common pair grade 0: κ is undefined (sklearn returns nan),
    and the text says so without nan."""
    (tmp_path / "a.txt").write_text("1 0 d1 0\n1 0 d2 0\n2 0 d3 0\n")
    (tmp_path / "b.txt").write_text("1 0 d1 0\n1 0 d2 0\n2 0 d3 0\n")
    out = tmp_path / "u.json"
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", tmp_path / "b.txt", "--resamples", "99",
                            "--out", out)
    assert rc == 0, err
    with pytest.warns(Warning):  # sklearn: "undefined and set to ... nan"
        assert math.isnan(cohen_kappa_score([0, 0, 0], [0, 0, 0]))
    d = json.loads(out.read_text())
    assert all(k["estimate"] is None and k["low"] is None for k in d["kappa"])
    assert "undefined" in text and "no interval" in text
    for word in ("nan", "None", "null"):
        assert word not in text


def test_markdown_and_the_dashboard_tables(cli_run, cran, tmp_path):
    """``--format markdown`` holds the same tables; ``kernel.agreement_tables`` over a loaded
    workspace (its lanes and qrels are A's side) gives the command's numbers."""
    from rankscope_tui.kernel import agree, agreement_tables
    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", cran["qb"], *_lanes(cran), "--format",
                            "markdown", "--resamples", "199")
    assert rc == 0, err
    assert "| Cohen's kappa |" in text and "| lane | mean A | mean B |" in text
    load = LoadSettings(metrics=tuple(parse_metrics("ndcg@10")), resamples=199)
    lanes = [(n, str(cran["dir"] / "lanes" / f"{n}.run")) for n in ("bm25", "dense", "tfidf")]
    ws = Workspace.load(lanes, str(cran["qa"]), load)
    via_ws = agreement_tables(ws, str(cran["qb"])).as_dict()
    direct = agree(str(cran["qa"]), str(cran["qb"]), load=load, lanes=lanes).as_dict()
    assert via_ws == direct


def test_same_inputs_and_seed_give_the_same_bytes(cli_run, cran, tmp_path):
    outs = []
    for i in range(2):
        out = tmp_path / f"r{i}.json"
        rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", cran["qb"], *_lanes(cran), "--strata",
                                cran["dir"] / "strata.tsv", "--resamples", "499", "--seed", "7", "--out", out)
        assert rc == 0, err
        outs.append((out.read_bytes(), text))
    assert outs[0] == outs[1]


def test_a_pair_judged_twice_with_two_grades(cli_run, tmp_path):
    (tmp_path / "a.txt").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n")
    (tmp_path / "b.txt").write_text("1 0 d1 1\n1 0 d2 0\n")
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", tmp_path / "b.txt")
    _one_line_error(rc, text, err, "a.txt:3", "judged twice with different grades (first at line 1)")


def test_what_a_swap_changes():
    """Means A: x 0.3 > y 0.2 > z 0.1. B swaps x and y: the top lane changes; B swapping
    y and z keeps the top: the order changes below it. τ_AP by hand with three systems: top swap (y, x, z): position 2 (x) has y above, wrong: 0; position 3
    (z): 2/2; τ_AP = 2/2 · (0 + 1) − 1 = 0. Bottom swap (x, z, y): 1/1, then y has x and z
    above, one right: 1/2; τ_AP = (1 + 1/2) − 1 = 1/2."""
    from rankscope_tui.kernel.instruments.agree import CHANGE_BELOW, CHANGE_TOP, SystemAgreement
    from rankscope_tui.render.agree import render_agree

    def system(mb):
        ma = (0.3, 0.2, 0.1)
        from rankscope_tui.kernel.instruments.agree import _order_swaps

        return SystemAgreement("ndcg@10", ("x", "y", "z"), ma, mb, 10, kendall_tau_b(ma, mb), tau_ap(ma, mb), 0, 0,
                               _order_swaps(("x", "y", "z"), ma, mb))

    top, below = system((0.2, 0.3, 0.1)), system((0.3, 0.1, 0.2))
    assert (top.swapped, top.change, top.tau_ap) == ((("x", "y"),), CHANGE_TOP, 0.0)
    assert (below.swapped, below.change, below.tau_ap) == ((("y", "z"),), CHANGE_BELOW, 0.5)
    d = {"settings": {"grades": None, "confidence": 0.95, "seed": 0, "weights": "linear"},
         "inputs": [{"path": "a", "pairs": 1}, {"path": "b", "pairs": 1}],
         "pairs": {"pairs": 1, "queries": 1, "scale": {"low": 0, "high": 1}}, "exact_agreement": 1.0,
         "interval": "", "kappa": [{"weights": "none", "label": "Cohen's kappa", "estimate": None, "low": None,
                                     "high": None, "resamples": 0}],
         "binary_kappa": {"relevant": 1, "label": "Cohen's kappa", "estimate": None, "low": None, "high": None},
         "confusion": {"grades": [0, 1], "counts": [[1, 0], [0, 0]]}, "strata": [],
         "systems": {"means": "rule", "measures": [top.as_dict()]}, "notes": []}
    text = render_agree(d)
    assert "swapped under B: x above y under A, below under B" in text and CHANGE_TOP in text


def test_an_output_onto_an_input_is_refused(cli_run, cran, tmp_path):
    b = tmp_path / "b.txt"
    b.write_bytes(cran["qb"].read_bytes())
    strata = tmp_path / "s.tsv"
    strata.write_bytes((cran["dir"] / "strata.tsv").read_bytes())
    for target in (b, strata):
        before = target.read_bytes()
        rc, text, err = cli_run("agree", "--qrels", cran["qa"], "--qrels-b", b, "--strata", strata, "--out", target)
        _one_line_error(rc, text, err, "input")
        assert target.read_bytes() == before


def test_a_second_qrels_beyond_the_first_scale_is_named_at_its_line(cli_run, tmp_path):
    (tmp_path / "a.txt").write_text("1 0 d1 0\n1 0 d2 1\n2 0 d3 1\n")
    (tmp_path / "b.txt").write_text("1 0 d1 0\n1 0 d2 1\n2 0 d3 3\n")
    rc, text, err = cli_run("agree", "--qrels", tmp_path / "a.txt", "--qrels-b", tmp_path / "b.txt")
    _one_line_error(rc, text, err, "b.txt:3", "grades on different scales", "0..1", "0..3", "(grade 3 here)")
