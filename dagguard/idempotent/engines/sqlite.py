"""SQLite through the standard library's sqlite3."""

from __future__ import annotations

import functools
import json
import sqlite3
from contextlib import contextmanager
from datetime import date, datetime, time, timezone
from decimal import Decimal
from operator import itemgetter
from typing import Any, Callable, Iterator
from uuid import UUID

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.arrow.convert import sqlite_arrays, sqlite_columns
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.engines.sqlite_times import day_interval, exact_test, survey_sql, text_range
from dagguard.idempotent.engines.sqlite_upsert import run_upsert, unique_on, upsert_sql
from dagguard.idempotent.errors import IdempotentWriteError, IntervalViolationError
from dagguard.idempotent.identifiers import TableName, quote_identifier
from dagguard.idempotent.strategies import IntervalTest, equal_to, in_range, staging_row_column


def sqlite_timestamp(value: datetime) -> str:
    """UTC, fixed width, microseconds always present: text order is then time order."""
    return value.astimezone(timezone.utc).isoformat(" ", "microseconds")


def _json_text(value: Any) -> str:
    return json.dumps(value, default=str)


# Values sqlite3 cannot bind, stored as the text that keeps them exactly (a NUMERIC column
# turns the Decimal's text into a number). A type with an adapter the user registered with
# sqlite3.register_adapter is left to it.
_AS_TEXT: dict[type, Callable[[Any], str]] = {Decimal: str, UUID: str, dict: _json_text, list: _json_text,
                                               time: time.isoformat}
# What adapt() changes: a column holding one of these is adapted value by value.
_ADAPTED = (date, time, Decimal, UUID, dict, list)


@functools.lru_cache(maxsize=None)
def _text_converter(kind: type) -> Callable[[Any], str] | None:
    """_AS_TEXT's converter for `kind` or its nearest base: an OrderedDict is a dict, as
    _ADAPTED and _check_bindable take it."""
    return next((_AS_TEXT[base] for base in kind.__mro__ if base in _AS_TEXT), None)
_BINDABLE = (int, float, str, bytes, bytearray, memoryview, type(None))


def _check_bindable(column: str, kinds: set[type]) -> None:
    """A clear error for values sqlite3 would refuse as "Error binding parameter 3"."""
    for kind in kinds:
        if not issubclass(kind, _BINDABLE + _ADAPTED) and (kind, sqlite3.PrepareProtocol) not in sqlite3.adapters:
            raise IdempotentWriteError(
                f"column {column!r} holds {kind.__module__}.{kind.__qualname__} values, which SQLite cannot "
                f"store; convert them to text or numbers first, or register an adapter with "
                f"sqlite3.register_adapter")


class SqliteEngine(Engine):
    """SQLite: `BEGIN IMMEDIATE` serialises writers; timestamps are stored as UTC text."""

    dialect = "sqlite"
    typed_timestamps = False
    # (the batch, its columns as bound) from prepare_bound(), until a load takes them
    _prepared: tuple[AnyBatch, list[list[Any]]] | None = None
    case_insensitive_names = True
    # SQLite has no hash function: fingerprints are arrow/fingerprint.py's of the values as
    # bound (the batch) and as read back (the table), computed here. Reading an interval back costs
    # less than deleting and inserting it again.
    can_fingerprint = True

    def _detect_version(self) -> tuple[int, ...]:
        (version,) = self.connection.execute("SELECT sqlite_version()").fetchone()
        return tuple(int(part) for part in version.split("."))

    @contextmanager
    def transaction(self, lock_key: str) -> Iterator[None]:
        if self.connection.in_transaction:
            raise IdempotentWriteError(
                "the sqlite3 connection has an open transaction; commit or roll it back before "
                "writing an interval, which runs in a transaction of its own")
        # IMMEDIATE takes the write lock now, so a second writer of any interval waits (up to
        # the connection's timeout) instead of interleaving with this one.
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.connection.rollback()
            raise
        self.connection.commit()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        return self.connection.execute(sql, tuple(self.adapt(p) for p in params)).rowcount

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, tuple(self.adapt(p) for p in params)).fetchall()

    def adapt(self, value: Any) -> Any:
        # sqlite3's default datetime adapters are deprecated and keep the offset as written,
        # which breaks text comparison across offsets.
        if isinstance(value, datetime):
            return sqlite_timestamp(value) if value.tzinfo else value.isoformat(" ")
        if isinstance(value, date):
            return value.isoformat()
        kind = type(value)
        # sqlite3 looks up the user's adapters by the exact type; those win.
        to_text = _text_converter(kind) if (kind, sqlite3.PrepareProtocol) not in sqlite3.adapters else None
        return to_text(value) if to_text is not None else value

    def table_columns(self, table: TableName) -> dict[str, str] | None:
        schema = quote_identifier(table.schema) + "." if table.schema else ""
        rows = self.connection.execute(f"PRAGMA {schema}table_info({quote_identifier(table.name)})").fetchall()
        return {row[1]: row[2] for row in rows} or None

    def create_staging(self, target: TableName, columns: tuple[str, ...]) -> str:
        # Typed with the target's affinities, as CREATE TABLE ... AS SELECT would, plus a row
        # number of its own for the merge's anti-join (SQLite's `rowid` may be a user's column).
        staging = self.staging_name()
        declared = self.table_columns(target) or {}
        cols = ", ".join(f"{quote_identifier(c)} {_affinity(declared.get(c, ''))}" for c in columns)
        row = quote_identifier(staging_row_column(columns))
        self.execute(f"CREATE TEMPORARY TABLE {staging} ({row} INTEGER PRIMARY KEY, {cols})")
        return staging

    def interval_test(self, table: TableName, column: str, start: Any, end: Any) -> IntervalTest:
        """The plain text range where every value near the interval is in dagguard's written
        form (text order is then time order), else the exact test of sqlite_times; a value
        SQLite cannot read as a time is an IntervalViolationError."""
        if not self._other_forms_near(table, column, start, end, partition=False,
                                      what=f"time column {column!r}", kind="a time",
                                      rows=f"[{start.isoformat()}, {end.isoformat()})", numbers="times"):
            return functools.partial(in_range, start=start, end=end)
        return functools.partial(exact_test, start=start, end=end)

    def partition_test(self, table: TableName, column: str, value: Any, declared_type: str) -> IntervalTest:
        """Plain equality with the ISO date where every value near the partition is a plain
        date (the index on the column serves it), else the exact test of the instants whose
        UTC date is the partition's (sqlite_times): whatever the column is declared, SQLite
        keeps any text in it. A value SQLite cannot read as a date is an IntervalViolationError."""
        day = value if isinstance(value, date) else date.fromisoformat(value)
        # Both tests are index ranges: the survey reads the text of the days around the
        # partition, and the exact test decides only the rows in them (1M rows over 100 days:
        # 0.02 s for a day's delete with plain dates, 0.04-0.08 s with other forms; see
        # benchmarks/sqlite_interval_delete.py).
        start, end = day_interval(day)
        if not self._other_forms_near(table, column, start, end, partition=True,
                                      what=f"partition column {column!r}", kind="a date",
                                      rows=f"partition {day.isoformat()}", numbers="days"):
            return functools.partial(equal_to, value=value)
        return functools.partial(exact_test, start=start, end=end)

    def _other_forms_near(self, table: TableName, column: str, start: datetime, end: datetime, *,
                          partition: bool, what: str, kind: str, rows: str, numbers: str) -> bool:
        """Does any value near [start, end) differ from dagguard's written form? One that SQLite
        cannot read as a time is an IntervalViolationError: its rows cannot be told apart."""
        found = self.query(*survey_sql(table.quoted, quote_identifier(column), text_range(start, end),
                                       partition=partition))
        if not found:
            return False
        stored, unreadable = found[0]
        if unreadable:
            raise IntervalViolationError(
                f"the {what} of {table} holds {stored!r}, which cannot be read as {kind}, so the rows of "
                f"{rows} cannot be told from the others; nothing was written. SQLite's date functions read "
                f"text 'YYYY-MM-DD[ HH:MM[:SS[.fff]]][Z|±HH:MM]' (not numbers as unix or julian {numbers}): "
                "correct or delete that value")
        return True

    def index_staging(self, staging: str, keys: tuple[str, ...]) -> None:
        # Lets UPDATE ... FROM and the anti-join scan the target once and probe the batch.
        if not keys:  # replace and overwrite_partition join nothing
            return
        name = quote_identifier("ix_" + staging.strip('"'))
        self.execute(f"CREATE INDEX temp.{name} ON {staging} ({', '.join(quote_identifier(k) for k in keys)})")

    def load_staging(self, staging: str, batch: AnyBatch) -> None:
        marks = ", ".join("?" for _ in batch.columns)
        cols = ", ".join(quote_identifier(c) for c in batch.columns)
        self.connection.executemany(f"INSERT INTO {staging} ({cols}) VALUES ({marks})", self._bound_rows(batch))

    def can_upsert(self, table: TableName, key: tuple[str, ...]) -> bool:
        # INSERT ... AS alias ... ON CONFLICT arrived in SQLite 3.24.
        return self.version >= (3, 24) and unique_on(self.connection, table, key)

    def upsert(self, table: TableName, batch: AnyBatch, key: tuple[str, ...], time_column: str,
               in_interval: IntervalTest) -> tuple[int, str]:
        sql, params = upsert_sql(table, batch.columns, key, time_column, in_interval, self.adapt)
        return run_upsert(self.connection, sql, self._bound_rows(batch), params), sql

    def prepare_bound(self, batch: AnyBatch) -> None:
        # Building a million rows' Python values (0.75 CPU s) holds the GIL, the survey of the
        # stored times does not: the two run at once.
        if isinstance(batch, ArrowBatch):
            self._prepared = (batch, sqlite_columns(batch, self.adapt))

    def forget_prepared(self) -> None:
        self._prepared = None

    def _bound_rows(self, batch: AnyBatch) -> Iterator[tuple[Any, ...]]:
        """The batch's rows as tuples of what sqlite3 binds."""
        if isinstance(batch, ArrowBatch):
            prepared, self._prepared = self._prepared, None
            if prepared is not None and prepared[0] is batch:
                return zip(*prepared[1])
            return zip(*sqlite_columns(batch, self.adapt))
        # Adapt only the columns that need it: a per-value call is most of the load time.
        # Every row is looked at, by type: a column's first datetime may come late.
        needs = []
        for at, name in enumerate(batch.columns):
            kinds = set(map(type, map(itemgetter(at), batch.rows)))
            if any(issubclass(kind, _ADAPTED) for kind in kinds):
                needs.append(at)
            _check_bindable(name, kinds)
        if needs:
            adapt = self.adapt
            return (tuple(adapt(v) if i in needs else v for i, v in enumerate(row)) for row in batch.rows)
        return iter(batch.rows)

    def ledger_types(self) -> tuple[str, str, str]:
        return "TEXT", "INTEGER", "TEXT"

    def batch_fingerprint(self, batch: AnyBatch, columns: tuple[str, ...],
                          target_columns: dict[str, str]) -> tuple[int, ...] | None:
        if not isinstance(batch, ArrowBatch):
            return None
        import pyarrow as pa

        # Text (decimals go as text) that looks like a number is stored as one by a column of
        # numeric affinity, and read back so: only a staged copy fingerprints like the table.
        if any(_bound_as_text(batch.column(c).type) and _numeric_affinity(target_columns.get(c, ""))
               for c in columns):
            return None

        arrays = dict(zip(batch.columns, sqlite_arrays(batch, self.adapt)))
        return _arrow_fingerprint(pa.table({c: arrays[c] for c in columns}))

    def fingerprint(self, source: str, columns: tuple[str, ...], where: str,
                    params: tuple[Any, ...]) -> tuple[int, ...] | None:
        import pyarrow as pa

        cols = ", ".join(quote_identifier(c) for c in columns)
        rows = self.query(f"SELECT {cols} FROM {source} AS dg_rows WHERE {where}", params)
        if not rows:
            return (0,)
        try:
            # SQLite's dynamic typing may mix kinds in a column: then no fingerprint, a rewrite.
            # One itemgetter pass per column, as rows_to_arrow does: zip(*rows) took 0.46 s for
            # 1M five-column rows, this 0.13 s.
            table = pa.table({c: pa.array(list(map(itemgetter(at), rows))) for at, c in enumerate(columns)})
        except (pa.ArrowException, TypeError, ValueError):
            return None
        return _arrow_fingerprint(table)


def _bound_as_text(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_decimal(kind)


def _affinity(declared: str) -> str:
    """The affinity of a column declared `declared`, as a type name. SQLite's rules, in their
    order: INT (integer), CHAR/CLOB/TEXT (text), BLOB or nothing (none), REAL/FLOA/DOUB (real),
    anything else (numeric)."""
    kind = declared.upper()
    if "INT" in kind:
        return "INTEGER"
    if any(word in kind for word in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in kind or not kind.strip():
        return "BLOB"
    if any(word in kind for word in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def _numeric_affinity(declared: str) -> bool:
    """Does a column declared `declared` convert number-like text to a number?"""
    return _affinity(declared) in ("INTEGER", "REAL", "NUMERIC")


def _arrow_fingerprint(table: Any) -> tuple[int, ...] | None:
    """(rows, lane 1, lane 2) of the values as bound or as read back: a sum of per-row hashes,
    no sort (arrow_checksum's sort took 0.13-0.34 s a side for 1M rows, this 0.08 s). Both
    sides hold what sqlite3 binds and returns (integers, floats, text, bytes; booleans are
    integers to the fingerprint as to SQLite), so equal values give equal words."""
    from dagguard.idempotent.arrow.fingerprint import fingerprint

    return fingerprint(table)


def connect_sqlite(path: str, read_only: bool = False) -> sqlite3.Connection:
    """Open a database file; read-only opening fails instead of creating a missing file."""
    if read_only:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return sqlite3.connect(path, timeout=60)
