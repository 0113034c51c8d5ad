"""Qualified names of the Airflow objects dagguard recognises, checked against Airflow 2.x-3.3."""

from __future__ import annotations

DAG_CLASSES = frozenset({
    "airflow.DAG",
    "airflow.models.DAG",
    "airflow.models.dag.DAG",
    "airflow.sdk.DAG",
    "airflow.sdk.definitions.dag.DAG",
})

DAG_DECORATORS = frozenset({
    "airflow.decorators.dag",
    "airflow.models.dag.dag",
    "airflow.sdk.dag",
    "airflow.sdk.definitions.dag.dag",
    # `from airflow import dag` raises ImportError on Airflow 2 and 3 alike, yet nothing but the
    # DAG decorator can be meant: its arguments are checked as what the author wrote.
    "airflow.dag",
})

TASK_DECORATORS = frozenset({
    "airflow.decorators.task",
    "airflow.sdk.task",
})

TASK_GROUP_CLASSES = frozenset({
    "airflow.utils.task_group.TaskGroup",
    "airflow.sdk.TaskGroup",
    "airflow.sdk.definitions.taskgroup.TaskGroup",
})

TASK_GROUP_DECORATORS = frozenset({
    "airflow.decorators.task_group",
    "airflow.sdk.task_group",
})

PYTHON_OPERATORS = frozenset({
    "airflow.operators.python.PythonOperator",
    "airflow.operators.python_operator.PythonOperator",
    "airflow.providers.standard.operators.python.PythonOperator",
    "airflow.operators.python.BranchPythonOperator",
    "airflow.providers.standard.operators.python.BranchPythonOperator",
    "airflow.operators.python.ShortCircuitOperator",
    "airflow.providers.standard.operators.python.ShortCircuitOperator",
    "airflow.operators.python.PythonVirtualenvOperator",
    "airflow.providers.standard.operators.python.PythonVirtualenvOperator",
    "airflow.operators.python.ExternalPythonOperator",
    "airflow.providers.standard.operators.python.ExternalPythonOperator",
})

# Timetable constructors, by the kind of runs they create.
TRIGGER_TIMETABLES = frozenset({
    "airflow.timetables.trigger.CronTriggerTimetable",
    "airflow.timetables.trigger.DeltaTriggerTimetable",
    "airflow.sdk.CronTriggerTimetable",
    "airflow.sdk.DeltaTriggerTimetable",
    "airflow.sdk.definitions.timetables.trigger.CronTriggerTimetable",
    "airflow.sdk.definitions.timetables.trigger.DeltaTriggerTimetable",
})
DATA_INTERVAL_TIMETABLES = frozenset({
    "airflow.timetables.interval.CronDataIntervalTimetable",
    "airflow.timetables.interval.DeltaDataIntervalTimetable",
    "airflow.sdk.CronDataIntervalTimetable",
    "airflow.sdk.DeltaDataIntervalTimetable",
    "airflow.sdk.definitions.timetables.interval.CronDataIntervalTimetable",
    "airflow.sdk.definitions.timetables.interval.DeltaDataIntervalTimetable",
})
# Trigger timetables that fire on any of their cron expressions, read by model/schedules/schedules.py only:
# partition runs have no data interval at all, not an empty one.
MULTIPLE_CRON_TIMETABLES = frozenset({
    "airflow.timetables.trigger.MultipleCronTriggerTimetable",
    "airflow.sdk.MultipleCronTriggerTimetable",
    "airflow.sdk.definitions.timetables.trigger.MultipleCronTriggerTimetable",
})
CRON_PARTITION_TIMETABLES = frozenset({
    "airflow.timetables.trigger.CronPartitionTimetable",
    "airflow.sdk.CronPartitionTimetable",
    "airflow.sdk.definitions.timetables.trigger.CronPartitionTimetable",
})
# Partition timetables (Airflow 3.2+, AIP-76): their runs carry a partition key and date and no
# data interval (logical_date, ds, ts and data_interval_* are absent from the context). Read by
# model/schedules/partitions.py; PartitionedAssetTimetable and PartitionedAtRuntime are also non-recurring.
PARTITIONED_ASSET_TIMETABLES = frozenset({
    "airflow.timetables.simple.PartitionedAssetTimetable",
    "airflow.sdk.PartitionedAssetTimetable",
    "airflow.sdk.definitions.timetables.assets.PartitionedAssetTimetable",
})
PARTITIONED_AT_RUNTIME = frozenset({
    "airflow.timetables.simple.PartitionedAtRuntime",
    "airflow.sdk.PartitionedAtRuntime",
    "airflow.sdk.definitions.timetables.assets.PartitionedAtRuntime",
})
# `@asset` and `@asset.multi` (airflow/sdk/definitions/asset/decorators.py): each decorated
# function is a DAG of one task.
ASSET_DECORATORS = frozenset({
    "airflow.sdk.asset",
    "airflow.sdk.definitions.asset.decorators.asset",
})
MULTI_ASSET_DECORATORS = frozenset(f"{name}.multi" for name in ASSET_DECORATORS)
ANY_ASSET_DECORATORS = ASSET_DECORATORS | MULTI_ASSET_DECORATORS
ASSET_REF_CALLS = frozenset(f"{name}.ref" for name in ("airflow.sdk.Asset", "airflow.sdk.definitions.asset.Asset"))
ASSET_ALL_CLASSES = frozenset({"airflow.sdk.AssetAll", "airflow.sdk.definitions.asset.AssetAll"})
# Partition mappers, by class name, as `airflow.sdk` exports them and where they are defined
# (airflow/sdk/definitions/partition_mappers/).
PARTITION_MAPPER_MODULES = {
    "AllowedKeyMapper": "allowed_key", "ChainMapper": "chain", "FixedKeyMapper": "fixed_key",
    "IdentityMapper": "identity", "ProductMapper": "product", "RollupMapper": "base",
    "FanOutMapper": "temporal", "StartOfHourMapper": "temporal", "StartOfDayMapper": "temporal",
    "StartOfWeekMapper": "temporal", "StartOfMonthMapper": "temporal", "StartOfQuarterMapper": "temporal",
    "StartOfYearMapper": "temporal",
}
PARTITION_MAPPERS = {
    qualname: name
    for name, module in PARTITION_MAPPER_MODULES.items()
    for qualname in (f"airflow.sdk.{name}", f"airflow.sdk.definitions.partition_mappers.{module}.{name}")
}
# Runs on asset events or on the clock of their `timetable=` argument (Airflow 2: datasets).
ASSET_OR_TIME_SCHEDULES = frozenset({
    "airflow.timetables.assets.AssetOrTimeSchedule",
    "airflow.sdk.AssetOrTimeSchedule",
    "airflow.sdk.definitions.timetables.assets.AssetOrTimeSchedule",
    "airflow.timetables.datasets.DatasetOrTimeSchedule",
})
# Timetables that never build a catchup backlog: no schedule, a single run, one run at a time
# (continuous), a finite list of dates (events), or asset events only.
NON_RECURRING_TIMETABLES = frozenset({
    "airflow.timetables.simple.NullTimetable",
    "airflow.timetables.simple.OnceTimetable",
    "airflow.timetables.simple.ContinuousTimetable",
    "airflow.timetables.simple.AssetTriggeredTimetable",
    "airflow.timetables.simple.DatasetTriggeredTimetable",
    "airflow.timetables.simple.PartitionedAssetTimetable",
    "airflow.timetables.simple.PartitionedAtRuntime",
    "airflow.timetables.events.EventsTimetable",
    "airflow.sdk.EventsTimetable",
    "airflow.sdk.PartitionedAssetTimetable",
    "airflow.sdk.PartitionedAtRuntime",
    "airflow.sdk.definitions.timetables.simple.NullTimetable",
    "airflow.sdk.definitions.timetables.simple.OnceTimetable",
    "airflow.sdk.definitions.timetables.simple.ContinuousTimetable",
    "airflow.sdk.definitions.timetables.events.EventsTimetable",
    "airflow.sdk.definitions.timetables.assets.AssetTriggeredTimetable",
    "airflow.sdk.definitions.timetables.assets.PartitionedAssetTimetable",
    "airflow.sdk.definitions.timetables.assets.PartitionedAtRuntime",
})

ASSET_CLASSES = frozenset({
    "airflow.sdk.Asset",
    "airflow.sdk.AssetAlias",
    "airflow.sdk.AssetAll",
    "airflow.sdk.AssetAny",
    "airflow.sdk.definitions.asset.Asset",
    "airflow.datasets.Dataset",
    "airflow.Dataset",
    "airflow.assets.Asset",
})


# Airflow packages that hold no operator: a class there that takes `task_id=` (the Google
# provider's `hooks.dataproc.DataProcJobBuilder`) builds a job spec, not a task.
_NON_OPERATOR_PACKAGES = frozenset({"hooks", "utils", "triggers"})


def is_airflow_non_operator(qualname: str) -> bool:
    """A callee in an Airflow hooks, utils or triggers module: never a task, whatever its keywords."""
    if not qualname.startswith("airflow.") or is_airflow_operator(qualname):
        return False
    return any(part in _NON_OPERATOR_PACKAGES for part in qualname.split(".")[1:-1])


# Operators Airflow ships under names that do not say so (checked in Airflow 3.3.2's standard and
# common-sql providers: every other operator class ends in Operator, Sensor or SensorAsync).
_UNSUFFIXED_OPERATORS = frozenset({"ExternalTaskMarker", "GenericTransfer"})


def is_airflow_operator(qualname: str) -> bool:
    """An operator or sensor class shipped by Airflow core or a provider."""
    if not qualname.startswith("airflow."):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last.endswith(("Operator", "Sensor", "SensorAsync")) or last in _UNSUFFIXED_OPERATORS

# dagguard's own operator: writes the interval with MERGE/replace, idempotent by construction.
IDEMPOTENT_OPERATORS = frozenset({"dagguard.idempotent.IntervalMergeOperator",
                                  "dagguard.idempotent.operators.IntervalMergeOperator"})
