"""The Arrow side of an Iceberg write: the batch typed as the table, the interval as an Iceberg
filter, and a merge computed from the interval's rows (Iceberg has no MERGE to run it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.errors import IntervalViolationError

# Prefixes of the two sides of the merge join, and of its NULL-safe key columns.
_BATCH, _TARGET, _KEY = "dg_b_", "dg_t_", "dg_k_"


def as_table(batch: AnyBatch, schema: Any, table: str) -> Any:
    """The batch as a pyarrow Table of exactly the Iceberg table's Arrow `schema` (columns the
    batch lacks are NULL); a value the column's type cannot hold exactly is refused."""
    import pyarrow as pa

    count = len(batch)
    arrays = []
    for field in schema:
        if field.name not in batch.columns:
            arrays.append(pa.nulls(count, field.type))
            continue
        arrays.append(_column(batch, field, table))
    return pa.Table.from_arrays(arrays, schema=schema)


def _column(batch: AnyBatch, field: Any, table: str) -> Any:
    import pyarrow as pa

    try:
        if isinstance(batch, ArrowBatch):
            column = batch.column(field.name)
        else:
            # Typed by pyarrow first, then cast: a date becomes the text of a string column,
            # as it does on an Arrow batch, and a value of another kind is refused.
            column = pa.array([row[batch.index(field.name)] for row in batch.rows])
        if pa.types.is_timestamp(field.type) and field.type.tz is None and pa.types.is_timestamp(column.type) \
                and column.type.tz is not None:
            # A `timestamp` (without zone) column keeps the instant's UTC wall time.
            column = column.cast(pa.timestamp(column.type.unit, "UTC")).cast(pa.timestamp(column.type.unit))
        return column.cast(field.type)  # safe: overflow, truncation and lost digits raise
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError) as exc:
        raise IntervalViolationError(
            f"column {field.name!r} of the batch for {table} cannot be stored exactly in its Iceberg "
            f"column (Arrow type {field.type}), nothing was written: {' '.join(str(exc).split())}") from exc


def interval_filter(column: str, kind: str, start: datetime, end: datetime) -> Any:
    """`start <= column < end` for a timestamp column of Iceberg type `kind`."""
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan

    if "tz" not in kind:  # timestamp, timestamp_ns: UTC wall time
        start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    return And(GreaterThanOrEqual(column, start.isoformat()), LessThan(column, end.isoformat()))


def partition_filter(column: str, kind: str, day: date) -> Any:
    """The rows of partition `day`: the date itself, its ISO text, or a timestamp on that UTC day."""
    from pyiceberg.expressions import EqualTo

    if kind.startswith("timestamp"):
        start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        return interval_filter(column, kind, start, start + timedelta(days=1))
    return EqualTo(column, day.isoformat())


@dataclass(frozen=True)
class MergePlan:
    """The interval's rows after the merge, and what changed to get there."""

    rows: Any  # pyarrow Table: the interval's whole content after the merge
    inserted: int
    updated: int
    deleted: int

    @property
    def changes(self) -> bool:
        """False when the merge would leave the interval as it is."""
        return bool(self.inserted or self.updated or self.deleted)


def _with_keys(table: Any, keys: tuple[str, ...], prefix: str) -> Any:
    """`table` with prefixed column names plus, per key, a NULL flag and the value with NULLs
    zeroed: joining on both matches NULL to NULL (IS NOT DISTINCT FROM), which Arrow's join does not."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = table.rename_columns([prefix + name for name in table.column_names])
    for at, key in enumerate(keys):
        column = table.column(key)
        out = out.append_column(f"{prefix}{_KEY}null{at}", pc.is_null(column))
        filled = pc.fill_null(column, pa.scalar(_zero(column.type), column.type)) if column.null_count else column
        out = out.append_column(f"{prefix}{_KEY}value{at}", filled)
    return out


def _zero(kind: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return ""
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return b""
    if pa.types.is_timestamp(kind):
        return datetime(1970, 1, 1, tzinfo=timezone.utc if kind.tz else None)
    if pa.types.is_date(kind):
        return date(1970, 1, 1)
    if pa.types.is_boolean(kind):
        return False
    return 0


def _differs(left: Any, right: Any) -> Any:
    """NULL-safe `left IS DISTINCT FROM right`, element-wise."""
    import pyarrow.compute as pc

    unequal = pc.fill_null(pc.not_equal(left, right), False)
    return pc.or_(unequal, pc.xor(pc.is_null(left), pc.is_null(right)))


def plan_merge(current: Any, batch: Any, batch_columns: tuple[str, ...], keys: tuple[str, ...],
               delete_missing: bool) -> MergePlan:
    """Merge `batch` (typed as the table) into `current` (the interval's rows): matched rows take
    the batch's values for the batch's columns and keep their others, new rows are added, rows
    the batch lacks stay unless `delete_missing`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = current.schema.names
    join_keys = [f"{_KEY}{part}{at}" for at in range(len(keys)) for part in ("null", "value")]
    left = _with_keys(batch, keys, _BATCH)
    right = _with_keys(current, keys, _TARGET).append_column(f"{_TARGET}hit", pa.repeat(True, len(current)))
    joined = left.join(right, [_BATCH + k for k in join_keys], [_TARGET + k for k in join_keys],
                       join_type="full outer", coalesce_keys=False, use_threads=False)
    hit = pc.fill_null(joined.column(f"{_TARGET}hit"), False)
    from_batch = pc.invert(pc.is_null(joined.column(_BATCH + f"{_KEY}null0")))
    matched = pc.and_(hit, from_batch)
    new = pc.and_(from_batch, pc.invert(hit))
    missing = pc.and_(hit, pc.invert(from_batch))
    changed = pa.repeat(False, len(joined))
    for name in batch_columns:
        if name not in keys:
            changed = pc.or_(changed, _differs(joined.column(_TARGET + name), joined.column(_BATCH + name)))
    updated = int(pc.sum(pc.and_(matched, changed).cast(pa.int64())).as_py() or 0)
    keep = pc.invert(missing) if delete_missing else pa.repeat(True, len(joined))
    rows = joined.filter(keep)
    kept_hit = pc.fill_null(rows.column(f"{_TARGET}hit"), False)
    kept_from_batch = pc.invert(pc.is_null(rows.column(_BATCH + f"{_KEY}null0")))
    arrays = []
    for name in names:
        # The batch's columns come from the batch wherever the row is the batch's; the others
        # keep the stored row's values (a new row has none: NULL, as the batch's side holds).
        use_batch = kept_from_batch if name in batch_columns else pc.invert(kept_hit)
        arrays.append(pc.if_else(use_batch, rows.column(_BATCH + name), rows.column(_TARGET + name)))
    merged = pa.Table.from_arrays(arrays, schema=current.schema)
    count = (lambda mask: int(pc.sum(mask.cast(pa.int64())).as_py() or 0))
    return MergePlan(merged, count(new), updated, count(missing) if delete_missing else 0)
