"""Lane names, stratum names and labels, query ids and doc ids full of LaTeX and
Markdown specials (SPEC §2, §9): the tables of ``evaluate`` and ``compare`` in
``--format latex`` and ``--format markdown`` must keep their structure and show
every name exactly, escaped.

LaTeX: the output is tokenised as TeX reads it (control words, control symbols,
characters). Every row of a tabular has as many top-level ``&`` as the header, braces
balance, no bare ``% $ # _ ^ ~`` is left, and each cell, unescaped, is the name.
Markdown: every table row has as many unescaped ``|`` as the header, no bare ``*``
or ``_`` is left, and each cell, unescaped, is the name.

Lane names may hold every special but ``.``, ``=`` and whitespace, which are errors.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from test_reliability import assert_one_line_error, cli_many

# the names under test; each holds every special of the brief
SPECIALS = "_%&#${}\\|*"
LANE_A = "A_%&#${}\\|*"         # given as NAME=PATH
LANE_B = "b\\_%{x}|#*&$"        # named after its file: b\_%{x}|#*&$.run
STRAT = "kind_%&#${}|*"         # a stratification is named after its file stem
LABELS = ["lab_%&#${}\\|*0", "lab_%&#${}\\|*1"]
QIDS = [f"q{i}_%&#${{}}\\|*,\"" for i in range(14)]  # and a comma and a quote, for the CSV
DOCS = [f"d{i}_%&#${{}}\\|*" for i in range(20)]

LATEX_UNESCAPE_CMD = {"textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^", "textbar": "|",
                      "textless": "<", "textgreater": ">", "dag": "†"}
#: commands of the layout (bold best, significance letters, the interval's size, a
#: reference): markup around a cell's text, dropped when a cell is read back
LATEX_MARKUP_CMD = {"textbf", "textsuperscript", "scriptsize", "ref"}


def _write_data(d: Path) -> dict[str, str]:
    import random

    rng = random.Random(7)
    d.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, fname in (("a", "a.run"), ("b", LANE_B + ".run")):
        lines = []
        for q in QIDS:
            for r, doc in enumerate(rng.sample(DOCS, 8)):
                lines.append(f"{q} Q0 {doc} {r + 1} {rng.random():.4f} t\n")
        (d / fname).write_text("".join(lines), encoding="utf-8")
        paths[name] = str(d / fname)
    qrels = "".join(f"{q} 0 {doc} {rng.randint(0, 2) if i else 2}\n" for q in QIDS for i, doc in enumerate(rng.sample(DOCS, 4)))
    (d / "qrels.txt").write_text(qrels, encoding="utf-8")
    (d / f"{STRAT}.tsv").write_text("".join(f"{q}\t{LABELS[i % 2]}\n" for i, q in enumerate(QIDS)), encoding="utf-8")
    paths["qrels"], paths["strata"] = str(d / "qrels.txt"), str(d / f"{STRAT}.tsv")
    return paths


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    p = _write_data(d / "in")
    lanes = ["--lane", f"{LANE_A}={p['a']}", "--lane", p["b"], "--qrels", p["qrels"]]
    ev = [*lanes, "--strata", p["strata"], "--metrics", "rr,hit@1,ndcg@5", "--resamples", "200"]
    # rrf named: a derived lane is a candidate only when named (SPEC §13)
    cmp = [*lanes, "--candidate", LANE_B, "--candidate", "rrf", "--metric", "ndcg@10", "--metric", "rr", "--resamples", "999"]
    jobs = {
        "evaluate_latex": (["evaluate", *ev, "--format", "latex", "--out", str(d / "r.json"), "--per-query", str(d / "pq.csv")], d, None),
        "evaluate_markdown": (["evaluate", *ev, "--format", "markdown"], d, None),
        "compare_latex": (["compare", *cmp, "--format", "latex"], d, None),
        "compare_markdown": (["compare", *cmp, "--format", "markdown"], d, None),
    }
    bad = {  # run from the directory holding a.run
        "dot_in_name": "--lane=a.b=a.run",
        "space_in_name": "--lane=a b=a.run",
        "tab_in_name": "--lane=a\tb=a.run",
        "empty_name": "--lane==a.run",
    }
    for k, arg in bad.items():
        jobs[k] = (["evaluate", arg, "--qrels", p["qrels"], "--resamples", "0"], d / "in", None)
    jobs["dot_in_name_path_with_a_directory"] = (["evaluate", "--lane", "a.b=in/a.run", "--qrels", p["qrels"], "--resamples", "0"],
                                                 d, None)
    for k, fname in (("dot_in_file_name", "v1.2.run"), ("space_in_file_name", "my lane.run"), ("equals_in_file_name", "x=y.run")):
        (d / "in" / fname).write_text(Path(p["a"]).read_text(encoding="utf-8"), encoding="utf-8")
        jobs[k] = (["evaluate", "--lane", f"./in/{fname}", "--qrels", p["qrels"], "--resamples", "0"], d, None)
    jobs["backslash_in_name"] = (["evaluate", "--lane", f"a\\b={p['a']}", "--qrels", p["qrels"], "--resamples", "0",
                                  "--out", str(d / "bs.json")], d, None)
    res = cli_many(jobs)
    res["dir"] = d
    return res


# ============================================================================ LaTeX


def tex_tokens(s: str) -> list[tuple[str, str]]:
    """('cmd', name) for a control word, ('sym', c) for a control symbol, ('ch', c) otherwise."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            assert i + 1 < len(s), f"a lone backslash ends {s!r}"
            if s[i + 1].isalpha():
                j = i + 1
                while j < len(s) and s[j].isalpha():
                    j += 1
                out.append(("cmd", s[i + 1:j]))
                i = j
            else:
                out.append(("sym", s[i + 1]))
                i += 2
        else:
            out.append(("ch", c))
            i += 1
    return out


def tex_check(s: str) -> list[tuple[str, str]]:
    """Braces balance and no special is bare; returns the tokens."""
    toks = tex_tokens(s)
    depth = 0
    for kind, v in toks:
        if kind == "ch":
            assert v not in "%$#_^~", f"bare {v!r} in {s!r}"
            depth += {"{": 1, "}": -1}.get(v, 0)
            assert depth >= 0, f"unbalanced '}}' in {s!r}"
    assert depth == 0, f"unbalanced '{{' in {s!r}"
    return toks


def tex_cells(row: str) -> list[str]:
    """Split a tabular row at its top-level '&' and unescape each cell to plain text."""
    row = row.rstrip()
    assert row.endswith(r"\\"), f"a row ends with \\\\: {row!r}"
    toks = tex_check(row[:-2])
    cells, cur, depth, k = [], [], 0, 0
    while k < len(toks):
        kind, v = toks[k]
        if kind == "ch" and v == "&" and depth == 0:
            cells.append("".join(cur).strip())
            cur = []
        elif kind == "ch" and v in "{}":
            depth += 1 if v == "{" else -1
        elif kind == "sym":
            cur.append(v)
        elif kind == "cmd" and v in LATEX_MARKUP_CMD:
            pass
        elif kind == "cmd":
            assert v in LATEX_UNESCAPE_CMD, f"unexpected \\{v} in a cell: {row!r}"
            cur.append(LATEX_UNESCAPE_CMD[v])
            if toks[k + 1:k + 3] == [("ch", "{"), ("ch", "}")]:
                k += 2
        else:
            cur.append(v)
        k += 1
    cells.append("".join(cur).strip())
    return cells


def tex_unescape(s: str) -> str:
    cells = tex_cells(s + r" \\")
    assert len(cells) == 1, f"a bare '&' outside a tabular row: {s!r}"
    return cells[0]


def tex_tables(text: str) -> list[dict]:
    """Each tabular: its column spec, header cells, body rows (cells) and caption text."""
    lines = text.splitlines()
    tables, i = [], 0
    while i < len(lines):
        if lines[i].startswith(r"\begin{tabular}{"):
            spec = lines[i][len(r"\begin{tabular}{"):-1]
            assert lines[i + 1] == r"\toprule", lines[i + 1]
            header = tex_cells(lines[i + 2])
            assert lines[i + 3] == r"\midrule"
            j, rows = i + 4, []
            while lines[j] != r"\bottomrule":
                rows.append(tex_cells(lines[j]))
                j += 1
            assert lines[j + 1] == r"\end{tabular}"
            cap = lines[j + 2]
            assert cap.startswith(r"\caption{") and cap.endswith("}"), cap
            tex_check(cap)
            tables.append({"spec": spec, "header": header, "rows": rows, "caption": tex_unescape(cap[len(r"\caption{"):-1])})
            i = j + 3
        else:
            i += 1
    return tables


def test_evaluate_latex_tables_keep_their_structure_and_names(rendered):
    res = rendered["evaluate_latex"]
    assert res.returncode == 0, res.stderr
    tables = tex_tables(res.stdout)
    assert len(tables) == 3  # overall and the two strata
    for t in tables:
        assert len(t["spec"]) == len(t["header"]) == 2 + 4  # lane, level, rr, hit@1, ndcg@5, judged@5
        assert t["header"] == ["lane", "level", "rr", "hit@1", "ndcg@5", "judged@5"]
        for row in t["rows"]:
            assert len(row) == len(t["header"]), row  # as many '&' as the header
        assert [r[0] for r in t["rows"] if r[0]] == [LANE_A, LANE_B, "rrf"]  # (an interval row under each)
    assert STRAT in tables[1]["caption"] and LABELS[0] in tables[1]["caption"], tables[1]["caption"]
    assert LABELS[1] in tables[2]["caption"]


def test_compare_latex_table_keeps_its_structure_and_names(rendered):
    res = rendered["compare_latex"]
    assert res.returncode == 0, res.stderr
    means, rows, *power = tex_tables(res.stdout)  # the means with significance letters, the rows, then what each row could establish
    assert [r[0] for r in means["rows"]] == [f"(a) {LANE_A}", f"(b) {LANE_B}", "(c) rrf"]
    assert len(rows["spec"]) == len(rows["header"])
    assert len([r for r in rows["rows"] if r[0]]) == 4  # b and rrf against A, on two metrics
    for t in (means, rows):
        for row in t["rows"]:
            assert len(row) == len(t["header"]), row
    assert {r[0] for r in rows["rows"] if r[0]} == {LANE_B, "rrf"}
    assert f"against {LANE_A} " in rows["caption"]  # the one baseline is named in the caption


def test_a_bar_in_a_name_prints_as_a_bar_in_latex(rendered):
    from rankscope_tui.render.escaping import escape_latex

    assert escape_latex("a|b") == r"a\textbar{}b"


# ============================================================================ Markdown


def md_split(line: str) -> list[str]:
    """Cells of a table row, split at unescaped '|'; each cell unescaped."""
    assert line.startswith("|") and line.rstrip().endswith("|"), line
    cells, cur, i = [], [], 0
    bars = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            assert i + 1 < len(line), f"a lone backslash ends {line!r}"
            cur.append(line[i + 1])
            i += 2
            continue
        assert c not in "*_`", f"bare {c!r} in {line!r}"
        if c == "|":
            bars += 1
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    assert "".join(cur).strip() == ""
    return cells[1:]


def md_unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\":
            out.append(s[i + 1])
            i += 2
        else:
            assert s[i] not in "*_`|", f"bare {s[i]!r} in {s!r}"
            out.append(s[i])
            i += 1
    return "".join(out)


def md_tables(text: str) -> list[tuple[str | None, list[str], list[list[str]]]]:
    lines = text.splitlines()
    out, i, title = [], 0, None
    while i < len(lines):
        if lines[i].startswith("### "):
            title = md_unescape(lines[i][4:])
        if lines[i].startswith("|"):
            header = md_split(lines[i])
            assert lines[i + 1] == "|" + "|".join("---" for _ in header) + "|", lines[i + 1]
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(md_split(lines[j]))
                j += 1
            out.append((title, header, rows))
            i = j
        else:
            i += 1
    return out


def test_evaluate_markdown_tables_keep_their_structure_and_names(rendered):
    res = rendered["evaluate_markdown"]
    assert res.returncode == 0, res.stderr
    tables = md_tables(res.stdout)
    titles = [t[0] for t in tables]  # the overall means, the means over every judged query, each stratum
    assert titles[0] == "Overall" and titles[1].startswith("Means over all ")
    assert titles[2:] == [f"Stratum {STRAT} = {LABELS[0]}", f"Stratum {STRAT} = {LABELS[1]}"]
    for _, header, rows in tables:
        assert header == ["lane", "level", "rr", "hit@1", "ndcg@5", "judged@5"]
        for r in rows:
            assert len(r) == len(header), r  # as many unescaped '|' as the header
        assert [r[0] for r in rows] == [LANE_A, LANE_B, "rrf"]
    cap = res.stdout.rstrip().splitlines()[-1]
    assert cap.startswith("*") and cap.endswith("*")
    md_unescape(cap[1:-1])  # no bare '*' or '_' inside the caption


def test_compare_markdown_table_and_notes_keep_names(rendered):
    res = rendered["compare_markdown"]
    assert res.returncode == 0, res.stderr
    ((_, header, rows),) = md_tables(res.stdout)
    assert len(header) == 16
    for r in rows:
        assert len(r) == len(header), r
        assert r[0] == LANE_A
    assert {r[1] for r in rows} == {LANE_B, "rrf"}
    notes = [ln[2:] for ln in res.stdout.splitlines() if ln.startswith("- ")]
    assert notes
    plain = [md_unescape(n) for n in notes]
    losses = [p for p in plain if "largest losses" in p]
    assert losses and all(f"vs {LANE_A}" in p for p in losses)
    assert any(q in p for p in losses for q in QIDS), losses  # query ids, with every special, shown whole


# ============================================================================ report.json and CSV keep the names


def test_report_and_per_query_csv_keep_the_names_exactly(rendered):
    d = rendered["dir"]
    rep = json.loads((d / "r.json").read_text(encoding="utf-8"))
    assert list(rep["lanes"]) == [LANE_A, LANE_B, "rrf"]
    assert set(rep["strata"][STRAT]) == set(LABELS)
    rows = list(csv.reader(io.StringIO((d / "pq.csv").read_text(encoding="utf-8"))))
    assert rows[0][:3] == ["lane", "level", "qid"]
    assert {r[2] for r in rows[1:]} <= set(QIDS) and {r[0] for r in rows[1:]} == {LANE_A, LANE_B, "rrf"}
    assert all(len(r) == len(rows[0]) for r in rows)


# ============================================================================ lane names: '.', '=' and whitespace are errors


@pytest.mark.parametrize("case", ["dot_in_name", "space_in_name", "tab_in_name", "empty_name", "dot_in_file_name",
                                  "space_in_file_name", "equals_in_file_name"])
def test_a_lane_name_with_a_dot_an_equals_sign_or_whitespace_is_an_error(rendered, case):
    msg = assert_one_line_error(rendered[case])
    assert "lane name" in msg, msg


def test_a_bad_lane_name_before_a_path_with_a_directory_is_reported_as_a_lane_name_error(rendered):
    msg = assert_one_line_error(rendered["dot_in_name_path_with_a_directory"])
    assert "lane name" in msg, msg


def test_a_backslash_in_a_lane_name_given_on_the_command_line_is_accepted(rendered):
    res = rendered["backslash_in_name"]
    assert res.returncode == 0, res.stderr
    assert list(json.loads((rendered["dir"] / "bs.json").read_text())["lanes"]) == ["a\\b"]


# ============================================================================ terminal injection (issue 14, item 20)

ESCAPES = {"\x1b": "\\x1b", "\x07": "\\x07", "\x9b": "\\x9b", "\u202e": "\\u202e", "\x7f": "\\x7f"}
HOSTILE_QID = "q[/]\x1b]0;pwned\x07"          # sets a terminal title; closes Rich markup
HOSTILE_QIDS = [HOSTILE_QID, "q\x9b31m[link=http://x]a", "q\x1b[2Jb", "q\u202ec"]
HOSTILE_DOC = "d\x1b[2J\x7f"
HOSTILE_LABEL = "lab\x1b[31m"


def _hostile_data(d: Path) -> dict[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    run = []
    for qi, q in enumerate(HOSTILE_QIDS):
        for i, doc in enumerate([HOSTILE_DOC, "d2", "d3", "d4"]):
            tie = qi == 0 and i < 2  # one query with a tie: the Overview's parsed order shows it
            run.append(f"{q} Q0 {doc} {i + 1} {1.0 if tie else 1.0 - 0.1 * i - 0.01 * qi} t\n")
    (d / "a.run").write_text("".join(run), encoding="utf-8")
    (d / "b.run").write_text("".join(reversed(run)), encoding="utf-8")
    (d / "qrels.txt").write_text("".join(f"{q} 0 d2 1\n{q} 0 {HOSTILE_DOC} 0\n" for q in HOSTILE_QIDS), encoding="utf-8")
    (d / "kind.tsv").write_text("".join(f"{q}\t{HOSTILE_LABEL}{i % 2}\n" for i, q in enumerate(HOSTILE_QIDS)),
                                encoding="utf-8")
    return {k: str(d / f) for k, f in (("a", "a.run"), ("b", "b.run"), ("qrels", "qrels.txt"), ("strata", "kind.tsv"))}


def _no_raw_controls(text: str, where: str) -> None:
    for c in list(ESCAPES) + [chr(i) for i in range(0x80, 0xa0)] + [chr(i) for i in range(0x20) if chr(i) not in "\t\n"]:
        assert c not in text, (where, repr(c))


def test_hostile_ids_never_reach_the_terminal_raw(tmp_path):
    p = _hostile_data(tmp_path / "h")
    base = ["--lane", p["a"], "--lane", p["b"], "--qrels", p["qrels"], "--strata", p["strata"]]
    jobs = {f"evaluate {fmt}": (["evaluate", *base, "--resamples", "0", "--format", fmt], tmp_path, None)
            for fmt in ("text", "markdown", "latex")}
    jobs["compare"] = (["compare", *base, "--resamples", "999"], tmp_path, None)
    jobs["compare markdown"] = (["compare", *base, "--resamples", "999", "--format", "markdown"], tmp_path, None)
    res = cli_many(jobs)
    for name, r in res.items():
        assert r.returncode == 0, (name, r.stderr)
        _no_raw_controls(r.stdout, name)
        _no_raw_controls(r.stderr, name)
    assert "lab\\x1b[31m0" in res["evaluate text"].stdout  # the label, shown escaped


def test_a_hostile_path_in_an_error_is_escaped(tmp_path):
    res = cli_many({"missing": (["evaluate", "--lane", "a=x\x1b]0;pwned\x07.run", "--qrels", "q"], tmp_path, None)})
    r = res["missing"]
    assert r.returncode == 2
    _no_raw_controls(r.stderr, "error line")
    assert "x\\x1b]0;pwned\\x07.run: no such file" in r.stderr


def test_lane_names_with_control_characters_are_refused(tmp_path):
    p = _hostile_data(tmp_path / "h")
    res = cli_many({"lane": (["evaluate", "--lane", "a\x1b[2J=" + p["a"], "--qrels", p["qrels"]], tmp_path, None)})
    msg = assert_one_line_error(res["lane"], contains=("control characters",))
    _no_raw_controls(msg, "lane error")


def test_escaping_helpers():
    from rankscope_tui.render.escaping import escape_control, escape_latex, escape_markdown, terminal_safe

    assert escape_control("a\x1b[2J\x9b\u202e\tb\n") == "a\\x1b[2J\\x9b\\u202e\\x09b\\x0a"
    assert terminal_safe("a\x1b\tb\nc\x07") == "a\\x1b\tb\nc\\x07"
    assert escape_markdown("q\x1b[") == "q\\\\x1b\\["
    assert escape_latex("q\x1b") == "q\\textbackslash{}x1b"


def test_the_overview_renders_a_hostile_qid_as_text(tmp_path):
    """A qid ``[/]`` (closing markup) with an OSC title sequence: the Overview's parsed-order
    title shows it escaped, nothing raises MarkupError, and no rendered label holds a raw control."""
    import asyncio

    from textual.widgets import Static

    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.state import DashboardOptions, DashboardState

    p = _hostile_data(tmp_path / "h")
    options = DashboardOptions(lanes=((None, p["a"]),), qrels=p["qrels"], strata=(p["strata"],),
                               load=LoadSettings(resamples=0))

    async def run():
        app = RankscopeApp(DashboardState(options, source_label="hostile\x1b]0;x\x07"))
        async with app.run_test(size=(120, 36)) as pilot:
            for _ in range(100):
                await pilot.pause(0.05)
                if app.state.report is not None and not any(w.is_running for w in app.workers):
                    break
            await pilot.pause(0.2)
            assert app.is_running and app.current_mode == "overview"
            texts = [str(w.render()) for w in app.screen.query(Static)]
            for w in app.screen.query("DataTable"):
                for row in range(w.row_count):
                    texts += [str(c) for c in w.get_row_at(row)]
            texts.append(app.sub_title)
            return texts

    texts = asyncio.run(run())
    for t in texts:
        _no_raw_controls(t, t[:80])
    assert any("query q[/]\\x1b]0;pwned\\x07 " in t for t in texts), [t[:120] for t in texts]
