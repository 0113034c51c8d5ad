"""Run by test_airflow_dag.py in its own process (Airflow's global state stays out of pytest).

Migrates the metadata DB of $AIRFLOW_HOME, then runs orders_daily twice for one logical date
and signups_trigger_cron once, printing `STATE <dag_id> <state>` per run.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone

from airflow.utils.db import initdb


def main() -> None:
    initdb()
    if os.environ.get("DAGGUARD_ICEBERG_URL"):
        print(f"ICEBERG_URL={os.environ['DAGGUARD_ICEBERG_URL']}", flush=True)
    sys.path.insert(0, os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    import dag_orders

    logical_date = datetime(2026, 1, 5, tzinfo=timezone.utc)
    iceberg = (dag_orders.iceberg_dag,) * 2 if hasattr(dag_orders, "iceberg_dag") else ()
    for dag in (dag_orders.orders_dag, dag_orders.orders_dag, dag_orders.trigger_dag, *iceberg):
        run = dag.test(logical_date=logical_date)
        print(f"STATE {dag.dag_id} {run.state}", flush=True)


if __name__ == "__main__":
    main()
