"""The incident DAG, fixed: a bounded backfill, one run at a time, and an export keyed on the
run's data interval and written idempotently, so any number of re-runs of an hour leave exactly
that hour's rows in the warehouse.

The schedule is a data-interval timetable: with a plain "@hourly", Airflow 3 makes a trigger
timetable whose runs have data_interval_start == data_interval_end (an empty interval)."""

import pendulum
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.sdk import DAG, CronDataIntervalTimetable, task

from dagguard.idempotent import idempotent_write

with DAG(
    dag_id="orders_hourly_fixed",
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
    end_date=pendulum.datetime(2025, 10, 15, tz="UTC"),
    catchup=True,
    max_active_runs=1,
    max_active_tasks=2,
    tags=["orders", "incident", "fixed"],
):

    @task
    @idempotent_write(conn_id="warehouse", table="analytics.orders_hourly", time_column="created_at",
                      unique_key=["order_id"], strategy="replace")
    def export_orders(data_interval_start=None, data_interval_end=None):
        hook = PostgresHook(postgres_conn_id="warehouse")
        # Half-open range: an order at exactly hh:00 belongs to one hour only.
        return hook.get_records(
            "SELECT order_id, amount, created_at FROM raw.orders "
            "WHERE created_at >= %(start)s AND created_at < %(end)s",
            parameters={"start": data_interval_start, "end": data_interval_end},
        )

    export_orders()
