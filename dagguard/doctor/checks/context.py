"""What every check receives: an open connection, the tables, the options and the clock."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from sqlalchemy import ColumnElement, DateTime, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql import Select

from dagguard.doctor.model import DoctorOptions, to_db_time
from dagguard.doctor.tables import MetadataTables
from dagguard.doctor.times import comparable, read_time, stored_value

QUEUED = "queued"


@dataclass(frozen=True)
class CheckContext:
    """Inputs to a check; `explained` holds dag_run ids that earlier checks already account for."""

    conn: Connection
    tables: MetadataTables
    options: DoctorOptions
    now: datetime.datetime
    explained: frozenset[int] = frozenset()

    def db_time(self, value: datetime.datetime) -> datetime.datetime:
        """A datetime bound so that it compares correctly with this backend's stored values."""
        if self.tables.from_airflow:
            return read_time(value)  # Airflow's UtcDateTime converts aware values for each backend
        return to_db_time(value, self.conn.dialect.name)

    def comparable(self, column: ColumnElement) -> ColumnElement[bool]:
        """True where the stored value compares as a time in SQL (see times.comparable)."""
        return comparable(column, self.conn.dialect.name)


def run_columns(tables: MetadataTables) -> list[ColumnElement]:
    """The dag_run columns every check selects as evidence; times as stored (RunRow reads them)."""
    return [stored_value(column) if is_time(column) else column for column in tables.dag_run.c]


def is_time(column: ColumnElement) -> bool:
    """A timestamp column: SQLAlchemy's DateTime, or a type decorating it (Airflow's UtcDateTime)."""
    return isinstance(getattr(column.type, "impl", column.type), DateTime)


def select_runs(tables: MetadataTables) -> Select:
    """SELECT the evidence columns of dag_run."""
    return select(*run_columns(tables))


def created_column(tables: MetadataTables) -> ColumnElement:
    """When a run was created: dag_run.created_at (Airflow 3.2+), else queued_at."""
    return tables.dag_run.c.created_at if tables.has_created_at else tables.dag_run.c.queued_at
