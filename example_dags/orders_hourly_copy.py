"""A copy-pasted DAG that kept its dag_id: Airflow keeps only one of the two."""

from airflow.sdk import DAG

with DAG("orders_hourly", schedule=None, max_active_runs=1, max_active_tasks=1):
    pass
