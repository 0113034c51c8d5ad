"""DG101 and DG107 on small DAGs: which dates and schedules make a catchup backlog.

`lint` fixes now at 2026-11-30 00:00 UTC.
"""

from __future__ import annotations

import textwrap

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW, codes, lint


def messages(findings, code):
    return [f.message for f in findings if f.code == code]


HOURLY_FROM_2025 = 'schedule="@hourly", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=True'


# --- end_date=None is no end date --------------------------------------------------------

@pytest.mark.parametrize("end", [
    "end_date=None",
    'default_args={"end_date": None}',
    'end_date=None, default_args={"end_date": None, "retries": 1}',
])
def test_none_end_date_is_no_end_date(tmp_path, end):
    found = lint(tmp_path, f"""
        import pendulum
        from airflow.sdk import DAG

        DAG("a1", {HOURLY_FROM_2025}, {end})
    """)
    assert messages(found, "DG101") == [
        "DAG 'a1' enables catchup without end_date; catchup would queue ~17,000 runs"]


def test_none_end_date_on_the_dag_falls_back_to_default_args(tmp_path):
    # Every task inherits default_args' end_date, and the scheduler stops at the tasks' end dates.
    found = lint(tmp_path, f"""
        import pendulum
        from airflow.sdk import DAG

        DAG("a2", {HOURLY_FROM_2025}, end_date=None,
            default_args={{"end_date": pendulum.datetime(2026, 1, 1, tz="UTC")}})
    """)
    assert messages(found, "DG101") == []
    assert messages(found, "DG107") == [
        "DAG 'a2' catchup would queue 8,761 runs between start_date and end_date, "
        "over max-catchup-runs (500)"]


def test_none_start_date_on_the_dag_falls_back_to_default_args(tmp_path):
    found = lint(tmp_path, """
        import pendulum
        from airflow.sdk import DAG

        DAG("a3", schedule="@daily", start_date=None, catchup=True,
            default_args={"start_date": pendulum.datetime(2026, 11, 1, tz="UTC")})
    """)
    assert messages(found, "DG101") == ["DAG 'a3' enables catchup without end_date; catchup would queue 30 runs"]


# --- no start_date, no backlog -------------------------------------------------------------

def test_airflow_2_dag_without_start_date_is_not_flagged(tmp_path):
    found = lint(tmp_path, """
        from airflow.decorators import dag

        @dag(tags=["example"])
        def example():
            pass

        example()
    """, airflow_version="2")
    assert messages(found, "DG101") == []


@pytest.mark.parametrize("start", ["", "start_date=None,", 'default_args={"start_date": None},'])
@pytest.mark.parametrize("version", ["2", "3"])
def test_catchup_without_start_date_is_not_flagged(tmp_path, start, version):
    found = lint(tmp_path, f"""
        from airflow.sdk import DAG

        DAG("no_start", schedule="@daily", {start} catchup=True)
    """, airflow_version=version)
    assert messages(found, "DG101") == []


def test_start_date_that_is_not_static_is_still_flagged(tmp_path):
    found = lint(tmp_path, """
        from airflow import DAG
        from dates import project_start

        DAG("dynamic", schedule_interval="@daily", start_date=project_start())
    """, airflow_version="2")
    assert messages(found, "DG101") == ["DAG 'dynamic' enables catchup without end_date"]


# --- a start_date still ahead ---------------------------------------------------------------

@pytest.mark.parametrize("start", ["pendulum.datetime(2027, 6, 1, tz='UTC')",
                                   "pendulum.datetime(2026, 11, 29, 12, tz='UTC')"])
def test_no_run_due_yet_is_not_reported_as_zero_runs(tmp_path, start):
    # The second start is in the past, but its first daily interval has not ended (Airflow 2).
    found = lint(tmp_path, f"""
        import pendulum
        from airflow import DAG

        DAG("later", schedule_interval="@daily", start_date={start}, catchup=True)
    """, airflow_version="2")
    assert messages(found, "DG101") == [
        "DAG 'later' enables catchup without end_date; no run is due yet, but every interval "
        "missed after start_date (DAG paused, scheduler down) would be queued at once"]


# --- timetables ------------------------------------------------------------------------------

@pytest.mark.parametrize(("imports", "schedule", "runs"), [
    ("from airflow.sdk import MultipleCronTriggerTimetable",
     'MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC")', "58"),
    ("from airflow.timetables.trigger import MultipleCronTriggerTimetable as Multi",
     'Multi("0 0 * * *", "@daily", "0 12 * * *", timezone="UTC")', "59"),
    ("from airflow.sdk import Asset, AssetOrTimeSchedule, CronTriggerTimetable",
     'AssetOrTimeSchedule(timetable=CronTriggerTimetable("@daily", timezone="UTC"), assets=[Asset("s3://b/k")])',
     "30"),
    ("from airflow.sdk import Asset, AssetOrTimeSchedule, MultipleCronTriggerTimetable",
     'AssetOrTimeSchedule(timetable=MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC"), '
     'assets=Asset("s3://b/k"))', "58"),
    ("from airflow.sdk import CronPartitionTimetable",
     'CronPartitionTimetable("0 0 * * *", timezone="UTC")', "30"),
    ("from airflow.timetables.trigger import CronPartitionTimetable",
     'CronPartitionTimetable(cron="0 0 * * *", timezone="UTC", run_offset=-1)', "30"),
    ("from airflow.sdk.definitions.timetables.interval import CronDataIntervalTimetable",
     'CronDataIntervalTimetable("@daily", timezone="UTC")', "29"),
])
def test_recurring_timetables_count_their_runs(tmp_path, imports, schedule, runs):
    found = lint(tmp_path, f"""
        import pendulum
        from airflow.sdk import DAG
        {imports}

        DAG("tt", schedule={schedule}, start_date=pendulum.datetime(2026, 11, 1, tz="UTC"), catchup=True)
    """)
    assert messages(found, "DG101") == [f"DAG 'tt' enables catchup without end_date; catchup would queue {runs} runs"]


def test_timetable_bound_to_a_module_constant(tmp_path):
    found = lint(tmp_path, """
        import pendulum
        from airflow.sdk import DAG, MultipleCronTriggerTimetable

        TWICE_A_DAY = MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC")
        DAG("tt", schedule=TWICE_A_DAY, start_date=pendulum.datetime(2026, 11, 1, tz="UTC"), catchup=True)
    """)
    assert messages(found, "DG101") == ["DAG 'tt' enables catchup without end_date; catchup would queue 58 runs"]


def test_multiple_cron_backlog_bounded_by_end_date(tmp_path):
    found = lint(tmp_path, """
        import pendulum
        from airflow.sdk import DAG, MultipleCronTriggerTimetable

        DAG("tt", schedule=MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC"),
            start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), end_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
            catchup=True)
    """)
    assert messages(found, "DG107") == [
        "DAG 'tt' catchup would queue 730 runs between start_date and end_date, over max-catchup-runs (500)"]


@pytest.mark.parametrize(("imports", "schedule"), [
    ("from airflow.sdk import EventsTimetable",
     "EventsTimetable([pendulum.datetime(2026, 1, 1, tz='UTC'), pendulum.datetime(2026, 6, 1, tz='UTC')])"),
    ("from airflow.timetables.simple import OnceTimetable", "OnceTimetable()"),
    ("from airflow.timetables.simple import ContinuousTimetable", "ContinuousTimetable()"),
    ("from airflow.timetables.simple import NullTimetable", "NullTimetable()"),
    ("from airflow.sdk import Asset, PartitionedAssetTimetable", 'PartitionedAssetTimetable(assets=Asset("s3://b/k"))'),
    ("from airflow.sdk import Asset, AssetOrTimeSchedule, EventsTimetable",
     "AssetOrTimeSchedule(timetable=EventsTimetable([pendulum.datetime(2026, 1, 1, tz='UTC')]), "
     'assets=[Asset("s3://b/k")])'),
    # Not Airflow's: stay silent. (Airflow's with crons not statically known recur: see
    # test_unread_timetables.py.)
    ("from mytimetables import MultipleCronTriggerTimetable",
     'MultipleCronTriggerTimetable("0 1 * * *", "0 13 * * *", timezone="UTC")'),
    ("from airflow.sdk import Asset, AssetOrTimeSchedule; from plugins import custom",
     'AssetOrTimeSchedule(timetable=custom(), assets=[Asset("s3://b/k")])'),
])
def test_non_recurring_or_unknown_timetables_stay_silent(tmp_path, imports, schedule):
    found = lint(tmp_path, f"""
        import pendulum
        from airflow.sdk import DAG
        {imports}

        DAG("tt", schedule={schedule}, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=True)
    """)
    assert messages(found, "DG101") == []


@pytest.mark.parametrize("schedule", ['CronTriggerTimetable("every day", timezone="UTC")',
                                      'MultipleCronTriggerTimetable("0 1 * * *", "every day", timezone="UTC")'])
def test_invalid_cron_in_a_timetable_is_silent_not_an_internal_error(tmp_path, schedule):
    target = tmp_path / "dag.py"
    target.write_text(textwrap.dedent(f"""
        import pendulum
        from airflow.sdk import DAG, CronTriggerTimetable, MultipleCronTriggerTimetable

        DAG("bad_cron", schedule={schedule}, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=True)
    """))
    result = check_paths([target], settings=Settings(config_path=tmp_path / "pyproject.toml"), now=NOW)
    assert result.internal_errors == ()
    assert "DG101" not in [f.code for f in result.findings]


@pytest.mark.parametrize("schedule, start", [
    ('"0 0 31 2 *"', "datetime(2024, 1, 1)"),                        # never fires
    ("DeltaDataIntervalTimetable(timedelta(0))", "datetime(2024, 1, 1)"),  # a zero period
    ('"@daily"', "datetime(1, 1, 1)"),                                # the calendar's first day
])
def test_a_backlog_that_cannot_be_counted_is_no_internal_error(tmp_path, schedule, start):
    """Regression: OverflowError, ZeroDivisionError and CroniterBadDateError stopped DG101."""
    result_codes = codes(lint(tmp_path, f"""\
        from datetime import datetime, timedelta
        from airflow.sdk import DAG, DeltaDataIntervalTimetable
        DAG("d", schedule={schedule}, start_date={start}, catchup=True, max_active_runs=1, max_active_tasks=1)
        DAG("e", schedule={schedule}, start_date={start}, end_date=datetime(2026, 1, 1), catchup=True,
            max_active_runs=1, max_active_tasks=1)
    """))
    assert "DG101" in result_codes


def test_many_catchup_dags_in_one_file_are_counted_without_stepping_croniter(tmp_path, monkeypatch):
    # Stepping croniter ~1,000 times per DAG made a 200-DAG file take nearly a minute.
    from dagguard.model.schedules import run_counts

    def no_stepping(*args):
        raise AssertionError("croniter was stepped")

    monkeypatch.setattr(run_counts, "_step_cron_fires", no_stepping)
    kinds = ['"@hourly"', '"*/5 * * * *"', '"0 3 * * 1-5"', "timedelta(minutes=30)", '"@daily"']
    dags = "".join(f'DAG("d{i}", schedule={kinds[i % 5]}, start_date=datetime(2020, 1, 1), catchup=True)\n'
                   for i in range(200))
    found = lint(tmp_path, "from datetime import datetime, timedelta\nfrom airflow.sdk import DAG\n" + dags)
    counted = [f.message for f in found if f.code == "DG101" and "would queue" in f.message]
    assert len(counted) == 200
