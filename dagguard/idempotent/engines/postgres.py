"""PostgreSQL through psycopg 3: COPY (binary where exact, else CSV) into a temp staging table,
advisory lock per interval."""

from __future__ import annotations

import codecs
import re
from contextlib import contextmanager
from typing import Any, Iterator

from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.arrow.convert import postgres_csv
from dagguard.idempotent.arrow.pg_binary import binary_copy
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.identifiers import TableName, quote_identifier


# Types without an `=` (json, xml, point...) or whose `=` is not equality of values (box,
# lseg, circle... compare areas or lengths): a merge compares their text instead.
_NO_VALUE_EQUALITY = frozenset({"json", "xml", "point", "line", "lseg", "box", "path", "polygon", "circle"})
# work_mem per staged row for the merge's hash joins; PostgreSQL 15 gives a hash table twice
# work_mem (hash_mem_multiplier), and a 1M-row hash of the benchmark's rows took 55-82 MB.
JOIN_BYTES_PER_ROW = 64
MAX_JOIN_MEMORY = 128 * 1024 * 1024
_PRECISION = re.compile(r"timestamp\((\d)\)")


class PostgresEngine(Engine):
    """PostgreSQL: one transaction holding `pg_advisory_xact_lock` on a hash of the interval."""

    dialect = "postgres"
    # 1M rows: counting the interval before and after the MERGE (an index-only scan, then a
    # scan of the new row versions) took 0.35 s; the counting join 0.87 s.
    counts_merge_by_difference = True

    @property
    def can_fingerprint(self) -> bool:  # type: ignore[override]
        """hash_record_extended arrived in PostgreSQL 14."""
        return self.version >= (14,)

    def _detect_version(self) -> tuple[int, ...]:
        number = self.connection.info.server_version  # e.g. 150008
        return (number // 10000, number % 10000)

    @contextmanager
    def transaction(self, lock_key: str) -> Iterator[None]:
        # psycopg's transaction() begins and commits, or becomes a savepoint inside a
        # transaction the caller already opened (then the caller's commit publishes the write).
        with self.connection.transaction(), self._text_as_str():
            # Without this lock two READ COMMITTED writers both delete nothing new and both
            # insert: the interval ends up doubled.
            self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (lock_key,))
            yield

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self.connection.transaction(), self._text_as_str():
            yield

    @contextmanager
    def _text_as_str(self) -> Iterator[None]:
        """Inside a transaction: a SQL_ASCII client gets text (catalog names too) as bytes from
        psycopg. As UTF-8, which a SQL_ASCII database stores unconverted as it stores anything,
        text is str and the COPY can be binary. Restored at the end, since the caller's own
        transaction may go on; a failure rolls the SET LOCAL back with the rest."""
        ascii_client = codecs.lookup(self.connection.info.encoding).name == "ascii"
        if ascii_client:
            self.execute("SET LOCAL client_encoding TO 'UTF8'")
        yield
        if ascii_client:
            self.execute("SET LOCAL client_encoding TO 'SQL_ASCII'")

    def compared_as_text(self, column_types: dict[str, str]) -> frozenset[str]:
        # format_type spells arrays `json[]` and keeps type modifiers: `character varying(20)`.
        return frozenset(name for name, kind in column_types.items()
                         if kind.split("(")[0].rstrip("[]").strip() in _NO_VALUE_EQUALITY)

    def timestamp_digits(self, declared_type: str) -> int:
        # format_type spells a precision as `timestamp(0) with time zone`; without one, 6.
        declared = _PRECISION.match(declared_type.lower())
        return int(declared.group(1)) if declared else 6

    def lock_for_ddl(self, name: str) -> None:
        self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (f"dagguard-ddl:{name}",))

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        with self.connection.cursor() as cursor:
            cursor.execute(sql.replace("?", "%s"), params)
            return cursor.rowcount

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall()

    def table_columns(self, table: TableName) -> dict[str, str] | None:
        return self._relation_columns(table.quoted)

    def _relation_columns(self, relation: str) -> dict[str, str] | None:
        """Column name -> format_type of a quoted relation name (a temp table's too)."""
        rows = self.query(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped "
            "ORDER BY a.attnum", (relation,))
        return {name: kind for name, kind in rows} or None

    def create_staging(self, target: TableName, columns: tuple[str, ...]) -> str:
        staging = self.staging_name()
        cols = ", ".join(quote_identifier(c) for c in columns)
        self.execute(f"CREATE TEMPORARY TABLE {staging} ON COMMIT DROP AS "
                     f"SELECT {cols} FROM {target.quoted} WITH NO DATA")
        return staging

    def drop_staging(self, staging: str) -> None:
        """ON COMMIT DROP removes it; an explicit DROP would cost a catalog write."""

    def load_staging(self, staging: str, batch: AnyBatch) -> None:
        cols = ", ".join(quote_identifier(c) for c in batch.columns)
        binary = csv = None
        if isinstance(batch, ArrowBatch):
            # Arrow's text is UTF-8 bytes. Binary text fields are read in the client encoding,
            # so they need a UTF-8 client; the CSV says its encoding in the COPY itself.
            if codecs.lookup(self.connection.info.encoding).name == "utf-8":
                binary = binary_copy(batch, self._relation_columns(staging) or {})
            csv = None if binary is not None else postgres_csv(batch)
        with self.connection.cursor() as cursor:
            if binary is not None:
                with cursor.copy(f"COPY {staging} ({cols}) FROM STDIN (FORMAT binary)") as copy:
                    for chunk in binary:
                        copy.write(chunk)
                return
            if csv is not None:
                # pyarrow writes the CSV in C; psycopg's write_row would convert value by value.
                with cursor.copy(f"COPY {staging} ({cols}) FROM STDIN (FORMAT csv, ENCODING 'UTF8')") as copy:
                    copy.write(csv)
                return
            # psycopg encodes these str values in the client encoding itself.
            rows = _json_wrapped(batch.rows, batch.columns, self._relation_columns(staging) or {})
            with cursor.copy(f"COPY {staging} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    def size_joins(self, rows: int) -> None:
        # The default work_mem (4MB) makes a hash join over a million staged rows spill to disk
        # in 8-16 batches: at 1M rows the counting join and the MERGE took 0.9 s longer. Raised
        # for this transaction only (set_config's is_local), and never lowered.
        wanted = f"{min(max(rows, 1) * JOIN_BYTES_PER_ROW, MAX_JOIN_MEMORY) // 1024}kB"
        self.execute("SELECT set_config('work_mem', ?, true) "
                     "WHERE pg_size_bytes(current_setting('work_mem')) < pg_size_bytes(?)", (wanted, wanted))

    def ledger_types(self) -> tuple[str, str, str]:
        return "text", "bigint", "timestamptz"

    def fingerprint(self, source: str, columns: tuple[str, ...], where: str,
                    params: tuple[Any, ...]) -> tuple[int, ...] | None:
        if not self.can_fingerprint:
            return None
        # Sums of per-row hashes (two seeds: 128 bits) are order-independent and count
        # duplicates; hashing the typed record avoids the row-to-text conversion.
        row = "ROW(" + ", ".join(quote_identifier(c) for c in columns) + ")"
        sql = (f"SELECT count(*), coalesce(sum(hash_record_extended({row}, 0)), 0), "
               f"coalesce(sum(hash_record_extended({row}, 1)), 0) FROM {source} AS dg_rows WHERE {where}")
        try:
            # A savepoint: a column type without a hash function (json, point...) fails this
            # query, which must not abort the write's transaction.
            with self.connection.transaction():
                count, first, second = self.query(sql, params)[0]
        except Exception:
            return None
        return int(count), int(first), int(second)


def _json_wrapped(rows: Any, columns: tuple[str, ...], column_types: dict[str, str]) -> Any:
    """`rows` with the dicts and lists of json/jsonb columns wrapped for psycopg, which has no
    dumper for a plain dict (and would send a list as a PostgreSQL array)."""
    wrappers = {}
    for at, name in enumerate(columns):
        kind = column_types.get(name)
        if kind in ("json", "jsonb"):
            from psycopg.types.json import Json, Jsonb

            wrappers[at] = Jsonb if kind == "jsonb" else Json
    if not wrappers:
        return rows

    def wrap(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(wrappers[at](value) if at in wrappers and isinstance(value, (dict, list)) else value
                     for at, value in enumerate(row))

    return map(wrap, rows)
