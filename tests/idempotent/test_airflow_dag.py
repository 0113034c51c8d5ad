"""End to end on Airflow 3.3: a DAG using @idempotent_write and IntervalMergeOperator, run with dag.test()."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.idempotent.airflow_run import run_dags

pytest.importorskip("airflow.sdk")

HERE = Path(__file__).parent

pytestmark = pytest.mark.airflow


@pytest.fixture(scope="module")
def airflow_run(tmp_path_factory):
    """Run the DAGs once for the module; return (warehouse connection, runner output)."""
    base = tmp_path_factory.mktemp("airflow")
    iceberg_url = _iceberg_catalog(base)
    conn, output = run_dags(base, "dag_orders.py", "airflow_runner.py", """
        CREATE TABLE signups (user_id INTEGER, signed_up_at TEXT, plan TEXT);
        CREATE TABLE orders (order_id INTEGER, created_at TEXT, amount REAL);
        CREATE TABLE raw_orders (order_id INTEGER, created_at TEXT, amount REAL);
        INSERT INTO raw_orders VALUES (1, '2026-01-04 10:00:00.000000+00:00', 5.0),
                                      (2, '2026-01-04 23:59:59.999999+00:00', 7.5),
                                      (3, '2026-01-05 00:00:00.000000+00:00', 1.0),
                                      (4, '2026-01-03 11:00:00.000000+00:00', 2.0);
    """,
                            extra_env={"DAGGUARD_ICEBERG_URL": iceberg_url} if iceberg_url else None)
    yield conn, output
    conn.close()


def _iceberg_catalog(base: Path) -> str | None:
    """An Iceberg SQL catalog with an empty analytics.signups, and its URL; None without pyiceberg."""
    try:
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType
    except ImportError:
        return None
    lake = base / "lake"
    lake.mkdir()
    catalog = SqlCatalog("default", uri=f"sqlite:///{lake}/catalog.db", warehouse=f"file://{lake}")
    catalog.create_namespace("analytics")
    catalog.create_table("analytics.signups", Schema(
        NestedField(1, "user_id", LongType()), NestedField(2, "signed_up_at", TimestamptzType()),
        NestedField(3, "plan", StringType())))
    catalog.close()
    return f"iceberg+sqlite:///{lake}/catalog.db?warehouse=file://{lake}"


def test_the_decorator_writes_an_iceberg_table_once_across_two_runs(airflow_run):
    """@idempotent_write with an iceberg+sqlite:// conn_id, run twice by dag.test(): one copy,
    the rerun commits no snapshot, and the ledger names the task."""
    pytest.importorskip("pyiceberg")
    from dagguard.idempotent import read_ledger
    from dagguard.idempotent.engines.iceberg_catalog import open_catalog

    _, output = airflow_run
    assert output.count("STATE signups_iceberg success") == 2, output[-4000:]
    url = next(line.split("=", 1)[1] for line in output.splitlines() if line.startswith("ICEBERG_URL="))
    catalog = open_catalog(url)
    table = catalog.load_table("analytics.signups")
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["user_id"])
    assert [(r["user_id"], r["signed_up_at"].hour, r["plan"]) for r in rows] == [
        (i, i, "pro-2026-01-05") for i in range(3)]
    data_commits = {s.summary.additional_properties.get("dagguard.interval") for s in table.snapshots()}
    catalog.close()
    assert data_commits == {"2026-01-04T00:00:00+00:00/2026-01-05T00:00:00+00:00"}
    entries = read_ledger(url).entries
    assert [(e.dag_id, e.task_id, e.rows_inserted) for e in entries] == [
        ("signups_iceberg", "export_signups", 3), ("signups_iceberg", "export_signups", 0)]


def test_running_the_same_logical_date_twice_leaves_one_copy(airflow_run):
    conn, output = airflow_run
    assert output.count("STATE orders_daily success") == 2, output[-4000:]
    signups = conn.execute("SELECT user_id, signed_up_at, plan FROM signups ORDER BY user_id").fetchall()
    # The interval is [01-04, 01-05); Airflow 3's own `ds` is the logical date, 01-05.
    assert signups == [(i, f"2026-01-04 0{i}:00:00.000000+00:00", "pro-2026-01-05") for i in range(3)]


def test_operator_copies_exactly_the_interval_once(airflow_run):
    conn, _ = airflow_run
    orders = conn.execute("SELECT order_id, created_at, amount FROM orders ORDER BY order_id").fetchall()
    assert orders == [(1, "2026-01-04 10:00:00.000000+00:00", 5.0),
                      (2, "2026-01-04 23:59:59.999999+00:00", 7.5)]


def test_ledger_records_both_runs_with_task_identity(airflow_run):
    conn, _ = airflow_run
    rows = conn.execute("SELECT dag_id, task_id, table_name, interval_start, rows_inserted, checksum "
                        "FROM dagguard_write_log ORDER BY written_at").fetchall()
    assert [(r[0], r[1], r[2], r[4]) for r in rows] == [
        ("orders_daily", "export_signups", "signups", 3), ("orders_daily", "load_orders", "orders", 2),
        ("orders_daily", "export_signups", "signups", 0), ("orders_daily", "load_orders", "orders", 0)]
    assert {r[3] for r in rows} == {"2026-01-04 00:00:00.000000+00:00"}
    assert rows[0][5] == rows[2][5] and rows[1][5] == rows[3][5]


def test_a_trigger_cron_dag_fails_with_the_fix_and_writes_nothing(airflow_run):
    conn, output = airflow_run
    assert "STATE signups_trigger_cron failed" in output
    assert "EmptyIntervalError" in output and "create_cron_data_intervals" in output
    assert "must not run" not in output
    assert conn.execute("SELECT count(*) FROM dagguard_write_log WHERE dag_id = 'signups_trigger_cron'"
                        ).fetchone() == (0,)
