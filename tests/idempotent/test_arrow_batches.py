"""Arrow tables take the columnar path: the same rows, errors and ledger as Python rows."""

from __future__ import annotations

import sys
from datetime import date, datetime, timedelta, timezone

import pytest

from dagguard.idempotent import Interval, IntervalViolationError, write_interval
from dagguard.idempotent.arrow.batch import from_arrow
from dagguard.idempotent.batch import to_batch
from dagguard.idempotent.checksum import arrow_fingerprint_checksum, batch_checksum, same_data
from dagguard.idempotent.api import read_ledger
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.identifiers import TableName
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch
from tests.idempotent.helpers import DAY1, at, duckdb_database, make_database, sqlite_database

pa = pytest.importorskip("pyarrow")

COLUMNS = "k INTEGER, ts {ts}, ds {ds}, v TEXT, amount {float}"
TYPES = {"sqlite": ("TEXT", "REAL"), "duckdb": ("DATE", "DOUBLE"), "postgres": ("date", "double precision"),
         "delta": ("DATE", "DOUBLE"), "iceberg": ("DATE", "DOUBLE"), "spark": ("DATE", "DOUBLE")}
# Values that the CSV and strftime conversions must carry exactly: quotes, commas, newlines,
# the empty string next to NULL, special floats, a NULL key.
ROWS = [
    (1, at(1, 0), date(2026, 1, 1), 'say "hi", then\nleave', 0.1 + 0.2),
    (2, at(1, 1, 30, 5), date(2026, 1, 1), "", float("inf")),
    (3, at(1, 23, 59, 999_999), date(2026, 1, 1), None, None),
    (None, at(1, 12), date(2026, 1, 1), "null key", -1.5),
]
NAMES = ["k", "ts", "ds", "v", "amount"]


def _create(db):
    ds, kind = TYPES[db.dialect]
    db.create("events", COLUMNS.format(ts=db.ts, ds=ds, float=kind))


def _arrow(rows):
    columns = list(zip(*rows))
    return pa.table({"k": pa.array(columns[0], pa.int64()), "ts": pa.array(columns[1], pa.timestamp("us", tz="UTC")),
                     "ds": pa.array(columns[2], pa.date32()), "v": pa.array(columns[3], pa.string()),
                     "amount": pa.array(columns[4], pa.float64())})


def _write(db, rows, strategy, **options):
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, DAY1, time_column="ts", strategy=strategy,
                              unique_key=["k"] if strategy == "merge" else None, **options)
    finally:
        conn.close()


@pytest.fixture
def python_rows(monkeypatch):
    """Keep Python rows on the row path (write_interval would otherwise convert them to Arrow)."""
    monkeypatch.setattr("dagguard.idempotent.write_prepare.rows_to_arrow", lambda batch: None)


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_arrow_and_tuples_write_the_same_rows(db, strategy, python_rows):
    _create(db)
    _write(db, ROWS, strategy, columns=NAMES)
    from_tuples = db.rows()
    db.run("DELETE FROM events")
    first = _write(db, _arrow(ROWS), strategy)
    assert db.rows() == from_tuples
    second = _write(db, _arrow(list(reversed(ROWS))), strategy)
    assert db.rows() == from_tuples
    # DuckDB fingerprints in the engine, Delta and Iceberg with numpy over the rows as the table
    # stores them, SQLite and PostgreSQL with numpy over the batch (checksum.write_checksum).
    kind = {"duckdb": "duckdb", "delta": "delta", "iceberg": "iceberg-"}.get(db.dialect, "arrowfp-")
    assert first.checksum == second.checksum and f":{kind}" in first.checksum
    assert read_ledger(db.url).conflicts == ()


def test_arrow_merge_updates_only_changed_rows(db):
    _create(db)
    _write(db, _arrow(ROWS), "merge")
    changed = [ROWS[0], (2, ROWS[1][1], ROWS[1][2], "new", 2.0), ROWS[2], ROWS[3]]
    result = _write(db, _arrow(changed), "merge")
    assert (result.rows_inserted, result.rows_updated) == (0, 1)


def test_arrow_in_another_zone_and_unit_is_stored_in_utc(db):
    _create(db)
    paris = pa.timestamp("ns", tz="Europe/Paris")
    table = _arrow(ROWS[:2]).set_column(1, "ts", pa.array([r[1] for r in ROWS[:2]], pa.timestamp("us", tz="UTC")).cast(paris))
    _write(db, table, "replace")
    assert [r[1] for r in db.rows("events", "k, ts")] == [ROWS[0][1], ROWS[1][1]]


@pytest.mark.parametrize("bad, message", [
    ((9, at(2, 0), date(2026, 1, 1), "x", 1.0), "is outside the interval"),
    ((9, None, date(2026, 1, 1), "x", 1.0), "has NULL in the time column"),
    ((1, at(1, 5), date(2026, 1, 1), "x", 1.0), "repeats key {'k': 1} of row 0"),
])
def test_arrow_violations_are_reported_like_rows_and_write_nothing(db, bad, message):
    _create(db)
    _write(db, _arrow(ROWS[:1]), "replace")
    before = db.rows()
    with pytest.raises(IntervalViolationError, match=message):
        _write(db, _arrow([ROWS[0], bad]), "merge")
    assert db.rows() == before


def test_naive_arrow_timestamps_are_refused(db):
    _create(db)
    table = _arrow(ROWS[:1]).set_column(1, "ts", pa.array([datetime(2026, 1, 1)], pa.timestamp("us")))
    with pytest.raises(IntervalViolationError, match="naive datetime"):
        _write(db, table, "replace")


def test_arrow_partition_of_another_day_is_refused(db):
    _create(db)
    table = _arrow(ROWS[:1]).set_column(2, "ds", pa.array([date(2026, 1, 5)], pa.date32()))
    with pytest.raises(IntervalViolationError, match=r"ds=datetime.date\(2026, 1, 5\), not 2026-01-01"):
        _write(db, table, "overwrite_partition")


@pytest.mark.parametrize("checksum", [batch_checksum, arrow_fingerprint_checksum])
def test_arrow_checksum_ignores_row_order_chunks_zones_and_widths(checksum):
    # arrow_fingerprint_checksum: what the SQL engines record; a date and its ISO text are one
    # value there too (overwrite_partition writes the partition as SQLite stores it, as text).
    table = _arrow(ROWS)
    base = checksum(from_arrow(table))
    chunked = pa.concat_tables([table.slice(0, 1), table.slice(1).take([2, 0, 1])])
    widened = table.select(["v", "k", "ts", "ds", "amount"]).cast(pa.schema([
        ("v", pa.large_string()), ("k", pa.int32()), ("ts", pa.timestamp("ns", tz="Asia/Tokyo")),
        ("ds", pa.date32()), ("amount", pa.float64())]))
    assert checksum(from_arrow(chunked)) == base == checksum(from_arrow(widened))
    as_text = table.set_column(2, "ds", table.column("ds").cast(pa.string()))
    assert checksum(from_arrow(as_text)) == base
    other = table.set_column(3, "v", pa.array(["a", "", None, "null key"]))
    assert checksum(from_arrow(other)) != base
    empty_vs_null = table.set_column(3, "v", pa.array([ROWS[0][3], None, "", "null key"]))
    assert checksum(from_arrow(empty_vs_null)) != base


def test_arrow_fingerprint_checksum_tells_names_counts_and_near_dates_apart():
    table = _arrow(ROWS)
    base = arrow_fingerprint_checksum(from_arrow(table))
    assert base.startswith(f"{len(ROWS)}:arrowfp-")
    assert arrow_fingerprint_checksum(from_arrow(table.set_column(2, "ds", table.column("ds").cast(pa.date64())))) == base
    for changed in (table.rename_columns(["k", "ts", "ds", "w", "amount"]),
                    pa.concat_tables([table.slice(1), table.slice(1, 1)]),  # a row twice, another gone
                    table.set_column(2, "ds", pa.array(["2026-01-01", "2026-1-01", "2026-01-01", "2026-01-01"]))):
        assert arrow_fingerprint_checksum(from_arrow(changed)) != base
    decimals = pa.table({"d": pa.array([1], pa.decimal128(5, 2))})
    assert arrow_fingerprint_checksum(from_arrow(decimals)) is None  # write_checksum falls back to batch_checksum


def _rerun_after_an_old_ledger(db, strategy, monkeypatch, edit=None):
    """Write the rows as dagguard did before Arrow batches were fingerprinted (the ledger then
    holds arrow_checksum's `rows:arrow-...`), run `edit`, and write them again."""
    if db.dialect not in ("sqlite", "postgres"):
        pytest.skip("DuckDB records its own fingerprint, the table formats theirs (test_iceberg.py)")
    _create(db)
    table = _arrow(ROWS[:3])
    with monkeypatch.context() as old:
        old.setattr("dagguard.idempotent.write.write_checksum", batch_checksum)
        first = _write(db, table, strategy)
    assert ":arrow-" in first.checksum
    written = db.rows()
    if edit:
        db.run(edit)
    again = _write(db, table, strategy)
    assert db.rows() == written and ":arrowfp-" in again.checksum
    return again


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_a_ledger_entry_from_before_fingerprints_still_marks_a_rerun_unchanged(db, strategy, monkeypatch):
    again = _rerun_after_an_old_ledger(db, strategy, monkeypatch)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_a_table_edited_since_an_old_ledger_entry_is_rewritten(db, strategy, monkeypatch):
    again = _rerun_after_an_old_ledger(db, strategy, monkeypatch, "UPDATE events SET v = 'edited' WHERE k = 1")
    assert again.rows_inserted + again.rows_updated >= 1


def test_an_overwrite_of_the_rows_a_replace_wrote_is_a_verified_rerun(db):
    """Regression: the fingerprint checksum took the DATE `ds` of replace's batch and the text
    one overwrite_partition writes on SQLite for different data, so the rerun was rewritten."""
    if db.dialect not in ("sqlite", "postgres"):
        pytest.skip("DuckDB records its own fingerprint, the table formats theirs")
    _create(db)
    table = _arrow(ROWS[:3])
    _write(db, table, "replace")
    written = db.rows()
    again = _write(db, table, "overwrite_partition")
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)
    assert db.rows() == written


def test_ledger_compares_checksums_of_one_kind_only():
    rows = batch_checksum(to_batch(ROWS, NAMES))
    arrow = batch_checksum(from_arrow(_arrow(ROWS)))
    assert same_data(rows, arrow) and same_data(arrow, arrow)
    fewer = batch_checksum(from_arrow(_arrow(ROWS[:3])))
    assert not same_data(arrow, fewer) and not same_data(rows, fewer)


def test_a_million_rows_are_never_turned_into_python_rows():
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    n = 200_000
    table = pa.table({"k": pa.array(range(n), pa.int64()),
                      "ts": pa.array([start + timedelta(seconds=i % 86_400) for i in range(n)],
                                     pa.timestamp("us", tz="UTC"))})

    spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")
    batch = prepare_batch(spec, table, None, DAY1)
    batch_checksum(batch)
    assert "rows" not in vars(batch)  # the cached Python rows were never built


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_an_unchanged_interval_is_not_rewritten(db, strategy):
    _create(db)
    _write(db, _arrow(ROWS), strategy)
    again = _write(db, _arrow(list(reversed(ROWS))), strategy)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)
    changed = [ROWS[0], ROWS[1], ROWS[2], (None, ROWS[3][1], ROWS[3][2], "changed", -1.5)]
    result = _write(db, _arrow(changed), strategy)
    assert result.rows_inserted + result.rows_updated >= 1
    assert [r[3] for r in db.rows("events", "k, ts, ds, v")].count("changed") == 1


def test_replace_rewrites_an_interval_whose_extra_columns_it_would_reset_on_duckdb(tmp_path):

    db = duckdb_database(tmp_path)
    db.create("events", "k INTEGER, ts TIMESTAMPTZ, note VARCHAR")
    table = pa.table({"k": pa.array([1]), "ts": pa.array([at(1, 1)], pa.timestamp("us", tz="UTC"))})
    _write(db, table, "replace")
    db.run("UPDATE events SET note = 'set by hand'")
    result = _write(db, table, "replace")
    assert (result.rows_inserted, result.rows_deleted) == (1, 1)
    assert db.rows() == [(1, at(1, 1), None)]


@pytest.mark.parametrize("strategy", ["replace", "overwrite_partition", "merge"])
def test_an_interval_edited_since_its_last_write_is_rewritten(db, strategy):
    _create(db)
    _write(db, _arrow(ROWS[:3]), strategy)
    db.run("UPDATE events SET v = 'edited by hand' WHERE k = 1")
    result = _write(db, _arrow(ROWS[:3]), strategy)
    assert result.rows_inserted + result.rows_updated >= 1
    assert "edited by hand" not in [r[1] for r in db.rows("events", "k, v")]


@pytest.mark.parametrize("delete_missing", [False, True])
@pytest.mark.parametrize("key", ["", " PRIMARY KEY"])
def test_arrow_merge_counts_and_rows_match_the_row_path(db, delete_missing, key):
    """DuckDB rewrites changed rows (delete + insert) unless the table has a key; the
    outcome and the counts are those of MERGE on every engine."""
    if key and db.dialect == "iceberg":
        pytest.skip("SQL-specific: Iceberg has no primary key")
    ds, kind = TYPES[db.dialect]
    db.create("events", COLUMNS.replace("k INTEGER", "k INTEGER" + key).format(ts=db.ts, ds=ds, float=kind))
    first = [r for r in ROWS if r[0] is not None]
    _write(db, _arrow(first), "merge")
    second = [first[0], (2, first[1][1], first[1][2], "changed", 2.0), (7, at(1, 3), date(2026, 1, 1), "new", 1.0)]
    result = _write(db, _arrow(second), "merge", delete_missing=delete_missing)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, int(delete_missing))
    kept = [] if delete_missing else [3]
    assert [r[0] for r in db.rows("events", "k")] == sorted([1, 2, 7] + kept)
    assert ("changed",) in db.rows("events", "v")


def test_sqlite_fingerprints_values_as_bound_and_as_read_back(tmp_path):

    db = sqlite_database(tmp_path)
    _create(db)
    _write(db, _arrow(ROWS), "replace")
    engine = engine_for(db.connect())
    columns = tuple(sorted(NAMES))
    types = engine.table_columns(TableName(("events",)))
    stored = engine.fingerprint('"events"', columns, "1 = 1", ())
    assert stored == engine.batch_fingerprint(from_arrow(_arrow(list(reversed(ROWS)))), columns, types)
    assert stored != engine.batch_fingerprint(from_arrow(_arrow(ROWS[:3])), columns, types)
    db.run("UPDATE events SET amount = '0.5' WHERE k = 1")  # text in a REAL column: stored as 0.5
    assert engine.fingerprint('"events"', columns, "1 = 1", ()) != stored


def _merge_watching_statements(db, table):
    """Merge `table` into events on k; the result and the SQL of every statement run."""
    seen = []
    spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")
    batch = prepare_batch(spec, table, None, DAY1)
    conn = db.connect()
    try:
        result = write_batch(engine_for(conn), spec, batch, DAY1, batch_checksum(batch), RunInfo(),
                             lambda n, sql: seen.append(sql))
    finally:
        conn.close()
    return result, seen


@pytest.mark.parametrize("extra_row", [False, True])
def test_duckdb_rewrite_deletes_by_range_only_when_every_interval_row_matched(tmp_path, extra_row):
    db = duckdb_database(tmp_path)
    _create(db)
    first = [r for r in ROWS if r[0] is not None]
    _write(db, _arrow(first), "merge")
    if extra_row:  # a row of the interval whose key the next batch lacks: it must survive
        db.run("INSERT INTO events VALUES (9, ?, DATE '2026-01-01', 'kept', 9.0)", (at(1, 9),))
    changed = [(k, ts, ds, f"{v} changed", 1.0) for k, ts, ds, v, _ in first] + [(7, at(1, 3), date(2026, 1, 1), "new", 1.0)]
    result, seen = _merge_watching_statements(db, _arrow(changed))
    deletes = [sql for sql in seen if sql.startswith("DELETE")]
    assert len(deletes) == 1 and ("EXISTS" in deletes[0]) == extra_row
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 3, 0)
    expected = sorted([1, 2, 3, 7] + ([9] if extra_row else []))
    assert [r[0] for r in db.rows("events", "k")] == expected
    assert sorted(v for (v,) in db.rows("events", "v") if v) == sorted(
        [f"{v} changed" for *_, v, _ in first] + ["new"] + (["kept"] if extra_row else []))


@pytest.mark.parametrize("change_one", [True, False])
def test_duckdb_rewrites_once_a_single_matched_row_changed(tmp_path, change_one):
    db = duckdb_database(tmp_path)
    _create(db)
    rows = [(k, at(1, 0, k), date(2026, 1, 1), f"v{k}", float(k)) for k in range(50)]
    _write(db, _arrow(rows), "merge")
    again = list(rows) + [(50, at(1, 1), date(2026, 1, 1), "new", 50.0)]
    if change_one:
        again[7] = (7, at(1, 0, 7), date(2026, 1, 1), "seven", 7.0)
    result, seen = _merge_watching_statements(db, _arrow(again))
    # One changed row of 50 is enough to delete and reinsert rather than MERGE (cheaper on
    # DuckDB whatever the fraction); with none changed, only the new row is written.
    assert any(sql.startswith("DELETE") for sql in seen) == change_one
    assert any(sql.startswith("MERGE") for sql in seen) != change_one
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, int(change_one), 0)
    assert sorted(db.rows("events", "k, v")) == sorted((k, v) for k, _, _, v, _ in again)


def _duckdb_two_hash_checksum(db, count):
    """The checksum DuckDB's fingerprint recorded before its second sum became a hash of each
    row's hash: both sums hashed the columns, the second in reverse order with seed 1."""
    conn = db.connect()
    try:
        version = ".".join(conn.execute("SELECT version()").fetchone()[0].lstrip("v").split(".")[:2])
        cols = sorted(NAMES)
        first, second = conn.execute(
            f"SELECT sum(hash({', '.join(cols)})::HUGEINT), sum(hash({', '.join(reversed(cols))}, 1)::HUGEINT) "
            f"FROM events").fetchone()
    finally:
        conn.close()
    return f"{count}:duckdb{version}-{int(first):x}.{int(second):x}"


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_a_duckdb_checksum_of_the_former_fingerprint_is_never_taken_for_the_new_one(tmp_path, strategy):
    """DuckDB's fingerprint now sums each row's hash and a hash of that hash (half the work of
    hashing the columns twice). A ledger row of the former computation names another kind: the
    rerun it describes is rewritten once, not skipped on a comparison of different functions,
    and from then on recognised (its checksum recorded)."""
    db = duckdb_database(tmp_path)
    _create(db)
    rows = [r for r in ROWS if r[0] is not None]
    first = _write(db, _arrow(rows), strategy)
    assert ":duckdb" in first.checksum and "rh-" in first.checksum
    older = _duckdb_two_hash_checksum(db, len(rows))
    db.run("UPDATE dagguard_write_log SET checksum = ?", (older,))
    again = _write(db, _arrow(rows), strategy)
    # replace and overwrite_partition rewrite the interval; a merge compares the rows themselves.
    rewritten = 0 if strategy == "merge" else len(rows)
    assert (again.rows_inserted, again.rows_updated) == (rewritten, 0) and again.checksum == first.checksum
    assert read_ledger(db.url).entries[-1].checksum == first.checksum
    third = _write(db, _arrow(list(reversed(rows))), strategy)
    assert (third.rows_inserted, third.rows_updated, third.rows_deleted) == (0, 0, 0)
    assert sorted(db.rows("events", "k")) == [(1,), (2,), (3,)]


def test_duckdbs_fingerprint_tells_values_swapped_between_rows(tmp_path):
    """Each row's hash covers all its columns: the same values in other rows are other data."""
    db = duckdb_database(tmp_path)
    _create(db)
    rows = [(1, at(1, 1), date(2026, 1, 1), "a", 1.0), (2, at(1, 2), date(2026, 1, 1), "b", 2.0)]
    first = _write(db, _arrow(rows), "replace")
    swapped = [(1, at(1, 1), date(2026, 1, 1), "b", 1.0), (2, at(1, 2), date(2026, 1, 1), "a", 2.0)]
    again = _write(db, _arrow(swapped), "replace")
    assert again.checksum != first.checksum and (again.rows_inserted, again.rows_deleted) == (2, 2)
    assert db.rows("events", "k, v") == [(1, "b"), (2, "a")]


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_postgres_csv_carries_zoned_timestamps_exactly(request, tmp_path, monkeypatch, unit):
    """The CSV writes zoned timestamps as UTC text; other zones, units, NULLs, 1970 or
    earlier and years before 1000 come back as the same instants. Regression: pyarrow's own
    CSV text for New York in the year 500 had offset -0456 for -04:56:02, 2 seconds off."""

    monkeypatch.setitem(sys.modules, "pgpq", None)  # the CSV path, not binary COPY
    db = make_database("postgres", request, tmp_path)
    db.create("events", "k INTEGER, ts timestamptz, seen_at timestamptz")
    seen = [datetime(2026, 3, 29, 1, 59, 59, tzinfo=timezone.utc), None,
            datetime(1969, 12, 31, 23, 59, 58, tzinfo=timezone.utc), datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)]
    for with_old_year in (False, True):
        values = seen + ([datetime(500, 1, 1, 12, tzinfo=timezone.utc)] if with_old_year else [])
        table = pa.table({
            "k": pa.array(range(len(values)), pa.int64()),
            "ts": pa.array([at(1, i) for i in range(len(values))], pa.timestamp(unit, tz="UTC")).cast(
                pa.timestamp(unit, tz="Asia/Kolkata")),
            "seen_at": pa.array(values, pa.timestamp(unit, tz="UTC")).cast(pa.timestamp(unit, tz="America/New_York"))})
        conn = db.connect()
        try:
            write_interval(conn, "events", table, DAY1, time_column="ts")
        finally:
            conn.close()
        assert db.rows("events", "k, ts, seen_at") == [(i, at(1, i), v) for i, v in enumerate(values)]


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "postgres"])
def test_merge_into_an_empty_interval_inserts_straight_into_the_target(request, tmp_path, dialect):
    """A first write needs no staging copy and no join to know every row is new; keys that
    other intervals hold (the day before, here) still do not match."""
    db = make_database(dialect, request, tmp_path)
    _create(db)
    day_before = [(k, at(1, 0) - timedelta(hours=1 + k), date(2025, 12, 31), "old", 0.0) for k in range(3)]
    conn = db.connect()
    try:
        write_interval(conn, "events", _arrow(day_before),
                       Interval(DAY1.start - timedelta(days=1), DAY1.start), time_column="ts")
    finally:
        conn.close()
    rows = [(k, at(1, k), date(2026, 1, 1), f"v{k}", float(k)) for k in range(5)]
    result, seen = _merge_watching_statements(db, _arrow(rows))
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (5, 0, 0)
    # Straight into the target, as replace does: no staging copy, no join, no MERGE.
    assert seen == ['-- bulk insert into "events"']
    assert len(db.rows("events")) == 8
    again, seen = _merge_watching_statements(db, _arrow(rows[:4] + [(4, at(1, 4), date(2026, 1, 1), "new", 4.0)]))
    # Now the interval holds rows: DuckDB joins to count; PostgreSQL counts the interval
    # before and after its MERGE; SQLite counts its UPDATE and INSERT.
    assert (again.rows_inserted, again.rows_updated) == (0, 1)
    assert any("LEFT JOIN" in sql for sql in seen) == (dialect == "duckdb")
