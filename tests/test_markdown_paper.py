"""Must show 1: the raw markdown of ``evaluate`` and ``compare`` on Cranfield reads back
into report.json / compare.json at the printed precision, carries every block of the
text report, and gives each section's n. The oracle is the JSON the same call wrote."""

from __future__ import annotations

import re

import pytest
from paper_outputs import outputs

NUM = r"[-+]?\d+\.\d+"
CELL = re.compile(rf"^({NUM})(?: \[({NUM}), ({NUM})\]| \(not informative: no variation\))?( †)?$")


@pytest.fixture(scope="module")
def cran():
    return outputs("cranfield")


def _tables(text: str):
    """(title, n line, header, rows) of each section table; cells split at bars (names here hold none)."""
    lines = text.splitlines()
    out, title, n_line = [], None, None
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("### "):
            title, n_line = ln[4:], None
        elif ln.startswith("n = "):
            n_line = ln
        elif ln.startswith("| "):
            header = [c.strip() for c in ln.strip("|").split("|")]
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("| "):
                rows.append([c.strip() for c in lines[j].strip("|").split("|")])
                j += 1
            out.append((title, n_line, header, rows))
            i = j
            continue
        i += 1
    return out


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def test_no_number_is_escaped(cran):
    for text in (cran["evaluate_markdown"], cran["compare_markdown"]):
        assert "\\." not in text and "\\[" not in text and "\\]" not in text and "\\-" not in text and "\\(" not in text


def test_every_evaluate_number_reads_back_at_the_printed_precision(cran):
    report = cran["report"]
    tables = _tables(cran["evaluate_markdown"])
    # the peers' means over every judged query follow the overall table (no intervals:
    # read back in tests/test_judged_means.py); the sections with intervals are checked here
    judged = [t for t in tables if t[0].startswith("Means over all")]
    assert len(judged) == 1 and tables.index(judged[0]) == 1
    tables = [t for t in tables if t not in judged]
    sections = [("Overall", report["lanes"])]
    sections += [(f"Stratum {s} = {lab}", b) for s, labs in report["strata"].items() for lab, b in labs.items()]
    assert [t[0] for t in tables] == [s for s, _ in sections]
    checked = 0
    for (title, n_line, header, rows), (_, block) in zip(tables, sections):
        metrics = header[2:]
        assert metrics == report["inputs"]["settings"]["metrics"]
        expected_rows = [(lane, level) for lane, levels in block.items() for level in levels]
        assert [(r[0], r[1]) for r in rows] == expected_rows
        ns = {cell["n"] for levels in block.values() for cells in levels.values() for cell in cells.values()}
        assert len(ns) == 1 and n_line == f"n = {ns.pop()} positive queries", (title, n_line)
        for r in rows:
            cells = block[r[0]][r[1]]
            for m, text in zip(metrics, r[2:]):
                match = CELL.match(text)
                assert match, text
                c = cells[m]
                assert match.group(1) == _fmt(c["value"])
                float(match.group(1))  # parses as a number, no backslash in it
                if match.group(2):
                    assert (match.group(2), match.group(3)) == (_fmt(c["low"]), _fmt(c["high"]))
                else:
                    assert c["low"] == c["high"]
                # the small-sample mark exactly where the kernel flagged the interval
                assert bool(match.group(4)) == ("coverage below nominal" in (c.get("note") or "")), (title, text)
                checked += 1
    assert checked > 400
    # n differs by stratum: a small stratum says it is small
    assert len({t[1] for t in tables}) > 2


def test_every_block_of_the_text_report_is_present(cran):
    text, report = cran["evaluate_markdown"], cran["report"]
    s = report["summary"]
    assert "- unique share (positives only this lane surfaces): " in text
    for lane, v in s["unique_share"].items():
        assert f"{lane} {v['share']:.3f} ({v['count']})" in text
    m = s["judged_queries_missing_from_any_lane"]
    assert f"judged queries missing from any lane: {m['missing_from_any']} of {m['judged_queries']}" in text
    assert f"positives {s['positives']}, negatives {s['negatives']}" in text
    for level, a in report["attribution"].items():
        assert f"- Attribution ({level} level, window {a['window']}, {a['positives']} positives)" in text
    r = report["fusion"]["rrf"]
    assert f"- RRF k = {r['k']:g}" in text
    for lane, v in r["dilution"]["lanes"].items():
        assert f"{lane} {v['count']}" in text
    assert f"### Gate on {report['gate']['lane']}" in text
    op = report["gate"]["operating_point"]["in_domain"]
    assert f"{op['floor']:.6g}" in text
    for w in s["warnings"]:
        assert w["message"] in text
    assert text.rstrip().splitlines()[-1].startswith("*") and report["definitions"]["ndcg@10"][:30] in text


def test_every_compare_number_reads_back_at_the_printed_precision(cran):
    rows = cran["compare"]["comparisons"]
    ((_, _, header, cells),) = _tables(cran["compare_markdown"])
    assert header[:11] == ["baseline", "candidate", "metric", "n", "base", "cand", "delta", "CI", "p", "adj p", "t p"]
    assert len(cells) == len(rows)
    for c, r in zip(cells, rows):
        assert c[:3] == [r["baseline"], r["candidate"], r["metric"]] and int(c[3]) == r["n"]
        assert c[4] == _fmt(r["baseline_mean"]) and c[5] == _fmt(r["candidate_mean"])
        assert c[6] == f"{r['difference']:+.4f}"
        assert c[7] == f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
        assert float(c[8]) == pytest.approx(r["randomization_p"], abs=0.5e-4)  # a bare number, no "p = "
        # a t p below 0.0001 reads "< 0.0001" (to 4 decimals it would print as 0.0000)
        assert c[9] == _fmt(r["adjusted_p"]) and c[10] == ("< 0.0001" if r["t_p"] < 1e-4 else _fmt(r["t_p"]))
        assert c[11] == f"[{_fmt(r['bca_low'])}, {_fmt(r['bca_high'])}] ({r['bca_level']:.4f})"
        assert c[12] == f"{r['effect_size']:.3f}"
        assert c[13] == f"[{_fmt(r['unpaired_ci_low'])}, {_fmt(r['unpaired_ci_high'])}]"
        assert c[14] == f"{r['wins']}/{r['losses']}/{r['ties']}"
    # why the BCa level varies by row is said once
    if len({r["bca_level"] for r in rows}) > 1:
        assert "- BCa (level): each row's BCa interval is at 1 minus the threshold" in cran["compare_markdown"]
