"""Run by test_airflow_lookback.py in its own process: migrates $AIRFLOW_HOME's metadata DB,
runs events_lookback for 2026-01-05, adds a late row for 2026-01-04 to the source, runs
2026-01-06 twice, printing `STATE <logical date> <state>` per run."""

from __future__ import annotations

import os
import sqlite3
import sys
from datetime import datetime, timezone

from airflow.utils.db import initdb


def main() -> None:
    initdb()
    sys.path.insert(0, os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    import dag_lookback

    for day in (5, 6, 6):
        if day == 6:
            conn = sqlite3.connect(os.environ["WAREHOUSE_PATH"])
            conn.execute("INSERT INTO raw_events SELECT 3, '2026-01-04 23:00:00.000000+00:00', 'late' "
                         "WHERE NOT EXISTS (SELECT 1 FROM raw_events WHERE k = 3)")
            conn.commit()
            conn.close()
        run = dag_lookback.lookback_dag.test(logical_date=datetime(2026, 1, day, tzinfo=timezone.utc))
        print(f"STATE 2026-01-0{day} {run.state}", flush=True)


if __name__ == "__main__":
    main()
