"""IntervalMergeOperator: run a SQL query for the interval and write its rows idempotently.

Imports Airflow at module import; dagguard.idempotent loads this module only on first access
to IntervalMergeOperator.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

from airflow.sdk import BaseOperator

from dagguard.idempotent.connections import open_engine
from dagguard.idempotent.decorator import run_info_from_context, widened_scope
from dagguard.idempotent.errors import InvalidArgumentError
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.lookback import check_lookback
from dagguard.idempotent.outlets import announce_partition
from dagguard.idempotent.partitions import write_scope
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch

# `%(start)s` in source_sql, rewritten to each driver's named-parameter style.
_NAMED = re.compile(r"%\((start|end|ds|partition_key)\)s")
_STYLE = {"sqlite": ":{}", "duckdb": "${}", "postgres": "%({})s"}


def _values(sql: str, interval: Interval | None, partition_key: str | None) -> dict[str, Any]:
    """The parameters `sql` uses; a partition without a period has no start, end or ds, and a
    query reading them would select nothing and empty the partition: refused."""
    values: dict[str, Any] = {"partition_key": partition_key}
    if interval is not None:
        values.update(start=interval.start, end=interval.end, ds=interval.partition_key.isoformat())
    used = set(_NAMED.findall(sql))
    missing = sorted(name for name in used if values.get(name) is None)
    if missing:
        raise InvalidArgumentError(
            f"source_sql uses {', '.join(f'%({m})s' for m in missing)}, which this run does not have "
            f"(its partition {partition_key!r} has no period, or the run has no partition); nothing was written")
    return {name: values[name] for name in used}


def source_parameters(dialect: str, sql: str, interval: Interval | None, adapt: Any,
                      partition_key: str | None = None) -> tuple[str, dict[str, Any]]:
    """`sql` with %(start)s / %(end)s / %(ds)s / %(partition_key)s in the driver's style, and their values."""
    rewritten = _NAMED.sub(lambda m: _STYLE[dialect].format(m.group(1)), sql)
    return rewritten, {name: adapt(value) for name, value in _values(sql, interval, partition_key).items()}


def literal_parameters(sql: str, interval: Interval | None, partition_key: str | None = None) -> str:
    """`sql` with %(start)s / %(end)s / %(ds)s / %(partition_key)s as quoted literals, for engines
    that bind no parameters (delta-rs's SQL): instants as UTC ISO text, which a timestamp column
    casts exactly."""
    values = _values(sql, interval, partition_key)
    quoted = {name: (value.strftime("'%Y-%m-%dT%H:%M:%S.%fZ'") if name in ("start", "end")
                     else "'" + str(value).replace("'", "''") + "'") for name, value in values.items()}
    return _NAMED.sub(lambda m: quoted[m.group(1)], sql)


class IntervalMergeOperator(BaseOperator):
    """Read `source_sql` for the run's data interval and write the rows into `target_table`.

    Source and target are in the database of `conn_id`; the rows travel through the worker,
    are validated like any batch (inside the interval, unique keys) and written in one
    transaction with `strategy` (merge by default). On a partitioned run the interval is the
    partition's period (or, with strategy="overwrite_partition", the rows whose
    `partition_column` equals the key); `%(partition_key)s` in source_sql is the run's key.
    `lookback=N` (or a timedelta) widens the interval over the N intervals before it:
    `%(start)s` is then the widened start, so late rows of those intervals are picked up.
    """

    template_fields: Sequence[str] = ("source_sql", "target_table")
    template_ext: Sequence[str] = (".sql",)

    def __init__(self, *, conn_id: str, source_sql: str, target_table: str, time_column: str,
                 unique_key: Sequence[str] | str | None = None, strategy: str = "merge",
                 delete_missing: bool = False, partition_column: str = "ds",
                 lookback: int | timedelta | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        WriteSpec.build(target_table, strategy, time_column, unique_key, delete_missing, partition_column)
        check_lookback(lookback, strategy)
        self.lookback = lookback
        self.conn_id = conn_id
        self.source_sql = source_sql
        self.target_table = target_table
        self.time_column = time_column
        self.unique_key = unique_key
        self.strategy = strategy
        self.delete_missing = delete_missing
        self.partition_column = partition_column

    def execute(self, context: Any) -> dict[str, Any]:
        scope = widened_scope(write_scope(context, self.strategy, self.partition_column), self.lookback)
        interval, key = scope.interval, scope.partition_key
        spec = WriteSpec.build(self.target_table, self.strategy, self.time_column, self.unique_key,
                               self.delete_missing, self.partition_column)
        with open_engine(self.conn_id) as engine:
            if engine.dialect == "iceberg":  # checked before the Delta branch: a catalog has no SQL engine
                from dagguard.idempotent.errors import UnsupportedConnectionError

                raise UnsupportedConnectionError(
                    f"IntervalMergeOperator runs source_sql in the target's database, and an Iceberg "
                    f"catalog runs no SQL; write {self.target_table} from a @task with @idempotent_write("
                    f"conn_id=..., table={self.target_table!r}) returning the interval's rows instead")
            if getattr(engine, "commits_table_versions", False):
                # A lake (Delta): the query runs on delta-rs's SQL engine over the lake's tables.
                rows = engine.read_source(literal_parameters(self.source_sql, interval, key))
                batch = prepare_batch(spec, rows, None, interval, key)
                result = write_batch(engine, spec, batch, interval, None, run_info_from_context(context),
                                     partition_key=key)
                return self._finish(context, result)
            sql, params = source_parameters(engine.dialect, self.source_sql, interval, engine.adapt, key)
            cursor = engine.connection.cursor()
            try:
                cursor.execute(sql, params)
                columns = [d[0] for d in cursor.description]
                rows = cursor.fetchall()
            finally:
                cursor.close()
            if engine.dialect == "sqlite":
                engine.connection.commit()  # end the read's implicit transaction before BEGIN IMMEDIATE
            elif engine.dialect == "postgres" and not engine.connection.autocommit:
                engine.connection.rollback()
            batch = prepare_batch(spec, [_parse_time(r, columns, self.time_column) for r in rows],
                                  columns, interval, key)
            # No checksum given: write_batch records what write_interval records for these rows
            # (the engine's fingerprint, or the Arrow fingerprint), which an unchanged rerun is
            # recognised by. batch_checksum's sort-based `rows:arrow-` was never the engine's.
            result = write_batch(engine, spec, batch, interval, None, run_info_from_context(context),
                                 partition_key=key)
        return self._finish(context, result)

    def _finish(self, context: Any, result: Any) -> dict[str, Any]:
        """Log the write, announce its partition on the outlets, and return it for XCom."""
        where = " ".join(p for p in (f"[{result.interval_start}, {result.interval_end})" if result.interval_start
                                     else "", f"partition {result.partition_key!r}" if result.partition_key
                                     else "") if p)
        self.log.info("Wrote %s %s: %s inserted, %s updated, %s deleted", result.table, where,
                      result.rows_inserted, result.rows_updated, result.rows_deleted)
        announce_partition(context, result)
        return result.to_dict()


def _parse_time(row: tuple[Any, ...], columns: list[str], time_column: str) -> tuple[Any, ...]:
    # SQLite hands timestamps back as text, and naive TIMESTAMP columns give naive datetimes:
    # both are read as UTC, the convention dagguard stores them in.
    if time_column not in columns:
        return tuple(row)
    at = columns.index(time_column)
    value = row[at]
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return tuple(row[:at]) + (value,) + tuple(row[at + 1:])
