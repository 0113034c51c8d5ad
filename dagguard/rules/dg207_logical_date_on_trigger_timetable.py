"""DG207: a read keyed on the run's logical date, which Airflow 3's trigger timetables move one
period forward: the period that is only beginning instead of the one that just ended."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Iterable, Optional

from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.schedules.run_dates import ExampleRun, example_run, timedelta_code
from dagguard.model.schedules.schedules import PRESETS, Recurrence, dag_recurrence
from dagguard.model.sql.sql_facts import run_date_reads
from dagguard.model.tasks.task_io import dag_written_tables, readable, task_io
from dagguard.model.sql.templates import Expression
from dagguard.model.schedules.trigger_runs import trigger_dags
from dagguard.rules.base import Report, Rule, RuleContext
from dagguard.rules.data_interval_fix import data_interval_fix

if TYPE_CHECKING:
    from dagguard.config import Settings


class LogicalDateOnTriggerTimetable(Rule):
    code = "DG207"
    name = "logical-date-on-trigger-timetable"
    severity = "warning"
    summary = "A read keyed on ds/logical_date, which Airflow 3's trigger timetables set to the period only beginning"
    fixable = True

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag, schedule in trigger_dags(file, context.settings):
            # A table this DAG writes holds the rows of its own logical dates: reading it by
            # the same date is consistent, whatever the timetable.
            written = dag_written_tables(file, dag, context.path)
            for task in dag.tasks:
                io = task_io(file, dag, task, context.path)
                found = io.first_fact(lambda tree, lookup: [
                    read for read in run_date_reads(tree, lookup) if not (read.tables and read.tables <= written)])
                if found is None:
                    continue
                source, read = found
                run = _example_run(dag, context.settings)   # only for a DAG with a finding
                yield Report(
                    node=source.node,
                    message=f"{io.label} reads {readable(file, read.text)}, but {dag.label} is scheduled {schedule}, "
                            f"a trigger timetable on Airflow 3{_shift(read.expr, run)}, so every run reads an "
                            "incomplete, mostly empty period",
                    help=_help(schedule, run),
                    dag=dag,
                    fix=data_interval_fix(dag),
                )


def _example_run(dag: DagModel, settings: "Settings") -> Optional[ExampleRun]:
    rec = dag_recurrence(dag, settings.airflow_version, settings.create_cron_data_intervals,
                         composite_timetables=True)
    return example_run(rec) if isinstance(rec, Recurrence) else None


def _shift(expr: Expression, run: Optional[ExampleRun]) -> str:
    """`: the run at 2026-01-02 00:00 has ds 2026-01-02 (2026-01-01 on Airflow 2), the day
    that is only beginning`."""
    if run is None:
        return " whose logical date is the moment the run starts: the period it reads is only beginning"
    now, before = _formatted(expr, run.starts), _formatted(expr, run.airflow2_logical_date)
    period = "day" if len(now) <= len("2026-01-02") else "period"
    return (f": the run at {run.starts:%Y-%m-%d %H:%M} has {expr.source} = {now} ({before} on Airflow 2), "
            f"the {period} that is only beginning")


def _formatted(expr: Expression, moment: dt.datetime) -> str:
    """The moment as the expression spells it, as far as its key and filters say."""
    if expr.run_date == "ds_nodash" or "ds_nodash" in expr.shape:
        return f"{moment:%Y%m%d}"
    if expr.run_date == "ds" or "|ds" in expr.shape or ".date" in expr.shape or "date_string" in expr.shape:
        return f"{moment:%Y-%m-%d}"
    if expr.run_date == "ts_nodash":
        return f"{moment:%Y%m%dT%H%M%S}"
    return f"{moment:%Y-%m-%d %H:%M}"


def _help(schedule: str, run: Optional[ExampleRun]) -> str:
    period = run.period if run is not None else None
    if period is None:
        previous = "read the previous period explicitly"
    else:
        earlier = f"data_interval_start - macros.timedelta({timedelta_code(period)})"
        days = period // dt.timedelta(days=1) if period % dt.timedelta(days=1) == dt.timedelta(0) else 0
        by_day = f"{{{{ macros.ds_add(ds, -{days}) }}}} or " if days else ""
        previous = f"read the previous period explicitly: {by_day}{{{{ {earlier} }}}}"
    return f"{_timetable_fix(schedule, period)}, or {previous}"


def _timetable_fix(schedule: str, period: Optional[dt.timedelta]) -> str:
    """A schedule whose logical date is the start of the period that just ended, as on Airflow 2."""
    interval = f"timedelta({timedelta_code(period)})" if period is not None else "timedelta(...)"
    if schedule.endswith("Timetable"):
        timetable = schedule.rsplit(" ", 1)[-1]
        return f"pass {timetable} interval={interval} (a run's logical date is then its interval's start)"
    if schedule.startswith(("'", '"')):
        cron = PRESETS.get(schedule[1:-1], schedule[1:-1])
        return f'schedule with CronDataIntervalTimetable("{cron}", timezone="UTC") to keep Airflow 2\'s logical dates'
    return f"schedule with DeltaDataIntervalTimetable({interval}) to keep Airflow 2's logical dates"
