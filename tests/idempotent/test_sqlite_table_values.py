"""What SQLite tables already hold and dagguard did not write: times in other text forms,
columns named like SQLite's implicit row id."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from dagguard.idempotent import Interval, IntervalViolationError, write_interval
from tests.idempotent.helpers import at

DAY4 = Interval(at(4), at(5))

# (stored text, is it in [2026-01-04, 2026-01-05) as SQLite's date functions read it)
STORED = [
    ("2026-01-04 00:00:00", True),                  # a space, no offset: UTC
    ("2026-01-05 00:00:00+00:00", False),           # sqlite3's own datetime adapter
    ("2026-01-04 01:00:00+02:00", False),           # 2026-01-03 23:00 UTC
    ("2026-01-05 01:00:00+02:00", True),            # 2026-01-04 23:00 UTC
    ("2026-01-04T12:00:00Z", True),
    ("2026-01-04T23:59:59.9999995Z", True),         # below the end by half a microsecond
    ("2026-01-04 23:59:59.999", True),
    ("2026-01-05T00:00:00.000000+00:00", False),
    ("2026-01-05 00:00:00.000000-00:00", False),
    ("2026-01-03 23:59:59.999999", False),
    ("2026-01-03 23:59:59.999999999", False),
    ("2026-01-04 00:00:00.0000000001-00:01", True),   # one minute behind UTC: 00:01 UTC
    ("2026-01-03 19:00:00-05:00", True),            # 2026-01-04 00:00 UTC
    ("2026-01-04 19:00:00-05:00", False),           # 2026-01-05 00:00 UTC
    ("2026-01-03 24:00:00", True),                  # SQLite reads 24:00 as the next midnight
    ("2026-01-04 24:00:00", False),
    ("2026-01-04", True),
    ("2026-01-05", False),
    ("2026-01-04  T 09:30:00 +14:59", False),        # 2026-01-03 18:31 UTC
    ("2026-01-05 13:00 +14:00", True),              # 2026-01-04 23:00 UTC
    ("2026-01-03 09:01:00-14:59", True),            # 2026-01-04 00:00 UTC
    # dagguard's own form, a microsecond either side of each bound
    ("2026-01-03 23:59:59.999999+00:00", False),
    ("2026-01-04 00:00:00.000000+00:00", True),
    ("2026-01-04 23:59:59.999999+00:00", True),
    ("2026-01-05 00:00:00.000001+00:00", False),
]


def connect(ts_type: str = "TEXT") -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE events (k INTEGER, ts {ts_type}, v TEXT)")
    conn.execute("CREATE INDEX events_ts ON events (ts)")
    return conn


def store(conn: sqlite3.Connection, texts: list[str]) -> None:
    conn.executemany("INSERT INTO events VALUES (?, ?, 'old')", list(enumerate(texts, 100)))
    conn.commit()


def kept_texts(conn: sqlite3.Connection) -> set[str]:
    return {ts for (ts,) in conn.execute("SELECT ts FROM events WHERE v = 'old'")}


@pytest.mark.parametrize("ts_type", ["TEXT", "TIMESTAMP", ""])
def test_replace_deletes_exactly_the_stored_times_inside_the_interval(ts_type):
    """Regression: the time column was compared as text, so '2026-01-05 00:00:00+00:00' (the
    next day) was deleted, '2026-01-04 00:00:00' (this day) kept, and offsets ignored."""
    conn = connect(ts_type)
    store(conn, [text for text, _ in STORED])
    result = write_interval(conn, "events", [{"k": 1, "ts": at(4, 6), "v": "new"}], DAY4,
                            time_column="ts")
    assert kept_texts(conn) == {text for text, inside in STORED if not inside}
    assert result.rows_deleted == sum(inside for _, inside in STORED)


def test_merge_matches_and_deletes_missing_rows_whatever_the_stored_form():
    """Regression: a row of this day stored as '2026-01-04 00:00:00' was not matched (so its
    key was inserted a second time) and not deleted as missing."""
    conn = connect()
    store(conn, [text for text, _ in STORED])
    first_inside = next(k for k, (_, inside) in enumerate(STORED, 100) if inside)
    batch = [{"k": first_inside, "ts": at(4, 1), "v": "new"}, {"k": 1, "ts": at(4, 2), "v": "new"}]
    result = write_interval(conn, "events", batch, DAY4, time_column="ts", unique_key=["k"],
                            strategy="merge", delete_missing=True)
    assert kept_texts(conn) == {text for text, inside in STORED if not inside}
    assert sorted(k for (k,) in conn.execute("SELECT k FROM events WHERE v = 'new'")) == [1, first_inside]
    assert (result.rows_inserted, result.rows_updated) == (1, 1)
    assert result.rows_deleted == sum(inside for _, inside in STORED) - 1


def test_days_past_the_end_of_a_month_count_where_sqlite_reads_them():
    """SQLite reads 2026-02-29 (not a leap year) as 2026-03-01 and 02-31 as 03-03."""
    conn = connect()
    store(conn, ["2026-02-29 12:00:00", "2026-02-31 00:00:00.000000+00:00", "2026-02-28 23:00:00"])
    write_interval(conn, "events", [], Interval(at(1).replace(month=3), at(2).replace(month=3)),
                   time_column="ts")
    assert kept_texts(conn) == {"2026-02-31 00:00:00.000000+00:00", "2026-02-28 23:00:00"}


MARCH2 = Interval(at(2).replace(month=3), at(3).replace(month=3))


@pytest.mark.parametrize("interval, stored, inside", [
    (DAY4, "2026-01-03 24:00:00.000000+00:00", True),   # the 4th's midnight, text before the interval
    (DAY4, "2026-01-04 24:00:00.000000+00:00", False),  # the 5th's midnight, text inside it
    (MARCH2, "2026-02-30 12:00:00.000000+00:00", True),  # 2026-03-02 12:00
    (MARCH2, "2026-03-01 24:00:00.000000+00:00", True),
])
def test_a_time_in_dagguards_shape_that_sqlite_reads_as_another_day_is_read_so(interval, stored, inside):
    """Every other stored time is dagguard's own text, so only this one (its shape dagguard's,
    its hour 24 or its day past the month's end) says that comparing text is not exact."""
    from dagguard.idempotent.engines.sqlite import sqlite_timestamp

    conn = connect()
    around = [sqlite_timestamp(interval.start + (interval.end - interval.start) * share) for share in (-1, 0, 0.5, 1, 2)]
    store(conn, [*around, stored])
    write_interval(conn, "events", [], interval, time_column="ts")
    assert kept_texts(conn) == {around[0], around[3], around[4]} | (set() if inside else {stored})


@pytest.mark.parametrize("day", [datetime(1, 1, 1, tzinfo=timezone.utc), datetime(9999, 12, 30, tzinfo=timezone.utc)])
def test_an_interval_at_either_end_of_the_calendar_is_surveyed_and_written(day):
    """Regression: the survey's probes for hour 24 stepped past December 9999."""
    from dagguard.idempotent.engines.sqlite import sqlite_timestamp

    conn = connect()
    interval = Interval(day, day + timedelta(days=1))
    store(conn, [sqlite_timestamp(day + timedelta(hours=1))])
    result = write_interval(conn, "events", [{"k": 1, "ts": day + timedelta(hours=2), "v": "new"}], interval,
                            time_column="ts")
    assert (result.rows_deleted, result.rows_inserted, kept_texts(conn)) == (1, 1, set())


@pytest.mark.parametrize("strategy", ["replace", "merge"])
@pytest.mark.parametrize("bad", ["2026-01-04 12:60", "2026-01-04 25:00", "2026-01-04 12:00 +15:00",
                                 "2026-01-04 garbage", "2026-01-04t12:00", "now", "yesterday", " 2026-01-04",
                                 "2026-01-04 25:00:00.000000+00:00", "2026-01-04 12:00:60.000000+00:00",
                                 1767484800, 2461045.5, b"2026-01-04"])
def test_a_stored_time_sqlite_cannot_read_is_a_clear_error_and_nothing_is_written(strategy, bad):
    conn = connect("TIMESTAMP")
    store(conn, ["2026-01-04 01:00:00"])
    conn.execute("INSERT INTO events VALUES (7, ?, 'old')", (bad,))
    conn.commit()
    before = conn.execute("SELECT * FROM events ORDER BY k").fetchall()
    keys = {"unique_key": ["k"]} if strategy == "merge" else {}
    with pytest.raises(IntervalViolationError, match=r"time column 'ts'.*cannot be read as a time"):
        write_interval(conn, "events", [{"k": 1, "ts": at(4, 6), "v": "new"}], DAY4, time_column="ts",
                       strategy=strategy, **keys)
    assert conn.execute("SELECT * FROM events ORDER BY k").fetchall() == before


def test_an_unreadable_time_far_from_the_interval_that_starts_with_a_date_is_left_alone():
    """Only the text near the interval is read (through the index): whatever '2020-13-01' or
    '2025-12-35' (SQLite reads days up to 31) mean, it is not a time in the interval."""
    conn = connect()
    store(conn, ["2020-13-01", "2025-12-35", "2026-01-04 01:00:00"])
    write_interval(conn, "events", [], DAY4, time_column="ts")
    assert kept_texts(conn) == {"2020-13-01", "2025-12-35"}


@pytest.mark.parametrize("name", ["rowid", "oid", "_rowid_", "ROWID", "dg_row"])
@pytest.mark.parametrize("arrow", [False, True])
def test_merge_keeps_new_rows_when_the_table_has_a_column_named_like_the_row_id(name, arrow):
    """Regression: the staging anti-join selected `rowid`, which a column of that name hides:
    new rows whose `rowid` value equals a matched row's (or is NULL) were silently dropped."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f'CREATE TABLE events (k INTEGER, ts TEXT, "{name}" INTEGER, v TEXT)')
    conn.execute("CREATE UNIQUE INDEX events_k ON events (k)")
    old = [{"k": 1, "ts": at(4, 1), name: 5, "v": "a"}, {"k": 2, "ts": at(4, 2), name: None, "v": "b"}]
    write_interval(conn, "events", old, DAY4, time_column="ts", unique_key="k", strategy="merge")
    batch = [{"k": 1, "ts": at(4, 1), name: 5, "v": "changed"}, {"k": 2, "ts": at(4, 2), name: None, "v": "b"},
             {"k": 3, "ts": at(4, 3), name: 5, "v": "new"}, {"k": 4, "ts": at(4, 4), name: None, "v": "new"}]
    if arrow:
        import pyarrow as pa

        batch = pa.Table.from_pylist(batch, pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")),
                                                       (name, pa.int64()), ("v", pa.string())]))
    result = write_interval(conn, "events", batch, DAY4, time_column="ts", unique_key="k", strategy="merge",
                            delete_missing=True)
    assert conn.execute(f'SELECT k, "{name}", v FROM events ORDER BY k').fetchall() == [
        (1, 5, "changed"), (2, None, "b"), (3, 5, "new"), (4, None, "new")]
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (2, 1, 0)


def test_a_survey_that_refuses_the_write_leaves_no_checksum_running():
    """The batch's checksum is computed on a thread while SQLite surveys the stored times: a
    survey that refuses the write waits for it, so nothing outlives the failed write."""
    import threading

    pa = pytest.importorskip("pyarrow")
    conn = connect("TIMESTAMP")
    store(conn, ["2026-01-04 01:00:00"])
    conn.execute("INSERT INTO events VALUES (7, '2026-01-04 25:00', 'old')")
    conn.commit()
    batch = pa.table({"k": pa.array(range(50_000)), "ts": pa.array([at(4, 6)] * 50_000, pa.timestamp("us", tz="UTC")),
                      "v": pa.array(["new"] * 50_000)})
    with pytest.raises(IntervalViolationError, match="cannot be read as a time"):
        write_interval(conn, "events", batch, DAY4, time_column="ts")
    assert [t for t in threading.enumerate() if t.name.startswith("dagguard-checksum")] == []
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (2,)
