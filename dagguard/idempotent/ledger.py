"""The ledger `dagguard_write_log`: one row per write, in the write's own transaction, so
that an interval written twice with different data (a non-deterministic source) shows up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dagguard.idempotent.checksum import same_data
from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.errors import LedgerError
from dagguard.idempotent.identifiers import TableName

LEDGER_TABLE = "dagguard_write_log"

_COLUMNS = ("dag_id", "task_id", "run_id", "try_number", "table_name", "interval_start",
            "interval_end", "strategy", "row_count", "rows_inserted", "rows_updated",
            "rows_deleted", "checksum", "written_at")
# The ledger's columns in order, for engines that keep it outside SQL (Delta Lake).
LEDGER_COLUMNS = _COLUMNS
# The Airflow partition key a write was made for (None for a plain interval write). Added after
# the first ledgers were created: ensure_ledger() adds it to a ledger that lacks it, and readers
# of a ledger without it (opened read-only) see None.
PARTITION_KEY = "partition_key"


@dataclass(frozen=True)
class RunInfo:
    """Which Airflow task instance wrote, when known."""

    dag_id: str | None = None
    task_id: str | None = None
    run_id: str | None = None
    try_number: int | None = None
    # The partition the write was for: how write_batch hands it to the table formats' ledgers
    # (the SQL engines' record_write() takes it as an argument).
    partition_key: str | None = None


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded write."""

    table_name: str
    interval_start: str | None  # None for a partition written without an interval
    interval_end: str | None
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
    partition_key: str | None = None


@dataclass(frozen=True)
class LedgerConflict:
    """An interval (or partition) of a table written more than once with different checksums."""

    table_name: str
    interval_start: str
    interval_end: str
    writes: int
    checksums: tuple[str, ...]
    partition_key: str | None = None


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
    columns = ", ".join(f"{name} {types.get(name, text)}" for name in (*_COLUMNS, PARTITION_KEY))
    existing = engine.table_columns(TableName((LEDGER_TABLE,)))
    if existing is None:
        # Concurrent CREATE TABLE IF NOT EXISTS can still collide on PostgreSQL's catalog.
        engine.lock_for_ddl(LEDGER_TABLE)
        engine.execute(f"CREATE TABLE IF NOT EXISTS {LEDGER_TABLE} ({columns})")
    elif PARTITION_KEY not in {name.lower() for name in existing}:
        # A ledger from before partition keys: the column is added in place, NULL for old rows.
        engine.lock_for_ddl(LEDGER_TABLE)
        guard = "" if engine.dialect == "sqlite" else "IF NOT EXISTS "  # SQLite serialises writers instead
        engine.execute(f"ALTER TABLE {LEDGER_TABLE} ADD COLUMN {guard}{PARTITION_KEY} {text}")


def record_write(engine: Engine, run: RunInfo, table: str, start: datetime | None, end: datetime | None,
                 strategy: str, counts: tuple[int, int, int, int], checksum: str,
                 partition_key: str | None = None) -> None:
    """Append one ledger row; runs inside the write's transaction (after ensure_ledger)."""
    row_count, inserted, updated, deleted = counts
    values = (run.dag_id, run.task_id, run.run_id, run.try_number, table, start, end, strategy,
              row_count, inserted, updated, deleted, checksum, datetime.now(timezone.utc), partition_key)
    names = (*_COLUMNS, PARTITION_KEY)
    marks = ", ".join("?" for _ in names)
    engine.execute(f"INSERT INTO {LEDGER_TABLE} ({', '.join(names)}) VALUES ({marks})", values)


def last_checksum(engine: Engine, table: str, start: datetime | None, end: datetime | None,
                  partition_key: str | None = None) -> str | None:
    """The checksum of the latest recorded write of this interval of `table` (of this partition
    when `partition_key` is given; of the partition alone when `start` is None), if any."""
    if start is None:
        where, params = "interval_start IS NULL AND partition_key = ?", (table, partition_key)
    elif partition_key is not None:
        where = "interval_start = ? AND interval_end = ? AND partition_key = ?"
        params = (table, start, end, partition_key)
    else:
        where, params = "interval_start = ? AND interval_end = ?", (table, start, end)
    rows = engine.query(f"SELECT checksum FROM {LEDGER_TABLE} WHERE table_name = ? AND {where} "
                        f"ORDER BY written_at DESC LIMIT 1", params)
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


def _optional_text(value: Any) -> str | None:
    # A partition written without an interval has none: None, not "".
    return None if value is None else _text(value)


def read_ledger(engine: Engine, table: str | None = None) -> LedgerReport:
    """Every ledger row (optionally of one target table) and the conflicting intervals."""
    with engine.reading():
        return _read_ledger(engine, table)


def _read_ledger(engine: Engine, table: str | None) -> LedgerReport:
    existing = engine.table_columns(TableName((LEDGER_TABLE,)))
    if existing is None:
        raise LedgerError(f"no {LEDGER_TABLE} table in this database: nothing has been written "
                          f"through dagguard.idempotent here")
    names = _COLUMNS + ((PARTITION_KEY,) if PARTITION_KEY in {n.lower() for n in existing} else ())
    where, params = ("WHERE table_name = ?", (table,)) if table else ("", ())
    rows = engine.query(f"SELECT {', '.join(names)} FROM {LEDGER_TABLE} {where} "
                        f"ORDER BY written_at, table_name", params)
    entries = [entry_from_record(dict(zip(names, row))) for row in rows]
    return LedgerReport(tuple(entries), find_conflicts(entries))


def entry_from_record(record: dict[str, Any]) -> LedgerEntry:
    """One ledger row (column name -> value, as any engine returns it) as a LedgerEntry."""
    return LedgerEntry(
        table_name=record["table_name"], interval_start=_optional_text(record["interval_start"]),
        interval_end=_optional_text(record["interval_end"]), strategy=record["strategy"],
        partition_key=record.get(PARTITION_KEY),
        row_count=int(record["row_count"]), rows_inserted=int(record["rows_inserted"] or 0),
        rows_updated=int(record["rows_updated"] or 0), rows_deleted=int(record["rows_deleted"] or 0),
        checksum=record["checksum"], written_at=_text(record["written_at"]),
        dag_id=record["dag_id"], task_id=record["task_id"], run_id=record["run_id"],
        try_number=record["try_number"])


def find_conflicts(entries: list[LedgerEntry]) -> tuple[LedgerConflict, ...]:
    """Intervals (and partitions) written more than once whose checksums differ."""
    groups: dict[tuple[str, str, str, str | None], list[LedgerEntry]] = {}
    for entry in entries:
        key = (entry.table_name, entry.interval_start, entry.interval_end, entry.partition_key)
        groups.setdefault(key, []).append(entry)
    conflicts = []
    for (table, start, end, partition), writes in groups.items():
        checksums = tuple(dict.fromkeys(w.checksum for w in writes))
        if any(not same_data(a, b) for a in checksums for b in checksums):
            conflicts.append(LedgerConflict(table, start, end, len(writes), checksums, partition))
    return tuple(conflicts)
