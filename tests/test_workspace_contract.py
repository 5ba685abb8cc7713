"""The per-query contract (``kernel/workspace/contract.py``): each workspace keeps it, and the
report is the same whichever workspace it was built from.

- every member of ``PerQuery`` (all three workspaces) and of ``RankedPerQuery`` (``Workspace``
  and ``QueryWorkspace``) exists on a real instance, with a signature a caller of the
  protocol can use (``inspect``); a checker that can fail is shown failing;
- mypy checks the same structurally: :func:`_typed_conformance` assigns each class to its
  protocol, and mypy is run on this file;
- on four hand-made queries the report's means are the hand-computed ones, the report of a
  ``QueryWorkspace`` (the same rows in query buckets) is the ``Workspace``'s whole, and the
  report of a ``TableWorkspace`` holding the runs' per-query values has the same interval and
  strata tables.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rankscope_tui.kernel.instruments.evaluate import evaluate_report
from rankscope_tui.kernel.instruments.tables import table_report
from rankscope_tui.kernel.measures import parse_metrics
from rankscope_tui.kernel.scale import bucket as B
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.contract import PerQuery, RankedPerQuery
from rankscope_tui.kernel.workspace.loaded import Sources, Workspace, read_inputs
from rankscope_tui.kernel.workspace.per_query_tables import TableWorkspace, load_tables

REPO = Path(__file__).resolve().parents[1]


def _typed_conformance(ws: Workspace, buckets: B.QueryWorkspace, tables: TableWorkspace) -> None:
    """Never called: mypy reads these assignments and fails when a class stops keeping its protocol."""
    ranked: RankedPerQuery = ws
    ranked = buckets
    plain: PerQuery = tables
    plain = ws
    plain = buckets
    del ranked, plain


# --------------------------------------------------------------------------- the data

# q1..q3 are positives, q4 a negative (its only judgment has grade 0).
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq3 0 d4 1\nq4 0 d5 0\n"
RUNS = {
    # a: q1 relevant at rank 2, q2 at rank 1, q3 at rank 3
    "a": [("q1", "d2", 3.0), ("q1", "d1", 2.0), ("q2", "d3", 1.0), ("q3", "d9", 5.0), ("q3", "d8", 4.0),
          ("q3", "d4", 3.0), ("q4", "d5", 1.0)],
    # b: q1 at rank 1, q2 at rank 2, q3 absent (scores 0)
    "b": [("q1", "d1", 1.0), ("q2", "d7", 2.0), ("q2", "d3", 1.0), ("q4", "d6", 0.5)],
}
STRATA = "q1\tx\nq2\tx\nq3\ty\nq4\ty\n"
#: reciprocal rank and hit@10 per positive, by hand from RUNS and QRELS
HAND: dict[str, dict[str, list[Any]]] = {"a": {"rr": [Fraction(1, 2), Fraction(1), Fraction(1, 3)], "hit@10": [1, 1, 1]},
        "b": {"rr": [Fraction(1), Fraction(1, 2), Fraction(0)], "hit@10": [1, 1, 0]}}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("contract")
    (d / "qrels.txt").write_text(QRELS)
    (d / "strata.tsv").write_text(STRATA)
    lanes = []
    for name, rows in RUNS.items():
        by_q: dict[str, list] = {}
        for q, doc, s in rows:
            by_q.setdefault(q, []).append((doc, s))
        text = "".join(f"{q} Q0 {doc} {r} {s} {name}\n" for q, hits in by_q.items()
                       for r, (doc, s) in enumerate(hits, start=1))
        (d / f"{name}.run").write_text(text)
        lanes.append((name, str(d / f"{name}.run")))
    settings = LoadSettings(metrics=tuple(parse_metrics("rr,hit@10")), resamples=99)
    return {"dir": d, "lanes": lanes, "qrels": str(d / "qrels.txt"), "strata": str(d / "strata.tsv"),
            "settings": settings}


@pytest.fixture(scope="module")
def workspace(files) -> Workspace:
    return Workspace.load(files["lanes"], files["qrels"], files["settings"], strata=[files["strata"]])


@pytest.fixture(scope="module")
def query_workspace(files) -> B.QueryWorkspace:
    """The same rows through two query buckets (``bucket.evaluate_in_process``'s steps)."""
    sources = Sources(tuple(files["lanes"]), files["qrels"], files["settings"], (files["strata"],))
    plan = B.plan(sources)
    raw_lanes, raw_q, _ = read_inputs(list(sources.lanes), sources.qrels, sources.settings)
    facts = {r.path: B.file_facts(r) for r in raw_lanes}
    facts[raw_q.path] = B.file_facts(raw_q)
    results = [B.run_bucket(lanes, q, plan, o) for lanes, q, o in B.partition(raw_lanes, raw_q, 2)]
    return B.QueryWorkspace(B.merge(results), plan, facts)


@pytest.fixture(scope="module")
def table_workspace(files) -> TableWorkspace:
    """A per-query table (ir_measures ``-q`` TSV, one a run) holding the hand values."""
    paths: list[tuple[str | None, str]] = []
    qids = ["q1", "q2", "q3"]
    for lane, values in HAND.items():
        p = files["dir"] / f"{lane}.irm.tsv"
        p.write_text("".join(f"{q}\t{irm}\t{float(values[key][i])!r}\n"
                             for key, irm in (("rr", "RR"), ("hit@10", "Success@10")) for i, q in enumerate(qids)))
        paths.append((lane, str(p)))
    settings = LoadSettings(resamples=99)
    return load_tables(paths, settings, qrels=files["qrels"], strata=[files["strata"]])


# --------------------------------------------------------------------------- members and signatures


def protocol_members(proto: type) -> dict[str, Any]:
    """Name -> the protocol's declaration (a property or a function), over its protocol bases."""
    out: dict[str, Any] = {}
    for klass in reversed(proto.__mro__):
        if klass is object or not getattr(klass, "_is_protocol", False) or klass.__module__ == "typing":
            continue
        for name, value in vars(klass).items():
            if not name.startswith("_") and isinstance(value, (property, type(protocol_members))):
                out[name] = value
    return out


def contract_problems(proto: type, instance: object) -> list[str]:
    """Every way ``instance`` breaks ``proto``: a member missing, an attribute where a method is
    declared, or a method a protocol caller cannot call as declared (a parameter missing or
    renamed, a default the protocol has and the method lacks, an extra required parameter)."""
    problems = []
    for name, decl in protocol_members(proto).items():
        if isinstance(decl, property):
            if not hasattr(instance, name):
                problems.append(f"{name}: missing")
            continue
        impl = getattr(type(instance), name, None)
        if impl is None and not hasattr(instance, name):
            problems.append(f"{name}: missing")
            continue
        if not callable(impl) or isinstance(impl, property):
            problems.append(f"{name}: not a method")
            continue
        want = list(inspect.signature(decl).parameters.values())[1:]
        have = list(inspect.signature(impl).parameters.values())[1:]
        for k, p in enumerate(want):
            if k >= len(have):
                problems.append(f"{name}: no parameter {p.name}")
                continue
            h = have[k]
            if h.name != p.name:
                problems.append(f"{name}: parameter {k + 1} is {h.name}, not {p.name}")
            if p.default is not inspect.Parameter.empty and h.default != p.default:
                problems.append(f"{name}: {p.name} defaults to {h.default!r}, not {p.default!r}")
        for h in have[len(want):]:
            if h.default is inspect.Parameter.empty and h.kind not in (h.VAR_POSITIONAL, h.VAR_KEYWORD):
                problems.append(f"{name}: extra required parameter {h.name}")
    return problems


def test_the_checker_finds_a_broken_workspace(workspace):
    class Broken:
        settings = workspace.settings

        def levels(self, extra):  # an extra required parameter
            return ("doc",)

        def per_query(self, lane, level):  # level lost its default; metrics missing
            return {}

        metric_key = None  # not a method

    found = contract_problems(PerQuery, Broken())
    assert "qids: missing" in found and "settings: missing" not in found
    assert "levels: extra required parameter extra" in found
    assert "per_query: level defaults to <class 'inspect._empty'>, not 'doc'" in found
    assert "per_query: no parameter metrics" in found
    assert "metric_key: not a method" in found
    assert not isinstance(Broken(), PerQuery)


def test_the_protocols_name_what_the_callers_ask():
    plain, ranked = protocol_members(PerQuery), protocol_members(RankedPerQuery)
    assert {"per_query", "means_of", "mean", "positives", "qids", "strata", "levels", "metric_key", "derived",
            "lanes", "input_lanes", "lane_origin", "settings"} <= set(plain)
    assert set(plain) < set(ranked)
    assert {"top_scores", "ceilings", "first_relevant_rank", "present", "top_relevant", "coverage", "mutual",
            "attribution", "ood_negatives", "list_lengths", "relevant_count"} == set(ranked) - set(plain) - {"group_of"}


def test_each_workspace_keeps_its_protocol(workspace, query_workspace, table_workspace):
    for ws in (workspace, query_workspace):
        assert contract_problems(RankedPerQuery, ws) == [], type(ws).__name__
        assert isinstance(ws, RankedPerQuery)
    assert contract_problems(PerQuery, table_workspace) == []
    assert isinstance(table_workspace, PerQuery)
    # a per-query table holds no ranking: it does not pass for one
    assert "top_scores: missing" in contract_problems(RankedPerQuery, table_workspace)
    assert not isinstance(table_workspace, RankedPerQuery)


def test_the_shared_behaviour_lives_in_one_place():
    """``means_of``, ``derived`` and ``qid_index`` are written once: no workspace defines its own."""
    from rankscope_tui.kernel.workspace.base import WorkspaceBase

    for cls in (Workspace, TableWorkspace, B.QueryWorkspace):
        assert issubclass(cls, WorkspaceBase)
        for name in ("means_of", "derived", "qid_index", "positives", "negatives", "n_queries", "in_display_order"):
            assert name not in vars(cls), f"{cls.__name__} redefines {name}"


def test_mypy_checks_the_classes_against_the_protocols():
    import mypy  # noqa: F401  (a declared test dependency: missing, the test fails)
    res = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental",
                          "--config-file", str(REPO / "pyproject.toml"), str(Path(__file__).relative_to(REPO))],
                         capture_output=True, text=True, cwd=REPO, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]


# --------------------------------------------------------------------------- the report from each workspace


def test_the_workspace_report_is_the_hand_computed_means(workspace):
    rep = evaluate_report(workspace)
    for lane, values in HAND.items():
        for m, per in values.items():
            assert rep["lanes"][lane]["doc"][m]["value"] == pytest.approx(float(sum(per) / 3), abs=1e-15)
            for i, q in enumerate(["q1", "q2", "q3"]):
                assert rep["per_query"][lane]["doc"][q][m] == float(per[i])
    assert rep["summary"]["positives"] == 3 and rep["summary"]["negatives"] == 1


def test_the_query_workspace_report_is_the_workspace_report(workspace, query_workspace):
    from rankscope_tui.kernel.instruments.evaluate import report_of

    assert report_of(query_workspace) == evaluate_report(workspace)


def test_the_table_workspace_report_has_the_workspace_tables(workspace, table_workspace):
    runs, tables = evaluate_report(workspace), table_report(table_workspace)
    assert set(tables["lanes"]) == set(HAND)
    for lane in HAND:
        assert tables["lanes"][lane] == runs["lanes"][lane]
        for name, labels in runs["strata"].items():
            for label, block in labels.items():
                assert tables["strata"][name][label][lane] == block[lane]
        for q in ("q1", "q2", "q3"):
            row = runs["per_query"][lane]["doc"][q]
            assert tables["per_query"][lane]["doc"][q] == {"rr": row["rr"], "hit@10": row["hit@10"]}
