"""What a write is asked (WriteSpec, validated) and what it did (WriteResult), with the checks
every engine makes of its target table and the message for text a driver cannot encode. Below
write.py and the engines that write (iceberg.py ...), which take them from here (write.py
imports them back for its callers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from dagguard.idempotent import strategies
from dagguard.idempotent.batch import AnyBatch
from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.errors import ArgumentTypeError, InvalidArgumentError, InvalidIdentifierError, TargetTableError
from dagguard.idempotent.identifiers import TableName, validate_identifier
from dagguard.idempotent.interval import Interval


@dataclass(frozen=True)
class WriteSpec:
    """What to write where, validated: names are plain identifiers, the strategy is known."""

    table: TableName
    strategy: str
    time_column: str | None
    unique_key: tuple[str, ...]
    delete_missing: bool
    partition_column: str | None

    @classmethod
    def build(cls, table: str, strategy: str, time_column: str | None,
              unique_key: Sequence[str] | str | None, delete_missing: bool,
              partition_column: str | None) -> "WriteSpec":
        """Check the arguments of write_interval and the decorator, before any data moves."""
        if strategy not in strategies.STRATEGIES:
            hint = " (there is no append strategy: appends duplicate on rerun)" if strategy == "append" else ""
            raise InvalidArgumentError(
                f"unknown strategy {strategy!r}{hint}; use one of {', '.join(strategies.STRATEGIES)}")
        if unique_key is not None and not isinstance(unique_key, (str, Iterable)):
            raise ArgumentTypeError(f"unique_key must be a column name or a list of them, not a "
                                    f"{type(unique_key).__name__}")
        keys = (unique_key,) if isinstance(unique_key, str) else tuple(unique_key or ())
        for key in keys:
            validate_identifier(key, "unique_key column")
        if time_column is not None:
            validate_identifier(time_column, "time_column")
        if strategy in ("replace", "merge") and not time_column:
            raise InvalidArgumentError(
                f"strategy={strategy!r} needs time_column=, the column the interval filters on")
        if strategy == "merge" and not keys:
            raise InvalidArgumentError("strategy='merge' needs unique_key=[...], the columns a row is matched on")
        if delete_missing and strategy != "merge":
            raise InvalidArgumentError("delete_missing=True only applies to strategy='merge' "
                                       "(replace and overwrite_partition always remove missing rows)")
        partition = partition_column if strategy == "overwrite_partition" else None
        if partition is not None:
            validate_identifier(partition, "partition_column")
        target = TableName.parse(table)
        if target.name.lower() in (strategies.T, strategies.S):
            raise InvalidIdentifierError(f"table name {target.name!r} is reserved for dagguard's aliases")
        return cls(target, strategy, time_column, keys, delete_missing, partition)


@dataclass(frozen=True)
class WriteResult:
    """What one write did; `to_dict()` is what the decorator returns to XCom.

    A PostgreSQL merge counts as inserted what the interval gained, so rows that a trigger adds
    to the interval count too; its updates are the rest of the MERGE's total."""

    table: str
    interval_start: str | None  # None for a partition written without an interval
    interval_end: str | None
    strategy: str
    rows_inserted: int
    rows_updated: int
    rows_deleted: int
    row_count: int
    checksum: str
    engine: str
    partition_key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only, so Airflow's XCom can store it."""
        return dict(self.__dict__)


def _unencodable(batch: AnyBatch, exc: UnicodeEncodeError, table: TableName, interval: Interval | str) -> str:
    """The message for text the driver could not encode (a lone surrogate such as "\\ud800", or a
    character the PostgreSQL client encoding lacks), naming the first such value."""
    for number, row in enumerate(batch.rows):
        for column, value in zip(batch.columns, row):
            if isinstance(value, str):
                try:
                    value.encode(exc.encoding)
                except UnicodeEncodeError as found:
                    return (f"row {number} of the batch for {table} {interval} cannot be written, nothing "
                            f"was written: column {column!r} holds {value!r}, which {exc.encoding} cannot "
                            f"encode ({found.reason}); a lone surrogate usually comes from bytes decoded "
                            f"with errors='surrogateescape'")
    return f"the batch for {table} {interval} cannot be written, nothing was written: {exc}"


def _check_target(engine: Engine, spec: WriteSpec, batch: AnyBatch,
                  target_columns: dict[str, str] | None) -> None:
    """A clear error when the table, or a column the write needs, is not there."""
    if target_columns is None:
        advice = _folded_table_hint(engine, spec.table) or "; create it before writing intervals into it"
        raise TargetTableError(f"table {spec.table} does not exist in the {engine.dialect} database{advice}")
    needed = list(batch.columns) + [c for c in (spec.time_column, spec.partition_column, *spec.unique_key) if c]
    missing = sorted({c for c in needed if c not in target_columns})
    if missing:
        by_case = {c.lower(): c for c in target_columns}
        spelled = [f"{c!r} as {by_case[c.lower()]!r}" for c in missing if c.lower() in by_case]
        hint = f"; names are matched exactly, and the table spells {', '.join(spelled)}" if spelled else ""
        raise TargetTableError(f"table {spec.table} has no column(s) {', '.join(missing)} "
                               f"(it has {', '.join(target_columns)}){hint}")


def _folded_table_hint(engine: Engine, table: TableName) -> str:
    """Where the name has capitals and its lower-case spelling exists: PostgreSQL folded an
    unquoted `CREATE TABLE Events` to `events`, while dagguard quotes names as given."""
    lowered = TableName(tuple(part.lower() for part in table.parts))
    if lowered == table or engine.table_columns(lowered) is None:
        return ""
    return (f"; {lowered} does: SQL folds unquoted names to lower case and dagguard quotes the name "
            f"as given, so pass {str(lowered)!r}")
