"""Writers of one Spark table in separate Spark applications (processes with their own local[1]
session over one warehouse folder) take turns on the table's lock file: different intervals and
the same interval at once end as one writer's batch each, no row lost or doubled, and the
ledger keeps every write's row (threads of one application too); a writer killed with -9 while it holds the lock blocks the next
one for its lease only. The lock itself (wait, break, loss) is tested on the same folder code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dagguard.idempotent import ConcurrentWriteError, write_interval
from dagguard.idempotent.engines import spark_lock
from tests.idempotent.helpers import UTC
from tests.idempotent.spark_concurrent_writer import batch, day_interval

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("spark_concurrent_writer.py")
ROUNDS = 2


def _start(tmp_path: Path, location: Path, tag: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WRITER), str(location), str(tmp_path / "warehouse"),
                             str(tmp_path / "go"), tag, *args],
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _rows(spark, location: Path, day: int) -> list[tuple]:
    """The day's rows as the table's folder holds them now (listed afresh)."""
    frame = spark.read.parquet(str(location))
    found = [(r.k, r.ts.astimezone(UTC), r.v) for r in frame.collect() if r.ts.astimezone(UTC).day == day]
    return sorted(found)


def _expected(day: int, tag: str, round_: int) -> list[tuple]:
    return sorted((r["k"], r["ts"], r["v"]) for r in batch(day, tag, round_))


def test_two_applications_writing_one_table_at_once(spark, tmp_path):
    location = tmp_path / "events"
    # a: January 1st (both write it) and 2nd (its own); b: January 1st and 3rd, and table
    # `others` (its ledger rows go into the same ledger folder as a's, at once).
    writers = [_start(tmp_path, location, "a", str(ROUNDS), "1", "2"),
               _start(tmp_path, location, "b", str(ROUNDS), "1", "3", "others:1")]
    try:
        for writer in writers:
            assert writer.stdout.readline().strip() == "READY", writer.stderr.read()
        (tmp_path / "go").touch()  # both sessions are up: release them together
        for writer in writers:
            out, err = writer.communicate(timeout=240)
            assert writer.returncode == 0 and out.strip() == "DONE", err[-3000:]
    finally:
        for writer in writers:
            if writer.poll() is None:
                os.killpg(writer.pid, signal.SIGKILL)
                writer.wait()
    last = ROUNDS - 1
    assert _rows(spark, location, 1) in (_expected(1, "a", last), _expected(1, "b", last))
    assert _rows(spark, location, 2) == _expected(2, "a", last)
    assert _rows(spark, location, 3) == _expected(3, "b", last)
    assert _rows(spark, Path(f"{location}-others"), 1) == _expected(1, "b", last)
    # Every write's ledger row, none lost to the other application's append into the same folder.
    ledger = spark.read.parquet(str(tmp_path / "warehouse" / "dagguard_write_log"))
    assert ledger.count() == 5 * ROUNDS
    # The locks are released: no lock file is left behind.
    assert not list(location.glob("_dagguard/lock")) and not list(location.glob("_dagguard/beat-*"))
    assert not list((tmp_path / "warehouse").glob("dagguard_write_log/_dagguard/lock"))


def test_a_writer_killed_while_holding_the_lock_blocks_the_next_one_for_its_lease(spark, tmp_path):
    location, lease = tmp_path / "events", 3.0
    writer = _start(tmp_path, location, "dead", "hold", str(lease))
    try:
        assert writer.stdout.readline().strip() == "READY", writer.stderr.read()
        (tmp_path / "go").touch()
        deadline = time.monotonic() + 180
        lock = location / "_dagguard" / "lock"
        while not lock.exists() or not lock.read_text():
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr.read()[-3000:]
            time.sleep(0.05)
    finally:
        os.killpg(writer.pid, signal.SIGKILL)  # the writer and its JVM, the lock still taken
        writer.wait()
    assert f'"pid": {writer.pid}' in lock.read_text()
    spark.sql("DROP TABLE IF EXISTS killed_events")
    spark.sql(f"CREATE TABLE killed_events (k INT, v STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts) "
              f"LOCATION '{location}'")
    try:
        began = time.monotonic()
        write_interval(spark, "killed_events", batch(1, "next", 0), day_interval(1), time_column="ts")
        waited = time.monotonic() - began
        assert waited >= lease  # the dead writer's lock held until its lease ran out, no longer
        spark.catalog.refreshTable("killed_events")
        found = sorted((r.k, r.ts.astimezone(UTC), r.v) for r in spark.table("killed_events").collect())
        assert found == _expected(1, "next", 0)
        assert not lock.exists() and not list(lock.parent.glob("break-*"))
    finally:
        spark.sql("DROP TABLE killed_events")


def test_a_live_holder_makes_the_next_writer_wait_then_fail(spark, tmp_path):
    held, release = threading.Event(), threading.Event()
    folder = tmp_path.as_uri()

    def holder() -> None:
        with spark_lock.storage_lock(spark, folder, "table t"):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    spark.conf.set(spark_lock.LEASE_KEY, "1")
    spark.conf.set(spark_lock.WAIT_KEY, "3")
    try:
        thread.start()
        assert held.wait(30)
        began = time.monotonic()
        # The holder renews its lease (every quarter of it): not taken for dead, however long.
        with pytest.raises(ConcurrentWriteError, match=r"table t is locked by another writer .* 3 s"):
            with spark_lock.storage_lock(spark, folder, "table t"):
                pass
        assert time.monotonic() - began >= 3
        release.set()
        thread.join(30)
        with spark_lock.storage_lock(spark, folder, "table t") as mine:  # released: taken at once
            mine.check()
    finally:
        release.set()
        spark.conf.unset(spark_lock.LEASE_KEY)
        spark.conf.unset(spark_lock.WAIT_KEY)


def test_a_holder_whose_lock_was_taken_stops_before_its_commit(spark, tmp_path):
    spark.conf.set(spark_lock.LEASE_KEY, "30")
    try:
        with spark_lock.storage_lock(spark, tmp_path.as_uri(), "table t") as held:
            held.check()
            # As a waiter does when this holder stalled past its lease: the lock broken, retaken.
            lock = tmp_path / "_dagguard" / "lock"
            lock.unlink()
            lock.write_text('{"token": "other", "lease_seconds": 30}')
            with pytest.raises(ConcurrentWriteError, match="passed to another writer"):
                held.check()
        assert lock.read_text() == '{"token": "other", "lease_seconds": 30}'  # not released: not its own
    finally:
        spark.conf.unset(spark_lock.LEASE_KEY)


def test_two_threads_of_one_application_take_turns(spark, tmp_path):
    location = tmp_path / "events"
    spark.sql("DROP TABLE IF EXISTS threaded_events")
    spark.sql(f"CREATE TABLE threaded_events (k INT, v STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts) "
              f"LOCATION '{location}'")
    barrier, errors = threading.Barrier(2), []

    def writer(tag: str) -> None:
        session = spark.newSession()  # the same catalog, a session of its own
        try:
            barrier.wait()
            write_interval(session, "threaded_events", batch(1, tag, 0), day_interval(1), time_column="ts")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in ("a", "b")]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        assert not errors, errors
        spark.catalog.refreshTable("threaded_events")
        found = sorted((r.k, r.ts.astimezone(UTC), r.v) for r in spark.table("threaded_events").collect())
        assert found in (_expected(1, "a", 0), _expected(1, "b", 0))
        assert not (location / "_dagguard" / "lock").exists()
    finally:
        spark.sql("DROP TABLE threaded_events")


def test_the_hadoop_file_system_store(spark, tmp_path):
    # The store of HDFS, S3A and the other Hadoop file systems, here over Hadoop's local one
    # (whose create-if-absent is two steps: `file:` tables use the driver's O_EXCL instead).
    store = spark_lock.HadoopStore(spark, tmp_path.as_uri() + "/_dagguard")
    assert store.read("lock") is None
    assert store.create("lock", '{"token": "a"}')
    assert not store.create("lock", '{"token": "b"}')
    assert store.read("lock") == '{"token": "a"}'
    store.write("beat-a", "1")
    store.write("beat-a", "2")
    assert store.read("beat-a") == "2"
    store.delete("lock")
    store.delete("lock")  # already gone: nothing to do
    assert store.read("lock") is None and (tmp_path / "_dagguard" / "beat-a").read_text() == "2"


def test_waiters_of_a_dead_holder_break_its_lock_once_and_take_turns(spark, tmp_path):
    folder = tmp_path / "_dagguard"
    folder.mkdir()
    (folder / "lock").write_text('{"token": "dead", "lease_seconds": 1}')  # its holder never beats
    events_seen: list[tuple[str, int]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def waiter(number: int) -> None:
        try:
            barrier.wait()
            with spark_lock.storage_lock(spark, tmp_path.as_uri(), "table t"):
                events_seen.append(("in", number))
                time.sleep(0.3)
                events_seen.append(("out", number))
        except BaseException as exc:  # reported below
            errors.append(exc)

    spark.conf.set(spark_lock.LEASE_KEY, "2")
    try:
        threads = [threading.Thread(target=waiter, args=(n,)) for n in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        spark.conf.unset(spark_lock.LEASE_KEY)
    assert not errors, errors
    assert len(events_seen) == 6
    for at in range(0, 6, 2):  # never two holders at once
        assert events_seen[at][0] == "in" and events_seen[at + 1] == ("out", events_seen[at][1])
    assert sorted(name.name for name in folder.iterdir()) == []
