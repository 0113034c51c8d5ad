"""Which values of an Arrow timestamp column have more digits of the second than a target
column stores (see dagguard.idempotent.precision)."""

from __future__ import annotations

from typing import Any

# Digits of the second each Arrow timestamp unit holds.
UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def first_finer(column: Any, digits: int) -> int | None:
    """The position of the first value of timestamp `column` with a nonzero digit of the second
    beyond the first `digits`, or None (NULLs are never finer)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    extra = UNIT_DIGITS[column.type.unit] - digits
    if extra <= 0:
        return None
    numbers = column.cast(pa.int64())
    step = 10 ** extra
    # Integer division truncates toward zero, so dividing and multiplying back changes exactly
    # the values that are no whole number of steps, before the epoch too; it cannot overflow.
    at = pc.index(pc.not_equal(pc.multiply(pc.divide(numbers, step), step), numbers), True).as_py()
    return None if at < 0 else at
