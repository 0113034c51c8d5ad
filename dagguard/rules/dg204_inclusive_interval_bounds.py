"""DG204: an interval filter that includes its end, so adjacent intervals share boundary rows."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.model.sql_facts import inclusive_end_bounds
from dagguard.model.task_io import file_task_ios, readable
from dagguard.model.trigger_runs import dag_trigger_schedule
from dagguard.rules.base import Report, Rule, RuleContext


class InclusiveIntervalBounds(Rule):
    code = "DG204"
    name = "inclusive-interval-bounds"
    severity = "warning"
    summary = "An interval filter includes both ends (BETWEEN, <= data_interval_end)"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        seen: set[int] = set()
        for io in file_task_ios(file, context.path):
            # On a trigger timetable a run ends where it starts, and the next run starts later:
            # `<= data_interval_end` shares nothing with it (DG206 judges whether it is empty).
            trigger = dag_trigger_schedule(file, io.dag, context.settings) is not None
            for source, statement in io.statements():
                if statement is None or statement.tree is None or id(source.node) in seen:
                    continue
                for bound in inclusive_end_bounds(statement.tree, io.lookup):
                    if trigger and bound.expr.key == "data_interval_end":
                        continue
                    column = readable(file, bound.column)
                    how = "BETWEEN ... AND" if bound.op == "between" else "<="
                    yield Report(
                        node=source.node,
                        message=f"{io.label} filters {column} with {how} {{{{ {bound.expr.source} }}}}, which "
                                "includes the interval's end; rows at the boundary land in two adjacent intervals",
                        # On a trigger timetable data_interval_start..end is empty (DG206): keep
                        # the user's end and make it exclusive.
                        help=(f"end the range with {column} < '{{{{ {bound.expr.source} }}}}'" if trigger else
                              f"use {column} >= '{{{{ data_interval_start }}}}' AND {column} < "
                              f"'{{{{ data_interval_end }}}}'"),
                    )
            seen.update(id(s.node) for s in io.sql)
