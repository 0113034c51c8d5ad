"""The incident dagguard exists for: an hourly DAG deployed with start_date 14 months back,
catchup on, no end_date and no max_active_runs. Its export is keyed on the worker's clock, so
every one of the ~10,000 catchup runs writes today's date into the warehouse again."""

from datetime import datetime

import pendulum
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.sdk import DAG, task

with DAG(
    dag_id="orders_hourly",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
    catchup=True,
    tags=["orders", "incident"],
):

    @task
    def export_orders():
        hook = PostgresHook(postgres_conn_id="warehouse")
        batch_date = datetime.now().strftime("%Y-%m-%d")
        rows = hook.get_records("SELECT order_id, amount FROM raw.orders WHERE created_at >= CURRENT_DATE")
        hook.insert_rows("analytics.orders_daily", [(batch_date, *row) for row in rows])

    export_orders()
