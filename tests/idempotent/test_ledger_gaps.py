"""`dagguard ledger --gaps`: the intervals of a schedule that no write in the ledger covers."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dagguard.cli import app
from dagguard.idempotent import Interval, InvalidArgumentError, write_interval
from dagguard.idempotent.ledger_gaps import Span, parse_schedule, schedule_intervals
from dagguard.idempotent.ledger_gaps_render import runs_of
from tests.idempotent.helpers import at, events

UTC = timezone.utc
NOW = "2026-02-01T00:00:00Z"


def _day(day: int, days: int = 1) -> Interval:
    return Interval(at(day), at(day) + timedelta(days=days))


def _write_days(db, days, table="events", length=1):
    conn = db.connect()
    try:
        for day in days:
            write_interval(conn, table, events((day, at(day, 1), "v")), _day(day, length), time_column="ts")
    finally:
        conn.close()


def _cli(*args: str):
    return CliRunner().invoke(app, ["ledger", *args])


def _gaps(db, *args: str):
    return _cli("--conn", db.url, "--gaps", "--now", NOW, *args)


def _missing(result) -> list[tuple[str, str]]:
    payload = json.loads(result.stdout)
    return [(m["start"][:10], m["end"][:10]) for t in payload["tables"] for m in t["missing"]]


# --- on every engine -----------------------------------------------------------------------


def test_a_day_never_written_is_a_gap_in_text_and_json(db):
    db.create()
    _write_days(db, [1, 2, 4, 5])   # day 3 is missing
    text = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-05")
    assert text.exit_code == 1, text.output
    assert text.stdout.splitlines() == [
        "events [2026-01-03T00:00:00Z, 2026-01-04T00:00:00Z) never written",
        "1 interval(s) missing in 1 of 1 table(s); '@daily' has 5 interval(s) from 2026-01-01T00:00:00Z "
        "to 2026-01-06T00:00:00Z"]
    as_json = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-05", "--format", "json")
    assert as_json.exit_code == 1
    payload = json.loads(as_json.stdout)
    assert (payload["intervals"], payload["count"]) == (5, 1)
    assert payload["tables"] == [{"table": "events", "count": 1, "missing": [
        {"start": "2026-01-03T00:00:00+00:00", "end": "2026-01-04T00:00:00+00:00"}]}]
    _write_days(db, [3])
    complete = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-05")
    assert complete.exit_code == 0, complete.output
    assert complete.stdout.startswith("events: every interval written\n0 interval(s) missing")


def test_a_wider_write_covers_the_intervals_inside_it(db):
    db.create()
    _write_days(db, [1], length=3)   # a lookback or a batch: [Jan 1, Jan 4)
    _write_days(db, [5])
    result = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-05", "--format", "json")
    assert _missing(result) == [("2026-01-04", "2026-01-05")]
    weekly = _gaps(db, "--schedule", "0 0 * * 4", "--start", "2026-01-01", "--end", "2026-01-01")
    assert weekly.exit_code == 1   # the week from Thursday Jan 1 is written on 4 of its 7 days


# --- the schedule's intervals --------------------------------------------------------------


def _intervals(schedule: str, start: datetime, end: datetime | None, now: datetime) -> list[Span]:
    return list(schedule_intervals(parse_schedule(schedule), start, end, now))


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize("schedule, count, first_end", [
    ("@daily", 31, _utc(2026, 1, 2)),
    ("@hourly", 31 * 24, _utc(2026, 1, 1, 1)),
    ("@weekly", 4, _utc(2026, 1, 11)),          # Sundays from Jan 4; the one from Jan 25 ends Feb 1
    ("@monthly", 1, _utc(2026, 2, 1)),
    ("30 6 * * 1-5", 21, _utc(2026, 1, 2, 6, 30)),   # weekday mornings from Thursday Jan 1
    ("PT6H", 31 * 4, _utc(2026, 1, 1, 6)),
    ("P1D", 31, _utc(2026, 1, 2)),
])
def test_presets_crons_and_periods_step_as_airflow(schedule, count, first_end):
    spans = _intervals(schedule, _utc(2026, 1, 1), None, _utc(2026, 2, 1))
    assert len(spans) == count
    assert spans[0].end == first_end
    assert all(a.end == b.start for a, b in zip(spans, spans[1:]))


def test_the_first_interval_starts_at_the_first_fire_time_from_the_start():
    spans = _intervals("@daily", _utc(2026, 1, 1, 12), None, _utc(2026, 1, 4))
    assert [s.start.day for s in spans] == [2, 3]


def test_the_end_bounds_the_last_intervals_start_and_now_its_end():
    spans = _intervals("@daily", _utc(2026, 1, 1), _utc(2026, 1, 3), _utc(2026, 2, 1))
    assert [(s.start.day, s.end.day) for s in spans] == [(1, 2), (2, 3), (3, 4)]   # as a DAG's end_date
    assert len(_intervals("@daily", _utc(2026, 1, 1), None, _utc(2026, 1, 3, 23))) == 2   # Jan 3 is not over


def test_crons_are_read_in_the_starts_zone():
    plus_one = timezone(timedelta(hours=1))
    spans = _intervals("@daily", datetime(2026, 1, 1, tzinfo=plus_one), None, _utc(2026, 1, 3))
    assert spans[0] == Span(_utc(2025, 12, 31, 23), _utc(2026, 1, 1, 23))


def test_consecutive_gaps_join_into_runs():
    spans = _intervals("@daily", _utc(2026, 1, 1), None, _utc(2026, 1, 10))
    runs = runs_of((spans[0], spans[1], spans[2], spans[5]))
    assert [(span.start.day, span.end.day, count) for span, count in runs] == [(1, 4, 3), (6, 7, 1)]


@pytest.mark.parametrize("schedule, message", [
    ("0 0 * *", "is not a cron expression, a preset such as @daily"),
    ("@once", "does not recur on a clock"),
    ("@continuous", "does not recur on a clock"),
    ("P1M", "months and years have no fixed length"),
    ("PT0S", "is not a positive period"),
    ("Pizza", "is not an ISO 8601 duration"),
])
def test_bad_schedules_are_refused(schedule, message):
    with pytest.raises(InvalidArgumentError, match=message):
        parse_schedule(schedule)


def test_too_many_intervals_are_refused():
    with pytest.raises(InvalidArgumentError, match="narrow --start and --end"):
        _intervals("* * * * *", _utc(2020, 1, 1), None, _utc(2026, 1, 1))


# --- tables --------------------------------------------------------------------------------


def test_each_table_has_its_own_gaps_and_table_narrows(db):
    db.create()
    db.create("orders")
    _write_days(db, [1, 2, 3])
    _write_days(db, [1, 3], table="orders")
    both = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-03")
    assert both.exit_code == 1
    assert both.stdout.splitlines()[:2] == ["events: every interval written",
                                            "orders [2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z) never written"]
    events_only = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-03", "--table", "events")
    assert events_only.exit_code == 0
    unwritten = _gaps(db, "--schedule", "@daily", "--start", "2026-01-01", "--end", "2026-01-03",
                      "--table", "refunds", "--format", "json")
    assert unwritten.exit_code == 1 and json.loads(unwritten.stdout)["tables"][0]["count"] == 3


# --- --dag-file ----------------------------------------------------------------------------

DAG = '''
from datetime import datetime, timedelta
from airflow.sdk import DAG, Variable

with DAG("daily_events", schedule="@daily", start_date=datetime(2026, 1, 1), end_date=datetime(2026, 1, 5)):
    pass

with DAG("six_hourly", schedule=timedelta(hours=6), start_date=datetime(2026, 1, 1)):
    pass

with DAG("from_variable", schedule=Variable.get("cron"), start_date=datetime(2026, 1, 1)):
    pass

with DAG("moving", schedule="@daily", start_date=datetime.now()):
    pass

with DAG("manual", schedule=None, start_date=datetime(2026, 1, 1)):
    pass

raise SystemExit("the DAG file was imported")
'''


@pytest.fixture
def dag_file(tmp_path: Path) -> Path:
    path = tmp_path / "dags" / "events.py"
    path.parent.mkdir()
    path.write_text(DAG)
    return path


@pytest.fixture
def sqlite_db(tmp_path: Path):
    from tests.idempotent.helpers import sqlite_database

    database = sqlite_database(tmp_path)
    database.create()
    return database


def test_dag_file_gives_the_schedule_and_dates_without_importing_it(sqlite_db, dag_file):
    _write_days(sqlite_db, [1, 2, 4, 5, 6])
    result = _gaps(sqlite_db, "--dag-file", str(dag_file), "--dag-id", "daily_events", "--format", "json")
    assert result.exit_code == 1, result.output
    payload = json.loads(result.stdout)
    assert (payload["schedule"], payload["start"], payload["end"]) == (
        "@daily", "2026-01-01T00:00:00+00:00", "2026-01-05T00:00:00+00:00")
    assert _missing(result) == [("2026-01-03", "2026-01-04")]
    # Options given win over the DAG's dates.
    narrowed = _gaps(sqlite_db, "--dag-file", str(dag_file), "--dag-id", "daily_events", "--start", "2026-01-04")
    assert narrowed.exit_code == 0, narrowed.output


def test_dag_file_with_a_timedelta_schedule(sqlite_db, dag_file):
    _write_days(sqlite_db, [1])
    result = _gaps(sqlite_db, "--dag-file", str(dag_file), "--dag-id", "six_hourly", "--end", "2026-01-02",
                   "--format", "json")
    payload = json.loads(result.stdout)
    assert (payload["intervals"], payload["count"]) == (5, 1)   # Jan 1 00:00 to Jan 2 00:00, four covered


def test_dag_files_tables_are_those_the_dag_wrote(sqlite_db, dag_file):
    from dagguard.idempotent import RunInfo

    sqlite_db.create("orders")
    conn = sqlite_db.connect()
    try:
        write_interval(conn, "orders", events((1, at(1, 1), "v")), _day(1), time_column="ts",
                       run=RunInfo(dag_id="daily_events"))
        write_interval(conn, "events", events((1, at(1, 1), "v")), _day(1), time_column="ts")
    finally:
        conn.close()
    result = _gaps(sqlite_db, "--dag-file", str(dag_file), "--dag-id", "daily_events", "--format", "json")
    assert [t["table"] for t in json.loads(result.stdout)["tables"]] == ["orders"]


@pytest.mark.parametrize("dag_id, message", [
    ("nope", "no DAG 'nope' in it (DAGs with a static id: daily_events, from_variable, manual, moving, six_hourly)"),
    ("from_variable", "DAG 'from_variable': its schedule is not static"),
    ("manual", "DAG 'manual': its schedule does not recur on a clock"),
    ("moving", "DAG 'moving': its start_date is not static; pass --start"),
])
def test_dag_file_errors_are_one_line(sqlite_db, dag_file, dag_id, message):
    _write_days(sqlite_db, [1])
    result = _gaps(sqlite_db, "--dag-file", str(dag_file), "--dag-id", dag_id)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert message in result.stderr


def test_a_dag_file_that_is_missing_or_does_not_parse(sqlite_db, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("with DAG(:\n")
    for path, message in ((tmp_path / "absent.py", "cannot read the file"), (broken, "cannot parse it")):
        result = _gaps(sqlite_db, "--dag-file", str(path), "--dag-id", "d")
        assert result.exit_code == 2 and message in result.stderr, result.output


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (("--schedule", "61 * * * *", "--start", "2026-01-01"), "is not a cron expression"),
    (("--schedule", "@daily", "--start", "2026-01-05", "--end", "2026-01-01"),
     "the start 2026-01-05T00:00:00Z is after the end 2026-01-01T00:00:00Z"),
    (("--schedule", "@daily", "--start", "yesterday"), "--start: 'yesterday' is not an ISO 8601 date"),
    (("--schedule", "@daily"), "--gaps needs --schedule and --start, or --dag-file and --dag-id"),
    (("--start", "2026-01-01"), "--gaps needs --schedule and --start"),
    (("--dag-file", "dags/x.py"), "--dag-file and --dag-id go together"),
    (("--schedule", "@daily", "--dag-file", "x.py", "--dag-id", "d"), "give --schedule or --dag-file, not both"),
])
def test_bad_options_exit_2_before_connecting(args, message):
    result = _cli("--conn", "postgresql://nobody@127.0.0.1:1/x", "--gaps", *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("dagguard: error: ") and message in result.stderr


def test_an_unreachable_database_or_one_without_a_ledger_exits_2(sqlite_db):
    unreachable = _cli("--conn", "postgresql://nobody@127.0.0.1:1/x", "--gaps", "--schedule", "@daily",
                       "--start", "2026-01-01")
    assert unreachable.exit_code == 2 and "cannot connect to postgresql://nobody@127.0.0.1:1/x" in unreachable.stderr
    empty = _gaps(sqlite_db, "--schedule", "@daily", "--start", "2026-01-01")
    assert empty.exit_code == 2 and "no dagguard_write_log table" in empty.stderr


def test_gap_options_without_gaps_are_refused(sqlite_db):
    result = _cli("--conn", sqlite_db.url, "--schedule", "@daily")
    assert result.exit_code == 2 and "--schedule is an option of --gaps" in result.stderr


ZONED_DAG = '''
import pendulum
from airflow.sdk import DAG, MultipleCronTriggerTimetable
from airflow.timetables.interval import CronDataIntervalTimetable

with DAG("paris", schedule="@daily", start_date=pendulum.datetime(2026, 3, 27, tz="Europe/Paris")):
    pass

with DAG("twice", schedule=MultipleCronTriggerTimetable("0 6 * * *", "0 18 * * *", timezone="UTC"),
         start_date=pendulum.datetime(2026, 1, 1)):
    pass

with DAG("data_interval", schedule=CronDataIntervalTimetable("0 12 * * *", timezone="UTC"),
         start_date="2026-01-01"):
    pass
'''


def _dag_intervals(tmp_path: Path, dag_id: str, now: datetime) -> list[Span]:
    from dagguard.idempotent.ledger_gaps import dag_schedule

    path = tmp_path / "zoned.py"
    path.write_text(ZONED_DAG)
    found = dag_schedule(path, dag_id)
    assert found.start is not None
    return list(schedule_intervals(found.schedule, found.start, found.end, now))


def test_a_dags_crons_are_read_in_its_start_dates_zone(tmp_path):
    spans = _dag_intervals(tmp_path, "paris", _utc(2026, 3, 31))
    # Paris midnight is 23:00 UTC in winter, 22:00 from Sunday March 29, a day of 23 hours.
    assert [(s.start.day, s.start.hour) for s in spans] == [(26, 23), (27, 23), (28, 23), (29, 22)]
    assert spans[2].end - spans[2].start == timedelta(hours=23)


def test_a_dags_timetable_of_several_crons_and_a_string_start_date(tmp_path):
    twice = _dag_intervals(tmp_path, "twice", _utc(2026, 1, 2, 19))
    assert [(s.start.hour, s.end.hour) for s in twice] == [(6, 18), (18, 6), (6, 18)]
    daily = _dag_intervals(tmp_path, "data_interval", _utc(2026, 1, 3, 12))
    assert [(s.start.day, s.start.hour) for s in daily] == [(1, 12), (2, 12)]


@settings(max_examples=60, deadline=None)
@given(written=st.sets(st.integers(1, 28)), wide=st.lists(st.tuples(st.integers(1, 28), st.integers(1, 5)), max_size=3))
def test_a_day_is_missing_exactly_when_no_write_covers_it(written, wide):
    from dagguard.idempotent.ledger import LedgerEntry, LedgerReport
    from dagguard.idempotent.ledger_gaps import find_gaps

    def entry(start: datetime, end: datetime) -> LedgerEntry:
        return LedgerEntry(table_name="t", interval_start=start.isoformat(), interval_end=end.isoformat(),
                           strategy="replace", row_count=1, rows_inserted=1, rows_updated=0, rows_deleted=0,
                           checksum="c", written_at=start.isoformat(), dag_id=None, task_id=None, run_id=None,
                           try_number=None)

    entries = [entry(_utc(2026, 2, d), _utc(2026, 2, d) + timedelta(days=1)) for d in written]
    entries += [entry(_utc(2026, 2, d), _utc(2026, 2, d) + timedelta(days=n)) for d, n in wide]
    covered = set(written) | {d + k for d, n in wide for k in range(n)}
    report = find_gaps(LedgerReport(tuple(entries), ()), parse_schedule("@daily"), _utc(2026, 2, 1),
                       _utc(2026, 2, 28), now=_utc(2026, 3, 1))
    [gaps] = report.tables
    assert [s.start.day for s in gaps.missing] == sorted(set(range(1, 29)) - covered)


def test_gaps_of_a_dag_file_need_no_airflow(sqlite_db, dag_file):
    from tests.idempotent.test_imports import _run

    _write_days(sqlite_db, [1, 2, 4, 5])
    result = _run(f"""
        from dagguard.cli import main
        sys.argv = ["dagguard", "ledger", "--conn", {sqlite_db.url!r}, "--gaps", "--now", {NOW!r},
                    "--dag-file", {str(dag_file)!r}, "--dag-id", "daily_events"]
        try:
            main()
        except SystemExit as exc:
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
            print(exc.code, loaded)
    """)
    assert result.stdout.splitlines()[0] == "events [2026-01-03T00:00:00Z, 2026-01-04T00:00:00Z) never written"
    assert result.stdout.splitlines()[-1] == "1 []", result.stderr


def test_a_ledger_without_any_write_misses_every_interval():
    from dagguard.idempotent.ledger import LedgerReport
    from dagguard.idempotent.ledger_gaps import find_gaps

    report = find_gaps(LedgerReport((), ()), parse_schedule("@daily"), _utc(2026, 1, 1), _utc(2026, 1, 3),
                       now=_utc(2026, 2, 1))
    assert [(t.table, len(t.missing)) for t in report.tables] == [(None, 3)]


def test_a_row_without_an_interval_covers_none():
    """A partition written without an interval has no interval_start in the ledger (issue 23)."""
    from dagguard.idempotent.ledger import LedgerEntry, LedgerReport
    from dagguard.idempotent.ledger_gaps import find_gaps

    entry = LedgerEntry(table_name="t", interval_start=None, interval_end=None, strategy="overwrite_partition",
                        row_count=1, rows_inserted=1, rows_updated=0, rows_deleted=0, checksum="c",
                        written_at="2026-01-02T00:00:00+00:00", dag_id=None, task_id=None, run_id=None,
                        try_number=None)
    report = find_gaps(LedgerReport((entry,), ()), parse_schedule("@daily"), _utc(2026, 1, 1), _utc(2026, 1, 2),
                       now=_utc(2026, 2, 1))
    assert [(t.table, len(t.missing)) for t in report.tables] == [("t", 2)]
