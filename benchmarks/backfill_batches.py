"""A year's backfill: 365 separate write_interval calls against write_intervals in batches.

Each engine gets an empty table (``k``, ``ts``, ``v``; on SQLite and PostgreSQL an index on
``ts``), and the benchmark writes ``--days`` daily intervals of ``--rows`` rows each (Arrow
tables, built untimed) with strategy ``--strategy``, in two ways, each run on a fresh table
(``--runs`` runs of each, interleaved, the best of each reported):

* ``separate``: one ``write_interval(conn, ...)`` per day through the same open connection (the
  cheapest way to make separate calls: no connection opened per call);
* ``batched``: ``write_intervals(conn, ..., [(b, rows_of(b)) for b in backfill_batches(days,
  batch_size=--batch-size)])``, one transaction (one commit on Delta Lake and Iceberg) and one
  ledger row per batch.

After each run the table's row count is checked. The ratio is separate / batched.

    python benchmarks/backfill_batches.py                              # sqlite duckdb postgres
    python benchmarks/backfill_batches.py --engines delta iceberg
    python benchmarks/backfill_batches.py --engines postgres --pg-durable   # fsync=on
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from dagguard.idempotent import Interval, backfill_batches, write_interval, write_intervals  # noqa: E402

START = datetime(2025, 1, 1, tzinfo=timezone.utc)


def day_rows(days: list[Interval], rows: int) -> list[Any]:
    """One Arrow table of `rows` rows spread over each day."""
    import pyarrow as pa

    tables = []
    for number, day in enumerate(days):
        step = (day.end - day.start) / rows
        tables.append(pa.table({
            "k": pa.array(range(number * rows, (number + 1) * rows), pa.int64()),
            "ts": pa.array([day.start + step * i for i in range(rows)], pa.timestamp("us", tz="UTC")),
            "v": pa.array([f"v{i % 97}" for i in range(rows)], pa.string())}))
    return tables


def batch_rows(batches: list[Interval], days: list[Interval], tables: list[Any]) -> list[Any]:
    import pyarrow as pa

    return [pa.concat_tables([t for d, t in zip(days, tables) if b.start <= d.start < b.end])
            for b in batches]


# Each rig: (name, make(root) -> (connection, count rows, close)).
def sqlite_rig(root: Path) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    conn = sqlite3.connect(root / "b.sqlite")
    conn.executescript("CREATE TABLE events (k INTEGER, ts TEXT, v TEXT); CREATE INDEX events_ts ON events (ts);")
    return conn, lambda: conn.execute("SELECT count(*) FROM events").fetchone()[0], conn.close


def duckdb_rig(root: Path) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    import duckdb

    conn = duckdb.connect(str(root / "b.duckdb"))
    conn.execute("CREATE TABLE events (k BIGINT, ts TIMESTAMPTZ, v VARCHAR)")
    return conn, lambda: conn.execute("SELECT count(*) FROM events").fetchone()[0], conn.close


_PG: dict[str, Any] = {"settings": ()}


def postgres_rig(root: Path) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    import uuid

    import psycopg

    from tests.support.postgres import start_postgres

    if "server" not in _PG:
        _PG["server"] = start_postgres(Path(tempfile.mkdtemp(prefix="dagguard-pg-bench-")), cap_wal=False,
                                     settings=_PG["settings"])
    server = _PG["server"]
    name = f"b_{uuid.uuid4().hex[:8]}"
    conn = psycopg.connect(server.create_database(name))
    conn.execute("CREATE TABLE events (k bigint, ts timestamptz, v text)")
    conn.execute("CREATE INDEX events_ts ON events (ts)")
    conn.commit()

    def count() -> int:
        found = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        conn.rollback()
        return found

    return conn, count, conn.close


def delta_rig(root: Path) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    import pyarrow as pa
    from deltalake import DeltaTable

    from dagguard.idempotent.engines.delta import DeltaLake

    DeltaTable.create(str(root / "lake" / "events"), schema=pa.schema([
        ("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("v", pa.string())]))
    return (DeltaLake(str(root / "lake")),
            lambda: DeltaTable(str(root / "lake" / "events")).to_pyarrow_table().num_rows, lambda: None)


def iceberg_rig(root: Path) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

    (root / "wh").mkdir()
    catalog = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh")
    catalog.create_namespace("default")
    catalog.create_table(("default", "events"), Schema(
        NestedField(1, "k", LongType(), required=False), NestedField(2, "ts", TimestamptzType(), required=False),
        NestedField(3, "v", StringType(), required=False)))
    return catalog, lambda: catalog.load_table(("default", "events")).scan().to_arrow().num_rows, lambda: None


RIGS = {"sqlite": sqlite_rig, "duckdb": duckdb_rig, "postgres": postgres_rig, "delta": delta_rig,
        "iceberg": iceberg_rig}


def measure(engine: str, way: str, days: list[Interval], tables: list[Any], batch_size: int,
            strategy: str) -> float:
    root = Path(tempfile.mkdtemp(prefix=f"dagguard-backfill-{engine}-"))
    conn, count, close = RIGS[engine](root)
    options: dict[str, Any] = {"time_column": "ts", "strategy": strategy}
    if strategy == "merge":
        options["unique_key"] = "k"
    try:
        if way == "batched":
            batches = backfill_batches(days, batch_size=batch_size)
            pairs = list(zip(batches, batch_rows(batches, days, tables)))
            began = time.perf_counter()
            write_intervals(conn, "events", pairs, **options)
        else:
            began = time.perf_counter()
            for day, table in zip(days, tables):
                write_interval(conn, "events", table, day, **options)
        elapsed = time.perf_counter() - began
        expected = sum(t.num_rows for t in tables)
        if count() != expected:
            raise AssertionError(f"{engine} {way}: {count()} rows, expected {expected}")
        return elapsed
    finally:
        close()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows", type=int, default=3000, help="rows per day (default 3,000)")
    parser.add_argument("--batch-size", type=int, default=30, help="days per batch (default 30)")
    parser.add_argument("--runs", type=int, default=2, help="timed runs of each way, interleaved; the best counts")
    parser.add_argument("--strategy", choices=["replace", "merge"], default="replace")
    parser.add_argument("--engines", nargs="+", default=["sqlite", "duckdb", "postgres"], choices=list(RIGS))
    parser.add_argument("--pg-durable", action="store_true",
                        help="PostgreSQL with fsync=on (a server's default; the throwaway cluster turns it off)")
    args = parser.parse_args(argv)
    if args.pg_durable:
        _PG["settings"] = ("fsync=on",)
    days = [Interval(START + timedelta(days=d), START + timedelta(days=d + 1)) for d in range(args.days)]
    tables = day_rows(days, args.rows)
    print(f"{args.days} daily intervals of {args.rows} rows, strategy {args.strategy}, "
          f"batch_size {args.batch_size}, best of {args.runs}{', PostgreSQL fsync=on' if args.pg_durable else ''}")
    print(f"{'engine':10} {'separate s':>11} {'batched s':>10} {'ratio':>7}")
    try:
        for engine in args.engines:
            times: dict[str, list[float]] = {"separate": [], "batched": []}
            for _ in range(args.runs):  # the machine may be shared: interleaved, best of each
                for way in times:
                    times[way].append(measure(engine, way, days, tables, args.batch_size, args.strategy))
            separate, batched = min(times["separate"]), min(times["batched"])
            print(f"{engine:10} {separate:11.2f} {batched:10.2f} {separate / batched:6.1f}x", flush=True)
    finally:
        if "server" in _PG:
            _PG["server"].stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
