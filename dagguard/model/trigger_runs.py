"""DAGs whose runs have an empty data interval: Airflow 3's trigger timetables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from dagguard.model.dags import DagModel
from dagguard.model.schedules import SCHEDULE_ARGUMENTS, Recurrence, dag_recurrence
from dagguard.model.values import Timetable

if TYPE_CHECKING:
    from dagguard.config import Settings


def trigger_schedule(dag: DagModel, settings: "Settings") -> Optional[str]:
    """How the DAG's schedule is written, when Airflow 3 runs it on a trigger timetable, whose
    runs have data_interval_start == data_interval_end; None otherwise or when unknown."""
    if settings.airflow_version == "2":
        return None
    rec = dag_recurrence(dag, settings.airflow_version, settings.create_cron_data_intervals)
    if not isinstance(rec, Recurrence) or rec.data_interval:
        return None
    for name in SCHEDULE_ARGUMENTS:
        arg = dag.args.get(name)
        if arg is None:
            continue
        if isinstance(arg.value, Timetable):
            return None if arg.value.has_interval else arg.value.qualname.rsplit(".", 1)[-1]
        return repr(arg.value) if isinstance(arg.value, str) else "a timedelta"
    return None
