"""A DAG dagguard has nothing to say about: bounded scheduling, and a write keyed on the run's
data interval through dagguard's idempotent helper."""

import pendulum
from airflow.sdk import CronDataIntervalTimetable, dag, task

from dagguard.idempotent import idempotent_write


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

    export_signups()


signups_daily()
