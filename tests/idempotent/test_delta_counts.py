"""The counts a Delta write reports, on real delta-rs: the rows a replace or overwrite_partition
took away, read from the files' statistics (or counted where a file has none), and a merge's
inserted and updated rows, whichever way its batch's rows are matched with the interval's."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from dagguard.idempotent import write_interval  # noqa: E402
from dagguard.idempotent.engines import delta_write  # noqa: E402
from tests.idempotent.helpers import DAY1, DAY2, at  # noqa: E402

SCHEMA = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("v", pa.string())])


def _table(rows: list[tuple[int, int, str]], schema: pa.Schema = SCHEMA) -> pa.Table:
    """(key, day, value) rows, the time at hour key % 24 of the day."""
    return pa.table({"k": pa.array([k for k, _, _ in rows], pa.int64()),
                     "ts": pa.array([at(day, k % 24) for k, day, _ in rows], pa.timestamp("us", tz="UTC")),
                     schema.names[2]: pa.array([v for _, _, v in rows], schema.field(2).type)}, schema=schema)


def _rows(path: Path) -> list[tuple]:
    return sorted(tuple(r.values()) for r in deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist())


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A lake whose `events` table holds day 1's rows in three files, two of them shared with
    day 2's rows, written outside dagguard."""
    uri = str(tmp_path / "events")
    deltalake.DeltaTable.create(uri, schema=SCHEMA)
    for rows in ([(1, 1, "a"), (2, 1, "b"), (3, 1, "c"), (4, 2, "d")], [(5, 2, "e"), (6, 1, "f")],
                 [(7, 1, "g"), (8, 1, "h")], [(9, 2, "i")]):
        deltalake.write_deltalake(uri, _table(rows), mode="append")
    return tmp_path


@pytest.mark.parametrize("statistics", [True, False])
def test_a_replace_reports_exactly_the_rows_it_took_away(mixed, monkeypatch, statistics):
    if statistics:
        monkeypatch.setattr(delta_write, "count_rows", lambda *args: pytest.fail("the rows were counted by a query"))
    else:  # a table whose files carry no numRecords: the scope is counted before the commit
        monkeypatch.setattr(delta_write, "stored_rows", lambda table: None)
    result = write_interval(f"delta://{mixed}", "events", _table([(1, 1, "A"), (10, 1, "J")]), DAY1, time_column="ts")
    assert (result.rows_inserted, result.rows_deleted) == (2, 6)
    assert [(r[0], r[2]) for r in _rows(mixed / "events")] == [(1, "A"), (4, "d"), (5, "e"), (9, "i"), (10, "J")]


@pytest.mark.parametrize("conn", ["a lake", "a DeltaTable"])
def test_a_replace_counts_on_the_version_it_read_when_the_new_one_cannot_tell(mixed, monkeypatch, conn):
    real = delta_write.stored_rows
    answers = iter([real, lambda table: None])  # before the commit, then after it
    monkeypatch.setattr(delta_write, "stored_rows", lambda table: next(answers)(table))
    target = f"delta://{mixed}" if conn == "a lake" else deltalake.DeltaTable(str(mixed / "events"))
    result = write_interval(target, "events", _table([(1, 1, "A")]), DAY1, time_column="ts")
    assert (result.rows_inserted, result.rows_deleted) == (1, 6)
    assert deltalake.DeltaTable(str(mixed / "events")).version() == 5  # one commit
    if conn == "a DeltaTable":  # the caller's handle is left at the version written, not the one counted
        assert target.version() == 5


def test_overwrite_partition_reports_the_rows_of_the_partitions_files(tmp_path):
    schema = pa.schema([("k", pa.int64()), ("ds", pa.date32()), ("v", pa.string())])
    uri = str(tmp_path / "daily")
    deltalake.DeltaTable.create(uri, schema=schema, partition_by=["ds"])
    for rows in ([(1, date(2026, 1, 1)), (2, date(2026, 1, 2))], [(3, date(2026, 1, 1)), (4, date(2026, 1, 1))]):
        deltalake.write_deltalake(uri, pa.table({"k": [k for k, _ in rows], "ds": [d for _, d in rows],
                                                 "v": ["x"] * 2}, schema=schema), mode="append")
    result = write_interval(f"delta://{tmp_path}", "daily", [{"k": 9, "v": "new"}], DAY1,
                            strategy="overwrite_partition")
    assert (result.rows_inserted, result.rows_deleted) == (1, 3)
    assert sorted(r[0] for r in _rows(tmp_path / "daily")) == [2, 9]


@pytest.mark.parametrize("order", ["the table's", "reversed"])
def test_a_merge_counts_the_same_whether_the_batch_comes_in_the_tables_order_or_not(tmp_path, order):
    """In the table's order the rows are matched by position, otherwise by a join on the key."""
    uri = str(tmp_path / "events")
    deltalake.DeltaTable.create(uri, schema=SCHEMA)
    options = {"time_column": "ts", "strategy": "merge", "unique_key": "k"}
    first = [(k, 1, f"v{k}") for k in range(1, 21)]
    write_interval(f"delta://{tmp_path}", "events", _table(first), DAY1, **options)
    write_interval(f"delta://{tmp_path}", "events", _table([(99, 2, "other")]), DAY2, **options)
    changed = [(k, 1, v.upper() if k % 4 == 0 else v) for k, _, v in first]
    batch = changed if order == "the table's" else list(reversed(changed))
    merged = write_interval(f"delta://{tmp_path}", "events", _table(batch), DAY1, **options)
    assert (merged.rows_inserted, merged.rows_updated, merged.rows_deleted) == (0, 5, 0)
    assert _rows(tmp_path / "events") == sorted((k, at(d, k % 24), v) for k, d, v in changed + [(99, 2, "other")])
    # Fewer rows than the interval holds, one new: the rows it lacks stay.
    fewer = [(k, 1, "x" if k == 3 else v) for k, _, v in changed[:10]] + [(21, 1, "new")]
    again = write_interval(f"delta://{tmp_path}", "events", _table(fewer if order == "the table's"
                                                                   else list(reversed(fewer))), DAY1, **options)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (1, 1, 0)
    assert len(_rows(tmp_path / "events")) == 22


def test_a_merge_compares_floats_as_stored_nan_equal_to_nan_and_minus_zero_not_zero(tmp_path):
    schema = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("x", pa.float64())])
    uri = str(tmp_path / "events")
    deltalake.DeltaTable.create(uri, schema=schema)
    options = {"time_column": "ts", "strategy": "merge", "unique_key": "k"}
    write_interval(f"delta://{tmp_path}", "events",
                   _table([(1, 1, math.nan), (2, 1, 0.0), (3, 1, None), (4, 1, 1.5)], schema), DAY1, **options)
    version = deltalake.DeltaTable(uri).version()
    merged = write_interval(f"delta://{tmp_path}", "events",
                            _table([(1, 1, math.nan), (2, 1, -0.0), (3, 1, None), (4, 1, 1.5)], schema), DAY1,
                            **options)
    assert (merged.rows_inserted, merged.rows_updated) == (0, 1) and deltalake.DeltaTable(uri).version() == version + 1
    stored = {r["k"]: r["x"] for r in deltalake.DeltaTable(uri).to_pyarrow_table().to_pylist()}
    assert math.copysign(1, stored[2]) == -1 and math.isnan(stored[1]) and stored[3] is None
    filled = write_interval(f"delta://{tmp_path}", "events",
                            _table([(1, 1, math.nan), (2, 1, -0.0), (3, 1, 7.0), (4, 1, 1.5)], schema), DAY1,
                            **options)
    assert (filled.rows_inserted, filled.rows_updated) == (0, 1)
