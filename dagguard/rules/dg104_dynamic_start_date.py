"""DG104: start_date read from the wall clock moves on every parse."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from dagguard.model.dags import FileModel
from dagguard.model.scope import dotted_name
from dagguard.model.values import Evaluator
from dagguard.rules.base import Report, Rule, RuleContext

HELP = 'use a fixed date, e.g. pendulum.datetime(2026, 1, 1, tz="UTC")'


class DynamicStartDate(Rule):
    code = "DG104"
    name = "dynamic-start-date"
    severity = "error"
    summary = "start_date comes from the wall clock, so it moves every time the file is parsed"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            evaluator = Evaluator(dag.scope)
            for arg in (dag.args.get("start_date"), dag.default_args.get("start_date")):
                if arg is None:
                    continue
                calls = evaluator.wall_clock_calls(arg.node)
                if calls:
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} start_date comes from {_source(calls[0])}; it moves on every parse, "
                                "so runs are skipped or created at random",
                        help=HELP,
                        dag=dag, argument=arg,
                    )
                    break  # one finding per DAG
        seen: set[int] = set()   # a @task decorator shared by several calls is reported once
        for task in file.every_task():
            arg = task.args.get("start_date")
            if arg is None or not task.parse_time or id(arg.report_node) in seen:
                continue
            seen.add(id(arg.report_node))
            calls = Evaluator(task.scope).wall_clock_calls(arg.node)
            if calls:
                yield Report(
                    node=arg.report_node,
                    message=f"{task.label} start_date comes from {_source(calls[0])}; it moves on every parse, so "
                            "a run whose logical date is before the last parse gets no instance of the task",
                    help=HELP,
                )


def _source(call: cst.Call) -> str:
    return (dotted_name(call.func) or "a clock call") + "()"
