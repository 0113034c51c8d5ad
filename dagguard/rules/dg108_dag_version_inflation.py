"""DG108: a DAG or task argument that differs on every parse makes a new DAG version each time."""

from __future__ import annotations

from typing import Iterable, Iterator, Optional

import libcst as cst

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.schedules.clock_cadence import moves_daily
from dagguard.model.dags.models import DagModel, FileModel, TaskModel
from dagguard.model.project.origins import made_at
from dagguard.model.basics.scope import Scope
from dagguard.model.tasks.python_tasks import call_name
from dagguard.model.tasks.task_io import carries_data, runs_on_a_clock
from dagguard.model.basics.values import Evaluator, reads_clock, varies_per_parse
from dagguard.rules.base import MADE_AT, Report, Rule, RuleContext

# start_date is DG104's. Callables and user macros are not part of the serialized DAG.
SKIPPED = frozenset({
    "start_date", "python_callable", "dag", "user_defined_macros", "user_defined_filters",
    "on_failure_callback", "on_success_callback", "on_retry_callback", "on_execute_callback",
    "on_skipped_callback", "sla_miss_callback",
})
HELP = "use a fixed value, or read the changing one inside the task, when it runs"
EVERY_PARSE = "the value changes from parse to parse, and each change after a run stores a new DAG version"
DAILY = "the value changes once a day, and each day's change after a run stores a new DAG version"


class DagVersionInflation(Rule):
    code = "DG108"
    name = "dag-version-inflation"
    severity = "warning"
    summary = "A DAG or task argument comes from the clock, random or uuid, so every parse makes a new DAG version"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        settings = context.settings
        seen: set[int] = set()   # one finding per argument, however many tasks share it
        for dag in file.dags:
            for name, arg in dag.args.values.items():
                # A static default_args is read entry by entry below.
                if name == "default_args" and (dag.default_args.values or dag.default_args.complete):
                    continue
                yield from _report(dag.label, name, arg.report_node, arg.node, _reader(arg, dag.scope), seen,
                                   file.scope, dag)
            for name, arg in dag.default_args.values.items():
                yield from _report(dag.label, f"default_args['{name}']", arg.report_node, arg.node,
                                   _reader(arg, dag.scope), seen, file.scope, dag, skip=name)
            # DG202 reports clock reads in the data a task of a clock-scheduled DAG is given.
            clock_left_to_dg202 = runs_on_a_clock(dag, settings.airflow_version, settings.create_cron_data_intervals)
            for task in dag.tasks:
                yield from _task_reports(task, seen, clock_left_to_dg202, file.scope)
        for task in file.loose_tasks:
            if task.parse_time:
                yield from _task_reports(task, seen, False, file.scope)


def _reader(arg: ArgValue, call_scope: Scope) -> Evaluator:
    return Evaluator(arg.read_in(call_scope))


def _task_reports(task: TaskModel, seen: set[int], clock_left_to_dg202: bool, here: Scope) -> Iterator[Report]:
    evaluator = Evaluator(task.scope)
    for name, arg in task.args.values.items():
        yield from _report(task.label, name, arg.report_node, arg.node, _reader(arg, task.scope), seen, here,
                           clock_elsewhere=clock_left_to_dg202 and carries_data(name))
    if task.kind == "taskflow" and isinstance(task.node, cst.Call):
        for argument in task.node.args:  # the call's arguments become the operator's op_kwargs
            name = argument.keyword.value if argument.keyword is not None else "argument"
            yield from _report(task.label, name, argument, argument.value, evaluator, seen, here,
                               clock_elsewhere=clock_left_to_dg202)


def _report(label: str, name: str, report_node: cst.CSTNode, value: cst.BaseExpression, evaluator: Evaluator,
            seen: set[int], here: Scope, dag: Optional[DagModel] = None, skip: Optional[str] = None,
            clock_elsewhere: bool = False) -> Iterator[Report]:
    # By the value written, not the place reported: the entries of one `**kwargs` share a place.
    if (skip or name) in SKIPPED or id(value) in seen:
        return
    seen.add(id(value))
    calls = evaluator.calls_made(value, varies_per_parse)
    if clock_elsewhere:
        calls = [c for c in calls if not reads_clock(c, evaluator.scope)]
    if calls:
        where = made_at(calls[0], value, evaluator.scope, here)
        source = call_name(calls[0]) + (f" ({MADE_AT})" if where is not None else "")
        # A value cut to a day (date.today(), days_ago(1)) changes once a day, not on each parse.
        daily = all(moves_daily(call, value, evaluator.scope) for call in calls)
        yield Report(
            node=report_node,
            message=f"{label} computes {name} from {source} when the file is parsed; "
                    + (DAILY if daily else EVERY_PARSE),
            help=HELP,
            dag=dag, made_at=where,
        )


