"""DG104: start_date read from the wall clock moves on every parse, or every day."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from dagguard.model.basics.arguments import ArgValue
from dagguard.model.schedules.clock_cadence import moves_daily
from dagguard.model.dags.models import DagModel, FileModel
from dagguard.model.project.origins import Elsewhere, made_at
from dagguard.model.schedules.schedules import never_scheduled
from dagguard.model.basics.scope import Scope, dotted_name
from dagguard.model.basics.values import Evaluator
from dagguard.rules.base import MADE_AT, Report, Rule, RuleContext

HELP = 'use a fixed date, e.g. pendulum.datetime(2026, 1, 1, tz="UTC")'
# What a start_date that moves does, by how often it moves.
DAG_EVERY_PARSE = "it moves on every parse, so runs are skipped or created at random"
DAG_DAILY = ("it moves once a day, so the first date of the schedule slides forward every midnight, runs before "
             "it are never made, and each day stores a new DAG version")
TASK_EVERY_PARSE = "it moves on every parse, so a run whose logical date is before the last parse gets no instance of the task"
TASK_DAILY = ("it moves once a day, so a run whose logical date is before today's (a backfill, a cleared run) gets "
              "no instance of the task")


class DynamicStartDate(Rule):
    code = "DG104"
    name = "dynamic-start-date"
    severity = "error"
    summary = "start_date comes from the wall clock, so it moves on every parse or every day"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        moving: list[tuple[DagModel, ArgValue, tuple[str, bool, Optional[Elsewhere]]]] = []
        for dag in file.dags:
            if never_scheduled(dag, context.settings.airflow_version):
                continue  # no run is made from start_date: nothing to skip or create
            for arg in (dag.args.get("start_date"), dag.default_args.get("start_date")):
                found = _moving(arg, dag.scope, file.scope)
                if found is not None:
                    moving.append((dag, arg, found))  # type: ignore[arg-type]
                    break  # one finding per DAG
        # A factory of this file whose own DAG(...) makes the moving value: one cause, one finding,
        # at the factory's DAG (the line to change), naming the calls that make DAGs with it.
        in_body = {id(arg.node): dag for dag, arg, _ in moving if dag.factory is None}
        callers: dict[int, list[DagModel]] = {}
        for dag, arg, _ in moving:
            if dag.factory is not None and id(arg.node) in in_body:
                callers.setdefault(id(in_body[id(arg.node)]), []).append(dag)
        for dag, arg, (source, daily, where) in moving:
            if dag.factory is not None and id(arg.node) in in_body:
                continue
            calls = callers.get(id(dag), ())
            label = dag.label + (f" (as made by {_calls(calls, context)})" if calls else "")
            yield Report(
                node=arg.report_node,
                message=f"{label} start_date comes from {source}; {DAG_DAILY if daily else DAG_EVERY_PARSE}",
                help=HELP,
                dag=dag, argument=arg, made_at=where, also_dags=tuple(calls),
            )
        seen: set[int] = set()   # a @task decorator shared by several calls is reported once
        for task in file.every_task():
            arg = task.args.get("start_date")
            if arg is None or not task.parse_time or id(arg.report_node) in seen:
                continue
            seen.add(id(arg.report_node))
            found = _moving(arg, task.scope, file.scope)
            if found is not None:
                source, daily, where = found
                yield Report(
                    node=arg.report_node,
                    message=f"{task.label} start_date comes from {source}; {TASK_DAILY if daily else TASK_EVERY_PARSE}",
                    help=HELP, argument=arg, made_at=where,
                )


def _moving(arg: Optional[ArgValue], call_scope: Scope, here: Scope) -> Optional[tuple[str, bool, Optional[Elsewhere]]]:
    """(the clock call's name, whether it moves daily, where it is made if in another file)
    when `arg` reads the wall clock; None otherwise."""
    if arg is None:
        return None
    scope = arg.read_in(call_scope)
    calls = Evaluator(scope).wall_clock_calls(arg.node)
    if not calls:
        return None
    where = made_at(calls[0], arg.node, scope, here)
    source = _source(calls[0]) + (f" ({MADE_AT})" if where is not None else "")
    # Daily only when every clock read it makes is cut to a day.
    return source, all(moves_daily(call, arg.node, scope) for call in calls), where


def _calls(calls: Iterable[DagModel], context: RuleContext) -> str:
    """`the call on line 9` / `the calls on lines 9 and 11` (of the checked file)."""
    lines = sorted({line for dag in calls if (line := context.line_of(dag.report_node)) is not None})
    if not lines:
        return "its calls"
    if len(lines) == 1:
        return f"the call on line {lines[0]}"
    return "the calls on lines " + ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"


def _source(call: cst.Call) -> str:
    return (dotted_name(call.func) or "a clock call") + "()"
