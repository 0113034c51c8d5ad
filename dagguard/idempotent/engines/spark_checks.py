"""The batch checks of a Spark write, as Spark aggregations: nothing but their results (counts,
one offending value) comes back to the driver, so a batch of any size is checked where it lies.

The same checks as on the other engines: the time column holds instants (TIMESTAMP, not the
naive TIMESTAMP_NTZ), none NULL, all inside the interval; no two rows share a unique key
(NULL equal to NULL); overwrite_partition's rows carry the interval's partition value; every
value fits its target column exactly (a cast to the column's type and back gives it again).

Each check is a boolean column of the typed batch (see spark_batch), counted in the aggregation
that also computes the batch's fingerprint and, with a unique key, its number of distinct keys
(batch_fingerprint), or failing the job that writes the rows where one is true. Only when a
check fails does another job (check_frame) find the number of rows that fail it and one of
them, for the message.
"""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.errors import IntervalViolationError
from dagguard.idempotent.interval import Interval


def typed_columns(frame: Any, target: dict[str, str], spec: Any, partition_value: Any) -> list[Any]:
    """The batch's columns cast to the target's types, the partition column added as a constant
    where the batch lacks it; in the target's column order. A value that does not fit becomes
    NULL instead of failing the job (ANSI casts raise): its row fails a check of row_checks,
    computed in the same job, so it is never written."""
    from pyspark.sql import functions as F

    from dagguard.idempotent.engines.spark_write import quoted_name

    columns = []
    for name, declared in target.items():
        if name in frame.columns:
            # (SQL text, one call into the JVM; a column built of functions took three)
            columns.append(F.expr(f"try_cast({quoted_name(name)} as {declared}) as {quoted_name(name)}"))
        elif spec.partition_column == name:
            columns.append(F.lit(partition_value).cast(declared).alias(name))
    return columns


def row_checks(frame: Any, spec: Any, interval: Interval, target: dict[str, str], table: str,
               partition_value: Any) -> list[tuple[str, Any, Any]]:
    """(reason, the column true for a bad row, an offending value) of every check a row of
    `frame` must pass; IntervalViolationError at once where the columns' types settle it."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from dagguard.idempotent.engines.spark_write import quoted_name, sql_literal

    kinds = {field.name: field.dataType for field in frame.schema.fields}
    checks: list[tuple[str, Any, Any]] = []
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
        # (Checks as SQL text, one call into the JVM each: built of column functions, each
        # function a call or more, a write's checks and fingerprint took 300-400 calls.)
        ts = quoted_name(time_column)
        checks.append(("has NULL in the time column", F.expr(f"{ts} IS NULL"), F.lit(None)))
        start, end = sql_literal(interval.start, "timestamp"), sql_literal(interval.end, "timestamp")
        checks.append(("is outside the interval", F.expr(f"{ts} < {start} OR {ts} >= {end}"), F.expr(ts)))
    partition = spec.partition_column
    if partition and partition in kinds:
        declared = target.get(partition, "string")
        value, wanted = quoted_name(partition), sql_literal(partition_value, declared)
        checks.append((f"has a {partition} other than {interval.partition_key}",
                       F.expr(f"NOT (cast({value} as {declared}) <=> cast({wanted} as {declared}))"),
                       F.expr(f"cast({value} as string)")))
    for name, declared in target.items():
        if name in kinds and kinds[name].simpleString() != declared:
            # Exact when the value survives a cast to the column's type and back.
            back = F.col(name).try_cast(declared).try_cast(kinds[name])
            checks.append((f"holds a value in {name!r} that its {declared} column cannot store exactly",
                           F.col(name).isNotNull() & ~back.eqNullSafe(F.col(name)), F.col(name).cast("string")))
    if spec.unique_key:
        missing = [k for k in spec.unique_key if k not in kinds]
        if missing:
            raise IntervalViolationError(
                f"the batch for {table} lacks unique_key column(s) {missing} (columns: {list(frame.columns)})")
    return checks


def flag(at: int) -> str:
    """The name of the typed batch's column that holds check number `at`."""
    return f"__dagguard_bad_{at}"


def any_flag_sql(count: int) -> str:
    """True where a row of the typed batch breaks any of its `count` checks (NULL, as in a
    count of the check, counts as not broken), as SQL text."""
    return "(" + " OR ".join(flag(at) for at in range(count)) + ")"


def batch_fingerprint(checked: Any, checks: list[tuple[str, Any, Any]], columns: list[str], frame: Any,
                      spec: Any, interval: Interval, table: str) -> tuple[int, int, int]:
    """The fingerprint of the typed batch `checked` over `columns` (see spark_write.fingerprint),
    in the same Spark job as its checks' counts and, for a merge, its distinct keys. Raise
    IntervalViolationError for the first failing check (`frame`, the batch as given, is read
    again for the message) or for a key that two rows share."""
    from pyspark.sql import functions as F

    from dagguard.idempotent.engines.spark_write import fingerprint_aggregates, fingerprint_of

    aggregates = [F.expr(f"count(CASE WHEN {flag(at)} THEN 1 END)") for at in range(len(checks))]
    aggregates += fingerprint_aggregates(columns)
    keys = spec.unique_key or ()
    if keys:
        # A struct of NULL keys is not NULL, and distinct structs compare NULL equal to NULL.
        aggregates.append(F.count_distinct(F.struct(*keys)))
    found = checked.agg(*aggregates).first()
    if any(found[at] for at in range(len(checks))):
        check_frame(frame, checks, interval, table)
        failed = next(reason for at, (reason, _, _) in enumerate(checks) if found[at])
        # The batch as given computed other rows the second time (a sample, a changing source).
        raise IntervalViolationError(
            f"row(s) of the batch for {table} {interval} cannot be written, nothing was written: a row {failed}")
    mine = fingerprint_of(found, len(checks))
    if keys and found[-1] != mine[0]:
        _check_keys(checked, keys, table, interval)
        raise IntervalViolationError(
            f"row(s) of the batch for {table} {interval} cannot be written, nothing was written: "
            f"{mine[0] - found[-1]} row(s) repeat a key {list(keys)}")
    return mine


def check_frame(frame: Any, checks: list[tuple[str, Any, Any]], interval: Interval, table: str) -> None:
    """Raise IntervalViolationError for the first check a row of `frame` fails, with the number
    of rows that fail it and one of them: one Spark job for all checks."""
    from pyspark.sql import functions as F

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


def _check_keys(frame: Any, keys: tuple[str, ...], table: str, interval: Interval) -> None:
    """No two rows share a key (grouping treats NULL as equal to NULL); one key comes back."""
    from pyspark.sql import functions as F

    repeated = frame.groupBy(*keys).agg(F.count(F.lit(1)).alias("n")).where("n > 1").limit(1).collect()
    if repeated:
        row = repeated[0]
        key = {k: row[k] for k in keys}
        raise IntervalViolationError(
            f"row(s) of the batch for {table} {interval} cannot be written, nothing was written: "
            f"{row['n']} rows share key {key} (a row repeats key {key})")
