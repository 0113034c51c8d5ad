"""write_intervals and backfill_batches: a backfill in batches, each one transaction, on every engine."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dagguard.idempotent import (ArgumentTypeError, BackfillBatchError, IdempotentWriteError, Interval,
                                 IntervalViolationError, InvalidArgumentError, backfill_batches, read_ledger,
                                 write_intervals)
from dagguard.idempotent.ledger_gaps import find_gaps, parse_schedule
from tests.idempotent.helpers import at, events

DAYS = [Interval(at(d), at(d + 1)) for d in range(1, 11)]  # January 1 to 10


def _source():
    """Two rows a day, January 1 to 10."""
    return events(*((d * 10 + i, at(d, 6 * i + 1), f"v{d}") for d in range(1, 11) for i in (0, 1)))


def _rows_of(interval, source):
    return [r for r in source if interval.contains(r["ts"])]


def _write(db, pairs, strategy="replace", **options):
    conn = db.connect()
    try:
        if strategy == "merge":
            options.setdefault("unique_key", ["k"])
        return write_intervals(conn, "events", pairs, time_column="ts", strategy=strategy, **options)
    finally:
        conn.close()


def _ledger(db):
    conn = db.connect()
    try:
        return read_ledger(conn, "events")
    finally:
        conn.close()


def test_backfill_batches_joins_adjacent_intervals_up_to_the_batch_size():
    batches = backfill_batches(reversed(DAYS), batch_size=4)
    assert batches == [Interval(at(1), at(5)), Interval(at(5), at(9)), Interval(at(9), at(11))]
    # A hole starts a new batch: no batch covers time that none of its intervals does.
    holed = [d for d in DAYS if d.start != at(3)]
    assert backfill_batches(holed, batch_size=5) == [Interval(at(1), at(3)), Interval(at(4), at(9)),
                                                     Interval(at(9), at(11))]
    assert backfill_batches(DAYS, batch_size=1) == DAYS
    assert backfill_batches([], batch_size=3) == []
    hourly = [Interval(datetime(2026, 1, 1, h, tzinfo=timezone.utc), datetime(2026, 1, 1, h, tzinfo=timezone.utc)
                       + timedelta(hours=1)) for h in range(5)]
    assert [b.end - b.start for b in backfill_batches(hourly, batch_size=2)] == [timedelta(hours=2)] * 2 + [
        timedelta(hours=1)]


def test_backfill_batches_refuses_bad_arguments():
    for size in (0, -1):
        with pytest.raises(InvalidArgumentError, match="at least 1"):
            backfill_batches(DAYS, batch_size=size)
    for size in (2.0, True, "3"):
        with pytest.raises(ArgumentTypeError, match="batch_size must be an int"):
            backfill_batches(DAYS, batch_size=size)
    with pytest.raises(ArgumentTypeError, match="Interval objects"):
        backfill_batches([(at(1), at(2))], batch_size=2)


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_write_intervals_writes_each_batch_and_one_ledger_row_per_batch(db, strategy):
    db.create()
    source = _source()
    batches = backfill_batches(DAYS, batch_size=4)
    results = _write(db, ((b, _rows_of(b, source)) for b in batches), strategy)
    assert [(r.interval_start, r.interval_end, r.row_count) for r in results] == [
        (b.start.isoformat(), b.end.isoformat(), 2 * round((b.end - b.start) / timedelta(days=1)))
        for b in batches]
    assert sorted(row[0] for row in db.rows()) == sorted(r["k"] for r in source)
    entries = [e for e in _ledger(db).entries]
    assert [(e.interval_start, e.interval_end) for e in entries] == [
        (b.start.isoformat(), b.end.isoformat()) for b in batches]
    # Each batch's ledger row covers the days inside it: no gap from January 1 to 10.
    gaps = find_gaps(_ledger(db), parse_schedule("@daily"), at(1), at(10), now=at(20), table="events")
    assert gaps.missing_count == 0
    # Rerunning the backfill changes nothing and duplicates nothing.
    again = _write(db, [(b, _rows_of(b, source)) for b in batches], strategy)
    assert sorted(row[0] for row in db.rows()) == sorted(r["k"] for r in source)
    assert all((r.rows_inserted, r.rows_deleted) == (0, 0) for r in again)


def test_a_failing_batch_keeps_the_earlier_ones_and_says_where_to_resume(db):
    db.create()
    source = _source()
    batches = backfill_batches(DAYS, batch_size=3)  # [1,4) [4,7) [7,10) [10,11)
    pairs = [(b, _rows_of(b, source)) for b in batches]
    # The third batch holds a row outside its interval: refused before the database is touched.
    pairs[2] = (batches[2], pairs[2][1] + events((99, at(1, 12), "outside")))
    with pytest.raises(BackfillBatchError) as caught:
        _write(db, pairs)
    error = caught.value
    assert isinstance(error, IdempotentWriteError)
    assert isinstance(error.__cause__, IntervalViolationError)
    assert error.failed == batches[2]
    assert error.resume_from == at(7)
    assert [r.interval_end for r in error.written] == [at(4).isoformat(), at(7).isoformat()]
    assert f"resume from {at(7).isoformat()}" in str(error)
    # The first two batches stay written; the third and fourth were not.
    assert sorted(row[0] for row in db.rows()) == sorted(r["k"] for r in source if r["ts"] < at(7))
    gaps = find_gaps(_ledger(db), parse_schedule("@daily"), at(1), at(10), now=at(20), table="events")
    assert [s.start for t in gaps.tables for s in t.missing] == [at(7), at(8), at(9), at(10)]
    # Resuming from the failed batch completes the backfill.
    _write(db, [(b, _rows_of(b, source)) for b in backfill_batches(DAYS, batch_size=3) if b.start >= error.resume_from])
    assert sorted(row[0] for row in db.rows()) == sorted(r["k"] for r in source)


def test_a_generator_that_fails_keeps_the_written_batches(db):
    db.create()
    source = _source()

    def load():
        for number, batch in enumerate(backfill_batches(DAYS, batch_size=5)):
            if number == 1:
                raise OSError("the source is down")
            yield batch, _rows_of(batch, source)

    with pytest.raises(BackfillBatchError, match="reading the next batch") as caught:
        _write(db, load())
    assert caught.value.failed is None and caught.value.resume_from == at(6)
    assert isinstance(caught.value.__cause__, OSError)
    assert sorted(row[0] for row in db.rows()) == sorted(r["k"] for r in source if r["ts"] < at(6))


def test_write_intervals_refuses_what_is_not_an_interval_and_rows_pair(tmp_path):
    import sqlite3

    conn = sqlite3.connect(tmp_path / "w.db")
    conn.execute("CREATE TABLE events (k INTEGER, ts TEXT, v TEXT)")
    with pytest.raises(BackfillBatchError, match="resume from the first batch") as caught:
        write_intervals(conn, "events", [((at(1), at(2)), [])], time_column="ts")
    assert isinstance(caught.value.__cause__, ArgumentTypeError) and caught.value.resume_from is None
    with pytest.raises(InvalidArgumentError, match="unknown strategy"):
        write_intervals(conn, "events", [], time_column="ts", strategy="append")


def test_overwrite_partition_backfills_one_partition_per_pair(tmp_path):
    import sqlite3

    conn = sqlite3.connect(tmp_path / "w.db")
    conn.execute("CREATE TABLE events (k INTEGER, ds TEXT, v TEXT)")
    pairs = [(day, [{"k": n, "ds": day.start.date().isoformat(), "v": "x"}]) for n, day in enumerate(DAYS[:3])]
    results = write_intervals(conn, "events", pairs, strategy="overwrite_partition")
    assert [r.row_count for r in results] == [1, 1, 1]
    assert conn.execute("SELECT k, ds FROM events ORDER BY k").fetchall() == [
        (0, "2026-01-01"), (1, "2026-01-02"), (2, "2026-01-03")]
    # A pair spanning two days owns only its start date's partition: the other day's row is refused.
    with pytest.raises(BackfillBatchError) as caught:
        write_intervals(conn, "events", [(Interval(at(1), at(3)), [{"k": 9, "ds": "2026-01-02", "v": "y"}])],
                        strategy="overwrite_partition")
    assert isinstance(caught.value.__cause__, IntervalViolationError) and caught.value.resume_from == at(1)
