"""The texts of the findings that both the linter's rules and the cluster policy (dagguard.policy)
report, so the two say the same thing. No libcst here: the policy imports it in every DAG
processor. Each function takes the labels the caller made (`DAG 'orders'`, `task 'load'`)."""

from __future__ import annotations

from typing import Optional

from dagguard.model.schedules.run_counts import format_count

DG101_HELP = "set end_date=... to bound the backfill, or catchup=False"
DG102_HELP = "set max_active_runs=1 if runs must not overlap, or a small bound"
DG103_HELP = "set max_active_tasks to what its sources and targets can take"
DG107_HELP = "move start_date closer, backfill in chunks with `airflow backfill create`, or raise max-catchup-runs"
DG206_HELP = ("schedule with CronDataIntervalTimetable(...) or DeltaDataIntervalTimetable(...) from airflow.sdk, "
              "or set create-cron-data-intervals = true here and [scheduler] create_cron_data_intervals = True "
              "in Airflow")
DG303_HELP = "give each task a unique task_id"


def catchup_without_end_date(dag: str, runs: Optional[int], fires_known: bool = True) -> str:
    """DG101: `runs` is the backlog catchup would queue now, None when it cannot be counted."""
    message = f"{dag} enables catchup without end_date"
    if not fires_known:
        return message + ("; catchup would queue a run for every interval since start_date, how many is "
                          "unknown (its timetable's cron or period is not static)")
    if runs is None:
        return message
    if runs == 0:
        # Nothing is queued today, but the unbounded catchup stays armed.
        return (message + "; no run is due yet, but every interval missed after start_date "
                          "(DAG paused, scheduler down) would be queued at once")
    return message + f"; catchup would queue {format_count(runs)} runs"


def missing_max_active_runs(dag: str, at_once: int = 16) -> str:
    """DG102 on a recurring schedule."""
    return f"{dag} sets no max_active_runs; up to {at_once} of its runs can run at once"


def missing_max_active_tasks(dag: str, at_once: int) -> str:
    """DG103 on a recurring schedule."""
    return f"{dag} sets no max_active_tasks; up to {at_once} of its tasks can run at once"


def large_catchup_backlog(dag: str, runs: int, max_catchup_runs: int) -> str:
    """DG107: catchup bounded by end_date, still over the threshold."""
    return (f"{dag} catchup would queue {runs:,} runs between start_date and "
            f"end_date, over max-catchup-runs ({max_catchup_runs:,})")


def empty_interval_helper_write(task: str, dag: str, schedule: str) -> str:
    """DG206: a dagguard.idempotent write on a trigger timetable."""
    return (f"{task} writes through dagguard.idempotent, but {dag} is scheduled "
            f"{schedule}, a trigger timetable on Airflow 3 whose runs have an empty data "
            "interval; every run raises EmptyIntervalError and writes nothing")


def empty_interval_range(task: str, column: str, dag: str, schedule: str) -> str:
    """DG206: a `column >= start AND column < data_interval_end` range on a trigger timetable."""
    return (f"{task} selects {column} up to {{{{ data_interval_end }}}} from the interval's "
            f"start, but {dag} is scheduled {schedule}, a trigger timetable on Airflow 3 whose "
            "runs have data_interval_start == data_interval_end; the range is empty and the task "
            "silently reads or writes nothing")


def empty_interval_help(schedule: str) -> str:
    """DG206's fix for `schedule`: a cron string or timedelta can switch to data intervals; a
    trigger timetable class written out takes an interval= of its own."""
    if schedule.endswith("Timetable"):
        timetable = schedule.rsplit(" ", 1)[-1]  # "AssetOrTimeSchedule with a CronTriggerTimetable"
        return (f"pass {timetable} the time between its runs as interval= (interval=timedelta(days=1) "
                "for a daily cron), or schedule with CronDataIntervalTimetable(...)")
    return DG206_HELP


def duplicate_task_id(dag: str, task_id: str) -> str:
    """DG303: a second task with an id the DAG already has."""
    return (f"{dag} already has a task '{task_id}'; "
            "Airflow raises DuplicateTaskIdFound and the DAG does not load")


def renamed_onto_task_id(dag: str, task_id: str) -> str:
    """DG303 on a loaded DAG (the cluster policy): a task whose id was changed after it was added
    now answers to another task's id; Airflow raised nothing."""
    return (f"{dag} has two tasks with task_id '{task_id}' (one was renamed after it was added to the DAG); "
            "the scheduler and the UI find only one of them by that id")
