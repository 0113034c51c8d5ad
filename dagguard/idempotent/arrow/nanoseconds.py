"""Nanosecond timestamps of an ArrowBatch: kept where the target column stores nanoseconds,
refused where it stores microseconds (dagguard.idempotent.precision), unless every value is a
whole microsecond.

Python datetimes, SQLite's text, PostgreSQL's timestamps and DuckDB's TIMESTAMP(TZ) hold
microseconds: two keys 1 ns apart would be stored as one value twice, and a later merge would
lose a row. Only DuckDB's TIMESTAMP_NS and TIMESTAMPTZ_NS keep them.
"""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.arrow.precision import first_finer


def _is_nanoseconds(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_timestamp(kind) and kind.unit == "ns"


def whole_microseconds(batch: ArrowBatch) -> ArrowBatch:
    """`batch` with each nanosecond timestamp column holding only whole microseconds cast to
    microseconds, which is exact; the columns with sub-microsecond digits stay as they are."""
    import pyarrow as pa

    for name in batch.columns:
        column = batch.column(name)
        if _is_nanoseconds(column.type) and first_finer(column, 6) is None:
            batch = batch.with_array(name, column.cast(pa.timestamp("us", tz=column.type.tz)))
    return batch


def has_nanosecond_columns(batch: ArrowBatch) -> bool:
    """True when `batch` has a nanosecond timestamp column; after whole_microseconds(), only the
    columns with sub-microsecond digits are left in nanoseconds, so no column is scanned again."""
    return any(_is_nanoseconds(batch.column(name).type) for name in batch.columns)
