"""The dashboard's state, without Textual: the exploratory choices the views write and the
block the export adds, the exploratory section's renderings, and thresholds.json parsed once.

Every expected value is written out by hand from the inputs given here."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.instruments.rules import Rule
from rankscope_tui.render.exploratory import exploratory_text
from rankscope_tui.state import EXPLORATORY_LABEL, Exploratory, ParsedThresholds


def test_nothing_changed_is_no_block():
    ex = Exploratory()
    assert ex.block() == {}
    ex.move_rrf_k(60, 60)  # the slider at the report's k
    ex.edit_rules([Rule("a.b", ">=", 0.5)], [Rule("a.b", ">=", 0.5)])  # the file's rules, unedited
    assert ex.block() == {}


def test_rrf_k_and_its_means_once_fused():
    ex = Exploratory()
    ex.move_rrf_k(75, 60)
    assert ex.block() == {"label": EXPLORATORY_LABEL, "rrf": {"k": 75, "pre_registered_k": 60}}
    ex.rrf_fused(74, {"ndcg@10": 0.5})  # a stale result (the slider is at 75): not kept
    assert "means" not in ex.block()["rrf"]
    ex.rrf_fused(75.0, {"ndcg@10": 0.25, "rr": math.nan})
    assert ex.block()["rrf"] == {"k": 75, "pre_registered_k": 60, "means": {"ndcg@10": 0.25, "rr": None}}
    ex.move_rrf_k(75, 60)  # the same k again keeps its means
    assert ex.block()["rrf"]["means"] == {"ndcg@10": 0.25, "rr": None}
    ex.move_rrf_k(80, 60)  # another k: its means are not known yet
    assert ex.block()["rrf"] == {"k": 80, "pre_registered_k": 60}
    ex.move_rrf_k(60, 60)  # back at the report's k: nothing exploratory
    assert ex.block() == {}


def test_edited_rules_are_described_beside_the_files():
    ex = Exploratory()
    file = [Rule("lanes.dense.doc.ndcg@10.value", ">=", 0.5), Rule("x.y", "<=", 2.0)]
    edited = [Rule("lanes.dense.doc.ndcg@10.value", ">=", 0.25), Rule("x.y", "<=", 2.0)]
    ex.edit_rules(edited, file)
    assert ex.block() == {"label": EXPLORATORY_LABEL, "verdict_rules": {
        "edited": ["lanes.dense.doc.ndcg@10.value >= 0.25", "x.y <= 2"],
        "file": ["lanes.dense.doc.ndcg@10.value >= 0.5", "x.y <= 2"]}}
    ex.edit_rules(list(file), file)  # restored
    assert ex.block() == {}


def _comparison(with_dev: bool):
    fit_test = SimpleNamespace(lanes=("lexical", "dense"), weights=[0.25, 0.75], objective=0.625)
    return SimpleNamespace(settings=SimpleNamespace(step=0.25, objective="ndcg@10"), fit_test=fit_test,
                           fit_dev=object() if with_dev else None, optimism=0.125 if with_dev else None)


def test_fit_on_test_with_and_without_a_dev_split():
    ex = Exploratory()
    ex.fit_on_test = _comparison(with_dev=True)
    assert ex.block() == {"label": EXPLORATORY_LABEL, "fit_on_test": {
        "fitted_on": "test (in-sample: flattering)", "step": 0.25, "objective": "ndcg@10",
        "weights": {"lexical": 0.25, "dense": 0.75}, "test_ndcg@10": 0.625, "optimism": 0.125}}
    ex.fit_on_test = _comparison(with_dev=False)
    assert "optimism" not in ex.block()["fit_on_test"]


def test_block_order_is_label_rrf_rules_fit():
    ex = Exploratory()
    ex.fit_on_test = _comparison(with_dev=False)
    ex.edit_rules([Rule("a", ">=", 1.0)], [Rule("a", ">=", 2.0)])
    ex.move_rrf_k(10, 60)
    assert list(ex.block()) == ["label", "rrf", "verdict_rules", "fit_on_test"]


BLOCK = {"label": "exploratory: chosen after seeing the data", "rrf": {"k": 75}, "verdict_rules": {"edited": ["a_b >= 0.5"]}}


def test_exploratory_text_formats():
    assert exploratory_text(BLOCK, "text") == (
        "== exploratory ==\n"
        "exploratory: chosen after seeing the data\n"
        'rrf: {"k": 75}\n'
        'verdict_rules: {"edited": ["a_b >= 0.5"]}\n')
    assert exploratory_text(BLOCK, "markdown") == (
        "## exploratory\n\n"
        "- exploratory: chosen after seeing the data\n"
        '- rrf: {"k": 75}\n'
        '- verdict_rules: {"edited": ["a_b >= 0.5"]}\n')


def test_exploratory_latex_uses_the_one_latex_escaping():
    """Each special character as its text-mode command, as every LaTeX table escapes it."""
    block = {"label": "100% in-sample", "verdict_rules": {"edited": ["a_b >= 0.5 | x^2 < y & {z} ~ $#"]}}
    assert exploratory_text(block, "latex") == (
        "% exploratory\n\\paragraph{exploratory}\n"
        "100\\% in-sample\n\n"
        'verdict\\_rules: \\{"edited": ["a\\_b \\textgreater{}= 0.5 \\textbar{} x\\textasciicircum{}2 \\textless{} y '
        '\\& \\{z\\} \\textasciitilde{} \\$\\#"]\\}\n')


def test_exploratory_text_shows_control_characters_escaped():
    block = {"label": "x", "rrf": {"lane": "a\u202eb"}}  # a bidi override in a lane name
    text = exploratory_text(block, "text")
    assert "\u202e" not in text and "\\u202e" in text


def test_thresholds_parsed_once_and_seeded(monkeypatch, tmp_path):
    from rankscope_tui.kernel.gate import thresholds as TH

    calls: list[str] = []

    def counting(path):
        calls.append(path)
        return SimpleNamespace(path=path)

    monkeypatch.setattr(TH, "read_thresholds", counting)
    parsed = ParsedThresholds()
    assert parsed.get(None) is None and calls == []  # no file: nothing read
    first = parsed.get("a.json")
    assert parsed.get("a.json") is first and calls == ["a.json"]
    other = parsed.get("b.json")  # another path (a reload with other thresholds) is read
    assert other.path == "b.json" and calls == ["a.json", "b.json"]

    seeded = ParsedThresholds()
    value = SimpleNamespace(path="c.json")
    seeded.seed("c.json", value)  # the report's prepare read it
    assert seeded.get("c.json") is value and calls == ["a.json", "b.json"]
    seeded.seed("c.json", SimpleNamespace(path="c.json"))  # a later seed keeps the parse it has
    assert seeded.get("c.json") is value


def test_a_thresholds_file_that_does_not_parse_is_reported_each_time(tmp_path):
    bad = tmp_path / "th.json"
    bad.write_text('{"schema": "something else"}', encoding="utf-8")
    parsed = ParsedThresholds()
    for _ in range(2):  # not remembered: each caller shows the kernel's error
        with pytest.raises(InputError, match="not a thresholds file"):
            parsed.get(str(bad))
