"""Doctor on the reproduced incident, with Airflow's own scheduler query as the oracle."""

from __future__ import annotations

import csv
import io

from tests.doctor.support import FLOOD_THRESHOLD, Incident, run_doctor, scheduler_would_promote


def findings(report: dict, check: str) -> list[dict]:
    return [finding for finding in report["findings"] if finding["check"] == check]


def run_keys(finding_list: list[dict]) -> set[tuple[str, str]]:
    return {(run["dag_id"], run["run_id"]) for finding in finding_list for run in finding["runs"]}


def test_scheduler_holds_only_the_stuck_and_paused_backfill_runs(incident: Incident):
    facts = incident.facts
    promotable = scheduler_would_promote(incident)
    assert ("orders_daily", facts["stuck"]["run_id"]) not in promotable
    assert ("orders_daily", facts["manual"]["control_run_id"]) in promotable
    # Naming the backfill in dag_run.backfill_id without a backfill_dag_run row holds nothing.
    assert ("orders_daily", facts["stuck"]["unlinked_run_id"]) in promotable
    for run_id in facts["paused"]["run_ids"]:
        assert ("inventory_daily", run_id) not in promotable


def test_doctor_reports_exactly_the_stuck_run(incident: Incident):
    result = run_doctor("--db", incident.url, "--format", "json", "--max-queued", str(FLOOD_THRESHOLD))
    assert result.code == 1, result.stderr
    report = result.json()
    stuck = findings(report, "stuck-backfill-runs")
    assert run_keys(stuck) == {("orders_daily", incident.facts["stuck"]["run_id"])}
    [finding] = stuck
    assert finding["code"] == "DG901"
    assert finding["backfill"]["id"] == incident.facts["stuck"]["backfill_id"]
    assert finding["backfill"]["completed_at"] is not None
    [run] = finding["runs"]
    assert run["state"] == "queued"
    assert run["backfill_id"] == incident.facts["stuck"]["backfill_id"]
    assert run["logical_date"].startswith("2026-01-02T00:00:00")
    assert run["queued_at"] is not None and run["last_scheduling_decision"] is None
    assert report["schema"] == {"revision": "d2f4e1b3c5a7", "airflow_version": "3.3.0"}


def test_paused_backfill_is_shown_as_expected_not_as_stuck(incident: Incident):
    report = run_doctor("--db", incident.url, "--format", "json").json()
    [held] = findings(report, "paused-backfill-holding-runs")
    assert held["code"] == "DG903"
    assert held["backfill"]["id"] == incident.facts["paused"]["backfill_id"]
    assert {run["run_id"] for run in held["runs"]} == set(incident.facts["paused"]["run_ids"])
    assert "inventory_daily" not in {key[0] for key in run_keys(findings(report, "stuck-backfill-runs"))}


def test_queued_never_scheduled_reports_only_the_unexplained_old_run(incident: Incident):
    report = run_doctor("--db", incident.url, "--format", "json").json()
    unexplained = findings(report, "queued-never-scheduled")
    assert run_keys(unexplained) == {("billing_manual", incident.facts["manual"]["forgotten_run_id"])}
    assert unexplained[0]["code"] == "DG904"


def test_catchup_flood_csv_lists_exactly_the_runs_created_after_since(incident: Incident):
    flood = incident.facts["flood"]
    result = run_doctor("--db", incident.url, "--since", flood["since"], "--format", "csv",
                        "--max-queued", str(FLOOD_THRESHOLD))
    assert result.code == 1, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == ["dag_id", "run_id", "data_interval_start", "data_interval_end", "state"]
    assert [row["run_id"] for row in rows] == flood["run_ids_after"]
    assert {row["dag_id"] for row in rows} == {"clicks_hourly"}
    assert {row["state"] for row in rows} == {"queued"}
    # Trigger timetable: the interval is the logical date, start == end.
    assert all(row["data_interval_start"] == row["data_interval_end"] for row in rows)


def test_catchup_flood_counts_and_mitigation(incident: Incident):
    flood = incident.facts["flood"]
    report = run_doctor("--db", incident.url, "--since", flood["since"], "--format", "json",
                        "--max-queued", str(FLOOD_THRESHOLD)).json()
    [finding] = findings(report, "catchup-flood")
    assert finding["code"] == "DG902" and finding["dag_id"] == "clicks_hourly"
    assert finding["facts"] == {"queued_scheduled_runs": flood["queued_total"],
                                "created_since": len(flood["run_ids_after"])}
    assert "airflow dags pause clicks_hourly" in finding["help"]
    # Below the default threshold of 100 this is no flood.
    default = run_doctor("--db", incident.url, "--format", "json").json()
    assert findings(default, "catchup-flood") == []


def test_text_report_shows_evidence_and_help(incident: Incident):
    result = run_doctor("--db", incident.url)
    assert result.code == 1
    out = result.stdout
    assert "DG901 stuck-backfill-runs: DAG 'orders_daily' run 'backfill__2026-01-02T00:00:00+00:00'" in out
    assert "help: run `dagguard doctor --repair stuck-backfill-runs`" in out
    assert "https://github.com/apache/airflow/issues/72337" in out
    assert "last_scheduling_decision" in out
    assert out.rstrip().endswith("Found 3 findings: 1 stuck-backfill-runs, 1 paused-backfill-holding-runs, "
                                 "1 queued-never-scheduled")


def test_discovers_the_database_from_airflow_environment(incident: Incident):
    result = run_doctor("--format", "json", env={
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": incident.url,
    })
    assert result.code == 1, result.stderr
    assert result.json()["schema"]["airflow_version"] == "3.3.0"
