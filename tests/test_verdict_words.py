"""Issue 29, must show 4: the four verdict states -- established better, established but
below min-delta, inconclusive, established worse -- each said in the same words by every
face: the text, markdown and LaTeX tables, ``compare --out`` (``verdict`` and
``verdict_text``), the results sentence and the dashboard's Compare view (Pilot). No face
says "improved" for a difference that is not established.

The data are built so that each state is known by hand: one relevant document per query,
reciprocal rank as the measure, so a lane's per-query value is 1/rank of that document.
Over 40 queries the baseline ranks it 2nd (odd queries) or 3rd (even ones):

- ``up`` ranks it 1st everywhere: every Δ > 0 (1/2 or 2/3), mean 7/12;
- ``down`` does not retrieve it: every Δ < 0 (-1/2 or -1/3), mean -5/12;
- ``small`` ranks it 4th / 5th: every Δ < 0 (-1/4 or -2/15), mean -23/120;
- ``flat`` equals the baseline but on four queries (+1/2, +2/3, -1/4, -1/6), mean 3/160.

With every one of 40 differences of one sign the exact sign-flip p is 2 / 2^40, so the
Monte Carlo p is its floor 1/(B + 1) and Holm's adjusted p at most 4/(B + 1) < 0.05: up,
down and small are established. ``flat``'s four non-zero differences give an exact
two-sided sign-flip p (computed below over the 16 patterns) far above 0.05. With
``--min-delta 0.4``: |7/12| and |-5/12| clear it, |-23/120| does not.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import replace
from fractions import Fraction

import pytest
from support import run_cli, settle
from test_tui import KEY, make_app, test_timing  # noqa: F401 (the dashboard's test timing)

from rankscope_tui.commands.tui import parse_args, state_from_args
from rankscope_tui.kernel.settings import CompareSettings

QIDS = [f"q{i:02d}" for i in range(1, 41)]
BASE_RANK = {q: 2 if i % 2 == 0 else 3 for i, q in enumerate(QIDS)}  # q01 (i = 0) is "odd": rank 2
FLAT_CHANGES = {"q01": 1, "q02": 1, "q03": 4, "q04": 6}  # base ranks 2, 3, 2, 3
LANES = {
    "base": BASE_RANK,
    "up": {q: 1 for q in QIDS},
    "small": {q: BASE_RANK[q] + 2 for q in QIDS},
    "flat": {q: FLAT_CHANGES.get(q, BASE_RANK[q]) for q in QIDS},
    "down": {q: None for q in QIDS},
}
MIN_DELTA = "0.4"
#: the oracle: the state each candidate is in by construction, and how every face says it
STATE = {"up": "better", "small": "below_min_delta", "flat": "inconclusive", "down": "worse"}
WORDS = {"better": "established better", "below_min_delta": "established but below min-delta 0.4",
         "inconclusive": "inconclusive", "worse": "established worse"}


def rr(rank) -> Fraction:
    return Fraction(0) if rank is None else Fraction(1, rank)


def test_the_construction_is_what_the_docstring_says():
    """The hand oracle itself: means and the exact sign-flip p of the one undecided lane."""
    d = {lane: [rr(LANES[lane][q]) - rr(BASE_RANK[q]) for q in QIDS] for lane in STATE}
    assert sum(d["up"]) / 40 == Fraction(7, 12) and all(x > 0 for x in d["up"])
    assert sum(d["down"]) / 40 == Fraction(-5, 12) and all(x < 0 for x in d["down"])
    assert sum(d["small"]) / 40 == Fraction(-23, 120) and all(x < 0 for x in d["small"])
    assert abs(Fraction(-23, 120)) < Fraction(MIN_DELTA) <= min(Fraction(7, 12), Fraction(5, 12))
    nonzero = [x for x in d["flat"] if x]
    assert sorted(nonzero) == sorted([Fraction(1, 2), Fraction(2, 3), Fraction(-1, 4), Fraction(-1, 6)])
    observed = abs(sum(nonzero))
    extreme = sum(abs(sum(s * x for s, x in zip(signs, nonzero))) >= observed
                  for signs in itertools.product((1, -1), repeat=4))
    assert Fraction(extreme, 16) > Fraction(1, 5)  # exact two-sided p: nowhere near 0.05


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("states")
    (d / "qrels.txt").write_text("".join(f"{q} 0 rel 1\n" for q in QIDS), encoding="utf-8")
    paths = {}
    for lane, ranks in LANES.items():
        lines = []
        for q in QIDS:
            docs = [f"f{j}" for j in range(1, 10)]
            if ranks[q] is not None:
                docs.insert(ranks[q] - 1, "rel")
            lines += [f"{q} Q0 {doc} {r} {100 - r} {lane}\n" for r, doc in enumerate(docs, 1)]
        paths[lane] = d / f"{lane}.run"
        paths[lane].write_text("".join(lines), encoding="utf-8")
    return d, paths


def _args(data) -> list[str]:
    d, paths = data
    lanes = [a for lane, p in paths.items() for a in ("--lane", f"{lane}={p}")]
    return [*lanes, "--qrels", str(d / "qrels.txt"), "--resamples", "999"]


@pytest.fixture(scope="module")
def faces(data, tmp_path_factory):
    """Every face of one `compare` call (rr, --min-delta 0.4): the printed text, markdown and
    LaTeX, and compare --out."""
    out = tmp_path_factory.mktemp("faces") / "c.json"
    args = ["compare", *_args(data), "--metric", "rr", "--min-delta", MIN_DELTA]
    got = {}
    for fmt in ("text", "markdown", "latex"):
        res = run_cli(*args, "--format", fmt, *(["--out", out] if fmt == "text" else []))
        assert res.returncode == 0, res.stderr
        got[fmt] = res.stdout
    got["json"] = json.loads(out.read_text())
    return got


def _row_line(text: str, candidate: str, start: str = "") -> str:
    (line,) = [ln for ln in text.splitlines() if re.match(rf"^{re.escape(start)}\s*{candidate}\s", ln)]
    return line


@pytest.mark.parametrize("face", ["json", "text", "markdown", "latex", "sentence"])
@pytest.mark.parametrize("candidate", list(STATE))
def test_each_state_is_said_in_one_vocabulary(faces, candidate, face):
    state, words = STATE[candidate], WORDS[STATE[candidate]]
    rows = {r["candidate"]: r for r in faces["json"]["comparisons"]}
    row = rows[candidate]
    assert row["verdict"] == state  # the kernel decides what the construction says
    if face == "json":
        assert row["verdict_text"] == words
    elif face == "text":
        assert _row_line(faces["text"], candidate, "base ").rstrip().endswith(words)
    elif face == "markdown":
        cells = [c.strip() for c in _row_line(faces["markdown"], candidate, "| base |").strip("|").split("|")]
        assert cells[-1] == words
    elif face == "latex":
        cells = [c.strip() for c in _row_line(faces["latex"], candidate).rstrip("\\ ").split("&")]
        assert cells[-1] == words
    else:
        sentence = row["sentence"]
        # the results sentence ends with the verdict; the power clause follows as a sentence of its own
        results, power = sentence.split(").", 1)[0] + ").", sentence.split(").", 1)[1]
        assert results.endswith(f"verdict: {words}).") or results.endswith(f"verdict: {words}, at least min-delta 0.4).")
        assert power == (" " + row["power"]["sentence"][0].upper() + row["power"]["sentence"][1:] + ".")
        assert sentence in faces["text"]
        directional = {"better": "improved", "worse": "scored lower than"}
        if state in directional:
            assert directional[state] in sentence
        else:  # nothing established in the candidate's favour (or against it, by enough): a neutral verb
            assert "improved" not in sentence and "scored lower" not in sentence
            assert sentence.startswith(f"{candidate} differed from base on rr by ")


def test_min_delta_is_shown_in_the_table_notes_methods_and_checklist(faces):
    for fmt in ("text", "markdown"):
        text = faces[fmt]
        header = next(ln for ln in text.splitlines() if "baseline" in ln and "candidate" in ln)
        assert "verdict (min-delta 0.4)" in header
        assert "min-delta 0.4: an established difference is called better or worse only when" in text
    payload = faces["json"]
    assert "minimum effect 0.4 (--min-delta); it decided 1 of the 4 tested verdicts" in payload["methods"]
    assert "minimum effect 0.4 (--min-delta)" in payload["checklist"][1]
    assert payload["methods"] in faces["text"] and payload["checklist"][1] in faces["text"]
    assert "n.s." not in faces["latex"]


async def test_the_compare_view_says_the_same_words(data):
    """The dashboard's Compare view on the same lanes, rr and min-delta 0.4: each row's
    verdict cell and its panel's sentence in the same words."""
    from test_tui_layout import shown

    options = state_from_args(parse_args(_args(data))).options  # --resamples 999, as FAST
    options = replace(options, compare=CompareSettings(metrics=("rr",), min_delta=float(MIN_DELTA)))
    app = make_app(options, synthetic=False, source_label="states")
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        await pilot.press(KEY["compare"])
        await settle(app, pilot, 0.1)
        screen = app.screen
        rows = screen.result.result.rows
        assert [(r.candidate, r.verdict) for r in rows] == list(STATE.items())
        table = shown(screen.query_one("#cmp-rows"))
        for candidate, state in STATE.items():
            (line,) = [ln for ln in table.splitlines() if re.match(rf"^\s*{candidate}\s", ln)]
            assert WORDS[state] in line, (candidate, line)
        table_widget = screen.query_one("#cmp-rows")
        table_widget.focus()
        for i, (candidate, state) in enumerate(STATE.items()):
            table_widget.move_cursor(row=i)
            await pilot.pause()
            await settle(app, pilot)
            panel = str(screen.query_one("#cmp-verdict").render())
            assert f"verdict: {WORDS[state]}" in " ".join(panel.split()), (candidate, panel)
            if state not in ("better", "worse"):
                assert "improved" not in panel
        assert app._exception is None


# --------------------------------------------------------------------------- notes that agree (item 12)


def test_identical_tables_say_no_variation(tmp_path):
    """Two identical per-query tables: every Δ is 0. No note may read p_superiority = 0 as
    "100 % of replicates favour the baseline"; the row says "no variation" instead."""
    values = {q: (i % 7) / 7 for i, q in enumerate(QIDS)}
    for lane in ("a", "b"):
        (tmp_path / f"{lane}.tsv").write_text("".join(f"{q}\tP@10\t{v!r}\n" for q, v in values.items()))
    out = tmp_path / "c.json"
    res = run_cli("compare", "--per-query-in", tmp_path / "a.tsv", "--per-query-in", tmp_path / "b.tsv",
                  "--metric", "p@10", "--resamples", "999", "--out", out)
    assert res.returncode == 0, res.stderr
    row = json.loads(out.read_text())["comparisons"][0]
    assert (row["n_nonzero"], row["difference"], row["verdict"]) == (0, 0.0, "inconclusive")
    assert row["bootstrap_agrees"] is None and row["bootstrap_agrees_reason"] == "no variation: every difference is 0"
    assert "no variation: both lanes score every one of the 40 queries the same" in res.stdout
    assert "favour the baseline" not in res.stdout and "p_superiority = 0.0000" not in res.stdout
    assert "b and a had the same mean p@10" in row["sentence"]


def test_the_bca_footnote_does_not_promise_what_a_row_note_may_deny(faces):
    """Rows at different BCa levels get the footnote; it may not say the interval excludes 0
    "exactly when" the test rejects (a row's note can say the opposite)."""
    note = next(ln for ln in faces["markdown"].splitlines() if ln.startswith("- BCa (level)"))
    assert "exactly when" not in note and "still disagree" in note


# --------------------------------------------------------------------------- one comparison plan (item 14)


def _rows(data, tmp_path, *extra) -> list[tuple[str, str]]:
    out = tmp_path / "plan.json"
    res = run_cli("compare", *_args(data), "--metric", "rr", *extra, "--out", out)
    assert res.returncode == 0, res.stderr
    return [(r["baseline"], r["candidate"]) for r in json.loads(out.read_text())["comparisons"]]


def test_a_derived_lane_is_compared_only_when_named(data, tmp_path):
    assert _rows(data, tmp_path) == [("base", c) for c in ("up", "small", "flat", "down")]
    assert _rows(data, tmp_path, "--candidate", "rrf") == [("base", "rrf")]


def test_best_never_meets_itself(data, tmp_path):
    """The best input lane on rr is ``up`` (mean 1, by construction; every other mean < 1/2)."""
    assert _rows(data, tmp_path, "--baseline", "best") == [("up", c) for c in ("base", "small", "flat", "down")]
    assert _rows(data, tmp_path, "--baseline", "best", "--candidate", "up", "--candidate", "flat") == [("up", "flat")]
    only = run_cli("compare", *_args(data), "--metric", "rr", "--baseline", "best", "--candidate", "up")
    assert only.returncode == 2 and only.stderr.count("\n") == 1, only.stderr
    assert "the best lane on rr is up, the only candidate" in only.stderr and "Traceback" not in only.stderr
    same = run_cli("compare", *_args(data), "--metric", "rr", "--baseline", "flat", "--candidate", "flat")
    assert same.returncode == 2 and same.stderr.count("\n") == 1, same.stderr
    assert "never compared with itself" in same.stderr


def test_the_api_plans_as_the_cli(data):
    import rankscope_tui as rs

    d, paths = data
    runs = {lane: str(p) for lane, p in paths.items()}
    plain = rs.compare(str(d / "qrels.txt"), runs, measures="rr", resamples=999)
    assert [r.candidate for r in plain.result.rows] == ["up", "small", "flat", "down"]
    named = rs.compare(str(d / "qrels.txt"), runs, candidates=["rrf"], measures="rr", resamples=999)
    assert [r.candidate for r in named.result.rows] == ["rrf"]
