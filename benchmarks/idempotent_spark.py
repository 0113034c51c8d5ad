"""The Spark rows of benchmarks/idempotent_writes.py: write_interval against the same write by
hand, a dynamic partition overwrite (`INSERT OVERWRITE` through `insertInto(overwrite=True)`
with `spark.sql.sources.partitionOverwriteMode=dynamic`), on a local[2] SparkSession.

The rows are built in Spark (`spark.range`), hourly timestamps: replace and merge write a table
partitioned by `ts` (24 partitions a day), overwrite_partition one partitioned by `ds`. Each
timed run gets a table of its own holding the other day (and, for a rerun, the target day as
dagguard wrote it), built untimed. Each strategy is measured against its hand-written
equivalent on the same kind of table in the same scenario: replace and overwrite_partition
against that dynamic overwrite of the rows, merge against the interval's rows read, those whose
key the batch has dropped (a left anti join), the batch added, and the result written back in
one dynamic overwrite. Run through idempotent_writes.py: `--engines spark` (1M rows).

Besides the wall time, each case's CPU time: the Spark JVM's (driver and local executors are one
process, read from /proc) plus this Python process's; a shared machine disturbs it less.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable

SPARK_ENGINES = ("spark",)


def _session(workdir: Path) -> Any:
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("dagguard-bench")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.warehouse.dir", str(workdir))
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def _rows(spark: Any, interval: Any, count: int, first_key: int, changed: bool) -> Any:
    """`count` rows of `interval`, keys from `first_key`, spread over its 24 hours."""
    from pyspark.sql import functions as F

    start = int(interval.start.timestamp()) * 1_000_000
    amount = (F.col("id") % 1000).cast("double") + (F.lit(0.5) if changed else F.lit(0.0))
    return spark.range(count).select(
        (F.col("id") + first_key).alias("k"),
        F.timestamp_micros(F.lit(start) + (F.col("id") % 24) * 3_600_000_000).alias("ts"),
        F.lit(interval.start.date()).alias("ds"), F.lit("x").alias("v"), amount.alias("amount"))


def benchmark_spark(name: str, count: int, runs: int, strategies: tuple[str, ...], workdir: Path,
                    log: Callable[[str], None], bench: Any) -> dict[str, Any]:
    """Time every case of idempotent_writes.py (`bench` is that module) on Spark tables."""
    from pyspark.sql import functions as F

    from dagguard.idempotent import write_interval

    spark = _session(Path(tempfile.mkdtemp(prefix="spark-", dir=workdir)))
    try:
        other = _rows(spark, bench.OTHER, count, 0, False).persist()
        target = _rows(spark, bench.TARGET, count, 10 * count, False).persist()
        changed = _rows(spark, bench.TARGET, count, 10 * count, True).persist()
        for frame in (other, target, changed):
            frame.count()

        def fresh(full: bool, by: str) -> str:
            table = f"bench_{uuid.uuid4().hex[:8]}"
            spark.sql(f"CREATE TABLE {table} (k BIGINT, v STRING, amount DOUBLE, ts TIMESTAMP, ds DATE) "
                      f"USING parquet PARTITIONED BY ({by})")
            _overwrite_by_hand(spark, table, other)
            if full:
                _write(write_interval, spark, table, target, "replace" if by == "ts" else "overwrite_partition",
                       bench.TARGET)
            return table

        jvm = int(spark._jvm.java.lang.ProcessHandle.current().pid())

        def run(case: Any) -> tuple[float, float]:
            by = "ds" if case.strategy == "overwrite_partition" else "ts"
            rows = changed if case.scenario == "changed" else target
            table = fresh(case.scenario != "first", by)
            try:
                started, cpu = time.perf_counter(), _cpu_seconds(jvm)
                if case.hand and case.strategy == "merge":
                    _merge_by_hand(spark, table, rows, bench.TARGET, F)
                elif case.hand:
                    _overwrite_by_hand(spark, table, rows)
                else:
                    _write(write_interval, spark, table, rows, case.strategy, bench.TARGET)
                seconds, cpu = time.perf_counter() - started, _cpu_seconds(jvm) - cpu
                _check(spark, table, F, count, case.scenario == "changed")
                return seconds, cpu
            finally:
                spark.sql(f"DROP TABLE IF EXISTS {table}")

        todo = bench.lake_cases(strategies)
        times: dict[str, list[float]] = {case.label: [] for case in todo}
        cpu: dict[str, list[float]] = {case.label: [] for case in todo}
        for repeat in range(runs):
            for case in todo:
                seconds, cpu_seconds = run(case)
                times[case.label].append(seconds)
                cpu[case.label].append(cpu_seconds)
                log(f"{name} run {repeat + 1}/{runs} {case.label}: {seconds:.3f}s (cpu {cpu_seconds:.3f}s)")
    finally:
        spark.stop()
    notes = [(f"pyspark {spark.version}, local[2], Parquet partitioned by hour (ts) / day (ds); "
              f"by hand: dynamic INSERT OVERWRITE of the rows, merge = of the interval's rows merged by a "
              f"left anti join")]
    result = bench.lake_result(name, notes, times)
    best_cpu = {label: min(values) for label, values in cpu.items()}
    result.update(all_cpu_seconds=cpu, best_cpu_seconds=best_cpu, cpu_ratios_to_hand={
        label: best_cpu[label] / best_cpu[bench.HAND + label] for label in best_cpu if bench.HAND + label in best_cpu})
    return result


def _cpu_seconds(jvm: int) -> float:
    """CPU seconds used so far by the Spark JVM `jvm` (all its threads) and this process."""
    with open(f"/proc/{jvm}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") + time.process_time()


def _write(write_interval: Any, spark: Any, table: str, rows: Any, strategy: str, interval: Any) -> None:
    """Every strategy writes the same five columns as the hand-written write (replace without
    `ds` would write it NULL, other rows than by hand, which no unchanged rerun could match)."""
    write_interval(spark, table, rows.select("k", "v", "amount", "ts", "ds"), interval, time_column="ts",
                   strategy=strategy, unique_key=["k"] if strategy == "merge" else None, partition_column="ds")


def _overwrite_by_hand(spark: Any, table: str, rows: Any) -> None:
    """What a careful task writes without dagguard: a dynamic partition overwrite of the rows."""
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        rows.select(*spark.table(table).columns).write.insertInto(table, overwrite=True)
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")


def _merge_by_hand(spark: Any, table: str, rows: Any, interval: Any, F: Any) -> None:
    """A merge on `k` written by hand: the interval's rows the batch has no key for, plus the
    batch, written back in one dynamic partition overwrite (checkpointed first: Spark refuses to
    overwrite a table the same plan reads)."""
    columns = spark.table(table).columns
    current = spark.table(table).where((F.col("ts") >= F.lit(interval.start)) & (F.col("ts") < F.lit(interval.end)))
    merged = current.join(rows.select("k"), "k", "left_anti").select(*columns).unionByName(rows.select(*columns))
    _overwrite_by_hand(spark, table, merged.localCheckpoint())


def _check(spark: Any, table: str, F: Any, count: int, changed: bool) -> None:
    """Untimed: both days hold `count` rows, the target day's amounts as written."""
    spark.catalog.refreshTable(table)
    found = {str(r[0]): (r[1], r[2]) for r in spark.table(table).groupBy(F.to_date("ts")).agg(
        F.count("*"), F.sum("amount")).collect()}
    if len(found) != 2 or any(rows != count for rows, _ in found.values()):
        raise AssertionError(f"{table} holds {found}, expected {count} rows on each of two days")
    other, target = (found[day][1] for day in sorted(found))
    if abs(target - other - (0.5 * count if changed else 0.0)) > 1e-6:
        raise AssertionError(f"{table}: the target day sums to {target}, the other to {other}")
