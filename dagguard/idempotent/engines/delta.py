"""Delta Lake through delta-rs (the `deltalake` package): a folder of tables, no SQL connection.

`conn` is a lake, `delta:///abs/path/lake` (or `delta+s3://bucket/lake`, `delta+gs://`,
`delta+abfss://`, or `DeltaLake(uri, storage_options={...})` for credentials), and `table` a
table's folder under it; or `conn` is a `deltalake.DeltaTable` and `table` its name in the
ledger. Each write is one commit (one new table version), made on top of the version it read
and nothing else: delta-rs is told not to rebase it over a concurrent commit (its conflict
checker has let a predicate overwrite delete another writer's new file, delta-rs #3622), so a
concurrent commit makes it fail and dagguard reads the table again and redoes the write, a
bounded number of times. deltalake is imported only here, when a Delta write runs.
"""

from __future__ import annotations

import random
import time
from typing import Any

from dagguard.idempotent.errors import (ConcurrentWriteError, ConnectionFailedError, DatabaseRefusedError,
                                        IdempotentWriteError, TargetTableError, UnsupportedConnectionError)
from dagguard.idempotent.engines.delta_lake import REMOTE_SCHEMES, DeltaLake, lake_from_url  # noqa: F401
from dagguard.idempotent.identifiers import TableName


def require_deltalake() -> Any:
    """The deltalake module, or UnsupportedConnectionError naming the extra to install."""
    try:
        import deltalake
    except ImportError as exc:
        from dagguard.extras import install_hint

        raise UnsupportedConnectionError(
            f"Delta Lake tables need the deltalake package: {install_hint('delta')}") from exc
    return deltalake


class DeltaEngine:
    """What write_interval needs from Delta Lake: the table's columns, one commit per write with
    the strategy, retried on a concurrent commit, and the ledger beside the table."""

    dialect = "delta"
    # Not SQL: write_batch hands it the checked batch, and it commits one table version.
    commits_table_versions = True
    # A write redone this many times in all after concurrent commits, then ConcurrentWriteError.
    max_attempts = 30
    typed_timestamps = True

    def __init__(self, connection: Any) -> None:
        deltalake = require_deltalake()
        self.connection = connection
        self.version = tuple(int(p) for p in deltalake.__version__.split(".")[:3] if p.isdigit())

    @property
    def description(self) -> str:
        """`delta 1.6.6`: the delta-rs release, for messages."""
        return f"delta {'.'.join(str(v) for v in self.version)}"

    def close(self) -> None:
        """Nothing to close."""

    # -- where the table and its ledger are ------------------------------------------------
    def table_uri(self, table: TableName) -> str:
        """The table's folder: under the lake, or the DeltaTable's own."""
        if isinstance(self.connection, DeltaLake):
            return self.connection.table_uri(table)
        return self.connection.table_uri.rstrip("/")

    def storage_options(self) -> dict[str, str] | None:
        """The storage options delta-rs needs to reach the table and its ledger."""
        if isinstance(self.connection, DeltaLake):
            return self.connection.options()
        return getattr(self.connection, "_storage_options", None) or None

    def open_table(self, table: TableName) -> Any:
        """The latest version of the table, or None when its folder holds no Delta table."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        if not isinstance(self.connection, DeltaLake):
            self.connection.update_incremental()
            return self.connection
        uri, options = self.table_uri(table), self.storage_options()
        try:
            # Opened directly (a missing log is TableNotFoundError): no separate listing of the log.
            return DeltaTable(uri, storage_options=options)
        except TableNotFoundError:
            return None
        except Exception as exc:  # the store's own errors: credentials, network, a bad bucket
            raise ConnectionFailedError(f"cannot open the Delta table {uri}: {_one_line(exc)}") from exc

    def table_columns(self, table: TableName) -> dict[str, str] | None:
        """Column name -> Arrow type of the table ("timestamp[us, tz=UTC]"), None when missing."""
        delta_table = self.open_table(table)
        return None if delta_table is None else columns_of(delta_table)

    # -- the write -------------------------------------------------------------------------
    def timestamp_digits(self, declared_type: str) -> int:
        """Delta timestamps (and timestamp_ntz) keep microseconds, whatever the batch holds."""
        return 6

    def write(self, spec: Any, interval: Any, run: Any, prepare: Any) -> tuple[dict[str, int], str]:
        """Write the batch as the interval's content in one commit: (counts, checksum).
        `prepare(columns)` checks the batch against one version's columns. A concurrent commit
        makes delta-rs refuse ours; the write is then redone on the new version, at most
        max_attempts times in all."""
        from deltalake.exceptions import CommitFailedError

        from dagguard.idempotent.engines.delta_write import write_once

        for attempt in range(1, self.max_attempts + 1):
            delta_table = self.open_table(spec.table)
            if delta_table is None:
                raise TargetTableError(
                    f"table {spec.table} does not exist in the delta lake: {self.table_uri(spec.table)} "
                    f"holds no Delta table (no _delta_log); create it before writing intervals into it "
                    f"(deltalake.DeltaTable.create(uri, schema, partition_by=...))")
            try:
                return write_once(self, delta_table, spec, interval, run, prepare)
            except CommitFailedError as exc:
                if attempt == self.max_attempts:
                    raise ConcurrentWriteError(
                        f"gave up writing {spec.table} {interval} after {attempt} commits that lost to "
                        f"concurrent writers: {_one_line(exc)}") from exc
            except IdempotentWriteError:
                raise
            except Exception as exc:
                if not _from_delta_rs(exc):
                    raise
                raise DatabaseRefusedError(
                    f"delta-rs refused the write of {spec.table} for {interval}; nothing was committed: "
                    f"{type(exc).__name__}: {_one_line(exc)}") from exc
            time.sleep(min(1.0, 0.01 * 2 ** attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    def read_source(self, sql: str) -> Any:
        """The rows of a query over the lake's tables, run by delta-rs's SQL engine (DataFusion),
        as a pyarrow Table; each table the query names is read at its latest version."""
        import pyarrow as pa
        import sqlglot
        from deltalake import QueryBuilder
        from sqlglot import exp

        from dagguard.idempotent.errors import InvalidArgumentError

        try:
            tables = {t.name for t in sqlglot.parse_one(sql, read="postgres").find_all(exp.Table)
                      if not t.db}
        except sqlglot.errors.ParseError as exc:
            raise InvalidArgumentError(f"cannot read source_sql: {_one_line(exc)}") from exc
        builder = QueryBuilder()
        for name in sorted(tables):
            found = self.open_table(TableName.parse(name))
            if found is None:
                raise TargetTableError(f"source_sql reads {name}, which is not a Delta table of the lake "
                                       f"({self.table_uri(TableName.parse(name))})")
            builder = builder.register(name, found)
        try:
            result = pa.table(builder.execute(sql).read_all())
        except Exception as exc:
            raise DatabaseRefusedError(f"delta-rs could not run source_sql: {_one_line(exc)}") from exc
        # DataFusion hands text back as string_view: plain strings for the checks and the write.
        plain = [pa.field(f.name, pa.string()) if pa.types.is_string_view(f.type) else f for f in result.schema]
        return result.cast(pa.schema(plain))

    def read_ledger(self, table: str | None) -> Any:
        """The ledger of one table, or of every table of the lake that has one."""
        from dagguard.idempotent.engines.delta_ledger import read_ledger

        return read_ledger(self, table)


def columns_of(delta_table: Any) -> dict[str, str]:
    """The table's columns and their Arrow types, spelled as pyarrow prints them."""
    import pyarrow as pa

    return {f.name: str(f.type) for f in pa.schema(delta_table.schema().to_arrow())}


def _from_delta_rs(exc: BaseException) -> bool:
    """Did delta-rs (or pyarrow under it) raise `exc`, rather than dagguard's own code?"""
    import pyarrow as pa
    from deltalake.exceptions import DeltaError

    return isinstance(exc, (DeltaError, pa.ArrowException, OSError))


def _one_line(exc: BaseException) -> str:
    # delta-rs errors carry multi-line previews of data: the first line says what happened.
    text = str(exc).strip().splitlines()
    return " ".join(text[0].split()) if text else type(exc).__name__
