"""Open the metadata database read-only, verify its schema, run the checks."""

from __future__ import annotations

import datetime
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Mapping

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from dagguard.doctor.checks import CHECKS, CheckContext
from dagguard.doctor.connect import DatabaseTarget, discover_target, open_engine
from dagguard.doctor.errors import ConnectError, DoctorError
from dagguard.doctor.model import UTC, Diagnosis, DoctorOptions, Finding
from dagguard.doctor.schema import SchemaInfo, detect_schema
from dagguard.doctor.tables import MetadataTables, load_tables
from dagguard.doctor.unreadable import find_unreadable


@dataclass(frozen=True)
class OpenDatabase:
    """A connection inside one transaction, with the verified schema and tables."""

    target: DatabaseTarget
    conn: Connection
    schema: SchemaInfo
    tables: MetadataTables


@contextmanager
def open_database(target: DatabaseTarget, *, writable: bool = False) -> Iterator[OpenDatabase]:
    """Connect, begin one transaction (read-only unless `writable`), verify it is Airflow 3.0-3.3.

    A writable transaction commits when the block ends without error; a read-only one rolls back.
    """
    engine = open_engine(target, writable=writable)
    try:
        conn = _connect(engine, target)
        try:
            transaction = conn.begin()
            database = OpenDatabase(target, conn, *_verify(conn))
            yield database
            if writable:
                transaction.commit()
            else:
                transaction.rollback()
        finally:
            conn.close()
    finally:
        engine.dispose()


def _connect(engine: Engine, target: DatabaseTarget) -> Connection:
    try:
        return engine.connect()
    except DBAPIError as exc:
        raise ConnectError(f"cannot connect to {target.display_url}: {first_line(exc)}") from None


def _verify(conn: Connection) -> tuple[SchemaInfo, MetadataTables]:
    try:
        schema = detect_schema(conn)
        return schema, load_tables(conn)
    except DoctorError:
        raise
    except SQLAlchemyError as exc:
        raise ConnectError(f"cannot read the database schema: {first_line(exc)}") from None


def run_checks(database: OpenDatabase, options: DoctorOptions, now: datetime.datetime) -> tuple[Finding, ...]:
    """Run every check in order (so explanations carry over); keep the selected ones' findings."""
    explained: frozenset[int] = frozenset()
    kept: list[Finding] = []
    for check in CHECKS:
        ctx = CheckContext(database.conn, database.tables, options, now, explained)
        findings = check.run(ctx)
        for finding in findings:
            explained |= finding.explains_run_ids
        if not options.checks or check.name in options.checks:
            kept.extend(findings)
    return tuple(kept)


def diagnose(
    db: str | None = None,
    options: DoctorOptions = DoctorOptions(),
    *,
    environ: Mapping[str, str] | None = None,
    now: datetime.datetime | None = None,
) -> Diagnosis:
    """Diagnose the metadata database named by `db` (or discovered) without changing it."""
    target = discover_target(db, os.environ if environ is None else environ)
    moment = now or datetime.datetime.now(UTC)
    with open_database(target) as database:
        try:
            findings = run_checks(database, options, moment)
            unreadable = unreadable_notes(database, findings)
        except DBAPIError as exc:
            raise DoctorError(f"a doctor query failed on {target.display_url}: {first_line(exc)}") from None
        return Diagnosis(
            database=target.display_url,
            schema=database.schema,
            checked_at=moment,
            options=options,
            checks=tuple(c.name for c in CHECKS if not options.checks or c.name in options.checks),
            findings=findings,
            notes=_notes(database, options) + unreadable,
        )


def _notes(database: OpenDatabase, options: DoctorOptions) -> tuple[str, ...]:
    if options.since is not None and not database.tables.has_created_at:
        return (
            f"Airflow {database.schema.airflow_version} has no dag_run.created_at (added in 3.2); "
            "--since compares queued_at, which a clear resets",
        )
    return ()


def unreadable_notes(database: OpenDatabase, findings: tuple[Finding, ...]) -> tuple[str, ...]:
    """One note per stored time that is not a timestamp: found by the scan or in the evidence."""
    scanned, rows = find_unreadable(database.conn, database.tables)
    in_evidence = [problem for finding in findings
                   for row in (*finding.runs, *((finding.backfill,) if finding.backfill else ()))
                   for problem in row.unreadable]
    notes = tuple(dict.fromkeys(problem.note() for problem in (*scanned, *in_evidence)))
    listed_rows = len({(problem.table, problem.row) for problem in scanned})
    if rows > listed_rows:
        notes += (f"{rows - listed_rows} more rows hold times that are not timestamps in Airflow's form",)
    return notes


def first_line(exc: BaseException) -> str:
    """The first line of a driver error, without SQLAlchemy's SQL and background-link trailer."""
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip()
    return text.splitlines()[0] if text else type(original).__name__
