"""The ledger `dagguard_write_log`: one row per write, in the write's own transaction, so
that an interval written twice with different data (a non-deterministic source) shows up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dagguard.idempotent.checksum import same_data
from dagguard.idempotent.engines import Engine
from dagguard.idempotent.errors import LedgerError
from dagguard.idempotent.identifiers import TableName

LEDGER_TABLE = "dagguard_write_log"

_COLUMNS = ("dag_id", "task_id", "run_id", "try_number", "table_name", "interval_start",
            "interval_end", "strategy", "row_count", "rows_inserted", "rows_updated",
            "rows_deleted", "checksum", "written_at")
# The ledger's columns in order, for engines that keep it outside SQL (Delta Lake).
LEDGER_COLUMNS = _COLUMNS


@dataclass(frozen=True)
class RunInfo:
    """Which Airflow task instance wrote, when known."""

    dag_id: str | None = None
    task_id: str | None = None
    run_id: str | None = None
    try_number: int | None = None


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded write."""

    table_name: str
    interval_start: str
    interval_end: str
    strategy: str
    row_count: int
    rows_inserted: int
    rows_updated: int
    rows_deleted: int
    checksum: str
    written_at: str
    dag_id: str | None
    task_id: str | None
    run_id: str | None
    try_number: int | None


@dataclass(frozen=True)
class LedgerConflict:
    """An interval of a table written more than once with different checksums."""

    table_name: str
    interval_start: str
    interval_end: str
    writes: int
    checksums: tuple[str, ...]


@dataclass(frozen=True)
class LedgerReport:
    """All entries (oldest first) and the conflicts among them."""

    entries: tuple[LedgerEntry, ...]
    conflicts: tuple[LedgerConflict, ...]


def ensure_ledger(engine: Engine) -> None:
    """Create the ledger table if it is missing."""
    text, integer, stamp = engine.ledger_types()
    types = {"try_number": integer, "row_count": integer, "rows_inserted": integer,
             "rows_updated": integer, "rows_deleted": integer, "interval_start": stamp,
             "interval_end": stamp, "written_at": stamp}
    columns = ", ".join(f"{name} {types.get(name, text)}" for name in _COLUMNS)
    if engine.table_columns(TableName((LEDGER_TABLE,))) is None:
        # Concurrent CREATE TABLE IF NOT EXISTS can still collide on PostgreSQL's catalog.
        engine.lock_for_ddl(LEDGER_TABLE)
        engine.execute(f"CREATE TABLE IF NOT EXISTS {LEDGER_TABLE} ({columns})")


def record_write(engine: Engine, run: RunInfo, table: str, start: datetime, end: datetime,
                 strategy: str, counts: tuple[int, int, int, int], checksum: str) -> None:
    """Append one ledger row; runs inside the write's transaction."""
    row_count, inserted, updated, deleted = counts
    values = (run.dag_id, run.task_id, run.run_id, run.try_number, table, start, end, strategy,
              row_count, inserted, updated, deleted, checksum, datetime.now(timezone.utc))
    marks = ", ".join("?" for _ in _COLUMNS)
    engine.execute(f"INSERT INTO {LEDGER_TABLE} ({', '.join(_COLUMNS)}) VALUES ({marks})", values)


def last_checksum(engine: Engine, table: str, start: datetime, end: datetime) -> str | None:
    """The checksum of the latest recorded write of this interval of `table`, if any."""
    rows = engine.query(f"SELECT checksum FROM {LEDGER_TABLE} WHERE table_name = ? AND interval_start = ? "
                        f"AND interval_end = ? ORDER BY written_at DESC LIMIT 1", (table, start, end))
    return rows[0][0] if rows else None


def _text(value: Any) -> str:
    if isinstance(value, str):
        try:  # SQLite keeps timestamps as text
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()
    return "" if value is None else str(value)


def read_ledger(engine: Engine, table: str | None = None) -> LedgerReport:
    """Every ledger row (optionally of one target table) and the conflicting intervals."""
    with engine.reading():
        return _read_ledger(engine, table)


def _read_ledger(engine: Engine, table: str | None) -> LedgerReport:
    if engine.table_columns(TableName((LEDGER_TABLE,))) is None:
        raise LedgerError(f"no {LEDGER_TABLE} table in this database: nothing has been written "
                          f"through dagguard.idempotent here")
    where, params = ("WHERE table_name = ?", (table,)) if table else ("", ())
    rows = engine.query(f"SELECT {', '.join(_COLUMNS)} FROM {LEDGER_TABLE} {where} "
                        f"ORDER BY written_at, table_name", params)
    entries = [entry_from_record(dict(zip(_COLUMNS, row))) for row in rows]
    return LedgerReport(tuple(entries), find_conflicts(entries))


def entry_from_record(record: dict[str, Any]) -> LedgerEntry:
    """One ledger row (column name -> value, as any engine returns it) as a LedgerEntry."""
    return LedgerEntry(
        table_name=record["table_name"], interval_start=_text(record["interval_start"]),
        interval_end=_text(record["interval_end"]), strategy=record["strategy"],
        row_count=int(record["row_count"]), rows_inserted=int(record["rows_inserted"] or 0),
        rows_updated=int(record["rows_updated"] or 0), rows_deleted=int(record["rows_deleted"] or 0),
        checksum=record["checksum"], written_at=_text(record["written_at"]),
        dag_id=record["dag_id"], task_id=record["task_id"], run_id=record["run_id"],
        try_number=record["try_number"])


def find_conflicts(entries: list[LedgerEntry]) -> tuple[LedgerConflict, ...]:
    """Intervals written more than once whose checksums differ."""
    groups: dict[tuple[str, str, str], list[LedgerEntry]] = {}
    for entry in entries:
        groups.setdefault((entry.table_name, entry.interval_start, entry.interval_end), []).append(entry)
    conflicts = []
    for (table, start, end), writes in groups.items():
        checksums = tuple(dict.fromkeys(w.checksum for w in writes))
        if any(not same_data(a, b) for a in checksums for b in checksums):
            conflicts.append(LedgerConflict(table, start, end, len(writes), checksums))
    return tuple(conflicts)
