"""Pre-bucketed inputs (kernel/scale/given.py): Hive-partitioned Parquet datasets taken as given.

The bucket function's spellings (DuckDB SQL, Spark SQL, Python, pyarrow) are checked
against the formula written out here (the first 60 bits of md5(utf8 qid), modulo n) on
ids with unicode, empty and whitespace ids and long ones. A dataset written by DuckDB
(with the readers' line numbers) or by pyarrow (no line column) is evaluated as given and
its per-query CSV is the text run's, byte for byte; the rest of report.json is the text
run's but for what names the inputs (paths, fingerprints, formats, the readers'
warnings of the text files and the note that the buckets were taken as given). A dataset
whose bucket column disagrees with the function, or written with more buckets than
``--buckets``, is refused with one line and exit 2, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_bucket import _generate, _lane_args
from test_buckets_engine import faults_dir, shared_pool, workdirs  # noqa: F401  (fixtures used below)

from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.scale import bucket as B
from rankscope_tui.kernel.scale import given as G
from rankscope_tui.kernel.scale import partition as P
from rankscope_tui.kernel.settings import LoadSettings
from rankscope_tui.kernel.workspace.loaded import Sources, load, read_inputs


def oracle(qid: str, n: int) -> int:
    """The bucket function as the README states it, written out independently."""
    return int(hashlib.md5(qid.encode("utf-8")).hexdigest()[:15], 16) % n


def _ids() -> list[str]:
    rng = random.Random(35)
    fixed = ["", " ", "  ", "\t", "0", "1", "10", "007", "-1", "1e5", "q7", "é1", "e\u0301", "日本語", "Ωmega",
             "emoji \U0001F642", "\u200b", "a b", "a\tb", "x" * 300, "y" * 5000, "MS MARCO 1048585", "Z"]
    alphabet = [chr(c) for c in [*range(0x20, 0x7f), *range(0xa0, 0x250), *range(0x4e00, 0x4e40), 0x1F600, 0x10FFFF]]
    rand = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(1500)]
    return list(dict.fromkeys(fixed + rand))


IDS = _ids()
COUNTS = (1, 2, 7, 512, 4096, 1_000_003)


# --------------------------------------------------------------------------- the spellings


def test_duckdb_sql_spelling_is_the_function():
    import duckdb
    con = duckdb.connect()
    con.register("ids", pa.table({"i": list(range(len(IDS))), "qid": IDS}))
    for n in COUNTS:
        got = dict(con.execute(f"SELECT i, {B.SQL_BUCKET.format(qid='qid', n=n)} FROM ids").fetchall())
        assert [got[i] for i in range(len(IDS))] == [oracle(q, n) for q in IDS], n


def test_python_and_pyarrow_spellings_are_the_function(tmp_path):
    for n in COUNTS:
        assert [B.bucket_of(q, n) for q in IDS] == [oracle(q, n) for q in IDS], n
        assert B.buckets_of(pa.array(IDS), n).tolist() == [oracle(q, n) for q in IDS], n
    G.write_buckets(pa.table({"qid": IDS, "i": list(range(len(IDS)))}), 7, str(tmp_path / "ds"))
    seen = 0
    for d in sorted((tmp_path / "ds").iterdir()):
        k = int(d.name.split("=")[1])
        qids = pq.read_table(d / "part-0.parquet", partitioning=None).column("qid").to_pylist()
        assert all(oracle(q, 7) == k for q in qids)
        seen += len(qids)
    assert seen == len(IDS)


def test_spark_sql_spelling_is_the_function():
    """Spark SQL's spelling run by Spark (pyspark and a Java runtime: not in CI)."""
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (Spark SQL spelling checked by Spark only)")
    spark = (pyspark.sql.SparkSession.builder.master("local[1]").appName("rankscope-bucket-spelling")
             .config("spark.ui.enabled", "false").getOrCreate())
    try:
        df = spark.createDataFrame([(i, q) for i, q in enumerate(IDS)], "i long, qid string")
        for n in COUNTS:
            rows = df.selectExpr("i", B.SPARK_SQL_BUCKET.format(qid="qid", n=n) + " AS b").collect()
            got = {r["i"]: r["b"] for r in rows}
            assert [got[i] for i in range(len(IDS))] == [oracle(q, n) for q in IDS], n
    finally:
        spark.stop()


# --------------------------------------------------------------------------- datasets


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    return _generate(tmp_path_factory.mktemp("generated"))


def _rows(g: dict) -> tuple[dict[str, pa.Table], pa.Table]:
    """Every lane's and the qrels' rows as the readers read them (qid, doc, score/grade, line)."""
    raw_lanes, raw_q, _ = read_inputs([(n, str(p)) for n, p in g["lanes"].items()], str(g["qrels"]), LoadSettings())
    lanes = {r.name: pa.table({"qid": r.qid, "doc": r.doc, "score": pa.array(r.score), "line": pa.array(r.line)})
             for r in raw_lanes}
    return lanes, pa.table({"qid": raw_q.qid, "doc": raw_q.doc, "grade": pa.array(raw_q.grade), "line": pa.array(raw_q.line)})


def _duckdb_dataset(table: pa.Table, n: int, out: Path, bucket_sql: str = B.SQL_BUCKET) -> Path:
    """``table`` written by DuckDB's own Hive writer, the bucket column by ``bucket_sql``."""
    import duckdb
    con = duckdb.connect()
    con.register("t", table)
    con.execute(f"COPY (SELECT *, {bucket_sql.format(qid='qid', n=n)} AS bucket FROM t) TO '{out}' "
                "(FORMAT parquet, PARTITION_BY (bucket))")
    return out


def _memory(cli_run, g: dict, tmp_path: Path, extra=()) -> tuple[bytes, dict]:
    m = tmp_path / "memory"
    m.mkdir()
    rc, _, err = cli_run("evaluate", *_lane_args(g["lanes"]), "--qrels", g["qrels"], *extra,
                         "--out", m / "report.json", "--per-query", m / "pq.csv")
    assert rc == 0, err
    return (m / "pq.csv").read_bytes(), json.loads((m / "report.json").read_bytes())


def _results_part(report: dict) -> dict:
    """report.json without what names the inputs (inputs, the summary's warnings)."""
    out = {k: v for k, v in report.items() if k != "inputs"}
    out["summary"] = {k: v for k, v in report["summary"].items() if k != "warnings"}
    return out


def test_duckdb_written_dataset_is_the_text_run(generated, cli_run, tmp_path, workdirs):  # noqa: F811
    g = generated
    lanes, _ = _rows(g)
    want_csv, want = _memory(cli_run, g, tmp_path)
    ds = {name: _duckdb_dataset(t, 7, tmp_path / name) for name, t in lanes.items()}
    for buckets in (["--buckets", "7"], []):  # given, and taken from the directories
        out = tmp_path / f"given{len(buckets)}"
        out.mkdir()
        rc, text, err = cli_run("evaluate", *[a for name, p in ds.items() for a in ("--lane", f"{name}={p}")],
                                "--qrels", g["qrels"], *buckets, "--out", out / "report.json",
                                "--per-query", out / "pq.csv")
        assert rc == 0, err
        assert (out / "pq.csv").read_bytes() == want_csv
        got = json.loads((out / "report.json").read_bytes())
        assert got["inputs"]["settings"].pop("engine") == {"name": "local", "buckets": 7}
        assert _results_part(got) == _results_part(want)
        assert got["inputs"]["qrels"] == want["inputs"]["qrels"]
        for name, p in ds.items():
            lane = got["inputs"]["lanes"][name]
            assert lane["format"] == "parquet" and lane["path"] == str(p)
            assert (lane["rows"], lane["queries"]) == (want["inputs"]["lanes"][name]["rows"],
                                                       want["inputs"]["lanes"][name]["queries"])
        notes = [w for w in got["summary"]["warnings"] if w["kind"] == G.KIND]
        distinct = {name: len(set(t.column("qid").to_pylist())) for name, t in lanes.items()}
        assert [(w["where"], w["count"]) for w in notes] == [(str(p), 1) for p in ds.values()]
        for w, name in zip(notes, ds):
            assert f"{distinct[name]:,} sampled qids checked" in w["message"] and "of 7" in w["message"]
        assert "query buckets taken as given" in text
        # the rest of the warnings are the text run's, named by the dataset and the same lines
        others = [w for w in got["summary"]["warnings"] if w["kind"] != G.KIND]
        for name, p in ds.items():
            for w in others:
                w["where"] = w["where"].replace(str(p), str(g["lanes"][name]))
        reader_only = {"extra_columns"}  # the text file's own warnings: the dataset has no extra fields
        assert [w for w in others if w["kind"] not in reader_only] == \
               [w for w in want["summary"]["warnings"] if w["kind"] not in reader_only]


def test_pyarrow_dataset_without_lines_and_qrels_as_a_dataset(generated, cli_run, tmp_path, workdirs):  # noqa: F811
    g = generated
    lanes, qrels = _rows(g)
    want_csv, want = _memory(cli_run, g, tmp_path, ["--ood-negatives", g["ood"]])
    args = []
    for name, t in lanes.items():
        G.write_buckets(t.drop_columns(["line"]), 5, str(tmp_path / name))
        args += ["--lane", f"{name}={tmp_path / name}"]
    G.write_buckets(qrels.drop_columns(["line"]), 5, str(tmp_path / "qrels"))
    out = tmp_path / "given"
    out.mkdir()
    rc, _, err = cli_run("evaluate", *args, "--qrels", tmp_path / "qrels", "--ood-negatives", g["ood"],
                         "--out", out / "report.json", "--per-query", out / "pq.csv")
    assert rc == 0, err
    assert (out / "pq.csv").read_bytes() == want_csv
    got = json.loads((out / "report.json").read_bytes())
    assert _results_part(got) == _results_part(want)
    assert got["inputs"]["qrels"]["format"] == "parquet"
    assert got["inputs"]["qrels"]["sha256"] == _sha_of_dataset(tmp_path / "qrels")


def _sha_of_dataset(root: Path) -> str:
    """The documented fingerprint: relative path, NUL, bytes, NUL of every part in path order."""
    h = hashlib.sha256()
    for p in sorted(root.glob("bucket=*/*.parquet"), key=lambda p: (int(p.parent.name[7:]), p.name)):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _refused(cli_run, tmp_path: Path, argv: list, tag: str = "refused") -> str:
    out = tmp_path / tag
    out.mkdir()
    rc, text, err = cli_run("evaluate", *argv, "--out", out / "report.json", "--per-query", out / "pq.csv")
    assert rc == 2 and text == "" and not any(out.iterdir())
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_bucket_column_by_another_function_is_refused_with_the_counts(generated, cli_run, tmp_path, workdirs):  # noqa: F811
    g = generated
    lanes, _ = _rows(g)
    t = lanes["alpha"]
    other = "(('0x' || substr(md5({qid}), 17, 15))::BIGINT % {n})"  # another 60 bits of the md5
    ds = _duckdb_dataset(t, 7, tmp_path / "alpha", other)
    # independently: every distinct qid is sampled (fewer than the sample), wrong where the two hashes differ
    qids = sorted(set(t.column("qid").to_pylist()))
    wrong = sum(int(hashlib.md5(q.encode()).hexdigest()[16:31], 16) % 7 != oracle(q, 7) for q in qids)
    assert 0 < wrong < len(qids)
    err = _refused(cli_run, tmp_path, ["--lane", f"alpha={ds}", "--qrels", g["qrels"], "--buckets", "7"])
    assert f"{wrong:,} of {len(qids):,} sampled qids are not in the bucket" in err
    assert err.startswith(f"rankscope: error: {ds}/bucket=") and ".parquet: " in err


def test_a_smaller_bucket_count_is_refused_and_a_larger_one_fails_the_sample(generated, cli_run, tmp_path, workdirs):  # noqa: F811
    g = generated
    lanes, _ = _rows(g)
    ds = _duckdb_dataset(lanes["alpha"], 7, tmp_path / "alpha")
    err = _refused(cli_run, tmp_path, ["--lane", f"alpha={ds}", "--qrels", g["qrels"], "--buckets", "5"])
    assert f"{ds}: has bucket=6: it was written with more than 5 buckets" in err and "--buckets 7" in err
    err = _refused(cli_run, tmp_path, ["--lane", f"alpha={ds}", "--qrels", g["qrels"], "--buckets", "9"], "larger")
    qids = set(lanes["alpha"].column("qid").to_pylist())
    wrong = sum(oracle(q, 9) != oracle(q, 7) for q in qids)
    assert f"{wrong:,} of {len(qids):,} sampled qids" in err and "among 9" in err


def test_the_sample_is_capped(generated, tmp_path):
    lanes, _ = _rows(generated)
    ds = G.read_dataset(str(_duckdb_dataset(lanes["alpha"], 7, tmp_path / "alpha", "(({qid} = {qid})::INT * 0)")))
    with pytest.raises(InputError, match=r"of 50 sampled qids") as e:
        G.check_sample(ds, 7, None, "run", sample=50)
    assert "/bucket=0/" in str(e.value)  # every row in bucket 0
    assert G.check_sample(G.read_dataset(str(_duckdb_dataset(lanes["alpha"], 7, tmp_path / "ok"))), 7, None, "run",
                          sample=50) == 50


def test_bad_rows_name_the_bucket_and_line(generated, cli_run, tmp_path, workdirs):  # noqa: F811
    g = generated
    lanes, _ = _rows(g)
    t = lanes["alpha"]
    scores = t.column("score").to_pylist()
    scores[10] = None
    ds = _duckdb_dataset(t.set_column(2, "score", pa.array(scores, pa.float64())), 3, tmp_path / "alpha")
    err = _refused(cli_run, tmp_path, ["--lane", f"alpha={ds}", "--qrels", g["qrels"]])
    k = oracle(t.column("qid")[10].as_py(), 3)
    assert err.startswith(f"rankscope: error: {ds}/bucket={k}:{t.column('line')[10].as_py()}: "), err


def test_bucket_directory_names_are_checked(tmp_path):
    (tmp_path / "a" / "bucket=x").mkdir(parents=True)
    with pytest.raises(InputError, match="'bucket=x' is not a bucket directory"):
        G.read_dataset(str(tmp_path / "a"))
    (tmp_path / "b" / "bucket=3").mkdir(parents=True)
    (tmp_path / "b" / "bucket=03").mkdir()
    with pytest.raises(InputError, match="bucket 3 is written twice"):
        G.read_dataset(str(tmp_path / "b"))


def test_the_in_memory_path_says_what_the_directory_is(generated, tmp_path):
    lanes, _ = _rows(generated)
    G.write_buckets(lanes["alpha"], 3, str(tmp_path / "alpha"))
    with pytest.raises(InputError, match="is a directory of query buckets"):
        load(Sources((("alpha", str(tmp_path / "alpha")),), str(generated["qrels"])))


def test_a_shipped_given_bucket_is_read_as_given(generated, tmp_path):
    """The Dask road carries which inputs are pre-bucketed: a shipped bucket gives the local one's result."""
    from rankscope_tui.kernel.scale.dask_engine import run_shipped, ship

    lanes, _ = _rows(generated)
    G.write_buckets(lanes["alpha"].drop_columns(["line"]), 3, str(tmp_path / "alpha"))
    plan = B.BucketPlan((("alpha", str(tmp_path / "alpha")),), str(generated["qrels"]))
    files = P.BucketFiles(1, (("alpha", str(tmp_path / "alpha" / "bucket=1")),), str(tmp_path / "none"), None,
                          ("lane0",))
    local = P.bucket_task(files, plan)
    shipped = run_shipped(ship(files), plan)
    assert local.queries.equals(shipped.queries) and local.measures.equals(shipped.measures)
    assert local.n_queries == len({q for q in lanes["alpha"].column("qid").to_pylist() if oracle(q, 3) == 1})



def test_compare_on_datasets_is_compare_on_the_text(generated, cli_run, tmp_path, workdirs):  # noqa: F811
    """compare reads the datasets in their buckets too: its rows are the text run's."""
    g = generated
    lanes, _ = _rows(g)
    args = []
    for name, t in lanes.items():
        _duckdb_dataset(t, 7, tmp_path / name)
        args += ["--lane", f"{name}={tmp_path / name}"]
    m, b = tmp_path / "m.json", tmp_path / "b.json"
    rc, _, err = cli_run("compare", *_lane_args(g["lanes"]), "--qrels", g["qrels"], "--resamples", "999", "--no-log", "--out", m)
    assert rc == 0, err
    rc, _, err = cli_run("compare", *args, "--qrels", g["qrels"], "--resamples", "999", "--no-log", "--out", b)
    assert rc == 0, err
    want, got = json.loads(m.read_bytes()), json.loads(b.read_bytes())
    assert got["comparisons"] == want["comparisons"] and len(got["comparisons"]) > 0


def test_the_fingerprint_stops_when_told(generated, tmp_path):
    """A failed run sets the event: the fingerprint's reading ends instead of holding the exit."""
    import threading

    lanes, _ = _rows(generated)
    G.write_buckets(lanes["alpha"], 3, str(tmp_path / "alpha"))
    ds = G.read_dataset(str(tmp_path / "alpha"))
    assert G.dataset_sha256(ds) == _sha_of_dataset(tmp_path / "alpha")
    stop = threading.Event()
    stop.set()
    assert G.dataset_sha256(ds, stop) == ""
