"""Runs made by asking a retriever: ``rankscope_tui.run_from`` and ``rankscope run``.

Oracles: the same run written by hand as a TREC file (its ranks worked out by hand from
trec_eval's order: score descending, ties by doc id descending), evaluated by rankscope
from the file and by pytrec_eval-terrier from the pairs; Python's ``statistics`` for the
response-time summary. Failures must be one line naming the queries file, line and query
id, exit status 2, and leave no file behind.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import pytrec_eval
from support import shared_path

import rankscope_tui as rs
from rankscope_tui.kernel.errors import InputError

B = 999  # resamples: the intervals are not what is checked here
PYTREC = {"ap": "map", "ndcg@10": "ndcg_cut_10", "rr": "recip_rank"}

# ------------------------------------------------------------------ a toy retriever, worked by hand

TOY_QUERIES = {"q1": "alpha beta", "q2": "gamma", "q3": "delta"}
TOY_ANSWERS = {  # unordered, with ties: d1 and d2 tie at 1.0 in q1, d7/d8/d9 at 0.5 in q3
    "q1": [("d1", 1.0), ("d3", 0.25), ("d2", 1.0), ("d4", 2.0)],
    "q2": [("d5", 3), ("d6", 7.5)],
    "q3": [("d8", 0.5), ("d7", 0.5), ("d9", 0.5), ("d10", 0.1)],
}
TOY_QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d5": 1}, "q3": {"d7": 1, "d10": 1}}
# the ranks by hand: score descending, a tie broken by doc id descending (d2 before d1;
# d9, d8, d7); k=3 keeps the first three of each
TOY_BY_HAND_K3 = """\
q1 Q0 d4 1 2.0 toy
q1 Q0 d2 2 1.0 toy
q1 Q0 d1 3 1.0 toy
q2 Q0 d6 1 7.5 toy
q2 Q0 d5 2 3.0 toy
q3 Q0 d9 1 0.5 toy
q3 Q0 d8 2 0.5 toy
q3 Q0 d7 3 0.5 toy
"""


def toy(text: str):
    qid = next(q for q, t in TOY_QUERIES.items() if t == text)
    return iter(TOY_ANSWERS[qid])  # an iterator: read once, inside the timing


def _pytrec(qrels: dict, run_text: str, measures=("map", "ndcg_cut_10", "recip_rank")) -> dict:
    run: dict = {}
    for line in run_text.splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)


def _values(ev) -> dict:
    """Doc-level per-query values of the measures pytrec_eval also computes (judged@10, which
    rankscope adds, has no trec_eval twin)."""
    df = ev.per_query()
    return {(r.run, r.query_id, r.measure): r.value for r in df.itertuples() if r.level == "doc" and r.measure in PYTREC}


def test_run_from_ranks_as_by_hand_and_evaluates_as_the_written_run(tmp_path):
    """Must show 4 (API): the run's text is the hand-ranked file; its evaluation equals the
    hand-written file's value for value, and pytrec_eval's on the same pairs."""
    run = rs.run_from(toy, TOY_QUERIES, k=3, name="toy")
    assert run.trec_text() == TOY_BY_HAND_K3
    hand = tmp_path / "toy.run"
    hand.write_text(TOY_BY_HAND_K3)
    got = rs.evaluate(TOY_QRELS, {"toy": run}, measures="ap,ndcg@10,rr", resamples=B)
    want = rs.evaluate(TOY_QRELS, {"toy": str(hand)}, measures="ap,ndcg@10,rr", resamples=B)
    assert _values(got) == _values(want)
    rep, rep_hand = got.report(), want.report()
    assert rep["lanes"] == rep_hand["lanes"] and rep["per_query"] == rep_hand["per_query"]
    oracle = _pytrec(TOY_QRELS, TOY_BY_HAND_K3)
    for (_, q, m), v in _values(got).items():
        assert v == pytest.approx(oracle[q][PYTREC[m]], abs=1e-12), (q, m)
    # by hand: q1 ranks d4 d2 d1 (d3 cut by k): AP = (1/3) / 2 relevant; q3 d9 d8 d7: AP = (1/3) / 2
    assert _values(got)[("toy", "q1", "ap")] == pytest.approx(1 / 6)
    assert _values(got)[("toy", "q3", "ap")] == pytest.approx(1 / 6)
    assert _values(got)[("toy", "q2", "rr")] == pytest.approx(1 / 2)


def test_run_from_keeps_provenance_and_reports_response_time(tmp_path):
    run = rs.run_from(toy, list(TOY_QUERIES.items()), k=10, name="toy")
    prov = run.provenance()
    assert prov["retriever"] == f"{__name__}.toy" and prov["kind"] == "callable"
    assert prov["rankscope_version"] == rs.__version__ and prov["k"] == 10
    assert prov["started"].endswith("Z") and prov["started"][:4].isdigit()
    assert [q for q, _ in prov["latency"]] == list(TOY_QUERIES)
    assert all(s >= 0 for _, s in prov["latency"])
    ev = rs.evaluate(TOY_QRELS, {"toy": run}, measures="ap", resamples=B)
    block = ev.report()["latency"]
    assert block["measure"] == "response_time" and block["relevance_measure"] is False and block["interval"] == "none"
    seconds = list(run.latency.values())
    cell = block["lanes"]["toy"]
    assert cell["queries"] == 3
    assert cell["mean"] == pytest.approx(statistics.fmean(seconds), rel=1e-12)
    assert cell["median"] == pytest.approx(statistics.median(seconds), rel=1e-12)
    # the 95th percentile by linear interpolation between order statistics ("inclusive")
    assert cell["p95"] == pytest.approx(statistics.quantiles(seconds, n=20, method="inclusive")[18], rel=1e-12)
    text = str(ev)
    assert "Response time (response_time, milliseconds per query; not a relevance measure, no interval)" in text
    assert f"{cell['mean'] * 1000:.3f}" in text
    assert list(ev.latency().columns) == ["run", "queries", "mean", "median", "p95"]
    assert "Response time" in ev.to_markdown()
    latex = ev.to_latex()
    assert "tab:rankscope-response-time" in latex and f"toy & 3 & {cell['mean'] * 1000:.3f} & " in latex
    # written: the run and its sidecar; read back from the file, the latency comes with it
    out = tmp_path / "toy.txt"
    assert run.write(out) == [str(out), str(out) + ".provenance.json"]
    assert out.read_text() == run.trec_text()
    side = json.loads(Path(str(out) + ".provenance.json").read_text())
    assert side["latency"] == [[q, s] for q, s in run.latency.items()]
    again = rs.evaluate(TOY_QRELS, str(out), measures="ap", resamples=B).report()
    assert again["latency"]["lanes"]["toy"] == cell


def test_a_report_without_latency_has_no_latency_block_or_line(tmp_path):
    """Existing outputs stay as they were: no block, no table, no caption sentence."""
    hand = tmp_path / "toy.run"
    hand.write_text(TOY_BY_HAND_K3)
    ev = rs.evaluate(TOY_QRELS, str(hand), measures="ap", resamples=B)
    assert "latency" not in ev.report()
    assert "response_time" not in str(ev) and "Response time" not in ev.to_markdown()
    assert "response" not in ev.to_latex()
    assert ev.latency().empty


def test_an_edited_run_keeps_no_stale_latency(tmp_path):
    run = rs.run_from(toy, TOY_QUERIES, k=3, name="toy")
    out = tmp_path / "toy.txt"
    run.write(out)
    with open(out, "a") as fh:
        fh.write("q2 Q0 d99 3 0.1 toy\n")
    rep = rs.evaluate(TOY_QRELS, str(out), measures="ap", resamples=B).report()
    assert "latency" not in rep
    kinds = [w["kind"] for w in rep["summary"]["warnings"]]
    assert "run_sidecar_not_used" in kinds


@pytest.mark.parametrize("answer, problem", [
    ([("d1", float("nan"))], "not a finite number"),
    ([("d 1", 1.0)], "without whitespace"),
    ([("d1", 1.0), ("d1", 2.0)], "returned twice"),
    ([("d1", "high")], "is not a number"),
    ([("d1", None)], "the score of 'd1' is not a number: (no value)"),
    ([("d1",)], "not a (doc_id, score) pair"),
])
def test_a_bad_answer_names_the_query(answer, problem):
    with pytest.raises(InputError) as e:
        rs.run_from(lambda text: answer if text == "gamma" else [("d1", 1.0)], TOY_QUERIES)
    assert "query 'q2'" in str(e.value) and problem in str(e.value)


def test_a_retriever_that_returns_nothing_names_the_query():
    with pytest.raises(InputError) as e:
        rs.run_from(lambda text: None if text == "gamma" else [("d1", 1.0)], TOY_QUERIES)
    assert str(e.value) == "query 'q2': the retriever returned nothing, not (doc_id, score) pairs"


def test_compare_takes_run_from_runs_as_the_hand_written_files(tmp_path):
    """The API's compare accepts run_from runs as lanes: its rows equal those of the same
    runs written by hand (the second run: the toy's scores reversed, ranked by hand)."""
    flipped = {q: [(d, -float(s)) for d, s in pairs] for q, pairs in TOY_ANSWERS.items()}
    by_hand_flipped = ("q1 Q0 d3 1 -0.25 flip\nq1 Q0 d2 2 -1.0 flip\nq1 Q0 d1 3 -1.0 flip\n"
                       "q2 Q0 d5 1 -3.0 flip\nq2 Q0 d6 2 -7.5 flip\n"
                       "q3 Q0 d10 1 -0.1 flip\nq3 Q0 d9 2 -0.5 flip\nq3 Q0 d8 3 -0.5 flip\n")
    a = rs.run_from(toy, TOY_QUERIES, k=3, name="toy")
    b = rs.run_from(lambda text: flipped[next(q for q, t in TOY_QUERIES.items() if t == text)], TOY_QUERIES, k=3,
                    name="flip")
    assert b.trec_text() == by_hand_flipped
    (tmp_path / "toy.run").write_text(TOY_BY_HAND_K3)
    (tmp_path / "flip.run").write_text(by_hand_flipped)
    got = rs.compare(TOY_QRELS, [a, b], measures="ap", resamples=B).as_dict()
    want = rs.compare(TOY_QRELS, {"toy": str(tmp_path / "toy.run"), "flip": str(tmp_path / "flip.run")},
                      measures="ap", resamples=B).as_dict()
    assert got["comparisons"] == want["comparisons"]
    assert [(r["baseline"], r["candidate"]) for r in got["comparisons"]] == [("toy", "flip")]


def test_the_readme_block_runs(tmp_path):
    import os
    import re
    import subprocess

    from support import REPO, cli_env

    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## Runs straight from a retriever\n", 1)[1]
    block = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)[0]
    res = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, env=cli_env(), cwd=tmp_path,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "overlap" in res.stdout and "p95" in res.stdout
    assert sorted(os.listdir(tmp_path)) == ["overlap.run", "overlap.run.provenance.json"]


def test_a_retriever_that_raises_names_the_query_and_keeps_the_cause():
    def boom(text):
        if text == "delta":
            raise RuntimeError("index closed")
        return [("d1", 1.0)]

    with pytest.raises(InputError) as e:
        rs.run_from(boom, TOY_QUERIES)
    assert str(e.value) == "query 'q3': the retriever raised RuntimeError: index closed"
    assert isinstance(e.value.__cause__, RuntimeError)


def test_response_time_is_not_a_relevance_measure_name():
    with pytest.raises(InputError) as e:
        rs.evaluate(TOY_QRELS, {"q1": {"d1": 1.0}}, measures="response_time")
    assert "not a relevance measure" in str(e.value)


# ------------------------------------------------------------------ Cranfield, asked query by query


@pytest.fixture(scope="module")
def cranfield():
    lane = shared_path("cranfield", "lanes", "bm25.run")
    qrels_path = shared_path("cranfield", "qrels-test.txt")
    answers: dict[str, list[tuple[str, float]]] = {}
    for line in lane.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        answers.setdefault(q, []).append((d, float(s)))
    queries = dict(line.split("\t", 1) for line in shared_path("cranfield", "queries.tsv").read_text().splitlines()
                   if line.strip())
    qrels: dict = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    return {"lane": lane, "qrels": qrels_path, "qrels_dict": qrels, "answers": answers, "queries": queries}


def test_run_from_on_cranfield_equals_the_lane_file_and_pytrec_eval(cranfield):
    """A retriever answering with bm25's own pairs (shuffled) gives bm25's evaluation."""
    by_text = {t: q for q, t in cranfield["queries"].items()}
    answers = cranfield["answers"]

    def bm25(text):
        return list(reversed(answers.get(by_text[text], [])))

    run = rs.run_from(bm25, cranfield["queries"], k=100, name="bm25")
    got = rs.evaluate(cranfield["qrels"], run, measures="ap,ndcg@10,rr", resamples=B)
    want = rs.evaluate(cranfield["qrels"], {"bm25": str(cranfield["lane"])}, measures="ap,ndcg@10,rr", resamples=B)
    assert _values(got) == _values(want)
    assert got.report()["lanes"] == want.report()["lanes"]
    oracle = _pytrec(cranfield["qrels_dict"], run.trec_text())
    for (_, q, m), v in _values(got).items():
        assert v == pytest.approx(oracle[q][PYTREC[m]], abs=1e-9), (q, m)


# ------------------------------------------------------------------ rankscope run --command

SCRIPT = r'''
import json, sys
qid, text = sys.argv[1], sys.argv[2]
answers = json.load(open(sys.argv[3]))
if qid == "fail":
    sys.stderr.write("index missing\n"); sys.exit(3)
if qid == "slow":
    import time; time.sleep(30)
if qid == "garbled":
    print("d1 1.0 extra"); sys.exit(0)
if qid == "json":
    print(json.dumps({"hits": [{"id": d, "score": s} for d, s in answers["q1"]]})); sys.exit(0)
# the text arrives as one argument, unchanged: its length is a doc id the test can check
print(f"len{len(text)} 0.001")
for d, s in answers.get(qid, []):
    print(d, s)
'''


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "retriever.py"
    path.write_text(SCRIPT)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(TOY_ANSWERS))
    return f"{sys.executable} -S {path} {{qid}} {{query}} {answers}"


def _queries(tmp_path, rows) -> Path:
    p = tmp_path / "queries.tsv"
    p.write_text("".join(f"{q}\t{t}\n" for q, t in rows))
    return p


def test_rankscope_run_command_evaluates_as_the_run_written_by_hand(tmp_path, cli_run, script):
    """Must show 4 (command line): ``rankscope run --command`` on a small script, then
    ``rankscope evaluate``, equals the same run written by hand (and pytrec_eval)."""
    hostile = "delta $(touch pwned) ; touch pwned2 `id` 'quote\" {qid}"
    queries = _queries(tmp_path, [("q1", "alpha beta"), ("q2", "gamma"), ("q3", hostile)])
    out = tmp_path / "toy.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--command", script, "--k", "4", "--out", out)
    assert rc == 0, err
    assert not (tmp_path / "pwned").exists() and not (Path.cwd() / "pwned").exists()
    by_hand = ("q1 Q0 d4 1 2.0 toy\nq1 Q0 d2 2 1.0 toy\nq1 Q0 d1 3 1.0 toy\nq1 Q0 d3 4 0.25 toy\n"
               "q2 Q0 d6 1 7.5 toy\nq2 Q0 d5 2 3.0 toy\nq2 Q0 len5 3 0.001 toy\n"
               "q3 Q0 d9 1 0.5 toy\nq3 Q0 d8 2 0.5 toy\nq3 Q0 d7 3 0.5 toy\nq3 Q0 d10 4 0.1 toy\n")
    assert out.read_text() == by_hand
    hand = tmp_path / "hand.txt"
    hand.write_text(by_hand)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in TOY_QRELS.items() for d, g in docs.items()))
    reports = {}
    for name, lane in (("made", out), ("hand", hand)):
        rep = tmp_path / f"{name}.json"
        rc, _, err = cli_run("evaluate", "--qrels", qrels, "--lane", f"toy={lane}", "--metrics", "ap,ndcg@10,rr",
                             "--resamples", B, "--out", rep)
        assert rc == 0, err
        reports[name] = json.loads(rep.read_text())
    made, hand_rep = reports["made"], reports["hand"]
    assert made["lanes"] == hand_rep["lanes"] and made["per_query"] == hand_rep["per_query"]
    assert "latency" not in hand_rep and made["latency"]["lanes"]["toy"]["queries"] == 3
    oracle = _pytrec(TOY_QRELS, by_hand)
    ev = rs.evaluate(str(qrels), {"toy": str(out)}, measures="ap,ndcg@10,rr", resamples=B)
    for (_, q, m), v in _values(ev).items():
        assert v == pytest.approx(oracle[q][PYTREC[m]], abs=1e-12), (q, m)
    side = json.loads((tmp_path / "toy.txt.provenance.json").read_text())
    assert side["retriever"] == script and side["kind"] == "command" and side["k"] == 4


def _values_docs(path: Path, qid: str) -> list[str]:
    return [line.split()[2] for line in path.read_text().splitlines() if line.split()[0] == qid]


def test_a_command_may_answer_json(tmp_path, cli_run, script):
    queries = _queries(tmp_path, [("json", "x")])
    out = tmp_path / "j.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--command", script, "--k", "2", "--out", out)
    assert rc == 0, err
    assert out.read_text() == "json Q0 d4 1 2.0 j\njson Q0 d2 2 1.0 j\n"


@pytest.mark.parametrize("argv, message", [
    (["--k", "0"], "--k: must be at least 1, not 0"),
    (["--timeout", "0"], "--timeout: must be a positive number of seconds, not 0"),
    (["--timeout", "nan"], "--timeout: must be a positive number of seconds, not nan"),
    (["--allow-remote"], "--allow-remote: only applies to --url"),
])
def test_bad_settings_are_refused_before_any_query(tmp_path, cli_run, argv, message):
    queries = _queries(tmp_path, [("q1", "a")])
    rc, _, err = cli_run("run", "--queries", queries, "--command", "false {query}", *argv, "--out", tmp_path / "r.txt")
    assert rc == 2 and err == f"rankscope: error: {message}\n"


def test_the_query_text_reaches_the_command_as_one_unchanged_argument(tmp_path, cli_run, script):
    hostile = "x $(touch pwned) ; `touch pwned2` 'a\" {qid} *"
    queries = _queries(tmp_path, [("q9", hostile)])
    out = tmp_path / "h.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--command", script, "--out", out)
    assert rc == 0, err
    assert _values_docs(out, "q9") == [f"len{len(hostile)}"]
    assert not list(tmp_path.glob("pwned*")) and not list(Path.cwd().glob("pwned*"))


@pytest.mark.parametrize("qid, problem", [
    ("fail", "the command exited with status 3: index missing"),
    ("slow", "the command gave no answer within 0.5 s (--timeout)"),
    ("garbled", "the command's output line 1: expected 'DOC SCORE', got 'd1 1.0 extra'"),
])
def test_a_failing_command_is_one_line_naming_the_query(tmp_path, cli_run, script, qid, problem):
    queries = _queries(tmp_path, [("q1", "alpha beta"), (qid, "gamma")])
    out = tmp_path / "r.txt"
    rc, stdout, err = cli_run("run", "--queries", queries, "--command", script, "--timeout", "0.5", "--out", out)
    assert rc == 2
    assert err == f"rankscope: error: {queries}:2: query '{qid}': {problem}\n"
    assert "Traceback" not in err and stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.json", "queries.tsv", "retriever.py"]


def test_a_command_that_cannot_start_names_the_query(tmp_path, cli_run):
    queries = _queries(tmp_path, [("q1", "a")])
    rc, _, err = cli_run("run", "--queries", queries, "--command", str(tmp_path / "nope") + " {query}",
                         "--out", tmp_path / "r.txt")
    assert rc == 2 and err.startswith(f"rankscope: error: {queries}:1: query 'q1': cannot run ")
    assert err.count("\n") == 1 and not (tmp_path / "r.txt").exists()


def test_a_command_without_a_placeholder_is_refused(tmp_path, cli_run):
    queries = _queries(tmp_path, [("q1", "a")])
    rc, _, err = cli_run("run", "--queries", queries, "--command", "echo d1 1", "--out", tmp_path / "r.txt")
    assert rc == 2 and err == "rankscope: error: --command: the command names neither {query} nor {qid}: every " \
                              "query would get the same answer\n"


# ------------------------------------------------------------------ rankscope run --url


class _Search(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        parts = urlsplit(self.path)
        args = parse_qs(parts.query)
        qid, text = args.get("id", [""])[0], args.get("q", [""])[0]
        if qid == "broken":
            self.send_response(500)
            self.end_headers()
            return
        if parts.path == "/away":  # a redirect to another host: must not be followed
            self.send_response(302)
            self.send_header("Location", "http://example.org/search?q=leaked")
            self.end_headers()
            return
        if qid == "slow":  # answers nothing, after the client's timeout has passed
            time.sleep(3)
            return
        pairs = TOY_ANSWERS.get(qid, []) + [(f"len{len(text)}", 0.001)]
        body = ({"hits": [{"id": d, "score": s} for d, s in pairs]} if parts.path == "/hits"
                else [[d, s] for d, s in pairs])
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.mark.parametrize("shape", ["pairs", "hits"])
def test_rankscope_run_url_against_a_local_server(tmp_path, cli_run, server, shape):
    text = "gamma & delta=1 #x ?"
    queries = _queries(tmp_path, [("q1", "alpha beta"), ("q2", text)])
    out = tmp_path / "u.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--url",
                         f"http://127.0.0.1:{server}/{shape}?q={{query}}&id={{qid}}", "--k", "2", "--out", out)
    assert rc == 0, err
    # k=2 by hand: q1 d4 (2.0), then d2 before d1 (tie, doc id descending); q2 d6, d5
    assert out.read_text() == ("q1 Q0 d4 1 2.0 u\nq1 Q0 d2 2 1.0 u\nq2 Q0 d6 1 7.5 u\nq2 Q0 d5 2 3.0 u\n")
    side = json.loads((tmp_path / "u.txt.provenance.json").read_text())
    assert side["kind"] == "url" and [q for q, _ in side["latency"]] == ["q1", "q2"]


def test_the_url_gets_the_query_percent_encoded(tmp_path, cli_run, server):
    text = "a&id=q1 #frag ?x=1 /.."
    queries = _queries(tmp_path, [("q7", text)])
    out = tmp_path / "u.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--url", f"http://localhost:{server}/pairs?id={{qid}}&q={{query}}",
                         "--out", out)
    assert rc == 0, err
    assert _values_docs(out, "q7") == [f"len{len(text)}"]  # no answers of q1: the id was not overridden


def test_a_server_error_is_one_line_naming_the_query(tmp_path, cli_run, server):
    queries = _queries(tmp_path, [("q1", "a"), ("broken", "b")])
    out = tmp_path / "u.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--url", f"http://127.0.0.1:{server}/pairs?id={{qid}}&q={{query}}",
                         "--out", out)
    assert rc == 2
    assert err == f"rankscope: error: {queries}:2: query 'broken': the server answered HTTP 500 Internal Server Error\n"
    assert not out.exists() and not Path(str(out) + ".provenance.json").exists()


def test_a_slow_server_is_one_line_naming_the_query(tmp_path, cli_run, server):
    queries = _queries(tmp_path, [("q1", "a"), ("slow", "b")])
    out = tmp_path / "u.txt"
    rc, _, err = cli_run("run", "--queries", queries, "--url", f"http://127.0.0.1:{server}/pairs?id={{qid}}&q={{query}}",
                         "--timeout", "0.5", "--out", out)
    assert rc == 2
    assert err == f"rankscope: error: {queries}:2: query 'slow': no answer within 0.5 s (--timeout)\n"
    assert not out.exists() and not Path(str(out) + ".provenance.json").exists()


def test_a_redirect_to_another_host_is_not_followed(tmp_path, cli_run, server):
    queries = _queries(tmp_path, [("q1", "a")])
    rc, _, err = cli_run("run", "--queries", queries, "--url", f"http://127.0.0.1:{server}/away?q={{query}}",
                         "--out", tmp_path / "u.txt")
    assert rc == 2
    assert err == (f"rankscope: error: {queries}:1: query 'q1': cannot reach the URL: redirected to "
                   "'http://example.org/search?q=leaked', not this machine (--allow-remote lets it)\n")


def test_a_remote_url_is_refused_unless_allowed(tmp_path, cli_run):
    queries = _queries(tmp_path, [("q1", "a")])
    rc, _, err = cli_run("run", "--queries", queries, "--url", "http://example.org/search?q={query}",
                         "--out", tmp_path / "u.txt")
    assert rc == 2 and "the host 'example.org' is not this machine" in err and "--allow-remote" in err
    assert err.count("\n") == 1


# ------------------------------------------------------------------ query buckets


@pytest.mark.parametrize("edited", [False, True])
def test_query_buckets_carry_the_latency_as_in_memory(tmp_path, edited):
    """``evaluate --buckets`` reads the sidecar as the in-memory load does: the same
    report.json byte for byte (the latency block, or the warning of an edited run)."""
    from test_bucket import _assert_same

    run = rs.run_from(toy, TOY_QUERIES, k=3, name="toy")
    out = tmp_path / "toy.txt"
    run.write(out)
    if edited:
        with open(out, "a") as fh:
            fh.write("q2 Q0 d99 3 0.1 toy\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in TOY_QRELS.items() for d, g in docs.items()))
    want = _assert_same(["--qrels", qrels, "--lane", out, "--metrics", "ap", "--resamples", B], buckets=(1, 2))
    assert ("latency" in want) is not edited
    kinds = [w["kind"] for w in want["summary"]["warnings"]]
    assert kinds.count("run_sidecar_not_used") == int(edited)
