"""Pre-bucketed datasets written by DuckDB and by Spark SQL, against the same rows as text in memory.

    .venv/bin/pip install pyspark            # needs a Java runtime (17+ for Spark 4)
    .venv/bin/python benchmarks/spark_prebucketed.py [--rows 1000000] [--buckets 16] [--master local[2]]

The rows of ``bench_prebucketed.generate`` (``--rows / 100`` users x 100, with qrels) as
TREC text and as two Hive datasets written by DuckDB with ``bucket.SQL_BUCKET``; Spark
then reads the DuckDB datasets' rows, drops their bucket column, computes it again with
``bucket.SPARK_SQL_BUCKET`` and writes its own datasets (``partitionBy("bucket")``).
Three ``rankscope evaluate --per-query`` processes: the text in memory, the DuckDB
datasets and the Spark datasets (taken as given); their per-query CSVs must be byte for
byte the same. Writes ``benchmarks/results/prebucketed_identity.md`` and ``.json``. Not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))

from benchmarks.bench_prebucketed import generate  # noqa: E402


def spark_datasets(work: Path, n: int, master: str) -> dict:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from rankscope_tui.kernel.scale.bucket import SPARK_SQL_BUCKET

    t = time.perf_counter()
    spark = (SparkSession.builder.master(master).appName("rankscope-prebucketed")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "2g").getOrCreate())
    started = time.perf_counter() - t
    try:
        import pyspark

        t = time.perf_counter()
        for name in ("run", "qrels"):
            rows = spark.read.parquet(str(work / name)).drop("bucket")  # the DuckDB dataset's rows, bucket dropped
            rows.withColumn("bucket", F.expr(SPARK_SQL_BUCKET.format(qid="qid", n=n))) \
                .write.partitionBy("bucket").parquet(str(work / f"spark_{name}"))
        wrote = time.perf_counter() - t
        return {"pyspark": pyspark.__version__, "session_start_s": round(started, 1), "write_s": round(wrote, 1)}
    finally:
        spark.stop()


def evaluate(run: Path, qrels: Path, out: Path) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rankscope_tui.cli", "evaluate", "--lane", f"gen={run}", "--qrels", str(qrels),
                    "--resamples", "0", "--per-query", str(out)], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return round(time.perf_counter() - t, 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--buckets", type=int, default=16)
    ap.add_argument("--master", default="local[2]")
    a = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rankscope-spark-prebucketed-"))
    try:
        data = generate(work, a.rows, a.buckets)
        data["spark"] = spark_datasets(work, a.buckets, a.master)
        seconds = {"text_in_memory": evaluate(work / "run.txt", work / "qrels.txt", work / "text.csv"),
                   "duckdb_datasets": evaluate(work / "run", work / "qrels", work / "duckdb.csv"),
                   "spark_datasets": evaluate(work / "spark_run", work / "spark_qrels", work / "spark.csv")}
        want = (work / "text.csv").read_bytes()
        same = {k: (work / f"{k}.csv").read_bytes() == want for k in ("duckdb", "spark")}
        spark_dirs = sorted(p.name for p in (work / "spark_run").iterdir() if p.name.startswith("bucket="))
        result = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": a.rows, "buckets": a.buckets,
                  "master": a.master, "data": data, "seconds": seconds, "per_query_csv_identical_to_text": same,
                  "per_query_csv_bytes": len(want), "spark_bucket_directories": len(spark_dirs)}
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "prebucketed_identity.json").write_text(json.dumps(result, indent=1) + "\n")
        yes = {k: "identical" if v else "DIFFERENT" for k, v in same.items()}
        (RESULTS / "prebucketed_identity.md").write_text(f"""# Pre-bucketed datasets by DuckDB and by Spark SQL against the text in memory

`benchmarks/spark_prebucketed.py` ({result['when']}; pyspark {data['spark']['pyspark']}, master `{a.master}`):
{a.rows:,} run lines ({data['users']:,} users × 100) and {data['qrels_lines']:,} qrels lines, {a.buckets} buckets.
DuckDB wrote the datasets with `bucket.SQL_BUCKET`; Spark read their rows, dropped the bucket
column, computed it again with `bucket.SPARK_SQL_BUCKET` and wrote its own
(`partitionBy("bucket")`, {len(spark_dirs)} bucket directories). `rankscope evaluate --resamples 0 --per-query`
on each, as a process:

| input | per-query CSV against the text in memory | seconds |
|---|---|---|
| TREC text, in memory | (the reference, {len(want):,} bytes) | {seconds['text_in_memory']} |
| DuckDB-written datasets, taken as given | {yes['duckdb']} | {seconds['duckdb_datasets']} |
| Spark-SQL-written datasets, taken as given | {yes['spark']} | {seconds['spark_datasets']} |

Spark session start {data['spark']['session_start_s']} s, its writing {data['spark']['write_s']} s.
""")
        print(json.dumps({"identical": same, "seconds": seconds}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
