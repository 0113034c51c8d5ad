"""IntervalMergeOperator on each engine (conn given as a URL) and through Airflow's PostgresHook."""

from __future__ import annotations

import pytest

pytest.importorskip("airflow.sdk")

from dagguard.idempotent import IntervalMergeOperator  # noqa: E402
from tests.idempotent.helpers import DAY1, at  # noqa: E402

SOURCE = ("SELECT k, ts, v FROM raw_events WHERE ts >= %(start)s AND ts < %(end)s")


def _seed(db) -> None:
    db.create("raw_events")
    db.create("events")
    for k, ts, v in ((1, at(1, 1), "a"), (2, at(1, 23, 59, 999999), "b"), (3, at(2, 0), "next day"),
                     (4, at(1, 0) - DAY1.start.resolution, "day before")):
        stored = ts.strftime("%Y-%m-%d %H:%M:%S.%f+00:00") if db.dialect == "sqlite" else ts
        db.run("INSERT INTO raw_events VALUES (?, ?, ?)", (k, stored, v))


def _context():
    return {"data_interval_start": DAY1.start, "data_interval_end": DAY1.end, "run_id": "test"}


def test_operator_copies_the_interval_idempotently(db):
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: source_sql runs in the target database; Iceberg has no SQL engine")
    _seed(db)
    operator = IntervalMergeOperator(task_id="load", conn_id=db.url, source_sql=SOURCE,
                                     target_table="events", time_column="ts", unique_key=["k"])
    first = operator.execute(_context())
    second = operator.execute(_context())
    assert (first["rows_inserted"], second["rows_inserted"], second["rows_updated"]) == (2, 0, 0)
    assert db.rows() == [(1, at(1, 1), "a"), (2, at(1, 23, 59, 999999), "b")]


def test_operator_rerun_of_an_unchanged_interval_replaces_nothing(db):
    """Regression: the operator recorded batch_checksum's sort-based `rows:arrow-` checksum,
    not the fingerprint write_interval records; on DuckDB, whose rerun check compares its own
    fingerprint, an unchanged replace rerun was rewritten every time."""
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: source_sql runs in the target database; Iceberg has no SQL engine")
    _seed(db)
    operator = IntervalMergeOperator(task_id="load", conn_id=db.url, source_sql=SOURCE, strategy="replace",
                                     target_table="events", time_column="ts")
    first = operator.execute(_context())
    second = operator.execute(_context())
    assert (first["rows_inserted"], second["rows_inserted"], second["rows_deleted"]) == (2, 0, 0)
    assert second["checksum"] == first["checksum"] and ":arrow-" not in first["checksum"]
    assert db.rows() == [(1, at(1, 1), "a"), (2, at(1, 23, 59, 999999), "b")]


def test_operator_through_an_airflow_postgres_connection(request, tmp_path, monkeypatch):
    from tests.idempotent.helpers import make_database

    db = make_database("postgres", request, tmp_path)
    _seed(db)
    monkeypatch.setenv("AIRFLOW_CONN_PG_WAREHOUSE", db.url)
    operator = IntervalMergeOperator(task_id="load", conn_id="pg_warehouse", source_sql=SOURCE,
                                     target_table="events", time_column="ts", unique_key=["k"],
                                     delete_missing=True)
    result = operator.execute(_context())
    assert result["engine"].startswith("postgres 15")
    assert db.rows() == [(1, at(1, 1), "a"), (2, at(1, 23, 59, 999999), "b")]


def test_operator_rejects_a_bad_target_at_parse_time():
    from dagguard.idempotent import InvalidIdentifierError

    with pytest.raises(InvalidIdentifierError):
        IntervalMergeOperator(task_id="load", conn_id="w", source_sql=SOURCE,
                              target_table="events; DROP TABLE x", time_column="ts", unique_key=["k"])


def test_operator_with_lookback_reads_and_writes_the_widened_interval(db):
    from dagguard.idempotent import InvalidArgumentError, read_ledger

    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: source_sql runs in the target database; Iceberg has no SQL engine")
    _seed(db)
    operator = IntervalMergeOperator(task_id="load", conn_id=db.url, source_sql=SOURCE, lookback=1,
                                     target_table="events", time_column="ts", unique_key=["k"])
    context = {"data_interval_start": at(2), "data_interval_end": at(3), "run_id": "test"}
    first = operator.execute(context)
    second = operator.execute(context)
    assert (first["interval_start"], first["interval_end"]) == (at(1).isoformat(), at(3).isoformat())
    assert (first["rows_inserted"], second["rows_inserted"], second["rows_updated"]) == (3, 0, 0)
    assert db.rows() == [(1, at(1, 1), "a"), (2, at(1, 23, 59, 999999), "b"), (3, at(2, 0), "next day")]
    entry = read_ledger(db.url, "events").entries[-1]
    assert (entry.interval_start[:10], entry.interval_end[:10]) == ("2026-01-01", "2026-01-03")
    with pytest.raises(InvalidArgumentError, match="owns exactly one partition"):
        IntervalMergeOperator(task_id="load2", conn_id=db.url, source_sql=SOURCE, lookback=1,
                              target_table="events", time_column="ts", strategy="overwrite_partition")
