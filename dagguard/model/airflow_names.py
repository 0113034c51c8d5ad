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
    "airflow.sdk.dag",
    "airflow.sdk.definitions.dag.dag",
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
})
DATA_INTERVAL_TIMETABLES = frozenset({
    "airflow.timetables.interval.CronDataIntervalTimetable",
    "airflow.timetables.interval.DeltaDataIntervalTimetable",
    "airflow.sdk.CronDataIntervalTimetable",
    "airflow.sdk.DeltaDataIntervalTimetable",
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


def is_airflow_operator(qualname: str) -> bool:
    """An operator or sensor class shipped by Airflow core or a provider."""
    if not qualname.startswith("airflow."):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last.endswith(("Operator", "Sensor")) or last == "BaseOperator"
