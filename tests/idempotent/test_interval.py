"""Interval semantics and reading it from an Airflow context."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pendulum
import pytest

from dagguard.idempotent import EmptyIntervalError, Interval, interval_from_context
from dagguard.idempotent.decorator import fill_context_arguments

UTC = timezone.utc


def test_interval_is_half_open_and_kept_in_utc():
    paris = timezone(timedelta(hours=1))
    interval = Interval(datetime(2026, 1, 1, 1, tzinfo=paris), datetime(2026, 1, 2, 1, tzinfo=paris))
    assert interval.start == datetime(2026, 1, 1, tzinfo=UTC) and interval.start.tzinfo is UTC
    assert interval.contains(interval.start)
    assert interval.contains(interval.end - timedelta(microseconds=1))
    assert not interval.contains(interval.end)
    assert str(interval) == "[2026-01-01T00:00:00+00:00, 2026-01-02T00:00:00+00:00)"


def test_pendulum_datetimes_become_plain_datetimes():
    interval = Interval(pendulum.datetime(2026, 1, 1), pendulum.datetime(2026, 1, 2))
    assert type(interval.start) is datetime
    assert interval.to_dict() == {"start": "2026-01-01T00:00:00+00:00", "end": "2026-01-02T00:00:00+00:00"}


def test_naive_and_reversed_intervals_are_refused():
    with pytest.raises(ValueError, match="not timezone-aware"):
        Interval(datetime(2026, 1, 1), datetime(2026, 1, 2))
    with pytest.raises(ValueError, match="before its start"):
        Interval(datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC))


def test_empty_interval_from_a_trigger_timetable_names_the_fix():
    moment = pendulum.datetime(2026, 1, 5)
    with pytest.raises(EmptyIntervalError) as info:
        interval_from_context({"data_interval_start": moment, "data_interval_end": moment})
    message = str(info.value)
    assert "start == end == 2026-01-05T00:00:00+00:00" in message
    assert "CronDataIntervalTimetable" in message and "create_cron_data_intervals" in message
    assert "nothing was written" in message


def test_run_without_logical_date_is_an_empty_interval():
    with pytest.raises(EmptyIntervalError, match="has no logical date"):
        interval_from_context({"run_id": "manual__x"})


def test_context_parameters_are_filled_only_when_unset():
    def export(data_interval_start=None, data_interval_end=None, ds=None, other=1):
        return data_interval_start, data_interval_end, ds, other

    values = {"data_interval_start": 1, "data_interval_end": 2, "ds": "2026-01-01", "logical_date": 3}
    args, kwargs = fill_context_arguments(export, (), {"ds": "given"}, values)
    assert export(*args, **kwargs) == (1, 2, "given", 1)
