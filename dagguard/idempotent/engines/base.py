"""What write_interval needs from a database, whatever the engine."""

from __future__ import annotations

import functools
import uuid
from abc import ABC, abstractmethod
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterator

from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.capabilities import Features, features_for
from dagguard.idempotent.errors import IntervalViolationError
from dagguard.idempotent.identifiers import TableName, quote_identifier
from dagguard.idempotent.strategies import IntervalTest, equal_to, in_range


class Engine(ABC):
    """A DB-API connection plus the engine-specific parts of a write.

    `transaction()` opens the one transaction a write runs in and takes the engine's lock for
    the interval; everything else runs inside it.
    """

    dialect: str = ""
    # Writers that lose a write-write conflict are retried this many times in all (DuckDB).
    max_attempts: int = 1
    # False where timestamps are text we format ourselves (SQLite): no naive/aware distinction.
    typed_timestamps: bool = True
    # True where fingerprint() answers: an unchanged rerun can then be verified, not rewritten.
    can_fingerprint: bool = False
    # Names how fingerprint() computes, in its checksums' kind beside the engine's version: a
    # checksum recorded by another computation is then never compared with this one's (the
    # interval is rewritten once instead).
    fingerprint_form: str = ""
    # True where updating rows costs more than deleting and reinserting them (DuckDB).
    prefers_rewrite: bool = False
    # True where a MERGE's counts cost less as the interval's row count before and after it
    # than as a join of batch and interval before it (PostgreSQL, whose MERGE reports one total).
    counts_merge_by_difference: bool = False
    # True where the engine's SQL matches table and column names whatever their case, quoted
    # or not (DuckDB, SQLite): then dagguard matches them that way too.
    case_insensitive_names: bool = False

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.version = self._detect_version()
        self.features: Features = features_for(self.dialect, self.version)

    # -- engine specifics --------------------------------------------------------------------
    @abstractmethod
    def _detect_version(self) -> tuple[int, ...]:
        """The server or library version, read from the database at run time."""

    @abstractmethod
    @contextmanager
    def transaction(self, lock_key: str) -> Iterator[None]:
        """Begin, lock the interval named by `lock_key`, commit on success, roll back on error."""

    def compared_as_text(self, column_types: dict[str, str]) -> frozenset[str]:
        """Columns a merge must compare as text to find changed rows: their type has no
        equality operator, or one that is not equality of values. None by default."""
        return frozenset()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Around reads outside a write (the ledger): what the engine needs to read text as str."""
        yield

    @abstractmethod
    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """Run one statement with `?` placeholders; return its row count."""

    @abstractmethod
    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one query with `?` placeholders; return all rows."""

    @abstractmethod
    def table_columns(self, table: TableName) -> dict[str, str] | None:
        """Column name -> declared type of `table`, or None when the table does not exist."""

    @abstractmethod
    def load_staging(self, staging: str, batch: AnyBatch) -> None:
        """Bulk-load the batch into the (already created) staging table."""

    @abstractmethod
    def ledger_types(self) -> tuple[str, str, str]:
        """SQL types for (text, integer, timestamp) columns of the ledger."""

    def lock_for_ddl(self, name: str) -> None:
        """Serialise creating a shared table across concurrent writers (PostgreSQL only)."""

    def is_retryable(self, exc: BaseException) -> bool:
        """True when `exc` is a conflict with a concurrent writer that a retry resolves."""
        return False

    # -- shared ------------------------------------------------------------------------------
    def timestamp_digits(self, declared_type: str) -> int:
        """How many digits of the second a column declared `declared_type` keeps of a
        timestamp written into it: 6 by default (Python, SQLite's text, plain timestamps)."""
        return 6

    def adapt(self, value: Any) -> Any:
        """A Python value as this engine's driver should bind it."""
        return value

    def staging_name(self) -> str:
        """A fresh, quoted name for a temporary staging table."""
        return quote_identifier(f"dagguard_stage_{uuid.uuid4().hex[:12]}")

    def create_staging(self, target: TableName, columns: tuple[str, ...]) -> str:
        """An empty temp table with the batch's columns, typed like the target's."""
        staging = self.staging_name()
        cols = ", ".join(quote_identifier(c) for c in columns)
        self.execute(f"CREATE TEMPORARY TABLE {staging} AS SELECT {cols} FROM {target.quoted} WHERE 1 = 0")
        return staging

    def interval_test(self, table: TableName, column: str, start: Any, end: Any) -> IntervalTest:
        """How this write tests that `column` of `table` lies in [start, end), for every
        statement; runs inside the write's transaction. The plain range by default."""
        return functools.partial(in_range, start=start, end=end)

    def partition_test(self, table: TableName, column: str, value: Any, declared_type: str) -> IntervalTest:
        """How overwrite_partition tests that `column` (declared `declared_type`) of `table`
        holds the partition `value` (see _as_date), for every statement; runs inside
        the write's transaction. A DATE compares as itself; a timestamp column's partition is
        its UTC day, a range the column's index serves; a text column compares as the ISO date,
        after making sure no other text there begins with it."""
        day = _as_date(value)
        kind = declared_type.lower()
        if kind.startswith("date") and not kind.startswith("datetime"):
            return functools.partial(equal_to, value=value)
        if is_timestamp_type(declared_type):
            start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            end = start + timedelta(days=1)
            if is_naive_timestamp(declared_type):
                start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
            return functools.partial(in_range, start=start, end=end)
        # '2026-01-04 00:00:00' or '2026-01-04T00:00:00Z' would be kept by `= '2026-01-04'`,
        # and the partition would hold its old rows beside the new ones. Each such text sorts
        # between the date and the next day's: one probe of the index finds the first.
        text = day.isoformat()
        found = self.query(f"SELECT {quote_identifier(column)} FROM {table.quoted} WHERE "
                           f"{quote_identifier(column)} > ? AND {quote_identifier(column)} < ? LIMIT 1",
                           (text, (day + timedelta(days=1)).isoformat()))
        if found:
            raise IntervalViolationError(
                f"the partition column {column!r} of {table} holds {found[0][0]!r}, which begins with "
                f"partition {text}'s date but is not that date as 'YYYY-MM-DD', the one form a text column "
                f"is compared in on {self.dialect}, so that partition's rows cannot be told apart exactly; "
                f"nothing was written. Rewrite such values as 'YYYY-MM-DD', or declare the column DATE")
        return functools.partial(equal_to, value=value)

    def index_staging(self, staging: str, keys: tuple[str, ...]) -> None:
        """Index the staging table on the unique key, where the engine's plans need it."""

    def stage_in_place(self, batch: AnyBatch, target_columns: dict[str, str]) -> str | None:
        """A derived table reading the batch where it lies, typed like the target, to use
        instead of a loaded staging table; None where the engine cannot (the default)."""
        return None

    def fingerprint(self, source: str, columns: tuple[str, ...], where: str,
                    params: tuple[Any, ...]) -> tuple[int, ...] | None:
        """(row count, order-independent hashes) of `columns` over `source` rows matching
        `where`, computed by the engine; None where it has no cheap way (the default)."""
        return None

    def prepare_bound(self, batch: AnyBatch) -> None:
        """Convert the batch now into what the engine binds, for its next load or upsert (called
        on a thread while the engine surveys the interval); nothing where the engine binds the
        batch as it is (the default)."""

    def forget_prepared(self) -> None:
        """Drop what prepare_bound() kept and no load used (a write that failed or skipped)."""

    def has_unique_constraint(self, table: TableName) -> bool:
        """True when `table` has a primary key or unique index (where prefers_rewrite)."""
        return True

    def batch_fingerprint(self, batch: AnyBatch, columns: tuple[str, ...],
                          target_columns: dict[str, str]) -> tuple[int, ...] | None:
        """fingerprint() of the batch computed on the client, where the engine's fingerprint
        is a client-side one too and the values are stored as bound into `target_columns`
        (name: declared type); None elsewhere (the batch is then staged and fingerprinted)."""
        return None

    def can_upsert(self, table: TableName, key: tuple[str, ...]) -> bool:
        """True where a merge on `key` can be one upsert from the batch (upsert()): the target
        has a unique index on exactly the key. False by default."""
        return False

    def upsert(self, table: TableName, batch: AnyBatch, key: tuple[str, ...], time_column: str,
               in_interval: IntervalTest) -> tuple[int, str]:
        """Merge the batch into the interval (`in_interval`, given the target's qualified time
        column) in one pass where can_upsert(): (rows changed, the SQL), failing on a key held
        outside the interval."""
        raise NotImplementedError

    def size_joins(self, rows: int) -> None:
        """Give this transaction's joins against a batch of `rows` rows the memory they need
        (PostgreSQL); a no-op where the engine sizes its joins itself (the default)."""

    def drop_staging(self, staging: str) -> None:
        """Drop the staging table before commit (PostgreSQL drops it on commit itself)."""
        self.execute(f"DROP TABLE {staging}")

    def close(self) -> None:
        """Close the underlying connection."""
        self.connection.close()

    @property
    def description(self) -> str:
        """`postgres 15.8` and the like, for messages."""
        return f"{self.dialect} {'.'.join(str(v) for v in self.version)}"


def is_timestamp_type(declared_type: str) -> bool:
    """True for the timestamp types, with or without time zone, of any precision."""
    kind = declared_type.lower()
    return "timestamp" in kind or kind.startswith("datetime")


def is_naive_timestamp(declared_type: str) -> bool:
    """True for TIMESTAMP / timestamp without time zone, False for the tz-aware kinds."""
    kind = declared_type.lower()
    if "without time zone" in kind:
        return True
    return kind.startswith(("timestamp", "datetime")) and "time zone" not in kind and "tz" not in kind


def _as_date(value: Any) -> date:
    """A partition value (a date, the midnight starting it, or its ISO text) as a date."""
    if isinstance(value, datetime):
        return value.date()
    return value if isinstance(value, date) else date.fromisoformat(value)
