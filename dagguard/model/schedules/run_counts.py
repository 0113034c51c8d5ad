"""How many runs catchup creates between two instants, for a clock-driven schedule: what the
linter's scheduling rules and the cluster policy (dagguard.policy) both count. No libcst here:
the policy imports this in every DAG processor. Cron arithmetic is croniter's, never hand-written."""

from __future__ import annotations

import datetime as dt
import heapq
from dataclasses import dataclass
from typing import Iterator, Optional

from dagguard.model.schedules.cron_count import count_cron_fires

# Crons that calendar arithmetic cannot count (`L`, `W`, `#`, seconds) are stepped through
# croniter, about 0.1 ms a step; beyond this many runs the count is extrapolated from the rate.
EXACT_STEPS = 256


@dataclass(frozen=True)
class Recurrence:
    """A clock-driven schedule: the fire times of cron expressions or a fixed period, and its
    run semantics."""

    crons: tuple[str, ...]           # a run at every time any of them fires
    delta: Optional[dt.timedelta]
    data_interval: bool              # True: a run waits for its whole interval (Airflow 2 style)

    @property
    def fires_known(self) -> bool:
        """False for an Airflow cron or delta timetable whose cron or period is not static
        (`CronTriggerTimetable(Variable.get("cron"), ...)`): it recurs, but its runs cannot be
        counted. Such a Recurrence has neither crons nor a delta."""
        return bool(self.crons) or self.delta is not None


def count_runs(rec: Recurrence, start: dt.datetime, end: dt.datetime) -> Optional[int]:
    """Runs the scheduler creates for logical dates from `start` up to `end`; None when they
    cannot be counted (a zero period, a cron that never fires, dates at the calendar's edge).

    Trigger timetables (Airflow 3's default) run at every fire time t with start <= t <= end.
    Data-interval timetables need the whole interval before `end`: one run fewer.
    """
    if not rec.fires_known:
        return None
    try:
        return _count_runs(rec, start, end)
    except (ArithmeticError, ValueError):
        # OverflowError near year 1 or 9999, ZeroDivisionError for timedelta(0), and croniter's
        # CroniterBadDateError (a ValueError) for "0 0 31 2 *", which never fires.
        return None


def _count_runs(rec: Recurrence, start: dt.datetime, end: dt.datetime) -> int:
    start, end = _utc(start), _utc(end)
    if end < start:
        return 0
    if rec.delta is not None:
        fires = (end - start) // rec.delta + 1
    else:
        fires = count_cron_fires(rec.crons, start, end) or _step_cron_fires(rec.crons, start, end)
    return max(fires - 1, 0) if rec.data_interval else fires


def _cron_fire_times(expressions: tuple[str, ...], start: dt.datetime) -> Iterator[dt.datetime]:
    """Fire times at or after `start` of any of the expressions, in order; Airflow makes one run
    when several fire at the same time."""
    from croniter import croniter

    # Start one microsecond early so a fire time equal to start_date counts, as Airflow does.
    before = start - dt.timedelta(microseconds=1)
    streams = [croniter(expression, before).all_next(dt.datetime) for expression in expressions]
    previous: Optional[dt.datetime] = None
    for fire in heapq.merge(*streams):
        if fire != previous:
            yield fire
        previous = fire


def _step_cron_fires(expressions: tuple[str, ...], start: dt.datetime, end: dt.datetime) -> int:
    fires = _cron_fire_times(expressions, start)
    first: Optional[dt.datetime] = None
    current = start
    count = 0
    while count < EXACT_STEPS:
        current = next(fires)
        if current > end:
            return count
        if first is None:
            first = current
        count += 1
    assert first is not None
    elapsed = (current - first).total_seconds()
    rate = (count - 1) / elapsed if elapsed > 0 else 0.0
    return count + int((end - current).total_seconds() * rate)


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc)


def format_count(count: int) -> str:
    """`~16,000` style: two significant figures above a thousand, exact below."""
    if count < 1000:
        return f"{count:,}"
    digits = len(str(count)) - 2
    rounded = round(count, -digits)
    return f"~{rounded:,}"
