"""DG204: an interval filter that includes its end, so adjacent intervals share boundary rows."""

from __future__ import annotations

import re
from typing import Iterable, Optional

import libcst as cst

from dagguard.model.dags.models import FileModel
from dagguard.model.sql.sql_facts import RangeBound, inclusive_end_bounds
from dagguard.model.tasks.task_io import file_task_ios, readable
from dagguard.model.schedules.trigger_runs import dag_trigger_schedule
from dagguard.rules.base import UNSAFE, Fix, Report, Rule, RuleContext


class InclusiveIntervalBounds(Rule):
    code = "DG204"
    name = "inclusive-interval-bounds"
    severity = "warning"
    summary = "An interval filter includes both ends (BETWEEN, <= data_interval_end)"
    fixable = True

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
                        fix=_exclusive_end(source.node, bound),
                    )
            seen.update(id(s.node) for s in io.sql)


_COLUMN = r"(?P<col>[\w.\"`]+)"


def _end_pattern(bound: RangeBound) -> "re.Pattern[str]":
    end = r"(?P<high>'?\{\{\s*" + re.escape(bound.expr.source) + r"\s*\}\}'?)"
    if bound.op == "between":
        return re.compile(_COLUMN + r"(?P<a>\s+)between(?P<b>\s+)(?P<low>.+?)(?P<c>\s+)(?P<kw>and)(?P<d>\s+)" + end,
                          re.IGNORECASE | re.DOTALL)
    return re.compile(_COLUMN + r"(?P<a>\s*)<=(?P<b>\s*)" + end)


def _exclusive(match: "re.Match[str]") -> str:
    g = match.groupdict()
    if "low" in g:
        return f"{g['col']}{g['a']}>={g['b']}{g['low']}{g['c']}{g['kw']}{g['d']}{g['col']} < {g['high']}"
    return f"{g['col']}{g['a']}<{g['b']}{g['high']}"


def _exclusive_end(node: cst.CSTNode, bound: RangeBound) -> Optional[Fix]:
    """`col BETWEEN a AND end` -> `col >= a AND col < end`, `col <= end` -> `col < end`, inside
    the SQL string in its own quotes. Unsafe: the query no longer returns the boundary rows."""
    if not isinstance(node, cst.SimpleString):
        return None
    pattern = _end_pattern(bound)
    if len(pattern.findall(node.value)) != 1:
        return None
    fixed = node.with_changes(value=pattern.sub(_exclusive, node.value))
    # The edit must mean the same in the string's value as in its source (no escapes crossed).
    if fixed.evaluated_value != pattern.sub(_exclusive, str(node.evaluated_value)):
        return None
    how = "BETWEEN" if bound.op == "between" else "<="
    return Fix(f"make the {how} range end exclusive", UNSAFE, ((node, fixed),))
