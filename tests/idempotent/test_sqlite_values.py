"""Python values sqlite3 cannot bind by itself, on SQLite's row path."""

from __future__ import annotations

import sqlite3
from datetime import datetime, time, timedelta, timezone
from decimal import Decimal
from uuid import UUID

import pytest

from dagguard.idempotent import IdempotentWriteError, write_interval
from tests.idempotent.helpers import DAY1, at


def connect() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE events (k INTEGER, ts TEXT, amount NUMERIC, id TEXT, doc TEXT, tags TEXT, "
                 "opens TEXT, seen TEXT)")
    return conn


def write(conn, rows, strategy="replace"):
    keys = {"unique_key": ["k"]} if strategy == "merge" else {}
    result = write_interval(conn, "events", rows, DAY1, time_column="ts", strategy=strategy, **keys)
    return result.rows_inserted, result.rows_updated, result.rows_deleted


def row(k: int, **values):
    return {"k": k, "ts": values.pop("ts") if "ts" in values else at(1, k), "amount": None, "id": None, "doc": None, "tags": None, "opens": None,
            "seen": None, **values}


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_decimals_uuids_json_and_times_are_stored_as_text_and_rerun_unchanged(strategy):
    """Regression: sqlite3 refused them ("Error binding parameter 3: type 'decimal.Decimal' is
    not supported"), so a batch read from PostgreSQL's numeric columns could not be written."""
    conn = connect()
    rows = [row(1, amount=Decimal("1.25"), id=UUID(int=5), doc={"b": [1, None], "a": "x"}, tags=["x", 2],
                opens=time(9, 30))]
    assert write(conn, rows, strategy) == (1, 0, 0)
    assert write(conn, rows, strategy) == ((0, 0, 0) if strategy == "merge" else (1, 0, 1))
    assert conn.execute("SELECT amount, typeof(amount), id, doc, tags, opens FROM events").fetchall() == [
        (1.25, "real", "00000000-0000-0000-0000-000000000005", '{"b": [1, null], "a": "x"}', '["x", 2]',
         "09:30:00")]
    changed = [row(1, amount=Decimal("1.26"), id=UUID(int=5), doc={"b": [1, None], "a": "x"}, tags=["x", 2],
                   opens=time(9, 30))]
    assert write(conn, changed, strategy) == ((0, 1, 0) if strategy == "merge" else (1, 0, 1))


def test_a_value_sqlite_cannot_store_is_a_clear_error_and_the_interval_keeps_its_rows():
    conn = connect()
    write(conn, [row(1, opens=time(9))])
    with pytest.raises(IdempotentWriteError, match=r"column 'opens' holds datetime.timedelta values, which SQLite"):
        write(conn, [row(1, opens=timedelta(hours=1))])
    assert conn.execute("SELECT k, opens FROM events").fetchall() == [(1, "09:00:00")]


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents


def test_an_adapter_the_user_registered_is_used():
    sqlite3.register_adapter(Money, lambda money: money.cents)
    sqlite3.register_adapter(Decimal, float)
    try:
        conn = connect()
        write(conn, [row(1, amount=Money(125), id=Decimal("0.5"))])
        assert conn.execute("SELECT amount, id FROM events").fetchall() == [(125, "0.5")]
    finally:
        del sqlite3.adapters[(Money, sqlite3.PrepareProtocol)]
        del sqlite3.adapters[(Decimal, sqlite3.PrepareProtocol)]


def test_a_datetime_that_first_appears_late_in_a_column_is_stored_as_utc_text():
    """Regression: only the first 1,000 rows were looked at to find the columns to adapt, so
    later datetimes went to sqlite3's own adapter, which keeps the offset as written."""
    conn = connect()
    plus_two = timezone(timedelta(hours=2))
    rows = [row(k, ts=datetime(2026, 1, 1, 0, 0, k % 60, tzinfo=timezone.utc)) for k in range(1, 1501)]
    rows[-1]["seen"] = datetime(2026, 1, 1, 12, tzinfo=plus_two)
    write(conn, rows)
    assert conn.execute("SELECT seen FROM events WHERE seen IS NOT NULL").fetchall() == [
        ("2026-01-01 10:00:00.000000+00:00",)]


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_arrow_decimals_lists_and_structs_are_stored_as_text_too(strategy):
    """Regression: an Arrow batch's decimal128, list and struct columns reached sqlite3 as
    Decimal, list and dict values, which it refused."""
    import pyarrow as pa

    conn = connect()
    table = pa.table({
        "k": [1, 2], "ts": pa.array([at(1, 1), at(1, 2)], pa.timestamp("us", tz="UTC")),
        "amount": pa.array([Decimal("1.25"), None], pa.decimal128(10, 2)),
        "tags": pa.array([["x", "y"], None], pa.list_(pa.string())),
        "doc": pa.array([{"a": 1}, {"a": None}], pa.struct([("a", pa.int64())])),
    })
    assert write(conn, table, strategy) == (2, 0, 0)
    write(conn, table, strategy)
    assert conn.execute("SELECT k, amount, tags, doc FROM events ORDER BY k").fetchall() == [
        (1, 1.25, '["x", "y"]', '{"a": 1}'), (2, None, None, '{"a": null}')]


def test_subclasses_of_the_stored_types_are_stored_the_same_way():
    """Regression: the check let an OrderedDict or a Decimal subclass through as a dict or a
    Decimal, but the adapter looked up exact types only, so sqlite3 refused them."""
    from collections import OrderedDict

    class Price(Decimal):
        pass

    conn = connect()
    write(conn, [row(1, amount=Price("2.50"), doc=OrderedDict(b=1, a=2))])
    assert conn.execute("SELECT amount, doc FROM events").fetchall() == [(2.5, '{"b": 1, "a": 2}')]


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_an_unchanged_arrow_rerun_with_text_that_sqlite_stores_as_numbers_is_skipped(strategy):
    """Regression: decimals (bound as text) and number-like strings in columns of numeric
    affinity are stored as numbers; the batch's fingerprint hashed the text, the table's the
    numbers, so an unchanged rerun never matched and was rewritten every time."""
    import pyarrow as pa

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE events (k INTEGER, ts TEXT, ds TEXT, amount NUMERIC, price DECIMAL(10, 2), "
                 "code INT, note TEXT)")

    def batch(price: str) -> pa.Table:
        return pa.table({
            "k": [1, 2], "ts": pa.array([at(1, 1), at(1, 2)], pa.timestamp("us", tz="UTC")),
            "ds": ["2026-01-01", "2026-01-01"],
            "amount": pa.array([Decimal("1.50"), Decimal("2")], pa.decimal128(10, 2)),
            "price": pa.array([Decimal(price), None], pa.decimal128(10, 2)),
            "code": pa.array(["007", "12"]),          # text in an INT column: stored as 7 and 12
            "note": pa.array(["1.50", "x"]),           # text in a TEXT column stays text
        })

    assert write(conn, batch("0.10"), strategy) == (2, 0, 0)
    assert write(conn, batch("0.10"), strategy) == (0, 0, 0)
    assert write(conn, batch("0.20"), strategy) == ((0, 1, 0) if strategy == "merge" else (2, 0, 2))
    assert conn.execute("SELECT k, amount, price, code, note FROM events ORDER BY k").fetchall() == [
        (1, 1.5, 0.2, 7, "1.50"), (2, 2, None, 12, "x")]
