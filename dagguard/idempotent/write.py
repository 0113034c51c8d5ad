"""write_interval: validate the batch, then write it in one transaction with the chosen strategy."""

from __future__ import annotations

import dataclasses
import functools
import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta, timezone
from typing import Any, Callable, Sequence

from dagguard.idempotent import strategies
from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch, replace_column
from dagguard.idempotent.checksum import recorded_as, write_checksum
from dagguard.idempotent.connections import open_engine
from dagguard.idempotent.engines import Engine
from dagguard.idempotent.errors import (ArgumentTypeError, ConcurrentWriteError, DatabaseRefusedError,
                                        IntervalViolationError, InvalidArgumentError)
from dagguard.idempotent.identifiers import quote_identifier
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.ledger import RunInfo, ensure_ledger, last_checksum, record_write
from dagguard.idempotent.precision import check_precision
from dagguard.idempotent.engines.base import is_naive_timestamp, is_timestamp_type
from dagguard.idempotent.write_prepare import (_constant, _spelled_as_target, check_scope,  # noqa: F401
                                              prepare_batch, scope_label)
from dagguard.idempotent.write_spec import (WriteResult, WriteSpec, _check_target, _folded_table_hint,  # noqa: F401
                                           _unencodable)


# Called with (statement number, SQL) after each statement; tests inject failures with it.
StatementObserver = Callable[[int, str], None]


def lookback_interval(spec: WriteSpec, interval: Interval | None, lookback: Any,
                      partition_key: str | None) -> Interval | None:
    """The interval a write with `lookback` covers (see dagguard.idempotent.lookback)."""
    from dagguard.idempotent.lookback import check_lookback, widen

    check_lookback(lookback, spec.strategy)
    if not lookback:
        return interval
    if interval is None:
        raise InvalidArgumentError(f"lookback={lookback!r} widens an interval, and partition {partition_key!r} "
                                   f"comes without one: pass interval=Interval(start, end)")
    return widen(interval, lookback)


def write_interval(conn: Any, table: str, rows: Any, interval: Interval | None = None, *,
                   time_column: str | None = None, unique_key: Sequence[str] | str | None = None,
                   strategy: str = "replace", delete_missing: bool = False,
                   partition_column: str = "ds", columns: Sequence[str] | None = None,
                   run: RunInfo | None = None, partition_key: str | None = None,
                   lookback: int | timedelta | None = None) -> WriteResult:
    """Write `rows` as the whole content of `interval` in `table`, in one transaction.

    `conn` is a DB-API connection (sqlite3, duckdb, psycopg 3), a URL (sqlite:///f.db,
    duckdb:///f.duckdb, postgresql://...), an Airflow connection id, or a SparkSession (with
    `rows` a Spark DataFrame or any of the other kinds). Rerunning with the same rows leaves the
    table unchanged. `partition_key` names an Airflow partition: with
    strategy='overwrite_partition' the write owns the rows whose `partition_column` equals it
    (`interval` then optional: given, the rows' times must lie in it); with replace or merge
    the interval still scopes the write and the key is recorded in the ledger (not on Spark). `lookback` (N
    intervals of the interval's length, or a timedelta) widens the interval back, so the write
    also rewrites the N intervals before it, late rows included (not with overwrite_partition).
    """
    if interval is not None and not isinstance(interval, Interval):
        raise ArgumentTypeError(f"interval must be a dagguard.idempotent.Interval(start, end), not a "
                                f"{type(interval).__name__}")
    spec = WriteSpec.build(table, strategy, time_column, unique_key, delete_missing, partition_column)
    interval = lookback_interval(spec, interval, lookback, partition_key)

    from dagguard.idempotent.engines.spark import is_spark_frame, is_spark_session  # (imports no pyspark)

    if is_spark_session(conn):  # the rows go to Spark whole, and are checked there
        from dagguard.idempotent.engines.spark import SparkEngine

        if partition_key is not None or interval is None:
            from dagguard.idempotent.errors import UnsupportedConnectionError

            raise UnsupportedConnectionError(
                "a Spark write needs an interval and takes no partition_key yet: pass the partition's "
                "interval, or write the partition through a SQL engine")
        return SparkEngine(conn).write(spec, rows, columns, interval, run or RunInfo())
    if is_spark_frame(rows):
        raise ArgumentTypeError(
            "rows is a Spark DataFrame: write it through its SparkSession (conn=spark, or "
            "@idempotent_write under @task.pyspark), into a table of the session's catalog")
    batch = prepare_batch(spec, rows, columns, interval, partition_key)
    with open_engine(conn) as engine:
        return write_batch(engine, spec, batch, interval, None, run or RunInfo(), partition_key=partition_key)


def write_batch(engine: Engine, spec: WriteSpec, batch: AnyBatch, interval: Interval | None,
                checksum: str | None, run: RunInfo,
                observer: StatementObserver | None = None, *, partition_key: str | None = None) -> WriteResult:
    """Run the write in a transaction, retrying write-write conflicts where the engine has them.

    `checksum` None: the engine's own fingerprint of the batch where it has one, else
    write_checksum(). `partition_key`: see write_interval."""
    check_scope(spec, interval, partition_key)
    where = scope_label(interval, partition_key)
    if partition_key is not None and engine.dialect in ("iceberg", "delta"):
        if spec.strategy == "overwrite_partition" or interval is None:
            from dagguard.idempotent.errors import UnsupportedConnectionError

            raise UnsupportedConnectionError(
                f"writing {spec.table} as partition {partition_key!r} (the partition column equal to the key) "
                f"is supported on SQLite, DuckDB and PostgreSQL; on {engine.dialect} write the partition's "
                f"interval with strategy='replace' or 'merge'")
    # The table formats have no SQL transaction and commit a table version themselves, through two
    # different hooks: Iceberg checks and writes the whole batch in engine.write_batch; Delta hands
    # each version it reads to _write_table_version's checks (engine.write(..., prepare)).
    if partition_key is not None:  # their ledgers read it from the run
        run = dataclasses.replace(run, partition_key=partition_key)
    if engine.dialect == "iceberg":
        return dataclasses.replace(engine.write_batch(spec, batch, interval, checksum, run, observer),
                                   partition_key=partition_key)
    if getattr(engine, "commits_table_versions", False):  # Delta Lake
        return dataclasses.replace(_write_table_version(engine, spec, batch, interval, run),
                                   partition_key=partition_key)
    lock_key = (f"{spec.table}|partition|{partition_key}"
                if partition_key is not None and (interval is None or spec.strategy == "overwrite_partition")
                else f"{spec.table}|{interval.start.isoformat()}|{interval.end.isoformat()}")  # type: ignore[union-attr]
    for attempt in range(1, engine.max_attempts + 1):
        try:
            with engine.transaction(lock_key):
                return _write_in_transaction(engine, spec, batch, interval, checksum, run, observer,
                                             partition_key)
        except Exception as exc:
            if isinstance(exc, UnicodeEncodeError):
                raise IntervalViolationError(_unencodable(batch, exc, spec.table, where)) from exc
            if not engine.is_retryable(exc):
                if _from_the_driver(exc):
                    raise DatabaseRefusedError(
                        f"the {engine.dialect} database refused the write of {spec.table} for {where}; "
                        f"nothing was written: {type(exc).__name__}: {exc}") from exc
                raise
            if attempt == engine.max_attempts:
                raise ConcurrentWriteError(
                    f"gave up writing {spec.table} {where} after {attempt} write-write conflicts "
                    f"with concurrent writers: {exc}") from exc
            time.sleep(min(1.0, 0.01 * 2 ** attempt) * random.uniform(0.5, 1.5))
    raise AssertionError("unreachable")


def _write_table_version(engine: Any, spec: WriteSpec, batch: AnyBatch, interval: Interval,
                         run: RunInfo) -> WriteResult:
    """A table format (Delta Lake) writes one table version itself; on each version it reads,
    the batch is checked against the table's columns here, as on the SQL engines."""

    def prepare(target_columns: dict[str, str]) -> tuple[AnyBatch, tuple[Any, Any, Any]]:
        checked = batch
        _check_target(engine, spec, checked, target_columns)
        if len(checked):
            check_precision(checked, target_columns, engine.timestamp_digits, str(spec.table))
        start, end = interval.start, interval.end
        if spec.time_column and is_naive_timestamp(target_columns[spec.time_column]):
            start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
            if len(checked) and spec.time_column in checked.columns:
                checked = _naive_utc(checked, spec.time_column)
        partition_value: object = interval.partition_key
        if spec.partition_column:
            partition_value = _partition_value(engine, target_columns[spec.partition_column],
                                               interval.partition_key)
            # The checks filled the column with the partition's date: refilled only where the
            # column stores it otherwise (text, a timestamp), not a second time with the same date.
            if len(checked) and partition_value != interval.partition_key:
                checked = _constant(checked, spec.partition_column, partition_value)
        return checked, (start, end, partition_value)

    counts, checksum = engine.write(spec, interval, run, prepare)
    return _result(engine, spec, batch, interval, checksum, counts)


# Where the drivers' exceptions live; OverflowError is how sqlite3 and duckdb refuse to bind
# an integer wider than 64 bits.
_DRIVER_MODULES = ("sqlite3", "duckdb", "_duckdb", "psycopg")


def _from_the_driver(exc: BaseException) -> bool:
    """Did the database or its driver raise `exc` (not dagguard's own code)?"""
    module = type(exc).__module__.split(".", 1)[0]
    return module in _DRIVER_MODULES or isinstance(exc, OverflowError)


def _has_null(batch: AnyBatch, at: int) -> bool:
    if isinstance(batch, ArrowBatch):
        return batch.table.column(at).null_count > 0
    return any(row[at] is None for row in batch.rows)


def _naive_utc(batch: AnyBatch, column: str) -> AnyBatch:
    # A TIMESTAMP WITHOUT TIME ZONE column would otherwise convert aware values through the
    # session's time zone; storing UTC wall time keeps the interval filter exact.
    if isinstance(batch, ArrowBatch):
        import pyarrow as pa

        # Arrow keeps instants as UTC numbers: dropping the zone leaves the UTC wall time
        # (in the column's unit: a TIMESTAMP_NS column keeps the nanoseconds).
        times = batch.column(column)
        return batch.with_array(column, times.cast(pa.timestamp(times.type.unit)))
    at = batch.index(column)
    return replace_column(batch, column, (row[at].replace(tzinfo=None) for row in batch.rows))


def _partition_value(engine: Engine, declared: str, day: date) -> Any:
    """The partition `day` as stored in a partition column declared `declared`: a DATE as
    itself; in a timestamp column the UTC midnight that starts it (ISO text would be read in
    the session's time zone, and land outside the UTC day that engine.partition_test deletes);
    elsewhere the ISO date, not a DATE the engine may refuse."""
    if declared.lower().startswith("date") and not declared.lower().startswith("datetime"):
        return day
    if engine.typed_timestamps and is_timestamp_type(declared):
        midnight = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        return midnight.replace(tzinfo=None) if is_naive_timestamp(declared) else midnight
    return day.isoformat()


def _key_value(engine: Engine, spec: WriteSpec, declared: str, key: str) -> Any:
    """The partition key as stored in a partition column declared `declared`: text as itself; a
    DATE or timestamp column takes a key that names a day ('2026-01-05', or its midnight
    '2026-01-05T00:00:00'), as _partition_value stores that day."""
    if not _dated(declared):
        return key
    day = _key_day(key)
    if day is None:
        raise InvalidArgumentError(
            f"partition key {key!r} does not name a day, and the partition column {spec.partition_column!r} of "
            f"{spec.table} is declared {declared}; nothing was written. Store partition keys in a text "
            f"column, or give the timetable key_format='%Y-%m-%d'")
    return _partition_value(engine, declared, day)


def _dated(declared: str) -> bool:
    """A DATE or timestamp column (its partitions are days), not text."""
    return declared.lower().startswith("date") or is_timestamp_type(declared)


def _key_day(key: str) -> date | None:
    """The day a partition key names: 'YYYY-MM-DD', or a midnight 'YYYY-MM-DDT00:00:00'."""
    try:
        return date.fromisoformat(key)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(key)
    except ValueError:
        return None
    if (moment.hour, moment.minute, moment.second, moment.microsecond) != (0, 0, 0, 0) or moment.tzinfo:
        return None
    return moment.date()


def _write_in_transaction(engine: Engine, spec: WriteSpec, batch: AnyBatch, interval: Interval | None,
                          checksum: str, run: RunInfo, observer: StatementObserver | None,
                          partition_key: str | None = None) -> WriteResult:
    target_columns = engine.table_columns(spec.table)
    if target_columns is not None and engine.case_insensitive_names:
        spec, batch = _spelled_as_target(spec, batch, target_columns)
    _check_target(engine, spec, batch, target_columns)
    if len(batch):
        # Before any statement: a value the column would round is refused, the batch whole.
        check_precision(batch, target_columns, engine.timestamp_digits, str(spec.table))
    start, end = (interval.start, interval.end) if interval is not None else (None, None)
    if (spec.time_column and engine.typed_timestamps
            and is_naive_timestamp(target_columns[spec.time_column])):
        if interval is not None:
            start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)  # type: ignore[union-attr]
        if len(batch) and spec.time_column in batch.columns:
            batch = _naive_utc(batch, spec.time_column)
    stored: object = partition_key if partition_key is not None else interval.partition_key  # type: ignore[union-attr]
    partition_value: object = stored
    if spec.partition_column:
        declared = target_columns[spec.partition_column]
        partition_value = (_key_value(engine, spec, declared, partition_key) if partition_key is not None
                           else _partition_value(engine, declared, interval.partition_key))  # type: ignore[union-attr]
        if len(batch) and partition_value is not stored:
            batch = _constant(batch, spec.partition_column, partition_value)
    ensure_ledger(engine)
    in_place = engine.stage_in_place(batch, target_columns) if len(batch) else None
    try:
        return _write_rows(engine, spec, batch, interval, checksum, run, observer, target_columns,
                           (start, end, partition_value), in_place, partition_key)
    except BaseException:
        if in_place:
            engine.drop_staging(in_place)  # an Arrow registration, not SQL: safe after a failure
        raise
    finally:
        engine.forget_prepared()  # (converted rows no load took: a failed or skipped write)


def _write_rows(engine: Engine, spec: WriteSpec, batch: AnyBatch, interval: Interval | None,
                checksum: str | None, run: RunInfo, observer: StatementObserver | None,
                target_columns: dict[str, str], bounds: tuple[Any, Any, Any],
                in_place: str | None, partition_key: str | None = None) -> WriteResult:
    """The strategy's statements, after the batch has been checked against the target."""
    last = None
    checksum_first = checksum is None and not in_place and isinstance(batch, ArrowBatch) and len(batch) > 0
    if checksum_first:
        # The batch's checksum (numpy), and where the batch is not a rerun the values the engine
        # binds, are computed while the engine decides how to find the interval's rows: SQLite
        # surveys the stored times (2M rows: 0.5 CPU s), letting go of the GIL meanwhile. (A
        # failed survey leaves the block only once the thread is done; its result is dropped.)
        last = _last_checksum(engine, spec, interval, partition_key)
        with ThreadPoolExecutor(1, thread_name_prefix="dagguard-checksum") as pool:
            computed = pool.submit(_checksum_and_bound, engine, batch, last)
            in_interval, in_partition = _tests(engine, spec, target_columns, bounds, partition_key)
            checksum = computed.result()
    else:
        in_interval, in_partition = _tests(engine, spec, target_columns, bounds, partition_key)
    scope = _scope(spec, in_partition if in_partition is not None else in_interval)
    unchanged = False
    if in_place:
        last = _last_checksum(engine, spec, interval, partition_key)
        unchanged, fingerprint = _compare_fingerprints(engine, spec, batch, in_place, target_columns, scope,
                                                       rerun=lambda digest: last == digest)
        checksum = checksum or fingerprint
    checksum = checksum or write_checksum(batch)
    loaded = None
    # Only for Arrow batches, the columnar path: a rerun with Python rows keeps rewriting the
    # interval and reporting the rows it deleted and inserted, as it always has.
    if (not in_place and isinstance(batch, ArrowBatch) and len(batch) and engine.can_fingerprint
            and recorded_as(last if checksum_first else _last_checksum(engine, spec, interval, partition_key),
                            checksum, batch)):
        # A rerun of the ledger's last write of this interval: compare fingerprints of the
        # batch and of the interval, which costs less than rewriting the rows when they match
        # (an interval edited since then will not match, and is rewritten). The batch's comes
        # from the client where the engine can (SQLite), else from a staging table loaded once.
        mine = engine.batch_fingerprint(batch, tuple(sorted(batch.columns)), target_columns)
        if mine is None:
            loaded = engine.create_staging(spec.table, batch.columns)
            engine.load_staging(loaded, batch)
        unchanged, _ = _compare_fingerprints(engine, spec, batch, loaded, target_columns, scope, mine)
    if unchanged:
        # The interval already holds exactly these rows: rewriting them would change nothing.
        if in_place or loaded:
            engine.drop_staging(in_place or loaded)
        return _finish(engine, spec, batch, interval, checksum, run, {"deleted": 0, "inserted": 0, "updated": 0},
                       partition_key)
    counts = _apply(engine, spec, batch, loaded, in_place, target_columns, bounds,
                    (in_interval, in_partition, scope), observer)
    return _finish(engine, spec, batch, interval, checksum, run, counts, partition_key)


def _checksum_and_bound(engine: Engine, batch: AnyBatch, last: str | None) -> str:
    """The batch's checksum; unless it is `last`, the ledger's last of the interval (a rerun,
    most likely unchanged), the batch is also converted to what the engine binds."""
    checksum = write_checksum(batch)
    if not recorded_as(last, checksum, batch):
        engine.prepare_bound(batch)
    return checksum


def _tests(engine: Engine, spec: WriteSpec, target_columns: dict[str, str], bounds: tuple[Any, Any, Any],
           partition_key: str | None) -> tuple[strategies.IntervalTest | None, strategies.IntervalTest | None]:
    """(the interval's test, the partition's test): the one the strategy scopes its write with,
    the other None."""
    start, end, partition_value = bounds
    if (spec.strategy == "overwrite_partition" and partition_key is not None
            and not _dated(target_columns[spec.partition_column])):
        # A key kept as text: the partition is exactly the rows holding that text.
        return None, functools.partial(strategies.equal_to, value=partition_value)
    if spec.strategy == "overwrite_partition":
        return None, engine.partition_test(spec.table, spec.partition_column, partition_value,
                                           target_columns[spec.partition_column])
    return engine.interval_test(spec.table, spec.time_column, start, end), None


def _apply(engine: Engine, spec: WriteSpec, batch: AnyBatch, loaded: str | None, in_place: str | None,
           target_columns: dict[str, str], bounds: tuple[Any, Any, Any],
           tests: tuple[strategies.IntervalTest | None, strategies.IntervalTest | None, tuple[str, tuple[Any, ...]]],
           observer: StatementObserver | None) -> dict[str, int]:
    """The strategy's statements for a batch that changes the target (`loaded` into a staging
    table, or read `in_place`, or neither), and the rows they deleted, inserted and updated."""
    start, end, partition_value = bounds
    in_interval, in_partition, scope = tests
    staging = None
    in_scope = None
    if spec.strategy == "merge" and len(batch) and not loaded:
        in_scope = _rows_in_scope(engine, spec, scope, exact=engine.counts_merge_by_difference)
    # A merge into an empty interval inserts every row: straight into the target, like
    # replace, without a staging copy (PostgreSQL, 1M rows: 0.47 s of a 2.15 s write).
    direct = not loaded and (spec.strategy != "merge" or in_scope == 0)
    if spec.strategy == "merge" and len(batch) and not (direct or loaded or in_place or spec.delete_missing):
        upserted = _upsert(engine, spec, batch, in_interval, scope, observer)
        if upserted is not None:
            return upserted
    if len(batch) and direct:
        staging = spec.table.quoted  # rows go straight into the target, after any DELETE
    elif in_place:
        staging = in_place
    elif loaded:
        staging = loaded
        engine.index_staging(staging, spec.unique_key)
    elif len(batch):
        staging = engine.create_staging(spec.table, batch.columns)
        engine.load_staging(staging, batch)
        engine.index_staging(staging, spec.unique_key)
    nullable = frozenset(k for k in spec.unique_key if k in batch.columns
                         and _has_null(batch, batch.index(k)))
    plan_input = strategies.PlanInput(
        strategy=spec.strategy, target=spec.table, staging=staging, columns=batch.columns,
        time_column=spec.time_column, unique_key=spec.unique_key, nullable_keys=nullable,
        delete_missing=spec.delete_missing, partition_column=spec.partition_column,
        start=start, end=end, partition_value=partition_value, direct_insert=direct,
        text_compared=engine.compared_as_text(target_columns), in_interval=in_interval,
        in_partition=in_partition)
    counts = {"deleted": 0, "inserted": 0, "updated": 0}
    first_number = 0
    if spec.strategy == "merge" and staging and not direct:
        engine.size_joins(len(batch))
    rows_before = None
    if spec.strategy == "merge" and staging and not direct and engine.features.merge:
        plan_input, counted, rows_before = _count_merge(engine, spec, batch, plan_input, target_columns,
                                                        scope, in_scope)
        if plan_input.merge_counts:
            counts["inserted"], counts["updated"] = plan_input.merge_counts[:2]
        if observer:
            observer(0, counted)
        first_number = 1
    merged = None
    for number, statement in enumerate(strategies.plan(plan_input, engine.features), first_number):
        if statement.effect == strategies.BULK_INSERT:
            engine.load_staging(spec.table.quoted, batch)
            counts["inserted"] += len(batch)
        elif statement.effect in (strategies.COUNT_INSERT, strategies.COUNT_UPDATE):
            value = int(engine.query(statement.sql, statement.params)[0][0])
            counts["inserted" if statement.effect == strategies.COUNT_INSERT else "updated"] = value
        elif statement.effect == strategies.COUNTED:
            engine.execute(statement.sql, statement.params)
        else:
            affected = engine.execute(statement.sql, statement.params)
            if statement.effect == strategies.MERGED:
                merged = affected
            else:
                counts[statement.effect] += max(affected, 0)
        if observer:
            observer(number, statement.sql)
    if rows_before is not None:
        # The MERGE inserted what the interval gained, plus what the delete of missing rows
        # took out before it; the rest of its rows were updates.
        rows_after = _rows_in_scope(engine, spec, scope, exact=True)
        # (Writers outside dagguard, which the interval lock does not stop, can skew this.)
        counts["inserted"] = max(rows_after - rows_before + counts["deleted"], 0)
        counts["updated"] = max(max(merged or 0, 0) - counts["inserted"], 0)
    elif merged is not None and merged >= 0:
        # What MERGE changed beyond the counted inserts and updates was deleted BY SOURCE.
        counts["deleted"] += max(merged - counts["inserted"] - counts["updated"], 0)
    if staging and not direct:
        engine.drop_staging(staging)
    elif in_place:
        engine.drop_staging(in_place)
    return counts


def _upsert(engine: Engine, spec: WriteSpec, batch: AnyBatch, in_interval: strategies.IntervalTest | None,
            scope: tuple[str, tuple[Any, ...]], observer: StatementObserver | None) -> dict[str, int] | None:
    """The merge as the engine's one-pass upsert where it has one (SQLite) and no batch key is
    NULL, with its counts; None otherwise. What the interval gained was inserted, the upsert's
    other changes were updates."""
    if in_interval is None or any(_has_null(batch, batch.index(k)) for k in spec.unique_key):
        return None
    if not engine.can_upsert(spec.table, spec.unique_key):
        return None
    before = _rows_in_scope(engine, spec, scope, exact=True)
    changes, sql = engine.upsert(spec.table, batch, spec.unique_key, spec.time_column, in_interval)
    if observer:
        observer(0, sql)
    inserted = _rows_in_scope(engine, spec, scope, exact=True) - before
    return {"deleted": 0, "inserted": inserted, "updated": changes - inserted}


def _rows_in_scope_sql(spec: WriteSpec, scope: tuple[str, tuple[Any, ...]], exact: bool) -> str:
    # (On PostgreSQL, LIMIT 1 may scan the other intervals' rows first: 0.05 s at 1M rows.)
    what = "count(*)" if exact else "1"
    return f"SELECT {what} FROM {spec.table.quoted} WHERE {scope[0]}" + ("" if exact else " LIMIT 1")


def _rows_in_scope(engine: Engine, spec: WriteSpec, scope: tuple[str, tuple[Any, ...]], exact: bool) -> int:
    """The target's rows in scope: counted where `exact`, else 0 or 1 for none or some."""
    found = engine.query(_rows_in_scope_sql(spec, scope, exact), scope[1])
    return int(found[0][0]) if exact else len(found)


def _count_merge(engine: Engine, spec: WriteSpec, batch: AnyBatch, plan_input: strategies.PlanInput,
                 target_columns: dict[str, str], scope: tuple[str, tuple[Any, ...]], in_scope: int | None,
                 ) -> tuple[strategies.PlanInput, str, int | None]:
    """How a local MERGE learns its counts: (the plan input, the SQL that counted, and the
    interval's row count before the MERGE where its counts come from the difference).
    `in_scope` is _rows_in_scope()'s answer, exact where the engine counts by difference."""
    by_difference = (engine.counts_merge_by_difference
                     and not (spec.delete_missing and engine.features.merge_by_source))
    counted = _rows_in_scope_sql(spec, scope, exact=engine.counts_merge_by_difference)
    if in_scope is None:
        in_scope = _rows_in_scope(engine, spec, scope, exact=engine.counts_merge_by_difference)
    if not in_scope:
        # Every batch row is new, and the join would scan the whole batch to find that out.
        return dataclasses.replace(plan_input, merge_counts=(len(batch), 0, 0)), counted, None
    if by_difference:
        return dataclasses.replace(plan_input, merge_alone=True), counted, in_scope
    summary = strategies.merge_summary(plan_input, engine.features)
    new, changed, matched = (int(v) for v in engine.query(summary.sql, summary.params)[0])
    # Rewriting pays off as soon as one matched row changed (DuckDB 2.0, 1M rows, whole
    # write: MERGE 0.38-0.39 s whether 0.1% or 100% of them changed, its join dominating;
    # delete + reinsert 0.31 s). A MERGE that also deletes BY SOURCE stays one statement.
    rewrite = (engine.prefers_rewrite and changed > 0
               and not (spec.delete_missing and engine.features.merge_by_source)
               and set(batch.columns) == set(target_columns)
               and not engine.has_unique_constraint(spec.table))
    interval_rows = _rows_in_scope(engine, spec, scope, exact=True) if rewrite and not spec.delete_missing else None
    return dataclasses.replace(plan_input, merge_counts=(new, changed, matched), rewrite_matched=rewrite,
                               interval_rows=interval_rows), summary.sql, None


def _scope(spec: WriteSpec, test: strategies.IntervalTest) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause selecting the target rows this write owns (the interval's, or the
    partition's for overwrite_partition), and its parameters."""
    column = spec.partition_column if spec.strategy == "overwrite_partition" else spec.time_column
    return test(quote_identifier(column))


def _compare_fingerprints(engine: Engine, spec: WriteSpec, batch: AnyBatch, source: str | None,
                          target_columns: dict[str, str], scope: tuple[str, tuple[Any, ...]],
                          mine: tuple[int, ...] | None = None,
                          rerun: Callable[[str], bool] | None = None) -> tuple[bool, str | None]:
    """(the target's rows in scope equal the batch, the batch's checksum from its fingerprint);
    the batch's fingerprint is `mine`, or computed by the engine over `source`. `rerun` says
    whether that checksum is the ledger's last for the interval: if not, the target's
    fingerprint is not worth computing."""
    columns = tuple(sorted(batch.columns))
    if mine is None and source is not None:
        mine = engine.fingerprint(source, columns, "1 = 1", ())
    if mine is None:
        return False, None
    checksum = _checksum_of(engine, mine)
    # replace and overwrite_partition give columns the batch lacks their default: skipping is
    # only right when the batch defines every column. A merge leaves such columns alone.
    if spec.strategy != "merge" and set(columns) != set(target_columns):
        return False, checksum
    if rerun is not None and not rerun(checksum):
        return False, checksum
    theirs = engine.fingerprint(spec.table.quoted, columns, *scope)
    return theirs == mine, checksum


def _checksum_of(engine: Engine, fingerprint: tuple[int, ...]) -> str:
    """The checksum the ledger records for an engine's fingerprint (count, sums)."""
    kind = f"{engine.dialect}{'.'.join(str(v) for v in engine.version[:2])}{engine.fingerprint_form}-"
    return f"{fingerprint[0]}:{kind}{'.'.join(format(v, 'x') for v in fingerprint[1:])}"


def _last_checksum(engine: Engine, spec: WriteSpec, interval: Interval | None,
                   partition_key: str | None) -> str | None:
    start, end = (interval.start, interval.end) if interval is not None else (None, None)
    return last_checksum(engine, str(spec.table), start, end, partition_key)


def _finish(engine: Engine, spec: WriteSpec, batch: AnyBatch, interval: Interval | None, checksum: str,
            run: RunInfo, counts: dict[str, int], partition_key: str | None = None) -> WriteResult:
    """Record the write in the ledger and describe it."""
    start, end = (interval.start, interval.end) if interval is not None else (None, None)
    record_write(engine, run, str(spec.table), start, end, spec.strategy,
                 (len(batch), counts["inserted"], counts["updated"], counts["deleted"]), checksum,
                 partition_key)
    return _result(engine, spec, batch, interval, checksum, counts, partition_key)


def _result(engine: Any, spec: WriteSpec, batch: AnyBatch, interval: Interval | None, checksum: str,
            counts: dict[str, int], partition_key: str | None = None) -> WriteResult:
    return WriteResult(
        table=str(spec.table), interval_start=interval.start.isoformat() if interval is not None else None,
        interval_end=interval.end.isoformat() if interval is not None else None, strategy=spec.strategy,
        rows_inserted=counts["inserted"], rows_updated=counts["updated"],
        rows_deleted=counts["deleted"], row_count=len(batch), checksum=checksum,
        engine=engine.description, partition_key=partition_key)

