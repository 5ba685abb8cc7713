"""Every range is checked by the settings themselves, and each face names the setting in its own words.

The settings dataclasses (``kernel/settings.py``) refuse an out-of-range value when they are
built, with a ``SettingError`` whose ``.setting`` is the field name. The command line words
it with the option (``--min-delta: ...``, exit 2), the Python API with the parameter
(``min_delta: ...``). The expected messages below are written out by hand from the rules
(SPEC §7: min_delta is a finite number >= 0; a comparison draws 0 or at least 999 resamples).
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from support import cli_env

import rankscope_tui as rs
from rankscope_tui.kernel.errors import InputError, SettingError
from rankscope_tui.kernel.settings import (
    MAX_CONFIDENCE,
    MAX_RESAMPLES,
    MAX_RRF_K,
    MAX_SEED,
    CalibrationSettings,
    CompareSettings,
    DiffSettings,
    GateSettings,
    LoadSettings,
)

MIN_DELTA_WORDS = "must be a finite number >= 0 (the smallest mean difference worth calling better), got "

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d1": 1}}
RUNS = {"a": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}, "q3": {"d3": 1.0}, "q4": {"d2": 1.0}},
        "b": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d2": 2.0}, "q3": {"d3": 1.0}, "q4": {"d1": 1.0}}}


def _write_inputs(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    lanes = []
    for name, run in RUNS.items():
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{q} Q0 {d} {r} {s} {name}\n" for q, docs in run.items()
                                for r, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), start=1)))
        lanes += ["--lane", f"{name}={path}"]
    return lanes, qrels


# --------------------------------------------------------------------------- min_delta through each face


@pytest.mark.parametrize("bad, shown", [(-1, "-1"), (float("nan"), "nan"), (-0.5, "-0.5"), (float("inf"), "inf")])
def test_paired_refuses_a_min_delta_out_of_range_naming_the_parameter(bad, shown):
    with pytest.raises(SettingError) as e:
        rs.paired([0.1, 0.5, 0.9], [0.2, 0.6, 1.0], ["q1", "q2", "q3"], min_delta=bad)
    assert e.value.setting == "min_delta"
    assert isinstance(e.value, InputError) and isinstance(e.value, ValueError)
    assert str(e.value) == f"min_delta: {MIN_DELTA_WORDS}{shown}"


@pytest.mark.parametrize("bad, shown", [(-1, "-1"), (float("nan"), "nan")])
def test_compare_refuses_a_min_delta_out_of_range_naming_the_parameter(bad, shown):
    with pytest.raises(SettingError) as e:
        rs.compare(QRELS, RUNS, min_delta=bad, resamples=0)
    assert e.value.setting == "min_delta"
    assert str(e.value) == f"min_delta: {MIN_DELTA_WORDS}{shown}"


@pytest.mark.parametrize("text, shown", [("-1", "-1.0"), ("nan", "nan")])
def test_the_command_line_refuses_a_min_delta_out_of_range_naming_the_option(tmp_path, cli_run, text, shown):
    lanes, qrels = _write_inputs(tmp_path)
    rc, out, err = cli_run("compare", *lanes, "--qrels", qrels, "--resamples", "0", "--min-delta", text)
    assert (rc, out) == (2, "")
    assert err == f"rankscope: error: --min-delta: {MIN_DELTA_WORDS}{shown}\n"


def test_a_min_delta_in_range_is_taken(tmp_path, cli_run):
    """The control: 0 and a positive delta pass every face (the refusals above are about the range)."""
    p = rs.paired([0.1, 0.5, 0.9], [0.2, 0.6, 1.0], ["q1", "q2", "q3"], min_delta=0, resamples=0)
    assert p.row.difference == pytest.approx(0.1)  # (0.1 + 0.1 + 0.1) / 3
    assert rs.compare(QRELS, RUNS, min_delta=0.25, resamples=0).result.settings.min_delta == 0.25
    lanes, qrels = _write_inputs(tmp_path)
    rc, _, err = cli_run("compare", *lanes, "--qrels", qrels, "--resamples", "0", "--min-delta", "0.25")
    assert rc == 0, err


def test_the_command_line_names_the_alias_it_was_given(tmp_path, cli_run):
    """calibrate's --alpha is the miss rate: refused, it is named as given."""
    lanes, qrels = _write_inputs(tmp_path)
    rc, _, err = cli_run("calibrate", lanes[0], lanes[1], "--qrels", qrels, "--alpha", "1.5", "--out", tmp_path / "t.json")
    assert (rc, err) == (2, "rankscope: error: --alpha must be between 0 and 1 (exclusive), got 1.5\n")
    rc, _, err = cli_run("calibrate", lanes[0], lanes[1], "--qrels", qrels, "--miss-rate", "0", "--out", tmp_path / "t.json")
    assert (rc, err) == (2, "rankscope: error: --miss-rate must be between 0 and 1 (exclusive), got 0\n")


def test_the_api_names_measures_for_the_metrics_setting():
    err = SettingError("metrics", "{metrics} is empty").named(rs.api.PARAMETERS)
    assert str(err) == "measures: measures is empty" and err.setting == "metrics"


# --------------------------------------------------------------------------- each setting, built directly

NAN, INF = float("nan"), float("inf")

#: (settings class, the field's value, the field) for every range-checked setting: each is refused
REFUSED = [
    (LoadSettings, {"relevant": 0}, "relevant"),
    (LoadSettings, {"relevant": 1.5}, "relevant"),
    (LoadSettings, {"depth": 0}, "depth"),
    (LoadSettings, {"confidence": 0.0}, "confidence"),
    (LoadSettings, {"confidence": 1.0}, "confidence"),
    (LoadSettings, {"confidence": NAN}, "confidence"),
    (LoadSettings, {"resamples": -1}, "resamples"),
    (LoadSettings, {"resamples": MAX_RESAMPLES + 1}, "resamples"),
    (LoadSettings, {"seed": -1}, "seed"),
    (LoadSettings, {"seed": MAX_SEED + 1}, "seed"),
    (LoadSettings, {"window": 0}, "window"),
    (LoadSettings, {"cap": 5}, "cap"),  # without a group separator
    (LoadSettings, {"document_first": True}, "cap"),
    (LoadSettings, {"group_sep": ""}, "group_sep"),
    (LoadSettings, {"group_sep": "#", "cap": 0}, "cap"),
    (LoadSettings, {"rrf_k": 0}, "rrf_k"),
    (LoadSettings, {"rrf_k": MAX_RRF_K + 1}, "rrf_k"),
    (LoadSettings, {"rrf_k": NAN}, "rrf_k"),
    (GateSettings, {"fpir": 0.0}, "fpir"),
    (GateSettings, {"fpir": 1.0}, "fpir"),
    (GateSettings, {"miss_rate": NAN}, "miss_rate"),
    (GateSettings, {"miss_rate": 1.5}, "miss_rate"),
    (GateSettings, {"margin": INF}, "margin"),
    (GateSettings, {"margin": NAN}, "margin"),
    (GateSettings, {"mutual": 0}, "mutual"),
    (CompareSettings, {"min_delta": -1}, "min_delta"),
    (CompareSettings, {"min_delta": NAN}, "min_delta"),
    (CompareSettings, {"min_delta": INF}, "min_delta"),
    (CompareSettings, {"min_delta": "0.1"}, "min_delta"),
    (CompareSettings, {"resamples": 998}, "resamples"),
    (CompareSettings, {"resamples": -1}, "resamples"),
    (CompareSettings, {"seed": -1}, "seed"),
    (CompareSettings, {"confidence": 1.0}, "confidence"),
    (DiffSettings, {"min_delta": -0.01}, "min_delta"),
    (DiffSettings, {"min_delta": NAN}, "min_delta"),
    (DiffSettings, {"resamples": 5}, "resamples"),
    (DiffSettings, {"resamples": MAX_RESAMPLES + 1}, "resamples"),
    (DiffSettings, {"seed": MAX_SEED + 1}, "seed"),
    (DiffSettings, {"confidence": 0.0}, "confidence"),
    (CalibrationSettings, {"step": 0.0}, "step"),
    (CalibrationSettings, {"step": 1.5}, "step"),
    (CalibrationSettings, {"step": 0.3}, "step"),  # 1/0.3 is not a whole number of grid points
    (CalibrationSettings, {"step": NAN}, "step"),
    (CalibrationSettings, {"folds": 1}, "folds"),  # K-fold needs a fold to fit on and one to score on
    (CalibrationSettings, {"folds": 0}, "folds"),
    (CalibrationSettings, {"folds": 2.5}, "folds"),
    (CalibrationSettings, {"folds": True}, "folds"),  # a bool is no count
]


@pytest.mark.parametrize("cls, values, setting", REFUSED, ids=[f"{c.__name__}-{v}" for c, v, _ in REFUSED])
def test_each_setting_out_of_range_is_refused_when_built(cls, values, setting):
    with pytest.raises(SettingError) as e:
        cls(**values)
    assert e.value.setting == setting
    # unnamed, the error names the field itself; named, every mention is the face's
    flag = "--" + setting.replace("_", "-")
    named = str(e.value.named({setting: flag, "document_first": "--document-first", "group_sep": "--group-sep"}))
    assert setting in str(e.value)
    if e.value.prefixed or "{" + setting + "}" in e.value.template:
        assert flag in named and not named.startswith(f"{setting}:"), named
    else:  # the statistics' own words (resamples = 5 is too few ...) name it the same in every face
        assert named == str(e.value)


#: the edges of each range, taken (the refusals above are about the range, not the field)
ACCEPTED = [
    (LoadSettings, {"relevant": 2, "depth": 1, "window": 1, "seed": MAX_SEED, "resamples": MAX_RESAMPLES,
                    "confidence": MAX_CONFIDENCE, "rrf_k": MAX_RRF_K, "group_sep": "#", "cap": 1, "document_first": True}),
    (LoadSettings, {"resamples": 0, "seed": 0, "rrf_k": 1}),
    (GateSettings, {"fpir": 1e-9, "miss_rate": 1 - 1e-9, "margin": -0.5, "mutual": 1}),
    (CompareSettings, {"min_delta": 0, "resamples": 999, "seed": 0, "confidence": 0.5}),
    (CompareSettings, {"resamples": 0}),
    (DiffSettings, {"min_delta": 1e300, "resamples": 0, "confidence": 0.99}),
    (CalibrationSettings, {"step": 1.0}),
    (CalibrationSettings, {"step": 0.05}),
    (CalibrationSettings, {"folds": 2}),
]


@pytest.mark.parametrize("cls, values", ACCEPTED, ids=[c.__name__ for c, _ in ACCEPTED])
def test_the_edges_of_each_range_are_taken(cls, values):
    built = cls(**values)
    for k, v in values.items():
        got = getattr(built, k)
        assert got == v or (isinstance(v, float) and math.isclose(got, v)), (k, got, v)


def test_replace_checks_too():
    from dataclasses import replace

    with pytest.raises(SettingError) as e:
        replace(CompareSettings(), min_delta=-1)
    assert e.value.setting == "min_delta"


def test_the_command_line_words_load_settings_as_before(tmp_path, cli_run):
    """The words each option's refusal had before the checks moved into the settings."""
    lanes, qrels = _write_inputs(tmp_path)
    cases = {
        ("--depth", "0"): "--depth: --depth must be at least 1",
        ("--relevant", "0"): "--relevant: must be at least 1, not 0 (grade 0 is judged non-relevant; a negative grade "
                             "means in the pool but not judged)",
        ("--confidence", "1.5"): "--confidence: must be between 0 and 1 (at most 1 - 1e-12), got 1.5",
        ("--rrf-k", "0"): "--rrf-k: must be an integer from 1 to 1,000,000,000, got 0",
        ("--cap", "3"): "--cap: --cap and --document-first need --group-sep",
        ("--group-sep", ""): "--group-sep: --group-sep must not be empty (a doc id up to the first SEP is its group)",
    }
    for (flag, value), words in cases.items():
        rc, _, err = cli_run("evaluate", *lanes, "--qrels", qrels, flag, value)
        assert (rc, err) == (2, f"rankscope: error: {words}\n"), (flag, err)


def test_importing_the_cli_stays_light():
    code = ("import sys, rankscope_tui.cli\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pyarrow', 'argparse') "
            "or m.startswith('rankscope_tui.commands')))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "[]"
