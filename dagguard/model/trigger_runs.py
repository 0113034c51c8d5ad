"""DAGs whose runs have an empty data interval: Airflow 3's trigger timetables."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Optional

import libcst as cst

from dagguard.model import airflow_names as names
from dagguard.model.dags import DagModel
from dagguard.model.schedules import SCHEDULE_ARGUMENTS, Recurrence, dag_recurrence, timetable_call_recurrence
from dagguard.model.scope import ConstantBinding
from dagguard.model.values import UNKNOWN, Evaluator, Timetable

if TYPE_CHECKING:
    from dagguard.config import Settings


def trigger_schedule(dag: DagModel, settings: "Settings") -> Optional[str]:
    """How the DAG's schedule is written, when Airflow 3 runs it on a trigger timetable, whose
    runs have data_interval_start == data_interval_end; None otherwise or when unknown."""
    if settings.airflow_version == "2":
        return None
    arg = next((dag.args.get(name) for name in SCHEDULE_ARGUMENTS if dag.args.get(name) is not None), None)
    if arg is not None and arg.value is UNKNOWN:
        return _several_crons(arg.node, Evaluator(dag.scope))
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


def _several_crons(node: cst.BaseExpression, evaluator: Evaluator) -> Optional[str]:
    """"MultipleCronTriggerTimetable" when `node` makes one without an `interval=` (its runs
    then start and end at the same instant, as a CronTriggerTimetable's do); else None."""
    for _ in range(3):  # through module constants: TIMETABLE = MultipleCronTriggerTimetable(...)
        binding = evaluator.scope.single(node.value) if isinstance(node, cst.Name) else None
        if not isinstance(binding, ConstantBinding):
            break
        node = binding.value
    if not isinstance(node, cst.Call) or evaluator.scope.qualname(node.func) not in names.MULTIPLE_CRON_TIMETABLES:
        return None
    if not isinstance(timetable_call_recurrence(node, evaluator), Recurrence):
        return None  # crons it cannot read
    interval = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "interval"), None)
    if interval is not None and evaluator.value(interval) != dt.timedelta(0):
        return None  # a real interval, or one it cannot read
    return "MultipleCronTriggerTimetable"
