"""Partitioned DAGs for dagguard's Airflow end-to-end test (copied into a temporary dags folder)."""

from datetime import datetime, timedelta, timezone

from airflow.sdk import DAG, Asset, CronPartitionTimetable, PartitionedAssetTimetable, StartOfDayMapper, dag, task

from dagguard.idempotent import IntervalMergeOperator, idempotent_write

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
HOURLY = Asset("warehouse_events_hourly")
BY_KEY = Asset("warehouse_events_by_key")
MERGED = Asset("warehouse_events_merged")


# Runs carry partition_key "2026-01-05T03:00:00" and no data interval; the partition is the hour.
@dag(dag_id="events_hourly", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC"),
     start_date=START, catchup=False)
def events_hourly():
    @task(outlets=[HOURLY])
    @idempotent_write(conn_id="warehouse", table="events_hourly", time_column="ts",
                      unique_key=["k"], strategy="merge")
    def load_hour(data_interval_start=None, data_interval_end=None, partition_key=None):
        return [{"k": i, "ts": data_interval_start + timedelta(minutes=10 * i), "v": partition_key}
                for i in range(3)]

    @task(outlets=[BY_KEY])
    @idempotent_write(conn_id="warehouse", table="events_by_key", strategy="overwrite_partition",
                      partition_column="pk")
    def load_by_key(partition_key=None):
        return [{"k": i, "v": f"row {i}"} for i in range(2)]

    merge = IntervalMergeOperator(
        task_id="merge_hour", conn_id="warehouse", outlets=[MERGED],
        source_sql="SELECT k, ts, v FROM raw_events WHERE ts >= %(start)s AND ts < %(end)s",
        target_table="events_merged", time_column="ts", unique_key=["k"])
    load_hour() >> load_by_key() >> merge


# Triggered by the hourly asset's partitions, rolled up to days: its partition is the day.
@dag(dag_id="events_daily", schedule=PartitionedAssetTimetable(
    assets=HOURLY, default_partition_mapper=StartOfDayMapper()), start_date=START, catchup=False)
def events_daily():
    @task
    @idempotent_write(conn_id="warehouse", table="events_daily", time_column="ts")
    def load_day(data_interval_start=None, data_interval_end=None):
        return [{"k": 0, "ts": data_interval_start, "v": f"until {data_interval_end.isoformat()}"}]

    load_day()


# Neither a data interval nor a partition: the write fails with the fix, before the function runs.
with DAG("events_unscheduled", schedule=None, start_date=START, catchup=False) as unscheduled:
    @task
    @idempotent_write(conn_id="warehouse", table="events_hourly", time_column="ts")
    def load_nothing():
        raise AssertionError("must not run: the run owns no data")

    load_nothing()


hourly_dag = events_hourly()
daily_dag = events_daily()
