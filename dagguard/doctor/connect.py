"""Find the Airflow metadata database and open it, read-only unless a repair is applied.

Discovery follows Airflow's own precedence for the setting that matters here:
`--db`, then `AIRFLOW__DATABASE__SQL_ALCHEMY_CONN`, then `[database] sql_alchemy_conn` in
`$AIRFLOW_HOME/airflow.cfg`, then the default SQLite file `$AIRFLOW_HOME/airflow.db`.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import quote

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from dagguard.doctor.errors import ConnectError
from dagguard.doctor.pg_times import load_unrepresentable_as_text
from dagguard.extras import install_hint

ENV_CONN = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"
SUPPORTED_BACKENDS = ("sqlite", "postgresql")
# PostgreSQL waits this long for a server before doctor gives up with exit 2.
CONNECT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class DatabaseTarget:
    """A metadata database URL and where doctor found it."""

    url: str
    source: str

    @property
    def display_url(self) -> str:
        """The URL with any password hidden, safe to print."""
        return redact(self.url)


def redact(url: str) -> str:
    """Hide the password of a SQLAlchemy URL, also of one SQLAlchemy cannot parse."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def airflow_home(environ: Mapping[str, str]) -> Path:
    """`$AIRFLOW_HOME`, defaulting to ~/airflow as Airflow does."""
    return Path(environ.get("AIRFLOW_HOME") or Path.home() / "airflow").expanduser()


def discover_target(explicit: str | None, environ: Mapping[str, str]) -> DatabaseTarget:
    """Pick the metadata database URL from --db, the environment, airflow.cfg or airflow.db."""
    if explicit:
        return DatabaseTarget(explicit, "--db")
    from_env = environ.get(ENV_CONN, "").strip()
    if from_env:
        return DatabaseTarget(from_env, ENV_CONN)
    home = airflow_home(environ)
    cfg = home / "airflow.cfg"
    from_cfg = _sql_alchemy_conn_from_cfg(cfg, home)
    if from_cfg:
        return DatabaseTarget(from_cfg, str(cfg))
    default_db = home / "airflow.db"
    if default_db.exists():
        return DatabaseTarget(f"sqlite:///{default_db}", str(default_db))
    raise ConnectError(
        f"no Airflow metadata database found: pass --db URL, set {ENV_CONN}, "
        f"or point AIRFLOW_HOME at a directory with airflow.cfg or airflow.db (looked in {home})"
    )


def _sql_alchemy_conn_from_cfg(cfg: Path, home: Path) -> str | None:
    if not cfg.is_file():
        return None
    # Airflow's cfg uses no interpolation; '%' in passwords must stay literal.
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(cfg, encoding="utf-8")
    except configparser.Error as exc:
        raise ConnectError(f"cannot read {cfg}: {str(exc).splitlines()[0]}") from None
    value = parser.get("database", "sql_alchemy_conn", fallback="").strip()
    # Airflow writes its templated default with {AIRFLOW_HOME} in some versions.
    return value.replace("{AIRFLOW_HOME}", str(home)) or None


def open_engine(target: DatabaseTarget, *, writable: bool = False) -> Engine:
    """Create an engine for the target: read-only unless `writable` (used only by a repair)."""
    url = normalize_url(_parse(target))
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url, writable)
    if backend == "postgresql":
        return _postgres_engine(url, writable)
    raise ConnectError(
        f"unsupported database backend '{backend}' in {target.display_url}: "
        f"doctor supports {' and '.join(SUPPORTED_BACKENDS)}"
    )


def _parse(target: DatabaseTarget) -> URL:
    try:
        return make_url(target.url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise ConnectError(
            f"not a database URL (from {target.source}): {target.display_url!r}; "
            "expected e.g. postgresql+psycopg://user@host/airflow or sqlite:////path/airflow.db"
        ) from None


def normalize_url(url: URL, *, module_available: Callable[[str], bool] | None = None) -> URL:
    """Accept Airflow-style PostgreSQL URLs: the old `postgres://` scheme, and psycopg2 URLs
    where only psycopg 3 is installed (dagguard's `postgres` extra installs psycopg 3)."""
    available = module_available or (lambda name: importlib.util.find_spec(name) is not None)
    driver = url.drivername
    if driver == "postgres" or driver.startswith("postgres+"):
        driver = "postgresql" + driver[len("postgres"):]
    if driver in ("postgresql", "postgresql+psycopg2") and not available("psycopg2") and available("psycopg"):
        driver = "postgresql+psycopg"
    return url.set(drivername=driver) if driver != url.drivername else url


def sqlite_path(url: URL) -> Path:
    """The file of a SQLite URL; in-memory databases cannot be diagnosed."""
    database = url.database or ""
    if database.startswith("file:"):
        database = database[len("file:"):].split("?", 1)[0]
    if database in ("", ":memory:"):
        raise ConnectError("a SQLite URL must name a file, e.g. sqlite:////path/to/airflow.db")
    return Path(database).expanduser().resolve()


def _sqlite_engine(url: URL, writable: bool) -> Engine:
    path = sqlite_path(url)
    # Without this check SQLite would create an empty file, and doctor would report "not Airflow".
    if not path.is_file():
        raise ConnectError(f"cannot connect: SQLite database file {path} does not exist")
    # mode=ro makes SQLite itself refuse writes, whatever doctor's queries do.
    mode = "mode=rw" if writable else sqlite_read_only_mode(path)
    uri = f"sqlite+pysqlite:///file:{quote(str(path))}?{mode}&uri=true"
    return _create(uri, {})


def sqlite_read_only_mode(path: Path) -> str:
    """The URI options that read the file without writing anything, even in a read-only folder.

    A WAL-mode database (Airflow's choice) is read through its -shm file, which SQLite must
    create when no open connection has: in a folder this user cannot write, `mode=ro` then
    fails with "attempt to write a readonly database". With no changes waiting in a -wal file,
    the database file alone is the whole database and `immutable=1` reads it without the -shm
    file, and without locks: a writer that checkpoints meanwhile may make doctor fail or read
    an inconsistent state (see the README).
    """
    if not _is_wal_database(path) or os.access(path.parent, os.W_OK):
        return "mode=ro"
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if wal.exists() and shm.exists():
        return "mode=ro"  # a live writer's files: SQLite reads its changes through them
    if wal.exists() and wal.stat().st_size > 0:
        raise ConnectError(
            f"cannot read {path} without writing: it is in WAL mode and {wal.name} holds changes "
            f"not yet in the database file, which SQLite reads only through a {shm.name} file it "
            f"would have to create, and this user cannot write {path.parent}; run doctor as a user "
            f"who can, or copy {path.name} and {wal.name} together to a writable folder and pass "
            "--db sqlite:////that/folder/" + path.name
        )
    return "mode=ro&immutable=1"


def _is_wal_database(path: Path) -> bool:
    # The header's file format write/read versions (bytes 18 and 19) are 2 in WAL mode.
    try:
        with path.open("rb") as file:
            header = file.read(20)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == b"\x02\x02"


def _postgres_engine(url: URL, writable: bool) -> Engine:
    options: dict[str, Any] = {} if "connect_timeout" in url.query else {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
    if "client_encoding" not in url.query:
        # A SQL_ASCII database's client encoding defaults to SQL_ASCII, for which psycopg
        # returns text as bytes and SQLAlchemy fails on the server's version string. UTF-8
        # reads any other encoding converted, and SQL_ASCII's ASCII (Airflow's ids) as it is.
        options["client_encoding"] = "utf8"
    engine = _create(url, options)
    if not writable:
        # Every transaction doctor opens for diagnosis is READ ONLY on the server.
        engine = engine.execution_options(postgresql_readonly=True)
    return engine


def _create(url: str | URL, connect_args: dict[str, Any]) -> Engine:
    try:
        engine = create_engine(url, connect_args=connect_args, pool_pre_ping=False)
    except NoSuchModuleError as exc:
        raise ConnectError(f"no SQLAlchemy driver for this URL: {exc}") from None
    except ModuleNotFoundError as exc:
        # Only PostgreSQL gets here: SQLite's driver is in the standard library.
        raise ConnectError(f"the database driver {exc.name} is not installed; dagguard's postgres "
                           f"extra installs psycopg: {install_hint('postgres')}") from None
    except ArgumentError as exc:
        raise ConnectError(f"invalid database URL: {exc}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_busy_timeout)
    elif engine.dialect.driver == "psycopg":
        event.listen(engine, "connect", load_unrepresentable_as_text)
    return engine


def _sqlite_busy_timeout(dbapi_connection: Any, _record: Any) -> None:
    # A live scheduler writes to the same file; wait for its lock instead of failing at once.
    dbapi_connection.execute("PRAGMA busy_timeout = 5000")


