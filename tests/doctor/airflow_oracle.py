"""Ask Airflow's own scheduler query which queued runs it would promote now.

Run in a subprocess with AIRFLOW_HOME and AIRFLOW__DATABASE__SQL_ALCHEMY_CONN set. Prints one
JSON list of [dag_id, run_id] from `DagRun.get_queued_dag_runs_to_set_running(session)`.
"""

from __future__ import annotations

import json

from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session


def main() -> None:
    with create_session() as session:
        runs = DagRun.get_queued_dag_runs_to_set_running(session)
        promotable = sorted([run.dag_id, run.run_id] for run in runs)
        # The query locks rows FOR UPDATE on PostgreSQL; release them without changing anything.
        session.rollback()
    print("DOCTOR-ORACLE " + json.dumps(promotable))


if __name__ == "__main__":
    main()
