"""Rules on partitioned DAGs (CronPartitionTimetable, PartitionedAssetTimetable,
PartitionedAtRuntime) and @asset DAGs: DG208, DG201 keyed on the partition, DG206/DG207 silent,
DG101-DG108 where @asset takes the argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lint_helpers import codes, lint

CRON = 'CronPartitionTimetable("0 * * * *", timezone="UTC")'
ASSETS = 'PartitionedAssetTimetable(assets=Asset("hourly"), default_partition_mapper=StartOfDayMapper())'
RUNTIME = "PartitionedAtRuntime()"
HEAD = """
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.sdk import (DAG, Asset, CronPartitionTimetable, PartitionedAssetTimetable, PartitionedAtRuntime,
                         StartOfDayMapper, asset, get_current_context, task)
"""


def on(schedule: str, body: str) -> str:
    indented = "\n".join("    " + line if line else line for line in body.strip("\n").splitlines())
    return HEAD + f"\nwith DAG('parts', schedule={schedule}, max_active_runs=1, max_active_tasks=1):\n{indented}\n"


@pytest.mark.parametrize("schedule", [CRON, ASSETS, RUNTIME], ids=["cron", "assets", "runtime"])
@pytest.mark.parametrize(("body", "shown"), [
    ("SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"SELECT * FROM e WHERE ts >= '{{ data_interval_start }}'\")",
     "{{ data_interval_start }}"),
    ("@task\ndef t(data_interval_end=None):\n    return data_interval_end\nt()", "the parameter data_interval_end"),
    ("@task\ndef t(**context):\n    return context['ds']\nt()", 'context["ds"]'),
    ("@task\ndef t():\n    return get_current_context().get('logical_date').isoformat()\nt()", 'context["logical_date"]'),
    ("@task\ndef t(dag_run=None):\n    return dag_run.data_interval_start\nt()", "dag_run.data_interval_start"),
], ids=["template", "parameter", "lookup", "current-context", "run-attribute"])
def test_dg208_flags_every_way_of_reading_the_interval(tmp_path, schedule, body, shown):
    [finding] = [f for f in lint(tmp_path, on(schedule, body)) if f.code == "DG208"]
    assert f"task 't' reads {shown}, but DAG 'parts' is scheduled {schedule.split('(')[0]}, whose runs carry " \
           "a partition key and no data interval or logical date" in finding.message


def test_dg208_names_every_key_a_task_reads_once(tmp_path):
    found = lint(tmp_path, on(CRON, "SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"SELECT "
                                     "'{{ ds }}', '{{ ts }}' WHERE x < '{{ ds }}'\")"))
    [finding] = [f for f in found if f.code == "DG208"]
    assert "reads {{ ds }} and {{ ts }}, but" in finding.message
    assert "UndefinedError" in finding.message


def test_dg208_reads_in_a_helper_the_task_calls(tmp_path):
    code = HEAD + """
def since(context):
    return context["data_interval_start"]

with DAG("parts", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC")):
    @task
    def t(**context):
        return since(context)

    t()
"""
    assert "DG208" in codes(lint(tmp_path, code))


def test_dg208_through_a_schedule_constant(tmp_path):
    code = HEAD + """
HOURLY = CronPartitionTimetable("0 * * * *", timezone="UTC")
with DAG("parts", schedule=HOURLY):
    SQLExecuteQueryOperator(task_id="t", conn_id="w", sql="SELECT '{{ data_interval_end }}'")
"""
    assert "DG208" in codes(lint(tmp_path, code))


@pytest.mark.parametrize("body", [
    "SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"SELECT '{{ partition_key }}'\")",
    "@task\ndef t(partition_date=None, partition_key=None):\n    return partition_key, partition_date\nt()",
    "@task\ndef t(**context):\n    return context.get('data_interval_start') or context['partition_date']\nt()",
    "@task\ndef t(**context):\n    if context.get('ds') is None:\n        return context['partition_key']\nt()",
], ids=["partition-template", "partition-parameters", "fallback-or", "is-none-check"])
def test_dg208_silent_on_partition_reads_and_fallbacks(tmp_path, body):
    assert "DG208" not in codes(lint(tmp_path, on(CRON, body)))


@pytest.mark.parametrize("schedule", ['"@hourly"', 'CronTriggerTimetable("0 * * * *", timezone="UTC")', "None"])
def test_dg208_silent_on_other_schedules(tmp_path, schedule):
    code = on(schedule, "@task\ndef t(**context):\n    return context['data_interval_start']\nt()")
    code = code.replace("from airflow.sdk import (", "from airflow.sdk import (CronTriggerTimetable, ")
    assert "DG208" not in codes(lint(tmp_path, code))


def test_dg208_on_an_asset_function_reads_its_context_parameter_only(tmp_path):
    code = HEAD + f"""
@asset(schedule={CRON})
def reads_context(context):
    return context["data_interval_start"]

# `data_interval_start` without a default is an inlet asset of that name for @asset, not the context's.
@asset(schedule={CRON})
def takes_an_inlet(data_interval_start):
    return data_interval_start
"""
    found = [f for f in lint(tmp_path, code) if f.code == "DG208"]
    assert [f.message.split(" reads")[0] for f in found] == ["task 'reads_context'"]
    assert "DAG 'reads_context' is scheduled CronPartitionTimetable" in found[0].message


def test_dg208_on_an_asset_that_is_also_a_task_reads_its_parameters(tmp_path):
    code = HEAD + f"""
@asset(schedule={CRON})
@task
def both(data_interval_start=None):
    return data_interval_start
"""
    assert "DG208" in codes(lint(tmp_path, code))


def test_dg208_leaves_parameters_idempotent_write_fills_but_not_logical_date(tmp_path):
    code = HEAD + """
from dagguard.idempotent import idempotent_write

with DAG("parts", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC")):
    @task
    @idempotent_write(conn_id="w", table="t", time_column="ts")
    def filled(data_interval_start=None, data_interval_end=None, ds=None):
        return []

    @task
    @idempotent_write(conn_id="w", table="t", time_column="ts")
    def not_filled(logical_date=None):
        return []

    filled(); not_filled()
"""
    found = [f for f in lint(tmp_path, code) if f.code == "DG208"]
    assert [f.message.split(" reads")[0] for f in found] == ["task 'not_filled'"]


# --- DG201: the partition is the key -------------------------------------------------------

@pytest.mark.parametrize("body", [
    "SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"DELETE FROM t WHERE k = '{{ partition_key }}'; "
    "INSERT INTO t SELECT * FROM raw WHERE k = '{{ partition_key }}'\")",
    "SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"INSERT INTO t SELECT * FROM raw WHERE day = "
    "'{{ partition_date }}'\")",
    "@task\ndef t(partition_key=None):\n    PostgresHook('w').insert_rows('t', [(partition_key, 1)], replace=True)\nt()",
    "@task\ndef t():\n    day = get_current_context()['partition_date']\n"
    "    PostgresHook('w').insert_rows('t', [(day, 1)], replace=True)\nt()",
], ids=["sql-key", "sql-date", "python-parameter", "python-context"])
def test_dg201_accepts_the_partition_as_the_key(tmp_path, body):
    assert "DG201" not in codes(lint(tmp_path, on(CRON, body)))


@pytest.mark.parametrize("schedule", [CRON, ASSETS, RUNTIME], ids=["cron", "assets", "runtime"])
def test_dg201_flags_a_partitioned_write_keyed_on_nothing_and_says_partition(tmp_path, schedule):
    code = on(schedule, "@task\ndef t():\n    PostgresHook('w').insert_rows('t', [(1, 1)])\nt()")
    [finding] = [f for f in lint(tmp_path, code) if f.code == "DG201"]
    assert "nothing it writes depends on the run's partition_key or partition_date" in finding.message
    assert "{{ partition_key }}" in finding.help


# --- DG206/DG207 stay on trigger timetables -------------------------------------------------

@pytest.mark.parametrize("schedule", [CRON, ASSETS, RUNTIME], ids=["cron", "assets", "runtime"])
def test_dg206_and_dg207_silent_on_partition_timetables(tmp_path, schedule):
    body = ("SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"SELECT * FROM e WHERE ts >= "
            "'{{ data_interval_start }}' AND ts < '{{ data_interval_end }}' AND day = '{{ ds }}'\")")
    found = codes(lint(tmp_path, on(schedule, body)))
    assert "DG206" not in found and "DG207" not in found
    assert "DG208" in found


def test_dg206_still_flags_the_same_task_on_a_cron_schedule(tmp_path):
    body = ("SQLExecuteQueryOperator(task_id='t', conn_id='w', sql=\"SELECT * FROM e WHERE ts >= "
            "'{{ data_interval_start }}' AND ts < '{{ data_interval_end }}'\")")
    assert "DG206" in codes(lint(tmp_path, on('"@hourly"', body)))


# --- DG101-DG108 on @asset DAGs ---------------------------------------------------------------

def test_asset_dags_get_no_finding_for_arguments_they_cannot_take(tmp_path):
    code = HEAD + f"""
@asset(schedule={CRON})
def hourly_events():
    pass

@asset.multi(schedule="@daily", outlets=[Asset("a"), Asset("b")])
def two():
    pass
"""
    assert [c for c in codes(lint(tmp_path, code)) if c.startswith("DG1")] == []


def test_asset_dag_arguments_are_checked(tmp_path):
    code = HEAD + """
import datetime

@asset(schedule="@daily", description=f"built {datetime.datetime.now()}")
def inflating():
    pass

@asset(schedule_interval="@daily")
def removed_argument():
    pass
"""
    found = codes(lint(tmp_path, code))
    assert "DG108" in found and "DG106" in found


def test_airflow_s_own_example_of_partitions_gets_only_the_expected_findings(tmp_path):
    airflow = pytest.importorskip("airflow")
    example = Path(airflow.__file__).parent / "example_dags" / "example_asset_partition.py"
    found = lint(tmp_path, example.read_text(encoding="utf-8"))
    # The two DAG() ingestions on a cron: 16 runs or tasks at once; the DAG Airflow never
    # triggers, as its name says (its mappers' keys never match).
    assert sorted(codes(found)) == ["DG102", "DG102", "DG103", "DG103", "DG110"]
    [never] = [f for f in found if f.code == "DG110"]
    assert "DAG 'player_odds_quality_check_wont_ever_to_trigger' waits for a partition of every one of " \
           "combined_player_stats & team_a_player_stats & Asset.ref(name=\"team_b_player_stats\"), but their " \
           "partition mappers emit keys that never match ('%Y' from StartOfYearMapper for combined_player_stats, " \
           "'%Y-%m-%dT%H' from StartOfHourMapper for team_a_player_stats); Airflow never triggers a run" \
           == never.message


# --- DG110: mappers whose keys never match --------------------------------------------------

MAPPERS = """
from airflow.sdk import (DAG, Asset, AssetAll, PartitionedAssetTimetable, StartOfDayMapper, StartOfHourMapper,
                         StartOfMonthMapper, asset)
from my_mappers import BusinessDayMapper
"""


@pytest.mark.parametrize(("schedule", "flagged"), [
    ("PartitionedAssetTimetable(assets=AssetAll(Asset('a'), Asset('b')), partition_mapper_config="
     "{Asset('a'): StartOfDayMapper()}, default_partition_mapper=StartOfMonthMapper())", True),
    ("PartitionedAssetTimetable(assets=Asset('a') & hourly_events, partition_mapper_config="
     "{Asset.ref(name='hourly_events'): StartOfHourMapper()}, default_partition_mapper=StartOfDayMapper())", True),
    # Each has an entry, matched by URI: both emit days.
    ("PartitionedAssetTimetable(assets=Asset(name='a', uri='s3://a') & Asset(name='b', uri='s3://b'), "
     "partition_mapper_config={Asset.ref(uri='s3://a'): StartOfDayMapper(), Asset.ref(uri='s3://b'): "
     "StartOfDayMapper()})", False),
    # A mapper dagguard cannot read, a config it cannot read, a condition of assets it cannot read.
    ("PartitionedAssetTimetable(assets=Asset('a') & Asset('b'), partition_mapper_config="
     "{Asset('a'): BusinessDayMapper()}, default_partition_mapper=StartOfMonthMapper())", False),
    ("PartitionedAssetTimetable(assets=Asset('a') & Asset('b'), partition_mapper_config=CONFIG, "
     "default_partition_mapper=StartOfMonthMapper())", False),
    ("PartitionedAssetTimetable(assets=Asset('a') & load_asset(), partition_mapper_config="
     "{Asset('a'): StartOfDayMapper()}, default_partition_mapper=StartOfMonthMapper())", False),
    ("PartitionedAssetTimetable(assets=Asset('a') & Asset('b'), partition_mapper_config="
     "{Asset('a'): StartOfDayMapper(output_format=FORMAT)}, default_partition_mapper=StartOfMonthMapper())", False),
], ids=["asset-all", "asset-function-by-name", "by-uri", "custom-mapper", "config-not-static",
        "asset-not-static", "format-not-static"])
def test_dg110(tmp_path, schedule, flagged):
    code = MAPPERS + f"""
CONFIG = load_config()
FORMAT = load_format()

@asset(schedule=None)
def hourly_events():
    pass

with DAG("joined", schedule={schedule}):
    pass
"""
    assert ("DG110" in codes(lint(tmp_path, code))) is flagged


def test_dg105_an_asset_without_schedule_fails_to_load(tmp_path):
    code = HEAD + "\n@asset(uri='s3://x')\ndef orders():\n    pass\n"
    [finding] = [f for f in lint(tmp_path, code) if f.code == "DG105"]
    assert finding.severity == "error"
    assert "(@asset) passes no schedule, which @asset requires; the file fails to load with TypeError" \
        in finding.message


ASSET_ARGUMENTS = """
import sys
from airflow.sdk import Asset, asset

for decorator, name in ((asset, "uri"), (asset, "catchup"), (asset, "max_active_runs"), (asset, "start_date"),
                        (asset.multi, "uri"), (asset.multi, "outlets"), (asset, "tags"), (asset, "description")):
    kwargs = {"schedule": None, name: [Asset("a")] if name == "outlets" else None}
    if decorator is asset.multi and name != "outlets":
        kwargs["outlets"] = [Asset("a")]
    try:
        decorator(**kwargs)
        print("ACCEPTS", decorator.__qualname__, name)
    except TypeError:
        print("REJECTS", decorator.__qualname__, name)
"""


def test_dg106_flags_exactly_the_asset_arguments_airflow_rejects(tmp_path):
    pytest.importorskip("airflow.sdk")
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", ASSET_ARGUMENTS], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "AIRFLOW_HOME": str(tmp_path / "home")})
    answers = [line.split() for line in run.stdout.splitlines() if line.startswith(("ACCEPTS", "REJECTS"))]
    assert len(answers) == 8, run.stderr[-2000:]
    for verdict, qualname, name in answers:
        decorator = "asset.multi" if qualname == "asset.multi" else "asset"
        outlets = "" if name == "outlets" or decorator == "asset" else ", outlets=[Asset('a')]"
        code = HEAD + f"\n@{decorator}(schedule=None, {name}=None{outlets})\ndef f():\n    pass\n"
        flagged = [f for f in lint(tmp_path, code) if f.code == "DG106"]
        assert bool(flagged) is (verdict == "REJECTS"), (qualname, name)
