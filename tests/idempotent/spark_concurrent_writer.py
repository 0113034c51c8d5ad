"""A Spark application of its own, run by test_spark_concurrency.py: a local[1] session over the
test's warehouse folder declares the table over its folder, prints READY, waits for the GO
file, then writes through dagguard.

    python spark_concurrent_writer.py LOCATION WAREHOUSE GO TAG ROUNDS DAY...
        each round writes each DAY (of January 2026) with v = "TAG-round-k"; prints DONE. A DAY
        `others:N` writes table `others` (at LOCATION-others) instead of `events`.
    python spark_concurrent_writer.py LOCATION WAREHOUSE GO TAG hold LEASE
        writes 100k rows of January 1st with a lock lease of LEASE seconds (the test kills it).

Partitions are not kept in this session's own catalog (manageFilesourcePartitions off): each
write lists them from the table's folder, as applications sharing one metastore all see them.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from dagguard.idempotent import Interval, write_interval
from dagguard.idempotent.engines.spark_lock import LEASE_KEY
from tests.support.spark import start_session

UTC = timezone.utc


def batch(day: int, tag: str, round_: int) -> list[dict]:
    """Ten rows over five hourly partitions of January `day`."""
    return [{"k": k, "ts": datetime(2026, 1, day, 1 + k % 5, k, tzinfo=UTC), "v": f"{tag}-{round_}-{k}"}
            for k in range(10)]


def day_interval(day: int) -> Interval:
    return Interval(datetime(2026, 1, day, tzinfo=UTC), datetime(2026, 1, day + 1, tzinfo=UTC))


def main(location: str, warehouse: str, go: str, tag: str, mode: str, *rest: str) -> None:
    spark = start_session(Path(warehouse), "local[1]", **{"spark.sql.hive.manageFilesourcePartitions": "false"})
    spark.sql(f"CREATE TABLE IF NOT EXISTS events (k INT, v STRING, ts TIMESTAMP) USING parquet "
              f"PARTITIONED BY (ts) LOCATION '{location}'")
    spark.sql(f"CREATE TABLE IF NOT EXISTS others (k INT, v STRING, ts TIMESTAMP) USING parquet "
              f"PARTITIONED BY (ts) LOCATION '{location}-others'")
    print("READY", flush=True)
    while not Path(go).exists():
        time.sleep(0.05)
    if mode == "hold":
        from pyspark.sql import functions as F

        spark.conf.set(LEASE_KEY, rest[0])
        start = int(day_interval(1).start.timestamp()) * 1_000_000
        rows = spark.range(100_000).select(
            F.col("id").cast("int").alias("k"), F.sha2(F.col("id").cast("string"), 256).alias("v"),
            F.timestamp_micros(F.lit(start) + (F.col("id") % 24) * 3_600_000_000).alias("ts"))
        write_interval(spark, "events", rows, day_interval(1), time_column="ts")
        print("WRITTEN", flush=True)
        return
    for round_ in range(int(mode)):
        for item in rest:
            table, _, day = item.rpartition(":")
            write_interval(spark, table or "events", batch(int(day), tag, round_), day_interval(int(day)),
                           time_column="ts")
    print("DONE", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
