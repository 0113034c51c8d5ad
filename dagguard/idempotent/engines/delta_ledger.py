"""The ledger of a Delta table: a small Delta table of its own at `<table>/_dagguard/write_log`.

Beside the table, so it travels with it (copying or granting access to the table's folder
covers its ledger) and works whether `conn` was the lake or a DeltaTable. Readers and VACUUM
of the table ignore it: Delta reads only the files its log names, and VACUUM skips folders
whose name begins with `_`. The same columns as the SQL engines' dagguard_write_log, one row
appended per write after the write's commit (two Delta tables cannot commit together: a write
killed between the two commits has no ledger row, and its rerun is then rewritten, not skipped).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dagguard.idempotent.errors import LedgerError
from dagguard.idempotent.identifiers import TableName
from dagguard.idempotent.ledger import (LEDGER_COLUMNS, PARTITION_KEY, LedgerReport, entry_from_record,
                                        find_conflicts)

LEDGER_FOLDER = "_dagguard/write_log"
_INTEGERS = ("try_number", "row_count", "rows_inserted", "rows_updated", "rows_deleted")
_TIMES = ("interval_start", "interval_end", "written_at")
# Concurrent first writes both try to create the ledger table; the loser appends again.
_APPEND_ATTEMPTS = 10
# A new ledger is checkpointed every 10 appends (Delta's default is 100): opening it replays the
# commits since the last checkpoint, one small JSON file per write.
_CONFIGURATION = {"delta.checkpointInterval": "10"}


@dataclass(frozen=True)
class LastWrite:
    """The latest ledger entry of an interval: its checksum, and the entry's identity as a
    commit's note names it (row_link)."""

    checksum: str
    link: dict[str, Any]


def _schema() -> Any:
    import pyarrow as pa

    def kind(name: str) -> Any:
        if name in _INTEGERS:
            return pa.int64()
        if name in _TIMES:
            return pa.timestamp("us", tz="UTC")
        return pa.string()

    return pa.schema([(name, kind(name)) for name in (*LEDGER_COLUMNS, PARTITION_KEY)])


def ledger_uri(engine: Any, table: TableName) -> str:
    """Where the ledger of `table` lives."""
    return f"{engine.table_uri(table)}/{LEDGER_FOLDER}"


def open_ledger(engine: Any, table: TableName) -> Any:
    """The ledger of `table` at its latest version, None before the first write recorded: one
    handle a write reads its last checksum from and appends its row to."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(ledger_uri(engine, table), storage_options=engine.storage_options())
    except TableNotFoundError:
        return None


def record_write(engine: Any, run: Any, table: TableName, interval: Any, strategy: str,
                 counts: tuple[int, int, int, int], checksum: str, ledger: Any = None,
                 written_at: datetime | None = None) -> None:
    """Append one ledger row, after the write's commit: to the `ledger` handle the write opened,
    or, before its first row, to a new ledger table. `written_at` is the one the commit's note
    named, else now."""
    import pyarrow as pa
    from deltalake import write_deltalake
    from deltalake.exceptions import CommitFailedError

    row_count, inserted, updated, deleted = counts
    values = (run.dag_id, run.task_id, run.run_id, run.try_number, str(table), interval.start, interval.end,
              strategy, row_count, inserted, updated, deleted, checksum, written_at or datetime.now(timezone.utc),
              getattr(run, "partition_key", None))
    row = pa.Table.from_pylist([dict(zip((*LEDGER_COLUMNS, PARTITION_KEY), values))], schema=_schema())
    for attempt in range(_APPEND_ATTEMPTS):
        try:
            if ledger is None:
                write_deltalake(ledger_uri(engine, table), row, mode="append", schema_mode="merge",
                                storage_options=engine.storage_options(), configuration=_CONFIGURATION)
            else:
                # An append commits over other appends since the handle's version (delta-rs
                # rebases it); a ledger from before partition keys gains the column.
                older = PARTITION_KEY not in ledger.schema().to_arrow().names
                write_deltalake(ledger, row, mode="append", schema_mode="merge" if older else None)
            return
        except CommitFailedError:
            if attempt < _APPEND_ATTEMPTS - 1:
                ledger = open_ledger(engine, table)
                continue
            failure: Exception = CommitFailedError("concurrent appends kept winning")
        except Exception as exc:  # the store's own errors: permissions, network
            failure = exc
        # Not the write's error: its commit stands, and redoing it would commit it again.
        raise LedgerError(f"the write of {table} for {interval} was committed, but its ledger row could not be "
                          f"appended to {ledger_uri(engine, table)}: {' '.join(str(failure).split())[:300]}") from failure


def last_checksum(engine: Any, table: TableName, interval: Any, ledger: Any = None) -> str | None:
    """The checksum of the latest recorded write of this interval of `table`, if any."""
    last = last_write(engine, table, interval, ledger)
    return last.checksum if last is not None else None


def last_write(engine: Any, table: TableName, interval: Any, ledger: Any = None) -> LastWrite | None:
    """The latest recorded write of this interval of `table`, if any, from the `ledger` handle
    given or the ledger opened now. Read through DataFusion, which prunes the ledger's one-row
    files on their statistics: the cost no longer grows with the number of writes recorded (see
    delta_query.py)."""
    import pyarrow.compute as pc

    from dagguard.idempotent.engines.delta_query import select_rows, text_literal, timestamp_literal

    ledger = ledger if ledger is not None else open_ledger(engine, table)
    if ledger is None:
        return None
    rows = select_rows(ledger, ["checksum", "written_at", "run_id", "try_number"],
                       f'"table_name" = {text_literal(str(table))} '
                       f'AND "interval_start" = {timestamp_literal(interval.start)} '
                       f'AND "interval_end" = {timestamp_literal(interval.end)}')
    if not rows.num_rows:
        return None
    latest = rows.slice(pc.index(rows.column("written_at"), pc.max(rows.column("written_at"))).as_py(), 1)
    entry = latest.to_pylist()[0]
    return LastWrite(entry["checksum"], row_link(entry["written_at"], entry["run_id"], entry["try_number"]))


def row_link(written_at: datetime, run_id: str | None, try_number: int | None) -> dict[str, Any]:
    """How a commit's note names the ledger row appended after the commit: its written_at (to
    the microsecond the ledger keeps), run_id and try_number."""
    return {"written_at": written_at.astimezone(timezone.utc).isoformat(timespec="microseconds"),
            "run_id": run_id, "try_number": try_number}


def read_ledger(engine: Any, table: str | None) -> LedgerReport:
    """The ledger of `table` (of the lake's tables, or of the DeltaTable given, when None)."""
    from dagguard.idempotent.engines.delta_lake import DeltaLake

    if table is not None:
        names = [TableName.parse(table)]
    elif isinstance(engine.connection, DeltaLake):
        names = _tables_with_ledgers(engine.connection.uri)
    else:
        names = [TableName(("table",))]  # a DeltaTable: its one ledger, whatever its name there
    entries = []
    for name in names:
        ledger = open_ledger(engine, name)
        if ledger is None:
            continue
        for record in ledger.to_pyarrow_table().to_pylist():
            if table is None or record["table_name"] == table:
                entries.append(entry_from_record(record))
    if not entries and table is None and not names:
        raise LedgerError(f"no dagguard_write_log table ({LEDGER_FOLDER} of a table) under "
                          f"{engine.connection.uri}: nothing has been written through dagguard.idempotent here")
    entries.sort(key=lambda e: (e.written_at, e.table_name))
    return LedgerReport(tuple(entries), find_conflicts(entries))


def _tables_with_ledgers(lake: str) -> list[TableName]:
    """The tables of a local lake whose folder holds a ledger (names of up to three parts)."""
    if "://" in lake and not lake.startswith("file://"):
        raise LedgerError(f"the lake {lake} is not on this machine: name the table (--table orders) "
                          f"whose ledger to read")
    root = lake.removeprefix("file://")
    found = []
    for folder, subfolders, _ in os.walk(root):
        depth = os.path.relpath(folder, root).count(os.sep)
        parts = tuple(os.path.relpath(folder, root).split(os.sep))
        if os.path.isdir(os.path.join(folder, LEDGER_FOLDER)) and folder != root:
            found.append(TableName(parts))
        # Below a table's folder lie its data and partitions, not other tables.
        if depth >= 2 or os.path.isdir(os.path.join(folder, "_delta_log")):
            subfolders[:] = []
        else:
            subfolders[:] = [s for s in subfolders if not s.startswith(("_", "."))]
    return sorted(found, key=str)
