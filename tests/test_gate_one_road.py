"""One road for the gate (issue 12, "one road shown by tests"; issue 13 items 2-4).

On the Cranfield set (``../shared``) and on the demo, the gate lines the command line prints
-- the floor alone, floor AND margin, floor AND mutual (and all), the vacuous share of the
mutual condition, the reason an unattainable floor is +inf -- are the numbers
``analyse_gate`` returns, the gate block `evaluate --out` writes, and what the Gate screen
shows (Pilot). The expected text is formatted here from the analysis objects (``Rate``,
``Outcome``), not read back from the payload the renderer formats.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from support import settle, shared_path
from textual.content import Content
from textual.widgets import Static

SIZE = (140, 60)


def _rate(r) -> str:
    return f"{r.k}/{r.n} = {r.value:.3f} [{r.low:.3f}, {r.high:.3f}]"


def _cranfield(tmp):
    src = shared_path("cranfield")
    names = {"bm25": src / "lanes" / "bm25.run", "dense": src / "lanes" / "dense.run",
             "dev": src / "qrels-dev.txt", "test": src / "qrels-test.txt"}
    out = {}
    for k, p in names.items():
        out[k] = tmp / p.name
        shutil.copy(p, out[k])
    return out


def _demo(tmp):
    from rankscope_tui.demo import FILES, write_demo

    write_demo(tmp, seed=7)
    return {"bm25": tmp / FILES["lexical"], "dense": tmp / FILES["dense"], "dev": tmp / FILES["qrels_dev"],
            "test": tmp / FILES["qrels_test"]}


#: (calibrate options, evaluate options) of each road checked
CASES = {
    "margin-mutual": (["--mutual", "3", "--depth", "100"], ["--depth", "100"]),
    "unattainable": (["--conservative", "--depth", "100"], ["--depth", "100"]),
    "tuning": (None, ["--gate-on", "dense", "--margin", "0.01", "--mutual", "2"]),
}


@pytest.fixture(params=["cranfield", "demo"])
def dataset(request, tmp_path):
    return request.param, (_cranfield if request.param == "cranfield" else _demo)(tmp_path)


@pytest.mark.parametrize("case", list(CASES))
async def test_gate_lines_are_the_analysis_the_report_and_the_screen(dataset, case, tmp_path, capsys):
    from rankscope_tui import cli
    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.kernel.gate.analysis import analyse_gate
    from rankscope_tui.kernel.instruments.evaluate import prepare
    from rankscope_tui.widgets import fmt

    name, f = dataset
    cal_opts, ev_opts = CASES[case]
    lanes = ["--lane", str(f["bm25"]), "--lane", str(f["dense"])]
    argv = lanes + ["--qrels", str(f["test"]), "--resamples", "999", *ev_opts]
    if cal_opts is not None:
        th = tmp_path / "thresholds.json"
        assert cli.main(["calibrate", *lanes, "--qrels", str(f["dev"]), "--gate-on", "dense", *cal_opts,
                         "--out", str(th)]) == 0
        argv += ["--thresholds", str(th)]
    capsys.readouterr()
    out = tmp_path / "report.json"
    assert cli.main(["evaluate", *argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    block = json.loads(out.read_text())["gate"]

    # the kernel's entry point, under the settings the command line built
    from rankscope_tui.commands import build_parser
    from rankscope_tui.commands.options import gate_options, load_workspace

    args = build_parser().parse_args(["evaluate", *argv])
    ws, thr = prepare(load_workspace(args), args.thresholds)
    a = analyse_gate(ws, gate_options(args), thr)
    assert a.lane == "dense" and json.loads(json.dumps(a.as_dict())) == block

    # what the command line prints is the analysis
    lines = [ln.strip() for ln in printed.splitlines()]
    assert a.by_condition, printed
    for cond, o in a.by_condition.items():
        label = "floor alone" if cond == "floor" else cond
        want = f"{label}: FNIR {_rate(o.fnir)} (rejected {o.rejected}, wrong accept {o.wrong_accept}); FPIR " + \
            ", ".join(f"{ {'in_domain': 'in-domain', 'out_of_domain': 'out-of-domain'}[k]} {_rate(v)}" for k, v in o.fpir.items())
        assert want in lines, (want, printed)
    if a.margin is not None:
        assert "floor AND margin" in a.by_condition
    floor_words = "+inf (reject all)" if a.floor == math.inf else f"{a.floor:.6g}"
    assert any(f"floor {floor_words}" in ln for ln in lines), (floor_words, printed)
    if case == "unattainable":
        assert a.floor == math.inf and a.unattainable_reason and "unattainable" in a.unattainable_reason
        assert f"floor +inf (reject all) because: {a.unattainable_reason}" in lines
    else:
        assert a.unattainable_reason is None and "because:" not in printed
    ms = a.mutual_summary
    if ms is not None:
        want = (f"mutual r = {ms['r']} (tie rule {ms['tie_rule']}): lists built from a batch of {ms['built_from']} queries; "
                f"vacuous for {ms['vacuous_queries']} ({100 * ms['vacuous_share']:.1f} %)")
        assert any(ln.startswith(want) for ln in lines), (want, printed)
    assert (ms is not None) == (case != "unattainable")

    # ... and what the Gate screen shows
    app = RankscopeApp(state_from_args(parse_args(argv), source_label=name))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        screen = app.screen
        assert app.current_mode == "gate" and screen.result is not None
        assert json.loads(json.dumps(screen.result.analysis.as_dict())) == block
        text = Content.from_markup(str(screen.query_one("#gate-floors", Static).content)).plain
        for cond, o in a.by_condition.items():
            assert f"    {cond}: FNIR {fmt.rate(o.fnir)}  (rejected {o.rejected}, wrong accept {o.wrong_accept})" in text
        if a.unattainable_reason:
            assert "floor +∞ (reject all)" in text and a.unattainable_reason in text
        if ms is not None:
            assert (f"r={ms['r']}: lists built from {ms['built_from']} queries; vacuous for {ms['vacuous_queries']} "
                    f"({fmt.pct(ms['vacuous_share'])})") in text
