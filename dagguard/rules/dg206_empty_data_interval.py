"""DG206: an interval range that is empty on Airflow 3's trigger timetables."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags.models import FileModel
from dagguard.model.sql.sql_facts import empty_trigger_ranges
from dagguard.model.tasks.task_io import readable, task_io
from dagguard.model.schedules.trigger_runs import trigger_dags
from dagguard.rules.base import Report, Rule, RuleContext
from dagguard.rules.data_interval_fix import data_interval_fix

from dagguard.rules.messages import empty_interval_helper_write, empty_interval_range
from dagguard.rules.messages import empty_interval_help as help_for


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
                        message=empty_interval_helper_write(io.label, dag.label, schedule),
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
                    message=empty_interval_range(io.label, readable(file, bound.column), dag.label, schedule),
                    help=help_for(schedule),
                    dag=dag,
                    fix=data_interval_fix(dag),
                )
