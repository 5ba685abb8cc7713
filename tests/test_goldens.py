"""Goldens (SPEC §8, lesson 14): the committed reference vectors, the check command, and
an independent implementation installed with the package
(rankscope_tui/kernel/instruments/goldens_reference.py) that must agree with them."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import run_cli

from rankscope_tui import cli
from rankscope_tui.kernel.instruments import goldens as G
from rankscope_tui.kernel.instruments import goldens_reference as REF

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "goldens" / "reference.txt"
REF_IMPL = Path(REF.__file__)
TOL = 1e-9


def case_lines(text: str) -> list[tuple[int, str]]:
    return [(i, ln) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip() and not ln.lstrip().startswith("#")]


def split(line: str):
    head, answer = line.rsplit(" -> ", 1)
    kind, args = head.split(" ", 1)
    return kind, json.loads(args), json.loads(answer)


def _num(v):
    if v == "inf":
        return math.inf
    if v == "-inf":
        return -math.inf
    return v


def agree(a, b) -> bool:
    """Plain comparison of two encoded answers: same shape, nulls and infinities equal, numbers within 1e-9."""
    if isinstance(a, list) != isinstance(b, list):
        return False
    xs, ys = (a, b) if isinstance(a, list) else ([a], [b])
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        x, y = _num(x), _num(y)
        if x is None or y is None:
            if x is not y:
                return False
        elif math.isinf(x) or math.isinf(y):
            if x != y:
                return False
        elif abs(x - y) > TOL:
            return False
    return True


def main(argv: list[str]) -> int:
    """``rankscope ARGV`` in-process."""
    return cli.main(argv)


# ---------------------------------------------------------------------------
# the committed file and the command


def test_check_passes_on_the_committed_file():
    r = run_cli("goldens", "--check", REFERENCE, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all" in r.stdout and "agree" in r.stdout


def test_a_changed_answer_fails_and_names_its_line(tmp_path, capsys):
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    target = next(i for i, ln in case_lines("\n".join(lines)) if ln.startswith("ndcg "))
    kind, args, answer = split(lines[target - 1])
    answer[0] = answer[0] + 1e-6  # beyond the 1e-9 tolerance
    lines[target - 1] = f"{kind} {G.dumps(args)} -> {G.dumps(answer)}"
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["goldens", "--check", str(bad)]) == 1
    out = capsys.readouterr().out
    problems = [ln for ln in out.splitlines() if ln.startswith(str(bad))]
    assert problems == [ln for ln in problems if f"{bad}:{target}:" in ln] and len(problems) == 1
    assert "1 of" in out


def test_within_tolerance_passes_and_other_breakages_fail(tmp_path):
    text = REFERENCE.read_text(encoding="utf-8")
    first = case_lines(text)[0][1]
    kind, args, answer = split(first)
    nudged = [x + 1e-12 if isinstance(x, float) else x for x in answer] if isinstance(answer, list) else answer
    ok = f"{kind} {G.dumps(args)} -> {G.dumps(nudged)}"
    assert G.check(ok, "f") == []
    shorter = f"{kind} {G.dumps(args)} -> {G.dumps(answer[:-1])}"
    broken = "\n".join([
        "# a comment",
        shorter,                                   # 2: list length differs
        "frobnicate {} -> 1",                      # 3: unknown kind
        "hit {not json -> [1]",                    # 4: unparsable
        "no separator here",                       # 5: unparsable
        'wilson {"k":1,"n":2} -> "inf"',           # 6: inf vs numbers
        'rule_of_three {"n":0} -> 1',              # 7: kernel refuses: a mismatch, not a crash
    ])  # fmt: skip
    problems = G.check(broken, "f")
    assert [p.split(":")[1] for p in problems] == ["2", "3", "4", "5", "6", "7"]


def test_check_command_exit_codes(tmp_path, capsys):
    assert main(["goldens", "--check", str(tmp_path / "missing.txt")]) == 2
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert main(["goldens", "--check", str(empty)]) == 2
    assert main(["goldens", "--check", str(REFERENCE), "--out", str(tmp_path / "x")]) == 2


def test_committed_file_is_a_fresh_output_byte_for_byte(tmp_path, capsys):
    assert main(["goldens"]) == 0
    fresh = capsys.readouterr().out
    assert fresh.encode("utf-8") == REFERENCE.read_bytes()
    out = tmp_path / "g.txt"
    assert main(["goldens", "--out", str(out)]) == 0
    assert out.read_bytes() == REFERENCE.read_bytes()
    assert G.write_lines() == fresh  # deterministic within a process too


def test_every_kind_is_covered_and_there_are_enough_cases():
    cases = [split(ln) for _, ln in case_lines(REFERENCE.read_text(encoding="utf-8"))]
    assert len(cases) >= 100
    kinds = {k for k, _, _ in cases}
    assert set(G.KINDS) <= kinds, set(G.KINDS) - kinds
    for metric in G.METRIC_KINDS:
        levels = {a.get("level") for k, a, _ in cases if k == metric}
        assert {"doc", "group"} <= levels, metric
    # the cases the spec names
    text = REFERENCE.read_text(encoding="utf-8")
    assert 'conformal_k {"alpha":0.18,"n":149} -> 123' in text  # exact Fraction, not 124
    assert 'negatives_needed {"confidence":0.95,"t":0.05} -> [73,60]' in text
    assert any(k == "conformal_floor" and ans[1] == "-inf" for k, _, ans in cases)
    assert any(k == "operating_point" and ans[0] == "inf" for k, _, ans in cases)
    assert any(k == "randomization_p" and ans == 1 / (a["B"] + 1) for k, a, ans in cases)
    assert all(a["B"] in (999, 1999) for k, a, _ in cases if k in ("randomization_p", "paired_bootstrap"))
    wil = next(ans for k, a, ans in cases if k == "wilson" and (a["k"], a["n"]) == (8, 12))
    assert round(wil[0], 3) == 0.391 and round(wil[1], 3) == 0.862
    rrf = next(ans for k, _, ans in cases if k == "rrf")
    assert abs(rrf[0] - (1 / 63 + 1 / 65)) < 1e-15 and abs(rrf[1] - 1 / 61) < 1e-15


# ---------------------------------------------------------------------------
# the independent implementation


def test_reference_implementation_agrees_with_the_committed_file():
    text = REFERENCE.read_text(encoding="utf-8")
    disagree = []
    for lineno, line in case_lines(text):
        kind, args, expected = split(line)
        mine = REF.encode(REF.answer(kind, args))
        if not agree(expected, mine):
            disagree.append(f"line {lineno} {kind}: file {json.dumps(expected)[:200]}, reference {json.dumps(mine)[:200]}")
    assert not disagree, "\n".join(disagree)


def test_reference_script_prints_the_same_lines(tmp_path):
    """The installed reference run as a module prints every line with its own answer; the
    file it writes passes `rankscope goldens --check` (the command, in a fresh interpreter)."""
    out = subprocess.run([sys.executable, "-m", "rankscope_tui.kernel.instruments.goldens_reference", str(REFERENCE)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    ours = REFERENCE.read_text(encoding="utf-8").splitlines()
    theirs = out.splitlines()
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if a.startswith("#") or not a.strip():
            assert a == b
            continue
        ka, aa, xa = split(a)
        kb, ab, xb = split(b)
        assert (ka, aa) == (kb, ab)
        assert agree(xa, xb), (a[:120], xb)
    # and the check command accepts the reference's own file
    mine = tmp_path / "reference_impl.txt"
    mine.write_text(out, encoding="utf-8")
    assert G.check(out, str(mine)) == []
    r = run_cli("goldens", "--check", mine, cwd=ROOT)
    assert r.returncode == 0 and f"all {len(case_lines(out))} cases agree" in r.stdout, r.stdout + r.stderr


def test_the_installed_reference_shares_no_code_with_the_kernel():
    """Lesson 14: a second implementation is only a check when it is independent. Its
    source imports nothing of rankscope_tui (read with ast: top level and in functions), and
    importing it in a fresh interpreter loads no kernel measure, ranking, fusion, gate or
    statistics module."""
    tree = ast.parse(REF_IMPL.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import at line {node.lineno}"
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "json", "math", "sys", "collections", "fractions", "typing", "numpy"}, imported
    probe = ("import sys, rankscope_tui.kernel.instruments.goldens_reference as R\n"
             "print(sorted(m for m in sys.modules if m.startswith('rankscope_tui.kernel.')))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                                       cwd=ROOT).stdout.replace("'", '"'))
    assert loaded == ["rankscope_tui.kernel.instruments", "rankscope_tui.kernel.instruments.goldens_reference"], loaded


def test_side_by_side_agrees_and_names_a_seeded_disagreement(monkeypatch):
    """The Goldens view's kernel half: every case computed both ways agrees; a reference
    answer nudged beyond the tolerance on one kind is reported on exactly those cases, with
    the line the case has in the committed file and the first differing entry."""
    both = G.side_by_side()
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    assert len(both.rows) == len(case_lines("\n".join(lines))) and not both.disagreeing
    assert both.summary.startswith(f"all {len(both.rows)} cases agree")
    for row in both.rows[:40]:  # the line numbers are the file's
        kind, args, answer = split(lines[row.line - 1])
        assert kind == row.kind and agree(answer, row.kernel)
    real = REF.answer

    def nudged(kind, args):
        out = real(kind, args)
        return [out[0] + 1e-6, *out[1:]] if kind == "wilson" else out

    monkeypatch.setattr(REF, "answer", nudged)
    both = G.side_by_side()
    bad = both.disagreeing
    assert bad and {r.kind for r in bad} == {"wilson"}
    assert len(bad) == sum(1 for _, ln in case_lines("\n".join(lines)) if ln.startswith("wilson "))
    assert all(r.position == 0 and not r.agree for r in bad)
    assert both.summary.startswith(f"{len(bad)} of {len(both.rows)} cases disagree") and f"line {bad[0].line} wilson" in both.summary


# ---------------------------------------------------------------------------
# property: kernel and reference agree on random small inputs (metrics and RRF)

DOC_IDS = ["d1", "d2", "d10", "D2", "é", "z", "a#1", "a#2", "b#1", "b", "c#x#y"]
SCORES = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), st.floats(-5, 5, allow_nan=False, width=32))


@st.composite
def runs(draw, qids=("q1", "q2", "q3")):
    run = {}
    for q in qids:
        if draw(st.booleans()) or q == qids[0]:
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=0, max_size=8, unique=True))
            run[q] = [[d, float(draw(SCORES))] for d in docs]
    return run


@st.composite
def qrels(draw, qids=("q1", "q2", "q3", "q4")):
    out = {}
    for q in qids:
        if draw(st.booleans()) or q == qids[0]:
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=6, unique=True))
            out[q] = {d: draw(st.integers(-1, 3)) for d in docs}
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(G.METRIC_KINDS),
    run=runs(),
    qr=qrels(),
    level=st.sampled_from(["doc", "group"]),
    k=st.integers(1, 6),
    depth=st.one_of(st.none(), st.integers(1, 6)),
    relevant=st.integers(1, 2),
)
def test_property_metrics_agree(kind, run, qr, level, k, depth, relevant):
    args = {"level": level, "run": run, "qrels": qr, "relevant": relevant}
    if kind not in ("rank_of", "rr"):
        args["k"] = k
    if depth is not None:
        args["depth"] = depth
    if level == "group":
        args["sep"] = "#"
    args = json.loads(G.dumps(args))  # exactly what a goldens line would carry
    assert agree(G._enc(G.answer(kind, args)), REF.encode(REF.answer(kind, args)))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lanes=st.lists(runs(), min_size=1, max_size=3),
    k=st.sampled_from([0, 1, 2, 60]),
    depth=st.one_of(st.none(), st.integers(1, 5)),
)
def test_property_rrf_agrees(lanes, k, depth):
    args = {"lanes": lanes, "k": k}
    if depth is not None:
        args["depth"] = depth
    args = json.loads(G.dumps(args))
    for kind in ("rrf", "rrf_order"):
        assert agree(G._enc(G.answer(kind, args)), REF.encode(REF.answer(kind, args))), kind
