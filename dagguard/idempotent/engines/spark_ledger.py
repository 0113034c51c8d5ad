"""The ledger of a Spark catalog: a Parquet table `dagguard_write_log` in the database of each
table dagguard writes (`analytics.dagguard_write_log` for `analytics.events`, the session's
current database for a bare name), with the columns of the SQL engines' ledger table.

Each row is a Parquet file of its own in the ledger table's folder, written by the driver
(through a Spark job where the driver cannot: Spark Connect, no pyarrow). A Parquet table cannot
commit with another table: the ledger row is appended right after the data's partitions are
replaced, so a writer killed between the two leaves the data written and
its row missing (a rerun then compares the interval's rows and finds them unchanged)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from dagguard.idempotent.ledger import (LEDGER_COLUMNS, LEDGER_TABLE, LedgerEntry, LedgerReport, RunInfo, _text,
                                        find_conflicts)

_INTEGERS = frozenset(("try_number", "row_count", "rows_inserted", "rows_updated", "rows_deleted"))
_TIMES = frozenset(("interval_start", "interval_end", "written_at"))
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _type(name: str) -> str:
    return "BIGINT" if name in _INTEGERS else "TIMESTAMP" if name in _TIMES else "STRING"


def ledger_name(database: tuple[str, ...]) -> str:
    """The quoted name of the ledger table of `database` (the current one when empty)."""
    return ".".join(f"`{part}`" for part in (*database, LEDGER_TABLE))


def append_row(spark: Any, database: tuple[str, ...], run: RunInfo, table: str, start: datetime, end: datetime,
               strategy: str, counts: tuple[int, int, int, int], checksum: str) -> None:
    """Append one ledger row, creating the ledger table on first use."""
    from dagguard.idempotent.engines.spark_catalog import table_location
    from dagguard.idempotent.engines.spark_lock import can_lock, storage_lock

    name = ledger_name(database)
    columns = ", ".join(f"`{column}` {_type(column)}" for column in LEDGER_COLUMNS)
    exists = spark.catalog.tableExists(name)
    # At a path of the database's folder, so that a session whose catalog forgot the table
    # (Spark's in-memory catalog, without a Hive metastore) finds its rows again there.
    where = table_location(spark, name) if exists else _database_location(spark, database).rstrip("/") + "/" + LEDGER_TABLE
    row_count, inserted, updated, deleted = counts
    values = (run.dag_id, run.task_id, run.run_id, run.try_number, table, start, end, strategy,
              row_count, inserted, updated, deleted, checksum, datetime.now(timezone.utc))
    if not exists:
        # Two applications creating the ledger of one folder at once take turns.
        with storage_lock(spark, where, f"ledger {name}"):
            spark.sql(f"CREATE TABLE IF NOT EXISTS {name} ({columns}) USING parquet LOCATION '{_escaped(where)}'")
    data = _parquet_file(values)
    if data is None or not can_lock(spark):
        _insert_row(spark, name, where, values)
        return
    from dagguard.idempotent.engines.spark_lock import open_store

    # The row as one Parquet file of its own, written by the driver: a Spark job writing it
    # took 0.4-0.5 s a write, this takes milliseconds. The file appears whole (written under a
    # hidden name, then renamed), and its name is its own, so two writers never share a file.
    open_store(spark, where).publish(f"part-dagguard-{uuid.uuid4().hex}.parquet", data)
    spark.catalog.refreshTable(name)  # this session's next read lists the new file


def _parquet_file(values: tuple[Any, ...]) -> bytes | None:
    """One ledger row as the bytes of a Parquet file whose columns Spark reads as the ledger's
    (BIGINT, STRING, TIMESTAMP as UTC microseconds); None without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    kinds = {"BIGINT": pa.int64(), "TIMESTAMP": pa.timestamp("us", tz="UTC"), "STRING": pa.string()}
    schema = pa.schema([pa.field(column, kinds[_type(column)]) for column in LEDGER_COLUMNS])
    row = pa.Table.from_pylist([dict(zip(LEDGER_COLUMNS, values))], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(row, sink)
    return sink.getvalue().to_pybytes()


def _insert_row(spark: Any, name: str, where: str, values: tuple[Any, ...]) -> None:
    """The row appended by a Spark job (Spark Connect, or no pyarrow on the driver)."""
    from pyspark.sql import types as T

    from dagguard.idempotent.engines.spark_lock import storage_lock

    kinds = {"BIGINT": T.LongType(), "TIMESTAMP": T.TimestampType(), "STRING": T.StringType()}
    schema = T.StructType([T.StructField(column, kinds[_type(column)]) for column in LEDGER_COLUMNS])
    # Appends of two applications into one folder at once share Hadoop's `_temporary` folder
    # there, which the first commit deletes: they take turns on the ledger's own lock (taken
    # while holding the target's, never the other way).
    with storage_lock(spark, where, f"ledger {name}"):
        spark.createDataFrame([values], schema).write.insertInto(name)


def _database_location(spark: Any, database: tuple[str, ...]) -> str:
    """The folder (URI) of `database`, the session's current one when empty."""
    name = ".".join(f"`{part}`" for part in database) if database else f"`{spark.catalog.currentDatabase()}`"
    for row in spark.sql(f"DESCRIBE DATABASE EXTENDED {name}").collect():
        if row[0] == "Location":
            return str(row[1])
    raise AssertionError(f"Spark describes database {name} without a location")


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def read_entries(spark: Any, table: str | None) -> LedgerReport:
    """Every database's ledger rows (optionally of one target table, as written: `events`,
    `analytics.events`). The ledger is small: its rows are read to the driver."""
    from pyspark.sql import functions as F

    from dagguard.idempotent.errors import LedgerError

    rows: list[dict[str, Any]] = []
    found = False
    for database in spark.catalog.listDatabases():
        if not spark.catalog.tableExists(f"`{database.name}`.`{LEDGER_TABLE}`"):
            continue
        found = True
        spark.catalog.refreshTable(ledger_name((database.name,)))  # rows other sessions appended
        frame = spark.table(ledger_name((database.name,)))
        # Instants as microseconds, which no time zone of the driver or the session can shift.
        for column in _TIMES:
            frame = frame.withColumn(column, F.unix_micros(column))
        if table is not None:
            frame = frame.where(F.col("table_name") == table)
        for row in frame.collect():
            values = row.asDict()
            rows.append({**values, **{column: _text(_EPOCH + timedelta(microseconds=values[column]))
                                      for column in _TIMES}})
    if not found:
        raise LedgerError(f"no {LEDGER_TABLE} table in any database of this Spark catalog: nothing has been "
                          f"written through dagguard.idempotent here")
    rows.sort(key=lambda row: (row["written_at"], row["table_name"]))
    entries = [LedgerEntry(
        table_name=row["table_name"], interval_start=row["interval_start"], interval_end=row["interval_end"],
        strategy=row["strategy"], row_count=int(row["row_count"]), rows_inserted=int(row["rows_inserted"] or 0),
        rows_updated=int(row["rows_updated"] or 0), rows_deleted=int(row["rows_deleted"] or 0),
        checksum=row["checksum"], written_at=row["written_at"], dag_id=row["dag_id"], task_id=row["task_id"],
        run_id=row["run_id"], try_number=row["try_number"]) for row in rows]
    return LedgerReport(tuple(entries), find_conflicts(entries))
