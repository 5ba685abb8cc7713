"""Reliability (SPEC §2, §8, §9): hostile inputs through the CLI, determinism, atomic writes, exit codes.

tests/test_inputs.py already checks the malformed lanes and qrels (columns, scores,
grades, duplicates, empty files, truncated gzip, non-UTF-8, JSON shapes), the
whitespace/BOM/CRLF/comment variants of lanes and qrels, '#' inside doc ids,
missing and directory paths for --lane/--qrels/--strata, an output directory that
does not exist and an output equal to an input for ``evaluate``. This file covers
what is left:

- accepted variants of every *other* input (strata, corpus, JSON lanes, out-of-domain
  negatives) through the CLI, with the same numbers as the clean files;
- very long ids and lines; huge JSON numbers; a TREC file that starts with '{';
- non-UTF-8, truncated gzip, missing and directory paths for the other inputs
  (corpus, ood negatives, thresholds, texts, gates, reports, goldens);
- output paths (missing directory, equal to an input, unwritable) for compare,
  calibrate, verdict, diff and goldens;
- malformed gates files for ``verdict``, malformed thresholds files for
  ``evaluate --thresholds`` and malformed reports for ``diff`` and ``verdict``;
- determinism across processes with PYTHONHASHSEED varied;
- atomic writes under an exception and under SIGINT;
- the exit codes of ``verdict`` and ``diff``.

Every error must be exactly one stderr line ``rankscope: error: ...``, exit status 2,
no traceback, nothing written. Each CLI call is its own process: a fork server imports
numpy, pyarrow and rankscope once and forks one child per call, which runs
``python -m rankscope_tui.cli ARGS`` as the interpreter would (``support.cli_many``);
calls that need their own interpreter (PYTHONHASHSEED, signals) start a fresh one.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from support import cli_env, cli_many

# ============================================================================ running the CLI


def test_the_fork_server_runs_the_cli_as_python_dash_m_does(tmp_path):
    """Control for cli_many: a forked call and a cold ``python -m rankscope_tui.cli`` give the
    same exit status, stdout and stderr (a success, an input error, a usage error)."""
    f = clean_set(tmp_path / "in")
    calls = {
        "ok": ["evaluate", "--lane", f"a={f['a']}", "--qrels", f["qrels"], "--metrics", METRICS, "--resamples", "50"],
        "input_error": ["evaluate", "--lane", str(tmp_path / "nope.run"), "--qrels", f["qrels"]],
        "usage_error": ["evaluate", "--no-such-option"],
        "no_command": [],
    }
    warm = cli_many({k: (a, tmp_path, None) for k, a in calls.items()})
    cold = cli_many({k: (a, tmp_path, {"RS_COLD": "1"}) for k, a in calls.items()})
    for k in calls:
        assert (warm[k].returncode, warm[k].stdout, warm[k].stderr) == (cold[k].returncode, cold[k].stdout, cold[k].stderr), k
    assert warm["ok"].returncode == 0 and warm["input_error"].returncode == 2 and warm["usage_error"].returncode == 2


def test_run_cli_forked_equals_a_cold_interpreter(tmp_path, monkeypatch):
    """Control for run_cli: a call forked from the warm interpreter and the same call in a
    cold one (``fresh=True``) give the same exit status, stdout and stderr, with the call's
    own environment (a variable read per call, set in this process or given) reaching the
    fork; a start-up variable of its own sends the call to a cold interpreter."""
    from support import WarmCli, run_cli

    f = clean_set(tmp_path / "in")
    ok = ["evaluate", "--lane", f"a={f['a']}", "--qrels", f["qrels"], "--metrics", METRICS, "--resamples", "50"]
    calls = [ok, ["evaluate", "--lane", str(tmp_path / "nope.run"), "--qrels", f["qrels"]], ["evaluate", "--bad"], []]
    for argv in calls:
        warm, cold = run_cli(*argv, cwd=tmp_path), run_cli(*argv, cwd=tmp_path, fresh=True)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), argv
    small = {"RANKSCOPE_MAX_INPUT_BYTES": "10"}  # read per call: the fork must see it
    assert WarmCli.get().serves(support_env(small))
    given, cold = run_cli(*ok, cwd=tmp_path, env=small), run_cli(*ok, cwd=tmp_path, env=small, fresh=True)
    monkeypatch.setenv("RANKSCOPE_MAX_INPUT_BYTES", "10")
    patched = run_cli(*ok, cwd=tmp_path)
    assert given.returncode == cold.returncode == patched.returncode == 2, (given.stderr, cold.stderr, patched.stderr)
    assert given.stderr == cold.stderr == patched.stderr
    assert not WarmCli.get().serves(support_env({"PYTHONHASHSEED": "3"}))  # read at start-up: cold


def support_env(extra: dict) -> dict:
    from support import cli_env

    return cli_env(extra)


def assert_one_line_error(res: subprocess.CompletedProcess, prefix: str | None = None, contains: tuple[str, ...] = ()) -> str:
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, res.stderr[-2000:]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr[-2000:]
    msg = lines[0]
    assert msg.startswith("rankscope: error: "), msg
    if prefix is not None:
        assert msg.startswith(f"rankscope: error: {prefix}"), f"expected prefix {prefix!r}: {msg!r}"
    assert len(msg) > len("rankscope: error: ") + 10, msg
    for c in contains:
        assert c in msg, (c, msg)
    return msg


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


# ============================================================================ small, clean inputs

RUN_A = (
    "q1 Q0 D1#p1 1 3.5 a\n"
    "q1 Q0 D1#p2 2 3.0 a\n"
    "q1 Q0 d9 3 2.0 a\n"
    "q1 Q0 d10 4 2.0 a\n"
    "q2 Q0 d10 1 0.5 a\n"
    "q2 Q0 d2 2 0.4 a\n"
    "q2 Q0 d3 3 -1 a\n"
    "q3 Q0 d1 1 1 a\n"
    "q5 Q0 d7 1 0.9 a\n"
    "q5 Q0 d2 2 0.8 a\n"
    "q6 Q0 d4 1 0.3 a\n"
    "o1 Q0 d5 1 0.7 a\n"
)
RUN_B = {"q1": {"d9": 1.0, "D1#p2": 0.5, "x": 0.25}, "q2": {"d3": 2.0, "d2": 1.0}, "q4": {"d1": 0.1},
         "q5": {"d2": 0.3}, "q6": {"d6": 0.2}, "o1": {"d1": 0.1}}
QRELS = ("q1 0 D1#p2 2\nq1 0 D1#p1 0\nq1 0 d10 1\nq2 0 d2 1\nq2 0 d3 3\nq3 0 d1 0\nq4 0 d1 1\n"
         "q5 0 d2 1\nq6 0 d4 0\nq6 0 d6 0\n")
OOD = "o1 0 d5 0\no1 0 d1 0\n"
STRATA = "q1\tlexical\nq2\tsemantic\nq4\tsemantic\nq5\tlexical\n"
CORPUS = "D1#p1\tone\nD1#p2\ttwo\nd9\tnine\nd10\tten\nd2\ttwo\nd3\tthree\nd1\tone\n"
METRICS = "hit@1,recall@2,p@2,rr,ndcg@3"


def write(d: Path, name: str, data: str | bytes) -> str:
    p = d / name
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return str(p)


def clean_set(d: Path) -> dict[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    return {
        "a": write(d, "a.run", RUN_A),
        "b": write(d, "b.json", json.dumps(RUN_B, indent=1)),
        "qrels": write(d, "qrels.txt", QRELS),
        "ood": write(d, "ood.txt", OOD),
        "strata": write(d, "kind.tsv", STRATA),
        "corpus": write(d, "corpus.tsv", CORPUS),
    }


def evaluate_args(f: dict, out: Path, extra: tuple[str, ...] = ()) -> list[str]:
    resamples = () if "--resamples" in extra else ("--resamples", "200")  # an option is given once
    return ["evaluate", "--lane", f"a={f['a']}", "--lane", f"b={f['b']}", "--qrels", f["qrels"],
            "--ood-negatives", f["ood"], "--strata", f["strata"], "--corpus", f["corpus"], "--gate-on", "a",
            "--metrics", METRICS, *resamples, "--out", str(out), *extra]


def comparable_report(path: Path) -> dict:
    """report.json without what names or fingerprints the input files."""
    rep = json.loads(path.read_text(encoding="utf-8"))
    rep.pop("inputs")
    for w in rep["summary"]["warnings"]:
        w.pop("where", None)
        w.pop("message", None)
    return rep


# ============================================================================ 1. accepted variants of every input


def _crlf(t: str) -> str:
    return t.replace("\n", "\r\n")


def _bom(t: str) -> str:
    return "\ufeff" + t


def _trailing_and_blank(t: str) -> str:
    return "\n  \n" + "".join(line + " \t \n\n" for line in t.splitlines()) + "\n\t\n"


def _trailing_and_blank_tsv(t: str) -> str:
    # a trailing tab would be an empty third column: spaces only after the label
    return "\n  \n" + "".join(line + "  \n\n" for line in t.splitlines()) + "\n \n"


def _comments(t: str) -> str:
    return "# written by a tool\n" + "".join(line + "\n   # q1 Q0 d1 1 99 x\n" for line in t.splitlines())


VARIANTS: dict[str, dict[str, Callable[[str], str]]] = {
    # which inputs each variant rewrites
    "crlf": {"a": _crlf, "b": _crlf, "qrels": _crlf, "ood": _crlf, "strata": _crlf, "corpus": _crlf},
    "bom": {"a": _bom, "b": _bom, "qrels": _bom, "ood": _bom, "strata": _bom, "corpus": _bom},
    "bom_crlf": {k: (lambda t: _bom(_crlf(t))) for k in ("a", "b", "qrels", "ood", "strata", "corpus")},
    "trailing_whitespace_and_blank_lines": {"a": _trailing_and_blank, "qrels": _trailing_and_blank,
                                            "ood": _trailing_and_blank, "strata": _trailing_and_blank_tsv,
                                            "corpus": _trailing_and_blank_tsv},
    "comment_lines": {"a": _comments, "qrels": _comments, "ood": _comments},
    "gzip": {k: (lambda t: t) for k in ("a", "b", "qrels", "ood")},  # compressed below
    "json_lane_reindented_crlf": {"b": lambda t: _crlf(json.dumps(json.loads(t), indent=4))},
}


@pytest.fixture(scope="module")
def variant_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("variants")
    jobs = {}
    for name in ["clean", *VARIANTS]:
        d = root / name
        f = clean_set(d)
        for role, fn in VARIANTS.get(name, {}).items():
            text = Path(f[role]).read_text(encoding="utf-8")
            data = fn(text).encode("utf-8")
            if name == "gzip":
                os.unlink(f[role])
                f[role] = f[role] + ".gz"
                data = gzip.compress(data)
            Path(f[role]).write_bytes(data)
        (d / "out").mkdir()
        jobs[name] = (evaluate_args(f, d / "out" / "report.json", ("--per-query", str(d / "out" / "pq.csv"))), d, None)
    return root, cli_many(jobs)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_hostile_but_valid_files_give_the_numbers_of_the_clean_files(variant_runs, variant):
    root, res = variant_runs
    assert res["clean"].returncode == 0, res["clean"].stderr
    r = res[variant]
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    want = comparable_report(root / "clean" / "out" / "report.json")
    got = comparable_report(root / variant / "out" / "report.json")
    for block in want:
        assert got[block] == want[block], f"{variant}: block {block!r} differs from the clean files'"
    assert (root / variant / "out" / "pq.csv").read_bytes() == (root / "clean" / "out" / "pq.csv").read_bytes()
    # the input fingerprint is of the bytes as stored, so it does change
    rep = json.loads((root / variant / "out" / "report.json").read_text())
    assert rep["inputs"]["lanes"]["a"]["rows"] == 12


def test_the_clean_run_reads_hash_ids_whole_and_scores_by_hand(variant_runs):
    """Control for the variants: '#' inside doc ids is data without --group-sep, and
    the numbers are the hand-worked ones."""
    root, _ = variant_runs
    rep = json.loads((root / "clean" / "out" / "report.json").read_text())
    pq = rep["per_query"]["a"]["doc"]
    # q1 in lane a: D1#p1 (grade 0), D1#p2 (grade 2), then d9 and d10 tied at 2.0 -> d9 first
    assert pq["q1"]["rank"] == 2 and pq["q1"]["rr"] == 0.5
    assert pq["q1"]["recall@2"] == 0.5  # D1#p2 of {D1#p2, d10}
    assert sorted(pq) == ["q1", "q2", "q4", "q5"]  # the positives
    assert rep["summary"]["ood_negatives"] == 1 and rep["summary"]["negatives"] == 2
    assert "group" not in rep["lanes"]["a"]  # no --group-sep: D1#p1 and D1#p2 are two docs


def test_a_comment_line_in_a_strata_file_is_skipped(misc_runs):
    res = misc_runs["strata_comment"]
    assert res.returncode == 0, res.stderr


# ============================================================================ 2. hostile single files


@dataclass
class Case:
    """One CLI call that must fail with the one-line error contract."""

    build: Callable[[Path], tuple[list[str], str | None]]  # dir -> (argv, expected prefix after 'error: ')
    contains: tuple[str, ...] = ()
    must_keep: tuple[str, ...] = ()  # files (relative) whose bytes must not change
    marks: list = field(default_factory=list)


def _report(d: Path) -> str:
    """A real report.json (built in-process, resamples off) in d."""
    from rankscope_tui.kernel.instruments.evaluate import evaluate_report
    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.report.output import dumps_strict
    from rankscope_tui.kernel.settings import GateSettings, LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    f = clean_set(d / "in")
    ws = Workspace.load([("a", f["a"]), ("b", f["b"])], f["qrels"], LoadSettings(metrics=tuple(parse_metrics(METRICS)), resamples=200))
    return write(d, "report.json", dumps_strict(evaluate_report(ws, GateSettings(gate_on="a"))))


def _mutated_report(d: Path, fn: Callable[[dict], object], name: str = "bad.json") -> str:
    rep = json.loads(Path(_report(d)).read_text())
    fn(rep)
    return write(d, name, json.dumps(rep))


GOOD_GATES = '[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.0}\n]\n'


def _verdict(d: Path, gates: str | bytes, name: str = "gates.json") -> tuple[list[str], str | None]:
    rp = _report(d)
    gp = write(d, name, gates)
    (d / "out").mkdir(exist_ok=True)
    return ["verdict", "--report", rp, "--gates", gp, "--out", str(d / "out" / "v.json")], gp


def _verdict_line(gates: str, line: int | None = 1, prefix: bool = True):
    """verdict with this gates file; the error names the file (and the line, if given)."""
    def build(d: Path):
        argv, gp = _verdict(d, gates)
        if not prefix:
            return argv, None
        return argv, (f"{gp}:{line}: " if line else gp)
    return build


def _verdict_report(mutate: Callable[[dict], object] | None = None, raw: str | bytes | None = None, gates: str = GOOD_GATES,
                    line: bool = False):
    def build(d: Path):
        rp = write(d, "bad.json", raw) if raw is not None else _mutated_report(d, mutate)
        gp = write(d, "gates.json", gates)
        (d / "out").mkdir(exist_ok=True)
        return ["verdict", "--report", rp, "--gates", gp, "--out", str(d / "out" / "v.json")], rp if line else None
    return build


def _diff(mutate: Callable[[dict], object] | None = None, raw: str | bytes | None = None, which: str = "after",
          prefix: bool = True):
    def build(d: Path):
        good = _report(d)
        bad = write(d, "bad.json", raw) if raw is not None else _mutated_report(d, mutate)
        before, after = (good, bad) if which == "after" else (bad, good)
        (d / "out").mkdir(exist_ok=True)
        return ["diff", "--before", before, "--after", after, "--resamples", "999", "--out", str(d / "out" / "d.json")], \
            (bad if prefix else None)
    return build


TH = "rankscope.thresholds/1"


def _thresholds(data, raw: str | bytes | None = None, name: str = "th.json", prefix: bool = True):
    def build(d: Path):
        f = clean_set(d / "in")
        tp = write(d, name, raw if raw is not None else json.dumps(data))
        (d / "out").mkdir(exist_ok=True)
        argv = evaluate_args(f, d / "out" / "r.json", ("--thresholds", tp, "--resamples", "0"))
        return argv, (tp if prefix else None)
    return build


def _evaluate_with(role: str, data: str | bytes | None, name: str, line: int | None = None, make_dir: bool = False):
    """evaluate with one input replaced by `data` (None: the path does not exist)."""
    def build(d: Path):
        f = clean_set(d / "in")
        p = d / name
        if make_dir:
            p.mkdir()
        elif data is not None:
            p.write_bytes(data.encode() if isinstance(data, str) else data)
        extra: tuple[str, ...] = ()
        if role in ("queries", "docs", "thresholds"):
            extra = (f"--{role}", str(p))
        else:
            f[role] = str(p)
        (d / "out").mkdir(exist_ok=True)
        argv = evaluate_args(f, d / "out" / "r.json", ("--per-query", str(d / "out" / "pq.csv"), "--resamples", "0", *extra))
        return argv, (f"{p}:{line}: " if line else str(p))
    return build


def _gz_truncated(text: str) -> bytes:
    blob = gzip.compress(text.encode() * 30)
    return blob[: len(blob) // 2]


DEEP = "[" * 50_000 + "]" * 50_000


def P(name: str, case: Case):
    return pytest.param(name, case, id=name, marks=list(case.marks))


CASES = [
    # ---- non-UTF-8 bytes in the inputs test_inputs.py does not cover: the error names the line
    P("non_utf8_strata", Case(_evaluate_with("strata", b"q1\tlexical\nq2\tsem\xe9antic\n", "kind.tsv", line=2))),
    P("non_utf8_corpus", Case(_evaluate_with("corpus", b"d1\tx\nd2\tx\nd\xff3\tx\n", "corpus.tsv", line=3))),
    P("non_utf8_ood", Case(_evaluate_with("ood", b"o1 0 d5 0\no1 0 d\xc3\x28 0\n", "ood.txt", line=2))),
    P("non_utf8_json_lane", Case(_evaluate_with("b", b'{"q1": {\n"d\xe9": 1.0}}\n', "b.json", line=2))),
    P("non_utf8_queries", Case(_evaluate_with("queries", b"q1\tfine\nq2\tcaf\xe9\n", "queries.tsv", line=2))),
    P("non_utf8_thresholds", Case(_evaluate_with("thresholds", b'{"schema": "x",\n "\xe9": 1}', "th.json", line=2))),
    P("non_utf8_gates", Case(lambda d: (lambda a: (a[0], f"{a[1]}:2: "))(_verdict(d, b'[\n{"path": "\xe9", "op": ">=", "threshold": 1}]')))),
    P("non_utf8_report", Case(_verdict_report(raw=b'{"schema": "rankscope.report/1",\n"x": "\xff"}', line=True))),
    # ---- truncated gzip in other inputs
    P("truncated_gzip_json_lane", Case(_evaluate_with("b", _gz_truncated(json.dumps(RUN_B)), "b.json.gz"))),
    P("truncated_gzip_strata", Case(_evaluate_with("strata", _gz_truncated(STRATA), "kind.tsv.gz"))),
    P("truncated_gzip_ood", Case(_evaluate_with("ood", _gz_truncated(OOD), "ood.txt.gz"))),
    P("truncated_gzip_gates", Case(lambda d: (lambda a: (a[0], a[1]))(_verdict(d, _gz_truncated(GOOD_GATES), "gates.json.gz")))),
    # ---- JSON numbers out of every range
    P("json_lane_score_integer_beyond_float", Case(_evaluate_with("b", '{"q1": {"d1": 1' + "0" * 400 + "}}", "b.json"))),
    P("json_lane_score_5000_digits", Case(_evaluate_with("b", '{"q1": {"d1": 1' + "0" * 5000 + "}}", "b.json"))),
    P("json_lane_score_float_overflow", Case(_evaluate_with("b", '{"q1": {"d1": 1e400}}', "b.json"))),
    P("json_qrels_grade_5000_digits", Case(_evaluate_with("qrels", '{"q1": {"d1": 1' + "0" * 5000 + "}}", "qrels.json"))),
    P("json_qrels_grade_float_overflow", Case(_evaluate_with("qrels", '{"q1": {"d1": 1e400}}', "qrels.json"))),
    P("json_qrels_grade_huge_negative", Case(_evaluate_with("qrels", '{"q1": {"d1": -1e12}}', "qrels.json"))),
    # ---- numbers pyarrow and Python read differently: the error names the line and the value
    P("score_with_an_underscore_names_its_line", Case(_evaluate_with("a", RUN_A + "q9 Q0 d1 1 1_000 a\n", "a.run", line=13),
                                                      contains=("1_000",))),
    P("score_in_arabic_indic_digits_names_its_line", Case(_evaluate_with("a", RUN_A + "q9 Q0 d1 1 \u0661 a\n", "a.run", line=13))),
    P("grade_with_an_underscore_names_its_line", Case(_evaluate_with("qrels", QRELS + "q9 0 d1 1_0\n", "qrels.txt", line=11),
                                                      contains=("1_0",))),
    P("grade_followed_by_a_no_break_space_names_its_line", Case(_evaluate_with("qrels", QRELS + "q9 0 d1 -4\u00a0\n", "qrels.txt",
                                                                               line=11))),
    P("grade_in_hexadecimal_is_refused", Case(_evaluate_with("qrels", QRELS + "q9 0 d1 0x1\n", "qrels.txt", line=11))),
    P("score_in_hexadecimal_is_refused", Case(_evaluate_with("a", RUN_A + "q9 Q0 d1 1 0x10 a\n", "a.run", line=13))),
    # ---- a lone surrogate escape in a JSON id (a surrogate pair is a fine character)
    P("json_lane_lone_surrogate_in_a_doc_id", Case(_evaluate_with("b", '{"q1": {"d\\ud800": 1.0}}', "b.json"))),
    P("json_qrels_lone_surrogate_in_a_qid", Case(_evaluate_with("qrels", '{"q\\udfff": {"d1": 1}}', "qrels.json"))),
    # ---- JSON nested 50 000 deep, in every JSON reader
    P("deep_json_lane", Case(_evaluate_with("b", '{"q1": ' + DEEP + "}", "b.json"))),
    P("deep_json_qrels", Case(_evaluate_with("qrels", '{"q1": ' + DEEP + "}", "qrels.json"))),
    P("deep_json_thresholds", Case(_evaluate_with("thresholds", DEEP, "th.json"))),
    P("deep_json_gates", Case(_verdict_line(DEEP, None))),
    P("deep_json_report", Case(_diff(raw=DEEP))),
    # ---- paths that are missing or directories, for the inputs test_inputs.py leaves out
    P("missing_corpus", Case(_evaluate_with("corpus", None, "nope.tsv"))),
    P("missing_ood", Case(_evaluate_with("ood", None, "nope.txt"))),
    P("missing_thresholds", Case(_evaluate_with("thresholds", None, "nope.json"))),
    P("missing_docs", Case(_evaluate_with("docs", None, "nope.tsv"))),
    P("dir_corpus", Case(_evaluate_with("corpus", None, "adir", make_dir=True))),
    P("dir_ood", Case(_evaluate_with("ood", None, "adir", make_dir=True))),
    P("dir_thresholds", Case(_evaluate_with("thresholds", None, "adir", make_dir=True))),
    P("dir_queries", Case(_evaluate_with("queries", None, "adir", make_dir=True))),
    P("missing_gates", Case(lambda d: (["verdict", "--report", _report(d), "--gates", str(d / "nope.json")], str(d / "nope.json")))),
    P("dir_gates", Case(lambda d: ((d / "g").mkdir() or ["verdict", "--report", _report(d), "--gates", str(d / "g")], str(d / "g")))),
    P("missing_report_verdict", Case(lambda d: (["verdict", "--report", str(d / "nope.json"), "--gates", write(d, "g.json", GOOD_GATES)],
                                                str(d / "nope.json")))),
    P("dir_report_diff", Case(lambda d: ((d / "r").mkdir() or ["diff", "--before", _report(d), "--after", str(d / "r")], str(d / "r")))),
    P("missing_report_diff", Case(lambda d: (["diff", "--before", str(d / "nope.json"), "--after", _report(d)], str(d / "nope.json")))),
    P("missing_goldens_check", Case(lambda d: (["goldens", "--check", str(d / "nope.txt")], str(d / "nope.txt")))),
    P("non_utf8_goldens_check", Case(lambda d: (["goldens", "--check", write(d, "g.txt", b"# x\nrr \xff -> 1\n")], f"{d / 'g.txt'}:2: "))),
]


# ---- output paths for the commands other than evaluate

def _out_cmd(cmd: str, out: Callable[[Path, dict], str], expect: Callable[[Path, dict], str]):
    def build(d: Path):
        f = clean_set(d / "in")
        o = out(d, f)
        if cmd == "compare":
            argv = ["compare", "--lane", f"a={f['a']}", "--lane", f"b={f['b']}", "--qrels", f["qrels"], "--resamples", "999", "--out", o]
        elif cmd == "compare_log":
            argv = ["compare", "--lane", f"a={f['a']}", "--lane", f"b={f['b']}", "--qrels", f["qrels"], "--resamples", "999", "--log", o]
        elif cmd == "calibrate":
            argv = ["calibrate", "--lane", f"a={f['a']}", "--lane", f"b={f['b']}", "--qrels", f["qrels"], "--gate-on", "a",
                    "--resamples", "0", "--out", o]
        elif cmd == "verdict":
            argv = ["verdict", "--report", _report(d), "--gates", write(d, "gates.json", GOOD_GATES), "--out", o]
        elif cmd == "diff":
            argv = ["diff", "--before", _report(d), "--after", str(d / "report.json"), "--resamples", "999", "--out", o]
        elif cmd == "goldens":
            argv = ["goldens", "--out", o]
        else:
            raise AssertionError(cmd)
        return argv, expect(d, f)
    return build


def _no_dir(d: Path, f: dict) -> str:
    return str(d / "no" / "such" / "out.json")


for _cmd in ("compare", "compare_log", "calibrate", "verdict", "diff", "goldens"):
    CASES.append(P(f"{_cmd}_output_directory_missing", Case(_out_cmd(_cmd, _no_dir, _no_dir))))

_VICTIMS = {"compare": lambda d, f: f["a"], "compare_log": lambda d, f: f["qrels"], "calibrate": lambda d, f: f["qrels"],
            "verdict": lambda d, f: str(d / "gates.json"), "diff": lambda d, f: str(d / "report.json")}
for _cmd, _victim in _VICTIMS.items():
    CASES.append(P(f"{_cmd}_output_equal_to_an_input", Case(_out_cmd(_cmd, _victim, _victim),
                                                             must_keep=("in/a.run", "in/qrels.txt", "gates.json", "report.json"))))

for _cmd in ("evaluate", "goldens"):
    CASES.append(P(f"{_cmd}_output_directory_not_writable", Case(
        (lambda c: lambda d: ((["goldens", "--out", "/proc/rankscope-out.txt"] if c == "goldens" else
                               evaluate_args(clean_set(d / "in"), Path("/proc/rankscope-report.json"), ("--resamples", "0"))),
                              "/proc/rankscope-"))(_cmd),
        marks=[pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")])))


# ---- malformed gates files for verdict
GATES_ERRORS = {
    "invalid_json": ('[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5,}\n]\n', 2),
    "empty_file": ("", None),
    "empty_list": ("[]", 1),
    "not_a_list": ('{"path": "lanes.a.doc.rr"}', 1),
    "rules_not_a_list": ('{"rules": 3}', 1),
    "rule_not_an_object": ('[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5},\n  "lanes.b.doc.rr >= 0.5"\n]', None),
    "unknown_key": ('[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5},\n  {"path": "lanes.a.doc.rr", "op": ">=", "treshold": 0.5}\n]', 3),
    "path_missing": ('[{"op": ">=", "threshold": 0.5}]', 1),
    "path_not_a_string": ('[{"path": ["lanes", "a"], "op": ">=", "threshold": 0.5}]', 1),
    "path_empty": ('[{"path": "", "op": ">=", "threshold": 0.5}]', 1),
    "op_unknown": ('[{"path": "lanes.a.doc.rr", "op": ">", "threshold": 0.5}]', 1),
    "threshold_and_against": ('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5, "against": "lanes.b.doc.rr"}]', 1),
    "neither_threshold_nor_against": ('[{"path": "lanes.a.doc.rr", "op": ">="}]', 1),
    "threshold_a_string": ('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": "0.5"}]', 1),
    "threshold_a_bool": ('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": true}]', 1),
    "threshold_nan": ('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": NaN}]', 1),
    "threshold_infinity": ('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": -Infinity}]', 1),
    "against_not_a_string": ('[{"path": "lanes.a.doc.rr", "op": ">=", "against": 0.5}]', 1),
}
for _name, (_text, _line) in GATES_ERRORS.items():
    CASES.append(P(f"gates_{_name}", Case(_verdict_line(_text, _line))))
CASES += [
    P("gates_threshold_integer_beyond_float", Case(_verdict_line('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 1' + "0" * 400 + "}]"))),
    P("gates_threshold_5000_digits", Case(_verdict_line('[{"path": "lanes.a.doc.rr", "op": ">=", "threshold": 1' + "0" * 5000 + "}]"))),
    P("gates_path_not_in_the_report", Case(_verdict_line('[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0},\n'
                                                          '  {"path": "lanes.nope.doc.rr", "op": ">=", "threshold": 0.5}\n]', prefix=False),
                                           contains=("lanes.nope.doc.rr",))),
    # (a count such as summary.positives is a scalar rule now, issue 13 item 13; a string is neither)
    P("gates_path_not_a_metric", Case(_verdict_line('[{"path": "summary.averaged_over", "op": ">=", "threshold": 1}]', prefix=False),
                                      contains=("summary.averaged_over",))),
    P("gates_rule_not_an_object_names_its_line", Case(
        _verdict_line('[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0.5},\n  "lanes.b.doc.rr >= 0.5"\n]', 3))),
    P("gates_path_error_names_the_gates_file_and_line", Case(
        _verdict_line('[\n  {"path": "lanes.a.doc.rr", "op": ">=", "threshold": 0},\n'
                      '  {"path": "lanes.a.doc.rr", "op": ">=", "against": "lanes.nope.doc.rr"}\n]', 3))),
]

# ---- malformed reports for verdict and diff
CASES += [
    P("verdict_report_invalid_json", Case(_verdict_report(raw='{"schema": "rankscope.report/1",\n "lanes": }', line=True))),
    P("verdict_report_not_a_report", Case(_verdict_report(raw='{"schema": "other/1"}', line=True))),
    P("verdict_report_value_a_string", Case(_verdict_report(lambda r: r["lanes"]["a"]["doc"]["rr"].update(value="high")))),
    P("verdict_report_low_a_list", Case(_verdict_report(lambda r: r["lanes"]["a"]["doc"]["rr"].update(low=[0.1])))),
    P("diff_report_invalid_json", Case(_diff(raw="{\n"))),
    P("diff_report_a_list", Case(_diff(raw="[1, 2]"))),
    P("diff_report_nan_per_query", Case(_diff(mutate=lambda r: r["per_query"]["a"]["doc"]["q1"].update(rr=float("nan")),
                                              prefix=False))),
    P("diff_report_null_per_query", Case(_diff(mutate=lambda r: r["per_query"]["a"]["doc"]["q1"].update(rr=None), prefix=False))),
    P("diff_report_no_shared_lane", Case(_diff(mutate=lambda r: r.update(per_query={"zz": r["per_query"]["a"]}), prefix=False))),
    P("diff_report_without_inputs", Case(_diff(mutate=lambda r: r.pop("inputs")))),
    P("diff_report_without_settings", Case(_diff(mutate=lambda r: r["inputs"].pop("settings"), which="before"))),
    P("diff_report_qrels_a_number", Case(_diff(mutate=lambda r: r["inputs"].update(qrels=5)))),
    P("diff_report_per_query_value_a_string", Case(_diff(mutate=lambda r: r["per_query"]["a"]["doc"]["q1"].update(rr="x")))),
    P("diff_report_per_query_lane_a_number", Case(_diff(mutate=lambda r: r["per_query"].update(a=3)))),
    P("diff_report_per_query_row_missing_a_metric", Case(_diff(mutate=lambda r: r["per_query"]["a"]["doc"]["q2"].pop("hit@1")))),
    P("diff_report_per_query_row_a_number", Case(_diff(mutate=lambda r: r["per_query"]["a"]["doc"].update(q1=3)))),
    # an integer literal too large for a float (json reads it as an int) in the per-query block and a lane's cell
    P("diff_report_per_query_integer_too_large_for_a_float",
      Case(_diff(mutate=lambda r: r["per_query"]["a"]["doc"]["q1"].update(rr=10**400)), contains=("401 digits",))),
    P("verdict_report_per_query_integer_too_large_for_a_float",
      Case(_verdict_report(lambda r: r["per_query"]["a"]["doc"]["q1"].update(rr=-(10**400))), contains=("401 digits",))),
    P("verdict_report_value_integer_too_large_for_a_float",
      Case(_verdict_report(lambda r: r["lanes"]["a"]["doc"]["rr"].update(value=10**309)), contains=("310 digits",))),
]

# ---- malformed thresholds files for evaluate --thresholds
THRESHOLDS_ERRORS = {
    "invalid_json": ('{"schema": "rankscope.thresholds/1",\n "fusion": {,}}', None),
    "not_an_object": (None, [TH]),
    "wrong_schema": (None, {"schema": "rankscope.report/1"}),
    "qids_not_a_list": (None, {"schema": TH, "calibration": {"qids": "q1"}}),
    "calibration_a_list": (None, {"schema": TH, "calibration": []}),
    "fusion_a_list": (None, {"schema": TH, "fusion": [60]}),
    "rrf_k_a_string": (None, {"schema": TH, "fusion": {"rrf_k": "sixty"}}),
    "rrf_k_huge": (None, {"schema": TH, "fusion": {"rrf_k": 10**30}}),
    "convex_a_list": (None, {"schema": TH, "fusion": {"convex": [0.5, 0.5]}}),
    "convex_weight_a_string": (None, {"schema": TH, "fusion": {"convex": {"weights": {"a": "half", "b": 0.5}}}}),
    "convex_weight_negative": (None, {"schema": TH, "fusion": {"convex": {"weights": {"a": -1, "b": 2}}}}),
    "convex_weights_all_zero": (None, {"schema": TH, "fusion": {"convex": {"weights": {"a": 0, "b": 0.0}}}}),
    "convex_weights_for_other_lanes": (None, {"schema": TH, "fusion": {"convex": {"weights": {"x": 0.5, "y": 0.5}}}}),
    "gate_a_list": (None, {"schema": TH, "gate": [0.5]}),
    "gate_floor_a_string": (None, {"schema": TH, "gate": {"floor": "high"}}),
    "gate_margin_a_string": (None, {"schema": TH, "gate": {"floor": 0.5, "margin": "wide"}}),
    "gate_mutual_r_a_string": (None, {"schema": TH, "gate": {"floor": 0.5, "mutual_r": "two"}}),
    "gate_floor_nan": ('{"schema": "rankscope.thresholds/1", "gate": {"floor": NaN}}', None),
    "integer_5000_digits": ('{"schema": "rankscope.thresholds/1", "fusion": {"rrf_k": 1' + "0" * 5000 + "}}", None),
}
for _name, (_raw, _data) in THRESHOLDS_ERRORS.items():
    CASES.append(P(f"thresholds_{_name}", Case(_thresholds(_data, raw=_raw))))


@pytest.fixture(scope="module")
def error_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("errors")
    jobs, meta = {}, {}
    for p in CASES:
        name, case = p.values
        d = root / name
        d.mkdir()
        argv, prefix = case.build(d)
        keep = {k: (d / k).read_bytes() for k in case.must_keep if (d / k).exists()}
        before = {str(x.relative_to(d)) for x in d.rglob("*")}
        meta[name] = (d, prefix, keep, before)
        jobs[name] = (argv, d, None)
    return meta, cli_many(jobs)


@pytest.mark.parametrize("name,case", CASES)
def test_hostile_input_is_one_line_error_exit_2_nothing_written(error_runs, name, case):
    meta, results = error_runs
    d, prefix, keep, before = meta[name]
    res = results[name]
    assert_one_line_error(res, prefix, case.contains)
    after = {str(x.relative_to(d)) for x in d.rglob("*")}
    assert after == before, f"files appeared: {sorted(after - before)}"
    for rel, data in keep.items():
        assert (d / rel).read_bytes() == data, f"{rel} was changed"


# ---- lane names (SPEC §2): '.', '=' and whitespace are errors; the other characters are fine


LONG_DOC, LONG_Q, HUGE = "D" * 100_000, "Q" * 100_000, "H" * 5_000_000


@pytest.fixture(scope="module")
def misc_runs(tmp_path_factory):
    """The single CLI calls of this file, run together."""
    root = tmp_path_factory.mktemp("misc")
    jobs = {}
    # a '#' comment line in a strata file
    d = root / "strata_comment"
    f = clean_set(d)
    write(d, "kind.tsv", "# query kinds, one per line\n" + STRATA)
    (d / "out").mkdir()
    jobs["strata_comment"] = (evaluate_args(f, d / "out" / "r.json", ("--resamples", "0")), d, None)
    # very long ids and lines
    d = root / "long"
    d.mkdir()
    run = (f"q1 Q0 {LONG_DOC} 1 3.0 t\nq1 Q0 d2 2 2.0 t\n{LONG_Q} Q0 d1 1 1.0 t\n{LONG_Q} Q0 {LONG_DOC}x 2 0.5 t\n"
           f"q2 Q0 {HUGE} 1 9.0 t\nq2 Q0 d3 2 1.0 t" + " extra" * 20_000 + "\n")
    qrels = f"q1 0 {LONG_DOC} 1\n{LONG_Q} 0 {LONG_DOC}x 2\nq2 0 d3 1\nq2 0 {HUGE[:-1]} 1\n"
    jobs["long"] = (["evaluate", "--lane", write(d, "long.run", run), "--qrels", write(d, "qrels.txt", qrels), "--metrics",
                     "rr,recall@10", "--resamples", "0", "--out", str(d / "r.json")], d, None)
    # a TREC file whose first qid starts with '{'
    d = root / "brace"
    d.mkdir()
    jobs["brace"] = (["evaluate", "--lane", write(d, "r.run", "{q}1 Q0 d1 1 1.0 t\n{q}1 Q0 d2 2 0.5 t\n"), "--qrels",
                      write(d, "q.txt", "{q}1 0 d2 1\n"), "--metrics", "rr", "--resamples", "0", "--out", str(d / "r.json")], d, None)
    # a grade written '+1'
    d = root / "plus"
    f = clean_set(d)
    write(d, "qrels.txt", QRELS + "q9 0 d1 +1\n")
    jobs["plus"] = (evaluate_args(f, d / "r.json", ("--resamples", "0")), d, None)
    res = cli_many(jobs)
    res["root"] = root
    return res


def test_very_long_ids_and_lines_are_read(misc_runs):
    """A 100 kB doc id and qid, a 5 MB line (beyond the CSV block size) and 20 000 extra columns."""
    res = misc_runs["long"]
    assert res.returncode == 0, res.stderr[-2000:]
    pq = json.loads((misc_runs["root"] / "long" / "r.json").read_text())["per_query"]["long"]["doc"]
    assert pq["q1"]["rr"] == 1.0
    assert pq[LONG_Q]["rr"] == 0.5
    assert pq["q2"]["rr"] == 0.5 and pq["q2"]["recall@10"] == 0.5  # the 5 MB id differs from its judged prefix


def test_a_grade_written_with_a_plus_sign_is_read_as_trec_eval_reads_it(misc_runs):
    res = misc_runs["plus"]
    assert res.returncode == 0, res.stderr
    assert json.loads((misc_runs["root"] / "plus" / "r.json").read_text())["summary"]["positives"] == 5


def test_a_trec_file_whose_first_qid_starts_with_a_brace_is_read_as_trec(misc_runs):
    res = misc_runs["brace"]
    assert res.returncode == 0, res.stderr
    assert json.loads((misc_runs["root"] / "brace" / "r.json").read_text())["per_query"]["r"]["doc"]["{q}1"]["rr"] == 0.5


# ============================================================================ 3. determinism across processes


def test_same_inputs_and_seed_give_byte_identical_outputs_across_processes(demo_dir, tmp_path):
    d = demo_dir
    common = ["--lane", str(d / "lexical.run"), "--lane", str(d / "dense.run"), "--qrels", str(d / "qrels-test.txt")]
    jobs = {}
    for seed in ("0", "12345"):
        o = tmp_path / f"h{seed}"
        o.mkdir()
        env = {"PYTHONHASHSEED": seed}
        jobs[f"eval{seed}"] = (["evaluate", *common, "--strata", str(d / "strata.tsv"), "--group-sep", "#", "--corpus",
                                str(d / "corpus.tsv"), "--ood-negatives", str(d / "qrels-ood-negatives.txt"), "--gate-on", "rrf",
                                "--seed", "3", "--resamples", "2000", "--out", str(o / "report.json"),
                                "--per-query", str(o / "pq.csv")], tmp_path, env)
        jobs[f"cmp{seed}"] = (["compare", *common, "--metric", "ndcg@10", "--metric", "rr", "--seed", "3", "--resamples", "999",
                               "--out", str(o / "compare.json"), "--format", "markdown"], tmp_path, env)
        jobs[f"gold{seed}"] = (["goldens", "--out", str(o / "goldens.txt")], tmp_path, env)
    res = cli_many(jobs)
    for k, r in res.items():
        assert r.returncode == 0, (k, r.stderr[-2000:])
    a, b = tmp_path / "h0", tmp_path / "h12345"
    for name in ("report.json", "pq.csv", "compare.json", "goldens.txt"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), f"{name} differs between PYTHONHASHSEED 0 and 12345"
    assert res["eval0"].stdout == res["eval12345"].stdout
    assert res["cmp0"].stdout == res["cmp12345"].stdout
    rep = json.loads((a / "report.json").read_text())
    assert rep["inputs"]["settings"]["seed"] == 3 and "group" in rep["lanes"]["rrf"]


# ============================================================================ 4. atomic writes


def _small_inputs(d: Path) -> dict:
    return clean_set(d)


def test_every_output_goes_through_a_temp_file_and_a_rename(tmp_path, monkeypatch, capsys):
    """Spy on os.replace: every file each command writes (but the appended compare log)
    arrives by a rename from a temp file in the same directory, and no temp file stays behind."""
    from rankscope_tui import cli as C
    from rankscope_tui.kernel.report import output as IO

    f = _small_inputs(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src, dst, *a, **k):
        renames.append((os.path.abspath(src), os.path.abspath(dst)))
        assert Path(src).read_bytes()  # the temp file holds the whole payload before the rename
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(IO.os, "replace", spy)
    lanes = ["--lane", f"a={f['a']}", "--lane", f"b={f['b']}", "--qrels", f["qrels"]]
    calls = {
        "report.json": ["evaluate", *lanes, "--metrics", METRICS, "--resamples", "0", "--out", str(out / "report.json"),
                        "--per-query", str(out / "pq.csv")],
        "compare.json": ["compare", *lanes, "--resamples", "999", "--out", str(out / "compare.json"), "--log", str(out / "log.jsonl")],
        "th.json": ["calibrate", *lanes, "--gate-on", "a", "--resamples", "0", "--out", str(out / "th.json")],
        "verdict.json": ["verdict", "--report", str(out / "report.json"), "--gates", write(tmp_path, "g.json", GOOD_GATES),
                         "--out", str(out / "verdict.json")],
        "diff.json": ["diff", "--before", str(out / "report.json"), "--after", str(out / "report.json"), "--resamples", "999",
                      "--out", str(out / "diff.json")],
        "goldens.txt": ["goldens", "--out", str(out / "goldens.txt")],
    }
    for name, argv in calls.items():
        rc = C.main(argv)
        assert rc in (0, 1), (name, capsys.readouterr().err)
    capsys.readouterr()
    written = {dst for _, dst in renames}
    for name in ["report.json", "pq.csv", "compare.json", "th.json", "verdict.json", "diff.json", "goldens.txt"]:
        assert str(out / name) in written, f"{name} was not written by a rename"
    # the compare log is appended to in place, one whole line under a lock (tests/test_outputs.py)
    assert str(out / "log.jsonl") not in written and len((out / "log.jsonl").read_text().splitlines()) == 1
    for src, dst in renames:
        assert os.path.dirname(src) == os.path.dirname(dst), (src, dst)
        assert os.path.basename(src) != os.path.basename(dst)
    assert sorted(leftovers(out)) == sorted(["report.json", "pq.csv", "compare.json", "log.jsonl", "th.json", "verdict.json",
                                             "diff.json", "goldens.txt"])


@pytest.mark.parametrize("where", ["serialise_report", "serialise_csv", "fsync", "rename"])
def test_a_failed_write_keeps_the_old_files_and_leaves_no_temp(tmp_path, monkeypatch, capsys, where):
    from rankscope_tui import cli as C
    from rankscope_tui.kernel.report import output as IO
    from rankscope_tui.render import report as R

    f = _small_inputs(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("OLD REPORT\n")
    (out / "pq.csv").write_text("OLD CSV\n")

    class Boom(RuntimeError):
        pass

    def boom(*a, **k):
        raise Boom(where)

    if where == "serialise_report":  # (evaluate writes report.json in pieces: dumps_strict_parts)
        monkeypatch.setattr(IO, "dumps_strict", boom)
        monkeypatch.setattr(IO, "dumps_strict_parts", boom)
    elif where == "serialise_csv":
        monkeypatch.setattr(R, "per_query_csv", boom)
    elif where == "fsync":
        monkeypatch.setattr(IO.os, "fsync", boom)
    else:
        monkeypatch.setattr(IO.os, "replace", boom)
    argv = ["evaluate", "--lane", f"a={f['a']}", "--qrels", f["qrels"], "--metrics", METRICS, "--resamples", "0",
            "--out", str(out / "report.json"), "--per-query", str(out / "pq.csv")]
    with pytest.raises(Boom):
        C.main(argv)
    capsys.readouterr()
    assert (out / "report.json").read_text() == "OLD REPORT\n"
    assert (out / "pq.csv").read_text() == "OLD CSV\n"
    assert leftovers(out) == ["pq.csv", "report.json"], "a temp file was left behind"


_INTERRUPTIBLE = r"""
import os, sys, time
from rankscope_tui.kernel.report import output as IO
from rankscope_tui.kernel.instruments import evaluate as PL

marker, where = os.environ["RS_MARKER"], os.environ["RS_WHERE"]

def announce_and_wait():
    open(marker, "w").close()
    time.sleep(60)

if where == "computing":
    real_eval = PL.evaluate_report
    def slow_eval(*a, **k):
        announce_and_wait()
        return real_eval(*a, **k)
    PL.evaluate_report = slow_eval
else:
    real_fdopen = os.fdopen

    class HalfThenWait:
        # writes the payload (its pieces) into the temp file until more than 10 kB are
        # in, half a piece at a time, then waits for the SIGINT
        def __init__(self, fh):
            self.fh = fh
            self.written = 0
        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            self.written += len(data) // 2
            if self.written > 10_000:
                self.fh.flush()
                announce_and_wait()
            return self.fh.write(data[len(data) // 2:])
        def __getattr__(self, k):
            return getattr(self.fh, k)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

    IO.os.fdopen = lambda *a, **k: HalfThenWait(real_fdopen(*a, **k))

from rankscope_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("where", ["computing", "mid_write"])
def test_sigint_keeps_the_old_report_and_leaves_no_temp(demo_dir, tmp_path, where):
    """A subprocess evaluating the demo (a 200 kB report) is interrupted while it
    computes, or after half the report went into its temp file: the old report.json is
    intact, the temp file is gone, the exit status is 130 with one stderr line."""
    d = demo_dir
    out = tmp_path / "out"
    out.mkdir()
    old = b'{"old": true}\n'
    (out / "report.json").write_bytes(old)
    marker = tmp_path / "ready"
    script = write(tmp_path, "interruptible.py", _INTERRUPTIBLE)
    proc = subprocess.Popen(
        [sys.executable, script, "evaluate", "--lane", str(d / "lexical.run"), "--lane", str(d / "dense.run"), "--qrels",
         str(d / "qrels-test.txt"), "--group-sep", "#", "--resamples", "0", "--out", str(out / "report.json")],
        cwd=str(tmp_path), env=cli_env({"RS_MARKER": str(marker), "RS_WHERE": where}), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: marker.exists() or proc.poll() is not None, 90) and marker.exists(), \
            f"never reached the {where} point: {proc.stderr.read() if proc.poll() is not None else ''}"
        temps = [p for p in out.iterdir() if p.name != "report.json"]
        if where == "mid_write":  # half a large report, in a temp file next to the target
            assert len(temps) == 1 and temps[0].stat().st_size > 10_000, [(p.name, p.stat().st_size) for p in temps]
        else:
            assert temps == []
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and err.splitlines() == ["rankscope: interrupted"], err
    assert (out / "report.json").read_bytes() == old
    assert leftovers(out) == ["report.json"]


def test_sigterm_in_the_middle_of_a_write_leaves_no_temp(demo_dir, tmp_path):
    d = demo_dir
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_bytes(b"old")
    marker = tmp_path / "ready"
    script = write(tmp_path, "interruptible.py", _INTERRUPTIBLE)
    proc = subprocess.Popen(
        [sys.executable, script, "evaluate", "--lane", str(d / "lexical.run"), "--qrels", str(d / "qrels-test.txt"),
         "--resamples", "0", "--out", str(out / "report.json")],
        cwd=str(tmp_path), env=cli_env({"RS_MARKER": str(marker), "RS_WHERE": "mid_write"}), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: marker.exists() or proc.poll() is not None, 90) and marker.exists()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0
    assert (out / "report.json").read_bytes() == b"old"
    assert leftovers(out) == ["report.json"]


# ============================================================================ 5. exit codes of verdict and diff


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Two reports on the same 40 queries: 'good' finds the answer at rank 1 almost
    everywhere, 'bad' at rank 5; and one on other qrels."""
    from rankscope_tui.kernel.instruments.evaluate import evaluate_report
    from rankscope_tui.kernel.measures import parse_metrics
    from rankscope_tui.kernel.report.output import dumps_strict
    from rankscope_tui.kernel.settings import LoadSettings
    from rankscope_tui.kernel.workspace.loaded import Workspace

    d = tmp_path_factory.mktemp("reports")
    n = 40
    qrels = "".join(f"q{i} 0 rel{i} 1\n" for i in range(n))

    def run(rank_of_answer) -> str:
        lines = []
        for i in range(n):
            docs = [f"n{i}_{j}" for j in range(5)]
            docs.insert(rank_of_answer(i) - 1, f"rel{i}")
            lines += [f"q{i} Q0 {doc} {r + 1} {10 - r} t\n" for r, doc in enumerate(docs)]
        return "".join(lines)

    qp = write(d, "qrels.txt", qrels)
    other_q = write(d, "qrels-other.txt", qrels + "q99 0 x 1\n")
    out = {}
    settings = LoadSettings(metrics=tuple(parse_metrics("rr,hit@1")), resamples=200)
    for name, rank, q in (("good", lambda i: 1 if i % 10 else 2, qp), ("bad", lambda i: 5, qp), ("other", lambda i: 1, other_q)):
        rp = write(d, f"{name}/sys.run".replace("/", "_"), run(rank))
        ws = Workspace.load([("sys", rp)], q, settings)
        out[name] = write(d, f"{name}.json", dumps_strict(evaluate_report(ws)))
    out["gates_pass"] = write(d, "pass.json", '[{"path": "lanes.sys.doc.rr", "op": ">=", "threshold": 0.5}]')
    out["gates_fail"] = write(d, "fail.json", '[{"path": "lanes.sys.doc.rr", "op": ">=", "threshold": 0.5},\n'
                                               ' {"path": "lanes.sys.doc.hit@1", "op": ">=", "threshold": 0.99}]')
    out["gates_undecided"] = write(d, "undecided.json", '[{"path": "lanes.sys.doc.hit@1", "op": ">=", "against": "lanes.sys.doc.hit@1"}]')
    out["dir"] = d
    return out


def test_verdict_and_diff_exit_codes(reports):
    r = reports
    d = r["dir"]
    calls = {
        "verdict_pass": (["verdict", "--report", r["good"], "--gates", r["gates_pass"]], 0),
        "verdict_fail": (["verdict", "--report", r["good"], "--gates", r["gates_fail"]], 1),
        "verdict_fail_on_point": (["verdict", "--report", r["good"], "--gates", r["gates_fail"], "--on", "point"], 1),
        "verdict_undecided": (["verdict", "--report", r["good"], "--gates", r["gates_undecided"]], 0),
        "verdict_undecided_strict": (["verdict", "--report", r["good"], "--gates", r["gates_undecided"], "--strict"], 1),
        "verdict_bad_gates": (["verdict", "--report", r["good"], "--gates", r["good"]], 2),
        "diff_regression_flagged": (["diff", "--before", r["good"], "--after", r["bad"], "--resamples", "999", "--fail-on-regression"], 1),
        "diff_regression_not_flagged": (["diff", "--before", r["good"], "--after", r["bad"], "--resamples", "999"], 0),
        "diff_regression_below_min_delta": (["diff", "--before", r["good"], "--after", r["bad"], "--resamples", "999",
                                             "--fail-on-regression", "--min-delta", "0.95"], 0),
        "diff_improvement": (["diff", "--before", r["bad"], "--after", r["good"], "--resamples", "999", "--fail-on-regression"], 0),
        "diff_same": (["diff", "--before", r["good"], "--after", r["good"], "--resamples", "999", "--fail-on-regression"], 0),
        "diff_other_qrels": (["diff", "--before", r["good"], "--after", r["other"], "--resamples", "999"], 2),
        "diff_too_few_resamples": (["diff", "--before", r["good"], "--after", r["bad"], "--resamples", "10"], 2),
    }
    res = cli_many({k: (argv, d, None) for k, (argv, _) in calls.items()})
    for k, (_, want) in calls.items():
        got = res[k]
        assert "Traceback" not in got.stderr, (k, got.stderr)
        assert got.returncode == want, (k, got.returncode, got.stdout[-1500:], got.stderr[-1500:])
        if want == 2:
            assert_one_line_error(got)
    assert "REGRESSION" in res["diff_regression_flagged"].stdout
    assert "undecided" in res["verdict_undecided"].stdout
