"""Shared fixtures: the throwaway PostgreSQL server and repository paths."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.support.postgres import PostgresUnavailable, start_postgres

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for the whole test session, stopped at the end.

    Skips locally when no server binaries exist; in CI (CI=true) that is a failure.
    """
    base = Path(tempfile.mkdtemp(prefix="dagguard-pg-"))
    try:
        server = start_postgres(base)
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI: {exc}")
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()
