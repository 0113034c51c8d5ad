"""SQLite's one-pass merge (INSERT ... ON CONFLICT DO UPDATE from the batch, where the target has
a unique index on the key): the same rows, counts and refusals as the general merge."""

from __future__ import annotations

import sqlite3

import pytest

from dagguard.idempotent import DatabaseRefusedError, IntervalViolationError, write_interval
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch
from tests.idempotent.helpers import DAY1, DAY2, at, events

FIRST = events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 3), "c"))
# 1 unchanged, 2 changed, 4 new; 3 is left alone (no delete_missing).
SECOND = events((1, at(1, 1), "a"), (2, at(1, 2), "B"), (4, at(1, 4), "d"))
EXPECTED = [(1, "2026-01-01 01:00:00.000000+00:00", "a"), (2, "2026-01-01 02:00:00.000000+00:00", "B"),
            (3, "2026-01-01 03:00:00.000000+00:00", "c"), (4, "2026-01-01 04:00:00.000000+00:00", "d"),
            (9, "2026-01-02 01:00:00.000000+00:00", "other day")]
KEYED = {"unique index": ("k INTEGER NOT NULL, ts TEXT, v TEXT", "CREATE UNIQUE INDEX events_k ON events (k)"),
         "integer primary key": ("k INTEGER PRIMARY KEY, ts TEXT, v TEXT", None),
         "plain index": ("k INTEGER, ts TEXT, v TEXT", "CREATE INDEX events_k ON events (k)")}


def _table(tmp_path, kind: str) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / f"{kind.replace(' ', '_')}.db")
    columns, index = KEYED[kind]
    conn.execute(f"CREATE TABLE events ({columns})")
    if index:
        conn.execute(index)
    conn.commit()
    write_interval(conn, "events", events((9, at(2, 1), "other day")), DAY2, time_column="ts")
    return conn


def _merge(conn, rows, observed=None) -> object:
    spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")
    batch = prepare_batch(spec, rows, None, DAY1)
    return write_batch(engine_for(conn), spec, batch, DAY1, None, RunInfo(),
                       (lambda number, sql: observed.append(sql)) if observed is not None else None)


@pytest.mark.parametrize("kind", list(KEYED))
def test_same_rows_and_counts_as_the_general_merge(tmp_path, kind):
    conn = _table(tmp_path, kind)
    _merge(conn, FIRST)
    observed: list[str] = []
    result = _merge(conn, SECOND, observed)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 0)
    assert conn.execute("SELECT k, ts, v FROM events ORDER BY k").fetchall() == EXPECTED
    upserted = any("ON CONFLICT" in sql for sql in observed)
    assert upserted == (kind != "plain index"), observed


@pytest.mark.parametrize("kind", ["unique index", "integer primary key"])
def test_a_key_held_by_another_interval_is_refused_and_nothing_changes(tmp_path, kind):
    conn = _table(tmp_path, kind)
    _merge(conn, FIRST)
    before = conn.execute("SELECT k, ts, v FROM events ORDER BY k").fetchall()
    # Key 9 belongs to a row of 2026-01-02: the general merge's INSERT breaks the unique index.
    with pytest.raises(DatabaseRefusedError, match="outside the interval holds the key"):
        _merge(conn, events((2, at(1, 2), "changed"), (9, at(1, 9), "clash")))
    assert conn.execute("SELECT k, ts, v FROM events ORDER BY k").fetchall() == before


def test_a_null_key_takes_the_general_merge(tmp_path):
    # A unique index keeps NULLs apart; the merge matches NULL to NULL, so it is not an upsert.
    conn = sqlite3.connect(tmp_path / "nulls.db")
    conn.execute("CREATE TABLE events (k INTEGER, ts TEXT, v TEXT)")
    conn.execute("CREATE UNIQUE INDEX events_k ON events (k)")
    conn.commit()
    _merge(conn, events((None, at(1, 1), "a"), (2, at(1, 2), "b")))
    observed: list[str] = []
    result = _merge(conn, events((None, at(1, 1), "A"), (2, at(1, 2), "b")), observed)
    assert not any("ON CONFLICT" in sql for sql in observed)
    assert (result.rows_inserted, result.rows_updated) == (0, 1)
    assert conn.execute("SELECT k, v FROM events ORDER BY k").fetchall() == [(None, "A"), (2, "b")]


def test_rows_stored_in_other_time_forms_are_matched_by_their_instant(tmp_path):
    # The DO UPDATE's interval test is the exact one where the stored times are not all in
    # dagguard's form: key 1's row (in the interval, written as ISO with a Z) is updated; key 9's
    # (2026-01-01 20:00-05:00 is 2026-01-02 01:00 UTC, outside it) refuses the write.
    conn = sqlite3.connect(tmp_path / "forms.db")
    conn.execute("CREATE TABLE events (k INTEGER PRIMARY KEY, ts TEXT, v TEXT)")
    conn.executemany("INSERT INTO events VALUES (?, ?, ?)",
                     [(1, "2026-01-01T05:00Z", "a"), (9, "2026-01-01 20:00:00-05:00", "other day")])
    conn.commit()
    result = _merge(conn, events((1, at(1, 5), "A"), (2, at(1, 6), "b")))
    assert (result.rows_inserted, result.rows_updated) == (1, 1)
    assert conn.execute("SELECT k, v FROM events ORDER BY k").fetchall() == [(1, "A"), (2, "b"), (9, "other day")]
    with pytest.raises(DatabaseRefusedError):
        _merge(conn, events((9, at(1, 7), "clash")))
    assert conn.execute("SELECT k, ts, v FROM events WHERE k = 9").fetchall() == [
        (9, "2026-01-01 20:00:00-05:00", "other day")]


def test_rows_outside_the_interval_are_still_refused_before_anything_is_written(tmp_path):
    conn = _table(tmp_path, "unique index")
    _merge(conn, FIRST)
    with pytest.raises(IntervalViolationError):
        _merge(conn, events((1, at(1, 1), "A"), (5, at(2, 5), "next day")))
    assert conn.execute("SELECT v FROM events WHERE k = 1").fetchall() == [("a",)]


def test_arrow_batch_merges_the_same_way(tmp_path):
    pa = pytest.importorskip("pyarrow")
    conn = _table(tmp_path, "unique index")
    _merge(conn, pa.Table.from_pylist(FIRST))
    observed: list[str] = []
    result = _merge(conn, pa.Table.from_pylist(SECOND), observed)
    assert any("ON CONFLICT" in sql for sql in observed)
    assert (result.rows_inserted, result.rows_updated) == (1, 1)
    assert conn.execute("SELECT k, ts, v FROM events ORDER BY k").fetchall() == EXPECTED


def test_the_interval_bounds_are_written_into_the_upsert_once_not_bound_per_row(tmp_path):
    """Each row binds only its own values: the interval's text bounds are literals of the SQL."""
    conn = _table(tmp_path, "unique index")
    _merge(conn, FIRST)
    observed: list[str] = []
    _merge(conn, SECOND, observed)
    upsert = next(sql for sql in observed if "ON CONFLICT" in sql)
    assert upsert.count("?") == 3 and "'2026-01-01 00:00:00.000000+00:00'" in upsert



def test_rows_converted_beside_a_refused_merge_are_dropped_and_never_bound_later(tmp_path):
    """An Arrow batch's values are converted on a thread while SQLite surveys the interval; a
    merge the survey refuses keeps none of them, and the next write binds its own rows."""
    pa = pytest.importorskip("pyarrow")
    conn = _table(tmp_path, "unique index")
    engine = engine_for(conn)
    spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")

    def merge(rows):
        return write_batch(engine, spec, prepare_batch(spec, pa.Table.from_pylist(rows), None, DAY1), DAY1,
                           None, RunInfo(), None)

    merge(FIRST)
    conn.execute("INSERT INTO events VALUES (7, '2026-01-01 25:00', 'unreadable')")
    conn.commit()
    with pytest.raises(IntervalViolationError, match="cannot be read as a time"):
        merge(SECOND)
    assert engine._prepared is None
    conn.execute("DELETE FROM events WHERE k = 7")
    conn.commit()
    result = merge(SECOND)
    assert (result.rows_inserted, result.rows_updated) == (1, 1)
    assert conn.execute("SELECT k, ts, v FROM events ORDER BY k").fetchall() == EXPECTED
