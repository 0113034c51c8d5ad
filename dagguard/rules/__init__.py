"""The rule registry: every rule, in code order. The engine knows rules only through here.

The per-file rules import libcst and the model (~0.4 s), so the registry names each rule's
module and imports them all on the first use of ALL_RULES, RULES_BY_CODE or SYNTAX_ERROR. A
run whose results all come from the cache resolves rule selections from RULE_CODES and runs
the cross-file rules from project_rules() without importing any of that.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from dagguard.rules.rule import ProjectRule, Rule

# (code, module under dagguard/rules/, class), in code order.
_REGISTRY: tuple[tuple[str, str, str], ...] = (
    ("DG000", "dg000_syntax_error", "SyntaxError_"),
    ("DG101", "dg101_catchup_without_end_date", "CatchupWithoutEndDate"),
    ("DG102", "dg102_missing_max_active_runs", "MissingMaxActiveRuns"),
    ("DG103", "dg103_missing_max_active_tasks", "MissingMaxActiveTasks"),
    ("DG104", "dg104_dynamic_start_date", "DynamicStartDate"),
    ("DG105", "dg105_missing_schedule", "MissingSchedule"),
    ("DG106", "dg106_removed_dag_argument", "RemovedDagArgument"),
    ("DG107", "dg107_large_catchup_backlog", "LargeCatchupBacklog"),
    ("DG108", "dg108_dag_version_inflation", "DagVersionInflation"),
    ("DG109", "dg109_removed_operator_argument", "RemovedOperatorArgument"),
    ("DG110", "dg110_partition_keys_never_match", "PartitionKeysNeverMatch"),
    ("DG201", "dg201_write_not_keyed_on_interval", "WriteNotKeyedOnInterval"),
    ("DG202", "dg202_wall_clock_in_task", "WallClockInTask"),
    ("DG203", "dg203_append_only_insert", "AppendOnlyInsert"),
    ("DG204", "dg204_inclusive_interval_bounds", "InclusiveIntervalBounds"),
    ("DG205", "dg205_removed_template_variable", "RemovedTemplateVariable"),
    ("DG206", "dg206_empty_data_interval", "EmptyDataInterval"),
    ("DG207", "dg207_logical_date_on_trigger_timetable", "LogicalDateOnTriggerTimetable"),
    ("DG208", "dg208_data_interval_on_partitioned_dag", "DataIntervalOnPartitionedDag"),
    ("DG301", "dg301_top_level_variable_get", "TopLevelVariableGet"),
    ("DG302", "dg302_duplicate_dag_id", "DuplicateDagId"),
    ("DG303", "dg303_duplicate_task_id", "DuplicateTaskId"),
)
RULE_CODES: tuple[str, ...] = tuple(code for code, _, _ in _REGISTRY)
# The cross-file rules; their modules import only tree-free ones (rules/rule.py).
PROJECT_RULE_CODES: tuple[str, ...] = ("DG302",)

_INSTANCES: dict[str, Rule] = {}   # one instance per rule, whichever way it was first reached


def _rule(code: str) -> Rule:
    rule = _INSTANCES.get(code)
    if rule is None:
        module, cls = next((m, c) for known, m, c in _REGISTRY if known == code)
        rule = _INSTANCES[code] = getattr(import_module(f"dagguard.rules.{module}"), cls)()
    return rule


def project_rules() -> tuple[ProjectRule, ...]:
    """The cross-file rules, imported without the per-file ones."""
    rules = tuple(_rule(code) for code in PROJECT_RULE_CODES)
    return tuple(rule for rule in rules if isinstance(rule, ProjectRule))


if TYPE_CHECKING:
    ALL_RULES: tuple[Rule, ...]
    RULES_BY_CODE: dict[str, Rule]
    SYNTAX_ERROR: Rule


def __getattr__(name: str) -> Any:
    # PEP 562: the full registry is built on first use, then kept as module attributes.
    if name == "SYNTAX_ERROR":   # tree-free: a cached run may report an unreadable folder
        globals()[name] = _rule("DG000")
    elif name in ("ALL_RULES", "RULES_BY_CODE"):
        all_rules = tuple(_rule(code) for code in RULE_CODES)
        globals().update(ALL_RULES=all_rules, RULES_BY_CODE={rule.code: rule for rule in all_rules})
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return globals()[name]


__all__ = ["ALL_RULES", "PROJECT_RULE_CODES", "RULES_BY_CODE", "RULE_CODES", "SYNTAX_ERROR", "ProjectRule", "Rule",
           "project_rules"]
