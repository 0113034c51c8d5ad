"""DG206: an interval range that is empty on Airflow 3's trigger timetables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from dagguard.model.dags import DagModel, FileModel
from dagguard.model.schedules import SCHEDULE_ARGUMENTS, Recurrence, dag_recurrence
from dagguard.model.sql_facts import empty_trigger_ranges
from dagguard.model.task_io import readable, task_io
from dagguard.model.values import Timetable
from dagguard.rules.base import Report, Rule, RuleContext

if TYPE_CHECKING:
    from dagguard.config import Settings

HELP = ("schedule with CronDataIntervalTimetable(...) or DeltaDataIntervalTimetable(...) from airflow.sdk, "
        "or set create-cron-data-intervals = true here and [scheduler] create_cron_data_intervals = True "
        "in Airflow")


def trigger_schedule(dag: DagModel, settings: "Settings") -> Optional[str]:
    """How the DAG's schedule is written, when Airflow 3 runs it on a trigger timetable."""
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


class EmptyDataInterval(Rule):
    code = "DG206"
    name = "empty-data-interval"
    severity = "error"
    summary = "A data_interval_start..data_interval_end range that is empty on Airflow 3 trigger timetables"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            schedule = trigger_schedule(dag, context.settings)
            if schedule is None:
                continue
            for task in dag.tasks:
                io = task_io(file, dag, task, context.path)
                if io.uses_dagguard_helper:
                    yield Report(
                        node=task.node,
                        message=f"{io.label} writes through dagguard.idempotent, but {dag.label} is scheduled "
                                f"{schedule}, a trigger timetable on Airflow 3 whose runs have an empty data "
                                "interval; every run raises EmptyIntervalError and writes nothing",
                        help=HELP,
                        dag=dag,
                    )
                    continue
                found = next(((source, bound) for source, statement in io.statements()
                              if statement is not None and statement.tree is not None
                              for bound in empty_trigger_ranges(statement.tree, io.lookup)), None)
                if found is None:
                    continue
                source, bound = found
                yield Report(
                    node=source.node,
                    message=f"{io.label} selects {readable(file, bound.column)} up to {{{{ data_interval_end }}}} from the interval's "
                            f"start, but {dag.label} is scheduled {schedule}, a trigger timetable on Airflow 3 whose "
                            "runs have data_interval_start == data_interval_end; the range is empty and the task "
                            "silently reads or writes nothing",
                    help=HELP,
                    dag=dag,
                )
