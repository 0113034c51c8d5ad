"""SQL of each strategy for engines we cannot run here (Snowflake, BigQuery, Databricks, Trino).

The statements are the ones the local engines run, chosen with our own feature table and then
rendered by sqlglot. sqlglot is trusted for syntax only: a MERGE that loses its BY SOURCE
clause in rendering (sqlglot does this for Snowflake) is refused, not emitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dagguard.idempotent import strategies
from dagguard.idempotent.capabilities import REMOTE_FEATURES
from dagguard.idempotent.errors import UnsupportedConnectionError
from dagguard.idempotent.identifiers import TableName, quote_identifier, validate_identifier

REMOTE_DIALECTS = tuple(REMOTE_FEATURES)
# The SQL above is written in the dialect of our local engines, which sqlglot reads as DuckDB.
_SOURCE_DIALECT = "duckdb"


@dataclass(frozen=True)
class RemoteStatement:
    """One rendered statement, its parameter names in `?` order, and what its row count means."""

    sql: str
    parameters: tuple[str, ...]
    effect: str


def render_write_sql(dialect: str, table: str, columns: Sequence[str], *, strategy: str = "replace",
                     time_column: str | None = None, unique_key: Sequence[str] = (),
                     delete_missing: bool = False, partition_column: str = "ds",
                     staging_table: str = "dagguard_stage",
                     nullable_keys: Sequence[str] | None = None) -> list[RemoteStatement]:
    """The statements that write the staged batch into `table` for one interval, in `dialect`.

    Parameters are positional `?`; `parameters` names them (interval_start, interval_end,
    partition_value). `nullable_keys` are key columns that may hold NULL (default: all keys).
    """
    import sqlglot

    if dialect not in REMOTE_FEATURES:
        raise UnsupportedConnectionError(f"no SQL generation for {dialect!r}; use one of {', '.join(REMOTE_DIALECTS)}")
    features = REMOTE_FEATURES[dialect]
    for column in columns:
        validate_identifier(column, "column")
    keys = tuple(unique_key)
    plan_input = strategies.PlanInput(
        strategy=strategy, target=TableName.parse(table),
        staging=".".join(quote_identifier(p) for p in TableName.parse(staging_table).parts),
        columns=tuple(columns), time_column=time_column, unique_key=keys,
        nullable_keys=frozenset(keys if nullable_keys is None else nullable_keys),
        delete_missing=delete_missing,
        partition_column=partition_column if strategy == "overwrite_partition" else None,
        start="interval_start", end="interval_end", partition_value="partition_value")
    rendered = []
    for statement in strategies.plan(plan_input, features):
        sql = sqlglot.transpile(statement.sql, read=_SOURCE_DIALECT, write=dialect)[0]
        if "BY SOURCE" in statement.sql and "BY SOURCE" not in sql:
            raise AssertionError(f"sqlglot dropped WHEN NOT MATCHED BY SOURCE for {dialect}")
        rendered.append(RemoteStatement(sql, tuple(statement.params), statement.effect))
    return rendered
