"""Property tests: reruns, isolation, last-write-wins and backfill order, on every engine."""

from __future__ import annotations

import itertools
from datetime import timedelta, timezone

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dagguard.idempotent import IdempotentWriteError, Interval, IntervalViolationError, write_interval  # noqa: E402
from dagguard.idempotent.checksum import batch_checksum  # noqa: E402
from dagguard.idempotent.arrow.from_rows import rows_to_arrow  # noqa: E402
from dagguard.idempotent.batch import to_batch  # noqa: E402
from tests.idempotent.helpers import at  # noqa: E402

DAYS = [Interval(at(d), at(d + 1)) for d in (1, 2, 3)]
MICRO = timedelta(microseconds=1)
EXAMPLES = {"sqlite": 30, "duckdb": 20, "postgres": 12, "delta": 12, "iceberg": 8, "spark": 4}


def instants(interval: Interval):
    """Boundary instants (start, end - 1µs) and arbitrary ones inside the interval."""
    inside = st.integers(0, int((interval.end - interval.start) / MICRO) - 1).map(
        lambda n: interval.start + n * MICRO)
    return st.one_of(st.sampled_from([interval.start, interval.end - MICRO]), inside)


def batches(interval: Interval, max_size: int = 6):
    """Lists of event dicts with unique (possibly NULL) keys, times inside the interval."""
    row = st.fixed_dictionaries({"k": st.one_of(st.none(), st.integers(0, 8)), "ts": instants(interval),
                                 "v": st.one_of(st.none(), st.sampled_from(["a", "b", "é", "'x"]))})
    return st.lists(row, max_size=max_size, unique_by=lambda r: r["k"])


STRATEGY = st.sampled_from(["replace", "merge"])

# SQLite: the same instant as other writers store it, in forms SQLite's date functions read
# (separator, offset or none for UTC, fraction digits or none where they are all zero).
STORED_FORMS = st.lists(st.tuples(st.sampled_from([" ", "T"]),
                                  st.sampled_from([None, "Z", 0, 120, -330, 14 * 60, -(14 * 60 + 59)]),
                                  st.sampled_from([0, 3, 6, 7])), min_size=1, max_size=4)
# SQLite: a column hiding one of the implicit row id's names, holding `v` again.
ROW_ID_NAMES = ("rowid", "oid", "_rowid_")


@pytest.fixture
def db(db):
    """The engine's database; DuckDB keeps one instance open (reopening the file each time costs
    a checkpoint), handing out cursors as connections."""
    if db.dialect != "duckdb":
        yield db
        return
    import dataclasses

    import duckdb

    root = duckdb.connect(db.url.removeprefix("duckdb:///"))
    yield dataclasses.replace(db, connect=root.cursor)
    root.close()


_row_id_names = itertools.cycle(ROW_ID_NAMES)


def _reset(db) -> None:
    db.drop("events")
    if db.dialect == "sqlite":
        db.row_id_name = next(_row_id_names)
        db.create(columns=f"k INTEGER, ts {{ts}}, v TEXT, {db.row_id_name} TEXT")
        db.run("CREATE INDEX events_ts ON events (ts)")
    else:
        db.create()


def _written(db, rows):
    """The rows and columns written: on SQLite with the row id column too."""
    if db.dialect != "sqlite":
        return rows, ["k", "ts", "v"]
    return [dict(row, **{db.row_id_name: row["v"]}) for row in rows], ["k", "ts", "v", db.row_id_name]


def _write(db, rows, interval, strategy):
    rows, columns = _written(db, rows)
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, interval, time_column="ts", strategy=strategy,
                              unique_key=["k"] if strategy == "merge" else None,
                              delete_missing=strategy == "merge", columns=columns)
    finally:
        conn.close()


def _rows(db):
    """(k, ts, v) of every row; on SQLite the row id column holds v again."""
    if db.dialect == "sqlite":
        assert db.rows(columns=f"v IS {db.row_id_name}") == [(1,)] * len(db.rows())
    return db.rows(columns="k, ts, v")


def _restyle(db, forms) -> None:
    """SQLite: store each row's time in one of `forms` (in turn), as another writer would."""
    if db.dialect != "sqlite":
        return
    from datetime import datetime

    row_id = next(name for name in ROW_ID_NAMES if name != db.row_id_name)  # not hidden
    conn = db.connect()
    try:
        updates = []
        stored = conn.execute(f"SELECT {row_id}, ts FROM events").fetchall()
        for (row, text), (separator, offset, digits) in zip(stored, itertools.cycle(forms)):
            local = datetime.fromisoformat(text).astimezone(
                timezone(timedelta(minutes=offset if isinstance(offset, int) else 0)))
            micro = f"{local.microsecond:06d}"
            fraction = (micro + "0" * digits)[:max(digits, len(micro.rstrip("0")))]
            zone = local.strftime("%z")
            suffix = "" if offset is None else "Z" if offset == "Z" else f"{zone[:3]}:{zone[3:]}"
            updates.append((local.strftime(f"%Y-%m-%d{separator}%H:%M:%S")
                            + (f".{fraction}" if fraction else "") + suffix, row))
        conn.executemany(f"UPDATE events SET ts = ? WHERE {row_id} = ?", updates)
        conn.commit()
    finally:
        conn.close()


def _interval_rows(db, interval):
    return [r for r in _rows(db) if interval.start <= r[1] < interval.end]


def _settings(db):
    return settings(max_examples=EXAMPLES[db.dialect], deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _expected(rows):
    from tests.idempotent.helpers import sort_key

    return sorted(((r["k"], r["ts"], r["v"]) for r in rows), key=sort_key)


def test_running_twice_equals_running_once(db):
    @_settings(db)
    @given(rows=batches(DAYS[1]), strategy=STRATEGY, forms=STORED_FORMS)
    def check(rows, strategy, forms):
        _reset(db)
        first = _write(db, rows, DAYS[1], strategy)
        once = _rows(db)
        _restyle(db, forms)
        second = _write(db, rows, DAYS[1], strategy)
        assert _rows(db) == once == _expected(rows)
        assert first.checksum == second.checksum
        assert first.checksum.startswith(f"{len(rows)}:")
        batch = to_batch(*_written(db, rows))
        if rows_to_arrow(batch) is None:  # stays Python rows: the client-side row checksum
            assert first.checksum == batch_checksum(batch)

    check()


def test_other_intervals_are_untouched_and_last_write_wins(db):
    @_settings(db)
    @given(before=batches(DAYS[0]), after=batches(DAYS[2]), s1=batches(DAYS[1]), s2=batches(DAYS[1]),
           strategy=STRATEGY, forms=STORED_FORMS)
    def check(before, after, s1, s2, strategy, forms):
        _reset(db)
        _write(db, before, DAYS[0], "replace")
        _write(db, after, DAYS[2], "replace")
        outside = [r for r in _rows(db) if not DAYS[1].start <= r[1] < DAYS[1].end]
        _write(db, s1, DAYS[1], strategy)
        _restyle(db, forms)
        _write(db, s2, DAYS[1], strategy)
        assert _interval_rows(db, DAYS[1]) == _expected(s2)
        assert [r for r in _rows(db) if not DAYS[1].start <= r[1] < DAYS[1].end] == outside

    check()


def test_backfilling_in_any_order_gives_the_same_table(db):
    @_settings(db)
    @given(data=st.tuples(*(batches(day, 4) for day in DAYS)), order=st.permutations([0, 1, 2]),
           strategy=STRATEGY, forms=STORED_FORMS)
    def check(data, order, strategy, forms):
        _reset(db)
        for index in (0, 1, 2):
            _write(db, data[index], DAYS[index], strategy)
        in_order = _rows(db)
        _reset(db)
        for index in order:
            _write(db, data[index], DAYS[index], strategy)
            _restyle(db, forms)
        assert _rows(db) == in_order

    check()


def test_a_row_at_the_end_instant_rejects_the_whole_batch(db):
    @_settings(db)
    @given(rows=batches(DAYS[1]), existing=batches(DAYS[1]), strategy=STRATEGY)
    def check(rows, existing, strategy):
        _reset(db)
        _write(db, existing, DAYS[1], "replace")
        before = _rows(db)
        bad = rows + [{"k": 99, "ts": DAYS[1].end, "v": "end is excluded"}]
        with pytest.raises(IntervalViolationError):
            _write(db, bad, DAYS[1], strategy)
        assert _rows(db) == before

    check()


NANO_TYPE = {"sqlite": "TEXT", "duckdb": "TIMESTAMPTZ_NS", "postgres": "timestamptz", "delta": "TIMESTAMPTZ",
             "iceberg": "TIMESTAMPTZ", "spark": "TIMESTAMPTZ"}


def nanosecond_batches(interval: Interval, max_size: int = 5, rounded=st.booleans()):
    """Arrow batches with unique nanosecond times inside the interval (so keys on `ts` may lie
    1 ns apart), rounded to whole microseconds or not."""
    pa = pytest.importorskip("pyarrow")
    start = pa.scalar(interval.start, pa.timestamp("us", tz="UTC")).cast(pa.timestamp("ns", tz="UTC")).value
    width = int((interval.end - interval.start) / MICRO) * 1000
    offset = st.one_of(st.sampled_from([0, 1, 999, 1000, width - 1]), st.integers(0, width - 1))
    rows = st.lists(st.tuples(offset, st.sampled_from(["a", "b", None])), max_size=max_size,
                    unique_by=lambda r: r[0])

    def build(drawn):
        rows, rounded = drawn
        offsets = [n - n % 1000 if rounded else n for n, _ in rows]
        if len(set(offsets)) < len(offsets):  # rounding made two keys one
            offsets, rows = list(dict.fromkeys(offsets)), rows[:len(set(offsets))]
        return pa.table({"k": pa.array(range(len(offsets)), pa.int64()),
                         "ts": pa.array([start + n for n in offsets], pa.timestamp("ns", tz="UTC")),
                         "v": pa.array([v for _, v in rows], pa.string())})

    return st.tuples(rows, rounded).map(build)


def _stored_nanoseconds(db) -> list[int]:
    if db.dialect == "duckdb":
        conn = db.connect()
        try:
            return sorted(n for (n,) in conn.execute("SELECT epoch_ns(ts) FROM events").fetchall())
        finally:
            conn.close()
    epoch = at(1).replace(day=1, month=1, year=1970)
    return sorted((row[1] - epoch) // MICRO * 1000 for row in db.rows())


def test_nanoseconds_are_kept_or_refused_never_rounded(db):
    pa = pytest.importorskip("pyarrow")

    @_settings(db)
    @given(existing=nanosecond_batches(DAYS[1], rounded=st.just(True)), batch=nanosecond_batches(DAYS[1]),
           strategy=STRATEGY)
    def check(existing, batch, strategy):
        db.drop("events")
        db.create("events", f"k INTEGER, ts {NANO_TYPE[db.dialect]}, v TEXT")
        _write_ns(db, existing, strategy)
        before = _stored_nanoseconds(db)
        values = batch.column("ts").cast(pa.int64()).to_pylist()
        if db.dialect != "duckdb" and any(n % 1000 for n in values):
            with pytest.raises(IntervalViolationError, match="holds nanoseconds"):
                _write_ns(db, batch, strategy)
            assert _stored_nanoseconds(db) == before
            return
        _write_ns(db, batch, strategy)
        assert _stored_nanoseconds(db) == sorted(values)
        rerun = _write_ns(db, batch, strategy)
        assert _stored_nanoseconds(db) == sorted(values)
        assert (rerun.rows_inserted, rerun.rows_deleted) == (0, 0) or strategy == "replace"

    check()


def _write_ns(db, rows, strategy):
    """Merge on the time itself, so that two keys 1 ns apart are two rows."""
    conn = db.connect()
    try:
        return write_interval(conn, "events", rows, DAYS[1], time_column="ts", strategy=strategy,
                              unique_key=["ts"] if strategy == "merge" else None,
                              delete_missing=strategy == "merge")
    finally:
        conn.close()


def test_an_open_caller_transaction_is_refused_or_joined_never_lost(db):
    from tests.idempotent.test_caller_transaction import (CALLERS_ROW, _caller_insert,
                                                          skip_without_caller_transactions)

    skip_without_caller_transactions(db)

    assert not DAYS[0].contains(CALLERS_ROW[1])  # the caller's row lies in another interval
    if db.dialect == "iceberg":
        pytest.skip("SQL-specific: a pyiceberg Catalog has no transaction a caller could leave open")
    if db.dialect == "spark":
        pytest.skip("SQL-specific: a SparkSession has no transaction (Spark's Parquet tables have none)")

    @_settings(db)
    @given(existing=batches(DAYS[0]), rows=batches(DAYS[0]), strategy=STRATEGY, commit=st.booleans())
    def check(existing, rows, strategy, commit):
        _reset(db)
        _write(db, existing, DAYS[0], "replace")
        conn = db.connect()
        try:
            _caller_insert(conn, db, copy_v_to=getattr(db, "row_id_name", None) if db.dialect == "sqlite" else None)
            written, columns = _written(db, rows)
            try:
                write_interval(conn, "events", written, DAYS[0], time_column="ts", strategy=strategy,
                               unique_key=["k"] if strategy == "merge" else None,
                               delete_missing=strategy == "merge", columns=columns)
                joined = True
            except IdempotentWriteError as exc:
                assert "open transaction" in str(exc)
                joined = False
            assert joined == (db.dialect == "postgres")  # a savepoint; SQLite and DuckDB refuse
            conn.commit() if commit else conn.rollback()
        finally:
            conn.close()
        interval = _expected(rows) if joined and commit else _expected(existing)
        assert _interval_rows(db, DAYS[0]) == interval
        assert [r for r in _rows(db) if r not in interval] == ([CALLERS_ROW] if commit else [])

    check()


# Timestamp columns keeping fewer digits than microseconds, and their step in microseconds.
COARSE_TYPES = {"duckdb": [("TIMESTAMP_S", 1_000_000), ("TIMESTAMP_MS", 1000)],
                "postgres": [("timestamp(0)", 1_000_000), ("timestamptz(3)", 1000)]}


def coarse_batches(interval: Interval, step: int, max_size: int = 5):
    """Python rows with unique microsecond times inside the interval (near its end too), each
    rounded down to the column's step or not."""
    width = int((interval.end - interval.start) / MICRO)
    offset = st.one_of(st.sampled_from([0, step // 2, step - 1, step, width - step, width - 1]),
                       st.integers(0, width - 1))
    rows = st.lists(st.tuples(offset, st.booleans(), st.sampled_from(["a", "b", None])),
                    max_size=max_size)

    def build(drawn):
        times = {}
        for n, rounded, v in drawn:
            times.setdefault(n - n % step if rounded else n, v)
        return [{"k": k, "ts": interval.start + n * MICRO, "v": v} for k, (n, v) in enumerate(times.items())]

    return rows.map(build)


def test_timestamps_finer_than_the_column_are_refused_never_rounded(db):
    if db.dialect not in COARSE_TYPES:
        pytest.skip("SQLite's text and Delta's timestamps keep every microsecond (no coarser column type)")
    for kind, step in COARSE_TYPES[db.dialect]:

        @_settings(db)
        @given(existing=coarse_batches(DAYS[1], step), batch=coarse_batches(DAYS[1], step), strategy=STRATEGY)
        def check(existing, batch, strategy):
            db.run("DROP TABLE IF EXISTS events")
            db.create("events", f"k INTEGER, ts {kind}, v TEXT")
            existing = [dict(row, ts=row["ts"] - (row["ts"] - DAYS[1].start) % (step * MICRO)) for row in existing]
            existing = list({row["ts"]: row for row in existing}.values())
            _write_ns(db, existing, strategy)
            before = db.rows()
            if any((row["ts"] - DAYS[1].start) % (step * MICRO) for row in batch):
                with pytest.raises(IntervalViolationError, match="holds values finer than"):
                    _write_ns(db, batch, strategy)
                assert db.rows() == before
                return
            _write_ns(db, batch, strategy)
            assert _expected(batch) == db.rows()
            rerun = _write_ns(db, batch, strategy)
            assert _expected(batch) == db.rows()
            assert (rerun.rows_inserted, rerun.rows_deleted) == (0, 0) or strategy == "replace"

        check()


def _sqlite_text(instant, separator: str, offset, digits: int) -> str:
    """`instant` as text in a form SQLite's date functions read: `offset` minutes east (None:
    no suffix, UTC; "Z"), `digits` of fraction (0: none where the fraction is zero)."""
    local = instant.astimezone(timezone(timedelta(minutes=offset if isinstance(offset, int) else 0)))
    micro = f"{local.microsecond:06d}"
    fraction = (micro + "0" * digits)[:max(digits, len(micro.rstrip("0")))]
    zone = local.strftime("%z")
    suffix = "" if offset is None else "Z" if offset == "Z" else f"{zone[:3]}:{zone[3:]}"
    if not fraction and local.hour == local.minute == local.second == 0 and offset is None and digits == 0:
        return local.strftime("%Y-%m-%d")  # a plain date
    return local.strftime(f"%Y-%m-%d{separator}%H:%M:%S") + (f".{fraction}" if fraction else "") + suffix


def test_sqlite_overwrite_partition_replaces_exactly_the_partitions_utc_date(db):
    if db.dialect != "sqlite":
        pytest.skip("DuckDB, PostgreSQL and Delta compare typed DATE and timestamp values")
    partition = DAYS[1]
    near = st.integers(-2 * 86_400_000_000, 3 * 86_400_000_000 - 1).map(lambda n: partition.start + n * MICRO)
    edges = st.sampled_from([partition.start, partition.end, partition.start - MICRO, partition.end - MICRO])
    stored = st.lists(st.tuples(st.one_of(edges, near), st.sampled_from([" ", "T"]),
                                st.sampled_from([None, "Z", 0, 120, -330, 14 * 60, -(14 * 60 + 59)]),
                                st.sampled_from([0, 3, 6, 7])), max_size=8)

    @_settings(db)
    @given(stored=stored, indexed=st.booleans())
    def check(stored, indexed):
        db.run("DROP TABLE IF EXISTS events")
        db.create("events", "k INTEGER, ds TEXT, v TEXT")
        if indexed:
            db.run("CREATE INDEX events_ds ON events (ds)")
        texts = [_sqlite_text(instant, *form) for instant, *form in stored]
        for number, text in enumerate(texts):
            db.run("INSERT INTO events VALUES (?, ?, 'old')", (number, text))
        conn = db.connect()
        try:
            write_interval(conn, "events", [{"k": -1, "v": "new"}], partition, strategy="overwrite_partition")
        finally:
            conn.close()
        kept = sorted(text for (instant, *_), text in zip(stored, texts) if not partition.contains(instant))
        conn = db.connect()
        try:
            rows = conn.execute("SELECT ds, v FROM events").fetchall()
        finally:
            conn.close()
        assert sorted(ds for ds, v in rows if v == "old") == kept
        assert [ds for ds, v in rows if v == "new"] == [partition.partition_key.isoformat()]

    check()


def test_runs_with_lookback_equal_a_full_rebuild_from_the_final_source(db):
    """Daily runs with lookback=L, rows arriving up to L days late (and some runs retried): the
    table ends as a rebuild of every day from the final source would leave it."""
    days = [Interval(at(d), at(d + 1)) for d in (1, 2, 3, 4)]
    late_row = st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 24 * 60 - 1),
                         st.sampled_from(["a", "b", "é", None]))

    @_settings(db)
    @given(lookback=st.integers(0, 2), arrivals=st.lists(late_row, max_size=10),
           retried=st.sets(st.integers(0, 3), max_size=2), strategy=STRATEGY)
    def check(lookback, arrivals, retried, strategy):
        _reset(db)
        # Row k of day `day` reaches the source before the run of day `day + delay`.
        source = [(day + min(delay, lookback), {"k": k, "ts": days[day].start + timedelta(minutes=minute), "v": v})
                  for k, (day, delay, minute, v) in enumerate(arrivals) if day + min(delay, lookback) <= 3]
        for run in range(4):
            for _ in range(2 if run in retried else 1):
                known = [row for arrived, row in source if arrived <= run]
                widened = Interval(days[run].start - lookback * timedelta(days=1), days[run].end)
                rows, columns = _written(db, [r for r in known if widened.contains(r["ts"])])
                conn = db.connect()
                try:
                    write_interval(conn, "events", rows, days[run], time_column="ts", strategy=strategy,
                                   unique_key=["k"] if strategy == "merge" else None,
                                   delete_missing=strategy == "merge", columns=columns, lookback=lookback)
                finally:
                    conn.close()
        assert _rows(db) == _expected([row for _, row in source])

    check()
