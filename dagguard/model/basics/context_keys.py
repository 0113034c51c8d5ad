"""Airflow's template and context keys, grouped by what they say about a run's data interval.

Checked against the `Context` TypedDict of Airflow 3.3.2 (`airflow/sdk/definitions/context.py`)
and the keys a real 3.3 run rejects with `UndefinedError` (see /work/shared/FACTS.md).
"""

from __future__ import annotations

# Keys whose value is derived from the run's interval: a write filtered, keyed or named with
# one of them differs from one interval to the next. The removed Airflow 2 keys are listed too:
# they were interval-derived, and DG205 reports their removal separately.
INTERVAL_KEYS = frozenset({
    "data_interval_start", "data_interval_end", "ds", "ds_nodash", "ts", "ts_nodash",
    "ts_nodash_with_tz", "logical_date", "partition_key", "partition_date",
    "execution_date", "next_ds", "next_ds_nodash", "prev_ds", "prev_ds_nodash", "tomorrow_ds",
    "tomorrow_ds_nodash", "yesterday_ds", "yesterday_ds_nodash", "next_execution_date",
    "prev_execution_date",
})

# Keys that name the end of the interval (or the start of the next one).
END_KEYS = frozenset({"data_interval_end", "next_ds", "next_ds_nodash", "next_execution_date",
                      "tomorrow_ds", "tomorrow_ds_nodash"})

# Keys equal to data_interval_end on a trigger timetable's run (start == end == logical date).
SAME_INSTANT_START_KEYS = frozenset({"data_interval_start", "logical_date", "ts", "execution_date"})

# Keys that are the run's logical date itself (formatted or not): on a trigger timetable, the
# moment the run starts. `execution_date` is left to DG205 (removed in Airflow 3).
RUN_DATE_KEYS = frozenset({"ds", "ds_nodash", "ts", "ts_nodash", "ts_nodash_with_tz", "logical_date",
                           "data_interval_start"})

# Keys a run without a logical date lacks: partitioned runs (Airflow 3.2+) and some manual or
# asset-triggered ones. Airflow 3.3.2's task runner sets them only `if logical_date`
# (sdk/execution_time/task_runner.py); a template naming one raises UndefinedError.
DATELESS_KEYS = frozenset({
    "logical_date", "ds", "ds_nodash", "ts", "ts_nodash", "ts_nodash_with_tz",
    "data_interval_start", "data_interval_end",
    "prev_data_interval_start_success", "prev_data_interval_end_success",
})
# Attributes of the run that are None on such a run.
DATELESS_RUN_ATTRIBUTES = frozenset({"logical_date", "data_interval_start", "data_interval_end"})

# Objects whose attributes of the same names are interval values: `dag_run.logical_date`.
INTERVAL_OWNERS = frozenset({"dag_run", "ti", "task_instance"})

# Removed in Airflow 3, with what to use instead.
REMOVED_KEYS: dict[str, str] = {
    "execution_date": "logical_date",
    "next_ds": "data_interval_end | ds",
    "next_ds_nodash": "data_interval_end | ds_nodash",
    "next_execution_date": "data_interval_end",
    "prev_ds": "prev_data_interval_start_success | ds",
    "prev_ds_nodash": "prev_data_interval_start_success | ds_nodash",
    "prev_execution_date": "prev_data_interval_start_success",
    "prev_execution_date_success": "prev_data_interval_start_success",
    "tomorrow_ds": "macros.ds_add(ds, 1)",
    "tomorrow_ds_nodash": "macros.ds_add(ds, 1) | replace('-', '')",
    "yesterday_ds": "macros.ds_add(ds, -1)",
    "yesterday_ds_nodash": "macros.ds_add(ds, -1) | replace('-', '')",
    "conf": "airflow.configuration.conf in code, or a Variable",
    "triggering_dataset_events": "triggering_asset_events",
}

# Attributes of dag_run/ti that Airflow 3 removed along with the context keys.
REMOVED_ATTRIBUTES = frozenset({"execution_date", "next_execution_date", "prev_execution_date"})
# The run's `external_trigger` went with its column (migration 0059, Airflow 3.0): the run in a
# task's context has `run_type` instead, and raises AttributeError for the old name.
REMOVED_DAG_RUN_ATTRIBUTES = REMOVED_ATTRIBUTES | {"external_trigger"}

# Every key an Airflow 2 or 3 template can see: a template root outside this set is a
# user-defined macro or variable whose value dagguard cannot know.
CONTEXT_KEYS = frozenset({
    "conn", "dag", "dag_run", "data_interval_end", "data_interval_start", "ds", "ds_nodash",
    "expanded_ti_count", "exception", "inlets", "inlet_events", "logical_date", "macros",
    "map_index_template", "outlets", "outlet_events", "params", "partition_date",
    "partition_key", "prev_data_interval_start_success", "prev_data_interval_end_success",
    "prev_start_date_success", "prev_end_date_success", "reason", "run_id", "start_date",
    "task", "task_reschedule_count", "task_instance", "task_instance_key_str", "test_mode",
    "templates_dict", "ti", "triggering_asset_events", "triggering_dataset_events", "try_number",
    "ts", "ts_nodash", "ts_nodash_with_tz", "var", "run_after",
    # Jinja built-ins usable as roots
    "range", "dict", "lipsum", "cycler", "joiner", "namespace", "loop", "true", "false", "none",
    "True", "False", "None",
}) | frozenset(REMOVED_KEYS) | INTERVAL_KEYS

