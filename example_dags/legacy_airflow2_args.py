"""Written for Airflow 2: arguments Airflow 3 rejects at parse time, a start date that slides
with the clock, and no schedule where one was meant."""

from datetime import datetime, timedelta

from airflow import DAG
from airflow.providers.standard.operators.bash import BashOperator

with DAG(
    "legacy_report",
    schedule_interval="@daily",
    start_date=datetime.now() - timedelta(days=1),
    concurrency=4,
    max_active_runs=1,
):
    BashOperator(task_id="report", bash_command="echo report")

with DAG("legacy_cleanup", start_date=datetime(2024, 1, 1), max_active_runs=1, max_active_tasks=2):
    BashOperator(task_id="cleanup", bash_command="echo cleanup")
