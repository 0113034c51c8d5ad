"""One run of a clock schedule, with its logical date on Airflow 3's trigger timetables (the
moment it starts) and on Airflow 2's data-interval ones (the start of the period just ended).

Cron arithmetic is croniter's. The example run is the first at or after 2026-01-02 00:00 UTC,
so a daily run shows the day that is only beginning against the day that has just ended.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from dagguard.model.schedules.schedules import PRESETS, Recurrence

REFERENCE = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
# Gaps between fires compared to call a period steady: three tell months (31, 31, 30 days back
# from February) and years (365, 365, 366 back from 2027) from a fixed period.
STEADY_GAPS = 3


@dataclass(frozen=True)
class ExampleRun:
    starts: dt.datetime              # when it runs: its logical date on a trigger timetable
    airflow2_logical_date: dt.datetime   # the previous fire: where its data interval started
    period: Optional[dt.timedelta]   # the time between runs, when it is the same each time


@lru_cache(maxsize=256)   # a file's DAGs mostly share a few schedules
def example_run(rec: Recurrence) -> Optional[ExampleRun]:
    """The schedule's first run at or after REFERENCE; None for a cron that never fires."""
    if rec.delta is not None:
        return ExampleRun(REFERENCE, REFERENCE - rec.delta, rec.delta)
    if not rec.crons:
        return None
    try:
        fires = [min(_next_fire(cron, REFERENCE - dt.timedelta(microseconds=1)) for cron in rec.crons)]
        for _ in range(STEADY_GAPS):
            fires.append(max(_previous_fire(cron, fires[-1]) for cron in rec.crons))
    except (ArithmeticError, ValueError):  # croniter's CroniterBadDateError for "0 0 31 2 *"
        return None
    gaps = {later - earlier for later, earlier in zip(fires, fires[1:])}
    return ExampleRun(fires[0], fires[1], gaps.pop() if len(gaps) == 1 else None)


def _next_fire(cron: str, after: dt.datetime) -> dt.datetime:
    from croniter import croniter

    return croniter(PRESETS.get(cron, cron), after).get_next(dt.datetime)


def _previous_fire(cron: str, before: dt.datetime) -> dt.datetime:
    from croniter import croniter

    return croniter(PRESETS.get(cron, cron), before).get_prev(dt.datetime)


def timedelta_code(period: dt.timedelta) -> str:
    """`days=1`, `hours=6`, `minutes=15`: the keyword spelling of a period, for help lines."""
    seconds = int(period.total_seconds())
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds % size == 0:
            return f"{unit}={seconds // size}"
    return f"seconds={seconds}"
