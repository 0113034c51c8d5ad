"""Checks a batch against its interval before anything touches the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from dagguard.idempotent.batch import Batch, replace_column, with_column
from dagguard.idempotent.errors import IntervalViolationError
from dagguard.idempotent.interval import Interval

MAX_REPORTED = 5


@dataclass(frozen=True)
class Violation:
    """One offending row: its position in the batch, the reason, and the row itself."""

    row_number: int
    reason: str
    row: tuple[Any, ...]


def _raise(violations: list[Violation], total: int, table: str, interval: Interval | str) -> None:
    shown = "; ".join(f"row {v.row_number} {v.reason}: {v.row!r}" for v in violations[:MAX_REPORTED])
    more = f" (and {total - MAX_REPORTED} more)" if total > MAX_REPORTED else ""
    raise IntervalViolationError(
        f"{total} row(s) of the batch for {table} {interval} cannot be written, nothing was "
        f"written: {shown}{more}")


def _time_violation(value: Any, interval: Interval) -> str | None:
    if value is None:
        return "has NULL in the time column"
    if not isinstance(value, datetime):
        return f"has a {type(value).__name__} in the time column, not a datetime"
    if value.tzinfo is None or value.utcoffset() is None:
        return "has a naive datetime in the time column (make it timezone-aware)"
    if not interval.contains(value.astimezone(timezone.utc)):
        return "is outside the interval"
    return None


def check_times(batch: Batch, time_column: str, interval: Interval, table: str) -> Batch:
    """Every time value aware and inside the interval; returns the batch with times in UTC."""
    if not batch.rows:
        return batch
    if time_column not in batch.columns:
        raise IntervalViolationError(
            f"the batch for {table} has no time column {time_column!r} (columns: {list(batch.columns)})")
    at = batch.index(time_column)
    values = [row[at] for row in batch.rows]
    if all(type(v) is datetime and v.tzinfo is timezone.utc for v in values):
        # The common case, checked at C speed; the row-by-row pass below names the culprits.
        if interval.start <= min(values) and max(values) < interval.end:
            return batch
    violations: list[Violation] = []
    total = 0
    for number, row in enumerate(batch.rows):
        reason = _time_violation(row[at], interval)
        if reason:
            total += 1
            if len(violations) < MAX_REPORTED:
                violations.append(Violation(number, reason, row))
    if total:
        _raise(violations, total, table, interval)
    if all(row[at].tzinfo is timezone.utc for row in batch.rows):
        return batch  # the common case; rebuilding a million tuples costs more than this scan
    return replace_column(batch, time_column, (row[at].astimezone(timezone.utc) for row in batch.rows))


def check_unique_keys(batch: Batch, unique_key: tuple[str, ...], interval: Interval | str, table: str) -> None:
    """No two rows share a key; None equals None, as IS NOT DISTINCT FROM matches them."""
    missing = [k for k in unique_key if k not in batch.columns]
    if missing and batch.rows:
        raise IntervalViolationError(
            f"the batch for {table} lacks unique_key column(s) {missing} (columns: {list(batch.columns)})")
    if not batch.rows:
        return
    positions = [batch.index(k) for k in unique_key]
    if len(positions) == 1:
        at = positions[0]
        keys: list[Any] = [row[at] for row in batch.rows]
    else:
        keys = [tuple(row[p] for p in positions) for row in batch.rows]
    if len(set(keys)) == len(keys):
        return  # no duplicate: the common case, without building the report
    first_seen: dict[tuple[Any, ...], int] = {}
    violations: list[Violation] = []
    total = 0
    for number, row in enumerate(batch.rows):
        key = tuple(row[p] for p in positions)
        if key in first_seen:
            total += 1
            if len(violations) < MAX_REPORTED:
                violations.append(Violation(
                    number, f"repeats key {dict(zip(unique_key, key))} of row {first_seen[key]}", row))
        else:
            first_seen[key] = number
    if total:
        _raise(violations, total, table, interval)


def _same_partition(cell: Any, value: date | str) -> bool:
    """Does `cell` hold the partition `value`: a date (as itself, its ISO text or a datetime on that
    day), or a partition key (as that text, or a date or naive datetime whose ISO form it is)?"""
    if isinstance(value, str):
        return cell == value or (isinstance(cell, date) and getattr(cell, "tzinfo", None) is None
                                 and cell.isoformat() == value)
    return cell == value or (isinstance(cell, str) and cell == value.isoformat()) or (
        isinstance(cell, datetime) and cell.date() == value)


def check_partition(batch: Batch, partition_column: str, value: date | str, interval: Interval | str,
                    table: str) -> Batch:
    """Rows carry the interval's partition value, or the partition key (added when the batch
    lacks the column)."""
    if partition_column not in batch.columns:
        return with_column(batch, partition_column, value)
    at = batch.index(partition_column)
    violations: list[Violation] = []
    total = 0
    for number, row in enumerate(batch.rows):
        cell = row[at]
        if not _same_partition(cell, value):
            total += 1
            if len(violations) < MAX_REPORTED:
                violations.append(Violation(number, f"has {partition_column}={cell!r}, not {value!s}", row))
    if total:
        _raise(violations, total, table, interval)
    return replace_column(batch, partition_column, (value for _ in batch.rows))
