"""Every rule's code, the module under dagguard/rules/ that holds it and its class, in code
order: what a configuration needs to check a selector (config.py), without the rules themselves,
which import the settings. rules/__init__.py builds the registry from it."""

from __future__ import annotations

# (code, module under dagguard/rules/, class), in code order.
RULE_MODULES: tuple[tuple[str, str, str], ...] = (
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
RULE_CODES: tuple[str, ...] = tuple(code for code, _, _ in RULE_MODULES)
# The cross-file rules; their modules import only tree-free ones (rules/rule.py).
PROJECT_RULE_CODES: tuple[str, ...] = ("DG302",)
