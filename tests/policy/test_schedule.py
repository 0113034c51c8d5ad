"""Loaded timetables read in the linter's terms, on Airflow's own classes (core and SDK)."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from dagguard.model.schedules.run_counts import Recurrence
from dagguard.policy.schedule import is_airflows_recurring, timetable_recurrence, trigger_schedule

if not os.environ.get("CI"):
    pytest.importorskip("airflow")


def test_no_timetable_is_no_recurrence():
    assert timetable_recurrence(None) is None and not is_airflows_recurring(None)
    assert trigger_schedule(None, None) is None


@pytest.mark.parametrize("module", ["airflow.sdk", "airflow.timetables.trigger"])
def test_cron_trigger_timetables(module):
    import importlib

    cls = importlib.import_module(module).CronTriggerTimetable
    hourly = cls("@hourly", timezone="UTC")
    assert timetable_recurrence(hourly) == Recurrence(("0 * * * *",), None, data_interval=False)
    assert trigger_schedule("@hourly", hourly) == "'@hourly'"
    assert trigger_schedule(hourly, hourly) == "CronTriggerTimetable"
    with_interval = cls("@daily", timezone="UTC", interval=dt.timedelta(days=1))
    assert trigger_schedule(with_interval, with_interval) is None


def test_delta_and_data_interval_timetables():
    from dateutil.relativedelta import relativedelta

    from airflow.sdk import CronDataIntervalTimetable, DeltaDataIntervalTimetable, DeltaTriggerTimetable

    six_hours = DeltaTriggerTimetable(dt.timedelta(hours=6))
    assert timetable_recurrence(six_hours) == Recurrence((), dt.timedelta(hours=6), data_interval=False)
    assert trigger_schedule(dt.timedelta(hours=6), six_hours) == "a timedelta"
    monthly = DeltaDataIntervalTimetable(relativedelta(months=1))
    assert timetable_recurrence(monthly) == Recurrence((), None, data_interval=True)   # recurs, uncounted
    daily = CronDataIntervalTimetable("@daily", timezone="UTC")
    assert timetable_recurrence(daily) == Recurrence(("0 0 * * *",), None, data_interval=True)
    assert trigger_schedule("@daily", daily) is None


def test_composite_and_never_recurring_timetables():
    from airflow.sdk import Asset, AssetOrTimeSchedule, CronTriggerTimetable, MultipleCronTriggerTimetable
    from airflow.sdk.definitions.timetables.simple import ContinuousTimetable, NullTimetable, OnceTimetable

    crons = MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC")
    assert timetable_recurrence(crons) == Recurrence(("0 1 * * *", "0 13 * * *"), None, data_interval=False)
    assert trigger_schedule(crons, crons) == "MultipleCronTriggerTimetable"
    either = AssetOrTimeSchedule(timetable=CronTriggerTimetable("@daily", timezone="UTC"), assets=[Asset("s3://a/b")])
    assert timetable_recurrence(either) == Recurrence(("0 0 * * *",), None, data_interval=False)
    assert trigger_schedule(either, either) == "AssetOrTimeSchedule with a CronTriggerTimetable"
    for never in (NullTimetable(), OnceTimetable(), ContinuousTimetable()):
        assert timetable_recurrence(never) is None
