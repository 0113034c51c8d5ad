"""What a loaded DAG's timetable means for the scheduler, in the linter's terms: its Recurrence
(model/schedules/run_counts.py counts the runs the same way the linter does), and how its schedule is
written when it is a trigger timetable whose runs have an empty data interval (DG206).

Timetables are recognised by class name, so Airflow 3's SDK classes and the core ones
(`airflow.timetables.*`, what Airflow 2 loads) read alike.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from dagguard.model.schedules.run_counts import Recurrence

_CRON_TRIGGER = frozenset({"CronTriggerTimetable", "CronPartitionTimetable"})
_CRON_DATA_INTERVAL = frozenset({"CronDataIntervalTimetable"})
_DELTA_TRIGGER = frozenset({"DeltaTriggerTimetable"})
_DELTA_DATA_INTERVAL = frozenset({"DeltaDataIntervalTimetable"})
_MULTIPLE_CRONS = frozenset({"MultipleCronTriggerTimetable"})
_ASSET_OR_TIME = frozenset({"AssetOrTimeSchedule", "DatasetOrTimeSchedule"})
# Never a backlog: no schedule, one run, one run at a time, a finite list of dates, asset events.
_NEVER_RECURRING = frozenset({
    "NullTimetable", "OnceTimetable", "ContinuousTimetable", "EventsTimetable", "AssetTriggeredTimetable",
    "DatasetTriggeredTimetable", "PartitionedAssetTimetable", "PartitionedAtRuntime",
})
MAX_DEPTH = 3


def _name(timetable: Any) -> str:
    return type(timetable).__name__


def _is_airflows(timetable: Any) -> bool:
    return type(timetable).__module__.split(".", 1)[0] == "airflow"


def _period(value: Any) -> Optional[dt.timedelta]:
    """A fixed, positive period; None for a relativedelta (months have no fixed length)."""
    return value if isinstance(value, dt.timedelta) and value > dt.timedelta(0) else None


def timetable_recurrence(timetable: Any, depth: int = 0) -> Optional[Recurrence]:
    """The timetable's Recurrence; None when it never queues a backlog (or is not a timetable).
    A recurring timetable whose runs cannot be counted (a relativedelta, a custom class) has
    neither crons nor a delta: it recurs, how often is unknown."""
    if timetable is None:
        return None
    name = _name(timetable)
    if name in _CRON_TRIGGER or name in _CRON_DATA_INTERVAL:
        expression = getattr(timetable, "expression", None) or getattr(timetable, "_expression", None)
        crons = (expression,) if isinstance(expression, str) else ()
        return Recurrence(crons, None, data_interval=name in _CRON_DATA_INTERVAL)
    if name in _DELTA_TRIGGER or name in _DELTA_DATA_INTERVAL:
        delta = getattr(timetable, "delta", None) or getattr(timetable, "_delta", None)
        return Recurrence((), _period(delta), data_interval=name in _DELTA_DATA_INTERVAL)
    if name in _MULTIPLE_CRONS:
        parts = getattr(timetable, "timetables", None) or getattr(timetable, "_timetables", None) or ()
        crons = tuple(getattr(p, "expression", None) or getattr(p, "_expression", None) for p in parts)
        return Recurrence(crons if all(isinstance(c, str) for c in crons) else (), None, data_interval=False)
    if name in _ASSET_OR_TIME:
        # Catchup follows the clock part; asset events add runs, never a backlog.
        clock = getattr(timetable, "timetable", None)
        return timetable_recurrence(clock, depth + 1) if clock is not None and depth < MAX_DEPTH else None
    if name in _NEVER_RECURRING or _is_airflows(timetable):
        return None  # Airflow's own classes are known by name; a new one is not guessed at
    # A custom timetable computes its next run from the last one: it recurs on a calendar the
    # policy cannot count, unless it says it does not (Airflow's `periodic`, `can_be_scheduled`).
    if getattr(timetable, "periodic", True) is False or getattr(timetable, "can_be_scheduled", True) is False:
        return None
    return Recurrence((), None, data_interval=False)


def is_airflows_recurring(timetable: Any) -> bool:
    """One of Airflow's cron or delta timetables (or assets-or-time on one): what the linter's
    DG101 and DG107 judge. A custom timetable recurs too (DG102/DG103), on a calendar of its own
    whose catchup the linter does not judge, and neither does the policy."""
    name = _name(timetable)
    if name in _ASSET_OR_TIME:
        return is_airflows_recurring(getattr(timetable, "timetable", None))
    return name in (_CRON_TRIGGER | _CRON_DATA_INTERVAL | _DELTA_TRIGGER | _DELTA_DATA_INTERVAL | _MULTIPLE_CRONS)


def _interval(timetable: Any) -> Any:
    return getattr(timetable, "interval", None) if hasattr(timetable, "interval") else getattr(
        timetable, "_interval", dt.timedelta(0))


def _empty_interval(timetable: Any) -> bool:
    """A trigger timetable without `interval=`: data_interval_start == data_interval_end."""
    name = _name(timetable)
    if name == "CronPartitionTimetable":
        return False  # partition runs have no data interval at all, not an empty one
    if name in _CRON_TRIGGER or name in _DELTA_TRIGGER:
        return _interval(timetable) == dt.timedelta(0)
    if name in _MULTIPLE_CRONS:
        parts = getattr(timetable, "timetables", None) or getattr(timetable, "_timetables", None) or ()
        return bool(parts) and all(_interval(p) == dt.timedelta(0) for p in parts)
    return False


def trigger_schedule(schedule: Any, timetable: Any) -> Optional[str]:
    """How the DAG's schedule is written (`'@daily'`, `a timedelta`, `CronTriggerTimetable`), when
    its runs have data_interval_start == data_interval_end; None otherwise. The words are the
    linter's (model/schedules/trigger_runs.py)."""
    name = _name(timetable)
    if name in _ASSET_OR_TIME:
        clock = getattr(timetable, "timetable", None)
        return f"AssetOrTimeSchedule with a {_name(clock)}" if clock is not None and _empty_interval(clock) else None
    if not _empty_interval(timetable):
        return None
    if isinstance(schedule, str):
        return repr(schedule)
    if isinstance(schedule, dt.timedelta):
        return "a timedelta"
    return name
