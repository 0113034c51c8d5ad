"""DuckDB's ledger checksum of an Arrow batch is its own fingerprint of the batch: it must be the
fingerprint of the rows the write stored (what a rerun compares), and a write the database
refuses records nothing."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from dagguard.idempotent import Interval, write_interval
from dagguard.idempotent.api import read_ledger
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.errors import IdempotentWriteError
from dagguard.idempotent.write import _checksum_of
from tests.idempotent.helpers import DAY1, at, duckdb_database

pa = pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

COLUMNS = "k BIGINT, ts TIMESTAMPTZ, ds DATE, v VARCHAR, amount DOUBLE CHECK (amount < 1000)"


def _rows(count, amount=1.5):
    return pa.table({"k": pa.array(range(count), pa.int64()),
                     "ts": pa.array([at(1, i % 24, i % 60) for i in range(count)], pa.timestamp("us", tz="UTC")),
                     "ds": pa.array([date(2026, 1, 1)] * count, pa.date32()),
                     "v": pa.array([f"v{i % 7}" for i in range(count)]),
                     "amount": pa.array([amount + i for i in range(count)], pa.float64())})


def _write(db, rows, strategy):
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, DAY1, time_column="ts", strategy=strategy,
                              unique_key=["k"] if strategy == "merge" else None)
    finally:
        conn.close()


def _stored_fingerprint(db):
    """The checksum of the interval's stored rows, as a rerun computes it for the target."""
    conn = db.connect()
    try:
        engine = engine_for(conn)
        return _checksum_of(engine, engine.fingerprint("events", ("amount", "ds", "k", "ts", "v"), "1 = 1", ()))
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path):
    database = duckdb_database(tmp_path)
    database.create("events", COLUMNS)
    return database


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_a_first_write_records_the_fingerprint_its_rerun_compares(db, strategy):
    first = _write(db, _rows(500), strategy)
    assert first.rows_inserted == 500 and "rh-" in first.checksum
    assert first.checksum == _stored_fingerprint(db)
    assert read_ledger(db.url).entries[-1].checksum == first.checksum
    again = _write(db, _rows(500), strategy)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)
    assert again.checksum == first.checksum


@pytest.mark.parametrize("strategy", ["replace", "overwrite_partition"])
def test_a_batch_of_another_row_count_is_written_and_then_recognised(db, strategy):
    _write(db, _rows(500), strategy)
    fewer = _write(db, _rows(499, amount=2.5), strategy)
    assert (fewer.rows_inserted, fewer.rows_deleted) == (499, 500)
    assert fewer.checksum == _stored_fingerprint(db) and fewer.checksum.startswith("499:")
    assert db.rows("events", "min(amount), count(*)") == [(2.5, 499)]
    again = _write(db, _rows(499, amount=2.5), strategy)
    assert (again.rows_inserted, again.rows_deleted) == (0, 0)


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_a_first_write_the_database_refuses_writes_and_records_nothing(db, strategy):
    with pytest.raises(IdempotentWriteError, match="(?i)check"):
        _write(db, _rows(2000), strategy)  # amounts reach 2001.5: the CHECK refuses the insert
    assert db.rows("events", "count(*)") == [(0,)]
    assert db.rows("duckdb_tables()", "count(*) FILTER (table_name = 'dagguard_write_log')") == [(0,)]
    written = _write(db, _rows(500), strategy)  # the database and the interval are still usable
    assert written.rows_inserted == 500 and written.checksum == _stored_fingerprint(db)


def test_a_write_through_a_caller_interval_keeps_the_interval_bounds(db):
    """A rewrite deletes exactly the interval's rows: a row of the day before stays."""
    _write(db, _rows(3), "replace")
    conn = db.connect()
    try:
        day0 = Interval(datetime(2025, 12, 31, tzinfo=timezone.utc), at(1, 0))
        write_interval(conn, "events", pa.table({
            "k": pa.array([99], pa.int64()), "ts": pa.array([datetime(2025, 12, 31, 5, tzinfo=timezone.utc)], pa.timestamp("us", tz="UTC")),
            "ds": pa.array([date(2025, 12, 31)], pa.date32()), "v": pa.array(["old"]),
            "amount": pa.array([1.0])}), day0, time_column="ts")
    finally:
        conn.close()
    _write(db, _rows(4, amount=7.0), "replace")
    assert db.rows("events", "k, amount") == [(0, 7.0), (1, 8.0), (2, 9.0), (3, 10.0), (99, 1.0)]
