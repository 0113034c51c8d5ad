"""DG207: reads keyed on the logical date on Airflow 3's trigger timetables."""

from __future__ import annotations

import datetime as dt

import pytest

from dagguard.model.schedules.run_dates import example_run
from dagguard.model.schedules.schedules import Recurrence
from dagguard.model.sql.sql import parse_sql
from dagguard.model.sql.sql_facts import run_date_reads
from dagguard.model.sql.templates import analyse_template
from tests.lint_helpers import lint

SQL_DAG = """\
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import DAG
with DAG("events_daily", schedule=SCHEDULE, template_searchpath=["queries"]):
    SQLExecuteQueryOperator(task_id="load_events", conn_id="w", sql="load_events.sql")
"""


def dg207(findings):
    return [f for f in findings if f.code == "DG207"]


def reads(sql: str) -> list[str]:
    template = analyse_template(sql)
    return [read.text for statement in parse_sql(template.text).statements
            for read in run_date_reads(statement.tree, template.expression)]


def test_a_sql_file_next_to_the_dag_is_read(tmp_path):
    (tmp_path / "load_events.sql").write_text(
        "DELETE FROM events_daily WHERE day = '{{ ds }}';\n"
        "INSERT INTO events_daily SELECT * FROM raw.events WHERE event_date = '{{ ds }}';\n")
    (finding,) = dg207(lint(tmp_path, SQL_DAG.replace("SCHEDULE", '"@daily"')))
    assert "task 'load_events' reads event_date = {{ ds }}" in finding.message
    assert "scheduled '@daily'" in finding.message
    assert "the run at 2026-01-02 00:00 has ds = 2026-01-02 (2026-01-01 on Airflow 2)" in finding.message
    assert 'CronDataIntervalTimetable("0 0 * * *", timezone="UTC")' in finding.help
    assert "{{ macros.ds_add(ds, -1) }}" in finding.help


def test_a_sql_file_on_the_template_searchpath_is_read(tmp_path):
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "load_events.sql").write_text(
        "INSERT INTO events_hourly SELECT * FROM raw.events WHERE ts >= '{{ ts }}'")
    (finding,) = dg207(lint(tmp_path, SQL_DAG.replace("SCHEDULE", '"0 * * * *"')))
    assert "ts >= {{ ts }}" in finding.message
    assert "2026-01-01 23:00 on Airflow 2" in finding.message
    assert "{{ data_interval_start - macros.timedelta(hours=1) }}" in finding.help


@pytest.mark.parametrize("sql", [
    "DELETE FROM events_daily WHERE day = '{{ ds }}'",
    "INSERT INTO events_daily SELECT '{{ ds }}' AS day, * FROM dim.customers",
    "INSERT INTO events_daily SELECT * FROM raw.events WHERE day = '{{ macros.ds_add(ds, -1) }}'",
])
def test_a_sql_file_that_writes_the_run_date_or_reads_the_day_before_is_not_flagged(tmp_path, sql):
    (tmp_path / "load_events.sql").write_text(sql)
    assert not dg207(lint(tmp_path, SQL_DAG.replace("SCHEDULE", '"@daily"')))


def test_a_missing_sql_file_is_not_judged(tmp_path):
    assert not dg207(lint(tmp_path, SQL_DAG.replace("SCHEDULE", '"@daily"')))


@pytest.mark.parametrize(("schedule", "settings"), [
    ("None", {}), ('"@once"', {}), ('"@continuous"', {}), ('[Asset("s3://b/k")]', {}), ("get_schedule()", {}),
    ('CronDataIntervalTimetable("0 0 * * *", timezone="UTC")', {}),
    ('"@daily"', {"airflow_version": "2"}), ('"@daily"', {"create_cron_data_intervals": True}),
])
def test_schedules_without_a_shifted_logical_date_are_silent(tmp_path, schedule, settings):
    (tmp_path / "load_events.sql").write_text("INSERT INTO t SELECT * FROM raw.events WHERE day = '{{ ds }}'")
    code = SQL_DAG.replace("SCHEDULE", schedule).replace(
        "from airflow.sdk import DAG", "from airflow.sdk import DAG, Asset, CronDataIntervalTimetable")
    assert not dg207(lint(tmp_path, code, **settings))


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT * FROM s WHERE d = '{{ ds }}'", ["d = {{ ds }}"]),
    ("SELECT * FROM s WHERE '{{ ds }}' = d", ["d = {{ ds }}"]),
    ("SELECT * FROM s WHERE '{{ logical_date }}' <= ts", ["ts >= {{ logical_date }}"]),
    ("SELECT * FROM s WHERE ts < '{{ logical_date }}'", []),
    ("SELECT * FROM s WHERE d = CAST('{{ dag_run.logical_date.strftime('%Y-%m-%d') }}' AS DATE)",
     ["d = {{ dag_run.logical_date.strftime('%Y-%m-%d') }}"]),
    ("SELECT * FROM s WHERE d = '{{ ds | replace('-', '') }}'", ["d = {{ ds | replace('-', '') }}"]),
    ("SELECT * FROM s JOIN u ON u.id = s.id AND u.day = '{{ ds }}'", ["u.day = {{ ds }}"]),
    ("WITH c AS (SELECT * FROM s WHERE d = '{{ ds }}') INSERT INTO t SELECT * FROM c", ["d = {{ ds }}"]),
    ("CREATE TABLE t AS SELECT * FROM s WHERE d >= '{{ ds }}'", ["d >= {{ ds }}"]),
    ("MERGE INTO t USING (SELECT * FROM s WHERE d = '{{ ds }}') s ON t.id = s.id "
     "WHEN MATCHED THEN UPDATE SET a = s.a", ["d = {{ ds }}"]),
    ("SELECT * FROM raw.events_{{ ds_nodash }}", ["FROM raw.events___dgt_"]),
    # Ranges up to data_interval_end are DG206's, except one day from start to end.
    ("SELECT * FROM s WHERE ts >= '{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'", []),
    ("SELECT * FROM s WHERE d >= '{{ ds }}' AND d < '{{ data_interval_end | ds }}'", []),
    ("SELECT * FROM s WHERE d BETWEEN '{{ data_interval_start | ds }}' AND '{{ data_interval_end | ds }}'",
     ["d BETWEEN {{ data_interval_start | ds }} AND ..."]),
    ("SELECT * FROM s WHERE d >= '{{ ds }}' AND d < '{{ macros.ds_add(ds, 1) }}'", ["d >= {{ ds }}"]),
    # Writes keyed on the run date, and arithmetic that moves it.
    ("DELETE FROM t WHERE id IN (SELECT id FROM t WHERE d = '{{ ds }}')", []),
    ("MERGE INTO t USING s ON t.id = s.id AND t.d = '{{ ds }}' WHEN MATCHED THEN UPDATE SET a = s.a", []),
    ("INSERT OVERWRITE TABLE t PARTITION (ds = '{{ ds }}') SELECT * FROM s", []),
    ("INSERT INTO events_{{ ds_nodash }} SELECT * FROM s", []),
    ("SELECT * FROM s WHERE ts >= '{{ data_interval_start - macros.timedelta(days=1) }}'", []),
    ("SELECT * FROM s WHERE d = '{{ macros.ds_add(ds, -1) }}'", []),
])
def test_reads_keyed_on_the_logical_date(sql, expected):
    found = reads(sql)
    assert len(found) == len(expected)
    assert all(text.startswith(prefix) for text, prefix in zip(found, expected))


def test_the_example_run_and_its_airflow_2_logical_date():
    daily = example_run(Recurrence(("0 0 * * *",), None, False))
    assert (daily.starts, daily.airflow2_logical_date, daily.period) == (
        dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc), dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
        dt.timedelta(days=1))
    weekly = example_run(Recurrence(("@weekly",), None, False))
    assert weekly.starts.date() == dt.date(2026, 1, 4) and weekly.period == dt.timedelta(days=7)
    # Months and years differ in length: no one period to subtract.
    assert example_run(Recurrence(("@monthly",), None, False)).period is None
    assert example_run(Recurrence(("@yearly",), None, False)).period is None
    assert example_run(Recurrence(("0 9-17 * * *",), None, False)).period is None
    six_hours = example_run(Recurrence((), dt.timedelta(hours=6), False))
    assert six_hours.airflow2_logical_date == dt.datetime(2026, 1, 1, 18, tzinfo=dt.timezone.utc)
    assert example_run(Recurrence(("0 0 31 2 *",), None, False)) is None


def test_date_level_bounds_up_to_the_end_are_dg207s_not_dg206s(tmp_path):
    findings = lint(tmp_path, """\
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import DAG
with DAG("orders_daily", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="count_orders", conn_id="w",
        sql="SELECT count(*) FROM orders WHERE day BETWEEN '{{ data_interval_start | ds }}' AND '{{ data_interval_end | ds }}'")
""")
    assert [f.code for f in findings if f.code in ("DG206", "DG207")] == ["DG207"]


def test_one_finding_per_task_pointing_at_the_read(tmp_path):
    findings = dg207(lint(tmp_path, """\
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.sdk import DAG, task
with DAG("signups_daily", schedule="@daily"):
    @task
    def export_signups(ds=None, logical_date=None):
        hook = PostgresHook(postgres_conn_id="warehouse")
        hook.run("DELETE FROM signups_daily WHERE day = %s", parameters=[ds])
        rows = hook.get_records("SELECT * FROM signups WHERE day = %(day)s", parameters={"day": ds})
        more = hook.get_records("SELECT * FROM signups WHERE ts >= %s", (logical_date.isoformat(),))
        return rows + more
    export_signups()
"""))
    assert len(findings) == 1
    assert findings[0].line == 8
    assert "task 'export_signups' reads day = {{ ds }}" in findings[0].message


def test_a_table_the_dag_writes_is_read_back_by_its_own_dates(tmp_path):
    code = """\
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import DAG
with DAG("rates_daily", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="stage", conn_id="w",
        sql="INSERT INTO staging.rates SELECT '{{ ds }}' AS d, * FROM external.rates")
    SQLExecuteQueryOperator(task_id="publish", conn_id="w",
        sql="INSERT INTO marts.rates SELECT * FROM staging.rates r JOIN SOURCE s ON s.id = r.id WHERE r.d = '{{ ds }}'")
"""
    assert not dg207(lint(tmp_path, code.replace("SOURCE", "staging.rates")))
    # Joined with a table the DAG does not write, the read is the source's.
    (finding,) = dg207(lint(tmp_path, code.replace("SOURCE", "raw.fx")))
    assert "task 'publish' reads r.d = {{ ds }}" in finding.message
