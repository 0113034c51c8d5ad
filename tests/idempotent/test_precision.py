"""Timestamp columns that store less than microseconds (DuckDB TIMESTAMP_S / TIMESTAMP_MS,
PostgreSQL timestamp(p) / timestamptz(p) with p < 6): a value finer than the column stores is
refused, never rounded; values the column stores exactly are written as they are."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dagguard.idempotent import IntervalViolationError, write_interval
from tests.idempotent.helpers import DAY1, at, make_database

pa = pytest.importorskip("pyarrow")

# (engine, declared type, the finest step it stores exactly)
COLUMNS = [
    ("duckdb", "TIMESTAMP_S", timedelta(seconds=1)),
    ("duckdb", "TIMESTAMP_MS", timedelta(milliseconds=1)),
    ("postgres", "timestamp(0)", timedelta(seconds=1)),
    ("postgres", "timestamptz(0)", timedelta(seconds=1)),
    ("postgres", "timestamptz(3)", timedelta(milliseconds=1)),
    ("postgres", "timestamp(5)", timedelta(microseconds=10)),
]
IDS = [f"{dialect}-{kind}" for dialect, kind, _ in COLUMNS]


@pytest.fixture(params=COLUMNS, ids=IDS)
def column(request, tmp_path):
    """(database, declared type, step): the database is fresh, with no table yet."""
    dialect, kind, step = request.param
    if dialect == "duckdb":
        pytest.importorskip("duckdb")
    return make_database(dialect, request, tmp_path), kind, step


def _rows(times, arrow: bool, keys=None):
    """(k, ts, v) rows as Arrow, or as Python rows that stay Python (`v` mixes int and str)."""
    keys = keys or [1] * len(times)
    if arrow:
        return pa.table({"k": pa.array(keys, pa.int64()), "ts": pa.array(times, pa.timestamp("us", tz="UTC")),
                         "v": pa.array([f"v{i}" for i in range(len(times))])})
    return [{"k": k, "ts": ts, "v": i if i % 2 else f"v{i}"} for i, (k, ts) in enumerate(zip(keys, times))]


def _write(db, rows, strategy="merge", unique_key=("k", "ts")):
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, DAY1, time_column="ts", strategy=strategy,
                              unique_key=list(unique_key) if strategy == "merge" else None)
    finally:
        conn.close()


@pytest.mark.parametrize("arrow", [True, False], ids=["arrow", "python"])
@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_two_keys_finer_than_the_column_are_refused(column, strategy, arrow):
    db, kind, step = column
    db.create("events", f"k INTEGER, ts {kind}, v TEXT")
    first = at(1, 1)
    _write(db, _rows([first], arrow), strategy)
    before = db.rows()
    # Two keys apart by less than the column's step would be stored as one value twice.
    finer = first + step / 2
    with pytest.raises(IntervalViolationError,
                       match=rf"column 'ts' of the batch for events holds values finer than .*\(row 1: "
                             rf"2026-01-01 01:00:00\.\d+.*\).*nothing was written"):
        _write(db, _rows([first, finer], arrow), strategy)
    assert db.rows() == before


@pytest.mark.parametrize("arrow", [True, False], ids=["arrow", "python"])
def test_a_value_just_before_the_end_is_not_rounded_onto_it(column, arrow):
    db, kind, step = column
    db.create("events", f"k INTEGER, ts {kind}, v TEXT")
    last = DAY1.end - step / 2  # inside the interval; rounded, it would be the next day's midnight
    with pytest.raises(IntervalViolationError, match=r"column 'ts' .*row 0: 2026-01-01 23:59:59\.\d+"):
        _write(db, _rows([last], arrow), "replace")
    assert db.rows() == []


@pytest.mark.parametrize("arrow", [True, False], ids=["arrow", "python"])
def test_a_finer_key_that_is_not_the_time_column_is_refused(column, arrow):
    db, kind, step = column
    db.create("events", f"k INTEGER, ts {{ts}}, seen {kind}, v TEXT")
    seen = [at(1, 2), at(1, 2) + step / 2]
    rows = _rows([at(1, 1), at(1, 1)], arrow)
    if arrow:
        rows = rows.append_column("seen", pa.array(seen, pa.timestamp("us", tz="UTC")))
    else:
        rows = [dict(row, seen=value) for row, value in zip(rows, seen)]
    with pytest.raises(IntervalViolationError, match=r"column 'seen' .*\(row 1: 2026-01-01 02:00:00\.\d+"):
        _write(db, rows, unique_key=("k", "seen"))
    assert db.rows() == []


@pytest.mark.parametrize("arrow", [True, False], ids=["arrow", "python"])
def test_values_the_column_stores_exactly_are_written_as_they_are(column, arrow):
    db, kind, step = column
    db.create("events", f"k INTEGER, ts {kind}, v TEXT")
    times = [at(1, 1), at(1, 1) + step, DAY1.end - step]
    _write(db, _rows(times, arrow, keys=[1, 2, 3]))
    stored = sorted(row[1].replace(tzinfo=None) for row in db.rows())
    assert stored == [t.replace(tzinfo=None) for t in times]
    rerun = _write(db, _rows(times, arrow, keys=[1, 2, 3]))
    assert (rerun.rows_inserted, rerun.rows_updated, rerun.rows_deleted) == (0, 0, 0)
    assert len(db.rows()) == 3


def test_nanoseconds_in_a_millisecond_column_are_refused(tmp_path, request):
    pytest.importorskip("duckdb")
    db = make_database("duckdb", request, tmp_path)
    db.create("events", "k INTEGER, ts TIMESTAMP_MS, v TEXT")
    ns = pa.scalar(at(1, 1), pa.timestamp("us", tz="UTC")).cast(pa.timestamp("ns", tz="UTC")).value
    rows = pa.table({"k": pa.array([1], pa.int64()), "ts": pa.array([ns + 1], pa.timestamp("ns", tz="UTC")),
                     "v": pa.array(["a"])})
    with pytest.raises(IntervalViolationError, match=r"column 'ts' .*01:00:00\.000000001"):
        _write(db, rows, "replace")
    assert db.rows() == []
