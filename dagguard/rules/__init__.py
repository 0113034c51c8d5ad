"""The rule registry: every rule, in code order. The engine knows rules only through here."""

from __future__ import annotations

from dagguard.rules.base import ProjectRule, Rule
from dagguard.rules.dg000_syntax_error import SyntaxError_
from dagguard.rules.dg101_catchup_without_end_date import CatchupWithoutEndDate
from dagguard.rules.dg102_missing_max_active_runs import MissingMaxActiveRuns
from dagguard.rules.dg103_missing_max_active_tasks import MissingMaxActiveTasks
from dagguard.rules.dg104_dynamic_start_date import DynamicStartDate
from dagguard.rules.dg105_missing_schedule import MissingSchedule
from dagguard.rules.dg106_removed_dag_argument import RemovedDagArgument
from dagguard.rules.dg107_large_catchup_backlog import LargeCatchupBacklog
from dagguard.rules.dg108_dag_version_inflation import DagVersionInflation
from dagguard.rules.dg109_removed_operator_argument import RemovedOperatorArgument
from dagguard.rules.dg201_write_not_keyed_on_interval import WriteNotKeyedOnInterval
from dagguard.rules.dg202_wall_clock_in_task import WallClockInTask
from dagguard.rules.dg203_append_only_insert import AppendOnlyInsert
from dagguard.rules.dg204_inclusive_interval_bounds import InclusiveIntervalBounds
from dagguard.rules.dg205_removed_template_variable import RemovedTemplateVariable
from dagguard.rules.dg206_empty_data_interval import EmptyDataInterval
from dagguard.rules.dg207_logical_date_on_trigger_timetable import LogicalDateOnTriggerTimetable
from dagguard.rules.dg301_top_level_variable_get import TopLevelVariableGet
from dagguard.rules.dg302_duplicate_dag_id import DuplicateDagId
from dagguard.rules.dg303_duplicate_task_id import DuplicateTaskId

ALL_RULES: tuple[Rule, ...] = (
    SyntaxError_(),
    CatchupWithoutEndDate(),
    MissingMaxActiveRuns(),
    MissingMaxActiveTasks(),
    DynamicStartDate(),
    MissingSchedule(),
    RemovedDagArgument(),
    LargeCatchupBacklog(),
    DagVersionInflation(),
    RemovedOperatorArgument(),
    WriteNotKeyedOnInterval(),
    WallClockInTask(),
    AppendOnlyInsert(),
    InclusiveIntervalBounds(),
    RemovedTemplateVariable(),
    EmptyDataInterval(),
    LogicalDateOnTriggerTimetable(),
    TopLevelVariableGet(),
    DuplicateDagId(),
    DuplicateTaskId(),
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
SYNTAX_ERROR = RULES_BY_CODE["DG000"]

__all__ = ["ALL_RULES", "RULES_BY_CODE", "SYNTAX_ERROR", "ProjectRule", "Rule"]
