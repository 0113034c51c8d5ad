"""Timestamps finer than the target column stores: refused, never rounded.

A column keeps a fixed number of digits of the second: DuckDB's TIMESTAMP_S 0, TIMESTAMP_MS 3,
TIMESTAMP(TZ) 6, TIMESTAMP_NS and TIMESTAMPTZ_NS 9; PostgreSQL's timestamp(p) and
timestamptz(p) p, else 6; SQLite's text and Python datetimes 6. Both engines round a finer
value (DuckDB 2.0 and PostgreSQL 15 alike), so two keys closer than the column's step would
be stored as one value twice (a later merge loses a row, or PostgreSQL's MERGE fails on
cardinality), and a value just before the interval's end would be stored at the end, outside
the interval, where the next replace of the interval would not delete it. So a batch holding
such a value is refused whole, before anything is written. Text values are the database's to
parse, and are not checked here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Mapping

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.errors import IntervalViolationError

_STEP_NAMES = {0: "whole seconds", 3: "milliseconds", 6: "microseconds"}


def check_precision(batch: AnyBatch, column_types: Mapping[str, str],
                    timestamp_digits: Callable[[str], int], table: str) -> None:
    """IntervalViolationError naming the first column, and its first value, holding digits of
    the second that its target column (declared as in `column_types`) would round away;
    `timestamp_digits` says how many digits a declared type keeps."""
    for name in batch.columns:
        declared = column_types.get(name, "")
        digits = timestamp_digits(declared)
        found = _first_finer_arrow(batch, name, digits) if isinstance(batch, ArrowBatch) else (
            _first_finer_python(batch, name, digits))
        if found is not None:
            at, value, nanoseconds = found
            raise IntervalViolationError(_message(name, table, at, value, declared, digits, nanoseconds))


def _first_finer_arrow(batch: ArrowBatch, name: str, digits: int) -> tuple[int, str, bool] | None:
    import pyarrow as pa

    from dagguard.idempotent.arrow.precision import first_finer

    column = batch.column(name)
    if not pa.types.is_timestamp(column.type):
        return None
    at = first_finer(column, digits)
    if at is None:
        return None
    value = column.slice(at, 1).cast(pa.string())[0].as_py()
    return at, value, column.type.unit == "ns" and first_finer(column.slice(at, 1), 6) is not None


def _first_finer_python(batch: AnyBatch, name: str, digits: int) -> tuple[int, str, bool] | None:
    # Python datetimes hold microseconds (pandas Timestamps nanoseconds too, which the Arrow
    # path keeps): only a column storing fewer digits has values to scan for.
    if digits >= 6:
        return None
    column = batch.index(name)
    step = 10 ** (9 - digits)
    for at, row in enumerate(batch.rows):
        value = row[column]
        if isinstance(value, datetime) and (value.microsecond * 1000 + getattr(value, "nanosecond", 0)) % step:
            return at, value.isoformat(" "), False
    return None


def _message(name: str, table: str, at: int, value: str, declared: str, digits: int, nanoseconds: bool) -> str:
    if nanoseconds and digits == 6:
        return (f"column {name!r} of the batch for {table} holds nanoseconds (row {at}: {value}), which its "
                f"{declared or 'target'} column cannot store: two values 1 ns apart would be stored as one, and "
                f"nothing was written; round them to microseconds (pyarrow.compute.floor_temporal(..., "
                f"unit='microsecond')) or store them in a column that keeps nanoseconds (DuckDB TIMESTAMP_NS, "
                f"TIMESTAMPTZ_NS)")
    step = _STEP_NAMES.get(digits, f"{digits} digits of a second")
    return (f"column {name!r} of the batch for {table} holds values finer than {step} (row {at}: {value}), "
            f"which its {declared or 'target'} column cannot store: the database would round them, so two "
            f"values could be stored as one and a value just before the interval's end would land outside "
            f"it; nothing was written. Round them to {step} first (pyarrow.compute.floor_temporal, "
            f"datetime.replace) or declare the column with more digits")
