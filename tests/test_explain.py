"""`rankscope explain QID`: the Query view's drill-down as text or markdown.

The dashboard is the reference: on Cranfield (three lanes, the group level, the gate on
dense, a corpus, query and doc texts) the Query view is opened on a query with Pilot and
each widget's content — the head, the first-relevant/metrics table, the gate panel, each
lane's ranking, the judged docs — is compared field for field with what
``rankscope explain --format markdown`` prints for the same query (its tables parsed
back). The largest losses are checked against pytrec_eval's nDCG@10 per query.
"""

from __future__ import annotations

import re

import pytest
from support import run_cli, settle, shared_path
from test_tui_behaviour import make_app, plain  # noqa: F401 (how the dashboard tests build an app)
from textual.widgets import DataTable, Static

from rankscope_tui.commands.tui import parse_args, state_from_args

module_loop = pytest.mark.asyncio(loop_scope="module")
ROWS = 100  # the Query view's rows per lane (screens.query.SHOW_ROWS)


def cran_args() -> list[str]:
    c = shared_path("cranfield")
    return ["--lane", str(c / "lanes" / "bm25.run"), "--lane", str(c / "lanes" / "dense.run"),
            "--qrels", str(c / "qrels-test.txt"), "--group-sep", "#", "--gate-on", "dense",
            "--ood-negatives", str(c / "qrels-ood-negatives.txt"), "--corpus", str(c / "passages.tsv"),
            "--queries", str(c / "queries.tsv"), "--docs", str(c / "passages.tsv"),
            "--strata", str(c / "strata.tsv"), "--resamples", "999"]


def _unescape(cell: str) -> str:
    return re.sub(r"\\(.)", r"\1", cell)


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row (an escaped ``\\|`` stays inside its cell)."""
    parts = re.split(r"(?<!\\) \| ", line.strip()[2:-2])
    return [_unescape(p) for p in parts]


def parse_markdown(text: str) -> dict:
    """The sections of explain's markdown: the heading, attribution and text lines, each
    bold-titled table (header + rows) and the gate lines."""
    lines = text.splitlines()
    out: dict = {"head": _unescape(lines[0].removeprefix("### ")), "tables": {}, "gate": []}
    title = None
    for line in lines[1:]:
        if line.startswith("attribution"):
            out["attribution"] = _unescape(line)
        elif line.startswith("> "):
            out["text"] = _unescape(line[2:])
        elif line.startswith("**Gate"):
            out["gate"].append(_unescape(line.strip("*")))
            title = None
        elif line.startswith("- ") and out["gate"] and title is None:
            out["gate"].append(_unescape(line[2:]))
        elif line.startswith("**"):
            title = _unescape(line.split("**")[1])
            out["tables"][title] = []
        elif line.startswith("| ") and title is not None:
            if not set(line) <= set("|-"):
                out["tables"][title].append(_cells(line))
    return out


@pytest.fixture(scope="module")
def cran_options():
    return state_from_args(parse_args(cran_args())).options


def _qids(kind: str) -> list[str]:
    """A positive and a negative (in-domain) Cranfield query, read from the qrels independently."""
    c = shared_path("cranfield")
    grades: dict[str, list[int]] = {}
    for line in (c / "qrels-test.txt").read_text(encoding="utf-8").splitlines():
        qid, _, _, g = line.split()
        grades.setdefault(qid, []).append(int(g))
    return [q for q, gs in grades.items() if (max(gs) >= 1) == (kind == "positive")]


@module_loop
async def test_explain_equals_the_query_view_field_for_field(cran_options):
    queries = [_qids("positive")[0], _qids("negative")[0]]
    explained = {}
    for qid in queries:
        res = run_cli("explain", qid, *cran_args(), "--format", "markdown", "--rows", str(ROWS))
        assert res.returncode == 0, res.stderr
        explained[qid] = parse_markdown(res.stdout)
    app = make_app(cran_options, synthetic=False)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        for qid in queries:
            e = explained[qid]
            app.open_query(qid)
            await settle(app, pilot)
            screen = app.screen
            assert screen.shown_qid == qid
            head = plain(screen.query_one("#q-head", Static)).splitlines()
            assert head[0] == e["head"]
            assert head[1] == e["attribution"]
            assert head[2] == e["text"]
            first = screen.query_one("#q-first", DataTable)
            shown = [[str(c.label) for c in first.columns.values()]]
            shown += [[str(first.get_cell_at((r, c))) for c in range(len(first.columns))] for r in range(first.row_count)]
            assert shown == e["tables"]["First relevant rank and metrics"]
            gate = plain(screen.query_one("#q-gate", Static)).splitlines()
            assert [g.strip() for g in gate] == e["gate"]
            assert screen.lanes_shown == [t.removeprefix("Lane ") for t in e["tables"] if t.startswith("Lane ")]
            for lane, table in zip(screen.lanes_shown, screen._tables):
                rows = [[str(c.label) for c in table.columns.values()]]
                rows += [[str(table.get_cell_at((r, c))) for c in range(len(table.columns))] for r in range(table.row_count)]
                md = [[c.strip("*") for c in row] for row in e["tables"][f"Lane {lane}"]]
                assert rows == md, lane
            judged = screen.query_one("#q-judged", DataTable)
            view = [[str(judged.get_cell_at((r, c))) for c in range(len(judged.columns))] for r in range(judged.row_count)]
            md = e["tables"]["Judged docs of this query"]
            assert [str(c.label) for c in judged.columns.values()] == md[0]
            assert len(view) == len(md) - 1 and view
            for v, m in zip(view, md[1:]):
                assert v[:-1] == m[:-1]  # doc, grade, each lane's rank, who retrieved it
                assert v[-1] == (m[-1][:80] or "(no text)")  # the view cuts the text at 80 characters


def test_text_format_and_unknown_qid(tmp_path):
    res = run_cli("explain", _qids("positive")[0], *cran_args(), "--rows", "3")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"Query {_qids('positive')[0]}  positive · ")
    assert "Gate on dense" in res.stdout and "Judged docs of this query" in res.stdout
    res = run_cli("explain", "no-such-query", *cran_args())
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "no-such-query" in res.stderr and "Traceback" not in res.stderr
    res = run_cli("explain", *cran_args())
    assert res.returncode == 2 and res.stderr.count("\n") == 1


def test_largest_losses_are_pytrec_evals(tmp_path):
    import pytrec_eval

    c = shared_path("cranfield")
    qrels: dict[str, dict[str, int]] = {}
    for line in (c / "qrels-test.txt").read_text(encoding="utf-8").splitlines():
        qid, _, doc, g = line.split()
        qrels.setdefault(qid, {})[doc] = int(g)

    def ndcg(name: str) -> dict[str, float]:
        run: dict[str, dict[str, float]] = {}
        for line in (c / "lanes" / f"{name}.run").read_text(encoding="utf-8").splitlines():
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
        res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut"}).evaluate(run)
        return {q: v["ndcg_cut_10"] for q, v in res.items() if max(qrels[q].values()) >= 1}

    bm25, dense = ndcg("bm25"), ndcg("dense")
    oracle = sorted((q for q in bm25 if dense[q] < bm25[q]), key=lambda q: (dense[q] - bm25[q], q.encode()))[:3]
    res = run_cli("explain", *cran_args(), "--largest-losses", "3", "--metric", "ndcg@10", "--rows", "2")
    assert res.returncode == 0, res.stderr
    listed = re.findall(r"^=+ loss \d: query (\S+): bm25 ([\d.]+) → dense ([\d.]+)", res.stdout, re.M)
    assert [q for q, _, _ in listed] == oracle
    for q, b, d in listed:
        assert (float(b), float(d)) == (round(bm25[q], 4), round(dense[q], 4))
    assert res.stdout.count("\nQuery ") + res.stdout.startswith("Query ") == 3  # each loss explained


def test_hostile_names_print_as_themselves(tmp_path):
    """A qid or doc id holding a table bar, emphasis or a terminal escape: escaped in
    markdown, shown as a visible escape in text, never a control sequence."""
    qid, doc = "q|*\x1b[31m", "d_1|x"
    (tmp_path / "qrels").write_text(f"{qid} 0 {doc} 1\n{qid} 0 d2 0\n", encoding="utf-8")
    (tmp_path / "a.run").write_text(f"{qid} Q0 {doc} 1 2.0 a\n{qid} Q0 d2 2 1.0 a\n", encoding="utf-8")
    for fmt in ("text", "markdown"):
        res = run_cli("explain", qid, "--lane", tmp_path / "a.run", "--qrels", tmp_path / "qrels", "--format", fmt)
        assert res.returncode == 0, res.stderr
        assert "\x1b" not in res.stdout and "\\x1b" in res.stdout
        if fmt == "markdown":
            assert res.stdout.startswith("### Query q\\|\\*\\\\x1b\\[31m  positive")  # renders as q|*\\x1b[31m
            row = next(line for line in res.stdout.splitlines() if line.startswith("| 1 |"))
            assert _cells(row)[:2] == ["1", doc]  # the bar inside the doc id stays inside its cell
