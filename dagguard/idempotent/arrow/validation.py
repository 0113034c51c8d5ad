"""The checks of validation.py, run with pyarrow.compute on an ArrowBatch.

Each check answers only "all clean" quickly. Whenever it finds a violation, or a column whose
type it does not handle, the caller falls back to the row-by-row checks, which name the
offending rows in the error; so both paths accept and refuse exactly the same batches.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.interval import Interval


def _utc_times(batch: ArrowBatch, time_column: str, interval: Interval) -> ArrowBatch | None:
    """The batch with its time column as UTC timestamps (in nanoseconds where it has them, else
    microseconds), if every value is an aware instant inside the interval; else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if time_column not in batch.columns:
        return None
    column = batch.column(time_column)
    if not pa.types.is_timestamp(column.type) or column.type.tz is None or column.null_count:
        return None  # naive, NULL or not a timestamp: the row path reports which rows
    unit = "ns" if column.type.unit == "ns" else "us"
    try:
        # Instants are stored in UTC whatever the zone: this only relabels them.
        column = column.cast(pa.timestamp(unit, tz="UTC"))
    except pa.ArrowInvalid:
        return None
    # The interval's bounds are whole microseconds, so comparing values truncated to
    # microseconds (a monotone cast) decides exactly as comparing the nanoseconds would.
    bounds = pc.min_max(column if unit == "us" else column.cast(pa.timestamp("us", tz="UTC"), safe=False))
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None or not (interval.start <= low and high < interval.end):
        return None
    return batch.with_array(time_column, column)


def _strictly_ordered(column: Any) -> bool:
    """True when every value is greater than the one before (or every one smaller): no two can
    be equal. One comparison pass; NULLs and NaNs, which compare to nothing, answer False."""
    import pyarrow.compute as pc

    if column.null_count:
        return False
    later, earlier = column.slice(1), column.slice(0, len(column) - 1)
    return bool(pc.all(pc.greater(later, earlier)).as_py() or pc.all(pc.less(later, earlier)).as_py())


def _has_duplicate_keys(batch: ArrowBatch, unique_key: tuple[str, ...]) -> bool:
    """True when two rows share a key, NULL matching NULL (IS NOT DISTINCT FROM), or when the
    key's type cannot be grouped here (the row path then decides)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(batch) < 2:
        return False
    try:
        # A batch ordered by a key column, as a query with ORDER BY returns it, needs no
        # hash table (1M int64 keys: 0.5 ms instead of 45 ms).
        if any(_strictly_ordered(batch.column(name)) for name in unique_key):
            return False
        # Hashing costs the same in any order (sorting took 100 ms for 1M shuffled keys).
        # unique() and group_by() count NULL as one value, as IS NOT DISTINCT FROM matches it.
        if len(unique_key) == 1:
            return len(pc.unique(batch.column(unique_key[0]))) != len(batch)
        keys = batch.table.select(list(unique_key))
        return keys.group_by(list(unique_key)).aggregate([]).num_rows != len(batch)
    except pa.ArrowNotImplementedError:
        return True


def _partition_ok(batch: ArrowBatch, partition_column: str, value: date | str) -> bool:
    """Every row's partition value is `value` (a DATE, or its ISO text; or a partition key's text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = batch.column(partition_column)
    if column.null_count:
        return False
    if isinstance(value, str):  # a partition key: text columns compare here, the row path decides the rest
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return False
        return bool(pc.all(pc.equal(column, pa.scalar(value, column.type))).as_py())
    if pa.types.is_date32(column.type) or pa.types.is_date64(column.type):
        expected = pa.scalar(value, column.type)
    elif pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        expected = pa.scalar(value.isoformat(), column.type)
    else:
        return False  # timestamps and the like: the row path decides
    return bool(pc.all(pc.equal(column, expected)).as_py())


def check_arrow(batch: ArrowBatch, time_column: str | None, unique_key: tuple[str, ...],
                partition_column: str | None, partition_value: date | str,
                interval: Interval | str) -> ArrowBatch | None:
    """The validated batch (times in UTC, partition column filled), or None when some check
    needs the row-by-row path: a violation to report, or a type handled only there."""
    if time_column:
        checked = _utc_times(batch, time_column, interval)
        if checked is None:
            return None
        batch = checked
    if unique_key:
        if any(k not in batch.columns for k in unique_key) or _has_duplicate_keys(batch, unique_key):
            return None
    if partition_column:
        if partition_column in batch.columns and not _partition_ok(batch, partition_column, partition_value):
            return None
        batch = batch.with_constant(partition_column, partition_value)
    return batch
