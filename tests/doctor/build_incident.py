"""Build the doctor scenario in a migrated Airflow metadata DB, with Airflow's own functions.

Run in a subprocess with AIRFLOW_HOME, AIRFLOW__DATABASE__SQL_ALCHEMY_CONN and
AIRFLOW__CORE__DAGS_FOLDER set (Airflow reads its config once per process, so each backend
gets its own process). Prints one JSON object with the ids the tests assert on.

Usage: python build_incident.py FLOOD_BEFORE FLOOD_AFTER
"""

from __future__ import annotations

import datetime
import json
import sys
import time

from sqlalchemy import select, update

from airflow.api_fastapi.core_api.routes.public.backfills import cancel_backfill, pause_backfill
from airflow.dag_processing.bundles.manager import DagBundlesManager
from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
from airflow.models.backfill import Backfill, BackfillDagRun, _create_backfill
from airflow.models.dag import DagModel
from airflow.models.dagbag import DBDagBag
from airflow.models.dagrun import DagRun
from airflow.utils import timezone
from airflow.utils.session import create_session
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunTriggeredByType, DagRunType

UTC = datetime.timezone.utc
START = datetime.datetime(2026, 1, 1, tzinfo=UTC)


def sync_dags() -> None:
    """Parse the dags folder bundle and write its DAGs to the DB, as `airflow dags reserialize`."""
    manager = DagBundlesManager()
    manager.sync_bundles_to_db()
    for bundle in manager.get_all_dag_bundles():
        bundle.initialize()
        bag = BundleDagBag(bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        if bag.import_errors:
            raise SystemExit(f"import errors: {bag.import_errors}")
        sync_bag_to_db(bag, bundle.name, None)
    with create_session() as session:
        # New DAGs start paused; the scenario needs them active, as in production.
        session.execute(update(DagModel).values(is_paused=False))


def serialized_dag(dag_id: str):
    with create_session() as session:
        return DBDagBag().get_latest_version_of_dag(dag_id, session=session)


def create_run(dag_id: str, run_id: str, run_type: DagRunType, logical_date, run_after,
               backfill_id: int | None = None) -> int:
    dag = serialized_dag(dag_id)
    with create_session() as session:
        interval = (logical_date, logical_date) if logical_date else None
        run = dag.create_dagrun(
            run_id=run_id, logical_date=logical_date, data_interval=interval, run_after=run_after,
            run_type=run_type, state=DagRunState.QUEUED,
            triggered_by=DagRunTriggeredByType.TIMETABLE if run_type == DagRunType.SCHEDULED
            else DagRunTriggeredByType.TEST,
            backfill_id=backfill_id,
            session=session,
        )
        session.flush()
        return run.id


def runs_of_backfill(backfill_id: int) -> list[DagRun]:
    with create_session() as session:
        rows = session.scalars(
            select(DagRun).join(BackfillDagRun, BackfillDagRun.dag_run_id == DagRun.id)
            .where(BackfillDagRun.backfill_id == backfill_id).order_by(DagRun.logical_date)
        ).all()
        session.expunge_all()
        return list(rows)


def stuck_backfill() -> dict:
    """Backfill orders_daily, cancel it, clear one of its runs: the run is stuck in queued."""
    backfill = _create_backfill(
        dag_id="orders_daily", from_date=START, to_date=START + datetime.timedelta(days=2),
        max_active_runs=2, reverse=False, dag_run_conf={}, triggering_user_name="doctor-test",
    )
    with create_session() as session:
        cancel_backfill(backfill_id=backfill.id, session=session)
        # The route's session is committed by FastAPI after the response; do the same here.
        session.commit()
    runs = runs_of_backfill(backfill.id)
    assert all(run.state == DagRunState.FAILED for run in runs), [r.state for r in runs]
    cleared = runs[1]
    dag = serialized_dag("orders_daily")
    with create_session() as session:
        dag.clear(run_id=cleared.run_id, dag_run_state=DagRunState.QUEUED, session=session)
    with create_session() as session:
        state = session.scalar(select(DagRun.state).where(DagRun.id == cleared.id))
        assert state == DagRunState.QUEUED, state
        done = session.scalar(select(Backfill).where(Backfill.id == backfill.id))
        assert done.is_paused and done.completed_at is not None
    # A queued run that names the cancelled backfill in dag_run.backfill_id but has no
    # backfill_dag_run row: the scheduler's join does not hold it, so it is not stuck.
    unlinked = "manual__unlinked"
    create_run("orders_daily", unlinked, DagRunType.MANUAL, None,
               timezone.utcnow() - datetime.timedelta(minutes=1), backfill_id=backfill.id)
    return {"backfill_id": backfill.id, "run_id": cleared.run_id, "dag_run_id": cleared.id,
            "unlinked_run_id": unlinked}


def paused_backfill() -> dict:
    """Backfill inventory_daily and pause it (not cancel): its queued runs are rightly held."""
    backfill = _create_backfill(
        dag_id="inventory_daily", from_date=START, to_date=START + datetime.timedelta(days=1),
        max_active_runs=2, reverse=False, dag_run_conf={}, triggering_user_name="doctor-test",
    )
    with create_session() as session:
        pause_backfill(backfill_id=backfill.id, session=session)
        session.commit()
    runs = runs_of_backfill(backfill.id)
    return {"backfill_id": backfill.id, "run_ids": [r.run_id for r in runs]}


def manual_runs() -> dict:
    """A fresh manual run (the scheduler would take it) and one queued two hours ago, unexplained."""
    now = timezone.utcnow()
    # SQLite's now() has one-second granularity: run_after must be safely in the past.
    control = f"manual__control_{now:%H%M%S}"
    create_run("orders_daily", control, DagRunType.MANUAL, None, now - datetime.timedelta(minutes=1))
    old = "manual__forgotten"
    old_id = create_run("billing_manual", old, DagRunType.MANUAL, None,
                        now - datetime.timedelta(hours=2))
    with create_session() as session:
        # Age the run as if it had been queued two hours ago; nothing else in Airflow sets this.
        session.execute(update(DagRun).where(DagRun.id == old_id)
                        .values(queued_at=now - datetime.timedelta(hours=2)))
    return {"control_run_id": control, "forgotten_run_id": old}


def flood(before: int, after: int) -> dict:
    """Queue hourly scheduled runs of clicks_hourly: `before` of them, then a deploy time, then `after`."""
    run_ids: list[str] = []
    since = None
    for i in range(before + after):
        if i == before:
            time.sleep(0.05)
            since = timezone.utcnow()
            time.sleep(0.05)
        logical = START + datetime.timedelta(hours=i)
        run_id = f"scheduled__{logical.isoformat()}"
        create_run("clicks_hourly", run_id, DagRunType.SCHEDULED, logical, logical)
        if i >= before:
            run_ids.append(run_id)
    return {"since": since.isoformat(), "run_ids_after": run_ids, "queued_total": before + after}


def main() -> None:
    before, after = int(sys.argv[1]), int(sys.argv[2])
    sync_dags()
    facts = {
        "stuck": stuck_backfill(),
        "paused": paused_backfill(),
        "manual": manual_runs(),
    }
    facts["flood"] = flood(before, after)
    print("DOCTOR-FACTS " + json.dumps(facts))


if __name__ == "__main__":
    main()
