"""The gate on the command line (issue 13, items 1-4, 6, 10, 12): what `calibrate` fits and
`evaluate --thresholds` applies is printed, taken from thresholds.json, refused when asked
of a lane that is not the gate lane, and warned about when the settings differ.

A small synthetic data set written here: two lanes over 60 queries (45 judged: 30
positives, 15 negatives; 15 queries only the lanes know), split into a dev and a test
qrels file. Expected values come from the files themselves (report.json, thresholds.json)
or are counted from the data written here, never from the printed text.
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from support import cli_many, run_cli

UNREADABLE = re.compile(r"\b(None|nan|NaN)\b|\bnull\b(?! (floor|distribution|hypothesis))")
LONG_FLOAT = re.compile(r"\d\.\d{8,}")  # an unrounded float such as 0.08790700000000007

DEV_POS, DEV_NEG = [f"q{i}" for i in range(1, 16)], [f"q{i}" for i in range(31, 39)]
TEST_POS, TEST_NEG = [f"q{i}" for i in range(16, 31)], [f"q{i}" for i in range(39, 46)]
LANE_ONLY = [f"q{i}" for i in range(46, 61)]


def _write_data(d):
    rng = np.random.default_rng(13)
    rel = {}
    for name in ("a", "b"):
        with open(d / f"{name}.run", "w") as f:
            for i in range(1, 61):
                q = f"q{i}"
                docs = rng.choice(200, size=20, replace=False)
                scores = rng.random(20) * 0.6
                if q in DEV_POS + TEST_POS:
                    rel.setdefault(q, [f"d{docs[0]}", f"d{docs[1]}"])
                    scores[0] += 0.3 + 0.2 * rng.random()
                for r, (doc, s) in enumerate(sorted(zip(docs, scores), key=lambda x: -x[1]), 1):
                    f.write(f"{q} Q0 d{doc} {r} {s:.6f} {name}\n")
    for split, pos, neg in (("dev", DEV_POS, DEV_NEG), ("test", TEST_POS, TEST_NEG)):
        with open(d / f"qrels-{split}.txt", "w") as f:
            for q in pos:
                for grade, doc in zip((2, 1), rel[q]):  # grade 2 too, so --relevant 2 keeps positives
                    f.write(f"{q} 0 {doc} {grade}\n")
            for q in neg:
                f.write(f"{q} 0 d999 0\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("gatecli")
    _write_data(d)
    lanes = ["--lane", "a.run", "--lane", "b.run"]
    jobs = {
        "cal": (["calibrate", *lanes, "--qrels", "qrels-dev.txt", "--gate-on", "b", "--out", "th.json"], d, None),
        "cal_cons": (["calibrate", *lanes, "--qrels", "qrels-dev.txt", "--gate-on", "b", "--conservative",
                      "--out", "th-cons.json"], d, None),
        "cal_mut": (["calibrate", *lanes, "--qrels", "qrels-dev.txt", "--gate-on", "b", "--mutual", "2",
                     "--depth", "15", "--out", "th-mut.json"], d, None),
    }
    out = cli_many(jobs)
    for k in jobs:
        assert out[k].returncode == 0, (k, out[k].stderr)
    return d, lanes, out


def readable(p):
    for stream in (p.stdout, p.stderr):
        hit = UNREADABLE.search(stream)
        assert hit is None, stream[max(0, hit.start() - 100):hit.end() + 100]
        assert "Traceback" not in stream


def one_error_line(p, *words):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("rankscope: error: "), p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == ""


def six(x) -> str:
    return f"{x:.6g}"


def rate_text(r) -> str:
    return f"{r['k']}/{r['n']} = {r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"


# --------------------------------------------------------------------------- item 1


def test_evaluate_takes_the_gate_lane_recorded_by_calibrate(data):
    d, lanes, _ = data
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th.json", "--out", "r1.json", cwd=d)
    assert p.returncode == 0, p.stderr
    g = json.loads((d / "r1.json").read_text())["gate"]
    assert not g.get("skipped") and g["lane"] == "b" and "applied" in g
    assert "Gate on b:" in p.stdout and "name the gate lane" not in p.stdout


def test_gate_on_that_disagrees_with_the_thresholds_lane_is_an_error(data):
    d, lanes, _ = data
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th.json", "--gate-on", "a",
                "--out", "never.json", cwd=d)
    one_error_line(p, "th.json", "--gate-on a", "'b'")
    assert not (d / "never.json").exists()
    same = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th.json", "--gate-on", "b", cwd=d)
    assert same.returncode == 0, same.stderr


def test_thresholds_lane_that_is_not_loaded_is_an_error(data):
    d, _, _ = data
    p = run_cli("evaluate", "--lane", "a.run", "--lane", "x=b.run", "--qrels", "qrels-test.txt", "--thresholds", "th.json",
                cwd=d)
    one_error_line(p, "th.json")
    assert "'b'" in p.stderr or "['a', 'b']" in p.stderr


# --------------------------------------------------------------------------- item 2


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex"])
def test_unattainable_floor_prints_its_reason_and_reject_all(data, fmt):
    d, lanes, out = data
    th = json.loads((d / "th-cons.json").read_text())
    assert th["gate"]["floor"] is None  # 8 dev negatives: zero false accepts on the Wilson bound needs 73
    cal = out["cal_cons"]
    readable(cal)
    line = next(ln for ln in cal.stdout.splitlines() if "operating floor" in ln)
    assert "+inf (reject all)" in line and "unattainable with 8 negatives" in line and "n >= 73" in line
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th-cons.json", "--format", fmt, cwd=d)
    assert p.returncode == 0, p.stderr
    readable(p)
    text = p.stdout.replace("\\", "")
    assert "floor +inf (reject all)" in text and "unattainable with 8 negatives" in text
    assert "floor None" not in text


# --------------------------------------------------------------------------- item 3


def test_calibrate_prints_every_fitted_quantity(data):
    d, _, out = data
    th = json.loads((d / "th.json").read_text())
    g = th["gate"]
    text = out["cal"].stdout
    readable(out["cal"])
    assert not LONG_FLOAT.search(text), text
    c = th["fusion"]["convex"]
    assert f"convex weights: a {c['weights']['a']:g}, b {c['weights']['b']:g}" in text
    assert f"{c['objective']['name']}: {c['objective']['value']:.4f}" in text
    for name, nf in g["null_floor"].items():
        words = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}[name]
        line = next(ln for ln in text.splitlines() if f"null floor ({words} negatives" in ln)
        assert six(nf["floor"]) in line
        assert all(rate_text(r) in line for r in nf["fpir"].values())
    assert "conformal floor" in text
    assert g["floor"] is not None and f"operating floor (picked on in-domain negatives): {six(g['floor'])}" in text
    assert g["margin"] is not None  # fitted without being asked for: it must say so
    line = next(ln for ln in text.splitlines() if "operating margin" in ln)
    assert six(g["margin"]) in line and "applies it" in line
    assert "mutual r: off" in text
    mut = out["cal_mut"].stdout
    ms = json.loads((d / "th-mut.json").read_text())["gate"]["mutual"]
    assert ms["built_from"] == len(DEV_POS) + len(DEV_NEG)
    assert (f"mutual r: 2 (`evaluate --thresholds` applies it ANDed with the floor); lists built from a batch of "
            f"{ms['built_from']} calibration queries, vacuous for {ms['vacuous_queries']}") in mut


def test_evaluate_prints_the_floor_alone_beside_each_combined_condition(data):
    d, lanes, _ = data
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th.json", "--out", "r3.json", cwd=d)
    assert p.returncode == 0, p.stderr
    readable(p)
    assert not LONG_FLOAT.search(p.stdout)
    g = json.loads((d / "r3.json").read_text())["gate"]
    th = json.loads((d / "th.json").read_text())["gate"]
    assert g["applied"]["margin"] == th["margin"]
    assert f"margin {six(th['margin'])} (calibrated)" in p.stdout
    conds = g["outcome_by_condition"]
    assert list(conds) == ["floor", "floor AND margin"]
    for name, label in (("floor", "floor alone"), ("floor AND margin", "floor AND margin")):
        o = conds[name]
        line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith(label + ":"))
        assert f"FNIR {rate_text(o['fnir'])} (rejected {o['rejected']}, wrong accept {o['wrong_accept']})" in line
        assert f"FPIR in-domain {rate_text(o['fpir']['in_domain'])}" in line


# --------------------------------------------------------------------------- item 4


@pytest.mark.parametrize("option", [["--mutual", "2"], ["--margin", "0.1"], ["--fpir", "0.1"], ["--conservative"],
                                    ["--miss-rate", "0.1"]])
def test_gate_option_without_a_gate_lane_is_an_error(data, option):
    d, lanes, _ = data
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", *option, "--out", "never.json", cwd=d)
    one_error_line(p, option[0], "--gate-on")
    assert not (d / "never.json").exists()


def test_gate_options_with_one_lane_or_a_named_lane_are_applied(data):
    d, lanes, _ = data
    one = run_cli("evaluate", "--lane", "b.run", "--qrels", "qrels-test.txt", "--mutual", "2", cwd=d)
    assert one.returncode == 0, one.stderr
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--gate-on", "b", "--mutual", "2", "--margin", "0.05",
                "--out", "r4.json", cwd=d)
    assert p.returncode == 0, p.stderr
    readable(p)
    g = json.loads((d / "r4.json").read_text())["gate"]
    ms = g["mutual"]
    line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith("mutual r = 2"))
    assert f"batch of {ms['built_from']} queries" in line
    assert f"vacuous for {ms['vacuous_queries']} ({100 * ms['vacuous_share']:.1f} %)" in line
    assert ms["built_from"] == len(TEST_POS) + len(TEST_NEG)
    assert "margin 0.05, mutual r = 2" in p.stdout
    for label in ("floor alone", "floor AND margin", "floor AND mutual", "floor AND margin AND mutual"):
        assert any(ln.strip().startswith(label + ":") for ln in p.stdout.splitlines()), label


def test_gate_option_values_are_checked(data):
    d, lanes, _ = data
    for args, words in ((["--mutual", "0"], ["--mutual"]), (["--fpir", "1.5"], ["--fpir"]),
                        (["--margin", "inf"], ["--margin"])):
        p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--gate-on", "b", *args, cwd=d)
        one_error_line(p, *words)


# --------------------------------------------------------------------------- item 6


def test_thresholds_applied_under_other_settings_warn_naming_both_values(data):
    d, lanes, _ = data
    p = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th-mut.json", "--depth", "10",
                "--relevant", "2", "--metrics", "rr", "--out", "r6.json", cwd=d)
    assert p.returncode == 0, p.stderr
    readable(p)
    warnings = [w["message"] for w in json.loads((d / "r6.json").read_text())["summary"]["warnings"]
                if w["kind"] == "thresholds_settings"]
    assert any("--depth 15" in w and "--depth 10" in w for w in warnings), warnings
    assert any("--relevant 1" in w and "--relevant 2" in w for w in warnings), warnings
    assert any("ndcg@10" in w for w in warnings), warnings
    for w in warnings:
        assert w in p.stdout
    same = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", "th-mut.json", "--depth", "15",
                   "--out", "r6b.json", cwd=d)
    assert not [w for w in json.loads((d / "r6b.json").read_text())["summary"]["warnings"]
                if w["kind"] == "thresholds_settings"]
    assert "thresholds fitted" not in same.stdout


def test_thresholds_store_numbers_as_numbers(data):
    d, _, _ = data
    th = json.loads((d / "th-mut.json").read_text())
    strings = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}.{k}")
        elif isinstance(x, list):
            for v in x:
                walk(v, path + "[]")
        elif isinstance(x, str) and path != ".calibration.qids[]":
            try:
                float(x)
            except ValueError:
                return
            strings.append((path, x))

    walk(th, "")
    assert strings == []
    assert th["gate"]["conformal_floor"]["alpha"] == 0.05 and th["settings"]["depth"] == 15
    assert th["gate"]["mutual_r"] == 2


# --------------------------------------------------------------------------- item 10


def test_fused_queries_counts_the_calibration_queries(data):
    d, _, _ = data
    th = json.loads((d / "th.json").read_text())
    assert len(th["calibration"]["qids"]) == len(DEV_POS) + len(DEV_NEG)
    assert th["fusion"]["convex"]["fused_queries"] == len(DEV_POS) + len(DEV_NEG)  # not the 60 lane queries


# --------------------------------------------------------------------------- item 12


@pytest.mark.parametrize("p_sup, words", [
    (0.012, ["p_superiority = 0.0120", "98.8 % of replicates favour the baseline", "lower tail"]),
    (0.988, ["p_superiority = 0.9880", "98.8 % of replicates favour the candidate", "upper tail"]),
    (0.6, ["p_superiority = 0.6000", "60.0 % of replicates favour the candidate", "neither tail"]),
])
def test_compare_says_which_tail_p_superiority_crosses(p_sup, words):
    from rankscope_tui.kernel.statistics import paired as pa
    from rankscope_tui.kernel.statistics import verdict as vd

    rng = np.random.default_rng(1)
    b = rng.random(100)
    s = pa.paired_statistics(b, b + rng.normal(0.01, 0.1, 100), sorted(f"q{i:03d}" for i in range(100)), resamples=999)
    # the randomization test says the opposite of the bootstrap, so the row explains the disagreement
    crossed = p_sup >= 0.95 or p_sup <= 0.05
    s = dataclasses.replace(s, p_superiority=p_sup, randomization_p=0.5 if crossed else 0.001,
                            t_p=0.5 if crossed else 0.001)
    row = vd.decide([vd.RowInput("base", "cand", "ndcg@10", s)]).rows[0]
    text = next(t for t in row.disagreements if "p_superiority" in t)
    assert "crosses the" not in text
    for w in words:
        assert w in text, (w, text)


def test_calibrate_without_positives_fits_no_convex_weights(data, tmp_path):
    """With no relevant document among the calibration queries every grid point scores 0:
    the weights would be the tie rule's first point, so none are written, and evaluate with
    that file has no convex lane."""
    d, lanes, _ = data
    (tmp_path / "q0.txt").write_text("".join(f"{q} 0 d999 0\n" for q in DEV_NEG))
    cal = run_cli("calibrate", *lanes, "--qrels", tmp_path / "q0.txt", "--gate-on", "b", "--out", tmp_path / "th.json",
                  cwd=d)
    assert cal.returncode == 0, cal.stderr
    readable(cal)
    th = json.loads((tmp_path / "th.json").read_text())
    assert "convex" not in th["fusion"] and th["fusion"]["convex_reason"].startswith("not fitted")
    assert "convex weights: not fitted: no calibration query has a relevant document" in cal.stdout
    ev = run_cli("evaluate", *lanes, "--qrels", "qrels-test.txt", "--thresholds", tmp_path / "th.json",
                 "--resamples", "0", "--out", tmp_path / "r.json", cwd=d)
    assert ev.returncode == 0, ev.stderr
    assert "convex" not in json.loads((tmp_path / "r.json").read_text())["lanes"]


def test_calibrate_warns_when_every_grid_point_ties(data, tmp_path):
    """Positives no lane retrieves: every weight scores 0.0000 and the fit says it carries no
    information (the weights are still written: the queries exist, the lanes missed them)."""
    d, lanes, _ = data
    (tmp_path / "qm.txt").write_text("".join(f"{q} 0 nowhere 1\n" for q in DEV_POS))
    cal = run_cli("calibrate", *lanes, "--qrels", tmp_path / "qm.txt", "--gate-on", "b", "--out", tmp_path / "th.json",
                  cwd=d)
    assert cal.returncode == 0, cal.stderr
    c = json.loads((tmp_path / "th.json").read_text())["fusion"]["convex"]
    assert {p["objective"] for p in c["grid"]["values"]} == {0.0}
    assert "warning: every grid point scores 0.0000: the weights are the first point by the tie rule" in cal.stdout
