"""The Spark engine on a real local SparkSession: whole partitions replaced and no other file
touched, refusals, and checks that run as aggregations (2M rows, nothing collected but counts)."""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from dagguard.idempotent import (IdempotentWriteError, IntervalViolationError, TargetTableError, read_ledger,
                                 write_interval)
from dagguard.idempotent.engines.spark import PartitioningError
from tests.idempotent.helpers import DAY1, DAY2, UTC, at, events

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark


@pytest.fixture
def database(spark):
    """A fresh database of the session's catalog, current while the test runs."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    spark.sql(f"CREATE DATABASE `{name}`")
    before = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(name)
    yield name
    spark.catalog.setCurrentDatabase(before)
    spark.sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")


def _location(spark, table: str) -> Path:
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    uri = next(row.data_type for row in rows if row.col_name == "Location")
    return Path(unquote(urlparse(uri).path))


def _files(spark, table: str) -> dict[str, int]:
    """Every data file of the table: its path under the table's folder -> modification time."""
    root = _location(spark, table)
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*.parquet")}


def _rows(spark, table: str = "events"):
    spark.catalog.refreshTable(table)
    return sorted((r.k, r.ts.replace(tzinfo=UTC), r.v) for r in spark.table(table).collect())


def _events_table(spark, layout: str = "PARTITIONED BY (ts)") -> None:
    spark.sql(f"CREATE TABLE events (k INT, v STRING, ts TIMESTAMP) USING parquet {layout}")


def test_replace_rewrites_only_the_intervals_partitions(spark, database):
    _events_table(spark)
    write_interval(spark, "events", events((1, at(1, 1), "a"), (2, at(1, 2), "b")), DAY1, time_column="ts")
    write_interval(spark, "events", events((3, at(2, 1), "c"), (4, at(2, 5), "d")), DAY2, time_column="ts")
    day2 = {path: mtime for path, mtime in _files(spark, "events").items() if path.startswith("ts=2026-01-02")}
    assert len(day2) == 2
    result = write_interval(spark, "events", events((1, at(1, 1), "new")), DAY1, time_column="ts")
    files = _files(spark, "events")
    # The other interval's files are the very same files; the hour the batch no longer has is gone.
    assert {path: mtime for path, mtime in files.items() if path.startswith("ts=2026-01-02")} == day2
    assert not any(path.startswith("ts=2026-01-01 02") for path in files)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 0, 2)
    assert _rows(spark) == [(1, at(1, 1), "new"), (3, at(2, 1), "c"), (4, at(2, 5), "d")]


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_an_unchanged_rerun_writes_no_file(spark, database, strategy):
    _events_table(spark)
    batch = events((1, at(1, 1), "a"), (2, at(1, 2), "b"))
    options = {"unique_key": "k"} if strategy == "merge" else {}
    write_interval(spark, "events", batch, DAY1, time_column="ts", strategy=strategy, **options)
    before = _files(spark, "events")
    again = write_interval(spark, "events", batch, DAY1, time_column="ts", strategy=strategy, **options)
    assert _files(spark, "events") == before
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)
    assert again.row_count == 2 and again.engine.startswith("spark 4")


def test_merge_counts_and_delete_missing_on_a_spark_dataframe(spark, database):
    _events_table(spark)
    write_interval(spark, "events", events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 3), "c")), DAY1,
                   time_column="ts")
    write_interval(spark, "events", events((9, at(2, 1), "other day")), DAY2, time_column="ts")
    frame = spark.createDataFrame([(1, at(1, 1), "a"), (2, at(1, 2), "B"), (4, at(1, 4), "d")],
                                  "k INT, ts TIMESTAMP, v STRING")
    result = write_interval(spark, "events", frame, DAY1, time_column="ts", strategy="merge", unique_key="k",
                            delete_missing=True)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 1)
    assert _rows(spark) == [(1, at(1, 1), "a"), (2, at(1, 2), "B"), (4, at(1, 4), "d"), (9, at(2, 1), "other day")]


def test_overwrite_partition_replaces_one_date_partition_and_keeps_the_others_files(spark, database):
    spark.sql("CREATE TABLE daily (k INT, v STRING, ds DATE) USING parquet PARTITIONED BY (ds)")
    for interval, value in ((DAY1, "one"), (DAY2, "two")):
        write_interval(spark, "daily", [{"k": 1, "v": value}], interval, strategy="overwrite_partition")
    day2 = {p: m for p, m in _files(spark, "daily").items() if p.startswith("ds=2026-01-02")}
    write_interval(spark, "daily", [{"k": 2, "v": "uno"}], DAY1, strategy="overwrite_partition")
    assert {p: m for p, m in _files(spark, "daily").items() if p.startswith("ds=2026-01-02")} == day2
    emptied = write_interval(spark, "daily", [], DAY1, strategy="overwrite_partition", columns=["k", "v"])
    assert emptied.rows_deleted == 1
    spark.catalog.refreshTable("daily")
    assert sorted(tuple(r) for r in spark.table("daily").collect()) == [(1, "two", DAY2.start.date())]


def test_an_unpartitioned_table_is_refused_with_the_reason(spark, database):
    _events_table(spark, layout="")
    with pytest.raises(PartitioningError, match=r"table events is not partitioned, not on 'ts'.*rewrite the "
                                                r"whole table, which dagguard refuses; nothing was written"):
        write_interval(spark, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    assert issubclass(PartitioningError, TargetTableError) and issubclass(PartitioningError, IdempotentWriteError)
    assert spark.table("events").count() == 0


def test_a_missing_table_or_time_column_is_a_clear_error(spark, database):
    with pytest.raises(TargetTableError, match="table missing does not exist in the spark database"):
        write_interval(spark, "missing", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    spark.sql("CREATE TABLE notime (k INT, v STRING, ds DATE) USING parquet PARTITIONED BY (ds)")
    with pytest.raises(TargetTableError, match="table notime has no column"):
        write_interval(spark, "notime", events((1, at(1, 1), "a")), DAY1, time_column="ts")


def test_naive_and_unfit_values_are_refused_before_anything_is_written(spark, database):
    from pyspark.sql import functions as F

    _events_table(spark)
    naive = spark.createDataFrame([(1, datetime(2026, 1, 1, 1), "a")], "k INT, ts TIMESTAMP_NTZ, v STRING")
    with pytest.raises(IntervalViolationError, match="TIMESTAMP_NTZ, a naive datetime"):
        write_interval(spark, "events", naive, DAY1, time_column="ts")
    nulls = spark.createDataFrame([(1, None, "a")], "k INT, ts TIMESTAMP, v STRING")
    with pytest.raises(IntervalViolationError, match="1 row.* has NULL in the time column"):
        write_interval(spark, "events", nulls, DAY1, time_column="ts")
    wide = spark.createDataFrame([(1, at(1, 1), "a")], "k INT, ts TIMESTAMP, v STRING").withColumn(
        "k", F.lit(2**40))
    with pytest.raises(IntervalViolationError, match="holds a value in 'k' that its int column cannot store"):
        write_interval(spark, "events", wide, DAY1, time_column="ts")
    spark.sql("CREATE TABLE prices (k INT, price DECIMAL(10,2), ts TIMESTAMP) USING parquet PARTITIONED BY (ts)")
    finer = spark.createDataFrame([(1, at(1, 1))], "k INT, ts TIMESTAMP").withColumn(
        "price", F.lit("1.005").cast("decimal(10,3)"))
    with pytest.raises(IntervalViolationError, match=r"decimal\(10,2\) column cannot store exactly \(e.g. 1.005\)"):
        write_interval(spark, "prices", finer, DAY1, time_column="ts")
    spark.sql("CREATE TABLE walls (k INT, ts TIMESTAMP_NTZ) USING parquet PARTITIONED BY (ts)")
    with pytest.raises(TargetTableError, match="time column 'ts' of walls is a Spark timestamp_ntz"):
        write_interval(spark, "walls", [{"k": 1, "ts": at(1, 1)}], DAY1, time_column="ts")
    assert spark.table("events").count() == 0 and spark.table("prices").count() == 0


class _Collected:
    """Spies on every way a DataFrame's rows reach the driver, recording how many came back."""

    def __init__(self, monkeypatch, frame_class):
        DataFrame = frame_class  # pyspark's classic (or Connect) DataFrame, whose methods run
        self.sizes: list[int] = []
        for name in ("collect", "toPandas", "toArrow", "toLocalIterator", "tail"):
            original = getattr(DataFrame, name)

            def spy(frame, *args, _original=original, **kwargs):
                result = _original(frame, *args, **kwargs)
                if isinstance(result, list) or hasattr(result, "__len__"):
                    self.sizes.append(len(result))
                else:
                    self.sizes.append(-1)  # an iterator: streams rows, which nothing here may do
                return result

            monkeypatch.setattr(DataFrame, name, spy)


def test_two_million_rows_are_checked_and_written_without_collecting_them(spark, database, monkeypatch):
    from pyspark.sql import functions as F

    _events_table(spark)
    start = int(DAY1.start.timestamp()) * 1_000_000
    # 2M rows over 24 hourly partitions, generated on the executors.
    frame = spark.range(2_000_000).select(
        F.col("id").cast("int").alias("k"), F.lit("x").alias("v"),
        F.timestamp_micros(F.lit(start) + (F.col("id") % 24) * 3_600_000_000).alias("ts"))
    collected = _Collected(monkeypatch, type(frame))
    result = write_interval(spark, "events", frame, DAY1, time_column="ts", strategy="merge", unique_key="k")
    assert (result.row_count, result.rows_inserted) == (2_000_000, 2_000_000)
    # One row per aggregate, one per partition value at most: never the batch's rows.
    assert collected.sizes and max(collected.sizes) <= 24 and -1 not in collected.sizes
    late = frame.withColumn("ts", F.when(F.col("k") == 1_999_999, F.lit(DAY2.start)).otherwise(F.col("ts")))
    collected.sizes.clear()
    with pytest.raises(IntervalViolationError, match=r"1 row\(s\) is outside the interval \(e\.g\. 2026-01-02"):
        write_interval(spark, "events", late, DAY1, time_column="ts")
    repeated = frame.withColumn("k", F.when(F.col("k") == 7, F.lit(8)).otherwise(F.col("k")))
    with pytest.raises(IntervalViolationError, match=r"2 rows share key \{'k': 8\}"):
        write_interval(spark, "events", repeated, DAY1, time_column="ts", strategy="merge", unique_key="k")
    assert max(collected.sizes) <= 1


def test_arrow_and_pandas_rows_and_the_ledger(spark, database):
    import pyarrow as pa

    spark.sql("CREATE DATABASE IF NOT EXISTS analytics")
    spark.sql("DROP TABLE IF EXISTS analytics.events")
    spark.sql("CREATE TABLE analytics.events (k INT, v STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts)")
    try:
        table = pa.table({"k": pa.array([1, 2], pa.int32()), "ts": [at(1, 1), at(1, 2)], "v": ["a", "b"]})
        write_interval(spark, "analytics.events", table, DAY1, time_column="ts")
        write_interval(spark, "analytics.events", table.to_pandas(), DAY1, time_column="ts")
        report = read_ledger(spark, "analytics.events")
        assert [(e.strategy, e.row_count, e.rows_inserted) for e in report.entries] == [("replace", 2, 2),
                                                                                        ("replace", 2, 0)]
        assert report.entries[0].interval_start == "2026-01-01T00:00:00+00:00"
        assert not report.conflicts
        assert spark.catalog.tableExists("analytics.dagguard_write_log")
    finally:
        spark.sql("DROP DATABASE analytics CASCADE")


def test_idempotent_write_without_conn_id_needs_a_spark_parameter():
    pytest.importorskip("airflow.sdk")
    from dagguard.idempotent import InvalidArgumentError, idempotent_write

    with pytest.raises(InvalidArgumentError, match=r"load\(\) needs conn_id=, or a `spark` parameter"):
        @idempotent_write(table="events", time_column="ts")
        def load(data_interval_start=None):
            return []

    @idempotent_write(table="events", time_column="ts")
    def export(spark=None, data_interval_start=None):
        return []

    assert export.__name__ == "export"


def test_a_spark_dataframe_into_another_engine_is_refused(spark, tmp_path):
    import sqlite3

    from dagguard.idempotent import ArgumentTypeError

    frame = spark.createDataFrame([(1, at(1, 1), "a")], "k INT, ts TIMESTAMP, v STRING")
    with pytest.raises(ArgumentTypeError, match="rows is a Spark DataFrame: write it through its SparkSession"):
        write_interval(sqlite3.connect(tmp_path / "x.db"), "events", frame, DAY1, time_column="ts")


def test_replace_with_a_column_missing_from_the_batch_writes_it_null(spark, database):
    spark.sql("CREATE TABLE wide (k INT, note STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts)")
    write_interval(spark, "wide", [{"k": 1, "ts": at(1, 1)}], DAY1, time_column="ts")
    spark.catalog.refreshTable("wide")
    assert [tuple(r) for r in spark.table("wide").select("k", "note").collect()] == [(1, None)]


def test_threads_writing_one_table_at_once_each_leave_one_whole_batch(spark, database):
    """Two threads of one driver, the same session: writes of different intervals both land; of
    the same interval, the interval ends as one writer's batch, never a mix of their partitions."""
    import threading

    _events_table(spark)
    batches = {"a": events((1, at(1, 1), "a"), (2, at(1, 2), "a")),
               "b": events((1, at(1, 2), "b"), (3, at(1, 3), "b")),
               "c": events((7, at(2, 4), "c"))}
    failures = []

    def write(name, interval):
        try:
            write_interval(spark, "events", batches[name], interval, time_column="ts")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    for _ in range(2):
        threads = [threading.Thread(target=write, args=args) for args in (("a", DAY1), ("b", DAY1), ("c", DAY2))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        rows = _rows(spark)
        day1 = [row for row in rows if DAY1.contains(row[1])]
        assert day1 in ([(r["k"], r["ts"], r["v"]) for r in batches[name]] for name in ("a", "b"))
        assert [row for row in rows if DAY2.contains(row[1])] == [(7, at(2, 4), "c")]


def test_the_fingerprint_sums_its_64_bit_hashes_exactly(spark):
    """The three bigint parts add up to the exact sum of the hashes (a decimal sum, as computed
    before the parts), negative hashes and all."""
    from pyspark.sql import functions as F

    from dagguard.idempotent.engines.spark_write import fingerprint

    frame = spark.range(50_000).select(F.col("id").alias("k"), (F.col("id") % 7).cast("string").alias("v"),
                                       F.when(F.col("id") % 5 == 0, F.lit(None)).otherwise(F.col("id") * 3).alias("n"))
    parts = [part for name in ("k", "n", "v") for part in (F.col(name), F.col(name).isNull())]
    exact = frame.agg(F.count(F.lit(1)), F.sum(F.xxhash64(*parts).cast("decimal(38,0)")),
                      F.sum(F.hash(*parts).cast("bigint"))).first()
    assert fingerprint(frame, ["v", "k", "n"]) == (50_000, int(exact[1]), int(exact[2]))
    assert fingerprint(frame.limit(0), ["k", "n", "v"]) == (0, 0, 0)


def test_a_merge_batch_repeating_a_null_key_is_refused(spark, database):
    """The distinct keys counted beside the checks treat NULL as equal to NULL, as grouping does."""
    _events_table(spark)
    frame = spark.createDataFrame([(None, at(1, 1), "a"), (None, at(1, 2), "b"), (3, at(1, 3), "c")],
                                  "k INT, ts TIMESTAMP, v STRING")
    with pytest.raises(IntervalViolationError, match=r"2 rows share key \{'k': None\}"):
        write_interval(spark, "events", frame, DAY1, time_column="ts", strategy="merge", unique_key="k")
    one = frame.where("v != 'b'")
    result = write_interval(spark, "events", one, DAY1, time_column="ts", strategy="merge", unique_key="k")
    assert (result.row_count, result.rows_inserted) == (2, 2)


def test_the_ledger_row_is_a_parquet_file_spark_reads_as_the_ledger_table(spark, database):
    """The driver writes each ledger row as a file of its own; Spark reads it with the table's
    types, and a new session's catalog (a fresh table over the same folder) finds every row."""
    _events_table(spark)
    for value in ("a", "b"):
        write_interval(spark, "events", events((1, at(1, 1), value)), DAY1, time_column="ts")
    ledger = spark.table("dagguard_write_log")
    kinds = {field.name: field.dataType.simpleString() for field in ledger.schema.fields}
    assert (kinds["interval_start"], kinds["row_count"], kinds["checksum"]) == ("timestamp", "bigint", "string")
    assert sorted(tuple(r) for r in ledger.select("row_count", "rows_deleted").collect()) == [(1, 0), (1, 1)]
    folder = _location(spark, "dagguard_write_log")
    assert len(list(folder.glob("part-*.parquet"))) == 2 and not list(folder.glob(".*"))
    spark.sql("DROP TABLE dagguard_write_log")  # a session without it: the folder stays (external)
    spark.sql(f"CREATE TABLE dagguard_write_log USING parquet LOCATION '{folder.as_uri()}'")
    assert spark.table("dagguard_write_log").count() == 2


def test_rows_that_change_after_their_check_fail_the_write_and_write_nothing(spark, database, monkeypatch, tmp_path):
    """A replace is checked again by the job that writes it (nothing is cached): a batch whose
    rows move out of the interval after the checks' job (its Parquet file rewritten in place)
    stops the write, and nothing is written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dagguard.idempotent.engines import spark_checks

    _events_table(spark)
    write_interval(spark, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    before = _files(spark, "events")
    source = tmp_path / "batch.parquet"

    def save(when):  # the same bytes but the time's: no compression, dictionary or statistics
        table = pa.table({"k": pa.array([2], pa.int32()), "ts": pa.array([when], pa.timestamp("us", tz="UTC")),
                          "v": ["b"]})
        pq.write_table(table, source, compression="none", use_dictionary=False, write_statistics=False)

    save(at(1, 2))
    frame = spark.read.parquet(str(source))
    checked = spark_checks.batch_fingerprint

    def then_move(*args, **kwargs):
        found = checked(*args, **kwargs)
        save(at(6, 2))
        return found

    monkeypatch.setattr(spark_checks, "batch_fingerprint", then_move)
    with pytest.raises(IntervalViolationError, match=r"1 row\(s\) is outside the interval \(e\.g\. 2026-01-06"):
        write_interval(spark, "events", frame, DAY1, time_column="ts")
    assert _files(spark, "events") == before and _rows(spark) == [(1, at(1, 1), "a")]


def test_a_dataframes_fingerprint_keeps_the_values_recorded_before(spark, database):
    """The fingerprint is built as SQL text now; its values are those the column-built one gave
    (pinned from it), so the checksums in ledgers and scope records written before still match
    the rows they describe: a column named with a space, NULLs, -0.0 and microseconds."""
    from datetime import date

    columns = "k INT, `the value` STRING, amount DOUBLE, ts TIMESTAMP, ds DATE"
    spark.sql(f"CREATE TABLE events ({columns}) USING parquet PARTITIONED BY (ts)")
    spark.sql(f"CREATE TABLE by_day ({columns}) USING parquet PARTITIONED BY (ds)")
    rows = [(1, "a", 1.5, at(1, 1), date(2026, 1, 1)), (2, None, None, at(1, 2), None),
            (3, "", -0.0, datetime(2026, 1, 1, 23, 59, 59, 999999, tzinfo=UTC), date(2026, 1, 1))]
    frame = spark.createDataFrame(rows, columns)
    replaced = write_interval(spark, "events", frame, DAY1, time_column="ts")
    assert replaced.checksum.split("-", 1)[1] == "ffffffffffffffff772e5e041fc842c8.55e44b05"
    day = write_interval(spark, "by_day", frame.fillna({"ds": "2026-01-01"}), DAY1, time_column="ts",
                         strategy="overwrite_partition", partition_column="ds")
    assert day.checksum.split("-", 1)[1] == "ffffffffffffffff7fada4333cc86269.ffffffffbb660431"
    merged = write_interval(spark, "events", frame, DAY1, time_column="ts", strategy="merge", unique_key="k")
    assert (merged.rows_inserted, merged.rows_updated, merged.rows_deleted) == (0, 0, 0)
    assert merged.checksum == replaced.checksum
