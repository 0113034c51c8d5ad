"""DuckDB, loaded through Arrow (its executemany manages only hundreds of rows a second)."""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from dagguard.idempotent.arrow_batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch, Batch
from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.errors import IdempotentWriteError
from dagguard.idempotent.identifiers import TableName, quote_identifier

LOCK_TABLE = "dagguard_interval_lock"


class DuckDBEngine(Engine):
    """DuckDB: optimistic concurrency, so concurrent writers of an interval conflict on a lock
    row and the loser retries."""

    dialect = "duckdb"
    max_attempts = 20

    def _detect_version(self) -> tuple[int, ...]:
        (version,) = self.connection.execute("SELECT version()").fetchone()
        return tuple(int(part) for part in version.lstrip("v").split("-")[0].split(".")[:3])

    @contextmanager
    def transaction(self, lock_key: str) -> Iterator[None]:
        try:
            self.connection.begin()
        except Exception as exc:  # duckdb.TransactionException
            raise IdempotentWriteError(
                f"the duckdb connection has an open transaction ({exc}); commit or roll it back "
                f"before writing an interval") from exc
        try:
            self._lock(lock_key)
            yield
        except BaseException:
            self.connection.rollback()
            raise
        try:
            self.connection.commit()
        except BaseException:
            self._rollback_quietly()
            raise

    def _rollback_quietly(self) -> None:
        try:
            self.connection.rollback()
        except Exception:  # a failed commit has usually ended the transaction already
            pass

    def _lock(self, lock_key: str) -> None:
        # Two writers of an empty interval delete nothing, so nothing would conflict and both
        # inserts would land. Both touching one lock row makes DuckDB abort one of them.
        self.execute(f"CREATE TABLE IF NOT EXISTS {LOCK_TABLE} (lock_key VARCHAR PRIMARY KEY, writes BIGINT)")
        self.execute(f"INSERT INTO {LOCK_TABLE} VALUES (?, 1) ON CONFLICT (lock_key) "
                     f"DO UPDATE SET writes = {LOCK_TABLE}.writes + 1", (lock_key,))

    def is_retryable(self, exc: BaseException) -> bool:
        import duckdb

        return isinstance(exc, duckdb.TransactionException) and (
            "conflict" in str(exc).lower() or "duplicate key" in str(exc).lower())

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        result = self.connection.execute(sql, list(params)).fetchall()
        # DuckDB answers DML with one row holding the count.
        return int(result[0][0]) if result and result[0] and isinstance(result[0][0], int) else -1

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, list(params)).fetchall()

    def table_columns(self, table: TableName) -> dict[str, str] | None:
        sql = ("SELECT column_name, data_type FROM information_schema.columns "
               "WHERE table_name = ? AND table_schema = coalesce(?, current_schema()) "
               "AND table_catalog = coalesce(?, current_database()) ORDER BY ordinal_position")
        catalog = table.parts[0] if len(table.parts) == 3 else None
        rows = self.query(sql, (table.name, table.schema, catalog))
        return {name: kind for name, kind in rows} or None

    def load_staging(self, staging: str, batch: AnyBatch) -> None:
        cols = ", ".join(quote_identifier(c) for c in batch.columns)
        arrow = batch.table if isinstance(batch, ArrowBatch) else _to_arrow(batch)
        if arrow is None:
            marks = ", ".join("?" for _ in batch.columns)
            self.connection.executemany(f"INSERT INTO {staging} ({cols}) VALUES ({marks})",
                                        [list(row) for row in batch.rows])
            return
        view = f"dagguard_arrow_{uuid.uuid4().hex[:12]}"
        self.connection.register(view, arrow)
        try:
            self.execute(f"INSERT INTO {staging} ({cols}) SELECT {cols} FROM {quote_identifier(view)}")
        finally:
            self.connection.unregister(view)

    def ledger_types(self) -> tuple[str, str, str]:
        return "VARCHAR", "BIGINT", "TIMESTAMPTZ"


def _to_arrow(batch: Batch) -> Any:
    """The batch as a pyarrow Table, or None when pyarrow is missing or cannot type a column."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    try:
        columns = list(zip(*batch.rows))
        return pa.table({name: pa.array(list(values)) for name, values in zip(batch.columns, columns)})
    except (pa.ArrowException, TypeError, ValueError):
        return None
