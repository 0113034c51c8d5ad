"""A DAG for dagguard's lookback end-to-end test (copied into a temporary dags folder): the
decorator and the operator each rewrite the run's day and the day before it."""

import os
import sqlite3
from datetime import datetime, timezone

from airflow.sdk import CronDataIntervalTimetable, dag, task

from dagguard.idempotent import IntervalMergeOperator, idempotent_write

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dag(dag_id="events_lookback", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
     start_date=START, catchup=False)
def events_lookback():
    @task
    @idempotent_write(conn_id="warehouse", table="events", time_column="ts", lookback=1)
    def export_events(data_interval_start=None, data_interval_end=None):
        print(f"RECEIVED {data_interval_start.isoformat()} {data_interval_end.isoformat()}", flush=True)
        conn = sqlite3.connect(os.environ["WAREHOUSE_PATH"])
        rows = conn.execute("SELECT k, ts, v FROM raw_events").fetchall()
        conn.close()
        return [{"k": k, "ts": datetime.fromisoformat(ts), "v": v} for k, ts, v in rows
                if data_interval_start <= datetime.fromisoformat(ts) < data_interval_end]

    load = IntervalMergeOperator(
        task_id="load_events", conn_id="warehouse", lookback=1,
        source_sql="SELECT k, ts, v FROM raw_events WHERE ts >= %(start)s AND ts < %(end)s",
        target_table="events_merged", time_column="ts", unique_key=["k"])
    export_events() >> load


lookback_dag = events_lookback()
