"""DG206: an interval range that is empty on Airflow 3's trigger timetables."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.model.sql_facts import empty_trigger_ranges
from dagguard.model.task_io import readable, task_io
from dagguard.model.trigger_runs import trigger_dags
from dagguard.rules.base import Report, Rule, RuleContext
from dagguard.rules.data_interval_fix import data_interval_fix

HELP = ("schedule with CronDataIntervalTimetable(...) or DeltaDataIntervalTimetable(...) from airflow.sdk, "
        "or set create-cron-data-intervals = true here and [scheduler] create_cron_data_intervals = True "
        "in Airflow")


def help_for(schedule: str) -> str:
    """The fix for `schedule`: a cron string or timedelta can switch to data intervals; a
    trigger timetable class written out takes an interval= of its own."""
    if schedule.endswith("Timetable"):
        timetable = schedule.rsplit(" ", 1)[-1]  # "AssetOrTimeSchedule with a CronTriggerTimetable"
        return (f"pass {timetable} the time between its runs as interval= (interval=timedelta(days=1) "
                "for a daily cron), or schedule with CronDataIntervalTimetable(...)")
    return HELP


class EmptyDataInterval(Rule):
    code = "DG206"
    name = "empty-data-interval"
    severity = "error"
    summary = "A data_interval_start..data_interval_end range that is empty on Airflow 3 trigger timetables"
    fixable = True

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag, schedule in trigger_dags(file, context.settings):
            for task in dag.tasks:
                io = task_io(file, dag, task, context.path)
                if io.uses_dagguard_helper:
                    yield Report(
                        node=task.node,
                        message=f"{io.label} writes through dagguard.idempotent, but {dag.label} is scheduled "
                                f"{schedule}, a trigger timetable on Airflow 3 whose runs have an empty data "
                                "interval; every run raises EmptyIntervalError and writes nothing",
                        help=help_for(schedule),
                        dag=dag,
                        fix=data_interval_fix(dag),
                    )
                    continue
                found = io.first_fact(empty_trigger_ranges)
                if found is None:
                    continue
                source, bound = found
                yield Report(
                    node=source.node,
                    message=f"{io.label} selects {readable(file, bound.column)} up to {{{{ data_interval_end }}}} from the interval's "
                            f"start, but {dag.label} is scheduled {schedule}, a trigger timetable on Airflow 3 whose "
                            "runs have data_interval_start == data_interval_end; the range is empty and the task "
                            "silently reads or writes nothing",
                    help=help_for(schedule),
                    dag=dag,
                    fix=data_interval_fix(dag),
                )
