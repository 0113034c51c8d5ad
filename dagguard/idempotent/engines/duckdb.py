"""DuckDB, loaded through Arrow (its executemany manages only hundreds of rows a second)."""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import AnyBatch, Batch
from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.errors import IdempotentWriteError
from dagguard.idempotent.identifiers import TableName, quote_identifier

LOCK_TABLE = "dagguard_interval_lock"
# The timestamp types that keep other than microseconds; there is no TIMESTAMPTZ_S or _MS.
_TIMESTAMP_DIGITS = {"TIMESTAMP_S": 0, "TIMESTAMP_MS": 3, "TIMESTAMP_NS": 9, "TIMESTAMPTZ_NS": 9}


class DuckDBEngine(Engine):
    """DuckDB: optimistic concurrency, so concurrent writers of an interval conflict on a lock
    row and the loser retries."""

    dialect = "duckdb"
    can_fingerprint = True
    # One hash of the row's columns, and a hash of it for the second sum (see fingerprint).
    fingerprint_form = "rh"
    case_insensitive_names = True
    # An UPDATE's rows go through the WAL and a checkpoint at commit; a DELETE marks rows and
    # an INSERT writes new row groups directly (1M changed rows, 2 cores: MERGE 0.35 s + 0.22 s
    # commit; delete of the matched rows 0.07 s + insert 0.28 s + 0.03 s commit).
    prefers_rewrite = True
    max_attempts = 20

    def _detect_version(self) -> tuple[int, ...]:
        (version,) = self.connection.execute("SELECT version()").fetchone()
        return tuple(int(part) for part in version.lstrip("v").split("-")[0].split(".")[:3])

    @contextmanager
    def transaction(self, lock_key: str) -> Iterator[None]:
        # Refused, not joined: DuckDB has no savepoint, so a failed write could only be undone
        # with the caller's work, and its conflicts could not be retried.
        if self._in_transaction():
            raise IdempotentWriteError(
                "the duckdb connection has an open transaction; commit or roll it back before "
                "writing an interval, which runs in a transaction of its own (your transaction "
                "was left as it was)")
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

    def _in_transaction(self) -> bool:
        """Is a transaction open on the connection? Asked without touching it: begin() inside
        one raises, and in doing so aborts it, so the caller's uncommitted rows would be lost.
        Each autocommit statement has a transaction id of its own; inside a transaction two
        statements share one."""
        import duckdb

        try:
            first = self.connection.execute("SELECT txid_current()").fetchone()
            second = self.connection.execute("SELECT txid_current()").fetchone()
        except duckdb.TransactionException:  # "Current transaction is aborted": one is open
            return True
        return first == second

    def _rollback_quietly(self) -> None:
        try:
            self.connection.rollback()
        except Exception:  # a failed commit has usually ended the transaction already
            pass

    def _lock(self, lock_key: str) -> None:
        # Two writers of an empty interval delete nothing, so nothing would conflict and both
        # inserts would land. Both touching one lock row makes DuckDB abort one of them.
        self.execute(f"CREATE TABLE IF NOT EXISTS {LOCK_TABLE} (lock_key VARCHAR PRIMARY KEY, writes BIGINT)")
        # The row exists from the interval's second write on: a plain UPDATE of it takes 0.4 ms
        # where the upsert took 1.1 ms. Two first writers both insert it, and the second one's
        # commit fails on the key (a retried conflict), as with the upsert.
        if self.execute(f"UPDATE {LOCK_TABLE} SET writes = writes + 1 WHERE lock_key = ?", (lock_key,)) < 1:
            self.execute(f"INSERT INTO {LOCK_TABLE} VALUES (?, 1) ON CONFLICT (lock_key) "
                         f"DO UPDATE SET writes = {LOCK_TABLE}.writes + 1", (lock_key,))

    def timestamp_digits(self, declared_type: str) -> int:
        # information_schema spells TIMESTAMP(0) and TIMESTAMP(3) as these too.
        return _TIMESTAMP_DIGITS.get(declared_type.upper(), 6)

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
        # duckdb_columns(), of which information_schema.columns is a view: 0.6 ms instead of 1.3.
        sql = ("SELECT column_name, data_type FROM duckdb_columns() "
               "WHERE lower(table_name) = lower(?) AND lower(schema_name) = lower(coalesce(?, current_schema())) "
               "AND lower(database_name) = lower(coalesce(?, current_database())) ORDER BY column_index")
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
        except BaseException:
            # After a failed statement DuckDB refuses even unregister() ("transaction is
            # aborted"), which would hide the real error, a NOT NULL or CHECK violation.
            try:
                self.connection.unregister(view)
            except Exception:
                pass
            raise
        self.connection.unregister(view)

    def ledger_types(self) -> tuple[str, str, str]:
        return "VARCHAR", "BIGINT", "TIMESTAMPTZ"

    def stage_in_place(self, batch: AnyBatch, target_columns: dict[str, str]) -> str | None:
        # DuckDB scans a registered Arrow table where it lies: no copy into a staging table.
        # The casts give the batch the target's types, as CREATE TABLE ... AS would.
        if not isinstance(batch, ArrowBatch):
            return None
        view = f"dagguard_arrow_{uuid.uuid4().hex[:12]}"
        self.connection.register(view, batch.table)
        return _typed(view, batch.columns, target_columns)

    def fingerprint(self, source: str, columns: tuple[str, ...], where: str,
                    params: tuple[Any, ...]) -> tuple[int, ...] | None:
        # Sums of per-row hashes: order-independent, and a duplicated row still counts. The
        # second sum is of a hash of each row's hash: a match is then a coincidence of both
        # 64-bit sums. (Hashing the columns a second time, in reverse order, doubled the
        # cost for the same protection against sums that happen to agree: 1M rows of five
        # columns 0.066 s -> 0.033 s.)
        count, first, second = self.query(_fingerprint_sql(source, columns, where), params)[0]
        return int(count), int(first), int(second)

    def has_unique_constraint(self, table: TableName) -> bool:
        # A key deleted and inserted again in one transaction can trip DuckDB's ART index.
        # Names compare as DuckDB resolves them: whatever their case.
        where = "lower(table_name) = lower(?) AND lower(schema_name) = lower(coalesce(?, current_schema()))"
        params = (table.name, table.schema)
        constraints = self.query(
            f"SELECT count(*) FROM duckdb_constraints() WHERE {where} "
            f"AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')", params)[0][0]
        indexes = self.query(f"SELECT count(*) FROM duckdb_indexes() WHERE {where}", params)[0][0]
        return bool(constraints or indexes)

    def drop_staging(self, staging: str) -> None:
        if staging.startswith("(SELECT"):  # an Arrow table read in place: unregister it
            try:
                self.connection.unregister(staging.rsplit(" FROM ", 1)[1].strip('")'))
            except Exception:  # already gone: dropping twice after a failure is harmless
                pass
            return
        self.execute(f"DROP TABLE {staging}")


def _typed(view: str, columns: tuple[str, ...], target_columns: dict[str, str]) -> str:
    """The registered Arrow table `view` with the target's types, as CREATE TABLE ... AS
    would give them."""
    casts = ", ".join(f"CAST({quote_identifier(c)} AS {target_columns[c]}) AS {quote_identifier(c)}"
                      for c in columns)
    return f"(SELECT {casts} FROM {quote_identifier(view)})"


def _fingerprint_sql(source: str, columns: tuple[str, ...], where: str) -> str:
    """(row count, two sums of per-row hashes) of `columns` over `source`'s rows matching `where`."""
    hashed = ", ".join(quote_identifier(c) for c in columns)
    return (f"SELECT count(*), coalesce(sum(dg_hash::HUGEINT), 0), coalesce(sum(hash(dg_hash)::HUGEINT), 0) "
            f"FROM (SELECT hash({hashed}) AS dg_hash FROM {source} AS dg_rows WHERE {where})")


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
