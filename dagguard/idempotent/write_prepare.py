"""Before anything is written: the rows normalised to a batch and validated against the write's
interval or partition (prepare_batch), and the small batch edits the engines share (a constant
partition column, names spelled as the target spells them). Below write.py and the engines, which
take these from here (write.py imports them back for its callers)."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any, Sequence

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.arrow.from_rows import rows_to_arrow
from dagguard.idempotent.arrow.nanoseconds import has_nanosecond_columns, whole_microseconds
from dagguard.idempotent.arrow.validation import check_arrow
from dagguard.idempotent.batch import AnyBatch, Batch, as_rows, replace_column, to_batch
from dagguard.idempotent.errors import ArgumentTypeError, InvalidArgumentError
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.validation import check_partition, check_times, check_unique_keys
from dagguard.idempotent.write_spec import WriteSpec


def prepare_batch(spec: WriteSpec, rows: Any, columns: Sequence[str] | None, interval: Interval | None,
                  partition_key: str | None = None) -> AnyBatch:
    """Normalise and validate the rows; IntervalViolationError before the database is touched.

    `partition_key` (overwrite_partition): the value every row's partition column must hold,
    instead of the interval's date; `interval` may then be None (no time check)."""
    check_scope(spec, interval, partition_key)
    batch = to_batch(rows, columns)
    if isinstance(batch, Batch):
        batch = rows_to_arrow(batch) or batch
    table = str(spec.table)
    check_time = bool(spec.time_column) and interval is not None and (
        spec.strategy != "overwrite_partition" or spec.time_column in batch.columns)
    partition: date | str = partition_key if partition_key is not None else interval.partition_key  # type: ignore[union-attr]
    where: Interval | str = interval if interval is not None else scope_label(None, partition_key)
    nanoseconds = None
    if isinstance(batch, ArrowBatch):
        if not len(batch):
            return as_rows(batch)
        # Whole microseconds convert exactly; the other nanoseconds are checked against the
        # target's column types, which only the transaction reads.
        batch = whole_microseconds(batch)
        checked = check_arrow(batch, spec.time_column if check_time else None, spec.unique_key,
                              spec.partition_column, partition, where)
        if checked is not None:
            return checked
        nanoseconds = batch if has_nanosecond_columns(batch) else None
        # A violation (or a type only the row checks handle): they name the offending rows.
        batch = as_rows(batch)
    if check_time:
        batch = check_times(batch, spec.time_column, interval, table)
    if spec.unique_key:
        check_unique_keys(batch, spec.unique_key, where, table)
    if spec.partition_column and batch.rows:
        batch = check_partition(batch, spec.partition_column, partition, where, table)
    if nanoseconds is not None:
        # The row checks passed, but Python datetimes would drop the nanoseconds: stay Arrow.
        return (nanoseconds.with_constant(spec.partition_column, partition)
                if spec.partition_column else nanoseconds)
    return batch


def check_scope(spec: WriteSpec, interval: Interval | None, partition_key: str | None) -> None:
    """A write needs an interval, or (overwrite_partition) a partition key; a key is text."""
    if partition_key is not None and not isinstance(partition_key, str):
        raise ArgumentTypeError(f"partition_key must be a non-empty string (an Airflow partition key), "
                                f"not a {type(partition_key).__name__}: {partition_key!r}")
    if partition_key is not None and not partition_key.strip():
        raise InvalidArgumentError(f"partition_key must be a non-empty string (an Airflow partition key), "
                                   f"not {partition_key!r}")
    if interval is not None:
        return
    if partition_key is None:
        raise InvalidArgumentError("nothing to write into: pass interval=Interval(start, end), or "
                                   "partition_key=... with strategy='overwrite_partition'")
    if spec.strategy != "overwrite_partition":
        raise InvalidArgumentError(
            f"strategy={spec.strategy!r} replaces the rows of a time interval, and partition {partition_key!r} "
            f"comes without one: pass interval=Interval(start, end) as well, or use "
            f"strategy='overwrite_partition' (the rows whose {spec.partition_column or 'ds'} is the key)")


def scope_label(interval: Interval | None, partition_key: str | None) -> str:
    """`[start, end)`, `partition 'k'`, or both, for messages."""
    parts = ([str(interval)] if interval is not None else []) + (
        [f"partition {partition_key!r}"] if partition_key is not None else [])
    return " ".join(parts)


def _constant(batch: AnyBatch, column: str, value: Any) -> AnyBatch:
    if isinstance(batch, ArrowBatch):
        return batch.with_constant(column, value)
    return replace_column(batch, column, (value for _ in batch.rows))


def _spelled_as_target(spec: WriteSpec, batch: AnyBatch, target_columns: dict[str, str],
                       ) -> tuple[WriteSpec, AnyBatch]:
    """The spec and batch with each column name spelled as the target spells it, where the
    engine matches names whatever their case (`ts` for a column created as `TS`)."""
    spelling = {name.lower(): name for name in target_columns}

    def spelled(name: str | None) -> str | None:
        return spelling.get(name.lower(), name) if name is not None else None

    columns = tuple(spelled(c) for c in batch.columns)
    if columns != batch.columns:
        batch = (ArrowBatch(columns, batch.table.rename_columns(list(columns))) if isinstance(batch, ArrowBatch)
                 else Batch(columns, batch.rows))
    spec = dataclasses.replace(spec, time_column=spelled(spec.time_column),
                               unique_key=tuple(spelled(k) for k in spec.unique_key),
                               partition_column=spelled(spec.partition_column))
    return spec, batch
