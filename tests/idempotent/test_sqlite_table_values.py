"""What SQLite tables already hold and dagguard did not write: columns named like SQLite's
implicit row id."""

from __future__ import annotations

import sqlite3

import pytest

from dagguard.idempotent import Interval, write_interval
from tests.idempotent.helpers import at

DAY4 = Interval(at(4), at(5))


@pytest.mark.parametrize("name", ["rowid", "oid", "_rowid_", "ROWID", "dg_row"])
@pytest.mark.parametrize("arrow", [False, True])
def test_merge_keeps_new_rows_when_the_table_has_a_column_named_like_the_row_id(name, arrow):
    """Regression: the staging anti-join selected `rowid`, which a column of that name hides:
    new rows whose `rowid` value equals a matched row's (or is NULL) were silently dropped."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f'CREATE TABLE events (k INTEGER, ts TEXT, "{name}" INTEGER, v TEXT)')
    conn.execute("CREATE UNIQUE INDEX events_k ON events (k)")
    old = [{"k": 1, "ts": at(4, 1), name: 5, "v": "a"}, {"k": 2, "ts": at(4, 2), name: None, "v": "b"}]
    write_interval(conn, "events", old, DAY4, time_column="ts", unique_key="k", strategy="merge")
    batch = [{"k": 1, "ts": at(4, 1), name: 5, "v": "changed"}, {"k": 2, "ts": at(4, 2), name: None, "v": "b"},
             {"k": 3, "ts": at(4, 3), name: 5, "v": "new"}, {"k": 4, "ts": at(4, 4), name: None, "v": "new"}]
    if arrow:
        import pyarrow as pa

        batch = pa.Table.from_pylist(batch, pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")),
                                                       (name, pa.int64()), ("v", pa.string())]))
    result = write_interval(conn, "events", batch, DAY4, time_column="ts", unique_key="k", strategy="merge",
                            delete_missing=True)
    assert conn.execute(f'SELECT k, "{name}", v FROM events ORDER BY k').fetchall() == [
        (1, 5, "changed"), (2, None, "b"), (3, 5, "new"), (4, None, "new")]
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (2, 1, 0)
