"""Calendar arithmetic counts the same fire times as stepping croniter one by one."""

from __future__ import annotations

import datetime as dt
import heapq

import pytest
from croniter import croniter
from hypothesis import HealthCheck, given, settings, strategies as st

from dagguard.model.schedules import run_counts
from dagguard.model.schedules.cron_count import count_cron_fires
from dagguard.model.schedules.schedules import Recurrence, count_runs

UTC = dt.timezone.utc
# Several a minute or hour, stepped over a day or two; a few a day or fewer, over a year or more.
FREQUENT = ["* * * * *", "*/5 * * * *", "*/7 * * * *", "15,45 9-17 * * mon-fri", "*/7 */5 * 2-4 *"]
SPARSE = [
    "0 * * * *", "0 0 * * *", "0 0 * * 0", "0 0 * * 7", "0 0 1 * *", "0 0 1 */3 *", "0 0 1 1 *",
    "0 0 13 * 5", "0 0 29 2 *", "30 2 31 * *", "0 */6 * * *", "7 3 */2 * *", "0 0 1-7 * 1",
    "59 23 * * 6", "0 12 * jan,jul sun", "0 0 L * *", "0 0 * * 1#2",
]


def stepped(expressions: list[str], start: dt.datetime, end: dt.datetime) -> int:
    """The fire times croniter gives one at a time, each instant once."""
    before = start - dt.timedelta(microseconds=1)
    seen, count = None, 0
    for fire in heapq.merge(*(croniter(e, before).all_next(dt.datetime) for e in expressions)):
        if fire > end:
            return count
        if fire != seen:
            count += 1
        seen = fire
    return count


instants = st.datetimes(min_value=dt.datetime(2020, 1, 1), max_value=dt.datetime(2026, 12, 31),
                        timezones=st.just(UTC))
frequent = st.tuples(st.lists(st.sampled_from(FREQUENT + SPARSE), min_size=1, max_size=3),
                     st.timedeltas(min_value=dt.timedelta(0), max_value=dt.timedelta(days=2)))
sparse = st.tuples(st.lists(st.sampled_from(SPARSE), min_size=1, max_size=3),
                   st.timedeltas(min_value=dt.timedelta(0), max_value=dt.timedelta(days=800)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.one_of(frequent, sparse), start=instants, on_the_minute=st.booleans())
def test_arithmetic_count_equals_stepping_croniter(case, start, on_the_minute):
    expressions, span = case
    if on_the_minute:
        start = start.replace(second=0, microsecond=0)
    end = start + span
    counted = count_cron_fires(expressions, start, end)
    if any("L" in e or "#" in e for e in expressions):
        assert counted is None  # left to stepping
    else:
        assert counted == stepped(expressions, start, end)


@pytest.mark.parametrize("expression", ["0 0 * * *", "*/15 * * * *", "0 0 1 * *", "30 6 * * 1-5"])
def test_a_fire_exactly_at_start_or_end_counts(expression):
    first = croniter(expression, dt.datetime(2026, 3, 1, tzinfo=UTC)).get_next(dt.datetime)
    tenth = croniter(expression, first).all_next(dt.datetime)
    for _ in range(8):
        next(tenth)
    last = next(tenth)
    assert count_cron_fires([expression], first, last) == 10
    assert count_cron_fires([expression], first + dt.timedelta(microseconds=1), last) == 9
    assert count_cron_fires([expression], first, last - dt.timedelta(microseconds=1)) == 9


def test_fixed_period_backlogs_are_counted_without_stepping(monkeypatch):
    def no_stepping(*args):
        raise AssertionError("croniter was stepped")

    monkeypatch.setattr(run_counts, "_step_cron_fires", no_stepping)
    start, end = dt.datetime(2000, 1, 1, tzinfo=UTC), dt.datetime(2026, 11, 30, 12, 7, tzinfo=UTC)
    minutes = int((end - start).total_seconds() // 60)
    assert count_runs(Recurrence(("* * * * *",), None, False), start, end) == minutes + 1
    assert count_runs(Recurrence(("*/5 * * * *",), None, True), start, end) == minutes // 5
    assert count_runs(Recurrence(("0 0 * * *",), None, False), start, end) == (end - start).days + 1
    assert count_runs(Recurrence(("0 0 1 1 *",), None, False), start, end) == 27


def test_a_cron_that_never_fires_still_cannot_be_counted():
    rec = Recurrence(("0 0 31 2 *",), None, False)
    assert count_runs(rec, dt.datetime(2026, 1, 1, tzinfo=UTC), dt.datetime(2026, 11, 30, tzinfo=UTC)) is None


def test_timedelta_counts_are_exact_over_long_ranges():
    start, end = dt.datetime(1, 1, 1, tzinfo=UTC), dt.datetime(9999, 12, 31, tzinfo=UTC)
    rec = Recurrence((), dt.timedelta(microseconds=7), False)
    assert count_runs(rec, start, end) == (end - start) // dt.timedelta(microseconds=7) + 1
