"""Run by test_spark_crash.py in its own process: declares the table over its folder, then
replaces DAY1 with 3M rows through dagguard, printing WRITING first. The test kills it (-9)."""

from __future__ import annotations

import sys
from pathlib import Path

from pyspark.sql import functions as F

from dagguard.idempotent import write_interval
from tests.idempotent.helpers import DAY1
from tests.support.spark import start_session


def main(location: str, warehouse: str) -> None:
    spark = start_session(Path(warehouse))
    spark.sql(f"CREATE TABLE events (k INT, v STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts) "
              f"LOCATION '{location}'")
    spark.sql("ALTER TABLE events RECOVER PARTITIONS")
    start = int(DAY1.start.timestamp()) * 1_000_000
    rows = spark.range(3_000_000).select(
        F.col("id").cast("int").alias("k"), F.sha2(F.col("id").cast("string"), 256).alias("v"),
        F.timestamp_micros(F.lit(start) + (F.col("id") % 24) * 3_600_000_000).alias("ts"))
    print("WRITING", flush=True)
    write_interval(spark, "events", rows, DAY1, time_column="ts")
    print("WRITTEN", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
