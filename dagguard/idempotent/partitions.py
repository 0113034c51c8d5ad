"""What a run writes when Airflow partitions it (AIP-76): its partition key and, where the DAG's
timetable makes it knowable, the time period that partition covers.

A partitioned run has no data interval (`data_interval_start` and `_end` are None); its
context carries `partition_key` (a string) and `partition_date` (the instant the partition
starts, or None). The period ends at the timetable's next step:
- `CronPartitionTimetable(cron, timezone=...)`: the partition's start to the next cron tick;
- `PartitionedAssetTimetable`: the period of the temporal partition mapper(s) the key is in
  (`StartOfDayMapper` a day, `RollupMapper(..., window=WeekWindow())` a week, ...), when every
  mapper of the DAG's assets agrees; an identity, categorical or backward-window mapper has no
  period dagguard can know;
- `PartitionedAtRuntime` and every other timetable: none.
Airflow is imported only when a run is read, never at import.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from dagguard.idempotent.errors import NoRunIntervalError
from dagguard.idempotent.interval import EMPTY_INTERVAL_FIX, Interval

# (pendulum unit, amount) of each temporal mapper's period and each rollup window's, by class
# name: the SDK and core define the same classes twice, and both reach a worker.
_MAPPER_PERIODS = {
    "StartOfHourMapper": ("hours", 1), "StartOfDayMapper": ("days", 1), "StartOfWeekMapper": ("weeks", 1),
    "StartOfMonthMapper": ("months", 1), "StartOfQuarterMapper": ("months", 3), "StartOfYearMapper": ("years", 1),
}
_WINDOW_PERIODS = {
    "HourWindow": ("hours", 1), "DayWindow": ("days", 1), "WeekWindow": ("weeks", 1),
    "MonthWindow": ("months", 1), "QuarterWindow": ("months", 3), "YearWindow": ("years", 1),
}
# A period with the time zone its calendar steps are taken in.
Period = tuple[str, int, Any]


@dataclass(frozen=True)
class RunScope:
    """What one run owns: its data interval, its partition key, or both (either may be None,
    never both)."""

    interval: Interval | None
    partition_key: str | None


def run_scope(context: Mapping[str, Any]) -> RunScope:
    """The data interval of the run, else its partition (with the partition's period where the
    timetable gives one); NoRunIntervalError when the run has neither."""
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    key = context.get("partition_key")
    if start is not None and end is not None:
        return RunScope(Interval(start, end), key)
    if key is None:
        run_id = context.get("run_id", "this run")
        raise NoRunIntervalError(
            f"run {run_id!s} has no data interval and no partition key, so it owns no data and nothing "
            f"was written; trigger it with a logical date (e.g. `airflow dags trigger --logical-date ...`), "
            f"or give the DAG a partitioned schedule (CronPartitionTimetable, PartitionedAssetTimetable) "
            f"whose runs carry a partition_key, and {EMPTY_INTERVAL_FIX}")
    dag = context.get("dag")
    timetable = getattr(dag, "timetable", None)
    return RunScope(partition_interval(timetable, context.get("partition_date")), str(key))


def partition_interval(timetable: Any, partition_date: datetime | None) -> Interval | None:
    """[partition_date, the timetable's next step), or None when the timetable gives no period."""
    if partition_date is None or timetable is None:
        return None
    start = _utc(partition_date)
    if hasattr(timetable, "expression") and type(timetable).__name__ == "CronPartitionTimetable":
        return Interval(start, next_cron_tick(timetable.expression, timetable.timezone, start))
    if type(timetable).__name__ == "PartitionedAssetTimetable":
        period = _asset_period(timetable)
        if period is not None:
            return Interval(start, _advance(start, period))
    return None


def next_cron_tick(expression: str, zone: Any, after: datetime) -> datetime:
    """The first tick of `expression` (read in `zone`) after `after`, in UTC; the same DST rule
    as Airflow's cron timetables: a cron that fires every hour steps by elapsed time, any other
    by wall-clock time."""
    import pendulum
    from croniter import croniter

    tz = pendulum.timezone(zone) if isinstance(zone, str) else zone
    local = pendulum.instance(after).in_timezone(tz)
    naive = local.naive()
    cron = croniter(expression, start_time=naive)
    scheduled = cron.get_next(datetime)
    if _covers_every_hour(cron):
        return _utc(local + (scheduled - naive))
    return _utc(pendulum.instance(scheduled, tz=tz))


def _covers_every_hour(cron: Any) -> bool:
    # Airflow's own test (airflow/timetables/_cron.py): croniter normalises an every-hour field to '*'.
    return cron.expanded[1] == ["*"]


def _asset_period(timetable: Any) -> Period | None:
    """The one period every partition mapper of the DAG's assets gives, or None."""
    configured = dict(getattr(timetable, "partition_mapper_config", None) or {})
    mappers = list(configured.values())
    assets = _asset_count(getattr(timetable, "asset_condition", None))
    if assets is None or assets > len(configured):
        mappers.append(getattr(timetable, "default_partition_mapper", None))
    periods = {_mapper_period(m) for m in mappers}
    if len(periods) != 1:
        return None
    return periods.pop()


def _asset_count(condition: Any) -> int | None:
    """How many assets the schedule's condition names (AssetAll / AssetAny nest them in
    `objects`); None when it holds an alias or a reference, whose mapper is the default."""
    if type(condition).__name__ in ("Asset", "Dataset", "Model"):
        return 1
    objects = getattr(condition, "objects", None)
    if objects is None:
        return None
    counts = [_asset_count(o) for o in objects]
    return None if None in counts else sum(counts)  # type: ignore[arg-type]


def _mapper_period(mapper: Any) -> Period | None:
    """The period of the keys `mapper` emits downstream, or None where it has none we know."""
    name = type(mapper).__name__
    if name in _MAPPER_PERIODS:
        unit, amount = _MAPPER_PERIODS[name]
        return unit, amount, str(getattr(mapper, "_timezone", "UTC"))
    if name == "RollupMapper":
        window = getattr(mapper, "window", None)
        if str(getattr(getattr(window, "direction", None), "value", "forward")) != "forward":
            return None  # a trailing window does not start at the key
        inner = _mapper_period(getattr(mapper, "upstream_mapper", None))
        if type(window).__name__ in _WINDOW_PERIODS and inner is not None:
            unit, amount = _WINDOW_PERIODS[type(window).__name__]
            return unit, amount, inner[2]
        return None
    if name == "FanOutMapper":
        return _mapper_period(getattr(mapper, "downstream_mapper", None))
    if name == "ChainMapper":
        chain = list(getattr(mapper, "mappers", ()) or ())
        return _mapper_period(chain[-1]) if chain else None
    return None


def _advance(start: datetime, period: Period) -> datetime:
    import pendulum

    unit, amount, zone = period
    local = pendulum.instance(start).in_timezone(pendulum.timezone(zone) if isinstance(zone, str) else zone)
    return _utc(local.add(**{unit: amount}))


def _utc(value: datetime) -> datetime:
    value = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    return datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                    value.microsecond, tzinfo=value.tzinfo).astimezone(timezone.utc)


def write_scope(context: Mapping[str, Any], strategy: str, partition_column: str | None) -> RunScope:
    """run_scope(), checked against the strategy: replace and merge need a time interval, which a
    partition whose period the timetable does not give lacks (NoRunIntervalError)."""
    scope = run_scope(context)
    if scope.interval is None and strategy != "overwrite_partition":
        timetable = type(getattr(context.get("dag"), "timetable", None)).__name__
        date = context.get("partition_date")
        why = ("it has no partition_date" if date is None else
               f"its timetable ({timetable}) gives partitions no time period dagguard can know")
        raise NoRunIntervalError(
            f"run {context.get('run_id', 'this run')!s} is partition {scope.partition_key!r}, and {why}, so "
            f"strategy={strategy!r} has no interval to replace and nothing was written; use "
            f"strategy='overwrite_partition' (the rows whose {partition_column or 'ds'} equals the partition "
            f"key), or a CronPartitionTimetable or a temporal partition mapper (StartOfDayMapper, ...)")
    return scope


def interval_from_context(context: Mapping[str, Any]) -> Interval:
    """The data interval of an Airflow task's context; on a partitioned run (which has none) the
    partition's period where the timetable gives one (write_scope, below).
    NoRunIntervalError (an EmptyIntervalError) when there is neither."""
    start = context.get("data_interval_start")
    end = context.get("data_interval_end")
    if (start is None or end is None) and context.get("partition_key") is not None:
        return write_scope(context, "replace", None).interval  # type: ignore[return-value]
    if start is None or end is None:
        run_id = context.get("run_id", "this run")
        raise NoRunIntervalError(
            f"run {run_id!s} has no logical date, so it has no data interval and nothing was "
            f"written; trigger it with a logical date (e.g. `airflow dags trigger --logical-date ...`) "
            f"and {EMPTY_INTERVAL_FIX}")
    return Interval(start, end)
