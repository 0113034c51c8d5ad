"""The four metadata tables doctor reads, declared with only the columns it uses.

When Airflow is installed, the columns (with Airflow's own column types) come from its models
(`DagRun`, `Backfill`, `BackfillDagRun`, `DagModel`), restricted to those doctor reads. Without
Airflow, or when the installed models lack a column (another Airflow version than the
database's), they are declared here, so doctor runs from a laptop against any supported schema
(3.0-3.3). The declared columns are those of Airflow 3.3.2's models; `dag_run.created_at`
exists only from Airflow 3.2 (migration 0106).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import Boolean, Column, DateTime, Integer, MetaData, String, Table, inspect
from sqlalchemy.engine import Connection

from dagguard.doctor.errors import NotAirflowError

# Airflow's UtcDateTime: timestamptz on PostgreSQL, naive UTC text on SQLite.
UtcDateTime = DateTime(timezone=True)

REQUIRED_COLUMNS: dict[str, frozenset[str]] = {
    "dag": frozenset({"dag_id", "is_paused", "is_stale"}),
    "dag_run": frozenset({
        "id", "dag_id", "run_id", "run_type", "state", "logical_date", "data_interval_start",
        "data_interval_end", "queued_at", "run_after", "last_scheduling_decision", "backfill_id",
    }),
    "backfill": frozenset({"id", "dag_id", "is_paused", "completed_at", "created_at"}),
    "backfill_dag_run": frozenset({"backfill_id", "dag_run_id"}),
}


@dataclass(frozen=True)
class MetadataTables:
    """Core tables for one database; `has_created_at` says whether dag_run.created_at exists."""

    dag: Table
    dag_run: Table
    backfill: Table
    backfill_dag_run: Table
    has_created_at: bool
    from_airflow: bool = False       # column types are Airflow's (UtcDateTime binds aware datetimes)


def load_tables(conn: Connection) -> MetadataTables:
    """Check that the database has the columns doctor reads and declare matching tables."""
    inspector = inspect(conn)
    present: dict[str, set[str]] = {}
    for table, needed in REQUIRED_COLUMNS.items():
        if not inspector.has_table(table):
            raise NotAirflowError(f"not an Airflow 3 metadata database: table '{table}' is missing")
        present[table] = {column["name"] for column in inspector.get_columns(table)}
        missing = needed - present[table]
        if missing:
            raise NotAirflowError(
                f"not an Airflow 3 metadata database: table '{table}' lacks {', '.join(sorted(missing))}"
            )
    has_created_at = "created_at" in present["dag_run"]
    return airflow_model_tables(has_created_at=has_created_at) or declare_tables(has_created_at=has_created_at)


def airflow_model_tables(*, has_created_at: bool) -> Optional[MetadataTables]:
    """The same tables built from Airflow's own models, when Airflow is installed and they fit."""
    if os.environ.get("DAGGUARD_DOCTOR_DECLARED_TABLES") or importlib.util.find_spec("airflow") is None:
        return None
    try:
        from airflow.models.backfill import Backfill, BackfillDagRun
        from airflow.models.dag import DagModel
        from airflow.models.dagrun import DagRun
    except Exception:  # a broken or partial Airflow installation: the declarations still work
        return None
    declared = declare_tables(has_created_at=has_created_at)
    metadata = MetaData()
    copies = []
    for model, table in ((DagModel, declared.dag), (DagRun, declared.dag_run),
                         (Backfill, declared.backfill), (BackfillDagRun, declared.backfill_dag_run)):
        source = model.__table__
        if source.name != table.name or any(column.name not in source.c for column in table.c):
            return None  # the installed Airflow's schema differs from what doctor reads
        copies.append(Table(table.name, metadata, *(source.c[column.name]._copy() for column in table.c)))
    return MetadataTables(*copies, has_created_at=has_created_at, from_airflow=True)


def declare_tables(*, has_created_at: bool) -> MetadataTables:
    """Declare the tables; dag_run.created_at only when the schema has it."""
    metadata = MetaData()
    dag = Table(
        "dag", metadata,
        Column("dag_id", String, primary_key=True),
        Column("is_paused", Boolean),
        Column("is_stale", Boolean),
    )
    run_columns = [
        Column("id", Integer, primary_key=True),
        Column("dag_id", String),
        Column("run_id", String),
        Column("run_type", String),
        Column("state", String),
        Column("logical_date", UtcDateTime),
        Column("data_interval_start", UtcDateTime),
        Column("data_interval_end", UtcDateTime),
        Column("queued_at", UtcDateTime),
        Column("run_after", UtcDateTime),
        Column("last_scheduling_decision", UtcDateTime),
        Column("backfill_id", Integer),
    ]
    if has_created_at:
        run_columns.append(Column("created_at", UtcDateTime))
    dag_run = Table("dag_run", metadata, *run_columns)
    backfill = Table(
        "backfill", metadata,
        Column("id", Integer, primary_key=True),
        Column("dag_id", String),
        Column("is_paused", Boolean),
        Column("completed_at", UtcDateTime),
        Column("created_at", UtcDateTime),
    )
    backfill_dag_run = Table(
        "backfill_dag_run", metadata,
        Column("id", Integer, primary_key=True),
        Column("backfill_id", Integer),
        Column("dag_run_id", Integer),
    )
    return MetadataTables(dag, dag_run, backfill, backfill_dag_run, has_created_at)
