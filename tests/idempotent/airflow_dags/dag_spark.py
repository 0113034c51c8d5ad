"""A DAG writing a Spark table for dagguard's Airflow end-to-end test: `@idempotent_write` under
`@task.pyspark`, which starts a local SparkSession (warehouse $DAGGUARD_WAREHOUSE), passes it
as `spark` and stops it after the task. Run as a script, it migrates the metadata DB of
$AIRFLOW_HOME and runs the DAG twice for one logical date, printing `STATE <state>`."""

from datetime import datetime, timezone
import os

from airflow.sdk import CronDataIntervalTimetable, dag, task

from dagguard.idempotent import idempotent_write

WAREHOUSE = os.environ.get("DAGGUARD_WAREHOUSE", "/nonexistent")


@dag(dag_id="spark_daily", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
     start_date=datetime(2026, 1, 1, tzinfo=timezone.utc), catchup=False)
def spark_daily():
    @task.pyspark(config_kwargs={"spark.sql.warehouse.dir": WAREHOUSE, "spark.master": "local[2]",
                                 "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    @idempotent_write(table="events", time_column="ts")
    def export_events(spark=None, data_interval_start=None):
        # Without a Hive metastore the catalog lives as long as the session: the table is
        # declared again over its folder, and its partitions found there.
        spark.sql(f"CREATE TABLE IF NOT EXISTS events (k INT, v STRING, ts TIMESTAMP) USING parquet "
                  f"PARTITIONED BY (ts) LOCATION '{WAREHOUSE}/events'")
        if os.path.isdir(f"{WAREHOUSE}/events"):  # (a first run has no folder to recover from)
            spark.sql("ALTER TABLE events RECOVER PARTITIONS")
        from pyspark.sql import functions as F

        start = int(data_interval_start.timestamp()) * 1_000_000
        return spark.range(6).select(F.col("id").cast("int").alias("k"), F.lit("x").alias("v"),
                                     F.timestamp_micros(F.lit(start) + (F.col("id") % 3) * 3_600_000_000).alias("ts"))

    export_events()


spark_dag = spark_daily()

if __name__ == "__main__":
    from airflow.utils.db import initdb

    initdb()
    for _ in range(2):
        print(f"STATE {spark_dag.test(logical_date=datetime(2026, 1, 5, tzinfo=timezone.utc)).state}", flush=True)
