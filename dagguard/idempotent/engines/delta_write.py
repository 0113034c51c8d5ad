"""One attempt at a Delta write: the strategy as one commit on the table version just read.

replace and overwrite_partition are `write_deltalake(mode="overwrite", predicate=...)` (a
partition predicate drops whole files where the table is partitioned on the column), or a
DELETE of the interval for an empty batch. merge of a batch with every column is planned in
Arrow (delta_merge.py: the batch's rows matched with the interval's on the unique key) and
written as the same predicate overwrite; other merges are `DeltaTable.merge` on the unique key
with the target side restricted to the interval. Every commit is made with `max_commit_retries=0`:
delta-rs then refuses it when another commit landed after the version read, instead of
rebasing it, and DeltaEngine.write redoes the attempt.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any, Callable

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.arrow.fingerprint import fingerprint, fingerprint_checksum
from dagguard.idempotent.arrow.probe import probe
from dagguard.idempotent.checksum import batch_checksum
from dagguard.idempotent.engines.delta_merge import merge_in_arrow
from dagguard.idempotent.engines.delta_notes import commit_properties, may_repeat, newest_note, note, repeats
from dagguard.idempotent.engines.delta_query import count_rows, quoted as _q, select_rows, timestamp_literal
from dagguard.idempotent.errors import IntervalViolationError, LedgerError

# What write.py's shared checks return for a version's columns: the batch as the table stores
# it (naive UTC for timestamp_ntz, the partition value typed like its column) and the
# (start, end, partition value) bounds, in the same types.
Prepare = Callable[[dict[str, str]], tuple[AnyBatch, tuple[Any, Any, Any]]]


@dataclass(frozen=True)
class Scope:
    """The rows a write owns, as a delta-rs predicate: SQL text over the columns of `alias`
    (DataFusion's, which the write and the reads of delta_query.py both parse)."""

    text: Callable[[str], str]


def write_once(engine: Any, delta_table: Any, spec: Any, interval: Any, run: Any,
               prepare: Prepare) -> tuple[dict[str, int], str]:
    """Check the batch against this version of the table and commit the write: (counts,
    checksum). CommitFailedError when another commit landed since this version.

    The batch's fingerprint (the checksum) is needed before the commit only when the write may
    be a rerun of the interval's last recorded write (delta_notes.may_repeat); otherwise a
    thread computes it while delta-rs writes, the commit's note names the ledger row instead,
    and the row is appended with the checksum after the commit."""
    import pyarrow as pa

    from dagguard.idempotent.engines.delta_ledger import last_write, open_ledger, record_write

    schema = pa.schema(delta_table.schema().to_arrow())
    batch, bounds = prepare({f.name: str(f.type) for f in schema})
    data = table_rows(batch, schema, str(spec.table))
    scope = _scope(spec, schema, bounds)
    written = data.select(list(batch.columns)) if batch.columns else data
    ledger = open_ledger(engine, spec.table)
    last = last_write(engine, spec.table, interval, ledger) if ledger is not None else None
    arrow = isinstance(batch, ArrowBatch) and len(written) > 0
    probed = probe(written) if arrow else None
    newest = newest_note(delta_table, note(spec, interval, None, probed)) if last is not None else None
    if arrow and not may_repeat(newest, last, probed, len(written)):
        return _write_fingerprinting(engine, delta_table, spec, interval, run, batch, written, data, scope,
                                     probed, ledger)
    # The checksum of an Arrow batch is the fingerprint of its rows as the table stores them,
    # which the interval's rows are compared with on a rerun of the last write; Python rows
    # keep the row checksum the SQL engines give them.
    mine = fingerprint(written) if arrow else None
    checksum = _as_checksum(mine, engine) if mine is not None else batch_checksum(batch)
    ours = note(spec, interval, checksum, probed)
    if (len(written) and last is not None and last.checksum == checksum
            and (spec.strategy == "merge" or set(batch.columns) == set(schema.names))
            and (repeats(newest, ours, last) or _interval_holds(delta_table, scope, written, mine))):
        # The interval already holds exactly these rows: no new table version.
        record_write(engine, run, spec.table, interval, spec.strategy, (len(batch), 0, 0, 0), checksum, ledger)
        return {"inserted": 0, "updated": 0, "deleted": 0}, checksum
    counts = _commit(delta_table, spec, written, data, scope, commit_properties(ours))
    record_write(engine, run, spec.table, interval, spec.strategy,
                 (len(batch), counts["inserted"], counts["updated"], counts["deleted"]), checksum, ledger)
    return counts, checksum


def _write_fingerprinting(engine: Any, delta_table: Any, spec: Any, interval: Any, run: Any, batch: AnyBatch,
                          written: Any, data: Any, scope: Scope, probed: str | None,
                          ledger: Any) -> tuple[dict[str, int], str]:
    """Commit a write that cannot repeat the interval's last one while a thread computes its
    checksum (delta-rs and numpy release the GIL): the note names the ledger row appended after
    the commit, which carries the checksum. A crash between the two leaves a note naming no row,
    which no rerun takes for its own (delta_notes)."""
    from dagguard.idempotent.engines.delta_ledger import record_write, row_link

    written_at = datetime.now(timezone.utc)
    ours = note(spec, interval, None, probed, row_link(written_at, run.run_id, run.try_number))
    with ThreadPoolExecutor(max_workers=1) as pool:
        checksummed = pool.submit(_checksum, engine, batch, written)
        counts = _commit(delta_table, spec, written, data, scope, commit_properties(ours))
        try:
            checksum = checksummed.result()
        except Exception as exc:
            raise LedgerError(f"the write of {spec.table} for {interval} was committed, but the checksum of its "
                              f"ledger row could not be computed: {type(exc).__name__}: {exc}") from exc
    record_write(engine, run, spec.table, interval, spec.strategy,
                 (len(batch), counts["inserted"], counts["updated"], counts["deleted"]), checksum, ledger,
                 written_at=written_at)
    return counts, checksum


def _commit(delta_table: Any, spec: Any, written: Any, data: Any, scope: Scope, commit: Any) -> dict[str, int]:
    """The strategy's one commit (or none, for a merge that changes nothing)."""
    if spec.strategy == "merge":
        return _merge(delta_table, spec, written, data, scope, commit)
    return _overwrite(delta_table, data, scope, commit)


def _checksum(engine: Any, batch: AnyBatch, written: Any) -> str:
    """The batch's checksum: the fingerprint of its rows as the table stores them, or (where
    numpy or a column's type has none) the row checksum."""
    mine = fingerprint(written)
    return _as_checksum(mine, engine) if mine is not None else batch_checksum(batch)


def _overwrite(delta_table: Any, data: Any, scope: Scope, commit: Any) -> dict[str, int]:
    """replace / overwrite_partition: the scope's rows become `data`, in one commit; so does a
    merge into an empty interval, where every row is an insert (delta-rs's merge would join the
    batch with nothing: 2.8 s for 1M rows, the overwrite 0.65 s). The rows it replaced are
    counted from the files' statistics (see _replaced_rows), or by a query before the commit
    where a file of the table has none."""
    from deltalake import write_deltalake

    if not len(data):
        deleted = count_rows(delta_table, scope.text(""))
        if deleted:
            delta_table.delete(scope.text(""), commit_properties=commit)
        # (An empty batch over an empty interval commits nothing: there is nothing to change.)
        return {"inserted": 0, "updated": 0, "deleted": deleted}
    read, before = delta_table.version(), stored_rows(delta_table)
    counted = count_rows(delta_table, scope.text("")) if before is None else None
    write_deltalake(delta_table, data, mode="overwrite", predicate=scope.text(""), commit_properties=commit)
    if counted is None:
        counted = _replaced_rows(delta_table, read, before, len(data), scope)
    return {"inserted": len(data), "updated": 0, "deleted": counted}


def stored_rows(delta_table: Any) -> int | None:
    """How many rows the table's version holds: the sum of its files' numRecords statistics,
    which Delta writers record in each file's add action; None when a file has none."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        counts = pa.chunked_array(delta_table.get_add_actions(flatten=False).column("num_records"))
    except KeyError:
        return None
    if counts.null_count:
        return None
    return int(pc.sum(counts).as_py() or 0)


def _replaced_rows(delta_table: Any, read: int, before: int, inserted: int, scope: Scope) -> int:
    """The rows the overwrite just committed on version `read` (holding `before` rows) took away:
    its commit removed exactly the scope's rows and added `inserted`, and it sits directly on
    `read` (max_commit_retries=0), so the difference of the two versions' counts is exact. A
    query of the version read answers instead should the table hold otherwise (it cannot with
    delta-rs 1.6, whose new files all carry statistics)."""
    from deltalake import DeltaTable

    after = stored_rows(delta_table) if delta_table.version() == read + 1 else None
    if after is not None:
        return before - after + inserted
    # A handle of its own: the table's may be the caller's DeltaTable, left at the new version.
    options = getattr(delta_table, "_storage_options", None) or None
    return count_rows(DeltaTable(delta_table.table_uri, version=read, storage_options=options), scope.text(""))


def _merge(delta_table: Any, spec: Any, source: Any, data: Any, scope: Scope, commit: Any) -> dict[str, int]:
    """merge: rows matched on the key inside the interval are updated where they differ, the
    others inserted; with delete_missing, the interval's rows the batch lacks are deleted."""
    if not len(source):
        if not spec.delete_missing:
            return {"inserted": 0, "updated": 0, "deleted": 0}
        metrics = delta_table.delete(scope.text(""), commit_properties=commit)
        return {"inserted": 0, "updated": 0, "deleted": int(metrics.get("num_deleted_rows", 0))}
    if set(source.column_names) == set(data.column_names):
        counts = merge_in_arrow(delta_table, spec, data, scope.text(""), commit)
        if counts is not None:
            return counts
    if not count_rows(delta_table, scope.text("")):
        return _overwrite(delta_table, data, scope, commit)  # every row an insert
    keys = " AND ".join(f"(t.{_q(k)} IS NOT DISTINCT FROM s.{_q(k)})" for k in spec.unique_key)
    merger = delta_table.merge(source, predicate=f"{keys} AND {scope.text('t.')}", source_alias="s",
                               target_alias="t", commit_properties=commit)
    values = [c for c in source.column_names if c not in spec.unique_key]
    if values:
        # Only rows that differ are rewritten and counted as updated; NULL equals NULL.
        same = " AND ".join(f"(t.{_q(c)} IS NOT DISTINCT FROM s.{_q(c)})" for c in values)
        merger = merger.when_matched_update(updates={_q(c): f"s.{_q(c)}" for c in values},
                                            predicate=f"NOT ({same})")
    merger = merger.when_not_matched_insert(updates={_q(c): f"s.{_q(c)}" for c in source.column_names})
    if spec.delete_missing:
        merger = merger.when_not_matched_by_source_delete(predicate=scope.text("t."))
    # A merge that changes nothing commits nothing (delta-rs writes no empty version).
    metrics = merger.execute()
    return {"inserted": int(metrics.get("num_target_rows_inserted", 0)),
            "updated": int(metrics.get("num_target_rows_updated", 0)),
            "deleted": int(metrics.get("num_target_rows_deleted", 0))}


def table_rows(batch: AnyBatch, schema: Any, table: str, kind: str = "Delta") -> Any:
    """The batch as a pyarrow Table of the Delta table's schema, in its column order: columns
    the batch lacks are NULL; a value a column cannot hold exactly is refused, naming it (and
    the `kind` of table: Spark's goes through here too)."""
    import pyarrow as pa

    arrays = []
    for target in schema:
        if target.name not in batch.columns:
            if not target.nullable and len(batch):
                raise IntervalViolationError(
                    f"the batch for {table} has no column {target.name!r}, which the Delta table declares "
                    f"NOT NULL; nothing was written")
            arrays.append(pa.nulls(len(batch), target.type))
            continue
        array = _typed(batch, target, table, kind)
        if not target.nullable and array.null_count:
            row = array.is_null().index(True).as_py()
            raise IntervalViolationError(
                f"row {row} of the batch for {table} has NULL in column {target.name!r}, which the Delta "
                f"table declares NOT NULL; nothing was written")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=schema)


def _typed(batch: AnyBatch, target: Any, table: str, kind: str = "Delta") -> Any:
    """One column of the batch as the target column's type, exactly (a safe cast)."""
    import pyarrow as pa

    try:
        if isinstance(batch, ArrowBatch):
            column = batch.column(target.name)
            return column if column.type == target.type else column.cast(target.type, safe=True)
        return pa.array([row[batch.index(target.name)] for row in batch.rows], type=target.type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        at, value = _first_unfit(batch, target)
        where = f" (row {at}: {value!r})" if at is not None else ""
        raise IntervalViolationError(
            f"column {target.name!r} of the batch for {table} holds values its {kind} column of type "
            f"{target.type} cannot store exactly{where}; nothing was written: {' '.join(str(exc).split())}"
        ) from exc


def _first_unfit(batch: AnyBatch, target: Any) -> tuple[int | None, Any]:
    """The first value of the column that its target type refuses, for the error message."""
    import pyarrow as pa

    at = batch.index(target.name)
    for number, row in enumerate(batch.rows):
        try:
            pa.array([row[at]], type=target.type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return number, row[at]
    return None, None


def _scope(spec: Any, schema: Any, bounds: tuple[Any, Any, Any]) -> Scope:
    """The interval's rows (the partition's, for overwrite_partition)."""
    import pyarrow as pa

    start, end, partition_value = bounds
    if spec.strategy == "overwrite_partition":
        column = spec.partition_column
        kind = schema.field(column).type
        if pa.types.is_timestamp(kind):
            # A timestamp partition column's partition is its UTC day.
            start = partition_value
            end = partition_value + timedelta(days=1)
        else:
            text = partition_value.isoformat() if isinstance(partition_value, date) else str(partition_value)
            return Scope(lambda alias: f"{alias}{_q(column)} = '{text}'")
    else:
        column = spec.time_column
    low, high = timestamp_literal(start), timestamp_literal(end)
    return Scope(lambda alias: f"({alias}{_q(column)} >= {low}) AND ({alias}{_q(column)} < {high})")


def _as_checksum(found: tuple[int, int, int], engine: Any) -> str:
    """`rows:delta1.6-<lane>.<lane>`: a checksum of its own kind, compared with its kind only."""
    return fingerprint_checksum(found, "delta" + ".".join(str(v) for v in engine.version[:2]))


def _interval_holds(delta_table: Any, scope: Scope, written: Any, mine: tuple[int, int, int] | None) -> bool:
    """Do the scope's rows, as the table holds them now, equal `written` (fingerprinted as
    `mine`)? False whenever a fingerprint cannot be computed (no numpy, a nested type)."""
    mine = mine or fingerprint(written)
    if mine is None:
        return False
    current = select_rows(delta_table, written.column_names, scope.text(""), written.schema)
    return current.num_rows == mine[0] and fingerprint(current) == mine
