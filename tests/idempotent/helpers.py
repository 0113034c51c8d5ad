"""Helpers shared by the idempotent tests: a Database on each engine, instants, rows."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from dagguard.idempotent import Interval

UTC = timezone.utc
DAY1 = Interval(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
DAY2 = Interval(datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 3, tzinfo=UTC))

ENGINES = ["sqlite", "duckdb", "postgres", "delta", "iceberg", "iceberg-day", "spark"]
TIMESTAMP_TYPE = {"sqlite": "TEXT", "duckdb": "TIMESTAMPTZ", "postgres": "timestamptz", "delta": "TIMESTAMPTZ",
                  "iceberg": "TIMESTAMPTZ", "spark": "TIMESTAMPTZ"}


def at(day: int, hour: int = 0, minute: int = 0, micro: int = 0) -> datetime:
    """An aware UTC instant in January 2026."""
    return datetime(2026, 1, day, hour, minute, 0, micro, tzinfo=UTC)


def normalise(value: Any) -> Any:
    """Engine values in one comparable form: aware datetimes in UTC, SQLite text parsed."""
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] in " T":
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return value


def sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is None, str(v)) for v in row)


@dataclass
class Database:
    """A fresh database on one engine: `connect()` opens a new DB-API connection to it."""

    dialect: str
    connect: Callable[[], Any]
    url: str

    @property
    def ts(self) -> str:
        return TIMESTAMP_TYPE[self.dialect]

    def create_schema(self, name: str) -> None:
        self.run(f"CREATE SCHEMA {name}")

    def drop(self, table: str = "events") -> None:
        self.run(f"DROP TABLE IF EXISTS {table}")

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        conn = self.connect()
        try:
            cursor = conn.cursor()
            cursor.execute(sql.replace("?", "%s") if self.dialect == "postgres" else sql, params)
            conn.commit()
        finally:
            conn.close()

    def create(self, table: str = "events", columns: str = "k INTEGER, ts {ts}, v TEXT") -> str:
        self.run(f"CREATE TABLE {table} ({columns.format(ts=self.ts)})")
        return table

    def rows(self, table: str = "events", columns: str = "*") -> list[tuple[Any, ...]]:
        conn = self.connect()
        try:
            cursor = conn.cursor()
            cursor.execute(f"SELECT {columns} FROM {table}")
            rows = [tuple(normalise(v) for v in row) for row in cursor.fetchall()]
        finally:
            conn.close()
        return sorted(rows, key=sort_key)


def sqlite_database(tmp_path: Path) -> Database:
    path = tmp_path / "test.sqlite"
    return Database("sqlite", lambda: sqlite3.connect(path, timeout=60), f"sqlite:///{path}")


def duckdb_database(tmp_path: Path) -> Database:
    import duckdb

    path = tmp_path / "test.duckdb"
    return Database("duckdb", lambda: duckdb.connect(str(path)), f"duckdb:///{path}")


def postgres_database(server: Any, request: Any) -> Database:
    """A new database on the session's server, dropped when the test ends."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    dsn = server.create_database(name)
    request.addfinalizer(lambda: server.drop_database(name))
    return Database("postgres", lambda: psycopg.connect(dsn), dsn)



def events(*specs: tuple[Any, datetime, Any]) -> list[dict[str, Any]]:
    """Rows of the default `events` table from (k, ts, v) triples."""
    return [{"k": k, "ts": ts, "v": v} for k, ts, v in specs]



def make_database(dialect: str, request: Any, tmp_path: Path) -> Database:
    """A fresh database on `dialect`; PostgreSQL comes from the session's server."""
    if dialect == "delta":
        from tests.idempotent.delta_lake import delta_database

        return delta_database(tmp_path)
    if dialect.startswith("iceberg"):
        from tests.idempotent.iceberg_helpers import iceberg_database

        return iceberg_database(tmp_path, partitioned=dialect == "iceberg-day")
    if dialect == "spark":
        from tests.idempotent.spark_helpers import spark_database

        return spark_database(request)
    if dialect == "sqlite":
        return sqlite_database(tmp_path)
    if dialect == "duckdb":
        return duckdb_database(tmp_path)
    return postgres_database(request.getfixturevalue("postgres_server"), request)
