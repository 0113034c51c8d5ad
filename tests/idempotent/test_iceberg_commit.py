"""Iceberg writes whose data files are written while the batch's fingerprint is computed
(iceberg_commit.write_files + stage_files): the same rows, snapshots and checksums as the
sequential path, a batch found to repeat the last commit only after its files were written
commits nothing and leaves no file, the staged-count guard still refuses, and commits from
before the probe was recorded are still recognised."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")
pa = pytest.importorskip("pyarrow")

import dagguard.idempotent.engines.iceberg as iceberg  # noqa: E402
from dagguard.idempotent import DatabaseRefusedError, write_interval  # noqa: E402
from dagguard.idempotent.engines import iceberg_commit, iceberg_ledger, iceberg_rows  # noqa: E402
from tests.idempotent.helpers import DAY1, at  # noqa: E402
from tests.idempotent.iceberg_helpers import iceberg_database  # noqa: E402


@pytest.fixture(params=["unpartitioned", "day"])
def lake(request, tmp_path):
    database = iceberg_database(tmp_path, partitioned=request.param == "day")
    database.create("events", "k INTEGER, ts TIMESTAMPTZ, ds DATE, v TEXT")
    return database


def _batch(*rows: tuple[int, str]) -> object:
    """An Arrow batch of `events` (k, ts at k o'clock on day 1, ds, v) from (k, v) pairs."""
    return pa.table({"k": pa.array([k for k, _ in rows], pa.int32()),
                     "ts": pa.array([at(1, k) for k, _ in rows], pa.timestamp("us", "UTC")),
                     "ds": pa.array([DAY1.start.date()] * len(rows), pa.date32()), "v": [v for _, v in rows]})


def _row(k: int, v: str) -> tuple[object, ...]:
    return (k, at(1, k), DAY1.start.date(), v)


def _state(lake) -> tuple[int, set[str]]:
    """(snapshots, the warehouse's data files)."""
    catalog = lake.connect()
    try:
        snapshots = len(catalog.load_table(("default", "events")).snapshots())
    finally:
        catalog.close()
    return snapshots, {str(p) for p in Path(lake.path / "warehouse").rglob("*.parquet")
                       if "dagguard_write_log" not in str(p)}


def _summary(lake) -> dict[str, str]:
    catalog = lake.connect()
    try:
        return catalog.load_table(("default", "events")).current_snapshot().summary.additional_properties
    finally:
        catalog.close()


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
def test_a_rewrite_whose_probe_differs_writes_its_files_before_its_checksum_and_commits_the_same(
        lake, strategy, monkeypatch):
    written = []
    real = iceberg_commit.write_files
    monkeypatch.setattr(iceberg_commit, "write_files", lambda *a: written.append(1) or real(*a))
    options = dict(time_column="ts", strategy=strategy, unique_key=["k"] if strategy == "merge" else None,
                   partition_column="ds")
    first = write_interval(lake.url, "events", _batch((1, "a"), (2, "b"), (3, "c")), DAY1, **options)
    assert written == [1]  # no earlier commit of the interval: nothing to compare before writing
    assert _summary(lake)["dagguard.checksum"] == first.checksum and first.checksum.startswith("3:iceberg-")
    # Other text only: the probe (no text in it) is the same, so the fingerprints are compared first.
    text = write_interval(lake.url, "events", _batch((3, "C"), (1, "a"), (2, "b")), DAY1, **options)
    assert written == [1] and _summary(lake)["dagguard.checksum"] == text.checksum != first.checksum
    # Another key: the probe differs, so the files are written while the fingerprint is computed.
    keys = write_interval(lake.url, "events", _batch((1, "a"), (2, "b"), (4, "d")), DAY1, **options)
    assert written == [1, 1] and _summary(lake)["dagguard.checksum"] == keys.checksum
    kept = [_row(3, "C")] if strategy == "merge" else []  # a merge keeps the rows its batch lacks
    assert lake.rows() == [_row(1, "a"), _row(2, "b"), *kept, _row(4, "d")]
    snapshots = _state(lake)[0]
    # Its rerun is compared before writing, and matches the checksum the overlapped path recorded.
    again = write_interval(lake.url, "events", _batch((4, "d"), (2, "b"), (1, "a")), DAY1, **options)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted, again.checksum) == (0, 0, 0, keys.checksum)
    assert _state(lake)[0] == snapshots and len(written) == 2


def test_a_batch_found_to_repeat_after_its_files_were_written_commits_nothing_and_leaves_no_file(lake, monkeypatch):
    write_interval(lake.url, "events", _batch((1, "a"), (2, "b")), DAY1, time_column="ts")
    before = _state(lake)
    # A probe that never matches: the rerun is only found once the fingerprint is known.
    probes = iter(range(100))
    monkeypatch.setattr(iceberg_rows, "probe", lambda rows: f"p{next(probes)}")
    written = []
    real = iceberg_commit.write_files
    monkeypatch.setattr(iceberg_commit, "write_files", lambda *a: written.append(1) or real(*a))
    again = write_interval(lake.url, "events", _batch((2, "b"), (1, "a")), DAY1, time_column="ts")
    assert written == [1]
    assert (again.rows_inserted, again.rows_deleted) == (0, 0)
    assert _state(lake) == before


def test_an_overwrite_of_written_files_that_keeps_old_files_is_refused_and_its_files_deleted(lake, monkeypatch):
    """The staged-count guard (pyiceberg #3758) on the path that stages written files: a delete
    that drops nothing leaves the old rows beside the new ones, which is not committed."""
    from pyiceberg.table import Transaction

    write_interval(lake.url, "events", _batch((1, "a"), (2, "b")), DAY1, time_column="ts")
    before, rows = _state(lake), lake.rows()
    monkeypatch.setattr(Transaction, "delete", lambda self, *a, **kw: None)
    with pytest.raises(DatabaseRefusedError, match="leaving 4 rows where 2 were expected"):
        write_interval(lake.url, "events", _batch((1, "A"), (3, "C")), DAY1, time_column="ts")
    assert lake.rows() == rows and _state(lake) == before


def test_a_commit_recorded_without_a_probe_is_still_recognised_by_its_rerun(lake, monkeypatch):
    """Commits written before the probe was recorded carry none: their reruns are compared
    before anything is written, as they were."""
    real = iceberg._summary
    monkeypatch.setattr(iceberg, "_summary", lambda *a: {key: value for key, value in real(*a).items()
                                                         if key != "dagguard.probe"})
    write_interval(lake.url, "events", _batch((1, "a"), (2, "b")), DAY1, time_column="ts")
    monkeypatch.setattr(iceberg, "_summary", real)
    assert "dagguard.probe" not in _summary(lake)
    before = _state(lake)
    written = []
    monkeypatch.setattr(iceberg_commit, "write_files", lambda *a: written.append(1) or [])
    again = write_interval(lake.url, "events", _batch((2, "b"), (1, "a")), DAY1, time_column="ts")
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and written == [] and _state(lake) == before


def test_the_probe_tells_rows_apart_whatever_their_order():
    table = _batch((1, "a"), (2, "b"), (3, "c"))
    assert iceberg_rows.probe(table) == iceberg_rows.probe(_batch((3, "c"), (1, "a"), (2, "b")))
    assert iceberg_rows.probe(table) != iceberg_rows.probe(table.slice(0, 2))
    other_time = table.set_column(1, "ts", pa.array([at(1, 1), at(1, 2), at(1, 4)], pa.timestamp("us", "UTC")))
    assert iceberg_rows.probe(table) != iceberg_rows.probe(other_time)
    assert iceberg_rows.probe(table) != iceberg_rows.probe(table.drop_columns(["ds"]))
    nulls = pa.table({"k": pa.array([1, None], pa.int64())})
    assert iceberg_rows.probe(nulls) != iceberg_rows.probe(pa.table({"k": pa.array([1, 0], pa.int64())}))


def _ledger(lake) -> list[tuple[str, int, int]]:
    """(checksum, rows inserted, rows deleted) of each ledger row, oldest first."""
    from dagguard.idempotent import read_ledger

    return [(e.checksum, e.rows_inserted, e.rows_deleted) for e in read_ledger(lake.url, "events").entries]


def test_the_ledger_row_staged_with_the_write_exists_only_once_the_data_is_committed(lake, monkeypatch):
    from pyiceberg.table import Transaction

    first = write_interval(lake.url, "events", _batch((1, "a"), (2, "b")), DAY1, time_column="ts")
    assert _ledger(lake) == [(first.checksum, 2, 0)]
    staged = []
    real = iceberg_ledger.staged_append
    monkeypatch.setattr(iceberg_ledger, "staged_append", lambda *a: staged.append(1) or real(*a))
    monkeypatch.setattr(Transaction, "delete", lambda self, *a, **kw: None)  # refused: see above
    with pytest.raises(DatabaseRefusedError):
        write_interval(lake.url, "events", _batch((1, "A"), (3, "C")), DAY1, time_column="ts")
    assert staged == [1] and _ledger(lake) == [(first.checksum, 2, 0)]  # staged, never committed
    monkeypatch.undo()
    second = write_interval(lake.url, "events", _batch((1, "A"), (3, "C")), DAY1, time_column="ts")
    assert _ledger(lake) == [(first.checksum, 2, 0), (second.checksum, 2, 2)]


def test_a_ledger_row_appended_by_another_writer_meanwhile_keeps_both_rows(lake, monkeypatch):
    """Another writer's row lands between the staging of this write's row and its commit: the
    staged commit is rebuilt or redone, and both rows stay."""
    write_interval(lake.url, "events", _batch((1, "a")), DAY1, time_column="ts")
    real = iceberg_ledger.staged_append

    def staged_then_raced(catalog, namespace, row):
        transaction = real(catalog, namespace, row)
        iceberg_ledger.append_row(iceberg_ledger.ledger_table(catalog, namespace), {**row, "checksum": "other"})
        return transaction

    monkeypatch.setattr(iceberg_ledger, "staged_append", staged_then_raced)
    second = write_interval(lake.url, "events", _batch((1, "b"), (2, "c")), DAY1, time_column="ts")
    assert [checksum for checksum, _, _ in _ledger(lake)][1:] in (["other", second.checksum],
                                                                  [second.checksum, "other"])
    assert len(_ledger(lake)) == 3


def test_the_ledger_keeps_few_snapshots_and_every_row(lake, monkeypatch):
    """Each append copies the ledger's metadata, which lists its snapshots: past KEPT_SNAPSHOTS
    the older ones are expired, and the rows stay (a ledger grown by earlier code included)."""
    monkeypatch.setattr(iceberg_ledger, "KEPT_SNAPSHOTS", 1_000)  # the earlier code: no expiry
    checksums = [write_interval(lake.url, "events", _batch((1, f"v{n}")), DAY1, time_column="ts").checksum
                 for n in range(6)]
    catalog = lake.connect()
    assert len(catalog.load_table(("default", "dagguard_write_log")).snapshots()) == 6
    monkeypatch.setattr(iceberg_ledger, "KEPT_SNAPSHOTS", 3)
    checksums += [write_interval(lake.url, "events", _batch((1, f"w{n}")), DAY1, time_column="ts").checksum
                  for n in range(4)]
    checksums.append(write_interval(lake.url, "events", _batch((1, "w3")), DAY1, time_column="ts").checksum)  # a rerun
    assert len(catalog.load_table(("default", "dagguard_write_log")).snapshots()) <= 3
    catalog.close()
    assert [checksum for checksum, _, _ in _ledger(lake)] == checksums


def test_the_staging_transaction_builds_its_metadata_once_per_staged_change_and_commits_as_pyiceberg_does(lake):
    """iceberg_commit.transaction keeps the staged metadata between reads, and builds it afresh
    once a change is staged: an overwrite staged through it commits the same rows and snapshots
    as pyiceberg's own Transaction."""
    import pyiceberg.table as tables
    import pyiceberg.table.update as updates

    write_interval(lake.url, "events", _batch((1, "a"), (2, "b")), DAY1, time_column="ts")
    catalog = lake.connect()
    try:
        table = catalog.load_table(("default", "events"))
        rows = _batch((2, "B"), (3, "c")).cast(table.schema().as_arrow())
        built = []
        real = updates.update_table_metadata
        transaction = iceberg_commit.transaction(table)
        assert transaction.table_metadata is transaction.table_metadata  # built once, kept
        before = transaction.table_metadata.current_snapshot().snapshot_id
        scope = iceberg_rows.interval_filter("ts", "timestamptz", DAY1.start, DAY1.end)
        files = iceberg_commit.write_files(transaction, rows)
        tables.update_table_metadata, saved = (lambda *a, **k: built.append(1) or real(*a, **k)), \
            tables.update_table_metadata
        try:
            iceberg_commit.stage_files(transaction, files, scope, {"note": "x"})
            staged = transaction.table_metadata
        finally:
            tables.update_table_metadata = saved
        # A change staged: the metadata is built again and holds the new snapshots.
        assert staged.current_snapshot().snapshot_id != before
        assert staged.current_snapshot().summary.additional_properties["note"] == "x"
        assert 0 < len(built) <= 8  # (pyiceberg's own Transaction builds it ~30 times for this)
        iceberg_commit.check_staged_count(table, transaction, 2, 2)
        transaction.commit_transaction()
    finally:
        catalog.close()
    assert lake.rows() == [_row(2, "B"), _row(3, "c")]


def test_the_staging_transaction_keeps_nothing_when_its_updates_are_not_a_tuple(lake):
    """Kept metadata is told stale by the identity of the staged updates, which only a tuple
    (replaced on every change) makes safe: a pyiceberg keeping them in a list gets its own
    metadata built on every read."""
    write_interval(lake.url, "events", _batch((1, "a")), DAY1, time_column="ts")
    catalog = lake.connect()
    try:
        transaction = iceberg_commit.transaction(catalog.load_table(("default", "events")))
        transaction._updates = list(transaction._updates)
        assert transaction.table_metadata is not transaction.table_metadata
        assert transaction._kept is None
    finally:
        catalog.close()
