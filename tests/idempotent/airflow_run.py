"""Running a test module's DAGs under real Airflow 3.3, in a subprocess: a temporary AIRFLOW_HOME
with its own metadata DB, the DAG file in its DAGs folder, and a SQLite warehouse the DAGs write
to, reached as the Airflow connection `warehouse`."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Optional

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def run_dags(base: Path, dag_file: str, runner: str, warehouse_sql: str, *,
             extra_env: Optional[Mapping[str, str]] = None, timeout: int = 300,
             shown: int = 4000) -> tuple[sqlite3.Connection, str]:
    """Copy airflow_dags/`dag_file` into a new Airflow home under `base`, make the warehouse with
    `warehouse_sql`, run the `runner` script there; return the warehouse connection and the
    runner's output (stdout then stderr). The runner must exit 0."""
    home, dags = base / "home", base / "home" / "dags"
    dags.mkdir(parents=True)
    shutil.copy(HERE / "airflow_dags" / dag_file, dags)
    warehouse = base / "warehouse.db"
    conn = sqlite3.connect(warehouse)
    conn.executescript(warehouse_sql)
    conn.commit()
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        # A sqlite:/// URI breaks SqliteHook; JSON with an absolute host works (FACTS.md).
        "AIRFLOW_CONN_WAREHOUSE": json.dumps({"conn_type": "sqlite", "host": str(warehouse)}),
        "WAREHOUSE_PATH": str(warehouse),
        **(extra_env or {}),
    })
    result = subprocess.run([sys.executable, str(HERE / runner)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=timeout)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        conn.close()
        raise AssertionError(output[-shown:])
    return conn, output
