"""A DAG dagguard has nothing to say about: bounded scheduling, and writes keyed on the run's
data interval through dagguard's idempotent helpers, the decorator and the operator."""

import pendulum
from airflow.sdk import CronDataIntervalTimetable, dag, task

from dagguard.idempotent import IntervalMergeOperator, idempotent_write


@dag(
    # A data-interval timetable: Airflow 3's plain "@daily" gives runs an empty interval.
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    max_active_tasks=4,
    tags=["signups"],
)
def signups_daily():
    @task
    @idempotent_write(conn_id="warehouse", table="analytics.signups_daily",
                      time_column="signed_up_at", unique_key=["user_id"], strategy="merge")
    def export_signups(data_interval_start=None, data_interval_end=None):
        from warehouse import fetch_signups

        return fetch_signups(data_interval_start, data_interval_end)

    # SQL-to-table inside the warehouse: MERGE exactly the run's interval into the target.
    load_orders = IntervalMergeOperator(
        task_id="load_orders",
        conn_id="warehouse",
        source_sql="SELECT order_id, created_at, amount FROM raw.orders "
                   "WHERE created_at >= %(start)s AND created_at < %(end)s",
        target_table="analytics.orders",
        time_column="created_at",
        unique_key=["order_id"],
    )

    export_signups() >> load_orders


signups_daily()
