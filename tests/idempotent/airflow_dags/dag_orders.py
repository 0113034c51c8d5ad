"""DAGs for dagguard's Airflow end-to-end test (copied into a temporary dags folder)."""

import os
from datetime import datetime, timezone

from airflow.sdk import CronDataIntervalTimetable, dag, task

from dagguard.idempotent import IntervalMergeOperator, idempotent_write

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dag(dag_id="orders_daily", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
     start_date=START, catchup=False)
def orders_daily():
    @task
    @idempotent_write(conn_id="warehouse", table="signups", time_column="signed_up_at",
                      unique_key=["user_id"], strategy="merge")
    def export_signups(data_interval_start=None, data_interval_end=None, ds=None):
        return [{"user_id": i, "signed_up_at": data_interval_start.replace(hour=i), "plan": f"pro-{ds}"}
                for i in range(3)]

    load = IntervalMergeOperator(
        task_id="load_orders", conn_id="warehouse",
        source_sql="SELECT order_id, created_at, amount FROM raw_orders "
                   "WHERE created_at >= %(start)s AND created_at < %(end)s",
        target_table="orders", time_column="created_at", unique_key=["order_id"])
    export_signups() >> load


# A plain cron string gives Airflow 3 trigger runs: data_interval_start == data_interval_end.
@dag(dag_id="signups_trigger_cron", schedule="0 0 * * *", start_date=START, catchup=False)
def signups_trigger_cron():
    @task
    @idempotent_write(conn_id="warehouse", table="signups", time_column="signed_up_at")
    def export_signups(data_interval_start=None):
        raise AssertionError("must not run: the interval is empty")

    export_signups()


orders_dag = orders_daily()
trigger_dag = signups_trigger_cron()


# The same decorator writing an Apache Iceberg table, when the test made a catalog for it.
if os.environ.get("DAGGUARD_ICEBERG_URL"):
    @dag(dag_id="signups_iceberg", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
         start_date=START, catchup=False)
    def signups_iceberg():
        @task
        @idempotent_write(conn_id=os.environ["DAGGUARD_ICEBERG_URL"], table="analytics.signups",
                          time_column="signed_up_at", unique_key=["user_id"], strategy="merge")
        def export_signups(data_interval_start=None, ds=None):
            return [{"user_id": i, "signed_up_at": data_interval_start.replace(hour=i), "plan": f"pro-{ds}"}
                    for i in range(3)]

        export_signups()

    iceberg_dag = signups_iceberg()
