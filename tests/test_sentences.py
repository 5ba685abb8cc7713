"""The sentences a paper needs (``render/sentences.py``): every number in a results sentence
is parsed back out and compared with the JSON field it comes from; the methods paragraph
follows the settings actually used; the seven-point checklist names what is missing."""

from __future__ import annotations

import json
import re

import pytest
from support import REPO, run_cli, shared_path

from rankscope_tui.render import sentences as se

NUMBER = re.compile(r"(?<![\w@])[-−]?\d[\d,]*(?:\.\d+)?")

CRANFIELD_SENTENCE = re.compile(
    r"^(?P<cand>\S+) scored lower than (?P<base>\S+) on (?P<metric>\S+) by (?P<diff>[\d.]+) "
    r"\((?P<level>[\d.]+)% paired-bootstrap confidence interval \[(?P<lo>-?[\d.]+), (?P<hi>-?[\d.]+)\], "
    r"a relative change of (?P<rel>-?[\d.]+)%; paired two-sided randomization test with (?P<B>[\d,]+) resamples, "
    r"Holm-adjusted p = (?P<p>[\d.]+); n = (?P<n>[\d,]+) queries, of which (?P<nz>[\d,]+) scored differently "
    r"under the two systems; verdict: established worse\)\. "
    r"With n = (?P<pn>\d+) queries and this spread, Δ ≥ (?P<mde>[\d.]+) would be established "
    r"\((?P<power>\d+)% power at α = (?P<alpha>[\d.]+), paired t approximation: noncentral t, df = n − 1\); "
    r"Δ = (?P<target>[\d.]+) needs about (?P<needed>[\d,]+) queries\.$")


def same_float(text: str, value: float, decimals: int) -> None:
    """The printed number is the field, formatted: the same float once rounded as printed."""
    assert float(text) == float(f"{value:.{decimals}f}"), (text, value)
    assert abs(float(text) - value) <= 0.5 * 10 ** -decimals


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory):
    lanes = shared_path("cranfield", "lanes")
    qrels = shared_path("cranfield", "qrels-test.txt")
    out = tmp_path_factory.mktemp("sentences") / "c.json"
    r = run_cli("compare", "--lane", lanes / "bm25.run", "--lane", lanes / "dense.run", "--qrels", qrels,
                "--candidate", "dense", "--out", out)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


def test_every_number_of_the_cranfield_sentence_is_its_json_field(cranfield):
    payload, _ = cranfield
    row = payload["comparisons"][0]
    sentence = row["sentence"]
    m = CRANFIELD_SENTENCE.match(sentence)
    assert m, sentence
    assert (m["cand"], m["base"], m["metric"]) == (row["candidate"], row["baseline"], row["metric"])
    same_float(m["diff"], -row["difference"], 4)
    same_float(m["level"], row["confidence"] * 100, 0)
    same_float(m["lo"], row["ci_low"], 4)
    same_float(m["hi"], row["ci_high"], 4)
    same_float(m["rel"], row["relative_gain"] * 100, 1)
    assert int(m["B"].replace(",", "")) == row["resamples"]
    same_float(m["p"], row["adjusted_p"], 4)
    assert int(m["n"].replace(",", "")) == row["n"] and int(m["nz"].replace(",", "")) == row["n_nonzero"]
    assert row["relative_gain"] == row["difference"] / row["baseline_mean"]
    # the power clause (issue 31.1): what this n and spread could establish, what the observed Δ needs
    pw = row["power"]
    assert int(m["pn"]) == pw["n"] == row["n"]
    same_float(m["mde"], pw["mde"], 3)
    same_float(m["power"], pw["power"] * 100, 0)
    assert float(m["alpha"]) == pw["alpha"]
    same_float(m["target"], abs(row["difference"]), 3)
    assert int(m["needed"].replace(",", "")) == pw["needed"]
    # no number in the sentence that the parse did not account for (ndcg@10's 10 is part of a name;
    # the 1 of "df = n − 1" is the approximation's name)
    assert len(NUMBER.findall(sentence)) == 16


def test_the_readme_shows_the_cranfield_sentence(cranfield):
    payload, stdout = cranfield
    sentence = payload["comparisons"][0]["sentence"]
    assert sentence in stdout
    assert sentence in (REPO / "README.md").read_text()


def test_the_checklist_states_its_seven_points_and_what_is_missing(cranfield):
    payload, stdout = cranfield
    points = payload["checklist"]
    assert [p.split(".")[0] for p in points] == [str(i) for i in range(1, 8)]
    assert "linear gain" in points[0]  # the metric's definition
    assert "missing" in points[5] and "no retraining seeds" in points[5]
    assert "missing" in points[6] and "--primary" in points[6]
    for p in points:
        assert p in stdout
    assert "Methods" in stdout and payload["methods"] in stdout


def _payload(**settings_over):
    row = {"baseline": "a", "candidate": "b", "metric": "ndcg@10", "n": 1234, "n_nonzero": 1001, "n_units": 300,
           "difference": 0.0054, "relative_gain": 0.011, "ci_low": 0.003, "ci_high": 0.008, "confidence": 0.95,
           "resamples": 9999, "randomization_p": 1 / 10000, "adjusted_p": 4 / 10000, "t_p": 2.1e-5,
           "correction": "holm", "verdict": "better", "test": "randomization", "retraining": None}
    settings = {"alternative": "two-sided", "sampling_unit": "query", "resamples": 9999, "confidence": 0.95,
                "correction": "holm", "family_size": 4, "alpha": 0.05, "primary": None, "test": "randomization",
                "definitions": {"ndcg@10": "ndcg@10: linear gain"}, "units": None}
    settings.update(settings_over)
    return {"comparisons": [row], "settings": settings}


def test_the_floor_is_named_and_counts_use_separators():
    s = se.results_sentence(_payload()["comparisons"][0], _payload()["settings"])
    assert "Holm-adjusted p = 0.0004, the raw p being the minimum attainable at that resample count" in s
    assert "n = 1,234 queries, of which 1,001 scored differently" in s
    assert s.startswith("b improved ndcg@10 over a by 0.0054 (95% paired-bootstrap confidence interval [0.0030, 0.0080]")


def test_units_one_sided_and_the_t_test_change_the_words():
    p = _payload(sampling_unit="unit", units="u.tsv", alternative="greater", test="t")
    row = dict(p["comparisons"][0], ci_high=None, test="t", adjusted_p=0.0123)
    s = se.results_sentence(row, p["settings"])
    assert "n = 1,234 queries in 300 units, of which 1,001 units scored differently" in s
    assert "one-sided 95% paired-bootstrap lower confidence bound 0.0030" in s
    assert "paired one-sided (greater) t-test, Holm-adjusted p = 0.0123" in s
    methods = se.methods_paragraph({**p, "comparisons": [row]})
    assert "per unit" in methods and "decided by a paired one-sided" in methods and "t-test" in methods
    points = se.checklist({**p, "comparisons": [row]})
    assert "units from u.tsv" in points[3] and "n_units = 300" in points[3]
    assert "one-sided (greater)" in points[2]


def test_seeds_and_primary_fill_their_points():
    p = _payload(primary="ndcg@10")
    spread = {"baseline_seeds": [0], "candidate_seeds": [0, 1, 2, 3, 4], "mean_difference": 0.005916,
              "sd_queries": 0.001279, "sd_retraining": 0.000598, "ratio": 0.4675, "widens_by": 0.104,
              "reversals": 0, "reversals_out_of": 5, "rule": "one side retrained", "differences": [], "warnings": []}
    row = dict(p["comparisons"][0], retraining=spread)
    s = se.results_sentence(row, p["settings"])
    assert "across 5 retraining seeds the mean difference was 0.0059 with SD over retraining 0.0006" in s
    assert "SD over queries 0.0013 (ratio 0.47)" in s and "0 of 5 seed differences had the other sign" in s
    points = se.checklist({**p, "comparisons": [row]})
    assert "missing" not in points[5] and "missing" not in points[6]
    table = se.retraining_table({**p, "comparisons": [row]})
    assert table[1][0][6:8] == ["0.47", "10.4%"]


def test_without_resamples_the_words_say_nothing_was_tested():
    p = _payload(resamples=0, family_size=1)
    row = dict(p["comparisons"][0], resamples=0, ci_low=None, ci_high=None, randomization_p=None, adjusted_p=None)
    s = se.results_sentence(row, p["settings"])
    assert "no bootstrap interval (resamples = 0)" in s and "no randomization test was run (resamples = 0)" in s
    assert "B = 0" not in se.methods_paragraph({**p, "comparisons": [row]})
    points = se.checklist({**p, "comparisons": [row]})
    assert points[2].startswith("3. interval and level: missing") and "missing" in points[4]
    for text in [s, *points]:
        assert "None" not in text and "nan" not in text and "null" not in text


@pytest.mark.parametrize("alternative, open_end", [("greater", "+∞)"), ("less", "(−∞")])
def test_one_sided_table_cells_write_the_open_end_as_infinity(alternative, open_end, tmp_path):
    """A one-sided interval's table cells say [lo, +∞) or (−∞, hi], in every format; the
    JSON keeps the bound null with its reason, and no cell reads "inf"."""
    lanes = shared_path("cranfield", "lanes")
    qrels = shared_path("cranfield", "qrels-test.txt")
    args = ["compare", "--lane", lanes / "bm25.run", "--lane", lanes / "dense.run", "--qrels", qrels,
            "--candidate", "dense", "--alternative", alternative, "--resamples", "999"]
    out = tmp_path / "c.json"
    text = run_cli(*args, "--out", out)
    assert text.returncode == 0, text.stderr
    row = json.loads(out.read_text())["comparisons"][0]
    bound = "ci_high" if alternative == "greater" else "ci_low"
    assert row[bound] is None and row[f"{bound}_reason"].startswith("unbounded")
    table_line = next(line for line in text.stdout.splitlines() if line.startswith("bm25"))
    assert table_line.count(open_end) == 3  # CI, BCa and the unpaired CI
    markdown = run_cli(*args, "--format", "markdown").stdout
    assert next(line for line in markdown.splitlines() if line.startswith("| bm25")).count(open_end) == 3
    latex = run_cli(*args, "--format", "latex").stdout
    tex_end = "$+\\infty$)" if alternative == "greater" else "($-\\infty$"
    assert tex_end in latex
    for stream in (text.stdout, markdown, latex):
        assert re.search(r"\binf\b", stream) is None
