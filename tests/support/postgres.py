"""A throwaway PostgreSQL cluster on 127.0.0.1 in a temp dir, for tests that need the real server."""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries were found on this machine."""


@dataclass(frozen=True)
class PostgresServer:
    data_dir: Path
    port: int
    bindir: Path
    run_as: str | None

    @property
    def dsn(self) -> str:
        """libpq connection string for the superuser database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def sqlalchemy_url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def create_database(self, name: str, encoding: str | None = None) -> str:
        """Create a fresh database (in `encoding`, else the cluster's UTF8) and return its DSN."""
        other = ["-E", encoding, "-T", "template0", "--locale=C"] if encoding else []
        _run([str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
              "-U", "postgres", *other, name], self.run_as)
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def drop_database(self, name: str) -> None:
        """Drop a test's database, closing its connections: every database costs ~8 MB of disk."""
        _run([str(self.bindir / "dropdb"), "-h", "127.0.0.1", "-p", str(self.port),
              "-U", "postgres", "--if-exists", "--force", name], self.run_as)

    def stop(self) -> None:
        _run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"],
             self.run_as, check=False)


def skip_or_fail(exc: PostgresUnavailable) -> NoReturn:
    """Skip the test locally when no server binaries exist; in CI (CI=true) that is a failure."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required in CI: {exc}")
    pytest.skip(str(exc))


def find_bindir() -> Path:
    """Where initdb and pg_ctl live: PATH, then `pg_config --bindir`, then Debian's layout."""
    pg_ctl = shutil.which("pg_ctl")
    candidates = [Path(os.path.realpath(pg_ctl)).parent] if pg_ctl else []
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    raise PostgresUnavailable("initdb/pg_ctl not found; install Debian's postgresql package")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(cmd: list[str], run_as: str | None, check: bool = True) -> subprocess.CompletedProcess:
    # PostgreSQL refuses to run as root, so as root we drop to the 'postgres' system user.
    if run_as:
        cmd = ["runuser", "-u", run_as, "--", *cmd]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def server_setting(text: str) -> str:
    """`text` if it is a `name=value` server setting that pg_ctl's -o can carry, else ValueError."""
    if not re.fullmatch(r"[a-z_.]+=[^\s'\"\\]+", text):
        raise ValueError(f"{text!r} is not a server setting: expected name=value without spaces or quotes")
    return text


@contextmanager
def throwaway_postgres(prefix: str = "dagguard-pg-", settings: tuple[str, ...] = ()) -> Iterator[PostgresServer]:
    """A cluster in a new temp dir, stopped and deleted on exit, however the block ends.

    Left behind, a test run's cluster holds every test's databases: a few runs fill the disk.
    """
    base = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        server = start_postgres(base, settings=settings)
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def start_postgres(base_dir: Path, cap_wal: bool = True, settings: tuple[str, ...] = ()) -> PostgresServer:
    """initdb a new cluster under base_dir and start it on a free loopback port.

    cap_wal keeps pg_wal small, for tests; benchmarks turn it off to measure the defaults.
    settings are more server settings, "name=value" each, as `postgres -c` takes them.
    """
    settings = tuple(map(server_setting, settings))
    bindir = find_bindir()
    run_as = None
    base_dir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        run_as = "postgres"
        pwd.getpwnam(run_as)  # KeyError if the package did not create the user
        shutil.chown(base_dir, user=run_as)
        # The postgres user must be able to reach the temp dir.
        for parent in base_dir.parents:
            if str(parent) in ("/", "/tmp"):
                break
            os.chmod(parent, os.stat(parent).st_mode | 0o011)
    data_dir = base_dir / "data"
    _run([str(bindir / "initdb"), "-D", str(data_dir), "-U", "postgres", "--auth=trust",
          "-E", "UTF8", "--no-sync"], run_as)
    port = _free_port()
    # TCP on 127.0.0.1 only: every client here connects that way, and a Unix socket's path
    # may not exceed 107 bytes, which a temp dir under pytest's tmp_path easily does.
    options = f"-p {port} -k '' -c listen_addresses=127.0.0.1 -c fsync=off"
    if cap_wal:
        # No replicas, and no 1 GB of pg_wal: a test run's disk use stays near its live data.
        options += (" -c wal_level=minimal -c max_wal_senders=0"
                    " -c max_wal_size=64MB -c min_wal_size=32MB")
    options += "".join(f" -c {setting}" for setting in settings)
    _run([str(bindir / "pg_ctl"), "-D", str(data_dir), "-o", options,
          "-l", str(base_dir / "server.log"), "-w", "-t", "60", "start"], run_as)
    server = PostgresServer(data_dir=data_dir, port=port, bindir=bindir, run_as=run_as)
    _wait_until_ready(server)
    return server


def _wait_until_ready(server: PostgresServer, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = subprocess.run([str(server.bindir / "pg_isready"), "-h", "127.0.0.1",
                                "-p", str(server.port)], capture_output=True)
        if ready.returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"PostgreSQL on port {server.port} did not become ready")
