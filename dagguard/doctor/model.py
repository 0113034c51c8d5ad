"""The data doctor passes around: options, the rows it shows as evidence, findings, a diagnosis."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping

from sqlalchemy.engine import Row

from dagguard.doctor.schema import SchemaInfo
from dagguard.doctor.times import UTC, UnreadableTimeError, read_time

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
class UnreadableValue:
    """A stored time that is not a timestamp (possible on SQLite), reported for its row."""

    table: str
    row: str            # which row, as a reader finds it: "id 7 (DAG 'd', run 'r')"
    column: str
    value: str          # the stored value, repr()'d

    def note(self) -> str:
        """One line for the report."""
        return (f"{self.table} {self.row}: {self.column} holds {self.value}, not a timestamp in "
                "Airflow's form (UTC YYYY-MM-DD HH:MM:SS), so the checks may miss or misjudge this row")


RUN_TIME_COLUMNS = ("logical_date", "data_interval_start", "data_interval_end", "queued_at",
                    "run_after", "last_scheduling_decision", "created_at")


@dataclass(frozen=True)
class RunRow:
    """One dag_run as evidence; datetimes are timezone-aware UTC, None when NULL or unreadable."""

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
    unreadable: tuple[UnreadableValue, ...] = ()

    @classmethod
    def from_row(cls, row: Row | Mapping[str, Any]) -> "RunRow":
        """Build from a result row holding dag_run's columns (created_at may be absent)."""
        values = row._mapping if isinstance(row, Row) else row
        label = run_label(values["id"], values["dag_id"], values["run_id"])
        times, unreadable = read_times("dag_run", label, {c: values.get(c) for c in RUN_TIME_COLUMNS})
        return cls(
            id=values["id"],
            dag_id=values["dag_id"],
            run_id=values["run_id"],
            run_type=values["run_type"],
            state=values["state"],
            backfill_id=values["backfill_id"],
            unreadable=unreadable,
            **times,
        )

    def is_unreadable(self, column: str) -> bool:
        """Whether this column's stored value could not be read as a time."""
        return any(problem.column == column for problem in self.unreadable)


def run_label(run_id: int, dag_id: str, dag_run_id: str) -> str:
    """How a note names a dag_run row."""
    return f"id {run_id} (DAG {dag_id!r}, run {dag_run_id!r})"


def backfill_label(backfill_id: int, dag_id: str) -> str:
    """How a note names a backfill row."""
    return f"id {backfill_id} (DAG {dag_id!r})"


def read_times(table: str, label: str, stored: Mapping[str, Any]
               ) -> tuple[dict[str, datetime.datetime | None], tuple[UnreadableValue, ...]]:
    """Parse each stored time; an unreadable one becomes None and an UnreadableValue."""
    times: dict[str, datetime.datetime | None] = {}
    unreadable: list[UnreadableValue] = []
    for column, value in stored.items():
        try:
            times[column] = read_time(value)
        except UnreadableTimeError:
            times[column] = None
            unreadable.append(UnreadableValue(table, label, column, repr(value)))
    return times, tuple(unreadable)


@dataclass(frozen=True)
class BackfillRow:
    """One backfill as evidence."""

    id: int
    dag_id: str
    is_paused: bool | None
    completed_at: datetime.datetime | None
    created_at: datetime.datetime | None
    unreadable: tuple[UnreadableValue, ...] = ()

    @classmethod
    def from_stored(cls, id: int, dag_id: str, is_paused: bool | None, completed_at: Any,
                    created_at: Any) -> "BackfillRow":
        """Build from stored values; times that cannot be read are None and noted."""
        times, unreadable = read_times("backfill", backfill_label(id, dag_id),
                                       {"completed_at": completed_at, "created_at": created_at})
        return cls(id=id, dag_id=dag_id, is_paused=is_paused, unreadable=unreadable, **times)


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


def to_db_time(value: datetime.datetime, dialect_name: str) -> datetime.datetime:
    """A bind value comparable with stored timestamps: SQLite keeps naive UTC text."""
    utc = read_time(value)
    assert utc is not None
    return utc.replace(tzinfo=None) if dialect_name == "sqlite" else utc


def format_time(value: datetime.datetime | None) -> str:
    """A timestamp for messages and text output: UTC, ISO 8601, to the second, with Z."""
    if value is None:
        return "-"
    utc = read_time(value)
    assert utc is not None
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
