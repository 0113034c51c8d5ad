"""The data doctor passes around: options, the rows it shows as evidence, findings, a diagnosis."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping

from sqlalchemy.engine import Row

from dagguard.doctor.schema import SchemaInfo

UTC = datetime.timezone.utc

DEFAULT_MAX_QUEUED = 100
DEFAULT_QUEUED_AGE = datetime.timedelta(minutes=30)


@dataclass(frozen=True)
class DoctorOptions:
    """What the user asked for: thresholds, an optional deploy time, which checks to run."""

    since: datetime.datetime | None = None
    max_queued: int = DEFAULT_MAX_QUEUED
    queued_age: datetime.timedelta = DEFAULT_QUEUED_AGE
    checks: tuple[str, ...] = ()  # empty: all checks


@dataclass(frozen=True)
class RunRow:
    """One dag_run as evidence; datetimes are timezone-aware UTC."""

    id: int
    dag_id: str
    run_id: str
    run_type: str
    state: str | None
    logical_date: datetime.datetime | None
    data_interval_start: datetime.datetime | None
    data_interval_end: datetime.datetime | None
    queued_at: datetime.datetime | None
    run_after: datetime.datetime | None
    last_scheduling_decision: datetime.datetime | None
    backfill_id: int | None
    created_at: datetime.datetime | None

    @classmethod
    def from_row(cls, row: Row | Mapping[str, Any]) -> "RunRow":
        """Build from a result row holding dag_run's columns (created_at may be absent)."""
        values = row._mapping if isinstance(row, Row) else row
        return cls(
            id=values["id"],
            dag_id=values["dag_id"],
            run_id=values["run_id"],
            run_type=values["run_type"],
            state=values["state"],
            logical_date=as_utc(values["logical_date"]),
            data_interval_start=as_utc(values["data_interval_start"]),
            data_interval_end=as_utc(values["data_interval_end"]),
            queued_at=as_utc(values["queued_at"]),
            run_after=as_utc(values["run_after"]),
            last_scheduling_decision=as_utc(values["last_scheduling_decision"]),
            backfill_id=values["backfill_id"],
            created_at=as_utc(values.get("created_at")),
        )


@dataclass(frozen=True)
class BackfillRow:
    """One backfill as evidence."""

    id: int
    dag_id: str
    is_paused: bool | None
    completed_at: datetime.datetime | None
    created_at: datetime.datetime | None


@dataclass(frozen=True)
class Finding:
    """One incident: a code and name like the linter's, a one-line message, help, evidence."""

    code: str
    check: str
    dag_id: str
    message: str
    help: str
    runs: tuple[RunRow, ...] = ()
    backfill: BackfillRow | None = None
    # Queued runs this finding accounts for, so queued-never-scheduled does not repeat them.
    explains_run_ids: frozenset[int] = field(default=frozenset(), compare=False)
    # Numbers a reader or a script needs (e.g. queued counts), rendered as-is.
    facts: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """What doctor found in one database."""

    database: str
    schema: SchemaInfo
    checked_at: datetime.datetime
    options: DoctorOptions
    checks: tuple[str, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 when nothing was found, 1 with findings (as the linter)."""
        return 1 if self.findings else 0


def as_utc(value: datetime.datetime | str | None) -> datetime.datetime | None:
    """Airflow stores UTC: naive values (SQLite) are UTC, aware ones are converted."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def to_db_time(value: datetime.datetime, dialect_name: str) -> datetime.datetime:
    """A bind value comparable with stored timestamps: SQLite keeps naive UTC text."""
    utc = as_utc(value)
    assert utc is not None
    return utc.replace(tzinfo=None) if dialect_name == "sqlite" else utc


def format_time(value: datetime.datetime | None) -> str:
    """A timestamp for messages and text output: UTC, ISO 8601, to the second, with Z."""
    if value is None:
        return "-"
    utc = as_utc(value)
    assert utc is not None
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
