"""PostgreSQL's binary COPY of Arrow batches (pgpq) must store exactly what the CSV path does."""

from __future__ import annotations

import math
import sys
from datetime import date, datetime, timedelta, timezone

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pgpq")

from dagguard.idempotent import read_ledger, write_interval  # noqa: E402
from dagguard.idempotent.arrow.batch import from_arrow  # noqa: E402
from dagguard.idempotent.arrow.pg_binary import binary_copy  # noqa: E402
from tests.idempotent.helpers import DAY1, at, make_database  # noqa: E402

pytestmark = pytest.mark.postgres

UTC = timezone.utc
COLUMNS = ("k bigint, ts timestamptz, i4 integer, i2 smallint, f8 double precision, f4 real, "
           "b boolean, t text, vc varchar, raw bytea, d date, naive timestamp, seen_at timestamptz")
TYPES = {"k": "bigint", "ts": "timestamp with time zone", "i4": "integer", "i2": "smallint",
         "f8": "double precision", "f4": "real", "b": "boolean", "t": "text", "vc": "character varying",
         "raw": "bytea", "d": "date", "naive": "timestamp without time zone",
         "seen_at": "timestamp with time zone"}


def edge_table(unit: str = "us"):
    """One row per edge: NULLs, extremes, NaN and infinities, empty and non-ASCII text, dates
    and instants before 2000 (PostgreSQL's epoch), in other zones, with microseconds."""
    values = {
        "i4": [0, -2**31, 2**31 - 1, None, 7],
        "i2": [0, -2**15, 2**15 - 1, None, 7],
        "f8": [0.5, -1e308, math.inf, None, math.nan],
        "f4": [0.25, -3.5e38, -math.inf, None, 1.1],
        "b": [True, False, None, True, False],
        "t": ["", "naïve ☃ 文字", "a,\"b\"\n\\N", None, "NULL"],
        "vc": ["x", "", None, "é", "\\."],
        "raw": [b"", b"\x00\x01\xff", None, b"\\x00", b"abc"],
        "d": [date(2000, 1, 1), date(1, 1, 1), date(9999, 12, 31), None, date(1999, 12, 31)],
        "naive": [datetime(2000, 1, 1), datetime(1969, 12, 31, 23, 59, 59, 999999), None,
                  datetime(9999, 12, 31, 23, 59, 59), datetime(1999, 12, 31, 23, 59, 59, 1)],
        "seen_at": [datetime(2000, 1, 1, tzinfo=UTC), datetime(500, 1, 1, 12, tzinfo=UTC), None,
                    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                    datetime(2026, 3, 29, 1, 59, 59, 123456, tzinfo=UTC)],
    }
    if unit != "us":  # coarser units cannot hold the microseconds
        for name in ("naive", "seen_at"):
            values[name] = [v.replace(microsecond=0) if v else v for v in values[name]]
    rows = len(values["i4"])
    return pa.table({
        "k": pa.array(range(rows), pa.int64()),
        "ts": pa.array([at(1, h, 0, 1) for h in range(rows)], pa.timestamp(unit, tz="UTC")).cast(
            pa.timestamp(unit, tz="Asia/Kolkata")),
        "i4": pa.array(values["i4"], pa.int32()),
        "i2": pa.array(values["i2"], pa.int16()),
        "f8": pa.array(values["f8"], pa.float64()),
        "f4": pa.array(values["f4"], pa.float32()),
        "b": pa.array(values["b"], pa.bool_()),
        "t": pa.array(values["t"], pa.string()),
        "vc": pa.array(values["vc"], pa.large_string()),
        "raw": pa.array(values["raw"], pa.binary()),
        "d": pa.array(values["d"], pa.date32()),
        "naive": pa.array(values["naive"], pa.timestamp(unit)),
        "seen_at": pa.array(values["seen_at"], pa.timestamp(unit, tz="UTC")).cast(
            pa.timestamp(unit, tz="America/New_York")),
    })


def comparable(rows):
    """NaN equal to NaN, floats as their exact hex, memoryviews as bytes."""
    def one(value):
        if isinstance(value, float):
            return "nan" if math.isnan(value) else value.hex()
        if isinstance(value, memoryview):
            return bytes(value)
        return value
    return [tuple(one(v) for v in row) for row in rows]


def stored(db, table):
    conn = db.connect()
    try:
        # real as float8, exactly: its text form would round to 1.1 where Arrow holds 1.1f.
        columns = ", ".join("f4::float8" if name == "f4" else name for name in TYPES)
        return comparable(conn.execute(f"SELECT {columns} FROM {table} ORDER BY k").fetchall())
    finally:
        conn.close()


def write(db, table, batch, monkeypatch=None, without_pgpq=False):
    conn = db.connect()
    try:
        if without_pgpq:
            with monkeypatch.context() as patch:
                patch.setitem(sys.modules, "pgpq", None)  # `import pgpq` raises ImportError
                return write_interval(conn, table, batch, DAY1, time_column="ts")
        return write_interval(conn, table, batch, DAY1, time_column="ts")
    finally:
        conn.close()


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_binary_and_csv_store_the_same_values(request, tmp_path, monkeypatch, unit):
    db = make_database("postgres", request, tmp_path)
    db.create("by_binary", COLUMNS)
    db.create("by_csv", COLUMNS)
    table = edge_table(unit)
    assert binary_copy(from_arrow(table), TYPES) is not None  # every column takes the binary path
    write(db, "by_binary", table)
    write(db, "by_csv", table, monkeypatch, without_pgpq=True)
    expected = comparable(
        tuple(row[name] for name in table.column_names) for row in table.to_pylist())
    assert stored(db, "by_binary") == expected
    assert stored(db, "by_csv") == expected


def test_a_rerun_through_binary_copy_is_idempotent(request, tmp_path):
    db = make_database("postgres", request, tmp_path)
    db.create("events", COLUMNS)
    table = edge_table()
    for strategy in ("replace", "merge", "replace"):
        conn = db.connect()
        try:
            write_interval(conn, "events", table, DAY1, time_column="ts", unique_key=["k"], strategy=strategy)
        finally:
            conn.close()
    assert len(stored(db, "events")) == table.num_rows


@pytest.mark.parametrize(("arrow_type", "column_type"), [
    (pa.float64(), "numeric"),
    (pa.float64(), "real"),                        # the server rounds the text itself
    (pa.string(), "json"),                         # the server must parse the text
    (pa.string(), "character varying(3)"),         # and check its length
    (pa.timestamp("us"), "timestamp with time zone"),  # read in the session's zone as text
    (pa.timestamp("us", tz="UTC"), "timestamp without time zone"),
    (pa.timestamp("ns", tz="UTC"), "timestamp with time zone"),  # the server rounds ns text
    (pa.date32(), "text"),
])
def test_inexact_types_keep_the_csv_path(arrow_type, column_type):
    table = pa.table({"c": pa.array([], arrow_type)})
    assert binary_copy(from_arrow(table), {"c": column_type}) is None


def test_inexact_types_still_write_through_csv(request, tmp_path):
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k integer, ts timestamptz, doc json, code varchar(3), amount numeric(6, 2)")
    table = pa.table({
        "k": pa.array([1, 2], pa.int64()),
        "ts": pa.array([at(1, 1), at(1, 2)], pa.timestamp("us", tz="UTC")),
        "doc": pa.array(['{"a": [1, 2]}', None]),
        "code": pa.array(["abc", "xy"]),
        "amount": pa.array([1234.5, -0.25]),
    })
    write(db, "events", table)
    conn = db.connect()
    try:
        rows = conn.execute("SELECT k, doc, code, amount::text FROM events ORDER BY k").fetchall()
    finally:
        conn.close()
    assert rows == [(1, {"a": [1, 2]}, "abc", "1234.50"), (2, None, "xy", "-0.25")]


def test_a_too_long_varchar_is_refused_and_nothing_is_written(request, tmp_path):
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k bigint, ts timestamptz, code varchar(3)")
    db.run("INSERT INTO events VALUES (0, ?, 'old')", (at(1, 3),))
    table = pa.table({"k": pa.array([1], pa.int64()),
                      "ts": pa.array([at(1, 1)], pa.timestamp("us", tz="UTC")),
                      "code": pa.array(["abcd"])})
    with pytest.raises(Exception, match="too long"):
        write(db, "events", table)
    assert db.rows("events", "k, code") == [(0, "old")]


def test_without_pgpq_the_binary_path_is_off():
    table = pa.table({"k": pa.array([1], pa.int64())})
    saved = sys.modules.get("pgpq")
    sys.modules["pgpq"] = None  # type: ignore[assignment]
    try:
        assert binary_copy(from_arrow(table), {"k": "bigint"}) is None
    finally:
        sys.modules["pgpq"] = saved  # type: ignore[assignment]


def test_the_stream_is_encoded_lazily():
    table = pa.concat_tables([pa.table({"k": pa.array(range(i, i + 3), pa.int64())}) for i in (0, 3, 6)])
    stream = binary_copy(from_arrow(table), {"k": "bigint"})
    assert iter(stream) is stream  # a generator: record batches are encoded as COPY takes them
    data = b"".join(stream)
    # PostgreSQL's 11-byte signature first, the -1 field count that ends the stream last.
    assert data.startswith(b"PGCOPY\n\xff\r\n\x00") and data.endswith(b"\xff\xff")


def test_interval_bounds_survive_the_binary_path(request, tmp_path):
    """The last microsecond of the interval is inside, its end is outside: as on the CSV path."""
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k bigint, ts timestamptz")
    last = DAY1.end - timedelta(microseconds=1)
    write(db, "events", pa.table({"k": pa.array([1, 2], pa.int64()),
                                  "ts": pa.array([DAY1.start, last], pa.timestamp("us", tz="UTC"))}))
    assert db.rows("events", "k, ts") == [(1, DAY1.start), (2, last)]


def encoded_events(postgres_server, request, name: str, encoding: str) -> str:
    """A database in `encoding`, dropped after the test, with an empty `events (k, ts, v)`."""
    import psycopg

    dsn = postgres_server.create_database(name, encoding=encoding)
    request.addfinalizer(lambda: postgres_server.drop_database(name))
    with psycopg.connect(dsn) as conn:
        conn.execute("CREATE TABLE events (k bigint, ts timestamptz, v text)")
    return dsn


NAIVE_ROWS = [{"k": 1, "ts": at(1, 1), "v": "naïve é"}]


def as_form(rows: list[dict], form: str):
    return pa.Table.from_pylist(rows) if form == "arrow" else rows


@pytest.mark.parametrize("form", ["arrow", "dicts"])
def test_text_arrives_intact_in_a_latin1_database(postgres_server, request, form):
    """Regression: Arrow's UTF-8 bytes were copied as if in the client encoding, so a LATIN1
    database stored 'naïve' as 'naÃ¯ve'. Python rows become Arrow too, so both forms count."""
    import psycopg

    dsn = encoded_events(postgres_server, request, f"latin1_{form}", "LATIN1")
    with psycopg.connect(dsn) as conn:
        assert conn.info.encoding != "utf-8"
        write_interval(conn, "events", as_form(NAIVE_ROWS, form), DAY1, time_column="ts")
        assert conn.execute("SELECT v, length(v) FROM events").fetchall() == [("naïve é", 7)]
        # A character LATIN1 lacks is refused, and the interval keeps its rows.
        snowman = [{"k": 2, "ts": at(1, 2), "v": "☃"}]
        with pytest.raises(Exception, match="no equivalent"):
            write_interval(conn, "events", as_form(snowman, form), DAY1, time_column="ts")
        conn.rollback()
        assert conn.execute("SELECT k, v FROM events").fetchall() == [(1, "naïve é")]


@pytest.mark.parametrize(("form", "strategy"), [("arrow", "replace"), ("dicts", "replace"), ("dicts", "merge")])
def test_a_sql_ascii_database_stores_utf8_and_keeps_its_connection_as_it_was(postgres_server, request,
                                                                             form, strategy):
    """Regression: psycopg hands a SQL_ASCII client every text value as bytes, catalog names
    too, so the write failed with a TypeError and `dagguard ledger` could not read the ledger."""
    import psycopg

    dsn = encoded_events(postgres_server, request, f"sql_ascii_{form}_{strategy}", "SQL_ASCII")
    with psycopg.connect(dsn) as conn:
        keys = {"unique_key": ["k"]} if strategy == "merge" else {}
        first = write_interval(conn, "events", as_form(NAIVE_ROWS, form), DAY1, time_column="ts",
                               strategy=strategy, **keys)
        assert first.rows_inserted == 1
        # The connection is back to SQL_ASCII, whose text psycopg returns as bytes: UTF-8 here.
        assert conn.info.encoding == "ascii"
        assert conn.execute("SELECT v FROM events").fetchall() == [("naïve é".encode(),)]
        conn.commit()
        changed = [{**NAIVE_ROWS[0], "v": "naïve ê"}]
        write_interval(conn, "events", as_form(changed, form), DAY1, time_column="ts", strategy=strategy, **keys)
        assert conn.execute("SELECT v FROM events").fetchall() == [("naïve ê".encode(),)]
        conn.commit()
    report = read_ledger(dsn)
    assert [(e.table_name, e.rows_inserted) for e in report.entries] == [
        ("events", 1), ("events", 0 if strategy == "merge" else 1)]


@pytest.mark.parametrize(("arrow_type", "column_type"), [
    (pa.int64(), "integer"), (pa.int64(), "smallint"), (pa.int32(), "bigint"), (pa.uint8(), "integer"),
])
def test_integers_take_their_columns_width(request, tmp_path, arrow_type, column_type):
    """Python ints arrive as int64 and key columns are often `integer`: the binary field must
    have the column's width (8 bytes into a 4-byte column would be refused)."""
    db = make_database("postgres", request, tmp_path)
    db.create("events", f"k {column_type}, ts timestamptz")
    low = 0 if pa.types.is_unsigned_integer(arrow_type) else -7
    table = pa.table({"k": pa.array([low, 7, None], arrow_type),
                      "ts": pa.array([at(1, 1), at(1, 2), at(1, 3)], pa.timestamp("us", tz="UTC"))})
    assert binary_copy(from_arrow(table), {"k": column_type, "ts": "timestamp with time zone"}) is not None
    write(db, "events", table)
    assert db.rows("events", "k, ts") == [(low, at(1, 1)), (7, at(1, 2)), (None, at(1, 3))]


def test_an_integer_too_wide_for_its_column_is_the_servers_error(request, tmp_path):
    """The cast refuses 2**31 for an `integer` column; the CSV path then lets PostgreSQL say
    so, and the interval keeps its rows."""
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k integer, ts timestamptz")
    db.run("INSERT INTO events VALUES (1, ?)", (at(1, 5),))
    table = pa.table({"k": pa.array([2, 2**31], pa.int64()),
                      "ts": pa.array([at(1, 1), at(1, 2)], pa.timestamp("us", tz="UTC"))})
    assert binary_copy(from_arrow(table), {"k": "integer", "ts": "timestamp with time zone"}) is None
    with pytest.raises(Exception, match="out of range"):
        write(db, "events", table)
    assert db.rows("events", "k") == [(1,)]
