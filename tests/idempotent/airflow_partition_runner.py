"""Run by test_airflow_partitions.py in its own process (Airflow's global state stays out of pytest).

dag.test() makes runs with a logical date or none, never with a partition key; a partitioned run
is made here as Airflow's REST API makes one (`POST /dags/{dag_id}/dagRuns` with partition_key:
TriggerDAGRunPostBody.validate_context, then SerializedDAG.create_dagrun(partition_key=...,
partition_date=timetable.resolve_partition_date(key))), by handing dag.test() that run instead
of the plain one it would create. Everything else is dag.test(): the tasks run in-process
against the execution API, and their asset events are registered in the metadata DB.
Prints `STATE <dag_id> <partition_key> <state>` per run, then the asset events as JSON lines.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from typing import Iterator

import airflow.models.dagrun as dagrun_module
from airflow.utils.db import initdb


@contextmanager
def partitioned_runs(partition_key: str) -> Iterator[None]:
    """dag.test() creates its run with `partition_key` (and the partition_date the timetable
    decodes from it), as a manual trigger with that key would."""
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType

    plain = dagrun_module.get_or_create_dagrun

    def create(*, dag, run_id, run_after, conf, triggered_by, triggering_user_name, start_date, session, **_):
        return dag.create_dagrun(
            run_id=run_id, logical_date=None, data_interval=None, run_after=run_after, conf=conf,
            run_type=DagRunType.MANUAL, state=DagRunState.RUNNING, triggered_by=triggered_by,
            triggering_user_name=triggering_user_name, start_date=start_date,
            partition_key=partition_key, partition_date=dag.timetable.resolve_partition_date(partition_key),
            session=session)

    dagrun_module.get_or_create_dagrun = create
    try:
        yield
    finally:
        dagrun_module.get_or_create_dagrun = plain


def asset_events() -> list[dict]:
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(select(AssetModel.name, AssetEvent.partition_key, AssetEvent.extra, AssetEvent.source_dag_id)
                               .join(AssetModel, AssetModel.id == AssetEvent.asset_id).order_by(AssetEvent.id))
        return [{"asset": name, "partition_key": key, "extra": extra, "dag_id": dag_id}
                for name, key, extra, dag_id in rows]


def main() -> None:
    initdb()
    sys.path.insert(0, os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    import dag_partitions

    for dag, key in ((dag_partitions.hourly_dag, "2026-01-05T03:00:00"),
                     (dag_partitions.hourly_dag, "2026-01-05T03:00:00"),
                     (dag_partitions.daily_dag, "2026-01-05")):
        with partitioned_runs(key):
            run = dag.test(logical_date=None)
        print(f"STATE {dag.dag_id} {run.partition_key} {run.state}", flush=True)
    run = dag_partitions.unscheduled.test(logical_date=None)
    print(f"STATE {run.dag_id} {run.partition_key} {run.state}", flush=True)
    for event in asset_events():
        print("EVENT " + json.dumps(event), flush=True)


if __name__ == "__main__":
    main()
