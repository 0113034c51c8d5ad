"""The same behaviour on every engine: reruns, interval isolation, validation, NULL keys."""

from __future__ import annotations

import re
import sqlite3

import pytest

from dagguard.idempotent import (EmptyIntervalError, Interval, IntervalViolationError,
                                 InvalidIdentifierError, TargetTableError, write_interval)
from tests.idempotent.helpers import DAY1, DAY2, at, events, make_database, sort_key

STRATEGIES = ["replace", "merge"]


def _write(db, rows, interval=DAY1, strategy="replace", **options):
    conn = db.connect()
    try:
        options.setdefault("time_column", "ts")
        if strategy == "merge":
            options.setdefault("unique_key", ["k"])
        return write_interval(conn, "events", rows, interval, strategy=strategy, **options)
    finally:
        conn.close()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_rerunning_an_interval_leaves_the_same_rows(db, strategy):
    db.create()
    batch = events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 23, 59, 999999), "c"))
    first = _write(db, batch, strategy=strategy)
    after_first = db.rows()
    second = _write(db, batch, strategy=strategy)
    assert db.rows() == after_first
    assert len(after_first) == 3
    assert first.rows_inserted == 3
    # The rows become an Arrow table, whose rerun is recognised (ledger checksum, then the
    # interval's fingerprint) and skipped: nothing is rewritten.
    assert (second.rows_inserted, second.rows_updated, second.rows_deleted) == (0, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_rerunning_python_rows_rewrites_unless_merge_finds_them_unchanged(db, strategy):
    # `v` mixes text and numbers: no exact Arrow type, so the batch stays Python rows.
    db.create()
    batch = events((1, at(1, 1), "a"), (2, at(1, 2), 7), (3, at(1, 23, 59, 999999), "c"))
    if db.dialect == "iceberg":
        # Iceberg's columns are typed: a string column refuses 7, and nothing is written.
        with pytest.raises(IntervalViolationError, match="column 'v' of the batch for events cannot be stored"):
            _write(db, batch, strategy=strategy)
        assert db.rows() == []
        return
    if db.dialect in ("delta", "spark"):
        # A Delta (or Spark) column has one type: the 7 is refused, not stored as '7'.
        with pytest.raises(IntervalViolationError, match=r"column 'v' .* \(row 1: 7\); nothing was written"):
            _write(db, batch, strategy=strategy)
        assert db.rows() == []
        return
    first = _write(db, batch, strategy=strategy)
    after_first = db.rows()
    second = _write(db, batch, strategy=strategy)
    assert db.rows() == after_first and len(after_first) == 3
    assert first.rows_inserted == 3
    if strategy == "merge":
        # Unchanged rows are skipped, not rewritten.
        assert (second.rows_inserted, second.rows_updated, second.rows_deleted) == (0, 0, 0)
    else:
        assert (second.rows_inserted, second.rows_deleted) == (3, 3)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_other_intervals_are_untouched(db, strategy):
    db.create()
    _write(db, events((1, at(2, 0), "day2"), (9, at(2, 5), "day2b")), interval=DAY2, strategy=strategy)
    _write(db, events((1, at(1, 0), "day1")), strategy=strategy, delete_missing=strategy == "merge")
    _write(db, events((2, at(1, 3), "day1-new")), strategy=strategy, delete_missing=strategy == "merge")
    assert db.rows() == [(1, at(2, 0), "day2"), (2, at(1, 3), "day1-new"), (9, at(2, 5), "day2b")]


def test_merge_updates_changed_rows_inserts_new_and_keeps_missing(db):
    db.create()
    _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "b")), strategy="merge")
    result = _write(db, events((1, at(1, 1), "A"), (3, at(1, 3), "c")), strategy="merge")
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 0)
    assert db.rows() == [(1, at(1, 1), "A"), (2, at(1, 2), "b"), (3, at(1, 3), "c")]


def test_merge_delete_missing_removes_rows_absent_from_the_batch(db):
    db.create()
    _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "b")), strategy="merge")
    _write(db, events((5, at(2, 1), "other day")), interval=DAY2, strategy="merge")
    result = _write(db, events((1, at(1, 1), "a")), strategy="merge", delete_missing=True)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (0, 0, 1)
    assert db.rows() == [(1, at(1, 1), "a"), (5, at(2, 1), "other day")]


def test_replace_removes_rows_that_disappeared_from_the_source(db):
    db.create()
    _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "b")))
    _write(db, events((2, at(1, 2), "b")))
    assert db.rows() == [(2, at(1, 2), "b")]


def test_empty_batch_clears_the_interval_with_replace(db):
    db.create()
    _write(db, events((1, at(1, 1), "a")))
    result = _write(db, [], columns=["k", "ts", "v"])
    assert result.rows_deleted == 1
    assert db.rows() == []


def test_null_keys_do_not_duplicate_on_merge(db):
    db.create("events", "k INTEGER, k2 TEXT, ts {ts}, v TEXT")
    batch = [{"k": None, "k2": "x", "ts": at(1, 1), "v": "a"},
             {"k": 1, "k2": None, "ts": at(1, 2), "v": "b"},
             {"k": None, "k2": None, "ts": at(1, 3), "v": "c"}]
    for _ in range(3):
        _write(db, batch, strategy="merge", unique_key=["k", "k2"])
    assert len(db.rows()) == 3
    batch[2] = {**batch[2], "v": "changed"}
    result = _write(db, batch, strategy="merge", unique_key=["k", "k2"])
    assert (result.rows_inserted, result.rows_updated) == (0, 1)
    assert sorted(r[3] for r in db.rows()) == ["a", "b", "changed"]


def test_duplicate_keys_in_a_batch_are_rejected(db):
    db.create()
    _write(db, events((1, at(1, 1), "kept")), strategy="merge")
    with pytest.raises(IntervalViolationError, match=r"repeats key \{'k': 2\} of row 0"):
        _write(db, events((2, at(1, 1), "a"), (2, at(1, 2), "b")), strategy="merge")
    assert db.rows() == [(1, at(1, 1), "kept")]


def test_duplicate_null_keys_are_rejected(db):
    db.create()
    with pytest.raises(IntervalViolationError, match="repeats key"):
        _write(db, events((None, at(1, 1), "a"), (None, at(1, 2), "b")), strategy="merge")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("bad_time", [at(2, 0), at(1, 0).replace(microsecond=0) - DAY1.start.resolution,
                                      None], ids=["end", "before-start", "null"])
def test_rows_outside_the_interval_raise_and_leave_the_target_untouched(db, strategy, bad_time):
    db.create()
    _write(db, events((1, at(1, 1), "kept")), strategy=strategy)
    before = db.rows()
    with pytest.raises(IntervalViolationError) as info:
        _write(db, events((2, at(1, 2), "ok"), (3, bad_time, "bad")), strategy=strategy)
    assert "row 1" in str(info.value) and "nothing was written" in str(info.value)
    assert db.rows() == before


def test_boundaries_are_half_open(db):
    db.create()
    _write(db, events((1, DAY1.start, "start"), (2, DAY1.end - DAY1.start.resolution, "last µs")))
    assert len(db.rows()) == 2
    with pytest.raises(IntervalViolationError, match="outside the interval"):
        _write(db, events((3, DAY1.end, "end")))


def test_naive_datetimes_are_rejected(db):
    db.create()
    with pytest.raises(IntervalViolationError, match="naive"):
        _write(db, events((1, at(1, 1).replace(tzinfo=None), "a")))


def test_offsets_are_compared_in_utc(db):
    from datetime import timedelta, timezone

    db.create()
    paris = timezone(timedelta(hours=1))
    # 00:30 in Paris is 23:30 UTC the day before: outside DAY1.
    with pytest.raises(IntervalViolationError, match="outside"):
        _write(db, events((1, at(1, 0, 30).replace(tzinfo=paris), "a")))
    _write(db, events((1, at(1, 1, 30).replace(tzinfo=paris), "a")))
    assert db.rows() == [(1, at(1, 0, 30), "a")]


@pytest.mark.parametrize("name", ["events; DROP TABLE events", 'events"', "a.b.c.d", "1events", "",
                                  "dg_batch"])
def test_hostile_table_names_are_rejected(db, name):
    db.create()
    _write(db, events((1, at(1, 1), "kept")))
    with pytest.raises(InvalidIdentifierError):
        write_interval(db.connect(), name, events((2, at(1, 2), "x")), DAY1, time_column="ts")
    assert db.rows() == [(1, at(1, 1), "kept")]


def test_hostile_column_names_are_rejected(db):
    db.create()
    with pytest.raises(InvalidIdentifierError):
        _write(db, [{"k": 1, "ts": at(1, 1), 'v" = 1; --': "x"}])
    with pytest.raises(InvalidIdentifierError):
        _write(db, events((1, at(1, 1), "x")), time_column="ts OR 1=1")


def test_values_are_bound_not_spliced(db):
    db.create()
    hostile = "'); DROP TABLE events; --"
    _write(db, events((1, at(1, 1), hostile)), strategy="merge")
    assert db.rows() == [(1, at(1, 1), hostile)]


def test_unknown_table_is_a_clear_error(db):
    with pytest.raises(TargetTableError, match="table missing does not exist"):
        write_interval(db.connect(), "missing", events((1, at(1, 1), "a")), DAY1, time_column="ts")


def test_column_missing_from_the_target_is_a_clear_error(db):
    db.create()
    _write(db, events((1, at(1, 1), "kept")))
    with pytest.raises(TargetTableError, match="has no column"):
        _write(db, [{"k": 2, "ts": at(1, 2), "v": "x", "extra": 1}])
    assert db.rows() == [(1, at(1, 1), "kept")]


def test_names_in_another_case_match_where_the_engine_matches_them_so(db):
    """DuckDB and SQLite resolve `events`/`ts` to a table created as `Events ("TS" ...)`, and so
    does dagguard there (before, it said the table or the column did not exist); PostgreSQL
    keeps quoted names' case, so there the error names the spelling."""
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: quoted names in CREATE TABLE; Iceberg matches names exactly")
    db.run('CREATE TABLE "Events" (k INTEGER, "TS" ' + db.ts + ", v TEXT)")
    rows = events((1, at(1, 1), "x"))
    if db.dialect in ("postgres", "delta"):  # (a Delta table is a folder: its name is a path)
        with pytest.raises(TargetTableError, match=r"table events does not exist"):
            write_interval(db.connect(), "events", rows, DAY1, time_column="ts")
        with pytest.raises(TargetTableError, match="names are matched exactly, and the table spells 'ts' as 'TS'"):
            write_interval(db.connect(), "Events", rows, DAY1, time_column="ts")
        return
    for strategy in ("replace", "merge", "merge"):
        conn = db.connect()
        try:
            write_interval(conn, "events", rows, DAY1, time_column="ts", strategy=strategy, unique_key=["k"])
            conn.commit()
        finally:
            conn.close()
    assert db.rows('"Events"') == [(1, at(1, 1), "x")]


def test_a_table_postgres_folded_to_lower_case_is_named_in_the_error(request, tmp_path):
    db = make_database("postgres", request, tmp_path)
    db.run("CREATE TABLE Events (k INTEGER, ts timestamptz, v TEXT)")  # unquoted: stored as events
    with pytest.raises(TargetTableError, match=r"table Events does not exist .*; events does: .* pass 'events'"):
        write_interval(db.connect(), "Events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    with pytest.raises(TargetTableError, match="table Missing does not exist .*; create it"):
        write_interval(db.connect(), "Missing", events((1, at(1, 1), "a")), DAY1, time_column="ts")


def test_empty_interval_raises_with_the_fix(db):
    with pytest.raises(EmptyIntervalError) as info:
        Interval(at(1), at(1))
    message = str(info.value)
    assert "create_cron_data_intervals" in message and "CronDataIntervalTimetable" in message


@pytest.mark.parametrize("ds_type", ["TEXT", "DATE"])
def test_overwrite_partition_replaces_only_its_partition(db, ds_type):
    db.create("events", f"k INTEGER, ds {ds_type}, v TEXT")
    conn = db.connect()
    try:
        for interval, value in ((DAY1, "one"), (DAY2, "two"), (DAY1, "uno")):
            write_interval(conn, "events", [{"k": 1, "v": value}], interval, strategy="overwrite_partition")
    finally:
        conn.close()
    rows = [(k, str(ds), v) for k, ds, v in db.rows("events", "k, ds, v")]
    assert rows == [(1, "2026-01-01", "uno"), (1, "2026-01-02", "two")]


def test_overwrite_partition_rejects_rows_of_another_partition(db):
    db.create("events", "k INTEGER, ds TEXT, v TEXT")
    with pytest.raises(IntervalViolationError, match="ds='2026-01-05'"):
        write_interval(db.connect(), "events", [{"k": 1, "ds": "2026-01-05", "v": "x"}], DAY1,
                       strategy="overwrite_partition")


def test_tuples_with_columns_and_arrow_tables_are_accepted(db):
    import pyarrow as pa

    db.create()
    _write(db, [(1, at(1, 1), "a")], columns=["k", "ts", "v"])
    table = pa.table({"k": [1, 2], "ts": [at(1, 1), at(1, 2)], "v": ["a", "b"]})
    _write(db, table, strategy="merge")
    assert db.rows() == [(1, at(1, 1), "a"), (2, at(1, 2), "b")]


def test_result_is_json_serialisable(db):
    import json

    db.create()
    result = _write(db, events((1, at(1, 1), "a")))
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["table"] == "events" and payload["strategy"] == "replace"
    assert payload["interval_start"] == "2026-01-01T00:00:00+00:00"
    assert (payload["rows_inserted"], payload["rows_updated"], payload["rows_deleted"]) == (1, 0, 0)


def test_unknown_strategy_and_append_are_refused(db):
    with pytest.raises(ValueError, match="no append strategy"):
        _write(db, [], strategy="append")
    with pytest.raises(ValueError, match="needs unique_key"):
        write_interval(db.connect(), "events", [], DAY1, time_column="ts", strategy="merge")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_schema_qualified_tables(db, strategy):
    if db.dialect == "sqlite":
        pytest.skip("SQLite schemas are attached databases, which a fresh connection does not have")
    db.create_schema("analytics")
    db.create("analytics.events")
    conn = db.connect()
    try:
        for rows in (events((1, at(1, 1), "a"), (2, at(1, 2), "b")), events((2, at(1, 2), "B"))):
            write_interval(conn, "analytics.events", rows, DAY1, time_column="ts", strategy=strategy,
                           unique_key=["k"] if strategy == "merge" else None,
                           delete_missing=strategy == "merge")
    finally:
        conn.close()
    assert db.rows("analytics.events") == [(2, at(1, 2), "B")]


def test_none_instead_of_rows_is_refused(db):
    db.create()
    _write(db, events((1, at(1, 1), "kept")))
    with pytest.raises(IntervalViolationError, match="rows are None"):
        _write(db, None)
    assert db.rows() == [(1, at(1, 1), "kept")]


def test_sqlalchemy_url_and_engine(db):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    if db.dialect in ("duckdb", "delta"):
        pytest.skip(f"SQLAlchemy has no {db.dialect} dialect here")
    if db.dialect in ("iceberg", "spark"):
        pytest.skip("SQL-specific: SQLAlchemy URLs and engines name SQL databases")
    db.create()
    address = db.url.replace("postgresql://", "postgresql+psycopg://")
    url = sqlalchemy.engine.make_url(address)
    write_interval(url, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    engine = sqlalchemy.create_engine(address)
    write_interval(engine, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    engine.dispose()
    assert db.rows() == [(1, at(1, 1), "a")]


def test_url_strings(db):
    if db.dialect == "spark":
        pytest.skip("a Spark catalog has no URL: the SparkSession is the connection")
    db.create()
    for _ in range(2):
        write_interval(db.url, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    assert db.rows() == [(1, at(1, 1), "a")]


def test_timestamp_without_time_zone_columns_hold_utc_wall_time(db):
    """A naive TIMESTAMP target stores UTC, whatever the session's time zone."""
    if db.dialect == "sqlite":
        pytest.skip("SQLite stores our UTC text whatever the declared type")
    if db.dialect == "spark":
        pytest.skip("Spark refuses a TIMESTAMP_NTZ time column (test_spark.py): its partitions could not "
                    "be told apart from the session's time zone")
    db.create("events", "k INTEGER, ts TIMESTAMP, v TEXT")
    if db.dialect == "postgres":
        import psycopg

        conn = psycopg.connect(db.url, options="-c TimeZone=Asia/Tokyo")
    elif db.dialect == "iceberg":
        conn = db.connect()  # no session time zone: the column holds UTC wall time
    else:
        conn = db.connect()
        if db.dialect != "delta":  # delta-rs has no session time zone
            conn.execute("SET TimeZone = 'Asia/Tokyo'")
    try:
        for _ in range(2):
            write_interval(conn, "events", events((1, at(1, 0), "first µs"), (2, at(1, 23), "late")),
                           DAY1, time_column="ts", strategy="merge", unique_key=["k"])
    finally:
        conn.close()
    assert db.rows() == [(1, at(1, 0), "first µs"), (2, at(1, 23), "late")]


def test_a_target_named_like_a_one_letter_alias_is_safe(db):
    db.create("s")
    conn = db.connect()
    try:
        for rows in (events((1, at(1, 1), "a"), (2, at(1, 2), "b")), events((2, at(1, 2), "B"))):
            write_interval(conn, "s", rows, DAY1, time_column="ts", strategy="merge", unique_key=["k"],
                           delete_missing=True)
    finally:
        conn.close()
    assert db.rows("s") == [(2, at(1, 2), "B")]


def test_a_constraint_violation_rolls_back_without_retrying(db):
    import time

    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: Iceberg has no primary key constraint to violate")
    db.create("events", "k INTEGER PRIMARY KEY, ts {ts}, v TEXT")
    _write(db, events((1, at(2, 1), "day2")), interval=DAY2)
    _write(db, events((2, at(1, 1), "kept")))
    before = db.rows()
    started = time.monotonic()
    # Key 1 lives in another interval: the insert breaks the primary key, nothing changes.
    with pytest.raises(Exception) as info:
        _write(db, events((1, at(1, 2), "clash"), (3, at(1, 3), "new")))
    assert time.monotonic() - started < 5
    assert "ConcurrentWriteError" not in type(info.value).__name__
    assert db.rows() == before


@pytest.mark.parametrize("delete_missing", [False, True])
def test_merge_counts_each_kind_of_row_at_once(db, delete_missing):
    """Unchanged, changed, new and missing rows in one merge, with a new row's key held by
    another interval: the counts are exact on every engine, however each counts them
    (PostgreSQL from the interval's size before and after its MERGE)."""
    db.create()
    _write(db, events((5, at(2, 1), "other day")), interval=DAY2, strategy="merge")
    _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 3), "c"), (4, at(1, 4), "d")),
           strategy="merge")
    result = _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "B"), (4, at(1, 4), "d"),
                               (5, at(1, 5), "e"), (6, at(1, 6), "f")),
                    strategy="merge", delete_missing=delete_missing)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (2, 1, int(delete_missing))
    kept = [] if delete_missing else [(3, at(1, 3), "c")]
    assert db.rows() == sorted([(1, at(1, 1), "a"), (2, at(1, 2), "B"), *kept, (4, at(1, 4), "d"),
                                (5, at(1, 5), "e"), (5, at(2, 1), "other day"), (6, at(1, 6), "f")],
                               key=sort_key)


@pytest.mark.postgres
def test_postgres_merge_counts_stay_sane_when_a_trigger_adds_rows(request, tmp_path):
    """PostgreSQL counts a MERGE's inserts as what the interval gained: a trigger that adds a
    row to the interval for each insert makes that more than the MERGE's own total, and the
    updates must not go negative."""
    db = make_database("postgres", request, tmp_path)
    db.create()
    db.run("CREATE FUNCTION shadow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
           "INSERT INTO events VALUES (NEW.k + 1000, NEW.ts, 'shadow'); RETURN NULL; END $$")
    db.run("CREATE TRIGGER shadow AFTER INSERT ON events FOR EACH ROW WHEN (NEW.k < 1000) "
           "EXECUTE FUNCTION shadow()")
    _write(db, events((1, at(1, 1), "a")), strategy="merge")
    result = _write(db, events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 3), "c")), strategy="merge")
    # The MERGE inserted 2 rows and updated none; with their shadows the interval gained 4.
    assert (result.rows_inserted, result.rows_updated) == (4, 0)
    assert set(db.rows("events", "k, v")) == {(1, "a"), (2, "b"), (3, "c"), (1001, "shadow"),
                                              (1002, "shadow"), (1003, "shadow")}


@pytest.mark.parametrize(("rows", "columns", "message"), [
    ([(1, at(1, 1), "a"), (2, at(1, 2)), (3, at(1, 3), "c")], ["k", "ts", "v"],
     r"row 1 has 2 values, expected 3 \(k, ts, v\)"),
    ([(1, at(1, 1), "a"), (2, at(1, 2), "b", "extra")], ["k", "ts", "v"], "row 1 has 4 values"),
    ([{"k": 1, "ts": at(1, 1), "v": "a"}, {"k": 2, "ts": at(1, 2)}], None,
     r"row 1 has columns \['k', 'ts'\], expected \['k', 'ts', 'v'\]"),
    ([{"k": 1, "ts": at(1, 1), "v": "a"}, {"k": 2, "ts": at(1, 2), "w": "b"}], None,
     r"row 1 has columns \['k', 'ts', 'w'\]"),
])
def test_ragged_rows_name_the_first_bad_row_and_write_nothing(db, rows, columns, message):
    db.create()
    _write(db, events((9, at(1, 9), "kept")))
    with pytest.raises(IntervalViolationError, match=message):
        _write(db, rows, columns=columns)
    assert db.rows() == [(9, at(1, 9), "kept")]


@pytest.mark.parametrize("rows, columns, message", [
    ("abc", ["v"], "rows must be a list of dicts or tuples, a DataFrame or an Arrow table, not a str"),
    (5, ["v"], "not a int"),
    ({"v": "a"}, None, "not a dict; wrap one row in a list"),
    ([1, 2, 3], ["v"], "each row must be a dict or a tuple of values, not a int"),
    (["ab", "cd"], ["v"], "not a str"),
    ([("a",)], "v", "columns must be a list of names, not the string 'v'"),
])
def test_rows_of_the_wrong_shape_are_refused_not_split(rows, columns, message):
    """Regression: a string was written as one row per character ('a', 'b', 'c')."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (v TEXT, ds TEXT)")
    conn.execute("INSERT INTO t VALUES ('kept', '2026-01-01')")
    with pytest.raises(IntervalViolationError, match=re.escape(message)):
        write_interval(conn, "t", rows, DAY1, strategy="overwrite_partition", columns=columns)
    assert conn.execute("SELECT v FROM t").fetchall() == [("kept",)]


@pytest.mark.parametrize("strategy", ["replace", "merge"])
@pytest.mark.parametrize("bad", ["not_null", "overflow"])
def test_a_write_the_database_refuses_is_a_dagguard_error_and_changes_nothing(db, strategy, bad):
    """Regression: the driver's own exception reached the caller (sqlite3.IntegrityError,
    OverflowError...), and on DuckDB replace a 'transaction is aborted' error hid it."""
    from dagguard.idempotent import DatabaseRefusedError

    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: a unique index and INSERT; test_iceberg.py covers Iceberg's refusals")
    db.create("events", "k BIGINT, ts {ts}, v TEXT, req TEXT NOT NULL")
    db.run("CREATE UNIQUE INDEX events_k ON events (k)")
    db.run("INSERT INTO events VALUES (1, ?, 'old', 'x')", (at(1, 1),))
    before = db.rows()
    row = {"k": 2, "ts": at(1, 2), "v": "new"}
    row.update({"req": "y", "k": 2 ** 70} if bad == "overflow" else {})
    conn = db.connect()
    try:
        with pytest.raises(DatabaseRefusedError, match="database refused the write of events") as caught:
            write_interval(conn, "events", [row], DAY1, time_column="ts", strategy=strategy,
                           unique_key=["k"] if strategy == "merge" else None)
    finally:
        conn.close()
    cause = caught.value.__cause__
    assert cause is not None and (isinstance(cause, OverflowError)
                                  or type(cause).__module__.split(".")[0] in ("sqlite3", "duckdb", "_duckdb", "psycopg"))
    if bad == "not_null":
        assert "req" in str(caught.value) or "null" in str(caught.value).lower()
    assert db.rows() == before
