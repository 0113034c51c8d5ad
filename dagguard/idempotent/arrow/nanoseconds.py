"""Nanosecond timestamps of an ArrowBatch: kept where the target column stores nanoseconds,
refused where it stores microseconds, unless every value is a whole microsecond.

Python datetimes, SQLite's text, PostgreSQL's timestamps and DuckDB's TIMESTAMP(TZ) hold
microseconds: two keys 1 ns apart would be stored as one value twice, and a later merge would
lose a row. Only DuckDB's TIMESTAMP_NS and TIMESTAMPTZ_NS keep them.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.errors import IntervalViolationError


def _is_nanoseconds(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_timestamp(kind) and kind.unit == "ns"


def _first_sub_microsecond(column: Any) -> int | None:
    """The position of the first value with sub-microsecond digits, or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    # Truncating to microseconds and back changes exactly those values (ns -> us cannot overflow).
    truncated = column.cast(pa.timestamp("us", tz=column.type.tz), safe=False).cast(column.type)
    at = pc.index(pc.not_equal(column, truncated), True).as_py()
    return None if at < 0 else at


def whole_microseconds(batch: ArrowBatch) -> ArrowBatch:
    """`batch` with each nanosecond timestamp column holding only whole microseconds cast to
    microseconds, which is exact; the columns with sub-microsecond digits stay as they are."""
    import pyarrow as pa

    for name in batch.columns:
        column = batch.column(name)
        if _is_nanoseconds(column.type) and _first_sub_microsecond(column) is None:
            batch = batch.with_array(name, column.cast(pa.timestamp("us", tz=column.type.tz)))
    return batch


def has_nanosecond_columns(batch: ArrowBatch) -> bool:
    """True when `batch` has a nanosecond timestamp column; after whole_microseconds(), only the
    columns with sub-microsecond digits are left in nanoseconds, so no column is scanned again."""
    return any(_is_nanoseconds(batch.column(name).type) for name in batch.columns)


def check_nanoseconds(batch: ArrowBatch, column_types: Mapping[str, str],
                      stores_nanoseconds: Callable[[str], bool], table: str) -> None:
    """IntervalViolationError naming the first column, and its first value, whose sub-microsecond
    digits the target column (declared as in `column_types`) would drop."""
    import pyarrow as pa

    for name in batch.columns:
        column = batch.column(name)
        declared = column_types.get(name, "")
        if not _is_nanoseconds(column.type) or stores_nanoseconds(declared):
            continue
        at = _first_sub_microsecond(column)
        if at is None:
            continue
        value = column.slice(at, 1).cast(pa.string())[0].as_py()
        raise IntervalViolationError(
            f"column {name!r} of the batch for {table} holds nanoseconds (row {at}: {value}), which its "
            f"{declared or 'target'} column cannot store: two values 1 ns apart would be stored as one, and "
            f"nothing was written; round them to microseconds (pyarrow.compute.floor_temporal(..., "
            f"unit='microsecond')) or store them in a column that keeps nanoseconds (DuckDB TIMESTAMP_NS, "
            f"TIMESTAMPTZ_NS)")
