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
from tests.doctor.support import FLOOD_THRESHOLD, Incident, run_doctor


def test_diagnosis_transaction_refuses_writes(incident: Incident):
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
