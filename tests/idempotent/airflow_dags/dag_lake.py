"""A DAG writing Delta tables for dagguard's Airflow end-to-end test: the lake is $DAGGUARD_LAKE,
and no Airflow connection is needed for a delta:// URL. Run as a script, it migrates the metadata
DB of $AIRFLOW_HOME and runs the DAG twice for one logical date, printing `STATE <state>`."""

from datetime import datetime, timezone
import os

from airflow.sdk import CronDataIntervalTimetable, dag, task

from dagguard.idempotent import IntervalMergeOperator, idempotent_write

LAKE = f"delta://{os.environ.get('DAGGUARD_LAKE', '/nonexistent')}"


@dag(dag_id="lake_daily", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
     start_date=datetime(2026, 1, 1, tzinfo=timezone.utc), catchup=False)
def lake_daily():
    @task
    @idempotent_write(conn_id=LAKE, table="signups", time_column="signed_up_at")
    def export_signups(data_interval_start=None, ds=None):
        return [{"user_id": i, "signed_up_at": data_interval_start.replace(hour=i), "plan": f"pro-{ds}"}
                for i in range(3)]

    load = IntervalMergeOperator(
        task_id="load_orders", conn_id=LAKE,
        source_sql="SELECT order_id, created_at, amount FROM raw_orders "
                   "WHERE created_at >= %(start)s AND created_at < %(end)s",
        target_table="orders", time_column="created_at", unique_key=["order_id"])
    export_signups() >> load


lake_dag = lake_daily()

if __name__ == "__main__":
    from airflow.utils.db import initdb

    initdb()
    for _ in range(2):
        print(f"STATE {lake_dag.test(logical_date=datetime(2026, 1, 5, tzinfo=timezone.utc)).state}", flush=True)
