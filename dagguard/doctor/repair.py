"""--repair stuck-backfill-runs: clear the stale is_paused flag of completed backfills.

A backfill with completed_at cannot be unpaused through Airflow's API (409), so its is_paused
is stale by definition; setting it to false lets the scheduler promote the runs it holds and
changes nothing else. The repair plans inside the transaction that applies it, touches only
backfills that are completed and still paused, and re-checks after the commit. It becomes
unnecessary once Airflow ships the fix for apache/airflow#72337.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Mapping

from sqlalchemy import and_, select, true, update
from sqlalchemy.exc import DBAPIError

from dagguard.doctor.checks import CheckContext, stuck_backfill_runs
from dagguard.doctor.connect import discover_target
from dagguard.doctor.diagnose import OpenDatabase, first_line, open_database
from dagguard.doctor.errors import DoctorError
from dagguard.doctor.model import UTC, BackfillRow, DoctorOptions, Finding, RunRow
from dagguard.doctor.tables import MetadataTables

REPAIRS = (stuck_backfill_runs.NAME,)


@dataclass(frozen=True)
class BackfillChange:
    """One backfill row the repair changes (is_paused true → false) and the runs it releases."""

    backfill: BackfillRow
    releases: tuple[RunRow, ...]


@dataclass(frozen=True)
class RepairResult:
    """What the repair planned, whether it applied it, and the stuck runs before and after."""

    database: str
    repair: str
    changes: tuple[BackfillChange, ...]
    applied: bool
    before: tuple[Finding, ...]
    after: tuple[Finding, ...]

    @property
    def exit_code(self) -> int:
        """0 when nothing is (left) stuck; 1 when stuck runs remain (a dry run with work to do)."""
        remaining = self.after if self.applied else self.before
        return 1 if remaining else 0


def plan_changes(database: OpenDatabase) -> tuple[BackfillChange, ...]:
    """The completed, still-paused backfills that hold queued runs, with those runs."""
    rows = database.conn.execute(stuck_backfill_runs.stuck_runs_query(database.tables)).all()
    by_backfill: dict[int, tuple[BackfillRow, list[RunRow]]] = {}
    for row in rows:
        backfill = stuck_backfill_runs.backfill_from_row(row)
        by_backfill.setdefault(backfill.id, (backfill, []))[1].append(RunRow.from_row(row))
    return tuple(BackfillChange(backfill, tuple(runs)) for backfill, runs in
                 (by_backfill[key] for key in sorted(by_backfill)))


def _stuck_findings(database: OpenDatabase) -> tuple[Finding, ...]:
    ctx = CheckContext(database.conn, database.tables, DoctorOptions(), datetime.datetime.now(UTC))
    return tuple(stuck_backfill_runs.run(ctx))


def _unpause_completed(database: OpenDatabase, changes: tuple[BackfillChange, ...]) -> None:
    tables: MetadataTables = database.tables
    ids = [change.backfill.id for change in changes]
    if database.conn.dialect.name == "postgresql":
        # Lock the rows so a concurrent API call cannot change them between plan and update.
        database.conn.execute(select(tables.backfill.c.id).where(tables.backfill.c.id.in_(ids)).with_for_update())
    statement = (
        update(tables.backfill)
        .where(and_(
            tables.backfill.c.id.in_(ids),
            # Never a backfill without completed_at: pausing a running backfill is deliberate.
            tables.backfill.c.completed_at.is_not(None),
            tables.backfill.c.is_paused == true(),
        ))
        .values(is_paused=False)
    )
    changed = database.conn.execute(statement).rowcount
    if changed != len(ids):
        raise DoctorError(
            f"repair aborted, nothing changed: expected to update {len(ids)} backfill rows, "
            f"the database matched {changed} (did something change them meanwhile?)"
        )


def repair(
    name: str,
    db: str | None = None,
    *,
    apply: bool = False,
    environ: Mapping[str, str] | None = None,
) -> RepairResult:
    """Plan the named repair; with `apply`, change the rows in one transaction and re-check."""
    if name not in REPAIRS:
        raise DoctorError(f"unknown repair {name!r}; doctor can repair: {', '.join(REPAIRS)}")
    target = discover_target(db, os.environ if environ is None else environ)
    try:
        if not apply:
            with open_database(target) as database:
                return RepairResult(target.display_url, name, plan_changes(database), False,
                                    _stuck_findings(database), ())
        with open_database(target, writable=True) as database:
            before = _stuck_findings(database)
            changes = plan_changes(database)
            if changes:
                _unpause_completed(database, changes)
    except DBAPIError as exc:
        raise DoctorError(f"repair failed, nothing changed: {first_line(exc)}") from None
    try:
        with open_database(target) as database:
            after = _stuck_findings(database)
    except DBAPIError as exc:
        raise DoctorError(f"repair applied, but the re-check failed: {first_line(exc)}") from None
    return RepairResult(target.display_url, name, changes, True, before, after)
