"""A transaction the caller left open on the connection is never touched: SQLite and DuckDB
refuse the write and leave it as it was, PostgreSQL writes inside it as a savepoint."""

from __future__ import annotations

import pytest

from dagguard.idempotent import DatabaseRefusedError, IdempotentWriteError, write_interval
from tests.idempotent.helpers import DAY1, at, events, make_database

CALLERS_ROW = (7, at(2, 3), "caller's own, uncommitted")


def skip_without_caller_transactions(db) -> None:
    """Skip on the table formats (Delta Lake, Iceberg), where nothing is a transaction but a
    write's own commit."""
    if db.dialect == "delta":
        pytest.skip("a Delta table has no transaction the caller could leave open: each write is one commit")
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: a pyiceberg Catalog has no transaction a caller could leave open")


def _caller_insert(conn, db, copy_v_to: str | None = None) -> None:
    """Open a transaction on `conn` holding the caller's uncommitted INSERT (with `v` also in the
    column `copy_v_to`, for tables that hold it twice)."""
    if db.dialect == "duckdb":
        conn.begin()  # sqlite3 and psycopg open one implicitly
    k, ts, v = CALLERS_ROW
    columns, values = ["k", "ts", "v"], [k, ts.isoformat(" ") if db.dialect == "sqlite" else ts, v]
    if copy_v_to is not None:
        columns, values = columns + [copy_v_to], values + [v]
    sql = f"INSERT INTO events ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    # On the connection itself: a DuckDB cursor would be a connection of its own.
    conn.execute(sql.replace("?", "%s") if db.dialect == "postgres" else sql, tuple(values))


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_the_callers_uncommitted_rows_survive_a_write(db, strategy):
    skip_without_caller_transactions(db)
    db.create()
    batch = events((1, at(1, 1), "a"), (2, at(1, 2), "b"))
    conn = db.connect()
    try:
        _caller_insert(conn, db)
        write = lambda: write_interval(conn, "events", batch, DAY1, time_column="ts", strategy=strategy,  # noqa: E731
                                       unique_key=["k"] if strategy == "merge" else None)
        if db.dialect == "postgres":
            assert write().rows_inserted == 2  # a savepoint inside the caller's transaction
        else:
            with pytest.raises(IdempotentWriteError, match="open transaction; commit or roll it back"):
                write()
        conn.execute("SELECT 1")  # the connection and its transaction still work
        conn.commit()
    finally:
        conn.close()
    written = [(1, at(1, 1), "a"), (2, at(1, 2), "b")] if db.dialect == "postgres" else []
    assert db.rows() == written + [CALLERS_ROW]


def test_a_refused_postgres_write_rolls_back_its_savepoint_only(request, tmp_path):
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k INTEGER, ts {ts}, v TEXT NOT NULL")
    conn = db.connect()
    try:
        _caller_insert(conn, db)
        with pytest.raises(DatabaseRefusedError, match="not-null"):
            write_interval(conn, "events", events((1, at(1, 1), None)), DAY1, time_column="ts")
        conn.commit()
    finally:
        conn.close()
    assert db.rows() == [CALLERS_ROW]
