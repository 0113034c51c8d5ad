"""Run counts match what Airflow 3.3 does (FACTS.md: measured on Airflow 3.3.2)."""

from __future__ import annotations

import datetime as dt

import pytest

from dagguard.model.schedules.schedules import Recurrence, count_runs, format_count, recurrence
from dagguard.model.basics.values import AssetSchedule, Timetable

START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
NOW = dt.datetime(2026, 1, 3, 12, 30, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(("schedule", "trigger", "data_interval"), [
    ("@daily", 3, 2),
    ("@hourly", 61, 60),
    ("*/15 * * * *", 243, 242),
    (dt.timedelta(hours=6), 11, 10),
])
def test_catchup_counts_as_airflow(schedule, trigger, data_interval):
    on_3 = recurrence(schedule, present=True, airflow_version="3", create_cron_data_intervals=False)
    on_2 = recurrence(schedule, present=True, airflow_version="2", create_cron_data_intervals=False)
    flag = recurrence(schedule, present=True, airflow_version="3", create_cron_data_intervals=True)
    assert count_runs(on_3, START, NOW) == trigger
    assert count_runs(on_2, START, NOW) == data_interval
    assert count_runs(flag, START, NOW) == data_interval


def test_explicit_timetables_choose_their_own_semantics():
    trigger = Timetable("trigger", "0 0 * * *", None, False, "airflow.sdk.CronTriggerTimetable")
    interval = Timetable("data_interval", "0 0 * * *", None, False, "airflow.sdk.CronDataIntervalTimetable")
    assert count_runs(recurrence(trigger, present=True, airflow_version="2", create_cron_data_intervals=False), START, NOW) == 3
    assert count_runs(recurrence(interval, present=True, airflow_version="3", create_cron_data_intervals=False), START, NOW) == 2


@pytest.mark.parametrize("schedule", [None, "@once", "@continuous", AssetSchedule(), ["asset"]])
def test_non_recurring_schedules(schedule):
    assert recurrence(schedule, present=True, airflow_version="3", create_cron_data_intervals=False) is None


def test_missing_schedule_means_daily_on_airflow_2_and_none_on_3():
    assert recurrence(None, present=False, airflow_version="3", create_cron_data_intervals=False) is None
    assert recurrence(None, present=False, airflow_version="2", create_cron_data_intervals=False).crons == ("0 0 * * *",)


def test_long_backlogs_are_estimated_closely():
    rec = recurrence("@hourly", present=True, airflow_version="3", create_cron_data_intervals=False)
    start = dt.datetime(2025, 10, 1, tzinfo=dt.timezone.utc)
    end = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    exact = int((end - start).total_seconds() // 3600) + 1
    assert abs(count_runs(rec, start, end) - exact) <= 1


def test_format_count():
    assert [format_count(n) for n in (7, 999, 10_225, 16_384)] == ["7", "999", "~10,000", "~16,000"]


def test_several_crons_count_each_instant_once():
    # MultipleCronTriggerTimetable: one run when two expressions fire at the same time.
    rec = Recurrence(("0 0 * * *", "0 */12 * * *"), None, data_interval=False)
    assert count_runs(rec, START, NOW) == 6  # Jan 1, 2 and 3 at 00:00 and 12:00


def test_several_crons_long_backlogs_are_estimated_closely():
    rec = Recurrence(("0 * * * *", "30 * * * *"), None, data_interval=False)
    start = dt.datetime(2025, 10, 1, tzinfo=dt.timezone.utc)
    end = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    exact = int((end - start).total_seconds() // 1800) + 1
    assert abs(count_runs(rec, start, end) - exact) <= 1
