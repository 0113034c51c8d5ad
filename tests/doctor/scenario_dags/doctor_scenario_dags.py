"""DAGs for the doctor scenario: synced into a real Airflow metadata DB by build_incident.py."""

from __future__ import annotations

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)

# A backfill of this DAG is cancelled, then one of its runs is cleared: the stuck run.
with DAG("orders_daily", schedule="@daily", start_date=START, catchup=False):
    EmptyOperator(task_id="load")

# A backfill of this DAG is paused, not cancelled: its queued runs are rightly held.
with DAG("inventory_daily", schedule="@daily", start_date=START, catchup=False):
    EmptyOperator(task_id="load")

# A catchup flood: many queued scheduled runs, most created after a deploy time.
with DAG("clicks_hourly", schedule="@hourly", start_date=START, catchup=True):
    EmptyOperator(task_id="load")

# A run queued long ago that nothing explains.
with DAG("billing_manual", schedule=None, start_date=START):
    EmptyOperator(task_id="load")
