"""One road: a number the dashboard shows is the number the command line prints and
writes, because both ask the same kernel entry point.

For the demo and the Cranfield set: the calibration comparison (weights fitted on dev,
their held-out score on test, the fit-on-test score and the optimism between them) is
what `rankscope calibrate` on each split and `rankscope evaluate --thresholds` on test
give; RRF at the report's k (means and dilution) is `evaluate --out`'s fusion block.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import SHARED_DATA, shared_path
from textual.content import Content
from textual.widgets import Static

from rankscope_tui.app import RankscopeApp
from rankscope_tui.cli import main as cli_main
from rankscope_tui.kernel.settings import GateSettings, LoadSettings
from rankscope_tui.state import DashboardOptions, DashboardState
from rankscope_tui.widgets import fmt

SIZE = (140, 45)
B = "999"  # compare-sized resampling keeps the suite fast; the numbers checked here do not resample


def _sets(demo_dir: Path) -> dict:
    out = {"demo": {"lanes": (("lexical", str(demo_dir / "lexical.run")), ("dense", str(demo_dir / "dense.run"))),
                    "dev": str(demo_dir / "qrels-dev.txt"), "test": str(demo_dir / "qrels-test.txt")}}
    c = SHARED_DATA / "cranfield"
    if c.is_dir():
        out["cranfield"] = {"lanes": (("bm25", str(c / "lanes" / "bm25.run")), ("dense", str(c / "lanes" / "dense.run"))),
                            "dev": str(c / "qrels-dev.txt"), "test": str(c / "qrels-test.txt")}
    return out


@pytest.fixture(scope="module", params=["demo", "cranfield"])
def split(request, demo_dir):
    sets = _sets(demo_dir)
    if request.param not in sets:
        shared_path("cranfield")  # skips with the missing path printed
    return request.param, sets[request.param]


def _lane_args(s: dict) -> list[str]:
    return [x for name, path in s["lanes"] for x in ("--lane", f"{name}={path}")]


async def _app(s: dict, tmp: Path):
    options = DashboardOptions(lanes=s["lanes"], qrels=s["test"], dev_qrels=s["dev"],
                               load=LoadSettings(resamples=int(B)), gate=GateSettings(gate_on="dense"))
    return RankscopeApp(DashboardState(options, source_label="one road"))


async def _settle(app, pilot):
    for _ in range(200):
        await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        if not any(w.is_running for w in app.workers):
            await pilot.pause()
            if not any(w.is_running for w in app.workers):
                return


async def test_calibration_optimism_is_what_calibrate_and_evaluate_print(split, tmp_path):
    name, s = split
    lanes = _lane_args(s)
    dev_th, test_th, report = tmp_path / "dev.json", tmp_path / "test.json", tmp_path / "report.json"
    assert cli_main(["calibrate", *lanes, "--qrels", s["dev"], "--gate-on", "dense", "--out", str(dev_th)]) == 0
    assert cli_main(["calibrate", *lanes, "--qrels", s["test"], "--gate-on", "dense", "--out", str(test_th)]) == 0
    assert cli_main(["evaluate", *lanes, "--qrels", s["test"], "--thresholds", str(dev_th), "--gate-on", "dense",
                     "--resamples", B, "--out", str(report)]) == 0
    dev_fit = json.loads(dev_th.read_text())["fusion"]["convex"]
    test_fit = json.loads(test_th.read_text())["fusion"]["convex"]
    held_out = json.loads(report.read_text())["lanes"]["convex"]["doc"]["ndcg@10"]["value"]
    optimism = test_fit["objective"]["value"] - held_out

    app = await _app(s, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("5")
        await _settle(app, pilot)
        screen = app.screen
        r = screen.result
        assert r is not None and r.fit_dev is not None
        lanes_order = [n for n, _ in s["lanes"]]
        assert dict(zip(lanes_order, r.fit_dev.weights)) == pytest.approx(dev_fit["weights"], abs=0)
        assert dict(zip(lanes_order, r.fit_test.weights)) == pytest.approx(test_fit["weights"], abs=0)
        assert r.fit_dev.objective == dev_fit["objective"]["value"]
        assert r.test_at_dev["ndcg@10"] == held_out
        assert r.fit_test.objective == test_fit["objective"]["value"]
        assert r.optimism == optimism
        if not screen.fit_on_test:
            await pilot.press("f")  # show the fit-on-test line and the optimism
            await _settle(app, pilot)
        text = Content.from_markup(str(screen.query_one("#cal-summary", Static).content)).plain
        assert f"test {fmt.num(held_out, 4)}" in text
        assert f"optimism of fitting on test: {fmt.num(optimism, 4)}" in text


async def test_rrf_at_the_reports_k_is_the_reports_fusion_block(split, tmp_path):
    name, s = split
    report = tmp_path / "report.json"
    assert cli_main(["evaluate", *_lane_args(s), "--qrels", s["test"], "--gate-on", "dense", "--resamples", B,
                     "--out", str(report)]) == 0
    rep = json.loads(report.read_text())
    app = await _app(s, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("4")
        await _settle(app, pilot)
        screen = app.screen
        r = screen.current
        assert r is not None and r.k == rep["inputs"]["settings"]["rrf_k"]
        for metric, value in r.means.items():
            assert value == rep["lanes"]["rrf"]["doc"][metric]["value"], metric
        ws = app.state.base_workspace
        dil = {lane: e["queries"] for lane, e in rep["fusion"]["rrf"]["dilution"]["lanes"].items()}
        assert {lane: [str(ws.qids[int(q)]) for q in qs] for lane, qs in r.diluted.items()} == dil
