"""pandas DataFrames: read whole by pyarrow where it can, value by value where it cannot; the
same rows in the table either way."""

from __future__ import annotations

from datetime import date, timedelta, timezone

import pytest

from dagguard.idempotent import IntervalViolationError, write_interval
from dagguard.idempotent.arrow.batch import ArrowBatch
from dagguard.idempotent.batch import Batch, to_batch
from tests.idempotent.helpers import DAY1, at, duckdb_database

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

COLUMNS = "k INTEGER, ts {ts}, ds {ds}, v TEXT, amount {float}, flag {flag}"
TYPES = {"sqlite": ("TEXT", "REAL", "INTEGER"), "duckdb": ("DATE", "DOUBLE", "BOOLEAN"),
         "postgres": ("date", "double precision", "boolean"), "delta": ("DATE", "DOUBLE", "BOOLEAN"),
         "iceberg": ("DATE", "DOUBLE", "BOOLEAN"), "spark": ("DATE", "DOUBLE", "BOOLEAN")}


def _create(db, table="events"):
    ds, kind, flag = TYPES[db.dialect]
    db.create(table, COLUMNS.format(ts=db.ts, ds=ds, float=kind, flag=flag))
    return table


def _dicts(n=300):
    return [{"k": i, "ts": at(1) + timedelta(seconds=97 * i), "ds": date(2026, 1, 1),
             "v": None if i % 5 == 0 else f"v,{i}\n\"", "amount": None if i % 7 == 0 else i / 4,
             "flag": i % 2 == 0} for i in range(n)]


def _frame(rows):
    frame = pd.DataFrame(rows)
    # What pandas makes of such rows: NaN for missing floats, datetime64 in UTC.
    frame["amount"] = frame["amount"].astype("float64")
    frame["ts"] = pd.to_datetime(frame["ts"], utc=True)
    return frame


def _write(db, rows, table="events", strategy="replace"):
    conn = db.connect()
    try:
        return write_interval(conn, table, rows, DAY1, time_column="ts", strategy=strategy,
                              unique_key=["k"] if strategy == "merge" else None)
    finally:
        conn.close()


def test_a_plain_frame_is_read_whole_by_pyarrow():
    batch = to_batch(_frame(_dicts(10)))
    assert isinstance(batch, ArrowBatch)
    assert batch.columns == ("k", "ts", "ds", "v", "amount", "flag")
    assert "rows" not in vars(batch)  # no Python rows were built
    assert batch.column("amount").null_count == 2  # NaN became NULL, as on the row path


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_a_frame_writes_what_its_dicts_write(db, strategy):
    rows = _dicts()
    _write(db, rows, _create(db, "from_dicts"), strategy)
    _write(db, _frame(rows), _create(db, "from_frame"), strategy)
    assert db.rows("from_frame") == db.rows("from_dicts")
    assert len(db.rows("from_frame")) == 300


def _nanoseconds(frame, ns=789):
    frame["ts"] = frame["ts"].astype("datetime64[ns, UTC]") + pd.Timedelta(nanoseconds=ns)
    return frame


def test_nanoseconds_a_microsecond_column_would_drop_are_refused(db):
    _create(db)
    with pytest.raises(IntervalViolationError, match=r"column 'ts' .*holds nanoseconds \(row 0: 2026-01-01 "
                                                     r"00:00:00\.000000789Z\)"):
        _write(db, _nanoseconds(_frame(_dicts(3))))
    assert db.rows() == []
    _write(db, _nanoseconds(_frame(_dicts(3)), 1000))  # whole microseconds convert exactly
    assert [r[1] for r in db.rows("events", "k, ts")] == [r["ts"] + timedelta(microseconds=1) for r in _dicts(3)]


def test_nanoseconds_of_a_frame_are_kept_by_a_duckdb_nanosecond_column(tmp_path):
    pytest.importorskip("duckdb")
    db = duckdb_database(tmp_path)
    db.create("events", "k INTEGER, ts TIMESTAMPTZ_NS, ds DATE, v TEXT, amount DOUBLE, flag BOOLEAN")
    _write(db, _nanoseconds(_frame(_dicts(3))))
    conn = db.connect()
    stored = sorted(n for (n,) in conn.execute("SELECT epoch_ns(ts) FROM events").fetchall())
    conn.close()
    assert stored == [int(r["ts"].timestamp()) * 10**9 + 789 for r in _dicts(3)]


def test_nanoseconds_of_a_frame_written_row_by_row_are_refused(db):
    _create(db)
    frame = _nanoseconds(_frame(_dicts(3)))
    frame["v"] = frame["v"].astype("category")  # no plain Arrow type: the row path
    with pytest.raises(IntervalViolationError, match=r"column 'ts' holds nanoseconds .*000789"):
        _write(db, frame)
    assert db.rows() == []


def test_a_frame_in_another_zone_is_stored_as_the_same_instants(db):
    _create(db)
    frame = _frame(_dicts(4))
    frame["ts"] = frame["ts"].dt.tz_convert("America/New_York")
    _write(db, frame)
    assert [r[1].astimezone(timezone.utc) for r in db.rows("events", "k, ts")] == [r["ts"] for r in _dicts(4)]


def test_a_categorical_column_takes_the_row_path_and_writes_its_values(db):
    _create(db)
    frame = _frame(_dicts(6))
    frame["v"] = frame["v"].astype("category")
    assert isinstance(to_batch(frame), Batch)
    _write(db, frame)
    assert [v for (v,) in db.rows("events", "v")] == sorted(
        (r["v"] for r in _dicts(6)), key=lambda v: (v is None, str(v)))


def test_the_index_is_not_a_column(db):
    _create(db)
    frame = _frame(_dicts(3)).set_index("v", drop=False)
    frame.index.name = "not_a_column"
    _write(db, frame)
    assert len(db.rows()) == 3


def test_a_row_outside_the_interval_names_it_and_writes_nothing(db):
    _create(db)
    _write(db, _frame(_dicts(3)))
    before = db.rows()
    late = _dicts(3)
    late[1]["ts"] = at(2, 5)
    with pytest.raises(IntervalViolationError, match="outside the interval"):
        _write(db, _frame(late))
    assert db.rows() == before
