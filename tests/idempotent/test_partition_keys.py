"""write_interval(..., partition_key=...): an Airflow partition written outside Airflow, on the
SQL engines; the key recorded in the ledger, and ledgers from before the key column."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from dagguard.cli import app
from dagguard.idempotent import (Interval, IntervalViolationError, InvalidArgumentError, RunInfo,
                                 UnsupportedConnectionError, read_ledger, write_interval)
from tests.idempotent.helpers import make_database

UTC = timezone.utc
KEY = "2026-01-05T00:00:00"
OTHER = "2026-01-04T00:00:00"
JAN5 = Interval(datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 1, 6, tzinfo=UTC))
COLUMNS = "k INTEGER, ts {ts}, v TEXT, pk TEXT"


@pytest.fixture(params=["sqlite", "duckdb", "postgres"])
def sql_db(request, tmp_path):
    return make_database(request.param, request, tmp_path)


def _write(db, rows, key=KEY, interval=None, **options):
    options.setdefault("strategy", "overwrite_partition")
    options.setdefault("partition_column", "pk")
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, interval, partition_key=key, **options)
    finally:
        conn.close()


def _stored(db, columns="k, v, pk"):
    """The table's rows as the driver returns them (the helpers' rows() reads ISO text as times)."""
    conn = db.connect()
    try:
        cursor = conn.cursor()
        cursor.execute(f"SELECT {columns} FROM events ORDER BY k")
        return [tuple(row) for row in cursor.fetchall()]
    finally:
        conn.close()


def _rows(hour, *values):
    return [{"k": i, "ts": datetime(2026, 1, 5, hour, i, tzinfo=UTC), "v": v} for i, v in enumerate(values)]


def test_a_partition_written_twice_holds_one_copy_and_leaves_other_partitions(sql_db):
    sql_db.create(columns=COLUMNS)
    sql_db.run("INSERT INTO events (k, v, pk) VALUES (9, 'kept', ?)", (OTHER,))
    first = _write(sql_db, _rows(1, "a", "b"))
    second = _write(sql_db, _rows(1, "a", "b"))
    assert _stored(sql_db) == [(0, "a", KEY), (1, "b", KEY), (9, "kept", OTHER)]
    assert (first.rows_inserted, second.row_count) == (2, 2)
    # The rerun found the partition holding exactly these rows, and left it alone.
    assert (second.rows_deleted, second.rows_inserted) == (0, 0)
    assert (second.partition_key, second.interval_start, second.interval_end) == (KEY, None, None)
    assert second.to_dict()["partition_key"] == KEY


def test_an_arrow_batch_writes_the_partition_as_rows_do(sql_db):
    sql_db.create(columns=COLUMNS)
    table = pa.table({"k": [1, 2], "ts": pa.array([datetime(2026, 1, 5, 3, tzinfo=UTC)] * 2,
                                                  pa.timestamp("us", tz="UTC")), "v": ["x", "y"]})
    _write(sql_db, table)
    _write(sql_db, table)
    assert _stored(sql_db) == [(1, "x", KEY), (2, "y", KEY)]


@pytest.mark.parametrize("arrow", [False, True], ids=["rows", "arrow"])
def test_rows_of_another_partition_are_refused_before_anything_is_written(sql_db, arrow):
    sql_db.create(columns=COLUMNS)
    _write(sql_db, _rows(1, "old"))
    rows = [{"k": 1, "v": "a", "pk": KEY}, {"k": 2, "v": "b", "pk": OTHER}]
    batch = pa.Table.from_pylist(rows) if arrow else rows
    with pytest.raises(IntervalViolationError, match=r"row 1 .*has pk='2026-01-04T00:00:00', not 2026-01-05T00:00:00"):
        _write(sql_db, batch)
    assert _stored(sql_db) == [(0, "old", KEY)]
    assert len(read_ledger(sql_db.url).entries) == 1


def test_rows_that_name_the_key_are_accepted(sql_db):
    sql_db.create(columns=COLUMNS)
    _write(sql_db, [{"k": 1, "v": "a", "pk": KEY}, {"k": 2, "v": "b", "pk": datetime(2026, 1, 5)}])
    assert _stored(sql_db, "k, pk") == [(1, KEY), (2, KEY)]


def test_with_an_interval_too_the_rows_times_must_lie_in_it(sql_db):
    sql_db.create(columns=COLUMNS)
    late = [{"k": 1, "ts": datetime(2026, 1, 6, 1, tzinfo=UTC), "v": "late"}]
    with pytest.raises(IntervalViolationError, match="outside the interval"):
        _write(sql_db, late, interval=JAN5, time_column="ts")
    result = _write(sql_db, _rows(2, "a"), interval=JAN5, time_column="ts")
    assert (result.interval_start, result.partition_key) == ("2026-01-05T00:00:00+00:00", KEY)
    entry = read_ledger(sql_db.url).entries[-1]
    assert (entry.interval_start, entry.partition_key) == ("2026-01-05T00:00:00+00:00", KEY)


def test_replace_with_a_key_but_no_interval_is_refused(sql_db):
    sql_db.create(columns=COLUMNS)
    with pytest.raises(InvalidArgumentError, match="pass interval=Interval"):
        _write(sql_db, _rows(1, "a"), strategy="replace", time_column="ts")
    with pytest.raises(InvalidArgumentError, match="nothing to write into"):
        _write(sql_db, _rows(1, "a"), key=None)


def test_replace_scopes_by_the_interval_and_records_the_key(sql_db):
    sql_db.create(columns=COLUMNS)
    result = _write(sql_db, _rows(1, "a"), interval=JAN5, strategy="replace", time_column="ts",
                    run=RunInfo(dag_id="hourly", task_id="load"))
    again = _write(sql_db, _rows(1, "a"), interval=JAN5, strategy="replace", time_column="ts")
    assert _stored(sql_db) == [(0, "a", None)]
    assert result.partition_key == again.partition_key == KEY
    entries = read_ledger(sql_db.url).entries
    assert [(e.partition_key, e.interval_start) for e in entries] == [(KEY, "2026-01-05T00:00:00+00:00")] * 2


def test_a_date_partition_column_takes_a_key_that_names_a_day(sql_db):
    sql_db.create(columns="k INTEGER, v TEXT, pk DATE")
    _write(sql_db, [{"k": 1, "v": "a"}], key="2026-01-05")
    _write(sql_db, [{"k": 2, "v": "b"}], key="2026-01-05T00:00:00")  # a midnight names the same day
    assert [(k, str(pk)[:10]) for k, pk in _stored(sql_db, "k, pk")] == [(2, "2026-01-05")]
    with pytest.raises(InvalidArgumentError, match="does not name a day.*key_format='%Y-%m-%d'"):
        _write(sql_db, [{"k": 3, "v": "c"}], key="us-east")
    assert [k for k, _ in _stored(sql_db, "k, pk")] == [2]


def test_a_non_temporal_key_is_its_own_partition(sql_db):
    sql_db.create(columns=COLUMNS)
    _write(sql_db, [{"k": 1, "v": "a"}], key="us-east")
    _write(sql_db, [{"k": 2, "v": "b"}], key="eu-west")
    _write(sql_db, [{"k": 3, "v": "c"}], key="us-east")
    assert _stored(sql_db, "k, pk") == [(2, "eu-west"), (3, "us-east")]


def test_a_bad_key_is_refused(sql_db):
    sql_db.create(columns=COLUMNS)
    for key, error in (("", InvalidArgumentError), ("  ", InvalidArgumentError), (5, TypeError)):
        with pytest.raises(error, match="partition_key must be a non-empty string"):
            _write(sql_db, _rows(1, "a"), key=key)


# The ledger's columns before partition keys, as dagguard created them.
OLD_LEDGER = ("dag_id TEXT, task_id TEXT, run_id TEXT, try_number INTEGER, table_name TEXT, "
              "interval_start {ts}, interval_end {ts}, strategy TEXT, row_count INTEGER, rows_inserted INTEGER, "
              "rows_updated INTEGER, rows_deleted INTEGER, checksum TEXT, written_at {ts}")
LEDGER_STAMP = {"sqlite": "TEXT", "duckdb": "TIMESTAMPTZ", "postgres": "TIMESTAMPTZ"}


def _old_ledger(db):
    db.create("dagguard_write_log", OLD_LEDGER.replace("{ts}", LEDGER_STAMP[db.dialect]))
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    db.run("INSERT INTO dagguard_write_log VALUES ('d', 't', 'r', 1, 'events', ?, ?, 'replace', 1, 1, 0, 0, "
           "'1:abc', ?)", (stamp if db.dialect != "sqlite" else stamp.isoformat(),) * 3)


def test_a_ledger_from_before_partition_keys_is_read_and_then_extended(sql_db):
    sql_db.create(columns=COLUMNS)
    _old_ledger(sql_db)
    before = read_ledger(sql_db.url)
    assert [(e.dag_id, e.partition_key) for e in before.entries] == [("d", None)]
    _write(sql_db, _rows(1, "a"))
    after = read_ledger(sql_db.url)
    assert [(e.dag_id, e.partition_key, e.interval_start) for e in after.entries] == [
        ("d", None, "2026-01-01T00:00:00+00:00"), (None, KEY, None)]
    plain = Interval(datetime(2026, 1, 7, tzinfo=UTC), datetime(2026, 1, 8, tzinfo=UTC))
    conn = sql_db.connect()
    try:  # a plain interval write into the extended ledger
        write_interval(conn, "events", [{"k": 5, "ts": datetime(2026, 1, 7, tzinfo=UTC), "v": "z"}], plain,
                       time_column="ts")
    finally:
        conn.close()
    assert read_ledger(sql_db.url).entries[-1].partition_key is None


def test_the_ledger_command_shows_the_key_and_flags_a_partition_written_differently(sql_db):
    sql_db.create(columns=COLUMNS)
    _write(sql_db, _rows(1, "a"))
    _write(sql_db, _rows(1, "changed"))
    _write(sql_db, _rows(1, "a"), key="2026-01-06T00:00:00")
    result = CliRunner().invoke(app, ["ledger", "--conn", sql_db.url])
    assert result.exit_code == 1, result.output
    assert f"events partition={KEY} overwrite_partition rows=1" in result.stdout
    assert f"events partition={KEY} was written 2 times with 2 different checksums" in result.stdout
    assert "3 write(s) of 2 interval(s), 1 interval(s) with different checksums" in result.stdout
    payload = json.loads(CliRunner().invoke(app, ["ledger", "--conn", sql_db.url, "--format", "json"]).stdout)
    assert payload["entries"][0]["partition_key"] == KEY
    assert payload["conflicts"][0]["partition_key"] == KEY


@pytest.mark.parametrize("dialect", ["delta", "iceberg"])
def test_the_table_formats_refuse_a_partition_without_an_interval(dialect, request, tmp_path):
    db = make_database(dialect, request, tmp_path)
    db.create(columns="k INTEGER, ts {ts}, v TEXT, pk TEXT")
    with pytest.raises(UnsupportedConnectionError, match="supported on SQLite, DuckDB and PostgreSQL"):
        _write(db, [{"k": 1, "v": "a"}])


def _drop_the_key_column(db):
    """Make the ledger look like one written before partition keys existed."""
    if db.dialect == "delta":
        from deltalake import DeltaTable, write_deltalake

        uri = f"{db.root}/events/_dagguard/write_log"
        old = DeltaTable(uri).to_pyarrow_table().drop_columns(["partition_key"])
        write_deltalake(uri, old, mode="overwrite", schema_mode="overwrite")
        return
    catalog = db.connect()
    ledger = catalog.load_table(("default", "dagguard_write_log"))
    with ledger.update_schema() as update:
        update.delete_column("partition_key")
    catalog.close()


@pytest.mark.parametrize("dialect", ["delta", "iceberg"])
def test_the_table_formats_ledgers_record_the_key_and_extend_an_old_ledger(dialect, request, tmp_path):
    db = make_database(dialect, request, tmp_path)
    db.create()
    day4 = Interval(datetime(2026, 1, 4, tzinfo=UTC), datetime(2026, 1, 5, tzinfo=UTC))

    def write(interval, key, hour):
        conn = db.connect()
        try:
            return write_interval(conn, "events", [{"k": hour, "ts": interval.start.replace(hour=hour), "v": "a"}],
                                  interval, time_column="ts", partition_key=key)
        finally:
            close = getattr(conn, "close", None)
            if close:
                close()

    write(day4, None, 1)
    _drop_the_key_column(db)
    assert [e.partition_key for e in read_ledger(db.url).entries] == [None]
    result = write(JAN5, "2026-01-05", 2)
    assert result.partition_key == "2026-01-05"
    assert [(e.interval_start[:10], e.partition_key) for e in read_ledger(db.url).entries] == [
        ("2026-01-04", None), ("2026-01-05", "2026-01-05")]


def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    from tests.test_readme_snippets import snippet

    monkeypatch.chdir(tmp_path)
    code = snippet("### Partitioned runs", "python", "import sqlite3")
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out == "2026-01-05 2 0\n2026-01-05 0 0\n"
    result = CliRunner().invoke(app, ["ledger", "--conn", f"sqlite:///{tmp_path / 'warehouse.db'}"])
    assert "sales partition=2026-01-05 overwrite_partition rows=2 inserted=2" in result.stdout
