"""Helpers for the doctor tests: the incident in real Airflow 3.3 metadata DBs, run in subprocesses.

Airflow reads its configuration once per process, so everything Airflow does here runs in
subprocesses with AIRFLOW_HOME and AIRFLOW__DATABASE__SQL_ALCHEMY_CONN set: `airflow db
migrate`, build_incident.py (the scenario, built with Airflow's own functions) and
airflow_oracle.py (the scheduler's own promotion query). Doctor itself runs as `python -m
dagguard doctor`, also in a subprocess, as a user would run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
AIRFLOW = Path(sys.executable).with_name("airflow")
# Runs queued before and after the "deploy" time of the flood scenario; tests pass
# --max-queued FLOOD_THRESHOLD so the flood stays small and fast to build.
FLOOD_BEFORE, FLOOD_AFTER, FLOOD_THRESHOLD = 5, 25, 20
PG_DATABASE = "airflow_doctor"


@dataclass(frozen=True)
class Incident:
    """A metadata DB holding the scenario, how to reach it, and the ids the tests assert on."""

    backend: str
    url: str  # SQLAlchemy URL for doctor
    airflow_env: dict
    facts: dict


def airflow_env(home: Path, conn: str) -> dict:
    """The environment of an Airflow subprocess bound to one metadata DB."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": conn,
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        # The oracle must see every promotable run, not the scheduler's first 20 per loop.
        "AIRFLOW__SCHEDULER__MAX_DAGRUNS_PER_LOOP_TO_SCHEDULE": "10000",
        "PYTHONWARNINGS": "ignore",
    })
    return env


def run_airflow(args: list[str], env: dict, timeout: int = 300) -> str:
    """Run an Airflow command or script; fail the test with its output if it fails."""
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} failed ({result.returncode}):\n"
                    f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def tagged_json(output: str, tag: str):
    """The JSON payload a helper script printed after `tag`."""
    for line in output.splitlines():
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1:])
    raise AssertionError(f"no {tag} line in output:\n{output[-2000:]}")


def make_home(base: Path) -> Path:
    """An AIRFLOW_HOME with the scenario DAGs in its dags folder."""
    (base / "dags").mkdir(parents=True)
    shutil.copy(HERE / "scenario_dags" / "doctor_scenario_dags.py", base / "dags")
    return base


def migrate_and_build(home: Path, conn: str) -> dict:
    """`airflow db migrate`, then the scenario; returns build_incident.py's facts."""
    env = airflow_env(home, conn)
    run_airflow([str(AIRFLOW), "db", "migrate"], env)
    output = run_airflow([sys.executable, str(HERE / "build_incident.py"),
                          str(FLOOD_BEFORE), str(FLOOD_AFTER)], env)
    return tagged_json(output, "DOCTOR-FACTS")


def scheduler_would_promote(incident: Incident) -> set[tuple[str, str]]:
    """(dag_id, run_id) of the runs Airflow's DagRun.get_queued_dag_runs_to_set_running returns."""
    output = run_airflow([sys.executable, str(HERE / "airflow_oracle.py")], incident.airflow_env)
    return {tuple(pair) for pair in tagged_json(output, "DOCTOR-ORACLE")}


@dataclass(frozen=True)
class DoctorRun:
    """One `dagguard doctor` process: exit code and output."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


def run_doctor(*args: str, env: dict | None = None) -> DoctorRun:
    """Run `python -m dagguard doctor ARGS` without any Airflow configuration in the environment."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW")}
    clean.update(env or {})
    result = subprocess.run([sys.executable, "-m", "dagguard", "doctor", *args], env=clean,
                            capture_output=True, text=True, timeout=120)
    return DoctorRun(result.returncode, result.stdout, result.stderr)


def without_ages(findings: list[dict]) -> list[dict]:
    """Findings with the minutes a run has been queued blanked: two doctor runs compared with
    each other may straddle a minute (a flaky failure under load before this)."""
    import re

    return [{**f, "message": re.sub(r"queued for \d+ min", "queued for N min", f["message"])}
            for f in findings]
