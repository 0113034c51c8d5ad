"""End to end on Airflow 3.3 with Spark: `@idempotent_write` under `@task.pyspark` (the
apache-airflow-providers-apache-spark decorator) writes through the `spark` session the
provider passes to the task; the DAG runs twice for one logical date with dag.test()."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("airflow.sdk")
pytest.importorskip("airflow.providers.apache.spark")
pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")

DAG_FILE = Path(__file__).parent / "airflow_dags" / "dag_spark.py"
REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.airflow, pytest.mark.spark]


def test_a_pyspark_task_run_twice_writes_its_interval_once(tmp_path):
    warehouse, home = tmp_path / "warehouse", tmp_path / "home"
    warehouse.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    env.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__DAGS_FOLDER": str(DAG_FILE.parent),
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{tmp_path / 'airflow.db'}",
                "DAGGUARD_WAREHOUSE": str(warehouse), "PYTHONPATH": str(REPO)})
    result = subprocess.run([sys.executable, str(DAG_FILE)], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and output.count("STATE success") == 2, output[-4000:]
    # Read back without Spark: three hourly partitions of two rows, written once.
    partitions = sorted(p.name for p in (warehouse / "events").iterdir() if p.name.startswith("ts="))
    assert len(partitions) == 3
    assert sum(pq.read_table(p).num_rows for p in (warehouse / "events").glob("ts=*/*.parquet")) == 6
    # The ledger, a Parquet table beside it: the second run found the interval unchanged.
    ledger = pq.read_table(warehouse / "dagguard_write_log").to_pylist()
    assert sorted((row["task_id"], row["rows_inserted"], row["row_count"]) for row in ledger) == [
        ("export_events", 0, 6), ("export_events", 6, 6)]
    assert {row["dag_id"] for row in ledger} == {"spark_daily"}
