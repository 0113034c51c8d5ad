"""The period a partitioned run writes, read from Airflow 3.3's own timetables and mappers, and
the errors of runs that own nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

sdk = pytest.importorskip("airflow.sdk")

from airflow.sdk import (Asset, CronPartitionTimetable, DayWindow, FanOutMapper,  # noqa: E402
                         PartitionedAssetTimetable, PartitionedAtRuntime, RollupMapper, StartOfDayMapper,
                         StartOfHourMapper, StartOfMonthMapper, WeekWindow, Window)

from dagguard.idempotent import EmptyIntervalError, Interval, NoRunIntervalError, interval_from_context  # noqa: E402
from dagguard.idempotent.partitions import partition_interval, run_scope, write_scope  # noqa: E402

UTC = timezone.utc
A, B = Asset("a"), Asset("b")


def _hours(interval):
    return (interval.end - interval.start) / timedelta(hours=1)


@pytest.mark.parametrize("cron, start, hours", [
    ("0 * * * *", datetime(2026, 1, 5, 3, tzinfo=UTC), 1),
    ("*/15 * * * *", datetime(2026, 1, 5, 3, 45, tzinfo=UTC), 0.25),
    ("0 0 * * *", datetime(2026, 1, 5, tzinfo=UTC), 24),
    ("0 0 * * 1", datetime(2026, 1, 5, tzinfo=UTC), 24 * 7),
], ids=["hourly", "quarter-hour", "daily", "weekly"])
def test_a_cron_partition_lasts_until_the_next_tick(cron, start, hours):
    interval = partition_interval(CronPartitionTimetable(cron, timezone="UTC"), start)
    assert interval.start == start and _hours(interval) == hours


def test_a_daily_cron_in_a_zone_steps_over_dst_as_the_wall_clock_does():
    import pendulum

    timetable = CronPartitionTimetable("0 0 * * *", timezone="Europe/Paris")
    # Paris moves its clocks forward on 2026-03-29: that local day has 23 hours.
    interval = partition_interval(timetable, pendulum.datetime(2026, 3, 29, tz="Europe/Paris"))
    assert interval == Interval(datetime(2026, 3, 28, 23, tzinfo=UTC), datetime(2026, 3, 29, 22, tzinfo=UTC))


@pytest.mark.parametrize("timetable, days", [
    (PartitionedAssetTimetable(assets=A, default_partition_mapper=StartOfDayMapper()), 1),
    (PartitionedAssetTimetable(assets=A, default_partition_mapper=StartOfHourMapper()), 1 / 24),
    (PartitionedAssetTimetable(assets=A, default_partition_mapper=RollupMapper(
        upstream_mapper=StartOfDayMapper(), window=WeekWindow())), 7),
    (PartitionedAssetTimetable(assets=A & B, partition_mapper_config={
        A: StartOfDayMapper(), B: RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())}), 1),
    (PartitionedAssetTimetable(assets=A, default_partition_mapper=FanOutMapper(
        upstream_mapper=StartOfDayMapper(), window=DayWindow())), 1 / 24),
], ids=["day", "hour", "rollup-week", "two-assets-agree", "fan-out-to-hours"])
def test_an_asset_partition_lasts_its_mappers_period(timetable, days):
    start = datetime(2026, 1, 5, tzinfo=UTC)
    interval = partition_interval(timetable, start)
    assert interval.start == start and _hours(interval) == days * 24


def test_a_month_mapper_steps_a_calendar_month_in_its_zone():
    timetable = PartitionedAssetTimetable(assets=A, default_partition_mapper=StartOfMonthMapper(timezone="Asia/Taipei"))
    interval = partition_interval(timetable, datetime(2026, 1, 31, 16, tzinfo=UTC))  # Feb 1st in Taipei
    assert interval.end == datetime(2026, 2, 28, 16, tzinfo=UTC)


@pytest.mark.parametrize("timetable", [
    PartitionedAssetTimetable(assets=A),  # IdentityMapper: the key has no period of its own
    PartitionedAssetTimetable(assets=A & B, partition_mapper_config={A: StartOfDayMapper()}),  # B: identity
    PartitionedAssetTimetable(assets=A & B, partition_mapper_config={A: StartOfDayMapper(), B: StartOfHourMapper()}),
    PartitionedAssetTimetable(assets=A, default_partition_mapper=RollupMapper(
        upstream_mapper=StartOfDayMapper(), window=WeekWindow(direction=Window.Direction.BACKWARD))),
    PartitionedAtRuntime(),
    None,
], ids=["identity", "one-identity", "disagree", "backward-window", "at-runtime", "no-dag"])
def test_no_period_where_the_timetable_does_not_give_one(timetable):
    assert partition_interval(timetable, datetime(2026, 1, 5, tzinfo=UTC)) is None


class _Dag:
    def __init__(self, timetable):
        self.timetable = timetable


HOURLY = {"run_id": "manual__1", "partition_key": "2026-01-05T03:00:00",
          "partition_date": datetime(2026, 1, 5, 3, tzinfo=UTC),
          "dag": _Dag(CronPartitionTimetable("0 * * * *", timezone="UTC")),
          "data_interval_start": None, "data_interval_end": None}


def test_a_partitioned_run_writes_its_partitions_period():
    scope = run_scope(HOURLY)
    assert scope.partition_key == "2026-01-05T03:00:00"
    assert scope.interval == Interval(datetime(2026, 1, 5, 3, tzinfo=UTC), datetime(2026, 1, 5, 4, tzinfo=UTC))
    assert interval_from_context(HOURLY) == scope.interval


def test_a_partition_without_a_period_is_written_only_by_key():
    context = {**HOURLY, "partition_key": "us", "partition_date": None, "dag": _Dag(PartitionedAtRuntime())}
    assert write_scope(context, "overwrite_partition", "region").interval is None
    with pytest.raises(NoRunIntervalError, match="partition 'us', and it has no partition_date.*"
                                                 "use strategy='overwrite_partition' \\(the rows whose region"):
        write_scope(context, "merge", "region")


def test_a_run_with_neither_interval_nor_partition_is_refused_with_the_fix():
    with pytest.raises(NoRunIntervalError, match="no data interval and no partition key") as info:
        run_scope({"run_id": "manual__2", "data_interval_start": None})
    assert isinstance(info.value, EmptyIntervalError)  # the error older code catches
    assert "CronPartitionTimetable" in str(info.value)


def _result(key, inserted=2):
    from dagguard.idempotent import WriteResult

    return WriteResult(table="events", interval_start=None, interval_end=None, strategy="overwrite_partition",
                       rows_inserted=inserted, rows_updated=0, rows_deleted=0, row_count=2, checksum="2:abc",
                       engine="sqlite 3.40", partition_key=key)


def test_the_written_partition_is_announced_on_the_tasks_assets():
    from airflow.sdk import AssetAlias, BaseOperator
    from airflow.sdk.execution_time.context import OutletEventAccessors
    from airflow.sdk.execution_time.task_runner import _serialize_outlet_events

    from dagguard.idempotent.outlets import announce_partition

    events = OutletEventAccessors()
    task = BaseOperator(task_id="load", outlets=[A, AssetAlias("by_region")])
    assert announce_partition({"outlet_events": events, "task": task}, _result("us")) == ["a"]
    # What the task runner sends to Airflow for the asset: one event, for the written key.
    [sent] = list(_serialize_outlet_events(events))
    assert (sent["dest_asset_key"], sent["partition_key"]) == ({"name": "a", "uri": "a"}, "us")
    assert sent["extra"]["dagguard"] == {
        "table": "events", "partition_key": "us", "strategy": "overwrite_partition", "row_count": 2,
        "rows_inserted": 2, "rows_updated": 0, "rows_deleted": 0, "checksum": "2:abc"}


def test_a_write_without_a_partition_announces_nothing():
    from airflow.sdk import BaseOperator
    from airflow.sdk.execution_time.context import OutletEventAccessors

    from dagguard.idempotent.outlets import announce_partition

    events = OutletEventAccessors()
    task = BaseOperator(task_id="load", outlets=[A])
    assert announce_partition({"outlet_events": events, "task": task}, _result(None)) == []
    assert events[A].partition_keys == set() and events[A].extra == {}
