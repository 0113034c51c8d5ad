"""What only Delta Lake has: table versions, partition files, DeltaTable conns, the ledger beside
the table, concurrent writers in other processes and writers killed mid-write. The scenarios
every engine shares run on Delta through the `db` fixture (tests/idempotent/delta_lake.py)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

from typer.testing import CliRunner  # noqa: E402

from dagguard.cli import app  # noqa: E402
from dagguard.idempotent import (ConcurrentWriteError, DatabaseRefusedError, IntervalViolationError,  # noqa: E402
                                 TargetTableError, UnsupportedConnectionError, read_ledger,
                                 write_interval)
from dagguard.idempotent import DeltaLake  # noqa: E402
from dagguard.idempotent.engines.delta import lake_from_url  # noqa: E402
from dagguard.idempotent.identifiers import TableName  # noqa: E402
from tests.idempotent.helpers import DAY1, DAY2, UTC, at, events  # noqa: E402

WRITER = Path(__file__).with_name("delta_writer_process.py")
REPO = Path(__file__).resolve().parents[2]
SCHEMA = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("v", pa.string())])


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """A lake with an empty `events` table."""
    deltalake.DeltaTable.create(str(tmp_path / "events"), schema=SCHEMA)
    return tmp_path


def _url(lake: Path) -> str:
    return f"delta://{lake}"


def _version(lake: Path, table: str = "events") -> int:
    return deltalake.DeltaTable(str(lake / table)).version()


def _rows(lake: Path, table: str = "events") -> list[tuple]:
    data = deltalake.DeltaTable(str(lake / table)).to_pyarrow_table()
    return sorted(tuple(row.values()) for row in data.to_pylist())


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_each_write_is_one_version_and_an_unchanged_rerun_writes_none(lake, strategy):
    rows = events((1, at(1, 1), "a"), (2, at(1, 2), "b"))
    options = {"time_column": "ts", "strategy": strategy, "unique_key": "k"}
    write_interval(_url(lake), "events", rows, DAY1, **options)
    assert _version(lake) == 1
    again = write_interval(_url(lake), "events", list(reversed(rows)), DAY1, **options)
    assert _version(lake) == 1 and (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0)
    changed = write_interval(_url(lake), "events", events((1, at(1, 1), "A"), (2, at(1, 2), "b")), DAY1, **options)
    assert _version(lake) == 2
    assert (changed.rows_inserted, changed.rows_updated, changed.rows_deleted) == (
        (0, 1, 0) if strategy == "merge" else (2, 0, 2))
    # Three writes in the ledger, the rerun included, as on the SQL engines.
    assert [e.rows_inserted for e in read_ledger(_url(lake)).entries] == [2, 0, changed.rows_inserted]


def test_an_interval_edited_by_another_writer_is_rewritten_not_skipped(lake):
    rows = events((1, at(1, 1), "a"))
    write_interval(_url(lake), "events", rows, DAY1, time_column="ts")
    deltalake.DeltaTable(str(lake / "events")).update(updates={"v": "'edited'"})
    write_interval(_url(lake), "events", rows, DAY1, time_column="ts")
    assert _rows(lake) == [(1, at(1, 1), "a")] and _version(lake) == 3


def test_overwrite_partition_of_a_partitioned_table_replaces_only_its_files(tmp_path):
    schema = pa.schema([("k", pa.int64()), ("ds", pa.date32()), ("v", pa.string())])
    deltalake.DeltaTable.create(str(tmp_path / "daily"), schema=schema, partition_by=["ds"])
    for interval, value in ((DAY1, "one"), (DAY2, "two")):
        write_interval(_url(tmp_path), "daily", [{"k": 1, "v": value}], interval, strategy="overwrite_partition")
    table = deltalake.DeltaTable(str(tmp_path / "daily"))
    day2_files = [f for f in table.file_uris() if "ds=2026-01-02" in f]
    version = table.version()
    write_interval(_url(tmp_path), "daily", [{"k": 1, "v": "uno"}, {"k": 2, "v": "dos"}], DAY1,
                   strategy="overwrite_partition")
    table = deltalake.DeltaTable(str(tmp_path / "daily"))
    assert table.version() == version + 1  # one commit
    assert [f for f in table.file_uris() if "ds=2026-01-02" in f] == day2_files  # not rewritten
    assert _rows(tmp_path, "daily") == [(1, date(2026, 1, 1), "uno"), (1, date(2026, 1, 2), "two"),
                                        (2, date(2026, 1, 1), "dos")]
    write_interval(_url(tmp_path), "daily", [{"k": 1, "v": "uno"}, {"k": 2, "v": "dos"}], DAY1,
                   strategy="overwrite_partition")
    assert deltalake.DeltaTable(str(tmp_path / "daily")).version() == version + 1  # unchanged: no commit


def test_a_deltatable_conn_keeps_its_ledger_beside_the_table(lake):
    table = deltalake.DeltaTable(str(lake / "events"))
    write_interval(table, "orders", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    assert (lake / "events" / "_dagguard" / "write_log" / "_delta_log").is_dir()
    assert [e.table_name for e in read_ledger(table).entries] == ["orders"]
    assert _rows(lake) == [(1, at(1, 1), "a")]


def test_the_ledger_survives_vacuum_and_the_cli_reads_it(lake):
    write_interval(_url(lake), "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    write_interval(_url(lake), "events", events((1, at(1, 1), "changed")), DAY1, time_column="ts")
    table = deltalake.DeltaTable(str(lake / "events"))
    removed = table.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    assert removed and not any("_dagguard" in path for path in removed)
    result = CliRunner().invoke(app, ["ledger", "--conn", _url(lake), "--format", "json"])
    assert result.exit_code == 1, result.output  # written twice with different rows
    report = json.loads(result.stdout)
    assert len(report["entries"]) == 2 and len(report["conflicts"]) == 1
    assert CliRunner().invoke(app, ["ledger", "--conn", _url(lake), "--table", "events"]).exit_code == 1


@pytest.mark.parametrize("url, error, message", [
    ("delta://relative/lake", UnsupportedConnectionError, "names no absolute path"),
    ("delta+ftp://host/lake", UnsupportedConnectionError, "unsupported Delta Lake store 'ftp'"),
])
def test_bad_lake_urls_are_clear_errors(url, error, message):
    with pytest.raises(error, match=message):
        write_interval(url, "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")


def test_a_folder_that_is_not_a_table_and_a_table_without_the_column(lake):
    (lake / "plain").mkdir()
    with pytest.raises(TargetTableError, match=r"table plain does not exist in the delta lake: .*\(no _delta_log\)"):
        write_interval(_url(lake), "plain", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    with pytest.raises(TargetTableError, match="has no column"):
        write_interval(_url(lake), "events", [{"k": 1, "when": at(1, 1)}], DAY1, time_column="when")
    assert _version(lake) == 0


def test_not_null_and_types_the_table_cannot_hold_are_refused_before_any_commit(tmp_path):
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False), ("ts", pa.timestamp("us", tz="UTC"))])
    deltalake.DeltaTable.create(str(tmp_path / "strict"), schema=schema)
    with pytest.raises(IntervalViolationError, match=r"row 1 .* NULL in column 'k', which the Delta table declares NOT NULL"):
        write_interval(_url(tmp_path), "strict", [{"k": 1, "ts": at(1, 1)}, {"k": None, "ts": at(1, 2)}], DAY1,
                       time_column="ts")
    with pytest.raises(IntervalViolationError, match=r"column 'k' .* int32 cannot store exactly \(row 0: 8589934592\)"):
        write_interval(_url(tmp_path), "strict", [{"k": 2 ** 33, "ts": at(1, 1)}], DAY1, time_column="ts")
    assert deltalake.DeltaTable(str(tmp_path / "strict")).version() == 0


def test_timestamp_ntz_columns_hold_utc_wall_time(tmp_path):
    schema = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.string())])
    deltalake.DeltaTable.create(str(tmp_path / "naive"), schema=schema)
    for _ in range(2):
        write_interval(_url(tmp_path), "naive", events((1, at(1, 0), "first"), (2, at(1, 23), "late")), DAY1,
                       time_column="ts", strategy="merge", unique_key="k")
    write_interval(_url(tmp_path), "naive", events((3, at(2, 0), "next")), DAY2, time_column="ts")
    assert _rows(tmp_path, "naive") == [(1, datetime(2026, 1, 1, 0), "first"), (2, datetime(2026, 1, 1, 23), "late"),
                                        (3, datetime(2026, 1, 2, 0), "next")]


def test_a_write_delta_rs_refuses_is_a_dagguard_error(lake, monkeypatch):
    def refuse(*args, **kwargs):
        raise deltalake.exceptions.DeltaError("Generic DeltaTable error: the store refused\npreview...")

    monkeypatch.setattr("deltalake.write_deltalake", refuse)
    with pytest.raises(DatabaseRefusedError, match="delta-rs refused the write of events .* the store refused$"):
        write_interval(_url(lake), "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")


def test_a_commit_that_keeps_losing_gives_up_with_concurrent_write_error(lake, monkeypatch):
    from dagguard.idempotent.engines.delta import DeltaEngine

    def lose(*args, **kwargs):
        raise deltalake.exceptions.CommitFailedError("Failed to commit transaction: 1")

    monkeypatch.setattr("deltalake.write_deltalake", lose)
    monkeypatch.setattr(DeltaEngine, "max_attempts", 3)
    with pytest.raises(ConcurrentWriteError, match="after 3 commits that lost to concurrent writers"):
        write_interval(_url(lake), "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")


def _run_writers(lake: Path, writers: list[tuple[str, int, str]], rounds: int, rows: int) -> list[list[str]]:
    """Start (strategy, day, name) writers together; each writes `rounds` batches. Their tags."""
    start_at = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, str(WRITER), str(lake), strategy, str(day), name, str(rounds),
                               str(rows), str(start_at)], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
             for strategy, day, name in writers]
    tags = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        tags.append(out.split())
    return tags


def _day(lake: Path, day: int) -> list[tuple]:
    start = datetime(2026, 1, day, tzinfo=UTC)
    return [row for row in _rows(lake) if start <= row[1] < start + timedelta(days=1)]


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_two_processes_writing_one_interval_at_once_leave_one_writers_batch(tmp_path, strategy):
    """Every round both writers commit the same interval; the losers redo their write. After
    each pair of rounds the interval holds one whole batch: never both, never half."""
    rows = 500
    raced = False
    # On a busy machine two writers may happen not to collide in one try: the outcome is checked
    # on every try, and a try is repeated (on a fresh lake) until the race was real.
    for attempt in range(4):
        lake = tmp_path / f"try{attempt}"
        deltalake.DeltaTable.create(str(lake / "events"), schema=SCHEMA)
        tags = _run_writers(lake, [(strategy, 1, "a"), (strategy, 1, "b")], rounds=8, rows=rows)
        assert all(len(t) == 8 for t in tags)
        day1 = _day(lake, 1)
        assert len(day1) == rows and [r[0] for r in day1] == list(range(rows))
        assert len({r[2] for r in day1}) == 1 and day1[0][2] in (tags[0][-1], tags[1][-1])
        # 16 writes, each committed once on top of the version it read.
        assert _version(lake) <= 16
        # The race was real when some attempts wrote their files and lost the commit (files no
        # version ever added).
        if _uncommitted_files(lake) > 0:
            raced = True
            break
    assert raced, "the two writers never collided in 4 tries"


def _uncommitted_files(lake: Path) -> int:
    """Data files of `events` that no commit added: the files of attempts that lost their commit."""
    table = deltalake.DeltaTable(str(lake / "events"))
    metrics = [entry.get("operationMetrics") or {} for entry in table.history()]
    added = sum(int(m.get("num_added_files", m.get("num_target_files_added", 0))) for m in metrics)
    on_disk = [p for p in (lake / "events").rglob("*.parquet") if "_dagguard" not in p.parts]
    return len(on_disk) - added


def test_two_processes_writing_different_intervals_at_once_lose_nothing(lake):
    """delta-rs #3622: a predicate overwrite rebased over another writer's commit deleted that
    writer's new file. dagguard commits only on the version it read, so neither day loses rows."""
    rows = 500
    tags = _run_writers(lake, [("replace", 1, "a"), ("replace", 2, "b"), ("merge", 3, "c")], rounds=8, rows=rows)
    for day, writer_tags in zip((1, 2, 3), tags):
        rows_of_day = _day(lake, day)
        assert [r[0] for r in rows_of_day] == list(range(rows)), f"day {day} lost or doubled rows"
        assert {r[2] for r in rows_of_day} == {writer_tags[-1]}


def test_a_writer_killed_mid_write_leaves_the_previous_version_whole(lake):
    """SIGKILL at random points of many writes: the table always reads as the last committed
    version, whose day 1 is one whole batch, and a rerun then writes the interval normally."""
    rows = 20_000
    _run_writers(lake, [("replace", 1, "seed")], rounds=1, rows=rows)
    random.seed(22)
    for attempt in range(6):
        proc = subprocess.Popen([sys.executable, str(WRITER), str(lake), "replace", "1", f"killed{attempt}", "0",
                                 str(rows), "0"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        time.sleep(random.uniform(1.5, 4.0))  # past the imports, somewhere in a write
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        day1 = _day(lake, 1)
        assert [r[0] for r in day1] == list(range(rows))
        assert len({r[2] for r in day1}) == 1
    _run_writers(lake, [("replace", 1, "rerun")], rounds=1, rows=rows)
    assert {r[2] for r in _day(lake, 1)} == {"rerun-0"}


def test_a_lake_object_passes_storage_options_through():
    lake = DeltaLake("s3://bucket/lake", storage_options={"AWS_REGION": "eu-west-1"})
    assert lake.table_uri(TableName.parse("sales.orders")) == "s3://bucket/lake/sales/orders"
    assert lake.options() == {"AWS_REGION": "eu-west-1"} and "eu-west-1" not in repr(lake)
    assert lake_from_url("delta+s3://bucket/lake") == DeltaLake("s3://bucket/lake")
    assert lake_from_url("delta:///data/lake") == DeltaLake("/data/lake")


def test_without_numpy_a_rerun_is_rewritten_never_wrongly_skipped(lake, monkeypatch):
    monkeypatch.setattr("dagguard.idempotent.engines.delta_write.fingerprint", lambda table: None)
    rows = pa.table({"k": [1], "ts": pa.array([at(1, 1)], pa.timestamp("us", tz="UTC")), "v": ["a"]})
    write_interval(_url(lake), "events", rows, DAY1, time_column="ts")
    deltalake.DeltaTable(str(lake / "events")).update(updates={"v": "'edited'"})
    again = write_interval(_url(lake), "events", rows, DAY1, time_column="ts")
    assert (again.rows_inserted, again.rows_deleted) == (1, 1) and _rows(lake) == [(1, at(1, 1), "a")]


def test_a_ledger_that_cannot_be_appended_to_says_the_write_was_committed(lake, monkeypatch):
    from dagguard.idempotent import LedgerError

    real = deltalake.write_deltalake

    def refuse_the_ledger(target, *args, **kwargs):
        if "_dagguard" in getattr(target, "table_uri", str(target)):
            raise OSError("permission denied")
        return real(target, *args, **kwargs)

    monkeypatch.setattr("deltalake.write_deltalake", refuse_the_ledger)
    with pytest.raises(LedgerError, match=r"the write of events .* was committed, but its ledger row .* permission denied"):
        write_interval(_url(lake), "events", events((1, at(1, 1), "a")), DAY1, time_column="ts")
    assert _rows(lake) == [(1, at(1, 1), "a")] and _version(lake) == 1  # committed once, not redone


def _arrow_day(day: int, value: str) -> pa.Table:
    return pa.table({"k": [1, 2], "ts": pa.array([at(day, 1), at(day, 2)], pa.timestamp("us", tz="UTC")),
                     "v": [value, value]})


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_a_rerun_is_recognised_from_the_log_without_reading_the_rows(lake, monkeypatch, strategy):
    options = {"time_column": "ts", "strategy": strategy, "unique_key": "k"}
    write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, **options)
    write_interval(_url(lake), "events", _arrow_day(2, "b"), DAY2, **options)  # another interval since

    def unread(*args):
        raise AssertionError("the rows were read")

    monkeypatch.setattr("dagguard.idempotent.engines.delta_write._interval_holds", unread)
    again = write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, **options)
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted) == (0, 0, 0) and _version(lake) == 2


def test_after_a_commit_outside_dagguard_the_rows_decide(lake):
    write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, time_column="ts")
    # A commit dagguard did not make, which rewrites the files and leaves the values as they were.
    deltalake.DeltaTable(str(lake / "events")).update(updates={"v": "'a'"})
    version = _version(lake)
    assert version == 2
    again = write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, time_column="ts")
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and _version(lake) == version


def test_merging_the_batch_a_replace_wrote_is_recognised_from_the_log(lake, monkeypatch):
    write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, time_column="ts")
    monkeypatch.setattr("dagguard.idempotent.engines.delta_write._interval_holds",
                        lambda *args: pytest.fail("the rows were read"))
    again = write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, time_column="ts", strategy="merge",
                           unique_key="k")
    assert (again.rows_inserted, again.rows_updated) == (0, 0) and _version(lake) == 1


def test_a_merge_into_an_empty_interval_is_one_overwrite(lake):
    write_interval(_url(lake), "events", _arrow_day(2, "other"), DAY2, time_column="ts")
    result = write_interval(_url(lake), "events", _arrow_day(1, "a"), DAY1, time_column="ts", strategy="merge",
                            unique_key="k")
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (2, 0, 0)
    assert deltalake.DeltaTable(str(lake / "events")).history(1)[0]["operation"] == "WRITE"
    assert len(_rows(lake)) == 4


def test_the_ledger_answers_the_latest_write_of_the_interval_among_many_and_is_checkpointed_often(lake):
    """The rerun check reads the ledger through DataFusion (file statistics prune it), and a new
    ledger is checkpointed every 10 appends, so neither grows with the number of writes."""
    from dagguard.idempotent.engines.delta import DeltaEngine
    from dagguard.idempotent.engines.delta_ledger import last_checksum, ledger_uri

    days = [DAY1.start + timedelta(days=n) for n in range(12)]
    for day in days:
        write_interval(_url(lake), "events", events((1, day + timedelta(hours=1), "a")),
                       type(DAY1)(day, day + timedelta(days=1)), time_column="ts")
    last = write_interval(_url(lake), "events", events((1, at(1, 1), "b"), (2, at(1, 2), "b")), DAY1,
                          time_column="ts")
    engine = DeltaEngine(DeltaLake(str(lake)))
    assert last_checksum(engine, TableName.parse("events"), DAY1) == last.checksum
    assert last_checksum(engine, TableName.parse("events"), DAY2).startswith("1:")
    ledger = deltalake.DeltaTable(ledger_uri(engine, TableName.parse("events")))
    assert ledger.metadata().configuration.get("delta.checkpointInterval") == "10"
    assert any(name.endswith(".checkpoint.parquet") for name in os.listdir(Path(ledger.table_uri.removeprefix("file://")) / "_delta_log"))


def _full_rows(values, day=1):
    return pa.table({"k": pa.array([k for k, _ in values], pa.int64()),
                     "ts": pa.array([at(day, k) for k, _ in values], pa.timestamp("us", tz="UTC")),
                     "v": pa.array([v for _, v in values], pa.string())})


def test_a_merge_of_every_column_keeps_the_rows_it_lacks_and_counts_what_differs(lake):
    """A batch with every column is merged in Arrow and written as one overwrite of the interval."""
    options = {"time_column": "ts", "strategy": "merge", "unique_key": "k"}
    write_interval(_url(lake), "events", _full_rows([(1, "a"), (2, "b"), (3, "c")]), DAY1, **options)
    write_interval(_url(lake), "events", _full_rows([(9, "other")], day=2), DAY2, **options)
    version = _version(lake)
    merged = write_interval(_url(lake), "events", _full_rows([(2, "B"), (3, "c"), (4, "d")]), DAY1, **options)
    assert (merged.rows_inserted, merged.rows_updated, merged.rows_deleted) == (1, 1, 0)
    assert _version(lake) == version + 1
    assert [(r[0], r[2]) for r in _rows(lake)] == [(1, "a"), (2, "B"), (3, "c"), (4, "d"), (9, "other")]
    # Rows already held, the interval holding more: nothing differs, so no version is written.
    same = write_interval(_url(lake), "events", _full_rows([(1, "a"), (4, "d")]), DAY1, **options)
    assert (same.rows_inserted, same.rows_updated, same.rows_deleted) == (0, 0, 0) and _version(lake) == version + 1
    pruned = write_interval(_url(lake), "events", _full_rows([(1, "a"), (4, "D")]), DAY1, delete_missing=True,
                            **options)
    assert (pruned.rows_inserted, pruned.rows_updated, pruned.rows_deleted) == (0, 1, 2)
    assert [(r[0], r[2]) for r in _rows(lake)] == [(1, "a"), (4, "D"), (9, "other")]


def test_a_merge_with_a_null_key_is_left_to_delta_rs_which_matches_null_with_null(lake):
    options = {"time_column": "ts", "strategy": "merge", "unique_key": "k"}
    rows = pa.table({"k": pa.array([None, 1], pa.int64()),
                     "ts": pa.array([at(1, 1), at(1, 2)], pa.timestamp("us", tz="UTC")), "v": ["n", "a"]})
    write_interval(_url(lake), "events", rows, DAY1, **options)
    again = write_interval(_url(lake), "events", rows.set_column(2, "v", pa.array(["N", "a"])), DAY1, **options)
    assert (again.rows_inserted, again.rows_updated) == (0, 1)
    data = deltalake.DeltaTable(str(lake / "events")).to_pyarrow_table().to_pylist()
    assert sorted((row["k"] is None, row["v"]) for row in data) == [(False, "a"), (True, "N")]


def test_a_merge_into_an_interval_holding_a_key_twice_updates_both_rows_as_delta_rs_does(lake):
    deltalake.write_deltalake(str(lake / "events"), _full_rows([(1, "a"), (1, "b"), (2, "c")]), mode="append")
    merged = write_interval(_url(lake), "events", _full_rows([(1, "X"), (2, "c")]), DAY1, time_column="ts",
                            strategy="merge", unique_key="k")
    assert merged.rows_updated == 2
    assert [(r[0], r[2]) for r in _rows(lake)] == [(1, "X"), (1, "X"), (2, "c")]
