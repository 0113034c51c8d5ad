"""IntervalMergeOperator on a partitioned run: the partition's period, or the rows of its key."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

pytest.importorskip("airflow.sdk")

from airflow.sdk import CronPartitionTimetable, PartitionedAtRuntime  # noqa: E402

from dagguard.idempotent import InvalidArgumentError, IntervalMergeOperator, read_ledger  # noqa: E402
from tests.idempotent.helpers import at, make_database  # noqa: E402

UTC = timezone.utc
HOUR = "2026-01-01T01:00:00"


class _Dag:
    def __init__(self, timetable):
        self.timetable = timetable


def _context(key, timetable, partition_date=None):
    return {"run_id": f"manual__{key}", "partition_key": key, "partition_date": partition_date,
            "data_interval_start": None, "data_interval_end": None, "dag": _Dag(timetable)}


def _seed(db, target_columns="k INTEGER, ts {ts}, v TEXT"):
    db.create("raw_events", "k INTEGER, ts {ts}, v TEXT, region TEXT")
    db.create("events", target_columns)
    for k, ts, v, region in ((1, at(1, 0, 59), "before", "us"), (2, at(1, 1), "first", "us"),
                             (3, at(1, 1, 59), "last", "eu"), (4, at(1, 2), "after", "us")):
        stored = ts.strftime("%Y-%m-%d %H:%M:%S.%f+00:00") if db.dialect == "sqlite" else ts
        db.run("INSERT INTO raw_events VALUES (?, ?, ?, ?)", (k, stored, v, region))


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "postgres", "delta"])
def test_a_cron_partition_merges_its_hour_once(dialect, request, tmp_path):
    db = make_database(dialect, request, tmp_path)
    _seed(db)
    operator = IntervalMergeOperator(
        task_id="load", conn_id=db.url, target_table="events", time_column="ts", unique_key=["k"],
        source_sql="SELECT k, ts, v FROM raw_events WHERE ts >= %(start)s AND ts < %(end)s")
    context = _context(HOUR, CronPartitionTimetable("0 * * * *", timezone="UTC"), datetime(2026, 1, 1, 1, tzinfo=UTC))
    first, second = operator.execute(context), operator.execute(context)
    assert (first["rows_inserted"], second["rows_inserted"], second["rows_updated"]) == (2, 0, 0)
    assert (first["interval_start"], first["partition_key"]) == ("2026-01-01T01:00:00+00:00", HOUR)
    assert db.rows(columns="k, v") == [(2, "first"), (3, "last")]
    assert [e.partition_key for e in read_ledger(db.url).entries] == [HOUR, HOUR]


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "postgres"])
def test_a_runtime_partition_overwrites_the_rows_of_its_key(dialect, request, tmp_path):
    db = make_database(dialect, request, tmp_path)
    _seed(db, "k INTEGER, ts {ts}, v TEXT, region TEXT")
    operator = IntervalMergeOperator(
        task_id="load", conn_id=db.url, target_table="events", time_column="ts",
        strategy="overwrite_partition", partition_column="region",
        source_sql="SELECT k, ts, v FROM raw_events WHERE region = %(partition_key)s")
    for key in ("us", "eu", "us"):
        result = operator.execute(_context(key, PartitionedAtRuntime()))
    assert (result["partition_key"], result["interval_start"]) == ("us", None)
    assert db.rows(columns="k, region") == [(1, "us"), (2, "us"), (3, "eu"), (4, "us")]


def test_a_query_reading_a_period_the_partition_lacks_is_refused(request, tmp_path):
    db = make_database("sqlite", request, tmp_path)
    _seed(db, "k INTEGER, ts {ts}, v TEXT, region TEXT")
    db.run("INSERT INTO events VALUES (9, NULL, 'kept', 'us')")
    operator = IntervalMergeOperator(
        task_id="load", conn_id=db.url, target_table="events", time_column="ts",
        strategy="overwrite_partition", partition_column="region",
        source_sql="SELECT k, ts, v FROM raw_events WHERE ts >= %(start)s")
    with pytest.raises(InvalidArgumentError, match=r"source_sql uses %\(start\)s, which this run does not have"):
        operator.execute(_context("us", PartitionedAtRuntime()))
    assert db.rows(columns="k, v") == [(9, "kept")]
