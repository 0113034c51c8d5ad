"""Backfills in batches: group a backfill's intervals, and write each group in one transaction.

    batches = backfill_batches(intervals, batch_size=30)   # 365 days -> 13 intervals
    write_intervals(conn, "events", ((b, load(b.start, b.end)) for b in batches), time_column="ts")

Each (interval, rows) pair is one write_interval: validated against its interval, written in one
transaction (one commit on Delta Lake and Iceberg), one ledger row for the whole interval, which
`dagguard ledger --gaps` counts as covering every schedule interval inside it. The engine is
opened once for all of them. A failure keeps the batches written before it and raises
BackfillBatchError, which says where to resume.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

from dagguard.idempotent.errors import ArgumentTypeError, BackfillBatchError, InvalidArgumentError
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.ledger import RunInfo


def backfill_batches(intervals: Iterable[Interval], batch_size: int) -> list[Interval]:
    """`intervals` (e.g. a schedule's daily intervals) sorted and joined into intervals of up to
    `batch_size` adjacent ones each; a hole between two intervals (or an overlap) starts a new
    batch, so a batch never covers time that none of its intervals covers."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise ArgumentTypeError(f"batch_size must be an int, not a {type(batch_size).__name__}")
    if batch_size < 1:
        raise InvalidArgumentError(f"batch_size must be at least 1, got {batch_size}")
    ordered = sorted(_checked(intervals), key=lambda i: (i.start, i.end))
    batches: list[Interval] = []
    first = last = None
    count = 0
    for interval in ordered:
        if first is not None and (count == batch_size or interval.start != last.end):  # type: ignore[union-attr]
            batches.append(Interval(first.start, last.end))  # type: ignore[union-attr]
            first = None
        if first is None:
            first, count = interval, 0
        last, count = interval, count + 1
    if first is not None:
        batches.append(Interval(first.start, last.end))  # type: ignore[union-attr]
    return batches


def _checked(intervals: Iterable[Interval]) -> list[Interval]:
    found = list(intervals)
    for item in found:
        if not isinstance(item, Interval):
            raise ArgumentTypeError(f"backfill_batches takes dagguard.idempotent.Interval objects, not a "
                                    f"{type(item).__name__}: {item!r}")
    return found


def write_intervals(conn: Any, table: str, batches: Iterable[tuple[Interval, Any]], *,
                    time_column: str | None = None, unique_key: Sequence[str] | str | None = None,
                    strategy: str = "replace", delete_missing: bool = False, partition_column: str = "ds",
                    columns: Sequence[str] | None = None, run: RunInfo | None = None) -> list[Any]:
    """Write each `(interval, rows)` of `batches` as write_interval would, in order, each in its own
    transaction, through one connection; return their WriteResults. `batches` may be a generator
    that loads each batch's rows when it is reached. On a failure (a batch that does not fit its
    interval, the database refusing it, the generator raising) the batches before it stay
    written and BackfillBatchError says which interval to resume from; the cause is its __cause__.
    With strategy='overwrite_partition' each pair owns one partition, its interval's start date:
    batches of one interval each (batch_size=1).
    """
    from dagguard.idempotent.write import WriteSpec

    spec = WriteSpec.build(table, strategy, time_column, unique_key, delete_missing, partition_column)
    run = run or RunInfo()
    results: list[Any] = []
    items = iter(batches)
    last = None
    with _batch_writer(conn, spec, columns, run) as write_one:
        while True:
            interval = None
            try:
                item = next(items, None)
                if item is None:
                    return results
                interval, rows = _pair(item)
                results.append(write_one(interval, rows))
                last = interval
            except Exception as exc:
                raise _failure(str(spec.table), results, last, interval, exc) from exc


@contextmanager
def _batch_writer(conn: Any, spec: Any, columns: Sequence[str] | None,
                  run: RunInfo) -> Iterator[Callable[[Interval, Any], Any]]:
    """What writes one batch: through one open SQL/lakehouse engine, or a SparkSession's own
    write (which checks the rows in Spark, as write_interval does)."""
    from dagguard.idempotent.engines.spark import is_spark_session  # (imports no pyspark)

    if is_spark_session(conn):
        from dagguard.idempotent.engines.spark import SparkEngine

        engine = SparkEngine(conn)
        yield lambda interval, rows: engine.write(spec, rows, columns, interval, run)
        return
    from dagguard.idempotent.connections import open_engine
    from dagguard.idempotent.write import prepare_batch, write_batch

    with open_engine(conn) as opened:
        yield lambda interval, rows: write_batch(opened, spec, prepare_batch(spec, rows, columns, interval),
                                                 interval, None, run)


def _pair(item: Any) -> tuple[Interval, Any]:
    if not isinstance(item, tuple) or len(item) != 2 or not isinstance(item[0], Interval):
        raise ArgumentTypeError(f"write_intervals takes (Interval, rows) pairs, not {type(item).__name__} "
                                f"{str(item)[:80]}")
    return item


def _failure(table: str, results: list[Any], last: Interval | None, interval: Interval | None,
             exc: Exception) -> BackfillBatchError:
    resume = interval.start if interval is not None else (last.end if last is not None else None)
    done = (f"{len(results)} batch{'es' if len(results) != 1 else ''} written, the last {last}"
            if last is not None else "no batch written")
    where = f"the batch {interval}" if interval is not None else "reading the next batch"
    hint = (f"; resume from {resume.isoformat()}" if resume is not None else "; resume from the first batch")
    return BackfillBatchError(f"backfill of {table} failed at {where} ({done}){hint}: "
                              f"{type(exc).__name__}: {exc}", failed=interval, resume_from=resume,
                              written=tuple(results))
