"""--repair stuck-backfill-runs on a copy of the incident DB, checked with Airflow's own query."""

from __future__ import annotations

from tests.doctor.support import Incident, run_doctor, scheduler_would_promote


def test_dry_run_prints_the_rows_and_changes_nothing(incident_copy: Incident):
    facts = incident_copy.facts
    result = run_doctor("--db", incident_copy.url, "--repair", "stuck-backfill-runs")
    assert result.code == 1, result.stderr
    backfill_id = facts["stuck"]["backfill_id"]
    assert f"backfill id={backfill_id} dag_id=orders_daily" in result.stdout
    assert f"UPDATE backfill SET is_paused = false WHERE id = {backfill_id}" in result.stdout
    assert facts["stuck"]["run_id"] in result.stdout
    assert "Dry run: nothing changed" in result.stdout
    assert ("orders_daily", facts["stuck"]["run_id"]) not in scheduler_would_promote(incident_copy)


def test_repair_releases_the_stuck_run_and_leaves_the_paused_backfill_held(incident_copy: Incident):
    facts = incident_copy.facts
    result = run_doctor("--db", incident_copy.url, "--repair", "stuck-backfill-runs", "--yes",
                        "--format", "json")
    assert result.code == 0, result.stderr
    report = result.json()
    assert report["applied"] is True
    assert [change["id"] for change in report["changes"]] == [facts["stuck"]["backfill_id"]]
    assert [run["run_id"] for run in report["changes"][0]["releases"]] == [facts["stuck"]["run_id"]]
    assert len(report["before"]) == 1 and report["after"] == []

    promotable = scheduler_would_promote(incident_copy)
    assert ("orders_daily", facts["stuck"]["run_id"]) in promotable
    # The control: an active backfill that was paused on purpose keeps its runs held.
    for run_id in facts["paused"]["run_ids"]:
        assert ("inventory_daily", run_id) not in promotable

    after = run_doctor("--db", incident_copy.url, "--format", "json").json()
    checks = {finding["check"] for finding in after["findings"]}
    assert "stuck-backfill-runs" not in checks
    assert "paused-backfill-holding-runs" in checks
    clean = run_doctor("--db", incident_copy.url, "--check", "stuck-backfill-runs")
    assert clean.code == 0 and "No findings." in clean.stdout


def test_repair_text_shows_before_and_after(incident_copy: Incident):
    result = run_doctor("--db", incident_copy.url, "--repair", "stuck-backfill-runs", "--yes")
    assert result.code == 0, result.stderr
    assert "Before: 1 stuck run (orders_daily/" in result.stdout
    assert "Changed 1 backfill row:" in result.stdout
    assert result.stdout.rstrip().endswith("After: 0 stuck runs")
    again = run_doctor("--db", incident_copy.url, "--repair", "stuck-backfill-runs", "--yes")
    assert again.code == 0 and "Nothing to change." in again.stdout
