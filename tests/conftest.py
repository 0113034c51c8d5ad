"""Shared fixtures: the throwaway PostgreSQL server and repository paths."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.postgres import PostgresUnavailable, skip_or_fail, throwaway_postgres

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for the whole test session, stopped and deleted at the end.

    Skips locally when no server binaries exist; in CI (CI=true) that is a failure.
    """
    with ExitStack() as stack:
        try:
            server = stack.enter_context(throwaway_postgres())
        except PostgresUnavailable as exc:
            skip_or_fail(exc)
        yield server
