"""The checks of validation.py, run with pyarrow.compute on an ArrowBatch.

Each check answers only "all clean" quickly. Whenever it finds a violation, or a column whose
type it does not handle, the caller falls back to the row-by-row checks, which name the
offending rows in the error; so both paths accept and refuse exactly the same batches.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from dagguard.idempotent.arrow_batch import ArrowBatch
from dagguard.idempotent.interval import Interval


def _utc_times(batch: ArrowBatch, time_column: str, interval: Interval) -> ArrowBatch | None:
    """The batch with its time column as microsecond UTC timestamps, if every value is an
    aware instant inside the interval; else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if time_column not in batch.columns:
        return None
    column = batch.column(time_column)
    if not pa.types.is_timestamp(column.type) or column.type.tz is None or column.null_count:
        return None  # naive, NULL or not a timestamp: the row path reports which rows
    try:
        # Instants are stored in UTC whatever the zone: this only relabels them (and refuses
        # to drop sub-microsecond digits, which Python datetimes cannot hold either).
        column = column.cast(pa.timestamp("us", tz="UTC"))
    except pa.ArrowInvalid:
        return None
    bounds = pc.min_max(column)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None or not (interval.start <= low and high < interval.end):
        return None
    return batch.with_array(time_column, column)


def _null_safe_equal(left: Any, right: Any) -> Any:
    import pyarrow.compute as pc

    both_null = pc.and_(pc.is_null(left), pc.is_null(right))
    return pc.fill_null(pc.equal(left, right), both_null)


def _has_duplicate_keys(batch: ArrowBatch, unique_key: tuple[str, ...]) -> bool:
    """True when two rows share a key, NULL matching NULL (IS NOT DISTINCT FROM)."""
    import pyarrow.compute as pc

    if len(batch) < 2:
        return False
    keys = batch.table.select(list(unique_key))
    # Sorted, equal keys are neighbours: one sort and one comparison pass, no hash table.
    ordered = keys.take(pc.sort_indices(keys, sort_keys=[(k, "ascending") for k in unique_key]))
    same = None
    for name in unique_key:
        column = ordered.column(name).combine_chunks()
        equal = _null_safe_equal(column.slice(1), column.slice(0, len(column) - 1))
        same = equal if same is None else pc.and_(same, equal)
    return bool(pc.any(same).as_py())


def _partition_ok(batch: ArrowBatch, partition_column: str, value: date) -> bool:
    """Every row's partition value is `value` (a DATE, or its ISO text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = batch.column(partition_column)
    if column.null_count:
        return False
    if pa.types.is_date32(column.type) or pa.types.is_date64(column.type):
        expected = pa.scalar(value, column.type)
    elif pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        expected = pa.scalar(value.isoformat(), column.type)
    else:
        return False  # timestamps and the like: the row path decides
    return bool(pc.all(pc.equal(column, expected)).as_py())


def check_arrow(batch: ArrowBatch, time_column: str | None, unique_key: tuple[str, ...],
                partition_column: str | None, partition_value: date,
                interval: Interval) -> ArrowBatch | None:
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
