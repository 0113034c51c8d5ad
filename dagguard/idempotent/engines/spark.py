"""Apache Spark through pyspark: `conn` is a SparkSession, `table` a table of its catalog
(`events`, `analytics.events`), stored as Parquet (or any file format) partitioned on the
column a write selects on: the time column for replace and merge, the partition column for
overwrite_partition. `rows` is a Spark DataFrame, or anything write_interval takes (dicts,
tuples, pandas, Arrow), which is checked as on the other engines and then handed to Spark.

Spark without Delta or Iceberg jars cannot delete or update rows of a table, only replace its
partitions, so every write replaces whole partitions (see spark_write): a table not
partitioned on the column is refused (PartitioningError), never overwritten whole. The batch
is checked with Spark aggregations (spark_checks), so it stays on the executors; nothing here
assumes local mode. pyspark is imported only here, when a Spark write runs.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dagguard.idempotent.errors import DatabaseRefusedError, IdempotentWriteError, TargetTableError
from dagguard.idempotent.identifiers import TableName
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.ledger import LedgerReport, RunInfo


class PartitioningError(TargetTableError):
    """The Spark table is not partitioned on the column the write selects its rows on, so the
    rows cannot be replaced without rewriting the whole table."""


def is_spark_frame(rows: Any) -> bool:
    """True for a pyspark DataFrame (classic or Spark Connect), without importing pyspark."""
    kind = type(rows)
    return kind.__module__.startswith("pyspark.sql") and kind.__name__ == "DataFrame"


def is_spark_session(conn: Any) -> bool:
    """True for a pyspark SparkSession (classic or Spark Connect), without importing pyspark."""
    kind = type(conn)
    return kind.__module__.startswith("pyspark.sql") and kind.__name__ == "SparkSession"


class SparkEngine:
    """A SparkSession plus what write_interval needs from it. Not a SQL engine: write_interval
    hands it the rows whole (see write)."""

    dialect = "spark"
    case_insensitive_names = False

    def __init__(self, spark: Any) -> None:
        self.connection = spark
        self.version = tuple(int(part) for part in spark.version.split(".")[:3] if part.isdigit())

    @property
    def description(self) -> str:
        """`spark 4.3.0`, for messages and results."""
        return f"{self.dialect} {'.'.join(str(v) for v in self.version)}"

    def close(self) -> None:
        """Nothing to close: the session is the caller's."""

    @staticmethod
    def timestamp_digits(declared_type: str) -> int:
        """Spark's timestamps keep microseconds."""
        return 6

    # -- the table ---------------------------------------------------------------------------
    @staticmethod
    def quoted(table: TableName) -> str:
        return ".".join(f"`{part}`" for part in table.parts)

    def table_columns(self, table: TableName) -> dict[str, str] | None:
        """Column name -> Spark type (`timestamp`, `int`, `decimal(10,2)`...), or None."""
        found = self._describe(table)
        return None if found is None else found[0]

    def _describe(self, table: TableName) -> tuple[dict[str, str], list[str]] | None:
        """(columns and types, partition columns) of `table`, or None when it does not exist."""
        from dagguard.idempotent.engines import spark_catalog

        spark = self.connection
        try:
            if not spark.catalog.tableExists(self.quoted(table)):
                return None
            partitions = spark_catalog.partition_columns(spark, self.quoted(table))
        except Exception as exc:
            if _is_missing(exc):
                return None
            raise _refused(exc, f"cannot read table {table} from the Spark catalog") from exc
        # Another session or application may have replaced files since this session listed
        # them: read the table's files as they are now, not as first seen.
        spark.catalog.refreshTable(self.quoted(table))
        schema = spark.table(self.quoted(table)).schema
        types = {field.name: field.dataType.simpleString() for field in schema.fields}
        return types, partitions

    def _case_insensitive(self) -> bool:
        return str(self.connection.conf.get("spark.sql.caseSensitive", "false")).lower() != "true"

    # -- the write ---------------------------------------------------------------------------
    def write(self, spec: Any, rows: Any, columns: Any, interval: Interval, run: RunInfo) -> Any:
        """Check the rows and replace the write's partitions with them (see spark_write)."""
        try:
            return self._write(spec, rows, columns, interval, run)
        except IdempotentWriteError:
            raise
        except Exception as exc:
            if not _from_spark(exc):
                raise
            raise _refused(exc, f"Spark refused the write of {spec.table} for {interval}") from exc

    def _write(self, spec: Any, rows: Any, columns: Any, interval: Interval, run: RunInfo) -> Any:
        from dagguard.idempotent.engines import spark_write
        from dagguard.idempotent.write_spec import _check_target

        name = str(spec.table)
        described = self._describe(spec.table)
        frame = rows if is_spark_frame(rows) else None
        given = SimpleNamespace(columns=tuple(frame.columns) if frame is not None else ())
        if described is None:
            _check_target(self, spec, given, None)  # raises TargetTableError
        target, partitions = described
        asked = spec
        if self._case_insensitive():
            # Spark resolves `ts` to a column created as `TS` (spark.sql.caseSensitive is off by
            # default), and so does dagguard: each name spelled as the table spells it.
            from dagguard.idempotent.batch import Batch
            from dagguard.idempotent.write_prepare import _spelled_as_target

            spec, _ = _spelled_as_target(spec, Batch((), ()), target)
            if frame is not None:
                spelling = {c.lower(): c for c in target}
                frame = frame.toDF(*[spelling.get(c.lower(), c) for c in frame.columns])
        checksum = None
        if frame is None:
            frame, checksum = self._frame_of(asked, rows, columns, interval, target)
        _check_target(self, spec, SimpleNamespace(columns=tuple(frame.columns)), target)
        scope_column = spec.partition_column if spec.strategy == "overwrite_partition" else spec.time_column
        self._check_partitioning(spec, name, scope_column, partitions, target)
        partition_value = spark_partition_value(interval, target.get(spec.partition_column or "", ""))
        from dagguard.idempotent.engines import spark_batch, spark_catalog, spark_lock

        # Replace and overwrite_partition of a classic session check the rows in the job that
        # writes them; a merge (and Spark Connect) writes them from a cache (see spark_batch).
        guarded = spec.strategy != "merge" and spark_lock.can_lock(self.connection)
        batch = spark_batch.SparkBatch(frame, spec, interval, target, name, partition_value, guarded)
        try:
            if batch.needs_fingerprint_first():
                batch.fingerprint()  # the checks' failures raised before any lock is taken
            # Threads of this process take turns on WRITE_LOCK; processes and Spark applications
            # on the table's lock file (see spark_lock), from reading the interval to the ledger.
            location = spark_catalog.table_location(self.connection, self.quoted(spec.table))
            with spark_write.WRITE_LOCK, spark_lock.storage_lock(self.connection, location, f"table {name}") as held:
                return self._replace_scope(spec, batch, interval, run, target, partitions, scope_column, checksum,
                                           held, location)
        finally:
            batch.release()

    def _replace_scope(self, spec: Any, batch: Any, interval: Interval, run: RunInfo, target: dict[str, str],
                       partitions: list[str], scope_column: str, checksum: str | None, held: Any = None,
                       location: str | None = None) -> Any:
        from dagguard.idempotent.engines import spark_ledger, spark_scope, spark_write

        spark, quoted = self.connection, self.quoted(spec.table)
        # Another application may have replaced partitions while this one waited for the lock.
        spark.catalog.refreshTable(quoted)
        owns = self._scope(spec, interval, target, scope_column)
        current = spark.table(quoted).where(owns)
        names = batch.columns
        # The scope's files (one planning of the scan, no Spark job): none, and the scope is
        # empty; the files of dagguard's last write there, and their rows are known (spark_scope).
        files = spark_scope.list_files(spark, current)
        empty_scope = files == {}
        whole = len(names) == len(target)  # the batch gives every column: its rows can equal the scope's
        record = None
        if files is not None and location is not None:
            owned = ((scope_column, "partition", interval.partition_key) if spec.strategy == "overwrite_partition"
                     else (scope_column, "interval", interval.start.isoformat(), interval.end.isoformat()))
            record = spark_scope.ScopeRecord(spark, location, owned)
        recorded = record.fingerprint(files, target) if record is not None and whole and files else None
        theirs = None
        if spec.strategy != "merge" and whole:
            # The scope's fingerprint counts its rows too: one Spark job for both, unless recorded.
            theirs = (0, 0, 0) if empty_scope else recorded or spark_write.fingerprint(current, names)
            empty_scope = theirs[0] == 0
        # Into an empty scope nothing can be unchanged: a guarded batch is checked, counted and
        # fingerprinted by the job that writes it, its one evaluation.
        mine = batch.fingerprint() if batch.needs_fingerprint_first() or not empty_scope else None
        if spec.strategy == "merge" and empty_scope:
            # Every row is new: no join with the scope, no counting job.
            plan = spark_write.Plan(_filled(batch.typed, target) if mine[0] else None, mine[0], 0, 0)
        elif spec.strategy == "merge" and recorded is not None and recorded == mine:
            plan = spark_write.Plan(None, 0, 0, 0)  # the scope holds exactly the batch's rows: nothing to merge
        elif spec.strategy == "merge":
            plan = spark_write.plan_merge(current, batch.typed, spec.unique_key, list(target), spec.delete_missing)
        elif mine is not None and theirs == mine:
            plan = spark_write.Plan(None, 0, 0, 0)  # a rerun: the scope holds exactly these rows
            if record is not None and recorded is None and files:
                record.record(files, target, theirs)  # the next rerun need not read them again
        else:
            stored = 0 if empty_scope else theirs[0] if theirs is not None else current.count()
            rows = batch.rows() if mine is None or mine[0] else None
            plan = spark_write.Plan(None if rows is None else _filled(rows, target), 0, 0, stored)
        after = None
        if plan.rows is not None or plan.deleted:
            kinds = {column: target[column] for column in partitions}
            # overwrite_partition of a date or text partition owns one partition, which rows (all
            # of them checked to carry its value) replace whole: none is left stale, and no Spark
            # job need list them. Neither is any in an empty scope.
            one_partition = (spec.strategy == "overwrite_partition" and partitions == [scope_column]
                             and target[scope_column] != "timestamp")
            # The scope's partitions the new rows leave empty are its folders the write leaves
            # untouched, found after it: no job where the rows fill every partition they replace
            # (as a rewrite of the interval's hours does), one reading the stale files' partition
            # values where they do not (spark_scope lists the files).
            after_write = files is not None and plan.rows is not None
            if empty_scope or (one_partition and plan.rows is not None) or after_write:
                stale = []
            else:
                # The new rows' partitions read from the typed batch, never from the rows the
                # write observes (an observation reports the first job that runs it).
                fresh = (plan.rows if spec.strategy == "merge" else batch.typed) if plan.rows is not None else None
                stale = spark_write.stale_partitions(current, fresh, kinds)
            if held is not None:
                held.check()  # still this writer's lock, right before replacing partitions
            try:
                spark_write.overwrite_partitions(spark, quoted, plan.rows, stale, kinds)
            except Exception as exc:
                batch.raise_if_check_failed(exc)
                raise
            if after_write:  # (the files written are listed for the scope's record too)
                after = self._scope_files(quoted, owns)
                untouched = spark_scope.untouched_folders(files, after)
                if untouched:
                    now = spark.table(quoted).where(owns)
                    stale = spark_write.partitions_in_folders(now, untouched, kinds)
                    spark_write.overwrite_partitions(spark, quoted, None, stale, kinds)
                    after = self._scope_files(quoted, owns)
        if spec.strategy != "merge":
            # Replace and overwrite_partition count (and fingerprint) the rows written.
            mine = batch.written() if plan.rows is not None else (mine or (0, 0, 0))
            plan = spark_write.Plan(plan.rows, mine[0] if plan.rows is not None else 0, 0, plan.deleted)
            if record is not None and whole and after:  # (a merge's scope has other rows than its batch)
                # The next rerun finds exactly these files, or reads the rows (see spark_scope).
                record.record(after, target, mine)
        # Python rows keep the row checksum the other engines give them; a DataFrame (and Arrow
        # or pandas rows) the fingerprint Spark computed.
        checksum = checksum or spark_write.as_checksum(mine, self.version)
        counts = (mine[0], plan.inserted, plan.updated, plan.deleted)
        spark_ledger.append_row(spark, spec.table.parts[:-1], run, str(spec.table), interval.start, interval.end,
                                spec.strategy, counts, checksum)
        from dagguard.idempotent.write_spec import WriteResult

        return WriteResult(
            table=str(spec.table), interval_start=interval.start.isoformat(),
            interval_end=interval.end.isoformat(), strategy=spec.strategy, rows_inserted=plan.inserted,
            rows_updated=plan.updated, rows_deleted=plan.deleted, row_count=mine[0], checksum=checksum,
            engine=self.description)

    def _scope_files(self, quoted: str, owns: Any) -> Any:
        """The files of the rows `owns` selects as they are now (after this session's write)."""
        from dagguard.idempotent.engines import spark_scope

        self.connection.catalog.refreshTable(quoted)
        return spark_scope.list_files(self.connection, self.connection.table(quoted).where(owns)) or {}

    def _check_partitioning(self, spec: Any, table: str, column: str, partitions: list[str],
                            target: dict[str, str]) -> None:
        """The table must be partitioned on the column the write selects on."""
        if column not in partitions:
            layout = f"partitioned by {', '.join(partitions)}" if partitions else "not partitioned"
            raise PartitioningError(
                f"table {table} is {layout}, not on {column!r}: Spark's Parquet tables cannot delete rows, "
                f"only replace whole partitions, so strategy={spec.strategy!r} of an interval selected on "
                f"{column!r} would have to rewrite the whole table, which dagguard refuses; nothing was "
                f"written. Create the table PARTITIONED BY ({column}), or use a Delta or Iceberg table")
        kind = target[column]
        wanted = ("timestamp",) if spec.strategy != "overwrite_partition" else ("date", "string", "timestamp")
        if kind not in wanted:
            raise TargetTableError(
                f"the {'partition' if spec.strategy == 'overwrite_partition' else 'time'} column {column!r} of "
                f"{table} is a Spark {kind}, not a {' or '.join(wanted)}; the interval cannot be selected on it")

    @staticmethod
    def _scope(spec: Any, interval: Interval, target: dict[str, str], column: str) -> Any:
        """The rows this write owns: the interval's, or the partition's (a timestamp partition
        column's partition is its UTC day)."""
        from datetime import timedelta

        from pyspark.sql import functions as F

        from dagguard.idempotent.engines.spark_write import quoted_name, sql_literal

        # (SQL text, one call into the JVM; built of column functions it took 40.)
        value, kind = quoted_name(column), target[column]
        if spec.strategy == "overwrite_partition" and kind != "timestamp":
            return F.expr(f"{value} = cast({sql_literal(spark_partition_value(interval, kind), kind)} as {kind})")
        start = interval.start
        end = interval.end
        if spec.strategy == "overwrite_partition":
            from datetime import datetime, timezone

            day = interval.partition_key
            start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            end = start + timedelta(days=1)
        return F.expr(f"{value} >= {sql_literal(start, 'timestamp')} AND {value} < {sql_literal(end, 'timestamp')}")

    def _frame_of(self, spec: Any, rows: Any, columns: Any, interval: Interval,
                  target: dict[str, str]) -> tuple[Any, str | None]:
        """Python, pandas or Arrow rows, checked as on the other engines, as a Spark DataFrame
        typed like the target's columns (a value that does not fit exactly is refused); with
        the row checksum of rows that stayed Python rows (None for Arrow)."""
        from dagguard.idempotent.batch import Batch
        from dagguard.idempotent.checksum import batch_checksum

        import pyarrow as pa
        from pyspark.sql import types as T
        from pyspark.sql.pandas.types import to_arrow_type

        from dagguard.idempotent.engines.delta_write import table_rows
        from dagguard.idempotent.precision import check_precision
        from dagguard.idempotent.write_prepare import prepare_batch
        from dagguard.idempotent.write_spec import _check_target

        batch = prepare_batch(spec, rows, columns, interval)
        if self._case_insensitive():
            from dagguard.idempotent.write_prepare import _spelled_as_target

            spec, batch = _spelled_as_target(spec, batch, target)
        _check_target(self, spec, batch, target)
        if len(batch):
            check_precision(batch, target, self.timestamp_digits, str(spec.table))
        schema = self.connection.table(self.quoted(spec.table)).schema
        fields = [field for field in schema.fields if field.name in batch.columns]
        if len(batch) and spec.partition_column in batch.columns and target[spec.partition_column] == "date":
            from dagguard.idempotent.write_prepare import _constant

            batch = _constant(batch, spec.partition_column, interval.partition_key)
        arrow_schema = pa.schema([pa.field(f.name, to_arrow_type(f.dataType, timezone="UTC"), nullable=True) for f in fields])
        data = table_rows(batch, arrow_schema, str(spec.table), "Spark")
        checksum = batch_checksum(batch) if isinstance(batch, Batch) else None
        return self.connection.createDataFrame(data, schema=T.StructType(fields)), checksum

    def read_ledger(self, table: str | None) -> LedgerReport:
        """Every ledger row of the catalog's databases (see spark_ledger)."""
        from dagguard.idempotent.engines import spark_ledger

        return spark_ledger.read_entries(self.connection, table)


def _filled(rows: Any, target: dict[str, str]) -> Any:
    """`rows` with every column of the table, in its order: those the batch lacks NULL, as a
    replace (and a merge's new rows) writes them on the other engines."""
    from pyspark.sql import functions as F

    if list(rows.columns) == list(target):
        return rows  # (as they are: another projection would cost the driver its analysis)
    return rows.select(*[F.col(c) if c in rows.columns else F.lit(None).cast(kind).alias(c)
                         for c, kind in target.items()])


def spark_partition_value(interval: Interval, declared: str) -> Any:
    """The interval's partition as stored in a partition column declared `declared`: a date as
    itself, a timestamp as the UTC midnight starting it, anything else as the ISO date."""
    from datetime import datetime, timezone

    day = interval.partition_key
    if declared == "date":
        return day
    if declared == "timestamp":
        return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return day.isoformat()


def _from_spark(exc: BaseException) -> bool:
    """Did pyspark, py4j or the JVM raise `exc`?"""
    return type(exc).__module__.split(".", 1)[0] in ("pyspark", "py4j")


def _is_missing(exc: BaseException) -> bool:
    text = str(exc)
    return "TABLE_OR_VIEW_NOT_FOUND" in text or "SCHEMA_NOT_FOUND" in text


def _refused(exc: BaseException, what: str) -> IdempotentWriteError:
    """One clear error for an exception of Spark's: its first line, not the JVM's stack."""
    lines = str(exc).strip().splitlines()
    reason = " ".join(lines[0].split()) if lines else type(exc).__name__
    return DatabaseRefusedError(f"{what}; nothing was written: {type(exc).__name__}: {reason}")
