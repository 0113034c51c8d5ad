"""The `db` fixture: each behavioural test runs on SQLite, DuckDB and the real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.idempotent.helpers import ENGINES, Database, make_database


# Spark's scenarios start the session's JVM: `-m spark` selects them, `-m "not spark"` skips them.
PARAMS = [pytest.param(engine, marks=pytest.mark.spark) if engine == "spark" else engine for engine in ENGINES]


@pytest.fixture(params=PARAMS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    """A fresh, empty database on each engine in turn."""
    return make_database(request.param, request, tmp_path)
