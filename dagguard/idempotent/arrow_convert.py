"""An ArrowBatch in the form each driver's bulk path takes, converted column by column in C."""

from __future__ import annotations

import io
from typing import Any, Callable

from dagguard.idempotent.arrow_batch import ArrowBatch


def _sqlite_column(column: Any, adapt: Callable[[Any], Any]) -> list[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_timestamp(kind) and kind.tz is not None:
        # sqlite_timestamp()'s text, "2026-01-02 00:00:00.000000+00:00", built by strftime:
        # with microsecond units %S carries the six fraction digits.
        utc = column.cast(pa.timestamp("us", tz="UTC"))
        text = pc.binary_join_element_wise(pc.strftime(utc, format="%Y-%m-%d %H:%M:%S"),
                                           pa.scalar("+00:00"), "")
        return text.to_pylist()
    if pa.types.is_date32(kind) or pa.types.is_date64(kind):
        return column.cast(pa.string()).to_pylist()  # date.isoformat()'s text
    values = column.to_pylist()
    if pa.types.is_temporal(kind):
        return [adapt(v) for v in values]  # naive timestamps, times: the row path's adapter
    return values


def _years_in_four_digits(column: Any) -> bool:
    import pyarrow.compute as pc

    bounds = pc.min_max(pc.year(column))
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    return low is None or (1000 <= low and high <= 9999)


def sqlite_columns(batch: ArrowBatch, adapt: Callable[[Any], Any]) -> list[list[Any]]:
    """One Python list per column, holding what SqliteEngine.adapt would bind for each value."""
    import pyarrow as pa

    columns = []
    for name in batch.columns:
        column = batch.column(name)
        if pa.types.is_timestamp(column.type) and not _years_in_four_digits(column):
            columns.append([adapt(v) for v in column.to_pylist()])  # strftime would not pad the year
        else:
            columns.append(_sqlite_column(column, adapt))
    return columns


def _csv_safe(kind: Any) -> bool:
    """Types whose pyarrow CSV text PostgreSQL reads back as the same value."""
    import pyarrow as pa

    t = pa.types
    if t.is_timestamp(kind):
        return kind.unit in ("s", "ms", "us")  # PostgreSQL would round nanoseconds
    return (t.is_integer(kind) or t.is_floating(kind) or t.is_boolean(kind) or t.is_string(kind)
            or t.is_large_string(kind) or t.is_date32(kind) or t.is_decimal(kind))


def postgres_csv(batch: ArrowBatch) -> memoryview | None:
    """The batch as CSV for `COPY ... (FORMAT csv)`, or None when a column's type needs
    psycopg's own adaptation (bytes, JSON, lists, times...)."""
    import pyarrow.csv as pcsv

    if not all(_csv_safe(field.type) for field in batch.table.schema):
        return None
    buffer = io.BytesIO()
    # all_valid quotes every value and leaves NULLs bare: PostgreSQL's CSV reads an unquoted
    # empty field as NULL and "" as the empty string.
    pcsv.write_csv(batch.table, buffer, pcsv.WriteOptions(include_header=False, quoting_style="all_valid"))
    return buffer.getbuffer()
