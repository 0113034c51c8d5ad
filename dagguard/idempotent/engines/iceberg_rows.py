"""The Arrow side of an Iceberg write: the batch typed as the table, the interval as an Iceberg
filter, and a merge computed from the interval's rows (Iceberg has no MERGE to run it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.arrow.probe import probe  # noqa: F401 (the Iceberg engine's, shared with Delta)
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.errors import IntervalViolationError

# Prefixes of the two sides' row numbers in the merge join, and of its key columns.
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

    rows: Any  # pyarrow Table: the interval's whole content after the merge (None: no change)
    inserted: int
    updated: int
    deleted: int

    @property
    def changes(self) -> bool:
        """False when the merge would leave the interval as it is."""
        return bool(self.inserted or self.updated or self.deleted)


def _key_columns(table: Any, keys: tuple[str, ...], nullable: frozenset[str], row: str) -> Any:
    """The join side of `table`: its key columns and its row number `row`. A key column holding
    a NULL on either side becomes a NULL flag plus the value with NULLs zeroed, so that NULL
    matches NULL (IS NOT DISTINCT FROM), which Arrow's join does not do."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns: dict[str, Any] = {}
    for at, key in enumerate(keys):
        column = table.column(key)
        if key in nullable:
            columns[f"{_KEY}null{at}"] = pc.is_null(column)
            column = pc.fill_null(column, pa.scalar(_zero(column.type), column.type)) if column.null_count else column
        columns[f"{_KEY}value{at}"] = column
    columns[row] = _row_numbers(len(table))
    return pa.table(columns)


def _row_numbers(count: int) -> Any:
    import pyarrow as pa

    try:
        import numpy

        return pa.array(numpy.arange(count, dtype="int64"))
    except ImportError:
        return pa.array(range(count), pa.int64())


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
    the batch lacks stay unless `delete_missing`. Only the keys and row numbers are joined (a
    join carrying every column cost 6 s of a 1M-row merge); the rows are then taken by number."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(current):  # an empty interval: every batch row is new, nothing to join
        return MergePlan(batch if len(batch) else None, len(batch), 0, 0)
    if _stored_rows_lead(current, batch, keys):
        return _plan_by_position(current, batch, batch_columns, keys)
    nullable = frozenset(k for k in keys if batch.column(k).null_count or current.column(k).null_count)
    left = _key_columns(batch, keys, nullable, _BATCH + "row")
    right = _key_columns(current, keys, nullable, _TARGET + "row")
    on = [name for name in left.column_names if name.startswith(_KEY)]
    joined = left.join(right, on, join_type="full outer", coalesce_keys=False, use_threads=True,
                       right_suffix="_t")
    batch_row, target_row = joined.column(_BATCH + "row"), joined.column(_TARGET + "row")
    matched = pc.and_(pc.is_valid(batch_row), pc.is_valid(target_row))
    new = pc.is_null(target_row)
    missing = pc.is_null(batch_row)
    pairs = joined.filter(matched)
    compared = [name for name in batch_columns if name not in keys]
    # Only the compared columns are taken, in target order (the stored rows' files are read in it).
    mine_rows, their_rows = _pairs_in_target_order(pairs, len(batch), len(current))
    mine = _taken(batch.select(compared), mine_rows)
    theirs = _taken(current.select(compared), their_rows)
    changed = pa.repeat(False, len(pairs))
    for name in compared:
        changed = pc.or_(changed, _differs(theirs.column(name), mine.column(name)))
    inserted, updated, deleted = _count(new), _count(changed), _count(missing) if delete_missing else 0
    if not (inserted or updated or deleted):
        return MergePlan(None, 0, 0, 0)  # nothing to write: the rows are not built
    # The batch's rows (matched or new), then the stored rows it lacks, unless deleted.
    if len(joined) - _count(missing) == len(batch) and set(current.schema.names) <= set(batch_columns):
        # Each batch row once, and every column from it: the batch itself, nothing to sort.
        parts = [pa.Table.from_arrays([batch.column(name) for name in current.schema.names], schema=current.schema)]
        if not delete_missing:
            parts.append(current.take(joined.filter(missing).column(_TARGET + "row")))
        return MergePlan(pa.concat_tables(parts), inserted, updated, deleted)
    written = joined.filter(pc.is_valid(batch_row)).sort_by(_BATCH + "row")
    if len(written) == len(batch):  # each batch row once, in order: the batch itself
        taken = batch
    else:  # a key the interval holds twice: the batch row once per stored row, as UPDATE does
        taken = batch.take(written.column(_BATCH + "row"))
    stored = written.column(_TARGET + "row")
    arrays = [taken.column(name) if name in batch_columns else current.column(name).take(stored)
              for name in current.schema.names]
    parts = [pa.Table.from_arrays(arrays, schema=current.schema)]
    if not delete_missing:
        parts.append(current.take(joined.filter(missing).column(_TARGET + "row")))
    return MergePlan(pa.concat_tables(parts), inserted, updated, deleted)


def _stored_rows_lead(current: Any, batch: Any, keys: tuple[str, ...]) -> bool:
    """Do the batch's first rows carry the stored rows' keys, in the stored order (a rerun of the
    same pipeline hands its rows over so, perhaps with new ones after them)? Then stored row i is
    matched by batch row i and by no other (the batch's keys are unique: the write checked them),
    and the batch's other rows are new: no join is needed (one comparison of the key columns,
    1-3 ms per million rows, where the join and the pairs' order cost 0.2-0.3 CPU s)."""
    import pyarrow.compute as pc

    stored = len(current)
    if len(batch) < stored:
        return False
    for key in keys:
        mine = batch.column(key).slice(0, stored)
        if current.column(key).null_count or mine.null_count:
            if _count(_differs(current.column(key), mine)):
                return False
        elif not pc.all(pc.equal(current.column(key), mine)).as_py():
            return False
    return True


def _plan_by_position(current: Any, batch: Any, batch_columns: tuple[str, ...], keys: tuple[str, ...]) -> MergePlan:
    """plan_merge when _stored_rows_lead: the first len(current) batch rows update the stored
    rows in place, the rest are inserted, no stored row is missing."""
    import pyarrow as pa
    import pyarrow.compute as pc

    stored = len(current)
    changed = pa.repeat(False, stored)
    for name in batch_columns:
        if name not in keys:
            changed = pc.or_(changed, _differs(current.column(name), batch.column(name).slice(0, stored)))
    inserted, updated = len(batch) - stored, _count(changed)
    if not (inserted or updated):
        return MergePlan(None, 0, 0, 0)
    # Matched rows take the batch's columns and keep their others; new rows have NULL in those.
    arrays = [batch.column(name) if name in batch_columns else
              pa.chunked_array([*current.column(name).chunks, pa.nulls(inserted, current.schema.field(name).type)],
                               current.schema.field(name).type)
              for name in current.schema.names]
    return MergePlan(pa.Table.from_arrays(arrays, schema=current.schema), inserted, updated, 0)


def _pairs_in_target_order(pairs: Any, batch: int, stored: int) -> tuple[Any, Any]:
    """(batch rows, stored rows) of the matched pairs, ordered by stored row; either is None
    when it is every row of its side in order (the batch handed over in the stored order, as a
    rerun of the same pipeline does), so that no take is needed. A stored row is in one pair
    at most (the batch's keys are unique), so a scatter by stored row orders them (O(n)); should
    one be in two (NULL keys), they are sorted."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        targets = pairs.column(_TARGET + "row").to_numpy()
        slots = np.full(stored, -1, dtype=np.int64)
        slots[targets] = pairs.column(_BATCH + "row").to_numpy()
        theirs = np.flatnonzero(slots >= 0)
    if np is None or len(theirs) != len(targets):
        ordered = pairs.sort_by(_TARGET + "row")
        return ordered.column(_BATCH + "row"), ordered.column(_TARGET + "row")
    mine = slots[theirs]
    # Strictly increasing batch rows, as many as the batch has: 0, 1, ... len(batch) - 1.
    every_batch_row = len(mine) == batch and (batch < 2 or bool(np.all(mine[1:] > mine[:-1])))
    return None if every_batch_row else mine, None if len(theirs) == stored else theirs


def _taken(table: Any, rows: Any) -> Any:
    """`table`'s rows `rows` (None: all of them, in order)."""
    return table if rows is None else table.take(rows)


def _count(mask: Any) -> int:
    import pyarrow as pa
    import pyarrow.compute as pc

    return int(pc.sum(mask.cast(pa.int64())).as_py() or 0)
