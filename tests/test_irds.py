"""Qrels and texts by ir_datasets id (``irds:DATASET``, kernel/inputs/irds.py).

Every dataset here is registered by the test itself from local files (ir_datasets'
``TrecQrels`` / ``TsvQueries`` over ``LocalDownload`` paths): nothing is downloaded.
The oracle of the numbers is the same qrels given as a file; the refusals are one line,
exit 2, and no network call and no file in the cache is made on the way.
"""

from __future__ import annotations

import json
import socket
import sys
import uuid

import ir_datasets
import pytest
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrels, TsvQueries
from ir_datasets.util import Download, LocalDownload, RequestsDownload
from support import shared_path

import rankscope_tui
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.inputs.readers import read_qrels

CRAN = shared_path("cranfield")
LANE = CRAN / "lanes" / "bm25.run"


@pytest.fixture
def register():
    """``register(*components)``: a dataset id under ``rankscope-test/``, registered for
    this test only (removed from ir_datasets' registry afterwards)."""
    names = []

    def add(*components) -> str:
        name = f"rankscope-test/{uuid.uuid4().hex[:8]}"
        ir_datasets.registry.register(name, Dataset(*components))
        names.append(name)
        return name

    yield add
    for n in names:
        ir_datasets.registry._registered.pop(n, None)


@pytest.fixture
def cranfield(register):
    return register(TrecQrels(LocalDownload(CRAN / "qrels-test.txt"), {}),
                    TsvQueries(LocalDownload(CRAN / "queries.tsv")))


@pytest.fixture
def no_network(monkeypatch):
    """Every socket connection attempt recorded and refused."""
    tried = []

    def refuse(self, address, *a, **k):
        tried.append(address)
        raise OSError("network disabled by the test")

    def resolve(host, *a, **k):
        tried.append(host)
        raise socket.gaierror("name resolution disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return tried


def _without(report: dict, *roles: str) -> dict:
    out = json.loads(json.dumps(report))
    for r in roles:
        out["inputs"].pop(r, None)
    return out


def test_dataset_qrels_evaluate_to_the_numbers_of_the_same_qrels_as_a_file(cranfield, cli_run, tmp_path):
    by_id, by_file = tmp_path / "id.json", tmp_path / "file.json"
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{cranfield}", "--queries", f"irds:{cranfield}",
                         "--out", by_id)
    assert rc == 0, err
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", CRAN / "qrels-test.txt", "--out", by_file)
    assert rc == 0, err
    a, b = json.loads(by_id.read_text()), json.loads(by_file.read_text())
    # every number, interval, per-query value and warning the same; only the qrels' record differs
    assert _without(a, "qrels", "queries") == _without(b, "qrels")
    assert a["inputs"]["qrels"]["rows"] == b["inputs"]["qrels"]["rows"] == 1475  # lines of qrels-test.txt
    assert a["lanes"]["bm25"]["doc"]["ndcg@10"]["value"] == b["lanes"]["bm25"]["doc"]["ndcg@10"]["value"]


def test_the_report_records_the_dataset_id_and_ir_datasets_version(cranfield, cli_run, tmp_path):
    out = tmp_path / "r.json"
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{cranfield}", "--queries", f"irds:{cranfield}",
                         "--out", out)
    assert rc == 0, err
    inputs = json.loads(out.read_text())["inputs"]
    q = inputs["qrels"]
    assert q["path"] == f"irds:{cranfield}" and q["format"] == "irds"
    assert q["dataset"] == {"id": cranfield, "ir_datasets": ir_datasets.__version__}
    assert len(q["sha256"]) == 64
    [texts] = inputs["queries"]
    assert texts["dataset"] == q["dataset"] and texts["rows"] == 255  # lines of queries.tsv


def test_a_report_from_files_gains_no_texts_record(cli_run, tmp_path):
    out = tmp_path / "r.json"
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", CRAN / "qrels-test.txt", "--queries",
                         CRAN / "queries.tsv", "--out", out)
    assert rc == 0, err
    inputs = json.loads(out.read_text())["inputs"]
    assert "queries" not in inputs and "dataset" not in inputs["qrels"]


def test_dataset_query_texts_are_the_file_texts(cranfield):
    from rankscope_tui.kernel.inputs.tables import read_text_files

    assert read_text_files([f"irds:{cranfield}"]) == read_text_files([str(CRAN / "queries.tsv")])


def test_the_api_reads_qrels_by_dataset_id(register, tmp_path):
    # hand-worked: q1's relevant doc d2 at rank 2 (rr 1/2), q2's d9 at rank 1 (rr 1); mean 0.75
    (tmp_path / "q.txt").write_text("q1 0 d2 1\nq1 0 d3 0\nq2 0 d9 2\n")
    name = register(TrecQrels(LocalDownload(tmp_path / "q.txt"), {}))
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d9": 5.0, "d1": 4.0}}
    ev = rankscope_tui.evaluate(f"irds:{name}", run, measures="rr,hit@1")
    lane = ev.report()["lanes"]["run"]["doc"]
    assert lane["rr"]["value"] == pytest.approx(0.75, abs=1e-15)
    assert lane["hit@1"]["value"] == pytest.approx(0.5, abs=1e-15)
    assert ev.report()["inputs"]["qrels"]["dataset"]["id"] == name


def _one_line_exit_2(rc: int, err: str) -> str:
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_an_unknown_dataset_id_is_one_line_exit_2(cli_run, no_network):
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", "irds:rankscope-test/no-such-dataset")
    line = _one_line_exit_2(rc, err)
    assert "irds:rankscope-test/no-such-dataset" in line and "no dataset" in line
    assert not no_network


def test_a_dataset_without_qrels_is_one_line_exit_2(register, cli_run):
    name = register(TsvQueries(LocalDownload(CRAN / "queries.tsv")))
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{name}")
    line = _one_line_exit_2(rc, err)
    assert f"irds:{name}" in line and "has no qrels" in line and "provides queries" in line


def test_qrels_not_in_the_cache_are_refused_before_any_download(register, cli_run, no_network, tmp_path):
    """A dataset whose qrels ir_datasets would fetch over HTTP (its cached file absent):
    refused with the command that fetches it; no connection tried, nothing written."""
    cache = tmp_path / "cache" / "qrels"
    name = register(TrecQrels(Download([RequestsDownload("https://example.invalid/qrels.txt")], cache_path=str(cache)),
                              {}))
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{name}")
    line = _one_line_exit_2(rc, err)
    assert "not in the local ir_datasets cache" in line
    assert f"python -m ir_datasets export {name} qrels" in line
    assert no_network == []
    assert not cache.parent.exists()
    # the refusal is undone afterwards: ir_datasets' own classes are as they were
    assert "rankscope" not in Download.path.__qualname__ and Download.path.__module__ == "ir_datasets.util.download"


def test_qrels_in_the_cache_are_read_without_the_network(register, no_network, tmp_path):
    cache = tmp_path / "qrels"
    cache.write_text("1 0 d1 1\n2 0 d2 0\n")
    name = register(TrecQrels(Download([RequestsDownload("https://example.invalid/qrels.txt")], cache_path=str(cache)),
                              {}))
    raw = read_qrels(f"irds:{name}")
    assert raw.qid.to_pylist() == ["1", "2"] and raw.doc.to_pylist() == ["d1", "d2"] and raw.grade.tolist() == [1, 0]
    assert no_network == []


def test_without_ir_datasets_the_error_says_to_install_the_extra(cli_run, monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import ir_datasets now raises ImportError
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", "irds:cranfield")
    line = _one_line_exit_2(rc, err)
    assert "irds:cranfield" in line and "rankscope[irds]" in line
    with pytest.raises(InputError, match=r"rankscope\[irds\]"):
        read_qrels("irds:cranfield")


def test_an_empty_dataset_id_is_refused(cli_run):
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", "irds:")
    assert "no dataset id" in _one_line_exit_2(rc, err)


def test_bad_grades_in_a_dataset_name_the_dataset_and_record(register, cli_run, tmp_path):
    # the same checks as a file: a grade that is not an integer is refused, naming where
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2 x\n")
    name = register(TrecQrels(LocalDownload(tmp_path / "q.txt"), {}))
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{name}")
    assert f"irds:{name}" in _one_line_exit_2(rc, err)


def test_query_buckets_read_the_dataset_and_record_it(cranfield, cli_run, tmp_path):
    whole, buckets = tmp_path / "whole.json", tmp_path / "buckets.json"
    assert cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{cranfield}", "--out", whole)[0] == 0
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{cranfield}", "--buckets", "2", "--out", buckets)
    assert rc == 0, err
    a, b = json.loads(whole.read_text()), json.loads(buckets.read_text())
    assert b["inputs"]["qrels"] == a["inputs"]["qrels"]
    assert b["lanes"] == a["lanes"]


def test_a_qrels_format_with_a_dataset_id_is_refused_not_ignored(cranfield, cli_run):
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{cranfield}", "--qrels-format", "trec")
    assert "--qrels-format" in _one_line_exit_2(rc, err)
    rc, _, err = cli_run("evaluate", "--lane", LANE, "--qrels", f"irds:{cranfield}", "--qrels-columns",
                         "query=a,doc=b,relevance=c")
    assert "--qrels-columns" in _one_line_exit_2(rc, err)


async def test_the_dashboard_opens_qrels_and_query_texts_by_dataset_id(cranfield):
    from support import settle
    from textual.widgets import Input, Select

    from rankscope_tui.app import RankscopeApp
    from rankscope_tui.commands.tui import parse_args, state_from_args
    from rankscope_tui.widgets.dialogs import OpenDialog

    app = RankscopeApp(state_from_args(parse_args(["--lane", str(LANE), "--qrels", str(CRAN / "qrels-test.txt"),
                                                   "--resamples", "999"])))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        for kind in ("qrels", "queries"):
            await pilot.press("o")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, OpenDialog)
            dialog.query_one("#open-kind", Select).value = kind
            path = dialog.query_one("#open-path", Input)
            path.value = f"irds:{cranfield}"
            path.focus()
            await pilot.press("enter")
            await settle(app, pilot)
            assert not isinstance(app.screen, OpenDialog), kind
            assert app.state.load_error is None, app.state.load_error
        ws = app.state.base_workspace
        assert app.state.options.qrels == f"irds:{cranfield}"
        assert ws.query_text["1"].startswith("what similarity laws")
        assert app.state.report["inputs"]["qrels"]["dataset"]["id"] == cranfield
