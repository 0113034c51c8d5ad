"""Find the stored times that SQL cannot compare as times (SQLite's text or numbers,
PostgreSQL's 'infinity' and '-infinity'), to report each row.

The checks leave such a value out of their comparisons (see times.comparable); without this
scan a run with `queued_at = 12345` would silently drop out of the report.
"""

from __future__ import annotations

from sqlalchemy import Table, and_, func, not_, or_, select
from sqlalchemy.engine import Connection

from dagguard.doctor.checks.context import is_time
from dagguard.doctor.model import UnreadableValue, backfill_label, run_label
from dagguard.doctor.tables import MetadataTables
from dagguard.doctor.times import comparable, stored_value

# Rows listed one by one; the rest are counted.
LISTED_ROWS = 20


def find_unreadable(conn: Connection, tables: MetadataTables) -> tuple[tuple[UnreadableValue, ...], int]:
    """Up to LISTED_ROWS rows' unreadable values per table, and how many rows hold one in all."""
    if conn.dialect.name not in ("sqlite", "postgresql"):
        return (), 0
    found: list[UnreadableValue] = []
    total = 0
    for table in (tables.dag_run, tables.backfill):
        listed, count = _scan(conn, table)
        found += listed
        total += count
    return tuple(found), total


def _scan(conn: Connection, table: Table) -> tuple[list[UnreadableValue], int]:
    times = [column for column in table.c if is_time(column)]
    flags = [and_(column.is_not(None), not_(comparable(column, conn.dialect.name))) for column in times]
    bad = or_(*flags)
    count = conn.execute(select(func.count()).select_from(table).where(bad)).scalar_one()
    if not count:
        return [], 0
    names = [column for column in ("id", "dag_id", "run_id") if column in table.c]
    query = (
        select(*(table.c[name] for name in names), *(stored_value(column) for column in times),
               *(flag.label(f"unreadable_{column.name}") for flag, column in zip(flags, times)))
        .where(bad).order_by(table.c.id).limit(LISTED_ROWS)
    )
    found = []
    for row in conn.execute(query):
        values = row._mapping
        label = (run_label(values["id"], values["dag_id"], values["run_id"]) if "run_id" in values
                 else backfill_label(values["id"], values["dag_id"]))
        found += [UnreadableValue(table.name, label, column.name, repr(values[column.name]))
                  for column in times if values[f"unreadable_{column.name}"]]
    return found, count
