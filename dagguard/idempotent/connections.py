"""Turn what the user passed as `conn` into an Engine: a DB-API connection, a URL, or an
Airflow connection id (through Airflow's own hooks)."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import unquote

from dagguard.extras import install_hint
from dagguard.idempotent.engines import Engine, engine_for
from dagguard.idempotent.errors import ConnectionFailedError, UnsupportedConnectionError


@dataclass(frozen=True)
class ParsedUrl:
    """A database URL reduced to what the drivers need."""

    dialect: str  # sqlite | duckdb | postgres | delta | iceberg
    target: str  # a file path, ":memory:", or a libpq URI


def parse_url(url: str) -> ParsedUrl:
    """Accept SQLAlchemy-style URLs: sqlite:///rel.db, sqlite:////abs.db, duckdb:///x.duckdb,
    postgresql[+driver]://user@host:port/db (and postgres://)."""
    scheme, _, rest = url.partition("://")
    if not rest and not url.endswith("://"):
        raise UnsupportedConnectionError(f"{url!r} is not a database URL (e.g. sqlite:///path.db)")
    base = scheme.split("+")[0].lower()
    if base == "delta":
        return ParsedUrl("delta", url)  # a lake of Delta tables: engines.delta reads the rest
    if base in ("sqlite", "duckdb"):
        path = rest[1:] if rest.startswith("/") else rest
        return ParsedUrl(base, unquote(path.split("?")[0]) or ":memory:")
    if base in ("postgresql", "postgres"):
        return ParsedUrl("postgres", "postgresql://" + rest)
    if base == "iceberg":  # iceberg+sqlite:///catalog.db?warehouse=..., iceberg+rest://...
        return ParsedUrl("iceberg", url)
    raise UnsupportedConnectionError(
        f"unsupported database URL scheme {scheme!r}; use sqlite://, duckdb://, postgresql://, delta:// or iceberg+sqlite://")


def redact(url: str) -> str:
    """The URL with its password replaced, for messages."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def connect_url(url: str, read_only: bool = False) -> Any:
    """Open a DB-API connection for a URL; ConnectionFailedError with the driver's reason."""
    parsed = parse_url(url)
    if parsed.dialect == "delta":
        from dagguard.idempotent.engines.delta_lake import lake_from_url

        return lake_from_url(url)  # opens nothing: each write reads the table's latest version
    try:
        if parsed.dialect == "sqlite":
            from dagguard.idempotent.engines.sqlite import connect_sqlite

            return connect_sqlite(parsed.target, read_only=read_only)
        if parsed.dialect == "iceberg":
            from dagguard.idempotent.engines.iceberg_catalog import open_catalog

            return open_catalog(url, read_only=read_only)
        if parsed.dialect == "duckdb":
            import duckdb

            return duckdb.connect(parsed.target, read_only=read_only and parsed.target != ":memory:")
        import psycopg

        return psycopg.connect(parsed.target)
    except ImportError as exc:
        if parsed.dialect == "iceberg":
            raise UnsupportedConnectionError(
                f"iceberg URLs need the pyiceberg package: {install_hint('iceberg')}") from exc
        raise UnsupportedConnectionError(
            f"{parsed.dialect} URLs need the {exc.name} package: {install_hint(parsed.dialect)}") from exc
    except UnsupportedConnectionError:
        raise
    except Exception as exc:  # the drivers' own OperationalError/IOException
        reason = " ".join(str(exc).split())
        raise ConnectionFailedError(f"cannot connect to {redact(url)}: {reason}") from exc


def connect_airflow(conn_id: str) -> Any:
    """A DB-API connection from Airflow's hook for `conn_id` (SqliteHook, PostgresHook, ...)."""
    from dagguard.idempotent.errors import require_airflow

    require_airflow(f"conn_id={conn_id!r} (not a database URL, so an Airflow connection id)")
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        connection = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException as exc:
        raise UnsupportedConnectionError(
            f"{conn_id!r} is neither a database URL (sqlite:///path.db, duckdb:///path.duckdb, "
            f"postgresql://user@host/db) nor a defined Airflow connection id ({exc})") from exc
    hook = _hook_of(connection, conn_id)
    if not hasattr(hook, "get_conn"):
        raise UnsupportedConnectionError(
            f"Airflow connection {conn_id!r} (type {connection.conn_type}) has no DB-API hook")
    return hook.get_conn()


# Connection types whose provider package comes with dagguard's `airflow` extra.
_EXTRA_PROVIDERS = {"sqlite": "apache-airflow-providers-sqlite", "postgres": "apache-airflow-providers-postgres"}


def _hook_of(connection: Any, conn_id: str) -> Any:
    """The connection's hook; a provider package that is not installed is named, not Airflow's
    `Unknown hook type` traceback."""
    from airflow.sdk.exceptions import AirflowException

    try:
        return connection.get_hook()
    except AirflowException as exc:
        if not str(exc).startswith("Unknown hook type"):
            raise
        conn_type = connection.conn_type
        package = _EXTRA_PROVIDERS.get(conn_type)
        hint = (f"{install_hint('airflow')} (it brings {package})" if package else
                f"install the Airflow provider package for connection type {conn_type!r}")
        raise UnsupportedConnectionError(
            f"Airflow connection {conn_id!r} has type {conn_type!r}, whose hook comes from a provider "
            f"package that is not installed: {hint}") from None


def _sqlalchemy_kind(conn: Any) -> str | None:
    """'url' or 'engine' for SQLAlchemy objects, else None (without importing SQLAlchemy)."""
    if not type(conn).__module__.startswith("sqlalchemy"):
        return None
    if hasattr(conn, "render_as_string"):
        return "url"
    if hasattr(conn, "raw_connection"):
        return "engine"
    return None


@contextmanager
def open_engine(conn: Any) -> Iterator[Engine]:
    """An Engine for `conn`; connections dagguard opened itself are closed afterwards."""
    kind = _sqlalchemy_kind(conn)
    if kind == "url":
        conn = conn.render_as_string(hide_password=False)
    elif kind == "engine":
        # The pool's DB-API connection; closing the proxy returns it to the pool.
        proxy = conn.raw_connection()
        try:
            yield engine_for(proxy.driver_connection)
        finally:
            proxy.close()
        return
    if isinstance(conn, str):
        dbapi = connect_url(conn) if "://" in conn else connect_airflow(conn)
        engine = engine_for(dbapi)
        try:
            yield engine
        finally:
            engine.close()
    else:
        yield engine_for(conn)
