"""Caveats travel with the number (issue 29 items 7-9, 13, 20; SPEC §13): what report.json
knows about a value, every face shows.

Small samples: on Cranfield's test split the stratum ``no-overlap`` holds two positive
queries (counted here from strata.tsv and the qrels, independently of rankscope), so each
of its bootstrapped cells carries the kernel's "coverage below nominal" flag, and the
mark must reach text, markdown, LaTeX, ``--summary``, ``Evaluation.table()`` and the
Strata view; the ``overlap`` stratum (over 100 positives) must carry none.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import pytest
from support import SHARED_DATA, run_cli

from rankscope_tui.kernel.report.caveats import SMALL_SAMPLE_MARK, best_marks
from rankscope_tui.kernel.statistics.intervals import NOTE_COVERAGE

C = SHARED_DATA / "cranfield"
needs_cranfield = pytest.mark.skipif(not C.exists(), reason=f"shared data not found: {C}")
LANES = ("bm25", "dense")
BOOTSTRAPPED = ("recall@10", "rr", "ndcg@10", "p@10")  # means with a percentile bootstrap
PROPORTIONS = ("hit@1",)  # Wilson: no bootstrap, no coverage flag
MARKED = BOOTSTRAPPED + ("judged@10",)  # p@10 brings judged@10 (bootstrapped too)
ROWS = LANES + ("rrf",)  # two lanes bring their fusion


def positives_per_stratum() -> dict[str, int]:
    """Positive queries (a judged relevant doc, grade >= 1) per stratum label, counted by hand."""
    positive = set()
    for line in (C / "qrels-test.txt").read_text().splitlines():
        qid, _, _, grade = line.split()
        if int(grade) >= 1:
            positive.add(qid)
    out: dict[str, int] = defaultdict(int)
    for line in (C / "strata.tsv").read_text().splitlines():
        qid, label = line.split("\t")
        if qid in positive:
            out[label] += 1
    return dict(out)


def cranfield_args(*extra: str) -> list[str]:
    args = ["evaluate", "--qrels", str(C / "qrels-test.txt"), "--strata", str(C / "strata.tsv"),
            "--metrics", ",".join(PROPORTIONS + BOOTSTRAPPED), "--resamples", "999"]
    for lane in LANES:
        args += ["--lane", str(C / "lanes" / f"{lane}.run")]
    return args + list(extra)


@pytest.fixture(scope="module")
def sizes() -> dict[str, int]:
    if not C.exists():
        pytest.skip(f"shared data not found: {C}")
    s = positives_per_stratum()
    assert s["no-overlap"] == 2 and s["overlap"] >= 30, s  # the data this test is about
    return s


def _section(text: str, title: str) -> str:
    """The lines of ``text`` from the line holding ``title`` to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if title in line)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip() and i > start + 2), len(lines))
    return "\n".join(lines[start:end])


@needs_cranfield
def test_text_and_markdown_mark_the_small_stratum(sizes):
    for fmt, small_title, big_title in (("text", "Stratum strata = no-overlap", "Stratum strata = overlap"),
                                        ("markdown", "### Stratum strata = no-overlap", "### Stratum strata = overlap")):
        r = run_cli(*cranfield_args("--format", fmt, *(["--wide"] if fmt == "text" else [])))
        assert r.returncode == 0, r.stderr
        small = _section(r.stdout, small_title) if fmt == "text" else r.stdout.split(small_title)[1].split("###")[0]
        big = _section(r.stdout, big_title) if fmt == "text" else r.stdout.split(big_title)[1].split("###")[0]
        rows = [line for line in small.splitlines() if line.lstrip("| ").startswith(ROWS)]
        assert len(rows) == len(ROWS), small
        for row in rows:
            # every bootstrapped cell carries the mark; the Wilson cells do not
            assert row.count(SMALL_SAMPLE_MARK) == len(MARKED), (fmt, row)
        assert "coverage below nominal" in small and "fewer than 30 queries" in small, (fmt, small)
        assert "n = 2" in small, (fmt, small)
        assert SMALL_SAMPLE_MARK not in big, (fmt, big)
    # the default text fits 80 columns (a lane's metrics in blocks): the marks and the note are there too
    r = run_cli(*cranfield_args("--format", "text"))
    small = _section(r.stdout, "Stratum strata = no-overlap")
    assert SMALL_SAMPLE_MARK in small and "coverage below nominal" in r.stdout.split("Stratum strata = no-overlap")[1]


@needs_cranfield
def test_latex_daggers_and_footnote(sizes):
    r = run_cli(*cranfield_args("--format", "latex"))
    assert r.returncode == 0, r.stderr
    tables = r.stdout.split(r"\begin{table}")[1:]
    small = next(t for t in tables if "Stratum strata = no-overlap" in t)
    big = next(t for t in tables if "Stratum strata = overlap" in t)
    overall = tables[0]
    assert small.count(r"\textsuperscript{\dag}") == len(MARKED) * len(ROWS)
    assert r"\dag{} coverage below nominal" in small
    assert r"\dag" not in big and r"\dag" not in overall


@needs_cranfield
def test_summary_table_note_column(sizes, tmp_path):
    out = tmp_path / "summary.csv"
    r = run_cli(*cranfield_args("--summary", str(out)))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert "note" in rows[0]
    for row in rows:
        flagged = NOTE_COVERAGE in row["note"]
        want = row["stratum"] == "no-overlap" and row["measure"] in MARKED
        assert flagged == want, row
        assert int(row["n"]) == (sizes[row["stratum"]] if row["stratum"] in sizes else 114)


@needs_cranfield
def test_api_table_note_column(sizes):
    import rankscope_tui

    ev = rankscope_tui.evaluate(qrels=str(C / "qrels-test.txt"),
                                runs={lane: str(C / "lanes" / f"{lane}.run") for lane in LANES},
                                measures=list(PROPORTIONS + BOOTSTRAPPED), strata=[str(C / "strata.tsv")],
                                resamples=999)
    df = ev.table()
    flagged = df["note"].str.contains(NOTE_COVERAGE, regex=False)
    want = (df["stratum"] == "no-overlap") & df["measure"].isin(MARKED)
    assert (flagged == want).all()
    assert (df.loc[df["stratum"] == "no-overlap", "n"] == sizes["no-overlap"]).all()
    assert SMALL_SAMPLE_MARK in str(ev)  # the text face of the API


@needs_cranfield
async def test_strata_view_marks_the_small_stratum(sizes):
    from support import settle
    from test_tui import KEY, make_app
    from test_tui_layout import cranfield_argv, shown

    from rankscope_tui.commands.tui import parse_args

    app = make_app(parse_args(cranfield_argv(strata=True)), synthetic=False, source_label="cranfield")
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["strata"])
        await settle(app, pilot)
        screen = app.screen
        assert screen.stratification == "strata" and screen.metric == "ndcg@10"
        table = shown(screen.query_one("#st-table"))
        rows = {line.split()[0]: line for line in table.splitlines() if line.strip()}
        lanes = screen._lanes()
        assert len(lanes) >= 3  # bm25, tfidf, dense (and their fusion)
        assert rows["no-overlap"].count(SMALL_SAMPLE_MARK) == len(lanes)
        assert SMALL_SAMPLE_MARK not in rows["overlap"] and SMALL_SAMPLE_MARK not in rows["overall"]
        note = shown(screen.query_one("#st-note"))
        assert "coverage below nominal" in " ".join(note.split())
        assert app._exception is None


# ----------------------------------------------------------------------------- best marks


@pytest.mark.parametrize("values,metric,want", [
    ([0.3, 0.2, 0.1], "ndcg@10", [True, False, False]),
    ([0.30001, 0.30004], "ndcg@10", [False, False]),  # equal at the printed 4 decimals: no best
    ([0.2, 0.2, 0.2], "p@10", [False, False, False]),  # an all-tied column
    ([0.5], "ndcg@10", [False]),  # one mean names no best
    ([0.9, 0.1], "judged@10", [False, False]),  # judged@k describes the judgments
    ([None, 0.1, 0.2], "rr", [False, False, True]),
    ([0.2, 0.2, 0.1], "rr", [True, True, False]),  # a tie at the top: both best
])
def test_best_marks(values, metric, want):
    assert best_marks(values, metric) == want


def test_latex_bolds_no_tied_column_and_no_judged(tmp_path):
    """A hand-built report: an all-tied column and judged@10 carry no bold; ndcg@10 does."""
    from rankscope_tui.render.latex import render_report_latex

    def cell(v):
        return {"value": v, "low": v - 0.1, "high": v + 0.1, "method": "percentile bootstrap", "n": 40, "level": 0.95,
                "note": None}

    metrics = ["ndcg@10", "p@10", "judged@10"]
    lanes = {"a": {"doc": {"ndcg@10": cell(0.5), "p@10": cell(0.2), "judged@10": cell(0.9)}},
             "b": {"doc": {"ndcg@10": cell(0.4), "p@10": cell(0.2), "judged@10": cell(0.3)}}}
    report = {"inputs": {"settings": {"metrics": metrics}}, "definitions": {m: m for m in metrics + ["intervals"]},
              "lanes": lanes, "strata": {}}
    tex = render_report_latex(report)
    assert tex.count(r"\textbf{") == 1 and r"\textbf{0.5000}" in tex


# ----------------------------------------------------------------------------- compare --out (item 8)


def test_compare_out_carries_the_coarse_null_note_se_and_method(tmp_path):
    """30 queries of which 24 differ (6 identical values): the printed note "only 24 of 30
    queries differ: the randomization null distribution is coarse" is in the row of
    ``compare --out`` too, with the bootstrap standard error (scipy's, same seed and
    protocol) and the interval's method."""
    import json

    import numpy as np
    from scipy import stats

    base = [0.125 + round(0.02 * i, 2) for i in range(30)]  # with the steps, every value an AP in [0, 1]
    steps = [0.0] * 6 + [0.125, -0.0625, 0.25, 0.1875, -0.125, 0.0625] * 4  # exact binary fractions
    cand = [b + s for b, s in zip(base, steps)]
    table = tmp_path / "pq.csv"
    table.write_text("run,query_id,measure,value\n"
                     + "".join(f"a,q{i:02d},ap,{v!r}\n" for i, v in enumerate(base))
                     + "".join(f"b,q{i:02d},ap,{v!r}\n" for i, v in enumerate(cand)))
    out = tmp_path / "c.json"
    r = run_cli("compare", "--per-query-in", str(table), "--metric", "ap", "--resamples", "999", "--out", str(out))
    assert r.returncode == 0, r.stderr
    coarse = "only 24 of 30 queries differ: the randomization null distribution is coarse"
    assert coarse in r.stdout
    row = json.loads(out.read_text())["comparisons"][0]
    assert any(coarse in note for note in row["notes"]), row["notes"]
    d = np.array(cand) - np.array(base)  # qids sort as bytes in this order already
    want = stats.bootstrap((d,), np.mean, n_resamples=999, rng=np.random.default_rng(0), method="percentile",
                           vectorized=True).standard_error
    assert row["bootstrap_se"] == pytest.approx(want, rel=1e-12)
    assert row["interval_method"] == "paired percentile bootstrap over queries (B = 999, seed 0)"


# ----------------------------------------------------------------------------- figures (item 9)

FIGURE_KINDS = ("rrf-k", "convex-grid", "gate", "compare-intervals", "per-query-delta", "forest")


def _svg_text(data: bytes) -> str:
    """Every <text> of an SVG, joined with spaces (a wrapped subtitle reads as one line)."""
    import html
    import re

    return " ".join(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", data.decode("utf-8")))


def _spec_notes(path) -> list[str]:
    import json

    return json.loads(path.read_text(encoding="utf-8"))["title"].get("subtitle", [])


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def cran_figures(tmp_path_factory):
    """Each plot kind of Cranfield (with --strata, the gate and a compare) in every format."""
    from paper_outputs import outputs
    from support import cli_many

    if not C.exists():
        pytest.skip(f"shared data not found: {C}")
    o = outputs("cranfield")
    d = tmp_path_factory.mktemp("figs")
    jobs = {}
    for kind in FIGURE_KINDS:
        outs = [a for ext in (".vl.json", ".svg", ".pdf", ".png") for a in ("--out", str(d / f"{kind}{ext}"))]
        jobs[kind] = (["plot", kind, "--report", str(o["dir"] / "report.json"), "--compare", str(o["dir"] / "compare.json"),
                       *outs], d, None)
    res = cli_many(jobs)
    for kind, r in res.items():
        assert r.returncode == 0, (kind, r.stderr)
    return d


@needs_cranfield
@pytest.mark.parametrize("kind", FIGURE_KINDS)
def test_every_figure_format_carries_its_notes(cran_figures, kind, monkeypatch):
    """The Vega-Lite subtitle's notes are drawn into the SVG (read back from its text), and
    the PDF and PNG are drawn from the same figure: the saved figure's texts hold them."""
    import matplotlib.figure

    from rankscope_tui.render.figures import figure_bytes

    notes = _spec_notes(cran_figures / f"{kind}.vl.json")
    assert notes, kind  # every kind says something beside its title
    svg = _words(_svg_text((cran_figures / f"{kind}.svg").read_bytes()))
    for note in notes:
        assert _words(note) in svg, (kind, note)
    if kind in ("rrf-k", "convex-grid"):
        assert any("in-sample" in n for n in notes), notes
    if kind == "gate":
        assert any(n.startswith("target FPIR") for n in notes), notes
    if kind == "forest":  # Cranfield's 2-query stratum
        assert any("coverage below nominal" in n for n in notes), notes
        assert f"no-overlap (n 2): bm25 {SMALL_SAMPLE_MARK}" in svg

    # PDF and PNG: the figure as it is saved carries the same notes
    import json

    from rankscope_tui.kernel.report.figures import Figure

    spec = json.loads((cran_figures / f"{kind}.vl.json").read_text(encoding="utf-8"))
    fig = Figure(kind, spec["title"]["text"], "x", "y", spec["data"]["values"], tuple(notes))
    seen: list[str] = []
    real = matplotlib.figure.Figure.savefig

    def savefig(self, *a, **kw):
        seen.append(" ".join(t.get_text() for t in self.findobj(matplotlib.text.Text)))
        return real(self, *a, **kw)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    for suffix in (".pdf", ".png"):
        figure_bytes(fig, suffix)
    assert len(seen) == 2
    for text in seen:
        for note in notes:
            assert _words(note) in _words(text), (kind, note)


@needs_cranfield
def test_plot_gate_draws_the_applied_floor(tmp_path):
    """A report evaluated with --thresholds has no operating point: the figure draws the
    applied floor where the floor alone lands (report.json's outcome at that floor)."""
    import json

    lanes = [a for lane in LANES for a in ("--lane", str(C / "lanes" / f"{lane}.run"))]
    th = tmp_path / "thresholds.json"
    r = run_cli("calibrate", *lanes, "--qrels", str(C / "qrels-dev.txt"), "--gate-on", "bm25", "--resamples", "0",
                "--out", str(th))
    assert r.returncode == 0, r.stderr
    rep = tmp_path / "report.json"
    r = run_cli("evaluate", *lanes, "--qrels", str(C / "qrels-test.txt"), "--thresholds", str(th), "--gate-on", "bm25",
                "--resamples", "0", "--out", str(rep))
    assert r.returncode == 0, r.stderr
    g = json.loads(rep.read_text())["gate"]
    assert "applied" in g and not g.get("operating_point")
    spec_path, svg_path = tmp_path / "g.vl.json", tmp_path / "g.svg"
    r = run_cli("plot", "gate", "--report", str(rep), "--out", str(spec_path), "--out", str(svg_path))
    assert r.returncode == 0, r.stderr
    spec = json.loads(spec_path.read_text())
    (pt,) = [row for row in spec["data"]["values"] if row["series"] == "applied floor (in-domain)"]
    alone = g["outcome"]["alone"]["floor"]
    assert (pt["fpir"], pt["fnir"]) == (alone["fpir"]["in_domain"]["value"], alone["fnir"]["value"])
    assert pt["floor"] == g["applied"]["floor"]
    assert pt["floor"] == json.loads(th.read_text())["gate"]["floor"]  # the floor thresholds.json brings
    note = next(n for n in spec["title"]["subtitle"] if n.startswith("applied floor"))
    assert f"{g['applied']['floor']:.6g}" in note and "thresholds.json" in note
    svg = _words(_svg_text(svg_path.read_bytes()))
    assert "applied floor (in-domain)" in svg and _words(note) in svg


# ----------------------------------------------------------------------------- verdict (item 13)

RUN_A = "".join(f"q{q} Q0 d{d} {r} {10 - r} a\n" for q in range(1, 5) for r, d in enumerate((1, 2, 3), 1))
RUN_B = "".join(f"q{q} Q0 d{d} {r} {10 - r} b\n" for q in range(1, 5) for r, d in enumerate((3, 2, 1), 1))
QRELS = "q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\nq4 0 d1 1\n"


@pytest.fixture()
def no_interval_report(tmp_path):
    """A report evaluated with --resamples 0 (means without intervals) on ndcg@10 alone."""
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    r = run_cli("evaluate", "--lane", "a.run", "--lane", "b.run", "--qrels", "qrels.txt", "--metrics", "ndcg@10",
                "--resamples", "0", "--out", "report.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path


def test_verdict_counts_an_undecided_rule(no_interval_report):
    """Issue 29.13: one rule, no interval in the report: the summary counts it undecided
    (not "0 of 1 rules fail"); exit 0 (undecided fails only with --strict, exit 1)."""
    import json

    d = no_interval_report
    (d / "gates.json").write_text('[\n {"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.1}\n]\n')
    r = run_cli("verdict", "--report", "report.json", "--gates", "gates.json", "--out", "v.json", cwd=d)
    assert r.returncode == 0, r.stderr
    assert "1 rule on the interval: 0 fail, 1 undecided (not failing without --strict), 0 pass" in r.stdout
    assert "no interval: resampling skipped (resamples = 0)" in r.stdout  # why it is undecided
    assert "0 of 1 rules fail" not in r.stdout
    v = json.loads((d / "v.json").read_text())
    assert v["undecided"] == 1 and v["failed"] == 0 and v["not_judged"] == []
    r = run_cli("verdict", "--report", "report.json", "--gates", "gates.json", "--strict", cwd=d)
    assert r.returncode == 1 and "1 undecided (counted as failing: --strict)" in r.stdout


def test_verdict_names_a_measure_that_was_not_evaluated(no_interval_report):
    """A rule on map (ap) against a report of ndcg@10: which measure, how the report was made,
    the gates file's line; every other rule is still judged and counted; exit 2, no --out."""
    d = no_interval_report
    (d / "gates.json").write_text('[\n {"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.1},\n'
                                  ' {"path": "lanes.a.doc.map", "op": ">=", "threshold": 0.1}\n]\n')
    r = run_cli("verdict", "--report", "report.json", "--gates", "gates.json", "--out", "v.json", cwd=d)
    assert r.returncode == 2
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "gates.json:3:" in err and "measure map (ap) was not evaluated" in err, err
    assert "--metrics ndcg@10" in err and "lanes a, b" in err and "missing key" not in err, err
    assert "2 rules on the interval: 0 fail, 1 undecided (not failing without --strict), 0 pass, 1 could not be judged" \
        in r.stdout
    assert not (d / "v.json").exists()


async def test_verdicts_view_counts_and_names_the_rules_line(no_interval_report):
    from support import settle
    from test_tui import KEY, make_app
    from test_tui_layout import shown

    from rankscope_tui.commands.tui import parse_args

    d = no_interval_report
    gates = d / "gates.json"
    gates.write_text('[\n {"path": "lanes.a.doc.ndcg@10", "op": ">=", "threshold": 0.1},\n'
                     ' {"path": "lanes.a.doc.map", "op": ">=", "threshold": 0.1}\n]\n')
    argv = ["--lane", str(d / "a.run"), "--lane", str(d / "b.run"), "--qrels", str(d / "qrels.txt"), "--metrics", "ndcg@10",
            "--resamples", "0", "--gates", str(gates)]
    app = make_app(parse_args(argv), synthetic=False, source_label="test")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["verdicts"])
        await settle(app, pilot)
        screen = app.screen
        head = " ".join(shown(screen.query_one("#vd-head")).split())
        note = " ".join(shown(screen.query_one("#vd-note")).split())
        assert "2 rules on the interval: 0 fail, 1 undecided (not failing without --strict), 0 pass, " \
               "1 could not be judged" in head, head
        assert f"{gates}:3:" in note and "measure map (ap) was not evaluated" in note, note
        assert "rule 1: no interval: resampling skipped (resamples = 0)" in note, note
        assert app._exception is None


# ----------------------------------------------------------------------------- number hygiene (item 20)


def _strong_table(tmp_path):
    """Three candidates far above the baseline on every one of 40 queries."""
    base = [0.0625 * (i % 5) for i in range(40)]  # every value stays an AP in [0, 1]
    lines = ["run,query_id,measure,value"]
    for name, shift in (("a", 0.0), ("b", 0.5), ("c", 0.25), ("d", 0.125)):
        lines += [f"{name},q{i:02d},ap,{b + shift + (0.03125 if i % 3 == 0 and shift else 0.0)!r}"
                  for i, b in enumerate(base)]
    path = tmp_path / "strong.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, base


def test_compare_json_numbers_are_the_decimals_they_stand_for(tmp_path):
    """alpha is 1 − 0.95 = 0.05 (not 0.050000000000000044); a Bonferroni-adjusted p is
    3 × (1 + 0)/(9999 + 1) = 0.0003 exactly rounded (not 0.00030000000000000003); a t p
    below 0.0001 reads "< 0.0001" in the text table, never 0.0000."""
    import json
    from fractions import Fraction

    import numpy as np
    from scipy import stats

    path, base = _strong_table(tmp_path)
    out = tmp_path / "c.json"
    r = run_cli("compare", "--per-query-in", str(path), "--metric", "ap", "--correction", "bonferroni",
                "--resamples", "9999", "--out", str(out))
    assert r.returncode == 0, r.stderr
    raw = out.read_text()
    assert '"alpha": 0.05,' in raw and "0.050000000000000044" not in raw
    d = json.loads(raw)
    for row in d["comparisons"]:
        assert row["randomization_p"] == 1 / 10000  # every flip is below the observed mean (e = 0)
        assert row["adjusted_p"] == float(Fraction(3, 10000))
    assert "0.00030000000000000003" not in raw and '"adjusted_p": 0.0003,' in raw
    # the t p of a b-vs-a row (scipy) is far below 0.0001: the text says so
    b = np.array([v + 0.5 + (0.03125 if i % 3 == 0 else 0.0) for i, v in enumerate(base)])
    assert stats.ttest_rel(b, np.array(base)).pvalue < 1e-4
    head, *rows = [line for line in r.stdout.splitlines() if line.startswith(("baseline ", "a "))]
    col = head.index("t p")
    for line in rows:
        assert line[col:].startswith("< 0.0001"), line
    assert " 0.0000 " not in "\n".join(rows)


def test_api_reprs_are_one_line(tmp_path):
    """repr(Evaluation) was a 15,000-character dump of the workspace: one line now (the
    rich view stays _repr_html_)."""
    import rankscope_tui

    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    runs = {"a": str(tmp_path / "a.run"), "b": str(tmp_path / "b.run")}
    ev = rankscope_tui.evaluate(qrels=str(tmp_path / "qrels.txt"), runs=runs, measures="rr", resamples=0)
    assert repr(ev) == "Evaluation(runs=['a', 'b'], measures=['rr'], positives=4)"
    assert "<table" in ev._repr_html_()
    cmp = rankscope_tui.compare(qrels=str(tmp_path / "qrels.txt"), runs=runs, measures="ndcg@10", resamples=999)
    text = repr(cmp)
    assert "\n" not in text and len(text) < 200 and text.startswith("Comparison(baseline='a', rows=[b ndcg@10 ")
