"""Two writers of one interval at once end with exactly one copy of the batch."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dagguard.idempotent.checksum import batch_checksum
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch, write_interval
from tests.idempotent.helpers import DAY1, DAY2, at, events

WRITER = Path(__file__).with_name("writer_process.py")
REPO = Path(__file__).resolve().parents[2]
BATCH = [{"k": k, "ts": at(1, k), "v": f"new-{k}"} for k in range(1, 6)]
EXPECTED = [(k, at(1, k), f"new-{k}") for k in range(1, 6)]


def _prefill(db, non_empty: bool) -> None:
    db.create()
    if non_empty:
        conn = db.connect()
        write_interval(conn, "events", events((1, at(1, 1), "old"), (9, at(1, 9), "old")), DAY1,
                       time_column="ts")
        conn.close()


@pytest.mark.parametrize("strategy", ["replace", "merge"])
@pytest.mark.parametrize("non_empty", [False, True], ids=["empty-interval", "non-empty-interval"])
def test_two_threads_released_by_a_barrier(db, strategy, non_empty):
    _prefill(db, non_empty)
    spec = WriteSpec.build("events", strategy, "ts", ["k"], strategy == "merge", "ds")
    batch = prepare_batch(spec, BATCH, None, DAY1)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def slow(number: int, sql: str) -> None:
        time.sleep(0.05)  # widen the window in which an unlocked writer would interleave

    def writer() -> None:
        conn = db.connect()  # sqlite3 connections belong to the thread that made them
        try:
            engine = engine_for(conn)
            barrier.wait()
            write_batch(engine, spec, batch, DAY1, batch_checksum(batch), RunInfo(), slow)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    assert db.rows() == EXPECTED
    assert len(db.rows("dagguard_write_log", "checksum")) == (3 if non_empty else 2)


@pytest.mark.parametrize("dialect", ["sqlite", "postgres", "iceberg", "iceberg-day"])
@pytest.mark.parametrize("non_empty", [False, True], ids=["empty-interval", "non-empty-interval"])
def test_two_processes(dialect, non_empty, request, tmp_path):
    # DuckDB is left out: a second process cannot open a DuckDB file that another has open.
    from tests.idempotent.helpers import make_database

    db = make_database(dialect, request, tmp_path)
    _prefill(db, non_empty)
    start_at = time.time() + 2.0
    procs = [subprocess.Popen([sys.executable, str(WRITER), db.url, "replace", "slow", str(start_at)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert db.rows() == EXPECTED


def test_postgres_without_the_advisory_lock_would_double_the_rows(request, tmp_path):
    """The control experiment: the same race with the lock taken on different keys doubles."""
    from dagguard.idempotent.engines.postgres import PostgresEngine
    from tests.idempotent.helpers import make_database

    class UnlockedPostgres(PostgresEngine):
        def execute(self, sql, params=()):
            if "pg_advisory_xact_lock" in sql and params and "|" in str(params[0]):
                params = (f"{params[0]}|{threading.get_ident()}",)
            return super().execute(sql, params)

    db = make_database("postgres", request, tmp_path)
    _prefill(db, False)
    # Create the ledger beforehand: its creation takes a lock of its own that would serialise.
    conn = db.connect()
    write_interval(conn, "events", [], DAY2, time_column="ts", columns=["k", "ts", "v"])
    conn.close()
    spec = WriteSpec.build("events", "replace", "ts", (), False, "ds")
    batch = prepare_batch(spec, BATCH, None, DAY1)
    barrier = threading.Barrier(2)
    connections = [db.connect() for _ in range(2)]

    def writer(conn) -> None:
        engine = UnlockedPostgres(conn)
        barrier.wait()
        write_batch(engine, spec, batch, DAY1, batch_checksum(batch), RunInfo(),
                    lambda n, sql: time.sleep(0.2))

    threads = [threading.Thread(target=writer, args=(conn,)) for conn in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for conn in connections:
        conn.close()
    assert len(db.rows()) == 2 * len(EXPECTED)


def test_two_duckdb_processes_one_writes_the_other_cannot_open_the_file(request, tmp_path):
    """DuckDB lets one process open a file for writing: the loser fails cleanly, one copy lands."""
    from tests.idempotent.helpers import make_database

    db = make_database("duckdb", request, tmp_path)
    _prefill(db, True)
    start_at = time.time() + 2.0
    procs = [subprocess.Popen([sys.executable, str(WRITER), db.url, "replace", "slow", str(start_at)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outcomes = []
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        outcomes.append((proc.returncode, err))
    assert any(code == 0 for code, _ in outcomes), outcomes
    for code, err in outcomes:
        assert code == 0 or "ConnectionFailedError" in err, err
    assert db.rows() == EXPECTED


def _batch_of_one_writer(rows, day: int, tags: tuple[str, ...]) -> bool:
    """The day's rows are exactly one writer's batch: keys 1-5 once each, all with its tag."""
    return any(sorted(rows) == [(k, at(day, k), f"{tag}-{k}") for k in range(1, 6)] for tag in tags)


@pytest.mark.parametrize("dialect", ["sqlite", "iceberg", "iceberg-day"])
@pytest.mark.parametrize("strategy", ["replace", "merge"])
@pytest.mark.parametrize("same_interval", [False, True], ids=["two-intervals", "one-interval"])
def test_two_processes_racing_many_times(dialect, strategy, same_interval, request, tmp_path):
    """Two processes each write 15 times at once, to two days or both to one: each day ends as
    one writer's batch, no row lost or doubled, and every write is in the ledger. On Iceberg
    each commit must land on the snapshot it read, or it is re-planned from a fresh read."""
    from tests.idempotent.helpers import make_database

    db = make_database(dialect, request, tmp_path)
    _prefill(db, True)
    repeats = 15
    days = (1, 1) if same_interval else (1, 2)
    start_at = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, str(WRITER), db.url, strategy, "race", str(start_at),
                               str(day), tag, str(repeats)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for day, tag in zip(days, ("a", "b"))]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    rows = db.rows()
    for day in set(days):
        mine = [row for row in rows if row[1].day == day]
        assert _batch_of_one_writer(mine, day, ("a", "b") if same_interval else ("a" if day == 1 else "b",)), mine
    assert len(rows) == 5 * len(set(days))
    assert len(db.rows("dagguard_write_log", "checksum")) == 1 + 2 * repeats


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_a_stale_read_is_never_committed(db, strategy):
    """A writer that read the interval before another committed into it must not commit what
    it planned from that read: two merges of different keys both keep their rows (a merge
    planned from the empty interval would drop the other's), two replaces leave one batch."""
    _prefill(db, False)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        conn = db.connect()
        try:
            spec = WriteSpec.build("events", strategy, "ts", ["k"], False, "ds")
            batch = prepare_batch(spec, [{"k": k, "ts": at(1, k), "v": f"w{k}"}], None, DAY1)
            barrier.wait()
            write_batch(engine_for(conn), spec, batch, DAY1, batch_checksum(batch), RunInfo(),
                        lambda number, sql: time.sleep(0.2))  # both read before either commits
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    if strategy == "merge":
        assert db.rows() == [(1, at(1, 1), "w1"), (2, at(1, 2), "w2")]
    else:
        assert db.rows() in ([(1, at(1, 1), "w1")], [(2, at(1, 2), "w2")])


def test_duckdb_lock_row_is_inserted_once_then_updated(tmp_path):
    # The interval's lock row is inserted by its first write and updated by the later ones (an
    # UPDATE, then the upsert only where it found no row): one row per interval, counting writes.
    import duckdb

    from dagguard.idempotent.engines.duckdb import LOCK_TABLE

    conn = duckdb.connect(str(tmp_path / "lock.duckdb"))
    conn.execute("CREATE TABLE events (k BIGINT, ts TIMESTAMPTZ, v VARCHAR)")
    for value in ("a", "b", "c"):
        write_interval(conn, "events", [{"k": 1, "ts": at(1, 1), "v": value}], DAY1, time_column="ts")
    write_interval(conn, "events", [{"k": 2, "ts": at(2, 1), "v": "d"}], DAY2, time_column="ts")
    rows = conn.execute(f"SELECT lock_key, writes FROM {LOCK_TABLE} ORDER BY lock_key").fetchall()
    assert [writes for _, writes in rows] == [3, 1]
    assert conn.execute("SELECT v FROM events ORDER BY k").fetchall() == [("c",), ("d",)]
