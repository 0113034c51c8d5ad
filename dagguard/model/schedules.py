"""What a DAG's schedule means for the scheduler: is it recurring, and how many runs would
catchup create between two instants. Cron arithmetic is croniter's, never hand-written."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from dagguard.model.values import UNKNOWN, AssetSchedule, Timetable

PRESETS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
if TYPE_CHECKING:
    from dagguard.model.dags import DagModel

NOT_RECURRING = frozenset({"@once", "@continuous"})
EXACT_STEPS = 1024  # beyond this many runs the count is extrapolated from the observed rate


@dataclass(frozen=True)
class Recurrence:
    """A clock-driven schedule: a cron expression or a fixed period, and its run semantics."""

    cron: Optional[str]
    delta: Optional[dt.timedelta]
    data_interval: bool              # True: a run waits for its whole interval (Airflow 2 style)


def recurrence(schedule: Any, *, present: bool, airflow_version: str,
               create_cron_data_intervals: bool) -> Any:
    """The Recurrence of a schedule value, None when it is not clock-driven, UNKNOWN when unsure."""
    data_interval = airflow_version == "2" or create_cron_data_intervals
    if not present:
        # Airflow 2 defaulted to a daily schedule; Airflow 3 defaults to no schedule.
        return Recurrence(PRESETS["@daily"], None, True) if airflow_version == "2" else None
    if schedule is None or isinstance(schedule, AssetSchedule):
        return None
    if isinstance(schedule, (list, tuple)):
        return None  # a list of assets/datasets
    if isinstance(schedule, Timetable):
        is_data_interval = schedule.kind == "data_interval"
        return Recurrence(schedule.cron, schedule.delta, is_data_interval)
    if isinstance(schedule, dt.timedelta):
        return Recurrence(None, schedule, data_interval) if schedule > dt.timedelta(0) else UNKNOWN
    if isinstance(schedule, str):
        text = schedule.strip()
        if text in NOT_RECURRING:
            return None
        cron = PRESETS.get(text, text)
        if _valid_cron(cron):
            return Recurrence(cron, None, data_interval)
    return UNKNOWN


def _valid_cron(expression: str) -> bool:
    from croniter import croniter

    try:
        return bool(croniter.is_valid(expression))
    except Exception:
        return False


def count_runs(rec: Recurrence, start: dt.datetime, end: dt.datetime) -> int:
    """Runs the scheduler creates for logical dates from `start` up to `end`.

    Trigger timetables (Airflow 3's default) run at every fire time t with start <= t <= end.
    Data-interval timetables need the whole interval before `end`: one run fewer.
    """
    start, end = _utc(start), _utc(end)
    if end < start:
        return 0
    if rec.delta is not None:
        fires = int((end - start) / rec.delta) + 1
    else:
        fires = _count_cron_fires(rec.cron or "", start, end)
    return max(fires - 1, 0) if rec.data_interval else fires


def _count_cron_fires(expression: str, start: dt.datetime, end: dt.datetime) -> int:
    from croniter import croniter

    # Start one microsecond early so a fire time equal to start_date counts, as Airflow does.
    iterator = croniter(expression, start - dt.timedelta(microseconds=1))
    first: Optional[dt.datetime] = None
    current = start
    count = 0
    while count < EXACT_STEPS:
        current = iterator.get_next(dt.datetime)
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


def as_datetime(value: Any) -> Optional[dt.datetime]:
    """A static start/end date as an aware datetime (strings parsed as Airflow does)."""
    if isinstance(value, dt.datetime):
        return _utc(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if isinstance(value, str):
        import pendulum

        try:
            parsed = pendulum.parse(value)
        except Exception:
            return None
        if isinstance(parsed, dt.datetime):
            return _utc(parsed)
    return None


def format_count(count: int) -> str:
    """`~16,000` style: two significant figures above a thousand, exact below."""
    if count < 1000:
        return f"{count:,}"
    digits = len(str(count)) - 2
    rounded = round(count, -digits)
    return f"~{rounded:,}"


# --- facts about one DAG, shared by the scheduling rules ----------------------------------

SCHEDULE_ARGUMENTS = ("schedule", "schedule_interval", "timetable")


def catchup_enabled(dag: "DagModel", airflow_version: str) -> Any:
    """True/False, or UNKNOWN when the DAG's arguments can't be read statically."""
    arg = dag.args.get("catchup")
    if arg is not None:
        return arg.value if isinstance(arg.value, bool) else UNKNOWN
    if not dag.args.complete:
        return UNKNOWN
    # [scheduler] catchup_by_default: True in Airflow 2, False in Airflow 3.
    return airflow_version == "2"


def dag_recurrence(dag: "DagModel", airflow_version: str, create_cron_data_intervals: bool) -> Any:
    """The DAG's Recurrence, None when not clock-driven, UNKNOWN when unsure."""
    for name in SCHEDULE_ARGUMENTS:
        arg = dag.args.get(name)
        if arg is not None:
            return recurrence(arg.value, present=True, airflow_version=airflow_version,
                              create_cron_data_intervals=create_cron_data_intervals)
    if not dag.args.complete:
        return UNKNOWN
    return recurrence(None, present=False, airflow_version=airflow_version,
                      create_cron_data_intervals=create_cron_data_intervals)


def catching_up(dag: "DagModel", airflow_version: str, create_cron_data_intervals: bool) -> Optional[Recurrence]:
    """The DAG's Recurrence when catchup is certainly on and the schedule is clock-driven."""
    if catchup_enabled(dag, airflow_version) is not True:
        return None
    rec = dag_recurrence(dag, airflow_version, create_cron_data_intervals)
    return rec if isinstance(rec, Recurrence) else None


def dag_date(dag: "DagModel", name: str) -> Optional[dt.datetime]:
    """A static start_date/end_date from the DAG or its default_args."""
    arg = dag.effective(name)
    return as_datetime(arg.value) if arg is not None else None

