"""End to end on Airflow 3.3: @idempotent_write and IntervalMergeOperator with lookback=1, run with
dag.test(): a row arriving late for yesterday is written by today's run, and a rerun duplicates nothing."""

from __future__ import annotations


import pytest

from tests.idempotent.airflow_run import run_dags

pytest.importorskip("airflow.sdk")


pytestmark = pytest.mark.airflow


@pytest.fixture(scope="module")
def airflow_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("airflow-lookback")
    conn, output = run_dags(base, "dag_lookback.py", "airflow_lookback_runner.py", """
        CREATE TABLE events (k INTEGER, ts TEXT, v TEXT);
        CREATE TABLE events_merged (k INTEGER, ts TEXT, v TEXT);
        CREATE TABLE raw_events (k INTEGER, ts TEXT, v TEXT);
        INSERT INTO raw_events VALUES (1, '2026-01-04 10:00:00.000000+00:00', 'a'),
                                      (2, '2026-01-05 10:00:00.000000+00:00', 'b');
    """)
    yield conn, output
    conn.close()


def test_the_task_receives_the_widened_interval(airflow_run):
    _, output = airflow_run
    assert [line for line in output.splitlines() if line.startswith("STATE")] == [
        "STATE 2026-01-05 success", "STATE 2026-01-06 success", "STATE 2026-01-06 success"], output[-4000:]
    received = [line.split()[1:] for line in output.splitlines() if line.startswith("RECEIVED")]
    assert received == [["2026-01-03T00:00:00+00:00", "2026-01-05T00:00:00+00:00"]] + [
        ["2026-01-04T00:00:00+00:00", "2026-01-06T00:00:00+00:00"]] * 2


@pytest.mark.parametrize("table", ["events", "events_merged"])
def test_the_late_row_is_picked_up_once(airflow_run, table):
    conn, _ = airflow_run
    assert conn.execute(f"SELECT k, ts, v FROM {table} ORDER BY k").fetchall() == [
        (1, "2026-01-04 10:00:00.000000+00:00", "a"), (2, "2026-01-05 10:00:00.000000+00:00", "b"),
        (3, "2026-01-04 23:00:00.000000+00:00", "late")]


def test_the_ledger_records_the_widened_intervals(airflow_run):
    conn, _ = airflow_run
    rows = conn.execute("SELECT task_id, interval_start, interval_end, rows_inserted FROM dagguard_write_log "
                        "ORDER BY written_at").fetchall()
    day = "2026-01-0{} 00:00:00.000000+00:00".format
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (task, day(3), day(5)) for task in ("export_events", "load_events")] + [
        (task, day(4), day(6)) for task in ("export_events", "load_events")] * 2
    assert [r[3] for r in rows[-2:]] == [0, 0]
