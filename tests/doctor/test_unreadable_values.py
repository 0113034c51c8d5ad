"""A stored time that is not a timestamp (SQLite keeps any text or number in a TIMESTAMP column)
is reported for its row, and the rest of the report is still produced."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.doctor.support import FLOOD_THRESHOLD, Incident, run_doctor

NOT_TIMESTAMPS = ["not a date", 12345, "2026-02-31 00:00:00"]
IDS = ["text", "integer", "no-such-day"]
TABLES = {"airflow-models": {}, "declared": {"DAGGUARD_DOCTOR_DECLARED_TABLES": "1"}}


def copy_with(incident: Incident, tmp_path: Path, sql: str, value) -> str:
    copy = tmp_path / "airflow.db"
    shutil.copy(incident.url.removeprefix("sqlite:///"), copy)
    with sqlite3.connect(copy) as db:
        assert db.execute(sql, (value,)).rowcount == 1
    return f"sqlite:///{copy}"


def codes(report: dict) -> list[str]:
    return sorted(finding["code"] for finding in report["findings"])


@pytest.mark.parametrize("tables", TABLES, ids=list(TABLES))
@pytest.mark.parametrize("value", NOT_TIMESTAMPS, ids=IDS)
def test_queued_at_that_is_not_a_timestamp_is_reported_for_its_row(
        sqlite_incident: Incident, tmp_path: Path, value, tables: str):
    forgotten = sqlite_incident.facts["manual"]["forgotten_run_id"]
    url = copy_with(sqlite_incident, tmp_path, f"UPDATE dag_run SET queued_at = ? WHERE run_id = '{forgotten}'",
                    value)
    result = run_doctor("--db", url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD), env=TABLES[tables])
    assert result.code == 1 and not result.stderr, result.stderr
    report = result.json()
    [note] = [note for note in report["notes"] if forgotten in note]
    assert f"queued_at holds {value!r}, not a timestamp" in note
    # The rest of the report: every other finding, and this run is not reported as queued for ages.
    if value == "2026-02-31 00:00:00":
        # It has Airflow's form, so SQL compares it as the past it looks like; its age is unknown.
        assert codes(report) == ["DG901", "DG902", "DG903", "DG904"]
    else:
        assert codes(report) == ["DG901", "DG902", "DG903"]
    text = run_doctor("--db", url, "--max-queued", str(FLOOD_THRESHOLD), env=TABLES[tables])
    assert text.code == 1 and not text.stderr, text.stderr
    assert forgotten in text.stdout


@pytest.mark.parametrize("tables", TABLES, ids=list(TABLES))
@pytest.mark.parametrize("value", [12345, "2026-02-31 00:00:00"], ids=["integer", "no-such-day"])
def test_evidence_with_an_unreadable_time_is_shown_with_a_question_mark(
        sqlite_incident: Incident, tmp_path: Path, value, tables: str):
    stuck = sqlite_incident.facts["stuck"]["dag_run_id"]
    url = copy_with(sqlite_incident, tmp_path, f"UPDATE dag_run SET queued_at = ? WHERE id = {stuck}", value)
    report = run_doctor("--db", url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD),
                        env=TABLES[tables]).json()
    [finding] = [f for f in report["findings"] if f["code"] == "DG901"]
    [run] = finding["runs"]
    assert run["queued_at"] is None
    assert [problem["column"] for problem in run["unreadable"]] == ["queued_at"]
    assert any(f"id {stuck} " in note and "queued_at" in note for note in report["notes"])
    text = run_doctor("--db", url, "--max-queued", str(FLOOD_THRESHOLD), env=TABLES[tables]).stdout
    row = next(line for line in text.splitlines() if sqlite_incident.facts["stuck"]["run_id"] in line
               and line.startswith("  orders_daily"))
    assert row.split()[4] == "?", row


def test_every_time_airflow_stored_is_readable(incident: Incident):
    # Airflow's own values (written by its models and migrations) give no such note.
    report = run_doctor("--db", incident.url, "--format", "json").json()
    assert report["notes"] == []


# PostgreSQL's timestamps hold 'infinity' and '-infinity', which no Python datetime can be.
INFINITE = ["infinity", "-infinity"]


def postgres_update(incident: Incident, sql: str, value) -> None:
    import psycopg

    with psycopg.connect(incident.url.replace("postgresql+psycopg://", "postgresql://", 1)) as db:
        assert db.execute(sql, (value,)).rowcount == 1


@pytest.mark.parametrize("incident", ["postgres"], indirect=True)
@pytest.mark.parametrize("tables", TABLES, ids=list(TABLES))
@pytest.mark.parametrize("value", INFINITE)
def test_an_infinite_queued_at_on_postgres_is_reported_for_its_row(incident_copy: Incident, value, tables: str):
    forgotten = incident_copy.facts["manual"]["forgotten_run_id"]
    postgres_update(incident_copy, f"UPDATE dag_run SET queued_at = %s WHERE run_id = '{forgotten}'", value)
    result = run_doctor("--db", incident_copy.url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD),
                        env=TABLES[tables])
    assert result.code == 1 and not result.stderr, result.stderr
    report = result.json()
    [note] = [note for note in report["notes"] if forgotten in note]
    assert f"queued_at holds {value!r}, not a timestamp" in note
    # The rest of the report; the run is not judged by a time it does not have, as on SQLite.
    assert codes(report) == ["DG901", "DG902", "DG903"]
    text = run_doctor("--db", incident_copy.url, "--max-queued", str(FLOOD_THRESHOLD), env=TABLES[tables])
    assert text.code == 1 and not text.stderr, text.stderr
    assert forgotten in text.stdout


@pytest.mark.parametrize("incident", ["postgres"], indirect=True)
@pytest.mark.parametrize(("column", "value"), [("queued_at", "infinity"), ("data_interval_end", "infinity"),
                                               ("queued_at", "10000-01-01 00:00:00+00")])
def test_evidence_with_an_infinite_time_on_postgres_is_shown_with_a_question_mark(
        incident_copy: Incident, column, value):
    # A year past 9999 is a finite time to PostgreSQL, but no Python datetime either.
    stuck = incident_copy.facts["stuck"]["dag_run_id"]
    postgres_update(incident_copy, f"UPDATE dag_run SET {column} = %s WHERE id = {stuck}", value)
    report = run_doctor("--db", incident_copy.url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD)).json()
    [finding] = [f for f in report["findings"] if f["code"] == "DG901"]
    [run] = finding["runs"]
    assert run[column] is None
    assert [problem["column"] for problem in run["unreadable"]] == [column]
    assert any(f"id {stuck} " in note and f"{column} holds '{value[:10]}" in note
               for note in report["notes"])
    text = run_doctor("--db", incident_copy.url, "--max-queued", str(FLOOD_THRESHOLD))
    assert text.code == 1 and not text.stderr, text.stderr


@pytest.mark.parametrize("incident", ["postgres"], indirect=True)
def test_an_infinite_backfill_time_on_postgres_is_noted(incident_copy: Incident):
    backfill = incident_copy.facts["stuck"]["backfill_id"]
    postgres_update(incident_copy, f"UPDATE backfill SET completed_at = %s WHERE id = {backfill}", "-infinity")
    result = run_doctor("--db", incident_copy.url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD))
    assert result.code == 1 and not result.stderr, result.stderr
    assert any(f"backfill id {backfill} " in note and "completed_at holds '-infinity'" in note
               for note in result.json()["notes"])
