"""The fusion instruments' entry points: RRF at k (kernel/fusion/rrf_at_k.py) and the calibration
comparison (kernel/fusion/calibration.py), over the built-in demo.

- at the report's k, the entry point's means and dilution are `evaluate --out`'s (the
  fused lane's means in ``lanes.rrf``, the dilution in ``fusion.rrf``), and so are those
  of the slider's prepared path (``RRFExplorer``);
- an explorer keeps at most its limit of fused lanes, however many k are visited, each cut
  to its head (the means and dilution stay the whole lane's);
- the calibration comparison fits what `calibrate` fits, and its optimism is the gap;
- a calibrated RRF k makes a new workspace (``prepare`` never mutates one);
- the demo is recognised from its marker file by the kernel, which never imports the demo.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from rankscope_tui.cli import main as cli_main
from rankscope_tui.demo import FILES, SHOWCASE, write_demo
from rankscope_tui.kernel.fusion.calibration import compare_calibration, fit_convex
from rankscope_tui.kernel.fusion.rrf_at_k import RRFExplorer, rrf_at_k
from rankscope_tui.kernel.gate.thresholds import THRESHOLDS_SCHEMA
from rankscope_tui.kernel.instruments import evaluate as P
from rankscope_tui.kernel.settings import CalibrationSettings, LoadSettings
from rankscope_tui.kernel.workspace.loaded import Sources, load


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("demo")
    write_demo(d, seed=7)
    return d


def _sources(d: Path, qrels: str = "qrels_test", **settings) -> Sources:
    f = {k: str(d / v) for k, v in FILES.items()}
    return Sources((("lexical", f["lexical"]), ("dense", f["dense"])), f[qrels], LoadSettings(**settings),
                   queries=f["queries"])


@pytest.fixture(scope="module")
def report(demo, tmp_path_factory) -> dict:
    f = {k: str(demo / v) for k, v in FILES.items()}
    out = tmp_path_factory.mktemp("out") / "report.json"
    assert cli_main(["evaluate", "--lane", f"lexical={f['lexical']}", "--lane", f"dense={f['dense']}",
                     "--qrels", f["qrels_test"], "--queries", f["queries"], "--resamples", "0", "--out", str(out)]) == 0
    return json.loads(out.read_text())


def _dilution_qids(ws, r) -> dict:
    return {lane: [str(ws.qids[int(q)]) for q in qs] for lane, qs in r.diluted.items()}


def test_rrf_at_the_default_k_is_the_reports_fusion_block(demo, report):
    ws = load(_sources(demo, resamples=0))
    metrics = [m.key for m in ws.settings.metrics]
    block = report["fusion"]["rrf"]
    want_dil = {lane: e["queries"] for lane, e in block["dilution"]["lanes"].items()}
    want_means = {m: report["lanes"]["rrf"]["doc"][m]["value"] for m in metrics}
    assert block["k"] == 60 and block["k_source"] == "default"
    assert any(want_dil.values()), "the demo dilutes some query"

    slider = RRFExplorer(ws).at(60)  # before the report's lanes exist: the prepared table
    P.add_derived_lanes(ws)
    own = rrf_at_k(ws)  # the report's own lane and cached numbers
    assert own.lane is ws.lanes["rrf"] and own.k == 60
    for r in (own, slider, RRFExplorer(ws).at(60)):
        assert r.means == want_means
        assert _dilution_qids(ws, r) == want_dil
    assert P.fusion_block(ws, None)["rrf"] == block


def test_the_explorer_keeps_at_most_its_limit_of_fused_lanes(demo):
    ws = load(_sources(demo))
    ex = RRFExplorer(ws, limit=4)
    seen = {}
    for k in range(1, 21):
        seen[k] = ex.at(k).means
        assert len(ex.kept) <= 4
    assert ex.kept == (17, 18, 19, 20)
    assert "rrf" not in ws.lanes and "rrf@1" not in ws.lanes  # the workspace is only read
    again = ex.at(3)  # dropped, recomputed: the same numbers
    assert again.means == seen[3] and ex.kept == (18, 19, 20, 3)
    assert seen[1] != seen[20]


def test_the_explorer_keeps_only_the_head_of_each_fused_lane_and_the_whole_lanes_numbers(demo):
    """Issue 14 item 9: the slider's results hold the first ``head`` ranks per query of the
    fused lane (what the view lists), not the whole lane; the means and the dilution are
    still those of the whole lane, and the kept rows are the whole lane's first rows."""
    import numpy as np

    ws = load(_sources(demo))
    for k in (5, 60, 100):
        full = rrf_at_k(ws, k)
        got = RRFExplorer(ws, head=3).at(k)
        assert got.means == full.means and _dilution_qids(ws, got) == _dilution_qids(ws, full)
        assert int(got.lane.rank.max()) == 3 < int(full.lane.rank.max())
        for q in range(ws.n_queries):  # the head is the whole lane's first three rows, in order
            a, b = got.lane.rows_of(q), full.lane.rows_of(q)
            assert np.array_equal(got.lane.doc[a], full.lane.doc[b][:3])
            assert np.array_equal(got.lane.score[a], full.lane.score[b][:3])
    whole = RRFExplorer(ws, head=None).at(5)
    assert whole.lane.n_rows == rrf_at_k(ws, 5).lane.n_rows
    with pytest.raises(ValueError):
        RRFExplorer(ws, head=0)


def test_an_explorer_over_large_inputs_fuses_from_the_lanes_with_the_same_numbers(demo, monkeypatch):
    """Issue 14 item 9: past ``EXPLORER_PREPARE_ROWS`` input rows (no depth cut) the explorer
    holds no prepared table; its lanes, means and dilution are the prepared path's."""
    import numpy as np

    from rankscope_tui.kernel.fusion import rrf_at_k as R

    ws = load(_sources(demo))
    prepared = RRFExplorer(ws, head=None)
    assert prepared.prepares
    monkeypatch.setattr(R, "EXPLORER_PREPARE_ROWS", 0)
    direct = RRFExplorer(ws, head=None)
    assert not direct.prepares
    for k in (1, 17, 200):
        a, b = prepared.at(k), direct.at(k)
        assert a.means == b.means and _dilution_qids(ws, a) == _dilution_qids(ws, b)
        for col in ("qid", "doc", "score", "rank", "offsets"):
            assert np.array_equal(getattr(a.lane, col), getattr(b.lane, col))
    assert direct._table is None
    assert RRFExplorer(load(_sources(demo, depth=50))).prepares  # a depth cut: the table pays


def test_calibration_comparison_fits_what_calibrate_fits(demo, tmp_path):
    test, dev = load(_sources(demo)), load(_sources(demo, "qrels_dev"))
    cmp = compare_calibration(test, dev, CalibrationSettings(step=0.1, objective="ndcg@10"))
    out = tmp_path / "th.json"
    assert cli_main(["calibrate", "--lane", str(demo / FILES["lexical"]), "--lane", str(demo / FILES["dense"]),
                     "--qrels", str(demo / FILES["qrels_dev"]), "--gate-on", "dense", "--step", "0.1",
                     "--objective", "ndcg@10", "--out", str(out)]) == 0
    th = json.loads(out.read_text())
    assert dict(zip(cmp.fit_dev.lanes, cmp.fit_dev.weights)) == th["fusion"]["convex"]["weights"]
    assert cmp.fit_dev.weights == fit_convex(dev, 0.1, "ndcg@10").weights
    assert cmp.n_dev == dev.positives.size and cmp.n_test == test.positives.size
    assert cmp.fit_test.objective == cmp.test_at_test["ndcg@10"]  # in-sample: the fit's own score
    assert cmp.optimism == cmp.fit_test.objective - cmp.test_at_dev["ndcg@10"] >= 0
    assert cmp.dev_at_dev["ndcg@10"] == cmp.fit_dev.objective
    assert "convex" not in test.lanes and "convex" not in dev.lanes
    alone = compare_calibration(test, None)
    assert alone.fit_dev is None and alone.optimism is None and alone.fit_test.weights == cmp.fit_test.weights


def test_a_calibrated_rrf_k_makes_a_new_workspace(demo, tmp_path):
    th = tmp_path / "th.json"
    th.write_text(json.dumps({"schema": THRESHOLDS_SCHEMA, "calibration": {"qids": []},
                              "fusion": {"rrf_k": 20, "rrf_k_source": "chosen on the command line"}}))
    ws = load(_sources(demo))
    before = ws.settings
    got, thr = P.prepare(ws, str(th))
    assert got is not ws and ws.settings is before and "rrf" not in ws.lanes
    assert got.settings == replace(before, rrf_k=20, rrf_k_source="calibration")
    assert rrf_at_k(got).lane is got.lanes["rrf"]
    assert rrf_at_k(got).means == RRFExplorer(ws).at(20).means
    again, _ = P.prepare(got, str(th))
    assert again is got  # idempotent
    chosen = load(_sources(demo, rrf_k=30, rrf_k_source="chosen on the command line"))
    same, _ = P.prepare(chosen, str(th))
    assert same is chosen and same.settings.rrf_k == 30  # the command line wins


def test_the_demo_is_recognised_without_importing_it(demo):
    ws = load(_sources(demo))
    assert ws.synthetic and ws.showcase["dilution"] == SHOWCASE["dilution"]
    code = (
        "import sys\n"
        "from rankscope_tui.kernel.workspace import loaded\n"
        "from rankscope_tui.kernel.instruments import evaluate\n"
        "from rankscope_tui.kernel.fusion import rrf_at_k, calibration\n"
        "from rankscope_tui.kernel.inputs import provenance\n"
        "from rankscope_tui.screens import rrf, calibrate\n"
        "assert 'rankscope_tui.demo' not in sys.modules\n"
        "assert not any(m in sys.modules for m in ('rankscope_tui.app', 'rankscope_tui.cli'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
