"""DG104: start_date read from the wall clock moves on every parse."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.model.scope import dotted_name
from dagguard.model.values import Evaluator
from dagguard.rules.base import Report, Rule, RuleContext


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
                    source = (dotted_name(calls[0].func) or "a clock call") + "()"
                    yield Report(
                        node=arg.report_node,
                        message=f"{dag.label} start_date comes from {source}; it moves on every parse, "
                                "so runs are skipped or created at random",
                        help='use a fixed date, e.g. pendulum.datetime(2026, 1, 1, tz="UTC")',
                        dag=dag, argument=arg,
                    )
                    break  # one finding per DAG
