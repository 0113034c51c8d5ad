"""Shared fixtures: the throwaway PostgreSQL server, repository paths, a private result cache."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.postgres import PostgresUnavailable, skip_or_fail, throwaway_postgres

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _private_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's CLI runs (in-process or subprocesses) get a fresh cache of their own: none is
    written into the repository, and no test sees another's results."""
    folder = tmp_path_factory.mktemp("dagguard-cache")
    monkeypatch.setenv("DAGGUARD_CACHE_DIR", str(folder))
    monkeypatch.delenv("DAGGUARD_NO_CACHE", raising=False)
    return folder


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


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """A local SparkSession for the whole test session (started on first use only)."""
    from tests.support.spark import spark_session

    yield from spark_session(tmp_path_factory.mktemp("spark-warehouse"))
