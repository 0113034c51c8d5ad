"""Apache Iceberg through pyiceberg: `conn` is a pyiceberg Catalog, `table` is `namespace.table`
(a bare name is in the namespace `default`, as Spark's and Trino's Iceberg catalogs resolve it).

Every strategy is one catalog commit of `Transaction.overwrite(rows, overwrite_filter=<the
interval or partition>)`: replace and overwrite_partition write the batch, merge writes the
interval's rows merged with the batch in Arrow (pyiceberg's `upsert` matches keys across the
whole table, not the interval, and has no delete_missing). pyiceberg records the commit as a
delete snapshot and an append snapshot; the table's current snapshot moves from the old state
to the new one at once, so a reader sees one or the other.

Two threads: a write that cannot be a rerun of the interval's last commit (its probe, a cheap
summary of the batch, differs from the one that commit recorded) writes its data files while a
second thread computes the batch's fingerprint, which the commit's summary records, and stages
the ledger row's append; both commits then follow, the data's first (iceberg_commit).

Concurrency: the commit carries pyiceberg's requirement that the main branch still points to
the snapshot this write read (AssertRefSnapshotId). pyiceberg's own retry, which rebuilds the
commit on the newer snapshot, is turned off for the write: a merge computed from rows another
writer has since changed must not land. dagguard retries instead, from the read: reload,
re-read the interval, re-plan, commit; after `max_attempts` conflicts, ConcurrentWriteError.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.errors import (ConcurrentWriteError, ConnectionFailedError, DatabaseRefusedError,
                                        IdempotentWriteError, IntervalViolationError, LedgerError,
                                        TargetTableError)
from dagguard.idempotent.identifiers import TableName
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.ledger import RunInfo

DEFAULT_NAMESPACE = "default"
# Summary properties of the data commit: the write it records, atomically with the rows.
PROPERTY_PREFIX = "dagguard."
# Marks the checksum of an Arrow batch written here: its fingerprint (see _checksum).
FINGERPRINT_KIND = "iceberg"


class IcebergEngine:
    """A pyiceberg Catalog plus what write_interval needs from it. Not a SQL engine: the write
    path hands it the validated batch whole (see write_batch)."""

    dialect = "iceberg"
    max_attempts = 20
    case_insensitive_names = False

    def __init__(self, catalog: Any) -> None:
        import pyiceberg

        self.connection = catalog
        self.version = tuple(int(part) for part in pyiceberg.__version__.split(".")[:3] if part.isdigit())

    @property
    def description(self) -> str:
        """`iceberg 0.12.0` (pyiceberg's version), for messages and results."""
        return f"{self.dialect} {'.'.join(str(v) for v in self.version)}"

    def close(self) -> None:
        """Close the catalog (called only for catalogs dagguard opened from a URL)."""
        if hasattr(self.connection, "close"):
            self.connection.close()

    # -- the table ---------------------------------------------------------------------------
    @staticmethod
    def identifier(table: TableName) -> tuple[str, ...]:
        """The catalog identifier of `table`: its namespace parts and its name."""
        return table.parts if len(table.parts) > 1 else (DEFAULT_NAMESPACE, table.name)

    def load(self, table: TableName) -> Any:
        """The pyiceberg Table, or None when its namespace or the table does not exist."""
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

        try:
            return self.connection.load_table(self.identifier(table))
        except (NoSuchTableError, NoSuchNamespaceError):
            return None
        except Exception as exc:  # the catalog's own transport or database errors
            raise ConnectionFailedError(
                f"cannot read table {table} from the Iceberg catalog {getattr(self.connection, 'name', '')!r}: "
                f"{type(exc).__name__}: {' '.join(str(exc).split())}") from exc

    def table_columns(self, table: TableName) -> dict[str, str] | None:
        """Column name -> Iceberg type (`timestamptz`, `long`...), or None when there is no table."""
        loaded = self.load(table)
        return None if loaded is None else columns_of(loaded)

    @staticmethod
    def timestamp_digits(declared_type: str) -> int:
        """Iceberg timestamps keep microseconds; format v3's timestamp_ns and timestamptz_ns nanoseconds."""
        return 9 if declared_type.endswith("_ns") else 6

    # -- the write ---------------------------------------------------------------------------
    def write_batch(self, spec: Any, batch: AnyBatch, interval: Interval, checksum: str | None,
                    run: RunInfo, observer: Callable[[int, str], None] | None = None) -> Any:
        """Write the validated batch as the interval's content in one commit, retrying a commit
        that lost to a concurrent writer from a fresh read; then append the ledger row. `checksum`
        None: the fingerprint of the rows as the table stores them (see _checksum)."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                outcome, checksum, staged = self._write_once(spec, batch, interval, checksum, run, observer)
                break
            except Exception as exc:
                if isinstance(exc, UnicodeEncodeError):  # a lone surrogate, when Parquet encodes text
                    from dagguard.idempotent.write_spec import _unencodable

                    raise IntervalViolationError(_unencodable(batch, exc, spec.table, interval)) from exc
                if not is_conflict(exc):
                    if isinstance(exc, IdempotentWriteError) or not _from_the_library(exc):
                        raise
                    raise DatabaseRefusedError(
                        f"the iceberg catalog refused the write of {spec.table} for {interval}; nothing was "
                        f"committed: {type(exc).__name__}: {' '.join(str(exc).split())}") from exc
                if attempt == self.max_attempts:
                    raise ConcurrentWriteError(
                        f"gave up writing {spec.table} {interval} after {attempt} commits that lost to "
                        f"concurrent writers: {' '.join(str(exc).split())}") from exc
                time.sleep(min(1.0, 0.01 * 2 ** attempt) * random.uniform(0.5, 1.5))
        return self._finish(spec, batch, interval, checksum, run, outcome, staged)

    def _write_once(self, spec: Any, batch: AnyBatch, interval: Interval, checksum: str | None, run: RunInfo,
                    observer: Callable[[int, str], None] | None) -> tuple[tuple[int, int, int], str, Any]:
        """One attempt: read the interval at the table's current snapshot, plan, commit onto that
        snapshot. Returns ((inserted, updated, deleted), checksum, the ledger row's append staged
        while the data files were written, or None).

        The batch's fingerprint (the checksum) is needed before anything is written only when
        the write may be a rerun of the interval's last commit (see _may_repeat); otherwise a
        thread computes it while the data files are written, and the rerun check runs before
        the commit instead (a batch that turns out to repeat that commit commits nothing)."""
        from dagguard.idempotent.engines import iceberg_commit, iceberg_rows
        from dagguard.idempotent.precision import check_precision
        from dagguard.idempotent.write_spec import _check_target

        loaded = self.load(spec.table)
        columns = columns_of(loaded) if loaded is not None else None
        _check_target(self, spec, batch, columns)
        name = str(spec.table)
        if len(batch):
            check_precision(batch, columns, self.timestamp_digits, name)
        scope = self._scope(spec, columns, interval)
        table = iceberg_commit.without_library_retries(loaded)
        schema = table.schema().as_arrow()
        rows = iceberg_rows.as_table(batch, schema, name)
        probe = iceberg_rows.probe(rows)
        last = self.last_write(table, interval)
        scan = table.scan(row_filter=scope)
        later = checksum is None and isinstance(batch, ArrowBatch) and len(rows) > 0 \
            and not _may_repeat(last, len(rows), probe) and iceberg_commit.can_write_files_first()
        mine: tuple[int, int, int] | None = None
        counted = None  # the scope's row count, when the thread counts it
        with ThreadPoolExecutor(max_workers=1) as pool:
            if later:
                fingerprinted = pool.submit(_fingerprint, batch, rows)
            else:
                mine = _fingerprint(batch, rows)
                checksum = checksum or _checksum(batch, mine)

            def repeats(checksum: str, mine: tuple[int, int, int] | None, stored: int) -> bool:
                """Does the scope hold exactly this batch, as a rerun finds it?"""
                if spec.strategy == "merge":
                    return self._holds_exactly(table, scan, interval, batch, schema, checksum)
                return len(rows) == stored and self._holds_exactly(table, scan, interval, batch, schema, checksum,
                                                                   rows, mine)

            if spec.strategy == "merge" and not later and repeats(checksum, mine, 0):
                return (0, 0, 0), checksum, None  # the interval is the batch
            if spec.strategy == "merge":
                current = scan.to_arrow()
                stored = len(current)
                plan = iceberg_rows.plan_merge(current, rows, batch.columns, spec.unique_key, spec.delete_missing)
                if observer:
                    observer(0, f"SCAN {name} WHERE {scope}")
                if not plan.changes:
                    return (0, 0, 0), checksum or _checksum(batch, fingerprinted.result()), None
                new_rows, counts = plan.rows, (plan.inserted, plan.updated, plan.deleted)
            else:
                column = spec.partition_column if spec.strategy == "overwrite_partition" else spec.time_column
                # A write that cannot be a rerun needs the count only for its commit: the thread
                # counts (a plan of the scope's files, 10-30 ms) while the data files are written.
                counted = pool.submit(_count_in_scope, table, scan, scope, column) if later else None
                stored = -1 if later else _count_in_scope(table, scan, scope, column)  # (-1: not known yet)
                if observer:
                    observer(0, f"SCAN {name} WHERE {scope}")
                if not later and not len(rows) and not stored:
                    return (0, 0, 0), checksum, None
                if not later and repeats(checksum, mine, stored):
                    # A rerun: the interval holds exactly these rows, so no snapshot is written.
                    return (0, 0, 0), checksum, None
                new_rows, counts = rows, (len(rows), 0, stored)
            known, known_counts = checksum, counts
            staged = pool.submit(
                self._stage_ledger_row, spec, batch, interval, run,
                lambda: known_counts if counted is None else (len(rows), 0, counted.result()),
                lambda: known or _checksum(batch, fingerprinted.result()))
            transaction = iceberg_commit.transaction(table)
            files = iceberg_commit.write_files(transaction, new_rows) if later else None
            try:
                if later:
                    mine = fingerprinted.result()
                    checksum = _checksum(batch, mine)
                    if counted is not None:
                        stored = counted.result()
                        counts = (len(rows), 0, stored)
                    if last is not None and repeats(checksum, mine, stored):
                        iceberg_commit.discard_files(table, files)
                        return (0, 0, 0), checksum, None
                properties = _summary(spec, interval, checksum, probe, run, len(new_rows))
                if files is None:
                    iceberg_commit.stage_overwrite(transaction, new_rows, scope, properties)
                else:
                    iceberg_commit.stage_files(transaction, files, scope, properties)
                iceberg_commit.check_staged_count(table, transaction, stored, len(new_rows))
                ledger = _staged_or_none(staged)  # (its catalog reads done before this commit)
                if observer:
                    observer(1, f"OVERWRITE {name} WHERE {scope} (files written, commit pending)")
                transaction.commit_transaction()
            except BaseException:
                if files:
                    iceberg_commit.discard_files(table, files)
                raise
        return counts, checksum, ledger

    def _holds_exactly(self, table: Any, scan: Any, interval: Interval, batch: AnyBatch, schema: Any,
                       checksum: str, rows: Any = None, mine: tuple[int, int, int] | None = None) -> bool:
        """Does the scope hold exactly the batch's rows? Asked only of a rerun (the newest commit
        of the interval recorded this checksum) whose batch has every column; answered from the
        metadata when the scope's files are that commit's, else by comparing the rows'
        fingerprints (when `rows`, the batch typed as the table, and its fingerprint are given)."""
        from dagguard.idempotent.arrow.fingerprint import fingerprint
        from dagguard.idempotent.checksum import recorded_as

        last = self.last_write(table, interval)
        if set(batch.columns) != set(schema.names) or last is None \
                or not recorded_as(last[0], checksum, batch, FINGERPRINT_KIND + "-"):
            return False
        # The commit's batch was this one; its scope held only the batch's rows (a merge that
        # kept other rows wrote more), and still holds that commit's files: exactly this batch.
        written = last[1].summary.additional_properties.get(PROPERTY_PREFIX + "scope_rows")
        if written == str(len(batch)) and _still_its_files(table, scan, last[1]):
            return True
        if rows is None or mine is None:
            return False
        return fingerprint(scan.to_arrow().cast(rows.schema)) == mine

    def _scope(self, spec: Any, columns: dict[str, str], interval: Interval) -> Any:
        """The Iceberg filter of the rows this write owns: the interval's, or the partition's."""
        from dagguard.idempotent.engines import iceberg_rows

        if spec.strategy == "overwrite_partition":
            return iceberg_rows.partition_filter(spec.partition_column, columns[spec.partition_column],
                                                 interval.partition_key)
        kind = columns[spec.time_column]
        if not kind.startswith("timestamp"):
            raise TargetTableError(
                f"the time column {spec.time_column!r} of {spec.table} is an Iceberg {kind}, not a timestamp "
                f"or timestamptz; the interval cannot be selected on it")
        return iceberg_rows.interval_filter(spec.time_column, kind, interval.start, interval.end)

    @staticmethod
    def last_write(table: Any, interval: Interval) -> tuple[str, Any] | None:
        """(checksum, snapshot) of the newest snapshot dagguard committed for `interval`, from
        the snapshots' summaries (kept until the snapshots expire)."""
        key = _interval_key(interval)
        snapshots = sorted(table.metadata.snapshots, key=lambda s: (s.sequence_number or 0, s.timestamp_ms))
        for snapshot in reversed(snapshots):
            summary = snapshot.summary.additional_properties if snapshot.summary else {}
            if summary.get(PROPERTY_PREFIX + "interval") == key:
                return summary.get(PROPERTY_PREFIX + "checksum", ""), snapshot
        return None

    def _stage_ledger_row(self, spec: Any, batch: AnyBatch, interval: Interval, run: RunInfo,
                          counts: Callable[[], tuple[int, int, int]], checksum: Callable[[], str]) -> Any:
        """The write's ledger row appended in a ledger transaction that is not committed (its
        files written, its snapshot staged): prepared on the write's thread while the data files
        are written, committed only after the data commit (see _finish)."""
        from dagguard.idempotent.engines import iceberg_ledger

        row = iceberg_ledger.ledger_row(run, str(spec.table), interval.start, interval.end, spec.strategy,
                                        (len(batch), *counts()), checksum())
        return iceberg_ledger.staged_append(self.connection, self.identifier(spec.table)[:-1], row)

    def _finish(self, spec: Any, batch: AnyBatch, interval: Interval, checksum: str, run: RunInfo,
                counts: tuple[int, int, int], staged: Any = None) -> Any:
        """Append the ledger row (commit the append staged with the write's, when there is one)
        and describe the write."""
        from dagguard.idempotent.engines import iceberg_ledger
        from dagguard.idempotent.write_spec import WriteResult

        inserted, updated, deleted = counts
        row = iceberg_ledger.ledger_row(run, str(spec.table), interval.start, interval.end, spec.strategy,
                                        (len(batch), inserted, updated, deleted), checksum)
        namespace = self.identifier(spec.table)[:-1]
        for attempt in range(1, 11):
            try:
                if staged is not None:  # (a conflict drops it: the next attempt appends afresh)
                    transaction, staged = staged, None
                    iceberg_ledger.trim_history(transaction.commit_transaction())
                else:
                    iceberg_ledger.append_row(iceberg_ledger.ledger_table(self.connection, namespace), row)
                break
            except Exception as exc:
                if not is_conflict(exc) or attempt == 10:
                    raise LedgerError(
                        f"the write of {spec.table} {interval} was committed, but its row in "
                        f"{'.'.join(namespace)}.dagguard_write_log could not be appended: "
                        f"{type(exc).__name__}: {' '.join(str(exc).split())}") from exc
                time.sleep(0.05 * attempt * random.uniform(0.5, 1.5))
        return WriteResult(
            table=str(spec.table), interval_start=interval.start.isoformat(),
            interval_end=interval.end.isoformat(), strategy=spec.strategy, rows_inserted=inserted,
            rows_updated=updated, rows_deleted=deleted, row_count=len(batch), checksum=checksum,
            engine=self.description)

    def read_ledger(self, table: str | None) -> Any:
        """Every ledger row of the catalog's namespaces (see iceberg_ledger)."""
        from dagguard.idempotent.engines import iceberg_ledger

        return iceberg_ledger.read_entries(self.connection, table)


def _staged_or_none(staged: Any) -> Any:
    """The staged ledger append, or None when staging it failed (_finish then appends the row
    the ordinary way, and reports a failure there)."""
    try:
        return staged.result()
    except Exception:
        return None


def columns_of(table: Any) -> dict[str, str]:
    """A pyiceberg Table's top-level columns and their Iceberg types."""
    return {field.name: str(field.field_type) for field in table.schema().fields}


def _still_its_files(table: Any, scan: Any, snapshot: Any) -> bool:
    """True when the files the scan reads are exactly the data files `snapshot` added, with no
    delete files: Iceberg files never change, so the scope then holds exactly the rows that
    commit wrote (whose checksum its summary records). Metadata only, no row is read; anything
    else (a file rewritten or added since, a file the scope's filter cannot prune) is False,
    and the caller compares the rows."""
    added = set()
    # The files a snapshot adds are listed in the manifests it wrote; its manifest list also
    # names every earlier snapshot's (one more per append), which need not be read.
    for manifest in snapshot.manifests(table.io):
        if manifest.added_snapshot_id != snapshot.snapshot_id:
            continue
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.snapshot_id == snapshot.snapshot_id and int(entry.status) == 1:  # ADDED
                added.add(entry.data_file.file_path)
    tasks = list(scan.plan_files())
    return not any(task.delete_files for task in tasks) and {task.file.file_path for task in tasks} == added


def _count_in_scope(table: Any, scan: Any, scope: Any, column: str) -> int:
    """The rows `scope` selects: a file whose column bounds put every row inside it counts its
    record count from the metadata, only the others are read, and only their scope column.
    pyiceberg's DataScan.count reads every column of every file the filter cannot settle by
    partition (0.29 s for the 1M rows of an unpartitioned interval, load 10)."""
    try:
        from pyiceberg.expressions import AlwaysTrue
        from pyiceberg.expressions.visitors import _StrictMetricsEvaluator
        from pyiceberg.io.pyarrow import ArrowScan
    except ImportError:  # (a pyiceberg without them: its own count)
        return scan.count()
    must_match = _StrictMetricsEvaluator(table.schema(), scope).eval
    count, unsettled = 0, []
    for task in scan.plan_files():
        if not task.delete_files and (task.residual == AlwaysTrue() or must_match(task.file)):
            count += task.file.record_count
        else:
            unsettled.append(task)
    if unsettled:
        read = ArrowScan(table_metadata=table.metadata, io=table.io, projected_schema=table.schema().select(column),
                         row_filter=scope)
        count += len(read.to_table(unsettled))
    return count


def _fingerprint(batch: AnyBatch, rows: Any) -> tuple[int, int, int] | None:
    """The fingerprint of an Arrow batch's rows as the table stores them (None for Python rows,
    and where numpy or a column's type has none)."""
    from dagguard.idempotent.arrow.fingerprint import fingerprint

    return fingerprint(rows) if isinstance(batch, ArrowBatch) and len(rows) else None


def _checksum(batch: AnyBatch, mine: tuple[int, int, int] | None) -> str:
    """`rows:iceberg-<lane>.<lane>`, the fingerprint of an Arrow batch (a sum of per-row hashes,
    no sort: 0.1 s for a million rows, where checksum.arrow_checksum sorts on every column);
    Python rows keep the row checksum the SQL engines give them."""
    from dagguard.idempotent.arrow.fingerprint import fingerprint_checksum
    from dagguard.idempotent.checksum import batch_checksum

    return fingerprint_checksum(mine, FINGERPRINT_KIND) if mine is not None else batch_checksum(batch)


def _interval_key(interval: Interval) -> str:
    return f"{interval.start.isoformat()}/{interval.end.isoformat()}"


def _summary(spec: Any, interval: Interval, checksum: str, probe: str, run: RunInfo, written: int) -> dict[str, str]:
    """The data commit's summary properties: what the ledger row says, atomically with the rows,
    how many rows the scope holds after it (a merge keeps rows its batch lacks), and the batch's
    probe (see _may_repeat)."""
    values = {"interval": _interval_key(interval), "checksum": checksum, "strategy": spec.strategy,
              "scope_rows": written, "probe": probe,
              "dag_id": run.dag_id, "task_id": run.task_id, "run_id": run.run_id, "try_number": run.try_number}
    return {PROPERTY_PREFIX + key: str(value) for key, value in values.items() if value is not None}


def _may_repeat(last: tuple[str, Any] | None, count: int, probe: str) -> bool:
    """May a batch of `count` rows with this probe (iceberg_rows.probe) be the batch of `last`,
    the interval's last commit? Not when there is none, when its checksum counts other rows
    (`<rows>:iceberg-...`; an older `rows:arrow-...` counts none), or when its probe differs (the
    rows differ); a commit without a probe (written before probes were recorded) may be."""
    if last is None:
        return False
    recorded_count = last[0].partition(":")[0]
    if recorded_count.isdigit() and recorded_count != str(count):
        return False
    recorded = last[1].summary.additional_properties.get(PROPERTY_PREFIX + "probe")
    return recorded is None or recorded == probe


def is_conflict(exc: BaseException) -> bool:
    """A commit that lost to a concurrent writer (or a catalog database busy with one): a retry
    from a fresh read resolves it."""
    from pyiceberg.exceptions import CommitFailedException, ValidationException

    if isinstance(exc, (CommitFailedException, ValidationException)):
        return True
    text = str(exc).lower()
    return type(exc).__module__.startswith("sqlalchemy") and ("database is locked" in text or "busy" in text)


_LIBRARIES = ("pyiceberg", "pyarrow", "sqlalchemy", "sqlite3", "psycopg", "requests")


def _from_the_library(exc: BaseException) -> bool:
    """Did pyiceberg, pyarrow or the catalog's database raise `exc` (not dagguard's own code)?
    pyiceberg raises plain ValueErrors too: the frame that raised tells."""
    if type(exc).__module__.split(".", 1)[0] in _LIBRARIES:
        return True
    trace = exc.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    filename = trace.tb_frame.f_code.co_filename if trace is not None else ""
    return any(f"/{library}/" in filename for library in _LIBRARIES)
