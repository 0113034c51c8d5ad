"""The commit of an Iceberg write: the overwrite of the write's scope staged in one pyiceberg
transaction, its row count checked, then committed onto the snapshot the write read.

Two ways to stage it. `stage_overwrite` is pyiceberg's `Transaction.overwrite`, which writes the
new data files while it stages. `write_files` + `stage_files` split it: the data files are
written first (while another thread computes the batch's fingerprint, which the commit's
summary needs, so the two overlap on a second core), then staged as `Transaction.overwrite`
stages them: the scope's delete, then an append of those files. Files written for a commit that
does not happen are deleted (`discard_files`); nothing references them.
"""

from __future__ import annotations

import functools
import uuid
import warnings
from typing import Any

from dagguard.idempotent.errors import DatabaseRefusedError


def without_library_retries(table: Any) -> Any:
    """`table` whose commits pyiceberg does not retry (commit.retry.num-retries 0, in memory only:
    the catalog's table keeps its properties). pyiceberg's retry re-applies the write on the
    newer snapshot; dagguard's re-reads the interval first."""
    from pyiceberg.table import Table

    properties = {**table.metadata.properties, "commit.retry.num-retries": "0"}
    metadata = table.metadata.model_copy(update={"properties": properties})
    return Table(table.name(), metadata=metadata, metadata_location=table.metadata_location,
                 io=table.io, catalog=table.catalog)


def transaction(table: Any) -> Any:
    """A pyiceberg Transaction of `table` that builds its staged metadata once per staged change.

    pyiceberg's `Transaction.table_metadata` applies every staged update to the table's metadata
    and deep-copies the result on each read, and staging an overwrite reads it some thirty times
    (a delete snapshot, then an append): 5-15 ms of CPU per write, on the write's critical path.
    The result depends only on the table's metadata and the staged updates (a tuple replaced,
    never changed in place, whenever one is staged), and pyiceberg's metadata models are frozen,
    so it is kept until either changes. A pyiceberg without those attributes gets its own
    Transaction."""
    kind = _staging_transaction()
    return kind(table) if kind is not None else table.transaction()


@functools.lru_cache(maxsize=1)
def _staging_transaction() -> Any:
    from pyiceberg.table import Transaction

    staged = getattr(Transaction, "table_metadata", None)
    if not isinstance(staged, property) or staged.fget is None:
        return None

    class StagingTransaction(Transaction):
        _kept: tuple[Any, Any, Any] | None = None

        @property
        def table_metadata(self) -> Any:
            kept, base, updates = self._kept, getattr(self, "_table", None), getattr(self, "_updates", None)
            # Only an immutable tuple of updates tells a change by its identity: another
            # pyiceberg's list, changed in place, would keep stale metadata.
            if base is None or not isinstance(updates, tuple):
                return staged.fget(self)
            if kept is not None and kept[0] is base.metadata and kept[1] is updates:
                return kept[2]
            metadata = staged.fget(self)
            self._kept = (base.metadata, updates, metadata)
            return metadata

    return StagingTransaction


def can_write_files_first() -> bool:
    """Does this pyiceberg have the pieces Transaction.overwrite is made of (0.12 has)?"""
    try:
        from pyiceberg.io.pyarrow import _dataframe_to_data_files  # noqa: F401
        from pyiceberg.table import Transaction
        from pyiceberg.table.snapshots import Operation  # noqa: F401
    except ImportError:
        return False
    return hasattr(Transaction, "_append_snapshot_producer")


def stage_overwrite(transaction: Any, rows: Any, scope: Any, properties: dict[str, str]) -> None:
    """Stage the overwrite of `scope` with `rows` (the data files are written now)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Delete operation did not match any records"
        transaction.overwrite(rows, overwrite_filter=scope, snapshot_properties=properties)


def write_files(transaction: Any, rows: Any) -> list[Any]:
    """Write `rows` as the table's data files (partitioned and sized as Transaction.overwrite
    would write them), referenced by nothing yet: the DataFiles to stage."""
    from pyiceberg.io.pyarrow import _dataframe_to_data_files

    if not len(rows):
        return []
    return list(_dataframe_to_data_files(table_metadata=transaction.table_metadata, df=rows,
                                         io=transaction._table.io, write_uuid=uuid.uuid4()))


def stage_files(transaction: Any, files: list[Any], scope: Any, properties: dict[str, str]) -> None:
    """Stage the overwrite of `scope` with the data files `files`, as Transaction.overwrite does:
    the delete of the scope (files it wholly holds dropped, others rewritten without its rows),
    then one append snapshot of the files."""
    from pyiceberg.table.snapshots import Operation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Delete operation did not match any records"
        transaction.delete(delete_filter=scope, snapshot_properties=properties,
                           _isolation_operation=Operation.OVERWRITE)
    with transaction._append_snapshot_producer(properties) as append:
        for data_file in files:
            append.append_data_file(data_file)


def discard_files(table: Any, files: list[Any]) -> None:
    """Delete data files written for a commit that is not made (no snapshot names them)."""
    for data_file in files:
        try:
            table.io.delete(data_file.file_path)
        except OSError:
            pass  # an orphan file, which no reader sees and orphan-file cleanup removes


def check_staged_count(table: Any, transaction: Any, stored: int, written: int) -> None:
    """Refuse to commit a staged table whose row count is not the old count less the rows in
    scope plus the rows written: an overwrite that kept old files beside the new ones
    (pyiceberg #3758 duplicated rows of day-partitioned tables so) would double rows."""
    before = _total_records(table.metadata.current_snapshot())
    after = _total_records(transaction.table_metadata.current_snapshot())
    if before is None or after is None:
        return
    if after != before - stored + written:
        raise DatabaseRefusedError(
            f"pyiceberg staged an overwrite of {'.'.join(table.name())} leaving {after} rows where "
            f"{before - stored + written} were expected ({before} before, {stored} in scope, {written} "
            f"written), so old rows would have stayed beside the new ones; nothing was committed")


def _total_records(snapshot: Any) -> int | None:
    if snapshot is None:
        return 0
    value = (snapshot.summary.additional_properties if snapshot.summary else {}).get("total-records")
    return int(value) if value is not None else None
