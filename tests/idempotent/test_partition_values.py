"""overwrite_partition replaces exactly its partition's rows, whatever form the existing rows'
partition values are stored in: SQLite reads every text its date functions read (the UTC date
of it), DuckDB and PostgreSQL compare DATE values, read a timestamp column's UTC day, and refuse
a text column holding another form of the partition's date."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from dagguard.idempotent import Interval, IntervalViolationError, write_interval
from tests.idempotent.helpers import make_database, sqlite_database

UTC = timezone.utc
JAN4 = Interval(datetime(2026, 1, 4, tzinfo=UTC), datetime(2026, 1, 5, tzinfo=UTC))

# (ds as stored, belongs to 2026-01-04?): what SQLite's date functions read, in UTC.
SQLITE_FORMS = [
    ("2026-01-04", True),
    ("2026-01-04 00:00:00", True),
    ("2026-01-04T00:00:00Z", True),
    ("2026-01-04T13:30", True),
    ("2026-01-04 23:59:59.9999999", True),  # julianday() rounds this onto the 5th; the date is the 4th
    ("2026-01-05T01:00:00+02:00", True),  # 2026-01-04 23:00 UTC
    ("2026-01-04T23:00:00-02:00", False),  # 2026-01-05 01:00 UTC
    ("2026-01-03T23:59:59.999999Z", False),
    ("2026-01-05", False),
    ("2026-01-05 00:00:00", False),
    ("2026-01-03", False),
]


def _overwrite(db, rows, interval=JAN4):
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, interval, strategy="overwrite_partition")
    finally:
        conn.close()


def _raw(db):
    """(k, ds, v) rows as stored, sorted by k: Database.rows() would parse the texts."""
    conn = db.connect()
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT k, ds, v FROM events ORDER BY k")
        return cursor.fetchall()
    finally:
        conn.close()


def _fill(db, values):
    for number, value in enumerate(values):
        db.run("INSERT INTO events VALUES (?, ?, ?)", (number, value, "old"))


@pytest.mark.parametrize("declared", ["TEXT", "DATE", ""])
def test_sqlite_replaces_every_form_of_the_partitions_date_and_nothing_else(tmp_path, declared):
    db = sqlite_database(tmp_path)
    db.create("events", f"k INTEGER, ds {declared}, v TEXT")
    db.run("CREATE INDEX events_ds ON events (ds)")
    _fill(db, [value for value, _ in SQLITE_FORMS])
    result = _overwrite(db, [{"k": 99, "v": "new"}])
    kept = sorted(value for value, inside in SQLITE_FORMS if not inside)
    assert sorted(ds for _, ds, v in _raw(db) if v == "old") == kept
    assert [(k, ds) for k, ds, v in _raw(db) if v == "new"] == [(99, "2026-01-04")]
    assert result.rows_deleted == len(SQLITE_FORMS) - len(kept)


@pytest.mark.parametrize("bad", ["2026-01-04 25:00", "2026-01-04x", "yesterday", 20260104, ""])
def test_sqlite_refuses_a_partition_value_it_cannot_read_and_writes_nothing(tmp_path, bad):
    db = sqlite_database(tmp_path)
    db.create("events", "k INTEGER, ds, v TEXT")  # no affinity: the number stays a number
    _fill(db, ["2026-01-04", bad])
    before = _raw(db)
    with pytest.raises(IntervalViolationError,
                       match=rf"partition column 'ds' of events holds {bad!r}, which cannot be read as a date"
                             rf".*nothing was written"):
        _overwrite(db, [{"k": 99, "v": "new"}])
    assert _raw(db) == before


def test_sqlite_ignores_unreadable_text_far_from_the_partition(tmp_path):
    # Text of another year cannot be in the partition, whatever it says.
    db = sqlite_database(tmp_path)
    db.create("events", "k INTEGER, ds TEXT, v TEXT")
    _fill(db, ["2026-01-04", "2024-13-45"])
    _overwrite(db, [{"k": 99, "v": "new"}])
    assert sorted(ds for _, ds, _ in _raw(db)) == ["2024-13-45", "2026-01-04"]


@pytest.mark.parametrize("stored, inside", [("2026-02-29", True), ("2026-02-30", False), ("2026-03-01", True)])
def test_sqlite_reads_a_plain_date_past_the_months_end_as_the_day_it_runs_on_to(tmp_path, stored, inside):
    """'2026-02-29' (not a leap year) is SQLite's 2026-03-01, though it looks like a plain date."""
    db = sqlite_database(tmp_path)
    db.create("events", "k INTEGER, ds TEXT, v TEXT")
    db.run("CREATE INDEX events_ds ON events (ds)")
    _fill(db, ["2026-02-28", stored, "2026-03-02"])
    march1 = Interval(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC))
    _overwrite(db, [{"k": 99, "v": "new"}], march1)
    assert sorted(ds for _, ds, v in _raw(db) if v == "old") == sorted({"2026-02-28", "2026-03-02", stored}
                                                                        - ({stored} if inside else set()))


def test_sqlite_keeps_the_plain_equality_where_every_value_is_a_plain_date(tmp_path):
    db = sqlite_database(tmp_path)
    db.create("events", "k INTEGER, ds TEXT, v TEXT")
    db.run("CREATE INDEX events_ds ON events (ds)")
    _fill(db, ["2026-01-03", "2026-01-04", "2026-01-05"])
    statements = []
    conn = db.connect()
    conn.set_trace_callback(statements.append)
    try:
        write_interval(conn, "events", [{"k": 99, "v": "new"}], JAN4, strategy="overwrite_partition")
    finally:
        conn.close()
    delete = next(s for s in statements if s.startswith("DELETE FROM \"events\""))
    assert "julianday" not in delete and "\"ds\" = '2026-01-04'" in delete
    assert sorted(ds for _, ds, _ in _raw(db)) == ["2026-01-03", "2026-01-04", "2026-01-05"]


TYPED = {"duckdb": ("TIMESTAMP", "TIMESTAMPTZ"), "postgres": ("timestamp", "timestamptz")}


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
@pytest.mark.parametrize("naive", [True, False], ids=["timestamp", "timestamptz"])
def test_a_timestamp_partition_column_is_replaced_by_its_utc_day(dialect, naive, request, tmp_path):
    if dialect == "duckdb":
        pytest.importorskip("duckdb")
    db = make_database(dialect, request, tmp_path)
    db.create("events", f"k INTEGER, ds {TYPED[dialect][0 if naive else 1]}, v TEXT")
    values = ["2026-01-03 23:59:59.999999", "2026-01-04 00:00:00", "2026-01-04 05:00:00",
              "2026-01-04 23:59:59.999999", "2026-01-05 00:00:00"]
    _fill(db, [v if naive else v + "+00" for v in values])
    _overwrite(db, [{"k": 99, "v": "new"}])
    old = sorted(ds.replace(tzinfo=None) for _, ds, v in db.rows() if v == "old")
    assert old == [datetime(2026, 1, 3, 23, 59, 59, 999999), datetime(2026, 1, 5)]
    assert [k for k, _, v in db.rows() if v == "new"] == [99]


def test_a_timestamptz_partition_is_the_utc_day_whatever_the_session_time_zone(request, tmp_path):
    # '2026-01-04' as text would be Berlin's midnight, 23:00 UTC the day before: outside the
    # UTC day the next overwrite deletes, which would then keep it beside its replacement.
    import psycopg

    db = make_database("postgres", request, tmp_path)
    db.create("events", "k INTEGER, ds timestamptz, v TEXT")
    for value in ("first", "second"):
        with psycopg.connect(db.url, options="-c TimeZone=Europe/Berlin") as conn:
            write_interval(conn, "events", [{"k": 1, "v": value}], JAN4, strategy="overwrite_partition")
    assert db.rows() == [(1, datetime(2026, 1, 4, tzinfo=UTC), "second")]


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_a_date_partition_column_is_replaced_exactly(dialect, request, tmp_path):
    if dialect == "duckdb":
        pytest.importorskip("duckdb")
    db = make_database(dialect, request, tmp_path)
    db.create("events", "k INTEGER, ds DATE, v TEXT")
    _fill(db, ["2026-01-03", "2026-01-04", "2026-01-05"])
    _overwrite(db, [{"k": 99, "v": "new"}])
    assert sorted((str(ds), v) for _, ds, v in db.rows()) == [
        ("2026-01-03", "old"), ("2026-01-04", "new"), ("2026-01-05", "old")]


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
@pytest.mark.parametrize("other", ["2026-01-04 00:00:00", "2026-01-04T00:00:00Z", "2026-01-04x"])
def test_a_text_partition_column_holding_another_form_of_the_date_is_refused(dialect, other, request, tmp_path):
    if dialect == "duckdb":
        pytest.importorskip("duckdb")
    db = make_database(dialect, request, tmp_path)
    db.create("events", "k INTEGER, ds TEXT, v TEXT")
    _fill(db, ["2026-01-03", "2026-01-04", other, "2026-01-05"])
    before = _raw(db)
    with pytest.raises(IntervalViolationError,
                       match=rf"partition column 'ds' of events holds {other!r}, .*2026-01-04.*nothing was written"):
        _overwrite(db, [{"k": 99, "v": "new"}])
    assert _raw(db) == before
    # Plain dates only: the partition's rows, and no other, are replaced.
    db.run("DELETE FROM events WHERE ds = ?", (other,))
    _overwrite(db, [{"k": 99, "v": "new"}])
    assert sorted((ds, v) for _, ds, v in _raw(db)) == [
        ("2026-01-03", "old"), ("2026-01-04", "new"), ("2026-01-05", "old")]
