"""The `db` fixture: each behavioural test runs on SQLite, DuckDB and the real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.idempotent.helpers import ENGINES, Database, make_database


# Spark's scenarios start the session's JVM: `-m spark` selects them, `-m "not spark"` skips them.
PARAMS = [pytest.param(engine, marks=pytest.mark.spark) if engine == "spark" else engine for engine in ENGINES]


# Scenarios whose subject a Spark table does not have, by module, and why (each has its Spark
# counterpart named, or the README's Apache Spark section says it).
SPARK_DOES_NOT_APPLY = {
    "test_caller_transaction": "a Spark write runs in no transaction a caller could hold open",
    "test_concurrency": "threads sharing one SQL connection; Spark's writers take turns on a lock "
                        "(test_spark_concurrency.py)",
    "test_crash": "failures injected between a SQL transaction's statements; a Spark writer killed "
                  "mid-write is test_spark_crash.py",
    "test_engine_versions": "SQL engine versions and the statements each gets; Spark has one plan",
    "test_ledger": "`dagguard ledger` reaches a database by URL, and a SparkSession has none "
                   "(read_ledger(spark) is test_spark.py)",
    "test_ledger_gaps": "`dagguard ledger --gaps` reaches a database by URL, and a SparkSession has none",
}


@pytest.fixture(params=PARAMS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    """A fresh, empty database on each engine in turn."""
    module = request.module.__name__.rpartition(".")[2]
    if request.param == "spark" and module in SPARK_DOES_NOT_APPLY:
        pytest.skip(f"Spark: {SPARK_DOES_NOT_APPLY[module]}")
    return make_database(request.param, request, tmp_path)
