"""Must show 4: every figure kind is written in every format (.vl.json, .svg, .pdf, .png)
on the demo and on Cranfield; the Vega-Lite specs validate against the Vega-Lite v5
schema (vendored: tests/data/vega-lite-v5.20.1.schema.json.gz, from altair 5.5.0's copy
of the schema, BSD-3-Clause); the data read back out of each spec equals the numbers of
the kernel entry points the dashboard draws from (rrf_at_k, calibration.fit_convex) or
the JSON those entry points wrote (report.json's gate, cells and per-query values,
compare.json's rows). Without matplotlib the raster/vector formats fail with one line
naming the extra."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import jsonschema
import pytest
from paper_outputs import outputs
from support import cli_many, run_cli

KINDS = ("rrf-k", "convex-grid", "gate", "compare-intervals", "per-query-delta", "forest", "pr-curve")
FORMATS = (".vl.json", ".svg", ".pdf", ".png")
MAGIC = {".svg": b"<?xml", ".pdf": b"%PDF", ".png": b"\x89PNG"}
SCHEMA = Path(__file__).parent / "data" / "vega-lite-v5.20.1.schema.json.gz"


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    d = tmp_path_factory.mktemp("figs")
    jobs = {}
    for which in ("demo", "cranfield"):
        o = outputs(which)
        for kind in KINDS:  # one call writes the figure in every format (--out repeats)
            outs = [a for ext in FORMATS for a in ("--out", str(d / f"{which}-{kind}{ext}"))]
            jobs[f"{which}|{kind}"] = (["plot", kind, "--report", str(o["dir"] / "report.json"), "--compare",
                                        str(o["dir"] / "compare.json"), *outs], d, None)
    return d, cli_many(jobs)


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(gzip.decompress(SCHEMA.read_bytes()))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _spec(figures, which, kind) -> dict:
    d, _ = figures
    return json.loads((d / f"{which}-{kind}.vl.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("which", ["demo", "cranfield"])
@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_written_in_each_format(figures, which, kind):
    d, res = figures
    r = res[f"{which}|{kind}"]
    assert r.returncode == 0, r.stderr
    for ext in FORMATS:
        data = (d / f"{which}-{kind}{ext}").read_bytes()
        if ext in MAGIC:
            assert data.startswith(MAGIC[ext]) and len(data) > 2000, (kind, ext)


@pytest.mark.parametrize("which", ["demo", "cranfield"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_spec_validates_against_the_vega_lite_schema(figures, validator, which, kind):
    spec = _spec(figures, which, kind)
    errors = [e.message[:200] for e in validator.iter_errors(spec)]
    assert not errors, errors
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v5")
    assert spec["data"]["values"], "the data is inlined"


def test_the_validator_rejects_a_broken_spec(validator):
    assert list(validator.iter_errors({"mark": "bogus", "data": {"values": []}}))
    assert list(validator.iter_errors({"mark": "bar", "encoding": {"x": {"field": "a", "type": "nominal-ish"}}}))


def _load_ws(report):
    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    s = report["inputs"]["settings"]
    return Workspace.load([(n, i["path"]) for n, i in report["inputs"]["lanes"].items()], report["inputs"]["qrels"]["path"],
                          LoadSettings(metrics=tuple(parse_metrics(",".join(s["metrics"]))), group_sep=s["group_sep"],
                                       resamples=0))


@pytest.mark.parametrize("which", ["demo", "cranfield"])
def test_rrf_k_data_is_the_kernels(figures, which):
    from rankscope_tui.kernel.fusion.rrf_at_k import rrf_at_k

    o = outputs(which)
    report, metric = o["report"], o["compare"]["comparisons"][0]["metric"]
    rows = _spec(figures, which, "rrf-k")["data"]["values"]
    curve = {r["k"]: r["value"] for r in rows if r["series"] == "rrf"}
    # k = 60 is the report's own rrf lane: evaluate's number
    assert curve[60] == report["lanes"]["rrf"]["doc"][metric]["value"]
    ws = _load_ws(report)
    for k in (1, 10, 200):
        assert curve[k] == rrf_at_k(ws, k).means[metric]
    for lane in report["inputs"]["lanes"]:
        assert {r["value"] for r in rows if r["series"] == lane} == {report["lanes"][lane]["doc"][metric]["value"]}


@pytest.mark.parametrize("which", ["demo", "cranfield"])
def test_convex_grid_data_is_the_kernels(figures, which):
    from rankscope_tui.kernel.fusion.calibration import fit_convex

    o = outputs(which)
    metric = o["compare"]["comparisons"][0]["metric"]
    rows = _spec(figures, which, "convex-grid")["data"]["values"]
    fit = fit_convex(_load_ws(o["report"]), 0.1, metric)
    assert len(rows) == fit.n_points
    for row, (comp, value) in zip(rows, fit.points):
        assert [row[f"w_{i}"] for i in range(len(comp))] == [c / 10 for c in comp] and row["value"] == value
    assert [r["best"] for r in rows].count(True) == 1


@pytest.mark.parametrize("which", ["demo", "cranfield"])
def test_gate_data_is_the_reports_sweep(figures, which):
    g = outputs(which)["report"]["gate"]
    rows = _spec(figures, which, "gate")["data"]["values"]
    words = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}
    for name, neg in g["sweep"]["negatives"].items():
        got = [(r["fpir"], r["fnir"]) for r in rows if r["series"] == f"{words[name]} negatives"]
        want = [(0.0 if p is None else p, 1.0 if f is None else f) for p, f in zip(neg["fpir"], g["sweep"]["fnir"])]
        assert got == want
    (op,) = [r for r in rows if r["series"].startswith("operating point")][:1]
    first = next(iter(g["operating_point"].values()))
    assert (op["fpir"], op["fnir"], op["floor"]) == (first["fpir"]["in_domain"]["value"], first["fnir"]["value"], first["floor"])


@pytest.mark.parametrize("which", ["demo", "cranfield"])
def test_compare_intervals_data_is_compare_json(figures, which):
    rows = _spec(figures, which, "compare-intervals")["data"]["values"]
    cmp = outputs(which)["compare"]["comparisons"]
    assert len(rows) == 3 * len(cmp)
    for i, r in enumerate(cmp):
        paired, unpaired, bca = rows[3 * i:3 * i + 3]
        assert (paired["low"], paired["high"]) == (r["ci_low"], r["ci_high"])
        assert (unpaired["low"], unpaired["high"]) == (r["unpaired_ci_low"], r["unpaired_ci_high"])
        assert (bca["low"], bca["high"]) == (r["bca_low"], r["bca_high"])
        assert paired["difference"] == r["difference"]


@pytest.mark.parametrize("which", ["demo", "cranfield"])
def test_per_query_delta_is_sorted_candidate_minus_baseline_with_losses_labelled(figures, which):
    o = outputs(which)
    row0 = o["compare"]["comparisons"][0]
    pq = o["report"]["per_query"]
    b, c, m = pq[row0["baseline"]]["doc"], pq[row0["candidate"]]["doc"], row0["metric"]
    rows = _spec(figures, which, "per-query-delta")["data"]["values"]
    want = sorted((c[q][m] - b[q][m], q) for q in b)
    assert [(r["delta"], r["query_id"]) for r in rows] == want
    labelled = [r["query_id"] for r in rows if r["label"]]
    assert labelled == [q for d, q in want[:5] if d < 0] and labelled
    # the mean of the bars is compare's mean difference
    assert sum(r["delta"] for r in rows) / len(rows) == pytest.approx(row0["difference"], abs=1e-12)


@pytest.mark.parametrize("which", ["demo", "cranfield"])
def test_forest_data_is_the_reports_cells(figures, which):
    o = outputs(which)
    report, m = o["report"], o["compare"]["comparisons"][0]["metric"]
    rows = _spec(figures, which, "forest")["data"]["values"]
    want = [("overall", lane, lv["doc"][m]) for lane, lv in report["lanes"].items()]
    want += [(f"{s} = {lab}", lane, lv["doc"][m]) for s, labs in report["strata"].items() for lab, blk in labs.items()
             for lane, lv in blk.items()]
    assert [(r["section"], r["lane"], r["mean"], r["low"], r["high"], r["n"]) for r in rows] == \
        [(s, lane, c["value"], c["low"], c["high"], c["n"]) for s, lane, c in want]


def test_same_inputs_same_bytes(figures, tmp_path):
    d, _ = figures
    o = outputs("demo")
    outs = [a for ext in FORMATS for a in ("--out", str(tmp_path / f"f{ext}"))]
    res = run_cli("plot", "forest", "--report", str(o["dir"] / "report.json"), "--compare", str(o["dir"] / "compare.json"),
                  *outs)
    assert res.returncode == 0, res.stderr
    for ext in FORMATS:
        assert (tmp_path / f"f{ext}").read_bytes() == (d / f"demo-forest{ext}").read_bytes(), ext


def test_without_matplotlib_the_error_names_the_extra(tmp_path):
    fake = tmp_path / "nompl" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('matplotlib hidden by the test')\n")
    o = outputs("demo")
    res = run_cli("plot", "forest", "--report", str(o["dir"] / "report.json"), "--out", str(tmp_path / "f.svg"),
                  env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]) + ":" + str(tmp_path / "nompl")})
    assert res.returncode == 2
    assert res.stderr.startswith("rankscope: error: ") and "rankscope[plots]" in res.stderr
    assert len(res.stderr.splitlines()) == 1 and not (tmp_path / "f.svg").exists()
    # the Vega-Lite spec needs no extra
    res = run_cli("plot", "forest", "--report", str(o["dir"] / "report.json"), "--out", str(tmp_path / "f.vl.json"),
                  env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]) + ":" + str(tmp_path / "nompl")})
    assert res.returncode == 0, res.stderr


def test_compare_intervals_without_compare_is_refused(tmp_path):
    o = outputs("demo")
    res = run_cli("plot", "compare-intervals", "--report", str(o["dir"] / "report.json"), "--out", str(tmp_path / "x.vl.json"))
    assert res.returncode == 2 and "--compare" in res.stderr and not list(tmp_path.iterdir())


def test_plot_refuses_what_it_cannot_draw_faithfully(tmp_path):
    """A changed input (its sha256 differs from report.json's), an unknown suffix, a metric
    the report lacks: one line each, exit 2, nothing written."""
    import shutil

    d = tmp_path / "d"
    from paper_outputs import demo_dir

    shutil.copytree(demo_dir(), d)
    run = run_cli("evaluate", "--lane", "lexical.run", "--lane", "dense.run", "--qrels", "qrels-test.txt",
                  "--resamples", "0", "--out", "r.json", cwd=d)
    assert run.returncode == 0, run.stderr
    with open(d / "lexical.run", "a", encoding="utf-8") as fh:
        fh.write("q1 Q0 extra-doc 1 9.0 t\n")
    cases = {
        "changed": (["plot", "rrf-k", "--report", "r.json", "--out", "a.vl.json"], "changed since the report was written"),
        "suffix": (["plot", "forest", "--report", "r.json", "--out", "a.gif"], ".vl.json (a Vega-Lite spec), .svg, .pdf or .png"),
        "metric": (["plot", "forest", "--report", "r.json", "--metric", "zz@1", "--out", "a.vl.json"], "not in the report"),
    }
    for name, (args, words) in cases.items():
        res = run_cli(*args, cwd=d)
        assert res.returncode == 2, (name, res.stderr)
        assert res.stderr.startswith("rankscope: error: ") and words in res.stderr and len(res.stderr.splitlines()) == 1
    assert not list(d.glob("a.*"))


def test_control_characters_and_dollars_in_strata_labels_give_well_formed_svg_and_no_warning(tmp_path):
    """A stratum label holding ESC, U+0001 or dollars: matplotlib wrote the control characters
    raw into an SVG comment (not well-formed XML: browsers refuse the file), printed its
    multi-line "Glyph missing" warnings to stderr, and read ``$...$`` as mathtext. The labels
    are drawn as their visible escapes; the SVG parses (expat, the standard library's XML
    parser, is the oracle); stderr is quiet."""
    import xml.etree.ElementTree as ET

    (tmp_path / "a.run").write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d2 1 1 a\nq3 Q0 d3 1 1 a\n", encoding="utf-8")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 3 b\nq2 Q0 d3 1 1 b\nq3 Q0 d3 1 1 b\n", encoding="utf-8")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n", encoding="utf-8")
    (tmp_path / "s.tsv").write_text("q1\tlex\x1bical\nq2\tsem\x01antic\nq3\t$\\notacommand{$\n", encoding="utf-8")
    res = run_cli("evaluate", "--lane", "a.run", "--lane", "b.run", "--qrels", "q.txt", "--strata", "s.tsv",
                  "--resamples", "50", "--out", "report.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = run_cli("plot", "forest", "--report", "report.json", "--out", "f.svg", "--out", "f.png", cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    svg = (tmp_path / "f.svg").read_bytes()
    ET.fromstring(svg)  # raises on a document that is not well-formed
    text = svg.decode("utf-8")
    assert "\x1b" not in text and "\x01" not in text
    # the SVG keeps its words as text (svg.fonttype none): the escapes, and the dollars as
    # written (as mathtext the label was a parse error, a traceback)
    words = [t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
    assert "s = lex\\x1bical (n 1): a" in words and "s = sem\\x01antic (n 1): a" in words, words
    assert "s = $\\notacommand{$ (n 1): a" in words, words
