"""The batch checks of a Spark write, as Spark aggregations: nothing but their results (counts,
one offending value) comes back to the driver, so a batch of any size is checked where it lies.

The same checks as on the other engines: the time column holds instants (TIMESTAMP, not the
naive TIMESTAMP_NTZ), none NULL, all inside the interval; no two rows share a unique key
(NULL equal to NULL); overwrite_partition's rows carry the interval's partition value; every
value fits its target column exactly (a cast to the column's type and back gives it again).
"""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.errors import IntervalViolationError
from dagguard.idempotent.interval import Interval


def typed_columns(frame: Any, target: dict[str, str], spec: Any, partition_value: Any) -> list[Any]:
    """The batch's columns cast to the target's types, the partition column added as a constant
    where the batch lacks it; in the target's column order."""
    from pyspark.sql import functions as F

    columns = []
    for name, declared in target.items():
        if name in frame.columns:
            columns.append(F.col(name).cast(declared).alias(name))
        elif spec.partition_column == name:
            columns.append(F.lit(partition_value).cast(declared).alias(name))
    return columns


def check_frame(frame: Any, spec: Any, interval: Interval, target: dict[str, str], table: str,
                partition_value: Any) -> None:
    """Raise IntervalViolationError for the first kind of bad row: one Spark job for all checks
    but the key check, which is its own."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    kinds = {field.name: field.dataType for field in frame.schema.fields}
    checks: list[tuple[str, Any, Any]] = []  # (reason, count of rows, one offending value)
    time_column = spec.time_column
    if time_column and (spec.strategy != "overwrite_partition" or time_column in kinds):
        if time_column not in kinds:
            raise IntervalViolationError(
                f"the batch for {table} has no time column {time_column!r} (columns: {list(frame.columns)})")
        kind = kinds[time_column]
        if isinstance(kind, T.TimestampNTZType):
            raise IntervalViolationError(
                f"column {time_column!r} of the batch for {table} is a TIMESTAMP_NTZ, a naive datetime "
                f"(make it timezone-aware: a Spark TIMESTAMP, e.g. F.to_utc_timestamp({time_column!r}, 'UTC'))"
                f"; nothing was written")
        if not isinstance(kind, T.TimestampType):
            raise IntervalViolationError(
                f"column {time_column!r} of the batch for {table} is a {kind.simpleString()}, not a timestamp; "
                f"nothing was written")
        ts = F.col(time_column)
        checks.append(("has NULL in the time column", ts.isNull(), F.lit(None)))
        outside = (ts < F.lit(interval.start)) | (ts >= F.lit(interval.end))
        checks.append(("is outside the interval", outside, ts))
    partition = spec.partition_column
    if partition and partition in kinds:
        value = F.col(partition).cast(target.get(partition, "string"))
        wanted = F.lit(partition_value).cast(target.get(partition, "string"))
        checks.append((f"has a {partition} other than {interval.partition_key}",
                       ~value.eqNullSafe(wanted), F.col(partition).cast("string")))
    for name, declared in target.items():
        if name in kinds and kinds[name].simpleString() != declared:
            # Exact when the value survives a cast to the column's type and back.
            back = F.col(name).try_cast(declared).try_cast(kinds[name])
            checks.append((f"holds a value in {name!r} that its {declared} column cannot store exactly",
                           F.col(name).isNotNull() & ~back.eqNullSafe(F.col(name)), F.col(name).cast("string")))
    if checks:
        aggregates = []
        for _, bad, value in checks:
            aggregates += [F.count(F.when(bad, 1)), F.min(F.when(bad, value))]
        found = frame.agg(*aggregates).first()
        for at, (reason, _, _) in enumerate(checks):
            count, sample = found[2 * at], found[2 * at + 1]
            if count:
                example = f" (e.g. {sample!s})" if sample is not None else ""
                raise IntervalViolationError(
                    f"{count} row(s) of the batch for {table} {interval} cannot be written, nothing was "
                    f"written: {count} row(s) {reason}{example}")
    if spec.unique_key:
        _check_keys(frame, spec.unique_key, table, interval)


def _check_keys(frame: Any, keys: tuple[str, ...], table: str, interval: Interval) -> None:
    """No two rows share a key (grouping treats NULL as equal to NULL); one key comes back."""
    from pyspark.sql import functions as F

    missing = [k for k in keys if k not in frame.columns]
    if missing:
        raise IntervalViolationError(
            f"the batch for {table} lacks unique_key column(s) {missing} (columns: {list(frame.columns)})")
    repeated = frame.groupBy(*keys).agg(F.count(F.lit(1)).alias("n")).where("n > 1").limit(1).collect()
    if repeated:
        row = repeated[0]
        key = {k: row[k] for k in keys}
        raise IntervalViolationError(
            f"row(s) of the batch for {table} {interval} cannot be written, nothing was written: "
            f"{row['n']} rows share key {key} (a row repeats key {key})")
