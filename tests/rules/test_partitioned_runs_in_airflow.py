"""DG208 against a real Airflow 3.3 run without a logical date, as partitioned runs are
(CronPartitionTimetable gives them data_interval=None): the tasks it flags fail or see None,
the one reading the partition does not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lint_helpers import lint

pytest.importorskip("airflow.sdk")
pytestmark = pytest.mark.airflow

HERE = Path(__file__).parent
DAG_FILE = HERE / "airflow_dags" / "partitioned_hourly.py"
RUNNER = """
import os, sys
from airflow.utils.db import initdb
initdb()
sys.path.insert(0, os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
import partitioned_hourly
run = partitioned_hourly.dag.test(logical_date=None)
for ti in run.get_task_instances():
    print(f"TI {ti.task_id} {ti.state}", flush=True)
"""


@pytest.fixture(scope="module")
def airflow_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("airflow")
    home, dags, out = base / "home", base / "home" / "dags", base / "out"
    dags.mkdir(parents=True)
    out.mkdir()
    shutil.copy(DAG_FILE, dags)
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    env.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
                "DAGGUARD_OUT": str(out)})
    run = subprocess.run([sys.executable, "-c", RUNNER], capture_output=True, text=True, env=env, timeout=600)
    states = dict(line.split()[1:] for line in run.stdout.splitlines() if line.startswith("TI "))
    assert states, run.stdout[-3000:] + run.stderr[-3000:]
    return states, out


def test_the_tasks_dg208_flags_fail_or_see_none_and_the_partition_is_there(airflow_run, tmp_path):
    states, out = airflow_run
    assert states == {"template": "failed", "lookup": "failed", "parameter": "success", "partition": "success"}
    assert json.loads((out / "parameter.json").read_text()) == "None"
    assert json.loads((out / "partition.json").read_text()) == ["partition_date", "partition_key"]
    findings = lint(tmp_path, DAG_FILE.read_text())
    flagged = {line for line in (f.line for f in findings if f.code == "DG208")}
    source = DAG_FILE.read_text().splitlines()
    assert {source[line - 1].strip().split("(")[0] for line in flagged} == {
        'BashOperator', "def parameter", 'return context["ds"]'}
