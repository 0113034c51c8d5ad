"""Doctor reads without writing, and without Airflow."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.exc import DBAPIError

from dagguard.doctor.connect import DatabaseTarget
from dagguard.doctor.diagnose import open_database
from tests.doctor.support import FLOOD_THRESHOLD, Incident, run_doctor, without_ages


def test_diagnosis_transaction_refuses_writes(incident: Incident, monkeypatch):
    # In this process, keep Airflow out of sys.modules: other tests check what their imports load.
    monkeypatch.setenv("DAGGUARD_DOCTOR_DECLARED_TABLES", "1")
    with open_database(DatabaseTarget(incident.url, "test")) as database:
        with pytest.raises(DBAPIError, match="(?i)read.?only"):
            database.conn.execute(update(database.tables.backfill).values(is_paused=False))


def test_sqlite_file_is_unchanged_by_diagnosis_and_dry_run(sqlite_incident: Incident):
    path = Path(sqlite_incident.url.removeprefix("sqlite:///"))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert run_doctor("--db", sqlite_incident.url, "--since", "2026-01-01").code == 1
    assert run_doctor("--db", sqlite_incident.url, "--repair", "stuck-backfill-runs").code == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_runs_without_airflow_installed(incident: Incident):
    # Hide Airflow from the import system: doctor needs only SQLAlchemy and the schema.
    code = (
        "import sys; sys.modules['airflow'] = None\n"
        "from dagguard.doctor import build_options, diagnose\n"
        f"diagnosis = diagnose({incident.url!r}, build_options(max_queued={FLOOD_THRESHOLD}))\n"
        "print(sorted(f.code for f in diagnosis.findings))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "['DG901', 'DG902', 'DG903', 'DG904']", result.stderr


def test_tables_come_from_airflow_models_when_installed(incident: Incident):
    code = (
        "from dagguard.doctor.connect import DatabaseTarget\n"
        "from dagguard.doctor.diagnose import open_database\n"
        f"with open_database(DatabaseTarget({incident.url!r}, 'test')) as database:\n"
        "    tables = database.tables\n"
        "    print(tables.from_airflow, type(tables.dag_run.c.queued_at.type).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True UtcDateTime", result.stderr


def test_declared_tables_give_the_same_report_as_airflow_models(incident: Incident):
    args = ("--db", incident.url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD))
    with_models = run_doctor(*args).json()
    declared = run_doctor(*args, env={"DAGGUARD_DOCTOR_DECLARED_TABLES": "1"}).json()
    assert without_ages(with_models["findings"]) == without_ages(declared["findings"])
    assert len(with_models["findings"]) == 4
