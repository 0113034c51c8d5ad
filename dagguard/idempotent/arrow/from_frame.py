"""pandas DataFrames read whole by pyarrow, in C, so that they take the columnar path; a frame
with a column pyarrow cannot type plainly is left to the row path (batch.py)."""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.arrow.batch import ArrowBatch


def frame_to_arrow(frame: Any) -> ArrowBatch | None:
    """A pandas DataFrame as an ArrowBatch, read by pyarrow in C, or None when pyarrow is
    missing or a column has no plain Arrow type (categories, mixed objects, nested values):
    the caller then takes the DataFrame's rows value by value."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    try:
        # NaN in float columns and NaT become NULL, as the row path's _unpandas makes them None.
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if not all(_plain_arrow_type(field.type) for field in table.schema):
        return None
    # datetime64[ns] columns stay nanoseconds: the write keeps them where the column can.
    return ArrowBatch(tuple(table.column_names), table)


def _plain_arrow_type(kind: Any) -> bool:
    """Types every engine's columnar path takes as they are."""
    import pyarrow as pa

    t = pa.types
    if t.is_integer(kind):
        return kind != pa.uint64()  # beyond BIGINT
    return (t.is_float32(kind) or t.is_float64(kind) or t.is_boolean(kind) or t.is_string(kind)
            or t.is_large_string(kind) or t.is_date32(kind) or t.is_timestamp(kind))
