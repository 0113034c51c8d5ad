"""lookback=: a run also rewrites the intervals before its own, picking up late rows, on every engine."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dagguard.idempotent import (ArgumentTypeError, Interval, IntervalViolationError, InvalidArgumentError,
                                 read_ledger, write_interval)
from dagguard.idempotent.ledger_gaps import find_gaps, parse_schedule
from dagguard.idempotent.lookback import widen
from tests.idempotent.helpers import at, events

DAY = [None] + [Interval(at(d), at(d + 1)) for d in range(1, 8)]  # DAY[n]: January n


def _write(db, rows, interval, strategy="replace", **options):
    conn = db.connect()
    try:
        options.setdefault("time_column", "ts")
        if strategy == "merge":
            options.setdefault("unique_key", ["k"])
        return write_interval(conn, "events", rows, interval, strategy=strategy, **options)
    finally:
        conn.close()


def _ledger(db):
    conn = db.connect()
    try:
        return read_ledger(conn, "events")
    finally:
        conn.close()


def test_widen_moves_the_start_back_by_intervals_of_the_own_length_or_a_timedelta():
    hourly = Interval(datetime(2026, 1, 2, 5, tzinfo=timezone.utc), datetime(2026, 1, 2, 6, tzinfo=timezone.utc))
    assert widen(hourly, 3) == Interval(datetime(2026, 1, 2, 2, tzinfo=timezone.utc), hourly.end)
    assert widen(DAY[3], timedelta(hours=36)) == Interval(at(1, 12), at(4))
    assert widen(DAY[3], 0) == DAY[3] and widen(DAY[3], None) == DAY[3]


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_late_rows_for_yesterday_are_picked_up_by_todays_run(db, strategy):
    db.create()
    source = events((1, at(1, 10), "a"), (2, at(2, 10), "b"))
    _write(db, [r for r in source if r["ts"] < at(2)], DAY[1], strategy)
    _write(db, [r for r in source if r["ts"] < at(3)], DAY[2], strategy, lookback=1)  # January 1 and 2
    # A row for January 2 arrives late, after its run; January 3's run with lookback=1 covers it.
    source += events((3, at(2, 23), "late"), (4, at(3, 1), "c"))
    result = _write(db, [r for r in source if at(2) <= r["ts"] < at(4)], DAY[3], strategy, lookback=1)
    assert (result.interval_start, result.interval_end) == (at(2).isoformat(), at(4).isoformat())
    assert [row[0] for row in db.rows()] == [1, 2, 3, 4]
    # The rerun with lookback changes nothing and duplicates nothing.
    again = _write(db, [r for r in source if at(2) <= r["ts"] < at(4)], DAY[3], strategy, lookback=1)
    assert [row[0] for row in db.rows()] == [1, 2, 3, 4]
    assert (again.rows_inserted, again.rows_deleted) == (0, 0)
    # The ledger records the widened interval, and ledger --gaps counts it as covering both days.
    entries = _ledger(db).entries
    assert (entries[-1].interval_start, entries[-1].interval_end) == (at(2).isoformat(), at(4).isoformat())
    gaps = find_gaps(_ledger(db), parse_schedule("@daily"), at(1), at(5), now=at(7), table="events")
    assert [(s.start, s.end) for t in gaps.tables for s in t.missing] == [(at(4), at(5)), (at(5), at(6))]


def test_replace_with_lookback_removes_rows_gone_from_the_source_in_the_earlier_interval(db):
    db.create()
    _write(db, events((1, at(1, 10), "a"), (2, at(2, 10), "b")), Interval(at(1), at(3)))
    _write(db, events((2, at(2, 10), "b2"), (3, at(3, 10), "c")), DAY[3], lookback=timedelta(days=1))
    assert [(row[0], row[2]) for row in db.rows()] == [(1, "a"), (2, "b2"), (3, "c")]


def test_rows_are_validated_against_the_widened_interval(db):
    db.create()
    with pytest.raises(IntervalViolationError):
        _write(db, events((1, at(1, 23), "before the lookback")), DAY[3], lookback=1)
    assert db.rows() == []


def test_lookback_is_refused_with_overwrite_partition_and_with_bad_values(tmp_path):
    import sqlite3

    conn = sqlite3.connect(tmp_path / "w.db")
    conn.execute("CREATE TABLE events (k INTEGER, ts TEXT, ds TEXT)")
    with pytest.raises(InvalidArgumentError, match="owns exactly one partition"):
        write_interval(conn, "events", [], DAY[2], strategy="overwrite_partition", lookback=1)
    with pytest.raises(InvalidArgumentError, match="owns exactly one partition"):
        write_interval(conn, "events", [], None, strategy="overwrite_partition", partition_key="eu", lookback=1)
    with pytest.raises(InvalidArgumentError, match="comes without one"):
        write_interval(conn, "events", [], None, time_column="ts", partition_key="eu", lookback=1)
    with pytest.raises(InvalidArgumentError, match="negative"):
        write_interval(conn, "events", [], DAY[2], time_column="ts", lookback=-1)
    for wrong in (True, 1.5, "1"):
        with pytest.raises(ArgumentTypeError, match="lookback must be"):
            write_interval(conn, "events", [], DAY[2], time_column="ts", lookback=wrong)
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)


def test_the_decorator_widens_the_run_scope_and_the_start_airflow_passes():
    from dagguard.idempotent.decorator import fill_context_arguments, widened_scope
    from dagguard.idempotent.partitions import RunScope

    own = RunScope(DAY[3], None)
    scope = widened_scope(own, 2)
    assert scope.interval == Interval(at(1), at(4)) and widened_scope(own, 0) is own

    def task(data_interval_start=None, data_interval_end=None):
        return data_interval_start, data_interval_end

    values = {"data_interval_start": at(1), "data_interval_end": at(4), "ds": None, "logical_date": None,
              "partition_key": None, "partition_date": None}
    # Airflow itself passes the run's own start to a parameter of that name: it is widened.
    args, kwargs = fill_context_arguments(task, (), {"data_interval_start": at(3)}, values, at(3))
    assert task(*args, **kwargs) == (at(1), at(4))
    # A start the caller chose is left alone.
    args, kwargs = fill_context_arguments(task, (), {"data_interval_start": at(2, 5)}, values, at(3))
    assert task(*args, **kwargs) == (at(2, 5), at(4))
    # A partition without a period has nothing to widen.
    with pytest.raises(InvalidArgumentError, match="has no period"):
        widened_scope(RunScope(None, "eu"), 1)
