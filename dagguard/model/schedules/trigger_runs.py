"""DAGs whose runs have an empty data interval: Airflow 3's trigger timetables."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.schedules.schedules import (Recurrence, dag_recurrence, keyword_argument, schedule_argument,
                                      timetable_call_recurrence)

from dagguard.model.basics.values import UNKNOWN, Evaluator, Timetable

if TYPE_CHECKING:
    from dagguard.config import Settings


def trigger_dags(file: FileModel, settings: "Settings") -> Iterator[tuple[DagModel, str]]:
    """The file's DAGs on a trigger timetable, each with how its schedule is written."""
    for dag in file.dags:
        schedule = dag_trigger_schedule(file, dag, settings)
        if schedule is not None:
            yield dag, schedule


def dag_trigger_schedule(file: FileModel, dag: DagModel, settings: "Settings") -> Optional[str]:
    """trigger_schedule(dag), worked out once per DAG however many of its tasks and rules ask."""
    known: dict[int, Optional[str]] = file.analyses.setdefault("trigger_schedules", {})
    if id(dag) not in known:
        known[id(dag)] = trigger_schedule(dag, settings)
    return known[id(dag)]


def trigger_schedule(dag: DagModel, settings: "Settings") -> Optional[str]:
    """How the DAG's schedule is written, when Airflow 3 runs it on a trigger timetable, whose
    runs have data_interval_start == data_interval_end; None otherwise or when unknown."""
    if settings.airflow_version == "2":
        return None
    # The argument dag_recurrence reads: the first schedule argument given.
    arg = schedule_argument(dag)
    if arg is not None and arg.value is UNKNOWN:
        return _unread_timetable(arg.node, Evaluator(arg.read_in(dag.scope)))
    rec = dag_recurrence(dag, settings.airflow_version, settings.create_cron_data_intervals)
    if arg is None or not isinstance(rec, Recurrence) or rec.data_interval:
        return None
    if isinstance(arg.value, Timetable):
        return None if arg.value.has_interval else arg.value.qualname.rsplit(".", 1)[-1]
    return repr(arg.value) if isinstance(arg.value, str) else "a timedelta"


def _unread_timetable(node: cst.BaseExpression, evaluator: Evaluator, depth: int = 0) -> Optional[str]:
    """How a timetable the evaluator gives no value is written, when its (timed) runs start and
    end at the same instant: a MultipleCronTriggerTimetable without `interval=`, or an
    AssetOrTimeSchedule whose `timetable=` is a trigger timetable. None otherwise."""
    for _ in range(3):  # through module constants: TIMETABLE = MultipleCronTriggerTimetable(...)
        found = evaluator.scope.constant(node.value) if isinstance(node, cst.Name) else None
        if found is None:
            break
        node = found[0]
        evaluator = evaluator if found[1] is evaluator.scope else Evaluator(found[1])
    if not isinstance(node, cst.Call) or depth > 2:
        return None
    kind = evaluator.scope.qualname(node.func)
    if kind in names.ASSET_OR_TIME_SCHEDULES:
        # Asset events start runs of their own; the timed runs are the clock part's.
        clock = keyword_argument(node, "timetable")
        value = evaluator.value(clock) if clock is not None else None
        if isinstance(value, Timetable):
            empty = value.kind == "trigger" and not value.has_interval
            part = value.qualname.rsplit(".", 1)[-1] if empty else None
        else:
            part = _unread_timetable(clock, evaluator, depth + 1) if value is UNKNOWN else None
        return f"AssetOrTimeSchedule with a {part}" if part else None
    if kind not in names.MULTIPLE_CRON_TIMETABLES:
        return None
    rec = timetable_call_recurrence(node, evaluator)
    if not isinstance(rec, Recurrence) or not rec.fires_known:
        return None  # crons it cannot read
    interval = keyword_argument(node, "interval")
    if interval is not None and evaluator.value(interval) != dt.timedelta(0):
        return None  # a real interval, or one it cannot read
    return "MultipleCronTriggerTimetable"

