"""Which intervals of a schedule no write in the ledger covers: `dagguard ledger --gaps`.

The schedule's intervals are Airflow's data intervals: from the first fire time at or after the
start to the next one, and so on, while an interval's start is at or before the end (a DAG's
`end_date` bounds its runs the same way) and the interval is over by `now`. Cron expressions
and presets are read by the linter's model and stepped by croniter; a period (an ISO 8601
duration, `PT6H`, or a DAG's `timedelta`) steps from the start itself. A table's interval is
written when the union of its ledger rows covers it: a row of a wider interval (a lookback, a
batch of a backfill) covers every interval inside it.
"""

from __future__ import annotations

import bisect
import datetime as dt
import heapq
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from dagguard.idempotent.errors import InvalidArgumentError
from dagguard.idempotent.ledger import LedgerEntry, LedgerReport

UTC = dt.timezone.utc
# Stepping croniter costs about 0.1 ms an interval: a year of five-minute intervals takes 10 s.
MAX_INTERVALS = 200_000


@dataclass(frozen=True)
class Schedule:
    """A clock-driven schedule: fire times of cron expressions, or a fixed period."""

    text: str                        # as the user or the DAG wrote it
    crons: tuple[str, ...] = ()
    delta: Optional[dt.timedelta] = None


@dataclass(frozen=True)
class Span:
    """One interval [start, end), aware datetimes."""

    start: dt.datetime
    end: dt.datetime


@dataclass(frozen=True)
class TableGaps:
    """The intervals of the schedule that no write into `table` covers; table None: the ledger
    holds no write at all."""

    table: Optional[str]
    missing: tuple[Span, ...]


@dataclass(frozen=True)
class GapReport:
    """The schedule's intervals between start and end, and each table's missing ones."""

    schedule: str
    start: dt.datetime
    end: Optional[dt.datetime]       # the last interval's start may be this late; None: up to now
    now: dt.datetime
    intervals: tuple[Span, ...]
    tables: tuple[TableGaps, ...]

    @property
    def missing_count(self) -> int:
        return sum(len(t.missing) for t in self.tables)


def parse_schedule(text: str) -> Schedule:
    """`@daily`, any cron preset or expression, or an ISO 8601 duration (`PT6H`, `P1D`); a
    schedule that does not recur on a clock or does not parse is an InvalidArgumentError."""
    from dagguard.model.schedules.schedules import Recurrence, recurrence   # croniter's parse, the linter's presets

    value = text.strip()
    if value.upper().startswith("P"):
        return Schedule(value, (), _duration(value))
    rec = recurrence(value, present=True, airflow_version="3", create_cron_data_intervals=True)
    if rec is None:
        raise InvalidArgumentError(f"--schedule {text!r} does not recur on a clock; it has no intervals to check")
    if not isinstance(rec, Recurrence) or not rec.crons:
        raise InvalidArgumentError(f"--schedule {text!r} is not a cron expression, a preset such as @daily, "
                                   f"or an ISO 8601 duration such as PT6H")
    return Schedule(value, rec.crons, None)


def _duration(text: str) -> dt.timedelta:
    import pendulum

    try:
        parsed = pendulum.parse(text)
    except Exception:
        parsed = None
    if not isinstance(parsed, pendulum.Duration):
        raise InvalidArgumentError(f"--schedule {text!r} is not an ISO 8601 duration such as PT6H or P1D")
    if parsed.years or parsed.months:
        raise InvalidArgumentError(f"--schedule {text!r}: months and years have no fixed length; "
                                   f"use @monthly, @yearly or a cron expression")
    period = dt.timedelta(seconds=parsed.total_seconds())
    if period <= dt.timedelta(0):
        raise InvalidArgumentError(f"--schedule {text!r} is not a positive period")
    return period


def parse_instant(option: str, value: str) -> dt.datetime:
    """An option's ISO 8601 date or date-time; UTC when it has no offset."""
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgumentError(f"{option}: {value!r} is not an ISO 8601 date or date-time "
                                   f"(e.g. 2026-01-01 or 2026-01-01T06:00:00Z)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def schedule_intervals(schedule: Schedule, start: dt.datetime, end: Optional[dt.datetime],
                       now: dt.datetime) -> tuple[Span, ...]:
    """The data intervals Airflow makes from `start` whose start is at or before `end` (if
    given) and whose end is at or before `now`. Crons are read in `start`'s timezone, as
    Airflow reads them in the DAG's."""
    start, now = _aware(start), _aware(now)
    end = _aware(end) if end is not None else None
    _check_size(schedule, start, end if end is not None and end < now else now)
    spans = []
    fires = _fire_times(schedule, start)
    begin = _next_fire(fires)
    while begin is not None:
        following = _next_fire(fires)
        if following is None or following > now or (end is not None and begin > end):
            break
        spans.append(Span(begin.astimezone(UTC), following.astimezone(UTC)))
        begin = following
    return tuple(spans)


def _check_size(schedule: Schedule, start: dt.datetime, last: dt.datetime) -> None:
    from dagguard.model.schedules.schedules import Recurrence, count_runs   # calendar arithmetic, no stepping

    runs = count_runs(Recurrence(schedule.crons, schedule.delta, data_interval=False), start, last)
    if runs is not None and runs > MAX_INTERVALS:
        raise InvalidArgumentError(f"{schedule.text!r} has {runs:,} intervals from {_iso(start)} to {_iso(last)}, "
                                   f"more than {MAX_INTERVALS:,}; narrow --start and --end")


def _next_fire(fires: Iterator[dt.datetime]) -> Optional[dt.datetime]:
    try:
        return next(fires)
    except (StopIteration, ArithmeticError, ValueError):
        # croniter's CroniterBadDateError ("0 0 31 2 *" never fires) is a ValueError; dates
        # past year 9999 overflow: the intervals found so far are all there are.
        return None


def _fire_times(schedule: Schedule, start: dt.datetime) -> Iterator[dt.datetime]:
    if schedule.delta is not None:
        moment = start
        while True:
            yield moment
            moment = moment + schedule.delta
    from croniter import croniter

    # One microsecond early, so that a fire time equal to the start is the first, as in Airflow.
    before = start - dt.timedelta(microseconds=1)
    streams = [croniter(cron, before).all_next(dt.datetime) for cron in schedule.crons]
    previous = None
    for fire in heapq.merge(*streams):
        if fire != previous:   # several crons firing at once make one run
            yield fire
        previous = fire


def covered_spans(entries: Sequence[LedgerEntry]) -> dict[str, list[Span]]:
    """Per table, the union of its written intervals as sorted, disjoint spans."""
    by_table: dict[str, list[Span]] = {}
    for entry in entries:
        span = _entry_span(entry)
        if span is not None:
            by_table.setdefault(entry.table_name, []).append(span)
    return {table: _union(spans) for table, spans in by_table.items()}


def _entry_span(entry: LedgerEntry) -> Optional[Span]:
    try:
        start = dt.datetime.fromisoformat(entry.interval_start)
        end = dt.datetime.fromisoformat(entry.interval_end)
    except (TypeError, ValueError):
        return None   # a row without an interval (a partition's write) covers none
    return Span(_aware(start), _aware(end))


def _aware(value: dt.datetime) -> dt.datetime:
    """A plain aware datetime: UTC when naive. A pendulum DateTime is copied to a plain one,
    whose arithmetic keeps its zone (pendulum's drops a datetime.timezone)."""
    if type(value) is not dt.datetime:
        value = dt.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                            value.microsecond, tzinfo=value.tzinfo, fold=value.fold)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _union(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if merged and span.start <= merged[-1].end:
            if span.end > merged[-1].end:
                merged[-1] = Span(merged[-1].start, span.end)
        else:
            merged.append(span)
    return merged


def is_covered(covered: list[Span], span: Span) -> bool:
    """Does one of the sorted, disjoint `covered` spans hold the whole of `span`?"""
    index = bisect.bisect_right([c.start for c in covered], span.start) - 1
    return index >= 0 and covered[index].end >= span.end


def find_gaps(report: LedgerReport, schedule: Schedule, start: dt.datetime, end: Optional[dt.datetime] = None,
              *, now: Optional[dt.datetime] = None, table: Optional[str] = None,
              dag_id: Optional[str] = None) -> GapReport:
    """The schedule's intervals that the ledger's writes leave uncovered, per table: `table`,
    else the tables `dag_id` wrote into (all of them when it wrote into none), else every
    table of the ledger."""
    now = _aware(now) if now is not None else dt.datetime.now(UTC)
    start, end = _aware(start), (_aware(end) if end is not None else None)
    _check_order(start, end)
    intervals = schedule_intervals(schedule, start, end, now)
    covered = covered_spans(report.entries)
    gaps = []
    for name in _tables(report, table, dag_id):
        spans = covered.get(name, []) if name is not None else []
        gaps.append(TableGaps(name, tuple(s for s in intervals if not is_covered(spans, s))))
    return GapReport(schedule.text, start, end, now, intervals, tuple(gaps))


def _check_order(start: dt.datetime, end: Optional[dt.datetime]) -> None:
    if end is not None and start > end:
        raise InvalidArgumentError(f"the start {_iso(start)} is after the end {_iso(end)}")


def _tables(report: LedgerReport, table: Optional[str], dag_id: Optional[str]) -> list[Optional[str]]:
    if table is not None:
        return [table]
    written = sorted({e.table_name for e in report.entries})
    if dag_id is not None:
        own = sorted({e.table_name for e in report.entries if e.dag_id == dag_id})
        written = own or written
    return list(written) or [None]


def ledger_gaps(conn: Any, schedule: Schedule, start: dt.datetime, end: Optional[dt.datetime] = None, *,
                now: Optional[dt.datetime] = None, table: Optional[str] = None,
                dag_id: Optional[str] = None) -> GapReport:
    """find_gaps on the ledger of `conn` (a URL, opened read-only, or a connection)."""
    from dagguard.idempotent.api import read_ledger

    _check_order(_aware(start), _aware(end) if end is not None else None)   # before connecting
    return find_gaps(read_ledger(conn, table=table), schedule, start, end, now=now, table=table, dag_id=dag_id)


@dataclass(frozen=True)
class DagSchedule:
    """A DAG's schedule and dates, as the linter reads them from its file."""

    dag_id: str
    schedule: Schedule
    start: Optional[dt.datetime]     # None only when not needed (given on the command line)
    end: Optional[dt.datetime]


def dag_schedule(path: Path, dag_id: str, *, need_start: bool = True, need_end: bool = True) -> DagSchedule:
    """The schedule, start_date and end_date of DAG `dag_id` in `path`, read by the linter's
    model without importing the file; InvalidArgumentError when a needed one is not static."""
    from dagguard.engine.dag_schedule import DagScheduleError, read_dag_schedule

    try:
        found = read_dag_schedule(path, dag_id, need_start=need_start, need_end=need_end)
    except DagScheduleError as exc:
        raise InvalidArgumentError(str(exc)) from None
    schedule = Schedule(found.schedule_text, found.crons, found.delta)
    return DagSchedule(dag_id, schedule, found.start, found.end)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def gaps_from_options(conn: Any, *, schedule: Optional[str], start: Optional[str], end: Optional[str],
                      now: Optional[str], table: Optional[str], dag_file: Optional[Path],
                      dag_id: Optional[str]) -> GapReport:
    """`dagguard ledger --gaps`: the schedule and dates from the options, or from the DAG of
    `--dag-file` (options given win); InvalidArgumentError for a missing or clashing option."""
    if (dag_file is None) != (dag_id is None):
        raise InvalidArgumentError("--dag-file and --dag-id go together")
    if dag_file is not None and schedule is not None:
        raise InvalidArgumentError("give --schedule or --dag-file, not both")
    if dag_file is None and (schedule is None or start is None):
        raise InvalidArgumentError("--gaps needs --schedule and --start, or --dag-file and --dag-id")
    fixed_now = parse_instant("--now", now) if now is not None else None
    first = parse_instant("--start", start) if start is not None else None
    last = parse_instant("--end", end) if end is not None else None
    if dag_file is not None and dag_id is not None:
        dag = dag_schedule(dag_file, dag_id, need_start=first is None, need_end=last is None)
        plan, first, last = dag.schedule, first or dag.start, last or dag.end
    else:
        assert schedule is not None
        plan = parse_schedule(schedule)
    assert first is not None
    return ledger_gaps(conn, plan, first, last, now=fixed_now, table=table, dag_id=dag_id)
