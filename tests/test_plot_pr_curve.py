"""The P–R curve figure (``rankscope plot pr-curve``): its points are the report's
``iprec_at_recall_*`` means (report.json's lane and strata cells, evaluated with those
metrics) and pytrec_eval's ``iprec_at_recall`` per query averaged over the positives
(Cranfield's lanes and test qrels); the Vega-Lite spec validates against the vendored
Vega-Lite v5 schema; the SVG is well-formed XML; a stratification the report lacks is one
line, exit 2, nothing written."""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from support import run_cli, shared_path
from test_parity_new_measures import trec_eval  # noqa: F401  (the trec_eval 10.0 fixture)

LEVELS = tuple(f"{i / 10:.2f}" for i in range(11))
METRICS = ",".join(["map"] + [f"iprec_at_recall_{x}" for x in LEVELS])
SCHEMA = Path(__file__).parent / "data" / "vega-lite-v5.20.1.schema.json.gz"
LANES = ("bm25", "dense")


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    c = shared_path("cranfield")
    d = tmp_path_factory.mktemp("pr")
    lanes = [a for n in LANES for a in ("--lane", str(c / "lanes" / f"{n}.run"))]
    res = run_cli("evaluate", *lanes, "--qrels", str(c / "qrels-test.txt"), "--strata", str(c / "strata-length.tsv"),
                  "--metrics", METRICS, "--fuse", "combmnz:zmuv", "--resamples", "0", "--out", str(d / "report.json"))
    assert res.returncode == 0, res.stderr
    res = run_cli("plot", "pr-curve", "--report", str(d / "report.json"), "--out", str(d / "pr.vl.json"),
                  "--out", str(d / "pr.svg"))
    assert res.returncode == 0, res.stderr
    res = run_cli("plot", "pr-curve", "--report", str(d / "report.json"), "--stratum", "strata-length",
                  "--out", str(d / "st.vl.json"), "--out", str(d / "st.svg"))
    assert res.returncode == 0, res.stderr
    report = json.loads((d / "report.json").read_text(encoding="utf-8"))
    return d, c, report


def _rows(d: Path, name: str) -> list[dict]:
    return json.loads((d / name).read_text(encoding="utf-8"))["data"]["values"]


def test_points_are_the_reports_iprec_means_for_every_lane(drawn):
    d, _, report = drawn
    rows = _rows(d, "pr.vl.json")
    # bm25, dense, rrf and the --fuse lane
    assert list(dict.fromkeys(r["lane"] for r in rows)) == list(report["lanes"]) == [*LANES, "rrf", "combmnz:zmuv"]
    want = [("overall", lane, float(x), report["lanes"][lane]["doc"][f"iprec_at_recall_{x}"]["value"])
            for lane in report["lanes"] for x in LEVELS]
    assert [(r["stratum"], r["lane"], r["recall"], r["precision"]) for r in rows] == want


def test_points_per_stratum_are_the_reports_strata_cells(drawn):
    d, _, report = drawn
    rows = _rows(d, "st.vl.json")
    blocks = [("overall", report["lanes"])] + list(report["strata"]["strata-length"].items())
    want = [(name, lane, float(x), cells["doc"][f"iprec_at_recall_{x}"]["value"], cells["doc"]["iprec_at_recall_0.00"]["n"])
            for name, block in blocks for lane, cells in block.items() for x in LEVELS]
    assert [(r["stratum"], r["lane"], r["recall"], r["precision"], r["n"]) for r in rows] == want
    assert len({r["stratum"] for r in rows}) > 2


def _qrels_run(c: Path, lane: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (c / "qrels-test.txt").read_text(encoding="utf-8").splitlines():
        q, _, doc, g = line.split()
        qrels.setdefault(q, {})[doc] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in (c / "lanes" / f"{lane}.run").read_text(encoding="utf-8").splitlines():
        q, _, doc, _, score, _ = line.split()
        run.setdefault(q, {})[doc] = float(score)
    return qrels, run


def test_points_match_trec_eval_10_iprec_at_recall(drawn, trec_eval):
    """trec_eval 10.0 (full precision, built by test_parity_new_measures' fixture), per query
    with -q -c, averaged here over the positive queries: the figure's point at 1e-9."""
    from test_parity_new_measures import run_trec_eval

    d, c, _ = drawn
    rows = _rows(d, "pr.vl.json")
    for lane in LANES:
        qrels, _ = _qrels_run(c, lane)
        positives = [q for q, docs in qrels.items() if any(g >= 1 for g in docs.values())]
        te = run_trec_eval(trec_eval, c / "qrels-test.txt", c / "lanes" / f"{lane}.run", "-m", "iprec_at_recall")
        for x in LEVELS:
            want = sum(te[(f"iprec_at_recall_{x}", q)] for q in positives) / len(positives)
            (got,) = [r["precision"] for r in rows if r["lane"] == lane and r["recall"] == float(x)]
            assert got == pytest.approx(want, abs=1e-9), (lane, x)


def test_points_match_pytrec_eval_where_its_cut_is_the_same(drawn):
    """pytrec_eval wraps trec_eval 9.x, whose cut at level x is the first relevant hit with
    recall >= x, i.e. ceil(x·R); trec_eval 10.0 (and rankscope) round x·R half away from
    zero. Where the two cuts agree (x·R whole, or its fraction >= 0.5) the per-query values
    must be equal; the figure's point is the mean of those per-query values over the
    positives (a lane missing a positive scores 0)."""
    import math

    import pytrec_eval

    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    d, c, _ = drawn
    rows = _rows(d, "pr.vl.json")
    keys = parse_metrics(",".join(f"iprec_at_recall_{x}" for x in LEVELS))
    ws = Workspace.load([(n, str(c / "lanes" / f"{n}.run")) for n in LANES], str(c / "qrels-test.txt"),
                        LoadSettings(metrics=tuple(keys), resamples=0))
    compared = 0
    for lane in LANES:
        qrels, run = _qrels_run(c, lane)
        per_q = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)
        ours = ws.per_query(lane, "doc")
        for x in LEVELS:
            (got,) = [r["precision"] for r in rows if r["lane"] == lane and r["recall"] == float(x)]
            assert got == pytest.approx(float(ours[f"iprec_at_recall_{x}"][ws.positives].mean()), abs=1e-12)
            for q, docs in qrels.items():
                n_rel = sum(g >= 1 for g in docs.values())
                xr = float(x) * n_rel
                if n_rel == 0 or q not in per_q or math.ceil(xr - 1e-9) != math.floor(xr + 0.5):
                    continue
                assert ours[f"iprec_at_recall_{x}"][ws.qid_index[q]] == pytest.approx(
                    per_q[q][f"iprec_at_recall_{x}"], abs=1e-9), (lane, x, q)
                compared += 1
    assert compared > 1000


def test_spec_validates_and_svg_is_well_formed(drawn):
    d, _, _ = drawn
    schema = json.loads(gzip.decompress(SCHEMA.read_bytes()))
    validator = jsonschema.validators.validator_for(schema)(schema)
    for name in ("pr.vl.json", "st.vl.json"):
        spec = json.loads((d / name).read_text(encoding="utf-8"))
        errors = [e.message[:200] for e in validator.iter_errors(spec)]
        assert not errors, (name, errors)
        # the note says what is averaged and which interpolation
        assert any("iprec_at_recall" in n and "positive queries" in n for n in spec["title"]["subtitle"])
    for name in ("pr.svg", "st.svg"):
        root = ET.fromstring((d / name).read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"


def test_unknown_stratification_is_one_line_and_nothing_written(drawn, tmp_path):
    d, _, _ = drawn
    res = run_cli("plot", "pr-curve", "--report", str(d / "report.json"), "--stratum", "nope",
                  "--out", str(tmp_path / "x.vl.json"))
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    assert "no stratification 'nope'" in res.stderr and not list(tmp_path.iterdir())
