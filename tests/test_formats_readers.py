"""Every input format reads to the same numbers as the same data written as TREC.

For each format (compressions, MS MARCO runs, BEIR qrels with and without the header,
header-named tables, JSON Lines, MTEB predictions, Parquet in each column convention,
a lane in shard files) the same data is written in that format and as TREC text, and
``rankscope evaluate`` must give byte-identical per-query CSV and report.json (the
``inputs`` block, which names the files and their digests, aside). A malformed example
of each format is refused with one line naming the file and its line or row, exit 2,
nothing written.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankscope_tui import cli

# (qid, doc, score): ties in q1 and q2 (the doc-id rule orders them); ids that look like numbers
RUN = [("q1", "d1", 2.5), ("q1", "d2", 1.5), ("q1", "d3", 1.5), ("q1", "d9", 0.25),
       ("q2", "d3", 0.5), ("q2", "d1", 0.5), ("q2", "d4", -1.0),
       ("10", "d7", 3.0), ("10", "d8", 2.0), ("10", "7", 1.0)]
QRELS = [("q1", "d1", 1), ("q1", "d3", 2), ("q1", "d5", 0), ("q2", "d4", 1), ("10", "d8", 1), ("10", "7", 3),
         ("q3", "dx", 0)]

RUN_COLS = {"ranx": ("q_id", "doc_id", "score"), "PyTerrier": ("qid", "docno", "score"),
            "ir_measures": ("query_id", "doc_id", "score"), "BEIR": ("query-id", "corpus-id", "score")}
QRELS_COLS = {"ranx": ("q_id", "doc_id", "score"), "PyTerrier": ("qid", "docno", "label"),
              "ir_measures": ("query_id", "doc_id", "relevance"), "BEIR": ("query-id", "corpus-id", "score")}


def _ranked(rows):
    """``rows`` with a rank per query in file order (1, 2, ...)."""
    seen: dict[str, int] = {}
    out = []
    for q, d, s in rows:
        seen[q] = seen.get(q, 0) + 1
        out.append((q, d, s, seen[q]))
    return out


def trec_run(rows) -> bytes:
    return "".join(f"{q} Q0 {d} {r} {s!r} tag\n" for q, d, s, r in _ranked(rows)).encode()


def trec_qrels(rows) -> bytes:
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def table_of(rows, names, int_ids: bool = False) -> pa.Table:
    return pa.table({names[0]: [r[0] for r in rows], names[1]: [r[1] for r in rows], names[2]: [r[2] for r in rows]})


def zstd(data: bytes) -> bytes:
    return pa.compress(data, codec="zstd", asbytes=True)


def lz4(data: bytes) -> bytes:
    return pa.compress(data, codec="lz4", asbytes=True)


def mteb_json(rows, subsets=("default",), splits=("test",)) -> bytes:
    preds: dict = {}
    for q, d, s in rows:
        preds.setdefault(q, {})[d] = s
    doc = {"mteb_model_meta": {"model_name": "m", "revision": "r"}}
    for sub in subsets:
        doc[sub] = {sp: preds for sp in splits}
    return json.dumps(doc, indent=1).encode()


def jsonl(rows, names) -> bytes:
    return "".join(json.dumps({names[0]: q, names[1]: d, names[2]: v, "iteration": "0"}) + "\n"
                   for q, d, v in rows).encode()


def tsv(rows, names, header=True) -> bytes:
    head = "\t".join(names) + "\n" if header else ""
    return (head + "".join(f"{q}\t{d}\t{v}\n" for q, d, v in rows)).encode()


def msmarco(rows) -> bytes:
    return "".join(f"{q}\t{d}\t{r}\n" for q, d, _, r in _ranked(rows)).encode()


# a ranks-only run is the same data as a TREC run scored -rank
MSMARCO_TWIN = [(q, d, float(-r)) for q, d, _, r in _ranked(RUN)]

# name -> (files {name: bytes}, --lane spec, extra options, TREC twin run rows)
RUN_CASES = {
    "gzip": ({"l.run.gz": gzip.compress(trec_run(RUN))}, "l.run.gz", [], RUN),
    "bzip2": ({"l.run": bz2.compress(trec_run(RUN))}, "l.run", [], RUN),  # by content, not by suffix
    "xz": ({"l.xz": lzma.compress(trec_run(RUN))}, "l.xz", [], RUN),
    "zstd": ({"l.run.zst": zstd(trec_run(RUN))}, "l.run.zst", [], RUN),
    "lz4": ({"l.run.lz4": lz4(trec_run(RUN))}, "l.run.lz4", [], RUN),
    "msmarco": ({"l.tsv": msmarco(RUN)}, "l.tsv", [], MSMARCO_TWIN),
    "msmarco.gz": ({"l.tsv.gz": gzip.compress(msmarco(RUN))}, "l.tsv.gz", [], MSMARCO_TWIN),
    "header tsv": ({"l.tsv": tsv(RUN, ("qid", "docno", "score"))}, "l.tsv", [], RUN),
    "json": ({"l.json": json.dumps({q: {d: s for qq, d, s in RUN if qq == q} for q, _, _ in RUN}).encode()},
             "l.json", [], RUN),
    "jsonl": ({"l.jsonl": jsonl(RUN, ("query_id", "doc_id", "score"))}, "l.jsonl", [], RUN),
    "jsonl.xz": ({"l.jsonl.xz": lzma.compress(jsonl(RUN, ("query_id", "doc_id", "score")))}, "l.jsonl.xz", [], RUN),
    "mteb": ({"l.json": mteb_json(RUN)}, "l.json", [], RUN),
    "mteb chosen": ({"l.json": mteb_json(RUN, ("en", "fr"), ("dev", "test"))}, "l.json",
                    ["--mteb-subset", "fr", "--mteb-split", "test"], RUN),
    **{f"parquet {c}": ({"l.parquet": parquet_bytes(table_of(RUN, n))}, "l.parquet", [], RUN)
       for c, n in RUN_COLS.items()},
    "parquet rank only": ({"l.parquet": parquet_bytes(pa.table({
        "qid": [q for q, *_ in _ranked(RUN)], "docno": [d for _, d, *_ in _ranked(RUN)],
        "rank": [r for *_, r in _ranked(RUN)]}))}, "l.parquet", [], MSMARCO_TWIN),
    "parquet.gz": ({"l.pq": gzip.compress(parquet_bytes(table_of(RUN, RUN_COLS["ranx"])))}, "l.pq", [], RUN),
    "parquet mapped": ({"l.parquet": parquet_bytes(table_of(RUN, ("Q", "D", "S")))}, "l.parquet",
                       ["--run-columns", "query=Q,doc=D,score=S"], RUN),
    "parquet int ids": ({"l.parquet": parquet_bytes(pa.table({
        "qid": pa.array([10, 10, 10, 11], pa.int64()), "docno": pa.array([7, 8, 9, 7], pa.int32()),
        "score": [1.0, 3.0, 2.0, 1.0]}))}, "l.parquet", [],
        [("10", "7", 1.0), ("10", "8", 3.0), ("10", "9", 2.0), ("11", "7", 1.0)]),
    "shards": ({"a.run": trec_run(RUN[:2] + RUN[7:]), "b.run": trec_run(RUN[2:7])}, "a.run,b.run", [], RUN),
    "shards glob": ({"s1.run": trec_run(RUN[:5]), "s2.run.gz": gzip.compress(msmarco(RUN[5:]))}, "s*.run*", [],
                    RUN[:5] + [(q, d, float(-r)) for q, d, _, r in _ranked(RUN[5:])]),
}

QRELS_CASES = {
    "beir header": ({"q.tsv": tsv(QRELS, ("query-id", "corpus-id", "score"))}, "q.tsv", []),
    "beir no header": ({"q.tsv": tsv(QRELS, (), header=False)}, "q.tsv", []),
    "beir header bz2": ({"q.tsv.bz2": bz2.compress(tsv(QRELS, ("query-id", "corpus-id", "score")))}, "q.tsv.bz2", []),
    "beir spaces": ({"q.txt": b"query-id corpus-id score\n" + b"".join(f"{q} {d} {g}\n".encode() for q, d, g in QRELS)},
                    "q.txt", []),
    "pyterrier tsv": ({"q.tsv": tsv(QRELS, ("qid", "docno", "label"))}, "q.tsv", []),
    "jsonl": ({"q.jsonl": jsonl(QRELS, ("query_id", "doc_id", "relevance"))}, "q.jsonl", []),
    "zstd": ({"q.txt": zstd(trec_qrels(QRELS))}, "q.txt", []),
    "lz4": ({"q.txt": lz4(trec_qrels(QRELS))}, "q.txt", []),
    **{f"parquet {c}": ({"q.parquet": parquet_bytes(table_of(QRELS, n))}, "q.parquet", [])
       for c, n in QRELS_COLS.items()},
    "parquet float labels": ({"q.parquet": parquet_bytes(pa.table({
        "qid": [q for q, *_ in QRELS], "docno": [d for _, d, _ in QRELS],
        "label": pa.array([float(g) for *_, g in QRELS], pa.float64())}))}, "q.parquet", []),
    "parquet mapped": ({"q.parquet": parquet_bytes(table_of(QRELS, ("Q", "D", "G")))}, "q.parquet",
                       ["--qrels-columns", "query=Q,doc=D,relevance=G"]),
}


def _evaluate(d, lane: str, qrels: str, extra: list[str], capsys):
    out, per_query = d / "report.json", d / "per_query.csv"
    rc = cli.main(["evaluate", "--lane", f"lane={d / lane}" if "," not in lane and "*" not in lane
                   else "lane=" + ",".join(str(d / p) for p in lane.split(",")),
                   "--qrels", str(d / qrels), "--resamples", "50", "--seed", "3",
                   "--out", str(out), "--per-query", str(per_query), *extra])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    report = json.loads(out.read_text())
    for role in ("lanes", "qrels"):  # the files' names, digests and formats differ by design
        for f in (report["inputs"][role].values() if role == "lanes" else [report["inputs"][role]]):
            f.pop("path"), f.pop("sha256"), f.pop("format"), f.pop("columns", None)
    return json.dumps(report, sort_keys=True), per_query.read_bytes(), captured.out


def _write(d, files: dict) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (d / name).write_bytes(data)


def _baseline(tmp_path, twin, qrels_rows, capsys):
    d = tmp_path / "trec"
    _write(d, {"l.run": trec_run(twin), "q.txt": trec_qrels(qrels_rows)})
    return _evaluate(d, "l.run", "q.txt", [], capsys)


@pytest.mark.parametrize("case", list(RUN_CASES))
def test_run_format_reads_like_trec(tmp_path, capsys, case):
    files, spec, extra, twin = RUN_CASES[case]
    qrels_rows = QRELS if twin is not RUN_CASES["parquet int ids"][3] else [("10", "8", 1), ("11", "7", 0)]
    expected = _baseline(tmp_path, twin, qrels_rows, capsys)
    d = tmp_path / "fmt"
    _write(d, {**files, "q.txt": trec_qrels(qrels_rows)})
    got = _evaluate(d, spec, "q.txt", extra, capsys)
    assert got[1] == expected[1]  # per-query values, byte for byte
    assert got[0] == expected[0]  # report numbers
    assert got[2] == expected[2]  # the printed report


@pytest.mark.parametrize("case", list(QRELS_CASES))
def test_qrels_format_reads_like_trec(tmp_path, capsys, case):
    files, spec, extra = QRELS_CASES[case]
    expected = _baseline(tmp_path, RUN, QRELS, capsys)
    d = tmp_path / "fmt"
    _write(d, {**files, "l.run": trec_run(RUN)})
    got = _evaluate(d, "l.run", spec, extra, capsys)
    assert got == expected


def test_every_format_is_told_by_content(tmp_path):
    """Which reader each case used (so no case passed by falling back to another format)."""
    from rankscope_tui.kernel.inputs import readers

    told = {}
    for case in ("gzip", "msmarco", "header tsv", "json", "jsonl", "mteb", "parquet ranx", "parquet.gz"):
        files, spec, _, _ = RUN_CASES[case]
        d = tmp_path / case.replace(" ", "_")
        _write(d, files)
        told[case] = readers.read_lane(str(d / spec), "a").format
    assert told == {"gzip": "trec", "msmarco": "msmarco", "header tsv": "tsv", "json": "json", "jsonl": "jsonl",
                    "mteb": "mteb", "parquet ranx": "parquet", "parquet.gz": "parquet"}
    qtold = {}
    for case in ("beir header", "beir no header", "jsonl", "parquet BEIR"):
        files, spec, _ = QRELS_CASES[case]
        d = tmp_path / ("q" + case.replace(" ", "_"))
        _write(d, files)
        qtold[case] = readers.read_qrels(str(d / spec)).format
    assert qtold == {"beir header": "beir", "beir no header": "beir", "jsonl": "jsonl", "parquet BEIR": "parquet"}


# ---------------------------------------------------------------------------
# malformed examples: one line naming the file and line or row, exit 2, nothing written

BAD_RUNS = {
    "gzip truncated": ({"l.run.gz": gzip.compress(trec_run(RUN))[:-6]}, "l.run.gz", [],
                       r"l\.run\.gz: truncated or corrupt gzip"),
    "zstd bad line": ({"l.run": zstd(trec_run(RUN).replace(b"0.25", b"x.25"))}, "l.run", [],
                      r"l\.run:4: score is not a number: 'x\.25'"),
    "lz4 bad line": ({"l.run": lz4(trec_run(RUN)[:40] + b"\n" + trec_run(RUN)[40:])}, "l.run", [],
                     r"l\.run:\d+: expected 6 fields"),
    "json repeated doc": ({"l.json": b'{"q1": {"d1": 1,\n "d1": 2}}'}, "l.json", [],
                          r"l\.json:2: doc 'd1' appears twice in query 'q1' \(first at line 1\)"),
    "zstd truncated": ({"l.run": zstd(trec_run(RUN))[:-6]}, "l.run", [], r"l\.run: truncated or corrupt zstd"),
    "lz4 truncated": ({"l.run": lz4(trec_run(RUN))[:-6]}, "l.run", [], r"l\.run: truncated or corrupt lz4"),
    "bz2 truncated": ({"l.run": bz2.compress(trec_run(RUN))[:-6]}, "l.run", [], r"l\.run: truncated or corrupt bzip2"),
    "xz truncated": ({"l.run": lzma.compress(trec_run(RUN))[:-6]}, "l.run", [], r"l\.run: truncated or corrupt xz"),
    "msmarco bad rank": ({"l.tsv": b"q1\td1\t1\nq1\td2\tx\n"}, "l.tsv", [], r"l\.tsv:2: rank is not an integer: 'x'"),
    "msmarco repeated rank": ({"l.tsv": b"q1\td1\t1\nq2\td1\t1\nq1\td2\t1\n"}, "l.tsv", [],
                              r"l\.tsv:3: rank 1 appears twice in query 'q1' \(first at line 1\)"),
    "msmarco 4 fields": ({"l.tsv": b"q1\td1\t1\nq1\td2\t2\textra\n"}, "l.tsv", [],
                         r"l\.tsv:2: expected 3 fields 'qid docid rank'"),
    "3 fields with scores": ({"l.tsv": b"q1\td1\t0.5\n"}, "l.tsv", [], r"l\.tsv:1: 3 fields read as an MS MARCO run"),
    "header tsv bad score": ({"l.tsv": b"qid\tdocno\tscore\nq1\td1\t1\nq1\td2\tnan?\n"}, "l.tsv", [],
                             r"l\.tsv:3: score is not a number"),
    "jsonl bad score": ({"l.jsonl": b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
                                    b'{"query_id": "q1", "doc_id": "d2", "score": "high"}\n'}, "l.jsonl", [],
                        r"l\.jsonl:2: score \(score\) must be a number"),
    "jsonl missing key": ({"l.jsonl": b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n\n'
                                      b'{"query_id": "q1", "score": 2}\n'}, "l.jsonl", [],
                          r"l\.jsonl:3: row without the key 'doc_id'"),
    "jsonl broken line": ({"l.jsonl": b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"query_id": \n'}, "l.jsonl",
                          [], r"l\.jsonl:2: invalid JSON"),
    "jsonl lone surrogate": ({"l.jsonl": b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
                                         b'{"query_id": "q\\ud800", "doc_id": "d2", "score": 2}\n'}, "l.jsonl", [],
                             r"l\.jsonl:2: query_id .* lone surrogate"),
    "jsonl NaN": ({"l.jsonl": b'{"query_id": "q1", "doc_id": "d1", "score": NaN}\n'}, "l.jsonl", [],
                  r"l\.jsonl:1: NaN is not a JSON number"),
    "jsonl key twice": ({"l.jsonl": b'{"query_id": "q1", "doc_id": "d1", "score": 1, "score": 2}\n'}, "l.jsonl", [],
                        r"l\.jsonl:1: key 'score' appears twice"),
    "mteb two subsets": ({"l.json": mteb_json(RUN, ("en", "fr"))}, "l.json", [],
                         r"l\.json: MTEB predictions of several subsets \('en', 'fr'\): choose one with --mteb-subset"),
    "mteb two splits": ({"l.json": mteb_json(RUN, ("en",), ("dev", "test"))}, "l.json", [],
                        r"several splits \('dev', 'test'\): choose one with --mteb-split"),
    "mteb unknown subset": ({"l.json": mteb_json(RUN, ("en",))}, "l.json", ["--mteb-subset", "de"],
                            r"l\.json: no subset 'de' in these MTEB predictions \(subsets: 'en'\)"),
    "mteb bad score": ({"l.json": b'{"mteb_model_meta": {},\n "default": {"test": {"q1": {\n"d1": "x"}}}}'}, "l.json",
                       [], r"l\.json:3: score for query 'q1', doc 'd1' is not a number"),
    "parquet null score": ({"l.parquet": parquet_bytes(pa.table({"qid": ["q1", "q1"], "docno": ["d1", "d2"],
                                                                 "score": [1.0, None]}))}, "l.parquet", [],
                           r"l\.parquet:2: score \(column 'score'\) is missing"),
    "parquet unknown columns": ({"l.parquet": parquet_bytes(table_of(RUN, ("Q", "D", "S")))}, "l.parquet", [],
                                r"l\.parquet: no known run columns among: Q, D, S"),
    "parquet ambiguous": ({"l.parquet": parquet_bytes(pa.table({"qid": ["q"], "docno": ["d"], "q_id": ["q"],
                                                                "doc_id": ["d"], "score": [1.0]}))}, "l.parquet", [],
                          r"l\.parquet: ambiguous columns"),
    "parquet truncated": ({"l.parquet": parquet_bytes(table_of(RUN, RUN_COLS["ranx"]))[:-20]}, "l.parquet", [],
                          r"l\.parquet: not a readable Parquet file"),
    "shards overlap": ({"a.run": trec_run(RUN[:3]), "b.run": trec_run(RUN[2:])}, "a.run,b.run", [],
                       r"b\.run:1: doc 'd3' of query 'q1' is in two shards of lane 'lane': .*a\.run:3 and here"),
    "shards no match": ({"a.run": trec_run(RUN)}, "a.run,zz*.run", [], r"zz\*\.run: no file matches this pattern"),
    # a.run read by the fast path, b.run (a seventh field) by the general reader
    "shards overlap across readers": ({"a.run": trec_run(RUN[:3]),
                                       "b.run": trec_run(RUN[2:]).replace(b" tag\n", b" tag x\n", 1)}, "a.run,b.run",
                                      [], r"b\.run:1: doc 'd3' of query 'q1' is in two shards of lane 'lane': "
                                          r".*a\.run:3 and here"),
    "explicit format refused": ({"l.run": trec_run(RUN)}, "l.run", ["--run-format", "msmarco"],
                                r"l\.run:1: expected 3 fields 'qid docid rank'"),
    "columns unused": ({"l.run": trec_run(RUN)}, "l.run", ["--run-columns", "query=a,doc=b,score=c"],
                       r"--run-columns: names table columns, but no lane was read as a table"),
    "mteb option unused": ({"l.run": trec_run(RUN)}, "l.run", ["--mteb-split", "test"],
                           r"--mteb-split: chooses among MTEB predictions, but no lane is"),
}

BAD_QRELS = {
    "beir bad grade": ({"q.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1.5\n"}, "q.tsv",
                       r"q\.tsv:3: grade is not an integer: '1\.5'"),
    "beir no header bad grade": ({"q.tsv": b"q1\td1\t1\nq1\td2\tx\n"}, "q.tsv", r"q\.tsv:2: grade is not an integer"),
    "beir 4 fields later": ({"q.tsv": b"q1\td1\t1\nq1\t0\td2\t1\n"}, "q.tsv", r"q\.tsv:2: expected 3 fields"),
    "jsonl bad relevance": ({"q.jsonl": b'{"query_id": "q1", "doc_id": "d1", "relevance": 1.5}\n'}, "q.jsonl",
                            r"q\.jsonl:1: relevance \(relevance\) is not an integer"),
    "parquet float grade": ({"q.parquet": parquet_bytes(pa.table({"qid": ["q1", "q1"], "docno": ["a", "b"],
                                                                  "label": [1.0, 0.5]}))}, "q.parquet",
                            r"q\.parquet:2: grade is not an integer"),
    "parquet float ids": ({"q.parquet": parquet_bytes(pa.table({"query_id": [1.0], "doc_id": ["a"],
                                                                "relevance": [1]}))}, "q.parquet",
                          r"q\.parquet: query ids \(column 'query_id'\) are floating-point"),
}


def _refused(tmp_path, capsys, files, lane, qrels, extra, pattern):
    import re

    d = tmp_path / "bad"
    _write(d, files)
    out = d / "report.json"
    lane_arg = "lane=" + ",".join(str(d / p) for p in lane.split(","))
    rc = cli.main(["evaluate", "--lane", lane_arg, "--qrels", str(d / qrels), "--resamples", "0",
                   "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: "), err
    assert re.search(pattern, lines[0]), lines[0]
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_malformed_run_is_refused_naming_the_place(tmp_path, capsys, case):
    files, lane, extra, pattern = BAD_RUNS[case]
    _refused(tmp_path, capsys, {**files, "q.txt": trec_qrels(QRELS)}, lane, "q.txt", extra, pattern)


@pytest.mark.parametrize("case", list(BAD_QRELS))
def test_malformed_qrels_are_refused_naming_the_place(tmp_path, capsys, case):
    files, qrels, pattern = BAD_QRELS[case]
    _refused(tmp_path, capsys, {**files, "l.run": trec_run(RUN)}, "l.run", qrels, [], pattern)


def test_a_lane_whose_shards_go_through_two_readers_is_merged(tmp_path, cli_run):
    """A clean shard (the fast path's ids) and a shard with a seventh field on a line (the
    general reader's ids, the field ignored with a warning as trec_eval does) make one lane.

    Hand-worked: q1 ranks d2 (3.0), d1 (2.0), d3 (1.0) with d1 and d3 relevant, so
    rr = 1/2 and ap = (1/2 + 2/3) / 2 = 7/12; q2 retrieves only the non-relevant d4, so
    both are 0."""
    from rankscope_tui.kernel.inputs import formats, readers

    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d4 1 1.0 t\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 3.0 t extra\nq1 Q0 d3 2 1.0 t\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d3 1\nq2 0 d5 1\n")
    a, b = str(tmp_path / "a.run"), str(tmp_path / "b.run")
    (lane,) = readers.read_lanes([("x", f"{a},{b}")], [[a, b]], formats.InputOptions())
    assert lane.qid.to_pylist() == ["q1", "q2", "q1", "q1"] and lane.doc.to_pylist() == ["d1", "d4", "d2", "d3"]
    assert lane.score.tolist() == [2.0, 1.0, 3.0, 1.0] and list(lane.line) == [1, 2, 1, 2]
    assert [(w.kind, w.where) for w in lane.warnings] == [("extra_columns", f"{b}:1")]
    per_query = tmp_path / "pq.csv"
    rc, out, err = cli_run("evaluate", "--lane", f"x={a},{b}", "--qrels", tmp_path / "q.txt", "--metrics", "rr,ap",
                         "--resamples", "0", "--per-query", per_query)
    assert rc == 0, err
    assert f"warning: {b}:1: lines with fields after the 6th" in out
    rows = {r["qid"]: r for r in csv.DictReader(per_query.open()) if r["level"] == "doc"}
    assert set(rows) == {"q1", "q2"}
    assert float(rows["q1"]["rr"]) == pytest.approx(1 / 2) and float(rows["q1"]["ap"]) == pytest.approx(7 / 12)
    assert float(rows["q2"]["rr"]) == 0.0 and float(rows["q2"]["ap"]) == 0.0


def test_cranfield_lanes_in_other_formats_read_like_trec(tmp_path, capsys):
    """One real-sized case: the Cranfield lanes as Parquet (PyTerrier columns), zstd TREC
    and JSON Lines, the qrels as BEIR TSV: the same per-query CSV and report numbers (doc
    and group level) as the TREC files."""
    import pyarrow.csv as pcsv
    from support import shared_path

    C = shared_path("cranfield")
    names = ["qid", "q0", "docno", "rank", "score", "tag"]
    opts = pcsv.ReadOptions(column_names=names)
    parse = pcsv.ParseOptions(delimiter=" ")
    conv = pcsv.ConvertOptions(column_types={"qid": pa.string(), "docno": pa.string(), "score": pa.float64()})
    d = tmp_path / "alt"
    d.mkdir()
    alt_lanes, trec_lanes = [], []
    for i, lane in enumerate(("bm25", "dense", "tfidf")):
        src = C / "lanes" / f"{lane}.run"
        trec_lanes += ["--lane", f"{lane}={src}"]
        if i == 0:
            t = pcsv.read_csv(str(src), read_options=opts, parse_options=parse, convert_options=conv)
            pq.write_table(t.select(["qid", "docno", "score", "rank"]), str(d / f"{lane}.parquet"))
            alt_lanes += ["--lane", f"{lane}={d / f'{lane}.parquet'}"]
        elif i == 1:
            (d / f"{lane}.run").write_bytes(zstd(src.read_bytes()))
            alt_lanes += ["--lane", f"{lane}={d / f'{lane}.run'}"]
        else:
            t = pcsv.read_csv(str(src), read_options=opts, parse_options=parse, convert_options=conv)
            (d / f"{lane}.jsonl").write_bytes(jsonl(list(zip(*(t.column(c).to_pylist() for c in ("qid", "docno", "score")))),
                                                    ("query_id", "doc_id", "score")))
            alt_lanes += ["--lane", f"{lane}={d / f'{lane}.jsonl'}"]
    qrels = [ln.split() for ln in (C / "qrels-test.txt").read_text().splitlines() if ln.strip()]
    (d / "qrels.tsv").write_bytes(tsv([(q, doc, int(g)) for q, _, doc, g in qrels], ("query-id", "corpus-id", "score")))

    def run(lanes, qrels_path):
        out, per_query = tmp_path / "r.json", tmp_path / "pq.csv"
        for p in (out, per_query):
            p.unlink(missing_ok=True)
        rc = cli.main(["evaluate", *lanes, "--qrels", str(qrels_path), "--group-sep", "#", "--resamples", "0",
                       "--out", str(out), "--per-query", str(per_query)])
        err = capsys.readouterr().err
        assert rc == 0, err
        report = json.loads(out.read_text())
        for f in [*report["inputs"]["lanes"].values(), report["inputs"]["qrels"]]:
            f.pop("path"), f.pop("sha256"), f.pop("format"), f.pop("columns", None)
        for w in report["summary"]["warnings"]:  # the same line, in a file of another name
            w["where"] = w["where"].rpartition(":")[2]
        return json.dumps(report, sort_keys=True), per_query.read_bytes()

    trec = run(trec_lanes, C / "qrels-test.txt")
    alt = run(alt_lanes, d / "qrels.tsv")
    assert alt[1] == trec[1]
    assert alt[0] == trec[0]


def test_parquet_through_a_pipe(tmp_path):
    """A Parquet run given as a pipe (``<(cat run.parquet)``) is read whole and told by its bytes."""
    import os
    import threading

    from rankscope_tui.kernel.inputs import readers

    data = parquet_bytes(table_of(RUN, RUN_COLS["ir_measures"]))
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=feed)
    t.start()
    try:
        lane = readers.read_lane(f"/dev/fd/{r}", "a")
    finally:
        t.join()
        os.close(r)
    assert lane.format == "parquet" and lane.score.tolist() == [s for *_, s in RUN]
