"""Nanosecond timestamps: kept where the column stores them (DuckDB TIMESTAMP_NS,
TIMESTAMPTZ_NS), refused where it holds microseconds, unless every value is a whole microsecond."""

from __future__ import annotations

import pytest

from dagguard.idempotent import IntervalViolationError, write_interval
from dagguard.idempotent.arrow.batch import from_arrow
from dagguard.idempotent.checksum import batch_checksum
from tests.idempotent.helpers import DAY1, at, duckdb_database

pa = pytest.importorskip("pyarrow")

NS = pa.timestamp("ns", tz="UTC")
ONE_AM = pa.scalar(at(1, 1), pa.timestamp("us", tz="UTC")).cast(NS).value  # in ns since the epoch


@pytest.fixture
def duckdb_db(tmp_path):
    pytest.importorskip("duckdb")
    return duckdb_database(tmp_path)


def _times(*offsets_ns: int, kind=NS):
    return pa.array([ONE_AM + n for n in offsets_ns], kind)


def _table(keys, times, values=None):
    return pa.table({"k": pa.array(keys, pa.int64()), "ts": times,
                     "v": pa.array(values or [f"v{i}" for i in range(len(keys))])})


def _write(db, rows, strategy="merge", unique_key=("k", "ts"), table="events"):
    conn = db.connect()
    try:
        return write_interval(conn, table, rows, DAY1, time_column="ts", strategy=strategy,
                              unique_key=list(unique_key) if strategy == "merge" else None)
    finally:
        conn.close()


def _stored_ns(db, column="ts", table="events"):
    """The DuckDB column's values in nanoseconds since the epoch, exactly as stored."""
    conn = db.connect()
    try:
        return sorted(n for (n,) in conn.execute(f"SELECT epoch_ns({column}) FROM {table}").fetchall())
    finally:
        conn.close()


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_keys_1ns_apart_are_refused_by_a_microsecond_column(db, strategy):
    db.create()
    _write(db, _table([1], _times(0)), strategy)
    before = db.rows()
    with pytest.raises(IntervalViolationError,
                       match=r"column 'ts' of the batch for events holds nanoseconds \(row 1: 2026-01-01 "
                             r"01:00:00\.000000001Z\).*nothing was written"):
        _write(db, _table([1, 1], _times(0, 1)), strategy)
    assert db.rows() == before


def test_a_nanosecond_key_that_is_not_the_time_column_is_refused(db):
    db.create("events", "k INTEGER, ts {ts}, seen {ts}, v TEXT")
    table = _table([1, 1], _times(0, 0)).append_column("seen", _times(5, 6))
    with pytest.raises(IntervalViolationError, match=r"column 'seen' .* \(row 0: 2026-01-01 01:00:00\.000000005Z\)"):
        _write(db, table, unique_key=("k", "seen"))
    assert db.rows() == []


def test_whole_microseconds_in_nanoseconds_are_written_exactly(db):
    db.create()
    _write(db, _table([1, 2], _times(0, 1000)))
    assert [r[1] for r in db.rows()] == [at(1, 1), at(1, 1, micro=1)]
    rerun = _write(db, _table([1, 2], _times(0, 1000)))
    assert (rerun.rows_inserted, rerun.rows_updated, rerun.rows_deleted) == (0, 0, 0)


@pytest.mark.parametrize("kind", ["TIMESTAMP_NS", "TIMESTAMPTZ_NS"])
@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_duckdb_nanosecond_columns_keep_keys_1ns_apart(duckdb_db, kind, strategy):
    duckdb_db.create("events", f"k INTEGER, ts {kind}, v TEXT")
    batch = _table([1, 1], _times(0, 1))
    _write(duckdb_db, batch, strategy)
    assert _stored_ns(duckdb_db) == [ONE_AM, ONE_AM + 1]
    rerun = _write(duckdb_db, batch, strategy)
    assert _stored_ns(duckdb_db) == [ONE_AM, ONE_AM + 1]
    if strategy == "merge":
        assert (rerun.rows_inserted, rerun.rows_updated) == (0, 0)
        changed = _write(duckdb_db, _table([1, 1], _times(0, 1), ["a", "new"]), strategy)
        assert (changed.rows_inserted, changed.rows_updated) == (0, 2)
        assert len(duckdb_db.rows()) == 2


def test_duckdb_keeps_nanoseconds_of_a_key_that_is_not_the_time_column(duckdb_db):
    duckdb_db.create("events", "k INTEGER, ts TIMESTAMPTZ, seen TIMESTAMPTZ_NS, v TEXT")
    table = _table([1, 1], _times(0, 0)).append_column("seen", _times(5, 6))
    _write(duckdb_db, table, unique_key=("k", "seen"))
    _write(duckdb_db, table, unique_key=("k", "seen"))
    assert _stored_ns(duckdb_db, "seen") == [ONE_AM + 5, ONE_AM + 6]


def test_a_nanosecond_just_before_the_end_is_inside_the_interval(duckdb_db):
    duckdb_db.create("events", "k INTEGER, ts TIMESTAMPTZ_NS, v TEXT")
    end = pa.scalar(DAY1.end, pa.timestamp("us", tz="UTC")).cast(NS).value
    _write(duckdb_db, _table([1], pa.array([end - 1], NS)))
    assert _stored_ns(duckdb_db) == [end - 1]
    with pytest.raises(IntervalViolationError, match="outside the interval"):
        _write(duckdb_db, _table([2], pa.array([end], NS)))


def test_checksums_tell_values_1ns_apart_apart():
    first = batch_checksum(from_arrow(_table([1], _times(1))))
    assert first != batch_checksum(from_arrow(_table([1], _times(2))))
    assert batch_checksum(from_arrow(_table([1], _times(1000)))) == batch_checksum(
        from_arrow(_table([1], _times(1000).cast(pa.timestamp("us", tz="UTC")))))


def _timestamp_rows():
    pd = pytest.importorskip("pandas")
    first = pd.Timestamp(at(1, 1))
    return [{"k": 1, "ts": first, "v": "a"}, {"k": 1, "ts": first + pd.Timedelta(nanoseconds=1), "v": "b"}]


def test_pandas_timestamps_in_python_rows_keep_their_nanoseconds(db):
    db.create()
    with pytest.raises(IntervalViolationError, match=r"column 'ts' .*\(row 1: 2026-01-01 01:00:00\.000000001Z\)"):
        _write(db, _timestamp_rows())
    assert db.rows() == []


def test_pandas_timestamps_in_python_rows_are_kept_by_duckdb_nanosecond_columns(duckdb_db):
    duckdb_db.create("events", "k INTEGER, ts TIMESTAMPTZ_NS, v TEXT")
    _write(duckdb_db, _timestamp_rows())
    assert _stored_ns(duckdb_db) == [ONE_AM, ONE_AM + 1]


def test_nanoseconds_survive_the_row_checks_of_a_timestamp_partition_column(duckdb_db):
    # A timestamp `ds` is checked row by row: the batch must still keep its nanoseconds.
    duckdb_db.create("events", "k INTEGER, seen TIMESTAMPTZ_NS, ds DATE")
    table = pa.table({"k": pa.array([1, 2], pa.int64()), "seen": _times(5, 6),
                      "ds": pa.array([at(1, 3)] * 2, pa.timestamp("us", tz="UTC"))})
    conn = duckdb_db.connect()
    try:
        write_interval(conn, "events", table, DAY1, strategy="overwrite_partition")
    finally:
        conn.close()
    assert _stored_ns(duckdb_db, "seen") == [ONE_AM + 5, ONE_AM + 6]
    assert {r[2] for r in duckdb_db.rows()} == {DAY1.partition_key}
