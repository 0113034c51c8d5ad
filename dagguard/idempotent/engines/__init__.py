"""One Engine per database we can write to, chosen from the DB-API connection's driver."""

from __future__ import annotations

from typing import Any

from dagguard.idempotent.engines.base import Engine
from dagguard.idempotent.errors import UnsupportedConnectionError

SUPPORTED = ("sqlite3, duckdb and psycopg (3) connections, Delta Lake tables, pyiceberg catalogs, "
             "Spark sessions")


def engine_for(connection: Any) -> Engine:
    """The Engine for a DB-API connection; UnsupportedConnectionError for any other driver."""
    module = type(connection).__module__.split(".")[0].lstrip("_")
    from dagguard.idempotent.engines.delta import DeltaEngine, DeltaLake  # (imports no deltalake)

    if module == "deltalake" or isinstance(connection, DeltaLake):
        return DeltaEngine(connection)  # type: ignore[return-value]  # a table format, not SQL
    if module == "sqlite3":
        from dagguard.idempotent.engines.sqlite import SqliteEngine

        return SqliteEngine(connection)
    if module == "duckdb":
        from dagguard.idempotent.engines.duckdb import DuckDBEngine

        return DuckDBEngine(connection)
    if module == "psycopg":
        from dagguard.idempotent.engines.postgres import PostgresEngine

        return PostgresEngine(connection)
    if module == "pyiceberg":  # a pyiceberg Catalog (SqlCatalog, RestCatalog, ...)
        from dagguard.idempotent.engines.iceberg import IcebergEngine

        return IcebergEngine(connection)
    if module == "pyspark":  # a SparkSession (classic or Spark Connect)
        from dagguard.idempotent.engines.spark import SparkEngine

        return SparkEngine(connection)  # type: ignore[return-value]  # a catalog, not SQL
    if module == "psycopg2":
        raise UnsupportedConnectionError(
            "psycopg2 connections are not supported; pass a psycopg 3 connection "
            "(Airflow's PostgresHook uses psycopg 3 when psycopg and SQLAlchemy 2 are installed)")
    raise UnsupportedConnectionError(
        f"cannot write through a {type(connection).__module__}.{type(connection).__name__}; "
        f"dagguard.idempotent supports {SUPPORTED}, SQLAlchemy-style URLs and Airflow connection ids")


__all__ = ["Engine", "engine_for"]
