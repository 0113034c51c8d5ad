"""What each engine and version can do, kept here rather than trusted to sqlglot.

Sources: /work/shared/FACTS.md "Writing an interval idempotently" (MERGE: PostgreSQL 15+,
BY SOURCE 17+; DuckDB 1.4+ with BY SOURCE; SQLite none), SQLite's UPDATE ... FROM (3.33) and
the vendors' MERGE pages for the engines we only generate SQL for.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Features:
    """The SQL features a strategy may use on one engine at one version."""

    merge: bool
    merge_by_source: bool
    update_from: bool
    null_safe_eq: str
    null_safe_ne: str
    # SQLite probes the target once per staged row in NOT EXISTS (quadratic without an index on
    # the key); a NOT IN over a join probing the indexed staging table stays linear. It selects
    # the staging table's own row number column (strategies.staging_row_column), not `rowid`.
    rowid_anti_join: bool = False


_STANDARD_EQ = ("IS NOT DISTINCT FROM", "IS DISTINCT FROM")


def features_for(dialect: str, version: tuple[int, ...]) -> Features:
    """Features of `dialect` (sqlglot's name for it) at `version`; unknown dialects raise KeyError."""
    if dialect == "postgres":
        return Features(version >= (15,), version >= (17,), True, *_STANDARD_EQ)
    if dialect == "duckdb":
        merge = version >= (1, 4)
        return Features(merge, merge, True, *_STANDARD_EQ)
    if dialect == "sqlite":
        # SQLite's IS / IS NOT are NULL-safe and older than its IS [NOT] DISTINCT FROM (3.39).
        return Features(False, False, version >= (3, 33), "IS", "IS NOT", rowid_anti_join=True)
    if dialect in REMOTE_FEATURES:
        return REMOTE_FEATURES[dialect]
    raise KeyError(dialect)


# Engines we cannot run here: SQL is generated for them and checked against golden files.
REMOTE_FEATURES: dict[str, Features] = {
    # Snowflake MERGE has no WHEN NOT MATCHED BY SOURCE (and sqlglot silently drops it).
    "snowflake": Features(True, False, True, *_STANDARD_EQ),
    "bigquery": Features(True, True, True, *_STANDARD_EQ),
    # Databricks SQL / Delta Lake: WHEN NOT MATCHED BY SOURCE since Runtime 12.2.
    "databricks": Features(True, True, True, *_STANDARD_EQ),
    # Trino's MERGE has no BY SOURCE clause and no UPDATE ... FROM.
    "trino": Features(True, False, False, *_STANDARD_EQ),
}
