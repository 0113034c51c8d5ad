"""The half-open data interval a write is keyed on, and how to read it from an Airflow run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone

from dagguard.idempotent.errors import ArgumentTypeError, EmptyIntervalError, InvalidArgumentError

EMPTY_INTERVAL_FIX = (
    "give the DAG a data-interval timetable (e.g. schedule=CronDataIntervalTimetable('0 0 * * *', "
    "timezone='UTC') or DeltaDataIntervalTimetable(timedelta(days=1)) from airflow.sdk), or set "
    "[scheduler] create_cron_data_intervals = True (AIRFLOW__SCHEDULER__CREATE_CRON_DATA_INTERVALS=True); "
    "Airflow 3 cron and timedelta schedules give runs with data_interval_start == data_interval_end"
)


def _as_utc(value: datetime, name: str) -> datetime:
    if not isinstance(value, datetime):
        raise ArgumentTypeError(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgumentError(f"{name} {value.isoformat()} is not timezone-aware; pass e.g. "
                                   f"datetime(..., tzinfo=timezone.utc)")
    # pendulum and pandas datetimes become plain datetimes so results serialise anywhere.
    return datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                    value.microsecond, tzinfo=value.tzinfo).astimezone(timezone.utc)


@dataclass(frozen=True)
class Interval:
    """A half-open interval `start <= t < end` of timezone-aware instants, kept in UTC.

    An empty interval (start == end) raises EmptyIntervalError: writing it could only
    delete nothing and insert rows that belong to no interval.
    """

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        start = _as_utc(self.start, "interval start")
        end = _as_utc(self.end, "interval end")
        if end < start:
            raise InvalidArgumentError(f"interval end {end.isoformat()} is before its start {start.isoformat()}")
        if end == start:
            raise EmptyIntervalError(
                f"the data interval is empty (start == end == {start.isoformat()}), so no row can "
                f"belong to it and nothing was written; fix: {EMPTY_INTERVAL_FIX}")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    def contains(self, value: datetime) -> bool:
        """True when the aware datetime `value` lies in [start, end)."""
        return self.start <= value < self.end

    @property
    def partition_key(self) -> date:
        """The `ds` of the interval: the UTC date of its start."""
        return self.start.date()

    def to_dict(self) -> dict[str, str]:
        """ISO-8601 strings, for XCom and the CLI."""
        return {"start": self.start.isoformat(), "end": self.end.isoformat()}

    def __str__(self) -> str:
        return f"[{self.start.isoformat()}, {self.end.isoformat()})"
