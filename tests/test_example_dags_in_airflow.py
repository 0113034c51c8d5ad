"""The example DAGs under real Airflow 3.3: the good ones load, and where dagguard says Airflow
rejects a file, Airflow's own DagBag rejects it for that reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("airflow")

LOAD = """
import json, sys, warnings
warnings.simplefilter("ignore")
from airflow.dag_processing.dagbag import DagBag
out = {}
for path in sys.argv[1:]:
    bag = DagBag(dag_folder=path)
    out[path.rsplit("/", 1)[-1]] = {"dags": sorted(bag.dag_ids),
                                    "errors": [e.strip().splitlines()[-1] for e in bag.import_errors.values()]}
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def loaded(repo_root, tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow_home")
    files = sorted(str(p) for p in (repo_root / "example_dags").glob("*.py"))
    # The variable parse_time_reads.py reads at parse time (its DG301), so the file gets as far
    # as its duplicate task id.
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW_VAR_EVENTS_TABLE": "events"}
    run = subprocess.run([sys.executable, "-c", LOAD, *files], capture_output=True, text=True, env=env,
                         timeout=600)
    line = next(line for line in run.stdout.splitlines() if line.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def test_good_examples_load(loaded):
    assert loaded["clean_signups_daily.py"] == {"dags": ["signups_daily"], "errors": []}
    assert loaded["orders_hourly_fixed.py"] == {"dags": ["orders_hourly_fixed"], "errors": []}
    # The incident DAG loads fine: its problems only show once it runs.
    assert loaded["incident_orders_hourly.py"]["errors"] == []


def test_dg106_argument_is_a_type_error_in_airflow(loaded):
    errors = loaded["legacy_airflow2_args.py"]["errors"]
    assert errors and "unexpected keyword argument 'schedule_interval'" in errors[0]


def test_dg303_duplicate_task_id_breaks_the_import(loaded):
    result = loaded["parse_time_reads.py"]
    assert result["dags"] == []
    assert "DuplicateTaskIdFound" in result["errors"][0] and "'load'" in result["errors"][0]
