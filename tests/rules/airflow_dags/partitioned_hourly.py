"""A DAG on CronPartitionTimetable whose tasks read the interval each way DG208 knows; run with
dag.test(logical_date=None), as a partitioned run has no logical date (test_partitioned_runs_in_airflow.py)."""

import json, os
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, CronPartitionTimetable, task

OUT = os.environ["DAGGUARD_OUT"]

with DAG("partitioned_hourly", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC")) as dag:
    BashOperator(task_id="template", bash_command="echo {{ data_interval_start }}")

    @task
    def parameter(data_interval_start=None):
        with open(os.path.join(OUT, "parameter.json"), "w") as f:
            json.dump(repr(data_interval_start), f)

    @task
    def lookup(**context):
        return context["ds"]

    @task
    def partition(**context):
        with open(os.path.join(OUT, "partition.json"), "w") as f:
            json.dump(sorted(k for k in ("partition_key", "partition_date", "ds", "logical_date", "data_interval_start") if k in context), f)

    parameter(); lookup(); partition()
