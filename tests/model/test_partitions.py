"""Partition timetables, partition mappers and @asset DAGs in the DAG model."""

from __future__ import annotations

import datetime as dt
import textwrap

import libcst as cst
import pytest

from dagguard.model.dags.builder import build_file_model
from dagguard.model.schedules.partitions import Mapper, key_shape, partition_schedule, shapes_can_match


def dags(code: str):
    return {dag.dag_id: dag for dag in build_file_model(cst.parse_module(textwrap.dedent(code))).dags}


def test_asset_dag_id_comes_from_dag_id_then_name_then_the_function():
    found = dags("""
        from airflow.sdk import asset, CronPartitionTimetable

        @asset(schedule="@daily")
        def plain():
            pass

        @asset(name="named_asset", schedule=None)
        def by_name():
            pass

        @asset(name="named_too", dag_id="explicit_dag", schedule=None)
        def by_dag_id():
            pass
    """)
    assert sorted(found) == ["explicit_dag", "named_asset", "plain"]
    assert {d.found_by for d in found.values()} == {"@asset"}
    assert found["plain"].args.get("schedule").value == "@daily"
    assert found["plain"].args.get("catchup").value is False   # Airflow passes catchup=False
    assert [t.task_id for t in found["named_asset"].tasks] == ["by_name"]   # task_id: the function's name


def test_multi_asset_dag_is_named_after_its_function_and_aliases_resolve():
    found = dags("""
        from airflow.sdk import Asset
        from airflow.sdk import asset as make_asset

        @make_asset.multi(schedule="@hourly", outlets=[Asset("a"), Asset("b")])
        def both():
            pass
    """)
    assert list(found) == ["both"]
    assert found["both"].found_by == "@asset.multi"
    assert [t.task_id for t in found["both"].tasks] == ["both"]


def test_an_asset_from_another_library_is_no_dag():
    assert dags("""
        from dagster import asset

        @asset(schedule="@daily")
        def not_airflow():
            pass
    """) == {}


def test_a_name_that_is_not_static_leaves_the_dag_id_unknown():
    found = dags("""
        import os
        from airflow.sdk import asset

        @asset(name=os.environ["NAME"], schedule=None)
        def f():
            pass
    """)
    assert list(found) == [None]


def test_an_asset_function_that_is_also_a_task_is_that_task():
    found = dags("""
        from airflow.sdk import asset, task

        @asset(schedule=None)
        @task(task_id="materialize", retries=2)
        def f():
            pass
    """)
    (task,) = found["f"].tasks
    assert (task.task_id, task.operator, task.args.get("retries").value) == ("materialize", "airflow.sdk.task", 2)


def test_asset_dags_accept_only_the_arguments_airflow_gives_them():
    dag = dags("from airflow.sdk import asset\n@asset(schedule=None)\ndef f():\n    pass\n")["f"]
    assert dag.accepts("schedule") and dag.accepts("tags")
    assert not dag.accepts("max_active_runs") and dag.keyword_for("max_active_runs") is None


@pytest.mark.parametrize(("schedule", "cron", "timezone", "key_format", "period"), [
    ('CronPartitionTimetable("0 * * * *", timezone="UTC")', "0 * * * *", "UTC", "%Y-%m-%dT%H:%M:%S",
     dt.timedelta(hours=1)),
    ('CronPartitionTimetable("@daily", timezone="Europe/Paris", key_format="%Y-%m-%d")', "0 0 * * *",
     "Europe/Paris", "%Y-%m-%d", dt.timedelta(days=1)),
    ('CronPartitionTimetable("0 0 1 * *", timezone=TZ)', "0 0 1 * *", None, "%Y-%m-%dT%H:%M:%S", None),
])
def test_cron_partitions(schedule, cron, timezone, key_format, period):
    found = dags(f"""
        from airflow.sdk import DAG, CronPartitionTimetable
        TZ = load_timezone()
        with DAG("d", schedule={schedule}):
            pass
    """)
    read = partition_schedule(found["d"])
    assert (read.kind, read.cron, read.timezone, read.key_format, read.period) == (
        "cron", cron, timezone, key_format, period)


def test_partitioned_at_runtime_through_a_module_constant():
    found = dags("""
        from airflow.sdk import DAG, PartitionedAtRuntime
        SCHEDULE = PartitionedAtRuntime()
        with DAG("d", schedule=SCHEDULE):
            pass
    """)
    assert partition_schedule(found["d"]).kind == "runtime"


def test_asset_mappers_by_name_then_uri_then_default():
    found = dags("""
        from airflow.sdk import (DAG, Asset, PartitionedAssetTimetable, StartOfDayMapper, StartOfHourMapper,
                                 StartOfMonthMapper)
        hourly = Asset(uri="s3://b/hourly", name="hourly")
        daily = Asset(uri="s3://b/daily", name="daily")
        with DAG("d", schedule=PartitionedAssetTimetable(
                assets=hourly & daily & Asset.ref(uri="s3://b/monthly"),
                partition_mapper_config={Asset.ref(name="hourly"): StartOfDayMapper(),
                                         Asset(uri="s3://b/monthly", name="other"): StartOfMonthMapper()},
                default_partition_mapper=StartOfHourMapper(output_format="%Y%m%d%H"))):
            pass
    """)
    read = partition_schedule(found["d"])
    assert read.every_asset
    assert [(a.text, a.mapper.name, a.mapper.key_format) for a in read.assets] == [
        ("hourly", "StartOfDayMapper", "%Y-%m-%d"),
        ("daily", "StartOfHourMapper", "%Y%m%d%H"),
        ('Asset.ref(uri="s3://b/monthly")', "StartOfMonthMapper", "%Y-%m")]


def test_any_of_assets_is_not_every_asset_and_unknown_config_reads_no_mappers():
    found = dags("""
        from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, StartOfDayMapper
        a, b = Asset("a"), Asset("b")
        with DAG("any", schedule=PartitionedAssetTimetable(assets=Asset("a") | Asset("b"))):
            pass
        with DAG("config", schedule=PartitionedAssetTimetable(assets=Asset("a") & Asset("b"),
                                                              partition_mapper_config=load_config())):
            pass
    """)
    assert not partition_schedule(found["any"]).every_asset
    assert partition_schedule(found["config"]).assets == ()


def test_other_schedules_are_no_partitions():
    found = dags("""
        from airflow.sdk import DAG, CronTriggerTimetable
        with DAG("cron", schedule="@daily"):
            pass
        with DAG("trigger", schedule=CronTriggerTimetable("@daily", timezone="UTC")):
            pass
    """)
    assert [partition_schedule(dag) for dag in found.values()] == [None, None]


def _shape(key_format=None, fixed_key=None):
    return key_shape(Mapper("M", "M", key_format, fixed_key))


@pytest.mark.parametrize(("first", "other", "can"), [
    (_shape("%Y"), _shape("%Y-%m-%dT%H"), False),
    (_shape("%Y-%m-%d"), _shape("%Y-%m-%d"), True),
    (_shape("%Y-%m-%d"), _shape("%Y%m%d"), False),
    (_shape("%Y"), _shape(fixed_key="2026"), True),            # a fixed key a year can equal
    (_shape("%Y"), _shape(fixed_key="all_regions"), False),
    (_shape(fixed_key="a"), _shape(fixed_key="b"), False),
    (_shape("%Y-Q{quarter}"), _shape("%Y-Q1"), True),
    (_shape("%Y-%m-01"), _shape("%Y-%m-%d"), True),            # literal digits against a day
    (_shape("%Y-%m-01"), _shape("%Y-%m-xx"), False),
])
def test_key_shapes(first, other, can):
    assert shapes_can_match(first, other) is can


@pytest.mark.parametrize("key_format", ["%B %Y", "%-d", "%Y%z", None])
def test_formats_of_no_fixed_width_have_no_shape(key_format):
    assert _shape(key_format) is None


def test_an_asset_known_by_name_alone_left_unmatched_by_the_config_has_no_known_mapper():
    found = dags("""
        from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, StartOfDayMapper, StartOfYearMapper
        with DAG("d", schedule=PartitionedAssetTimetable(
                assets=Asset.ref(name="hourly") & Asset("daily"),
                partition_mapper_config={Asset.ref(uri="s3://lake/hourly"): StartOfDayMapper()},
                default_partition_mapper=StartOfYearMapper())):
            pass
    """)
    read = partition_schedule(found["d"])
    assert [a.mapper.name if a.mapper else None for a in read.assets] == [None, "StartOfYearMapper"]
