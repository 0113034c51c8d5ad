"""End to end on Airflow 3.3: partitioned runs (CronPartitionTimetable, PartitionedAssetTimetable)
writing with @idempotent_write and IntervalMergeOperator; see airflow_partition_runner.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.idempotent.airflow_run import run_dags

pytest.importorskip("airflow.sdk")

HERE = Path(__file__).parent
KEY = "2026-01-05T03:00:00"

pytestmark = pytest.mark.airflow


@pytest.fixture(scope="module")
def airflow_run(tmp_path_factory):
    """Run the partitioned DAGs once for the module; return (warehouse connection, runner output)."""
    base = tmp_path_factory.mktemp("airflow")
    conn, output = run_dags(base, "dag_partitions.py", "airflow_partition_runner.py", """
        CREATE TABLE events_hourly (k INTEGER, ts TEXT, v TEXT);
        CREATE TABLE events_by_key (k INTEGER, v TEXT, pk TEXT);
        CREATE TABLE events_merged (k INTEGER, ts TEXT, v TEXT);
        CREATE TABLE events_daily (k INTEGER, ts TEXT, v TEXT);
        CREATE TABLE raw_events (k INTEGER, ts TEXT, v TEXT);
        INSERT INTO events_by_key VALUES (7, 'another hour', '2026-01-05T02:00:00');
        INSERT INTO raw_events VALUES (1, '2026-01-05 02:59:59.999999+00:00', 'before'),
                                      (2, '2026-01-05 03:00:00.000000+00:00', 'first'),
                                      (3, '2026-01-05 03:59:59.999999+00:00', 'last'),
                                      (4, '2026-01-05 04:00:00.000000+00:00', 'after');
    """,
                            timeout=600, shown=6000)
    yield conn, output
    conn.close()


def _events(output):
    return [json.loads(line[len("EVENT "):]) for line in output.splitlines() if line.startswith("EVENT ")]


def test_the_hour_written_twice_holds_one_copy(airflow_run):
    conn, output = airflow_run
    assert output.count(f"STATE events_hourly {KEY} success") == 2, output[-6000:]
    rows = conn.execute("SELECT k, ts, v FROM events_hourly ORDER BY k").fetchall()
    assert rows == [(i, f"2026-01-05 03:{10 * i:02d}:00.000000+00:00", KEY) for i in range(3)]


def test_overwrite_partition_writes_the_rows_of_the_key(airflow_run):
    conn, _ = airflow_run
    rows = conn.execute("SELECT k, v, pk FROM events_by_key ORDER BY pk, k").fetchall()
    assert rows == [(7, "another hour", "2026-01-05T02:00:00"), (0, "row 0", KEY), (1, "row 1", KEY)]


def test_the_operator_copies_the_hour_once(airflow_run):
    conn, _ = airflow_run
    rows = conn.execute("SELECT k, v FROM events_merged ORDER BY k").fetchall()
    assert rows == [(2, "first"), (3, "last")]


def test_the_ledger_records_the_partition_key_of_each_write(airflow_run):
    conn, _ = airflow_run
    rows = conn.execute("SELECT task_id, partition_key, interval_start, interval_end, rows_inserted "
                        "FROM dagguard_write_log WHERE dag_id = 'events_hourly' ORDER BY written_at").fetchall()
    hour = ("2026-01-05 03:00:00.000000+00:00", "2026-01-05 04:00:00.000000+00:00")
    # overwrite_partition on a cron partition knows the hour too: the rows' times, had they any,
    # would have to lie in it.
    assert rows == [("load_hour", KEY, *hour, 3), ("load_by_key", KEY, *hour, 2), ("merge_hour", KEY, *hour, 2),
                    ("load_hour", KEY, *hour, 0), ("load_by_key", KEY, *hour, 0), ("merge_hour", KEY, *hour, 0)]


def test_outlets_are_announced_with_the_written_partition(airflow_run):
    _, output = airflow_run
    events = [e for e in _events(output) if e["dag_id"] == "events_hourly"]
    assert [(e["asset"], e["partition_key"]) for e in events] == [
        ("warehouse_events_hourly", KEY), ("warehouse_events_by_key", KEY), ("warehouse_events_merged", KEY)] * 2
    first, rerun = events[0]["extra"]["dagguard"], events[3]["extra"]["dagguard"]
    assert (first["table"], first["partition_key"], first["rows_inserted"]) == ("events_hourly", KEY, 3)
    # An unchanged rerun announces the partition again, with the same checksum and nothing inserted.
    assert (rerun["rows_inserted"], rerun["checksum"]) == (0, first["checksum"])


def test_a_partitioned_asset_run_writes_the_mappers_day(airflow_run):
    conn, output = airflow_run
    assert "STATE events_daily 2026-01-05 success" in output, output[-6000:]
    assert conn.execute("SELECT k, ts, v FROM events_daily").fetchall() == [
        (0, "2026-01-05 00:00:00.000000+00:00", "until 2026-01-06T00:00:00+00:00")]


def test_a_run_with_neither_interval_nor_partition_fails_with_the_fix(airflow_run):
    conn, output = airflow_run
    assert "STATE events_unscheduled None failed" in output
    assert "NoRunIntervalError" in output and "no data interval and no partition key" in output
    assert "must not run" not in output
    assert conn.execute("SELECT count(*) FROM dagguard_write_log WHERE dag_id = 'events_unscheduled'"
                        ).fetchone() == (0,)
