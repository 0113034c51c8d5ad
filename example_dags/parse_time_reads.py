"""Reads at parse time, a backlog too large even with end_date, and a duplicated task id."""

import pendulum
from airflow.models import Variable
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

TARGET_TABLE = Variable.get("events_table")

with DAG(
    dag_id="events_backfill",
    schedule="*/15 * * * *",
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    end_date=pendulum.datetime(2025, 7, 1, tz="UTC"),
    catchup=True,
    max_active_runs=1,
    max_active_tasks=2,
):
    BashOperator(task_id="load", bash_command=f"load {TARGET_TABLE}")
    BashOperator(task_id="load", bash_command="vacuum")
