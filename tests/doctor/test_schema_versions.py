"""Schema detection against Airflow's own migrations, and doctor on a real Airflow 3.0 schema."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from dagguard.doctor.schema import (
    FIRST_SUPPORTED_REVISION,
    LAST_SUPPORTED_REVISION,
    REVISION_CHAIN,
    schema_for_revision,
)
from dagguard.doctor.tables import declare_tables
from tests.doctor.support import AIRFLOW, FLOOD_THRESHOLD, Incident, run_airflow, run_doctor, tagged_json

# Located without importing Airflow, whose import reads and writes configuration.
MIGRATIONS = Path(importlib.util.find_spec("airflow").submodule_search_locations[0]) / "migrations" / "versions"


def installed_chain() -> list[tuple[str, str]]:
    chain = []
    for script in sorted(MIGRATIONS.glob("0*.py")):
        source = script.read_text()
        revision = re.search(r'^revision = "(\w+)"', source, re.M).group(1)
        version = re.search(r'^airflow_version = "([\d.]+)"', source, re.M).group(1)
        chain.append((revision, version))
    return chain


def test_revision_table_matches_installed_airflow_migrations():
    assert list(REVISION_CHAIN) == installed_chain()
    assert REVISION_CHAIN[-1][0] == LAST_SUPPORTED_REVISION


@pytest.mark.parametrize("revision, version", [
    ("29ce7909c52b", "3.0.0"), ("fe199e1abd77", "3.0.3"), ("cc92b33c6709", "3.1.0"),
    ("509b94a1042d", "3.1.8"), ("1d6611b6ab7c", "3.2.0"), ("d2f4e1b3c5a7", "3.3.0"),
])
def test_release_heads_are_supported(revision: str, version: str):
    assert schema_for_revision(revision).airflow_version == version


def test_the_supported_range_starts_at_the_3_0_head():
    revisions = [revision for revision, _ in REVISION_CHAIN]
    assert revisions.index(FIRST_SUPPORTED_REVISION) == max(
        i for i, (_, version) in enumerate(REVISION_CHAIN) if version == "3.0.0")


def test_doctor_on_a_real_airflow_3_0_schema(incident_copy: Incident):
    """The incident DB downgraded by Airflow to 3.0.0: no dag_run.created_at, same findings."""
    env = dict(incident_copy.airflow_env)
    # Airflow's 3.2.0 deadline downgrade (migration 0101) fails under psycopg 3 with
    # IndeterminateDatatype; psycopg2 binds parameters client-side and runs it.
    env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = incident_copy.url.replace("+psycopg://", "+psycopg2://")
    run_airflow([str(AIRFLOW), "db", "downgrade", "--to-version", "3.0.0", "-y"], env)
    flood = incident_copy.facts["flood"]
    result = run_doctor("--db", incident_copy.url, "--format", "json", "--since", flood["since"],
                        "--max-queued", str(FLOOD_THRESHOLD))
    assert result.code == 1, result.stderr
    report = result.json()
    assert report["schema"] == {"revision": "29ce7909c52b", "airflow_version": "3.0.0"}
    assert any("no dag_run.created_at" in note for note in report["notes"])
    by_check = {finding["check"]: finding for finding in report["findings"]}
    assert [run["run_id"] for run in by_check["stuck-backfill-runs"]["runs"]] == [
        incident_copy.facts["stuck"]["run_id"]]
    # Without created_at, --since falls back to queued_at, set when these runs were created.
    assert [run["run_id"] for run in by_check["catchup-flood"]["runs"]] == flood["run_ids_after"]

    repaired = run_doctor("--db", incident_copy.url, "--repair", "stuck-backfill-runs", "--yes")
    assert repaired.code == 0, repaired.stderr
    engine = create_engine(incident_copy.url)
    with engine.connect() as conn:
        paused = dict(conn.execute(text("SELECT id, is_paused FROM backfill")).all())
    engine.dispose()
    assert not paused[incident_copy.facts["stuck"]["backfill_id"]]
    assert paused[incident_copy.facts["paused"]["backfill_id"]]


def test_declared_tables_match_airflow_models(sqlite_incident: Incident):
    """Doctor declares its tables to run without Airflow; they must agree with Airflow's models."""
    code = (
        "import json\n"
        "from airflow.models.backfill import Backfill, BackfillDagRun\n"
        "from airflow.models.dag import DagModel\n"
        "from airflow.models.dagrun import DagRun\n"
        "print('DOCTOR-COLUMNS ' + json.dumps({m.__table__.name: sorted(m.__table__.c.keys())\n"
        "      for m in (DagModel, DagRun, Backfill, BackfillDagRun)}))\n"
    )
    output = run_airflow([sys.executable, "-c", code], sqlite_incident.airflow_env)
    airflow_columns = tagged_json(output, "DOCTOR-COLUMNS")
    declared = declare_tables(has_created_at=True)
    for table in (declared.dag, declared.dag_run, declared.backfill, declared.backfill_dag_run):
        assert set(table.c.keys()) <= set(airflow_columns[table.name]), table.name
