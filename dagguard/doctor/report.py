"""Render a diagnosis or a repair as text, JSON or CSV. The only doctor module that formats output."""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections import Counter
from dataclasses import asdict
from typing import Any

from dagguard.doctor.checks import CHECKS
from dagguard.doctor.model import Diagnosis, Finding, RunRow, format_time
from dagguard.doctor.repair import RepairResult

FORMATS = ("text", "json", "csv")
TEXT_ROW_LIMIT = 10
# The evidence columns text output shows for each check's runs.
EVIDENCE_COLUMNS: dict[str, tuple[str, ...]] = {
    "stuck-backfill-runs": ("dag_id", "run_id", "logical_date", "backfill_id", "queued_at",
                            "last_scheduling_decision"),
    "paused-backfill-holding-runs": ("run_id", "logical_date", "state", "queued_at"),
    "catchup-flood": ("run_id", "data_interval_start", "data_interval_end", "state", "created_at"),
    "queued-never-scheduled": ("run_id", "run_type", "queued_at", "run_after", "last_scheduling_decision"),
}
# The interval list a warehouse team deduplicates from (issue 5: --format csv).
CSV_COLUMNS = ("dag_id", "run_id", "data_interval_start", "data_interval_end", "state")
CODES = {check.name: check.code for check in CHECKS}


def render(diagnosis: Diagnosis, fmt: str) -> str:
    """The diagnosis in the chosen format (text, json or csv)."""
    if fmt == "json":
        return render_json(diagnosis)
    if fmt == "csv":
        return render_csv(diagnosis)
    return render_text(diagnosis)


def render_text(diagnosis: Diagnosis) -> str:
    """Human-readable report: one block per finding with its evidence rows and help line."""
    lines = [
        f"Airflow metadata DB: {diagnosis.database} (schema of Airflow "
        f"{diagnosis.schema.airflow_version}, revision {diagnosis.schema.revision})",
        f"Checked at {format_time(diagnosis.checked_at)}: {', '.join(diagnosis.checks)}",
    ]
    lines += [f"note: {note}" for note in diagnosis.notes]
    for finding in diagnosis.findings:
        lines.append("")
        lines += _finding_lines(finding)
    lines.append("")
    lines.append(_summary(diagnosis.findings))
    return "\n".join(lines) + "\n"


def _finding_lines(finding: Finding) -> list[str]:
    lines = [f"{finding.code} {finding.check}: {finding.message}"]
    columns = EVIDENCE_COLUMNS.get(finding.check, CSV_COLUMNS)
    shown = finding.runs[:TEXT_ROW_LIMIT]
    lines += ["  " + line for line in _table(columns, [[_run_cell(run, c) for c in columns] for run in shown])]
    if len(finding.runs) > TEXT_ROW_LIMIT:
        lines.append(f"  ... and {len(finding.runs) - TEXT_ROW_LIMIT} more (--format json or csv lists all)")
    lines.append(f"  help: {finding.help}")
    return lines


def _summary(findings: tuple[Finding, ...]) -> str:
    if not findings:
        return "No findings."
    counts = Counter(finding.check for finding in findings)
    parts = [f"{counts[check.name]} {check.name}" for check in CHECKS if counts[check.name]]
    return f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}: {', '.join(parts)}"


def render_json(diagnosis: Diagnosis) -> str:
    """Machine-readable report; datetimes as ISO 8601 UTC."""
    payload = {
        "database": diagnosis.database,
        "schema": {"revision": diagnosis.schema.revision,
                   "airflow_version": diagnosis.schema.airflow_version},
        "checked_at": _iso(diagnosis.checked_at),
        "options": {
            "since": _iso(diagnosis.options.since),
            "max_queued": diagnosis.options.max_queued,
            "queued_age_minutes": int(diagnosis.options.queued_age.total_seconds() // 60),
            "checks": list(diagnosis.checks),
        },
        "notes": list(diagnosis.notes),
        "findings": [_finding_json(finding) for finding in diagnosis.findings],
        "summary": dict(Counter(finding.check for finding in diagnosis.findings)),
    }
    return json.dumps(payload, indent=2) + "\n"


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "check": finding.check,
        "dag_id": finding.dag_id,
        "message": finding.message,
        "help": finding.help,
        "facts": dict(finding.facts),
        "backfill": _jsonable(asdict(finding.backfill)) if finding.backfill else None,
        "runs": [_jsonable(asdict(run)) for run in finding.runs],
    }


def render_csv(diagnosis: Diagnosis) -> str:
    """Every interval affected by a catchup flood: dag_id, run_id, data interval, state."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for finding in diagnosis.findings:
        if finding.check != "catchup-flood":
            continue
        for run in finding.runs:
            writer.writerow([_iso(getattr(run, c)) if isinstance(getattr(run, c), datetime.datetime)
                             else getattr(run, c) for c in CSV_COLUMNS])
    return buffer.getvalue()


def render_repair(result: RepairResult, fmt: str) -> str:
    """The repair plan (and, once applied, before/after) as text or JSON."""
    if fmt == "json":
        return render_repair_json(result)
    return render_repair_text(result)


def render_repair_text(result: RepairResult) -> str:
    """The exact rows the repair changes, the runs each releases, and the stuck runs before/after."""
    verb = "Changed" if result.applied else "Would change"
    lines = [
        f"Repair {result.repair} on {result.database}",
        f"Before: {_stuck_count(result.before)}",
    ]
    if not result.changes:
        lines.append("Nothing to change.")
    else:
        lines.append(f"{verb} {len(result.changes)} backfill row{'s' if len(result.changes) != 1 else ''}:")
    for change in result.changes:
        backfill = change.backfill
        lines.append(
            f"  backfill id={backfill.id} dag_id={backfill.dag_id} completed_at="
            f"{format_time(backfill.completed_at)}: is_paused true -> false"
        )
        lines.append(f"    UPDATE backfill SET is_paused = false WHERE id = {backfill.id} "
                     "AND completed_at IS NOT NULL AND is_paused = true")
        columns = ("dag_id", "run_id", "logical_date", "queued_at", "last_scheduling_decision")
        rows = [[_run_cell(run, c) for c in columns] for run in change.releases]
        lines.append("    releases these queued runs to the scheduler:")
        lines += ["      " + line for line in _table(columns, rows)]
    if result.applied:
        lines.append(f"After: {_stuck_count(result.after)}")
    elif result.changes:
        lines.append("Dry run: nothing changed. Re-run with --yes to apply in one transaction.")
    return "\n".join(lines) + "\n"


def render_repair_json(result: RepairResult) -> str:
    """The repair as JSON: changes with released runs, and stuck findings before and after."""
    payload = {
        "database": result.database,
        "repair": result.repair,
        "applied": result.applied,
        "changes": [
            {"table": "backfill", "id": change.backfill.id, "set": {"is_paused": False},
             "backfill": _jsonable(asdict(change.backfill)),
             "releases": [_jsonable(asdict(run)) for run in change.releases]}
            for change in result.changes
        ],
        "before": [_finding_json(finding) for finding in result.before],
        "after": [_finding_json(finding) for finding in result.after] if result.applied else None,
    }
    return json.dumps(payload, indent=2) + "\n"


def _stuck_count(findings: tuple[Finding, ...]) -> str:
    runs = [run for finding in findings for run in finding.runs]
    if not runs:
        return "0 stuck runs"
    listed = ", ".join(f"{run.dag_id}/{run.run_id}" for run in runs[:TEXT_ROW_LIMIT])
    more = f" and {len(runs) - TEXT_ROW_LIMIT} more" if len(runs) > TEXT_ROW_LIMIT else ""
    return f"{len(runs)} stuck run{'s' if len(runs) != 1 else ''} ({listed}{more})"


def _table(columns: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    widths = [max(len(column), *(len(row[i]) for row in rows)) if rows else len(column)
              for i, column in enumerate(columns)]
    def line(cells) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()
    return [line(columns)] + [line(row) for row in rows]


def _run_cell(run: RunRow, column: str) -> str:
    # "?" for a stored time that is not one ("-" is NULL); the report's notes say which.
    return "?" if run.is_unreadable(column) else _cell(getattr(run, column))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime.datetime):
        return format_time(value)
    return str(value)


def _iso(value: datetime.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _iso(value) if isinstance(value, datetime.datetime) else value
            for key, value in values.items()}
