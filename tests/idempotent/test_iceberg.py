"""What only the Iceberg engine has: snapshots, catalog errors, the staged-count guard, the
commit check against the snapshot read, and the README's example (the shared scenarios run on
Iceberg through the `db` fixture)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")

from dagguard.idempotent import (ConnectionFailedError, DatabaseRefusedError, IntervalViolationError,  # noqa: E402
                                 TargetTableError, UnsupportedConnectionError, write_interval)
from dagguard.idempotent.checksum import batch_checksum  # noqa: E402
from dagguard.idempotent.engines import engine_for  # noqa: E402
from dagguard.idempotent.engines.iceberg_catalog import catalog_properties  # noqa: E402
from dagguard.idempotent.ledger import RunInfo  # noqa: E402
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch  # noqa: E402
from tests.idempotent.helpers import DAY1, DAY2, at, events  # noqa: E402
from tests.idempotent.iceberg_helpers import iceberg_database  # noqa: E402


@pytest.fixture(params=["unpartitioned", "day"])
def lake(request, tmp_path):
    return iceberg_database(tmp_path, partitioned=request.param == "day")


def _snapshots(lake, table="events") -> int:
    catalog = lake.connect()
    try:
        return len(catalog.load_table(lake.identifier(table)).snapshots())
    finally:
        catalog.close()


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_an_unchanged_rerun_commits_no_snapshot(lake, strategy):
    lake.create("events", "k INTEGER, ts TIMESTAMPTZ, ds DATE, v TEXT")
    from datetime import date

    # Every column given: replace gives a column the batch lacks NULL, so it would rewrite.
    rows = [{"k": k, "ts": at(1, k), "ds": date(2026, 1, 1), "v": f"v{k}"} for k in range(1, 4)]
    options = dict(time_column="ts", strategy=strategy, unique_key=["k"] if strategy == "merge" else None)
    write_interval(lake.url, "events", rows, DAY1, **options)
    write_interval(lake.url, "events", [{"k": 9, "ts": at(2, 9), "ds": date(2026, 1, 2), "v": "day2"}], DAY2,
                   **options)
    before = _snapshots(lake)
    again = write_interval(lake.url, "events", rows, DAY1, **options)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)
    assert _snapshots(lake) == before
    assert len(lake.rows()) == 4
    changed = write_interval(lake.url, "events", rows[:2] + [{**rows[2], "v": "new"}], DAY1, **options)
    assert (changed.rows_inserted + changed.rows_updated) >= 1 and _snapshots(lake) > before
    assert ("new",) in lake.rows("events", "v") and ("v3",) not in lake.rows("events", "v")


def test_one_write_is_one_commit_carrying_its_checksum(lake):
    """pyiceberg records an overwrite as a delete and an append snapshot, committed together:
    the catalog's table moves from the old snapshot to the new one in one step."""
    lake.create()
    first = write_interval(lake.url, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    catalog = lake.connect()
    table = catalog.load_table(("default", "events"))
    history = [entry.snapshot_id for entry in table.metadata.snapshot_log]
    current = table.current_snapshot()
    catalog.close()
    write_interval(lake.url, "events", events((1, at(1, 1), "b")), DAY1, time_column="ts")
    catalog = lake.connect()
    table = catalog.load_table(("default", "events"))
    added = [s for s in table.snapshots() if s.snapshot_id not in history]
    catalog.close()
    assert {s.summary.additional_properties["dagguard.interval"] for s in added} == {
        f"{DAY1.start.isoformat()}/{DAY1.end.isoformat()}"}
    assert current.summary.additional_properties["dagguard.checksum"] == first.checksum
    # The metadata file before the commit named the old snapshot; the one after, the last new one.
    assert added[0].parent_snapshot_id == current.snapshot_id


def test_nanoseconds_are_refused_by_a_microsecond_timestamptz(lake):
    pa = pytest.importorskip("pyarrow")
    lake.create()
    nano = pa.table({"k": [1], "ts": pa.array([1767225600_000_000_001], pa.timestamp("ns", tz="UTC")), "v": ["a"]})
    with pytest.raises(IntervalViolationError, match="holds nanoseconds"):
        write_interval(lake.url, "events", nano, DAY1, time_column="ts")
    assert lake.rows() == []


def test_bad_targets_are_one_clear_error(lake, tmp_path):
    lake.create()
    lake.create("plain", "k INTEGER, v TEXT")
    lake.create("dated", "k INTEGER, day DATE, v TEXT")
    rows = events((1, at(1, 1), "a"))
    with pytest.raises(TargetTableError, match="table missing does not exist in the iceberg"):
        write_interval(lake.url, "missing", rows, DAY1, time_column="ts")
    with pytest.raises(TargetTableError, match="table nowhere.events does not exist"):
        write_interval(lake.url, "nowhere.events", rows, DAY1, time_column="ts")
    with pytest.raises(TargetTableError, match="has no column"):
        write_interval(lake.url, "plain", [{"k": 1, "ts": at(1, 1), "v": "a"}], DAY1, time_column="ts")
    with pytest.raises(TargetTableError, match="is an Iceberg date, not a timestamp"):
        write_interval(lake.url, "dated", [{"k": 1, "day": at(1, 1), "v": "a"}], DAY1, time_column="day")
    missing = f"iceberg+sqlite:///{tmp_path / 'no' / 'catalog.db'}?warehouse=file://{tmp_path}"
    with pytest.raises(ConnectionFailedError, match="no Iceberg SQL catalog at"):
        write_interval(missing, "events", rows, DAY1, time_column="ts")
    with pytest.raises(UnsupportedConnectionError, match="names no Iceberg catalog"):
        write_interval("iceberg://x", "events", rows, DAY1, time_column="ts")


def test_an_unreachable_rest_catalog_is_a_connection_error():
    # Port 1 on loopback refuses at once: no network is involved.
    with pytest.raises(ConnectionFailedError, match="cannot connect to iceberg\\+rest://127.0.0.1:1"):
        write_interval("iceberg+rest://127.0.0.1:1", "default.events", events((1, at(1, 1), "a")), DAY1,
                       time_column="ts")


def test_catalog_urls_become_load_catalog_properties():
    assert catalog_properties("iceberg+sqlite:////abs/c.db?warehouse=file:///w&catalog=prod") == (
        "prod", {"type": "sql", "uri": "sqlite:////abs/c.db", "warehouse": "file:///w"})
    assert catalog_properties("iceberg+postgresql://u@h/db?warehouse=s3://b/w")[1]["uri"] == "postgresql+psycopg://u@h/db"
    assert catalog_properties("iceberg+rests://cat.example:8181/api")[1] == {
        "type": "rest", "uri": "https://cat.example:8181/api"}


def test_a_required_column_left_null_is_refused_and_nothing_committed(lake):
    lake.create("events", "k BIGINT, ts TIMESTAMPTZ, v TEXT, req TEXT NOT NULL")
    write_interval(lake.url, "events", [{"k": 1, "ts": at(1, 1), "v": "a", "req": "x"}], DAY1, time_column="ts")
    before, snapshots = lake.rows(), _snapshots(lake)
    with pytest.raises((DatabaseRefusedError, IntervalViolationError), match="req"):
        write_interval(lake.url, "events", [{"k": 2, "ts": at(1, 2), "v": "b"}], DAY1, time_column="ts")
    with pytest.raises(IntervalViolationError, match="cannot be stored exactly"):
        write_interval(lake.url, "events", [{"k": 2 ** 70, "ts": at(1, 2), "v": "b", "req": "y"}], DAY1,
                       time_column="ts")
    assert lake.rows() == before and _snapshots(lake) == snapshots


def test_an_overwrite_that_keeps_old_files_is_refused_before_commit(lake, monkeypatch):
    """The guard against pyiceberg #3758 (an overwrite that skipped a manifest left the old
    files beside the new ones): a staged table holding more rows than old - in scope + written
    is not committed. Here overwrite is made to forget its delete, as that bug did."""
    from pyiceberg.table import Transaction

    lake.create()
    write_interval(lake.url, "events", events((1, at(1, 1), "a"), (2, at(1, 2), "b")), DAY1, time_column="ts")
    before, snapshots = lake.rows(), _snapshots(lake)
    monkeypatch.setattr(Transaction, "overwrite", lambda self, df, overwrite_filter=None, snapshot_properties=None,
                        **kw: self.append(df, snapshot_properties=snapshot_properties))
    with pytest.raises(DatabaseRefusedError, match="leaving 4 rows where 2 were expected"):
        write_interval(lake.url, "events", events((1, at(1, 1), "A"), (2, at(1, 2), "B")), DAY1, time_column="ts")
    assert lake.rows() == before and _snapshots(lake) == snapshots


def test_a_commit_onto_a_newer_snapshot_is_retried_from_a_fresh_read(lake, monkeypatch):
    """The control for test_a_stale_read_is_never_committed: the losing writer's commit did
    fail on the snapshot check (CommitFailedException) and was re-planned, not forced."""
    import dagguard.idempotent.engines.iceberg as iceberg

    lake.create()
    conflicts = []
    real = iceberg.is_conflict
    monkeypatch.setattr(iceberg, "is_conflict", lambda exc: conflicts.append(type(exc).__name__) or real(exc))
    barrier = threading.Barrier(2)

    def writer(k):
        catalog = lake.connect()
        spec = WriteSpec.build("events", "merge", "ts", ["k"], False, "ds")
        batch = prepare_batch(spec, [{"k": k, "ts": at(1, k), "v": "x"}], None, DAY1)
        barrier.wait()
        write_batch(engine_for(catalog), spec, batch, DAY1, batch_checksum(batch), RunInfo(),
                    lambda number, sql: time.sleep(0.3))
        catalog.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert "CommitFailedException" in conflicts
    assert [row[0] for row in lake.rows()] == [1, 2]


def test_the_operator_refuses_an_iceberg_conn_with_the_alternative(lake):
    pytest.importorskip("airflow.sdk")
    from dagguard.idempotent import IntervalMergeOperator

    lake.create()
    operator = IntervalMergeOperator(task_id="load", conn_id=lake.url, source_sql="SELECT 1",
                                     target_table="events", time_column="ts", unique_key=["k"])
    context = {"data_interval_start": DAY1.start, "data_interval_end": DAY1.end, "run_id": "r"}
    with pytest.raises(UnsupportedConnectionError, match="an Iceberg catalog runs no SQL.*@idempotent_write"):
        operator.execute(context)


def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    from tests.test_readme_snippets import snippet

    code = snippet("### Apache Iceberg", "python")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines() == ["2 0 0", "0 0 0", "1 1 0"]
    assert Path("lake/catalog.db").is_file()


def test_a_merge_rerun_with_delete_missing_deletes_what_the_first_merge_kept(lake):
    """The first merge kept a stored row its batch lacked; the same batch again, now with
    delete_missing, must delete it, though the batch's checksum and the files are unchanged."""
    lake.create()
    options = dict(time_column="ts", strategy="merge", unique_key=["k"])
    write_interval(lake.url, "events", events((2, at(1, 2), "kept")), DAY1, **options)
    batch = events((1, at(1, 1), "a"))
    write_interval(lake.url, "events", batch, DAY1, **options)
    again = write_interval(lake.url, "events", batch, DAY1, delete_missing=True, **options)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 1)
    assert lake.rows() == [(1, at(1, 1), "a")]
    before = _snapshots(lake)
    rerun = write_interval(lake.url, "events", batch, DAY1, delete_missing=True, **options)
    assert (rerun.rows_inserted, rerun.rows_updated, rerun.rows_deleted) == (0, 0, 0) and _snapshots(lake) == before


def _arrow_rows(values):
    import pyarrow as pa
    from datetime import date

    return pa.table({"k": pa.array([k for k, _ in values], pa.int64()),
                     "ts": pa.array([at(1, k) for k, _ in values], pa.timestamp("us", tz="UTC")),
                     "ds": pa.array([date(2026, 1, 1)] * len(values), pa.date32()),
                     "v": pa.array([v for _, v in values], pa.string())})


def test_an_arrow_batch_is_fingerprinted_in_any_row_order_and_a_changed_value_tells(lake):
    lake.create("events", "k INTEGER, ts TIMESTAMPTZ, ds DATE, v TEXT")
    values = [(1, "a"), (2, "b"), (3, "c")]
    first = write_interval(lake.url, "events", _arrow_rows(values), DAY1, time_column="ts")
    before = _snapshots(lake)
    again = write_interval(lake.url, "events", _arrow_rows(values[::-1]), DAY1, time_column="ts")
    assert first.checksum == again.checksum and first.checksum.startswith("3:iceberg-")
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and _snapshots(lake) == before
    changed = write_interval(lake.url, "events", _arrow_rows([(1, "a"), (2, "b"), (3, "C")]), DAY1,
                             time_column="ts")
    assert changed.checksum != first.checksum and (changed.rows_inserted, changed.rows_deleted) == (3, 3)
    assert sorted(lake.rows("events", "v")) == [("C",), ("a",), ("b",)]


def test_a_rerun_of_a_write_recorded_with_the_older_arrow_checksum_commits_nothing(lake):
    """Writes before the fingerprint recorded checksum.arrow_checksum (`rows:arrow-...`) in the
    snapshot summary: their rerun is still recognised, and a changed batch is still written."""
    lake.create("events", "k INTEGER, ts TIMESTAMPTZ, ds DATE, v TEXT")
    catalog = lake.connect()
    spec = WriteSpec.build("events", "replace", "ts", [], False, "ds")
    batch = prepare_batch(spec, _arrow_rows([(1, "a"), (2, "b")]), None, DAY1)
    old = write_batch(engine_for(catalog), spec, batch, DAY1, batch_checksum(batch), RunInfo())
    catalog.close()
    assert ":arrow-" in old.checksum
    before = _snapshots(lake)
    again = write_interval(lake.url, "events", _arrow_rows([(2, "b"), (1, "a")]), DAY1, time_column="ts")
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and _snapshots(lake) == before
    changed = write_interval(lake.url, "events", _arrow_rows([(1, "a"), (2, "x")]), DAY1, time_column="ts")
    assert (changed.rows_inserted, changed.rows_deleted) == (2, 2) and _snapshots(lake) > before


def test_the_rows_replaced_are_counted_from_metadata_or_from_the_files_the_interval_cuts(lake):
    """A file wholly inside the interval is counted from its metadata, one that straddles it (here
    two days appended in one file) by reading its time column."""
    import pyarrow as pa

    lake.create("events", "k INTEGER, ts TIMESTAMPTZ, ds DATE, v TEXT")
    catalog = lake.connect()
    table = catalog.load_table(lake.identifier("events"))
    both = pa.table({"k": pa.array([1, 2, 3], pa.int64()),
                     "ts": pa.array([at(1, 1), at(1, 2), at(2, 3)], pa.timestamp("us", tz="UTC")),
                     "ds": pa.array([None, None, None], pa.date32()), "v": ["a", "b", "c"]})
    table.append(both.cast(table.schema().as_arrow()))
    catalog.close()
    straddled = write_interval(lake.url, "events", _arrow_rows([(5, "x")]), DAY1, time_column="ts")
    assert (straddled.rows_inserted, straddled.rows_deleted) == (1, 2)
    inside = write_interval(lake.url, "events", _arrow_rows([(6, "y"), (7, "z")]), DAY1, time_column="ts")
    assert (inside.rows_inserted, inside.rows_deleted) == (2, 1)
    assert sorted(lake.rows("events", "v")) == [("c",), ("y",), ("z",)]
