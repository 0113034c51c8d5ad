"""The test cluster must not outlive its tests: leaked clusters once filled CI's disk."""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from tests.support.postgres import (PostgresUnavailable, find_bindir, skip_or_fail, start_postgres,
                                     throwaway_postgres)

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _needs_server_binaries():
    try:
        find_bindir()
    except PostgresUnavailable as exc:
        skip_or_fail(exc)


def accepts_connections(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def database_names(server) -> set[str]:
    import psycopg

    with psycopg.connect(server.dsn) as conn:
        return {name for (name,) in conn.execute("SELECT datname FROM pg_database")}


def test_cluster_is_stopped_and_deleted_on_exit():
    with throwaway_postgres() as server:
        base = server.data_dir.parent
        assert accepts_connections(server.port)
        assert (server.data_dir / "PG_VERSION").exists()
    assert not base.exists()
    assert not accepts_connections(server.port)


def test_cluster_is_deleted_when_the_block_raises():
    with pytest.raises(ZeroDivisionError), throwaway_postgres() as server:
        base = server.data_dir.parent
        1 / 0
    assert not base.exists()
    assert not accepts_connections(server.port)


def test_drop_database_closes_open_connections():
    import psycopg

    with throwaway_postgres() as server:
        dsn = server.create_database("scratch")
        held = psycopg.connect(dsn)  # a test that forgot to close its connection
        held.execute("CREATE TABLE t (x int)")
        held.commit()
        server.drop_database("scratch")
        assert "scratch" not in database_names(server)
        server.drop_database("scratch")  # already gone: not an error
        held.close()


def test_wal_is_capped_for_tests():
    import psycopg

    with throwaway_postgres() as server, psycopg.connect(server.dsn) as conn:
        settings = dict(conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('max_wal_size', 'wal_level')"))
    assert settings == {"max_wal_size": "64", "wal_level": "minimal"}


def test_extra_settings_reach_the_server():
    import psycopg

    with throwaway_postgres(settings=("work_mem=7MB", "shared_buffers=32MB")) as server, \
            psycopg.connect(server.dsn) as conn:
        settings = dict(conn.execute(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('work_mem', 'shared_buffers')"))
    assert settings == {"work_mem": "7MB", "shared_buffers": "32MB"}


@pytest.mark.parametrize("setting", ["work_mem", "work_mem=1 MB", "work_mem='1MB'", "-c x=1", ""])
def test_a_malformed_setting_is_refused_before_a_cluster_exists(setting, tmp_path):
    with pytest.raises(ValueError, match="not a server setting"):
        start_postgres(tmp_path / "pg", settings=(setting,))
    assert not (tmp_path / "pg").exists()


def test_a_cluster_starts_in_a_directory_too_deep_for_a_unix_socket():
    # pytest-xdist's tmp_path plus the benchmark's work dir once made the socket path longer
    # than the 107 bytes a Unix socket allows, and the server refused to start.
    base = Path(tempfile.mkdtemp(prefix="dagguard-pg-"))
    try:
        server = start_postgres(base / ("deep-" * 20) / "pg")
        try:
            assert len(str(server.data_dir / ".s.PGSQL.00000")) > 107
            assert accepts_connections(server.port)
        finally:
            server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)
