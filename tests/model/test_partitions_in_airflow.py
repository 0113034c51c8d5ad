"""Airflow 3.3.2's own example of partitioned DAGs (`airflow/example_dags/example_asset_partition.py`,
read from the installed package at test time): dagguard lists every DAG Airflow's DagBag loads
from it, @asset ones included, each with the partition timetable, cron, timezone, key format and
mappers Airflow builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.model.dags.builder import build_file_model
from dagguard.model.schedules.partitions import never_matching, partition_schedule
from tests.lint_helpers import NOW

if not os.environ.get("CI"):
    pytest.importorskip("airflow")

LOAD = """
import json, sys, warnings
warnings.simplefilter("ignore")
from airflow.dag_processing.dagbag import DagBag

def mapper_format(mapper):
    name = type(mapper).__name__
    if name == "RollupMapper":
        return mapper_format(mapper.upstream_mapper)
    if name == "FanOutMapper":
        return mapper_format(mapper.downstream_mapper)
    return getattr(mapper, "output_format", None)

def asset_names(condition):
    if hasattr(condition, "objects"):   # AssetAll / AssetAny
        return [name for part in condition.objects for name in asset_names(part)]
    return [condition.name]

from airflow.serialization.serialized_objects import DagSerialization

bag = DagBag(dag_folder=sys.argv[1])
out = {"errors": list(bag.import_errors.values()), "dags": {}}
for dag in bag.dags.values():
    timetable = type(dag.timetable).__name__
    entry = {"timetable": timetable, "catchup": dag.catchup, "tasks": sorted(dag.task_ids)}
    if timetable == "CronPartitionTimetable":
        entry.update(cron=dag.timetable.expression, timezone=str(dag.timetable.timezone),
                     key_format=dag.timetable.key_format)
    if timetable == "PartitionedAssetTimetable":
        entry["default_mapper"] = type(dag.timetable.default_partition_mapper).__name__
        # The scheduler's own timetable, from the serialized DAG: its get_partition_mapper picks
        # each asset's mapper as the scheduler does.
        core = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
        entry["assets"] = {name: mapper_format(core.get_partition_mapper(name=name))
                           for name in asset_names(dag.timetable.asset_condition)}
    out["dags"][dag.dag_id] = entry
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def example_file() -> Path:
    import airflow

    path = Path(airflow.__file__).parent / "example_dags" / "example_asset_partition.py"
    assert path.is_file(), "apache-airflow 3.3.2 ships example_asset_partition.py"
    return path


@pytest.fixture(scope="module")
def airflow_dags(example_file, tmp_path_factory):
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path_factory.mktemp("airflow_home")),
           "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    run = subprocess.run([sys.executable, "-c", LOAD, str(example_file)], capture_output=True, text=True,
                         env=env, timeout=300)
    line = next((line for line in run.stdout.splitlines() if line.startswith("RESULT")), None)
    assert line is not None, run.stderr
    loaded = json.loads(line[len("RESULT"):])
    assert loaded["errors"] == []
    return loaded["dags"]


@pytest.fixture(scope="module")
def listed(example_file, tmp_path_factory):
    settings = Settings(config_path=tmp_path_factory.mktemp("config") / "pyproject.toml")
    return {dag.dag_id: dag for dag in check_paths([example_file], settings=settings, now=NOW).dags}


@pytest.fixture(scope="module")
def modelled(example_file):
    file = build_file_model(cst.parse_module(example_file.read_text(encoding="utf-8")))
    return {dag.dag_id: dag for dag in file.dags}


def test_every_dag_airflow_loads_is_listed_and_no_other(airflow_dags, listed):
    assert sorted(listed) == sorted(airflow_dags)
    assert len(listed) == 21


def test_no_schedule_is_unknown(listed):
    assert [dag_id for dag_id, dag in listed.items() if "unknown" in dag.schedule] == []


def test_each_schedule_is_the_timetable_airflow_builds(airflow_dags, listed):
    for dag_id, loaded in airflow_dags.items():
        dag = listed[dag_id]
        assert dag.schedule.startswith(loaded["timetable"] + "("), dag_id
        assert dag.partition.endswith("no data interval"), dag_id
        if loaded["timetable"] == "CronPartitionTimetable":
            assert dag.schedule == f"CronPartitionTimetable({loaded['cron']}, timezone={loaded['timezone']})"
            assert dag.partition.startswith(f"key {loaded['key_format']} every ")


def test_asset_dags_are_found_by_their_decorator_with_airflow_s_catchup(airflow_dags, listed):
    assets = {dag_id for dag_id, dag in listed.items() if dag.found_by == "@asset"}
    assert assets == {"team_b_player_stats", "team_c_player_stats", "compute_player_odds",
                      "regional_stats_breakdown", "live_region_player_stats", "multi_region_player_stats"}
    for dag_id in assets:
        assert airflow_dags[dag_id]["catchup"] is False
        assert listed[dag_id].catchup == "False"


def test_each_dag_has_the_tasks_airflow_loads(airflow_dags, modelled):
    for dag_id, loaded in airflow_dags.items():
        assert sorted(task.task_id for task in modelled[dag_id].tasks) == loaded["tasks"], dag_id


def test_mappers_and_their_key_formats_are_airflow_s(airflow_dags, modelled):
    for dag_id, loaded in airflow_dags.items():
        if loaded["timetable"] != "PartitionedAssetTimetable":
            continue
        schedule = partition_schedule(modelled[dag_id])
        assert schedule is not None and schedule.default_mapper is not None, dag_id
        assert schedule.default_mapper.name == loaded["default_mapper"], dag_id
        assert {asset.name: asset.mapper.key_format for asset in schedule.assets} == loaded["assets"], dag_id


def test_the_dag_airflow_never_triggers_is_the_only_one_whose_keys_never_match(modelled):
    never = {dag_id for dag_id, dag in modelled.items()
             if (s := partition_schedule(dag)) is not None and never_matching(s) is not None}
    assert never == {"player_odds_quality_check_wont_ever_to_trigger"}
