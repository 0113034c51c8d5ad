"""The record of a Spark scope's files (spark_scope): a rerun whose scope still holds the files
of dagguard's last write compares its batch with the fingerprint recorded beside them instead
of reading the rows; any other file there (a write outside dagguard, a write stopped before
its record) and the rows are read again, as before the record existed."""

from __future__ import annotations

import pytest

from dagguard.idempotent import write_interval
from dagguard.idempotent.engines import spark_scope, spark_write
from tests.idempotent.helpers import DAY1, at, events
from tests.idempotent.test_spark import _files, _location, _rows, database  # noqa: F401 (a fixture)

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

BATCH = events((1, at(1, 1), "a"), (2, at(1, 2), "b"))
STRATEGIES = {"replace": {}, "merge": {"unique_key": "k"}, "overwrite_partition": {}}


def _table(spark, strategy: str) -> None:
    if strategy == "overwrite_partition":
        spark.sql("CREATE TABLE events (k INT, v STRING, ts TIMESTAMP, ds DATE) USING parquet PARTITIONED BY (ds)")
    else:
        spark.sql("CREATE TABLE events (k INT, v STRING, ts TIMESTAMP) USING parquet PARTITIONED BY (ts)")


def _write(spark, strategy: str, rows=BATCH):
    return write_interval(spark, "events", rows, DAY1, time_column="ts", strategy=strategy, **STRATEGIES[strategy])


@pytest.fixture
def scope_reads(monkeypatch):
    """The number of times a write reads the scope's rows for their fingerprint."""
    calls = []
    real = spark_write.fingerprint

    def counted(frame, columns):
        calls.append(columns)
        return real(frame, columns)

    monkeypatch.setattr(spark_write, "fingerprint", counted)
    monkeypatch.setattr(spark_write, "plan_merge", _counted_merge(calls, spark_write.plan_merge))
    return calls


def _counted_merge(calls, real):
    def counted(*args, **kwargs):
        calls.append("merge")
        return real(*args, **kwargs)
    return counted


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_a_rerun_over_the_files_dagguard_wrote_is_told_unchanged_without_reading_them(spark, database, strategy,
                                                                                       scope_reads):
    _table(spark, strategy)
    # (A merge records nothing, not knowing the scope's rows without a job: its rerun uses the
    # record of the replace before it.)
    _write(spark, "replace" if strategy == "merge" else strategy)
    before = _files(spark, "events")
    scope_reads.clear()
    again = _write(spark, strategy)
    assert scope_reads == []
    assert _files(spark, "events") == before
    assert (again.rows_inserted, again.rows_updated, again.rows_deleted, again.row_count) == (0, 0, 0, 2)
    # A changed batch is told changed from the record too, and written.
    changed = _write(spark, strategy, events((1, at(1, 1), "A"), (2, at(1, 2), "b")))
    assert scope_reads == (["merge"] if strategy == "merge" else [])
    assert _rows(spark) == [(1, at(1, 1), "A"), (2, at(1, 2), "b")]
    assert changed.rows_deleted == (0 if strategy == "merge" else 2)


@pytest.mark.parametrize("strategy", ["replace", "overwrite_partition"])
def test_a_write_outside_dagguard_voids_the_record(spark, database, strategy, scope_reads):
    _table(spark, strategy)
    _write(spark, strategy)
    # The same partitions rewritten by hand, other values in them.
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        from pyspark.sql import functions as F

        # (Checkpointed: Spark refuses to overwrite a table the same plan reads.)
        upper = spark.table("events").withColumn("v", F.upper("v")).localCheckpoint()
        upper.select(*spark.table("events").columns).write.insertInto("events", overwrite=True)
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    spark.catalog.refreshTable("events")
    assert sorted(r.v for r in spark.table("events").collect()) == ["A", "B"]
    scope_reads.clear()
    again = _write(spark, strategy)
    assert len(scope_reads) == 1  # the rows were read, and found changed
    assert (again.rows_inserted, again.rows_deleted) == (2, 2)
    assert [v for _, _, v in _rows(spark)] == ["a", "b"]


def test_a_table_without_a_record_is_read_once_then_recorded(spark, database, scope_reads):
    _table(spark, "replace")
    _write(spark, "replace")
    folder = _location(spark, "events") / "_dagguard"
    records = list(folder.glob("scope-*.json"))
    assert len(records) == 1
    records[0].unlink()  # a table written before the record existed
    scope_reads.clear()
    assert _write(spark, "replace").rows_inserted == 0
    assert len(scope_reads) == 1 and len(list(folder.glob("scope-*.json"))) == 1
    scope_reads.clear()
    assert _write(spark, "replace").rows_inserted == 0
    assert scope_reads == []


def test_a_record_of_other_columns_is_not_used(spark, database, scope_reads):
    _table(spark, "replace")
    _write(spark, "replace")
    spark.sql("ALTER TABLE events ADD COLUMNS (note STRING)")
    scope_reads.clear()
    rows = [{**row, "note": None} for row in BATCH]
    assert _write(spark, "replace", rows).rows_inserted == 0  # the same rows, NULL in the new column
    assert len(scope_reads) == 1


def test_a_write_stopped_before_its_record_makes_the_rerun_read_the_rows(spark, database, monkeypatch, scope_reads):
    _table(spark, "replace")
    _write(spark, "replace")
    changed = events((1, at(1, 1), "A"), (2, at(1, 2), "B"))

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt("killed after the data, before the record")

    with monkeypatch.context() as patch:
        patch.setattr(spark_scope.ScopeRecord, "record", stopped)
        with pytest.raises(KeyboardInterrupt):
            _write(spark, "replace", changed)
    assert [v for _, _, v in _rows(spark)] == ["A", "B"]
    scope_reads.clear()
    # The record names the first write's files, gone: the rows are read and the batch written.
    again = _write(spark, "replace")
    assert len(scope_reads) == 1 and again.rows_inserted == 2
    assert [v for _, _, v in _rows(spark)] == ["a", "b"]


def test_replace_drops_the_hours_its_new_rows_leave_empty_after_writing(spark, database):
    _table(spark, "replace")
    _write(spark, "replace", events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 3), "c")))
    result = _write(spark, "replace", events((1, at(1, 1), "a"), (4, at(1, 4), "d")))
    assert sorted({path.split("/")[0] for path in _files(spark, "events")}) == [
        "ts=2026-01-01 01%3A00%3A00", "ts=2026-01-01 04%3A00%3A00"]
    assert (result.rows_inserted, result.rows_deleted) == (2, 3)
    assert _write(spark, "replace", events((1, at(1, 1), "a"), (4, at(1, 4), "d"))).rows_inserted == 0


def test_untouched_folders_are_those_whose_files_are_all_still_there():
    before = {"t/a=1/x": (1, 1), "t/a=2/y": (1, 1), "t/a=3/z": (1, 1)}
    after = {"t/a=1/x2": (1, 2), "t/a=2/y": (1, 1), "t/a=3/z": (1, 1), "t/a=3/w": (1, 1), "t/a=4/v": (1, 1)}
    assert spark_scope.untouched_folders(before, after) == ["t/a=2"]


def test_a_merge_drops_the_hours_its_result_leaves_empty_after_writing(spark, database):
    _table(spark, "replace")
    _write(spark, "replace", events((1, at(1, 1), "a"), (2, at(1, 2), "b"), (3, at(1, 3), "c")))
    # Key 2 moves from hour 2 to hour 5; key 3 is missing and deleted: hours 2 and 3 empty.
    result = write_interval(spark, "events", events((1, at(1, 1), "a"), (2, at(1, 5), "b")), DAY1,
                            time_column="ts", strategy="merge", unique_key="k", delete_missing=True)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (0, 1, 1)
    assert sorted({path.split("/")[0] for path in _files(spark, "events")}) == [
        "ts=2026-01-01 01%3A00%3A00", "ts=2026-01-01 05%3A00%3A00"]
    assert _rows(spark) == [(1, at(1, 1), "a"), (2, at(1, 5), "b")]


def test_hadoops_listing_reads_the_files_the_local_one_does(spark, database):
    """Other file systems than the driver's are listed through Hadoop: the same sizes, and
    modification times of the same instants (milliseconds there, nanoseconds here)."""
    _table(spark, "replace")
    _write(spark, "replace")
    local = spark_scope.list_files(spark, spark.table("events"))
    assert len(local) == 2 and all(name.startswith("file:") for name in local)
    through_hadoop = spark_scope.hadoop_statuses(spark, list(local))
    assert {name: (size, mtime // 1_000_000) for name, (size, mtime) in local.items()} == through_hadoop
