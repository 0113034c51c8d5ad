"""What reading SQLite's time column as instants costs the delete of one interval.

A table of ``--rows`` rows spread evenly over ``--days`` days, with an index on its text time
column, loses one interval (a day, or an hour) per timed run:

* ``text range``: the statement before (``ts >= ? AND ts < ?`` on the text), which is wrong for
  times stored in other forms than dagguard's;
* ``dagguard form``: SqliteEngine.interval_test() (the survey of the text near the interval)
  and the DELETE it gives, on a table written by dagguard: the plain range again;
* ``1% other forms`` / ``all other forms``: the same on a table where that share of the rows
  is stored as '2026-01-04T01:00:00Z'-style text, so the DELETE tests the normalised instant.

The same for overwrite_partition's delete of one day's partition from a text ``ds`` column
(plain dates, or a share of them as '2026-01-04 00:00:00'): ``ds = ?`` against
SqliteEngine.partition_test() and its DELETE.

Every run starts from a fresh copy of the prepared file and runs in one transaction without
fsync (the same for both statements, and noisy on a shared disk); the best of ``--runs`` is
reported, and each run checks the number of rows deleted.

    python benchmarks/sqlite_interval_delete.py               # 1,000,000 rows over 100 days
    python benchmarks/sqlite_interval_delete.py --rows 100000 --runs 1
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
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dagguard.idempotent import Interval  # noqa: E402
from dagguard.idempotent.engines.sqlite import SqliteEngine, sqlite_timestamp  # noqa: E402
from dagguard.idempotent.identifiers import TableName  # noqa: E402
from dagguard.idempotent.strategies import in_range  # noqa: E402

UTC = timezone.utc
START = datetime(2026, 1, 1, tzinfo=UTC)
TABLE = TableName(("events",))


def other_form(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def prepare(path: Path, rows: int, days: int, other_every: int) -> None:
    """`rows` rows over `days` days; every `other_every`-th in another form (0: none)."""
    step = timedelta(days=days) / rows

    def stored(i: int) -> str:
        value = START + i * step
        return other_form(value) if other_every and i % other_every == 0 else sqlite_timestamp(value)

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE events (k INTEGER, ts TEXT, v REAL)")
    conn.executemany("INSERT INTO events VALUES (?, ?, 1.0)", ((i, stored(i)) for i in range(rows)))
    conn.execute("CREATE INDEX events_ts ON events (ts)")
    conn.commit()
    conn.close()


def prepare_partitions(path: Path, rows: int, days: int, other_every: int) -> None:
    """`rows` rows over `days` daily partitions; every `other_every`-th as date and time (0: none)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE events (k INTEGER, ds TEXT, v REAL)")
    per_day = rows // days

    def stored(i: int) -> str:
        day = (START + timedelta(days=i // per_day)).date().isoformat()
        return f"{day} 00:00:00" if other_every and i % other_every == 0 else day

    conn.executemany("INSERT INTO events VALUES (?, ?, 1.0)", ((i, stored(i)) for i in range(per_day * days)))
    conn.execute("CREATE INDEX events_ds ON events (ds)")
    conn.commit()
    conn.close()


def delete_with_equality(conn: sqlite3.Connection, interval: Interval) -> int:
    return conn.execute("DELETE FROM events WHERE ds = ?", (interval.partition_key.isoformat(),)).rowcount


def delete_with_partition_test(conn: sqlite3.Connection, interval: Interval) -> int:
    engine = SqliteEngine(conn)
    sql, params = engine.partition_test(TABLE, "ds", interval.partition_key.isoformat(), "TEXT")('"ds"')
    return engine.execute(f"DELETE FROM events WHERE {sql}", params)


def delete_with_text_range(conn: sqlite3.Connection, interval: Interval) -> int:
    sql, params = in_range('"ts"', sqlite_timestamp(interval.start), sqlite_timestamp(interval.end))
    return conn.execute(f"DELETE FROM events WHERE {sql}", params).rowcount


def delete_with_interval_test(conn: sqlite3.Connection, interval: Interval) -> int:
    engine = SqliteEngine(conn)
    test = engine.interval_test(TABLE, "ts", interval.start, interval.end)
    sql, params = test('"ts"')
    return engine.execute(f"DELETE FROM events WHERE {sql}", params)


def best_time(prepared: Path, work: Path, runs: int, interval: Interval,
              delete: Callable[[sqlite3.Connection, Interval], int], expected: int | None) -> float:
    """Best time of `delete` on fresh copies; `expected` rows deleted, unless None."""
    best = float("inf")
    for _ in range(runs):
        shutil.copyfile(prepared, work)
        conn = sqlite3.connect(work, isolation_level=None)
        conn.execute("PRAGMA synchronous = OFF")  # the file's fsync is the same for both, and noisy
        began = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        deleted = delete(conn, interval)
        conn.execute("COMMIT")
        best = min(best, time.perf_counter() - began)
        conn.close()
        if expected is not None and deleted != expected:
            raise SystemExit(f"deleted {deleted} rows, expected {expected}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    day = Interval(START + timedelta(days=args.days // 2), START + timedelta(days=args.days // 2 + 1))
    hour = Interval(day.start + timedelta(hours=10), day.start + timedelta(hours=11))
    step = timedelta(days=args.days) / args.rows
    print(f"SQLite {sqlite3.sqlite_version}, {args.rows:,} rows over {args.days} days, index on ts, "
          f"best of {args.runs}")
    print(f"{'table':<16} {'interval':<9} {'rows':>7} {'text range':>11} {'interval_test':>14}")
    with tempfile.TemporaryDirectory() as folder:
        for label, other_every in (("dagguard form", 0), ("1% other forms", 100), ("all other forms", 1)):
            prepared, work = Path(folder, f"{other_every}.db"), Path(folder, "work.db")
            prepare(prepared, args.rows, args.days, other_every)
            for name, interval in (("day", day), ("hour", hour)):
                expected = sum(interval.start <= START + i * step < interval.end for i in range(args.rows))
                # Once other forms are stored the text range deletes the wrong rows: timed only.
                before = best_time(prepared, work, args.runs, interval, delete_with_text_range,
                                   None if other_every else expected)
                after = best_time(prepared, work, args.runs, interval, delete_with_interval_test, expected)
                print(f"{label:<16} {name:<9} {expected:>7,} {before:>9.4f} s {after:>12.4f} s")
        print(f"{'partitions':<16} {'rows':>7} {'ds = ?':>11} {'partition_test':>15}")
        for label, other_every in (("plain dates", 0), ("1% other forms", 100), ("all other forms", 1)):
            prepared, work = Path(folder, f"ds{other_every}.db"), Path(folder, "work.db")
            prepare_partitions(prepared, args.rows, args.days, other_every)
            expected = args.rows // args.days
            before = best_time(prepared, work, args.runs, day, delete_with_equality,
                               None if other_every else expected)
            after = best_time(prepared, work, args.runs, day, delete_with_partition_test, expected)
            print(f"{label:<16} {expected:>7,} {before:>9.4f} s {after:>13.4f} s")


if __name__ == "__main__":
    main()
