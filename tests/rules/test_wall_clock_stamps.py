"""DG202 on clock reads that only name a run or stamp metadata (issue 21, pattern F5), and one
finding per piece of SQL or template, naming each clock function in it (pattern F9)."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

HEADER = """\
import logging
from datetime import datetime

import pendulum
import requests
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.providers.standard.operators.python import PythonOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import DAG, Asset, Metadata, task

log = logging.getLogger(__name__)
report = Asset("s3://bucket/report.parquet")
"""


def dg202(tmp_path, body):
    return [f for f in lint(tmp_path, HEADER + body) if f.code == "DG202"]


STAMPS = {
    "run_id_of_a_triggered_run": """
def trigger_children():
    triggered = []
    for request in ("a", "b"):
        current_time = datetime.now().isoformat()
        dag_run_id = f"child_{request}_{current_time}"
        payload = {"dag_run_id": dag_run_id, "conf": {"request": request}}
        requests.post("https://airflow/api/v2/dags/child/dagRuns", json=payload)
        triggered.append(dag_run_id)
    return triggered


with DAG("ids", schedule="*/10 * * * *", max_active_runs=1, max_active_tasks=2):
    PythonOperator(task_id="trigger", python_callable=trigger_children)
""",
    "run_id_keyword": """
def trigger_child(client):
    client.trigger_dag_run("child", run_id="manual__" + datetime.now().isoformat())


with DAG("ids", schedule="@hourly", max_active_runs=1, max_active_tasks=2):
    PythonOperator(task_id="trigger", python_callable=trigger_child)
""",
    "trigger_run_id_at_parse_time": """
with DAG("ids", schedule="@hourly", max_active_runs=1, max_active_tasks=2):
    TriggerDagRunOperator(task_id="trigger", trigger_dag_id="child",
                          trigger_run_id=f"from_parent_{datetime.now().isoformat()}")
""",
    "asset_event_extra": """
with DAG("stamp", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task(outlets=[report])
    def publish(*, outlet_events):
        outlet_events[report].extra = {"rows": 10, "generated_at": pendulum.now("UTC").isoformat()}

    publish()
""",
    "asset_event_extra_item": """
with DAG("stamp", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task(outlets=[report])
    def publish(*, outlet_events):
        outlet_events[report].extra["published_at"] = datetime.utcnow().isoformat()

    publish()
""",
    "metadata_extra": """
with DAG("stamp", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task(outlets=[report])
    def publish():
        yield Metadata(report, extra={"generated_at": pendulum.now("UTC").isoformat()})

    publish()
""",
    "stamp_in_the_returned_xcom": """
with DAG("stamp", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def summarise(ds=None):
        summary = {"day": ds, "rows": 10, "created_at": datetime.now().isoformat()}
        log.info("summary %s", summary)
        return summary

    summarise()
""",
    "report_text_sent_as_a_notification": """
with DAG("stamp", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def notify(notify_hook, ds=None):
        text = f\"\"\"Daily report for {ds}
- completed at {datetime.utcnow().isoformat()}\"\"\"
        notify_hook.send_notification({"subject": f"Report {ds}", "message": text})

    notify(None)
""",
    "message_only_logged": """
with DAG("stamp", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def work(ds=None):
        message = f"work for {ds} completed at {datetime.now()}"
        log.info(message)

    work()
""",
}


@pytest.mark.parametrize("case", sorted(STAMPS))
def test_a_clock_read_that_only_names_or_stamps_is_not_dg202(tmp_path, case):
    assert dg202(tmp_path, STAMPS[case]) == []


STILL_DATA = {
    "a_file_path": """
with DAG("data", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def export():
        path = f"/data/export_{datetime.now():%Y%m%d}.csv"
        with open(path, "w") as out:
            out.write("x")

    export()
""",
    "a_stamp_column_in_rows_written": """
with DAG("data", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def load():
        rows = []
        rows.append({"id": 1, "created_at": datetime.now()})
        PostgresHook().insert_rows("events", rows)

    load()
""",
    "sql_built_from_the_clock": """
with DAG("data", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def purge():
        cutoff = datetime.now().isoformat()
        PostgresHook().run(f"DELETE FROM events WHERE ts < '{cutoff}'")

    purge()
""",
    "extra_under_a_data_key": """
with DAG("data", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task(outlets=[report])
    def publish(*, outlet_events):
        outlet_events[report].extra = {"partition": datetime.now().date().isoformat()}

    publish()
""",
    "returned_under_a_data_key": """
with DAG("data", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def which_day():
        return {"day": datetime.now().date().isoformat()}

    which_day()
""",
    "an_id_that_names_a_file": """
with DAG("data", schedule="@daily", max_active_runs=1, max_active_tasks=2):
    @task
    def export():
        batch = {"batch_id": datetime.now().strftime("%Y%m%d")}
        open(f"/data/{batch}.csv", "w").write("x")

    export()
""",
}


@pytest.mark.parametrize("case", sorted(STILL_DATA))
def test_a_clock_value_that_reaches_data_is_still_dg202(tmp_path, case):
    assert len(dg202(tmp_path, STILL_DATA[case])) == 1


SQL_OPERATOR = """
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

with DAG("weekly_status", schedule="@weekly", max_active_runs=1, max_active_tasks=1):
    SQLExecuteQueryOperator(
        task_id="status",
        conn_id="warehouse",
        sql=SQL,
    )
"""


@pytest.mark.parametrize(("sql", "named"), [
    ("SELECT date_trunc('week', now()) AS week, user_id, end_date >= current_date AS active FROM enrolments",
     "NOW() and CURRENT_DATE"),
    ("DELETE FROM daily WHERE day = CURRENT_DATE; INSERT INTO daily SELECT * FROM raw WHERE day = CURRENT_DATE",
     "CURRENT_DATE"),
    ("SELECT now(), current_date, current_timestamp", "NOW(), CURRENT_DATE and CURRENT_TIMESTAMP"),
])
def test_one_finding_per_piece_of_sql_naming_each_clock_function(tmp_path, sql, named):
    found = dg202(tmp_path, f"SQL = {sql!r}\n" + SQL_OPERATOR)
    assert [f.message.split(" uses ")[1].split(" in its SQL")[0] for f in found] == [named]


def test_one_finding_per_template_naming_each_clock_macro(tmp_path):
    found = dg202(tmp_path, """
from airflow.providers.standard.operators.bash import BashOperator

with DAG("templated", schedule="@daily", max_active_runs=1, max_active_tasks=1):
    BashOperator(task_id="t", bash_command="run {{ macros.datetime.now() }} {{ macros.datetime.now() }}")
""")
    assert len(found) == 1 and "renders {{ macros.datetime.now() }} in" in found[0].message
