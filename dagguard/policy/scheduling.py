"""DG101, DG102, DG103 and DG107 on a loaded DAG: what its catchup, dates, timetable and limits
mean, judged as the linter's rules judge the same values written in a file.

The DAG object does not keep whether max_active_runs or max_active_tasks was passed: a value
equal to the deployment's default ([core] max_active_runs_per_dag / max_active_tasks_per_dag)
counts as not set.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from dagguard.model.dags.antichains import MAX_TASKS, WAITING_RULES, widest_antichain
from dagguard.model.schedules.run_counts import count_runs
from dagguard.policy.findings import Finding
from dagguard.policy.schedule import is_airflows_recurring, timetable_recurrence
from dagguard.rules import messages


@dataclass(frozen=True)
class Limits:
    """What the DAG is judged against: the deployment's defaults and the settings' thresholds."""

    max_active_runs_default: int = 16
    max_active_tasks_default: int = 16
    max_catchup_runs: int = 500
    fix_max_active_tasks: int = 4     # DG103 stays silent when one run cannot use more tasks than this


def dag_label(dag: Any) -> str:
    return f"DAG '{dag.dag_id}'"


def _date(dag: Any, name: str) -> Optional[dt.datetime]:
    """The DAG's start_date/end_date, else default_args' (as the linter reads them)."""
    value = getattr(dag, name, None)
    if value is None:
        value = (getattr(dag, "default_args", None) or {}).get(name)
    return _plain_utc(value) if isinstance(value, dt.datetime) else None


def _plain_utc(value: dt.datetime) -> dt.datetime:
    """A stdlib datetime in UTC: Airflow's are pendulum's, whose differences do not divide by a
    timedelta."""
    utc = value.astimezone(dt.timezone.utc) if value.tzinfo is not None else value
    return dt.datetime(utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond,
                       tzinfo=dt.timezone.utc)


def _made_by_asset(dag: Any) -> bool:
    """A DAG an `@asset` function made: its one task is the asset's own operator."""
    tasks = getattr(dag, "tasks", None) or ()
    return bool(tasks) and all(type(task).__name__ == "_AssetMainOperator" for task in tasks)


def scheduling_findings(dag: Any, limits: Limits, now: dt.datetime) -> Iterator[Finding]:
    """The scheduling rules' findings on a loaded DAG."""
    timetable = getattr(dag, "timetable", None)
    rec = timetable_recurrence(timetable)
    if rec is None:
        return  # not clock-driven: no backlog, no overlap of scheduled runs
    label = dag_label(dag)
    start, end = _date(dag, "start_date"), _date(dag, "end_date")
    if getattr(dag, "catchup", False) is True and start is not None and is_airflows_recurring(timetable):
        if end is None:
            runs = count_runs(rec, start, now) if rec.fires_known else None
            yield Finding("DG101", messages.catchup_without_end_date(label, runs, rec.fires_known),
                          messages.DG101_HELP)
        else:
            runs = count_runs(rec, start, min(end, now))
            if runs is not None and runs > limits.max_catchup_runs:
                yield Finding("DG107", messages.large_catchup_backlog(label, runs, limits.max_catchup_runs),
                              messages.DG107_HELP)
    if _made_by_asset(dag):
        return  # @asset takes no max_active_runs or max_active_tasks: the linter skips it too
    if getattr(dag, "max_active_runs", None) == limits.max_active_runs_default:
        yield Finding("DG102", messages.missing_max_active_runs(label, limits.max_active_runs_default),
                      messages.DG102_HELP)
    if getattr(dag, "max_active_tasks", None) == limits.max_active_tasks_default:
        bound = _one_run_bound(dag)
        if bound is None or bound > limits.fix_max_active_tasks:
            at_once = min(bound, limits.max_active_tasks_default) if bound is not None \
                else limits.max_active_tasks_default
            yield Finding("DG103", messages.missing_max_active_tasks(label, at_once), messages.DG103_HELP)


def _one_run_bound(dag: Any) -> Optional[int]:
    """With max_active_runs=1, the most tasks of a run that can run at once (the widest set of
    tasks none of which waits for another); None otherwise, or for mapped tasks."""
    if getattr(dag, "max_active_runs", None) != 1:
        return None
    tasks = list(getattr(dag, "task_dict", {}).values())
    if not tasks or len(tasks) > MAX_TASKS or any(getattr(t, "_is_mapped", False) for t in tasks):
        return None
    position = {task.task_id: i for i, task in enumerate(tasks)}
    downstream: list[list[int]] = [[] for _ in tasks]
    for task in tasks:
        if str(getattr(task, "trigger_rule", "all_success")).lower() not in WAITING_RULES:
            continue  # it may run beside its upstream tasks: they do not order it
        for upstream in task.upstream_task_ids:
            if upstream in position:
                downstream[position[upstream]].append(position[task.task_id])
    return widest_antichain(downstream)
