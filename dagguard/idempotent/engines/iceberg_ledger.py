"""The ledger of an Iceberg catalog: an Iceberg table `dagguard_write_log` in each namespace
dagguard writes to, with the columns of the SQL engines' ledger table.

Iceberg cannot commit two tables at once, so the ledger row is appended right after the data
commit: a writer killed between the two leaves the data written and its row missing (a later
rerun then rewrites the interval instead of recognising it). The data snapshot itself carries
the write's interval and checksum in its summary (`dagguard.*` properties), atomically. A
write stages its row's append (files written, nothing committed) while its data files are
written, and commits it after the data commit; its `written_at` is then when it was staged,
just before the data commit.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from dagguard.idempotent.ledger import (_COLUMNS, LEDGER_TABLE, PARTITION_KEY, LedgerEntry, LedgerReport, RunInfo,
                                        find_conflicts)

# The ledger's rows are all in its current snapshot; its older snapshots only lengthen the
# metadata that each append copies (pyiceberg deep-copies it some twenty times per append:
# 0.03 CPU s per append at 10 snapshots, 0.085 s at 100, 0.47 s at 400). Past this many, an
# append is followed by the expiry of all but the current one.
KEPT_SNAPSHOTS = 16
_INTEGERS = frozenset(("try_number", "row_count", "rows_inserted", "rows_updated", "rows_deleted"))
_TIMES = frozenset(("interval_start", "interval_end", "written_at"))


def ledger_schema() -> Any:
    """The Iceberg schema of the ledger table."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

    def kind(name: str) -> Any:
        return LongType() if name in _INTEGERS else TimestamptzType() if name in _TIMES else StringType()

    return Schema(*(NestedField(at, name, kind(name), required=False)
                    for at, name in enumerate((*_COLUMNS, PARTITION_KEY), 1)))


def ledger_table(catalog: Any, namespace: tuple[str, ...]) -> Any:
    """The namespace's ledger table, created on first use (a concurrent creator wins harmlessly)."""
    from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError

    identifier = (*namespace, LEDGER_TABLE)
    try:
        return _with_partition_key(catalog, catalog.load_table(identifier))
    except NoSuchTableError:
        pass
    try:
        return catalog.create_table(identifier, ledger_schema())
    except TableAlreadyExistsError:
        return catalog.load_table(identifier)


def _with_partition_key(catalog: Any, ledger: Any) -> Any:
    """A ledger from before partition keys gains the column (a concurrent writer adding it
    too makes this commit fail: the table is then read again)."""
    from pyiceberg.types import StringType

    if PARTITION_KEY in {field.name for field in ledger.schema().fields}:
        return ledger
    try:
        with ledger.update_schema() as update:
            update.add_column(PARTITION_KEY, StringType())
    except Exception:
        pass  # (CommitFailedException or a duplicate column: someone else added it)
    return catalog.load_table(ledger.name())


def ledger_row(run: RunInfo, table: str, start: datetime, end: datetime, strategy: str,
               counts: tuple[int, int, int, int], checksum: str) -> dict[str, Any]:
    """One ledger row, as the SQL engines' record_write() writes it."""
    row_count, inserted, updated, deleted = counts
    values = (run.dag_id, run.task_id, run.run_id, run.try_number, table, start, end, strategy,
              row_count, inserted, updated, deleted, checksum, datetime.now(timezone.utc), run.partition_key)
    return dict(zip((*_COLUMNS, PARTITION_KEY), values))


def append_row(ledger: Any, row: dict[str, Any]) -> None:
    """Append one row; pyiceberg retries an append that lost a race (appends never conflict)."""
    import pyarrow as pa

    ledger.append(pa.Table.from_pylist([row], schema=ledger.schema().as_arrow()))
    trim_history(ledger)


def trim_history(ledger: Any) -> None:
    """Expire every snapshot of the ledger table but its current one, once it has more than
    KEPT_SNAPSHOTS (the current snapshot still lists every data file, so no row is lost). Best
    effort, in a commit of its own: one that loses to another writer is left to the next append."""
    from datetime import datetime, timezone

    if len(ledger.metadata.snapshots) <= KEPT_SNAPSHOTS:
        return
    try:
        ledger.maintenance.expire_snapshots().older_than(datetime.now(timezone.utc)).commit()
    except Exception:
        pass  # (a concurrent append or expiry: the ledger's rows are unaffected)


def staged_append(catalog: Any, namespace: tuple[str, ...], row: dict[str, Any]) -> Any:
    """A transaction of the namespace's ledger appending `row`, staged (its data file, manifest
    and manifest list written) and not committed: commit_transaction() makes the row exist."""
    import pyarrow as pa

    from dagguard.idempotent.engines.iceberg_commit import transaction as staging_transaction

    ledger = ledger_table(catalog, namespace)
    transaction = staging_transaction(ledger)
    transaction.append(pa.Table.from_pylist([row], schema=ledger.schema().as_arrow()))
    return transaction


def read_entries(catalog: Any, table: str | None) -> LedgerReport:
    """Every namespace's ledger rows (optionally of one target table, `namespace.table`)."""
    from dagguard.idempotent.errors import LedgerError
    from dagguard.idempotent.ledger import _text

    rows: list[dict[str, Any]] = []
    found = False
    for namespace in _namespaces(catalog):
        if not catalog.table_exists((*namespace, LEDGER_TABLE)):
            continue
        found = True
        rows += catalog.load_table((*namespace, LEDGER_TABLE)).scan().to_arrow().to_pylist()
    if not found:
        raise LedgerError(f"no {LEDGER_TABLE} table in any namespace of this Iceberg catalog: nothing has "
                          f"been written through dagguard.idempotent here")
    if table is not None:
        rows = [row for row in rows if row["table_name"] == table]
    rows.sort(key=lambda row: (row["written_at"], row["table_name"]))
    entries = [LedgerEntry(
        table_name=row["table_name"], interval_start=_text(row["interval_start"]),
        interval_end=_text(row["interval_end"]), strategy=row["strategy"], row_count=int(row["row_count"]),
        rows_inserted=int(row["rows_inserted"] or 0), rows_updated=int(row["rows_updated"] or 0),
        rows_deleted=int(row["rows_deleted"] or 0), checksum=row["checksum"],
        written_at=_text(row["written_at"]), dag_id=row["dag_id"], task_id=row["task_id"],
        run_id=row["run_id"], try_number=row["try_number"], partition_key=row.get(PARTITION_KEY)) for row in rows]
    return LedgerReport(tuple(entries), find_conflicts(entries))


def _namespaces(catalog: Any) -> list[tuple[str, ...]]:
    """Every namespace of the catalog, nested ones included."""
    pending, seen = list(catalog.list_namespaces()), []
    while pending:
        namespace = tuple(pending.pop())
        seen.append(namespace)
        pending += [n for n in catalog.list_namespaces(namespace) if tuple(n) != namespace and tuple(n) not in seen]
    return seen
